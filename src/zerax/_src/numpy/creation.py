"""NumPy's array creation on zerax values: array/asarray, zeros/ones/full/empty (and
their ``_like`` forms), ranges (arange, linspace, logspace, geomspace), eye/identity/tri,
triangles and diagonals (tril, triu, diag, diagflat), meshgrid, indices, astype, copy.

Constant creation (zeros, eye, arange, ...) returns concrete Arrays, which a trace
records as constants.  Functions of array arguments (array of a list holding traced
values, full with a traced fill value, linspace between traced end points, tril,
diag, meshgrid, ...) are composed from primitives, so they trace and differentiate.
Default dtypes are NumPy 2's, float64 for floats and int64 for integers, or float32 and
int32 in JAX's 32-bit mode (``jax_enable_x64`` off, ``base/dtypes.py``).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from ..ops import elementwise as ew
from ..ops import shape as sh
from .ufuncs import divide, log10, multiply, power, sign
from ._util import (_has_tracer, _wrap_np, array_of_list, as_dtype, check_arg, ensure_array, normalize_axis, result_type)
from .shape_ops import (_canon_shape, _check_dtype, _concrete, _concrete_int, _slice_axis, broadcast_arrays, broadcast_to, diagonal, moveaxis, ravel)
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "arange", "array", "asarray", "astype", "copy", "diag", "diagflat", "empty", "empty_like",
    "eye", "full", "full_like", "geomspace", "identity", "indices", "linspace", "logspace",
    "meshgrid", "ones", "ones_like", "tri", "tril", "triu", "zeros", "zeros_like",
]


def _dtype_of(x):
    """The dtype ``asarray(x)`` has (Python scalars: the mode's default dtypes)."""
    if type(x) in (bool, int, float, complex):
        return dtypes.python_scalar_dtype(x)
    return np.dtype(x.dtype)

# --------------------------------------------------------------------------- array


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """An array from ``object``: an array, a Python number, or nested lists (which may
    hold zerax arrays and traced values).

    >>> import zerax.numpy as znp
    >>> znp.array([[1, 2], [3, 4]])
    Array([[1, 2],
           [3, 4]], dtype=int64)
    >>> znp.array([1, 2.5], dtype=znp.float32)
    Array([1. , 2.5], dtype=float32)
    """
    dtype = _check_dtype(dtype, "array")
    if isinstance(object, range):       # as NumPy and JAX take it: a sequence of ints
        object = list(object)
    if isinstance(object, (Array, Tracer)):
        out = object if dtype is None else as_dtype(object, dtype)
    elif isinstance(object, (list, tuple)) and _has_tracer(object):
        out = array_of_list(object, dtype)
    else:
        if isinstance(object, (np.ndarray, np.generic)) and dtype_kind(object.dtype) not in "biufc":
            raise errors.ZeraxTypeError(
                f"zerax.numpy.array: dtype {object.dtype} is not supported (only bool, integer, "
                "float and complex)")
        if not isinstance(object, (list, tuple, np.ndarray, np.generic, bool, int, float,
                                   complex)):
            raise errors.ZeraxTypeError(
                f"zerax.numpy.array: cannot make an array from a {type(object).__name__} "
                f"({object!r:.60}); pass an array, a Python number or nested lists of them")
        if dtype is None and type(object) in (bool, int, float, complex):
            out = ensure_array(object, "array")   # the mode's dtype (int32: range-checked)
        else:
            out = _wrap_np("array", np.array, object, dtype=dtype)
    ndmin = _concrete_int(ndmin, "array", "ndmin")
    if ndmin > out.ndim:
        out = sh.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``a`` as a zerax array (no copy: zerax arrays are immutable)."""
    return array(a, dtype=dtype)


def copy(a, order="K", subok=False):
    """An array with the values of ``a`` (zerax arrays are immutable, so no copy is made)."""
    return array(a)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype``.

    >>> import zerax.numpy as znp
    >>> znp.astype(znp.array([1.7, -1.7]), znp.int32)
    Array([ 1, -1], dtype=int32)
    """
    x = ensure_array(x, "astype")
    return as_dtype(x, _check_dtype(dtype, "astype"))

# --------------------------------------------------------------------------- filled arrays


def _float_default(dtype, fname):
    dt = _check_dtype(dtype, fname)
    return dtypes.default_float() if dt is None else dt


def zeros(shape, dtype=None, order="C", *, device=None, like=None):
    """An array of zeros (float64 by default; float32 with x64 off).

    >>> import zerax.numpy as znp
    >>> znp.zeros((2, 2))
    Array([[0., 0.],
           [0., 0.]], dtype=float64)
    """
    return Array._wrap(np.zeros(_canon_shape(shape, "zeros"), _float_default(dtype, "zeros")))


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """An array of ones (float64 by default; float32 with x64 off)."""
    return Array._wrap(np.ones(_canon_shape(shape, "ones"), _float_default(dtype, "ones")))


def empty(shape, dtype=None, order="C", *, device=None, like=None):
    """Like `zeros` (zerax never hands out uninitialised memory)."""
    return Array._wrap(np.zeros(_canon_shape(shape, "empty"), _float_default(dtype, "empty")))


def _fill(shape, fill_value, dtype, fname):
    fill = check_arg(fill_value, fname, 1)
    if isinstance(fill, Tracer):
        dtype = np.dtype(fill.dtype) if dtype is None else dtype
        return broadcast_to(as_dtype(fill, dtype), shape)
    return _wrap_np(fname, np.full, shape, np.asarray(fill), dtype=dtype)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """An array of ``shape`` filled with ``fill_value`` (its dtype by default; it may
    be traced and may be an array broadcastable to ``shape``).

    >>> import zerax.numpy as znp
    >>> znp.full(3, 7)
    Array([7, 7, 7], dtype=int64)
    """
    return _fill(_canon_shape(shape, "full"), fill_value, _check_dtype(dtype, "full"), "full")


def _like(a, dtype, shape, fname):
    a = check_arg(a, fname)
    dt = _check_dtype(dtype, fname)
    dt = _dtype_of(a) if dt is None else dt
    shp = tuple(np.shape(a)) if type(a) in (bool, int, float, complex) else tuple(a.shape)
    return dt, shp if shape is None else _canon_shape(shape, fname)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros with the shape and dtype of ``a``."""
    dt, shp = _like(a, dtype, shape, "zeros_like")
    return Array._wrap(np.zeros(shp, dt))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones with the shape and dtype of ``a``."""
    dt, shp = _like(a, dtype, shape, "ones_like")
    return Array._wrap(np.ones(shp, dt))


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Like `zeros_like`."""
    dt, shp = _like(prototype, dtype, shape, "empty_like")
    return Array._wrap(np.zeros(shp, dt))


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``fill_value`` (cast to ``a``'s dtype) in an array shaped like ``a``."""
    dt, shp = _like(a, dtype, shape, "full_like")
    return _fill(shp, fill_value, dt, "full_like")

# --------------------------------------------------------------------------- ranges


def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """Evenly spaced values in ``[start, stop)`` (static bounds).  Without ``dtype`` the
    result's dtype is the promotion of the bounds, Python scalars being weak, as in JAX:
    ``arange(float32(1), 5)`` is float32.

    >>> import zerax.numpy as znp
    >>> znp.arange(5)
    Array([0, 1, 2, 3, 4], dtype=int64)
    >>> znp.arange(0.0, 1.0, 0.25)
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float64)
    """
    def static(v):
        v = _concrete(v, "arange", "bound")
        return v[()] if isinstance(v, np.ndarray) else v

    args = [static(start)]
    if stop is not None:
        args.append(static(stop))
    if step is not None:
        if stop is None:
            args = [0, args[0]]
        args.append(static(step))
    dtype = _check_dtype(dtype, "arange")
    if dtype is None:
        for a in args:
            if not isinstance(a, (bool, int, float, complex, np.generic)):
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.arange: bounds must be scalars, got {a!r:.60}")
        dtype = dtypes.result_type(*args)
    if dtype.kind == "b":
        raise errors.ZeraxTypeError("zerax.numpy.arange: a range of booleans is not "
                                    "supported; give integer bounds or an integer dtype")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        for a in args:
            if type(a) is int and not info.min <= a <= info.max:
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.arange: Python integer {a} is out of bounds for {dtype}")
    return _wrap_np("arange", np.arange, *args, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (which may be traced
    arrays; the samples are stacked along ``axis``).

    >>> import zerax.numpy as znp
    >>> znp.linspace(0.0, 1.0, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float64)
    """
    num = _concrete_int(num, "linspace", "num")
    if num < 0:
        raise errors.ShapeError(f"zerax.numpy.linspace: number of samples, {num}, must be "
                                "non-negative")
    dtype = _check_dtype(dtype, "linspace")
    start = check_arg(start, "linspace", 0)
    stop = check_arg(stop, "linspace", 1)
    dt = result_type(start, stop)
    if dtype_kind(dt) not in "fc":
        dt = dtypes.result_type(dt, 0.0)
    if dt.kind == "c":
        raise errors.NotSupportedError("zerax.numpy.linspace: complex end points are not "
                                       "supported yet")
    out_dtype = dt if dtype is None else dtype
    div = num - 1 if endpoint else num
    start, stop = as_dtype(start, dt), as_dtype(stop, dt)
    start, stop = broadcast_arrays(start, stop)
    bshape = tuple(start.shape)
    delta = ew.sub(stop, start)
    y = sh.iota(dt, (num,) + bshape, 0)
    dims = tuple(range(1, len(bshape) + 1))
    if div > 0:
        step = ew.div(delta, np.asarray(div, dt))
        if not isinstance(step, Tracer) and np.any(np.asarray(step) == 0):
            y = ew.mul(ew.div(y, np.asarray(div, dt)), sh.broadcast_in_dim(delta, y.shape, dims))
        else:
            y = ew.mul(y, sh.broadcast_in_dim(step, y.shape, dims))
    else:
        step = Array._wrap(np.full(bshape, np.nan, dt))
        y = ew.mul(y, sh.broadcast_in_dim(delta, y.shape, dims))
    y = ew.add(y, sh.broadcast_in_dim(start, y.shape, dims))
    if endpoint and num > 1:
        y = sh.concatenate([_slice_axis(y, 0, 0, num - 1),
                            sh.reshape(stop, (1,) + bshape)], 0)
    axis = normalize_axis(axis, len(bshape) + 1, "linspace")
    if axis:
        y = moveaxis(y, 0, axis)
    if out_dtype.kind in "iu":
        y = ew.floor(y)
    y = as_dtype(y, out_dtype)
    if retstep:
        return y, step
    return y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``.

    >>> import zerax.numpy as znp
    >>> znp.logspace(0.0, 2.0, 3)
    Array([  1.,  10., 100.], dtype=float64)
    """
    dtype = _check_dtype(dtype, "logspace")
    base = check_arg(base, "logspace", 4)
    if isinstance(base, (bool, int, float, complex)):
        pass  # a Python scalar stays weak, as in NumPy
    elif base.ndim:
        start, stop = check_arg(start, "logspace", 0), check_arg(stop, "logspace", 1)
        nd = max(np.ndim(start) if isinstance(start, (int, float, complex)) else start.ndim,
                 np.ndim(stop) if isinstance(stop, (int, float, complex)) else stop.ndim,
                 base.ndim)
        start, stop, base = (array(v, ndmin=nd) for v in (start, stop, base))
        base = sh.reshape(base, _expanded_shape(base.shape, axis, "logspace"))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = power(base, y)
    return out if dtype is None else as_dtype(out, dtype)


def _expanded_shape(shape, axis, fname):
    nd = len(shape) + 1
    axis = normalize_axis(axis, nd, fname)
    s = list(shape)
    s.insert(axis, 1)
    return s


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` samples in a geometric progression from ``start`` to ``stop``.

    >>> import zerax.numpy as znp
    >>> znp.geomspace(1.0, 1000.0, 4)
    Array([   1.,   10.,  100., 1000.], dtype=float64)
    """
    num = _concrete_int(num, "geomspace", "num")
    start = ensure_array(start, "geomspace")
    stop = ensure_array(stop, "geomspace")
    for v in (start, stop):
        if not isinstance(v, Tracer) and np.any(np.asarray(v) == 0):
            raise errors.ShapeError("zerax.numpy.geomspace: a geometric sequence cannot "
                                    "include zero")
    dtype = _check_dtype(dtype, "geomspace")
    dt = dtypes.result_type(np.dtype(start.dtype), np.dtype(stop.dtype), float(num),
                            dtypes.default_float() if dtype is None else dtype)
    if dt.kind == "c":
        raise errors.NotSupportedError("zerax.numpy.geomspace: complex values are not "
                                       "supported yet")
    out_dtype = dt if dtype is None else dtype
    start, stop = as_dtype(start, dt), as_dtype(stop, dt)
    out_sign = sign(start)
    start = divide(start, out_sign)
    stop = divide(stop, out_sign)
    result = logspace(log10(start), log10(stop), num=num, endpoint=endpoint, base=10.0,
                      dtype=dt)
    if num > 0:
        shp = (1,) + tuple(result.shape[1:])
        pieces = [sh.reshape(broadcast_to(start, shp[1:]), shp)]
        if num > 1:
            pieces.append(_slice_axis(result, 0, 1, num - 1 if endpoint else num))
            if endpoint:
                pieces.append(sh.reshape(broadcast_to(stop, shp[1:]), shp))
        result = sh.concatenate(pieces, 0)
    result = multiply(result, out_sign)
    axis = normalize_axis(axis, result.ndim, "geomspace")
    if axis:
        result = moveaxis(result, 0, axis)
    return as_dtype(result, out_dtype)

# --------------------------------------------------------------------------- matrices


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere.

    >>> import zerax.numpy as znp
    >>> znp.eye(2, dtype=int)
    Array([[1, 0],
           [0, 1]], dtype=int64)
    """
    N = _concrete_int(N, "eye", "N")
    M = None if M is None else _concrete_int(M, "eye", "M")
    return _wrap_np("eye", np.eye, N, M, _concrete_int(k, "eye", "k"),
                    dtype=_float_default(dtype, "eye"))


def identity(n, dtype=None, *, like=None):
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below diagonal ``k``, zeros elsewhere."""
    N = _concrete_int(N, "tri", "N")
    M = None if M is None else _concrete_int(M, "tri", "M")
    return _wrap_np("tri", np.tri, N, M, _concrete_int(k, "tri", "k"),
                    dtype=_float_default(dtype, "tri"))


def _triangle(m, k, fname, lower):
    m = ensure_array(m, fname)
    k = _concrete_int(k, fname, "k")
    if m.ndim == 0:
        raise errors.ShapeError(f"zerax.numpy.{fname}: input must be at least 1-d")
    if m.ndim == 1:
        n = m.shape[0]
        m = sh.broadcast_in_dim(m, (n, n), (1,))
    rows_n, cols_n = m.shape[-2], m.shape[-1]
    rows = sh.iota(np.int64, (rows_n, cols_n), 0)
    cols = sh.iota(np.int64, (rows_n, cols_n), 1)
    if k:
        rows = ew.add(rows, np.asarray(k, np.int64))
    keep = ew.ge(rows, cols) if lower else ew.le(rows, cols)
    keep = sh.broadcast_in_dim(keep, m.shape, (m.ndim - 2, m.ndim - 1))
    return ew.select_n(keep, np.zeros((), m.dtype), m)


def tril(m, k=0):
    """``m`` with the elements above diagonal ``k`` zeroed (on the last two axes).

    >>> import zerax.numpy as znp
    >>> znp.tril(znp.ones((3, 3)))
    Array([[1., 0., 0.],
           [1., 1., 0.],
           [1., 1., 1.]], dtype=float64)
    """
    return _triangle(m, k, "tril", True)


def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` zeroed (on the last two axes)."""
    return _triangle(m, k, "triu", False)


def diag(v, k=0):
    """A 2-D array with 1-D ``v`` on diagonal ``k``, or the diagonal ``k`` of a 2-D ``v``.

    >>> import zerax.numpy as znp
    >>> znp.diag(znp.array([1, 2]))
    Array([[1, 0],
           [0, 2]], dtype=int64)
    """
    v = ensure_array(v, "diag")
    k = _concrete_int(k, "diag", "k")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise errors.ShapeError(f"zerax.numpy.diag: input must be 1-d or 2-d, got rank {v.ndim}")
    n = v.shape[0] + abs(k)
    full_v = sh.pad(v, np.zeros((), v.dtype), ((0, abs(k), 0),))
    rows = sh.iota(np.int64, (n, n), 0)
    cols = sh.iota(np.int64, (n, n), 1)
    if k >= 0:
        grid = sh.broadcast_in_dim(full_v, (n, n), (0,))
        on = ew.eq(ew.sub(cols, rows), np.asarray(k, np.int64))
    else:
        grid = sh.broadcast_in_dim(full_v, (n, n), (1,))
        on = ew.eq(ew.sub(rows, cols), np.asarray(-k, np.int64))
    return ew.select_n(on, np.zeros((), v.dtype), grid)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on diagonal ``k``."""
    return diag(ravel(ensure_array(v, "diagflat")), k)

# --------------------------------------------------------------------------- grids


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (a tuple, as NumPy 2).

    >>> import zerax.numpy as znp
    >>> X, Y = znp.meshgrid(znp.arange(3), znp.arange(2))
    >>> X.shape, Y.shape
    ((2, 3), (2, 3))
    """
    if indexing not in ("xy", "ij"):
        raise errors.ShapeError("zerax.numpy.meshgrid: valid values for indexing are 'xy' "
                                "and 'ij'")
    xs = [ravel(ensure_array(x, "meshgrid")) for x in xi]
    nd = len(xs)
    outs = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = x.shape[0]
        outs.append(s)
    if indexing == "xy" and nd > 1:
        outs[0][0], outs[0][1] = outs[0][1], outs[0][0]
        outs[1][0], outs[1][1] = outs[1][1], outs[1][0]
    res = [sh.reshape(x, s) for x, s in zip(xs, outs)]
    if not sparse:
        res = list(broadcast_arrays(*res))
    return tuple(res)


def indices(dimensions, dtype=int, sparse=False):
    """Arrays of the indices of a grid of shape ``dimensions`` (static)."""
    dims = _canon_shape(dimensions, "indices")
    dt = _check_dtype(dtype, "indices")
    if sparse:
        return tuple(Array._wrap(np.array(g)) for g in np.indices(dims, dt, sparse=True))
    return Array._wrap(np.indices(dims, dt))

