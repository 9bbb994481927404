"""`zerax.numpy.linalg`: NumPy's ``numpy.linalg`` on zerax values (JAX's signatures).

``det``, ``slogdet`` and ``pinv``, whose derivatives are custom rules, live in
``api/linalg.py``; the face ``zerax.numpy.linalg`` re-exports both modules.

Norms (``norm``, ``vector_norm``, ``matrix_norm``) are compositions of elementwise
operations and reductions (matrix 2-norms and nuclear norms use ``svdvals``); the
products (``matmul``, ``tensordot``, ``vecdot``, ``outer``, ``cross``, ``multi_dot``,
``matrix_power``) lower to ``dot_general``.  The decompositions (``cholesky``, ``qr``,
``eigh``, ``eigvalsh``, ``svd``, ``svdvals``) are the primitives of
``zerax._src.ops.decompositions``; ``solve``, ``inv``, ``det`` and ``slogdet`` are an
LU decomposition and triangular solves, ``lstsq``, ``pinv``, ``matrix_rank`` and
``cond`` use the SVD, so every function is differentiable (where the mathematics
allows), batched over leading dimensions, and works under ``vmap`` and ``jit``.
Floating-point inputs keep their dtype, integers and booleans become float64.  Complex
inputs are taken by the norms, ``eigh``/``eigvalsh`` (Hermitian matrices; real
eigenvalues), ``svd``/``svdvals`` (real singular values) and what is built on them
(``pinv``, ``lstsq``, ``matrix_rank``, ``cond`` with ``p`` None, 2 or -2); the other
functions raise NotSupportedError for them.

>>> import zerax.numpy as znp
>>> float(znp.linalg.norm(znp.array([3.0, 4.0])))
5.0
>>> znp.linalg.solve(znp.array([[2.0, 1.0], [1.0, 3.0]]), znp.array([3.0, 5.0]))
Array([0.8, 1.4], dtype=float64)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ... import errors
from ..base import dtypes
from ..ops import decompositions as _dec
from ..ops import elementwise as _ew
from ..ops.reduce import reduce_max as _rmax
from ..ops.reduce import reduce_min as _rmin
from ..ops.reduce import reduce_sum as _rsum
from ..ops.shape import broadcast_in_dim, iota
from ..ops.shape import reshape as _reshape
from ..ops.shape import transpose as _transpose
from .. import numpy as _jnp
from . import linalg_ops as _lo
from ._util import as_dtype as _as_dtype
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "qr",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


# --------------------------------------------------------------------------- norms


def _float_input(x, fname, complex_ok=False):
    """``x`` as a zerax value of an inexact dtype (integers and bools become float64,
    as in NumPy); complex values only with ``complex_ok``."""
    x = _lo._arr(x, f"linalg.{fname}")
    if np.dtype(x.dtype).kind == "c":
        if complex_ok:
            return x
        raise errors.NotSupportedError(
            f"zerax.numpy.linalg.{fname}: complex inputs are not supported yet")
    if dtype_kind(np.dtype(x.dtype)) != "f":
        x = _as_dtype(x, dtypes.default_float())
    return x


def _abs(x):
    return _ew.bind(_ew.abs_p, x)


def _norm_input(x, fname):
    """``x`` for the norms, which take complex values too (their results are real)."""
    x = _lo._arr(x, f"linalg.{fname}")
    if np.dtype(x.dtype).kind == "c":
        return x
    return _float_input(x, fname)


def _sum_squares(x, axes):
    """sum |x|^2 over ``axes``: re^2 + im^2 of a complex ``x``, so that ``grad`` of its
    root is JAX's ``conj(x) / norm``."""
    if np.dtype(x.dtype).kind == "c":
        re, im = _ew.real(x), _ew.imag(x)
        return _rsum(_ew.add(_ew.mul(re, re), _ew.mul(im, im)), axes)
    return _rsum(_ew.mul(x, x), axes)


def _c(x, v):
    return np.array(v, dtype=x.dtype)


