"""The binomial distribution (JAX's ``jax.scipy.stats.binom``).

The implementation is ``zerax._src.api.scipy.stats.binom``; this face re-exports it."""

from ..._src.api.scipy.stats.binom import (  # noqa: F401
    logpmf, pmf)

__all__ = ['logpmf', 'pmf']
