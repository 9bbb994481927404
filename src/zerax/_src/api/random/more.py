"""The remaining samplers, JAX 0.10's algorithms step for step: poisson (Knuth below
lam = 10, transformed rejection above), binomial (inversion / BTRS), multinomial,
lognormal, pareto, weibull_min, rayleigh, wald, geometric, triangular, maxwell,
double_sided_maxwell, multivariate_normal (cholesky/eigh/svd) and orthogonal.
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ...base import dtypes
from ...lax import lax
from ... import numpy as jnp
from ...numpy import linalg
from ...lax.control_flow import scan, while_loop
from ...ops import elementwise as ew
from . import keys as K
from . import samplers as S
from ._util import (bshape, cast, check_shape, float_dtype, inexact_param, int_dtype, param,
                    quiet)
from .gamma import _bshapes


def _f(dtype, v):
    return np.array(v, dtype)


def _counter():
    """A rejection loop's iteration counter: 0 in the mode's default int (JAX's Python 0)."""
    return np.array(0, dtypes.default_int())


def _next(i):
    return ew.add(i, np.array(1, i.dtype))


def _below(i, n):
    return ew.lt(i, np.array(min(n, np.iinfo(i.dtype).max), i.dtype))


# --------------------------------------------------------------------------- poisson

def _poisson_knuth(data, lam, shape, dtype, max_iters):
    f32 = np.dtype(np.float32)

    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, sub = S._split2(rng)
        k = jnp.where(ew.gt(log_prod, ew.neg(lam)), ew.add(k, _f(dtype, 1)), k)
        u = S._uniform(sub, shape, f32, _f(f32, 0.0), _f(f32, 1.0))
        return _next(i), k, rng, ew.add(log_prod, ew.log(u))

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return ew.bitwise_and(jnp.any(ew.gt(log_prod, ew.neg(lam))),
                              _below(i, max_iters))

    k0 = jnp.zeros(shape, dtype)
    lp0 = jnp.zeros(shape, f32)
    k = while_loop(cond_fn, body_fn, (_counter(), k0, data, lp0))[1]
    return cast(ew.sub(k, _f(dtype, 1)), dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    ldt = np.dtype(lam.dtype)
    c = lambda v: _f(ldt, v)   # noqa: E731  (JAX's weak Python constants, in lam's dtype)
    log_lam = ew.log(lam)
    b = ew.add(c(0.931), ew.mul(c(2.53), ew.sqrt(lam)))
    a = ew.add(c(-0.059), ew.mul(c(0.02483), b))
    inv_alpha = ew.add(c(1.1239), ew.div(c(1.1328), ew.sub(b, c(3.4))))
    v_r = ew.sub(c(0.9277), ew.div(c(3.6224), ew.sub(b, c(2))))

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        ks = K.tf.threefry_split(rng, (3,))
        rng, k0, k1 = ks[0], ks[1], ks[2]
        u = ew.sub(S._uniform(k0, shape, ldt, c(0.0), c(1.0)), c(0.5))
        v = S._uniform(k1, shape, ldt, c(0.0), c(1.0))
        u_shifted = ew.sub(c(0.5), lax.abs(u))
        k = ew.floor(ew.add(ew.add(ew.mul(ew.add(ew.div(ew.mul(c(2), a), u_shifted), b), u),
                                   lam), c(0.43)))
        s = ew.log(ew.div(ew.mul(v, inv_alpha),
                          ew.add(ew.div(a, ew.mul(u_shifted, u_shifted)), b)))
        t = ew.sub(ew.add(ew.neg(lam), ew.mul(k, log_lam)), lax.lgamma(ew.add(k, c(1))))
        accept1 = ew.bitwise_and(ew.ge(u_shifted, c(0.07)), ew.le(v, v_r))
        reject = ew.bitwise_or(ew.lt(k, c(0)),
                               ew.bitwise_and(ew.lt(u_shifted, c(0.013)), ew.gt(v, u_shifted)))
        accept2 = ew.le(s, t)
        accept = ew.bitwise_or(accept1, ew.bitwise_and(ew.bitwise_not(reject), accept2))
        k_out = ew.select_n(accept, k_out, k)
        return _next(i), k_out, ew.bitwise_or(accepted, accept), rng

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return ew.bitwise_and(jnp.any(ew.bitwise_not(accepted)), _below(i, max_iters))

    k_init = jnp.full(shape, -1, ldt)
    acc = jnp.zeros(shape, np.bool_)
    k = while_loop(cond_fn, body_fn, (_counter(), k_init, acc, data))[1]
    return cast(k, dtype)


@quiet
def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) samples, as JAX's ``jax.random.poisson`` (lam is used in float32, as
    in JAX).

    >>> import zerax.random as zr
    >>> zr.poisson(zr.PRNGKey(0), 3.0, (4,)).dtype
    dtype('int64')
    """
    data, _ = K.check_key("poisson", key)
    dtype = int_dtype(dtype, "poisson")
    lam = param(lam, "poisson", "lam")
    if shape is None:
        shape = tuple(lam.shape)
    else:
        shape = K.canonical_shape(shape, "poisson")
        check_shape("poisson", shape, lam=lam)
    lam = cast(bshape(lam, shape), np.float32)
    f32 = np.dtype(np.float32)
    use_knuth = ew.bitwise_or(ew.ne(lam, lam), ew.lt(lam, _f(f32, 10)))
    lam_knuth = ew.select_n(use_knuth, jnp.zeros_like(lam), lam)
    lam_rej = ew.select_n(use_knuth, lam, jnp.full_like(lam, 1e5))
    max_iters = np.iinfo(dtype).max
    result = ew.select_n(use_knuth,
                         _poisson_rejection(data, lam_rej, shape, dtype, max_iters),
                         _poisson_knuth(data, lam_knuth, shape, dtype, max_iters))
    return ew.select_n(ew.eq(lam, _f(f32, 0)), result, jnp.zeros_like(result))


# --------------------------------------------------------------------------- binomial

_STIRLING_TAIL = np.array([
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287])


def _stirling_approx_tail(k):
    dt = np.dtype(k.dtype)
    vals = jnp.asarray(_STIRLING_TAIL.astype(dt))
    use_tail = ew.le(k, _f(dt, 9))
    k = ew.clamp(_f(dt, 0.0), k, _f(dt, 9.0))
    kp1 = ew.add(k, _f(dt, 1))
    kp1sq = ew.mul(kp1, kp1)
    approx = ew.div(ew.sub(_f(dt, 1.0 / 12), ew.div(ew.sub(_f(dt, 1.0 / 360),
                                                            ew.div(_f(dt, 1.0 / 1260), kp1sq)),
                                                     kp1sq)), kp1)
    idx = cast(ew.floor(k), np.int32)
    return ew.select_n(use_tail, approx, jnp.take(vals, idx))


def _binomial_inversion(data, count, prob, shape, dtype, max_iters):
    pdt = np.dtype(prob.dtype)
    log1mp = jnp.log1p(ew.neg(prob))

    def body_fn(carry):
        i, num_geom, geom_sum, rng = carry
        ks = K.tf.threefry_split(rng, (2,))
        sub, rng = ks[0], ks[1]
        num_geom_out = ew.select_n(ew.le(geom_sum, count), num_geom,
                                   ew.add(num_geom, _f(pdt, 1)))
        u = S._uniform(sub, shape, pdt, _f(pdt, 0.0), _f(pdt, 1.0))
        geom = ew.ceil(ew.div(ew.log(u), log1mp))
        return _next(i), num_geom_out, ew.add(geom_sum, geom), rng

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return ew.bitwise_and(jnp.any(ew.le(geom_sum, count)), _below(i, max_iters))

    zeros = jnp.zeros(shape, pdt)
    k = while_loop(cond_fn, body_fn, (_counter(), zeros, zeros, data))[1]
    return cast(ew.sub(k, _f(pdt, 1)), dtype)


def _btrs(data, count, prob, shape, dtype, max_iters):
    pdt = np.dtype(prob.dtype)
    c_ = lambda v: _f(pdt, v)   # noqa: E731
    stddev = ew.sqrt(ew.mul(ew.mul(count, prob), ew.sub(c_(1), prob)))
    b = ew.add(c_(1.15), ew.mul(c_(2.53), stddev))
    a = ew.add(ew.add(c_(-0.0873), ew.mul(c_(0.0248), b)), ew.mul(c_(0.01), prob))
    c = ew.add(ew.mul(count, prob), c_(0.5))
    v_r = ew.sub(c_(0.92), ew.div(c_(4.2), b))
    r = ew.div(prob, ew.sub(c_(1), prob))
    alpha = ew.mul(ew.add(c_(2.83), ew.div(c_(5.1), b)), stddev)
    m = ew.floor(ew.mul(ew.add(count, c_(1)), prob))

    def body_fn(carry):
        i, k_out, accepted, rng = carry
        ks = K.tf.threefry_split(rng, (3,))
        rng, k0, k1 = ks[0], ks[1], ks[2]
        u = S._uniform(k0, shape, pdt, c_(0.0), c_(1.0))
        v = S._uniform(k1, shape, pdt, c_(0.0), c_(1.0))
        u = ew.sub(u, c_(0.5))
        us = ew.sub(c_(0.5), lax.abs(u))
        accept1 = ew.bitwise_and(ew.ge(us, c_(0.07)), ew.le(v, v_r))
        k = ew.floor(ew.add(ew.mul(ew.add(ew.div(ew.mul(c_(2), a), us), b), u), c))
        reject = ew.bitwise_or(ew.lt(k, c_(0)), ew.gt(k, count))
        v = ew.log(ew.div(ew.mul(v, alpha), ew.add(ew.div(a, ew.mul(us, us)), b)))
        one = c_(1)
        ub = ew.add(ew.add(ew.mul(ew.add(m, c_(0.5)),
                                  ew.log(ew.div(ew.add(m, one),
                                                ew.mul(r, ew.add(ew.sub(count, m), one))))),
                           ew.mul(ew.add(count, one),
                                  ew.log(ew.div(ew.add(ew.sub(count, m), one),
                                                ew.add(ew.sub(count, k), one))))),
                    ew.mul(ew.add(k, c_(0.5)),
                           ew.log(ew.div(ew.mul(r, ew.add(ew.sub(count, k), one)),
                                         ew.add(k, one)))))
        ub = ew.add(ub, _stirling_approx_tail(m))
        ub = ew.add(ub, _stirling_approx_tail(ew.sub(count, m)))
        ub = ew.sub(ub, _stirling_approx_tail(k))
        ub = ew.sub(ub, _stirling_approx_tail(ew.sub(count, k)))
        accept2 = ew.le(v, ub)
        accept = ew.bitwise_or(accept1, ew.bitwise_and(ew.bitwise_not(reject), accept2))
        k_out = ew.select_n(accept, k_out, k)
        return _next(i), k_out, ew.bitwise_or(accepted, accept), rng

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return ew.bitwise_and(jnp.any(ew.bitwise_not(accepted)), _below(i, max_iters))

    k_init = jnp.full(shape, -1, pdt)
    k = while_loop(cond_fn, body_fn, (_counter(), k_init, jnp.zeros(shape, np.bool_), data))[1]
    return cast(k, dtype)


@quiet
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples as floats, as JAX's ``jax.random.binomial``.

    >>> import zerax.random as zr
    >>> x = zr.binomial(zr.PRNGKey(0), 10.0, 0.3, (4,))
    >>> x.dtype, bool(((x >= 0) & (x <= 10)).all())
    (dtype('float64'), True)
    """
    data, _ = K.check_key("binomial", key)
    dtype = float_dtype(dtype, "binomial")
    count, prob = param(n, "binomial", "n"), param(p, "binomial", "p")
    return _binomial(data, count, prob, shape, dtype)


