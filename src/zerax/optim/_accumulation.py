"""Transformations that accumulate or add to the updates: momentum (``trace``), moving
averages (``ema``), weight decay (``add_decayed_weights``), annealed Gaussian noise
(``add_noise``), ``apply_every``, and the clipping transformations (``clip``,
``clip_by_global_norm``, ``clip_by_block_rms``, ``adaptive_grad_clip``).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import zerax.numpy as znp
import zerax.random as zrandom
from .. import errors, tree_util

from . import tree_utils as otu
from ._base import (NO_PARAMS_MSG, EmptyState, GradientTransformation, abs_sq, check_same_tree, check_scalar, params_for_updates, check_state, init_empty_state, safe_increment)
from ._wrappers import masked


def _none(x):
    return x is None


class TraceState(NamedTuple):
    """The momentum buffer of `trace`."""
    trace: Any


def trace(decay: Any, nesterov: bool = False,
          accumulator_dtype: Optional[Any] = None) -> GradientTransformation:
    """Momentum: ``t = g + decay * t``; the update is ``t`` (or ``g + decay * t``, Nesterov).

    >>> tx = trace(0.5)
    >>> s = tx.init(znp.asarray(0.0)); u, s = tx.update(znp.asarray(1.0), s)
    >>> float(tx.update(znp.asarray(1.0), s)[0])
    1.5
    """
    accumulator_dtype = None if accumulator_dtype is None else znp.dtype(accumulator_dtype)

    def init_fn(params):
        return TraceState(trace=otu.tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        check_state(state, TraceState, "trace")
        check_same_tree("trace", updates, "updates", state.trace, "optimizer state")

        def f(g, t):
            return g + decay * t
        new_trace = tree_util.tree_map(lambda g, t: None if g is None else f(g, t),
                                       updates, state.trace, is_leaf=_none)
        updates = tree_util.tree_map(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=otu.tree_cast(new_trace, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)


class EmaState(NamedTuple):
    """The step count and moving average of `ema`."""
    count: Any
    ema: Any


def ema(decay: Any, debias: bool = True,
        accumulator_dtype: Optional[Any] = None) -> GradientTransformation:
    """Exponential moving average of the updates (bias-corrected when ``debias``).

    >>> tx = ema(0.9)
    >>> float(tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))[0])
    2.0
    """
    accumulator_dtype = None if accumulator_dtype is None else znp.dtype(accumulator_dtype)

    def init_fn(params):
        return EmaState(count=znp.zeros([], znp.int32),
                        ema=otu.tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        check_state(state, EmaState, "ema")
        check_same_tree("ema", updates, "updates", state.ema, "optimizer state")
        updates = new_ema = otu.tree_update_moment(updates, state.ema, decay, 1)
        count_inc = safe_increment(state.count)
        if debias:
            updates = otu.tree_bias_correction(new_ema, decay, count_inc)
        return updates, EmaState(count=count_inc,
                                 ema=otu.tree_cast(new_ema, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)


class WeightDecaySchedule(NamedTuple):
    """The step count of a scheduled weight decay."""
    count: Any


AddDecayedWeightsState = EmptyState


def add_decayed_weights(weight_decay: Any = 0.0, mask: Any = None) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (a number or a schedule; ``mask``
    selects the leaves it applies to).

    >>> tx = add_decayed_weights(0.1)
    >>> float(tx.update(znp.asarray(1.0), tx.init(0.0), znp.asarray(2.0))[0])
    1.2
    """
    def init_fn(params):
        del params
        if callable(weight_decay):
            return WeightDecaySchedule(count=znp.zeros([], znp.int32))
        return EmptyState()

    def update_fn(updates, state, params):
        if params is None:
            raise errors.ZeraxValueError(f"add_decayed_weights: {NO_PARAMS_MSG}")
        if callable(weight_decay):
            check_state(state, WeightDecaySchedule, "add_decayed_weights")
            new_state = WeightDecaySchedule(safe_increment(state.count))
        else:
            check_state(state, EmptyState, "add_decayed_weights")
            new_state = state
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state
        params = params_for_updates("add_decayed_weights", updates, params)
        s = (check_scalar(weight_decay(state.count), "The weight_decay schedule")
             if callable(weight_decay) else weight_decay)
        updates = tree_util.tree_map(lambda g, p: None if g is None else g + s * p,
                                     updates, params, is_leaf=_none)
        return updates, new_state

    tx = GradientTransformation(init_fn, update_fn)
    if mask is not None:
        return masked(tx, mask)
    return tx


class AddNoiseState(NamedTuple):
    """The step count and random key of `add_noise`."""
    count: Any
    rng_key: Any


