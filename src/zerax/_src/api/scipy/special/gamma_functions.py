"""The gamma function family: ``gamma``, ``gammaln``, ``loggamma``, ``gammasgn``, ``rgamma``,
``digamma`` (``psi``), ``polygamma``, ``beta``, ``betaln``, ``poch``, ``factorial``,
``comb``, ``multigammaln``, and the regularized incomplete gamma and beta functions.

lgamma, digamma and polygamma are primitives; the incomplete functions are the iterative
primitives of ``ops/special_ops.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ..... import errors
from .... import numpy as jnp
from ....core.core import bind
from ....ops import elementwise as ew
from ....ops import special_ops as so
from ...custom import custom_jvp
from ._util import _const, _float, _floats


def gammaln(x):
    """``log|Gamma(x)|``."""
    return bind(ew.lgamma_p, _float(x, "gammaln"))


def digamma(x):
    """The logarithmic derivative of Gamma."""
    return bind(ew.digamma_p, _float(x, "digamma"))


def psi(x):
    """The digamma function (SciPy's other name for `digamma`).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.psi(1.0)), 12)
    -0.577215664902
    """
    return digamma(x)


def polygamma(n, x):
    """The n-th derivative of digamma (``n`` a non-negative Python int)."""
    return ew.polygamma(int(n), _float(x, "polygamma"))


def gammasgn(x):
    """The sign of the gamma function (nan at the poles, as JAX and SciPy).

    >>> import zerax.scipy.special as zsp
    >>> zsp.gammasgn(zsp.gamma(-1.5))
    Array(1., dtype=float64)
    """
    (x,) = _floats("gammasgn", x)
    floor_x = jnp.floor(x)
    neg = x < 0
    pole = (neg & (x == floor_x)) | jnp.isnan(x)
    odd = jnp.remainder(floor_x, 2) != 0
    sign = jnp.where(neg & odd, _const(x, -1.0), _const(x, 1.0))
    return jnp.where(pole, _const(x, np.nan), sign)


def gamma(x):
    """The gamma function ``Gamma(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.gamma(5.0)), 10)
    24.0
    """
    (x,) = _floats("gamma", x)
    return gammasgn(x) * jnp.exp(_lgamma(x))


@custom_jvp
def _rgamma(x):
    pole = (x <= 0) & (x == jnp.floor(x))        # (-inf too): 1/Gamma is 0 there
    safe = jnp.where(pole, _const(x, 0.5), x)
    return jnp.where(pole, _const(x, 0.0), gammasgn(safe) * jnp.exp(-_lgamma(safe)))


@_rgamma.defjvp
def _rgamma_jvp(primals, tangents):
    # (1/Gamma)' = -psi / Gamma, which at the poles x = -n is the limit (-1)^n n!
    (x,), (t,) = primals, tangents
    ans = _rgamma(x)
    pole = (x <= 0) & (x == jnp.floor(x)) & jnp.isfinite(x)
    n = jnp.where(pole, -x, _const(x, 0.0))
    at_pole = jnp.where(jnp.remainder(n, 2) == 0, _const(x, 1.0), _const(x, -1.0)) * \
        jnp.exp(_lgamma(n + 1))
    safe = jnp.where(pole, _const(x, 0.5), x)
    return ans, t * jnp.where(pole, at_pole, -ew.bind(ew.digamma_p, safe) * ans)


def rgamma(x):
    """``1 / Gamma(x)``, an entire function: 0 at the poles of Gamma (SciPy's
    ``rgamma``), differentiable everywhere.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.rgamma(4.0)), 12), float(zsp.rgamma(-2.0))
    (0.166666666667, 0.0)
    """
    (x,) = _floats("rgamma", x)
    with np.errstate(all="ignore"):     # eagerly: an overflow to inf is the value (SciPy's)
        return _rgamma(x)


def _lgamma(x):
    return ew.bind(ew.lgamma_p, x)


def loggamma(x):
    """``log Gamma(x)`` for real ``x`` (nan where Gamma(x) < 0, as SciPy's real loggamma).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.loggamma(0.5)), 12)
    0.572364942925
    """
    (x,) = _floats("loggamma", x)
    return jnp.where(gammasgn(x) < 0, _const(x, np.nan), _lgamma(x))


def betaln(a, b):
    """``log |B(a, b)|``, the logarithm of the beta function.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.betaln(2.0, 3.0)), 12)
    -2.484906649788
    """
    a, b = _floats("betaln", a, b)
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.beta(2.0, 3.0)), 12)
    0.083333333333
    """
    a, b = _floats("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def poch(z, m):
    """The Pochhammer symbol ``Gamma(z + m) / Gamma(z)``.

    >>> import zerax.scipy.special as zsp
    >>> float(zsp.poch(3.0, 2.0))
    12.0
    """
    z, m = _floats("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    return jnp.where(m == 0, _const(z, 1.0), sign * jnp.exp(_lgamma(z + m) - _lgamma(z)))


def factorial(n, exact: bool = False):
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not supported,
    as in JAX.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.factorial(5)), 10)
    120.0
    """
    if exact:
        raise errors.ZeraxValueError("zerax.scipy.special.factorial: exact=True is not "
                                     "supported (as in JAX); use exact=False")
    (n,) = _floats("factorial", n)
    return jnp.where(n < 0, _const(n, 0.0), jnp.exp(_lgamma(n + 1)))


def comb(N, k, repetition: bool = False):
    """The number of combinations of ``N`` things taken ``k`` at a time, ``N! / (k! (N -
    k)!)`` through gamma functions (0 outside 0 <= k <= N); with ``repetition``, the
    number of multisets ``comb(N + k - 1, k)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.comb(5, 2)), 10)
    10.0
    """
    N, k = _floats("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), _const(N, 1.0), comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    sn = jnp.where(ok, N, _const(N, 0.0))
    sk = jnp.where(ok, k, _const(k, 0.0))
    val = jnp.exp(_lgamma(sn + 1) - _lgamma(sk + 1) - _lgamma(sn + 1 - sk))
    return jnp.where(ok, val, _const(N, 0.0))


def multigammaln(a, d: int):
    """The log of the multivariate gamma function of dimension ``d`` (a Python int).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.multigammaln(3.0, 2)), 12)
    1.550194993958
    """
    d = int(d)
    if d < 1:
        raise errors.ZeraxValueError(f"zerax.scipy.special.multigammaln: d must be a positive "
                                     f"integer, got {d}")
    (a,) = _floats("multigammaln", a)
    out = _const(a, 0.25 * d * (d - 1) * math.log(math.pi))
    for j in range(d):
        out = out + _lgamma(a - _const(a, j / 2.0))
    return out


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.gammainc(2.0, 1.0)), 12)
    0.264241117657
    """
    a, x = _floats("gammainc", a, x)
    return so.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.gammaincc(2.0, 1.0)), 12)
    0.735758882343
    """
    a, x = _floats("gammaincc", a, x)
    return so.igammac(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (differentiable in ``x``).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.betainc(2.0, 3.0, 0.4)), 12)
    0.5248
    """
    a, b, x = _floats("betainc", a, b, x)
    return so.betainc(a, b, x)
