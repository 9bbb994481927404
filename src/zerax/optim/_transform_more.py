"""More of optax's ``scale_by_*`` family: SM3, NovoGrad, the optimistic gradient,
Polyak's step size and Adafactor's factored second moments (``scale_by_factored_rms``);
the same arithmetic as optax 0.2.x, operation by operation.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Optional

import numpy as np

import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import (GradientTransformation, GradientTransformationExtraArgs, abs_sq, init_empty_state, params_for_updates, safe_increment)
from ._transform import (_canonical_dtype, _check, _need_params, _none, _reject_complex, _zero_count)


class ScaleBySM3State(NamedTuple):
    """SM3's per-axis accumulators (``mu``) and momentum (``nu``)."""
    mu: Any
    nu: Any


def _zeros_like_axis(x, axis):
    return znp.zeros((x.shape[axis],), dtype=x.dtype)


def scale_by_sm3(b1: Any = 0.9, b2: Any = 1.0, eps: Any = 1e-8) -> GradientTransformation:
    """SM3: memory-efficient AdaGrad with one accumulator per axis.

    >>> tx = scale_by_sm3()
    >>> round(float(tx.update(znp.asarray([2.0]), tx.init(znp.zeros(1)))[0][0]), 6)
    0.1
    """
    def init_fn(params):
        _reject_complex(params)
        mu = tree_util.tree_map(
            lambda p: [_zeros_like_axis(p, i) for i in range(p.ndim)], params)
        return ScaleBySM3State(mu, otu.tree_zeros_like(params))

    def expanded_shape(shape, axis):
        rank = len(shape)
        return [1] * axis + [shape[axis]] + [1] * (rank - axis - 1)

    def new_accum(g, v):
        coeffs = ((1.0 - b2) if b2 != 1.0 else 1.0, b2)
        if g.ndim < 2:
            return coeffs[0] * g ** 2 + coeffs[1] * v[0]
        return coeffs[0] * g ** 2 + coeffs[1] * functools.reduce(znp.minimum, v)

    def new_mu(g, i):
        if g.ndim < 2:
            return g
        return znp.max(g, axis=tuple(a for a in range(g.ndim) if a != i))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_sm3", state, ScaleBySM3State, updates, "nu")
        mu = tree_util.tree_map(
            lambda g, v: [znp.reshape(v[i], expanded_shape(g.shape, i)) for i in range(g.ndim)],
            updates, state.mu)
        accum = tree_util.tree_map(new_accum, updates, mu)
        inv = tree_util.tree_map(lambda t: znp.where(t > 0, lax.rsqrt(t + eps), 0.0), accum)
        up = tree_util.tree_map(lambda g, a: g * a, updates, inv)
        nu = otu.tree_update_moment(up, state.nu, b1, 1)
        mu = tree_util.tree_map(lambda g: [new_mu(g, i) for i in range(g.ndim)], accum)
        return nu, ScaleBySM3State(mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByNovogradState(NamedTuple):
    """NovoGrad's step count, momentum and per-layer second moments."""
    count: Any
    mu: Any
    nu: Any


def scale_by_novograd(b1: Any = 0.9, b2: Any = 0.25, eps: Any = 1e-8, eps_root: Any = 0.0,
                      weight_decay: Any = 0.0, mu_dtype: Optional[Any] = None
                      ) -> GradientTransformation:
    """NovoGrad: layer-wise normalised gradients with momentum.

    >>> tx = scale_by_novograd()
    >>> p = znp.asarray([3.0, 4.0])
    >>> tx.update(p, tx.init(p), p)[0].round(6).tolist()
    [0.6, 0.8]
    """
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByNovogradState(
            count=_zero_count(), mu=otu.tree_zeros_like(params, dtype=mu_dtype),
            nu=tree_util.tree_map(lambda p: znp.asarray(0.0, dtype=p.dtype), params))

    def nu_addition(g):
        return znp.linalg.norm(g) ** 2

    def mu_addition(g, p, nu):
        return g / (znp.sqrt(nu + eps_root) + eps) + weight_decay * p

    def init_nu(grads, nu):
        return tree_util.tree_map(lambda g, n: nu_addition(g).astype(n.dtype), grads, nu)

    def update_nu(grads, nu):
        return otu.tree_update_moment(tree_util.tree_map(nu_addition, grads), nu, b2, 1)

    def init_mu(grads, params, mu, nu):
        del mu
        return tree_util.tree_map(mu_addition, grads, params, nu)

    def update_mu(grads, params, mu, nu):
        ups = tree_util.tree_map(mu_addition, grads, params, nu)
        return tree_util.tree_map(lambda m, u: None if m is None else b1 * m + u,
                                  mu, ups, is_leaf=_none)

    def update_fn(updates, state, params):
        _need_params(params, "scale_by_novograd")
        params = params_for_updates("scale_by_novograd", updates, params)
        _check("scale_by_novograd", state, ScaleByNovogradState, updates, "mu")
        count_inc = safe_increment(state.count)
        nu = lax.cond(count_inc == 1, init_nu, update_nu, updates, state.nu)
        mu = lax.cond(count_inc == 1, init_mu, update_mu, updates, params, state.mu, nu)
        mu = otu.tree_cast(mu, mu_dtype)
        return mu, ScaleByNovogradState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByOptimisticGradientState(NamedTuple):
    """Whether this is the first step, and the previous gradient."""
    is_initial_step: Any
    previous_gradient: Any


def scale_by_optimistic_gradient(alpha: Any = 1.0, beta: Any = 1.0) -> GradientTransformation:
    """Optimistic gradient: ``(alpha + beta) g_t - beta g_{t-1}``.

    >>> tx = scale_by_optimistic_gradient()
    >>> s = tx.init(znp.asarray(0.0)); u, s = tx.update(znp.asarray(1.0), s)
    >>> float(tx.update(znp.asarray(3.0), s)[0])
    5.0
    """
    def init_fn(params):
        return ScaleByOptimisticGradientState(is_initial_step=znp.asarray(True),
                                              previous_gradient=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_optimistic_gradient", state, ScaleByOptimisticGradientState,
               updates, "previous_gradient")

        def f(grad, prev_grad):
            prev_grad = znp.where(state.is_initial_step, grad, prev_grad)
            return (alpha + beta) * grad - beta * prev_grad
        new_updates = tree_util.tree_map(f, updates, state.previous_gradient)
        return new_updates, ScaleByOptimisticGradientState(
            is_initial_step=znp.asarray(False), previous_gradient=updates)
    return GradientTransformation(init_fn, update_fn)


def scale_by_polyak(f_min: Any = 0.0, max_learning_rate: Any = 1.0, eps: Any = 0.0,
                    variant: str = "sps") -> GradientTransformationExtraArgs:
    """Polyak's step size ``min((f - f_min) / |g|^2, max_learning_rate)``; ``update``
    takes the loss as ``value=``.

    >>> tx = scale_by_polyak()
    >>> float(tx.update(znp.asarray(2.0), tx.init(0.0), value=1.0)[0])
    0.5
    """
    if variant not in ("sps", "sps+"):
        raise errors.ZeraxValueError(
            f"Invalid argument value for Polyak SGD: variant={variant!r}; use 'sps' or 'sps+'.")

    def update_fn(updates, state, params=None, *, value=None, **extra_args):
        del params, extra_args
        if value is None:
            raise errors.ZeraxTypeError(
                "scale_by_polyak.update needs the loss value: call update(grads, state, "
                "params, value=loss).")
        grad_sq_norm = otu.tree_norm(updates, squared=True)
        gap = znp.asarray(value - f_min).astype(grad_sq_norm.dtype)
        if variant == "sps+":
            gap = znp.maximum(gap, 0.0)
        step = znp.where(grad_sq_norm + eps <= znp.finfo(float).eps, znp.asarray(0.0),
                         znp.minimum(gap / (grad_sq_norm + eps), max_learning_rate))
        return otu.tree_scale(step, updates), state
    return GradientTransformationExtraArgs(init_empty_state, update_fn)


# ----------------------------------------------------------------------------- Adafactor

class FactoredState(NamedTuple):
    """Adafactor's step count and factored (row/column) or full second moments."""
    count: Any
    v_row: Any
    v_col: Any
    v: Any


def _decay_rate_pow(i, exponent=0.8):
    # optax computes the decay in float32 whatever the parameters' dtype: keep that.
    t = znp.asarray(i + 1).astype(znp.float32)
    return 1.0 - t ** znp.asarray(-exponent, znp.float32)


def _factored_dims(shape, factored, min_dim_size_to_factor):
    if not factored or len(shape) < 2:
        return None
    sorted_dims = np.argsort(shape)
    if shape[sorted_dims[-2]] < min_dim_size_to_factor:
        return None
    return int(sorted_dims[-2]), int(sorted_dims[-1])


def scale_by_factored_rms(factored: bool = True, decay_rate: Any = 0.8, step_offset: Any = 0,
                          min_dim_size_to_factor: int = 128, epsilon: Any = 1e-30,
                          decay_rate_fn: Any = _decay_rate_pow) -> GradientTransformation:
    """Adafactor's rescaling by factored (row x column) second-moment estimates.

    >>> tx = scale_by_factored_rms()
    >>> p = znp.ones(3)
    >>> tx.update(p, tx.init(p), p)[0].round(4).tolist()
    [1.0, 1.0, 1.0]
    """
    def zeros_no_axis(x, axis):
        shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
        return znp.zeros(shape, dtype=x.dtype)

    def init_fn(params):
        def init_one(p):
            dims = _factored_dims(p.shape, factored, min_dim_size_to_factor)
            one = znp.zeros((1,), dtype=p.dtype)
            if dims is not None:
                d1, d0 = dims
                return (zeros_no_axis(p, d0), zeros_no_axis(p, d1), one)
            return (one, one, znp.zeros_like(p))
        out = [init_one(p) for p in tree_util.tree_leaves(params)]
        treedef = tree_util.tree_structure(params)
        return FactoredState(
            count=_zero_count(),
            v_row=tree_util.tree_unflatten(treedef, [o[0] for o in out]),
            v_col=tree_util.tree_unflatten(treedef, [o[1] for o in out]),
            v=tree_util.tree_unflatten(treedef, [o[2] for o in out]))

    def update_fn(grads, state, params):
        _need_params(params, "scale_by_factored_rms")
        params = params_for_updates("scale_by_factored_rms", grads, params)
        _check("scale_by_factored_rms", state, FactoredState, grads, "v")
        step = state.count

        def update_one(grad, v_row, v_col, v, param):
            shape, dtype = param.shape, param.dtype
            decay_rate_t = decay_rate_fn(step - step_offset, decay_rate)
            new_v_row = znp.zeros((1,), dtype=dtype)
            new_v_col = znp.zeros((1,), dtype=dtype)
            new_v = znp.zeros((1,), dtype=dtype)
            dims = _factored_dims(shape, factored, min_dim_size_to_factor)
            grad_sqr = abs_sq(grad) + epsilon
            if dims is not None:
                d1, d0 = dims
                new_v_row = (decay_rate_t * v_row
                             + (1.0 - decay_rate_t) * znp.mean(grad_sqr, axis=d0)).astype(dtype)
                new_v_col = (decay_rate_t * v_col
                             + (1.0 - decay_rate_t) * znp.mean(grad_sqr, axis=d1)).astype(dtype)
                reduced_d1 = d1 - 1 if d1 > d0 else d1
                row_col_mean = znp.mean(new_v_row, axis=reduced_d1, keepdims=True)
                row_factor = (new_v_row / row_col_mean) ** (-0.5)
                col_factor = new_v_col ** (-0.5)
                upd = (grad * znp.expand_dims(row_factor, axis=d0)
                       * znp.expand_dims(col_factor, axis=d1))
            else:
                new_v = (decay_rate_t * v + (1.0 - decay_rate_t) * grad_sqr).astype(dtype)
                upd = grad * new_v ** (-0.5)
            return (upd, new_v_row, new_v_col, new_v)

        treedef = tree_util.tree_structure(grads)
        leaves = [tree_util.tree_leaves(t) for t in (grads, state.v_row, state.v_col, state.v,
                                                     params)]
        out = [update_one(*args) for args in zip(*leaves)]
        unf = functools.partial(tree_util.tree_unflatten, treedef)
        new_state = FactoredState(count=safe_increment(state.count),
                                  v_row=unf([o[1] for o in out]),
                                  v_col=unf([o[2] for o in out]), v=unf([o[3] for o in out]))
        return unf([o[0] for o in out]), new_state
    return GradientTransformation(init_fn, update_fn)
