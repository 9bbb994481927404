"""Matrix decompositions: ``cholesky``, ``triangular_solve``, ``lu``, ``qr``, ``eigh``, ``svd``.

Each primitive takes stacks of matrices (any number of leading batch dimensions) and
follows ``jax.lax.linalg``: ``cholesky(a)`` reads the lower triangle of ``a`` and gives
NaNs where ``a`` is not positive definite; ``triangular_solve(a, b)`` reads one triangle
of ``a`` (``lower``), and is linear in ``b``; ``lu(a)`` (partial pivoting) gives
``(lu, pivots, permutation)`` with ``a[..., permutation, :] == L @ U``; ``qr(a)``
gives ``(q, r)``; ``eigh(a)`` reads one triangle and gives ``(v, w)``, eigenvalues
ascending; ``svd(a)`` gives ``(u, s, vt)`` (only ``s`` without ``compute_uv``),
singular values descending (the primitive ``svd_p`` itself outputs ``[s, u, vt]``,
``[s]`` without ``compute_uv``).

NumPy implementations: LAPACK through ``numpy.linalg`` for cholesky, qr, eigh and svd;
LU and the triangular solve (which NumPy lacks) are written here, vectorised over the
batch with a Python loop over columns.  JVP rules are the standard formulas, written
with these primitives and ``dot_general`` (so they are themselves differentiable):

* cholesky: ``dL = L Phi(L^-1 dA L^-T)``, ``Phi`` the lower triangle, diagonal halved;
* triangular_solve: ``dx = op(A)^-1 (db - op(dA) x)`` (or on the right);
* lu: ``X = L^-1 P dA U^-1``, ``dL = L tril(X, -1)``, ``dU = triu(X) U`` (and the
  rectangular blocks beside them);
* qr (m >= n): ``C = Q^T dA R^-1``, ``Omega = tril(C, -1) - tril(C, -1)^T``,
  ``dQ = Q Omega + (dA R^-1 - Q C)``, ``dR = (C - Omega) R``;
* eigh: ``dw = diag(V^H dA V)``, ``dV = V (F o V^H dA V)``, ``F_ij = 1 / (w_j - w_i)``;
* svd (thin): ``dP = U^H dA V``, ``ds = re diag(dP)``, ``dU = U (F o (dP S + S dP^H)) +
  (I - U U^H) dA V S^-1``, ``dV`` likewise with ``F_ij = 1 / (s_j^2 - s_i^2)``; for
  complex matrices also ``U ((dP - dP^H) / 2 o S^-1)`` in ``dU`` (JAX's phase choice).

``eigh`` (of Hermitian matrices) and ``svd`` take complex matrices too (JAX's rules
above, ``^H`` the conjugate transpose; eigenvalues and singular values are real); the
other decompositions take real ones.

Derivatives are undefined where eigenvalues or singular values repeat (as in JAX).
Batching moves the batch dimension to the front.  Under ``jit``, a decomposition at
the top level of a program runs this NumPy implementation on the host between the
compiled kernels (``backends/lowering/``'s host steps).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.api_util import as_input
from ..core.core import Primitive, ShapedArray, bind, get_aval
from .elementwise import add, conj, convert_element_type, div, eq, mul, neg, real, sub
from .indexing import take_along_axis
from .linalg import dot_general
from .reduce import reduce_sum
from .shape import broadcast_in_dim, concatenate, slice_p_bind, transpose
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, bdim_at_front
from ..base.dtypes import kind as dtype_kind

cholesky_p = Primitive("cholesky")
triangular_solve_p = Primitive("triangular_solve")
lu_p = Primitive("lu", multiple_results=True)
qr_p = Primitive("qr", multiple_results=True)
eigh_p = Primitive("eigh", multiple_results=True)
svd_p = Primitive("svd", multiple_results=True)


# --------------------------------------------------------------------------- checks


def _check_matrix(name, aval, square=True, complex_ok=False):
    shape = tuple(aval.shape)
    if len(shape) < 2:
        raise errors.ShapeError(
            f"{name}: needs a matrix (or a stack of matrices) in the last two axes, got an "
            f"array of shape {shape}; reshape it to (..., m, n).")
    if square and shape[-1] != shape[-2]:
        raise errors.ShapeError(
            f"{name}: needs square matrices in the last two axes, got shape {shape}.")
    dt = np.dtype(aval.dtype)
    if dt.kind == "c" and not complex_ok:
        raise errors.NotSupportedError(f"{name}: complex inputs are not supported yet")
    if dtype_kind(dt) not in "fc":
        raise errors.ZeraxTypeError(
            f"{name}: needs a floating-point array, got {dt.name} (zerax.numpy.linalg "
            "converts integers to float64; with zerax.lax, convert first).")
    return shape


def _as_operand(x, name):
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = as_input(x, f"{name} operand")
    get_aval(x)
    return x


# --------------------------------------------------------------------------- helpers
# Small matrix helpers on zerax values, used by the JVP rules (so the rules are
# themselves differentiable, batchable and jittable).


def _mT(x):
    nd = len(x.shape)
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _is_complex(x):
    return np.dtype(x.dtype).kind == "c"


def _mH(x):
    """The conjugate transpose of the last two axes (the transpose of real ``x``)."""
    return _mT(conj(x)) if _is_complex(x) else _mT(x)


def _real_dtype(dtype):
    """The dtype of the real and imaginary parts of ``dtype`` (``dtype`` if real)."""
    return np.finfo(dtype).dtype


def _as_dtype_of(x, like):
    """``x`` converted to ``like``'s dtype (a real ``x`` to a complex one)."""
    if np.dtype(x.dtype) == np.dtype(like.dtype):
        return x
    return convert_element_type(x, np.dtype(like.dtype))


