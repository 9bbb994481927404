"""The von Mises distribution (JAX's ``jax.scipy.stats.vonmises``; no loc or scale).

The implementation is ``zerax._src.api.scipy.stats.vonmises``; this face re-exports it."""

from ..._src.api.scipy.stats.vonmises import (  # noqa: F401
    logpdf, pdf)

__all__ = ['logpdf', 'pdf']
