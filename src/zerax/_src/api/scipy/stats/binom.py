"""The binomial distribution (JAX's ``jax.scipy.stats.binom``).

>>> from zerax.scipy.stats import binom
>>> round(float(binom.pmf(2, 4, 0.5)), 12)
0.375
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the probability of ``k`` successes in ``n`` trials of probability ``p``."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    outside = (y < 0) | (y > n)
    y = jnp.where(outside, 0.0, y)
    comb = special.gammaln(n + 1.0) - special.gammaln(y + 1.0) - special.gammaln(n - y + 1.0)
    log_probs = comb + special.xlogy(y, p) + special.xlog1py(n - y, -p)
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k, n, p, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, p, loc))
