"""`zerax.numpy.linalg`: NumPy's ``numpy.linalg`` on zerax values (JAX's signatures).

Norms (``norm``, ``vector_norm``, ``matrix_norm``) are compositions of elementwise
operations and reductions (matrix 2-norms and nuclear norms use ``svdvals``); the
products (``matmul``, ``tensordot``, ``vecdot``, ``outer``, ``cross``, ``multi_dot``,
``matrix_power``) lower to ``dot_general``.  The decompositions (``cholesky``, ``qr``,
``eigh``, ``eigvalsh``, ``svd``, ``svdvals``) are the primitives of
``zerax._src.ops.decompositions``; ``solve``, ``inv``, ``det`` and ``slogdet`` are an
LU decomposition and triangular solves, ``lstsq``, ``pinv``, ``matrix_rank`` and
``cond`` use the SVD, so every function is differentiable (where the mathematics
allows), batched over leading dimensions, and works under ``vmap`` and ``jit``.
Floating-point inputs keep their dtype, integers and booleans become float64; complex
inputs raise NotSupportedError, except in ``eig`` and ``eigvals`` (general matrices,
the ``eig`` primitive of ``zerax._src.ops.eig``), whose results are always complex.

>>> import zerax.numpy as znp
>>> float(znp.linalg.norm(znp.array([3.0, 4.0])))
5.0
>>> znp.linalg.solve(znp.array([[2.0, 1.0], [1.0, 3.0]]), znp.array([3.0, 5.0]))
Array([0.8, 1.4], dtype=float64)
"""

from .._src.numpy.linalg import (
    EighResult, QRResult, SVDResult, SlogdetResult, cholesky, cond, cross, diagonal, eigh,
    eigvalsh, inv, lstsq, matmul, matrix_norm, matrix_power, matrix_rank, matrix_transpose,
    multi_dot, norm, outer, qr, solve, svd, svdvals, tensordot, tensorinv, tensorsolve,
    trace, vecdot, vector_norm)
from .._src.api.linalg import det, pinv, slogdet
from .._src.numpy.linalg_eig import EigResult, eig, eigvals

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
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
    "pinv",
    "qr",
    "slogdet",
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
