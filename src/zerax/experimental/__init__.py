"""`zerax.experimental`: JAX's ``jax.experimental`` names that example programs import.

``ode.odeint``: adaptive Dormand-Prince integration with adjoint gradients;
``multihost_utils``: broadcasts and gathers between the processes of a
`zerax.distributed` job.

>>> from zerax.experimental.ode import odeint
"""

from . import multihost_utils, ode  # noqa: F401

__all__ = ["multihost_utils", "ode"]
