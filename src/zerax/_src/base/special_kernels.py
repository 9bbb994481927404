"""More elementwise special functions on NumPy arrays: incomplete gamma and beta functions,
Bessel functions of orders 0 and 1 (J, Y, and the exponentially scaled modified I), the
Hurwitz zeta, and the exponential integrals E_n and Ei.

The same two layers as ``special.py``: self-contained **scalar kernels** of float64
scalars (only ``math`` and arithmetic, no calls to other functions of this module, no
division by zero, so ``numba.njit`` compiles them as they are and a jitted program calls
them), and **array functions** that apply them through ``numba.vectorize`` compiled lazily
on first use (float32 computed in float64 and cast back).  SciPy is never imported.

Algorithms: the incomplete gamma functions are Cephes' (the power series below
``x <= max(1, a)``, the continued fraction above it), with their derivative in ``a``
carried along as a dual number (the caller passes ``digamma(a)``); the incomplete beta
function is the continued fraction of Numerical Recipes (modified Lentz) on the side of
``(a + 1) / (a + b + 2)`` where it converges fast; ``i0e``/``i1e`` sum the power series
up to ``|x| = 30`` and the asymptotic series above; ``zeta(s, q)`` is the recurrence
``zeta(s, q) = q**-s + zeta(s, q + 1)`` followed by an Euler-Maclaurin tail; ``E_n``
and ``Ei`` are Numerical Recipes' series, continued fraction and asymptotic series;
``J0``, ``J1``, ``Y0``, ``Y1`` are described at ``bessel_jy_scalar``.
"""

from __future__ import annotations

import math
import threading

import numpy as np

__all__ = ["bessel_jy", "bessel_jy_scalar", "betainc", "betainc_scalar", "expi", "expint_scalar",
           "expn", "i0e", "i0e_scalar", "i1e", "i1e_scalar", "igamma", "igamma_grad_a",
           "igamma_grad_a_scalar", "igamma_scalar", "igammac", "iv", "iv_scalar", "jv",
           "jv_scalar", "sph_legendre", "sph_legendre_scalar", "zeta", "zeta_scalar"]

_MACHEP = 1.11022302462515654042e-16
_MAXLOG = 709.782712893384
_BIG = 4.503599627370496e15
_BIGINV = 2.22044604925031308085e-16
_FPMIN = 1e-300
_MAXITER = 100000
# B_2k / (2k)! denominators' reciprocals for Euler-Maclaurin: the j-th term is
# B_2j / (2j)! * (s)_(2j-1) * q^(-s-2j+1); these are (2j)! / B_2j.
_EM_DENOMS = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
              7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
              -4.5979787224074726105e15, 1.8152105401943546773e17,
              -7.1661652561756670113e18)


def igamma_scalar(a, x, upper):
    """Cephes' regularized incomplete gamma: ``P(a, x)`` (``upper == 0``) or ``Q(a, x)``."""
    if a != a or x != x or a < 0.0 or x < 0.0:
        return math.nan
    if a == 0.0:
        if x > 0.0:
            return 0.0 if upper != 0.0 else 1.0
        return math.nan
    if x == 0.0:
        return 1.0 if upper != 0.0 else 0.0
    if a == math.inf:
        if x == math.inf:
            return math.nan
        return 1.0 if upper != 0.0 else 0.0
    if x == math.inf:
        return 0.0 if upper != 0.0 else 1.0
    ax = a * math.log(x) - x - math.lgamma(a)
    series = x <= 1.0 or x <= a
    if ax < -_MAXLOG:       # the prefactor underflows: the series side is 0
        if series:
            return 1.0 if upper != 0.0 else 0.0
        return 0.0 if upper != 0.0 else 1.0
    pref = math.exp(ax)
    if series:
        r, c, ans = a, 1.0, 1.0
        for _ in range(_MAXITER):
            r += 1.0
            c *= x / r
            ans += c
            if c <= ans * _MACHEP:
                break
        p = ans * pref / a
        return 1.0 - p if upper != 0.0 else p
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, z * x
    ans = pkm1 / qkm1
    for _ in range(_MAXITER):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        t = 1.0
        if qk != 0.0:
            r = pk / qk
            if r != 0.0:
                t = abs((ans - r) / r)
            ans = r
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        if abs(pk) > _BIG:
            pkm2 *= _BIGINV
            pkm1 *= _BIGINV
            qkm2 *= _BIGINV
            qkm1 *= _BIGINV
        if t <= _MACHEP:
            break
    q = ans * pref
    return q if upper != 0.0 else 1.0 - q


def igamma_grad_a_scalar(a, x, psi_a):
    """``d P(a, x) / da``: the kernels of ``igamma_scalar`` with dual numbers in ``a``;
    ``psi_a`` is ``digamma(a)`` (kernels do not call each other)."""
    if a != a or x != x or a <= 0.0 or x < 0.0 or a == math.inf:
        return math.nan
    if x == 0.0 or x == math.inf:
        return 0.0
    lx = math.log(x)
    ax = a * lx - x - math.lgamma(a)
    if ax < -_MAXLOG:
        return 0.0
    pref = math.exp(ax)
    dax = lx - psi_a
    if x <= 1.0 or x <= a:
        r, c, ans, dc, dans = a, 1.0, 1.0, 0.0, 0.0
        for _ in range(_MAXITER):
            r += 1.0
            dc = dc * x / r - c * x / (r * r)
            c *= x / r
            ans += c
            dans += dc
            if c <= ans * _MACHEP and abs(dc) <= abs(dans) * _MACHEP:
                break
        return pref / a * (dans + ans * (dax - 1.0 / a))
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, z * x
    dpkm2, dqkm2, dpkm1, dqkm1 = 0.0, 0.0, 0.0, -x
    ans = pkm1 / qkm1
    dans = -pkm1 * dqkm1 / (qkm1 * qkm1)
    for _ in range(_MAXITER):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        t = 1.0
        if qk != 0.0:
            r = pk / qk
            dr = (dpk - r * dqk) / qk
            if r != 0.0 and dr != 0.0:
                t = max(abs((ans - r) / r), abs((dans - dr) / dr))
            elif r != 0.0:
                t = abs((ans - r) / r)
            ans, dans = r, dr
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1, dpk, dqkm1, dqk
        if abs(pk) > _BIG:
            pkm2 *= _BIGINV
            pkm1 *= _BIGINV
            qkm2 *= _BIGINV
            qkm1 *= _BIGINV
            dpkm2 *= _BIGINV
            dpkm1 *= _BIGINV
            dqkm2 *= _BIGINV
            dqkm1 *= _BIGINV
        if t <= _MACHEP:
            break
    return -pref * (dans + ans * dax)      # dP/da = -dQ/da


