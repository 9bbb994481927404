"""The gamma distribution with shape ``a`` (JAX's ``jax.scipy.stats.gamma``).

The implementation is ``zerax._src.api.scipy.stats.gamma``; this face re-exports it."""

from ..._src.api.scipy.stats.gamma import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf']
