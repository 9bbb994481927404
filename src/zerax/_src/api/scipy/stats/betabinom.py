"""The beta-binomial distribution (JAX's ``jax.scipy.stats.betabinom``).

>>> from zerax.scipy.stats import betabinom
>>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)
0.333333333333
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """Log of the probability mass at ``k``."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = k - loc
    outside = (y < 0) | (y > n)
    y = jnp.where(outside, 0.0, y)
    comb = -jnp.log(n + 1.0) - special.betaln(n - y + 1.0, y + 1.0)
    log_probs = comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k, n, a, b, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, a, b, loc))
