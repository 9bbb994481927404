"""`zerax.numpy` index tricks: index arrays for triangles and diagonals (``tril_indices``,
``diag_indices``, ``mask_indices``, ...), open meshes (``ix_``), flat <-> multi-index
conversion (``unravel_index``, ``ravel_multi_index``), ``fill_diagonal``, and the index
objects ``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_``, ``index_exp``.

Index arrays that depend only on shapes are computed by NumPy and wrapped as int64 arrays;
``unravel_index``, ``ravel_multi_index`` and ``fill_diagonal`` are composed from zerax ops
and the gather/scatter primitives, so they work under tracing (``fill_diagonal`` is
differentiable).  The searching, sorting and take/put functions are in `indexing_ops`.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ... import errors
from ..core.array import Array
from ..core.core import Tracer, concrete_value, is_concrete
from ..ops import index_update as _upd
from ..ops import indexing as _ix
from ..ops.elementwise import add, clamp, convert_element_type, mul
from ..ops.shape import reshape
from ._util import broadcast_shapes, ensure_array
from .indexing_ops import (_idt, _as_zx, _bad_value, _concrete, _full_broadcast, _int_array, _mode_indices, _ravel, _unravel, _wrap)
from .indexing_ops import nonzero
from .creation import arange, array, linspace, meshgrid, ones
from .joining import concatenate, stack
from ._util import as_dtype, check_arg, result_type
from .shape_ops import expand_dims, reshape as _np_reshape, swapaxes, transpose

__all__ = [
    "diag_indices", "diag_indices_from", "fill_diagonal", "ix_", "ravel_multi_index",
    "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from", "unravel_index",
    "mask_indices", "mgrid", "ogrid", "r_", "c_", "s_", "index_exp",
]


def _index_tuple(t):
    return tuple(_wrap(np.asarray(i).astype(_idt())) for i in t)


def tril_indices(n, k=0, m=None):
    """Indices of the lower triangle of an ``(n, m)`` array."""
    return _index_tuple(np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Indices of the upper triangle of an ``(n, m)`` array."""
    return _index_tuple(np.triu_indices(n, k, m))


def _shape2d(arr, fname):
    shape = np.shape(arr) if not isinstance(arr, (Array, Tracer)) else tuple(arr.shape)
    if len(shape) != 2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: input array must be 2-d")
    return shape


