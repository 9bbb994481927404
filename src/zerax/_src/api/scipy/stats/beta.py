"""The beta distribution (JAX's ``jax.scipy.stats.beta``).

>>> from zerax.scipy.stats import beta
>>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
1.5
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the probability density at ``x`` (-inf outside [loc, loc + scale])."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    y = jnp.where(outside, 0.5, (x - loc) / scale)
    log_probs = (special.xlogy(a - 1.0, y) + special.xlog1py(b - 1.0, -y)
                 - special.betaln(a, b) - jnp.log(scale))
    return jnp.where(outside, -np.inf, log_probs)


def pdf(x, a, b, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _y(fname, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_args_inexact(fname, x, a, b, loc, scale)
    return a, b, jnp.clip((x - loc) / scale, 0.0, 1.0)


def cdf(x, a, b, loc=0, scale=1):
    """The cumulative distribution function (the regularized incomplete beta)."""
    a, b, y = _y("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, y)


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the CDF (through the survival function where the CDF is near 1)."""
    c, s = cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)
    big = c > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, s, 0.0)), jnp.log(jnp.where(big, 1.0, c)))


def sf(x, a, b, loc=0, scale=1):
    """The survival function ``1 - cdf`` (``I_{1-y}(b, a)``)."""
    a, b, y = _y("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1.0 - y)


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function (through the CDF where it is near 1)."""
    c, s = cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)
    big = s > 0.5
    return jnp.where(big, jnp.log1p(-jnp.where(big, c, 0.0)), jnp.log(jnp.where(big, 1.0, s)))
