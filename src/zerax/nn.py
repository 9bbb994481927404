"""`zerax.nn`: activation functions (JAX's `jax.nn` names)."""

from ._src.nn import *  # noqa: F401,F403
from ._src.nn import __all__  # noqa: F401
