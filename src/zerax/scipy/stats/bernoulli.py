"""The Bernoulli distribution (JAX's ``jax.scipy.stats.bernoulli``).

The implementation is ``zerax._src.api.scipy.stats.bernoulli``; this face re-exports it."""

from ..._src.api.scipy.stats.bernoulli import (  # noqa: F401
    logpmf, pmf, cdf, ppf)

__all__ = ['logpmf', 'pmf', 'cdf', 'ppf']
