"""The multinomial distribution (JAX's ``jax.scipy.stats.multinomial``).

>>> import zerax.numpy as znp
>>> from zerax.scipy.stats import multinomial
>>> round(float(multinomial.pmf(znp.array([1, 1]), 2, znp.array([0.5, 0.5]))), 12)
0.5
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ..... import errors
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """Log of the probability of the counts ``x`` (integers, last axis the categories) in
    ``n`` trials with category probabilities ``p``; -inf unless the counts sum to ``n``."""
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = jnp.asarray(x), jnp.asarray(n)
    if x.dtype.kind not in "iu" or n.dtype.kind not in "iu":
        raise errors.ZeraxTypeError(
            "zerax.scipy.stats.multinomial.logpmf: x and n must be of integer type; got "
            f"x.dtype={x.dtype}, n.dtype={n.dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    logprobs = special.gammaln(n + 1.0) + jnp.sum(
        special.xlogy(x, p) - special.gammaln(x + 1.0), axis=-1)
    # (counts summed per point, along the last axis: JAX sums the whole batch)
    return jnp.where(jnp.sum(x, axis=-1) == n, logprobs, -np.inf)


def pmf(x, n, p):
    """The probability of the counts ``x``."""
    return jnp.exp(logpmf(x, n, p))
