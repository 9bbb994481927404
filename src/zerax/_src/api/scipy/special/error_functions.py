"""The error function family and the normal distribution's functions: ``erf``, ``erfc``
(real or complex), ``wofz``, ``erfinv``, ``erfcinv``, ``ndtr``, ``log_ndtr``, ``ndtri``.

``erf``/``erfc``/``erfinv`` are primitives for real arguments (complex ``erf``/``erfc``
are compositions, ``faddeeva.py``); ``log_ndtr`` and ``ndtri``
carry custom JVPs (their closed-form derivatives; the branches of the values would give
nan or lose accuracy).
"""

from __future__ import annotations

import math

import numpy as np

from ..... import errors
from .... import numpy as jnp
from ....core.core import bind
from ....ops import elementwise as ew
from ...custom import custom_jvp
from ._util import _const, _float, _floats
from .faddeeva import erf_complex, erfc_complex, wofz_complex


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def erf(x):
    """The error function, of real or complex ``x`` (complex: through the Faddeeva
    function, see ``faddeeva.py``; holomorphic, so ``jvp``/``jacfwd`` give ``erf'(z) t``).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.erf(0.5)), 6)
    0.5205
    >>> complex(zsp.erf(1 + 1j)).real.__round__(12)
    1.316151281698
    """
    x = _float(x, "erf")
    if np.dtype(x.dtype).kind == "c":
        with np.errstate(all="ignore"):     # eagerly: an overflow to inf is the value
            return erf_complex(x)
    return bind(ew.erf_p, x)


def erfc(x):
    """The complementary error function, ``1 - erf(x)`` without cancellation (real or
    complex ``x``)."""
    x = _float(x, "erfc")
    if np.dtype(x.dtype).kind == "c":
        with np.errstate(all="ignore"):
            return erfc_complex(x)
    return bind(ew.erfc_p, x)


def wofz(z):
    """The Faddeeva function ``w(z) = exp(-z^2) erfc(-iz)`` (SciPy's ``wofz``), complex
    valued; real ``z`` is taken as complex.

    >>> import zerax.scipy.special as zsp
    >>> w = complex(zsp.wofz(1 + 1j))
    >>> round(w.real, 10), round(w.imag, 10)
    (0.3047442053, 0.2082189382)
    """
    z = _float(z, "wofz")
    if np.dtype(z.dtype).kind != "c":
        z = z.astype(np.promote_types(z.dtype, np.complex64))
    with np.errstate(all="ignore"):
        return wofz_complex(z)


def erfinv(x):
    """The inverse of ``erf`` on (-1, 1)."""
    return bind(ew.erf_inv_p, _float(x, "erfinv"))


def ndtr(x):
    """The standard normal cumulative distribution function."""
    x = _float(x, "ndtr")
    return 0.5 * erfc(-x * (1.0 / math.sqrt(2.0)))


def _ndtr(x):
    return _const(x, 0.5) * ew.bind(ew.erfc_p, x * _const(x, -1.0 / math.sqrt(2.0)))


def _asymptotic_log_ndtr(x):
    """log ndtr(x) for x <= -30: -x^2/2 - log(-x) - log sqrt(2 pi) + log(series)."""
    x2 = x * x
    series = jnp.ones_like(x)
    term = jnp.ones_like(x)
    for n in range(1, 9):
        term = term * _const(x, -(2 * n - 1)) / x2
        series = series + term
    return -0.5 * x2 - jnp.log(-x) - _LOG_SQRT_2PI + jnp.log(series)


@custom_jvp
def _log_ndtr(x):
    # x > 0: log1p(-ndtr(-x)) keeps the digits of a CDF near 1
    upper = x > 0.0
    lower = x <= -30.0
    mid = jnp.where(upper | lower, jnp.zeros_like(x), x)
    high = jnp.where(upper, x, jnp.ones_like(x))
    low = jnp.where(lower, x, jnp.full_like(x, -31.0))
    return jnp.where(upper, jnp.log1p(-_ndtr(-high)),
                     jnp.where(lower, _asymptotic_log_ndtr(low), jnp.log(_ndtr(mid))))


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x)
    return ans, t * jnp.exp(-0.5 * x * x - _LOG_SQRT_2PI - ans)


def log_ndtr(x, series_order: int = 3):
    """``log`` of the standard normal CDF, accurate far into both tails.

    ``series_order`` is accepted for JAX's signature (0..30); zerax always uses enough
    terms of the asymptotic series for float64.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.log_ndtr(-40.0)), 6)
    -804.608442
    """
    if not 0 <= int(series_order) <= 30:
        raise errors.ZeraxValueError("zerax.scipy.special.log_ndtr: series_order must be in "
                                     f"0..30, got {series_order}")
    (x,) = _floats("log_ndtr", x)
    return _log_ndtr(x)


# Cephes' ndtri: rational approximations in three ranges (public coefficients).
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)


_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)


_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)


_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)


_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)


_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _polyval(coeffs, x):
    out = jnp.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        out = out * x + _const(x, c)
    return out


@custom_jvp
def _ndtri(p):
    big = p > 1.0 - math.exp(-2.0)
    q = jnp.where(big, 1.0 - p, p)
    q = jnp.where((q <= 0.0) | jnp.isnan(q), jnp.full_like(q, 0.5), q)
    w = q - 0.5
    ww = w * w
    x_mid = -(w + w * ww * (_polyval(_P0, ww) / _polyval(_Q0, ww))) * math.sqrt(2 * math.pi)
    tail = q <= math.exp(-2.0)
    qt = jnp.where(tail, q, jnp.full_like(q, 0.01))
    z = jnp.sqrt(-2.0 * jnp.log(qt))
    iz = 1.0 / z
    first = z - jnp.log(z) / z
    x_tail = first - jnp.where(z >= 8.0, _polyval(_P2, iz) / _polyval(_Q2, iz),
                               _polyval(_P1, iz) / _polyval(_Q1, iz)) * iz
    x = jnp.where(tail, x_tail, x_mid)      # the quantile of 1 - q, >= 0
    x = jnp.where(big, x, -x)
    inf = jnp.full_like(p, np.inf)
    x = jnp.where(p == 0.0, -inf, jnp.where(p == 1.0, inf, x))
    return jnp.where((p < 0.0) | (p > 1.0) | jnp.isnan(p), jnp.full_like(p, np.nan), x)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, t * jnp.exp(0.5 * x * x + _LOG_SQRT_2PI)


def ndtri(p):
    """The inverse of the standard normal CDF (``ndtr(ndtri(p)) == p``).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.ndtri(0.975)), 10)
    1.9599639845
    """
    (p,) = _floats("ndtri", p)
    return _ndtri(p)


def erfcinv(y):
    """The inverse of ``erfc`` on (0, 2).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.erfcinv(0.5)), 12)
    0.476936276204
    """
    (y,) = _floats("erfcinv", y)
    return -_ndtri(0.5 * y) * (1.0 / math.sqrt(2.0))
