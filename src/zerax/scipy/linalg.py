"""`zerax.scipy.linalg`: SciPy's ``scipy.linalg`` on zerax values (JAX's signatures).

Decompositions and solvers (compositions of ``zerax.lax.linalg`` and
``zerax.numpy.linalg``) and matrix functions (``expm``, ``sqrtm``, ``logm``...):
differentiable, batched over leading dimensions, usable under ``vmap`` and ``jit``.

The implementation is ``zerax._src.api.scipy.linalg`` and ``zerax._src.api.scipy.matfuncs``;
this face re-exports it.

>>> import zerax.scipy.linalg as zsl
>>> zsl.solve_triangular(zsl.cholesky([[4.0, 2.0], [2.0, 5.0]], lower=True), [2.0, 3.0],
...                      lower=True)
Array([1., 1.], dtype=float64)
"""

from .._src.api.scipy.linalg import (  # noqa: F401
    cho_factor, cho_solve, cholesky, det, eigh, inv, lu, lu_factor, lu_solve, qr, solve,
    solve_triangular, svd)
from .._src.api.scipy.special_matrices import (  # noqa: F401
    block_diag, circulant, hankel, hilbert, polar, toeplitz)
from .._src.api.scipy.matfuncs import (  # noqa: F401
    expm, expm_frechet, logm, solve_banded, solve_sylvester, sqrtm)

__all__ = ["block_diag", "circulant", "hankel", "hilbert", "polar", "toeplitz", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "expm_frechet", "inv",
           "logm", "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_banded",
           "solve_sylvester", "solve_triangular", "sqrtm", "svd"]
