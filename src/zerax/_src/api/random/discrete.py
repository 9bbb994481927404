"""Samplers of counts, JAX 0.10's algorithms step for step: poisson (Knuth below lam = 10,
transformed rejection above), binomial (inversion / BTRS), multinomial and geometric.
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ...base import dtypes
from ...lax import lax
from ... import numpy as jnp
from ...lax.control_flow import scan, while_loop
from ...ops import elementwise as ew
from . import keys as K
from . import samplers as S
from ._util import (bshape, cast, check_shape, float_dtype, inexact_param, int_dtype, param,
                    quiet, scalar_of)
from .gamma import _bshapes
from ...base.dtypes import kind as dtype_kind


def _counter():
    """A rejection loop's iteration counter: 0 in the mode's default int (JAX's Python 0)."""
    return np.array(0, dtypes.default_int())


def _next(i):
    return ew.add(i, np.array(1, i.dtype))


def _below(i, n):
    return ew.lt(i, np.array(min(n, np.iinfo(i.dtype).max), i.dtype))


def _poisson_knuth(data, lam, shape, dtype, max_iters):
    f32 = np.dtype(np.float32)

    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, sub = S._split2(rng)
        k = jnp.where(ew.gt(log_prod, ew.neg(lam)), ew.add(k, scalar_of(dtype, 1)), k)
        u = S._uniform(sub, shape, f32, scalar_of(f32, 0.0), scalar_of(f32, 1.0))
        return _next(i), k, rng, ew.add(log_prod, ew.log(u))

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return ew.bitwise_and(jnp.any(ew.gt(log_prod, ew.neg(lam))),
                              _below(i, max_iters))

    k0 = jnp.zeros(shape, dtype)
    lp0 = jnp.zeros(shape, f32)
    k = while_loop(cond_fn, body_fn, (_counter(), k0, data, lp0))[1]
    return cast(ew.sub(k, scalar_of(dtype, 1)), dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    ldt = np.dtype(lam.dtype)
    c = lambda v: scalar_of(ldt, v)   # noqa: E731  (JAX's weak Python constants, in lam's dtype)
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
    use_knuth = ew.bitwise_or(ew.ne(lam, lam), ew.lt(lam, scalar_of(f32, 10)))
    lam_knuth = ew.select_n(use_knuth, jnp.zeros_like(lam), lam)
    lam_rej = ew.select_n(use_knuth, lam, jnp.full_like(lam, 1e5))
    max_iters = np.iinfo(dtype).max
    result = ew.select_n(use_knuth,
                         _poisson_rejection(data, lam_rej, shape, dtype, max_iters),
                         _poisson_knuth(data, lam_knuth, shape, dtype, max_iters))
    return ew.select_n(ew.eq(lam, scalar_of(f32, 0)), result, jnp.zeros_like(result))


_STIRLING_TAIL = np.array([
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287])


def _stirling_approx_tail(k):
    dt = np.dtype(k.dtype)
    vals = jnp.asarray(_STIRLING_TAIL.astype(dt))
    use_tail = ew.le(k, scalar_of(dt, 9))
    k = ew.clamp(scalar_of(dt, 0.0), k, scalar_of(dt, 9.0))
    kp1 = ew.add(k, scalar_of(dt, 1))
    kp1sq = ew.mul(kp1, kp1)
    inner = ew.sub(scalar_of(dt, 1.0 / 360), ew.div(scalar_of(dt, 1.0 / 1260), kp1sq))
    approx = ew.div(ew.sub(scalar_of(dt, 1.0 / 12), ew.div(inner, kp1sq)), kp1)
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
                                   ew.add(num_geom, scalar_of(pdt, 1)))
        u = S._uniform(sub, shape, pdt, scalar_of(pdt, 0.0), scalar_of(pdt, 1.0))
        geom = ew.ceil(ew.div(ew.log(u), log1mp))
        return _next(i), num_geom_out, ew.add(geom_sum, geom), rng

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return ew.bitwise_and(jnp.any(ew.le(geom_sum, count)), _below(i, max_iters))

    zeros = jnp.zeros(shape, pdt)
    k = while_loop(cond_fn, body_fn, (_counter(), zeros, zeros, data))[1]
    return cast(ew.sub(k, scalar_of(pdt, 1)), dtype)


def _btrs(data, count, prob, shape, dtype, max_iters):
    pdt = np.dtype(prob.dtype)
    c_ = lambda v: scalar_of(pdt, v)   # noqa: E731
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
    half = scalar_of(pdt, 0.5)
    p_lt_half = ew.lt(prob, half)
    q = ew.select_n(p_lt_half, ew.sub(scalar_of(pdt, 1.0), prob), prob)
    count_nan_or_neg = ew.bitwise_or(ew.ne(count, count), ew.lt(count, scalar_of(pdt, 0.0)))
    count_inf = jnp.isinf(count)
    q_is_nan = ew.ne(q, q)
    q_l_0 = ew.lt(q, scalar_of(pdt, 0.0))
    q = ew.select_n(ew.bitwise_or(q_is_nan, q_l_0), q, jnp.full_like(q, 0.01))
    use_inversion = ew.bitwise_or(count_nan_or_neg, ew.le(ew.mul(count, q), scalar_of(pdt, 10.0)))
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
    dt = np.result_type(np.dtype(n.dtype) if dtype_kind(np.dtype(n.dtype)) == "f" else p.dtype,
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
    ratios = jnp.true_divide(p, jnp.where(jnp.equal(remaining, 0), scalar_of(dt, 1), remaining))
    keys = K.tf.threefry_split(data, (ratios.shape[0],))
    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return cast(jnp.moveaxis(counts, 0, -1), dtype)


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
    u = S._uniform(data, shape, pdt, scalar_of(pdt, 0.0), scalar_of(pdt, 1.0))
    u = jnp.where(ew.eq(u, scalar_of(pdt, 0)), scalar_of(pdt, 1), u)
    log_1mp = bshape(lax.log1p(ew.neg(p)), shape)
    g = ew.add(ew.floor(ew.div(ew.log(u), log_1mp)), scalar_of(pdt, 1))
    return cast(g, dtype)
