"""The logistic distribution (JAX's ``jax.scipy.stats.logistic``).

The implementation is ``zerax._src.api.scipy.stats.logistic``; this face re-exports it."""

from ..._src.api.scipy.stats.logistic import (  # noqa: F401
    logpdf, pdf, cdf, sf, ppf, isf)

__all__ = ['logpdf', 'pdf', 'cdf', 'sf', 'ppf', 'isf']
