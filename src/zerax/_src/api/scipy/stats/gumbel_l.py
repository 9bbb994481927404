"""The left-skewed Gumbel distribution (JAX's ``jax.scipy.stats.gumbel_l``).

>>> from zerax.scipy.stats import gumbel_l
>>> round(float(gumbel_l.sf(0.0)), 12)
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
    z, scale = _z("gumbel_l.logpdf", x, loc, scale)
    return -jnp.log(scale) + z - jnp.exp(z)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function ``1 - exp(-exp(z))``."""
    z, _ = _z("gumbel_l.cdf", x, loc, scale)
    return -jnp.expm1(-jnp.exp(z))


def logcdf(x, loc=0, scale=1):
    """Log of the CDF."""
    return jnp.log(cdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    z, _ = _z("gumbel_l.logsf", x, loc, scale)
    return -jnp.exp(z)


def sf(x, loc=0, scale=1):
    """The survival function ``exp(-exp(z))``."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    return loc + scale * jnp.log(-jnp.log1p(-p))
