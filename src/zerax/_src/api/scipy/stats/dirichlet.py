"""The Dirichlet distribution (JAX's ``jax.scipy.stats.dirichlet``).

>>> import zerax.numpy as znp
>>> from zerax.scipy.stats import dirichlet
>>> round(float(dirichlet.pdf(znp.array([0.2, 0.3, 0.5]), znp.ones(3))), 12)
2.0
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ..... import errors
from .. import special

from ._util import promote_args_inexact

__all__ = ["logpdf", "pdf"]


def _is_simplex(x):
    return jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1.0) < 1e-6)


def logpdf(x, alpha):
    """Log of the density at ``x`` (points along axis 0; ``x`` may omit the last
    coordinate, which is then ``1 - sum``); -inf off the simplex."""
    x, alpha = promote_args_inexact("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise errors.ShapeError(f"zerax.scipy.stats.dirichlet.logpdf: alpha must be "
                                f"one-dimensional; got alpha.shape={alpha.shape}")
    if x.ndim == 0 or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise errors.ShapeError(
            "zerax.scipy.stats.dirichlet.logpdf: x must have as many entries along axis 0 as "
            f"alpha, or one fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1.0 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalize = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    a = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    simplex = _is_simplex(x)
    safe = jnp.where(simplex, x, 0.5)
    log_probs = jnp.sum(special.xlogy(a - 1.0, safe), axis=0) - normalize
    return jnp.where(simplex, log_probs, -np.inf)


def pdf(x, alpha):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, alpha))
