"""The exponential distribution (JAX's ``jax.scipy.stats.expon``).

>>> from zerax.scipy.stats import expon
>>> round(float(expon.cdf(1.0)), 12)
0.632120558829
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(fname, x, loc, scale):
    x, loc, scale = promote_args_inexact(fname, x, loc, scale)
    below = x < loc
    return jnp.where(below, 0.0, (x - loc) / scale), below, scale


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x`` (-inf below ``loc``)."""
    z, below, scale = _z("expon.logpdf", x, loc, scale)
    return jnp.where(below, -np.inf, -z - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    z, below, _ = _z("expon.cdf", x, loc, scale)
    return jnp.where(below, 0.0, -jnp.expm1(-z))


def logcdf(x, loc=0, scale=1):
    """Log of the CDF."""
    z, below, _ = _z("expon.logcdf", x, loc, scale)
    safe = jnp.where(below | (z == 0), 1.0, z)
    return jnp.where(below | (z == 0), -np.inf, jnp.log(-jnp.expm1(-safe)))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    z, below, _ = _z("expon.sf", x, loc, scale)
    return jnp.where(below, 1.0, jnp.exp(-z))


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    z, below, _ = _z("expon.logsf", x, loc, scale)
    return jnp.where(below, 0.0, -z)


def ppf(q, loc=0, scale=1):
    """The quantile function."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    bad = (q < 0) | (q > 1)
    safe = jnp.where(bad, 0.5, q)
    return jnp.where(bad, np.nan, -jnp.log1p(-safe) * scale + loc)