def _mm(a, b):
    """``a @ b`` for stacks with the same leading batch dimensions."""
    nd = len(a.shape)
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const_like(x, value):
    """A constant broadcast to ``x``'s shape (its last two axes for a 2-d ``value``)."""
    value = np.asarray(value, dtype=x.dtype)
    nd = len(x.shape)
    return broadcast_in_dim(value, tuple(x.shape), tuple(range(nd - value.ndim, nd)))


def _masked(x, mask):
    return mul(x, _const_like(x, mask))


def _tri(x, k=0, lower=True):
    """``tril(x, k)`` (or ``triu(x, k)``) on the last two axes."""
    m, n = x.shape[-2:]
    mask = np.tri(m, n, k) if lower else 1.0 - np.tri(m, n, k - 1)
    return _masked(x, mask)


def _diag(x):
    """The diagonals of square matrices ``(..., n, n) -> (..., n)``."""
    n = x.shape[-1]
    return reduce_sum(_masked(x, np.eye(n)), (len(x.shape) - 1,))


def _row(v, n_rows):
    """``v`` of shape (..., n) repeated as the rows of (..., n_rows, n)."""
    nd = len(v.shape)
    shape = tuple(v.shape[:-1]) + (n_rows, v.shape[-1])
    return broadcast_in_dim(v, shape, tuple(range(nd - 1)) + (nd,))


def _col(v, n_cols):
    """``v`` of shape (..., n) repeated as the columns of (..., n, n_cols)."""
    nd = len(v.shape)
    shape = tuple(v.shape) + (n_cols,)
    return broadcast_in_dim(v, shape, tuple(range(nd)))


def _safe_reciprocal(s):
    """``1 / s`` where ``s`` is nonzero, 0 where it is zero."""
    one = _const_like(s, 1.0)
    zero = _const_like(s, 0.0)
    is_zero = convert_element_type(eq(s, zero), np.dtype(s.dtype))
    return sub(div(one, add(s, is_zero)), is_zero)


def _diag_embed(v):
    n = v.shape[-1]
    return _masked(_row(v, n), np.eye(n))


def _pairwise_inverse(w):
    """``F`` with ``F_ij = 1 / (w_j - w_i)`` off the diagonal and 0 on it."""
    n = w.shape[-1]
    eye = _const_like(_row(w, n), np.eye(n))
    diff = add(sub(_row(w, n), _col(w, n)), eye)
    return div(_const_like(diff, 1.0 - np.eye(n)), diff)


