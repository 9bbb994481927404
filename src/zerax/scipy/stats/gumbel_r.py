"""The right-skewed Gumbel distribution (JAX's ``jax.scipy.stats.gumbel_r``).

The implementation is ``zerax._src.api.scipy.stats.gumbel_r``; this face re-exports it."""

from ..._src.api.scipy.stats.gumbel_r import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf']
