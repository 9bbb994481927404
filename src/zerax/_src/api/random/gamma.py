"""Gamma-family samplers with JAX's algorithms and implicit reparameterisation gradients.

`gamma` and `loggamma` draw each element with Marsaglia and Tsang's rejection method
from its own key (``split(key, a.size)``), exactly as JAX's ``random_gamma_p``; their
derivative with respect to ``a`` is JAX's ``random_gamma_grad`` (the derivative of the
sample along the Gamma CDF held fixed: the incomplete-gamma series or continued
fraction with derivative tracking, transcribed from ``jax._src.lax.special``).  beta,
dirichlet, chisquare, f, t, generalized_normal and ball are compositions, as in JAX, so
they inherit those gradients.
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from ...lax import lax
from ... import numpy as jnp
from ...interpreters.batching import vmap
from ...lax.control_flow import while_loop
from ..custom import custom_jvp
from ...ops import elementwise as ew
from ...ops.misc import stop_gradient
from . import keys as K
from . import samplers as S
from ._util import bshape, cast, check_shape, const, float_dtype, param, quiet


def _c(x, v):
    return const(x, v)


# --------------------------------------------------------------------------- one sample

def _gamma_one(data, alpha, log_space):
    """One Gamma(alpha) sample (0-d alpha) from the raw key ``data`` (JAX's _gamma_one)."""
    dtype = np.dtype(alpha.dtype)
    zero, one, minus_one = _c(alpha, 0), _c(alpha, 1), _c(alpha, -1)
    one_over_two, one_over_three = _c(alpha, 0.5), _c(alpha, 1.0 / 3.0)
    squeeze_const = _c(alpha, 0.0331)
    boost_mask = ew.ge(alpha, one)
    alpha_orig = alpha
    alpha = ew.select_n(boost_mask, ew.add(alpha, one), alpha)
    d = ew.sub(alpha, one_over_three)
    c = ew.div(one_over_three, ew.sqrt(d))

    def cond_fn(kxvu):
        _, x, v, u = kxvu
        return ew.bitwise_and(
            ew.ge(u, ew.sub(one, ew.mul(squeeze_const, ew.mul(x, x)))),
            ew.ge(ew.log(u), ew.add(ew.mul(x, one_over_two),
                                    ew.mul(d, ew.add(ew.sub(one, v), ew.log(v))))))

    def body_fn(kxvu):
        def next_kxv(kxv):
            k = kxv[0]
            k, sub = S._split2(k)
            x = S._normal_real(sub, (), dtype)
            v = ew.add(one, ew.mul(x, c))
            return k, x, v

        k = kxvu[0]
        ks = K.tf.threefry_split(k, (3,))
        k, x_key, u_key = ks[0], ks[1], ks[2]
        _, x, v = while_loop(lambda kxv: ew.le(kxv[2], zero), next_kxv,
                             (x_key, zero, minus_one))
        big_x = ew.mul(x, x)
        big_v = ew.mul(ew.mul(v, v), v)
        u = S._uniform(u_key, (), dtype, np.array(0.0, dtype), np.array(1.0, dtype))
        return k, big_x, big_v, u

    k, sub = S._split2(data)
    _, _, v, _ = while_loop(cond_fn, body_fn, (k, zero, one, _c(alpha, 2)))
    if log_space:
        e = S._uniform(sub, (), dtype, np.array(0.0, dtype), np.array(1.0, dtype))
        log_samples = ew.neg(ew.neg(lax.log1p(ew.neg(e))))
        log_boost = ew.select_n(
            ew.bitwise_or(boost_mask, ew.eq(log_samples, zero)),
            ew.mul(log_samples, ew.div(one, alpha_orig)), zero)
        return ew.add(ew.add(ew.log(d), ew.log(v)), log_boost)
    samples = ew.sub(one, S._uniform(sub, (), dtype, np.array(0.0, dtype),
                                     np.array(1.0, dtype)))
    boost = ew.select_n(boost_mask, ew.pow(samples, ew.div(one, alpha_orig)), one)
    return ew.mul(ew.mul(d, v), boost)


def _gamma_impl(data, a, log_space):
    shape = tuple(a.shape)
    n = math.prod(shape)
    if n == 0:
        return jnp.zeros(shape, a.dtype)
    keys = K.tf.threefry_split(data, (n,))
    alphas = jnp.reshape(a, (n,))
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, alphas)
    return jnp.reshape(samples, shape)


