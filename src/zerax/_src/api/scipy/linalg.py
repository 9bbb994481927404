"""The decompositions and solvers of `zerax.scipy.linalg` (SciPy's ``scipy.linalg`` on
zerax values, JAX's signatures); the matrix functions are in ``matfuncs.py`` beside it.

Compositions of the decomposition primitives (``zerax.lax.linalg``) and of
``zerax.numpy.linalg``: differentiable, batched over leading dimensions, and usable
under ``vmap`` and ``jit``.  The ``overwrite_*`` and ``check_finite`` arguments are
accepted and ignored (zerax arrays are immutable; nothing is checked).

>>> import zerax.scipy.linalg as zsl
>>> zsl.solve_triangular(zsl.cholesky([[4.0, 2.0], [2.0, 5.0]], lower=True), [2.0, 3.0],
...                      lower=True)
Array([1., 1.], dtype=float64)
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ...core.core import Tracer
from ...ops import decompositions as _dec
from ...ops.shape import reshape as _reshape
from ... import numpy as _jnp
from ...numpy import linalg as _la
from ..linalg import det as _det

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "inv", "lu", "lu_factor",
           "lu_solve", "qr", "solve", "solve_triangular", "svd"]


def _trans(trans, fname):
    modes = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}
    try:
        return modes[trans]
    except (KeyError, TypeError):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.{fname}: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
            f"{trans!r}") from None


def _rhs(a, b, fname):
    """``a`` (square matrices) and ``b`` in one float dtype; ``b`` as (..., M, K), and
    whether it was one vector (M,)."""
    a, b, vector = _la._solve_operands(a, b, fname)
    if vector:
        b = _reshape(b, (b.shape[0], 1))
    return a, b, vector


def _unvector(x, vector):
    return _reshape(x, tuple(x.shape[:-1])) if vector else x


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """The solution ``x`` of ``op(a) @ x == b`` for triangular ``a`` (only its ``lower``
    or upper triangle is read; its diagonal is taken as ones with ``unit_diagonal``);
    ``op`` is the identity (``trans=0``) or the transpose (1, 2, 'T', 'C').

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.solve_triangular([[2.0, 1.0], [0.0, 4.0]], [4.0, 8.0])
    Array([1., 2.], dtype=float64)
    """
    a, b, vector = _rhs(a, b, "solve_triangular")
    x = _dec.triangular_solve(a, b, left_side=True, lower=bool(lower),
                              transpose_a=_trans(trans, "solve_triangular"),
                              unit_diagonal=bool(unit_diagonal))
    return _unvector(x, vector)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of symmetric positive-definite ``a``: upper ``U`` with
    ``U.T @ U == a`` (lower ``L``, ``L @ L.T == a``, with ``lower``).  Only the upper
    (``lower``: the lower) triangle of ``a`` is read, as in SciPy and JAX.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.cholesky([[4.0, 2.0], [2.0, 5.0]])
    Array([[2., 1.],
           [0., 2.]], dtype=float64)
    """
    x = _la._matrix_input(a, "cholesky")
    lower = bool(lower)
    c = _dec.cholesky(x if lower else _la._mT(x), symmetrize_input=False)
    return c if lower else _la._mT(c)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)``: the Cholesky factor of ``a`` (lower or upper triangular, zeros in
    the other triangle; only that triangle of ``a`` is read) for `cho_solve`.

    >>> import zerax.scipy.linalg as zsl
    >>> c, low = zsl.cho_factor([[4.0, 2.0], [2.0, 5.0]])
    >>> low
    False
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """The solution of ``a @ x == b`` from ``a``'s Cholesky factorisation
    ``(c, lower)`` (from `cho_factor`).

    >>> import zerax.scipy.linalg as zsl
    >>> a = [[4.0, 2.0], [2.0, 5.0]]
    >>> zsl.cho_solve(zsl.cho_factor(a), [6.0, 7.0])
    Array([1., 1.], dtype=float64)
    """
    c, lower = _factor_pair(c_and_lower, "cho_solve", "(c, lower)", "cho_factor")
    c, b, vector = _rhs(c, b, "cho_solve")
    # a = L L^T (lower) or U^T U: two triangular solves, the first with op = the one
    # that makes the factor lower triangular.
    y = _dec.triangular_solve(c, b, left_side=True, lower=bool(lower),
                              transpose_a=not lower)
    x = _dec.triangular_solve(c, y, left_side=True, lower=bool(lower), transpose_a=bool(lower))
    return _unvector(x, vector)


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """LU decomposition with partial pivoting of an ``M x N`` matrix (or a stack):
    ``(p, l, u)`` with ``a == p @ l @ u``, ``p`` a permutation matrix, ``l`` unit lower
    triangular (M x K), ``u`` upper triangular (K x N); ``(p @ l, u)`` with
    ``permute_l``.

    >>> import zerax.scipy.linalg as zsl
    >>> p, l, u = zsl.lu([[1.0, 2.0], [3.0, 4.0]])
    >>> p
    Array([[0., 1.],
           [1., 0.]], dtype=float64)
    """
    a = _la._matrix_input(a, "lu", square=False)
    lu_, _, perm = _dec.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    eye = np.eye(m, k, dtype=a.dtype)
    lower = _jnp.add(_jnp.tril(lu_[..., :, :k], -1), eye)
    upper = _jnp.triu(lu_[..., :k, :])
    # p[:, i] is e_perm[i]: p @ x moves row i of x to row perm[i]
    p = _jnp.asarray(_jnp.equal(_jnp.expand_dims(perm, -2),
                                _jnp.arange(m, dtype=np.int32)[:, None]), dtype=a.dtype)
    if permute_l:
        return _jnp.matmul(p, lower), upper
    return p, lower, upper


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: ``a``'s LU decomposition with partial pivoting, packed (``L``'s
    unit diagonal not stored), and the int32 pivot indices (row ``i`` was swapped with
    row ``piv[i]``), for `lu_solve`.

    >>> import zerax.scipy.linalg as zsl
    >>> lu, piv = zsl.lu_factor([[1.0, 2.0], [3.0, 4.0]])
    >>> piv
    Array([1, 1], dtype=int32)
    """
    lu_, piv, _ = _dec.lu(_la._matrix_input(a, "lu_factor", square=False))
    return lu_, piv


def _factor_pair(pair, fname, what, maker):
    """The two parts of a factorisation argument such as ``(lu, piv)``."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        got = (f"an array of shape {tuple(pair.shape)}" if hasattr(pair, "shape")
               else f"{type(pair).__name__}")
        raise errors.ZeraxTypeError(
            f"zerax.scipy.linalg.{fname}: the first argument must be the pair {what} that "
            f"{maker} returns, got {got}; call {fname}({maker}(a), b).")
    return pair


