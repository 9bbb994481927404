"""`zerax.optim.schedules`: optax's learning-rate schedules (functions of the int32 step
count) and ``inject_hyperparams``, which moves hyper-parameters into the optimiser state
(``state.hyperparams['learning_rate']``) so that they can be read, scheduled or assigned.

>>> import zerax.optim as optim
>>> sched = optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=10, decay_steps=110)
>>> [round(float(sched(s)), 4) for s in (0, 5, 10, 60, 110)]
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence, Union

import numpy as np

import zerax.numpy as znp
from .. import Array, errors

from ._base import (GradientTransformationExtraArgs, check_scalar, check_state, safe_increment, with_extra_args_support)
from .tree_utils import tree_dtype

__all__ = [
    "constant_schedule", "polynomial_schedule", "linear_schedule",
    "piecewise_constant_schedule", "exponential_decay", "cosine_decay_schedule",
    "piecewise_interpolate_schedule", "linear_onecycle_schedule", "cosine_onecycle_schedule",
    "warmup_constant_schedule", "warmup_cosine_decay_schedule",
    "warmup_exponential_decay_schedule", "sgdr_schedule", "join_schedules",
    "inject_hyperparams", "InjectHyperparamsState", "InjectStatefulHyperparamsState",
    "WrappedSchedule", "WrappedScheduleState",
]


def _divide(count, steps):
    """``count / steps`` with JAX's dtype rule, which optax's numbers carry: an int32
    step count divides into float32 (NumPy would give float64)."""
    count = znp.asarray(count)
    if znp.issubdtype(count.dtype, znp.integer) and count.dtype.itemsize <= 4:
        count = count.astype(znp.float32)
        if not isinstance(steps, (int, float)):
            steps = znp.asarray(steps).astype(znp.float32)
    return count / steps


def constant_schedule(value: Any) -> Callable[[Any], Any]:
    """The schedule that always returns ``value``.

    >>> constant_schedule(0.1)(100)
    0.1
    """
    return lambda count: value


def polynomial_schedule(init_value: Any, end_value: Any, power: Any, transition_steps: int,
                        transition_begin: int = 0) -> Callable[[Any], Any]:
    """``(init - end) * (1 - t / transition_steps)**power + end`` with ``t`` the count
    since ``transition_begin``, clipped to ``[0, transition_steps]``.

    >>> float(polynomial_schedule(1.0, 0.0, 2, 10)(5))
    0.25
    """
    if transition_steps <= 0:
        return lambda count: init_value
    if transition_begin < 0:
        transition_begin = 0

    def schedule(count):
        count = znp.clip(znp.asarray(count) - transition_begin, 0, transition_steps)
        frac = 1 - _divide(count, transition_steps)
        return (init_value - end_value) * (frac ** power) + end_value
    return schedule


def linear_schedule(init_value: Any, end_value: Any, transition_steps: int,
                    transition_begin: int = 0) -> Callable[[Any], Any]:
    """Linear interpolation from ``init_value`` to ``end_value`` over ``transition_steps``.

    >>> float(linear_schedule(1.0, 0.0, 4)(1))
    0.75
    """
    return polynomial_schedule(init_value=init_value, end_value=end_value, power=1,
                               transition_steps=transition_steps,
                               transition_begin=transition_begin)


def piecewise_constant_schedule(init_value: Any, boundaries_and_scales: Optional[dict] = None
                                ) -> Callable[[Any], Any]:
    """``init_value`` multiplied by ``scale`` at each ``boundary`` passed.

    >>> s = piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1})
    >>> [float(s(c)) for c in (0, 2, 3, 4)]
    [1.0, 0.5, 0.5, 0.05]
    """
    if boundaries_and_scales is not None:
        if not all(scale >= 0.0 for scale in boundaries_and_scales.values()):
            raise errors.ZeraxValueError(
                "`piecewise_constant_schedule` expects non-negative scale factors")

    def schedule(count):
        v = init_value
        if boundaries_and_scales is not None:
            for threshold, scale in sorted(boundaries_and_scales.items()):
                indicator = znp.maximum(0.0, znp.sign(threshold - znp.asarray(count)))
                v = v * indicator + (1 - indicator) * scale * v
        return v
    return schedule


def exponential_decay(init_value: Any, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: Optional[Any] = None) -> Callable[[Any], Any]:
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)``
    (floored exponent when ``staircase``), bounded by ``end_value``.

    >>> float(exponential_decay(1.0, 10, 0.5)(20))
    0.25
    """
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    if transition_begin < 0:
        transition_begin = 0
    clip_fn = None
    if end_value is not None:
        clip_fn = znp.maximum if decay_rate < 1.0 else znp.minimum

    def schedule(count):
        decreased = znp.asarray(count) - transition_begin
        p = _divide(decreased, transition_steps)
        if staircase:
            p = znp.floor(p)
        value = znp.where(decreased <= 0, init_value,
                          init_value * znp.power(decay_rate, p))
        if clip_fn is not None:
            value = clip_fn(value, end_value)
        return value
    return schedule


