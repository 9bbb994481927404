"""`zerax.lax.linalg`: JAX's ``lax.linalg`` decompositions (thin re-exports).

>>> import numpy as np, zerax.lax as lax
>>> lax.linalg.cholesky(np.array([[9.0, 3.0], [3.0, 5.0]]))
Array([[3., 0.],
       [1., 2.]], dtype=float64)
"""

from .._src.lax.ops_api import cholesky, eig, eigh, lu, qr, svd, triangular_solve

__all__ = ["cholesky", "eig", "eigh", "lu", "qr", "svd", "triangular_solve"]
