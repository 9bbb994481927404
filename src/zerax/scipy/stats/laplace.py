"""The Laplace distribution (JAX's ``jax.scipy.stats.laplace``).

The implementation is ``zerax._src.api.scipy.stats.laplace``; this face re-exports it."""

from ..._src.api.scipy.stats.laplace import (  # noqa: F401
    logpdf, pdf, cdf)

__all__ = ['logpdf', 'pdf', 'cdf']
