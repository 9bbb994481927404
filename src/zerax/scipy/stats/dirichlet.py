"""The Dirichlet distribution (JAX's ``jax.scipy.stats.dirichlet``).

The implementation is ``zerax._src.api.scipy.stats.dirichlet``; this face re-exports it."""

from ..._src.api.scipy.stats.dirichlet import (  # noqa: F401
    logpdf, pdf)

__all__ = ['logpdf', 'pdf']
