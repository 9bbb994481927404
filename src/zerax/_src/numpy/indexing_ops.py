"""`zerax.numpy` indexing, searching, sorting and counting functions (the set functions
``unique``, ``isin``, ... are in `setops`; ``ix_``, ``unravel_index``, ``tril_indices``,
``fill_diagonal`` and the other index helpers in `index_tricks`).

Composed from the gather/scatter/sort primitives (`ops.indexing`, `ops.index_update`,
`ops.sort`).  Functions whose output shape depends on values (``nonzero`` without
``size=``, ``compress``, ``bincount`` without ``length=``) need concrete inputs and raise
`ConcretizationError` under tracing, like JAX; their float outputs are still gathers of
the inputs, so derivatives flow through them.  Out-of-bounds traced indices
follow JAX (see each function); concrete ones raise like NumPy where NumPy raises.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer, concrete_value, is_concrete
from ..ops import index_update as _upd
from ..ops import indexing as _ix
from ..ops import sort as _sort
from ..ops.elementwise import (add, bitwise_and, clamp, convert_element_type, eq, ge, le, lt, mul, select_n, sub)
from ..ops.reduce import cumsum, reduce_max, reduce_min, reduce_sum
from ..ops.shape import concatenate, iota, reshape, rev
from ._util import (as_dtype, broadcast_shapes, broadcast_to_shape, check_arg, ensure_array, normalize_axis, numpy_result_dtype, shape_of)
from ..ops.shape import broadcast_in_dim
from .ufuncs import floor_divide, remainder, true_divide

__all__ = [
    "where", "nonzero", "flatnonzero", "argwhere", "take", "take_along_axis",
    "put_along_axis", "put", "choose", "select", "compress", "extract", "searchsorted",
    "digitize", "sort", "argsort", "lexsort", "partition", "argpartition", "bincount",
    "histogram",
]



def _idt():
    """Indices' dtype: the mode's default int (int64; int32 with x64 off, as JAX's)."""
    return dtypes.default_int()


def _argsort(x, axis):
    """The sorting permutation (the primitive's int64) as indices of the mode."""
    perm = _sort.argsort(x, axis)
    idt = _idt()
    return perm if np.dtype(perm.dtype) == idt else convert_element_type(perm, idt)
_PY = (bool, int, float, complex)


def _ravel(x):
    return reshape(x, (int(np.prod(x.shape, dtype=np.int64)),))


def _full_broadcast(x, shape):
    """``x`` broadcast to ``shape`` (0-d values too)."""
    x = broadcast_to_shape(x, tuple(shape))
    if tuple(x.shape) != tuple(shape):
        x = broadcast_in_dim(x, tuple(shape), ())
    return x


def _int_array(x, fname, what="indices"):
    """An integer (or bool, cast to int64) zerax value."""
    x = ensure_array(x, fname)
    kind = np.dtype(x.dtype).kind
    if kind == "b":
        return convert_element_type(x, _idt())
    if kind not in "iu":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be integers, got dtype {np.dtype(x.dtype).name}")
    return x


def _concrete(x, fname, why="its output shape depends on the input's values"):
    return concrete_value(x, f"zerax.numpy.{fname} ({why})")


def _wrap(v):
    return Array._wrap(np.array(v))


def _bad_value(msg):
    return errors.ZeraxTypeError(msg)


# --------------------------------------------------------------------------- where / nonzero


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (broadcast); with only
    ``condition``, ``nonzero(condition)``.

    >>> import zerax.numpy as znp
    >>> znp.where([False, False, True, True], 10, 0)
    Array([ 0,  0, 10, 10], dtype=int64)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise errors.ZeraxTypeError("zerax.numpy.where: give both x and y, or neither")
    condition = check_arg(condition, "where", 0)
    x, y = check_arg(x, "where", 1), check_arg(y, "where", 2)
    dtype = numpy_result_dtype(np.where, condition, x, y)
    shape = broadcast_shapes("where", shape_of(condition), shape_of(x), shape_of(y))
    cond, x, y = (broadcast_to_shape(_as_zx(v), shape)
                  for v in (as_dtype(condition, np.bool_), as_dtype(x, dtype), as_dtype(y, dtype)))
    return select_n(cond, y, x)


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one int64 array per axis.  Without ``size`` the
    input must be concrete; with ``size`` the result has that length (padded with
    ``fill_value``, default 0, or truncated) and works under tracing.

    >>> import zerax.numpy as znp
    >>> znp.nonzero([0, 3, 0, 5])
    (Array([1, 3], dtype=int64),)
    """
    a = ensure_array(a, "nonzero")
    if a.ndim == 0:
        raise errors.ShapeError("Calling nonzero on 0d arrays is not allowed. Use "
                                "zerax.numpy.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        v = _concrete(a, "nonzero", "its output shape depends on the values; pass size=")
        return tuple(_wrap(i.astype(_idt())) for i in np.nonzero(v))
    size = operator.index(size)
    mask = _ravel(convert_element_type(a, np.bool_))
    n = mask.shape[0]
    pos = sub(cumsum(convert_element_type(mask, _idt()), 0), np.ones((), _idt()))
    target = select_n(mask, np.array(size, _idt()), pos)
    flat = _upd.scatter(np.full((size,), -1, _idt()), iota(_idt(), (n,)), [target], [("a", 0)],
                       "set", "drop")
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * a.ndim
    if len(fills) != a.ndim:
        raise errors.ShapeError(f"zerax.numpy.nonzero: fill_value needs {a.ndim} entries")
    missing = eq(flat, np.array(-1, _idt()))
    out = []
    for d, coord in enumerate(_unravel(flat, a.shape)):
        f = np.asarray(0 if fills[d] is None else fills[d]).astype(_idt())
        out.append(select_n(missing, coord, f))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened array."""
    return nonzero(_ravel(ensure_array(a, "flatnonzero")), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements as an ``(N, a.ndim)`` int64 array."""
    a = ensure_array(a, "argwhere")
    if a.ndim == 0:
        if size is None:
            return _wrap(np.argwhere(_concrete(a, "argwhere")).astype(_idt()))
        return _wrap(np.zeros((size, 0), _idt()))
    idx = nonzero(a, size=size, fill_value=fill_value)
    return concatenate([reshape(i, (i.shape[0], 1)) for i in idx], 1)


# --------------------------------------------------------------------------- take & co


def _axis_entries(ndim, axis, shape):
    return [("s", 0, shape[d], 1) if d != axis else ("a", 0) for d in range(ndim)]


def _mode_indices(idx, n, mode, fname):
    """Apply ``mode`` to integer ``idx`` for an axis of size ``n``: returns (idx, gather
    mode)."""
    if mode == "raise":
        v = np.asarray(_concrete(idx, fname, "mode='raise' needs concrete indices"))
        v = v.astype(_idt())
        bad = (v < -n) | (v >= n)
        if bad.any():
            raise errors.ZeraxIndexError(
                f"zerax.numpy.{fname}: index {int(v[bad].flat[0])} is out of bounds for "
                f"axis with size {n}")
        return np.where(v < 0, v + n, v), "clip"
    if mode == "wrap":
        if n == 0:
            raise errors.ZeraxIndexError(f"zerax.numpy.{fname}: cannot wrap indices into an empty axis")
        return remainder(convert_element_type(idx, _idt()), np.array(n, _idt())), "clip"
    if mode == "clip":
        if n == 0:
            raise errors.ZeraxIndexError(
                f"zerax.numpy.{fname}: cannot do a non-empty take from an empty axis")
        return clamp(np.zeros((), _idt()), convert_element_type(idx, _idt()),
                     np.array(n - 1, _idt())), "clip"
    if mode == "fill":
        return idx, "fill"
    raise _bad_value(f"zerax.numpy.{fname}: mode must be one of 'raise', 'wrap', 'clip', "
                     f"'fill', got {mode!r}")


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None).

    ``mode`` (JAX's default ``"fill"``): out-of-bounds indices give ``fill_value``
    (NaN for floats); ``"clip"`` clamps, ``"wrap"`` wraps, ``"raise"`` checks (concrete
    indices only).  Negative indices count from the end (except with ``"clip"``).

    >>> import zerax.numpy as znp
    >>> znp.take([1.0, 2.0, 3.0], [2, 0, -1])
    Array([3., 1., 3.], dtype=float64)
    """
    if out is not None:
        raise errors.NotSupportedError("zerax.numpy.take: out= is not supported (arrays are "
                                       "immutable); use the return value")
    a = ensure_array(a, "take")
    idx = _int_array(indices, "take")
    if axis is None:
        a, axis = _ravel(a), 0
    else:
        axis = normalize_axis(axis, a.ndim, "take")
    idx, gmode = _mode_indices(idx, a.shape[axis], "fill" if mode is None else mode, "take")
    return _ix.gather(a, [idx], _axis_entries(a.ndim, axis, a.shape), mode=gmode,
                      fill_value=fill_value)


def _along_axis_args(arr, indices, axis, fname):
    arr = ensure_array(arr, fname)
    indices = _int_array(indices, fname)
    if axis is None:
        if indices.ndim != 1:
            raise errors.ShapeError(f"zerax.numpy.{fname}: when axis=None, `indices` must have "
                                    "a single dimension.")
        return _ravel(arr), indices, 0
    if indices.ndim != arr.ndim:
        raise errors.ShapeError(f"zerax.numpy.{fname}: `indices` and `arr` must have the same "
                                f"number of dimensions, got {indices.ndim} and {arr.ndim}")
    return arr, indices, normalize_axis(axis, arr.ndim, fname)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """``arr`` gathered along ``axis`` by ``indices`` (of the same rank; other axes
    broadcast), e.g. with the output of ``argsort``.  Out-of-bounds indices give
    ``fill_value`` (JAX's default ``mode="fill"``) or are clamped (``"clip"``)."""
    arr, indices, axis = _along_axis_args(arr, indices, axis, "take_along_axis")
    gmode = "clip" if mode in ("clip", "promise_in_bounds") else "fill"
    return _ix.take_along_axis(arr, indices, axis, mode=gmode, fill_value=fill_value)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """A copy of ``arr`` with ``values`` put at ``indices`` along ``axis`` (functional:
    pass ``inplace=False``).  Out-of-bounds indices are dropped."""
    if inplace:
        raise errors.NotSupportedError(
            "zerax.numpy.put_along_axis: zerax arrays are immutable; pass inplace=False and "
            "use the returned array")
    arr0 = ensure_array(arr, "put_along_axis")
    arr, indices, axis = _along_axis_args(arr0, indices, axis, "put_along_axis")
    arrays, entries = _ix.along_axis_indexer(tuple(arr.shape), indices, axis)
    shape, _, _ = _ix._gather_shape(arr.shape, entries, [x.shape for x in arrays])
    v = _upd._updates_to(values, shape, arr.dtype, "zerax.numpy.put_along_axis")
    out = _upd.scatter(arr, v, arrays, entries, "set", "clip" if mode == "clip" else "drop")
    return reshape(out, arr0.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with ``a.flat[ind] = v`` (``v`` repeats if shorter; functional:
    pass ``inplace=False``).  ``mode``: None drops out-of-bounds traced indices (concrete
    ones raise), or ``"raise"``, ``"wrap"``, ``"clip"``."""
    if inplace:
        raise errors.NotSupportedError(
            "zerax.numpy.put: zerax arrays are immutable; pass inplace=False and use the "
            "returned array")
    a = ensure_array(a, "put")
    ind = _ravel(_int_array(ind, "put"))
    flat = _ravel(a)
    n = flat.shape[0]
    if mode is not None:
        ind, _ = _mode_indices(ind, n, mode, "put")
    v = _ravel(ensure_array(v, "put"))
    k = ind.shape[0]
    if k == 0:
        return a
    if v.shape[0] == 0:
        raise errors.ShapeError("zerax.numpy.put: cannot put an empty array of values")
    if v.shape[0] != k:
        v = _ix.gather(v, [np.arange(k, dtype=_idt()) % v.shape[0]], [("a", 0)])
    out = flat.at[ind].set(v, mode="clip" if mode == "clip" else None)
    return reshape(out, a.shape)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (all broadcast together)."""
    if out is not None:
        raise errors.NotSupportedError("zerax.numpy.choose: out= is not supported")
    a = _int_array(a, "choose")
    if isinstance(choices, (Array, Tracer, np.ndarray)):
        choices = [choices[i] for i in range(choices.shape[0])]
    choices = [check_arg(c, "choose", 1) for c in choices]
    n = len(choices)
    if n == 0:
        raise errors.ShapeError("zerax.numpy.choose: choices must not be empty")
    dtype = dtypes.result_type(*[np.asarray(c).dtype if type(c) in _PY else c.dtype
                             for c in choices])
    shape = broadcast_shapes("choose", a.shape, *[shape_of(c) for c in choices])
    if mode == "raise":
        v = np.asarray(_concrete(a, "choose", "mode='raise' needs concrete indices"))
        if v.size and (v.min() < 0 or v.max() >= n):
            raise errors.ShapeError("zerax.numpy.choose: invalid entry in choice array")
        idx = a
    elif mode in ("wrap", "clip"):
        idx, _ = _mode_indices(a, n, mode, "choose")
    else:
        raise _bad_value("zerax.numpy.choose: mode must be 'raise', 'wrap' or 'clip', got "
                         f"{mode!r}")
    cs = [_full_broadcast(_as_zx(as_dtype(c, dtype)), shape) for c in choices]
    return select_n(_full_broadcast(_as_zx(idx), shape), *cs)


def _as_zx(v):
    return Array._wrap(np.array(v)) if isinstance(v, (np.ndarray, np.generic)) else v


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else ``default``.

    >>> import zerax.numpy as znp
    >>> import numpy as np
    >>> x = np.arange(4)
    >>> znp.select([x < 1, x > 2], [x, x * 10], -1)
    Array([ 0, -1, -1, 30], dtype=int64)
    """
    if len(condlist) != len(choicelist):
        raise errors.ShapeError("zerax.numpy.select: list of cases must be same length as list "
                                "of conditions")
    if len(condlist) == 0:
        raise errors.ShapeError("zerax.numpy.select: select with an empty condition list is "
                                "not possible")
    conds = [check_arg(c, "select", 0) for c in condlist]
    for i, c in enumerate(conds):
        dt = np.asarray(c).dtype if type(c) in _PY else np.dtype(c.dtype)
        if dt != np.bool_:
            raise errors.ZeraxTypeError(f"zerax.numpy.select: invalid entry {i} in condlist: "
                                        "should be boolean ndarray")
    choices = [check_arg(c, "select", 1) for c in choicelist]
    default = check_arg(default, "select", 2)
    samples = [type(c)(1) if type(c) in _PY else np.ones((), c.dtype) for c in choices]
    dsample = type(default)(0) if type(default) in _PY else np.ones((), default.dtype)
    dtype = dtypes.canonicalize(
        np.select([np.array(True)] * len(samples), samples, dsample).dtype)
    shape = broadcast_shapes("select", *[shape_of(v) for v in conds + choices + [default]])
    out = _full_broadcast(_as_zx(as_dtype(default, dtype)), shape)
    for c, v in reversed(list(zip(conds, choices))):
        out = select_n(_full_broadcast(_as_zx(as_dtype(c, np.bool_)), shape), out,
                       _full_broadcast(_as_zx(as_dtype(v, dtype)), shape))
    return out


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` where the (concrete) ``condition`` is true."""
    if out is not None:
        raise errors.NotSupportedError("zerax.numpy.compress: out= is not supported")
    cond = np.asarray(_concrete(ensure_array(condition, "compress"), "compress")).ravel()
    a = ensure_array(a, "compress")
    if axis is None:
        a, axis = _ravel(a), 0
    else:
        axis = normalize_axis(axis, a.ndim, "compress")
    idx = np.nonzero(cond)[0]
    n = a.shape[axis]
    if idx.size and idx[-1] >= n:
        raise errors.ZeraxIndexError(
            f"zerax.numpy.compress: index {idx[-1]} is out of bounds for axis {axis} with "
            f"size {n}")
    return _ix.gather(a, [idx.astype(_idt())], _axis_entries(a.ndim, axis, a.shape))


def extract(condition, arr):
    """The elements of ``arr`` where the (concrete) ``condition`` is non-zero, flattened."""
    cond = np.asarray(_concrete(ensure_array(condition, "extract"), "extract")).ravel()
    arr = _ravel(ensure_array(arr, "extract"))
    idx = np.nonzero(cond)[0]
    if idx.size and idx[-1] >= arr.shape[0]:
        raise errors.ZeraxIndexError(
            f"zerax.numpy.extract: index {idx[-1]} is out of bounds for axis 0 with size "
            f"{arr.shape[0]}")
    return _ix.gather(arr, [idx.astype(_idt())], [("a", 0)])


# --------------------------------------------------------------------------- sorting


def _sort_axis(a, axis, fname):
    if axis is None:
        return _ravel(a), 0
    if a.ndim == 0:
        raise errors.AxisError(f"zerax.numpy.{fname}: axis {axis} is out of bounds for array "
                                "of dimension 0")
    return a, normalize_axis(axis, a.ndim, fname)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """A sorted copy of ``a`` (NaNs last; ``descending=True`` reverses the order).

    >>> import zerax.numpy as znp
    >>> znp.sort([3.0, 1.0, 2.0])
    Array([1., 2., 3.], dtype=float64)
    """
    if order is not None:
        raise errors.NotSupportedError("zerax.numpy.sort: order= (structured arrays) is not "
                                       "supported")
    a, axis = _sort_axis(ensure_array(a, "sort"), axis, "sort")
    out = _sort.sort(a, axis)
    return rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """The indices that sort ``a`` (int64; int32 with x64 off; stable: equal elements keep
    their order, also with ``descending=True``).

    >>> import zerax.numpy as znp
    >>> znp.argsort([3, 1, 2, 1])
    Array([1, 3, 2, 0], dtype=int64)
    """
    if order is not None:
        raise errors.NotSupportedError("zerax.numpy.argsort: order= is not supported")
    a, axis = _sort_axis(ensure_array(a, "argsort"), axis, "argsort")
    if not descending:
        return _argsort(a, axis)
    n = a.shape[axis]
    perm = rev(_argsort(rev(a, (axis,)), axis), (axis,))
    return sub(np.array(n - 1, _idt()), perm)


def lexsort(keys, axis=-1):
    """Indices that sort by several keys, the last key being the primary one."""
    if isinstance(keys, (Array, Tracer, np.ndarray)):
        keys = [keys[i] for i in range(keys.shape[0])]
    keys = [ensure_array(k, "lexsort") for k in keys]
    if not keys:
        raise errors.ZeraxTypeError("zerax.numpy.lexsort: need a sequence of keys with len > 0")
    shape = broadcast_shapes("lexsort", *[k.shape for k in keys])
    keys = [_full_broadcast(k, shape) for k in keys]
    if not shape:
        return _wrap(np.array(0, _idt()))
    axis = normalize_axis(axis, len(shape), "lexsort")
    perm = _argsort(keys[0], axis)
    for k in keys[1:]:
        p2 = _argsort(_ix.take_along_axis(k, perm, axis), axis)
        perm = _ix.take_along_axis(perm, p2, axis)
    return perm


def _check_kth(kth, n, fname):
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind not in "iu":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: kth must be integer(s)")
    for k in ks:
        if not -n <= k < n:
            raise errors.ShapeError(f"zerax.numpy.{fname}: kth(={int(k)}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the ``kth`` element in its sorted place, smaller ones before
    and larger ones after (zerax sorts fully, which satisfies this)."""
    a, axis = _sort_axis(ensure_array(a, "partition"), axis, "partition")
    _check_kth(kth, a.shape[axis], "partition")
    return _sort.sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` around ``kth`` (a full stable argsort)."""
    a, axis = _sort_axis(ensure_array(a, "argpartition"), axis, "argpartition")
    _check_kth(kth, a.shape[axis], "argpartition")
    return _argsort(a, axis)


# --------------------------------------------------------------------------- searching


def _rank(x):
    """rank[i] = position of x[i] in the stable sort of x (1-d)."""
    n = x.shape[0]
    return _upd.scatter(np.zeros((n,), _idt()), iota(_idt(), (n,)), [_argsort(x, 0)],
                       [("a", 0)], "set", "drop")


def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """Where to insert ``v`` into the sorted 1-d ``a`` to keep it sorted (int64).

    Works under tracing (a stable sort of ``a`` and ``v`` together; NaNs sort last).

    >>> import zerax.numpy as znp
    >>> znp.searchsorted([1.0, 2.0, 3.0], 2.0, side="right")
    Array(2, dtype=int64)
    """
    a = ensure_array(a, "searchsorted")
    if a.ndim != 1:
        raise errors.ShapeError("zerax.numpy.searchsorted: a must be 1-dimensional")
    if side not in ("left", "right"):
        raise _bad_value(f"zerax.numpy.searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter, mode="clip")
    v = check_arg(v, "searchsorted", 1)
    dtype = dtypes.result_type(a.dtype, v if type(v) in _PY else np.dtype(v.dtype))
    a = as_dtype(a, dtype)
    vshape = shape_of(v)
    q = _ravel(_as_zx(as_dtype(v, dtype)))
    na, nq = a.shape[0], q.shape[0]
    if nq == 0:
        return _wrap(np.zeros(vshape, _idt()))
    if side == "left":
        index = _ix.getitem(_rank(concatenate([q, a], 0)), slice(0, nq))
    else:
        index = _ix.getitem(_rank(concatenate([a, q], 0)), slice(na, na + nq))
    return reshape(sub(index, _rank(q)), vshape)


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each value of ``x`` falls in (``bins`` monotonic, 1-d)."""
    x = ensure_array(x, "digitize")
    bins = ensure_array(bins, "digitize")
    if np.dtype(x.dtype).kind == "c":
        raise errors.ZeraxTypeError("zerax.numpy.digitize: x may not be complex")
    if bins.ndim != 1:
        raise errors.ShapeError("zerax.numpy.digitize: bins must be 1-dimensional")
    n = bins.shape[0]
    if n == 0:
        return _wrap(np.zeros(x.shape, _idt()))
    side = "left" if right else "right"
    inc = lambda: searchsorted(bins, x, side)  # noqa: E731
    dec = lambda: sub(np.array(n, _idt()), searchsorted(rev(bins, (0,)), x, side))  # noqa: E731
    if is_concrete(bins):
        b = np.asarray(concrete_value(bins))
        d = np.diff(b)
        if np.all(d >= 0):
            return inc()
        if np.all(d <= 0):
            return dec()
        raise errors.ShapeError("zerax.numpy.digitize: bins must be monotonically increasing "
                                "or decreasing")
    last, first = _ix.getitem(bins, -1), _ix.getitem(bins, 0)
    return select_n(ge(last, first), dec(), inc())


# --------------------------------------------------------------------------- counting


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed ``weights``) of each non-negative integer in ``x``.  Without
    ``length`` the input must be concrete; with it, values ``>= length`` are dropped and
    negative ones count as 0 (JAX).

    >>> import zerax.numpy as znp
    >>> znp.bincount([0, 2, 2, 3])
    Array([1, 0, 2, 1], dtype=int64)
    """
    x = ensure_array(x, "bincount")
    if np.dtype(x.dtype).kind not in "biu":
        raise errors.ZeraxTypeError(f"zerax.numpy.bincount: x must be integers, got "
                                    f"{np.dtype(x.dtype).name}")
    if x.ndim != 1:
        raise errors.ShapeError("zerax.numpy.bincount: x must be 1-dimensional")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise errors.ShapeError("zerax.numpy.bincount: 'minlength' must not be negative")
    if length is None or is_concrete(x):
        v = np.asarray(_concrete(x, "bincount", "pass length= to use it under tracing"))
        if v.size and v.min() < 0:
            raise errors.ShapeError("zerax.numpy.bincount: x must have no negative elements")
        if length is None:
            length = builtins.max(minlength, int(v.max()) + 1 if v.size else 0)
    length = operator.index(length)
    idx = convert_element_type(x, _idt())
    idx = select_n(lt(idx, np.zeros((), _idt())), idx, np.zeros((), _idt()))
    if weights is None:
        w, dtype = _wrap(np.ones(x.shape, _idt())), _idt()
    else:
        w = ensure_array(weights, "bincount")
        if np.dtype(w.dtype).kind == "c":
            raise errors.ZeraxTypeError("zerax.numpy.bincount: weights must be real")
        if tuple(w.shape) != tuple(x.shape):
            raise errors.ShapeError("zerax.numpy.bincount: the weights and list don't have the "
                                    "same length.")
        # NumPy sums weights in float64 (and gives int64 for an empty x); float32 and
        # int32 with x64 off
        dtype = dtypes.canonicalize(np.bincount(np.zeros(min(x.shape[0], 1), np.intp),
                                                np.zeros(min(x.shape[0], 1))).dtype)
        w = convert_element_type(w, dtype)
    return _upd.scatter(np.zeros((length,), dtype), w, [idx], [("a", 0)], "add", "drop")


def _linspace_edges(lo, hi, num, dtype):
    """NumPy's ``linspace(lo, hi, num)`` for 0-d float values (same rounding)."""
    delta = sub(hi, lo)
    step = true_divide(delta, np.array(num - 1, dtype))
    y = add(mul(iota(dtype, (num,)), step), lo)
    return concatenate([_ix.getitem(y, slice(0, num - 1)), reshape(hi, (1,))], 0)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Counts of ``a`` in ``bins`` (a count of equal bins or monotonic edges) and the edges.

    The last bin includes its right edge; values outside the range are ignored."""
    a = _ravel(ensure_array(a, "histogram"))
    if np.dtype(a.dtype).kind == "c":
        raise errors.NotSupportedError("zerax.numpy.histogram: complex input is not supported")
    if isinstance(bins, str):
        raise errors.NotSupportedError("zerax.numpy.histogram: bin estimators ('auto', ...) "
                                       "are not supported; pass a number of bins or edges")
    if isinstance(bins, (int, np.integer)):
        nb = operator.index(bins)
        if nb < 1:
            raise errors.ShapeError("zerax.numpy.histogram: `bins` must be positive, when an "
                                    "integer")
        adt = np.dtype(a.dtype)
        if range is not None or a.shape[0] == 0:
            lo, hi = range if range is not None else (0.0, 1.0)
            if lo > hi:
                raise errors.ShapeError("zerax.numpy.histogram: max must be larger than min in "
                                        "range parameter.")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise errors.ShapeError(f"zerax.numpy.histogram: supplied range of [{lo}, {hi}] "
                                        "is not finite")
            bin_type = dtypes.result_type(lo, hi, adt)
        else:
            lo, hi = reduce_min(a, (0,)), reduce_max(a, (0,))
            if is_concrete(lo) and not np.isfinite(np.asarray(concrete_value(lo)) +
                                                   np.asarray(concrete_value(hi))):
                raise errors.ShapeError("zerax.numpy.histogram: the autodetected range of the "
                                        "data is not finite; pass range=")
            bin_type = dtypes.result_type(adt, 0.5)
        if bin_type.kind in "iub":
            bin_type = dtypes.result_type(bin_type, float)
        lo, hi = as_dtype(lo, bin_type), as_dtype(hi, bin_type)
        same = eq(lo, hi)
        half = np.array(0.5, bin_type)
        lo = select_n(same, lo, sub(lo, half))
        hi = select_n(same, hi, add(hi, half))
        edges = _linspace_edges(lo, hi, nb + 1, bin_type)
    else:
        edges = ensure_array(bins, "histogram")
        if edges.ndim != 1:
            raise errors.ShapeError("zerax.numpy.histogram: bins must be 1d, when an array")
        if is_concrete(edges) and np.any(np.diff(np.asarray(concrete_value(edges))) < 0):
            raise errors.ShapeError("zerax.numpy.histogram: `bins` must increase "
                                    "monotonically, when an array")
        nb = edges.shape[0] - 1
    et = np.dtype(edges.dtype)
    ct = dtypes.result_type(et, np.dtype(a.dtype))
    ac, ec = as_dtype(a, ct), as_dtype(edges, ct)
    first, last = _ix.getitem(ec, 0), _ix.getitem(ec, -1)
    idx = sub(searchsorted(ec, ac, "right"), np.ones((), _idt()))
    idx = select_n(eq(ac, last), idx, np.array(nb - 1, _idt()))
    inside = bitwise_and(ge(ac, first), le(ac, last))
    idx = select_n(inside, np.array(nb, _idt()), idx)
    if weights is None:
        w, ntype = _wrap(np.ones(a.shape, _idt())), _idt()
    else:
        w = _ravel(ensure_array(weights, "histogram"))
        if tuple(w.shape) != tuple(a.shape):
            raise errors.ShapeError("zerax.numpy.histogram: weights should have the same shape "
                                    "as a.")
        ntype = np.dtype(w.dtype)
    counts = _upd.scatter(np.zeros((nb,), ntype), w, [idx], [("a", 0)], "add", "drop")
    if density:
        db = sub(_ix.getitem(edges, slice(1, None)), _ix.getitem(edges, slice(None, -1)))
        total = reduce_sum(counts, (0,))
        return true_divide(true_divide(counts, db), total), edges
    return counts, edges


# --------------------------------------------------------------------------- flat indices


def _unravel(flat, shape):
    """Coordinates of flat (int64, in range or wrapped by floor division) indices."""
    out = []
    stride = 1
    strides = []
    for n in reversed(shape):
        strides.append(stride)
        stride *= n
    strides.reverse()
    for n, s in zip(shape, strides):
        c = floor_divide(flat, np.array(s, _idt())) if s != 1 else flat
        out.append(remainder(c, np.array(n, _idt())) if n else c)
    return out
