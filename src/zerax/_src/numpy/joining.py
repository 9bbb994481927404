"""`zerax.numpy` joining and splitting: concatenate, stack and its variants, append,
block, split and its variants, unstack, delete and insert.

Composed from the concatenate and slice primitives (plus the static-index helpers of
`shape_ops`), so every function is traceable and differentiable.  Split points, deleted and
inserted positions are static Python values; passing a traced value where one is needed
raises a ConcretizationError.
"""

from __future__ import annotations

import itertools

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from ..ops import shape as sh
from ._util import as_dtype, ensure_array, normalize_axis
from .shape_ops import (_atleast, _check_dtype, _concrete, _concrete_int, _gather_runs, _int_tuple, _no_out, _slice_axis, broadcast_to, expand_dims, moveaxis, ravel)
from .creation import array

__all__ = [
    "append", "array_split", "block", "column_stack", "concat", "concatenate", "delete",
    "dsplit", "dstack", "hsplit", "hstack", "insert", "row_stack", "split", "stack", "unstack",
    "vsplit", "vstack",
]


# --------------------------------------------------------------------------- joining


def _as_list(arrays, fname):
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        arrays = ensure_array(arrays, fname)
        if arrays.ndim == 0:
            raise errors.ShapeError(f"zerax.numpy.{fname}: expected a sequence of arrays")
        return [sh.reshape(_slice_axis(arrays, 0, i, i + 1), arrays.shape[1:])
                for i in range(arrays.shape[0])]
    try:
        arrays = list(arrays)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: expected a sequence of arrays, got "
            f"{type(arrays).__name__}") from None
    return [ensure_array(x, fname) for x in arrays]


def _result_dtype(xs, dtype, casting, fname):
    res = dtypes.result_type(*[np.dtype(x.dtype) for x in xs])
    if dtype is None:
        return res
    dtype = _check_dtype(dtype, fname)
    for x in xs:
        if not np.can_cast(np.dtype(x.dtype), dtype, casting):
            raise errors.ZeraxTypeError(
                f"zerax.numpy.{fname}: cannot cast {np.dtype(x.dtype)} to {dtype} with "
                f"casting={casting!r}")
    return dtype


def _concat(xs, axis, dtype, casting, fname):
    if not xs:
        raise errors.ShapeError(f"zerax.numpy.{fname}: need at least one array to concatenate")
    if axis is None:
        xs = [sh.reshape(x, (x.size,)) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if any(x.ndim == 0 for x in xs):
        raise errors.ShapeError(f"zerax.numpy.{fname}: zero-dimensional arrays cannot be "
                                "concatenated")
    if any(x.ndim != nd for x in xs):
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: all the input arrays must have the same number of "
            f"dimensions, got shapes {', '.join(str(tuple(x.shape)) for x in xs)}")
    axis = normalize_axis(axis, nd, fname)
    for x in xs:
        if any(p != q for i, (p, q) in enumerate(zip(x.shape, xs[0].shape)) if i != axis):
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: all the input array dimensions except for the "
                f"concatenation axis {axis} must match, got shapes "
                f"{', '.join(str(tuple(x.shape)) for x in xs)}")
    dt = _result_dtype(xs, dtype, casting, fname)
    return sh.concatenate([as_dtype(x, dt) for x in xs], axis)


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (``axis=None`` flattens them first).

    >>> import zerax.numpy as znp
    >>> znp.concatenate([znp.zeros(2), znp.ones(1)])
    Array([0., 0., 1.], dtype=float64)
    """
    _no_out(out, "concatenate")
    return _concat(_as_list(arrays, "concatenate"), axis, dtype, casting, "concatenate")


def concat(arrays, /, *, axis=0, out=None, dtype=None, casting="same_kind"):
    """The array-API name of `concatenate`."""
    _no_out(out, "concat")
    return _concat(_as_list(arrays, "concat"), axis, dtype, casting, "concat")


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join equally shaped arrays along a new axis.

    >>> import zerax.numpy as znp
    >>> znp.stack([znp.zeros(3), znp.ones(3)], axis=1).shape
    (3, 2)
    """
    _no_out(out, "stack")
    xs = _as_list(arrays, "stack")
    if not xs:
        raise errors.ShapeError("zerax.numpy.stack: need at least one array to stack")
    if any(tuple(x.shape) != tuple(xs[0].shape) for x in xs):
        raise errors.ShapeError(
            "zerax.numpy.stack: all input arrays must have the same shape, got "
            f"{', '.join(str(tuple(x.shape)) for x in xs)}")
    axis = normalize_axis(axis, xs[0].ndim + 1, "stack")
    xs = [expand_dims(x, axis) for x in xs]
    return _concat(xs, axis, dtype, casting, "stack")


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays row-wise (along axis 0 after `atleast_2d`)."""
    xs = [_atleast(x, 2, "vstack") for x in _as_list(tup, "vstack")]
    return _concat(xs, 0, dtype, casting, "vstack")


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's (and JAX's) alias of `vstack`: stack arrays row-wise.

    >>> import zerax.numpy as znp
    >>> znp.row_stack([znp.array([1, 2]), znp.array([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    xs = [_atleast(x, 2, "row_stack") for x in _as_list(tup, "row_stack")]
    return _concat(xs, 0, dtype, casting, "row_stack")


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays column-wise (axis 1, or axis 0 for 1-D inputs)."""
    xs = [_atleast(x, 1, "hstack") for x in _as_list(tup, "hstack")]
    axis = 0 if xs and xs[0].ndim == 1 else 1
    return _concat(xs, axis, dtype, casting, "hstack")


