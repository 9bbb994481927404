"""Transformations that wrap others: ``masked``, ``partition`` (``multi_transform``),
``MultiSteps`` (gradient accumulation), ``apply_if_finite``, ``conditionally_transform``,
``conditionally_mask`` and ``lookahead``.  Branches that depend on array values are
``lax.cond``s, so every wrapper jits.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Union

import zerax
import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import (GradientTransformation, GradientTransformationExtraArgs, check_state, safe_increment, set_to_zero, with_extra_args_support)


class MaskedState(NamedTuple):
    """The inner state of a `masked` transformation."""
    inner_state: Any


class MaskedNode(NamedTuple):
    """The placeholder (no leaves) that `masked` puts where the mask is False."""


def _mask_callable(mask):
    leaves = tree_util.tree_leaves(tree_util.tree_map(callable, mask))
    return len(leaves) > 0 and all(leaves)


def masked(inner: GradientTransformation, mask: Any, *,
           mask_compatible_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply ``inner`` only to the leaves where ``mask`` (a tree of bools that is a prefix
    of the params, or a function of them) is True; the other updates pass unchanged.

    >>> import zerax.optim as optim
    >>> tx = masked(optim.scale(-1.0), {"a": True, "b": False})
    >>> tx.update({"a": 1.0, "b": 1.0}, tx.init({"a": 0.0, "b": 0.0}))[0]
    {'a': -1.0, 'b': 1.0}
    """
    inner = with_extra_args_support(inner)

    def mask_pytree(pytree, mask_tree):
        return tree_util.tree_map(lambda m, p: p if m else MaskedNode(), mask_tree, pytree)

    def init_fn(params):
        mask_tree = mask(params) if _mask_callable(mask) else mask
        return MaskedState(inner_state=inner.init(mask_pytree(params, mask_tree)))

    def update_fn(updates, state, params=None, **extra_args):
        check_state(state, MaskedState, "masked")
        mask_tree = mask(updates) if _mask_callable(mask) else mask
        if mask_compatible_extra_args:
            base = tree_util.tree_structure(updates)
            extra_args = {k: (mask_pytree(v, mask_tree)
                              if tree_util.tree_structure(v) == base else v)
                          for k, v in extra_args.items()}
        masked_updates = mask_pytree(updates, mask_tree)
        masked_params = None if params is None else mask_pytree(params, mask_tree)
        new_masked, new_inner = inner.update(masked_updates, state.inner_state, masked_params,
                                             **extra_args)
        new_updates = tree_util.tree_map(lambda m, new_u, old_u: new_u if m else old_u,
                                         mask_tree, new_masked, updates)
        return new_updates, MaskedState(inner_state=new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)


class PartitionState(NamedTuple):
    """The inner states of `partition`, keyed by label."""
    inner_states: Any


MultiTransformState = PartitionState


