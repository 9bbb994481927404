"""Elementwise primitives for special functions that need an iteration (JAX's lax names):
``igamma``, ``igammac``, ``igamma_grad_a``, ``regularized_incomplete_beta``,
``bessel_i0e``, ``bessel_i1e`` and ``zeta``.

Their NumPy implementations are the kernels of ``base/special_kernels.py`` (the compiled
code calls the same kernels: each backend's ``lower_elementwise.py``); their
derivatives are JAX's: ``igamma`` in ``x`` in closed form and in ``a`` by
``igamma_grad_a``; the incomplete beta function only in ``x`` (JAX raises for ``a`` and
``b``, and so does zerax, with NotSupportedError); ``zeta`` only in ``q``;
``i0e``/``i1e`` through each other.  ``igamma_grad_a`` has a derivative in ``x`` only.
Operands are float arrays of one dtype and one shape (the ``zerax.scipy.special``
functions promote and broadcast first).  The eager tape linearizes these primitives
(no direct tape rules).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import special_kernels
from ..core.api_util import as_input
from ._factory import defjvp, elementwise
from . import elementwise as ew
from .elementwise import _c
from ..interpreters.tape import vjp_rules

__all__ = ["bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "bessel_iv", "bessel_iv_p",
           "bessel_ive", "bessel_ive_p",
           "bessel_j0", "bessel_j0_p", "bessel_j1", "bessel_j1_p", "bessel_jv", "bessel_jv_p",
           "bessel_y0", "bessel_y0_p", "bessel_y1", "bessel_y1_p", "betainc", "expi", "expi_p",
           "expn", "expn_p", "igamma", "igamma_grad_a",
           "igamma_grad_a_p", "igamma_p", "igammac", "igammac_p", "random_gamma_grad",
           "regularized_incomplete_beta_p", "sph_legendre", "sph_legendre_p", "zeta", "zeta_p"]


igamma_p = elementwise("igamma", lambda a, x: special_kernels.igamma(a, x), 2, kinds="f")
igammac_p = elementwise("igammac", lambda a, x: special_kernels.igammac(a, x), 2, kinds="f")
igamma_grad_a_p = elementwise(
    "igamma_grad_a",
    lambda a, x: special_kernels.igamma_grad_a(a, x, ew._special("digamma")(a)), 2, kinds="f")
regularized_incomplete_beta_p = elementwise(
    "regularized_incomplete_beta", lambda a, b, x: special_kernels.betainc(a, b, x), 3,
    kinds="f")
bessel_i0e_p = elementwise("bessel_i0e", lambda x: special_kernels.i0e(x), 1, kinds="f")
bessel_i1e_p = elementwise("bessel_i1e", lambda x: special_kernels.i1e(x), 1, kinds="f")
zeta_p = elementwise("zeta", lambda s, q: special_kernels.zeta(s, q), 2, kinds="f")
expn_p = elementwise("expn", lambda n, x: special_kernels.expn(n, x), 2, kinds="f")
bessel_j0_p = elementwise("bessel_j0", lambda x: special_kernels.bessel_jy(x, 0.0), 1, kinds="f")
bessel_j1_p = elementwise("bessel_j1", lambda x: special_kernels.bessel_jy(x, 1.0), 1, kinds="f")
bessel_y0_p = elementwise("bessel_y0", lambda x: special_kernels.bessel_jy(x, 2.0), 1, kinds="f")
bessel_y1_p = elementwise("bessel_y1", lambda x: special_kernels.bessel_jy(x, 3.0), 1, kinds="f")
expi_p = elementwise("expi", lambda x: special_kernels.expi(x), 1, kinds="f")
# Real order v and argument x (J_v, I_v); the normalized Legendre function of cos(theta)
# for integer-valued degree n and order m (the spherical harmonics' polar part).
bessel_jv_p = elementwise("bessel_jv", lambda v, x: special_kernels.jv(v, x), 2, kinds="f")
bessel_iv_p = elementwise("bessel_iv", lambda v, x: special_kernels.iv(v, x), 2, kinds="f")
bessel_ive_p = elementwise("bessel_ive", lambda v, x: special_kernels.ive(v, x), 2, kinds="f")
sph_legendre_p = elementwise(
    "sph_legendre", lambda n, m, t: special_kernels.sph_legendre(n, m, t), 3, kinds="f")


def _weak(*args):
    """lax's convention: Python numbers take the dtype of the array operand (float64
    when all are numbers); arrays are not promoted."""
    args = [a if type(a) in (int, float) else as_input(a, "lax operand") for a in args]
    dtype = next((np.dtype(a.dtype) for a in args if type(a) not in (int, float)), None)
    dtype = np.dtype(np.float64) if dtype is None else dtype
    return [as_input(np.asarray(a, dtype), "lax operand") if type(a) in (int, float) else a
            for a in args]


def igamma(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)`` (JAX's lax.igamma)."""
    return ew.bind(igamma_p, *_weak(a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x)`` (lax.igammac)."""
    return ew.bind(igammac_p, *_weak(a, x))


def igamma_grad_a(a, x):
    """``d P(a, x) / da`` (lax.igamma_grad_a)."""
    return ew.bind(igamma_grad_a_p, *_weak(a, x))


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a, 1) sample ``x`` in ``a`` at fixed CDF value:
    ``-(dP/da) / (dP/dx)`` (lax.random_gamma_grad)."""
    a, x = _weak(a, x)
    one = _c(x, 1.0)
    density = ew.exp(ew.sub(ew.sub(ew.mul(ew.sub(a, one), ew.log(x)), x), _lgamma(a)))
    return ew.neg(ew.div(igamma_grad_a(a, x), density))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (lax.betainc)."""
    return ew.bind(regularized_incomplete_beta_p, *_weak(a, b, x))


def bessel_i0e(x):
    """``exp(-|x|) I0(x)`` (lax.bessel_i0e)."""
    return ew.bind(bessel_i0e_p, *_weak(x))


def bessel_i1e(x):
    """``exp(-|x|) I1(x)`` (lax.bessel_i1e)."""
    return ew.bind(bessel_i1e_p, *_weak(x))


def zeta(x, q):
    """The Hurwitz zeta function (lax.zeta)."""
    return ew.bind(zeta_p, *_weak(x, q))


def expn(n, x):
    return ew.bind(expn_p, n, x)


def expi(x):
    return ew.bind(expi_p, x)


def bessel_j0(x):
    return ew.bind(bessel_j0_p, x)


def bessel_j1(x):
    return ew.bind(bessel_j1_p, x)


def bessel_y0(x):
    return ew.bind(bessel_y0_p, x)


def bessel_y1(x):
    return ew.bind(bessel_y1_p, x)


def bessel_jv(v, x):
    return ew.bind(bessel_jv_p, v, x)


def bessel_iv(v, x):
    return ew.bind(bessel_iv_p, v, x)


def bessel_ive(v, x):
    return ew.bind(bessel_ive_p, v, x)


def sph_legendre(n, m, theta):
    return ew.bind(sph_legendre_p, n, m, theta)


# --------------------------------------------------------------------------- derivatives

def _igamma_dx(a, x):
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a)."""
    one = _c(x, 1.0)
    return ew.exp(ew.sub(ew.sub(ew.mul(ew.sub(a, one), ew.log(x)), x), _lgamma(a)))


def _no_derivative(what):
    def rule(*args, **params):
        raise errors.NotSupportedError(what)
    return rule


defjvp(igamma_p, lambda g, ans, a, x: ew.mul(g, igamma_grad_a(a, x)),
       lambda g, ans, a, x: ew.mul(g, _igamma_dx(a, x)))
defjvp(igammac_p, lambda g, ans, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
       lambda g, ans, a, x: ew.neg(ew.mul(g, _igamma_dx(a, x))))
defjvp(igamma_grad_a_p,
       _no_derivative("the second derivative of gammainc/gammaincc with respect to a is not "
                      "implemented (JAX has none either); differentiate in x, or once in a"),
       lambda g, ans, a, x: ew.mul(g, ew.mul(_igamma_dx(a, x),
                                             ew.sub(ew.log(x), ew.digamma(a)))))


def _betainc_dx(g, ans, a, b, x):
    one = _c(x, 1.0)
    log_beta = ew.sub(ew.add(_lgamma(a), _lgamma(b)), _lgamma(ew.add(a, b)))
    log_density = ew.sub(ew.add(ew.mul(ew.sub(a, one), ew.log(x)),
                                ew.mul(ew.sub(b, one), ew.bind(ew.log1p_p, ew.neg(x)))),
                         log_beta)
    return ew.mul(g, ew.exp(log_density))


_BETAINC_AB = ("the derivative of betainc with respect to a or b is not implemented (as in "
               "JAX); differentiate in x, or hold a and b fixed (zerax.lax.stop_gradient)")
defjvp(regularized_incomplete_beta_p, _no_derivative(_BETAINC_AB),
       _no_derivative(_BETAINC_AB), _betainc_dx)


def _lgamma(x):
    return ew.bind(ew.lgamma_p, x)


def _sign(x):
    return ew.bind(ew.sign_p, x)


def _i1e_over_x(x):
    """i1e(x) / x, 1/2 at x == 0 (its limit)."""
    zero = _c(x, 0.0)
    at_zero = ew.eq(x, zero)
    safe = ew.select_n(at_zero, x, _c(x, 1.0))
    return ew.select_n(at_zero, ew.div(bessel_i1e(safe), safe), _c(x, 0.5))


defjvp(bessel_i0e_p, lambda g, ans, x: ew.mul(g, ew.sub(bessel_i1e(x), ew.mul(_sign(x), ans))))
defjvp(bessel_i1e_p, lambda g, ans, x: ew.mul(g, ew.sub(
    ew.sub(bessel_i0e(x), ew.mul(_sign(x), ans)), _i1e_over_x(x))))
defjvp(zeta_p,
       _no_derivative("the derivative of zeta with respect to x (the exponent) is not "
                      "implemented (as in JAX); differentiate in q"),
       lambda g, ans, s, q: ew.mul(g, ew.neg(ew.mul(s, zeta(ew.add(s, _c(s, 1.0)), q)))))

def _expn_dx(g, ans, n, x):
    """d/dx E_n(x) = -E_{n-1}(x); E_0(x) = e^-x / x has derivative -e^-x (1/x + 1/x^2)."""
    zero, one = _c(n, 0.0), _c(n, 1.0)
    is0 = ew.eq(n, zero)
    lower = expn(ew.select_n(is0, ew.sub(n, one), zero), x)
    inv = ew.div(_c(x, 1.0), x)
    d0 = ew.mul(ew.exp(ew.neg(x)), ew.add(inv, ew.mul(inv, inv)))
    return ew.mul(g, ew.neg(ew.select_n(is0, lower, d0)))


defjvp(expn_p, _no_derivative("expn is not differentiable in its integer order n"), _expn_dx)
defjvp(expi_p, lambda g, ans, x: ew.mul(g, ew.div(ew.exp(x), x)))

def _over_x(f, x, limit):
    """f(x) / x, ``limit`` at x == 0."""
    at_zero = ew.eq(x, _c(x, 0.0))
    safe = ew.select_n(at_zero, x, _c(x, 1.0))
    return ew.select_n(at_zero, ew.div(f(safe), safe), _c(x, limit))


# J0' = -J1, J1' = J0 - J1/x (1/2 at 0), Y0' = -Y1, Y1' = Y0 - Y1/x
defjvp(bessel_j0_p, lambda g, ans, x: ew.neg(ew.mul(g, bessel_j1(x))))
defjvp(bessel_j1_p, lambda g, ans, x: ew.mul(g, ew.sub(bessel_j0(x),
                                                       _over_x(bessel_j1, x, 0.5))))
defjvp(bessel_y0_p, lambda g, ans, x: ew.neg(ew.mul(g, bessel_y1(x))))
defjvp(bessel_y1_p, lambda g, ans, x: ew.mul(g, ew.sub(bessel_y0(x), ew.div(ans, x))))


# J_v' = (J_v-1 - J_v+1) / 2, I_v' = (I_v-1 + I_v+1) / 2; none in the order (as JAX and
# autograd).  d/dtheta of the normalized P_n^m(cos theta):
# (sqrt((n+m+1)(n-m)) P_n^m+1 - sqrt((n+m)(n-m+1)) P_n^m-1) / 2 (0 coefficients past |m| = n).
_BESSEL_V = ("the derivative of {} with respect to the order v is not implemented (as in JAX "
             "and autograd); differentiate in z, or hold v fixed (zerax.lax.stop_gradient)")


def _bessel_dx(fn, plus):
    def rule(g, ans, v, x):
        one, half = _c(v, 1.0), _c(x, 0.5)
        lo, hi = fn(ew.sub(v, one), x), fn(ew.add(v, one), x)
        return ew.mul(g, ew.mul(half, ew.add(lo, hi) if plus else ew.sub(lo, hi)))
    return rule


def _sph_legendre_dtheta(g, ans, n, m, t):
    one, zero = _c(n, 1.0), _c(n, 0.0)
    up = ew.sqrt(ew.maximum(ew.mul(ew.add(ew.add(n, m), one), ew.sub(n, m)), zero))
    down = ew.sqrt(ew.maximum(ew.mul(ew.add(n, m), ew.add(ew.sub(n, m), one)), zero))
    d = ew.sub(ew.mul(up, sph_legendre(n, ew.add(m, one), t)),
               ew.mul(down, sph_legendre(n, ew.sub(m, one), t)))
    # the kernel reads |sin(theta)|: where sin(theta) < 0 the derivative changes sign (at
    # sin(theta) == 0 this is the one-sided derivative from sin(theta) > 0)
    half = ew.select_n(ew.lt(ew.sin(t), _c(t, 0.0)), _c(t, 0.5), _c(t, -0.5))
    return ew.mul(g, ew.mul(half, d))


defjvp(bessel_jv_p, _no_derivative(_BESSEL_V.format("jv")), _bessel_dx(bessel_jv, False))
defjvp(bessel_iv_p, _no_derivative(_BESSEL_V.format("iv")), _bessel_dx(bessel_iv, True))


def _ive_dx(g, ans, v, x):
    # (I_v e^-|x|)' = (ive_v-1 + ive_v+1) / 2 - sign(x) ive_v
    return ew.sub(_bessel_dx(bessel_ive, True)(g, ans, v, x), ew.mul(g, ew.mul(ew.sign(x), ans)))


defjvp(bessel_ive_p, _no_derivative(_BESSEL_V.format("ive")), _ive_dx)
_SPH_NM = ("sph_harm_y/sph_harm are not differentiable in the integer degree n or order m")
defjvp(sph_legendre_p, _no_derivative(_SPH_NM), _no_derivative(_SPH_NM), _sph_legendre_dtheta)

# The eager tape linearizes them (their JVP rules are not plain NumPy).
for _p in (igamma_p, igammac_p, igamma_grad_a_p, regularized_incomplete_beta_p, bessel_i0e_p,
           bessel_i1e_p, zeta_p, expn_p, expi_p, bessel_j0_p, bessel_j1_p, bessel_y0_p,
           bessel_y1_p, bessel_jv_p, bessel_iv_p, bessel_ive_p, sph_legendre_p):
    vjp_rules.pop(_p, None)
