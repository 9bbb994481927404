"""The chi-squared distribution with ``df`` degrees of freedom (JAX's
``jax.scipy.stats.chi2``).

>>> from zerax.scipy.stats import chi2
>>> round(float(chi2.cdf(2.0, 2.0)), 12)
0.632120558829
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the probability density at ``x`` (-inf below ``loc``)."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    below = y < 0
    y = jnp.where(below, 1.0, y)
    half = 0.5 * df
    kernel = special.xlogy(half - 1.0, y) - 0.5 * y
    norm = special.gammaln(half) + math.log(2.0) * half
    return jnp.where(below, -np.inf, kernel - norm - jnp.log(scale))


def pdf(x, df, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))


def _args(fname, x, df, loc, scale):
    x, df, loc, scale = promote_args_inexact(fname, x, df, loc, scale)
    return 0.5 * df, jnp.clip(0.5 * (x - loc) / scale, 0.0, None)


def cdf(x, df, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    return special.gammainc(*_args("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """Log of the CDF (through the survival function where the CDF is near 1)."""
    c, s = cdf(x, df, loc, scale), sf(x, df, loc, scale)
    big = c > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, s, 0.0)), jnp.log(jnp.where(big, 1.0, c)))


def sf(x, df, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    return special.gammaincc(*_args("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """Log of the survival function (through the CDF where it is near 1)."""
    c, s = cdf(x, df, loc, scale), sf(x, df, loc, scale)
    big = s > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, c, 0.0)), jnp.log(jnp.where(big, 1.0, s)))
