"""`zerax.optim.contrib`: optax's ``optax.contrib`` transforms that ported programs use:
``reduce_on_plateau`` (scale the updates down when a monitored value stops improving).

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
from ._base import GradientTransformationExtraArgs, safe_increment

__all__ = ["ReduceLROnPlateauState", "reduce_on_plateau"]


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
