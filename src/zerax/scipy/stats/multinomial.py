"""The multinomial distribution (JAX's ``jax.scipy.stats.multinomial``).

The implementation is ``zerax._src.api.scipy.stats.multinomial``; this face re-exports it."""

from ..._src.api.scipy.stats.multinomial import (  # noqa: F401
    logpmf, pmf)

__all__ = ['logpmf', 'pmf']
