"""More of SciPy's special functions on zerax values (``zerax.scipy.special``, JAX's names
and signatures): gamma and beta families, incomplete gamma and beta functions, the normal
distribution's inverse and log, Bessel functions of orders 0 and 1 (J, Y and the modified
I) and of real order (``jv``, ``iv``), spherical harmonics, Hurwitz zeta, exponential integrals, entropies, and small combinatorial helpers.

Compositions of primitives; the iterative ones (incomplete gamma/beta, Bessel functions,
``zeta``, ``expn``/``expi``) are the primitives of ``ops/special_ops.py``.  ``log_ndtr``
and ``ndtri`` carry custom JVPs (their closed-form derivatives; the branches of the values
would give nan or lose accuracy).  Float32 stays float32; integers compute in float64.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..base import dtypes
from .. import numpy as jnp
from . import scipy_special as _ss
from .custom import custom_jvp
from ..numpy._util import (as_dtype, check_arg, numpy_result_dtype, promote_and_broadcast, result_type)
from ..ops import elementwise as ew
from ..ops import special_ops as so

__all__ = ["bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "entr",
           "erfcinv", "exp1", "expi", "expn", "factorial", "gamma", "gammainc", "gammaincc",
           "gammasgn", "i0", "i0e", "i1", "i1e", "iv", "j0", "j1", "jv", "kl_div", "log_expit",
           "log_ndtr", "log_softmax", "loggamma", "logsumexp", "multigammaln", "ndtri", "poch",
           "rel_entr", "softmax", "sph_harm", "sph_harm_y", "y0", "y1", "zeta"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _float(x, fname):
    x = check_arg(x, fname)
    return as_dtype(x, numpy_result_dtype(np.sin, x))


def _floats(fname, *args):
    """Promote to one inexact dtype (the default float for integers) and broadcast."""
    args = [check_arg(a, fname, i) for i, a in enumerate(args)]
    dtype = np.dtype(result_type(*args))
    if dtype.kind not in "fc":
        dtype = dtypes.default_float()
    if np.dtype(dtype).kind == "c":
        raise errors.NotSupportedError(f"zerax.scipy.special.{fname}: complex inputs are not "
                                       "supported")
    return promote_and_broadcast(fname, args, dtype)


def _const(x, v):
    return np.asarray(v, x.dtype)


# --------------------------------------------------------------------------- gamma, beta

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


# --------------------------------------------------------------------------- incomplete

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


# --------------------------------------------------------------------------- normal

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


# --------------------------------------------------------------------------- Bessel, zeta

def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i0e(1.0)), 12)
    0.465759607594
    """
    (x,) = _floats("i0e", x)
    return so.bessel_i0e(x)