def add_noise(eta: Any, gamma: Any, key: Any = None, *, seed: Optional[int] = None
              ) -> GradientTransformation:
    """Add Gaussian noise of variance ``eta / (1 + t)**gamma`` (t counts from 0) to the
    updates; the noise comes from ``zerax.random`` with ``key`` (a key or an int seed).

    >>> import zerax.optim as optim
    >>> tx = optim.add_noise(0.01, 0.55, key=0)
    >>> u, s = tx.update(znp.zeros(3), tx.init(znp.zeros(3)))
    >>> u.shape, int(s.count)
    ((3,), 1)
    """
    if seed is not None:
        if key is not None:
            raise errors.ZeraxValueError("Only one of seed or key can be specified.")
        key = seed
    if key is None:
        key = 0

    def init_fn(params):
        del params
        k = zrandom.PRNGKey(key) if isinstance(key, int) else key
        return AddNoiseState(count=znp.zeros([], znp.int32), rng_key=k)

    def update_fn(updates, state, params=None):
        del params
        check_state(state, AddNoiseState, "add_noise")
        count_inc = safe_increment(state.count)
        std = znp.sqrt(eta / count_inc ** gamma)
        rng_key, sample_key = zrandom.split(state.rng_key)
        leaves, treedef = tree_util.tree_flatten(updates)
        keys = zrandom.split(sample_key, len(leaves))
        noise = [zrandom.normal(k, znp.shape(x), znp.asarray(x).dtype)
                 for k, x in zip(keys, leaves)]
        noise = tree_util.tree_unflatten(treedef, noise)
        updates = otu.tree_add_scale(updates, std, noise)
        return updates, AddNoiseState(count=count_inc, rng_key=rng_key)
    return GradientTransformation(init_fn, update_fn)


class ApplyEvery(NamedTuple):
    """The counter and gradient accumulator of `apply_every`."""
    count: Any
    grad_acc: Any