def _sym_from(x, lower):
    """The symmetric (complex: Hermitian) matrix made of the lower (or upper) triangle
    of ``x``, as LAPACK reads it: of a complex diagonal only the real part counts."""
    if _is_complex(x):
        off = _tri(x, -1 if lower else 1, lower)
        d = _masked(x, np.eye(x.shape[-1]))
        diag = mul(add(d, conj(d)), np.array(0.5, x.dtype))
        return add(add(off, _mH(off)), diag)
    t = _tri(x, 0, lower)
    return add(t, _mT(_tri(x, -1 if lower else 1, lower)))


def _slice_last2(x, rows, cols):
    nd = len(x.shape)
    starts = [0] * (nd - 2) + [rows[0], cols[0]]
    limits = list(x.shape[:-2]) + [rows[1], cols[1]]
    return slice_p_bind(x, starts, limits)


def _zero_of(x):
    return Zero(ShapedArray(tuple(x.shape), np.dtype(x.dtype)))


# --------------------------------------------------------------------------- host helpers


def _stack(a, core):
    """``a`` as a (batch, m, n) C array."""
    batch = int(np.prod(a.shape[:-core], dtype=np.int64))
    return np.ascontiguousarray(a).reshape((batch,) + tuple(a.shape[-core:]))


def _nan_fallback(fn, a, outs_like):
    """``fn`` per matrix, NaNs for those LAPACK fails on (as JAX gives), when ``fn`` on the
    whole stack raised LinAlgError.  ``outs_like``: [(trailing shape, dtype)]."""
    batch = a.shape[:-2]
    flat = _stack(a, 2)
    outs = [np.full((flat.shape[0],) + s, np.nan, d) for s, d in outs_like]
    for i in range(flat.shape[0]):
        try:
            res = fn(flat[i])
        except np.linalg.LinAlgError:
            continue
        res = res if isinstance(res, tuple) else (res,)
        for o, r in zip(outs, res):
            o[i] = r
    return [o.reshape(batch + o.shape[1:]) for o in outs]


# --------------------------------------------------------------------------- cholesky


def cholesky(x, *, symmetrize_input: bool = True):
    """JAX's ``lax.linalg.cholesky``: the lower Cholesky factor ``L`` of symmetric
    positive-definite (complex: Hermitian) matrices (``L @ L^H == x``); NaNs where ``x``
    is not positive definite.  With ``symmetrize_input``, ``(x + x^H) / 2`` is factored;
    otherwise only the lower triangle of ``x`` is read.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float64)
    """
    x = _as_operand(x, "cholesky")
    _check_matrix("cholesky", x, complex_ok=True)
    if symmetrize_input:
        x = mul(add(x, _mH(x)), np.array(0.5, x.dtype))
    return bind(cholesky_p, x)


def _cholesky_impl(a):
    with np.errstate(all="ignore"):
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            n = a.shape[-1]
            return _nan_fallback(np.linalg.cholesky, a, [((n, n), a.dtype)])[0]


def _cholesky_abstract(a):
    _check_matrix("cholesky", a, complex_ok=True)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    L = bind(cholesky_p, a)
    if type(a_dot) is Zero:
        return L, _zero_of(L)
    # dL = L Phi(L^-1 dA L^-H), linear in dA (complex: JAX's rule, jacfwd(holomorphic))
    y = triangular_solve(L, _sym_from(a_dot, True), left_side=True, lower=True)
    z = triangular_solve(L, y, left_side=False, lower=True, transpose_a=True,
                         conjugate_a=_is_complex(L))
    n = a.shape[-1]
    phi = _masked(z, np.tril(np.ones((n, n))) - 0.5 * np.eye(n))
    return L, _mm(L, phi)


cholesky_p.impl = _cholesky_impl
cholesky_p.abstract_eval = _cholesky_abstract
jvp_rules[cholesky_p] = _cholesky_jvp
cholesky_p.unsupported["transpose"] = "cholesky is not linear"