def tril_indices_from(arr, k=0):
    """Indices of the lower triangle of the 2-d ``arr``."""
    n, m = _shape2d(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """Indices of the upper triangle of the 2-d ``arr``."""
    n, m = _shape2d(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``n``-sided ``ndim``-d array."""
    return _index_tuple(np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """Indices of the main diagonal of ``arr`` (all sides equal)."""
    shape = np.shape(arr) if not isinstance(arr, (Array, Tracer)) else tuple(arr.shape)
    if len(shape) < 2:
        raise errors.ShapeError("zerax.numpy.diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise errors.ShapeError("zerax.numpy.diag_indices_from: all dimensions of input must be "
                                "of equal length")
    return diag_indices(shape[0], len(shape))


def ix_(*args):
    """Open-mesh index arrays: the k-th of n 1-d sequences reshaped to have its length on
    axis k (booleans become their nonzero indices)."""
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        if isinstance(a, (list, tuple)) and len(a) == 0:
            a = np.zeros((0,), _idt())
        a = ensure_array(a, "ix_")
        if a.ndim != 1:
            raise errors.ShapeError("zerax.numpy.ix_: cross index must be 1 dimensional")
        if np.dtype(a.dtype).kind == "b":
            a = _wrap(np.nonzero(np.asarray(_concrete(a, "ix_")))[0].astype(_idt()))
        elif np.dtype(a.dtype).kind not in "iu":
            raise errors.ZeraxTypeError("zerax.numpy.ix_: cross index must be integer or bool")
        shp = [1] * nd
        shp[k] = a.shape[0]
        out.append(reshape(a, shp))
    return tuple(out)


def _shape_tuple(shape, fname):
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def unravel_index(indices, shape, order="C"):
    """Flat indices -> a tuple of coordinate arrays for an array of ``shape``.

    As in JAX, negative indices count from the end and out-of-range indices are
    clipped to the nearest valid one (NumPy raises).

    >>> import zerax.numpy as znp
    >>> znp.unravel_index([5, 7], (3, 4))
    (Array([1, 1], dtype=int64), Array([1, 3], dtype=int64))
    """
    shape = _shape_tuple(shape, "unravel_index")
    if order not in ("C", "F"):
        raise _bad_value("zerax.numpy.unravel_index: order must be 'C' or 'F'")
    idx = convert_element_type(_int_array(indices, "unravel_index"), _idt())
    size = int(np.prod(shape, dtype=np.int64))
    idx = clamp(np.array(-size, _idt()), idx, np.array(builtins.max(size - 1, 0), _idt()))
    if order == "F":
        return tuple(reversed(_unravel(idx, shape[::-1])))
    return tuple(_unravel(idx, shape))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """A tuple of coordinate arrays -> flat indices into an array of shape ``dims``."""
    dims = _shape_tuple(dims, "ravel_multi_index")
    multi_index = [_int_array(i, "ravel_multi_index") for i in multi_index]
    if len(multi_index) != len(dims):
        raise errors.ShapeError(f"zerax.numpy.ravel_multi_index: parameter multi_index must be "
                                f"a sequence of length {len(dims)}")
    modes = mode if isinstance(mode, (tuple, list)) else [mode] * len(dims)
    shape = broadcast_shapes("ravel_multi_index", *[i.shape for i in multi_index])
    coords = []
    for i, n, m in zip(multi_index, dims, modes):
        i = convert_element_type(i, _idt())
        if m == "raise":
            v = np.asarray(_concrete(i, "ravel_multi_index", "mode='raise' needs concrete "
                                     "indices"))
            if v.size and (v.min() < 0 or v.max() >= n):
                raise errors.ShapeError("zerax.numpy.ravel_multi_index: invalid entry in "
                                        "coordinates array")
        elif m in ("wrap", "clip"):
            i, _ = _mode_indices(i, n, m, "ravel_multi_index")
        else:
            raise _bad_value(f"zerax.numpy.ravel_multi_index: unknown mode {m!r}")
        coords.append(_full_broadcast(_as_zx(i), shape))
    order_dims = list(range(len(dims)))
    if order == "F":
        order_dims.reverse()
    elif order != "C":
        raise _bad_value("zerax.numpy.ravel_multi_index: order must be 'C' or 'F'")
    out = None
    for d in order_dims:
        out = coords[d] if out is None else add(mul(out, np.array(dims[d], _idt())), coords[d])
    return out if out is not None else _wrap(np.zeros(shape, _idt()))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated as needed); zerax
    arrays are immutable, so pass ``inplace=False`` (as in JAX)."""
    if inplace:
        raise errors.NotSupportedError(
            "zerax.numpy.fill_diagonal: zerax arrays are immutable; pass inplace=False and use "
            "the returned array")
    a = ensure_array(a, "fill_diagonal")
    if a.ndim < 2:
        raise errors.ShapeError("zerax.numpy.fill_diagonal: array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise errors.ShapeError("zerax.numpy.fill_diagonal: all dimensions of input must be "
                                    "of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = None
    size = int(np.prod(a.shape, dtype=np.int64))
    pos = np.arange(size, dtype=_idt())[:end:step]
    v = _ravel(ensure_array(val, "fill_diagonal"))
    if pos.size == 0:
        return a
    if v.shape[0] == 0:
        raise errors.ShapeError("zerax.numpy.fill_diagonal: val must not be empty")
    if v.shape[0] != pos.size:
        v = _ix.gather(v, [np.arange(pos.size, dtype=_idt()) % v.shape[0]], [("a", 0)])
    v = convert_element_type(v, a.dtype)
    out = _upd.scatter(_ravel(a), v, [pos], [("a", 0)], "set", "clip")
    return reshape(out, a.shape)



def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices of the nonzero entries of ``mask_func(ones((n, n)), k)`` (for example
    ``mask_func=zerax.numpy.triu``).

    >>> import zerax.numpy as znp
    >>> znp.mask_indices(3, znp.triu, 1)
    (Array([0, 0, 1], dtype=int64), Array([1, 2, 2], dtype=int64))
    """
    n = operator.index(n)
    return nonzero(mask_func(ones((n, n), _idt()), k), size=size)


# --------------------------------------------------------------------------- index objects


def _slice_grid(s, op_name):
    """``s.start:s.stop:s.step`` as an arange, or a linspace for an imaginary step."""
    vals = []
    for v, what in ((s.start, "start"), (s.stop, "stop"), (s.step, "step")):
        if isinstance(v, (Array, Tracer)):
            if not is_concrete(v):
                raise errors.ConcretizationError(
                    f"zerax.numpy.{op_name}: the slice {what} must be a concrete value, not a "
                    "traced one (the grid's length depends on it).")
            v = concrete_value(v).item()
        vals.append(v)
    start, stop, step = vals
    start = 0 if start is None else start
    step = 1 if step is None else step
    if isinstance(step, complex) or np.iscomplexobj(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


def _grid(key, op_name, sparse):
    if isinstance(key, slice):
        return _slice_grid(key, op_name)
    axes = [_slice_grid(k, op_name) for k in key]
    if not axes:
        return arange(0) if not sparse else []
    dt = result_type(*axes)
    axes = [as_dtype(a, dt) for a in axes]
    grids = meshgrid(*axes, indexing="ij", sparse=sparse)
    return list(grids) if sparse else stack(grids, 0)


class _Mgrid:
    """A dense multi-dimensional mesh grid: ``mgrid[0:3, 0:2]`` has shape (2, 3, 2);
    an imaginary step ``5j`` asks for 5 points including the end (``numpy.mgrid``).

    >>> import zerax.numpy as znp
    >>> znp.mgrid[0:2, 0:3]
    Array([[[0, 0, 0],
            [1, 1, 1]],
    <BLANKLINE>
           [[0, 1, 2],
            [0, 1, 2]]], dtype=int64)
    >>> znp.mgrid[0:1:3j]
    Array([0. , 0.5, 1. ], dtype=float64)
    """

    def __getitem__(self, key):
        return _grid(key, "mgrid", sparse=False)


class _Ogrid:
    """An open mesh grid: a list of arrays that broadcast against each other
    (``numpy.ogrid``; a list, as JAX returns).

    >>> import zerax.numpy as znp
    >>> [a.shape for a in znp.ogrid[0:2, 0:3]]
    [(2, 1), (1, 3)]
    """

    def __getitem__(self, key):
        return _grid(key, "ogrid", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenate slices (aranges), scalars and arrays along an axis, with NumPy's
    string directives (``'r'``, ``'c'``, ``'axis,ndmin,trans1d'``)."""

    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError:
                    raise errors.ZeraxValueError(
                        f"zerax.numpy.{self.op_name}: could not understand directive "
                        f"{directive!r}") from None
        axis, ndmin, trans1d, matrix = params
        objs, kinds = [], []
        for item in items:
            if isinstance(item, str):
                raise errors.ZeraxValueError(
                    f"zerax.numpy.{self.op_name}: a string directive must come first")
            if isinstance(item, slice):
                objs.append(_slice_grid(item, self.op_name))
                kinds.append("slice")
            else:
                objs.append(check_arg(item, self.op_name))
                kinds.append("scalar" if type(item) in (bool, int, float, complex)
                             else "array")
        if not objs:
            return array([])
        dt = result_type(*objs)      # Python scalars stay weak, as in NumPy
        out = []
        for obj, kind in zip(objs, kinds):
            a = as_dtype(obj, dt)
            if not isinstance(a, (Array, Tracer)):
                a = Array._wrap(np.asarray(a))
            item_ndim = a.ndim
            if a.ndim < ndmin:
                a = _np_reshape(a, (1,) * (ndmin - a.ndim) + tuple(a.shape))
            if trans1d != -1 and kind == "slice" and ndmin > 1:      # NumPy's rules
                a = swapaxes(a, -1, trans1d)
            elif trans1d != -1 and kind == "array" and item_ndim < ndmin:
                k2, k1 = ndmin - item_ndim, trans1d
                if k1 < 0:
                    k1 += k2 + 1
                order = list(range(ndmin))
                a = transpose(a, tuple(order[:k1] + order[k2:] + order[k1:k2]))
            out.append(a)
        res = concatenate(out, axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0


class _RClass(_AxisConcat):
    """Concatenate slices, scalars and arrays along the first axis (``numpy.r_``).

    >>> import zerax.numpy as znp
    >>> znp.r_[0:3, 7, znp.array([8, 9])]
    Array([0, 1, 2, 7, 8, 9], dtype=int64)
    >>> znp.r_["0,2", [1, 2], [3, 4]]
    Array([[1, 2],
           [3, 4]], dtype=int64)
    """


class _CClass(_AxisConcat):
    """Concatenate along the last axis, 1-d inputs becoming columns (``numpy.c_``).

    >>> import zerax.numpy as znp
    >>> znp.c_[[1, 2], [3, 4]]
    Array([[1, 3],
           [2, 4]], dtype=int64)
    """

    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


r_ = _RClass()
c_ = _CClass()
s_ = np.s_
index_exp = np.index_exp