def _vector_norm_axes(x, axes, ord):
    """The vector ``ord``-norm of ``x`` over ``axes`` (treated as one flattened axis)."""
    if isinstance(ord, str):
        raise errors.ZeraxTypeError(f"zerax.numpy.linalg.norm: invalid norm order {ord!r} "
                                    "for vectors")
    if ord is None or ord == 2:
        return _ew.sqrt(_sum_squares(x, axes))
    if ord == math.inf:
        return _rmax(_abs(x), axes)
    if ord == -math.inf:
        return _rmin(_abs(x), axes)
    if ord == 0:       # (the count in the real dtype, as NumPy, for complex x too)
        return _rsum(_ew.convert_element_type(_ew.ne(x, _c(x, 0)),
                                              np.finfo(x.dtype).dtype), axes)
    if ord == 1:
        return _rsum(_abs(x), axes)
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.linalg.norm: invalid norm order {ord!r} for vectors") from None
    ax = _abs(x)
    powed = _ew.integer_pow(ax, int(p)) if p == int(p) else _ew.pow(ax, _c(ax, p))
    return _ew.pow(_rsum(powed, axes), _c(ax, 1.0 / p))


def _matrix_norm_axes(x, row, col, ord):
    if ord is None or ord == "fro":
        return _ew.sqrt(_sum_squares(x, (row, col)))
    if ord in (1, -1, math.inf, -math.inf) and not isinstance(ord, (bool, str)):
        red = _rmax if ord > 0 else _rmin
        if ord in (1, -1):          # column sums, then the max/min over columns
            s = _rsum(_abs(x), (row,))
            return red(s, (col - 1 if col > row else col,))
        s = _rsum(_abs(x), (col,))  # row sums, then the max/min over rows
        return red(s, (row - 1 if row > col else row,))
    if ord in (2, -2, "nuc"):
        # from the singular values: the matrix axes moved last, then max / min / sum
        rest = [d for d in range(x.ndim) if d not in (row, col)]
        xt = _transpose(x, rest + [row, col])
        s = svdvals(xt)
        return (_rsum if ord == "nuc" else _rmax if ord == 2 else _rmin)(s, (s.ndim - 1,))
    raise errors.ZeraxTypeError(f"zerax.numpy.linalg.norm: invalid norm order {ord!r} for "
                                "matrices")


def _keep(y, shape, axes):
    return _reshape(y, [1 if i in axes else n for i, n in enumerate(shape)])


def norm(x, ord=None, axis=None, keepdims=False):
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0 or any p)
    and matrix norms (``ord`` None/'fro', 1, -1, inf, -inf, 2 and -2, the largest and
    smallest singular value, and 'nuc', their sum) over ``axis``; of complex values
    too (a real result; ``grad`` of the 2-norm is JAX's ``conj(x) / norm``).

    >>> import zerax.numpy as znp
    >>> float(znp.linalg.norm(znp.array([[1.0, -2.0], [3.0, 4.0]]), ord=1))
    6.0
    >>> float(znp.linalg.norm(znp.array([3.0 + 4.0j, 0.0, 12.0j])))
    13.0
    """
    x = _norm_input(x, "norm")
    nd = x.ndim
    if axis is None:
        if ord is None:
            y = _ew.sqrt(_sum_squares(x, tuple(range(nd))))
            return _reshape(y, [1] * nd) if keepdims else y
        if nd == 1:
            axes = (0,)
        elif nd == 2:
            axes = (0, 1)
        else:
            raise errors.ShapeError(
                f"zerax.numpy.linalg.norm: ord={ord!r} with axis=None needs a 1-D or 2-D "
                f"array, got shape {tuple(x.shape)}; pass axis.")
    elif isinstance(axis, (int, np.integer)):
        axes = (axis,)
    else:
        try:
            axes = tuple(axis)
        except TypeError:
            raise errors.ZeraxTypeError(
                f"zerax.numpy.linalg.norm: axis must be None, an int or a tuple of ints, got "
                f"{axis!r}") from None
    axes = tuple(_lo._norm_axis(a, nd, "linalg.norm") for a in axes)
    if len(axes) == 1:
        y = _vector_norm_axes(x, axes, ord)
    elif len(axes) == 2:
        if axes[0] == axes[1]:
            raise errors.ShapeError("zerax.numpy.linalg.norm: duplicate axes given")
        y = _matrix_norm_axes(x, axes[0], axes[1], ord)
    else:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.norm: axis must name one (vector) or two (matrix) axes, "
            f"got {axis!r}")
    return _keep(y, x.shape, axes) if keepdims else y


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``numpy.linalg.vector_norm``: the ``ord``-norm of the vectors along ``axis``
    (all axes, flattened, when None; a tuple of axes is flattened too).

    >>> import zerax.numpy as znp
    >>> znp.linalg.vector_norm(znp.ones((2, 4)), axis=1)
    Array([2., 2.], dtype=float64)
    """
    x = _norm_input(x, "vector_norm")
    nd = x.ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (int, np.integer)):
        axes = (_lo._norm_axis(axis, nd, "linalg.vector_norm"),)
    else:
        axes = tuple(_lo._norm_axis(a, nd, "linalg.vector_norm") for a in axis)
        if len(set(axes)) != len(axes):
            raise errors.ShapeError("zerax.numpy.linalg.vector_norm: repeated axis")
    y = _vector_norm_axes(x, tuple(sorted(axes)), ord)
    return _keep(y, x.shape, axes) if keepdims else y


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """``numpy.linalg.matrix_norm``: the norm of the matrices in the last two axes."""
    x = _norm_input(x, "matrix_norm")
    if x.ndim < 2:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.matrix_norm: needs an array of rank >= 2, got shape "
            f"{tuple(x.shape)}")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# --------------------------------------------------------------------------- products


