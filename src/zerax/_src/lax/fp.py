"""Floating-point decomposition on the primitives: ``frexp``'s mantissa and exponent, the
unit in the last place, and ``nextafter`` (exact, for operands of one float dtype and
shape).  ``lax.nextafter`` and ``zerax.numpy``'s ``frexp``/``spacing``/``nextafter`` use
them."""

from __future__ import annotations

import math

import numpy as np

from ..ops import elementwise as ew


def _k(v, dtype):
    """A 0-d NumPy constant of ``dtype``."""
    return np.array(v, dtype=dtype)


def _exp2i(e, dtype):
    return ew.bind(ew.exp2_p, e)


def _frexp(x):
    """(mantissa, exponent as a float of x's dtype) with NumPy's results for 0, inf, nan."""
    dt = np.dtype(x.dtype)
    one, zero = _k(1, dt), _k(0, dt)
    special = ew.bitwise_or(ew.eq(x, zero), ew.bitwise_not(ew.is_finite(x)))
    safe = ew.select_n(special, ew.bind(ew.abs_p, x), one)
    e = ew.add(ew.floor(ew.div(ew.log(safe), _k(math.log(2.0), dt))), one)
    # x * 2**-e in two halves: each factor stays finite even for subnormal x
    h1 = ew.floor(ew.mul(ew.neg(e), _k(0.5, dt)))
    h2 = ew.sub(ew.neg(e), h1)
    xs = ew.select_n(special, x, one)
    m = ew.mul(ew.mul(xs, _exp2i(h1, dt)), _exp2i(h2, dt))
    for _ in range(2):  # log's rounding can leave m just outside [0.5, 1)
        big = ew.ge(ew.bind(ew.abs_p, m), one)
        m = ew.select_n(big, m, ew.mul(m, _k(0.5, dt)))
        e = ew.select_n(big, e, ew.add(e, one))
        small = ew.lt(ew.bind(ew.abs_p, m), _k(0.5, dt))
        m = ew.select_n(small, m, ew.mul(m, _k(2, dt)))
        e = ew.select_n(small, e, ew.sub(e, one))
    return ew.select_n(special, m, x), ew.select_n(special, e, zero)


def _ulp(mag, dt, shift=0):
    """``2**(e - 1 - nmant + shift)`` for ``mag = m * 2**e``, at least the smallest
    subnormal."""
    info = np.finfo(dt)
    _, e = _frexp(mag)
    tiny = _k(info.minexp - info.nmant, dt)
    p = ew.maximum(ew.add(e, _k(shift - 1 - info.nmant, dt)), tiny)
    p = ew.select_n(ew.eq(mag, _k(0, dt)), p, tiny)
    return _exp2i(p, dt)


def nextafter(a, b):
    """The next representable float after ``a`` towards ``b`` (one float dtype; equal
    shapes, or 0-d operands)."""
    dt = np.dtype(a.dtype)
    info = np.finfo(dt)
    zero = _k(0, dt)
    mag = ew.bind(ew.abs_p, a)
    up = ew.eq(ew.gt(b, a), ew.gt(a, zero))          # does |x1| grow?
    m, _ = _frexp(mag)
    pow2 = ew.eq(m, _k(0.5, dt))
    down = _ulp(mag, dt, -1)
    down = ew.select_n(pow2, _ulp(mag, dt), down)
    new = ew.select_n(up, ew.sub(mag, down), ew.add(mag, _ulp(mag, dt)))
    new = ew.select_n(ew.is_finite(mag), _k(info.max, dt), new)   # from inf, down to max
    out = ew.select_n(ew.lt(a, zero), new, ew.neg(new))
    tiny = _k(info.smallest_subnormal, dt)
    out = ew.select_n(ew.eq(a, zero), out, ew.select_n(ew.gt(b, zero), ew.neg(tiny), tiny))
    out = ew.select_n(ew.eq(a, b), out, b)
    nan = ew.bitwise_or(ew.isnan(a), ew.isnan(b))
    return ew.select_n(nan, out, _k(np.nan, dt))