def apply_every(k: int = 1) -> GradientTransformation:
    """Accumulate updates and emit their sum every ``k`` steps (zeros otherwise).

    >>> tx = apply_every(2)
    >>> s = tx.init(znp.asarray(0.0)); u, s = tx.update(znp.asarray(1.0), s)
    >>> float(u), float(tx.update(znp.asarray(2.0), s)[0])
    (0.0, 3.0)
    """
    def init_fn(params):
        return ApplyEvery(count=znp.zeros([], znp.int32), grad_acc=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        check_state(state, ApplyEvery, "apply_every")
        c = state.count % k
        acc = c != 0
        grad_acc = tree_util.tree_map(lambda g, ga: acc * ga + g, updates, state.grad_acc)
        emit = c == k - 1
        updates = tree_util.tree_map(lambda ga: emit * ga, grad_acc)
        return updates, ApplyEvery(count=safe_increment(state.count) % k, grad_acc=grad_acc)
    return GradientTransformation(init_fn, update_fn)


# ----------------------------------------------------------------------------- clipping

def clip(max_delta: Any) -> GradientTransformation:
    """Clip every update element to ``[-max_delta, max_delta]``.

    >>> clip(1.0).update(znp.asarray([-3.0, 0.5]), EmptyState())[0].tolist()
    [-1.0, 0.5]
    """
    def update_fn(updates, state, params=None):
        del params
        return otu.tree_clip(updates, -max_delta, max_delta), state
    return GradientTransformation(init_empty_state, update_fn)


def clip_by_block_rms(threshold: Any) -> GradientTransformation:
    """Scale each leaf so that its RMS is at most ``threshold``.

    >>> clip_by_block_rms(1.0).update(znp.asarray([3.0, 4.0]), EmptyState())[0].round(4).tolist()
    [0.8485, 1.1314]
    """
    def clip_one(u):
        denom = znp.maximum(1.0, znp.sqrt(znp.mean(abs_sq(u))) / threshold)
        return u / denom

    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(clip_one, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def clip_by_global_norm(max_norm: Any) -> GradientTransformation:
    """Scale all updates by ``max_norm / global_norm`` when the global norm exceeds it.

    >>> clip_by_global_norm(1.0).update([3.0, 4.0], EmptyState())[0][1].item()
    0.8
    """
    def update_fn(updates, state, params=None):
        del params
        g_norm = otu.tree_norm(updates)
        trigger = znp.squeeze(g_norm < max_norm)

        def clip_fn(t):
            t = znp.asarray(t)
            return znp.where(trigger, t, (t / g_norm.astype(t.dtype)) * max_norm)
        return tree_util.tree_map(clip_fn, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def unitwise_norm(x: Any, axis: Any = None) -> Any:
    """Norms of the output units of a parameter (the rows of its last axes), broadcast
    back to ``x``'s shape (as used by `adaptive_grad_clip`).

    >>> unitwise_norm(znp.asarray([[3.0], [4.0]])).tolist()
    [[5.0], [5.0]]
    """
    x = znp.asarray(x)
    if axis is not None:
        sq = znp.sum(abs_sq(x), axis=axis, keepdims=True)
    elif znp.squeeze(x).ndim <= 1:
        sq = znp.sum(abs_sq(x), keepdims=True)
    elif x.ndim in (2, 3):
        sq = znp.sum(abs_sq(x), axis=0, keepdims=True)
    elif x.ndim == 4:
        sq = znp.sum(abs_sq(x), axis=(0, 1, 2), keepdims=True)
    elif x.ndim == 5:
        sq = znp.sum(abs_sq(x), axis=(0, 1, 2, 3), keepdims=True)
    else:
        raise errors.ZeraxValueError(
            f"Expected parameter with shape in {(1, 2, 3, 4, 5)}, got {x.shape}. Use axis "
            f"parameter to specify reduction axes for other shapes.")
    return znp.broadcast_to(znp.sqrt(sq), x.shape)


def unitwise_clip(g_norm: Any, max_norm: Any, grad: Any, div_eps: Any = 1e-6) -> Any:
    """``grad`` where ``g_norm < max_norm``, else ``grad`` rescaled to norm ``max_norm``.

    >>> unitwise_clip(znp.asarray([2.0]), znp.asarray([1.0]), znp.asarray([2.0])).tolist()
    [1.0]
    """
    clipped = grad * (max_norm / znp.maximum(g_norm, div_eps))
    return znp.where(g_norm < max_norm, grad, clipped)


def adaptive_grad_clip(clipping: Any, eps: Any = 1e-3, axis: Any = None
                       ) -> GradientTransformation:
    """Clip each unit's gradient to ``clipping * max(|param unit|, eps)`` (AGC).

    >>> tx = adaptive_grad_clip(0.1)
    >>> tx.update(znp.asarray([10.0]), EmptyState(), znp.asarray([2.0]))[0].tolist()
    [0.2]
    """
    def update_fn(updates, state, params):
        if params is None:
            raise errors.ZeraxValueError(f"adaptive_grad_clip: {NO_PARAMS_MSG}")
        params = params_for_updates("adaptive_grad_clip", updates, params)
        g_norm = tree_util.tree_map(lambda x: unitwise_norm(x, axis=axis), updates)
        p_norm = tree_util.tree_map(lambda x: unitwise_norm(x, axis=axis), params)
        max_norm = tree_util.tree_map(lambda x: clipping * znp.maximum(x, eps), p_norm)
        return tree_util.tree_map(unitwise_clip, g_norm, max_norm, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def per_example_global_norm_clip(grads: Any, l2_norm_clip: Any) -> tuple[Any, Any]:
    """Clip each example's gradient (axis 0 of every leaf) to global norm
    ``l2_norm_clip`` and sum over examples; returns ``(summed, num_clipped)``.

    >>> s, n = per_example_global_norm_clip([znp.asarray([[3.0, 4.0], [0.3, 0.4]])], 1.0)
    >>> s[0].round(6).tolist(), int(n)
    ([0.9, 1.2], 1)
    """
    leaves = tree_util.tree_leaves(grads)
    if not leaves or any(znp.ndim(g) < 1 or g.shape[0] != leaves[0].shape[0] for g in leaves):
        raise errors.ZeraxValueError(
            "per_example_global_norm_clip expects every leaf of `grads` to have the batch "
            "dimension on axis 0.")
    n = leaves[0].shape[0]
    sq = sum(znp.sum(abs_sq(g).reshape(n, -1), axis=1) for g in leaves)
    norms = znp.sqrt(sq)
    mult = znp.nan_to_num(znp.minimum(l2_norm_clip / norms, 1.0), nan=1.0)
    num_clipped = znp.sum(mult < 1.0)
    summed = tree_util.tree_map(lambda g: znp.tensordot(mult, g, axes=1), grads)
    return summed, num_clipped


# ----------------------------------------------------------------------------- constraints

NonNegativeParamsState = EmptyState


def keep_params_nonnegative() -> GradientTransformation:
    """Change each update so that ``params + update`` stays >= 0 (to 0 where it would
    cross).

    >>> tx = keep_params_nonnegative()
    >>> tx.update(znp.asarray([-3.0, 1.0]), tx.init(0.0), znp.asarray([1.0, 1.0]))[0].tolist()
    [-1.0, 1.0]
    """
    def update_fn(updates, state, params):
        if params is None:
            raise errors.ZeraxValueError(f"keep_params_nonnegative: {NO_PARAMS_MSG}")
        params = params_for_updates("keep_params_nonnegative", updates, params)
        updates = tree_util.tree_map(
            lambda p, u: None if p is None else znp.where(p + u < 0.0, -p, u),
            params, updates, is_leaf=_none)
        return updates, state
    return GradientTransformation(init_empty_state, update_fn)


class ZeroNansState(NamedTuple):
    """Per leaf, whether the last updates had a nan."""
    found_nan: Any


def zero_nans() -> GradientTransformation:
    """Replace nan updates by 0, recording per leaf whether one was found.

    >>> tx = zero_nans()
    >>> u, s = tx.update([znp.asarray([float("nan"), 1.0])], tx.init([znp.zeros(2)]))
    >>> u[0].tolist(), bool(s.found_nan[0])
    ([0.0, 1.0], True)
    """
    def init_fn(params):
        return ZeroNansState(found_nan=tree_util.tree_map(lambda p: znp.asarray(False), params))

    def update_fn(updates, state, params=None):
        del params, state
        found = tree_util.tree_map(lambda u: znp.any(znp.isnan(u)), updates)
        updates = tree_util.tree_map(lambda u: znp.where(znp.isnan(u), znp.zeros_like(u), u),
                                     updates)
        return updates, ZeroNansState(found_nan=found)
    return GradientTransformation(init_fn, update_fn)