def dstack(tup):
    """Stack arrays depth-wise (along axis 2 after `atleast_3d`)."""
    xs = [_atleast(x, 3, "dstack") for x in _as_list(tup, "dstack")]
    return _concat(xs, 2, None, "same_kind", "dstack")


def column_stack(tup):
    """Stack 1-D arrays as the columns of a 2-D array."""
    xs = []
    for x in _as_list(tup, "column_stack"):
        if x.ndim < 2:
            x = sh.reshape(x, (x.size, 1))
        xs.append(x)
    return _concat(xs, 1, None, "same_kind", "column_stack")


def append(arr, values, axis=None):
    """``arr`` with ``values`` appended (both flattened when ``axis`` is None)."""
    arr = ensure_array(arr, "append")
    values = ensure_array(values, "append")
    if axis is None:
        if arr.ndim != 1:
            arr = ravel(arr)
        values = ravel(values)
        axis = arr.ndim - 1
    return _concat([arr, values], axis, None, "same_kind", "append")


def block(arrays):
    """Assemble an array from nested lists of blocks (innermost lists join on the last axis).

    >>> import zerax.numpy as znp
    >>> znp.block([[znp.eye(2), znp.zeros((2, 1))], [znp.ones((1, 3))]]).shape
    (3, 3)
    """
    def info(x, depth):
        if isinstance(x, tuple):
            raise errors.ZeraxTypeError(
                "zerax.numpy.block: arrays is a tuple; only lists can be used to arrange blocks")
        if isinstance(x, list):
            if not x:
                raise errors.ShapeError("zerax.numpy.block: lists cannot be empty")
            subs = [info(e, depth + 1) for e in x]
            if len({d for d, _ in subs}) != 1:
                raise errors.ShapeError("zerax.numpy.block: list depths are mismatched")
            return subs[0][0], max(n for _, n in subs)
        return depth, ensure_array(x, "block").ndim

    list_ndim, max_nd = info(arrays, 0)
    result_ndim = max(list_ndim, max_nd)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves.append(ensure_array(x, "block"))

    collect(arrays)
    dt = dtypes.result_type(*[np.dtype(x.dtype) for x in leaves])
    it = iter(leaves)

    def build(x, depth):
        if isinstance(x, list):
            return _concat([build(e, depth + 1) for e in x], -(list_ndim - depth), None,
                           "same_kind", "block")
        leaf = as_dtype(next(it), dt)
        return sh.reshape(leaf, (1,) * (result_ndim - leaf.ndim) + tuple(leaf.shape))

    return build(arrays, 0)

# --------------------------------------------------------------------------- splitting


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = ensure_array(x, "unstack")
    if x.ndim == 0:
        raise errors.ShapeError("zerax.numpy.unstack: input must be at least 1-d")
    axis = normalize_axis(axis, x.ndim, "unstack")
    out_shape = [n for i, n in enumerate(x.shape) if i != axis]
    return tuple(sh.reshape(_slice_axis(x, axis, i, i + 1), out_shape)
                 for i in range(x.shape[axis]))


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays, allowing sections of unequal size (a list, as NumPy)."""
    return _split(ary, indices_or_sections, axis, "array_split", equal=False)


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices (a list).

    >>> import zerax.numpy as znp
    >>> [s.shape for s in znp.split(znp.arange(6), [2, 3])]
    [(2,), (1,), (3,)]
    """
    return _split(ary, indices_or_sections, axis, "split", equal=True)


