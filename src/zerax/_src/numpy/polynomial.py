"""NumPy's functions of sampled sequences on zerax values: polynomials as coefficient
arrays (``polyval``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``,
``polyint``, ``poly``, ``vander``, ``trim_zeros``), 1-d convolution and correlation,
piecewise-linear interpolation (``interp``), finite-difference gradients (``gradient``),
phase unwrapping (``unwrap``) and the window functions (``hanning``, ``hamming``,
``blackman``, ``bartlett``, ``kaiser``).

Compositions of primitives and other ``zerax.numpy`` functions (no rules of their
own): float results are differentiable.  Orders, lengths, modes and window sizes are
static Python values; ``trim_zeros`` needs concrete values (its shape depends on them).
"""

from __future__ import annotations

import operator

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import concrete_value
from ..ops import elementwise as ew
from . import creation as _cr
from . import indexing_ops as _ix
from . import joining as _jn
from . import linalg_ops as _la
from . import shape_ops as _so
from . import ufuncs as _uf
from ._util import as_dtype, ensure_array, normalize_axes, normalize_axis
from .extras import i0
from ._util import result_type
from .reductions import cumprod, cumsum
from .statistics import diff
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "bartlett", "blackman", "convolve", "correlate", "gradient", "hamming", "hanning",
    "interp", "kaiser", "poly", "polyadd", "polyder", "polydiv", "polyint", "polymul",
    "polysub", "polyval", "trim_zeros", "unwrap", "vander",
]

_PY = (bool, int, float, complex)


def _arr(x, fname):
    """NumPy's ``asarray``: Python scalars become strongly typed 0-d arrays."""
    return ensure_array(x, fname)


def _atleast_1d(x, fname):
    x = _arr(x, fname)
    return _so.reshape(x, (1,)) if x.ndim == 0 else x


def _no_complex(fname, *xs):
    if any(np.dtype(x.dtype).kind == "c" for x in xs):
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: complex inputs are not supported")


def _int(v, fname, what):
    try:
        return int(v)
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be an integer, got {v!r:.60}") from None


# --------------------------------------------------------------------------- polynomials


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by
    Horner's rule (``numpy.polyval``).

    >>> import zerax.numpy as znp
    >>> znp.polyval([3.0, 0.0, 1.0], 2.0)
    Array(13., dtype=float64)
    """
    p = _arr(p, "polyval")
    x = _arr(x, "polyval")
    _no_complex("polyval", p, x)
    if p.ndim == 0:
        raise errors.ZeraxTypeError("zerax.numpy.polyval: p must be a 1-d array of coefficients")
    y = _cr.zeros_like(x)
    for i in range(p.shape[0]):
        y = _uf.add(_uf.multiply(y, x), p[i])
    return y


def _poly_pair(a1, a2, fname, op):
    a1, a2 = _atleast_1d(a1, fname), _atleast_1d(a2, fname)
    diff = a2.shape[0] - a1.shape[0]
    if diff > 0:
        a1 = _jn.concatenate([_cr.zeros((diff,) + tuple(a1.shape[1:]), a1.dtype), a1])
    elif diff < 0:
        a2 = _jn.concatenate([_cr.zeros((-diff,) + tuple(a2.shape[1:]), a2.dtype), a2])
    return op(a1, a2)


def polyadd(a1, a2):
    """The sum of two polynomials (``numpy.polyadd``).

    >>> import zerax.numpy as znp
    >>> znp.polyadd([1, 2], [9, 5, 4])
    Array([9, 6, 6], dtype=int64)
    """
    return _poly_pair(a1, a2, "polyadd", _uf.add)


def polysub(a1, a2):
    """The difference of two polynomials (``numpy.polysub``)."""
    return _poly_pair(a1, a2, "polysub", _uf.subtract)


def _trim_leading(a, fname):
    """NumPy's ``poly1d(a)`` coefficients: leading zeros dropped (one zero kept)."""
    if a.ndim != 1:
        raise errors.ShapeError(f"zerax.numpy.{fname}: polynomial must be 1d only.")
    v = concrete_value(a, f"zerax.numpy.{fname} (NumPy drops leading zero coefficients, so the "
                          "result's shape depends on the values; pass trim_leading_zeros=False "
                          "to keep them)")
    nz = np.flatnonzero(v)
    first = int(nz[0]) if nz.size else max(a.shape[0] - 1, 0)
    return a[first:] if first else a


