"""The beta distribution (JAX's ``jax.scipy.stats.beta``).

The implementation is ``zerax._src.api.scipy.stats.beta``; this face re-exports it."""

from ..._src.api.scipy.stats.beta import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf']
