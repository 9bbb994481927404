"""``zerax.numpy.linalg.eig`` and ``eigvals``: the eigendecomposition of general
(non-symmetric) matrices, on the ``eig`` primitive (``ops/eig.py``).

Results are complex whatever the input (JAX's rule, where NumPy gives real arrays when
every eigenvalue is real): complex64 for float32 and complex64 input, complex128
otherwise; integers and booleans are decomposed as float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..ops import eig as _eig
from . import linalg_ops as _lo
from ._util import as_dtype as _as_dtype

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def _input(a, fname):
    x = _lo._arr(a, f"linalg.{fname}")
    if dtype_kind(np.dtype(x.dtype)) not in "fc":
        x = _as_dtype(x, dtypes.default_float())
    elif np.dtype(x.dtype) == np.float16:
        x = _as_dtype(x, np.float32)  # LAPACK has no half precision (nor has JAX's eig)
    return x


def eig(a):
    """The eigenvalues and right eigenvectors (columns) of general square matrices:
    ``EigResult(eigenvalues, eigenvectors)``, complex, with ``a @ v == v * w``, each
    eigenvector of unit norm, in LAPACK's order (not sorted).  Differentiating the
    eigenvectors needs ``zerax.lax.linalg.eig(..., enable_eigvec_derivs=True)`` (as in
    JAX); the eigenvalues (`eigvals`) are always differentiable.

    >>> import zerax.numpy as znp
    >>> w, v = znp.linalg.eig(znp.array([[0.0, -1.0], [1.0, 0.0]]))
    >>> w
    Array([0.+1.j, 0.-1.j], dtype=complex128)
    """
    w, v = _eig.eig(_input(a, "eig"), compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues of general square matrices, complex, in LAPACK's order; their
    derivative is ``diag(V^-1 dA V)``.

    >>> import zerax.numpy as znp
    >>> znp.linalg.eigvals(znp.array([[1.0, 2.0], [0.0, 3.0]]))
    Array([1.+0.j, 3.+0.j], dtype=complex128)
    """
    (w,) = _eig.eig(_input(a, "eigvals"), compute_left_eigenvectors=False,
                    compute_right_eigenvectors=False)
    return w
