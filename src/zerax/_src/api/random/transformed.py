"""Continuous samplers that transform normal, exponential or uniform draws, JAX 0.10's
algorithms step for step: lognormal, pareto, weibull_min, rayleigh, wald, triangular,
maxwell and double_sided_maxwell.
"""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ...numpy import linalg
from ...ops import elementwise as ew
from . import keys as K
from . import samplers as S
from ._util import bshape, cast, float_dtype, param, quiet, scalar_of
from .gamma import _bshapes


@quiet
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * N(0, 1)) samples, as JAX's ``jax.random.lognormal``.

    >>> import zerax.random as zr
    >>> bool((zr.lognormal(zr.PRNGKey(0), 0.5, (3,)) > 0).all())
    True
    """
    data, _ = K.check_key("lognormal", key)
    dtype = float_dtype(dtype, "lognormal", allow_complex=True)
    sigma = param(sigma, "lognormal", "sigma")
    shape = _bshapes("lognormal", shape, sigma=sigma)
    return jnp.exp(jnp.multiply(S._normal(data, shape, dtype), cast(sigma, dtype)))


@quiet
def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) samples, as JAX's ``jax.random.pareto``.

    >>> import zerax.random as zr
    >>> bool((zr.pareto(zr.PRNGKey(0), 3.0, (3,)) >= 1).all())
    True
    """
    data, _ = K.check_key("pareto", key)
    dtype = float_dtype(dtype, "pareto")
    b = param(b, "pareto", "b")
    shape = _bshapes("pareto", shape, b=b)
    e = S.exponential(data, shape, dtype)
    return jnp.exp(jnp.true_divide(e, cast(b, dtype)))


@quiet
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples, as JAX's ``jax.random.weibull_min``.

    >>> import zerax.random as zr
    >>> zr.weibull_min(zr.PRNGKey(0), 1.0, 2.0, (3,)).shape
    (3,)
    """
    data, _ = K.check_key("weibull_min", key)
    dtype = float_dtype(dtype, "weibull_min")
    shape = K.canonical_shape(shape, "weibull_min")
    scale = param(scale, "weibull_min", "scale")
    concentration = param(concentration, "weibull_min", "concentration")
    u = S._uniform(data, shape, dtype, scalar_of(dtype, 0.0), scalar_of(dtype, 1.0))
    inv_c = jnp.true_divide(1.0, concentration)
    return jnp.multiply(jnp.power(jnp.negative(jnp.log1p(jnp.negative(u))), inv_c), scale)


@quiet
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) samples, as JAX's ``jax.random.rayleigh``.

    >>> import zerax.random as zr
    >>> bool((zr.rayleigh(zr.PRNGKey(0), 2.0, (3,)) > 0).all())
    True
    """
    data, _ = K.check_key("rayleigh", key)
    dtype = float_dtype(dtype, "rayleigh")
    scale = param(scale, "rayleigh", "scale")
    shape = _bshapes("rayleigh", shape, scale=scale)
    u = S._uniform(data, shape, dtype, scalar_of(dtype, 0.0), scalar_of(dtype, 1.0))
    scale = bshape(cast(scale, dtype), shape)
    return ew.mul(scale, ew.sqrt(ew.mul(ew.log(u), scalar_of(dtype, -2))))


@quiet
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples, as JAX's ``jax.random.wald``.

    >>> import zerax.random as zr
    >>> bool((zr.wald(zr.PRNGKey(0), 1.0, (3,)) > 0).all())
    True
    """
    data, _ = K.check_key("wald", key)
    dtype = float_dtype(dtype, "wald")
    mean = param(mean, "wald", "mean")
    shape = _bshapes("wald", shape, mean=mean)
    k1, k2 = S._split2(data)
    mean = bshape(cast(mean, dtype), shape)
    v = S._normal(k1, shape, dtype)
    z = S._uniform(k2, shape, dtype, scalar_of(dtype, 0.0), scalar_of(dtype, 1.0))
    y = ew.integer_pow(v, y=2)
    y_sq = ew.integer_pow(y, y=2)
    mean_sq = ew.integer_pow(mean, y=2)
    sqrt_term = ew.sqrt(ew.add(ew.mul(ew.mul(scalar_of(dtype, 4), mean), y), ew.mul(mean_sq, y_sq)))
    x = ew.sub(ew.add(mean, ew.div(ew.mul(mean_sq, y), scalar_of(dtype, 2))),
               ew.mul(ew.div(mean, scalar_of(dtype, 2)), sqrt_term))
    return ew.select_n(ew.le(z, ew.div(mean, ew.add(mean, x))), ew.div(mean_sq, x), x)


@quiet
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) samples, as JAX's ``jax.random.triangular``.

    >>> import zerax.random as zr
    >>> x = zr.triangular(zr.PRNGKey(0), 0.0, 1.0, 3.0, (4,))
    >>> bool(((x >= 0) & (x <= 3)).all())
    True
    """
    data, _ = K.check_key("triangular", key)
    dtype = float_dtype(dtype, "triangular")
    left, mode_, right = (param(v, "triangular", w) for v, w in
                          ((left, "left"), (mode, "mode"), (right, "right")))
    shape = _bshapes("triangular", shape, left=left, mode=mode_, right=right)
    left, right, mode_ = (bshape(cast(v, dtype), shape) for v in (left, right, mode_))
    fc = ew.div(ew.sub(mode_, left), ew.sub(right, left))
    u = S._uniform(data, shape, dtype, scalar_of(dtype, 0.0), scalar_of(dtype, 1.0))
    out1 = ew.add(left, ew.sqrt(ew.mul(ew.mul(u, ew.sub(right, left)), ew.sub(mode_, left))))
    out2 = ew.sub(right, ew.sqrt(ew.mul(ew.mul(ew.sub(scalar_of(dtype, 1), u), ew.sub(right, left)),
                                        ew.sub(right, mode_))))
    return ew.select_n(ew.lt(u, fc), out2, out1)


@quiet
def maxwell(key, shape=(), dtype=None):
    """Maxwell samples (the norm of a 3-d standard normal), as JAX's
    ``jax.random.maxwell``.

    >>> import zerax.random as zr
    >>> zr.maxwell(zr.PRNGKey(0), (2,)).shape
    (2,)
    """
    data, shape, dtype = S._unit("maxwell", key, shape, dtype)
    return _maxwell(data, shape, dtype)


def _maxwell(data, shape, dtype):
    return linalg.norm(S._normal(data, shape + (3,), dtype), axis=-1)


@quiet
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples, as JAX's ``jax.random.double_sided_maxwell``.

    >>> import zerax.random as zr
    >>> zr.double_sided_maxwell(zr.PRNGKey(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    data, shape, dtype = S._unit("double_sided_maxwell", key, shape, dtype)
    loc = param(loc, "double_sided_maxwell", "loc")
    scale = param(scale, "double_sided_maxwell", "scale")
    params_shape = tuple(np.broadcast_shapes(tuple(loc.shape), tuple(scale.shape)))
    if not shape:
        shape = params_shape
    shape = shape + params_shape
    mkey, rkey = S._split2(data)
    m = _maxwell(mkey, shape, dtype)
    sign = S.rademacher(rkey, shape, dtype)
    return jnp.add(jnp.multiply(jnp.multiply(sign, m), scale), loc)
