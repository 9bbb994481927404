"""The gamma distribution with shape ``a`` (JAX's ``jax.scipy.stats.gamma``).

>>> from zerax.scipy.stats import gamma
>>> round(float(gamma.cdf(1.0, 2.0)), 12)
0.264241117657
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, loc=0, scale=1):
    """Log of the probability density at ``x`` (-inf below ``loc``)."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    below = x < loc
    y = jnp.where(below, 1.0, (x - loc) / scale)
    log_probs = special.xlogy(a - 1.0, y) - y - special.gammaln(a) - jnp.log(scale)
    return jnp.where(below, -np.inf, log_probs)


def pdf(x, a, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, a, loc, scale))


def _y(fname, x, a, loc, scale):
    x, a, loc, scale = promote_args_inexact(fname, x, a, loc, scale)
    return a, jnp.clip((x - loc) / scale, 0.0, None)


def cdf(x, a, loc=0, scale=1):
    """The cumulative distribution function (the regularized incomplete gamma)."""
    a, y = _y("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, y)


def logcdf(x, a, loc=0, scale=1):
    """Log of the CDF (through the survival function where the CDF is near 1)."""
    c, s = cdf(x, a, loc, scale), sf(x, a, loc, scale)
    big = c > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, s, 0.0)), jnp.log(jnp.where(big, 1.0, c)))


def sf(x, a, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    a, y = _y("gamma.sf", x, a, loc, scale)
    return special.gammaincc(a, y)


def logsf(x, a, loc=0, scale=1):
    """Log of the survival function (through the CDF where it is near 1)."""
    c, s = cdf(x, a, loc, scale), sf(x, a, loc, scale)
    big = s > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, c, 0.0)), jnp.log(jnp.where(big, 1.0, s)))
