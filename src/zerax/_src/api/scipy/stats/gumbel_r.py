"""The right-skewed Gumbel distribution (JAX's ``jax.scipy.stats.gumbel_r``).

>>> from zerax.scipy.stats import gumbel_r
>>> round(float(gumbel_r.cdf(0.0)), 12)
0.367879441171
"""

from __future__ import annotations

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(fname, x, loc, scale):
    x, loc, scale = promote_args_inexact(fname, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    z, scale = _z("gumbel_r.logpdf", x, loc, scale)
    return -jnp.log(scale) - z - jnp.exp(-z)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the CDF."""
    z, _ = _z("gumbel_r.logcdf", x, loc, scale)
    return -jnp.exp(-z)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function ``exp(-exp(-z))``."""
    return jnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    z, _ = _z("gumbel_r.sf", x, loc, scale)
    return -jnp.expm1(-jnp.exp(-z))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    return jnp.log(sf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    return loc - scale * jnp.log(-jnp.log(p))
