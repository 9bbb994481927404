"""The Pareto distribution with shape ``b`` (JAX's ``jax.scipy.stats.pareto``).

>>> from zerax.scipy.stats import pareto
>>> float(pareto.cdf(2.0, 1.0))
0.5
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _y(fname, x, b, loc, scale):
    x, b, loc, scale = promote_args_inexact(fname, x, b, loc, scale)
    y = (x - loc) / scale
    below = y < 1
    return jnp.where(below, 1.0, y), below, b, scale


def logpdf(x, b, loc=0, scale=1):
    """Log of the density at ``x`` (-inf below ``loc + scale``)."""
    y, below, b, scale = _y("pareto.logpdf", x, b, loc, scale)
    return jnp.where(below, -np.inf, jnp.log(b) - jnp.log(scale) - (b + 1.0) * jnp.log(y))


def pdf(x, b, loc=0, scale=1):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    """Log of the survival function ``-b log(y)``."""
    y, below, b, _ = _y("pareto.logsf", x, b, loc, scale)
    return jnp.where(below, 0.0, -b * jnp.log(y))


def sf(x, b, loc=0, scale=1):
    """The survival function ``y**-b``."""
    return jnp.exp(logsf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """The cumulative distribution function ``1 - y**-b``."""
    return -jnp.expm1(logsf(x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    """Log of the CDF."""
    y, below, b, _ = _y("pareto.logcdf", x, b, loc, scale)
    safe = jnp.where(y == 1, 2.0, y)
    return jnp.where(below | (y == 1), -np.inf, jnp.log(-jnp.expm1(-b * jnp.log(safe))))


def ppf(q, b, loc=0, scale=1):
    """The quantile function ``loc + scale (1 - q)**(-1/b)``."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    bad = (q < 0) | (q > 1) | jnp.isnan(q)
    safe = jnp.where(bad, 0.5, q)
    return jnp.where(bad, np.nan, loc + scale * jnp.exp(-jnp.log1p(-safe) / b))