def cosine_decay_schedule(init_value: Any, decay_steps: int, alpha: Any = 0.0,
                          exponent: Any = 1.0) -> Callable[[Any], Any]:
    """``init_value * ((1 - alpha) * (0.5 (1 + cos(pi t / decay_steps)))**exponent + alpha)``
    with ``t`` clipped at ``decay_steps``.

    >>> float(cosine_decay_schedule(1.0, 10)(5))
    0.5
    """
    if not decay_steps > 0:
        raise errors.ZeraxValueError(
            f"The cosine_decay_schedule requires positive decay_steps, got "
            f"decay_steps={decay_steps!r}.")

    def schedule(count):
        steps = float(decay_steps) if isinstance(decay_steps, int) else decay_steps
        c = float(count) if isinstance(count, int) else count
        c = znp.minimum(c, steps)
        cosine_decay = 0.5 * (1 + znp.cos(math.pi * c / steps))
        decayed = (1 - alpha) * cosine_decay ** exponent + alpha
        return init_value * decayed
    return schedule


def _linear_interpolate(start, end, pct):
    return (end - start) * pct + start


def _cosine_interpolate(start, end, pct):
    arg = math.pi * pct
    # A float32 cosine rounded from float64 (correctly rounded, as XLA's is here).
    # (``float``: the mode's widest float; with x64 off float32 cos, as JAX's)
    cos = znp.cos(arg.astype(float)).astype(arg.dtype)
    return end + (start - end) / 2.0 * (cos + 1)


def piecewise_interpolate_schedule(interpolate_type: str, init_value: Any,
                                   boundaries_and_scales: Optional[dict] = None
                                   ) -> Callable[[Any], Any]:
    """Interpolate (``'linear'`` or ``'cosine'``) between values that are multiplied by
    ``scale`` at each ``boundary``.

    >>> float(piecewise_interpolate_schedule("linear", 1.0, {10: 0.5})(5))
    0.75
    """
    if interpolate_type == "linear":
        fn = _linear_interpolate
    elif interpolate_type == "cosine":
        fn = _cosine_interpolate
    else:
        raise errors.ZeraxValueError("`interpolate_type` must be either 'cosine' or 'linear'")
    if boundaries_and_scales:
        boundaries, scales = zip(*sorted(boundaries_and_scales.items()))
        if not all(scale >= 0.0 for scale in scales):
            raise errors.ZeraxValueError(
                "`piecewise_interpolate_schedule` expects non-negative scale factors")
    else:
        boundaries, scales = (), ()

    def schedule(count):
        count = znp.asarray(count)
        bounds = znp.stack([znp.asarray(b) for b in (0,) + tuple(boundaries)])
        values = znp.cumprod(znp.stack([znp.asarray(v) for v in (init_value,) + tuple(scales)]))
        interval_sizes = znp.maximum(bounds[1:] - bounds[:-1], 1)
        indicator = znp.logical_and(bounds[:-1] <= count, count < bounds[1:])
        pct = _divide(count - bounds[:-1].astype(count.dtype), interval_sizes)
        interp = fn(values[:-1], values[1:], pct)
        return (znp.dot(indicator.astype(interp.dtype), interp)
                + (bounds[-1] <= count) * values[-1])
    return schedule


def linear_onecycle_schedule(transition_steps: int, peak_value: Any, pct_start: float = 0.3,
                             pct_final: float = 0.85, div_factor: float = 25.0,
                             final_div_factor: float = 1e4) -> Callable[[Any], Any]:
    """The one-cycle schedule with linear pieces (up to ``peak_value``, down, annealing).

    >>> round(float(linear_onecycle_schedule(100, 1.0)(30)), 6)
    1.0
    """
    if transition_steps <= 0:
        raise errors.ZeraxValueError(
            "A linear onecycle schedule was set with a non-positive `transition_steps`")
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps: int, peak_value: Any, pct_start: float = 0.3,
                             div_factor: float = 25.0, final_div_factor: float = 1e4
                             ) -> Callable[[Any], Any]:
    """The one-cycle schedule with cosine pieces.

    >>> round(float(cosine_onecycle_schedule(100, 1.0)(30)), 6)
    1.0
    """
    if transition_steps <= 0:
        raise errors.ZeraxValueError(
            "A linear onecycle schedule was set with a non-positive `transition_steps`")
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})