def matmul(x1, x2, /):
    """``numpy.linalg.matmul``: the ``@`` product."""
    return _lo.matmul(x1, x2)


def outer(x1, x2, /):
    """``numpy.linalg.outer``: the outer product of two 1-D arrays."""
    a, b = _lo._arr(x1, "linalg.outer", 0), _lo._arr(x2, "linalg.outer", 1)
    if a.ndim != 1 or b.ndim != 1:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.outer: the inputs must be 1-D, got shapes {tuple(a.shape)} "
            f"and {tuple(b.shape)}")
    return _lo.outer(a, b)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.linalg.tensordot``."""
    return _lo.tensordot(x1, x2, axes)


def vecdot(x1, x2, /, *, axis=-1):
    """``numpy.linalg.vecdot``: vector dot products along ``axis``."""
    return _lo.vecdot(x1, x2, axis=axis)


def cross(x1, x2, /, *, axis=-1):
    """``numpy.linalg.cross``: cross products of 3-vectors along ``axis``."""
    return _lo.cross(x1, x2, axis=axis)


def trace(x, /, *, offset=0, dtype=None):
    """``numpy.linalg.trace``: sums along the diagonals of the last two axes.

    >>> import zerax.numpy as znp
    >>> znp.linalg.trace(znp.array([[1, 2], [3, 4]]))
    Array(5, dtype=int64)
    """
    x = _lo._arr(x, "linalg.trace")
    return _lo._trace(x, offset, -2, -1, dtype, "linalg.trace")


def diagonal(x, /, *, offset=0):
    """``numpy.linalg.diagonal``: the diagonals of the last two axes."""
    x = _lo._arr(x, "linalg.diagonal")
    return _lo._diagonal(x, offset, -2, -1, "linalg.diagonal")


def matrix_transpose(x, /):
    """``numpy.linalg.matrix_transpose``: swap the last two axes."""
    x = _lo._arr(x, "linalg.matrix_transpose")
    if x.ndim < 2:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.matrix_transpose: needs an array of rank >= 2, got shape "
            f"{tuple(x.shape)}")
    nd = x.ndim
    return _transpose(x, list(range(nd - 2)) + [nd - 1, nd - 2])


def multi_dot(arrays, *, out=None):
    """``numpy.linalg.multi_dot``: a chain of ``dot`` products, in the cheapest order
    (the first array may be 1-D, a row; the last may be 1-D, a column)."""
    _lo._no_out("linalg.multi_dot", out)
    arrs = [_lo._arr(a, "linalg.multi_dot", i) for i, a in enumerate(arrays)]
    n = len(arrs)
    if n < 2:
        raise errors.ShapeError("zerax.numpy.linalg.multi_dot: expecting at least two arrays")
    if n == 2:
        return _lo.dot(arrs[0], arrs[1])
    first_1d, last_1d = arrs[0].ndim == 1, arrs[-1].ndim == 1
    if first_1d:
        arrs[0] = _reshape(arrs[0], (1, arrs[0].shape[0]))
    if last_1d:
        arrs[-1] = _reshape(arrs[-1], (arrs[-1].shape[0], 1))
    for i, a in enumerate(arrs):
        if a.ndim != 2:
            raise errors.ShapeError(
                f"zerax.numpy.linalg.multi_dot: array {i} has shape {tuple(a.shape)}; only the "
                "first and last arrays may be 1-D, the others must be 2-D")
    dims = [arrs[0].shape[0]] + [a.shape[1] for a in arrs]
    # The classic matrix-chain order (dynamic programming over split points).
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return arrs[i]
        k = split[i][j]
        return _lo.dot(chain(i, k), chain(k + 1, j))

    res = chain(0, n - 1)
    if first_1d and last_1d:
        return _reshape(res, ())
    if first_1d:
        return _reshape(res, (res.shape[1],))
    if last_1d:
        return _reshape(res, (res.shape[0],))
    return res


def matrix_power(a, n):
    """``numpy.linalg.matrix_power`` for an integer ``n`` (by repeated squaring; of
    ``inv(a)`` for ``n < 0``)."""
    a = _lo._arr(a, "linalg.matrix_power")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.matrix_power: needs square matrices in the last two axes, got "
            f"shape {tuple(a.shape)}")
    if not isinstance(n, (int, np.integer)):
        raise errors.ZeraxTypeError("zerax.numpy.linalg.matrix_power: n must be an integer")
    n = int(n)
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        m = a.shape[-1]
        eye = _ew.convert_element_type(_ew.eq(iota(np.int64, (m, m), 0),
                                              iota(np.int64, (m, m), 1)), a.dtype)
        return broadcast_in_dim(eye, tuple(a.shape), (a.ndim - 2, a.ndim - 1))
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else _lo.matmul(result, base)
        n >>= 1
        if n:
            base = _lo.matmul(base, base)
    return result


# --------------------------------------------------------------------------- decompositions


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _matrix_input(a, fname, square=True, complex_ok=False):
    """``a`` as a float (or, with ``complex_ok``, complex) array of rank >= 2 (square
    matrices in the last two axes)."""
    x = _float_input(a, fname, complex_ok)
    if x.dtype == np.float16:   # LAPACK has no half precision
        x = _as_dtype(x, np.float32)
    if x.ndim < 2:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.{fname}: needs a matrix or a stack of matrices (rank >= 2), "
            f"got an array of shape {tuple(x.shape)}; reshape it to (..., M, N).")
    if square and x.shape[-1] != x.shape[-2]:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.{fname}: needs square matrices in the last two axes, got "
            f"shape {tuple(x.shape)}.")
    return x


_mT = _dec._mT
_mH = _dec._mH     # the conjugate transpose (the transpose of real matrices)


def _eps(x):
    return float(np.finfo(x.dtype).eps)


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The Cholesky factor of symmetric (complex: Hermitian) positive-definite matrices:
    ``L`` lower triangular with ``L @ L^H == a`` (``L^H`` with ``upper``); NaNs where
    ``a`` is not positive definite.  ``symmetrize_input`` factors ``(a + a^H) / 2``.

    >>> import zerax.numpy as znp
    >>> znp.linalg.cholesky(znp.array([[4.0, 2.0], [2.0, 5.0]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float64)
    """
    L = _dec.cholesky(_matrix_input(a, "cholesky", complex_ok=True),
                      symmetrize_input=symmetrize_input)
    return _mH(L) if upper else L