# --------------------------------------------------------------------------- the gradient

def _any(pred):
    return jnp.any(pred)


def _igamma_series(ax, x, a, enabled, dtype):
    """JAX's ``_igamma_series`` in SAMPLE_DERIVATIVE mode (vectorised: each element
    stops updating once its own term is small, as the scalar loop would)."""
    eps = np.finfo(dtype).eps

    def body_fn(vals):
        en, r, c, ans, xx, dc_da, dans_da = vals
        r_n = ew.add(r, _c(r, 1.0))
        dc_da_n = ew.sub(ew.mul(dc_da, ew.div(xx, r_n)), ew.div(ew.mul(c, xx), ew.mul(r_n, r_n)))
        dans_da_n = ew.add(dans_da, dc_da_n)
        c_n = ew.mul(c, ew.div(xx, r_n))
        ans_n = ew.add(ans, c_n)
        cond = ew.bitwise_and(en, ew.gt(lax.abs(ew.div(dc_da_n, dans_da_n)), _c(r, eps)))
        sel = lambda new, old: ew.select_n(en, old, new)   # noqa: E731
        return (cond, sel(r_n, r), sel(c_n, c), sel(ans_n, ans), xx, sel(dc_da_n, dc_da),
                sel(dans_da_n, dans_da))

    ones, zeros = jnp.ones_like(a), jnp.zeros_like(a)
    vals = while_loop(lambda v: _any(v[0]), body_fn, (enabled, a, ones, ones, x, zeros, zeros))
    ans, dans_da = vals[3], vals[6]
    dlogax_da = ew.sub(ew.log(x), ew.digamma(ew.add(a, _c(a, 1))))
    return ew.div(ew.mul(ew.neg(ew.add(dans_da, ew.mul(ans, dlogax_da))), x), a)


