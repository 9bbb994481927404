"""The Pareto distribution with shape ``b`` (JAX's ``jax.scipy.stats.pareto``).

The implementation is ``zerax._src.api.scipy.stats.pareto``; this face re-exports it."""

from ..._src.api.scipy.stats.pareto import (  # noqa: F401
    logpdf, pdf, cdf, logcdf, sf, logsf, ppf)

__all__ = ['logpdf', 'pdf', 'cdf', 'logcdf', 'sf', 'logsf', 'ppf']