def _split(ary, ios, axis, fname, equal):
    ary = ensure_array(ary, fname)
    axis = normalize_axis(axis, ary.ndim, fname)
    total = ary.shape[axis]
    ios = _concrete(ios, fname, "indices_or_sections")
    if isinstance(ios, np.ndarray) and ios.ndim == 0:
        ios = ios.item()
    if isinstance(ios, (int, np.integer, float, np.floating)) and not isinstance(ios, bool):
        sections = _concrete_int(ios, fname, "indices_or_sections")
        if sections <= 0:
            raise errors.ShapeError(f"zerax.numpy.{fname}: number sections must be larger "
                                    "than 0")
        if equal and total % sections:
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: array split does not result in an equal division "
                f"({total} into {sections} sections); use array_split")
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = np.cumsum(sizes).tolist()
    else:
        points = [0] + list(_int_tuple(ios, fname, "indices_or_sections")) + [total]
    out = []
    for st, end in itertools.pairwise(points):
        start, stop, _ = slice(st, end).indices(total)
        out.append(_slice_axis(ary, axis, start, max(start, stop)))
    return out


def hsplit(ary, indices_or_sections):
    """`split` along axis 1 (axis 0 for 1-D arrays)."""
    ary = ensure_array(ary, "hsplit")
    if ary.ndim == 0:
        raise errors.ShapeError("zerax.numpy.hsplit only works on arrays of 1 or more "
                                "dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """`split` along axis 0 (arrays of 2 or more dimensions)."""
    ary = ensure_array(ary, "vsplit")
    if ary.ndim < 2:
        raise errors.ShapeError("zerax.numpy.vsplit only works on arrays of 2 or more "
                                "dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """`split` along axis 2 (arrays of 3 or more dimensions)."""
    ary = ensure_array(ary, "dsplit")
    if ary.ndim < 3:
        raise errors.ShapeError("zerax.numpy.dsplit only works on arrays of 3 or more "
                                "dimensions")
    return split(ary, indices_or_sections, 2)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (static indices, slice or mask) along ``axis``."""
    arr = ensure_array(arr, "delete")
    if axis is None:
        if arr.ndim != 1:
            arr = ravel(arr)
        axis = 0
    else:
        axis = normalize_axis(axis, arr.ndim, "delete")
    obj = obj if isinstance(obj, slice) else _concrete(obj, "delete", "obj")
    try:
        keep = np.delete(np.arange(arr.shape[axis]), obj)
    except (IndexError, ValueError, TypeError) as e:
        raise errors.ShapeError(f"zerax.numpy.delete: invalid obj: {e}") from None
    return _gather_runs(arr, axis, keep)


def _fit(values, slot):
    """``values`` broadcast to ``slot`` as NumPy's item assignment does (extra leading
    length-1 axes are dropped)."""
    while values.ndim > len(slot) and values.shape[0] == 1:
        values = sh.reshape(values, values.shape[1:])
    return broadcast_to(values, slot)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the static indices ``obj`` along ``axis``."""
    arr = ensure_array(arr, "insert")
    if axis is None:
        if arr.ndim != 1:
            arr = ravel(arr)
        axis = arr.ndim - 1
    else:
        axis = normalize_axis(axis, arr.ndim, "insert")
    n = arr.shape[axis]
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n))
    else:
        indices = np.array(_concrete(obj, "insert", "obj"))
        if indices.dtype == np.bool_:
            if indices.ndim != 1:
                raise errors.ShapeError("zerax.numpy.insert: a boolean obj must be 1-d")
            indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise errors.ShapeError("zerax.numpy.insert: obj must be 1-d or a scalar")
        elif indices.size == 0:
            indices = indices.astype(np.intp)
        if indices.dtype.kind not in "iu":
            raise errors.ZeraxTypeError("zerax.numpy.insert: obj must contain integers")
    if np.any((indices < -n) | (indices > n)):
        raise errors.ShapeError(
            f"zerax.numpy.insert: index {obj} is out of bounds for axis {axis} with size {n}")
    values = array(values, dtype=arr.dtype, ndmin=arr.ndim)
    if indices.size == 1:
        index = int(indices.item())
        index = index + n if index < 0 else index
        if indices.ndim == 0:
            values = moveaxis(values, 0, axis)
        slot = list(arr.shape)
        slot[axis] = values.shape[axis]
        values = _fit(values, slot)
        return sh.concatenate([_slice_axis(arr, axis, 0, index), values,
                               _slice_axis(arr, axis, index, n)], axis)
    indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
    numnew = len(indices)
    order = indices.argsort(kind="mergesort")
    indices[order] += np.arange(numnew)
    slot = list(arr.shape)
    slot[axis] = numnew
    values = _fit(values, slot)
    both = sh.concatenate([arr, values], axis)  # positions >= n are the values
    src = np.empty(n + numnew, np.int64)
    is_new = np.zeros(n + numnew, bool)
    is_new[indices] = True
    src[indices] = n + np.arange(numnew)
    src[~is_new] = np.arange(n)
    return _gather_runs(both, axis, src)
