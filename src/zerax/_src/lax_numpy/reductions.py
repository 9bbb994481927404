"""NumPy's reductions and statistics on zerax values: sums, extremes, moments,
cumulative reductions, their NaN-ignoring variants, order statistics (median,
quantiles), differences and integration.

Everything here is a composition of primitives from ``ops/`` (no rules of its own),
so each function is traceable and, where NumPy's result is a float, differentiable.
Result dtypes are NumPy 2's, asked of NumPy on tiny samples (``numpy_result_dtype``).
Shapes, axes and dtypes are static Python values; ``where``/``initial`` may be traced.
"""

from __future__ import annotations

import builtins as _b
import functools
import math

import numpy as np

from ... import errors
from ..array import Array
from ..core import Tracer, concrete_value
from ..ops import elementwise as ew
from ..ops import reduce as rd
from ..ops.shape import broadcast_in_dim, concatenate, reshape, slice_p_bind, transpose
from . import ufuncs as _uf
from ._util import (
    as_dtype,
    broadcast_to_shape,
    ensure_array,
    normalize_axes,
    normalize_axis,
    numpy_result_dtype,
    result_type,
)

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "average", "corrcoef", "count_nonzero",
    "cov", "cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "diff", "ediff1d", "max",
    "mean", "median", "min", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax",
    "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "percentile", "prod", "ptp",
    "quantile", "std", "sum", "trapezoid", "var"
]

# --------------------------------------------------------------------------- helpers


def _arr(a, fname):
    return ensure_array(a, fname)


def _axes(axis, ndim, fname, scalar_ok=True):
    """``normalize_axes`` with a clear error for axes that are not ints. On a 0-d array
    NumPy's ufunc reductions take ``axis=0`` or ``-1`` (``scalar_ok``) as no axis."""
    if axis is not None and not isinstance(axis, (int, np.integer, tuple, list)):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: axis must be None, an integer or a tuple of integers, "
            f"got {axis!r}")
    if ndim == 0 and axis is not None and len(np.atleast_1d(axis)):
        if scalar_ok and isinstance(axis, (int, np.integer)) and axis in (0, -1):
            return ()
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: axis {axis} is out of bounds for an array of rank 0")
    return normalize_axes(axis, ndim, fname)


def _no_out(out, fname):
    if out is not None:
        raise errors.NotSupportedError(
            f"zerax.numpy.{fname}: out= is not supported (zerax arrays are immutable); "
            "use the returned array instead.")


def _real_only(fname, x):
    if np.dtype(x.dtype).kind == "c":
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: complex inputs are not supported")


def _np_dtype(np_fn, fname, x, dtype=None):
    """The result dtype: ``dtype`` if given, else NumPy's for ``np_fn(x)``."""
    if dtype is not None:
        try:
            return np.dtype(dtype)
        except TypeError:
            raise errors.ZeraxTypeError(
                f"zerax.numpy.{fname}: dtype={dtype!r} is not a dtype") from None
    try:
        return numpy_result_dtype(np_fn, x)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname} is not defined for dtype {np.dtype(x.dtype).name} "
            "(NumPy refuses the same call).") from None


def _c(v, dtype):
    return np.array(v, dtype=dtype)


def _is_inexact(x):
    return np.dtype(x.dtype).kind in "fc"


def _ravel(x):
    return reshape(x, (x.size,))


def _size(shape, axes):
    return math.prod(shape[i] for i in axes)


def _keepdims(y, shape, axes, keepdims):
    if not keepdims or not axes:
        return y
    return reshape(y, [1 if i in axes else n for i, n in enumerate(shape)])


def _bcast_back(y, shape, axes):
    """A reduced value broadcast back to the operand's ``shape``."""
    return broadcast_in_dim(y, shape, [i for i in range(len(shape)) if i not in axes])


