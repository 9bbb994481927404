"""NumPy's NaN-ignoring order statistics on zerax values: ``nanmedian``,
``nanquantile`` and ``nanpercentile``.

Each slice is sorted (NaNs last) and its number of non-NaN values counted; the
quantile's position among those values is then computed per slice and the neighbours
are gathered with ``take_along_axis``, so the result's shape never depends on where the
NaNs are: everything is traceable, and differentiable through the gathered values.
All-NaN slices give NaN (NumPy also warns). Quantile levels must be concrete.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core.core import concrete_value
from ..ops import elementwise as ew
from ..ops.shape import concatenate, reshape
from . import indexing_ops as _ix
from . import reductions as _rd
from . import statistics as _st
from ._util import as_dtype, ensure_array

__all__ = ["nanmedian", "nanpercentile", "nanquantile"]

_I64 = np.dtype(np.int64)


def _k(v, dtype):
    return np.array(v, dtype=dtype)


def _prep(fname, a, axis, out):
    a = ensure_array(a, fname)
    _rd._no_out(out, fname)
    if np.dtype(a.dtype).kind == "c":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: a must be an array of real numbers")
    axes = _rd._axes(axis, a.ndim, fname, scalar_ok=False)
    return a, axes


def _sorted_counts(a, axes, fname):
    """Slices along the reduced axes, sorted with NaNs last, and their non-NaN counts."""
    x = _st._reduced_last(a, axes)
    s = _st._sort_last(x, fname)
    cnt = _rd.sum(ew.bitwise_not(ew.isnan(x)), axis=-1)
    return s, as_dtype(cnt, _I64)


def _take(s, idx):
    """``s[..., idx]`` for a per-slice integer index array of shape ``s.shape[:-1]``."""
    n = s.shape[-1]
    idx = ew.clamp(_k(0, _I64), idx, _k(n - 1, _I64))
    got = _ix.take_along_axis(s, reshape(idx, tuple(idx.shape) + (1,)), axis=-1)
    return reshape(got, tuple(got.shape[:-1]))


def _nan_if_empty(res, cnt):
    return ew.select_n(ew.eq(cnt, _k(0, _I64)), res, _k(np.nan, res.dtype))


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaNs (``numpy.nanmedian``); NaN for all-NaN slices.

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.nanmedian(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]]), axis=1)
    Array([2. , 4.5], dtype=float64)
    """
    a, axes = _prep("nanmedian", a, axis, out)
    if a.size == 0:
        return _rd.nanmean(a, axis, keepdims=keepdims)
    if dtype_kind(np.dtype(a.dtype)) != "f":
        return _st.median(a, axis, keepdims=keepdims)
    s, cnt = _sorted_counts(a, axes, "nanmedian")
    h = ew.floor_divide(cnt, _k(2, _I64))
    hi = _take(s, h)
    lo = _take(s, ew.sub(h, _k(1, _I64)))
    even = ew.div(ew.add(lo, hi), _k(2, s.dtype))
    odd = ew.eq(ew.rem(cnt, _k(2, _I64)), _k(1, _I64))
    res = _nan_if_empty(ew.select_n(odd, even, hi), cnt)
    return _rd._keepdims(res, a.shape, axes, keepdims)


def _one(s, cnt, qi, qdt, method, weak_q, adt, rdt):
    """One quantile ``qi`` (a NumPy scalar of dtype ``qdt``) of every slice."""
    nm1 = as_dtype(ew.sub(cnt, _k(1, _I64)), qdt)
    v = ew.mul(nm1, _k(qi, qdt))
    if qdt.kind in "iub" and method in ("linear", "midpoint"):
        method = "lower"  # an integer virtual index: NumPy takes the element
    if method in ("lower", "higher", "nearest"):
        rnd = {"lower": ew.floor, "higher": ew.ceil, "nearest": ew.round}[method]
        idx = v if qdt.kind in "iub" else rnd(v)
        return as_dtype(_take(s, as_dtype(idx, _I64)), rdt)
    prev = ew.floor(v)
    if method == "midpoint":
        v = ew.mul(_k(0.5, qdt), ew.add(prev, ew.ceil(v)))
        prev = ew.floor(v)
        gamma = ew.select_n(ew.eq(v, prev), _k(0.5, qdt), _k(0.0, qdt))
    else:
        gamma = ew.sub(v, prev)
    above = ew.ge(v, nm1)
    i_prev = as_dtype(prev, _I64)
    last = ew.sub(cnt, _k(1, _I64))
    i_prev = ew.select_n(above, i_prev, last)
    i_next = ew.select_n(above, ew.add(i_prev, _k(1, _I64)), last)
    lo, hi = _take(s, i_prev), _take(s, i_next)
    # NumPy's _lerp; with a Python-number q the weight is a weak Python float
    wdt = adt if weak_q else dtypes.result_type(adt, qdt)
    d = as_dtype(ew.sub(hi, lo), wdt)
    lo, hi = as_dtype(lo, wdt), as_dtype(hi, wdt)
    g = as_dtype(gamma, wdt)
    one_minus = as_dtype(ew.sub(_k(1, qdt), gamma), wdt)
    res = ew.select_n(ew.ge(gamma, _k(0.5, qdt)), ew.add(lo, ew.mul(d, g)),
                      ew.sub(hi, ew.mul(d, one_minus)))
    return as_dtype(res, rdt)


