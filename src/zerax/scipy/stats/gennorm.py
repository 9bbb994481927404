"""The generalized normal distribution with shape ``beta`` (JAX's
``jax.scipy.stats.gennorm``).

The implementation is ``zerax._src.api.scipy.stats.gennorm``; this face re-exports it."""

from ..._src.api.scipy.stats.gennorm import (  # noqa: F401
    logpdf, pdf, cdf)

__all__ = ['logpdf', 'pdf', 'cdf']
