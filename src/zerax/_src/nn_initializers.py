"""The deterministic initializers of `zerax.nn.initializers`, with JAX's calling
convention ``init(key, shape, dtype=None) -> Array`` (None: float64) (the key is ignored; it is
taken so that code written for ``jax.nn.initializers`` runs unchanged)."""

from __future__ import annotations

import numpy as np

from .. import errors
from . import lax_numpy as jnp

__all__ = ["constant", "ones", "zeros"]


def _shape(shape):
    try:
        return tuple(int(d) for d in shape) if np.ndim(shape) else (int(shape),)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"initializer: shape must be a sequence of integers, got {shape!r}") from None


def _dtype(dtype):
    return np.dtype(np.float64) if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``key`` is ignored).

    >>> import zerax.nn.initializers as init
    >>> init.zeros(None, (2, 3)).shape
    (2, 3)
    """
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``key`` is ignored).

    >>> import zerax.nn.initializers as init
    >>> init.ones(None, (2,), np.float32)
    Array([1., 1.], dtype=float32)
    """
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling arrays with ``value``.

    >>> import zerax.nn.initializers as init
    >>> init.constant(-7)(None, (2,))
    Array([-7., -7.], dtype=float64)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(_shape(shape), value, _dtype(dtype))
    return init
