"""`zerax.experimental`: JAX's ``jax.experimental`` names that example programs import.

``ode.odeint``: adaptive Dormand-Prince integration with adjoint gradients.
``jet.jet``: Taylor-mode differentiation (``zerax.jet``).

>>> from zerax.experimental.ode import odeint
"""

from . import jet, ode  # noqa: F401

__all__ = ["jet", "ode"]
