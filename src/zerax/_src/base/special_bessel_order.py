"""Scalar kernels of the Bessel functions of real order, ``J_v(x)`` and ``I_v(x)``
(SciPy's ``jv``/``iv``), and of the normalized associated Legendre function behind
``sph_harm_y``: float64 scalars in, float64 out, only ``math`` and arithmetic, so
``numba.njit`` compiles them as they are (the array functions that apply them, and the
other special-function kernels, are in ``special_kernels.py``).  Each kernel's docstring
gives its algorithm and where it switches between series, recurrences and expansions.
"""

from __future__ import annotations

import math

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


def iv_scalar(v, x, scaled):
    """The modified Bessel function of the first kind ``I_v(x)`` of real order ``v``
    (SciPy's iv), or with ``scaled`` (1.0) ``I_v(x) exp(-|x|)`` (SciPy's ive), which
    neither overflows nor is computed as an overflowed value times 0.

    The power series for x < 2 (any v) and for x^2 < 4 (v + 1) with v >= 0 (positive
    terms); the asymptotic expansion for x >= 25 when x >= nu^2 / 2; Numerical Recipes'
    ``bessik`` (CF1, Temme's CF2 for K, Wronskian) in between, scaled by exp(-+x);
    Debye's uniform expansion for orders past 1e7.
    Negative non-integer orders: ``I_nu + (2/pi) sin(nu pi) K_nu``.  Scaled, the branches
    below return their ``I_nu(x) exp(-x)`` (most compute it first) and Debye's expansion
    also serves x > 1e6 when x < nu^2 / 2."""
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
        # (SciPy's values, whatever the sign of Gamma: inf, and nan scaled)
        return math.nan if scaled != 0.0 else math.inf
    nu = abs(v)
    if v < 0.0 and vint:                     # I_-n = I_n
        v = nu
    # ---- the power series (positive terms for v >= 0) ----
    if x < 2.0 or (v >= 0.0 and x * x < 4.0 * (v + 1.0)):
        # (x < 2 sqrt(v + 1) here: exp(-x) neither underflows nor meets an overflow)
        esc = math.exp(-x) if scaled != 0.0 else 1.0
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
            return sign * math.ldexp(pref * total * esc, e2)
        gv = v + 1.0
        lh = v * math.log(h)
        if abs(lh) < 700.0 and abs(gv) < 170.0:
            return sign * (math.pow(h, v) / math.gamma(gv)) * total * esc
        lg = lh - math.lgamma(gv) - (x if scaled != 0.0 else 0.0)
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
        if lb - (x if scaled != 0.0 else 0.0) > 712.0:    # (K_nu is then far below I_nu)
            return sign * math.inf
        if not need_k:
            if lb + x * x / (4.0 * (nu + 1.0)) < -750.0:
                return 0.0
        elif x * x < nu and math.lgamma(nu) + nu * math.log(2.0 / x) > 716.0:
            return sign * math.copysign(math.inf, math.sin(math.pi * (nu % 2.0)))
    # Below: ive = I_nu(x) exp(-x) and kve = K_nu(x) exp(x)
    debye = nu > _BESSEL_MAX_STEPS
    if x > 1e6 and nu <= x:
        if scaled == 0.0:
            return sign * math.inf          # I_nu(x) >= I_x(x) ~ e^(0.53 x)
        debye = x < 0.5 * nu * nu           # (else the asymptotic expansion below)
    if debye:
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
        pre = 1.0 / math.sqrt(2.0 * math.pi * nu * rr)
        if scaled != 0.0:
            # nu eta - x = nu (sqrt(1+z^2) - z + log(z / (1 + sqrt(1+z^2)))), both terms
            # formed without cancellation (at most 0: exp of it never overflows)
            shift = x
            big_l = nu * (1.0 / (rr + zr) + math.log1p(-(1.0 + 1.0 / (rr + zr)) / (1.0 + rr)))
        else:
            shift = 0.0
            big_l = nu * (rr + math.log(zr / (1.0 + rr)))
        if big_l > 1e4:
            return sign * math.inf
        if big_l < -1e4 and not (need_k and big_l + 2.0 * shift < -1e4):
            if need_k:
                return sign * math.copysign(math.inf, math.sin(math.pi * (nu % 2.0)))
            return 0.0
        kd = int(big_l / _LN2_HI + (0.5 if big_l >= 0.0 else -0.5))
        rd = (big_l - kd * _LN2_HI) - kd * _LN2_LO
        # (ldexp through frexp: CPython's ldexp raises on overflow, where inf is meant)
        mant, ex = math.frexp(math.exp(rd) * pre * si)
        out = math.inf if ex + kd > 1024 else math.ldexp(mant, ex + kd)
        if need_k:                          # (2/pi) sin(nu pi) K_nu, K_nu = pi pre e^-L sk
            # e^-(nu eta) (e^-x scaled): exponent -(big_l + shift) - shift
            kd2 = int((big_l + 2.0 * shift) / _LN2_HI + (0.5 if big_l >= 0.0 else -0.5))
            rd2 = (big_l + 2.0 * shift - kd2 * _LN2_HI) - kd2 * _LN2_LO
            mant, ex = math.frexp(2.0 * math.sin(math.pi * (nu % 2.0)) * math.exp(-rd2) * pre
                                  * sk)
            out += math.copysign(math.inf, mant) if ex - kd2 > 1024 else math.ldexp(mant,
                                                                                    ex - kd2)
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
    if scaled != 0.0:
        # I_nu(x) e^-x = ive 2^e2; I_-nu adds (2/pi) sin(nu pi) K_nu e^-x = ... kve e^-2x
        out = math.ldexp(ive, e2)
        if need_k:
            out += (2.0 / math.pi) * math.sin(math.pi * (nu % 2.0)) * kve * math.exp(-2.0 * x)
        return sign * out
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
