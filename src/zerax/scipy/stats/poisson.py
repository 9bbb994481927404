"""The Poisson distribution with mean ``mu`` (JAX's ``jax.scipy.stats.poisson``).

>>> from zerax.scipy.stats import poisson
>>> round(float(poisson.pmf(2, 3.0)), 12)
0.224041807655
"""

from __future__ import annotations

import numpy as np

import zerax.numpy as jnp
from zerax.scipy import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf", "cdf"]


def logpmf(k, mu, loc=0):
    """Log of the probability mass at ``k`` (-inf off the non-negative integers)."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    bad = (x < 0) | (jnp.round(x) != x)
    safe = jnp.where(bad, 0.0, x)
    log_probs = special.xlogy(safe, mu) - special.gammaln(safe + 1.0) - mu
    return jnp.where(bad, -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """The cumulative distribution function at ``k`` (``Q(floor(k) + 1, mu)``)."""
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    below = x < 0
    return jnp.where(below, 0.0,
                     special.gammaincc(jnp.floor(jnp.where(below, 0.0, x)) + 1.0, mu))
