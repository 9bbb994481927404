"""The Cauchy distribution (JAX's ``jax.scipy.stats.cauchy``).

The implementation is ``zerax._src.api.scipy.stats.cauchy``; this face re-exports it."""

from ..._src.api.scipy.stats.cauchy import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf', 'isf']
