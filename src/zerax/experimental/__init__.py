"""`zerax.experimental`: JAX's ``jax.experimental`` names that example programs import.

``ode.odeint``: adaptive Dormand-Prince integration with adjoint gradients;
``multihost_utils``: broadcasts and gathers between the processes of a
`zerax.distributed` job; ``jet.jet``: Taylor-mode differentiation (``zerax.jet``).

>>> from zerax.experimental.ode import odeint
"""

from . import jet, multihost_utils, ode  # noqa: F401

__all__ = ["jet", "multihost_utils", "ode"]
