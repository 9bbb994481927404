"""The chi-squared distribution with ``df`` degrees of freedom (JAX's
``jax.scipy.stats.chi2``).

The implementation is ``zerax._src.api.scipy.stats.chi2``; this face re-exports it."""

from ..._src.api.scipy.stats.chi2 import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf']