def _igammac_continued_fraction(ax, x, a, enabled, dtype):
    """JAX's ``_igammac_continued_fraction`` in SAMPLE_DERIVATIVE mode."""
    eps = np.finfo(dtype).eps

    def cond_fn(vals):
        return ew.bitwise_and(ew.lt(vals[5], _c(vals[5], 2000)), _any(vals[0]))

    def body_fn(vals):
        (en, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = ew.add(c, _c(c, 1))
        y_n = ew.add(y, _c(y, 1))
        z_n = ew.add(z, _c(z, 2))
        yc = ew.mul(y_n, c)
        pk = ew.sub(ew.mul(pkm1, z_n), ew.mul(pkm2, yc))
        qk = ew.sub(ew.mul(qkm1, z_n), ew.mul(qkm2, yc))
        nz = ew.ne(qk, _c(qk, 0))
        r = ew.div(pk, qk)
        t_n = ew.select_n(nz, jnp.ones_like(r), lax.abs(ew.div(ew.sub(ans, r), r)))
        ans_n = ew.select_n(nz, ans, r)
        dpk_da = ew.add(ew.sub(ew.sub(ew.mul(dpkm1_da, z_n), pkm1), ew.mul(dpkm2_da, yc)),
                        ew.mul(pkm2, c))
        dqk_da = ew.add(ew.sub(ew.sub(ew.mul(dqkm1_da, z_n), qkm1), ew.mul(dqkm2_da, yc)),
                        ew.mul(qkm2, c))
        dans_da_new = ew.select_n(nz, dans_da, ew.div(ew.sub(dpk_da, ew.mul(ans_n, dqk_da)), qk))
        grad_cond = ew.select_n(nz, jnp.ones_like(dans_da), lax.abs(ew.sub(dans_da_new, dans_da)))
        n_pkm2, n_pkm1, n_qkm2, n_qkm1 = pkm1, pk, qkm1, qk
        n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = ew.gt(lax.abs(pk), _c(pk, 1.0 / eps))
        e = _c(pk, eps)

        def rs(v):
            return ew.select_n(rescale, v, ew.mul(v, e))

        n_pkm2, n_pkm1, n_qkm2, n_qkm1 = rs(n_pkm2), rs(n_pkm1), rs(n_qkm2), rs(n_qkm1)
        n_dpkm2, n_dqkm2, n_dpkm1, n_dqkm1 = rs(n_dpkm2), rs(n_dqkm2), rs(n_dpkm1), rs(n_dqkm1)
        cond = ew.bitwise_and(en, ew.gt(grad_cond, _c(grad_cond, eps)))
        sel = lambda new, old: ew.select_n(en, old, new)   # noqa: E731
        return (cond, sel(ans_n, ans), sel(t_n, t), sel(y_n, y), sel(z_n, z), c,
                sel(n_pkm1, pkm1), sel(n_qkm1, qkm1), sel(n_pkm2, pkm2), sel(n_qkm2, qkm2),
                sel(n_dpkm2, dpkm2_da), sel(n_dqkm2, dqkm2_da), sel(n_dpkm1, dpkm1_da),
                sel(n_dqkm1, dqkm1_da), sel(dans_da_new, dans_da))

    y = ew.sub(_c(a, 1), a)
    z = ew.add(ew.add(x, y), _c(x, 1))
    c = _c(x, 0)
    pkm2 = jnp.ones_like(x)
    qkm2 = x
    pkm1 = ew.add(x, _c(x, 1))
    qkm1 = ew.mul(z, x)
    ans = ew.div(pkm1, qkm1)
    t = jnp.ones_like(x)
    zeros = jnp.zeros_like(x)
    dqkm1_da = ew.neg(x)
    dans_da = ew.div(ew.sub(zeros, ew.mul(ans, dqkm1_da)), qkm1)
    vals = while_loop(cond_fn, body_fn,
                      (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
                       zeros, zeros, zeros, dqkm1_da, dans_da))
    ans, dans_da = vals[1], vals[14]
    dlogax_da = ew.sub(ew.log(x), ew.digamma(a))
    return ew.neg(ew.mul(ew.add(dans_da, ew.mul(ans, dlogax_da)), x))


@quiet
def random_gamma_grad(a, x):
    """d(sample)/d(a) of a Gamma(a, 1) sample ``x`` (JAX's ``lax.random_gamma_grad``):
    the implicit reparameterisation derivative ``-(dF/da) / f`` of the Gamma CDF F.

    >>> import numpy as np
    >>> round(float(random_gamma_grad(np.float64(2.0), np.float64(1.5))), 10)
    0.9366390679
    """
    a = param(a, "random_gamma_grad", "a")
    x = param(x, "random_gamma_grad", "x")
    dtype = np.dtype(a.dtype)
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(x.shape)))
    a, x = bshape(a, shape), bshape(cast(x, dtype), shape)
    is_nan = ew.bitwise_or(ew.ne(a, a), ew.ne(x, x))
    x_is_zero = ew.eq(x, _c(x, 0))
    domain_error = ew.bitwise_or(ew.lt(x, _c(x, 0)), ew.le(a, _c(a, 0)))
    use_igammac = ew.bitwise_and(ew.gt(x, _c(x, 1)), ew.gt(x, a))
    ax = ew.sub(ew.sub(ew.mul(a, ew.log(x)), x), lax.lgamma(a))
    underflow = ew.lt(ax, _c(ax, -np.log(np.finfo(dtype).max)))
    ax = ew.exp(ax)
    enabled = ew.bitwise_not(ew.bitwise_or(ew.bitwise_or(ew.bitwise_or(
        x_is_zero, domain_error), underflow), is_nan))
    cf = ew.neg(_igammac_continued_fraction(
        ax, x, a, ew.bitwise_and(enabled, use_igammac), dtype))
    series = _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igammac)),
                            dtype)
    out = ew.select_n(use_igammac, series, cf)
    out = ew.select_n(x_is_zero, out, jnp.zeros_like(out))
    return ew.select_n(ew.bitwise_or(domain_error, is_nan), out, jnp.full_like(a, np.nan))


def _gamma_grad(sample, a, log_space):
    if log_space:
        samples = ew.exp(sample)
        samples = jnp.where(ew.eq(samples, _c(samples, 0)),
                            _c(samples, np.finfo(np.dtype(samples.dtype)).tiny), samples)
        return ew.div(random_gamma_grad(a, samples), samples)
    return random_gamma_grad(a, sample)


def _make_gamma(log_space):
    @custom_jvp
    def sample(data, a):
        return _gamma_impl(data, a, log_space)

    @sample.defjvp
    def sample_jvp(primals, tangents):
        data, a = primals
        _, a_dot = tangents
        ans = sample(data, a)
        return ans, ew.mul(a_dot, _gamma_grad(ans, a, log_space))

    return sample


_GAMMA = {False: _make_gamma(False), True: _make_gamma(True)}