def join_schedules(schedules: Sequence[Callable], boundaries: Sequence[int]
                   ) -> Callable[[Any], Any]:
    """Run ``schedules[i]`` from ``boundaries[i-1]`` on (each restarts its count at 0).

    >>> s = join_schedules([constant_schedule(1.0), lambda c: c * 10.0], [3])
    >>> [float(s(c)) for c in (2, 3, 4)]
    [1.0, 0.0, 10.0]
    """
    def schedule(step):
        step = znp.asarray(step)
        output = schedules[0](step)
        # As in optax under JAX's weak types: once a piece is float32 (an int32 count
        # divided), the joined schedule is float32.
        f32 = getattr(output, "dtype", None) == znp.float32
        for boundary, sched in zip(boundaries, schedules[1:]):
            nxt = znp.asarray(sched(step - boundary))
            if f32 and nxt.dtype == znp.float64:
                nxt = nxt.astype(znp.float32)
            output = znp.where(step < boundary, output, nxt)
        return output
    return schedule


def warmup_constant_schedule(init_value: Any, peak_value: Any, warmup_steps: int
                             ) -> Callable[[Any], Any]:
    """Linear warm-up from ``init_value`` to ``peak_value``, then constant.

    >>> float(warmup_constant_schedule(0.0, 1.0, 10)(20))
    1.0
    """
    return linear_schedule(init_value=init_value, end_value=peak_value,
                           transition_steps=warmup_steps)


def warmup_cosine_decay_schedule(init_value: Any, peak_value: Any, warmup_steps: int,
                                 decay_steps: int, end_value: Any = 0.0, exponent: Any = 1.0
                                 ) -> Callable[[Any], Any]:
    """Linear warm-up to ``peak_value`` over ``warmup_steps``, then cosine decay to
    ``end_value`` at ``decay_steps`` (counted from 0, warm-up included).

    >>> float(warmup_cosine_decay_schedule(0.0, 1.0, 10, 110)(5))
    0.5
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value=init_value, end_value=peak_value,
                         transition_steps=warmup_steps),
         cosine_decay_schedule(init_value=peak_value, decay_steps=decay_steps - warmup_steps,
                               alpha=alpha, exponent=exponent)],
        [warmup_steps])


def warmup_exponential_decay_schedule(init_value: Any, peak_value: Any, warmup_steps: int,
                                      transition_steps: int, decay_rate: Any,
                                      transition_begin: int = 0, staircase: bool = False,
                                      end_value: Optional[Any] = None
                                      ) -> Callable[[Any], Any]:
    """Linear warm-up to ``peak_value``, then `exponential_decay` from there.

    >>> float(warmup_exponential_decay_schedule(0.0, 1.0, 10, 10, 0.5)(20))
    0.5
    """
    return join_schedules(
        [linear_schedule(init_value=init_value, end_value=peak_value,
                         transition_steps=warmup_steps),
         exponential_decay(init_value=peak_value, transition_steps=transition_steps,
                           decay_rate=decay_rate, transition_begin=transition_begin,
                           staircase=staircase, end_value=end_value)],
        [warmup_steps])


def sgdr_schedule(cosine_kwargs: Iterable[dict]) -> Callable[[Any], Any]:
    """SGDR: consecutive warm-up-cosine cycles, one per dict of
    `warmup_cosine_decay_schedule` arguments.

    >>> kw = dict(init_value=0.0, peak_value=1.0, warmup_steps=2, decay_steps=10)
    >>> float(sgdr_schedule([kw, kw])(12))
    1.0
    """
    boundaries, schedules, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        boundaries.append(step + kwargs["decay_steps"])
        step += kwargs["decay_steps"]
    return join_schedules(schedules, boundaries[:-1])


# ----------------------------------------------------------------------------- inject

class InjectHyperparamsState(NamedTuple):
    """optax's older state of `inject_hyperparams` (without schedule states)."""
    count: Any
    hyperparams: dict
    inner_state: Any


class InjectStatefulHyperparamsState(NamedTuple):
    """The state of `inject_hyperparams` (optax 0.2.x): the step count, the current
    hyper-parameters (a dict that may be assigned into), the schedules' states and the
    inner optimiser's state."""
    count: Any
    hyperparams: dict
    hyperparams_states: dict
    inner_state: Any


class WrappedScheduleState(NamedTuple):
    """The step count of a plain schedule inside `inject_hyperparams`."""
    count: Any


