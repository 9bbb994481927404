"""Student's t distribution (JAX's ``jax.scipy.stats.t``).

>>> from zerax.scipy.stats import t
>>> round(float(t.pdf(0.0, 1.0)), 12)
0.318309886184
"""

from __future__ import annotations

import math

from .... import numpy as jnp
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the probability density at ``x`` with ``df`` degrees of freedom."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * df
    norm = (special.gammaln(half) + 0.5 * jnp.log(df * math.pi * scale * scale)
            - special.gammaln(half + 0.5))
    return -(norm + (half + 0.5) * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """The probability density at ``x``."""
    return jnp.exp(logpdf(x, df, loc, scale))
