"""Spherical harmonics: ``sph_harm_y`` and JAX's older ``sph_harm``.
"""

from __future__ import annotations

import numpy as np

from ..... import errors
from .... import numpy as jnp
from ....numpy._util import check_arg, promote_and_broadcast
from ....ops import elementwise as ew
from ....ops import special_ops as so
from ._util import _floats


def _int_arg(x, fname, i):
    x = jnp.asarray(check_arg(x, fname, i))
    if np.dtype(x.dtype).kind not in "iub":
        raise errors.ZeraxTypeError(f"zerax.scipy.special.{fname}: the degree n and order m "
                                    f"must be integers, got dtype {np.dtype(x.dtype).name}")
    return x


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic ``Y_n^m(theta, phi)`` of degree ``n`` and order ``m``
    (integers), ``theta`` the polar (colatitude) and ``phi`` the azimuthal angle: JAX's and
    SciPy's ``sph_harm_y``, ``sqrt((2n+1)/(4 pi) (n-m)!/(n+m)!) P_n^m(cos theta) e^(i m
    phi)`` with the Condon-Shortley phase.

    The arguments broadcast together (JAX wants 1-d arrays; scalars are fine here); 0
    where ``|m| > n`` or ``n < 0``.  ``n_max``, when given, clips ``n`` and ``|m|`` to it
    as JAX does; it is never needed (``n`` may be traced under ``jit``).  ``diff_n``:
    only None or 0 (JAX supports neither other value; use ``zerax.grad``).
    ``theta`` enters through ``cos(theta)`` and ``|sin(theta)|`` (as in SciPy and JAX).
    Differentiable in ``theta`` and ``phi``; at the poles, where JAX's derivative is nan,
    the one-sided derivative from ``0 < theta < pi``.  The result is complex64 for
    float32 angles, complex128 otherwise.

    >>> import zerax.scipy.special as zsp
    >>> y = zsp.sph_harm_y(3, 2, 0.7, 0.3)
    >>> round(float(y.real), 12), round(float(y.imag), 12)
    (0.26773949122, 0.183170440991)
    """
    if diff_n not in (None, 0):
        raise errors.NotSupportedError(
            "zerax.scipy.special.sph_harm_y: diff_n other than 0 is not supported (JAX "
            "supports none); take derivatives with zerax.grad or zerax.jacfwd")
    n, m = _int_arg(n, "sph_harm_y", 0), _int_arg(m, "sph_harm_y", 1)
    theta, phi = _floats("sph_harm_y", theta, phi)
    if theta.dtype.itemsize < 4:
        theta, phi = theta.astype(np.float32), phi.astype(np.float32)
    if n_max is not None:
        n_max = int(n_max)
        if n_max < 0:
            raise errors.ZeraxValueError("zerax.scipy.special.sph_harm_y: n_max must be >= 0, "
                                         f"got {n_max}")
        n = jnp.minimum(n, n_max)
        m = jnp.clip(m, -n_max, n_max)
    n, m, theta, phi = promote_and_broadcast("sph_harm_y", [n, m, theta, phi], theta.dtype)
    leg = so.sph_legendre(n, m, theta)
    angle = m * phi
    return ew.complex_(leg * jnp.cos(angle), leg * jnp.sin(angle))


def sph_harm(m, n, theta, phi, n_max=None):
    """The spherical harmonic ``Y_n^m`` with JAX's older (SciPy's deprecated) argument
    order and convention: ``theta`` the azimuthal and ``phi`` the polar angle, i.e.
    ``sph_harm_y(n, m, phi, theta)``.

    >>> import zerax.scipy.special as zsp
    >>> y = zsp.sph_harm(2, 3, 0.3, 0.7)
    >>> round(float(y.real), 12), round(float(y.imag), 12)
    (0.26773949122, 0.183170440991)
    """
    return sph_harm_y(n, m, phi, theta, n_max=n_max)
