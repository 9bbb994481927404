"""The uniform distribution on [loc, loc + scale] (JAX's ``jax.scipy.stats.uniform``).

The implementation is ``zerax._src.api.scipy.stats.uniform``; this face re-exports it."""

from ..._src.api.scipy.stats.uniform import (  # noqa: F401
    logpdf, pdf, cdf, ppf)

__all__ = ['logpdf', 'pdf', 'cdf', 'ppf']
