"""Elementwise special functions on NumPy arrays: erf, erfc, lgamma, digamma, polygamma, erf_inv.

This module owns two layers:

* **Scalar kernels** (``erf_scalar``, ``erfc_scalar``, ``lgamma_scalar``, ``digamma_scalar``,
  ``polygamma_scalar``, ``erf_inv_scalar``): plain Python functions of float64 scalars that use
  only :mod:`math` and arithmetic.  Each one is self-contained (it calls no other Python
  function of this module), so it can be compiled as-is with ``numba.njit`` -- a Numba
  backend calls them from generated njit code -- and it also runs in plain Python.
* **Array functions** (``erf``, ``erfc``, ``lgamma``, ``digamma``, ``polygamma``,
  ``erf_inv``): take an ndarray of any shape (0-d included) and return an ndarray of the same
  shape and floating dtype.  float32 (and other non-float64 floating) inputs are computed in
  float64 and cast back.  The kernels are compiled into NumPy ufuncs lazily, the first
  time each function is called, by the compiler the CPU backend installs
  (`install_vectorizer`: Numba's ``numba.vectorize``), so importing this module neither
  imports nor runs Numba.

Conventions (matching JAX): ``lgamma`` is ``log|Gamma(x)|`` and is ``+inf`` at non-positive
integers; ``digamma`` and ``polygamma`` are ``nan`` at non-positive integers; ``erf_inv`` is
``+-inf`` at ``+-1`` and ``nan`` outside ``[-1, 1]``.  SciPy is never imported.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ... import errors
from .dtypes import kind as dtype_kind

__all__ = [
    "digamma",
    "digamma_scalar",
    "erf",
    "erf_inv",
    "erf_inv_scalar",
    "erf_scalar",
    "erfc",
    "erfc_scalar",
    "lgamma",
    "lgamma_scalar",
    "polygamma",
    "polygamma_scalar",
]

# ---------------------------------------------------------------------------------------------
# Constants (module-level floats/tuples are frozen as compile-time constants by Numba).
# ---------------------------------------------------------------------------------------------

# Largest double whose lgamma is finite; above it math.lgamma overflows (raises in CPython).
_LGAMMA_MAX_X = 2.5599833278516383e305

# Positive zero of digamma, rounded to double, and digamma at that double.
_PSI_ROOT = 1.4616321449683622
_PSI_ROOT_VAL = -9.241265521729427e-17
# Taylor coefficients of digamma around _PSI_ROOT, highest degree first (for Horner):
# psi(root + h) = psi(root) + sum_{n>=1} (-1)^(n+1) zeta(n+1, root) h^n.  Used for |h| <= 1/8.
_PSI_ROOT_COEFFS = (
    -0.000738070938996006,
    0.0010788252019162978,
    -0.001576936771430199,
    0.00230512632673493,
    -0.0033698016554393312,
    0.004926781395729858,
    -0.007204534386356875,
    0.010538791616612184,
    -0.01542476590494897,
    0.022597648232218118,
    -0.033161126474847376,
    0.04880428816414313,
    -0.07219956125645474,
    0.10782405069126241,
    -0.16394270544240658,
    0.2584997609556511,
    -0.4427631689835922,
    0.9676722454476212,
)
_PSI_ROOT_RADIUS = 0.125
# |B_2k| / (2k), k = 1..8: digamma asymptotic series psi(x) ~ log x - 1/(2x) - sum B_2k/(2k x^2k).
_B1 = 1.0 / 12.0
_B2 = 1.0 / 120.0
_B3 = 1.0 / 252.0
_B4 = 1.0 / 240.0
_B5 = 1.0 / 132.0
_B6 = 691.0 / 32760.0
_B7 = 1.0 / 12.0
_B8 = 3617.0 / 8160.0

# (2j)! / B_{2j}, j = 1..12: Euler-Maclaurin coefficients for the Hurwitz zeta tail.
_EM_DENOMS = (
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
)

# Every double <= -2**52 is an integer (and int(x) is safe in int64 above it).
_MIN_NONINTEGER = -4503599627370496.0

# Below this x, polygamma (m >= 1) reflects instead of recurring term by term.
_POLYGAMMA_REFLECT_BELOW = -64.0

_SQRT_PI_OVER_2 = 0.88622692545275801365


# ---------------------------------------------------------------------------------------------
# Scalar kernels.  Rules: only `math` + arithmetic, no calls to other functions of this module,
# no division by zero (Numba's default error model would raise), no exceptions for finite input.
# ---------------------------------------------------------------------------------------------


def erf_scalar(x):
    """Error function of a float64 scalar (``math.erf``)."""
    return math.erf(x)


def erfc_scalar(x):
    """Complementary error function ``1 - erf(x)`` of a float64 scalar (``math.erfc``)."""
    return math.erfc(x)


def lgamma_scalar(x):
    """``log|Gamma(x)|`` of a float64 scalar; ``+inf`` at non-positive integers and at +-inf.

    Compiled, ``math.lgamma`` is the C library's; in plain Python it is CPython's own, which is
    a few ulps less accurate near the zeros of lgamma (x = 1, 2 and on the negative axis).
    """
    if math.isnan(x):
        return x
    if math.isinf(x) or x > _LGAMMA_MAX_X:
        return math.inf
    if x <= 0.0 and (x <= _MIN_NONINTEGER or x == float(int(x))):
        return math.inf
    return math.lgamma(x)


def digamma_scalar(x):
    """Digamma ``psi(x) = d/dx log Gamma(x)`` of a float64 scalar; nan at non-positive integers.

    Negative x is reflected, ``psi(x) = psi(1 - x) - pi cot(pi x)``; near the positive zero a
    Taylor series keeps full relative accuracy; otherwise the recurrence
    ``psi(x) = psi(x + 1) - 1/x`` shifts x to >= 10 for the asymptotic expansion.
    """
    if math.isnan(x):
        return x
    if x == math.inf:
        return math.inf
    if x == -math.inf:
        return math.nan
    result = 0.0
    if x <= 0.0:
        if x <= _MIN_NONINTEGER:
            return math.nan
        r = x - float(int(x))  # exact, in (-1, 0]
        if r == 0.0:
            return math.nan
        if r < -0.5:
            r += 1.0  # exact; cot has period 1
        result = -math.pi / math.tan(math.pi * r)
        x = 1.0 - x
    h = x - _PSI_ROOT
    if abs(h) <= _PSI_ROOT_RADIUS:
        p = 0.0
        for c in _PSI_ROOT_COEFFS:
            p = p * h + c
        return result + (_PSI_ROOT_VAL + h * p)
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv_x = 1.0 / x
    z = inv_x * inv_x  # asymptotic series: B_2k / (2k x^2k), k = 1..8
    tail = z * (
        _B1 - z * (_B2 - z * (_B3 - z * (_B4 - z * (_B5 - z * (_B6 - z * (_B7 - z * _B8))))))
    )
    return result + (math.log(x) - 0.5 * inv_x - tail)


def polygamma_scalar(m, x):
    """Polygamma ``psi^(m)(x)``, the m-th derivative of digamma, for an integer ``m >= 0``.

    ``m == 0`` is digamma (same algorithm as :func:`digamma_scalar`).  For ``m >= 1`` it is
    ``(-1)^(m+1) m! zeta(m+1, x)`` with the Hurwitz zeta computed by the recurrence
    ``zeta(s, x) = x^-s + zeta(s, x + 1)`` up to ``x >= 10 + s`` and an Euler-Maclaurin tail.
    Very negative x uses the reflection ``zeta(s, x) = zeta(s, f) + (-1)^s [zeta(s, 1 - f) -
    zeta(s, 1 - x)]`` with ``f = x - floor(x)``.  nan at non-positive integers and for m < 0.
    """
    if math.isnan(x):
        return x
    if m < 0:
        return math.nan
    if m == 0:
        # ---- digamma; keep in sync with digamma_scalar (kernels must stay self-contained) ----
        if x == math.inf:
            return math.inf
        if x == -math.inf:
            return math.nan
        result = 0.0
        if x <= 0.0:
            if x <= _MIN_NONINTEGER:
                return math.nan
            r = x - float(int(x))
            if r == 0.0:
                return math.nan
            if r < -0.5:
                r += 1.0
            result = -math.pi / math.tan(math.pi * r)
            x = 1.0 - x
        h = x - _PSI_ROOT
        if abs(h) <= _PSI_ROOT_RADIUS:
            p = 0.0
            for c in _PSI_ROOT_COEFFS:
                p = p * h + c
            return result + (_PSI_ROOT_VAL + h * p)
        while x < 10.0:
            result -= 1.0 / x
            x += 1.0
        inv_x = 1.0 / x
        z = inv_x * inv_x  # asymptotic series: B_2k / (2k x^2k), k = 1..8
        tail = z * (
            _B1 - z * (_B2 - z * (_B3 - z * (_B4 - z * (_B5 - z * (_B6 - z * (_B7 - z * _B8))))))
        )
        return result + (math.log(x) - 0.5 * inv_x - tail)

    # ---- m >= 1 ----
    if x == -math.inf:
        return math.nan
    s = m + 1
    sf = float(s)
    fact = 1.0
    for i in range(2, m + 1):
        fact *= i
    sign = 1.0 if m % 2 == 1 else -1.0  # (-1)^(m+1)
    if x == math.inf:
        return sign * 0.0
    r = 0.0
    if x <= 0.0:
        if x <= _MIN_NONINTEGER:
            return math.nan
        r = x - float(int(x))  # exact, in (-1, 0]
        if r == 0.0:
            return math.nan
    odd_s = s % 2 == 1
    parity = -1.0 if odd_s else 1.0  # (-1)^s
    a_min = 10.0 + sf
    # |a| below this makes |a|^-s overflow (math.pow raises OverflowError in CPython).
    tiny = math.exp(-700.0 / sf)
    npieces = 1 if x > _POLYGAMMA_REFLECT_BELOW else 3
    total = 0.0
    for piece in range(npieces):
        if npieces == 1:
            a = x
            w = 1.0
        elif piece == 0:
            a = 1.0 + r  # f = x - floor(x), exact here because |x| >= 1
            w = 1.0
        elif piece == 1:
            a = -r  # 1 - f
            w = parity
        else:
            a = 1.0 - x
            w = -parity
        zeta = 0.0
        while a < a_min:
            if abs(a) < tiny:
                zeta += -math.inf if (odd_s and a < 0.0) else math.inf
            else:
                zeta += math.pow(a, -sf)
            a += 1.0
        ap = math.pow(a, -sf)
        zeta += math.pow(a, 1.0 - sf) / (sf - 1.0) + 0.5 * ap
        inv_a = 1.0 / a
        inv_a2 = inv_a * inv_a  # not 1/(a*a): a*a may overflow
        t = sf * ap * inv_a  # (s)_{2j-1} a^{-s-2j+1} for j = 1
        k = sf
        for d in _EM_DENOMS:
            zeta += t / d
            t *= (k + 1.0) * (k + 2.0) * inv_a2
            k += 2.0
        total += w * zeta
    return sign * fact * total


def erf_inv_scalar(x):
    """Inverse error function of a float64 scalar: ``erf(erf_inv(x)) == x`` on (-1, 1).

    ``+-inf`` at ``+-1`` and nan outside ``[-1, 1]``.  Giles' rational approximation in
    ``w = -log(1 - x^2)`` followed by Halley steps on ``erf(y) - x`` (on ``(1-|x|) - erfc(y)``
    for ``|x| > 1/2``, which keeps full accuracy in the tails).
    """
    if math.isnan(x):
        return x
    a = abs(x)
    if a > 1.0:
        return math.nan
    if a == 1.0:
        return math.copysign(math.inf, x)
    if a == 0.0:
        return x
    w = -math.log((1.0 - a) * (1.0 + a))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
        y = p * a
    elif w < 16.0:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
        y = p * a
    else:
        # Far tail (1 - |x| < ~5e-8, beyond the fit):
        # erfc(y) ~ exp(-y^2) (1 - 1/(2y^2)) / (y sqrt(pi)), solved for y^2 by fixed-point iteration.
        big_l = -math.log(1.0 - a)
        y2 = big_l - 0.5 * math.log(math.pi * big_l)
        for _ in range(2):
            y2 = big_l - 0.5 * math.log(math.pi * y2) + math.log(1.0 - 0.5 / y2)
        y = math.sqrt(y2)
    one_minus_a = 1.0 - a  # exact for a >= 1/2
    for _ in range(4):
        if a <= 0.5:
            g = math.erf(y) - a
        else:
            g = one_minus_a - math.erfc(y)
        t = g * _SQRT_PI_OVER_2 * math.exp(y * y)  # g / erf'(y)
        step = t / (1.0 + y * t)  # Halley: erf''/erf' = -2y
        y -= step
        if abs(step) <= 1e-17 * y:
            break
    return math.copysign(y, x)


# ---------------------------------------------------------------------------------------------
# Lazily compiled ufuncs and the array API.
# ---------------------------------------------------------------------------------------------

# Compiled on first use by the compiler the CPU backend installs (`install_vectorizer`:
# Numba's public ``numba.vectorize``, backends/vectorize.py): this layer owns the
# kernels and imports no compiler.  No on-disk cache: Numba's is pickled files (none
# anywhere in zerax), so each process compiles a kernel once, on first use.
_UFUNCS: dict = {}
_UFUNC_LOCK = threading.Lock()
_VECTORIZER: list = []

_KERNEL_SIGNATURES = {
    "erf": (erf_scalar, ["float64(float64)"]),
    "erfc": (erfc_scalar, ["float64(float64)"]),
    "lgamma": (lgamma_scalar, ["float64(float64)"]),
    "digamma": (digamma_scalar, ["float64(float64)"]),
    "polygamma": (polygamma_scalar, ["float64(int64, float64)"]),
    "erf_inv": (erf_inv_scalar, ["float64(float64)"]),
}


def install_vectorizer(vectorize) -> None:
    """Set the compiler of scalar kernels: ``vectorize(kernel, signatures)`` returns a
    NumPy ufunc applying ``kernel`` elementwise for the given signatures."""
    _VECTORIZER[:] = [vectorize]


def compiled_ufunc(name, kernel, signatures):
    """The ufunc of scalar ``kernel`` (under ``name``), compiled on first use."""
    uf = _UFUNCS.get(name)
    if uf is None:
        with _UFUNC_LOCK:
            uf = _UFUNCS.get(name)
            if uf is None:
                if not _VECTORIZER:
                    raise errors.ZeraxInternalError(
                        f"the special function {name} needs the CPU backend's compiler, "
                        "which `import zerax` installs; it was not installed")
                uf = _UFUNCS[name] = _VECTORIZER[0](kernel, signatures)
    return uf


def _ufunc(name):
    fn, sigs = _KERNEL_SIGNATURES[name]
    return compiled_ufunc(name, fn, sigs)


def _as_float_array(x):
    """``(x as a float64 ndarray, dtype the result should have)``."""
    arr = np.asarray(x)
    dtype = arr.dtype
    if dtype.kind == "c":
        raise TypeError(f"special functions take real floating arrays, got dtype {dtype}")
    if dtype_kind(dtype) != "f":
        dtype = np.dtype(np.float64)
    return arr.astype(np.float64, copy=False), dtype


def _finish(out, dtype):
    return np.asarray(out).astype(dtype, copy=False)


def _apply(name, x):
    arr, dtype = _as_float_array(x)
    return _finish(_ufunc(name)(arr), dtype)


def erf(x):
    """Elementwise error function.

    >>> import numpy as np
    >>> round(float(erf(np.array(0.5))), 6)
    0.5205
    """
    return _apply("erf", x)


def erfc(x):
    """Elementwise complementary error function ``1 - erf(x)``, accurate for large x.

    >>> import numpy as np
    >>> round(float(erfc(np.array(0.5))), 6)
    0.4795
    """
    return _apply("erfc", x)


def lgamma(x):
    """Elementwise ``log|Gamma(x)|``; ``+inf`` at non-positive integers.

    >>> import numpy as np
    >>> lgamma(np.array([1.0, 2.0, 0.0])).tolist()
    [0.0, 0.0, inf]
    """
    return _apply("lgamma", x)


def digamma(x):
    """Elementwise digamma ``psi(x) = d/dx log Gamma(x)``; nan at non-positive integers.

    >>> import numpy as np
    >>> round(float(digamma(np.array(1.0))), 6)
    -0.577216
    """
    return _apply("digamma", x)


def polygamma(m, x):
    """Elementwise polygamma ``psi^(m)(x)`` for a static Python int ``m >= 0`` (m=0: digamma).

    >>> import numpy as np
    >>> round(float(polygamma(1, np.array(1.0))), 6)  # pi**2 / 6
    1.644934
    """
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"polygamma order m must be a Python int, got {m!r}")
    m = int(m)
    if m < 0:
        raise ValueError(f"polygamma order m must be >= 0, got {m}")
    arr, dtype = _as_float_array(x)
    return _finish(_ufunc("polygamma")(np.int64(m), arr), dtype)


def erf_inv(x):
    """Elementwise inverse error function on ``[-1, 1]`` (``+-inf`` at ``+-1``, nan outside).

    >>> import numpy as np
    >>> round(float(erf_inv(np.array(0.5))), 6)
    0.476936
    """
    return _apply("erf_inv", x)
