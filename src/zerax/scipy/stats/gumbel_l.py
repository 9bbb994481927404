"""The left-skewed Gumbel distribution (JAX's ``jax.scipy.stats.gumbel_l``).

The implementation is ``zerax._src.api.scipy.stats.gumbel_l``; this face re-exports it."""

from ..._src.api.scipy.stats.gumbel_l import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf']
