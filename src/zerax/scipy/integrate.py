"""`zerax.scipy.integrate`: SciPy's (and JAX's) ``trapezoid`` on zerax values.

The implementation is ``zerax._src.api.scipy.integrate``; this face re-exports it."""

from .._src.api.scipy.integrate import (  # noqa: F401
    trapezoid)

__all__ = ['trapezoid']