def _gamma(data, a, shape, dtype, log_space, name):
    if shape is None:
        shape = tuple(a.shape)
    else:
        check_shape(name, shape, a=a)
    a = cast(a, dtype)
    if tuple(a.shape) != tuple(shape):
        a = bshape(a, shape)
    return _GAMMA[log_space](data, a)


def _shape_arg(shape, name):
    return None if shape is None else K.canonical_shape(shape, name)


@quiet
def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples, as JAX's ``jax.random.gamma``; differentiable in ``a``
    (implicit reparameterisation, as JAX's ``random_gamma_grad``).

    >>> import zerax.random as zr
    >>> bool((zr.gamma(zr.PRNGKey(0), 2.5, (4,)) > 0).all())
    True
    """
    data, _ = K.check_key("gamma", key)
    dtype = float_dtype(dtype, "gamma")
    return _gamma(data, param(a, "gamma", "a"), _shape_arg(shape, "gamma"), dtype, False,
                  "gamma")


@quiet
def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, accurate for small ``a``, as JAX's
    ``jax.random.loggamma``.

    >>> import zerax.random as zr
    >>> zr.loggamma(zr.PRNGKey(0), 0.1, (3,)).shape
    (3,)
    """
    data, _ = K.check_key("loggamma", key)
    dtype = float_dtype(dtype, "loggamma")
    return _gamma(data, param(a, "loggamma", "a"), _shape_arg(shape, "loggamma"), dtype, True,
                  "loggamma")


def _bshapes(name, shape, **params):
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*(tuple(p.shape) for p in params.values())))
        except ValueError:
            raise errors.ShapeError(
                f"{name}: parameter shapes "
                f"{', '.join(f'{k}{tuple(p.shape)}' for k, p in params.items())} do not "
                "broadcast together.") from None
    shape = K.canonical_shape(shape, name)
    check_shape(name, shape, **params)
    return shape


@quiet
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples, as JAX's ``jax.random.beta`` (two log-gamma draws).

    >>> import zerax.random as zr
    >>> x = zr.beta(zr.PRNGKey(0), 2.0, 3.0, (4,))
    >>> bool(((x > 0) & (x < 1)).all())
    True
    """
    data, _ = K.check_key("beta", key)
    dtype = float_dtype(dtype, "beta")
    a, b = param(a, "beta", "a"), param(b, "beta", "b")
    shape = _bshapes("beta", shape, a=a, b=b)
    a, b = cast(a, dtype), cast(b, dtype)
    key_a, key_b = S._split2(data)
    a, b = bshape(a, shape), bshape(b, shape)
    log_gamma_a = _gamma(key_a, a, shape, dtype, True, "beta")
    log_gamma_b = _gamma(key_b, b, shape, dtype, True, "beta")
    log_max = jnp.maximum(log_gamma_a, log_gamma_b)
    ga = jnp.exp(jnp.subtract(log_gamma_a, log_max))
    gb = jnp.exp(jnp.subtract(log_gamma_b, log_max))
    return jnp.true_divide(ga, jnp.add(ga, gb))


@quiet
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples along the last axis, as JAX's ``jax.random.dirichlet``.

    >>> import numpy as np, zerax.random as zr
    >>> x = zr.dirichlet(zr.PRNGKey(0), np.array([1.0, 2.0, 3.0]), (2,))
    >>> x.shape, np.allclose(np.asarray(x).sum(-1), 1.0)
    ((2, 3), True)
    """
    data, _ = K.check_key("dirichlet", key)
    dtype = float_dtype(dtype, "dirichlet")
    alpha = param(alpha, "dirichlet", "alpha")
    if len(alpha.shape) < 1:
        raise errors.ShapeError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha.shape)}.")
    batch = tuple(alpha.shape[:-1])
    if shape is None:
        shape = batch
    else:
        shape = K.canonical_shape(shape, "dirichlet")
        check_shape("dirichlet", shape, **{"alpha[..., 0]": np.empty(batch)})
    alpha = cast(alpha, dtype)
    log_g = _gamma(data, alpha, shape + tuple(alpha.shape[-1:]), dtype, True, "dirichlet")
    m = jnp.max(log_g, axis=-1, keepdims=True)
    e = jnp.exp(jnp.subtract(log_g, stop_gradient(m)))   # softmax, as JAX computes it
    return jnp.true_divide(e, jnp.sum(e, axis=-1, keepdims=True))


