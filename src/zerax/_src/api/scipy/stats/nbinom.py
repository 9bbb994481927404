"""The negative binomial distribution (JAX's ``jax.scipy.stats.nbinom``).

>>> from zerax.scipy.stats import nbinom
>>> round(float(nbinom.pmf(1, 2, 0.5)), 12)
0.25
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the probability of ``k`` failures before the ``n``-th success."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    bad = y < 0
    y = jnp.where(bad, 0.0, y)
    comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + 1.0)
    log_probs = comb + special.xlogy(n, p) + special.xlog1py(y, -p)
    return jnp.where(bad, -np.inf, log_probs)


def pmf(k, n, p, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, n, p, loc))
