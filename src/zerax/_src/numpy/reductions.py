"""NumPy's reductions on zerax values: sums, extremes, moments, cumulative
reductions and their NaN-ignoring variants (averages, order statistics, differences,
integration and covariance are in ``statistics.py``).

Everything here is a composition of primitives from ``ops/`` (no rules of its own),
so each function is traceable and, where NumPy's result is a float, differentiable.
Result dtypes are NumPy 2's, asked of NumPy on tiny samples (``numpy_result_dtype``).
Shapes, axes and dtypes are static Python values; ``where``/``initial`` may be traced.
"""

from __future__ import annotations

import builtins as _b
import math

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer, concrete_value
from ..ops import elementwise as ew
from ..ops import reduce as rd
from ..ops.shape import broadcast_in_dim, concatenate, iota, reshape, transpose
from . import ufuncs as _uf
from ._util import (as_dtype, broadcast_to_shape, ensure_array, normalize_axes, normalize_axis, numpy_result_dtype)
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum",
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "nanargmax", "nanargmin",
    "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd", "nansum",
    "nanvar", "prod", "ptp", "std", "sum", "var",
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
        raise errors.AxisError(
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
            return dtypes.requested(dtype, f"zerax.numpy.{fname}")
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
    return dtype_kind(np.dtype(x.dtype)) in "fc"


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
    if arr.shape != () or dtype_kind(arr.dtype) not in "biufc":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: {what} must be a number, got {v!r:.60}")
    with np.errstate(all="ignore"):
        return arr.astype(dtype)


def _fill(x, mask, value):
    """``x`` where ``mask`` (None = everywhere), else ``value``."""
    if mask is None:
        return x
    return ew.select_n(mask, _c(value, x.dtype), x)


def _fill_nan(x, value):
    if dtype_kind(np.dtype(x.dtype)) not in "fc":
        return x
    return ew.select_n(ew.isnan(x), x, _c(value, x.dtype))


def _lowest(dtype, is_max):
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) == "f":
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
    return rdt if dtype_kind(rdt) in "fc" else dtypes.default_float()


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


def _var(fname, np_fn, a, axis, dtype, out, ddof, keepdims, where, mean, correction, nan,
         root=False):
    a = _arr(a, fname)
    _no_out(out, fname)
    ddof = _ddof(fname, ddof, correction)
    rdt = _np_dtype(np_fn, fname, a, dtype)
    if nan and _is_inexact(a) and dtype_kind(rdt) not in "fc":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: if a is inexact, dtype must be too")
    mask = _mask(where, a.shape, fname)
    axes = _axes(axis, a.ndim, fname, scalar_ok=(nan and _is_inexact(a)) or mask is not None)
    cdt = rdt if dtype_kind(rdt) == "f" else dtypes.default_float()
    # complex values: the mean is complex, the squared deviations |a - mean|^2 real
    sdt = np.promote_types(cdt, np.complex64) if np.dtype(a.dtype).kind == "c" else cdt
    inexact = _is_inexact(a)
    if nan and inexact:
        valid = ew.bitwise_not(ew.isnan(a))
        mask = valid if mask is None else ew.bitwise_and(mask, valid)
        a = _fill_nan(a, 0)
    x = as_dtype(a, sdt)
    n = _count(mask, a.shape, axes, cdt)
    if mean is None:
        s = _fill(x, mask, 0)
        s = rd.reduce_sum(s, axes) if axes else s
        mu = _bcast_back(ew.div(s, as_dtype(n, sdt)), a.shape, axes)
    else:
        mu = _bcast_full(as_dtype(ensure_array(mean, fname), sdt), tuple(a.shape), fname, "mean=")
    # Deviations as NumPy forms them: ``a - mean`` promoted (nanvar stores them in a.dtype).
    pdt = np.promote_types(a.dtype, sdt)
    d = ew.sub(as_dtype(a, pdt), as_dtype(mu, pdt))
    if nan and _is_inexact(a):
        d = as_dtype(d, a.dtype)
    d = _fill(d, mask, 0)
    if np.dtype(d.dtype).kind == "c":
        re, im = ew.real(d), ew.imag(d)
        ss = as_dtype(ew.add(ew.mul(re, re), ew.mul(im, im)), cdt)
    else:
        ss = as_dtype(ew.mul(d, d), cdt)
    ss = rd.reduce_sum(ss, axes) if axes else ss
    dof = ew.sub(n, _c(ddof, cdt))
    y = ew.div(ss, _nonneg(dof, cdt))
    if nan and inexact:  # NumPy's nanvar gives NaN (not inf) where the dof are <= 0
        y = ew.select_n(ew.le(dof, _c(0, cdt)), y, _c(np.nan, cdt))
    if root:
        y = ew.sqrt(y)
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
    return _var("std", np.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                False, root=True)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
           correction=None):
    """Variance ignoring NaNs (``numpy.nanvar``)."""
    return _var("nanvar", np.nanvar, a, axis, dtype, out, ddof, keepdims, where, mean,
                correction, True)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
           correction=None):
    """Standard deviation ignoring NaNs (``numpy.nanstd``)."""
    return _var("nanstd", np.nanstd, a, axis, dtype, out, ddof, keepdims, where, mean,
                correction, True, root=True)


# --------------------------------------------------------------------------- max / min