def qr(a, mode: str = "reduced"):
    """QR decomposition of (stacks of) ``M x N`` matrices: ``QRResult(Q, R)`` with
    ``Q @ R == a``.  ``mode``: 'reduced' (K = min(M, N) columns of Q), 'complete' (M
    columns) or 'r' (``R`` only).

    >>> import zerax.numpy as znp
    >>> Q, R = znp.linalg.qr(znp.array([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]]))
    >>> Q.shape, R.shape
    ((3, 2), (2, 2))
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise errors.ZeraxValueError(
            f"zerax.numpy.linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "raw":
        raise errors.NotSupportedError("zerax.numpy.linalg.qr: mode='raw' is not supported")
    q, r = _dec.qr(_matrix_input(a, "qr", square=False, complex_ok=True),
                   full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _uplo(UPLO, fname):
    if UPLO is None:
        return True
    if UPLO not in ("L", "U"):
        raise errors.ZeraxValueError(
            f"zerax.numpy.linalg.{fname}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of real symmetric or complex
    Hermitian matrices: ``EighResult(eigenvalues, eigenvectors)``; the eigenvalues are
    real (float32 for complex64).  ``symmetrize_input`` decomposes ``(a + a^H) / 2``;
    otherwise only the ``UPLO`` triangle ('L' by default) is read.  Eigenvectors are
    defined up to sign (complex ones up to a phase), and their derivatives only where
    the eigenvalues are distinct (JAX's: no component along the eigenvector itself).

    >>> import zerax.numpy as znp
    >>> w, v = znp.linalg.eigh(znp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float64)
    >>> znp.linalg.eigh(znp.array([[2.0, -1j], [1j, 2.0]])).eigenvalues
    Array([1., 3.], dtype=float64)
    """
    v, w = _dec.eigh(_matrix_input(a, "eigh", complex_ok=True), lower=_uplo(UPLO, "eigh"),
                     symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):
    """The eigenvalues (ascending, real) of real symmetric or complex Hermitian matrices.

    >>> import zerax.numpy as znp
    >>> znp.linalg.eigvalsh(znp.array([[2.0, 0.0], [0.0, -1.0]]))
    Array([-1.,  2.], dtype=float64)
    """
    _v, w = _dec.eigh(_matrix_input(a, "eigvalsh", complex_ok=True),
                      lower=_uplo(UPLO, "eigvalsh"),
                     symmetrize_input=symmetrize_input)
    return w


