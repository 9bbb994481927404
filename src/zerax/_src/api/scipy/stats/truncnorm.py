"""The normal distribution truncated to [a, b] in standard units (JAX's
``jax.scipy.stats.truncnorm``).

>>> from zerax.scipy.stats import truncnorm
>>> round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 12)
0.5
"""

from __future__ import annotations

import math

import numpy as np

from .... import numpy as jnp
from .. import special

from . import norm
from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _log_diff(big, small):
    """log(exp(big) - exp(small)) for big >= small."""
    return big + jnp.log1p(-jnp.exp(jnp.minimum(small - big, 0.0)))


def _log_gauss_mass(a, b):
    """log(ndtr(b) - ndtr(a)) for a <= b, accurate in both tails and across 0."""
    a, b = jnp.broadcast_arrays(a, b)
    left = b <= 0
    right = a > 0
    mass_left = _log_diff(special.log_ndtr(b), special.log_ndtr(a))
    mass_right = _log_diff(special.log_ndtr(-a), special.log_ndtr(-b))
    central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(left, mass_left, jnp.where(right, mass_right, central))


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the density at ``x`` (-inf outside; nan if a >= b)."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    bad = a >= b
    a, b = jnp.where(bad, 0.0, a), jnp.where(bad, 1.0, b)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(bad, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _tails(fname, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_args_inexact(fname, x, a, b, loc, scale)
    z = (x - loc) / scale
    x, a, b = jnp.broadcast_arrays(z, a, b)
    bad = a >= b
    a, b = jnp.where(bad, 0.0, a), jnp.where(bad, 1.0, b)
    zc = jnp.clip(x, a, b)
    total = _log_gauss_mass(a, b)
    logcdf = _log_gauss_mass(a, zc) - total
    logsf = _log_gauss_mass(zc, b) - total
    # the larger side keeps its digits through log1p(-exp(other side))
    big_cdf, big_sf = logcdf > -math.log(2.0), logsf > -math.log(2.0)
    logcdf, logsf = (
        jnp.where(big_cdf, jnp.log1p(-jnp.exp(jnp.where(big_cdf, logsf, -1.0))), logcdf),
        jnp.where(big_sf, jnp.log1p(-jnp.exp(jnp.where(big_sf, logcdf, -1.0))), logsf))
    logcdf = jnp.where(x <= a, -np.inf, jnp.where(x >= b, 0.0, logcdf))
    logsf = jnp.where(x <= a, 0.0, jnp.where(x >= b, -np.inf, logsf))
    return jnp.where(bad, np.nan, logcdf), jnp.where(bad, np.nan, logsf)


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the CDF."""
    return _tails("truncnorm.logcdf", x, a, b, loc, scale)[0]


def cdf(x, a, b, loc=0, scale=1):
    """The cumulative distribution function at ``x``."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function."""
    return _tails("truncnorm.logsf", x, a, b, loc, scale)[1]


def sf(x, a, b, loc=0, scale=1):
    """The survival function ``1 - cdf``."""
    return jnp.exp(logsf(x, a, b, loc, scale))
