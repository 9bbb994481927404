"""NumPy's statistics on zerax values: weighted averages, order statistics (median,
quantiles, percentiles), discrete differences, trapezoidal integration, covariance
and correlation.

Everything here is a composition of primitives from ``ops/`` and of the reductions
in ``reductions.py`` (no rules of its own), so each function is traceable and, where
NumPy's result is a float, differentiable.  Quantile levels, axes and dtypes are
static Python values.
"""

from __future__ import annotations

import builtins as _b
import functools

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer, concrete_value
from ..ops import elementwise as ew
from ..ops import reduce as rd
from ..ops.sort import sort as sort_primitive
from ..ops.shape import broadcast_in_dim, concatenate, reshape, slice_p_bind, transpose
from . import ufuncs as _uf
from ._util import as_dtype, ensure_array, normalize_axis, result_type
from .reductions import (_arr, _axes, _bcast_full, _c, _keepdims, _no_out, _ravel, _real_only, _size, mean, sum)
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "average", "corrcoef", "cov", "diff", "ediff1d", "median", "percentile", "quantile",
    "trapezoid",
]

# --------------------------------------------------------------------------- helpers


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
            rdt = dtypes.result_type(a.dtype, w.dtype, np.float64)
        else:
            rdt = dtypes.result_type(a.dtype, w.dtype)
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
    ``ops/sort.py``."""
    if x.shape[-1] <= 1:
        return x
    return sort_primitive(x, x.ndim - 1)


def _nan_last_check(res, s, n):
    """NumPy: a slice containing NaN (sorted last) gives NaN."""
    if dtype_kind(np.dtype(s.dtype)) != "f" or n == 0:
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
    if dtype_kind(qv.dtype) not in "biuf":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: q must be real numbers, got {q!r:.60}")
    qkey = type(q) if weak_q else qv.dtype
    rdt = dtypes.canonicalize(_quantile_dtype(np_fn, np.dtype(a.dtype), qkey, method))
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
        dtype = dtypes.result_type(m.dtype, np.float64) if y is None else \
            dtypes.result_type(m.dtype, _arr(y, "cov").dtype, np.float64)
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
        v = as_dtype(_arr(v, "cov"), dtypes.default_float())
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
