"""Student's t distribution (JAX's ``jax.scipy.stats.t``; ``cdf``, ``logcdf``, ``sf`` and
``logsf`` as SciPy's ``scipy.stats.t``).

>>> from zerax.scipy.stats import t
>>> round(float(t.pdf(0.0, 1.0)), 12)
0.318309886184
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the probability density at ``x`` with ``df`` degrees of freedom."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * df
    norm = (special.gammaln(half) + 0.5 * jnp.log(df * math.pi * scale * scale)
            - special.gammaln(half + 0.5))
    return -(norm + (half + 0.5) * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))


def _lower_tail(z, df):
    """``P(T < -|z|)``: through ``I_x(df/2, 1/2)``, ``x = df / (df + z^2)``, in the tails
    (no cancellation far out), and through ``1/2 - I_y(1/2, df/2) / 2``,
    ``y = z^2 / (df + z^2)``, where ``z^2 < df`` (``x`` would round to 1 there)."""
    z2 = z * z
    small = z2 < df
    x = df / (df + jnp.where(small, df, z2))
    y = jnp.where(small, z2, df) / (df + jnp.where(small, z2, df))
    tail = 0.5 * special.betainc(0.5 * df, jnp.full_like(df, 0.5), x)
    center = 0.5 - 0.5 * special.betainc(jnp.full_like(df, 0.5), 0.5 * df, y)
    return jnp.where(small, center, tail)


def _cdf(z, df, log):
    with np.errstate(divide="ignore"):      # eagerly: log(0) = -inf is the value
        return _cdf_of(z, df, log)


def _cdf_of(z, df, log):
    # At z == 0 the formulas' derivatives would be 0 * inf (the integrands are singular
    # at y = 0): there the value is the CDF's Taylor polynomial, 1/2 + pdf(0) (z - (df + 1)
    # z^3 / (6 df)), whose derivatives to the fourth are the CDF's.
    zero = z == 0
    zs = jnp.where(zero, 1.0, z)
    low = _lower_tail(zs, df)
    w = jnp.where(zero, z, 0.0)
    slope = jnp.exp(logpdf(jnp.zeros_like(z), df))
    at_zero = 0.5 + slope * (w - (df + 1.0) / (6.0 * df) * w ** 3)
    if log:
        val = jnp.where(zs < 0, jnp.log(low), jnp.log1p(-low))
        at_zero = jnp.log(at_zero)
    else:
        val = jnp.where(zs < 0, low, 1.0 - low)
    return jnp.where(zero, at_zero, val)


def _args(fname, x, df, loc, scale):
    x, df, loc, scale = promote_args_inexact(fname, x, df, loc, scale)
    z = (x - loc) / scale
    z, df = jnp.broadcast_arrays(z, df)
    return z, df


def cdf(x, df, loc=0, scale=1):
    """The cumulative distribution function at ``x`` (SciPy's ``t.cdf``): regularized
    incomplete beta functions, each where it keeps its digits; differentiable in ``x``,
    ``loc`` and ``scale`` (not in ``df``, as ``betainc`` is not in its parameters).

    >>> from zerax.scipy.stats import t
    >>> round(float(t.cdf(0.5, 3.0)), 12)
    0.674276017576
    """
    return _cdf(*_args("t.cdf", x, df, loc, scale), log=False)


def logcdf(x, df, loc=0, scale=1):
    """Log of the CDF, accurate in both tails (``log1p`` of the lower tail above 0).

    >>> from zerax.scipy.stats import t
    >>> round(float(t.logcdf(-40.0, 3.0)), 9)
    -10.971162937
    """
    return _cdf(*_args("t.logcdf", x, df, loc, scale), log=True)


def sf(x, df, loc=0, scale=1):
    """The survival function ``1 - cdf`` at ``x`` (the CDF at the mirror point)."""
    z, df = _args("t.sf", x, df, loc, scale)
    return _cdf(-z, df, log=False)


def logsf(x, df, loc=0, scale=1):
    """Log of the survival function, accurate in both tails."""
    z, df = _args("t.logsf", x, df, loc, scale)
    return _cdf(-z, df, log=True)