# --------------------------------------------------------------------------- triangular solve


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """JAX's ``lax.linalg.triangular_solve``: ``x`` with ``op(a) @ x == b``
    (``left_side``) or ``x @ op(a) == b``, ``op(a)`` being ``a`` or ``a.T``
    (``transpose_a``).  Only the ``lower`` (or upper) triangle of ``a`` is read, and
    not its diagonal with ``unit_diagonal``.  Leading batch dimensions broadcast.

    >>> import numpy as np, zerax.lax as lax
    >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> lax.linalg.triangular_solve(a, np.array([[2.0], [3.0]]), left_side=True, lower=True)
    Array([[1.],
           [2.]], dtype=float64)
    """
    a, b = _as_operand(a, "triangular_solve"), _as_operand(b, "triangular_solve")
    _check_matrix("triangular_solve", a, complex_ok=True)
    _check_matrix("triangular_solve", b, square=False, complex_ok=True)
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise errors.ZeraxTypeError(
            f"triangular_solve: a and b must have one dtype, got {np.dtype(a.dtype).name} "
            f"and {np.dtype(b.dtype).name}; convert one of them first.")
    try:
        batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise errors.ShapeError(
            f"triangular_solve: the batch dimensions of a {tuple(a.shape)} and b "
            f"{tuple(b.shape)} do not broadcast.") from None
    def to_batch(x):
        shape = batch + tuple(x.shape[-2:])
        if tuple(x.shape) == shape:
            return x
        return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(x.shape), len(shape))))

    a, b = to_batch(a), to_batch(b)
    params = {"left_side": bool(left_side), "lower": bool(lower),
              "transpose_a": bool(transpose_a), "unit_diagonal": bool(unit_diagonal),
              "conjugate_a": bool(conjugate_a) and _is_complex(a)}
    _triangular_solve_abstract(a, b, **params)   # (the eager path skips the shape rule)
    return bind(triangular_solve_p, a, b, **params)