def i0(x):
    """The modified Bessel function of order 0.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i0(1.0)), 12)
    1.266065877752
    """
    (x,) = _floats("i0", x)
    return jnp.exp(jnp.abs(x)) * so.bessel_i0e(x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i1e(1.0)), 12)
    0.20791041535
    """
    (x,) = _floats("i1e", x)
    return so.bessel_i1e(x)


def i1(x):
    """The modified Bessel function of order 1.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i1(1.0)), 12)
    0.565159103992
    """
    (x,) = _floats("i1", x)
    return jnp.exp(jnp.abs(x)) * so.bessel_i1e(x)


def j0(x):
    """The Bessel function of the first kind of order 0.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.j0(1.0)), 12)
    0.765197686558
    """
    (x,) = _floats("j0", x)
    return so.bessel_j0(x)


def j1(x):
    """The Bessel function of the first kind of order 1.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.j1(1.0)), 12)
    0.440050585745
    """
    (x,) = _floats("j1", x)
    return so.bessel_j1(x)


def y0(x):
    """The Bessel function of the second kind of order 0 (nan for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.y0(1.0)), 12)
    0.088256964216
    """
    (x,) = _floats("y0", x)
    return so.bessel_y0(x)


def y1(x):
    """The Bessel function of the second kind of order 1 (nan for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.y1(1.0)), 12)
    -0.7812128213
    """
    (x,) = _floats("y1", x)
    return so.bessel_y1(x)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """``J_0(z), ..., J_v(z)`` stacked on a new first axis, by Miller's backward recurrence
    from order ``n_iter + 1`` normalised with ``J_0 + 2 sum_k J_2k = 1`` (JAX's algorithm:
    accurate while ``|z|`` is well below ``n_iter``; below 1e-3 the leading terms of the
    power series, which the recurrence would overflow on; ``J_k(0)`` exactly).

    >>> import zerax.scipy.special as zsp
    >>> [round(float(j), 12) for j in zsp.bessel_jn(1.0, v=2)]
    [0.765197686558, 0.440050585745, 0.114903484932]
    """
    v, n_iter = int(v), int(n_iter)
    if v < 0 or n_iter < v:
        raise errors.ZeraxValueError(f"zerax.scipy.special.bessel_jn: need 0 <= v <= n_iter, "
                                     f"got v={v}, n_iter={n_iter}")
    (z,) = _floats("bessel_jn", z)
    tiny = jnp.abs(z) < 1e-3
    zs = jnp.where(tiny, _const(z, 1.0), z)
    f0, f1 = jnp.zeros_like(zs), jnp.full_like(zs, 1e-16)
    bs = jnp.zeros_like(zs)
    vals = [None] * (v + 1)
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1) * f1 / zs - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        if k <= v:
            vals[k] = f
        f0, f1 = f1, f
    norm = bs - f1                     # f1 is F_0 after the loop
    half = 0.5 * z
    out = []
    for k in range(v + 1):
        series = half ** k / math.factorial(k) * (1.0 - half * half / (k + 1))
        out.append(jnp.where(tiny, series, vals[k] / norm))
    return jnp.stack(out)


def _bessel_args(fname, v, z):
    v, z = _floats(fname, v, z)
    if v.dtype.itemsize < 4:            # SciPy's loops are float32 and float64
        v, z = v.astype(np.float32), z.astype(np.float32)
    return v, z


def jv(v, z):
    """The Bessel function of the first kind ``J_v(z)`` of real order ``v`` and real ``z``
    (SciPy's ``jv``; complex ``z`` is not supported).

    SciPy's values: ``(-1)^n J_n(-z)`` for integer orders at negative ``z`` and nan for
    other orders there; ``J_v(0)`` is 1, 0 or +-inf (negative non-integer ``v``, the sign
    of ``1/Gamma(v+1)``); nan at ``z = +-inf`` (SciPy's choice); where a negative order
    overflows, the infinity has the sign of the value (SciPy's is always +inf); Debye's
    expansion for orders past 1e7 well below ``z``.
    Differentiable in ``z`` (``J_v' = (J_v-1 - J_v+1) / 2``), not in ``v``
    (NotSupportedError, as in JAX and autograd).  The dtype is SciPy's: float32 inputs
    stay float32, integers give float64.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.jv(2.5, 3.0)), 12)
    0.41271003221
    >>> round(float(zsp.jv(-0.5, 1.0)), 12)
    0.431098868018
    """
    return so.bessel_jv(*_bessel_args("jv", v, z))


def iv(v, z):
    """The modified Bessel function of the first kind ``I_v(z)`` of real order ``v`` and
    real ``z`` (SciPy's ``iv``; complex ``z`` is not supported).

    SciPy's values: ``(-1)^n I_n(-z)`` for integer orders at negative ``z`` and nan for
    other orders there; ``I_v(0)`` is 1, 0 or inf (negative non-integer ``v``); inf where
    it overflows; nan at ``z = +-inf`` (SciPy's choice); Debye's expansion for orders past
    1e7.  Differentiable in ``z`` (``I_v' = (I_v-1 + I_v+1) / 2``),
    not in ``v`` (NotSupportedError).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.iv(2.5, 3.0)), 12)
    1.515339446682
    """
    return so.bessel_iv(*_bessel_args("iv", v, z))


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


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_k (k + q)**-x`` (Riemann's when ``q`` is None).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.zeta(2.0)), 12)
    1.644934066848
    """
    if q is None:
        q = 1.0
    x, q = _floats("zeta", x, q)
    return so.zeta(x, q)


# --------------------------------------------------------------------------- exponential integrals

def expn(n, x):
    """The generalized exponential integral ``E_n(x) = int_1^inf e^(-xt) / t^n dt`` for
    integer ``n >= 0`` (nan for other ``n``); differentiable in ``x``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.expn(2, 1.0)), 12)
    0.148495506776
    """
    n, x = _floats("expn", n, x)
    # (the kernel reads n == -1 as Ei: negative orders are nan here)
    return so.expn(jnp.where(n < 0, _const(n, np.nan), n), x)


def exp1(x):
    """The exponential integral ``E_1(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.exp1(1.0)), 12)
    0.219383934396
    """
    (x,) = _floats("exp1", x)
    return so.expn(jnp.ones_like(x), x)


def expi(x):
    """The exponential integral ``Ei(x)`` (principal value; ``-E_1(-x)`` for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.expi(1.0)), 12)
    1.895117816356
    """
    (x,) = _floats("expi", x)
    return so.expi(x)


# --------------------------------------------------------------------------- softmax family
# SciPy's (and jax.scipy's) defaults: axis=None, over every element (zerax.nn's are -1).

def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (default: all elements, as SciPy).

    >>> import zerax.scipy.special as zsp
    >>> zsp.softmax([[0.0, 0.0], [0.0, 0.0]])
    Array([[0.25, 0.25],
           [0.25, 0.25]], dtype=float64)
    """
    return _ss.softmax(jnp.asarray(x), axis=axis)


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (default: all elements, as SciPy).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.log_softmax([1.0, 1.0])[0]), 12)
    -0.69314718056
    """
    return _ss.log_softmax(jnp.asarray(x), axis=axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably; ``where`` leaves elements
    out (JAX's signature).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.logsumexp([1.0, 2.0, 3.0], where=[True, True, False])), 6)
    2.313262
    """
    if where is not None:
        a = jnp.asarray(a)
        if a.dtype.kind not in "fc":
            a = a.astype(float)
        mask = jnp.asarray(where)
        a = jnp.where(mask, a, _const(a, -np.inf))
        if b is not None:
            b = jnp.where(mask, jnp.asarray(b), 0)
    return _ss.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


# --------------------------------------------------------------------------- entropies

def entr(x):
    """``-x log x`` for x > 0, 0 at 0, -inf below (SciPy's elementwise entropy).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.entr(0.5)), 12)
    0.34657359028
    """
    (x,) = _floats("entr", x)
    pos = x > 0
    safe = jnp.where(pos, x, jnp.ones_like(x))
    val = -(safe * jnp.log(safe))
    return jnp.where(pos, val, jnp.where(x == 0, jnp.zeros_like(x),
                                         jnp.where(jnp.isnan(x), x, jnp.full_like(x, -np.inf))))


def rel_entr(p, q):
    """``p log(p / q)`` for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.rel_entr(0.5, 0.25)), 12)
    0.34657359028
    """
    p, q = _floats("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    sp = jnp.where(both, p, jnp.ones_like(p))
    sq = jnp.where(both, q, jnp.ones_like(q))
    val = sp * jnp.log(sp / sq)
    other = jnp.where((p == 0) & (q >= 0), jnp.zeros_like(p), jnp.full_like(p, np.inf))
    other = jnp.where(jnp.isnan(p) | jnp.isnan(q), p + q, other)
    return jnp.where(both, val, other)


def kl_div(p, q):
    """``p log(p / q) - p + q`` for p, q > 0; q where p == 0 and q >= 0; inf elsewhere.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.kl_div(0.5, 0.25)), 12)
    0.09657359028
    """
    p, q = _floats("kl_div", p, q)
    both = (p > 0) & (q > 0)
    sp = jnp.where(both, p, jnp.ones_like(p))
    sq = jnp.where(both, q, jnp.ones_like(q))
    val = sp * jnp.log(sp / sq) - sp + sq
    other = jnp.where((p == 0) & (q >= 0), q, jnp.full_like(p, np.inf))
    other = jnp.where(jnp.isnan(p) | jnp.isnan(q), p + q, other)
    return jnp.where(both, val, other)


def log_expit(x):
    """``log(expit(x))`` without overflow or cancellation.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.log_expit(-800.0)), 6)
    -800.0
    """
    (x,) = _floats("log_expit", x)
    return -jnp.logaddexp(jnp.zeros_like(x), -x)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at lmbda == 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.boxcox(2.0, 0.5)), 12)
    0.828427124746
    """
    x, lmbda = _floats("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small ``x``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.boxcox1p(1.0, 0.5)), 12)
    0.828427124746
    """
    x, lmbda = _floats("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def _boxcox_of_log(logx, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, logx, jnp.expm1(safe * logx) / safe)