def _binomial(data, count, prob, shape, dtype):
    shape = _bshapes("binomial", shape, n=count, p=prob)
    prob = inexact_param(prob)
    pdt = np.dtype(prob.dtype)
    count = bshape(cast(count, pdt), shape)
    prob = bshape(prob, shape)
    half = _f(pdt, 0.5)
    p_lt_half = ew.lt(prob, half)
    q = ew.select_n(p_lt_half, ew.sub(_f(pdt, 1.0), prob), prob)
    count_nan_or_neg = ew.bitwise_or(ew.ne(count, count), ew.lt(count, _f(pdt, 0.0)))
    count_inf = jnp.isinf(count)
    q_is_nan = ew.ne(q, q)
    q_l_0 = ew.lt(q, _f(pdt, 0.0))
    q = ew.select_n(ew.bitwise_or(q_is_nan, q_l_0), q, jnp.full_like(q, 0.01))
    use_inversion = ew.bitwise_or(count_nan_or_neg, ew.le(ew.mul(count, q), _f(pdt, 10.0)))
    count = ew.floor(count)
    count_inv = ew.select_n(use_inversion, jnp.zeros_like(count), count)
    count_btrs = ew.select_n(use_inversion, count, jnp.full_like(count, 1e4))
    q_btrs = ew.select_n(use_inversion, q, jnp.full_like(q, 0.5))
    max_iters = np.iinfo(np.int64).max   # JAX: finfo(dtype).max, i.e. never reached
    samples = ew.select_n(use_inversion,
                          _btrs(data, count_btrs, q_btrs, shape, dtype, max_iters),
                          _binomial_inversion(data, count_inv, q, shape, dtype, max_iters))
    invalid = ew.bitwise_or(ew.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = ew.select_n(invalid, samples, jnp.full_like(samples, np.nan, dtype))
    samples = ew.select_n(ew.bitwise_and(count_inf, ew.bitwise_not(invalid)), samples,
                          jnp.full_like(samples, np.inf, dtype))
    keep = ew.bitwise_or(ew.bitwise_or(p_lt_half, count_nan_or_neg),
                         ew.bitwise_or(q_is_nan, count_inf))
    return ew.select_n(keep, ew.sub(cast(count, dtype), samples), samples)


@quiet
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts along the last axis of ``p``, as JAX's
    ``jax.random.multinomial`` (a scan of conditional binomials).

    >>> import numpy as np, zerax.random as zr
    >>> x = zr.multinomial(zr.PRNGKey(0), 10.0, np.array([0.2, 0.3, 0.5]))
    >>> float(np.asarray(x).sum())
    10.0
    """
    data, _ = K.check_key("multinomial", key)
    n, p = param(n, "multinomial", "n"), param(p, "multinomial", "p")
    p = inexact_param(p)
    dt = np.result_type(np.dtype(n.dtype) if np.dtype(n.dtype).kind == "f" else p.dtype,
                        p.dtype)
    n, p = cast(n, dt), cast(p, dt)
    dtype = dt if dtype is None else dtypes.requested(dtype, "multinomial")
    shape = tuple(p.shape) if shape is None else K.canonical_shape(shape, "multinomial")
    n = bshape(n, shape[:-1])
    p = bshape(p, shape)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), None, np.dtype(remainder.dtype))
        return ew.sub(remainder, count), count

    p = jnp.moveaxis(p, -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), axis=0), 0)
    ratios = jnp.true_divide(p, jnp.where(jnp.equal(remaining, 0), _f(dt, 1), remaining))
    keys = K.tf.threefry_split(data, (ratios.shape[0],))
    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return cast(jnp.moveaxis(counts, 0, -1), dtype)


# --------------------------------------------------------------------------- transforms

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
    u = S._uniform(data, shape, dtype, _f(dtype, 0.0), _f(dtype, 1.0))
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
    u = S._uniform(data, shape, dtype, _f(dtype, 0.0), _f(dtype, 1.0))
    scale = bshape(cast(scale, dtype), shape)
    return ew.mul(scale, ew.sqrt(ew.mul(ew.log(u), _f(dtype, -2))))


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
    z = S._uniform(k2, shape, dtype, _f(dtype, 0.0), _f(dtype, 1.0))
    y = ew.integer_pow(v, y=2)
    y_sq = ew.integer_pow(y, y=2)
    mean_sq = ew.integer_pow(mean, y=2)
    sqrt_term = ew.sqrt(ew.add(ew.mul(ew.mul(_f(dtype, 4), mean), y), ew.mul(mean_sq, y_sq)))
    x = ew.sub(ew.add(mean, ew.div(ew.mul(mean_sq, y), _f(dtype, 2))),
               ew.mul(ew.div(mean, _f(dtype, 2)), sqrt_term))
    return ew.select_n(ew.le(z, ew.div(mean, ew.add(mean, x))), ew.div(mean_sq, x), x)


@quiet
def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) samples (trials to the first success, >= 1), as JAX's
    ``jax.random.geometric``.

    >>> import zerax.random as zr
    >>> bool((zr.geometric(zr.PRNGKey(0), 0.3, (5,)) >= 1).all())
    True
    """
    data, _ = K.check_key("geometric", key)
    dtype = dtypes.default_int() if dtype is None else dtypes.requested(dtype, "geometric")
    if dtype.kind not in "iu":
        raise errors.ZeraxValueError(
            f"dtype argument to `geometric` must be an int dtype, got {dtype.name}.")
    p = param(p, "geometric", "p")
    shape = _bshapes("geometric", shape, p=p)
    p = inexact_param(p)
    pdt = np.dtype(p.dtype)
    u = S._uniform(data, shape, pdt, _f(pdt, 0.0), _f(pdt, 1.0))
    u = jnp.where(ew.eq(u, _f(pdt, 0)), _f(pdt, 1), u)
    log_1mp = bshape(lax.log1p(ew.neg(p)), shape)
    g = ew.add(ew.floor(ew.div(ew.log(u), log_1mp)), _f(pdt, 1))
    return cast(g, dtype)


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
    u = S._uniform(data, shape, dtype, _f(dtype, 0.0), _f(dtype, 1.0))
    out1 = ew.add(left, ew.sqrt(ew.mul(ew.mul(u, ew.sub(right, left)), ew.sub(mode_, left))))
    out2 = ew.sub(right, ew.sqrt(ew.mul(ew.mul(ew.sub(_f(dtype, 1), u), ew.sub(right, left)),
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
