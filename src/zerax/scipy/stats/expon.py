"""The exponential distribution (JAX's ``jax.scipy.stats.expon``).

The implementation is ``zerax._src.api.scipy.stats.expon``; this face re-exports it."""

from ..._src.api.scipy.stats.expon import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf']
