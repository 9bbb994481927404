"""The normal distribution (JAX's ``jax.scipy.stats.norm``).

The implementation is ``zerax._src.api.scipy.stats.norm``; this face re-exports it."""

from ..._src.api.scipy.stats.norm import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf', 'isf']