def partition(transforms: dict, param_labels: Any, *,
              mask_compatible_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply a different transformation to each group of parameters; ``param_labels``
    (a tree of labels, or a function of the params) names each leaf's group.

    >>> import zerax.optim as optim
    >>> tx = partition({"fast": optim.sgd(1.0), "frozen": optim.set_to_zero()},
    ...                {"w": "fast", "b": "frozen"})
    >>> tx.update({"w": 1.0, "b": 1.0}, tx.init({"w": 0.0, "b": 0.0}))[0]
    {'b': Array(0., dtype=float64), 'w': -1.0}
    """
    transforms = {k: with_extra_args_support(v) for k, v in transforms.items()}

    def make_mask(labels, group):
        return tree_util.tree_map(lambda label: label == group, labels)

    def init_fn(params):
        labels = param_labels(params) if callable(param_labels) else param_labels
        label_set = set(tree_util.tree_leaves(labels))
        if not label_set.issubset(transforms.keys()):
            raise errors.ZeraxValueError(
                f"Some parameters have no corresponding transformation.\nParameter labels: "
                f"{sorted(label_set, key=str)} \nTransforms keys: "
                f"{sorted(transforms.keys(), key=str)} \nAdd a transformation for each label.")
        return PartitionState({
            g: masked(tx, make_mask(labels, g),
                      mask_compatible_extra_args=mask_compatible_extra_args).init(params)
            for g, tx in transforms.items()})

    def update_fn(updates, state, params=None, **extra_args):
        check_state(state, PartitionState, "partition")
        labels = param_labels(updates) if callable(param_labels) else param_labels
        new_inner = {}
        for g, tx in transforms.items():
            mtx = masked(tx, make_mask(labels, g),
                         mask_compatible_extra_args=mask_compatible_extra_args)
            updates, new_inner[g] = mtx.update(updates, state.inner_states[g], params,
                                               **extra_args)
        return updates, PartitionState(new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)


multi_transform = partition


# ----------------------------------------------------------------------------- MultiSteps

def skip_not_finite(updates: Any, gradient_step: Any, params: Any) -> tuple[Any, Any]:
    """A `MultiSteps` ``should_skip_update_fn``: skip when an update is inf or nan.

    >>> bool(skip_not_finite([znp.asarray(float("nan"))], 0, None)[0])
    True
    """
    del gradient_step, params
    counts = [znp.sum(znp.logical_not(znp.isfinite(p))) for p in tree_util.tree_leaves(updates)]
    num = znp.sum(znp.stack(counts)) if counts else znp.asarray(0)
    skip = num > 0
    return skip, {"should_skip": skip, "num_not_finite": num}


def skip_large_updates(updates: Any, gradient_step: Any, params: Any,
                       max_squared_norm: Any) -> tuple[Any, Any]:
    """A `MultiSteps` ``should_skip_update_fn`` (bind ``max_squared_norm`` with
    functools.partial): skip when the squared norm of the updates reaches it.

    >>> bool(skip_large_updates([znp.asarray(3.0)], 0, None, 4.0)[0])
    True
    """
    del gradient_step, params
    norm_sq = znp.sum(znp.stack([znp.sum(p ** 2) for p in tree_util.tree_leaves(updates)]))
    skip = znp.logical_not(norm_sq < max_squared_norm)
    return skip, {"should_skip": skip, "norm_squared": norm_sq}


ShouldSkipUpdateFunction = Callable   # (updates, gradient_step, params) -> (bool, state)


class MultiStepsState(NamedTuple):
    """`MultiSteps`' counters, inner state, gradient accumulator and skip state."""
    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


class MultiSteps:
    """Gradient accumulation: average (or sum) the gradients of ``every_k_schedule``
    mini-steps and apply ``opt`` once per k; the other steps return zero updates.

    >>> import zerax.optim as optim
    >>> ms = MultiSteps(optim.sgd(1.0), every_k_schedule=2)
    >>> s = ms.init(znp.zeros(1))
    >>> u, s = ms.update(znp.asarray([1.0]), s); float(u[0]) == 0.0
    True
    >>> u, s = ms.update(znp.asarray([3.0]), s); float(u[0])
    -2.0
    """

    def __init__(self, opt: GradientTransformation,
                 every_k_schedule: Union[int, Callable[[Any], Any]],
                 use_grad_mean: bool = True, should_skip_update_fn: Any = None,
                 accumulator_dtype: Any = znp.float32):
        self._opt = with_extra_args_support(opt)
        if isinstance(every_k_schedule, int):
            self._every_k_schedule = lambda step: every_k_schedule
        else:
            self._every_k_schedule = every_k_schedule
        self._use_grad_mean = use_grad_mean
        self._accumulator_dtype = None if accumulator_dtype is None else znp.dtype(
            accumulator_dtype)
        if use_grad_mean:
            self._acc_update = lambda grad, acc, *, n_acc: acc + (grad - acc) / (n_acc + 1)
        else:
            self._acc_update = lambda grad, acc, *, n_acc: grad + acc
        if should_skip_update_fn is None:
            def should_skip_update_fn(*unused_args, **unused_kwargs):
                return znp.asarray(False), ()
        self._should_skip_update_fn = should_skip_update_fn

    @property
    def inner_opt(self):
        """The wrapped optimiser."""
        return self._opt

    def init(self, params: Any) -> MultiStepsState:
        """The initial state."""
        updates = otu.tree_zeros_like(params)
        gradient_step = znp.zeros([], znp.int32)
        _, skip_state = self._should_skip_update_fn(updates, gradient_step, params)
        return MultiStepsState(
            mini_step=znp.zeros([], znp.int32), gradient_step=gradient_step,
            inner_opt_state=self._opt.init(params),
            acc_grads=otu.tree_zeros_like(params, dtype=self._accumulator_dtype),
            skip_state=skip_state)

    def update(self, updates: Any, state: MultiStepsState, params: Any = None,
               **extra_args: Any) -> tuple[Any, MultiStepsState]:
        """Accumulate ``updates``; every k-th call apply the inner optimiser."""
        check_state(state, MultiStepsState, "MultiSteps")
        k_steps = self._every_k_schedule(state.gradient_step)
        should_skip, skip_state = self._should_skip_update_fn(updates, state.gradient_step,
                                                              params)
        should_skip = znp.asarray(should_skip)
        if (should_skip.dtype, should_skip.shape) != (znp.dtype(bool), ()):
            raise errors.ZeraxValueError(
                f"The `should_skip_update_fn` function should return a boolean scalar array, "
                f"but it returned an array of dtype {should_skip.dtype} and shape "
                f"{should_skip.shape}")
        acc_dtype = self._accumulator_dtype

        def do_update(updates, state, params):
            acc_grads = tree_util.tree_map(
                lambda u, a: self._acc_update(u, a, n_acc=state.mini_step),
                updates, state.acc_grads)
            final_updates, new_inner = self._opt.update(
                otu.tree_cast_like(acc_grads, updates), state.inner_opt_state,
                params=params, **extra_args)
            emit = state.mini_step == k_steps - 1
            # optax multiplies by the 0/1 flag (so a nan stays nan); keep that arithmetic.
            new_state = MultiStepsState(
                mini_step=(safe_increment(state.mini_step) % k_steps).astype(znp.int32),
                gradient_step=znp.where(emit, safe_increment(state.gradient_step),
                                        state.gradient_step),
                inner_opt_state=tree_util.tree_map(
                    lambda st, nst: znp.where(emit, nst, st).astype(znp.asarray(st).dtype),
                    state.inner_opt_state, new_inner),
                acc_grads=tree_util.tree_map(
                    lambda ga: ((1 - emit.astype(ga.dtype)) * ga).astype(acc_dtype or ga.dtype),
                    acc_grads),
                skip_state=skip_state)
            final_updates = tree_util.tree_map(lambda ga: emit.astype(ga.dtype) * ga,
                                               final_updates)
            return final_updates, new_state

        def skip_update(updates, state, params):
            acc_grads = otu.tree_cast_like(state.acc_grads, updates)
            shapes, _ = zerax.eval_shape(
                lambda a, s, p: self._opt.update(a, s, params=p, **extra_args),
                acc_grads, state.inner_opt_state, params)
            zero_updates = tree_util.tree_map(lambda s: znp.zeros(s.shape, s.dtype), shapes)
            return zero_updates, MultiStepsState(
                mini_step=state.mini_step, gradient_step=state.gradient_step,
                inner_opt_state=state.inner_opt_state, acc_grads=state.acc_grads,
                skip_state=skip_state)

        return lax.cond(should_skip, skip_update, do_update, updates, state, params)

    def has_updated(self, state: Any) -> Any:
        """Whether the last call applied the inner optimiser."""
        return znp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformation:
        """This accumulator as a `GradientTransformation`."""
        return GradientTransformationExtraArgs(init=self.init, update=self.update)


# ----------------------------------------------------------------------------- conditional

class ApplyIfFiniteState(NamedTuple):
    """Counters of non-finite updates, and the inner state."""
    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def apply_if_finite(inner: GradientTransformation,
                    max_consecutive_errors: int) -> GradientTransformationExtraArgs:
    """Apply ``inner`` only when all updates are finite (zero updates otherwise), unless
    more than ``max_consecutive_errors`` non-finite steps came in a row.

    >>> import zerax.optim as optim
    >>> tx = apply_if_finite(optim.sgd(1.0), 2)
    >>> u, s = tx.update(znp.asarray([float("nan")]), tx.init(znp.zeros(1)))
    >>> float(u[0]), int(s.total_notfinite)
    (0.0, 1)
    """
    inner = with_extra_args_support(inner)

    def init(params):
        return ApplyIfFiniteState(notfinite_count=znp.zeros([], znp.int32),
                                  last_finite=znp.asarray(True),
                                  total_notfinite=znp.zeros([], znp.int32),
                                  inner_state=inner.init(params))

    def update(updates, state, params=None, **extra_args):
        check_state(state, ApplyIfFiniteState, "apply_if_finite")
        inner_state = state.inner_state
        flat = tree_util.tree_leaves(updates)
        isfinite = znp.all(znp.stack([znp.all(znp.isfinite(p)) for p in flat]))
        notfinite_count = znp.where(isfinite, znp.zeros([], znp.int32),
                                    safe_increment(state.notfinite_count))

        def do_update(_):
            return inner.update(updates, inner_state, params, **extra_args)

        def reject_update(_):
            return otu.tree_zeros_like(updates), inner_state

        updates, new_inner = lax.cond(
            znp.logical_or(isfinite, notfinite_count > max_consecutive_errors),
            do_update, reject_update, None)
        return updates, ApplyIfFiniteState(
            notfinite_count=notfinite_count, last_finite=isfinite,
            total_notfinite=znp.where(isfinite, state.total_notfinite,
                                      safe_increment(state.total_notfinite)),
            inner_state=new_inner)
    return GradientTransformationExtraArgs(init=init, update=update)


class ConditionallyTransformState(NamedTuple):
    """The inner state and step count of `conditionally_transform`."""
    inner_state: Any
    step: Any


def conditionally_transform(inner: GradientTransformation, should_transform_fn: Callable,
                            forward_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply ``inner`` on steps where ``should_transform_fn(step)`` is True, pass the
    updates through unchanged otherwise.

    >>> import zerax.optim as optim
    >>> tx = conditionally_transform(optim.scale(2.0), lambda step: step >= 1)
    >>> s = tx.init(0.0); u, s = tx.update(znp.asarray(1.0), s)
    >>> float(u), float(tx.update(znp.asarray(1.0), s)[0])
    (1.0, 2.0)
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        return ConditionallyTransformState(inner_state=inner.init(params),
                                           step=znp.zeros([], znp.int32))

    def update_fn(updates, state, params=None, **extra_args):
        check_state(state, ConditionallyTransformState, "conditionally_transform")
        kw = extra_args if forward_extra_args else {}
        updates, new_inner = lax.cond(
            should_transform_fn(state.step, **kw),
            lambda _: inner.update(updates, state.inner_state, params, **extra_args),
            lambda _: (updates, state.inner_state), None)
        return updates, ConditionallyTransformState(new_inner, safe_increment(state.step))
    return GradientTransformationExtraArgs(init_fn, update_fn)


class ConditionallyMaskState(NamedTuple):
    """The step count and inner state of `conditionally_mask`."""
    step: Any
    inner_state: Any


def conditionally_mask(inner: GradientTransformation, should_transform_fn: Callable,
                       forward_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply ``inner`` on steps where ``should_transform_fn(step)`` is True, zero the
    updates otherwise.

    >>> import zerax.optim as optim
    >>> tx = conditionally_mask(optim.scale(2.0), lambda step: step >= 1)
    >>> float(tx.update(znp.asarray(1.0), tx.init(0.0))[0])
    0.0
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        return ConditionallyMaskState(step=znp.zeros([], znp.int32),
                                      inner_state=inner.init(params))

    def update_fn(updates, state, params=None, **extra_args):
        check_state(state, ConditionallyMaskState, "conditionally_mask")
        kw = extra_args if forward_extra_args else {}
        updates, new_inner = lax.cond(
            should_transform_fn(state.step, **kw),
            lambda _: inner.update(updates, state.inner_state, params, **extra_args),
            lambda _: (otu.tree_zeros_like(updates), state.inner_state), None)
        return updates, ConditionallyMaskState(step=safe_increment(state.step),
                                               inner_state=new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)


# ----------------------------------------------------------------------------- lookahead

class LookaheadState(NamedTuple):
    """The fast optimiser's state and the steps since the last synchronisation."""
    fast_state: Any
    steps_since_sync: Any


class LookaheadParams(NamedTuple):
    """The fast and slow parameters that `lookahead` updates together."""
    fast: Any
    slow: Any

    @classmethod
    def init_synced(cls, params: Any) -> "LookaheadParams":
        """Fast and slow parameters both equal to ``params``."""
        return cls(slow=params, fast=params)


def lookahead(fast_optimizer: GradientTransformation, sync_period: int,
              slow_step_size: Any, reset_state: bool = False) -> GradientTransformation:
    """Lookahead: the fast optimiser runs ``sync_period`` steps, then the slow weights move
    ``slow_step_size`` of the way to the fast ones and the fast weights are reset to them.
    Parameters are `LookaheadParams`.

    >>> import zerax.optim as optim
    >>> tx = lookahead(optim.sgd(1.0), sync_period=1, slow_step_size=0.5)
    >>> p = LookaheadParams.init_synced(znp.asarray(0.0))
    >>> u, s = tx.update(znp.asarray(1.0), tx.init(p), p)   # the gradient at p.fast
    >>> float(optim.apply_updates(p, u).slow)
    -0.5
    """
    if sync_period < 1:
        raise errors.ZeraxValueError("Synchronization period must be >= 1.")

    def init_fn(params):
        fast = getattr(params, "fast", None)
        if fast is None:
            fast = params
        return LookaheadState(fast_state=fast_optimizer.init(fast),
                              steps_since_sync=znp.zeros((), znp.int32))

    def update_fn(updates, state, params):
        check_state(state, LookaheadState, "lookahead")
        if not isinstance(params, LookaheadParams):
            raise errors.ZeraxTypeError(
                "lookahead.update needs params=LookaheadParams(fast=..., slow=...); build "
                "them with LookaheadParams.init_synced(params).")
        ups, fast_state = fast_optimizer.update(updates, state.fast_state, params.fast)
        sync_next = state.steps_since_sync == sync_period - 1
        last_diff = tree_util.tree_map(lambda f, u, s: f + u - s, params.fast, ups, params.slow)
        slow_updates = tree_util.tree_map(lambda d: slow_step_size * sync_next * d, last_diff)
        fast_updates = tree_util.tree_map(
            lambda up, d: up - sync_next * (1 - slow_step_size) * d, ups, last_diff)
        if reset_state:
            initial = fast_optimizer.init(params.fast)
            fast_state = tree_util.tree_map(
                lambda cur, ini: (1 - sync_next) * cur + sync_next * ini, fast_state, initial)
        steps = (state.steps_since_sync + 1) % sync_period
        return LookaheadParams(fast=fast_updates, slow=slow_updates), LookaheadState(
            fast_state, steps)
    return GradientTransformation(init_fn, update_fn)



# ----------------------------------------------------------------------------- freezing

def freeze(mask: Any) -> GradientTransformationExtraArgs:
    """Zero the updates of the leaves where ``mask`` is True (optax's ``freeze``).

    >>> import zerax.optim as optim
    >>> tx = optim.chain(optim.freeze({"a": True, "b": False}), optim.sgd(1.0))
    >>> tx.update({"a": 1.0, "b": 1.0}, tx.init({"a": 0.0, "b": 0.0}))[0]["b"]
    -1.0
    """
    return masked(set_to_zero(), mask)


def selective_transform(optimizer: GradientTransformation, *,
                        freeze_mask: Any) -> GradientTransformationExtraArgs:
    """Apply ``optimizer`` to the leaves where ``freeze_mask`` is False and zero the others.

    >>> import zerax.optim as optim
    >>> tx = selective_transform(optim.sgd(1.0), freeze_mask={"a": True, "b": False})
    >>> float(tx.update({"a": 1.0, "b": 1.0}, tx.init({"a": 0.0, "b": 0.0}))[0]["a"])
    0.0
    """
    def label_fn(params):
        del params
        return tree_util.tree_map(lambda m: "freeze" if m else "train", freeze_mask)
    return partition({"train": optimizer, "freeze": set_to_zero()}, param_labels=label_fn)


def flatten(inner: GradientTransformation) -> GradientTransformationExtraArgs:
    """Run ``inner`` on the updates (and params) raveled into one vector (fewer, larger
    operations for trees of many small leaves).

    >>> import zerax.optim as optim
    >>> tx = flatten(optim.adam(0.1))
    >>> u, s = tx.update({"a": znp.ones(2), "b": znp.ones(3)}, tx.init({"a": znp.zeros(2),
    ...                                                                 "b": znp.zeros(3)}))
    >>> s[0].mu.shape, u["b"].shape
    ((5,), (3,))
    """
    inner = with_extra_args_support(inner)

    def ravel(tree):
        return znp.concatenate([znp.reshape(leaf, (-1,)) for leaf in tree_util.tree_leaves(tree)])

    def unravel(like, flat):
        leaves, treedef = tree_util.tree_flatten(like)
        out, start = [], 0
        for leaf in leaves:
            size = int(znp.size(leaf))
            out.append(znp.reshape(flat[start:start + size], znp.shape(leaf)))
            start += size
        return tree_util.tree_unflatten(treedef, out)

    def init_fn(params):
        return inner.init(ravel(params))

    def update_fn(updates, state, params=None, **extra_args):
        flat_params = None if params is None else ravel(params)
        flat, state = inner.update(ravel(updates), state, flat_params, **extra_args)
        return unravel(updates, flat), state
    return GradientTransformationExtraArgs(init_fn, update_fn)


def scale_gradient(inputs: Any, scale: Any) -> Any:
    """``inputs`` unchanged on the forward pass, its gradient multiplied by ``scale`` on
    the backward pass (optax's ``scale_gradient``).

    >>> import zerax as zx
    >>> float(zx.grad(lambda x: scale_gradient(x, 0.5) ** 2)(3.0))
    3.0
    """
    if isinstance(scale, (int, float)) and scale == 1.0:
        return inputs
    if isinstance(scale, (int, float)) and scale == 0.0:
        return tree_util.tree_map(lax.stop_gradient, inputs)

    @zerax.custom_jvp
    def identity(x):          # exactly x forward; scale * tangent in every derivative
        return x

    @identity.defjvp
    def _(primals, tangents):
        return primals[0], scale * tangents[0]
    return tree_util.tree_map(identity, inputs)
