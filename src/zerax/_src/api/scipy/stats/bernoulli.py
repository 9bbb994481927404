"""The Bernoulli distribution (JAX's ``jax.scipy.stats.bernoulli``).

>>> from zerax.scipy.stats import bernoulli
>>> float(bernoulli.pmf(1, 0.25))
0.25
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k, p, loc=0):
    """Log of the probability mass at ``k`` (-inf outside [0, 1])."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    outside = (x < 0) | (x > 1)
    x = jnp.where(outside, 0.0, x)
    log_probs = special.xlogy(x, p) + special.xlog1py(1.0 - x, -p)
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k, p, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """The cumulative distribution function at ``k``."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    return jnp.where(bad, np.nan, jnp.where(k < 0, 0.0, jnp.where(k < 1, 1.0 - p, 1.0)))


def ppf(q, p):
    """The quantile function: 0 for ``q <= 1 - p``, else 1 (JAX's convention)."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, jnp.where(q <= 1.0 - p, 0.0, 1.0))
