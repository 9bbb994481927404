"""The wrapped Cauchy distribution on [0, 2 pi] (JAX's ``jax.scipy.stats.wrapcauchy``).

The implementation is ``zerax._src.api.scipy.stats.wrapcauchy``; this face re-exports it."""

from ..._src.api.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf, pdf)

__all__ = ['logpdf', 'pdf']
