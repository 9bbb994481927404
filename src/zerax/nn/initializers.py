"""`zerax.nn.initializers`: JAX's initializer functions ``init(key, shape, dtype)``, with
JAX's values for the same key (variance_scaling, glorot/he/lecun, orthogonal, ...)."""

from .._src.api.nn_initializers import *  # noqa: F401,F403
from .._src.api.nn_initializers import __all__  # noqa: F401