def polymul(a1, a2, *, trim_leading_zeros=True):
    """The product of two polynomials (``numpy.polymul``): ``convolve(a1, a2)`` after
    dropping leading zero coefficients, as NumPy does (that needs concrete values; with
    ``trim_leading_zeros=False``, JAX's default, it works under every transform).

    >>> import zerax.numpy as znp
    >>> znp.polymul([1, 1], [1, -1])
    Array([ 1,  0, -1], dtype=int64)
    """
    a1, a2 = _atleast_1d(a1, "polymul"), _atleast_1d(a2, "polymul")
    if trim_leading_zeros:
        a1, a2 = _trim_leading(a1, "polymul"), _trim_leading(a2, "polymul")
    return convolve(a1, a2)


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (``numpy.polyder``).

    >>> import zerax.numpy as znp
    >>> znp.polyder([1.0, 1.0, 1.0, 1.0])
    Array([3., 2., 1.], dtype=float64)
    """
    m = _int(m, "polyder", "m")
    if m < 0:
        raise errors.ZeraxValueError("zerax.numpy.polyder: order of derivative must be "
                                     "positive (see polyint)")
    p = _arr(p, "polyder")
    if p.ndim == 0:
        raise errors.ZeraxTypeError("zerax.numpy.polyder: p must be a 1-d array of coefficients")
    for _ in range(m):
        n = p.shape[0] - 1
        p = _uf.multiply(p[:-1], _cr.arange(n, 0, -1))
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial (``numpy.polyint``), integration
    constants ``k`` (scalar or one per order, the first is used first).

    >>> import zerax.numpy as znp
    >>> znp.polyint([3.0, 2.0, 1.0])
    Array([1., 1., 1., 0.], dtype=float64)
    """
    m = _int(m, "polyint", "m")
    if m < 0:
        raise errors.ZeraxValueError("zerax.numpy.polyint: order of integral must be positive "
                                     "(see polyder)")
    k = _cr.zeros(m, dtypes.default_float()) if k is None else _atleast_1d(k, "polyint")
    if k.shape[0] == 1 and m > 1:
        k = _uf.multiply(k[0], _cr.ones(m, dtypes.default_float()))
    if k.shape[0] < m:
        raise errors.ZeraxValueError(
            "zerax.numpy.polyint: k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _arr(p, "polyint")
    for i in range(m):
        if p.ndim == 0:
            raise errors.ZeraxTypeError("zerax.numpy.polyint: p must be a 1-d array")
        y = _uf.true_divide(p, _cr.arange(p.shape[0], 0, -1))
        p = _jn.concatenate([y, _so.reshape(k[i], (1,))])
    return p


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-d ``x``: columns ``x**(N-1), ..., x, 1`` (reversed
    if ``increasing``) (``numpy.vander``).

    >>> import zerax.numpy as znp
    >>> znp.vander([1, 2, 3], 3)
    Array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]], dtype=int64)
    """
    x = _arr(x, "vander")
    if x.ndim != 1:
        raise errors.ShapeError("zerax.numpy.vander: x must be a one-dimensional array or "
                                "sequence.")
    n = x.shape[0]
    N = n if N is None else _int(N, "vander", "N")
    dtype = dtypes.canonicalize(np.promote_types(x.dtype, np.int64))
    _no_complex("vander", x)
    if N <= 0:
        return Array._wrap(np.empty((n, max(N, 0)), dtype))
    x = as_dtype(x, dtype)
    cols = [_cr.ones((n, 1), dtype)]
    if N > 1:
        cols.append(cumprod(_so.broadcast_to(_so.reshape(x, (n, 1)), (n, N - 1)), axis=1))
    v = _jn.concatenate(cols, axis=1) if len(cols) > 1 else cols[0]
    return v if increasing else _so.flip(v, axis=1)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros along the
    given axes (``numpy.trim_zeros``). Needs concrete values (the result's shape depends
    on them); derivatives still flow through the kept elements.

    >>> import zerax.numpy as znp
    >>> znp.trim_zeros([0, 0, 1, 2, 0])
    Array([1, 2], dtype=int64)
    """
    x = _arr(filt, "trim_zeros")
    if not isinstance(trim, str) or trim.lower() not in ("fb", "bf", "f", "b"):
        raise errors.ZeraxValueError(f"zerax.numpy.trim_zeros: unexpected character(s) in "
                                     f"`trim`: {trim!r}")
    trim = trim.lower()
    axes = normalize_axes(axis, x.ndim, "trim_zeros")
    if not axes:
        return x
    v = concrete_value(x, "zerax.numpy.trim_zeros (the result's shape depends on the values)")
    nz = np.argwhere(v)
    if nz.size == 0:
        start = stop = np.zeros(x.ndim, np.intp)
    else:
        start, stop = nz.min(axis=0), nz.max(axis=0) + 1
        if "f" not in trim:
            start = (None,) * x.ndim
        if "b" not in trim:
            stop = (None,) * x.ndim
    sl = tuple(slice(start[a], stop[a]) if a in axes else slice(None) for a in range(x.ndim))
    return x[sl]


