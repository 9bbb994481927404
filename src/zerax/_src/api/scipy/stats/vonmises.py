"""The von Mises distribution (JAX's ``jax.scipy.stats.vonmises``; no loc or scale).

>>> from zerax.scipy.stats import vonmises
>>> round(float(vonmises.pdf(0.0, 1.0)), 12)
0.341710488623
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """Log of the density at ``x`` with concentration ``kappa`` (nan unless kappa > 0)."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    pos = kappa > 0
    k = jnp.where(pos, kappa, 1.0)
    val = k * (jnp.cos(x) - 1.0) - math.log(2 * math.pi) - jnp.log(special.i0e(k))
    return jnp.where(pos, val, np.nan)


def pdf(x, kappa):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, kappa))
