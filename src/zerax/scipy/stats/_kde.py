"""Gaussian kernel density estimation (JAX's ``jax.scipy.stats.gaussian_kde``): an
immutable pytree, so a fitted estimator passes through ``jit``, ``vmap`` and ``grad``."""

from __future__ import annotations

import math

import numpy as np

import zerax.numpy as jnp
from ... import errors, random
from .. import linalg, special
from ...tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(d, n)``, or ``(n,)`` for
    one dimension) with bandwidth ``bw_method`` (``"scott"``, the default,
    ``"silverman"``, a number, or a callable of the estimator) and optional ``weights``.

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(znp.array([0.0, 1.0, 2.0]), bw_method=1.0)
    >>> round(float(kde.evaluate(1.0)[0]), 12)
    0.29429457648
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if dataset.dtype.kind == "c":
            raise errors.NotSupportedError("zerax.scipy.stats.gaussian_kde: complex data is "
                                           "not supported (as in JAX)")
        if dataset.dtype.kind != "f":
            dataset = dataset.astype(float)
        d, n = dataset.shape
        if weights is not None:
            weights = jnp.atleast_1d(jnp.asarray(weights)).astype(dataset.dtype)
            if weights.ndim != 1:
                raise errors.ShapeError("zerax.scipy.stats.gaussian_kde: weights must be "
                                        "one-dimensional")
            if weights.shape[0] != n:
                raise errors.ShapeError(f"zerax.scipy.stats.gaussian_kde: weights must have "
                                        f"length n = {n}, got {weights.shape[0]}")
            weights = weights / jnp.sum(weights)
        else:
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self.dataset, self.weights = dataset, weights
        self.neff = 1.0 / jnp.sum(weights ** 2)
        bw = "scott" if bw_method is None else bw_method
        if isinstance(bw, str) and bw == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif isinstance(bw, str) and bw == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw):
            factor = bw(self)
        elif not isinstance(bw, str) and jnp.ndim(bw) == 0:
            factor = bw
        else:
            raise errors.ZeraxValueError("zerax.scipy.stats.gaussian_kde: bw_method must be "
                                         "'scott', 'silverman', a number or a callable")
        cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self.covariance = cov * factor ** 2
        self.inv_cov = jnp.linalg.inv(cov) / factor ** 2

    # -- pytree
    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.neff, obj.dataset, obj.weights, obj.covariance, obj.inv_cov = children
        return obj

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def _points(self, points):
        points = jnp.atleast_2d(jnp.asarray(points)).astype(self.dataset.dtype)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise errors.ShapeError(f"zerax.scipy.stats.gaussian_kde: points have dimension "
                                    f"{d}, the data {self.d}")
        return points

    def _log_kernels(self, points):
        """log(weight_j N(x_i; data_j, covariance)) for every point i and datum j."""
        whitening = linalg.cholesky(self.inv_cov, lower=True)
        data = self.dataset.T @ whitening                   # n x d
        xi = self._points(points).T @ whitening             # m x d
        log_norm = (jnp.sum(jnp.log(jnp.diagonal(whitening)))
                    - 0.5 * self.d * math.log(2 * math.pi))
        sq = jnp.sum((xi[:, None, :] - data[None, :, :]) ** 2, axis=-1)
        return jnp.log(self.weights)[None, :] + log_norm - 0.5 * sq

    def evaluate(self, points):
        """The estimated density at ``points`` (shape ``(d, m)``)."""
        return jnp.sum(jnp.exp(self._log_kernels(points)), axis=1)

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, points):
        """The log of the estimated density at ``points``, without underflow."""
        return special.logsumexp(self._log_kernels(points), axis=1)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian ``N(mean, cov)``."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean, self.dataset.dtype)))
        cov = jnp.atleast_2d(jnp.asarray(cov, self.dataset.dtype))
        if mean.shape != (self.d,) or cov.shape != (self.d, self.d):
            raise errors.ShapeError("zerax.scipy.stats.gaussian_kde.integrate_gaussian: mean "
                                    f"must have shape ({self.d},) and cov ({self.d}, "
                                    f"{self.d})")
        total = self.covariance + cov
        chol = linalg.cholesky(total, lower=True)
        diff = self.dataset - mean[:, None]
        z = linalg.solve_triangular(chol, diff, lower=True)
        log_norm = (jnp.sum(jnp.log(jnp.diagonal(chol)))
                    + 0.5 * self.d * math.log(2 * math.pi))
        return jnp.sum(self.weights * jnp.exp(-0.5 * jnp.sum(z * z, axis=0) - log_norm))

    def integrate_box_1d(self, low, high):
        """The integral of a one-dimensional density over ``[low, high]``."""
        if self.d != 1:
            raise errors.ShapeError("zerax.scipy.stats.gaussian_kde.integrate_box_1d: the "
                                    "data must be one-dimensional")
        sd = jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sd
        hi = (high - self.dataset[0]) / sd
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise errors.ShapeError("zerax.scipy.stats.gaussian_kde.integrate_kde: the two "
                                    "estimates must have the same dimension")
        total = self.covariance + other.covariance
        chol = linalg.cholesky(total, lower=True)
        diff = self.dataset[:, :, None] - other.dataset[:, None, :]       # d x n x m
        flat = jnp.reshape(diff, (self.d, -1))
        z = linalg.solve_triangular(chol, flat, lower=True)
        log_norm = (jnp.sum(jnp.log(jnp.diagonal(chol)))
                    + 0.5 * self.d * math.log(2 * math.pi))
        k = jnp.reshape(jnp.exp(-0.5 * jnp.sum(z * z, axis=0) - log_norm),
                        diff.shape[1:])
        return jnp.sum(self.weights[:, None] * other.weights[None, :] * k)

    def resample(self, key, shape=()):
        """Random draws from the estimate: ``shape + (d,)`` transposed to ``(d,) + shape``
        as JAX's (a key from ``zerax.random``)."""
        k1, k2 = random.split(key)
        n = int(np.prod(shape)) if shape else 1
        ind = random.choice(k1, self.n, shape=(n,), p=self.weights)
        eps = random.multivariate_normal(k2, jnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=(n,))
        draws = self.dataset[:, ind] + eps.T
        return jnp.reshape(draws, (self.d,) + tuple(shape))