def _bcast_full(x, shape, fname, what):
    """``x`` broadcast to exactly ``shape`` (0-d values too)."""
    try:
        ok = tuple(np.broadcast_shapes(tuple(x.shape), shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: {what} of shape {tuple(x.shape)} cannot be broadcast to the "
            f"array's shape {tuple(shape)}")
    if tuple(x.shape) == tuple(shape):
        return x
    if x.ndim == 0:
        return broadcast_in_dim(x, shape, ())
    return broadcast_to_shape(x, tuple(shape))


def _mask(where, shape, fname):
    """``where`` as a bool array of ``shape``, or None for "everywhere"."""
    if where is True or where is None:
        return None
    w = ensure_array(where, fname)
    if w.dtype != np.bool_:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: where= must be a boolean array, got dtype {w.dtype}")
    return _bcast_full(w, tuple(shape), fname, "where=")


def _scalar(v, dtype, fname, what="initial"):
    """A 0-d operand of ``dtype`` (NumPy casts ``initial`` unsafely)."""
    if isinstance(v, (Array, Tracer)):
        if v.shape != ():
            raise errors.ShapeError(f"zerax.numpy.{fname}: {what} must be a scalar")
        return ew.convert_element_type(v, dtype)
    arr = np.asarray(v)
    if arr.shape != () or arr.dtype.kind not in "biufc":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: {what} must be a number, got {v!r:.60}")
    with np.errstate(all="ignore"):
        return arr.astype(dtype)


def _fill(x, mask, value):
    """``x`` where ``mask`` (None = everywhere), else ``value``."""
    if mask is None:
        return x
    return ew.select_n(mask, _c(value, x.dtype), x)


def _fill_nan(x, value):
    if np.dtype(x.dtype).kind not in "fc":
        return x
    return ew.select_n(ew.isnan(x), x, _c(value, x.dtype))


def _lowest(dtype, is_max):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf if is_max else np.inf
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if is_max else np.iinfo(dtype).max
    return not is_max


def _count(mask, shape, axes, dtype):
    """How many elements each reduction sees, as a value of ``dtype``."""
    if mask is None:
        return _c(_size(shape, axes), dtype)
    return rd.reduce_sum(ew.convert_element_type(mask, dtype), axes)


def _nonneg(n, dtype):
    return ew.maximum(n, _c(0, dtype))


def _slice_axis(x, axis, start=None, stop=None):
    """``x[..., start:stop, ...]`` along ``axis`` (Python slice semantics)."""
    lo, hi, _ = slice(start, stop).indices(x.shape[axis])
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = lo, _b.max(lo, hi)
    return slice_p_bind(x, starts, limits)


def _reduced_last(a, axes):
    """``a`` with the reduced ``axes`` moved last and merged into one axis."""
    keep = [i for i in range(a.ndim) if i not in axes]
    x = transpose(a, keep + list(axes))
    return reshape(x, [a.shape[i] for i in keep] + [_size(a.shape, axes)])


# --------------------------------------------------------------------------- sum / prod


def _sum_like(fname, np_fn, red, op, identity, a, axis, dtype, out, keepdims, initial, where,
              nan=False):
    a = _arr(a, fname)
    _no_out(out, fname)
    rdt = _np_dtype(np_fn, fname, a, dtype)
    axes = _axes(axis, a.ndim, fname)
    mask = _mask(where, a.shape, fname)
    x = _fill_nan(a, identity) if nan else a
    x = _fill(as_dtype(x, rdt), mask, identity)
    y = red(x, axes) if axes else x
    if initial is not None:
        y = op(y, _scalar(initial, rdt, fname))
    return _keepdims(y, a.shape, axes, keepdims)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum of array elements over the given axes (``numpy.sum``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.sum(np.array([[1, 2], [3, 4]], np.int32), axis=0)
    Array([4, 6], dtype=int64)
    """
    return _sum_like("sum", np.sum, rd.reduce_sum, ew.add, 0, a, axis, dtype, out, keepdims,
                     initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product of array elements over the given axes (``numpy.prod``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.prod(np.array([1.0, 2.0, 3.0]))
    Array(6., dtype=float64)
    """
    return _sum_like("prod", np.prod, rd.reduce_prod, ew.mul, 1, a, axis, dtype, out, keepdims,
                     initial, where)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum treating NaNs as zero (``numpy.nansum``)."""
    return _sum_like("nansum", np.nansum, rd.reduce_sum, ew.add, 0, a, axis, dtype, out,
                     keepdims, initial, where, nan=True)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product treating NaNs as one (``numpy.nanprod``)."""
    return _sum_like("nanprod", np.nanprod, rd.reduce_prod, ew.mul, 1, a, axis, dtype, out,
                     keepdims, initial, where, nan=True)


# --------------------------------------------------------------------------- mean / var / std


def _compute_dtype(rdt):
    """The dtype moments are computed in (NumPy: float16 in float32, ints in float64)."""
    if rdt == np.float16:
        return np.dtype(np.float32)
    return rdt if rdt.kind in "fc" else np.dtype(np.float64)


def _mean(fname, np_fn, a, axis, dtype, out, keepdims, where, nan):
    a = _arr(a, fname)
    _no_out(out, fname)
    rdt = _np_dtype(np_fn, fname, a, dtype)
    mask = _mask(where, a.shape, fname)
    axes = _axes(axis, a.ndim, fname, scalar_ok=(nan and _is_inexact(a)) or mask is not None)
    cdt = _compute_dtype(rdt)
    if nan and _is_inexact(a):
        valid = ew.bitwise_not(ew.isnan(a))
        mask = valid if mask is None else ew.bitwise_and(mask, valid)
        a = _fill_nan(a, 0)
    x = _fill(as_dtype(a, cdt), mask, 0)
    s = rd.reduce_sum(x, axes) if axes else x
    y = as_dtype(ew.div(s, _count(mask, a.shape, axes, cdt)), rdt)
    return _keepdims(y, a.shape, axes, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over the given axes (``numpy.mean``); integers give float64.

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.mean(np.array([1, 2, 3, 4]))
    Array(2.5, dtype=float64)
    """
    return _mean("mean", np.mean, a, axis, dtype, out, keepdims, where, False)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean ignoring NaNs (``numpy.nanmean``); an all-NaN slice gives NaN."""
    return _mean("nanmean", np.nanmean, a, axis, dtype, out, keepdims, where, True)


def _ddof(fname, ddof, correction):
    if correction is not None:
        if ddof != 0:
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _var(fname, np_fn, a, axis, dtype, out, ddof, keepdims, where, mean, correction, nan):
    a = _arr(a, fname)
    _no_out(out, fname)
    _real_only(fname, a)
    ddof = _ddof(fname, ddof, correction)
    rdt = _np_dtype(np_fn, fname, a, dtype)
    if nan and _is_inexact(a) and rdt.kind not in "fc":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: if a is inexact, dtype must be too")
    mask = _mask(where, a.shape, fname)
    axes = _axes(axis, a.ndim, fname, scalar_ok=(nan and _is_inexact(a)) or mask is not None)
    cdt = rdt if rdt.kind == "f" else np.dtype(np.float64)
    inexact = _is_inexact(a)
    if nan and inexact:
        valid = ew.bitwise_not(ew.isnan(a))
        mask = valid if mask is None else ew.bitwise_and(mask, valid)
        a = _fill_nan(a, 0)
    x = as_dtype(a, cdt)
    n = _count(mask, a.shape, axes, cdt)
    if mean is None:
        s = _fill(x, mask, 0)
        s = rd.reduce_sum(s, axes) if axes else s
        mu = _bcast_back(ew.div(s, n), a.shape, axes)
    else:
        mu = _bcast_full(as_dtype(ensure_array(mean, fname), cdt), tuple(a.shape), fname, "mean=")
    # Deviations as NumPy forms them: ``a - mean`` promoted (nanvar stores them in a.dtype).
    pdt = np.promote_types(a.dtype, cdt)
    d = ew.sub(as_dtype(a, pdt), as_dtype(mu, pdt))
    if nan and _is_inexact(a):
        d = as_dtype(d, a.dtype)
    d = _fill(d, mask, 0)
    ss = as_dtype(ew.mul(d, d), cdt)
    ss = rd.reduce_sum(ss, axes) if axes else ss
    dof = ew.sub(n, _c(ddof, cdt))
    y = ew.div(ss, _nonneg(dof, cdt))
    if nan and inexact:  # NumPy's nanvar gives NaN (not inf) where the dof are <= 0
        y = ew.select_n(ew.le(dof, _c(0, cdt)), y, _c(np.nan, cdt))
    return as_dtype(_keepdims(y, a.shape, axes, keepdims), rdt)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Variance over the given axes with ``ddof`` degrees of freedom removed (``numpy.var``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.var(np.array([1.0, 2.0, 3.0, 4.0]), ddof=1)
    Array(1.66666667, dtype=float64)
    """
    return _var("var", np.var, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                False)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Standard deviation: the square root of `var` (``numpy.std``)."""
    v = _var("std", np.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction, False)
    return ew.sqrt(v)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
           correction=None):
    """Variance ignoring NaNs (``numpy.nanvar``)."""
    return _var("nanvar", np.nanvar, a, axis, dtype, out, ddof, keepdims, where, mean,
                correction, True)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
           correction=None):
    """Standard deviation ignoring NaNs (``numpy.nanstd``)."""
    return ew.sqrt(_var("nanstd", np.nanstd, a, axis, dtype, out, ddof, keepdims, where, mean,
                        correction, True))


# --------------------------------------------------------------------------- max / min


def _extreme(fname, is_max, a, axis, out, keepdims, initial, where, nan=False):
    a = _arr(a, fname)
    _no_out(out, fname)
    _real_only(fname, a)
    axes = _axes(axis, a.ndim, fname)
    mask = _mask(where, a.shape, fname)
    name = "maximum" if is_max else "minimum"
    if mask is not None and initial is None:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: reduction operation '{name}' does not have an identity, so "
            "to use a where mask one has to specify 'initial'")
    if initial is None and _b.any(a.shape[i] == 0 for i in axes):
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: zero-size array to reduction operation {name} which has no "
            f"identity (shape {tuple(a.shape)}, axis {axis}); pass initial= to give empty "
            "slices a value")
    red, op = (rd.reduce_max, ew.maximum) if is_max else (rd.reduce_min, ew.minimum)
    x, isn = a, None
    if nan and _is_inexact(a):
        isn = ew.isnan(a)
        x = ew.select_n(isn, a, _c(_lowest(a.dtype, is_max), a.dtype))
    x = _fill(x, mask, _lowest(a.dtype, is_max))
    y = red(x, axes) if axes else x
    if initial is not None:
        y = op(y, _scalar(initial, a.dtype, fname))
    elif isn is not None:  # an all-NaN slice gives NaN
        all_nan = rd.reduce_min(isn, axes) if axes else isn
        y = ew.select_n(all_nan, y, _c(np.nan, a.dtype))
    return _keepdims(y, a.shape, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Maximum over the given axes (``numpy.max``); NaNs propagate.

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.max(np.array([[1, 5], [3, 2]]), axis=1)
    Array([5, 3], dtype=int64)
    """
    return _extreme("max", True, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Minimum over the given axes (``numpy.min``); NaNs propagate."""
    return _extreme("min", False, a, axis, out, keepdims, initial, where)


amax = max
amin = min


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Maximum ignoring NaNs (``numpy.nanmax``); an all-NaN slice gives NaN."""
    return _extreme("nanmax", True, a, axis, out, keepdims, initial, where, nan=True)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Minimum ignoring NaNs (``numpy.nanmin``); an all-NaN slice gives NaN."""
    return _extreme("nanmin", False, a, axis, out, keepdims, initial, where, nan=True)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values, ``max - min``, over the given axes (``numpy.ptp``)."""
    a = _arr(a, "ptp")
    if a.dtype == np.bool_:
        raise errors.ZeraxTypeError(
            "zerax.numpy.ptp: boolean subtract is not supported (NumPy refuses it too); "
            "convert the array to an integer dtype first")
    hi = _extreme("ptp", True, a, axis, out, keepdims, None, True)
    lo = _extreme("ptp", False, a, axis, out, keepdims, None, True)
    return _uf.subtract(hi, lo)


# --------------------------------------------------------------------------- argmax / argmin


def _argextreme(fname, is_max, a, axis, out, keepdims, nan=False):
    a = _arr(a, fname)
    _no_out(out, fname)
    _real_only(fname, a)
    if axis is None:
        x, ax = _ravel(a), 0
    else:
        ax = normalize_axis(axis, a.ndim or 1, fname)
        x = a if a.ndim else reshape(a, (1,))
    if x.shape[ax] == 0:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: attempt to get {fname} of an empty sequence "
            f"(shape {tuple(a.shape)}, axis {axis})")
    prim = rd.argmax if is_max else rd.argmin
    if nan and _is_inexact(x):
        isn = ew.isnan(x)
        all_nan = rd.reduce_min(isn, (ax,))
        if isinstance(x, Array) and bool(np.any(concrete_value(all_nan))):
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: All-NaN slice encountered (under a transform such a "
                "slice gives -1 instead)")
        clean = ew.select_n(isn, x, _c(_lowest(x.dtype, is_max), x.dtype))
        best = (rd.reduce_max if is_max else rd.reduce_min)(clean, (ax,))
        hit = ew.eq(x, _bcast_back(best, x.shape, (ax,)))  # False at NaNs
        idx = ew.select_n(all_nan, rd.argmax(hit, ax, np.int64), _c(-1, np.int64))
    else:
        idx = prim(x, ax, np.int64)
    if keepdims:
        shape = [1] * a.ndim if axis is None else [1 if i == ax else n
                                                   for i, n in enumerate(a.shape)]
        idx = reshape(idx, shape)
    return idx


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the (first) maximum along ``axis``, of the flattened array if None (int64).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.argmax(np.array([[1, 5], [7, 2]]), axis=1)
    Array([1, 0], dtype=int64)
    """
    return _argextreme("argmax", True, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the (first) minimum along ``axis``, of the flattened array if None (int64)."""
    return _argextreme("argmin", False, a, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """`argmax` ignoring NaNs. An all-NaN slice raises on concrete arrays (as NumPy does)
    and gives -1 under a transform (as JAX does)."""
    return _argextreme("nanargmax", True, a, axis, out, keepdims, nan=True)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """`argmin` ignoring NaNs; all-NaN slices as in `nanargmax`."""
    return _argextreme("nanargmin", False, a, axis, out, keepdims, nan=True)


# --------------------------------------------------------------------------- any / all / count


def _logical(fname, is_any, a, axis, out, keepdims, where):
    a = _arr(a, fname)
    _no_out(out, fname)
    axes = _axes(axis, a.ndim, fname)
    mask = _mask(where, a.shape, fname)
    x = _fill(ew.convert_element_type(a, np.bool_), mask, not is_any)
    y = ((rd.reduce_max if is_any else rd.reduce_min)(x, axes)) if axes else x
    return _keepdims(y, a.shape, axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """Whether any element along the given axes is true (``numpy.any``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.any(np.array([[0, 0], [0, 3]]), axis=1)
    Array([False,  True], dtype=bool)
    """
    return _logical("any", True, a, axis, out, keepdims, where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """Whether all elements along the given axes are true (``numpy.all``)."""
    return _logical("all", False, a, axis, out, keepdims, where)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero elements along the given axes, as int64 (``numpy.count_nonzero``)."""
    a = _arr(a, "count_nonzero")
    axes = _axes(axis, a.ndim, "count_nonzero")
    x = ew.convert_element_type(ew.convert_element_type(a, np.bool_), np.int64)
    y = rd.reduce_sum(x, axes) if axes else x
    return _keepdims(y, a.shape, axes, keepdims)


# --------------------------------------------------------------------------- cumulative


def _cum_axis(fname, a, axis):
    if axis is None or a.ndim == 0:
        if axis is not None:
            normalize_axis(axis, 1, fname)
        return _ravel(a), 0
    return a, normalize_axis(axis, a.ndim, fname)


def _cumulative(fname, np_fn, prim, identity, a, axis, dtype, out, nan=False):
    a = _arr(a, fname)
    _no_out(out, fname)
    rdt = _np_dtype(np_fn, fname, a, dtype)
    x, ax = _cum_axis(fname, _fill_nan(a, identity) if nan else a, axis)
    return prim(as_dtype(x, rdt), ax)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array if None) (``numpy.cumsum``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.cumsum(np.array([1, 2, 3]))
    Array([1, 3, 6], dtype=int64)
    """
    return _cumulative("cumsum", np.cumsum, rd.cumsum, 0, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (of the flattened array if None) (``numpy.cumprod``)."""
    return _cumulative("cumprod", np.cumprod, rd.cumprod, 1, a, axis, dtype, out)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaNs as zero (``numpy.nancumsum``)."""
    return _cumulative("nancumsum", np.nancumsum, rd.cumsum, 0, a, axis, dtype, out, nan=True)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaNs as one (``numpy.nancumprod``)."""
    return _cumulative("nancumprod", np.nancumprod, rd.cumprod, 1, a, axis, dtype, out,
                       nan=True)


def _cumulative2(fname, np_fn, prim, identity, x, axis, dtype, out, include_initial):
    x = _arr(x, fname)
    if axis is None and x.ndim > 1:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: for arrays which have more than one dimension the axis "
            "argument is required")
    y = _cumulative(fname, np_fn, prim, identity, x, axis, dtype, out)
    if not include_initial:
        return y
    ax = 0 if axis is None or x.ndim == 0 else normalize_axis(axis, x.ndim, fname)
    shape = list(y.shape)
    shape[ax] = 1
    return concatenate([np.full(shape, identity, y.dtype), y], ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sum (``numpy.cumulative_sum``, the array-API name); ``include_initial``
    prepends the zero."""
    return _cumulative2("cumulative_sum", np.cumulative_sum, rd.cumsum, 0, x, axis, dtype, out,
                        include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative product (``numpy.cumulative_prod``); ``include_initial`` prepends the one."""
    return _cumulative2("cumulative_prod", np.cumulative_prod, rd.cumprod, 1, x, axis, dtype,
                        out, include_initial)


# --------------------------------------------------------------------------- average


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over the given axes (``numpy.average``); with ``returned`` also the
    sum of the weights. Weights summing to zero give NaN/inf (no error, as in JAX).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.average(np.array([1.0, 2.0, 4.0]), weights=np.array([1.0, 1.0, 2.0]))
    Array(2.75, dtype=float64)
    """
    a = _arr(a, "average")
    axes = None if axis is None else _axes(axis, a.ndim, "average", scalar_ok=False)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scl = _c(a.size / _b.max(avg.size, 1), avg.dtype)
    else:
        w = _arr(weights, "average")
        if tuple(w.shape) != tuple(a.shape):
            if axis is None:
                raise errors.ZeraxTypeError(
                    "zerax.numpy.average: axis must be specified when shapes of a and weights "
                    "differ.")
            given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            given = [normalize_axis(g, a.ndim, "average") for g in given]
            if tuple(w.shape) != tuple(a.shape[g] for g in given):
                raise errors.ShapeError(
                    f"zerax.numpy.average: shape of weights {tuple(w.shape)} must be consistent "
                    f"with the shape of a {tuple(a.shape)} along axis {axis}.")
            w = transpose(w, tuple(np.argsort(given)))
            w = reshape(w, [n if i in axes else 1 for i, n in enumerate(a.shape)])
        if a.dtype.kind in "biu":
            rdt = np.result_type(a.dtype, w.dtype, np.float64)
        else:
            rdt = np.result_type(a.dtype, w.dtype)
        w = _bcast_full(as_dtype(w, rdt), tuple(a.shape), "average", "weights")
        scl = sum(w, axis=axes, keepdims=keepdims)
        avg = ew.div(sum(ew.mul(as_dtype(a, rdt), w), axis=axes, keepdims=keepdims), scl)
    if not returned:
        return avg
    scl = ensure_array(scl) if not isinstance(scl, (Array, Tracer)) else scl
    if tuple(scl.shape) != tuple(avg.shape):
        scl = _bcast_full(scl, tuple(avg.shape), "average", "sum of weights")
    return avg, scl


# --------------------------------------------------------------------------- order statistics


def _sort_last(x, fname):
    """``x`` sorted along its last axis (NaNs last): the ``sort`` primitive of
    ``ops/sort.py``, else ``zerax.numpy.sort``."""
    if x.shape[-1] <= 1:
        return x
    try:
        from ..ops.sort import sort as sort_primitive
    except ImportError:
        import zerax.numpy as znp
        sort = getattr(znp, "sort", None)
        if sort is None:
            raise errors.NotSupportedError(
                f"zerax.numpy.{fname} needs a sort, which zerax does not have yet") from None
        return sort(x, axis=-1)
    return sort_primitive(x, x.ndim - 1)


def _nan_last_check(res, s, n):
    """NumPy: a slice containing NaN (sorted last) gives NaN."""
    if np.dtype(s.dtype).kind != "f" or n == 0:
        return res
    last = _slice_axis(s, s.ndim - 1, n - 1, n)
    last = as_dtype(reshape(last, last.shape[:-1]), res.dtype)
    return ew.select_n(ew.isnan(last), res, last)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over the given axes (``numpy.median``): the mean of the middle one or two
    sorted values; a slice containing NaN gives NaN. Needs ``zerax.numpy.sort``."""
    a = _arr(a, "median")
    _no_out(out, "median")
    _real_only("median", a)
    axes = _axes(axis, a.ndim, "median", scalar_ok=False)
    x = _reduced_last(a, axes)
    n = x.shape[-1]
    s = _sort_last(x, "median")
    h = n // 2
    mid = _slice_axis(s, s.ndim - 1, h, h + 1) if n % 2 else _slice_axis(s, s.ndim - 1,
                                                                          _b.max(h - 1, 0), h + 1)
    res = _nan_last_check(mean(mid, axis=-1), s, n)
    return _keepdims(res, a.shape, axes, keepdims)


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")
_NUMPY_ONLY_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                       "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                       "normal_unbiased")


@functools.lru_cache(maxsize=512)
def _quantile_dtype(np_fn, adt, qkey, method):
    q = qkey(1) if isinstance(qkey, type) else np.ones((), qkey)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(np.ones(2, adt), q, method=method)).dtype
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{np_fn.__name__} with method={method!r} is not defined for dtype "
            f"{adt.name} (NumPy refuses the same call)") from None


def _virtual_index(n, q, method):
    """NumPy's virtual index of quantile ``q`` (a NumPy scalar) among ``n`` sorted values."""
    if method == "linear":
        return (n - 1) * q
    if method == "lower":
        return np.intp(np.floor((n - 1) * q))
    if method == "higher":
        return np.intp(np.ceil((n - 1) * q))
    if method == "nearest":
        return np.intp(np.around((n - 1) * q))
    return 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))  # midpoint