def _pivots_to_permutation(piv, m):
    """The row permutation ``perm`` (``a[perm] == L @ U``) made by applying the swaps
    ``piv`` in order to ``0..m-1``.  Pivots must be integers, ``m`` of them per matrix,
    each in ``[0, m)`` (checked where they are concrete)."""
    if not isinstance(piv, Tracer):
        raw = np.asarray(piv)
        if raw.dtype.kind not in "iu":
            raise errors.ZeraxTypeError(
                f"zerax.scipy.linalg.lu_solve: the pivots must be integers (as lu_factor "
                f"returns them), got dtype {raw.dtype}")
        if raw.ndim == 0 or raw.shape[-1] != m:
            raise errors.ShapeError(
                f"zerax.scipy.linalg.lu_solve: the pivots must have shape (..., {m}) for "
                f"{m} x {m} LU factors, got {raw.shape}; pass the (lu, piv) pair from "
                "lu_factor.")
        if raw.size and (raw.min() < 0 or raw.max() >= m):
            raise errors.ZeraxIndexError(
                f"zerax.scipy.linalg.lu_solve: pivot indices must be in [0, {m}) for "
                f"{m} x {m} LU factors, got values from {raw.min()} to {raw.max()}; pass "
                "the (lu, piv) pair from lu_factor.")
    elif np.dtype(piv.dtype).kind not in "iu" or piv.ndim == 0 or piv.shape[-1] != m:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.lu_solve: the pivots must be integers of shape (..., {m}) "
            f"for {m} x {m} LU factors, got {np.dtype(piv.dtype).name}{tuple(piv.shape)}")
    piv = _jnp.asarray(piv, dtype=np.int32)
    perm = _jnp.broadcast_to(_jnp.arange(m, dtype=np.int32), tuple(piv.shape[:-1]) + (m,))
    rows = _jnp.arange(m, dtype=np.int32)
    for i in range(piv.shape[-1]):
        j = piv[..., i:i + 1]
        at_i, at_j = perm[..., i:i + 1], _jnp.take_along_axis(perm, j, axis=-1)
        perm = _jnp.where(rows == i, at_j, _jnp.where(rows == j, at_i, perm))
    return perm


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """The solution of ``a @ x == b`` (``a.T @ x == b`` with ``trans`` 1 or 2) from
    ``a``'s `lu_factor`.

    >>> import zerax.scipy.linalg as zsl
    >>> a = [[1.0, 2.0], [3.0, 4.0]]
    >>> zsl.lu_solve(zsl.lu_factor(a), [5.0, 11.0])
    Array([1., 2.], dtype=float64)
    """
    lu_, piv = _factor_pair(lu_and_piv, "lu_solve", "(lu, piv)", "lu_factor")
    lu_, b, vector = _rhs(lu_, b, "lu_solve")
    m = lu_.shape[-1]
    perm = _pivots_to_permutation(piv, m)
    batch = _la._batch_shape(lu_, b, "zerax.scipy.linalg.lu_solve", "lu")
    try:
        batch = tuple(np.broadcast_shapes(tuple(perm.shape[:-1]), batch))
    except ValueError:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.lu_solve: the batch dimensions of the pivots "
            f"{tuple(perm.shape)} and of lu {tuple(lu_.shape)} do not broadcast.") from None
    lu_ = _jnp.broadcast_to(lu_, batch + (m, m))
    perm = _jnp.broadcast_to(perm, batch + (m,))
    b = _jnp.broadcast_to(b, batch + tuple(b.shape[-2:]))
    if not _trans(trans, "lu_solve"):
        x = _la._lu_solve(lu_, perm, b)
    else:   # a^T = U^T L^T P: x = P^T L^-T U^-T b
        y = _dec.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
        y = _dec.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                                  unit_diagonal=True)
        inverse = _jnp.argsort(perm, axis=-1)
        x = _dec._permute_rows(y, _jnp.asarray(inverse, dtype=np.int32))
    return _unvector(x, vector)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition: ``(q, r)`` with ``q @ r == a``; ``mode`` 'full' (``q`` is
    M x M), 'economic' (M x K) or 'r' (``(r,)`` only).

    >>> import zerax.scipy.linalg as zsl
    >>> q, r = zsl.qr([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]])
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if pivoting:
        raise errors.NotSupportedError("zerax.scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "r", "economic"):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.qr: mode must be 'full', 'economic' or 'r', got {mode!r}"
            + ("; 'raw' is not supported" if mode == "raw" else ""))
    x = _la._matrix_input(a, "qr", square=False)
    q, r = _dec.qr(x, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals=None, type: int = 1, check_finite: bool = True):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix: ``(w, v)``, or
    ``w`` with ``eigvals_only``.  Only the ``lower`` (or upper) triangle is read.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.eigh([[2.0, 1.0], [1.0, 2.0]], eigvals_only=True)
    Array([1., 3.], dtype=float64)
    """
    if b is not None:
        raise errors.NotSupportedError(
            "zerax.scipy.linalg.eigh: the generalized problem (b) is not supported")
    if eigvals is not None:
        raise errors.NotSupportedError("zerax.scipy.linalg.eigh: eigvals is not supported")
    x = _la._matrix_input(a, "eigh", complex_ok=True)     # (Hermitian: real w)
    v, w = _dec.eigh(x, lower=bool(lower), symmetrize_input=False)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition: ``(u, s, vh)`` with ``a == u @ diag(s) @ vh``
    (``s`` descending), or ``s`` without ``compute_uv``.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False)
    Array([4., 3.], dtype=float64)
    """
    res = _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(res) if compute_uv else res


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant (LU decomposition).

    >>> import zerax.scipy.linalg as zsl
    >>> float(zsl.det([[2.0, 0.0], [0.0, 3.0]]))
    6.0
    """
    return _det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of a square matrix (LU decomposition).

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.inv([[2.0, 0.0], [0.0, 4.0]])
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float64)
    """
    return _la.inv(a)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """The solution of ``a @ x == b``: by LU decomposition (``assume_a`` 'gen', 'sym'),
    or Cholesky (``assume_a`` 'pos': ``a`` symmetric positive definite, its ``lower``
    or upper triangle read).  ``b`` is (M,) or (M, K) (SciPy's rule: a 1-D ``b`` is a
    vector).

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.solve([[4.0, 2.0], [2.0, 5.0]], [6.0, 7.0], assume_a="pos")
    Array([1., 1.], dtype=float64)
    """
    if assume_a in ("gen", "general", "sym", "symmetric"):
        return _la.solve(a, b)
    if assume_a not in ("pos", "positive definite"):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.solve: assume_a must be 'gen', 'sym' or 'pos', got "
            f"{assume_a!r}")
    x = _la._matrix_input(a, "solve")
    c = _dec.cholesky(x if lower else _la._mT(x), symmetrize_input=False)
    return cho_solve((c, True), b)
