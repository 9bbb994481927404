"""Least-squares polynomial fits and polynomial roots (NumPy's and JAX's ``polyfit``
and ``roots``, and ``sort_complex`` for their output), and the printing helpers of ``numpy`` on zerax values (``array_str``,
``array_repr``; the print options are NumPy's own, which zerax's repr follows).

``polyfit`` solves the column-scaled Vandermonde system by `linalg.lstsq` (SVD), as
NumPy does, so it is differentiable in ``x``, ``y`` and ``w``; ``deg`` is static.
``roots`` takes the eigenvalues of the companion matrix, as NumPy and JAX do (LAPACK's
order); stripping leading and trailing zeros needs concrete coefficients, as in JAX
(``strip_zeros=False`` traces: leading zeros then give roots at nan, as JAX's).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core.core import concrete_value
from . import creation as _cr
from . import joining as _jn
from . import linalg_ops as _lo
from . import reductions as _rd
from . import shape_ops as _so
from . import ufuncs as _uf
from ._util import ensure_array
from .indexing_ops import sort as _so_sort
from .linalg import inv, lstsq
from .linalg_eig import eigvals
from .polynomial import vander

__all__ = ["array_repr", "array_str", "polyfit", "roots", "sort_complex"]


def _int_static(v, fname, what):
    what_for = f"zerax.numpy.{fname}: {what} (it fixes the shape of the result)"
    try:
        return int(concrete_value(v, what_for) if not isinstance(v, (int, np.integer))
                   else v)
    except (TypeError, ValueError) as e:
        if isinstance(e, errors.ConcretizationError):
            raise
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be an integer, got {v!r:.60}") from None


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through ``(x, y)``: its
    coefficients, highest power first (NumPy's ``polyfit``; ``y`` may be 2-D, one fit
    per column; ``w`` weights the residuals; ``full`` also returns the residuals,
    rank, singular values and ``rcond``; ``cov`` (True or ``"unscaled"``) the
    coefficients' covariance).

    >>> import zerax.numpy as znp
    >>> x = znp.arange(5.0)
    >>> znp.polyfit(x, 2 * x ** 2 - x + 1, 2).round(6)
    Array([ 2., -1.,  1.], dtype=float64)
    """
    deg = _int_static(deg, "polyfit", "deg")
    if deg < 0:
        raise errors.ZeraxValueError("zerax.numpy.polyfit: deg must be non-negative, "
                                     f"got {deg}")
    x = ensure_array(x, "polyfit")
    y = ensure_array(y, "polyfit")
    dtype = dtypes.result_type(x.dtype, y.dtype, np.float64 if x.dtype.kind in "biu" and
                           y.dtype.kind in "biu" else x.dtype)
    if dtype_kind(dtype) not in "fc":
        dtype = dtypes.default_float()
    x, y = x.astype(dtype), y.astype(dtype)
    order = deg + 1
    if x.ndim != 1:
        raise errors.ShapeError(f"zerax.numpy.polyfit: x must be 1-D, got shape {x.shape}")
    if x.shape[0] == 0:
        raise errors.ShapeError("zerax.numpy.polyfit: x must not be empty")
    if y.ndim not in (1, 2):
        raise errors.ShapeError(f"zerax.numpy.polyfit: y must be 1-D or 2-D, got shape "
                                f"{y.shape}")
    if y.shape[0] != x.shape[0]:
        raise errors.ShapeError(f"zerax.numpy.polyfit: x and y must have the same length, "
                                f"got {x.shape[0]} and {y.shape[0]}")
    if rcond is None:
        rcond = len(x) * np.finfo(dtype).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = ensure_array(w, "polyfit").astype(dtype)
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            raise errors.ShapeError(f"zerax.numpy.polyfit: w must be 1-D with the length "
                                    f"of y ({y.shape[0]}), got shape {w.shape}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = _uf.sqrt(_rd.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = c / (scale if c.ndim == 1 else scale[:, None])
    if full:
        return c, resids, rank, s, _cr.asarray(rcond)
    if cov:
        vbase = inv(_lo.dot(_so.transpose(lhs), lhs)) / _lo.outer(scale, scale)
        if cov == "unscaled":
            fac = 1.0
        else:
            if len(x) <= order:
                raise errors.ZeraxValueError(
                    "zerax.numpy.polyfit: the number of data points must exceed the order "
                    "to scale the covariance matrix (or pass cov='unscaled')")
            fac = resids / (len(x) - order)
        if y.ndim == 1:
            return c, vbase * fac
        return c, vbase[:, :, None] * fac
    return c


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (highest power first), as
    complex numbers: the eigenvalues of its companion matrix (NumPy's ``roots``).

    >>> import zerax.numpy as znp
    >>> znp.sort_complex(znp.roots(znp.array([1.0, -3.0, 2.0])))
    Array([1.+0.j, 2.+0.j], dtype=complex128)
    """
    p = ensure_array(p, "roots")
    if p.ndim == 0:
        p = _so.reshape(p, (1,))
    if p.ndim != 1:
        raise errors.ShapeError(f"zerax.numpy.roots: p must be 1-D, got shape {p.shape}")
    if dtype_kind(p.dtype) not in "fc":
        p = p.astype(dtypes.default_float())
    cdt = dtypes.result_type(p.dtype, np.complex64)
    if strip_zeros:
        nz = np.flatnonzero(np.asarray(concrete_value(
            p, "zerax.numpy.roots: stripping the zero coefficients (under a transform "
               "pass strip_zeros=False; leading zeros then give nan roots, as in JAX)"))
            != 0)
        if nz.size == 0:
            return _cr.zeros((0,), cdt)
        trailing = len(p) - 1 - int(nz[-1])
        core = p[int(nz[0]):int(nz[-1]) + 1]
        r = _companion_roots(core, cdt)
        if trailing:
            r = _jn.concatenate([r, _cr.zeros((trailing,), cdt)])
        return r
    return _companion_roots(p, cdt)


def _companion_roots(p, cdt):
    n = p.shape[0]
    if n < 2:
        return _cr.zeros((0,), cdt)
    a = _cr.diag(_cr.ones((n - 2,), p.dtype), -1) if n > 2 else _cr.zeros((1, 1), p.dtype)
    a = a.at[0, :].set(-p[1:] / p[0])
    return eigvals(a).astype(cdt)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """``str`` of a zerax array, with NumPy's options (NumPy's ``array_str``).

    >>> import zerax.numpy as znp
    >>> znp.array_str(znp.array([1.0, 2.5]), precision=1)
    '[1.  2.5]'
    """
    return np.array_str(np.asarray(ensure_array(a, "array_str")), max_line_width,
                        precision, suppress_small)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of a zerax array (``Array([...], dtype=...)``) with NumPy's options.

    >>> import zerax.numpy as znp
    >>> znp.array_repr(znp.array([1.0, 2.5]), precision=1)
    'Array([1. , 2.5], dtype=float64)'
    """
    a = ensure_array(arr, "array_repr")
    with np.printoptions(**{k: v for k, v in (("linewidth", max_line_width),
                                               ("precision", precision),
                                               ("suppress", suppress_small))
                            if v is not None}):
        return repr(a)


def sort_complex(a):
    """``a`` sorted along its last axis by real part, then imaginary part, as complex
    numbers (NumPy's ``sort_complex``).

    >>> import zerax.numpy as znp
    >>> znp.sort_complex(znp.array([3.0, 1.0, 2.0]))
    Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex128)
    """
    a = ensure_array(a, "sort_complex")
    cdt = dtypes.result_type(a.dtype if dtype_kind(a.dtype) in "fc" else np.float64, np.complex64)
    return _so_sort(a.astype(cdt))