def _take_last(s, i):
    out = _slice_axis(s, s.ndim - 1, i, i + 1)
    return reshape(out, out.shape[:-1])


def _one_quantile(s, n, q, method, weak_q):
    v = _virtual_index(n, q, method)
    if np.issubdtype(np.asarray(v).dtype, np.integer):
        return _take_last(s, int(v))
    prev = np.floor(v)
    if v >= n - 1:
        prev = nxt = -1
    else:
        nxt = prev + 1
    gamma = np.asarray(v - prev, dtype=np.asarray(v).dtype)
    if method == "midpoint":
        gamma = np.asarray(0.0 if v % 1 == 0 else 0.5, gamma.dtype)
    lo, hi = _take_last(s, int(prev) % n), _take_last(s, int(nxt) % n)
    t = float(gamma) if weak_q else gamma
    diff_ = _uf.subtract(hi, lo)
    if gamma >= 0.5:  # NumPy's _lerp: the formula that is exact at t = 1
        one_minus = 1 - t if weak_q else np.asarray(1 - gamma, gamma.dtype)
        return _uf.subtract(hi, _uf.multiply(diff_, one_minus))
    return _uf.add(lo, _uf.multiply(diff_, t))


def _quantile(fname, np_fn, scale, a, q, axis, out, method, keepdims, weights):
    a = _arr(a, fname)
    _no_out(out, fname)
    if np.dtype(a.dtype).kind == "c":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: a must be an array of real numbers")
    if weights is not None:
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: weights= is not supported")
    if method not in _QUANTILE_METHODS:
        if method in _NUMPY_ONLY_METHODS:
            raise errors.NotSupportedError(
                f"zerax.numpy.{fname}: method={method!r} is not supported; use one of "
                f"{_QUANTILE_METHODS}")
        raise errors.ShapeError(f"zerax.numpy.{fname}: {method!r} is not a valid method")
    weak_q = type(q) in (int, float)
    qv = np.asarray(q) if weak_q or isinstance(q, (list, tuple)) else \
        concrete_value(q, f"zerax.numpy.{fname}'s q (quantiles must be static)")
    if qv.dtype.kind not in "biuf":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: q must be real numbers, got {q!r:.60}")
    qkey = type(q) if weak_q else qv.dtype
    rdt = _quantile_dtype(np_fn, np.dtype(a.dtype), qkey, method)
    if scale != 1:
        qv = np.true_divide(qv, scale)
    if not (np.all(qv >= 0) and np.all(qv <= 1)):
        what = "Percentiles must be in the range [0, 100]" if scale != 1 else \
            "Quantiles must be in the range [0, 1]"
        raise errors.ShapeError(f"zerax.numpy.{fname}: {what}, got {q!r:.60}")
    if qv.ndim > 2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: q must be a scalar or 1d")
    axes = _axes(axis, a.ndim, fname, scalar_ok=False)
    x = _reduced_last(a, axes)
    n = x.shape[-1]
    if n == 0:
        raise errors.ShapeError(f"zerax.numpy.{fname}: cannot take a quantile of an empty slice")
    s = _sort_last(x, fname)
    outs = []
    for qi in qv.reshape(-1):
        r = _nan_last_check(_one_quantile(s, n, qi, method, weak_q), s, n)
        r = as_dtype(r, rdt)
        outs.append(_keepdims(r, a.shape, axes, keepdims))
    kept = tuple(outs[0].shape)
    if qv.ndim == 0:
        return outs[0]
    stacked = concatenate([reshape(o, (1,) + kept) for o in outs], 0)
    return reshape(stacked, qv.shape + kept)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles over the given axes (``numpy.quantile``); ``q`` (in [0, 1])
    must be concrete. Methods: linear, lower, higher, midpoint, nearest. Needs
    ``zerax.numpy.sort``."""
    return _quantile("quantile", np.quantile, 1, a, q, axis, out, method, keepdims, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The ``q``-th percentiles (``q`` in [0, 100]) over the given axes
    (``numpy.percentile``); see `quantile`."""
    return _quantile("percentile", np.percentile, 100, a, q, axis, out, method, keepdims,
                     weights)


