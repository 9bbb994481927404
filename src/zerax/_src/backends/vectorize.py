"""The compiler of the special functions' scalar kernels (``base/special.py``,
``base/special_kernels.py``) into NumPy ufuncs: Numba's public ``numba.vectorize``.

It is the one use of Numba left in zerax: those kernels are series, recurrences and
continued fractions written as plain Python over floats, which the kernel IR has no
rule for yet.  Installed into ``base.special`` when ``zerax._src.backends`` is imported
(``import zerax`` does), so that the layer owning the kernels imports no compiler;
Numba itself is imported on the first call of such a function.
"""

from __future__ import annotations

from ..base import special


def vectorize(kernel, signatures):
    """``kernel`` (a function of float64 scalars) as a NumPy ufunc for ``signatures``."""
    import numba
    return numba.vectorize(signatures)(kernel)


special.install_vectorizer(vectorize)
