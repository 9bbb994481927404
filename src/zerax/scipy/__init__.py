"""`zerax.scipy`: SciPy functions on zerax values."""

from . import linalg, optimize, special  # noqa: F401
from . import stats  # noqa: F401
from . import fft, integrate, ndimage, signal  # noqa: F401