def _hermitian_svd(x, compute_uv):
    """The SVD of symmetric (Hermitian) matrices from their eigendecomposition (``|w|``,
    descending)."""
    v, w = _dec.eigh(x)
    order = _jnp.argsort(_jnp.negative(_abs(w)), axis=-1, stable=True)
    s = _jnp.take_along_axis(_abs(w), order, axis=-1)
    if not compute_uv:
        return s
    cols = _jnp.broadcast_to(_jnp.expand_dims(order, -2), x.shape)
    u = _jnp.take_along_axis(v, cols, axis=-1)
    signed = _jnp.take_along_axis(_jnp.multiply(v, _jnp.expand_dims(_jnp.sign(w), -2)),
                                  cols, axis=-1)
    return SVDResult(u, s, _mH(signed))


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition: ``SVDResult(U, S, Vh)`` with
    ``a == U @ diag(S) @ Vh`` and ``S`` descending (only ``S`` without ``compute_uv``).
    ``full_matrices=False`` gives the thin factors.  Of complex matrices, ``U`` and
    ``Vh`` are complex and ``S`` real.  Singular vectors are defined up to sign (complex
    ones up to a phase shared by a pair); derivatives of ``U`` and ``Vh`` exist where
    the singular values are distinct and nonzero (and need the thin factors for
    non-square matrices).

    >>> import zerax.numpy as znp
    >>> znp.linalg.svd(znp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    Array([4., 3.], dtype=float64)
    """
    if subset_by_index is not None:
        raise errors.NotSupportedError(
            "zerax.numpy.linalg.svd: subset_by_index is not supported")
    x = _matrix_input(a, "svd", square=hermitian, complex_ok=True)
    if hermitian:
        return _hermitian_svd(x, compute_uv)
    if not compute_uv:
        return _dec.svd(x, compute_uv=False)
    u, s, vh = _dec.svd(x, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values (descending, real) of (stacks of) real or complex matrices.

    >>> import zerax.numpy as znp
    >>> znp.linalg.svdvals(znp.array([[0.0, 2.0], [1.0, 0.0]]))
    Array([2., 1.], dtype=float64)
    >>> znp.linalg.svdvals(znp.array([[0.0, 2j], [1.0, 0.0]]))
    Array([2., 1.], dtype=float64)
    """
    return _dec.svd(_matrix_input(x, "svdvals", square=False, complex_ok=True),
                    compute_uv=False)


def _lu_solve(lu_, perm, b):
    """``A^-1 b`` from ``A``'s LU factors (``A[perm] == L @ U``), ``b`` of shape
    (..., M, K) with the factors' batch dimensions."""
    pb = _dec._permute_rows(b, perm)
    y = _dec.triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return _dec.triangular_solve(lu_, y, left_side=True, lower=False)


def _solve_operands(a, b, fname):
    a = _matrix_input(a, fname, complex_ok=True)
    b = _float_input(b, fname, complex_ok=True)
    dtype = dtypes.result_type(a.dtype, b.dtype)
    a, b = _as_dtype(a, dtype), _as_dtype(b, dtype)
    m = a.shape[-1]
    vector = b.ndim == 1
    if b.ndim == 0 or b.shape[0 if vector else -2] != m:
        want = f"({m},) or (..., {m}, K)"
        raise errors.ShapeError(
            f"zerax.numpy.linalg.{fname}: a has shape {tuple(a.shape)}, so b must have shape "
            f"{want}; got {tuple(b.shape)}.")
    return a, b, vector


def _batch_shape(a, b, fname, a_name="a", b_name="b"):
    """The broadcast of the batch dimensions (all but the last two axes) of ``a`` and
    ``b``; a ShapeError when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise errors.ShapeError(
            f"{fname}: the batch dimensions of {a_name} "
            f"{tuple(a.shape)} and {b_name} {tuple(b.shape)} (all but the last two axes) do "
            "not broadcast; give them equal batch dimensions, or 1 where one should be "
            "repeated.") from None


def solve(a, b):
    """The solution ``x`` of ``a @ x == b`` for square ``a`` (by LU decomposition with
    partial pivoting).  ``b`` of shape (M,) is one vector; otherwise (..., M, K), its
    batch dimensions broadcasting against ``a``'s (NumPy 2's rule).

    >>> import zerax.numpy as znp
    >>> znp.linalg.solve(znp.array([[2.0, 0.0], [0.0, 4.0]]), znp.array([[2.0], [2.0]]))
    Array([[1. ],
           [0.5]], dtype=float64)
    """
    a, b, vector = _solve_operands(a, b, "solve")
    if vector:
        b = _reshape(b, (b.shape[0], 1))
    batch = _batch_shape(a, b, "zerax.numpy.linalg.solve")
    m = a.shape[-1]
    lu_, _, perm = _dec.lu(a)
    lu_ = _jnp.broadcast_to(lu_, batch + (m, m))
    perm = _jnp.broadcast_to(perm, batch + (m,))
    x = _lu_solve(lu_, perm, _jnp.broadcast_to(b, batch + tuple(b.shape[-2:])))
    return _reshape(x, tuple(x.shape[:-1])) if vector else x


def inv(a):
    """The inverse of (stacks of) square matrices (LU decomposition with partial
    pivoting); infs or NaNs for singular ones.

    >>> import zerax.numpy as znp
    >>> znp.linalg.inv(znp.array([[2.0, 0.0], [0.0, 4.0]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float64)
    """
    a = _matrix_input(a, "inv", complex_ok=True)
    m = a.shape[-1]
    eye = _jnp.broadcast_to(np.eye(m, dtype=a.dtype), tuple(a.shape))
    lu_, _, perm = _dec.lu(a)
    return _lu_solve(lu_, perm, eye)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of ``a @ x ~= b`` for an ``M x N`` matrix ``a``, by SVD:
    ``(x, residuals, rank, s)``.  Singular values below ``rcond * max(s)`` (``rcond``
    a scalar; default ``eps * max(M, N)``, and ``eps`` where it is negative, as in
    NumPy), and zero ones, are treated as zero.  Residuals are the squared norms of the
    columns of ``b - a @ x`` (with ``numpy_resid``, as NumPy: only when the rank is N
    and M > N, otherwise empty; that needs concrete values).

    >>> import zerax.numpy as znp
    >>> a = znp.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, res, rank, s = znp.linalg.lstsq(a, znp.array([1.0, 2.0, 3.0]))
    >>> x, int(rank)
    (Array([1., 1.], dtype=float64), 2)
    """
    a = _float_input(a, "lstsq", complex_ok=True)
    b = _float_input(b, "lstsq", complex_ok=True)
    dtype = dtypes.result_type(a.dtype, b.dtype)
    a, b = _as_dtype(a, dtype), _as_dtype(b, dtype)
    rdt = np.finfo(dtype).dtype       # of rcond, s and the residuals
    if a.ndim != 2:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.lstsq: a must be a 2-D matrix, got shape {tuple(a.shape)}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.lstsq: b must have shape ({a.shape[0]},) or "
            f"({a.shape[0]}, K) to match a of shape {tuple(a.shape)}, got {tuple(b.shape)}")
    m, n = a.shape
    vector = b.ndim == 1
    b2 = _reshape(b, (m, 1)) if vector else b
    if rcond is None:
        rcond = np.array(_eps(a) * max(m, n), rdt)
    else:
        if isinstance(rcond, (str, bytes)):
            raise errors.ZeraxTypeError(
                f"zerax.numpy.linalg.lstsq: rcond must be a number (or None for the "
                f"default), got {rcond!r}")
        rcond = _as_dtype(_float_input(rcond, "lstsq"), rdt)
        if rcond.ndim:
            raise errors.ShapeError(
                f"zerax.numpy.linalg.lstsq: rcond must be a scalar, got shape "
                f"{tuple(rcond.shape)}")
        # negative: the machine epsilon (NumPy's and JAX's rule)
        rcond = _jnp.where(_jnp.less(rcond, _c(rcond, 0)), _c(rcond, _eps(a)), rcond)
    u, s, vh = _dec.svd(a, full_matrices=False)
    positive = _jnp.greater(s, _c(s, 0))
    if min(m, n) == 0:
        keep = positive
    else:       # JAX's rule: s >= rcond * s[0], and s > 0
        cutoff = _jnp.multiply(rcond, _rmax(s, (0,)))
        keep = _jnp.logical_and(positive, _jnp.greater_equal(s, cutoff))
    s_safe = _jnp.where(keep, s, _c(s, 1))
    s_inv = _jnp.where(keep, _ew.div(_c(s, 1), s_safe), _c(s, 0))
    uTb = _lo.matmul(_mH(u), b2)
    x = _lo.matmul(_mH(vh), _jnp.multiply(_jnp.expand_dims(s_inv, 1), uTb))
    rank = _rsum(_ew.convert_element_type(keep, dtypes.default_int()), (0,))
    r = _ew.sub(b2, _lo.matmul(a, x))
    resid = _sum_squares(r, (0,))
    if numpy_resid and not (int(rank) == n and m > n):
        resid = _jnp.zeros((0,), rdt)
    if vector:
        x = _reshape(x, (n,))
    return x, resid, rank, s


def _tolerance(tol, x, fname, name):
    """A ``tol``/``rtol`` argument as an array of ``x``'s (real) dtype whose shape
    broadcasts to ``x``'s batch dimensions (one value per matrix, or one for all)."""
    if isinstance(tol, (str, bytes)):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.linalg.{fname}: {name} must be a number or an array of numbers, "
            f"got {tol!r}")
    tol = _as_dtype(_float_input(tol, fname), np.finfo(x.dtype).dtype)
    batch = tuple(x.shape[:-2])
    try:
        ok = np.broadcast_shapes(tuple(tol.shape), batch) == batch
    except ValueError:
        ok = False
    if not ok:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.{fname}: {name} of shape {tuple(tol.shape)} does not "
            f"broadcast to the batch dimensions {batch} of the matrices {tuple(x.shape)}; "
            "give a scalar or one value per matrix.")
    return tol