def _substitute(t, b, lower):
    """``t^-1 b`` for (stacks of) triangular ``t``, one row of ``x`` at a time."""
    m = t.shape[-1]
    x = np.empty(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    order = range(m) if lower else range(m - 1, -1, -1)
    for i in order:
        done = slice(0, i) if lower else slice(i + 1, m)
        acc = b[..., i, :]
        if (done.stop - done.start) > 0:
            acc = acc - np.matmul(t[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def _triangle(a, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return t


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal,
                           conjugate_a=False):
    t = _triangle(a, lower, unit_diagonal)
    if conjugate_a:
        t = np.conj(t)
    if not left_side:       # x op(t) = b  <=>  op(t)^T x^T = b^T
        b, transpose_a = np.swapaxes(b, -1, -2), not transpose_a
    if transpose_a:
        t, lower = np.swapaxes(t, -1, -2), not lower
    with np.errstate(all="ignore"):
        x = _substitute(t, b, lower)
    return x if left_side else np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _triangular_solve_abstract(a, b, *, left_side, lower, transpose_a, unit_diagonal,
                               conjugate_a=False):
    _check_matrix("triangular_solve", a, complex_ok=True)
    _check_matrix("triangular_solve", b, square=False, complex_ok=True)
    m = a.shape[-1]
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != m or tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        side = "rows" if left_side else "columns"
        raise errors.ShapeError(
            f"triangular_solve: b of shape {tuple(b.shape)} must have {m} {side} to match a "
            f"of shape {tuple(a.shape)} (left_side={left_side}), and the same batch "
            "dimensions.")
    if a.dtype != b.dtype:
        raise errors.ZeraxTypeError(
            f"triangular_solve: a and b must have one dtype, got {a.dtype.name} and "
            f"{b.dtype.name}")
    return ShapedArray(b.shape, b.dtype)


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    a_dot, b_dot = tangents
    x = bind(triangular_solve_p, a, b, **params)
    if type(a_dot) is Zero and type(b_dot) is Zero:
        return x, _zero_of(x)
    rhs = None if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        lower, unit = params["lower"], params["unit_diagonal"]
        da = _tri(a_dot, (-1 if lower else 1) if unit else 0, lower)
        if params.get("conjugate_a"):
            da = conj(da)
        op = _mT(da) if params["transpose_a"] else da
        term = _mm(op, x) if params["left_side"] else _mm(x, op)
        rhs = neg(term) if rhs is None else sub(rhs, term)
    return x, bind(triangular_solve_p, a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, **params):
    if is_undefined(a):
        raise errors.ZeraxInternalError(
            "triangular_solve transposed in its matrix: it is linear only in b")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    p = dict(params, transpose_a=not params["transpose_a"])
    return [None, bind(triangular_solve_p, a, ct, **p)]


triangular_solve_p.impl = _triangular_solve_impl
triangular_solve_p.abstract_eval = _triangular_solve_abstract
jvp_rules[triangular_solve_p] = _triangular_solve_jvp
transpose_rules[triangular_solve_p] = _triangular_solve_transpose


# --------------------------------------------------------------------------- lu


def lu(x):
    """JAX's ``lax.linalg.lu``: LU decomposition with partial pivoting of (stacks of)
    ``m x n`` matrices.  Returns ``(lu, pivots, permutation)``: ``lu`` holds ``L``
    (unit diagonal, not stored) below the diagonal and ``U`` on and above it; row ``i``
    was swapped with row ``pivots[i]`` (int32) at step ``i``; ``x[permutation] == L @ U``.

    >>> import numpy as np, zerax.lax as lax
    >>> lu, piv, perm = lax.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu
    Array([[3.        , 4.        ],
           [0.33333333, 0.66666667]], dtype=float64)
    >>> piv, perm
    (Array([1, 1], dtype=int32), Array([1, 0], dtype=int32))
    """
    x = _as_operand(x, "lu")
    _check_matrix("lu", x, square=False, complex_ok=True)
    return tuple(bind(lu_p, x))


def _lu_impl(a):
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    w = np.array(_stack(a, 2), copy=True)
    nb = w.shape[0]
    perm = np.tile(np.arange(m, dtype=np.int32), (nb, 1))
    piv = np.empty((nb, k), np.int32)
    rows = np.arange(nb)
    with np.errstate(all="ignore"):
        for j in range(k):
            p = j + np.argmax(np.abs(w[:, j:, j]), axis=1)
            piv[:, j] = p
            w[rows, j], w[rows, p] = w[rows, p], w[rows, j].copy()
            perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
            d = w[:, j, j]
            # a zero pivot means a zero column below it: left as it is (as LAPACK does)
            w[:, j + 1:, j] /= np.where(d == 0, np.ones_like(d), d)[:, None]
            w[:, j + 1:, j + 1:] -= w[:, j + 1:, j, None] * w[:, j, None, j + 1:]
    return [w.reshape(a.shape), piv.reshape(batch + (k,)), perm.reshape(batch + (m,))]


def _lu_abstract(a):
    shape = _check_matrix("lu", a, square=False, complex_ok=True)
    m, n = shape[-2:]
    batch = shape[:-2]
    return [ShapedArray(shape, a.dtype), ShapedArray(batch + (min(m, n),), np.int32),
            ShapedArray(batch + (m,), np.int32)]


def _permute_rows(x, perm):
    """``x[..., perm, :]`` for a batched permutation ``perm`` of shape (..., m)."""
    nd = len(x.shape)
    idx = broadcast_in_dim(perm, tuple(x.shape), tuple(range(nd - 1)))
    return take_along_axis(x, idx, nd - 2)


def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu_, piv, perm = bind(lu_p, a)
    int_zeros = [_zero_of(piv), _zero_of(perm)]
    if type(a_dot) is Zero:
        return [lu_, piv, perm], [_zero_of(lu_)] + int_zeros
    m, n = a.shape[-2:]
    k = min(m, n)
    pa = _permute_rows(a_dot, perm)
    sq = _slice_last2(lu_, (0, k), (0, k))            # L1 (unit lower) and U1, packed
    pa1 = _slice_last2(pa, (0, k), (0, k))
    y = triangular_solve(sq, pa1, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(sq, y, left_side=False, lower=False)
    l1 = add(_tri(sq, -1), _const_like(sq, np.eye(k)))
    u1 = _tri(sq, 0, lower=False)
    dl1 = _mm(l1, _tri(x, -1))
    du1 = _mm(_tri(x, 0, lower=False), u1)
    top = add(dl1, du1)
    if m > n:   # L2 below: A2 = L2 U  =>  dL2 = (dA2 - L2 dU) U^-1
        l2 = _slice_last2(lu_, (k, m), (0, k))
        pa2 = _slice_last2(pa, (k, m), (0, k))
        dl2 = triangular_solve(sq, sub(pa2, _mm(l2, du1)), left_side=False, lower=False)
        return [lu_, piv, perm], [concatenate([top, dl2], len(a.shape) - 2)] + int_zeros
    if n > m:   # U2 beside: A2 = L U2  =>  dU2 = L^-1 (dA2 - dL U2)
        u2 = _slice_last2(lu_, (0, k), (k, n))
        pa2 = _slice_last2(pa, (0, k), (k, n))
        du2 = triangular_solve(sq, sub(pa2, _mm(dl1, u2)), left_side=True, lower=True,
                               unit_diagonal=True)
        return [lu_, piv, perm], [concatenate([top, du2], len(a.shape) - 1)] + int_zeros
    return [lu_, piv, perm], [top] + int_zeros


lu_p.impl = _lu_impl
lu_p.abstract_eval = _lu_abstract
jvp_rules[lu_p] = _lu_jvp
lu_p.unsupported["transpose"] = "lu is not linear"


# --------------------------------------------------------------------------- qr


def qr(x, *, pivoting: bool = False, full_matrices: bool = True):
    """JAX's ``lax.linalg.qr``: ``(q, r)`` with ``q`` orthonormal and ``r`` upper
    triangular, ``q @ r == x``; ``full_matrices=False`` gives the reduced factors
    (``q``: m x k, ``r``: k x n, k = min(m, n)).

    >>> import numpy as np, zerax.lax as lax
    >>> q, r = lax.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.allclose(np.asarray(q) @ np.asarray(r), [[3.0, 1.0], [4.0, 2.0]])
    True
    """
    if pivoting:
        raise errors.NotSupportedError("lax.linalg.qr: pivoting=True is not supported")
    x = _as_operand(x, "qr")
    _check_matrix("qr", x, square=False, complex_ok=True)
    return tuple(bind(qr_p, x, full_matrices=bool(full_matrices)))


def _qr_impl(a, *, full_matrices):
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if full_matrices else min(m, n)
        batch = a.shape[:-2]
        q = np.zeros(batch + (m, k), a.dtype)
        idx = np.arange(min(m, k))
        q[..., idx, idx] = 1
        return [q, np.zeros(batch + (k, n), a.dtype)]
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


def _qr_abstract(a, *, full_matrices):
    shape = _check_matrix("qr", a, square=False, complex_ok=True)
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    return [ShapedArray(shape[:-2] + (m, k), a.dtype), ShapedArray(shape[:-2] + (k, n), a.dtype)]


def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (a_dot,) = primals, tangents
    q, r = bind(qr_p, a, full_matrices=full_matrices)
    if type(a_dot) is Zero:
        return [q, r], [_zero_of(q), _zero_of(r)]
    m, n = a.shape[-2:]
    if m < n or (full_matrices and m != n):
        raise errors.NotSupportedError(
            f"the derivative of qr is defined here for square or tall matrices with reduced "
            f"factors only, got shape {tuple(a.shape)} with full_matrices={full_matrices}; "
            "use mode='reduced' (zerax.numpy.linalg.qr) on an m x n matrix with m >= n.")
    dar = triangular_solve(r, a_dot, left_side=False, lower=False)      # dA R^-1
    c = _mm(_mH(q), dar)
    cl = _tri(c, -1)
    omega = sub(cl, _mH(cl))
    if _is_complex(c):
        # (JAX's correction for complex inputs: R's diagonal stays real, so Q^H dQ
        # takes the imaginary part of C's diagonal)
        d = _masked(c, np.eye(c.shape[-1]))
        omega = add(omega, mul(sub(d, conj(d)), np.array(0.5, c.dtype)))
    dr = _mm(sub(c, omega), r)
    dq = _mm(q, omega)
    if m > n:
        dq = add(dq, sub(dar, _mm(q, c)))
    return [q, r], [dq, dr]


qr_p.impl = _qr_impl
qr_p.abstract_eval = _qr_abstract
jvp_rules[qr_p] = _qr_jvp
qr_p.unsupported["transpose"] = "qr is not linear"


# --------------------------------------------------------------------------- eigh


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None):
    """JAX's ``lax.linalg.eigh``: ``(v, w)``, the eigenvectors (columns of ``v``) and
    eigenvalues (ascending) of symmetric real or Hermitian complex matrices.  With
    ``symmetrize_input``, ``(x + x^H) / 2`` is decomposed; otherwise only the ``lower``
    (or upper) triangle is read (of a complex diagonal, only the real part).  The
    eigenvalues are real (float32 for complex64, float64 for complex128).

    >>> import numpy as np, zerax.lax as lax
    >>> v, w = lax.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float64)
    """
    if subset_by_index is not None:
        raise errors.NotSupportedError("lax.linalg.eigh: subset_by_index is not supported")
    if not sort_eigenvalues:
        raise errors.NotSupportedError(
            "lax.linalg.eigh: eigenvalues are always sorted (sort_eigenvalues=False is not "
            "supported)")
    x = _as_operand(x, "eigh")
    _check_matrix("eigh", x, complex_ok=True)
    if symmetrize_input:
        x = mul(add(x, _mH(x)), np.array(0.5, x.dtype))
    return tuple(bind(eigh_p, x, lower=bool(lower)))


def _eigh_impl(a, *, lower):
    uplo = "L" if lower else "U"
    n = a.shape[-1]
    try:
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return [v, w]
    except np.linalg.LinAlgError:
        v, w = _nan_fallback(lambda m: np.linalg.eigh(m, UPLO=uplo)[::-1], a,
                             [((n, n), a.dtype), ((n,), _real_dtype(a.dtype))])
        return [v, w]


def _eigh_abstract(a, *, lower):
    shape = _check_matrix("eigh", a, complex_ok=True)
    return [ShapedArray(shape, a.dtype), ShapedArray(shape[:-1], _real_dtype(a.dtype))]


def _eigh_jvp(primals, tangents, *, lower):
    (a,), (a_dot,) = primals, tangents
    v, w = bind(eigh_p, a, lower=lower)
    if type(a_dot) is Zero:
        return [v, w], [_zero_of(v), _zero_of(w)]
    # JAX's rule, complex too: V^H dA V is Hermitian, its (real) diagonal is dw; dv has
    # no component along each eigenvector itself (diag(V^H dv) = 0: the phase is fixed).
    vdv = _mm(_mH(v), _mm(_sym_from(a_dot, lower), v))
    dw = _diag(vdv)
    if _is_complex(vdv):
        dw = real(dw)
    dv = _mm(v, mul(_as_dtype_of(_pairwise_inverse(w), vdv), vdv))
    return [v, w], [dv, dw]


eigh_p.impl = _eigh_impl
eigh_p.abstract_eval = _eigh_abstract
jvp_rules[eigh_p] = _eigh_jvp
eigh_p.unsupported["transpose"] = "eigh is not linear"


# --------------------------------------------------------------------------- svd


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """JAX's ``lax.linalg.svd``: ``(u, s, vh)`` with ``x == u @ diag(s) @ vh`` and the
    singular values ``s`` descending; only ``s`` without ``compute_uv``.  Complex ``x``
    has complex ``u`` and ``vh`` and real ``s`` (float32 for complex64).

    >>> import numpy as np, zerax.lax as lax
    >>> lax.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    Array([4., 3.], dtype=float64)
    """
    if subset_by_index is not None:
        raise errors.NotSupportedError("lax.linalg.svd: subset_by_index is not supported")
    x = _as_operand(x, "svd")
    _check_matrix("svd", x, square=False, complex_ok=True)
    outs = bind(svd_p, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def _svd_impl(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    rdt = _real_dtype(a.dtype)
    if a.size == 0:
        batch = a.shape[:-2]
        outs = [np.zeros(batch + (k,), rdt)]
        if compute_uv:
            mu, nv = (m, n) if full_matrices else (k, k)
            outs += [np.broadcast_to(np.eye(m, mu, dtype=a.dtype), batch + (m, mu)).copy(),
                     np.broadcast_to(np.eye(nv, n, dtype=a.dtype), batch + (nv, n)).copy()]
        return outs
    try:
        if not compute_uv:
            return [np.linalg.svd(a, compute_uv=False)]
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
        return [s, u, vt]
    except np.linalg.LinAlgError:
        if not compute_uv:
            return _nan_fallback(lambda x: np.linalg.svd(x, compute_uv=False), a,
                                 [((k,), rdt)])
        mu, nv = (m, n) if full_matrices else (k, k)

        def one(x):
            u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
            return s, u, vt
        return _nan_fallback(one, a, [((k,), rdt), ((m, mu), a.dtype), ((nv, n), a.dtype)])


def _svd_abstract(a, *, full_matrices, compute_uv):
    shape = _check_matrix("svd", a, square=False, complex_ok=True)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    outs = [ShapedArray(batch + (k,), _real_dtype(a.dtype))]
    if compute_uv:
        mu, nv = (m, n) if full_matrices else (k, k)
        outs += [ShapedArray(batch + (m, mu), a.dtype), ShapedArray(batch + (nv, n), a.dtype)]
    return outs


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (a_dot,) = primals, tangents
    if type(a_dot) is Zero:
        outs = bind(svd_p, a, full_matrices=full_matrices, compute_uv=compute_uv)
        return outs, [_zero_of(o) for o in outs]
    m, n = a.shape[-2:]
    k = min(m, n)
    if compute_uv and full_matrices and m != n:
        raise errors.NotSupportedError(
            f"the derivative of svd with full_matrices=True is not defined for non-square "
            f"matrices (shape {tuple(a.shape)}): the extra singular vectors are not unique. "
            "Use full_matrices=False.")
    # the thin factors (the full ones when square)
    s, u, vt = bind(svd_p, a, full_matrices=False, compute_uv=True)
    outs = [s, u, vt] if compute_uv else [s]
    cplx = _is_complex(a)
    v = _mH(vt)
    dp = _mm(_mH(u), _mm(a_dot, v))
    ds = real(_diag(dp)) if cplx else _diag(dp)
    if not compute_uv:
        return outs, [ds]
    # (JAX's rule; ^H is ^T for real matrices)
    f = _as_dtype_of(_pairwise_inverse(mul(s, s)), a)
    sc = _as_dtype_of(s, a)
    sm = _diag_embed(sc)
    du = _mm(u, mul(f, add(_mm(dp, sm), _mm(sm, _mH(dp)))))
    dv = _mm(v, mul(f, add(_mm(sm, dp), _mm(_mH(dp), sm))))
    if cplx:
        # the imaginary diagonal of U^H dA V: a phase change of the singular vector
        # pairs, given to U (V's columns keep their phase), (dP - dP^H)/2 S^-1 on the
        # diagonal; zero where s is zero
        nz = _diag_embed(_as_dtype_of(_safe_reciprocal(s), a))
        du = add(du, _mm(u, mul(mul(sub(dp, _mH(dp)), np.array(0.5, a.dtype)), nz)))
    if m > k:   # (I - U U^H) dA V S^-1
        du = add(du, div(sub(_mm(a_dot, v), _mm(u, dp)), _row(sc, m)))
    if n > k:   # (I - V V^H) dA^H U S^-1
        dv = add(dv, div(sub(_mm(_mH(a_dot), u), _mm(v, _mH(dp))), _row(sc, n)))
    return outs, [ds, du, _mH(dv)]


svd_p.impl = _svd_impl
svd_p.abstract_eval = _svd_abstract
jvp_rules[svd_p] = _svd_jvp
svd_p.unsupported["transpose"] = "svd is not linear"


# --------------------------------------------------------------------------- batching


def _batch_at_front(prim):
    """Every operand's batch dimension moved to the front (unmapped ones broadcast):
    each primitive takes stacks of matrices already."""

    def rule(args, dims, **params):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        args = [bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        out = bind(prim, *args, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    batch_rules[prim] = rule


for _p in (cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, svd_p):
    _batch_at_front(_p)


__all__ = [
    "cholesky",
    "cholesky_p",
    "eigh",
    "eigh_p",
    "lu",
    "lu_p",
    "qr",
    "qr_p",
    "svd",
    "svd_p",
    "triangular_solve",
    "triangular_solve_p",
]
