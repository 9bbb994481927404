"""`zerax.optim.contrib`: optax's ``optax.contrib`` transforms that ported programs use:
``reduce_on_plateau`` (scale the updates down when a monitored value stops improving)
and Schedule-Free learning (``schedule_free``, ``schedule_free_sgd``,
``schedule_free_adamw``, ``schedule_free_eval_params``).

>>> import zerax.numpy as znp, zerax.optim as optax
>>> tx = optax.contrib.reduce_on_plateau(factor=0.5, patience=1)
>>> state = tx.init(znp.zeros(2))
>>> for loss in (1.0, 1.0, 1.0):
...     updates, state = tx.update(znp.ones(2), state, value=loss)
>>> float(state.scale)        # no improvement after the first value: halved twice
0.25
"""

from __future__ import annotations

from typing import Any, NamedTuple

import zerax.numpy as znp
from .. import errors, lax, tree_util
from . import tree_utils as otu
from ._accumulation import add_decayed_weights
from ._alias import sgd
from ._base import (GradientTransformationExtraArgs, chain, safe_increment,
                    with_extra_args_support)
from ._transform import scale_by_learning_rate, scale_by_rms
from .schedules import warmup_constant_schedule

__all__ = ["ReduceLROnPlateauState", "ScheduleFreeState", "reduce_on_plateau",
           "schedule_free", "schedule_free_adamw", "schedule_free_eval_params",
           "schedule_free_sgd"]


class ReduceLROnPlateauState(NamedTuple):
    """State of `reduce_on_plateau` (optax's field names)."""
    scale: Any
    best_value: Any
    plateau_count: Any     # int32
    cooldown_count: Any    # int32
    count: Any             # int32
    avg_value: Any


def reduce_on_plateau(factor: float = 0.1, patience: Any = 10, rtol: float = 1e-4,
                      atol: float = 0.0, cooldown: Any = 0, accumulation_size: Any = 1,
                      min_scale: Any = 0.0) -> GradientTransformationExtraArgs:
    """Multiply the updates by a scale that drops by ``factor`` once the monitored value
    (``update(..., value=loss)``, averaged over ``accumulation_size`` calls) has not
    improved by ``rtol``/``atol`` for ``patience`` averages; then waits ``cooldown``
    averages; never below ``min_scale`` (optax's ``contrib.reduce_on_plateau``).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> opt = optax.chain(optax.sgd(0.1), optax.contrib.reduce_on_plateau(patience=2))
    >>> state = opt.init(znp.zeros(1))
    >>> updates, state = opt.update(znp.ones(1), state, value=0.3)
    >>> updates
    Array([-0.1], dtype=float64)
    """
    if factor <= 0.0 or factor >= 1.0:
        raise errors.ZeraxValueError(
            f"Factor must be in the range (0, 1), got factor = {factor}.")
    if rtol < 0.0 or atol < 0.0:
        raise errors.ZeraxValueError(
            f"Both rtol and atol must be non-negative, got rtol = {rtol} and atol = {atol}.")
    if rtol == 0.0 and atol == 0.0:
        raise errors.ZeraxValueError(
            f"At least one of rtol or atol must be positive, got rtol = {rtol} and "
            f"atol = {atol}.")
    if rtol > 1.0:
        raise errors.ZeraxValueError(f"rtol must be less than or equal to 1.0, got rtol = {rtol}.")

    def init_fn(params):
        lowest = otu.tree_dtype(params, "lowest")
        highest = otu.tree_dtype(params, "highest")
        return ReduceLROnPlateauState(
            scale=znp.asarray(1.0, dtype=lowest),
            best_value=znp.asarray(float("inf"), dtype=highest),
            plateau_count=znp.asarray(0, znp.int32),
            cooldown_count=znp.asarray(0, znp.int32),
            count=znp.asarray(0, znp.int32),
            avg_value=znp.asarray(0.0, dtype=highest))

    def _update_scale(state):
        avg_value = state.avg_value
        has_improved = znp.where(avg_value < (1 - rtol) * state.best_value - atol, 1, 0)
        new_best = znp.where(has_improved, avg_value.astype(state.best_value.dtype),
                             state.best_value)
        curr_plateau = znp.where(has_improved, 0, safe_increment(state.plateau_count))

        def in_cooldown():
            return (znp.asarray(0, znp.int32), state.scale,
                    (state.cooldown_count - 1).astype(znp.int32))

        def not_in_cooldown():
            hit = curr_plateau == patience
            new_plateau = znp.where(hit, 0, curr_plateau).astype(znp.int32)
            new_scale = znp.maximum(znp.where(hit, state.scale * factor, state.scale),
                                    min_scale).astype(state.scale.dtype)
            new_cooldown = znp.where(hit, cooldown, 0).astype(znp.int32)
            return new_plateau, new_scale, new_cooldown

        new_plateau, new_scale, new_cooldown = lax.cond(
            state.cooldown_count > 0, in_cooldown, not_in_cooldown)
        return ReduceLROnPlateauState(
            scale=new_scale, best_value=new_best.astype(state.best_value.dtype),
            plateau_count=new_plateau, cooldown_count=new_cooldown,
            count=znp.asarray(0, znp.int32), avg_value=znp.asarray(0.0, avg_value.dtype))

    def update_fn(updates, state, params=None, *, value=None, **extra_args):
        del params, extra_args
        if value is None:
            raise errors.ZeraxTypeError(
                "reduce_on_plateau.update needs the monitored value: call "
                "update(grads, state, params, value=loss).")
        count = state.count
        new_count = safe_increment(count)
        new_avg = (count * state.avg_value
                   + znp.asarray(value).astype(state.avg_value.dtype)) / new_count
        new_state = state._replace(avg_value=new_avg.astype(state.avg_value.dtype),
                                   count=new_count)
        new_state = lax.cond(new_count == accumulation_size, _update_scale,
                             lambda s: s, new_state)
        updates = tree_util.tree_map(lambda g: new_state.scale * g, updates)
        return updates, new_state

    return GradientTransformationExtraArgs(init_fn, update_fn)