def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """The rank of (stacks of) real or complex matrices: the number of singular values
    above ``tol`` (default ``rtol * max(s)``, ``rtol`` default ``max(M, N) * eps``).

    >>> import zerax.numpy as znp
    >>> znp.linalg.matrix_rank(znp.array([[1.0, 2.0], [2.0, 4.0]]))
    Array(1, dtype=int64)
    """
    x = _float_input(M, "matrix_rank", complex_ok=True)
    if x.ndim < 2:
        nz = _ew.ne(x, _c(x, 0))
        return _ew.convert_element_type(_rmax(nz, tuple(range(x.ndim))) if x.ndim else nz,
                                        dtypes.default_int())
    x = _matrix_input(x, "matrix_rank", square=False, complex_ok=True)
    if tol is not None and rtol is not None:
        raise errors.ZeraxValueError(
            "zerax.numpy.linalg.matrix_rank: tol and rtol were both given; pass tol (an "
            "absolute threshold) or rtol (relative to the largest singular value).")
    s = svd(x, compute_uv=False, hermitian=hermitian)
    last = (s.ndim - 1,)
    if tol is not None:
        cutoff = _tolerance(tol, x, "matrix_rank", "tol")
    else:
        if rtol is None:
            rtol = max(x.shape[-2:]) * _eps(x)
        rtol = _tolerance(rtol, x, "matrix_rank", "rtol")
        cutoff = _jnp.multiply(_rmax(s, last), rtol) if s.shape[-1] else _c(s, 0)
    keep = _jnp.greater(s, _jnp.expand_dims(cutoff, -1))
    return _rsum(_ew.convert_element_type(keep, dtypes.default_int()), last)


