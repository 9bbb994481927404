"""The negative binomial distribution (JAX's ``jax.scipy.stats.nbinom``).

The implementation is ``zerax._src.api.scipy.stats.nbinom``; this face re-exports it."""

from ..._src.api.scipy.stats.nbinom import (  # noqa: F401
    logpmf, pmf)

__all__ = ['logpmf', 'pmf']
