"""Second-order optimisers with stochastic Hessian-diagonal estimates (Hutchinson:
``diag(H) ~ z * (H z)`` for Rademacher probes ``z``), the Hessian-vector products taken
as ``jvp(grad(value_fn))``:

- ``adahessian`` (Yao et al., 2021): Adam whose second moment tracks the squared Hessian
  diagonal estimate;
- ``sophia`` (Liu et al., 2023, SophiaH): momentum divided by a moving Hessian-diagonal
  estimate refreshed every ``update_hessian_every`` steps, clipped elementwise to [-1, 1].

The probes come from a ``seed`` given at construction (as optax's ``noisy_sgd``): the key
lives in the state, so steps are pure, jit and vmap.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import zerax
import zerax.numpy as znp
import zerax.random as zrandom
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import (GradientTransformationExtraArgs, check_same_tree, check_state, safe_increment)
from ._second_order import _check_extra, _kwargs_for


def _hutchinson(value_fn, params, key):
    """``z * (H z)`` for one Rademacher probe ``z`` per leaf (an unbiased estimate of
    the Hessian diagonal)."""
    leaves, treedef = tree_util.tree_flatten(params)
    keys = zrandom.split(key, len(leaves))
    z = tree_util.tree_unflatten(treedef, [
        zrandom.rademacher(k, znp.shape(p), znp.asarray(p).dtype) for k, p in zip(keys, leaves)])
    hz = zerax.jvp(zerax.grad(value_fn), (params,), (z,))[1]
    return otu.tree_mul(z, hz)


def _key_of(seed):
    return zrandom.PRNGKey(seed) if isinstance(seed, int) else seed


class AdaHessianState(NamedTuple):
    """AdaHessian's step count, first moment, second moment of the Hessian diagonal
    estimate, and the random key of the probes."""
    count: Any
    mu: Any
    nu: Any
    rng_key: Any


def adahessian(learning_rate: Any = 0.15, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-4,
               weight_decay: Any = 0.0, hessian_power: Any = 1.0, seed: Any = 0
               ) -> GradientTransformationExtraArgs:
    """AdaHessian: ``p -= lr * (m_hat / (v_hat**(k/2) + eps) + weight_decay * p)`` with
    ``m`` the moving gradient, ``v`` the moving squared Hutchinson estimate ``(z * Hz)**2``
    and ``k = hessian_power``.  ``update(grads, state, params, value_fn=loss)``.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum(znp.asarray([1.0, 10.0]) * x ** 2)
    >>> opt = optim.adahessian(0.5)
    >>> x = znp.asarray([1.0, 1.0]); s = opt.init(x)
    >>> for _ in range(100):
    ...     u, s = opt.update(zx.grad(f)(x), s, x, value_fn=f); x = optim.apply_updates(x, u)
    >>> bool(f(x) < 1e-3)
    True
    """
    def init_fn(params):
        return AdaHessianState(count=znp.zeros([], znp.int32), mu=otu.tree_zeros_like(params),
                               nu=otu.tree_zeros_like(params), rng_key=_key_of(seed))

    def update_fn(updates, state, params, *, value_fn=None, **extra):
        check_state(state, AdaHessianState, "adahessian")
        if value_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "adahessian.update needs the params and the loss: update(grads, state, "
                "params, value_fn=loss).")
        check_same_tree("adahessian", updates, "updates", state.mu, "optimizer state")
        _check_extra("adahessian", extra, value_fn)
        kw = _kwargs_for(value_fn, extra)
        key, sub = zrandom.split(state.rng_key)
        d = _hutchinson(lambda p: value_fn(p, **kw), params, sub)
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_moment(d, state.nu, b2, 2)
        count = safe_increment(state.count)
        mu_hat = otu.tree_bias_correction(mu, b1, count)
        nu_hat = otu.tree_bias_correction(nu, b2, count)
        step = tree_util.tree_map(
            lambda m, v, p: -learning_rate * (m / (v ** (hessian_power / 2) + eps)
                                              + weight_decay * p),
            mu_hat, nu_hat, params)
        return step, AdaHessianState(count=count, mu=mu, nu=nu, rng_key=key)
    return GradientTransformationExtraArgs(init_fn, update_fn)


class SophiaState(NamedTuple):
    """Sophia's step count, momentum, Hessian-diagonal estimate and probe key."""
    count: Any
    mu: Any
    hessian: Any
    rng_key: Any


def sophia(learning_rate: Any = 1e-3, b1: Any = 0.965, b2: Any = 0.99, gamma: Any = 0.01,
           eps: Any = 1e-12, weight_decay: Any = 0.0, update_hessian_every: int = 10,
           seed: Any = 0) -> GradientTransformationExtraArgs:
    """Sophia (SophiaH): ``p -= lr * (clip(m / max(gamma * h, eps), -1, 1) +
    weight_decay * p)``, ``m`` the moving gradient (``b1``) and ``h`` the moving Hutchinson
    estimate of the Hessian diagonal (``b2``), refreshed every ``update_hessian_every``
    steps (the first step included).  ``update(grads, state, params, value_fn=loss)``.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum(znp.asarray([1.0, 10.0]) * x ** 2)
    >>> opt = optim.sophia(0.5, b1=0.5, gamma=1.0, update_hessian_every=2)
    >>> x = znp.asarray([1.0, 1.0]); s = opt.init(x)
    >>> for _ in range(100):
    ...     u, s = opt.update(zx.grad(f)(x), s, x, value_fn=f); x = optim.apply_updates(x, u)
    >>> bool(f(x) < 1e-3)
    True
    """
    if update_hessian_every < 1:
        raise errors.ZeraxValueError("update_hessian_every must be >= 1")

    def init_fn(params):
        return SophiaState(count=znp.zeros([], znp.int32), mu=otu.tree_zeros_like(params),
                           hessian=otu.tree_zeros_like(params), rng_key=_key_of(seed))

    def update_fn(updates, state, params, *, value_fn=None, **extra):
        check_state(state, SophiaState, "sophia")
        if value_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "sophia.update needs the params and the loss: update(grads, state, params, "
                "value_fn=loss).")
        check_same_tree("sophia", updates, "updates", state.mu, "optimizer state")
        _check_extra("sophia", extra, value_fn)
        kw = _kwargs_for(value_fn, extra)
        key, sub = zrandom.split(state.rng_key)
        refresh = state.count % update_hessian_every == 0

        def new_h(_):
            d = _hutchinson(lambda p: value_fn(p, **kw), params, sub)
            return otu.tree_update_moment(d, state.hessian, b2, 1)
        hessian = lax.cond(refresh, new_h, lambda _: state.hessian, None)
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        step = tree_util.tree_map(
            lambda m, h, p: -learning_rate * (znp.clip(m / znp.maximum(gamma * h, eps), -1, 1)
                                              + weight_decay * p),
            mu, hessian, params)
        return step, SophiaState(count=safe_increment(state.count), mu=mu, hessian=hessian,
                                 rng_key=key)
    return GradientTransformationExtraArgs(init_fn, update_fn)