def _to_last(x, axes):
    """``x`` with the ``axes`` moved to the end and merged into one (in order)."""
    rest = [i for i in range(x.ndim) if i not in axes]
    x = transpose(x, tuple(rest) + tuple(axes))
    return reshape(x, tuple(x.shape[:len(rest)]) + (_size(x.shape[len(rest):], range(len(axes))),))


def _complex_hits(x, is_max, valid, nan):
    """Where the last axis of complex ``x`` attains its lexicographic (real part, then
    imaginary part: NumPy's order) maximum or minimum, among the ``valid`` elements (None:
    all), as a bool array; with NaNs (unless ``nan``, the nanmax family) the first NaN
    alone, as NumPy's reductions return it."""
    re, im = ew.real(x), ew.imag(x)
    isn = ew.bitwise_or(ew.isnan(re), ew.isnan(im))
    ok = ew.bitwise_not(isn) if valid is None else ew.bitwise_and(valid, ew.bitwise_not(isn))
    red = rd.reduce_max if is_max else rd.reduce_min
    last = (x.ndim - 1,)
    worst = _c(-np.inf if is_max else np.inf, re.dtype)
    best_re = red(ew.select_n(ok, worst, re), last)
    cand = ew.bitwise_and(ok, ew.eq(re, _bcast_back(best_re, re.shape, last)))
    best_im = red(ew.select_n(cand, worst, im), last)
    hits = ew.bitwise_and(cand, ew.eq(im, _bcast_back(best_im, im.shape, last)))
    bad = isn if valid is None else ew.bitwise_and(valid, isn)
    pos = rd.argmax(bad, x.ndim - 1, np.int64)
    first = ew.eq(_iota_last(x.shape), _bcast_back(pos, x.shape, last))
    if nan:   # an all-NaN slice gives its first NaN
        none = ew.bitwise_not(rd.reduce_max(ok, last))
    else:
        none = rd.reduce_max(bad, last)
    return ew.select_n(_bcast_back(none, x.shape, last), hits, ew.bitwise_and(first, bad))


def _iota_last(shape):
    return iota(np.int64, tuple(shape), len(shape) - 1)


def _complex_extreme(is_max, a, axes, mask, nan):
    """The lexicographic max/min of complex ``a`` over ``axes``: the real and imaginary
    parts of the elements that attain it (so the derivative is shared among ties, as
    for real arrays); +-inf(+-inf j) for an empty or fully masked slice."""
    x = _to_last(a, axes)
    valid = None if mask is None else _to_last(mask, axes)
    hits = _complex_hits(x, is_max, valid, nan)
    last = (x.ndim - 1,)
    re, im = ew.real(x), ew.imag(x)
    lowest = _c(-np.inf if is_max else np.inf, re.dtype)
    red = rd.reduce_max if is_max else rd.reduce_min
    return ew.complex_(red(ew.select_n(hits, lowest, re), last),
                       red(ew.select_n(hits, lowest, im), last))


def _extreme(fname, is_max, a, axis, out, keepdims, initial, where, nan=False):
    a = _arr(a, fname)
    _no_out(out, fname)
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
    if np.dtype(a.dtype).kind == "c":
        y = _complex_extreme(is_max, a, axes, mask, nan) if axes else a
        if initial is not None:
            y = op(y, _scalar(initial, a.dtype, fname))
        return _keepdims(y, a.shape, axes, keepdims)
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
    idt = dtypes.default_int()   # int64 (int32 with x64 off), as JAX's indices
    if np.dtype(x.dtype).kind == "c":   # the first place of the lexicographic extreme
        xl = x if ax == x.ndim - 1 else _to_last(x, (ax,))
        hits = _complex_hits(xl, is_max, None, nan)
        idx = rd.argmax(hits, xl.ndim - 1, idt)
        if nan:
            re, im = ew.real(xl), ew.imag(xl)
            ok = ew.bitwise_not(ew.bitwise_or(ew.isnan(re), ew.isnan(im)))
            all_nan = ew.bitwise_not(rd.reduce_max(ok, (xl.ndim - 1,)))
            if isinstance(x, Array) and bool(np.any(concrete_value(all_nan))):
                raise errors.ShapeError(
                    f"zerax.numpy.{fname}: All-NaN slice encountered (under a transform such "
                    "a slice gives -1 instead)")
            idx = ew.select_n(all_nan, idx, _c(-1, idt))
    elif nan and _is_inexact(x):
        isn = ew.isnan(x)
        all_nan = rd.reduce_min(isn, (ax,))
        if isinstance(x, Array) and bool(np.any(concrete_value(all_nan))):
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: All-NaN slice encountered (under a transform such a "
                "slice gives -1 instead)")
        clean = ew.select_n(isn, x, _c(_lowest(x.dtype, is_max), x.dtype))
        best = (rd.reduce_max if is_max else rd.reduce_min)(clean, (ax,))
        hit = ew.eq(x, _bcast_back(best, x.shape, (ax,)))  # False at NaNs
        idx = ew.select_n(all_nan, rd.argmax(hit, ax, idt), _c(-1, idt))
    else:
        idx = prim(x, ax, idt)
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
    """Number of non-zero elements along the given axes, as int64 (int32 with x64 off;
    ``numpy.count_nonzero``)."""
    a = _arr(a, "count_nonzero")
    axes = _axes(axis, a.ndim, "count_nonzero")
    x = ew.convert_element_type(ew.convert_element_type(a, np.bool_), dtypes.default_int())
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
