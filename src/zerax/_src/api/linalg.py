"""The linear-algebra functions of `zerax.numpy.linalg` whose derivatives are custom
rules (`custom_jvp`, of this layer): ``det`` (its derivative the adjugate, exact also at
singular matrices), ``slogdet`` (beside ``det``: the same LU parts) and ``pinv`` (the
pseudo-inverse's own derivative).  The rest of ``numpy.linalg`` is ``numpy/linalg.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..numpy import linalg_ops as _lo
from ..numpy.linalg import (SlogdetResult, _abs, _c, _eps, _matrix_input, _mH, _mT,
                             _tolerance, svd)
from ..ops import decompositions as _dec
from ..ops import elementwise as _ew
from ..ops.misc import stop_gradient
from ..ops.reduce import cumprod, reduce_prod
from ..ops.reduce import reduce_max as _rmax
from ..ops.reduce import reduce_sum as _rsum
from ..ops.shape import concatenate
from .. import numpy as _jnp
from .custom import custom_jvp

__all__ = ["det", "pinv", "slogdet"]


def _lu_det_parts(a):
    """(diagonal of U, sign of the permutation) of ``a``'s LU decomposition."""
    lu_, piv, _ = _dec.lu(a)
    perm_sign = _lu_sign(piv, a.dtype)
    return _dec._diag(lu_), perm_sign


def _adjugate_from_lu(lu_, piv, perm):
    """``adj(a)`` (``det(a) * inv(a)`` where ``a`` is invertible) from ``a``'s LU
    factors, without a division, so it is exact for singular matrices too.

    ``P a = L U`` gives ``adj(a) = det(P) adj(U) L^-1 P``.  For upper triangular ``U``
    with diagonal ``d``, ``adj(U)_ij`` (i <= j) is a sum over the chains
    ``i = k0 < k1 < ... < km = j`` of ``(-1)^m U_k0k1 ... U_k(m-1)km`` times the product
    of ``d`` off the chain: with ``T = I + triu(U, 1) * Q``, ``Q_ik`` the product of
    ``d`` strictly between ``i`` and ``k``, that is ``(T^-1)_ij`` (a unit triangular
    solve) times the product of ``d`` outside ``[i, j]``.
    """
    n = lu_.shape[-1]
    nd = lu_.ndim
    d = _dec._diag(lu_)                                      # (..., n)
    ones = _jnp.ones_like(d[..., :1])
    # Q_ik = prod_{i < l < k} d_l: row i of M is d with its first i + 1 entries set to
    # 1, and Q its exclusive cumulative product along the row
    rows = _dec._row(d, n)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    m_ = _jnp.where(upper, rows, _c(d, 1))
    q = cumprod(concatenate([_jnp.ones_like(m_[..., :1]), m_[..., :-1]], nd - 1), nd - 1)
    eye = _dec._const_like(lu_, np.eye(n))
    t = _ew.add(_dec._masked(_ew.mul(lu_, q), upper.astype(lu_.dtype)), eye)
    y = _dec.triangular_solve(t, eye, left_side=True, lower=False, unit_diagonal=True)
    # prod_{l < i} d_l * prod_{l > j} d_l
    before = cumprod(concatenate([ones, d[..., :-1]], nd - 2), nd - 2)
    after = cumprod(concatenate([d[..., 1:], ones], nd - 2), nd - 2, reverse=True)
    adj_u = _ew.mul(y, _ew.mul(_dec._col(before, n), _dec._row(after, n)))
    # L^-1 P, P the rows of I in the order perm
    lp = _dec.triangular_solve(lu_, _dec._permute_rows(eye, perm), left_side=True,
                               lower=True, unit_diagonal=True)
    perm_sign = _lu_sign(piv, lu_.dtype)
    return _jnp.multiply(_jnp.expand_dims(perm_sign, (-2, -1)), _dec._mm(adj_u, lp))


def _lu_sign(piv, dtype):
    """The sign (+-1, of ``dtype``) of the permutation made by LU's row swaps ``piv``."""
    k = piv.shape[-1]
    moved = _jnp.not_equal(piv, np.arange(k, dtype=np.int32))
    swaps = _rsum(_ew.convert_element_type(moved, np.int64), (piv.ndim - 1,))
    odd = _ew.convert_element_type(_ew.rem(swaps, np.int64(2)), dtype)
    return _ew.sub(np.array(1, dtype), _ew.mul(np.array(2, dtype), odd))


def _det_value(a):
    d, sign = _lu_det_parts(a)
    return _ew.mul(sign, reduce_prod(d, (d.ndim - 1,)))


def _det_of_jvp(primals, tangents):
    # d det(a) = tr(adj(a) da) = sum(adj(a)^T * da): the adjugate is finite (and exact)
    # at singular matrices too, where det(a) * inv(a) is not
    (a, y), (da, _) = primals, tangents
    y = _det_of(a, y)       # differentiable in a again: derivatives of any order
    if a.shape[-1] == 0:
        return y, _jnp.zeros_like(y)
    lu_, piv, perm = _dec.lu(a)
    adj = _adjugate_from_lu(lu_, piv, perm)
    return y, _rsum(_ew.mul(_mT(adj), da), (a.ndim - 2, a.ndim - 1))


