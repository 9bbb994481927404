"""`zerax.nn`: activation functions and attention (JAX's `jax.nn` names), and
`zerax.nn.initializers`."""

from .._src.nn import *  # noqa: F401,F403
from .._src.nn import __all__ as _all
from . import initializers  # noqa: F401

__all__ = list(_all) + ["initializers"]