# --------------------------------------------------------------------------- convolution


def _conv_args(a, v, fname):
    a, v = _atleast_1d(a, fname), _atleast_1d(v, fname)
    if a.ndim != 1 or v.ndim != 1:
        raise errors.ShapeError(f"zerax.numpy.{fname}: both inputs must be 1-d, got shapes "
                                f"{tuple(a.shape)} and {tuple(v.shape)}")
    _no_complex(fname, a, v)
    if a.shape[0] == 0:
        raise errors.ZeraxValueError(f"zerax.numpy.{fname}: a cannot be empty")
    if v.shape[0] == 0:
        raise errors.ZeraxValueError(f"zerax.numpy.{fname}: v cannot be empty")
    return a, v


def _corr_full(a, v):
    """The full cross-correlation ``c[k] = sum_j a[k - m + 1 + j] v[j]``, as one gather of
    sliding windows of ``a`` and a matrix-vector product."""
    n, m = a.shape[0], v.shape[0]
    if m > n:
        return _so.flip(_corr_full(v, a), 0)
    dtype = dtypes.result_type(a.dtype, v.dtype)
    work = np.dtype(np.int64) if dtype == np.bool_ else dtype
    a, v = as_dtype(a, work), as_dtype(v, work)
    if m > 1:
        zeros = _cr.zeros(m - 1, work)
        a = _jn.concatenate([zeros, a, zeros])
    idx = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    out = _la.matmul(a[idx], v)
    return ew.ne(out, np.zeros((), work)) if dtype == np.bool_ else out


def _mode_slice(full, n, m, mode, fname):
    """NumPy's ``valid``/``same``/``full`` part of a full correlation (``n >= m``)."""
    if mode in ("full", 2):
        return full
    if mode in ("same", 1):
        start = m - 1 - m // 2
        return full[start:start + n]
    if mode in ("valid", 0):
        return full[m - 1:n]
    raise errors.ZeraxValueError(f"zerax.numpy.{fname}: mode must be one of 'valid', 'same' or "
                                 f"'full', got {mode!r}")


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d sequences, ``c[k] = sum_n a[n + k] * v[n]``
    (``numpy.correlate``); modes ``valid`` (the default), ``same`` and ``full``.

    >>> import zerax.numpy as znp
    >>> znp.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], "same")
    Array([2. , 3.5, 3. ], dtype=float64)
    """
    a, v = _conv_args(a, v, "correlate")
    n, m = a.shape[0], v.shape[0]
    if n >= m:
        return _mode_slice(_corr_full(a, v), n, m, mode, "correlate")
    # NumPy correlates the other way round and reverses the result
    return _so.flip(_mode_slice(_corr_full(v, a), m, n, mode, "correlate"), 0)


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d sequences (``numpy.convolve``); modes
    ``full`` (the default), ``same`` and ``valid``.

    >>> import zerax.numpy as znp
    >>> znp.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float64)
    """
    a, v = _conv_args(a, v, "convolve")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return correlate(a, _so.flip(v, 0), mode)