# ----------------------------------------------------------------------- schedule-free

class ScheduleFreeState(NamedTuple):
    """State of `schedule_free` (optax's field names)."""
    b1: Any
    weight_sum: Any
    step_count: Any        # int32, from 1
    max_lr: Any
    base_optimizer_state: Any
    z: Any


def schedule_free_eval_params(state: Any, params: Any) -> Any:
    """The parameters to evaluate a `schedule_free` model at, ``x = (y - (1 - b1) z) /
    b1``, from the training parameters ``y`` and the state (optax's).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> opt = optax.contrib.schedule_free_sgd(0.1)
    >>> state = opt.init(znp.ones(2))
    >>> optax.contrib.schedule_free_eval_params(state, znp.ones(2))
    Array([1., 1.], dtype=float64)
    """
    b1 = getattr(state, "b1", None)
    z = getattr(state, "z", None)
    if b1 is None or z is None:
        raise errors.ZeraxValueError(
            "schedule_free_eval_params requires a ScheduleFreeState as input.")
    return tree_util.tree_map(lambda yi, zi: (yi - (1.0 - b1) * zi) / b1, params, z)


def schedule_free(base_optimizer, learning_rate: Any, b1: Any = 0.9,
                  weight_lr_power: Any = 2.0, state_dtype: Any = None
                  ) -> GradientTransformationExtraArgs:
    """Schedule-Free learning (Defazio et al. 2024) around ``base_optimizer`` (which
    should have no momentum): the gradients are taken at ``y``, an interpolation of the
    base iterates ``z`` and their weighted average ``x`` (the parameters to evaluate,
    `schedule_free_eval_params`), weighted by ``max_lr ** weight_lr_power``
    (optax's ``contrib.schedule_free``).

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optax
    >>> opt = optax.contrib.schedule_free(optax.sgd(0.5), learning_rate=0.5)
    >>> p = znp.array([1.0, 2.0])
    >>> state = opt.init(p)
    >>> u, state = opt.update(zx.grad(lambda v: znp.sum(v ** 2))(p), state, p)
    >>> optax.apply_updates(p, u)       # (the first step lands z on the minimum)
    Array([0., 0.], dtype=float64)
    """
    base_optimizer = with_extra_args_support(base_optimizer)

    def init_fn(params):
        params_dtype = otu.tree_dtype(params, "lowest")
        z = otu.tree_cast(params, state_dtype) if state_dtype is not None else params
        z = tree_util.tree_map(lambda t: znp.array(t, copy=True), z)
        return ScheduleFreeState(
            b1=znp.asarray(b1, dtype=params_dtype),
            weight_sum=znp.zeros([], dtype=params_dtype),
            step_count=znp.ones([], dtype=znp.int32),
            max_lr=znp.zeros([], dtype=params_dtype),
            base_optimizer_state=base_optimizer.init(params),
            z=z)

    def update_fn(grads, state, params=None, **extra_args):
        if params is None:
            raise errors.ZeraxValueError(
                "schedule_free.update needs the parameters: call update(grads, state, "
                "params).")
        lr = learning_rate
        if callable(learning_rate):
            lr = znp.asarray(learning_rate(state.step_count), dtype=state.max_lr.dtype)
        max_lr = znp.maximum(state.max_lr, lr)
        next_step_count = safe_increment(state.step_count)
        weight = max_lr ** weight_lr_power
        next_total_weight = state.weight_sum + weight
        ck = znp.where(znp.logical_or(znp.isnan(weight), znp.isnan(next_total_weight)),
                       znp.full(weight.shape, znp.nan),
                       znp.nan_to_num(weight / next_total_weight, nan=0.0, posinf=znp.inf))
        base_updates, next_base_state = base_optimizer.update(
            grads, state.base_optimizer_state, params, **extra_args)
        z = tree_util.tree_map(
            lambda pi, ui: znp.asarray(pi + ui).astype(znp.asarray(pi).dtype),
            state.z, base_updates)
        prev_x = tree_util.tree_map(lambda yi, zi: (yi - (1.0 - b1) * zi) / b1,
                                    params, state.z)
        x = tree_util.tree_map(lambda xi, zi: (1.0 - ck) * xi + ck * zi, prev_x, z)
        new_params = tree_util.tree_map(lambda xi, zi: b1 * xi + (1.0 - b1) * zi, x, z)
        updates = tree_util.tree_map(lambda npi, pi: npi - pi, new_params, params)
        return updates, ScheduleFreeState(
            b1=state.b1, weight_sum=next_total_weight, step_count=next_step_count,
            max_lr=max_lr, base_optimizer_state=next_base_state, z=z)

    return GradientTransformationExtraArgs(init_fn, update_fn)


