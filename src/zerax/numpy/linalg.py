"""`zerax.numpy.linalg`: NumPy's ``numpy.linalg`` on zerax values.

Norms (``norm``, ``vector_norm``, ``matrix_norm``) are compositions of elementwise
operations and reductions; the products (``matmul``, ``tensordot``, ``vecdot``,
``outer``, ``cross``, ``multi_dot``, ``matrix_power``) lower to ``dot_general``.
Matrix 2-norms, nuclear norms and the decompositions (inv, solve, det, svd, ...) are
not provided yet.

>>> import zerax.numpy as znp
>>> float(znp.linalg.norm(znp.array([3.0, 4.0])))
5.0
"""

from __future__ import annotations

import math

import numpy as np

from .. import errors
from .._src.lax_numpy import linalg_ops as _lo
from .._src.lax_numpy._util import as_dtype as _as_dtype
from .._src.ops import elementwise as _ew
from .._src.ops.reduce import reduce_max as _rmax, reduce_min as _rmin, reduce_sum as _rsum
from .._src.ops.shape import reshape as _reshape, transpose as _transpose

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "outer", "tensordot", "vecdot",
           "trace", "diagonal", "matrix_transpose", "cross", "multi_dot", "matrix_power"]


# --------------------------------------------------------------------------- norms


def _float_input(x, fname):
    """``x`` as a zerax value of an inexact dtype (integers and bools become float64,
    as in NumPy)."""
    x = _lo._arr(x, f"linalg.{fname}")
    if np.dtype(x.dtype).kind == "c":
        raise errors.NotSupportedError(
            f"zerax.numpy.linalg.{fname}: complex inputs are not supported yet")
    if np.dtype(x.dtype).kind != "f":
        x = _as_dtype(x, np.float64)
    return x


def _abs(x):
    return _ew.bind(_ew.abs_p, x)


def _c(x, v):
    return np.array(v, dtype=x.dtype)


def _vector_norm_axes(x, axes, ord):
    """The vector ``ord``-norm of ``x`` over ``axes`` (treated as one flattened axis)."""
    if isinstance(ord, str):
        raise errors.ZeraxTypeError(f"zerax.numpy.linalg.norm: invalid norm order {ord!r} "
                                    "for vectors")
    if ord is None or ord == 2:
        return _ew.sqrt(_rsum(_ew.mul(x, x), axes))
    if ord == math.inf:
        return _rmax(_abs(x), axes)
    if ord == -math.inf:
        return _rmin(_abs(x), axes)
    if ord == 0:
        return _rsum(_ew.convert_element_type(_ew.ne(x, _c(x, 0)), x.dtype), axes)
    if ord == 1:
        return _rsum(_abs(x), axes)
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.linalg.norm: invalid norm order {ord!r} for vectors") from None
    ax = _abs(x)
    powed = _ew.integer_pow(ax, int(p)) if p == int(p) else _ew.pow(ax, _c(x, p))
    return _ew.pow(_rsum(powed, axes), _c(x, 1.0 / p))


def _matrix_norm_axes(x, row, col, ord):
    if ord is None or ord == "fro":
        return _ew.sqrt(_rsum(_ew.mul(x, x), (row, col)))
    if ord in (1, -1, math.inf, -math.inf) and not isinstance(ord, (bool, str)):
        red = _rmax if ord > 0 else _rmin
        if ord in (1, -1):          # column sums, then the max/min over columns
            s = _rsum(_abs(x), (row,))
            return red(s, (col - 1 if col > row else col,))
        s = _rsum(_abs(x), (col,))  # row sums, then the max/min over rows
        return red(s, (row - 1 if row > col else row,))
    if ord in (2, -2, "nuc"):
        raise errors.NotSupportedError(
            f"zerax.numpy.linalg.norm: the matrix norm ord={ord!r} needs a singular value "
            "decomposition, which zerax does not provide yet; use ord='fro', 1, -1, inf or "
            "-inf.")
    raise errors.ZeraxTypeError(f"zerax.numpy.linalg.norm: invalid norm order {ord!r} for "
                                "matrices")


def _keep(y, shape, axes):
    return _reshape(y, [1 if i in axes else n for i, n in enumerate(shape)])


def norm(x, ord=None, axis=None, keepdims=False):
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0 or any p)
    and matrix norms (``ord`` None/'fro', 1, -1, inf, -inf) over ``axis``.

    >>> import zerax.numpy as znp
    >>> float(znp.linalg.norm(znp.array([[1.0, -2.0], [3.0, 4.0]]), ord=1))
    6.0
    """
    x = _float_input(x, "norm")
    nd = x.ndim
    if axis is None:
        if ord is None:
            y = _ew.sqrt(_rsum(_ew.mul(x, x), tuple(range(nd))))
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
    x = _float_input(x, "vector_norm")
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
    x = _float_input(x, "matrix_norm")
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
    """``numpy.linalg.matrix_power`` for integer ``n >= 0`` (by repeated squaring)."""
    a = _lo._arr(a, "linalg.matrix_power")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise errors.ShapeError(
            f"zerax.numpy.linalg.matrix_power: needs square matrices in the last two axes, got "
            f"shape {tuple(a.shape)}")
    if not isinstance(n, (int, np.integer)):
        raise errors.ZeraxTypeError("zerax.numpy.linalg.matrix_power: n must be an integer")
    n = int(n)
    if n < 0:
        raise errors.NotSupportedError(
            "zerax.numpy.linalg.matrix_power: negative powers need a matrix inverse, which "
            "zerax does not provide yet")
    if n == 0:
        m = a.shape[-1]
        from .._src.ops.shape import broadcast_in_dim, iota
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
