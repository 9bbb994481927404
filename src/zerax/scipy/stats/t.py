"""Student's t distribution (JAX's ``jax.scipy.stats.t``).

The implementation is ``zerax._src.api.scipy.stats.t``; this face re-exports it."""

from ..._src.api.scipy.stats.t import (  # noqa: F401
    logpdf, pdf)

__all__ = ['logpdf', 'pdf']
