"""The generalized normal distribution with shape ``beta`` (JAX's
``jax.scipy.stats.gennorm``).

>>> from zerax.scipy.stats import gennorm
>>> round(float(gennorm.pdf(0.0, 2.0)), 12)
0.564189583548
"""

from __future__ import annotations

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, beta):
    """Log of the density ``beta / (2 Gamma(1/beta)) exp(-|x|**beta)``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - special.gammaln(1.0 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """The cumulative distribution function at ``x``."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    c = 0.5 * jnp.sign(x)
    return (0.5 + c) - c * special.gammaincc(1.0 / beta, jnp.abs(x) ** beta)
