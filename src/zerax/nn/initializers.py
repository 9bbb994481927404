"""`zerax.nn.initializers`: JAX's initializer functions ``init(key, shape, dtype)``.

Only the deterministic ones (``zeros``, ``ones``, ``constant``): zerax has no random
module yet, so the random initializers are not provided.
"""

from .._src.nn_initializers import *  # noqa: F401,F403
from .._src.nn_initializers import __all__  # noqa: F401
