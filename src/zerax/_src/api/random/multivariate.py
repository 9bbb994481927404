"""Samplers of vectors and matrices, JAX 0.10's algorithms: multivariate_normal (through a
cholesky, eigh or svd factor of the covariance) and orthogonal (Haar-distributed, by QR).
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ... import numpy as jnp
from ...numpy import linalg
from . import keys as K
from . import samplers as S
from ._util import cast, check_shape, float_dtype, inexact_param, param, quiet


@quiet
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal samples, as JAX's ``jax.random.multivariate_normal``
    (``method`` "cholesky", "eigh" or "svd" factorises ``cov``).

    >>> import numpy as np, zerax.random as zr
    >>> zr.multivariate_normal(zr.PRNGKey(0), np.zeros(2), np.eye(2), (4,)).shape
    (4, 2)
    """
    data, _ = K.check_key("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise errors.ZeraxValueError(
            f"multivariate_normal: method must be one of 'svd', 'eigh', 'cholesky', got "
            f"{method!r}.")
    mean = param(mean, "multivariate_normal", "mean")
    cov = param(cov, "multivariate_normal", "cov")
    dt = np.result_type(*(np.dtype(inexact_param(v).dtype) for v in (mean, cov)))
    mean, cov = cast(mean, dt), cast(cov, dt)
    dtype = dt if dtype is None else float_dtype(dtype, "multivariate_normal")
    if len(mean.shape) < 1:
        raise errors.ShapeError("multivariate_normal requires mean.ndim >= 1, got "
                                f"mean.ndim == {len(mean.shape)}.")
    if len(cov.shape) < 2:
        raise errors.ShapeError("multivariate_normal requires cov.ndim >= 2, got "
                                f"cov.ndim == {len(cov.shape)}.")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise errors.ShapeError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
    else:
        shape = K.canonical_shape(shape, "multivariate_normal")
        check_shape("multivariate_normal", shape, **{"mean[..., 0]": np.empty(mean.shape[:-1]),
                                                     "cov[..., 0, 0]": np.empty(cov.shape[:-2])})
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = jnp.multiply(u, jnp.sqrt(s[..., None, :]))
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = jnp.multiply(v, jnp.sqrt(w[..., None, :]))
    else:
        factor = linalg.cholesky(cov)
    z = S._normal(data, shape + tuple(mean.shape[-1:]), dtype)
    return jnp.add(mean, jnp.einsum("...ij,...j->...i", factor, z))


@quiet
def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Random orthogonal (n, m) matrices (Haar measure), as JAX's
    ``jax.random.orthogonal``.

    >>> import numpy as np, zerax.random as zr
    >>> q = np.asarray(zr.orthogonal(zr.PRNGKey(0), 3))
    >>> np.allclose(q @ q.T, np.eye(3))
    True
    """
    data, _ = K.check_key("orthogonal", key)
    dtype = float_dtype(dtype, "orthogonal", allow_complex=True)
    shape = K.canonical_shape(shape, "orthogonal")
    n = S._concrete_int(n, "orthogonal")
    mm = n if m is None else S._concrete_int(m, "orthogonal")
    z = S._normal(data, (*shape, max(n, mm), min(n, mm)), dtype)
    q, r = linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = jnp.multiply(q, jnp.expand_dims(jnp.sign(d), -2))
    return jnp.swapaxes(x, -1, -2) if n < mm else x
