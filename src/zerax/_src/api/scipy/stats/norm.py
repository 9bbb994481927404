"""The normal distribution (JAX's ``jax.scipy.stats.norm``).

>>> from zerax.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 12)
-0.918938533205
"""

from __future__ import annotations

import math

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - jnp.log(scale) - 0.5 * math.log(2 * math.pi)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """Log of the CDF, accurate in the lower tail."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, accurate in the upper tail."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function (inverse CDF)."""
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function."""
    q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
    return loc - special.ndtri(q) * scale
