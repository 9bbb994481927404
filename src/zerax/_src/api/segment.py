"""Segment reductions (JAX's ``jax.ops``): ``segment_sum``, ``segment_prod``,
``segment_max``, ``segment_min`` — reduce the rows of ``data`` that share a segment id.

Each is a scatter into ``num_segments`` rows initialised with the reduction's identity
(0, 1, -inf/the integer minimum, +inf/the integer maximum), so it is differentiable and
batches and compiles as the ``.at[]`` updates do.  Ids outside ``[0, num_segments)``
(negative ones included) are dropped, as in JAX.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from .. import numpy as jnp
from ..base.dtypes import kind as dtype_kind
from ..core.core import concrete_value

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _prepare(fname, data, segment_ids, num_segments):
    data = jnp.asarray(data)
    ids = jnp.asarray(segment_ids)
    if ids.dtype.kind not in "iu":
        raise errors.ZeraxTypeError(
            f"{fname}: segment_ids must be integers, got {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise errors.ShapeError(
            f"{fname}: segment_ids must be 1-D with one id per row of data (data shape "
            f"{tuple(data.shape)}, segment_ids shape {tuple(ids.shape)})")
    if num_segments is None:
        v = np.asarray(concrete_value(
            ids, f"{fname}: num_segments=None (pass num_segments under a transform)"))
        num_segments = int(v.max()) + 1 if v.size else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise errors.ZeraxValueError(f"{fname}: num_segments must be >= 0, got {num_segments}")
    # negative ids would wrap around: send them past the end, where they are dropped
    ids = jnp.where(ids < 0, num_segments, ids)
    return data, ids, num_segments


def _init(data, num_segments, value):
    return jnp.full((num_segments,) + tuple(data.shape[1:]), value, dtype=data.dtype)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The sum of the rows of ``data`` in each segment (JAX's ``jax.ops.segment_sum``).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.ops.segment_sum(znp.arange(5.0), znp.array([0, 0, 1, 2, 2]), num_segments=3)
    Array([1., 2., 7.], dtype=float64)
    """
    del indices_are_sorted, unique_indices, bucket_size, mode
    data, ids, n = _prepare("segment_sum", data, segment_ids, num_segments)
    return _init(data, n, 0).at[ids].add(data, mode="drop")


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of ``data`` in each segment (1 for an empty one).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.ops.segment_prod(znp.arange(1.0, 6.0), znp.array([0, 0, 1, 2, 2]), 3)
    Array([ 2.,  3., 20.], dtype=float64)
    """
    del indices_are_sorted, unique_indices, bucket_size, mode
    data, ids, n = _prepare("segment_prod", data, segment_ids, num_segments)
    return _init(data, n, 1).at[ids].multiply(data, mode="drop")


def _lowest(dtype, high):
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) == "f":
        return np.inf if high else -np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if high else info.min
    if dtype == np.bool_:
        return high
    raise errors.ZeraxTypeError(f"segment reductions: unsupported dtype {dtype}")


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The elementwise maximum of the rows of ``data`` in each segment (-inf, or the
    integer minimum, for an empty one).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.ops.segment_max(znp.array([3.0, 1.0, 4.0]), znp.array([0, 0, 2]), 3)
    Array([  3., -inf,   4.], dtype=float64)
    """
    del indices_are_sorted, unique_indices, bucket_size, mode
    data, ids, n = _prepare("segment_max", data, segment_ids, num_segments)
    return _init(data, n, _lowest(data.dtype, False)).at[ids].max(data, mode="drop")


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The elementwise minimum of the rows of ``data`` in each segment (+inf, or the
    integer maximum, for an empty one).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.ops.segment_min(znp.array([3.0, 1.0, 4.0]), znp.array([0, 0, 2]), 3)
    Array([ 1., inf,  4.], dtype=float64)
    """
    del indices_are_sorted, unique_indices, bucket_size, mode
    data, ids, n = _prepare("segment_min", data, segment_ids, num_segments)
    return _init(data, n, _lowest(data.dtype, True)).at[ids].min(data, mode="drop")
