"""The multivariate normal distribution (JAX's ``jax.scipy.stats.multivariate_normal``, and
SciPy's ``entropy``).

>>> import zerax.numpy as znp
>>> from zerax.scipy.stats import multivariate_normal as mvn
>>> round(float(mvn.logpdf(znp.zeros(2), znp.zeros(2), znp.eye(2))), 12)
-1.837877066409
"""

from __future__ import annotations

import math

import numpy as np

import zerax.numpy as jnp
from ... import errors
from .. import linalg

from ..._src.api.scipy.stats._util import promote_args_inexact

__all__ = ["entropy", "logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def _solve_lower(chol, y):
    return linalg.solve_triangular(chol, y, lower=True)


def logpdf(x, mean, cov, allow_singular=None):
    """Log of the density at ``x`` (the last axis is the event); ``mean`` may be a
    scalar, ``cov`` a scalar (times the identity) or a (batch of) matrices."""
    if allow_singular is not None:
        raise errors.NotSupportedError(
            "zerax.scipy.stats.multivariate_normal.logpdf: allow_singular is not supported "
            "(as in JAX); pass a positive definite cov")
    x, mean, cov = promote_args_inexact("multivariate_normal.logpdf", x, mean, cov)
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return -0.5 * jnp.sum(y * y, axis=-1) / cov - 0.5 * n * (_LOG_2PI + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise errors.ShapeError(
            "zerax.scipy.stats.multivariate_normal.logpdf: cov must have shape (..., n, n) "
            f"with n = mean.shape[-1] = {n}; got cov.shape={cov.shape}")
    chol = jnp.linalg.cholesky(cov)
    z = jnp.vectorize(_solve_lower, signature="(n,n),(n)->(n)")(chol, y)
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - 0.5 * n * _LOG_2PI - log_det


def pdf(x, mean, cov):
    """The density at ``x``."""
    return jnp.exp(logpdf(x, mean, cov))


def entropy(mean=None, cov=1, allow_singular=False):
    """The differential entropy ``log det(2 pi e cov) / 2`` (SciPy's
    ``multivariate_normal.entropy``; ``mean`` only sets the dimension of a scalar
    ``cov``).  ``cov`` is a scalar (times the identity), a vector (the diagonal), a
    positive definite matrix, or a batch of them; differentiable in ``cov``.

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.stats import multivariate_normal as mvn
    >>> round(float(mvn.entropy(znp.zeros(2), znp.eye(2))), 12)
    2.837877066409
    """
    if allow_singular:
        raise errors.NotSupportedError(
            "zerax.scipy.stats.multivariate_normal.entropy: allow_singular=True is not "
            "supported; pass a positive definite cov")
    (cov,) = promote_args_inexact("multivariate_normal.entropy", cov)
    if cov.ndim == 0:
        n = 1 if mean is None else int(np.size(mean))
        return 0.5 * n * (_LOG_2PI + 1.0 + jnp.log(cov))
    if cov.ndim == 1:
        log_det = jnp.sum(jnp.log(cov), axis=-1)
    else:
        if cov.shape[-1] != cov.shape[-2]:
            raise errors.ShapeError(
                "zerax.scipy.stats.multivariate_normal.entropy: cov must be a scalar, a "
                f"vector or square matrices; got cov.shape={cov.shape}")
        chol = jnp.linalg.cholesky(cov)
        log_det = 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    n = cov.shape[-1]
    return 0.5 * (n * (_LOG_2PI + 1.0) + log_det)
