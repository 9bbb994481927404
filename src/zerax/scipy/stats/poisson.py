"""The Poisson distribution with mean ``mu`` (JAX's ``jax.scipy.stats.poisson``).

The implementation is ``zerax._src.api.scipy.stats.poisson``; this face re-exports it."""

from ..._src.api.scipy.stats.poisson import (  # noqa: F401
    logpmf, pmf, cdf, entropy)

__all__ = ['logpmf', 'pmf', 'cdf', 'entropy']
