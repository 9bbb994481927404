"""The logistic distribution (JAX's ``jax.scipy.stats.logistic``).

>>> from zerax.scipy.stats import logistic
>>> float(logistic.cdf(0.0))
0.5
"""

from __future__ import annotations

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    half = 0.5 * (x - loc) / scale
    return -2.0 * jnp.logaddexp(half, -half) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return special.expit((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    """The quantile function."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """The inverse survival function."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return loc - special.logit(x) * scale
