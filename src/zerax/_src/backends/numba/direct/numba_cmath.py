"""Numba's complex128 ``np.log``, ``np.log1p``, ``np.sqrt``, ``np.arcsinh``,
``np.arccos`` and ``np.arctanh`` (``numba/cpython/cmathimpl.py`` and ``numba/np/
npyfuncs.py``: CPython's and NumPy's algorithms) as plain Python, which the translator
compiles as it compiles zerax's njit helpers (helpers.py), so that a kernel calling
them computes what Numba's kernel computed.  The constants are Numba's, including the
float32 thresholds its ``acos``/``asinh``/``atanh`` use for complex128 too."""

from __future__ import annotations

import math

import numpy as np

_INF = math.inf
_NAN = math.nan
_SQRT_THRES = float(np.finfo(np.float64).max) / (1. + 1.414213562373095048801688724209698079E0)
_LN_4 = math.log(4)
_THRES = float(np.finfo(np.float32).max) / 4
_THRES_LARGE = math.sqrt(float(np.finfo(np.float32).max) / 4)
_THRES_SMALL = math.sqrt(float(np.finfo(np.float32).tiny))
_PI_12 = math.pi / 2


def _log(z):
    return complex(math.log(math.hypot(z.real, z.imag)), math.atan2(z.imag, z.real))


def _log1p(z):
    x1 = z.real + 1.0
    return complex(math.log(math.hypot(x1, z.imag)), math.atan2(z.imag, x1))


def _sqrt(z):
    a = z.real
    b = z.imag
    if a == 0.0 and b == 0.0:
        return complex(abs(b), b)
    if math.isinf(b):
        return complex(abs(b), b)
    if math.isnan(a):
        return complex(a, a)
    if math.isinf(a):
        if a < 0.0:
            return complex(abs(b - b), math.copysign(a, b))
        return complex(a, math.copysign(b - b, b))
    if abs(a) >= _SQRT_THRES or abs(b) >= _SQRT_THRES:
        a *= 0.25
        b *= 0.25
        scale = True
    else:
        scale = False
    if a >= 0:
        t = math.sqrt((a + math.hypot(a, b)) * 0.5)
        real = t
        imag = b / (2 * t)
    else:
        t = math.sqrt((-a + math.hypot(a, b)) * 0.5)
        real = abs(b) / (2 * t)
        imag = math.copysign(t, b)
    if scale:
        return complex(real * 2, imag)
    return complex(real, imag)


def _acos(z):
    if abs(z.real) > _THRES or abs(z.imag) > _THRES:
        real = math.atan2(abs(z.imag), z.real)
        imag = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + _LN_4,
                             -z.imag)
        return complex(real, imag)
    s1 = _sqrt(complex(1. - z.real, -z.imag))
    s2 = _sqrt(complex(1. + z.real, z.imag))
    real = 2. * math.atan2(s1.real, s2.real)
    imag = math.asinh(s2.real * s1.imag - s2.imag * s1.real)
    return complex(real, imag)


def _asinh(z):
    if abs(z.real) > _THRES or abs(z.imag) > _THRES:
        real = math.copysign(math.log(math.hypot(z.real * 0.5, z.imag * 0.5)) + _LN_4,
                             z.real)
        imag = math.atan2(z.imag, abs(z.real))
        return complex(real, imag)
    s1 = _sqrt(complex(1. + z.imag, -z.real))
    s2 = _sqrt(complex(1. - z.imag, z.real))
    real = math.asinh(s1.real * s2.imag - s2.real * s1.imag)
    imag = math.atan2(z.imag, s1.real * s2.real - s1.imag * s2.imag)
    return complex(real, imag)


def _atanh(z):
    if z.real < 0.:
        negate = True
        z = -z
    else:
        negate = False
    ay = abs(z.imag)
    if math.isnan(z.real) or z.real > _THRES_LARGE or ay > _THRES_LARGE:
        if math.isinf(z.imag):
            real = math.copysign(0., z.real)
        elif math.isinf(z.real):
            real = 0.
        else:
            h = math.hypot(z.real * 0.5, z.imag * 0.5)
            real = z.real / 4. / h / h
        imag = -math.copysign(_PI_12, -z.imag)
    elif z.real == 1. and ay < _THRES_SMALL:
        if ay == 0.:
            real = _INF
            imag = z.imag
        else:
            real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.)))
            imag = math.copysign(math.atan2(2., -ay) / 2, z.imag)
    else:
        sqay = ay * ay
        zr1 = 1 - z.real
        real = math.log1p(4. * z.real / (zr1 * zr1 + sqay)) * 0.25
        imag = -math.atan2(-2. * z.imag, zr1 * (1 + z.real) - sqay) * 0.5
    if math.isnan(z.imag):
        imag = _NAN
    if negate:
        return complex(-real, -imag)
    return complex(real, imag)


# np.<name> of a complex128 scalar -> its function here
NP_FUNCTIONS = {"log": _log, "log1p": _log1p, "sqrt": _sqrt, "arcsinh": _asinh,
                "arccos": _acos, "arctanh": _atanh}
TRANSLATABLE = frozenset(NP_FUNCTIONS.values())
