"""The Poisson distribution with mean ``mu`` (JAX's ``jax.scipy.stats.poisson``).

>>> from zerax.scipy.stats import poisson
>>> round(float(poisson.pmf(2, 3.0)), 12)
0.224041807655
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


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


_ENTROPY_TERMS = 200   # k = 0..199 hold all but e^-40 of the mass for mu < 100


def entropy(mu, loc=0):
    """The Shannon entropy ``-sum_k p(k) log p(k)`` (``loc`` does not change it): the sum
    itself for mu < 100, above it the asymptotic series
    ``log(2 pi e mu)/2 - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)``; 0 at mu == 0, nan below.
    """
    mu, loc = promote_args_inexact("poisson.entropy", mu, loc)
    mu = mu + jnp.zeros_like(loc)
    small = mu < 100
    m = jnp.where(small & (mu > 0), mu, 1.0)[..., None]
    k = jnp.arange(_ENTROPY_TERMS, dtype=mu.dtype)
    lp = special.xlogy(k, m) - special.gammaln(k + 1.0) - m
    h_small = -jnp.sum(jnp.exp(lp) * lp, axis=-1)
    big = jnp.where(small, 100.0, mu)
    inv = 1.0 / big
    h_big = (0.5 * jnp.log(2 * math.pi * math.e * big)
             - inv * (1.0 / 12 + inv * (1.0 / 24 + inv * 19.0 / 360)))
    h = jnp.where(small, h_small, h_big)
    return jnp.where(mu == 0, 0.0, jnp.where(mu > 0, h, np.nan))
