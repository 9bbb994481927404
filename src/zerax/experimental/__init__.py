"""`zerax.experimental`: JAX's ``jax.experimental`` names that example programs import.

``ode.odeint``: adaptive Dormand-Prince integration with adjoint gradients.

>>> from zerax.experimental.ode import odeint
"""

from . import ode  # noqa: F401

__all__ = ["ode"]
