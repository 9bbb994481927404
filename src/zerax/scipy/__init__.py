"""`zerax.scipy`: SciPy functions on zerax values."""

from . import special  # noqa: F401
