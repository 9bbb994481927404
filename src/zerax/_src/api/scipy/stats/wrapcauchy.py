"""The wrapped Cauchy distribution on [0, 2 pi] (JAX's ``jax.scipy.stats.wrapcauchy``).

>>> from zerax.scipy.stats import wrapcauchy
>>> round(float(wrapcauchy.pdf(0.0, 0.5)), 12)
0.477464829276
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """Log of the density at ``x`` (nan unless 0 < c < 1; -inf outside [0, 2 pi])."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    valid = (c > 0) & (c < 1)
    c = jnp.where(valid, c, 0.5)
    val = (jnp.log1p(-c * c) - math.log(2 * math.pi)
           - jnp.log1p(c * c - 2.0 * c * jnp.cos(x)))
    inside = (x >= 0) & (x <= 2 * math.pi)
    return jnp.where(valid, jnp.where(inside, val, -np.inf), np.nan)


def pdf(x, c):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, c))
