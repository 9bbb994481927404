"""The geometric distribution on 1, 2, ... (JAX's ``jax.scipy.stats.geom``).

>>> from zerax.scipy.stats import geom
>>> float(geom.pmf(2, 0.5))
0.25
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """Log of the probability that the first success is trial ``k``."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    bad = x <= 0
    x = jnp.where(bad, 1.0, x)
    return jnp.where(bad, -np.inf, special.xlog1py(x - 1.0, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    """The probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))
