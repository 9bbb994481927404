"""SciPy's structured matrices and the polar decomposition on zerax values (JAX's
``jax.scipy.linalg`` names): ``block_diag``, ``toeplitz``, ``hankel``, ``circulant``,
``hilbert`` and ``polar``.

The constructors are gathers from their inputs (differentiable, batched over leading
dimensions where SciPy's JAX versions are: ``toeplitz``, ``hankel``, ``circulant``).
``polar`` is computed from the SVD, ``a = W S V^H``: ``u = W V^H`` and ``p = V S V^H``
(right) or ``W S W^H`` (left); JAX's ``method="qdwh"`` iteration converges to the same
factors, so both method names are accepted.
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ... import numpy as _jnp
from ...base.dtypes import kind as dtype_kind
from ...numpy import linalg as _la

__all__ = ["block_diag", "circulant", "hankel", "hilbert", "polar", "toeplitz"]


def _arr(x, fname):
    if isinstance(x, (str, bytes)):
        raise errors.ZeraxTypeError(f"zerax.scipy.linalg.{fname}: expected an array, got {x!r}")
    return _jnp.asarray(x)


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (each made at least 2-D; 1-D arrays are
    rows), zeros elsewhere, in their common dtype (SciPy's ``block_diag``).

    >>> import zerax.numpy as znp, zerax.scipy.linalg as zsl
    >>> zsl.block_diag(znp.eye(2), znp.array([[5.0, 6.0]]))
    Array([[1., 0., 0., 0.],
           [0., 1., 0., 0.],
           [0., 0., 5., 6.]], dtype=float64)
    """
    if not arrs:
        return _jnp.zeros((1, 0))
    mats = [_jnp.atleast_2d(_arr(a, "block_diag")) for a in arrs]
    for a in mats:
        if a.ndim != 2:
            raise errors.ShapeError(
                f"zerax.scipy.linalg.block_diag: the arguments must have at most 2 "
                f"dimensions, got shape {tuple(a.shape)}")
    dtype = np.result_type(*[a.dtype for a in mats])
    ncols = sum(a.shape[1] for a in mats)
    rows, start = [], 0
    for a in mats:
        left = _jnp.zeros((a.shape[0], start), dtype)
        right = _jnp.zeros((a.shape[0], ncols - start - a.shape[1]), dtype)
        rows.append(_jnp.concatenate([left, a.astype(dtype), right], axis=1))
        start += a.shape[1]
    return _jnp.concatenate(rows, axis=0)


def _common_batch(c, r):
    """``c`` and ``r`` in their common dtype, broadcast to their common batch shape (all
    but the last axis)."""
    batch = np.broadcast_shapes(tuple(c.shape[:-1]), tuple(r.shape[:-1]))
    dtype = np.result_type(c.dtype, r.dtype)
    return (_jnp.broadcast_to(c.astype(dtype), batch + (c.shape[-1],)),
            _jnp.broadcast_to(r.astype(dtype), batch + (r.shape[-1],)))


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default
    ``conj(c)``; ``r[0]`` is ignored, ``c[0]`` is the diagonal), SciPy's ``toeplitz``;
    leading dimensions of ``c`` and ``r`` are batch dimensions, as in JAX.

    >>> import zerax.numpy as znp, zerax.scipy.linalg as zsl
    >>> zsl.toeplitz(znp.array([1.0, 2.0, 3.0]), znp.array([9.0, 5.0, 6.0]))
    Array([[1., 5., 6.],
           [2., 1., 5.],
           [3., 2., 1.]], dtype=float64)
    """
    c = _jnp.atleast_1d(_arr(c, "toeplitz"))
    r = _jnp.conj(c) if r is None else _jnp.atleast_1d(_arr(r, "toeplitz"))
    c, r = _common_batch(c, r)
    m, n = c.shape[-1], r.shape[-1]
    # vals = [c[m-1], ..., c[1], c[0], r[1], ..., r[n-1]]; entry (i, j) is vals[m-1-i+j]
    vals = _jnp.concatenate([_jnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return vals[..., idx]


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros;
    ``r[0]`` is ignored), SciPy's ``hankel``; leading dimensions are batch dimensions.

    >>> import zerax.numpy as znp, zerax.scipy.linalg as zsl
    >>> zsl.hankel(znp.array([1.0, 2.0, 3.0]))
    Array([[1., 2., 3.],
           [2., 3., 0.],
           [3., 0., 0.]], dtype=float64)
    """
    c = _jnp.atleast_1d(_arr(c, "hankel"))
    r = _jnp.zeros_like(c) if r is None else _jnp.atleast_1d(_arr(r, "hankel"))
    c, r = _common_batch(c, r)
    m, n = c.shape[-1], r.shape[-1]
    vals = _jnp.concatenate([c, r[..., 1:]], axis=-1)
    idx = np.arange(m)[:, None] + np.arange(n)[None, :]
    return vals[..., idx]


def circulant(c):
    """The circulant matrix with first column ``c`` (SciPy's ``circulant``: column j is
    ``c`` rolled down by j); leading dimensions are batch dimensions.

    >>> import zerax.numpy as znp, zerax.scipy.linalg as zsl
    >>> zsl.circulant(znp.array([1.0, 2.0, 3.0]))
    Array([[1., 3., 2.],
           [2., 1., 3.],
           [3., 2., 1.]], dtype=float64)
    """
    c = _jnp.atleast_1d(_arr(c, "circulant"))
    n = c.shape[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., idx]


def hilbert(n):
    """The ``n x n`` Hilbert matrix, ``1 / (i + j + 1)`` (SciPy's ``hilbert``).

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.hilbert(2)
    Array([[1.        , 0.5       ],
           [0.5       , 0.33333333]], dtype=float64)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.hilbert: n must be a non-negative integer, got {n!r}")
    i = np.arange(n, dtype=np.float64)
    return _jnp.asarray(1.0 / (i[:, None] + i[None, :] + 1.0))


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition ``a = u @ p`` (``side="right"``) or ``a = p @ u``
    (``"left"``): ``u`` with orthonormal columns (rows for a wide ``a``) and ``p``
    Hermitian positive semi-definite (SciPy's ``polar``; JAX's signature).

    >>> import zerax.numpy as znp, zerax.scipy.linalg as zsl
    >>> u, p = zsl.polar(znp.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> u, p
    (Array([[ 1.,  0.],
           [ 0., -1.]], dtype=float64), Array([[2., 0.],
           [0., 3.]], dtype=float64))
    """
    del eps, max_iterations
    if side not in ("right", "left"):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.polar: method must be 'qdwh' or 'svd', got {method!r}")
    a = _arr(a, "polar")
    if a.ndim != 2:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.polar: a must be a 2-D matrix, got shape {tuple(a.shape)}")
    if dtype_kind(a.dtype) not in "fc":
        a = a.astype(float)
    w, s, vh = _la.svd(a, full_matrices=False)
    u = w @ vh
    if side == "right":
        p = _jnp.conj(vh).T @ (s[:, None] * vh)
    else:
        p = (w * s[None, :]) @ _jnp.conj(w).T
    return u, p