# --------------------------------------------------------------------------- interpolation


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x`` (``numpy.interp``); ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside,
    or periodic with ``period``. The result is float64, as in NumPy.

    >>> import zerax.numpy as znp
    >>> znp.interp([0.5, 1.5, 5.0], [0.0, 1.0, 2.0], [0.0, 10.0, 0.0])
    Array([5., 5., 0.], dtype=float64)
    """
    f64 = dtypes.default_float()
    x, xp, fp = (_arr(v, "interp") for v in (x, xp, fp))
    _no_complex("interp", x, xp, fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise errors.ShapeError("zerax.numpy.interp: data points must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise errors.ShapeError("zerax.numpy.interp: fp and xp are not of the same length")
    if xp.shape[0] == 0:
        raise errors.ZeraxValueError("zerax.numpy.interp: array of sample points is empty")
    x, xp, fp = (as_dtype(v, f64) for v in (x, xp, fp))
    if period is not None:
        if isinstance(period, (int, float)) and period == 0:
            raise errors.ZeraxValueError("zerax.numpy.interp: period must be a non-zero value")
        period = _uf.absolute(period)
        left = right = None
        x, xp = _uf.remainder(x, period), _uf.remainder(xp, period)
        order = _ix.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = _jn.concatenate([_uf.subtract(xp[-1:], period), xp, _uf.add(xp[0:1], period)])
        fp = _jn.concatenate([fp[-1:], fp, fp[0:1]])
    n = xp.shape[0]
    lval = fp[0] if left is None else as_dtype(_arr(left, "interp"), f64)
    rval = fp[-1] if right is None else as_dtype(_arr(right, "interp"), f64)
    if n == 1:
        res = _ix.where(_uf.less(x, xp[0]), lval, _ix.where(_uf.greater(x, xp[0]), rval, fp[0]))
    else:
        j = _uf.subtract(_ix.searchsorted(xp, x, side="right"), 1)
        j = _uf.clip(j, 0, n - 2)
        x0, x1 = _ix.take(xp, j), _ix.take(xp, _uf.add(j, 1))
        y0, y1 = _ix.take(fp, j), _ix.take(fp, _uf.add(j, 1))
        slope = _uf.true_divide(_uf.subtract(y1, y0), _uf.subtract(x1, x0))
        r1 = _uf.add(_uf.multiply(slope, _uf.subtract(x, x0)), y0)
        # NumPy: a nan from one end is retried from the other, then by equal ends / knots
        r2 = _uf.add(_uf.multiply(slope, _uf.subtract(x, x1)), y1)
        r2 = _ix.where(_uf.logical_and(_uf.isnan(r2), _uf.equal(y0, y1)), y0, r2)
        res = _ix.where(_uf.isnan(r1), _ix.where(_uf.equal(x, x0), y0, r2), r1)
        res = _ix.where(_uf.equal(x, xp[-1]), fp[-1], res)
        res = _ix.where(_uf.greater(x, xp[-1]), rval, res)
        res = _ix.where(_uf.less(x, xp[0]), lval, res)
        res = _ix.where(_uf.isnan(x), x, res)
    return as_dtype(ensure_array(res), f64)


# --------------------------------------------------------------------------- gradient


def _axis_slice(f, axis, start, stop):
    sl = [slice(None)] * f.ndim
    sl[axis] = slice(start, stop)
    return f[tuple(sl)]


def _along(v, axis, nd):
    shape = [1] * nd
    shape[axis] = v.shape[0]
    return _so.reshape(v, shape)


def _py_or(op, fn):
    """``op`` on two Python numbers (the result stays a weak Python scalar, as in NumPy's
    own arithmetic on the spacing), else the ``zerax.numpy`` function ``fn``."""
    def f(a, b):
        return op(a, b) if type(a) in _PY and type(b) in _PY else fn(a, b)
    return f


def _gradient_axis(f, axis, dx, edge_order, wdt):
    """One axis of `gradient`: ``dx`` is a Python float, a 0-d array or a 1-d array of
    coordinate differences."""
    nd = f.ndim
    mid = _uf.subtract(_axis_slice(f, axis, 2, None), _axis_slice(f, axis, None, -2))
    f0, f1, f2 = (_axis_slice(f, axis, i, i + 1) for i in range(3))
    l3, l2, l1 = (_axis_slice(f, axis, i, i + 1 if i != -1 else None) for i in (-3, -2, -1))
    add, sub, mul, div = (_py_or(op, fn) for op, fn in (
        (operator.add, _uf.add), (operator.sub, _uf.subtract), (operator.mul, _uf.multiply),
        (operator.truediv, _uf.true_divide)))
    uniform = type(dx) in _PY or dx.ndim == 0
    if uniform:
        interior = div(mid, mul(2.0, dx))
    else:
        d1, d2 = dx[:-1], dx[1:]
        a = div(mul(-1.0, d2), mul(d1, add(d1, d2)))
        b = div(sub(d2, d1), mul(d1, d2))
        c = div(d1, mul(d2, add(d1, d2)))
        interior = add(add(mul(_along(a, axis, nd), _axis_slice(f, axis, None, -2)),
                           mul(_along(b, axis, nd), _axis_slice(f, axis, 1, -1))),
                       mul(_along(c, axis, nd), _axis_slice(f, axis, 2, None)))
    if edge_order == 1:
        first = div(sub(f1, f0), dx if uniform else dx[0])
        last = div(sub(l1, l2), dx if uniform else dx[-1])
    else:
        if uniform:
            a, b, c = div(-1.5, dx), div(2.0, dx), div(-0.5, dx)
            a2, b2, c2 = div(0.5, dx), div(-2.0, dx), div(1.5, dx)
        else:
            e1, e2 = dx[0], dx[1]
            a = div(mul(-1.0, add(mul(2.0, e1), e2)), mul(e1, add(e1, e2)))
            b = div(add(e1, e2), mul(e1, e2))
            c = div(mul(-1.0, e1), mul(e2, add(e1, e2)))
            e1, e2 = dx[-2], dx[-1]
            a2 = div(e2, mul(e1, add(e1, e2)))
            b2 = div(mul(-1.0, add(e2, e1)), mul(e1, e2))
            c2 = div(add(mul(2.0, e2), e1), mul(e2, add(e1, e2)))
        first = add(add(mul(a, f0), mul(b, f1)), mul(c, f2))
        last = add(add(mul(a2, l3), mul(b2, l2)), mul(c2, l1))
    parts = [as_dtype(ensure_array(p), wdt) for p in (first, interior, last)]
    return _jn.concatenate(parts, axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of sampled values by central differences inside and one-sided
    differences (first or second order) at the edges (``numpy.gradient``). Spacings: none
    (1), one scalar for all axes, or per axis a scalar or the 1-d coordinates.

    >>> import zerax.numpy as znp
    >>> znp.gradient([1.0, 2.0, 4.0, 7.0])
    Array([1. , 1.5, 2.5, 3. ], dtype=float64)
    """
    f = _arr(f, "gradient")
    _no_complex("gradient", f)
    N = f.ndim
    axes = tuple(range(N)) if axis is None else tuple(
        normalize_axis(a, N, "gradient") for a in ((axis,) if isinstance(axis, (int, np.integer))
                                                   else axis))
    if len(set(axes)) != len(axes):
        raise errors.ShapeError(f"zerax.numpy.gradient: repeated axis in {axis}")
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = []
        for i, d in enumerate(varargs):
            if type(d) not in _PY:
                d = _arr(d, "gradient")
                if d.ndim == 1:
                    if d.shape[0] != f.shape[axes[i]]:
                        raise errors.ShapeError(
                            "zerax.numpy.gradient: when 1d, distances must match the length "
                            "of the corresponding dimension")
                    if np.dtype(d.dtype).kind in "biu":
                        d = as_dtype(d, dtypes.default_float())
                    d = _uf.subtract(d[1:], d[:-1])
                    if type(d) is Array and d.shape[0] and np.all(d._value == d._value[0]):
                        d = d[0]  # NumPy's shortcut: uniform coordinates act as a scalar
                elif d.ndim != 0:
                    raise errors.ShapeError("zerax.numpy.gradient: distances must be either "
                                            "scalars or 1d")
            dx.append(d)
    else:
        raise errors.ZeraxTypeError("zerax.numpy.gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise errors.ZeraxValueError("zerax.numpy.gradient: 'edge_order' must be 1 or 2")
    kind = np.dtype(f.dtype).kind
    if kind == "b":
        raise errors.ZeraxTypeError("zerax.numpy.gradient: boolean arrays are not supported "
                                    "(NumPy refuses the subtraction too)")
    otype = np.dtype(f.dtype) if kind == "f" else dtypes.default_float()
    if kind in "iu":
        f = as_dtype(f, otype)
    outs = []
    for ax, d in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise errors.ShapeError(
                "zerax.numpy.gradient: shape of array too small to calculate a numerical "
                "gradient, at least (edge_order + 1) elements are required.")
        outs.append(_gradient_axis(f, ax, d, edge_order, otype))
    return outs[0] if len(axes) == 1 else tuple(outs)


# --------------------------------------------------------------------------- windows


def _window(fname, np_fn, M):
    M = _int(M, fname, "M") if not isinstance(M, float) else M
    # NumPy's float64 window, rounded once to float32 with x64 off
    return Array._wrap(dtypes.canonical_ndarray(np.asarray(np_fn(M))))


def hanning(M):
    """The Hann window of ``M`` points (``numpy.hanning``), float64.

    >>> import zerax.numpy as znp
    >>> znp.hanning(3)
    Array([0., 1., 0.], dtype=float64)
    """
    return _window("hanning", np.hanning, M)


def hamming(M):
    """The Hamming window of ``M`` points (``numpy.hamming``), float64."""
    return _window("hamming", np.hamming, M)


def blackman(M):
    """The Blackman window of ``M`` points (``numpy.blackman``), float64."""
    return _window("blackman", np.blackman, M)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points (``numpy.bartlett``), float64."""
    return _window("bartlett", np.bartlett, M)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points and shape ``beta`` (``numpy.kaiser``), float64;
    ``beta`` may be traced (the window is differentiable in it)."""
    M = _int(M, "kaiser", "M") if not isinstance(M, float) else M
    f64 = dtypes.default_float()
    beta = as_dtype(_arr(beta, "kaiser"), f64)
    if M == 1:
        return _cr.ones(1, f64)
    n = np.arange(0, M, dtype=f64)
    alpha = (M - 1) / 2.0
    s = np.sqrt(1 - ((n - alpha) / alpha) ** 2.0)
    return _uf.true_divide(i0(_uf.multiply(beta, s)), i0(beta))


# --------------------------------------------------------------------------- poly, polydiv


def poly(seq_of_zeros):
    """The coefficients (highest power first, leading 1) of the polynomial with the
    given real roots (``numpy.poly`` for a 1-d sequence of roots; the square-matrix
    form needs eigenvalues and is not supported).

    >>> import zerax.numpy as znp
    >>> znp.poly([1.0, 2.0])
    Array([ 1., -3.,  2.], dtype=float64)
    """
    z = _atleast_1d(seq_of_zeros, "poly")
    _no_complex("poly", z)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        raise errors.NotSupportedError(
            "zerax.numpy.poly: the characteristic polynomial of a matrix needs its "
            "eigenvalues, which zerax does not compute yet; pass the 1-d roots instead.")
    if z.ndim != 1:
        raise errors.ShapeError("zerax.numpy.poly: input must be 1d or non-empty square 2d "
                                "array.")
    dt = np.dtype(np.float32) if np.dtype(z.dtype) == np.float32 else dtypes.default_float()
    z = as_dtype(z, dt)
    if z.shape[0] == 0:
        return _cr.ones((), dt)
    a = _cr.ones((1,), dt)
    zero = _cr.zeros((1,), dt)
    for k in range(z.shape[0]):      # a(x) * (x - z_k)
        a = _uf.subtract(_jn.concatenate([a, zero]),
                         _uf.multiply(z[k], _jn.concatenate([zero, a])))
    return a


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division ``u / v`` (highest power first),
    as JAX's ``polydiv``: the remainder keeps ``u``'s length unless
    ``trim_leading_zeros`` (concrete values only; entries below ``sqrt(eps)`` count as
    zeros, as JAX).

    >>> import zerax.numpy as znp
    >>> q, r = znp.polydiv([1.0, -3.0, 2.0], [1.0, -1.0])
    >>> q, r
    (Array([ 1., -2.], dtype=float64), Array([0., 0., 0.], dtype=float64))
    """
    u, v = _atleast_1d(u, "polydiv"), _atleast_1d(v, "polydiv")
    _no_complex("polydiv", u, v)
    if u.ndim != 1 or v.ndim != 1:
        raise errors.ShapeError("zerax.numpy.polydiv: u and v must be 1-d coefficient arrays")
    dt = dtypes.result_type(np.dtype(u.dtype), np.dtype(v.dtype), 1.0)
    if dtype_kind(dt) != "f":
        dt = dtypes.default_float()
    u, v = as_dtype(u, dt), as_dtype(v, dt)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = _uf.true_divide(1.0, v[0])
    qs = []
    for k in range(m - n + 1):
        d = _uf.multiply(scale, u[k])
        qs.append(_so.reshape(d, (1,)))
        upd = _uf.multiply(d, v)
        u = _jn.concatenate([u[:k], _uf.subtract(u[k:k + n + 1], upd), u[k + n + 1:]])
    q = _jn.concatenate(qs) if qs else _cr.zeros((1,), dt)
    if trim_leading_zeros:
        vals = np.asarray(concrete_value(u)) if not isinstance(u, Array) else np.asarray(u)
        small = np.abs(vals) < np.sqrt(np.finfo(dt).eps)
        if small.all():
            return q, _cr.zeros((0,), dt)
        u = u[int(np.argmin(small)):]
    return q, u


# --------------------------------------------------------------------------- unwrap


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap phases along ``axis``: jumps larger than ``max(discont, period / 2)`` are
    replaced by their ``period``-complement (``numpy.unwrap``; integer inputs with an
    integer ``period`` stay integers).

    >>> import zerax.numpy as znp
    >>> znp.unwrap([0.0, 3.0, 6.0, 9.0], period=4)
    Array([ 0., -1., -2., -3.], dtype=float64)
    """
    p = _arr(p, "unwrap")
    _no_complex("unwrap", p)
    nd = p.ndim
    axis = normalize_axis(axis, nd, "unwrap")
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dt = result_type(dd, period)
    if dt.kind in "iub":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    dd = as_dtype(dd, dt)
    ddmod = _uf.add(_uf.remainder(_uf.subtract(dd, low), period), low)
    if ambiguous:
        fix = _uf.logical_and(_uf.equal(ddmod, low), _uf.greater(dd, 0))
        ddmod = _ix.where(fix, as_dtype(high, dt), ddmod)
    ph = _uf.subtract(ddmod, dd)
    ph = _ix.where(_uf.less(_uf.absolute(dd), discont), as_dtype(0, dt), ph)
    p = as_dtype(p, dt)
    head = _so._slice_axis(p, axis, 0, min(1, p.shape[axis]))
    tail = _so._slice_axis(p, axis, 1, p.shape[axis]) if p.shape[axis] > 1 else None
    if tail is None:
        return p
    return _jn.concatenate([head, _uf.add(tail, cumsum(ph, axis=axis))], axis=axis)
