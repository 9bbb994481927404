"""The normal distribution truncated to [a, b] in standard units (JAX's
``jax.scipy.stats.truncnorm``).

The implementation is ``zerax._src.api.scipy.stats.truncnorm``; this face re-exports it."""

from ..._src.api.scipy.stats.truncnorm import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf']
