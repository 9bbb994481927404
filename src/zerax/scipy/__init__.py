"""`zerax.scipy`: SciPy functions on zerax values."""

from . import linalg, special  # noqa: F401
