"""The geometric distribution on 1, 2, ... (JAX's ``jax.scipy.stats.geom``).

The implementation is ``zerax._src.api.scipy.stats.geom``; this face re-exports it."""

from ..._src.api.scipy.stats.geom import (  # noqa: F401
    logpmf, pmf)

__all__ = ['logpmf', 'pmf']