def cond(x, p=None):
    """The condition number of (stacks of) matrices in the norm ``p`` (None or 2: the
    ratio of the largest to the smallest singular value; -2 its inverse; 'fro', 'nuc',
    1, -1, inf, -inf: ``norm(x, p) * norm(inv(x), p)``, square matrices only; real or
    complex).  As in JAX, for ``p`` other than None and 2 a
    NaN result from a singular matrix (one without NaNs) becomes inf: singular matrices
    have condition number inf.

    >>> import zerax.numpy as znp
    >>> float(znp.linalg.cond(znp.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    by_svd = p in (None, 2, -2) and not isinstance(p, bool)
    x = _matrix_input(x, "cond", square=not by_svd, complex_ok=True)
    if by_svd:
        s = svdvals(x)
        hi, lo = s[..., 0], s[..., -1]
        if p != -2:
            return _ew.div(hi, lo)
        r = _ew.div(lo, hi)
    elif p == "nuc":
        # (an SVD of inv(x) only where it is finite: LAPACK fails on infs)
        xi = inv(x)
        finite = _jnp.all(_jnp.isfinite(xi), axis=(-2, -1), keepdims=True)
        xi = _jnp.where(finite, xi, _c(xi, 0))
        last = (x.ndim - 2,)
        r = _ew.mul(_rsum(svdvals(x), last), _rsum(svdvals(xi), last))
        r = _jnp.where(finite[..., 0, 0], r, _c(r, np.nan))
    else:
        r = _ew.mul(norm(x, ord=p, axis=(-2, -1)), norm(inv(x), ord=p, axis=(-2, -1)))
    # NaN from a singular x (0 * inf, inf - inf) means inf; a NaN in x stays NaN
    x_nan = _jnp.any(_jnp.isnan(x), axis=(-2, -1))
    singular = _jnp.logical_and(_jnp.isnan(r), _jnp.logical_not(x_nan))
    return _jnp.where(singular, _c(r, np.inf), r)


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, x.ndim) == b``: ``a``'s leading axes (those of
    ``b``'s shape) are the equations, its trailing axes the unknowns (``axes``: axes of
    ``a`` moved to the end first).

    >>> import zerax.numpy as znp
    >>> a = znp.eye(6).reshape(2, 3, 6)
    >>> znp.linalg.tensorsolve(a, znp.ones((2, 3))).shape
    (6,)
    """
    a = _float_input(a, "tensorsolve")
    b = _float_input(b, "tensorsolve")
    if axes is not None:
        axes = [int(ax) % a.ndim for ax in (axes if isinstance(axes, (list, tuple)) else [axes])]
        rest = [d for d in range(a.ndim) if d not in axes]
        a = _transpose(a, rest + axes)
    eq_shape = tuple(a.shape[:b.ndim])
    if eq_shape != tuple(b.shape):
        raise errors.ShapeError(
            f"zerax.numpy.linalg.tensorsolve: the leading axes of a {tuple(a.shape)} must "
            f"match b's shape {tuple(b.shape)}.")
    x_shape = tuple(a.shape[b.ndim:])
    n_eq, n_x = math.prod(eq_shape), math.prod(x_shape)
    if n_eq != n_x:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.tensorsolve: a of shape {tuple(a.shape)} does not give a "
            f"square system ({n_eq} equations, {n_x} unknowns).")
    x = solve(_reshape(a, (n_eq, n_x)), _reshape(b, (n_eq,)))
    return _reshape(x, x_shape)


def tensorinv(a, ind: int = 2):
    """The inverse of a tensor for ``tensordot(.., .., ind)``: ``a`` reshaped to a
    square matrix at axis ``ind``, inverted, and reshaped to ``a.shape[ind:] +
    a.shape[:ind]``.

    >>> import zerax.numpy as znp
    >>> znp.linalg.tensorinv(znp.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = _float_input(a, "tensorinv")
    ind = int(ind)
    if ind <= 0:
        raise errors.ZeraxValueError("zerax.numpy.linalg.tensorinv: ind must be positive")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.tensorinv: a of shape {tuple(a.shape)} with ind={ind} is not "
            f"square ({rows} x {cols}).")
    return _reshape(inv(_reshape(a, (rows, cols))), tuple(a.shape[ind:]) + tuple(a.shape[:ind]))