def _nan_quantile(fname, np_fn, scale, a, q, axis, out, method, keepdims, weights):
    a, axes = _prep(fname, a, axis, out)
    if weights is not None:
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: weights= is not supported")
    if method not in _st._QUANTILE_METHODS:
        if method in _st._NUMPY_ONLY_METHODS:
            raise errors.NotSupportedError(
                f"zerax.numpy.{fname}: method={method!r} is not supported; use one of "
                f"{_st._QUANTILE_METHODS}")
        raise errors.ZeraxValueError(f"zerax.numpy.{fname}: {method!r} is not a valid method")
    weak_q = type(q) in (int, float)
    qv = np.asarray(q) if weak_q or isinstance(q, (list, tuple)) else \
        np.asarray(concrete_value(q, f"zerax.numpy.{fname}'s q (quantiles must be static)"))
    if dtype_kind(qv.dtype) not in "biuf":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: q must be real numbers, got {q!r:.60}")
    qkey = type(q) if weak_q else qv.dtype
    if scale != 1:
        qv = np.true_divide(qv, scale)
    if qv.dtype.kind == "b":
        qv = qv.astype(np.int64)
    if not (np.all(qv >= 0) and np.all(qv <= 1)):
        what = "Percentiles must be in the range [0, 100]" if scale != 1 else \
            "Quantiles must be in the range [0, 1]"
        raise errors.ZeraxValueError(f"zerax.numpy.{fname}: {what}, got {q!r:.60}")
    if a.size == 0:
        return _rd.nanmean(a, axis, keepdims=keepdims)
    adt = np.dtype(a.dtype)
    if dtype_kind(adt) != "f":  # no NaNs to ignore
        std_fn = _st.quantile if scale == 1 else _st.percentile
        return std_fn(a, q, axis, method=method, keepdims=keepdims)
    rdt = dtypes.canonicalize(_st._quantile_dtype(np_fn, adt, qkey, method))
    s, cnt = _sorted_counts(a, axes, fname)
    outs = []
    for qi in qv.reshape(-1):
        r = _nan_if_empty(_one(s, cnt, qi, qv.dtype, method, weak_q, adt, rdt), cnt)
        outs.append(_rd._keepdims(r, a.shape, axes, keepdims))
    if qv.ndim == 0:
        return outs[0]
    kept = tuple(outs[0].shape)
    stacked = concatenate([reshape(o, (1,) + kept) for o in outs], 0)
    return reshape(stacked, qv.shape + kept)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """The ``q``-th quantiles ignoring NaNs (``numpy.nanquantile``); ``q`` (in [0, 1]) must
    be concrete. Methods: linear, lower, higher, midpoint, nearest.

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.nanquantile(np.array([1.0, np.nan, 2.0, 3.0]), 0.25)
    Array(1.5, dtype=float64)
    """
    return _nan_quantile("nanquantile", np.nanquantile, 1, a, q, axis, out, method, keepdims,
                         weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """The ``q``-th percentiles (``q`` in [0, 100]) ignoring NaNs (``numpy.nanpercentile``);
    see `nanquantile`."""
    return _nan_quantile("nanpercentile", np.nanpercentile, 100, a, q, axis, out, method,
                         keepdims, weights)
