"""The Cauchy distribution (JAX's ``jax.scipy.stats.cauchy``).

>>> from zerax.scipy.stats import cauchy
>>> round(float(cauchy.cdf(1.0)), 12)
0.75
"""

from __future__ import annotations

import math

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(z * z)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / math.pi


def logcdf(x, loc=0, scale=1):
    """Log of the CDF."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    return jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """The quantile function."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (q - 0.5))


def isf(q, loc=0, scale=1):
    """The inverse survival function."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (0.5 - q))