def _make_det_of():
    # det_of(a, y) is y, the determinant of a, with its derivative from a's tangent
    f = custom_jvp(lambda a, y: y)
    f.defjvp(_det_of_jvp)
    return f


_det_of = _make_det_of()


def det(a):
    """The determinant of (stacks of) square matrices, from an LU decomposition.  Its
    derivative is the cofactor matrix (the transposed adjugate), finite and exact also
    at singular matrices (second derivatives: where ``a`` is invertible).

    >>> import zerax.numpy as znp
    >>> round(float(znp.linalg.det(znp.array([[1.0, 2.0], [3.0, 4.0]]))), 12)
    -2.0
    """
    a = _matrix_input(a, "det", complex_ok=True)
    # The LU runs on a without a derivative (at the top level of a jitted program, so on
    # the host); _det_of gives it its derivative
    return _det_of(a, _det_value(stop_gradient(a)))


def slogdet(a, *, method: str | None = None):
    """Sign and natural log of the absolute value of the determinant:
    ``SlogdetResult(sign, logabsdet)`` (sign 0 and logabsdet -inf for singular
    matrices).

    >>> import zerax.numpy as znp
    >>> sign, logdet = znp.linalg.slogdet(znp.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> float(sign), round(float(logdet), 6)
    (-1.0, 1.791759)
    """
    if method not in (None, "lu"):
        raise errors.NotSupportedError(
            f"zerax.numpy.linalg.slogdet: method={method!r} is not supported; use 'lu'")
    a = _matrix_input(a, "slogdet", complex_ok=True)
    d, sign = _lu_det_parts(a)
    last = (d.ndim - 1,)
    sign = _ew.mul(sign, reduce_prod(_ew.sign(d), last))
    return SlogdetResult(sign, _rsum(_ew.log(_abs(d)), last))


def _pinv_svd(x, rtol, hermitian):
    """``pinv(x)``; ``rtol`` of a shape that broadcasts to ``x``'s batch dimensions."""
    u, s, vh = svd(x, full_matrices=False, hermitian=hermitian)
    if s.shape[-1]:
        top = _jnp.expand_dims(_rmax(s, (s.ndim - 1,)), -1)              # (..., 1)
        keep = _jnp.greater(s, _jnp.multiply(top, _jnp.expand_dims(rtol, -1)))
    else:
        keep = _jnp.greater(s, _c(s, 0))
    s_inv = _jnp.where(keep, _ew.div(_c(s, 1), _jnp.where(keep, s, _c(s, 1))), _c(s, 0))
    return _lo.matmul(_jnp.multiply(_mH(vh), _jnp.expand_dims(s_inv, -2)), _mH(u))


def _pinv_of_jvp(primals, tangents):
    (x, p), (dx, _) = primals, tangents
    p = _pinv_of(x, p)      # differentiable in x again: derivatives of any order
    mm = _lo.matmul
    pdp = mm(mm(p, dx), p)
    # d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+
    dxt = _mH(dx)
    left = mm(mm(p, _mH(p)), _ew.sub(dxt, mm(mm(dxt, x), p)))
    right = mm(_ew.sub(dxt, mm(mm(p, x), dxt)), mm(_mH(p), p))
    return p, _ew.add(_ew.neg(pdp), _ew.add(left, right))


def _make_pinv_of():
    # pinv_of(x, p) is p, the pseudo-inverse of x, with d(p) from x's tangent alone
    f = custom_jvp(lambda x, p: p)
    f.defjvp(_pinv_of_jvp)
    return f


_pinv_of = _make_pinv_of()


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse, by SVD: singular values at most ``rtol`` times
    the largest (default ``10 * max(M, N) * eps``) are treated as zero.  Its derivative
    is the pseudo-inverse's own (finite also where singular values repeat).

    >>> import zerax.numpy as znp
    >>> znp.linalg.pinv(znp.array([[2.0, 0.0], [0.0, 0.0]]))
    Array([[0.5, 0. ],
           [0. , 0. ]], dtype=float64)
    """
    x = _matrix_input(a, "pinv", square=False, complex_ok=True)
    if rcond is not None:
        if rtol is not None:
            raise errors.ZeraxValueError(
                "zerax.numpy.linalg.pinv: rtol and rcond were both given; pass only rtol "
                "(rcond is its older name).")
        rtol = rcond
    if rtol is None:
        rtol = 10.0 * max(x.shape[-2:]) * _eps(x)
    rtol = _tolerance(rtol, x, "pinv", "rtol")
    # The SVD runs on x without a derivative (at the top level of a jitted program, so on
    # the host); _pinv_of then gives the result the pseudo-inverse's own derivative,
    # which needs only x and pinv(x).  (With the SVD inside a custom_jvp, jit would
    # compile it into a kernel, where there is no SVD.)
    return _pinv_of(x, _pinv_svd(stop_gradient(x), rtol, hermitian))