@quiet
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) samples, as JAX's ``jax.random.chisquare``.

    >>> import zerax.random as zr
    >>> zr.chisquare(zr.PRNGKey(0), 3.0, (2,)).shape
    (2,)
    """
    data, _ = K.check_key("chisquare", key)
    dtype = float_dtype(dtype, "chisquare")
    df = param(df, "chisquare", "df")
    shape = _bshapes("chisquare", shape, df=df)
    return _chisquare(data, df, shape, dtype)


def _chisquare(data, df, shape, dtype):
    df = cast(df, dtype)
    two = np.array(2, dtype)
    log_g = _gamma(data, jnp.true_divide(df, two), shape, dtype, True, "chisquare")
    return jnp.multiply(jnp.exp(log_g), two)


@quiet
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples, as JAX's ``jax.random.f``.

    >>> import zerax.random as zr
    >>> zr.f(zr.PRNGKey(0), 2.0, 5.0, (3,)).shape
    (3,)
    """
    data, _ = K.check_key("f", key)
    dtype = float_dtype(dtype, "f")
    dfnum, dfden = param(dfnum, "f", "dfnum"), param(dfden, "f", "dfden")
    shape = _bshapes("f", shape, dfnum=dfnum, dfden=dfden)
    dfden, dfnum = cast(dfden, dtype), cast(dfnum, dtype)
    key_dfd, key_dfn = S._split2(data)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dtype)
    return jnp.true_divide(jnp.true_divide(chi2_dfn, dfnum), jnp.true_divide(chi2_dfd, dfden))


@quiet
def t(key, df, shape=None, dtype=None):
    """Student's t(df) samples, as JAX's ``jax.random.t``.

    >>> import zerax.random as zr
    >>> zr.t(zr.PRNGKey(0), 4.0, (3,)).shape
    (3,)
    """
    data, _ = K.check_key("t", key)
    dtype = float_dtype(dtype, "t")
    df = param(df, "t", "df")
    shape = _bshapes("t", shape, df=df)
    df = cast(df, dtype)
    key_n, key_g = S._split2(data)
    n = S._normal(key_n, shape, dtype)
    half_df = jnp.true_divide(df, np.array(2, dtype))
    g = _gamma(key_g, half_df, shape, dtype, False, "t")
    return jnp.multiply(n, jnp.sqrt(jnp.true_divide(half_df, g)))


@quiet
def generalized_normal(key, p, shape=(), dtype=None):
    """Generalised normal samples with shape parameter ``p``, as JAX's
    ``jax.random.generalized_normal``.

    >>> import zerax.random as zr
    >>> zr.generalized_normal(zr.PRNGKey(0), 3.0, (2,)).shape
    (2,)
    """
    data, _ = K.check_key("generalized_normal", key)
    dtype = float_dtype(dtype, "generalized_normal")
    shape = K.canonical_shape(shape, "generalized_normal")
    return _generalized_normal(data, param(p, "generalized_normal", "p"), shape, dtype)


def _generalized_normal(data, p, shape, dtype):
    keys = K.tf.threefry_split(data, (2,))
    inv_p = jnp.true_divide(1, p)
    g = _gamma(keys[0], param(inv_p, "generalized_normal", "1/p"), shape, dtype, False,
               "generalized_normal")
    r = S.rademacher(keys[1], shape, dtype)
    return jnp.multiply(r, jnp.power(g, cast(inv_p, dtype)))


@quiet
def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniformly distributed in the ``d``-dimensional unit ``p``-norm ball, as
    JAX's ``jax.random.ball``.

    >>> import numpy as np, zerax.random as zr
    >>> x = np.asarray(zr.ball(zr.PRNGKey(0), 3, shape=(5,)))
    >>> x.shape, bool((np.linalg.norm(x, axis=-1) <= 1).all())
    ((5, 3), True)
    """
    data, _ = K.check_key("ball", key)
    dtype = float_dtype(dtype, "ball")
    shape = K.canonical_shape(shape, "ball")
    d = S._concrete_int(d, "ball")
    p = param(p, "ball", "p")
    k1, k2 = S._split2(data)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = S.exponential(k2, shape, dtype)
    inv_p = cast(jnp.true_divide(1, p), dtype)
    pp = cast(p, dtype)
    radius = jnp.power(jnp.add(jnp.sum(jnp.power(jnp.abs(g), pp), axis=-1), e), inv_p)
    return jnp.true_divide(g, radius[..., None])
