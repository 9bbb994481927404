"""The uniform distribution on [loc, loc + scale] (JAX's ``jax.scipy.stats.uniform``).

>>> from zerax.scipy.stats import uniform
>>> float(uniform.cdf(0.25))
0.25
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    return jnp.where(outside, -np.inf, -jnp.log(scale) + jnp.zeros_like(x))


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    return jnp.clip((x - loc) / scale, 0.0, 1.0)


def ppf(q, loc=0, scale=1):
    """The quantile function (nan outside [0, 1])."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + q * scale)