def schedule_free_sgd(learning_rate: Any = 1.0, warmup_steps: int | None = None,
                      b1: Any = 0.9, weight_decay: Any = None, weight_lr_power: Any = 2.0,
                      state_dtype: Any = None) -> GradientTransformationExtraArgs:
    """`schedule_free` around SGD, with an optional linear warmup and weight decay
    (optax's ``contrib.schedule_free_sgd``).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> opt = optax.contrib.schedule_free_sgd(0.1, warmup_steps=10)
    >>> int(opt.init(znp.zeros(3)).step_count)
    1
    """
    if warmup_steps is not None:
        learning_rate = warmup_constant_schedule(init_value=0, peak_value=learning_rate,
                                                 warmup_steps=warmup_steps)
    optimizer = sgd(learning_rate)
    if weight_decay is not None:
        optimizer = chain(add_decayed_weights(weight_decay), optimizer)
    return schedule_free(optimizer, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)


def schedule_free_adamw(learning_rate: Any = 0.0025, warmup_steps: int | None = None,
                        b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
                        weight_decay: Any = 0.0, weight_lr_power: Any = 2.0,
                        state_dtype: Any = None) -> GradientTransformationExtraArgs:
    """`schedule_free` around AdamW without momentum (RMS scaling with bias correction,
    decoupled weight decay), optax's ``contrib.schedule_free_adamw``.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optax
    >>> solver = optax.contrib.schedule_free_adamw(1.0)
    >>> params = znp.array([1.0, 2.0, 3.0])
    >>> state = solver.init(params)
    >>> u, state = solver.update(zx.grad(lambda v: znp.sum(v ** 2))(params), state, params)
    >>> params = optax.apply_updates(params, u)
    >>> round(float(znp.sum(optax.contrib.schedule_free_eval_params(state, params) ** 2)), 6)
    5.0
    """
    if warmup_steps is not None:
        learning_rate = warmup_constant_schedule(init_value=0, peak_value=learning_rate,
                                                 warmup_steps=warmup_steps)
    optimizer = chain(
        scale_by_rms(decay=b2, eps=eps, eps_in_sqrt=False, bias_correction=True),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate))
    return schedule_free(optimizer, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)
