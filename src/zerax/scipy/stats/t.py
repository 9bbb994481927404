"""Student's t distribution (JAX's ``jax.scipy.stats.t``).

The implementation is ``zerax._src.api.scipy.stats.t``; this face re-exports it."""

from ..._src.api.scipy.stats.t import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)

__all__ = ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'sf']