class WrappedSchedule:
    """A plain ``schedule(count)`` seen as a stateful schedule (init/update/__call__)."""

    def __init__(self, schedule_fn: Callable):
        self.schedule_fn = schedule_fn

    def init(self) -> WrappedScheduleState:
        """The count starts at 0."""
        return WrappedScheduleState(count=znp.zeros([], znp.int32))

    def update(self, state: WrappedScheduleState, **extra_args: Any) -> WrappedScheduleState:
        """Count one step."""
        del extra_args
        return WrappedScheduleState(count=safe_increment(state.count))

    def __call__(self, state: WrappedScheduleState, **extra_args: Any) -> Any:
        del extra_args
        return self.schedule_fn(state.count)


def _is_stateful(value):
    return all(callable(getattr(value, n, None)) for n in ("init", "update", "__call__")) \
        and not inspect.isfunction(value)


def _convert_floats(x, dtype):
    # zerax arrays are all strong: keep a float Array's dtype, cast Python/NumPy floats.
    if isinstance(x, Array):
        return x
    current = x.dtype if hasattr(x, "dtype") else type(x)
    if np.issubdtype(current, np.floating):
        return znp.asarray(x, dtype=dtype)
    return x


def inject_hyperparams(inner_factory: Callable, static_args: Union[str, Iterable[str]] = (),
                       hyperparam_dtype: Optional[Any] = None) -> Callable:
    """Wrap an optimiser factory so that its numeric hyper-parameters live in the state
    (``state.hyperparams``, a dict that can be read and assigned into) and its callable
    hyper-parameters are schedules evaluated at every step.

    >>> import zerax.optim as optim
    >>> opt = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1)
    >>> state = opt.init({"w": znp.ones(2)})
    >>> state.hyperparams["learning_rate"] = znp.asarray(0.5)
    >>> opt.update({"w": znp.ones(2)}, state)[0]["w"].tolist()
    [-0.5, -0.5]
    """
    static_args = {static_args} if isinstance(static_args, str) else set(static_args)
    signature = inspect.signature(inner_factory)
    if not static_args.issubset(signature.parameters):
        raise errors.ZeraxValueError(
            f"`static_args` must specify a subset of `inner_factory`'s parameters. Given "
            f"`static_args`: {static_args}. `inner_factory` parameters: "
            f"{set(signature.parameters.keys())}")

    @functools.wraps(inner_factory)
    def wrapped_transform(*args: Any, **kwargs: Any) -> GradientTransformationExtraArgs:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        sched_hps, numeric_hps, other_hps = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static_args or isinstance(value, bool):
                other_hps[name] = value
            elif _is_stateful(value):
                sched_hps[name] = value
            elif callable(value):
                sched_hps[name] = WrappedSchedule(value)
            elif isinstance(value, (int, float, np.ndarray, np.number, Array)):
                numeric_hps[name] = value
            else:
                other_hps[name] = value

        def dtype_of(params):
            if hyperparam_dtype is not None:
                return hyperparam_dtype
            return tree_dtype(params, "highest")

        def init_fn(params):
            dtype = dtype_of(params)
            hparams = {k: znp.asarray(_convert_floats(v, dtype)) for k, v in numeric_hps.items()}
            hstates = {k: f.init() for k, f in sched_hps.items()}
            for k, f in sched_hps.items():
                hparams[k] = _convert_floats(
                    check_scalar(f(hstates[k]), f"The schedule given as {k!r}"), dtype)
            return InjectStatefulHyperparamsState(
                count=znp.zeros([], znp.int32), hyperparams=hparams,
                hyperparams_states=hstates,
                inner_state=inner_factory(**other_hps, **hparams).init(params))

        def update_fn(updates, state, params=None, **extra_args):
            check_state(state, InjectStatefulHyperparamsState, "inject_hyperparams")
            dtype = dtype_of(params)
            hparams = {k: _convert_floats(v, dtype) for k, v in state.hyperparams.items()}
            for k, f in sched_hps.items():
                hparams[k] = _convert_floats(
                    check_scalar(f(state.hyperparams_states[k], **extra_args),
                                 f"The schedule given as {k!r}"), dtype)
            hstates = {k: f.update(state.hyperparams_states[k], **extra_args)
                       for k, f in sched_hps.items()}
            inner = with_extra_args_support(inner_factory(**other_hps, **hparams))
            updates, inner_state = inner.update(updates, state.inner_state, params,
                                                **extra_args)
            return updates, InjectStatefulHyperparamsState(
                count=safe_increment(state.count), hyperparams=hparams,
                hyperparams_states=hstates, inner_state=inner_state)
        return GradientTransformationExtraArgs(init_fn, update_fn)
    return wrapped_transform


inject_stateful_hyperparams = inject_hyperparams
