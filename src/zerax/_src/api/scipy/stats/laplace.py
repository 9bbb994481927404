"""The Laplace distribution (JAX's ``jax.scipy.stats.laplace``).

>>> from zerax.scipy.stats import laplace
>>> float(laplace.pdf(0.0))
0.5
"""

from __future__ import annotations

import math

from .... import numpy as jnp

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, loc=0, scale=1):
    """Log of the probability density at ``x``."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return -math.log(2.0) - jnp.log(scale) - jnp.abs(x - loc) / scale


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    lower = z <= 0
    zl = jnp.where(lower, z, 0.0)
    zu = jnp.where(lower, 0.0, z)
    return jnp.where(lower, 0.5 * jnp.exp(zl), 1.0 - 0.5 * jnp.exp(-zu))