# --------------------------------------------------------------------------- differences


def _side(v, a, axis, fname, what):
    v = ensure_array(v, fname)
    if v.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        return broadcast_in_dim(v, shape, ())
    if v.ndim != a.ndim or _b.any(m != n for i, (m, n) in enumerate(zip(v.shape, a.shape))
                                  if i != axis):
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: {what} of shape {tuple(v.shape)} must match the array's shape "
            f"{tuple(a.shape)} except along axis {axis}")
    return v


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff``); booleans use ``!=``.

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.diff(np.array([1, 4, 9, 16]), n=2)
    Array([2, 2], dtype=int64)
    """
    a = _arr(a, "diff")
    if not isinstance(n, (int, np.integer)):
        raise errors.ZeraxTypeError(f"zerax.numpy.diff: n must be an integer, got {n!r}")
    if n == 0:
        return a
    if n < 0:
        raise errors.ShapeError(f"zerax.numpy.diff: order must be non-negative but got {n!r}")
    if a.ndim == 0:
        raise errors.ShapeError("zerax.numpy.diff requires input that is at least one dimensional")
    ax = normalize_axis(axis, a.ndim, "diff")
    parts = [a]
    if prepend is not None:
        parts.insert(0, _side(prepend, a, ax, "diff", "prepend"))
    if append is not None:
        parts.append(_side(append, a, ax, "diff", "append"))
    if len(parts) > 1:
        dt = result_type(*parts)
        a = concatenate([as_dtype(p, dt) for p in parts], ax)
    op = ew.ne if a.dtype == np.bool_ else ew.sub
    for _ in range(int(n)):
        a = op(_slice_axis(a, ax, 1, None), _slice_axis(a, ax, None, -1))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, with optional
    values before and after (``numpy.ediff1d``); the result has ``ary``'s dtype."""
    a = _ravel(_arr(ary, "ediff1d"))
    if a.dtype == np.bool_:
        raise errors.ZeraxTypeError(
            "zerax.numpy.ediff1d: boolean subtract is not supported (NumPy refuses it too)")
    d = ew.sub(_slice_axis(a, 0, 1, None), _slice_axis(a, 0, None, -1))
    parts = []
    for v, what in ((to_begin, "to_begin"), (to_end, "to_end")):
        if v is None:
            parts.append(None)
            continue
        v = ensure_array(v, "ediff1d")
        if not np.can_cast(v.dtype, a.dtype, casting="same_kind"):
            raise errors.ZeraxTypeError(
                f"zerax.numpy.ediff1d: dtype of `{what}` ({v.dtype}) must be compatible with "
                f"input `ary` ({a.dtype}) under the `same_kind` rule.")
        parts.append(as_dtype(_ravel(v), a.dtype))
    pieces = [p for p in (parts[0], d, parts[1]) if p is not None]
    return concatenate(pieces, 0) if len(pieces) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral along ``axis`` by the composite trapezoidal rule (``numpy.trapezoid``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.trapezoid(np.array([1.0, 2.0, 3.0]), dx=2.0)
    Array(8., dtype=float64)
    """
    y = _arr(y, "trapezoid")
    if y.ndim == 0:
        raise errors.ShapeError("zerax.numpy.trapezoid: y must be at least one dimensional")
    ax = normalize_axis(axis, y.ndim, "trapezoid")
    if x is None:
        d = dx if type(dx) in (bool, int, float, complex) else ensure_array(dx, "trapezoid")
    else:
        x = _arr(x, "trapezoid")
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[ax] = d.shape[0]
            d = reshape(d, shape)
        else:
            d = diff(x, axis=axis)
    mids = _uf.add(_slice_axis(y, ax, 1, None), _slice_axis(y, ax, None, -1))
    return sum(_uf.true_divide(_uf.multiply(d, mids), 2.0), axis=axis)


# --------------------------------------------------------------------------- cov / corrcoef


def _gram(xc, yc):
    """``xc @ yc.T`` for 2-d arrays, written as a broadcast product and a sum."""
    p, q, m = xc.shape[0], yc.shape[0], xc.shape[1]
    prod_ = ew.mul(broadcast_in_dim(xc, (p, q, m), (0, 2)), broadcast_in_dim(yc, (p, q, m), (1, 2)))
    return rd.reduce_sum(prod_, (2,))


def _rows(v, dtype, rowvar, fname):
    v = as_dtype(_arr(v, fname), dtype)
    if v.ndim > 2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: input has more than 2 dimensions")
    if v.ndim < 2:
        v = reshape(v, (1, v.size))
    elif not rowvar and v.shape[0] != 1:
        v = transpose(v, (1, 0))
    return v


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``) (``numpy.cov``); weights must be concrete to be validated."""
    m = _arr(m, "cov")
    _real_only("cov", m)
    if ddof is not None and ddof != int(ddof):
        raise errors.ShapeError("zerax.numpy.cov: ddof must be an integer")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else \
            np.result_type(m.dtype, _arr(y, "cov").dtype, np.float64)
    dtype = np.dtype(dtype)
    X = _rows(m, dtype, True, "cov")
    if not rowvar and m.ndim != 1:
        X = transpose(X, (1, 0))
    if X.shape[0] == 0:
        return Array._wrap(np.array([], dtype).reshape(0, 0))
    if y is not None:
        Y = _rows(y, dtype, rowvar, "cov")
        if Y.shape[1] != X.shape[1]:
            raise errors.ShapeError(
                f"zerax.numpy.cov: m has {X.shape[1]} observations but y has {Y.shape[1]}")
        X = concatenate([X, Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for v, what in ((fweights, "fweights"), (aweights, "aweights")):
        if v is None:
            continue
        v = as_dtype(_arr(v, "cov"), np.float64)
        if v.ndim != 1 or v.shape[0] != X.shape[1]:
            raise errors.ShapeError(
                f"zerax.numpy.cov: {what} must be 1-d with one weight per observation "
                f"({X.shape[1]}), got shape {tuple(v.shape)}")
        if isinstance(v, Array):
            vals = concrete_value(v)
            if np.any(vals < 0):
                raise errors.ShapeError(f"zerax.numpy.cov: {what} cannot be negative")
            if what == "fweights" and not np.all(vals == np.around(vals)):
                raise errors.ZeraxTypeError("zerax.numpy.cov: fweights must be integer")
        w = v if w is None else ew.mul(w, v)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = _slice_axis(w_sum, 0, 0, 1)
    w_sum = reshape(w_sum, ())
    if w is None:
        fact = _c(X.shape[1] - ddof, w_sum.dtype)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = ew.sub(w_sum, _c(ddof, w_sum.dtype))
    else:
        aw = as_dtype(_arr(aweights, "cov"), w_sum.dtype)
        corr = ew.div(ew.mul(_c(ddof, w_sum.dtype), rd.reduce_sum(ew.mul(as_dtype(w, w_sum.dtype),
                                                                           aw), (0,))), w_sum)
        fact = ew.sub(w_sum, corr)
    fact = as_dtype(fact, X.dtype)
    fact = ew.select_n(ew.le(fact, _c(0, X.dtype)), fact, _c(0, X.dtype))
    Xc = ew.sub(X, broadcast_in_dim(as_dtype(avg, X.dtype), X.shape, (0,)))
    Xw = Xc if w is None else ew.mul(Xc, broadcast_in_dim(as_dtype(w, X.dtype), X.shape, (1,)))
    c = ew.mul(_gram(Xc, Xw), ew.div(_c(1, X.dtype), fact))
    keep = [n for n in c.shape if n != 1]
    return reshape(c, keep) if len(keep) != c.ndim else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (``numpy.corrcoef``), clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ew.div(c, c)
    p = c.shape[0]
    d = slice_p_bind(reshape(c, (p * p,)), (0,), (p * p,), (p + 1,))
    sd = ew.sqrt(d)
    c = ew.div(c, broadcast_in_dim(sd, (p, p), (0,)))
    c = ew.div(c, broadcast_in_dim(sd, (p, p), (1,)))
    return ew.clamp(_c(-1, c.dtype), c, _c(1, c.dtype))