def betainc_scalar(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (a, b > 0, 0 <= x <= 1)."""
    if a != a or b != b or x != x or a <= 0.0 or b <= 0.0 or x < 0.0 or x > 1.0:
        return math.nan
    if x == 0.0:
        return 0.0
    if x == 1.0:
        return 1.0
    swap = x > (a + 1.0) / (a + b + 2.0)
    if swap:
        aa, bb, xx = b, a, 1.0 - x
        lx, l1x = math.log1p(-x), math.log(x)
    else:
        aa, bb, xx = a, b, x
        lx, l1x = math.log(x), math.log1p(-x)
    lbt = (math.lgamma(aa + bb) - math.lgamma(aa) - math.lgamma(bb) + aa * lx + bb * l1x)
    qab, qap, qam = aa + bb, aa + 1.0, aa - 1.0
    c = 1.0
    d = 1.0 - qab * xx / qap
    if abs(d) < _FPMIN:
        d = _FPMIN
    d = 1.0 / d
    h = d
    for m in range(1, _MAXITER):
        fm = float(m)
        m2 = 2.0 * fm
        num = fm * (bb - fm) * xx / ((qam + m2) * (aa + m2))
        d = 1.0 + num * d
        if abs(d) < _FPMIN:
            d = _FPMIN
        c = 1.0 + num / c
        if abs(c) < _FPMIN:
            c = _FPMIN
        d = 1.0 / d
        h *= d * c
        num = -(aa + fm) * (qab + fm) * xx / ((aa + m2) * (qap + m2))
        d = 1.0 + num * d
        if abs(d) < _FPMIN:
            d = _FPMIN
        c = 1.0 + num / c
        if abs(c) < _FPMIN:
            c = _FPMIN
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= 2.0 * _MACHEP:
            break
    res = math.exp(lbt) * h / aa
    return 1.0 - res if swap else res


def i0e_scalar(x):
    """``exp(-|x|) I_0(x)``, the exponentially scaled modified Bessel function of order 0."""
    if x != x:
        return x
    ax = abs(x)
    if ax == math.inf:
        return 0.0
    if ax <= 30.0:
        q = 0.25 * ax * ax
        t, s, k = 1.0, 1.0, 0.0
        while t > s * 1e-17:
            k += 1.0
            t *= q / (k * k)
            s += t
        return s * math.exp(-ax)
    # asymptotic: 1/sqrt(2 pi x) * sum_k prod_{j<=k} (2j-1)^2 / (k! (8x)^k)
    t, s, k = 1.0, 1.0, 0.0
    while True:
        k += 1.0
        nxt = t * (2.0 * k - 1.0) * (2.0 * k - 1.0) / (8.0 * k * ax)
        if nxt >= t or nxt <= s * 1e-17:
            break
        t = nxt
        s += t
    return s / math.sqrt(2.0 * math.pi * ax)


def i1e_scalar(x):
    """``exp(-|x|) I_1(x)``, the exponentially scaled modified Bessel function of order 1."""
    if x != x:
        return x
    ax = abs(x)
    if ax == math.inf:
        return 0.0 if x > 0 else -0.0
    if ax <= 30.0:
        q = 0.25 * ax * ax
        t, s, k = 1.0, 1.0, 0.0
        while t > s * 1e-17:
            k += 1.0
            t *= q / (k * (k + 1.0))
            s += t
        out = 0.5 * ax * s * math.exp(-ax)
    else:
        t, s, k = 1.0, 1.0, 0.0
        while True:
            k += 1.0
            nxt = -t * (4.0 - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * ax)
            if abs(nxt) >= abs(t) or abs(nxt) <= s * 1e-17:
                break
            t = nxt
            s += t
        out = s / math.sqrt(2.0 * math.pi * ax)
    return -out if x < 0 else out


def zeta_scalar(s, q):
    """The Hurwitz zeta function ``sum_k (k + q)**-s`` (SciPy's ``zeta(x, q)``): inf at
    ``s == 1``, nan for ``s < 1`` and for ``q <= 0``."""
    if s != s or q != q:
        return math.nan
    if s == 1.0:
        return math.inf
    if s < 1.0 or q <= 0.0:
        return math.nan
    if q == math.inf:
        return 0.0
    if s == math.inf:
        return math.inf if q < 1.0 else (1.0 if q == 1.0 else 0.0)
    a_min = 10.0 + s if s < 50.0 else 60.0
    total = 0.0
    a = q
    while a < a_min:
        e = -s * math.log(a)
        total += math.inf if e > _MAXLOG else math.exp(e)
        a += 1.0
    ap = math.exp(-s * math.log(a))
    total += a * ap / (s - 1.0) + 0.5 * ap
    inv_a2 = 1.0 / (a * a)
    t = s * ap / a
    k = s
    for d in _EM_DENOMS:
        term = t / d
        total += term
        if abs(term) <= abs(total) * 1e-17:
            break
        t *= (k + 1.0) * (k + 2.0) * inv_a2
        k += 2.0
    return total


_EULER = 0.57721566490153286061


def expint_scalar(n, x):
    """``E_n(x)`` for an integer-valued ``n >= 0`` (Numerical Recipes' series below x = 1,
    the continued fraction above), and the exponential integral ``Ei(x)`` for ``n == -1``
    (its series, or the asymptotic series above x = 37; ``Ei(x) = -E_1(-x)`` for x < 0)."""
    if n != n or x != x:
        return math.nan
    sign = 1.0
    if n == -1.0:
        if x == 0.0:
            return -math.inf
        if x > 0.0:
            if x == math.inf:
                return math.inf
            if x <= 37.0:
                total, fact, k = 0.0, 1.0, 0.0
                while True:
                    k += 1.0
                    fact *= x / k
                    term = fact / k
                    total += term
                    if term < _MACHEP * total:
                        break
                return total + math.log(x) + _EULER
            total, term, k = 0.0, 1.0, 0.0
            while True:
                k += 1.0
                prev = term
                term *= k / x
                if term < _MACHEP:
                    break
                if term < prev:
                    total += term
                else:
                    total -= prev
                    break
            if x > _MAXLOG:
                return math.inf
            return math.exp(x) * (1.0 + total) / x
        n, x, sign = 1.0, -x, -1.0        # Ei(x) = -E1(-x) for x < 0
    if n < 0.0 or n != math.floor(n) or x < 0.0:
        return math.nan
    if x == math.inf:
        return 0.0
    if x == 0.0:
        return math.inf if n <= 1.0 else sign / (n - 1.0)
    if n == 0.0:
        return sign * math.exp(-x) / x
    nm1 = n - 1.0
    if x > 1.0:
        b = x + n
        c = 1.0 / _FPMIN
        d = 1.0 / b
        h = d
        for i in range(1, _MAXITER):
            a = -float(i) * (nm1 + float(i))
            b += 2.0
            d = 1.0 / (a * d + b)
            c = b + a / c
            delta = c * d
            h *= delta
            if abs(delta - 1.0) <= _MACHEP:
                break
        return sign * h * math.exp(-x)
    ans = 1.0 / nm1 if nm1 != 0.0 else -math.log(x) - _EULER
    fact = 1.0
    for i in range(1, _MAXITER):
        fi = float(i)
        fact *= -x / fi
        if fi != nm1:
            delta = -fact / (fi - nm1)
        else:
            psi = -_EULER
            for ii in range(1, int(nm1) + 1):
                psi += 1.0 / float(ii)
            delta = fact * (-math.log(x) + psi)
        ans += delta
        if abs(delta) < abs(ans) * _MACHEP:
            break
    return sign * ans


def bessel_jy_scalar(x, kind):
    """Bessel functions of integer order: ``J0`` (kind 0), ``J1`` (1), ``Y0`` (2), ``Y1`` (3).

    Up to |x| = 25 the ``J_m`` come from the trapezoidal rule on Bessel's integral
    ``J_m(x) = (1/2pi) int_0^2pi cos(x sin t - m t) dt`` (exponentially convergent for
    a periodic integrand: 128 points leave an error below 1e-40), and ``Y0``/``Y1`` from
    Neumann's series in the even-order ``J_2k``; above, Hankel's asymptotic expansions.
    ``Y0``/``Y1`` are nan for x < 0 and -inf at 0."""
    if x != x:
        return x
    yk = kind >= 2.0
    order = kind - 2.0 if yk else kind
    if yk and x < 0.0:
        return math.nan
    if yk and x == 0.0:
        return -math.inf
    sign = 1.0
    if x < 0.0:
        x = -x
        if order == 1.0:
            sign = -1.0
    if x == math.inf:
        return 0.0
    if x > 25.0:
        mu = 4.0 * order * order
        p, q, t, k = 1.0, 0.0, 1.0, 0.0
        while True:
            k += 1.0
            nxt = t * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x)
            if abs(nxt) >= abs(t) or abs(nxt) < 1e-17:
                break
            t = nxt
            r = int(k) % 4          # signs: P = t0 - t2 + t4 ..., Q = t1 - t3 + t5 ...
            if r == 1:
                q += t
            elif r == 2:
                p -= t
            elif r == 3:
                q -= t
            else:
                p += t
        chi = x - (0.5 * order + 0.25) * math.pi
        amp = math.sqrt(2.0 / (math.pi * x))
        if yk:
            return amp * (p * math.sin(chi) + q * math.cos(chi))
        return sign * amp * (p * math.cos(chi) - q * math.sin(chi))
    npts = 128
    if not yk:
        total = 0.0
        for j in range(npts):
            th = 2.0 * math.pi * j / npts
            total += math.cos(x * math.sin(th) - order * th)
        return sign * total / npts
    # Neumann's series: Y0 = (2/pi)(log(x/2) + gamma) J0 - (4/pi) sum_k (-1)^k J_2k / k
    kmax = int(0.5 * x) + 20
    lg = math.log(0.5 * x) + _EULER
    j0 = 0.0
    j1 = 0.0
    for j in range(npts):
        th = 2.0 * math.pi * j / npts
        arg = x * math.sin(th)
        j0 += math.cos(arg)
        j1 += math.cos(arg - th)
    j0 /= npts
    j1 /= npts
    series = 0.0
    for k in range(1, kmax + 1):
        m_lo = 2.0 * k - 1.0
        acc_even, acc_lo, acc_hi = 0.0, 0.0, 0.0
        for j in range(npts):
            th = 2.0 * math.pi * j / npts
            arg = x * math.sin(th)
            if order == 0.0:
                acc_even += math.cos(arg - 2.0 * k * th)
            else:
                acc_lo += math.cos(arg - m_lo * th)
                acc_hi += math.cos(arg - (m_lo + 2.0) * th)
        alt = -1.0 if k % 2 == 1 else 1.0
        if order == 0.0:
            series += alt * (acc_even / npts) / k
        else:
            series += alt * ((acc_lo - acc_hi) / npts) / k
    if order == 0.0:
        return (2.0 / math.pi) * lg * j0 - (4.0 / math.pi) * series
    # Y1 = -Y0' = -(2/pi)(J0/x - (log(x/2) + gamma) J1) + (2/pi) sum_k (-1)^k (J_2k-1 - J_2k+1)/k
    return -(2.0 / math.pi) * (j0 / x - lg * j1) + (2.0 / math.pi) * series


_BESSEL_EPS = 1e-16
_BESSEL_FPMIN = 1e-300
_BESSEL_RESCALE = 1e250
_BESSEL_SCALE2 = 6.668014432879854e+240     # 2**800: exact rescaling, exponent kept apart
_LN2_HI = 6.93147180369123816490e-01        # ln 2 in two parts (fdlibm's): k * _LN2_HI is
_LN2_LO = 1.90821492927058770002e-10        # exact for |k| < 2**20
_BESSEL_MAXIT = 1000000
# No recurrence longer than this: past it Debye's expansions (iv; jv well below x), and
# nan (jv of orders past ~1e14 just above x, where the value is neither 0 nor tiny).
_BESSEL_MAX_STEPS = 10000000
_SQRT_2_OVER_PI = 0.79788456080286535588


def jv_scalar(v, x):
    """The Bessel function of the first kind ``J_v(x)`` of real order ``v`` (SciPy's jv).

    The power series for x < 2 (any v) and for x^2 < 2 (v + 1) (no cancellation there);
    Hankel's asymptotic expansion for x >= 25 when x >= nu^2 / 2, and for nu <= x at
    frac(nu) and frac(nu) + 1 followed by the upward recurrence (stable below the
    turning point); Numerical Recipes' ``bessjy`` (CF1, Steed's CF2, Wronskian) in
    between; Debye's expansion for orders past 1e7 well below x.  Kapteyn's bound and
    Debye's leading term decide under- and overflow first.  Negative orders: ``(-1)^n
    J_n`` for integers, ``cos(nu pi) J_nu - sin(nu pi) Y_nu`` otherwise.  nan for x < 0
    with a non-integer order, and (SciPy's values) at x = +-inf."""
    if v != v or x != x:
        return math.nan
    if v == math.inf or v == -math.inf:
        return math.nan if (x == math.inf or x == -math.inf) else 0.0
    if x == math.inf or x == -math.inf:
        return math.nan                      # (SciPy's value)
    vint = v % 1.0 == 0.0      # (Numba's math.floor is an int64)
    sign = 1.0
    if x < 0.0:
        if not vint:
            return math.nan
        x = -x
        if (v % 2.0) != 0.0:
            sign = -sign
    if x == 0.0:
        if v == 0.0:
            return 1.0
        if v > 0.0 or vint:
            return 0.0
        # J_v(0+) ~ (x/2)^v / Gamma(v + 1): the sign of Gamma(v + 1)
        return -math.inf if ((v + 1.0 - (v + 1.0) % 1.0) % 2.0) != 0.0 else math.inf
    nu = abs(v)
    if v < 0.0 and vint:                     # J_-n = (-1)^n J_n
        v = nu
        if (nu % 2.0) != 0.0:
            sign = -sign
    # ---- the power series: x < 2, or x^2 < 2 (v + 1) for v >= 0 (no cancellation) ----
    if x < 2.0 or (v >= 0.0 and x * x < 2.0 * (v + 1.0)):
        h = 0.5 * x
        q = -h * h
        total, term, k = 1.0, 1.0, 0.0
        while True:
            k += 1.0
            term *= q / (k * (v + k))
            total += term
            if abs(term) <= 1e-17 * abs(total):
                break
        # (x/2)^v / Gamma(v + 1): for large v the product (x/2)^f / Gamma(f + 1) *
        # prod_k (x/2) / (f + k) with a separate binary exponent (exp of a large
        # log would lose |log| ulps)
        if v >= 20.0:
            if v * math.log(h) - math.lgamma(v + 1.0) < -800.0:
                return 0.0                  # (the sum is below e here)
            fr = v % 1.0
            pref = math.pow(h, fr) / math.gamma(fr + 1.0)
            e2 = 0
            for kk in range(1, int(v - fr + 0.5) + 1):
                pref *= h / (fr + kk)
                mant, ex = math.frexp(pref)
                pref = mant
                e2 += ex
                if e2 < -1100 and kk > h:   # decreasing from here on: it underflows
                    return 0.0
            return sign * math.ldexp(pref * total, e2)
        gv = v + 1.0
        lh = v * math.log(h)
        if abs(lh) < 700.0 and abs(gv) < 170.0:
            return sign * (math.pow(h, v) / math.gamma(gv)) * total
        lg = lh - math.lgamma(gv)
        s = 1.0
        if gv < 0.0 and ((gv - gv % 1.0) % 2.0) != 0.0:
            s = -1.0
        if lg > 709.0:
            return sign * s * math.copysign(math.inf, total)
        return sign * s * math.exp(lg) * total
    need_y = v < 0.0
    if nu > x:
        # beyond the turning point, no long recurrence where the value under- or
        # overflows: Kapteyn's bound |J_nu(nu z)| <= (z e^s / (1 + s))^nu, s = sqrt(1 - z^2),
        # and Debye's Y_nu(nu z) ~ -(z e^s / (1 + s))^-nu / sqrt(pi nu s / 2)
        zr = x / nu
        sq = math.sqrt((nu - x) * (nu + x)) / nu
        lk = nu * (sq - math.log1p(sq) + math.log(zr))
        if not need_y and lk < -750.0:
            return 0.0
        if need_y and -lk - 0.5 * math.log(0.5 * math.pi * nu * sq) > 715.0:
            return sign * math.copysign(math.inf, math.sin(math.pi * (nu % 2.0)))
    if x >= 25.0 and (x >= 0.5 * nu * nu or (nu <= x and nu <= _BESSEL_MAX_STEPS)):
        # ---- Hankel's asymptotic expansion, at nu itself when x is large against nu^2,
        # else at mu = frac(nu) and mu + 1 followed by the upward recurrence to nu (stable
        # for both J and Y while nu <= x) ----
        direct = x >= 0.5 * nu * nu
        mu0 = nu if direct else nu % 1.0
        jm, ym, jn, yn = 0.0, 0.0, 0.0, 0.0
        amp = _SQRT_2_OVER_PI / math.sqrt(x)
        cx, sx = math.cos(x), math.sin(x)
        for rep in range(1 if direct else 2):
            order = mu0 + rep
            mu = 4.0 * order * order
            p, q, t, k = 1.0, 0.0, 1.0, 0.0
            while True:
                k += 1.0
                nxt = t * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x)
                if abs(nxt) >= abs(t) or abs(nxt) < 1e-17:
                    break
                t = nxt
                r = int(k) % 4          # P = t0 - t2 + t4 ..., Q = t1 - t3 + t5 ...
                if r == 1:
                    q += t
                elif r == 2:
                    p -= t
                elif r == 3:
                    q -= t
                else:
                    p += t
            # chi = x - (order/2 + 1/4) pi; cos/sin of x itself keep a large x's digits
            c = (0.5 * (order % 4.0) + 0.25) * math.pi
            cc, sc = math.cos(c), math.sin(c)
            cchi = cx * cc + sx * sc
            schi = sx * cc - cx * sc
            jm, ym = jn, yn
            jn = amp * (p * cchi - q * schi)
            yn = amp * (p * schi + q * cchi)
        if not direct:
            steps = int(nu - mu0 + 0.5)
            if steps == 0:
                jn, yn = jm, ym
            order = mu0 + 1.0
            for _ in range(steps - 1):
                jt = 2.0 * order / x * jn - jm
                yt = 2.0 * order / x * yn - ym
                jm, jn, ym, yn = jn, jt, yn, yt
                order += 1.0
    elif x - nu > 5e5:
        # ---- orders past 1e7 well below x: Debye's expansions (A&S 9.3.15-16, u_0..u_4 at
        # i cot(beta), x = nu sec(beta)); the phase carries ~x ulps, as SciPy's ----
        sr = math.sqrt((x - nu) * (x + nu))             # nu tan(beta)
        pc = nu / sr                                    # cot(beta)
        p2 = pc * pc
        u2 = -p2 * (81.0 + p2 * (462.0 + p2 * 385.0)) / 1152.0
        u4 = p2 * p2 * (4465125.0 + p2 * (94121676.0 + p2 * (349922430.0 + p2 * (
            446185740.0 + p2 * 185910725.0)))) / 39813120.0
        w1 = pc * (3.0 + 5.0 * p2) / 24.0
        w3 = -pc * p2 * (30375.0 + p2 * (369603.0 + p2 * (765765.0 + p2 * 425425.0))) / 414720.0
        w = 1.0 / nu
        ev = 1.0 + w * w * (u2 + w * w * u4)
        od = w * (w1 + w * w * w3)
        xi_ = sr - nu * math.atan2(sr, nu) - 0.25 * math.pi
        amp = math.sqrt(2.0 / (math.pi * sr))
        cxi, sxi = math.cos(xi_), math.sin(xi_)
        jn = amp * (cxi * ev + sxi * od)
        yn = amp * (sxi * ev - cxi * od)
    else:
        # ---- Numerical Recipes' bessjy for x >= 2: CF1 for J'/J at order nu, the
        # downward recurrence to mu = nu - nl (nl = nu - x steps when nu > x), Steed's CF2
        # for (J' + iY')/(J + iY) at mu, and the Wronskian ----
        if nu - x > _BESSEL_MAX_STEPS:
            return math.nan                 # (only for nu > 1e14 or so)
        nl = max(int(nu - x + 1.5), 0)
        xmu = nu - nl
        xi = 1.0 / x
        xi2 = 2.0 * xi
        w = xi2 / math.pi
        isign = 1.0
        h = max(nu * xi, _BESSEL_FPMIN)
        d = 0.0
        c = h
        for i in range(1, _BESSEL_MAXIT):
            b = xi2 * (nu + i)              # (not summed: the drift would bias the ratio)
            d = b - d
            if abs(d) < _BESSEL_FPMIN:
                d = _BESSEL_FPMIN
            c = b - 1.0 / c
            if abs(c) < _BESSEL_FPMIN:
                c = _BESSEL_FPMIN
            d = 1.0 / d
            dl = c * d
            h = dl * h
            if d < 0.0:
                isign = -isign
            if abs(dl - 1.0) < _BESSEL_EPS:
                break
        rjl = isign
        rjpl = h * rjl
        rjl1 = rjl
        nscale = 0
        for l in range(nl):
            rjtemp = (nu - l) * xi * rjl + rjpl
            rjpl = (nu - l - 1.0) * xi * rjtemp - rjl
            rjl = rjtemp
            if abs(rjl) > _BESSEL_RESCALE:      # keep the ratio J_nu/J_mu representable
                rjl /= _BESSEL_RESCALE
                rjpl /= _BESSEL_RESCALE
                nscale += 1
        if rjl == 0.0:
            rjl = _BESSEL_EPS
        f = rjpl / rjl
        a = 0.25 - xmu * xmu
        p = -0.5 * xi
        q = 1.0
        br = 2.0 * x
        bi = 2.0
        fact = a * xi / (p * p + q * q)
        cr = br + q * fact
        ci = bi + p * fact
        den = br * br + bi * bi
        dr = br / den
        di = -bi / den
        dlr = cr * dr - ci * di
        dli = cr * di + ci * dr
        temp = p * dlr - q * dli
        q = p * dli + q * dlr
        p = temp
        for i in range(2, _BESSEL_MAXIT):
            a += 2.0 * (i - 1)
            bi += 2.0
            dr = a * dr + br
            di = a * di + bi
            if abs(dr) + abs(di) < _BESSEL_FPMIN:
                dr = _BESSEL_FPMIN
            fact = a / (cr * cr + ci * ci)
            cr = br + cr * fact
            ci = bi - ci * fact
            if abs(cr) + abs(ci) < _BESSEL_FPMIN:
                cr = _BESSEL_FPMIN
            den = dr * dr + di * di
            dr /= den
            di /= -den
            dlr = cr * dr - ci * di
            dli = cr * di + ci * dr
            temp = p * dlr - q * dli
            q = p * dli + q * dlr
            p = temp
            if abs(dlr - 1.0) + abs(dli) < _BESSEL_EPS:
                break
        gam = (p - f) / q
        rjmu = math.sqrt(w / ((p - f) * gam + q))
        if rjl < 0.0:
            rjmu = -rjmu
        ratio = rjl1 / rjl
        for _ in range(nscale):
            ratio /= _BESSEL_RESCALE
        jn = rjmu * ratio
        yn = 0.0
        if need_y:
            rymu = rjmu * gam
            rymup = rymu * (p + q / gam)
            ry1 = xmu * xi * rymu - rymup
            for i in range(1, nl + 1):
                rytemp = (xmu + i) * xi2 * ry1 - rymu
                rymu = ry1
                ry1 = rytemp
                if abs(rytemp) == math.inf:     # |Y| grows on from here: it stays inf
                    rymu = rytemp
                    break
            yn = rymu
    if not need_y:
        return sign * jn
    # J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu (nu not an integer here)
    r = (nu % 2.0)
    return sign * (math.cos(math.pi * r) * jn - math.sin(math.pi * r) * yn)


def iv_scalar(v, x):
    """The modified Bessel function of the first kind ``I_v(x)`` of real order ``v``
    (SciPy's iv).

    The power series for x < 2 (any v) and for x^2 < 4 (v + 1) with v >= 0 (positive
    terms); the asymptotic expansion for x >= 25 when x >= nu^2 / 2; Numerical Recipes'
    ``bessik`` (CF1, Temme's CF2 for K, Wronskian) in between, scaled by exp(-+x);
    Debye's uniform expansion for orders past 1e7.
    Negative non-integer orders: ``I_nu + (2/pi) sin(nu pi) K_nu``."""
    if v != v or x != x:
        return math.nan
    if v == math.inf or v == -math.inf:
        return math.nan if (x == math.inf or x == -math.inf) else 0.0
    if x == math.inf or x == -math.inf:
        return math.nan                      # (SciPy's value)
    vint = v % 1.0 == 0.0      # (Numba's math.floor is an int64)
    sign = 1.0
    if x < 0.0:
        if not vint:
            return math.nan
        x = -x
        if (v % 2.0) != 0.0:
            sign = -sign
    if x == 0.0:
        if v == 0.0:
            return 1.0
        if v > 0.0 or vint:
            return 0.0
        return math.inf                      # (SciPy's value, whatever the sign of Gamma)
    nu = abs(v)
    if v < 0.0 and vint:                     # I_-n = I_n
        v = nu
    # ---- the power series (positive terms for v >= 0) ----
    if x < 2.0 or (v >= 0.0 and x * x < 4.0 * (v + 1.0)):
        h = 0.5 * x
        q = h * h
        total, term, k = 1.0, 1.0, 0.0
        while True:
            k += 1.0
            term *= q / (k * (v + k))
            total += term
            if abs(term) <= 1e-17 * abs(total):
                break
        if v >= 20.0:
            if v * math.log(h) - math.lgamma(v + 1.0) < -800.0:
                return 0.0                  # (the sum is below e here)
            fr = v % 1.0
            pref = math.pow(h, fr) / math.gamma(fr + 1.0)
            e2 = 0
            for kk in range(1, int(v - fr + 0.5) + 1):
                pref *= h / (fr + kk)
                mant, ex = math.frexp(pref)
                pref = mant
                e2 += ex
                if e2 < -1100 and kk > h:   # decreasing from here on: it underflows
                    return 0.0
            return sign * math.ldexp(pref * total, e2)
        gv = v + 1.0
        lh = v * math.log(h)
        if abs(lh) < 700.0 and abs(gv) < 170.0:
            return sign * (math.pow(h, v) / math.gamma(gv)) * total
        lg = lh - math.lgamma(gv)
        s = 1.0
        if gv < 0.0 and ((gv - gv % 1.0) % 2.0) != 0.0:
            s = -1.0
        if lg > 709.0:
            return sign * s * math.copysign(math.inf, total)
        return sign * s * math.exp(lg) * total
    need_k = v < 0.0
    if nu > x:
        # I_nu(x) lies between (x/2)^nu / Gamma(nu + 1) and that times e^(x^2 / (4 (nu + 1)));
        # K_nu(x) ~ Gamma(nu)/2 (2/x)^nu for x^2 < nu (no long recurrences where it
        # under- or overflows)
        lb = nu * math.log(0.5 * x) - math.lgamma(nu + 1.0)
        if lb > 712.0:                      # (K_nu is then far below I_nu)
            return sign * math.inf
        if not need_k:
            if lb + x * x / (4.0 * (nu + 1.0)) < -750.0:
                return 0.0
        elif x * x < nu and math.lgamma(nu) + nu * math.log(2.0 / x) > 716.0:
            return sign * math.copysign(math.inf, math.sin(math.pi * (nu % 2.0)))
    # Below: ive = I_nu(x) exp(-x) and kve = K_nu(x) exp(x)
    if x > 1e6 and nu <= x:
        return sign * math.inf              # I_nu(x) >= I_x(x) ~ e^(0.53 x)
    if nu > _BESSEL_MAX_STEPS:
        # ---- Debye's uniform expansions (u_0..u_4, A&S 9.7.7-8) for orders past 1e7,
        # where the recurrences below would be too long: I_nu(nu z) ~ e^(nu eta) /
        # sqrt(2 pi nu) (1+z^2)^-1/4 sum u_k(t) / nu^k, K_nu with e^(-nu eta) and
        # (-1)^k; t = 1/sqrt(1+z^2).  (nu eta carries ~nu ulps: ~1e-9 at nu = 1e7.) ----
        zr = x / nu
        rr = math.sqrt(1.0 + zr * zr)
        t = 1.0 / rr
        t2 = t * t
        u1 = t * (3.0 - 5.0 * t2) / 24.0
        u2 = t2 * (81.0 + t2 * (-462.0 + t2 * 385.0)) / 1152.0
        u3 = t * t2 * (30375.0 + t2 * (-369603.0 + t2 * (765765.0 - t2 * 425425.0))) / 414720.0
        u4 = t2 * t2 * (4465125.0 + t2 * (-94121676.0 + t2 * (349922430.0 + t2 * (
            -446185740.0 + t2 * 185910725.0)))) / 39813120.0
        w = 1.0 / nu
        si = 1.0 + w * (u1 + w * (u2 + w * (u3 + w * u4)))
        sk = 1.0 + w * (-u1 + w * (u2 + w * (-u3 + w * u4)))
        big_l = nu * (rr + math.log(zr / (1.0 + rr)))
        pre = 1.0 / math.sqrt(2.0 * math.pi * nu * rr)
        if big_l > 1e4:
            return sign * math.inf
        if big_l < -1e4:
            if need_k:
                return sign * math.copysign(math.inf, math.sin(math.pi * (nu % 2.0)))
            return 0.0
        kd = int(big_l / _LN2_HI + (0.5 if big_l >= 0.0 else -0.5))
        rd = (big_l - kd * _LN2_HI) - kd * _LN2_LO
        # (ldexp through frexp: CPython's ldexp raises on overflow, where inf is meant)
        mant, ex = math.frexp(math.exp(rd) * pre * si)
        out = math.inf if ex + kd > 1024 else math.ldexp(mant, ex + kd)
        if need_k:                          # (2/pi) sin(nu pi) K_nu, K_nu = pi pre e^-L sk
            mant, ex = math.frexp(2.0 * math.sin(math.pi * (nu % 2.0)) * math.exp(-rd) * pre * sk)
            out += math.copysign(math.inf, mant) if ex - kd > 1024 else math.ldexp(mant, ex - kd)
        return sign * out
    if x >= 25.0 and x >= 0.5 * nu * nu:
        # ---- the asymptotic expansions for x large against nu^2 ----
        mu = 4.0 * nu * nu
        si, sk, t, k = 1.0, 1.0, 1.0, 0.0
        while True:
            k += 1.0
            nxt = t * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x)
            if abs(nxt) >= abs(t) or abs(nxt) < 1e-17:
                break
            t = nxt
            sk += t
            si += -t if int(k) % 2 == 1 else t
        ive = si / math.sqrt(2.0 * math.pi * x)
        e2 = 0
        kve = sk * math.sqrt(0.5 * math.pi / x)
    else:
        # ---- Numerical Recipes' bessik for x >= 2: CF1 for I'/I at nu, the downward
        # recurrence to |mu| <= 1/2, Temme's CF2 for K_mu and K_mu+1 (scaled by e^x),
        # and the Wronskian ----
        nl = int(nu + 0.5)
        xmu = nu - nl
        xi = 1.0 / x
        xi2 = 2.0 * xi
        h = max(nu * xi, _BESSEL_FPMIN)
        d = 0.0
        c = h
        for i in range(1, _BESSEL_MAXIT):
            b = xi2 * (nu + i)
            d = 1.0 / (b + d)
            c = b + 1.0 / c
            dl = c * d
            h = dl * h
            if abs(dl - 1.0) < _BESSEL_EPS:
                break
        ril = 1.0
        ripl = h
        nscale = 0
        for l in range(nl):
            ritemp = (nu - l) * xi * ril + ripl
            ripl = (nu - l - 1.0) * xi * ritemp + ril
            ril = ritemp
            if abs(ril) > _BESSEL_SCALE2:
                ril /= _BESSEL_SCALE2
                ripl /= _BESSEL_SCALE2
                nscale += 1
        f = ripl / ril
        b = 2.0 * (1.0 + x)
        d = 1.0 / b
        h = d
        delh = d
        q1 = 0.0
        q2 = 1.0
        a1 = 0.25 - xmu * xmu
        q = a1
        c = a1
        a = -a1
        s = 1.0 + q * delh
        for i in range(2, _BESSEL_MAXIT):
            a -= 2.0 * (i - 1)
            c = -a * c / i
            qnew = (q1 - b * q2) / a
            q1 = q2
            q2 = qnew
            q += c * qnew
            b += 2.0
            d = 1.0 / (b + a * d)
            delh = (b * d - 1.0) * delh
            h += delh
            dels = q * delh
            s += dels
            if abs(dels / s) < _BESSEL_EPS:
                break
        h = a1 * h
        rkmu = math.sqrt(0.5 * math.pi * xi) / s
        rk1 = rkmu * (xmu + x + 0.5 - h) * xi
        rkmup = xmu * xi * rkmu - rk1
        rimu = xi / (f * rkmu - rkmup)
        ive = rimu / ril
        e2 = -800 * nscale
        kve = 0.0
        if need_k:
            for i in range(1, nl + 1):
                rktemp = (xmu + i) * xi2 * rk1 + rkmu
                rkmu = rk1
                rk1 = rktemp
            kve = rkmu
    # exp(x) = 2^k exp(r): the result is ldexp'd, so that neither an underflowed ive nor an
    # overflowed exp(x) makes it 0 * inf
    k2 = int(x / _LN2_HI + 0.5)
    r = (x - k2 * _LN2_HI) - k2 * _LN2_LO
    mant, ex = math.frexp(ive * math.exp(r))
    out = math.inf if ex + k2 + e2 > 1024 else math.ldexp(mant, ex + k2 + e2)
    if need_k:
        # I_-nu = I_nu + (2/pi) sin(nu pi) K_nu (nu not an integer here)
        mant, ex = math.frexp((2.0 / math.pi) * math.sin(math.pi * (nu % 2.0)) * kve
                              * math.exp(-r))
        out += math.copysign(math.inf, mant) if ex - k2 > 1024 else math.ldexp(mant, ex - k2)
    return sign * out


def sph_legendre_scalar(n, m, theta):
    """The spherically normalized associated Legendre function of ``cos(theta)``,
    ``sqrt((2n+1)/(4 pi) (n-m)!/(n+m)!) P_n^m(cos theta)`` with the Condon-Shortley phase
    (SciPy's ``sph_legendre_p``), for integer-valued ``n`` and ``m`` of either sign (0 where
    ``|m| > n`` or ``n < 0``): the diagonal ``P_m^m`` from ``|sin(theta)|`` (as SciPy and
    JAX: a function of cos(theta) alone) and the three-term recurrence in the degree of the
    normalized functions."""
    if n != n or m != m or theta != theta or theta == math.inf or theta == -math.inf:
        return math.nan
    am = abs(m)
    if n < 0.0 or am > n:
        return 0.0
    x = math.cos(theta)
    s = abs(math.sin(theta))
    p = 0.28209479177387814347          # 1 / sqrt(4 pi)
    k = 1.0
    while k <= am:
        p *= -math.sqrt((2.0 * k + 1.0) / (2.0 * k)) * s
        k += 1.0
    if n > am:
        pm = p
        p = math.sqrt(2.0 * am + 3.0) * x * pm
        ell = am + 2.0
        while ell <= n:
            a = math.sqrt((4.0 * ell * ell - 1.0) / (ell * ell - am * am))
            b = math.sqrt(((ell - 1.0) * (ell - 1.0) - am * am)
                          / (4.0 * (ell - 1.0) * (ell - 1.0) - 1.0))
            pm, p = p, a * (x * p - b * pm)
            ell += 1.0
    if m < 0.0 and (am % 2.0) != 0.0:
        p = -p                              # P-bar_n^-m = (-1)^m P-bar_n^m
    return p


# ---------------------------------------------------------------------------------------------
# Array functions: numba.vectorize'd kernels, compiled on first use.
# ---------------------------------------------------------------------------------------------

_SIGNATURES = {
    "igamma": (igamma_scalar, ["float64(float64, float64, float64)"]),
    "igamma_grad_a": (igamma_grad_a_scalar, ["float64(float64, float64, float64)"]),
    "betainc": (betainc_scalar, ["float64(float64, float64, float64)"]),
    "i0e": (i0e_scalar, ["float64(float64)"]),
    "i1e": (i1e_scalar, ["float64(float64)"]),
    "zeta": (zeta_scalar, ["float64(float64, float64)"]),
    "expint": (expint_scalar, ["float64(float64, float64)"]),
    "bessel_jy": (bessel_jy_scalar, ["float64(float64, float64)"]),
    "jv": (jv_scalar, ["float64(float64, float64)"]),
    "iv": (iv_scalar, ["float64(float64, float64)"]),
    "sph_legendre": (sph_legendre_scalar, ["float64(float64, float64, float64)"]),
}
_UFUNCS: dict = {}
_LOCK = threading.Lock()


def _ufunc(name):
    uf = _UFUNCS.get(name)
    if uf is None:
        with _LOCK:
            uf = _UFUNCS.get(name)
            if uf is None:
                import numba
                fn, sigs = _SIGNATURES[name]
                try:
                    uf = numba.vectorize(sigs, cache=True)(fn)
                except RuntimeError:  # pragma: no cover - no usable cache directory
                    uf = numba.vectorize(sigs)(fn)
                _UFUNCS[name] = uf
    return uf


def _apply(name, *args, ndata=None):
    """The kernel on float64 copies; the result has the common dtype of the first
    ``ndata`` arguments (the others are flags or helper values)."""
    arrs = [np.asarray(a) for a in args]
    dtype = np.result_type(*[a.dtype for a in arrs[:ndata]])
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    out = _ufunc(name)(*[a.astype(np.float64, copy=False) for a in arrs])
    return np.asarray(out).astype(dtype, copy=False)


def igamma(a, x):
    """Regularized lower incomplete gamma ``P(a, x)`` of arrays.

    >>> round(float(igamma(np.array(2.0), np.array(1.0))), 12)
    0.264241117657
    """
    return _apply("igamma", a, x, np.zeros((), np.float64), ndata=2)


def igammac(a, x):
    """Regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)`` of arrays."""
    return _apply("igamma", a, x, np.ones((), np.float64), ndata=2)


def igamma_grad_a(a, x, psi_a):
    """``d P(a, x) / da`` of arrays, given ``psi_a = digamma(a)``."""
    return _apply("igamma_grad_a", a, x, psi_a, ndata=2)


def betainc(a, b, x):
    """Regularized incomplete beta ``I_x(a, b)`` of arrays."""
    return _apply("betainc", a, b, x)


def i0e(x):
    """``exp(-|x|) I_0(x)`` of an array."""
    return _apply("i0e", x)


def i1e(x):
    """``exp(-|x|) I_1(x)`` of an array."""
    return _apply("i1e", x)


def zeta(s, q):
    """The Hurwitz zeta function of arrays."""
    return _apply("zeta", s, q)


def expn(n, x):
    """The generalized exponential integral ``E_n(x)`` of arrays (``n`` integer-valued)."""
    return _apply("expint", n, x)


def expi(x):
    """The exponential integral ``Ei(x)`` of an array."""
    arr = np.asarray(x)
    dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float64)
    out = _ufunc("expint")(np.float64(-1.0), arr.astype(np.float64, copy=False))
    return np.asarray(out).astype(dtype, copy=False)


