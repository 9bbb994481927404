"""The beta-binomial distribution (JAX's ``jax.scipy.stats.betabinom``).

The implementation is ``zerax._src.api.scipy.stats.betabinom``; this face re-exports it."""

from ..._src.api.scipy.stats.betabinom import (  # noqa: F401
    logpmf, pmf)

__all__ = ['logpmf', 'pmf']