def bessel_jy(x, kind: float):
    """``J0`` (kind 0), ``J1`` (1), ``Y0`` (2) or ``Y1`` (3) of an array."""
    arr = np.asarray(x)
    dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float64)
    out = _ufunc("bessel_jy")(arr.astype(np.float64, copy=False), np.float64(kind))
    return np.asarray(out).astype(dtype, copy=False)


def jv(v, x):
    """The Bessel function ``J_v(x)`` of real order of arrays.

    >>> round(float(jv(np.array(0.5), np.array(1.0))), 12)
    0.671396707142
    """
    with np.errstate(all="ignore"):     # inf and 0 are values here, as in SciPy
        return _apply("jv", v, x)


def iv(v, x):
    """The modified Bessel function ``I_v(x)`` of real order of arrays.

    >>> round(float(iv(np.array(0.5), np.array(1.0))), 12)
    0.937674888245
    """
    with np.errstate(all="ignore"):
        return _apply("iv", v, x)


def sph_legendre(n, m, theta):
    """The normalized associated Legendre function of ``cos(theta)`` of arrays (the
    dtype of ``theta``; ``n`` and ``m`` integer-valued)."""
    th = np.asarray(theta)
    dtype = th.dtype if th.dtype.kind == "f" else np.dtype(np.float64)
    out = _ufunc("sph_legendre")(*[np.asarray(a).astype(np.float64, copy=False)
                                   for a in (n, m, th)])
    return np.asarray(out).astype(dtype, copy=False)
