"""The optimiser vocabulary of `zerax.optim`: gradient transformations, ``chain``,
``apply_updates``, the empty state, the safe step counter, and the checks that turn a
wrong state or a mismatched tree into a clear `zerax.errors` exception.

A transformation is optax's pair of pure functions ``init(params) -> state`` and
``update(updates, state, params=None) -> (updates, state)``; states are pytrees
(NamedTuples with optax's field names), so they jit, vmap and checkpoint.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, NamedTuple, Optional

import zerax.numpy as znp
from .. import errors, lax, tree_util

PyTree = Any
Params = Any
Updates = Any
OptState = Any
Schedule = Callable[[Any], Any]
ScalarOrSchedule = Any

NO_PARAMS_MSG = (
    "You are using a transformation that requires the current value of parameters, but "
    "you are not passing `params` when calling `update`.")


class GradientTransformation(NamedTuple):
    """A pair of pure functions ``init(params) -> state`` and
    ``update(updates, state, params=None) -> (new_updates, new_state)`` (optax's).

    >>> import zerax.optim as optim
    >>> tx = optim.scale(-0.1)
    >>> tx.update({"w": 1.0}, tx.init({"w": 1.0}))[0]
    {'w': -0.1}
    """
    init: Callable
    update: Callable


class GradientTransformationExtraArgs(GradientTransformation):
    """A `GradientTransformation` whose ``update`` also takes keyword ``**extra_args``
    (``value=``, ``grad=``, ``value_fn=`` ...), passed on by `chain` to the
    transformations that use them.

    >>> import zerax.optim as optim
    >>> isinstance(optim.adam(1e-3), optim.GradientTransformationExtraArgs)
    True
    """


class EmptyState(NamedTuple):
    """The state of a stateless transformation (no leaves)."""


def init_empty_state(params: Params) -> EmptyState:
    """``init`` of a stateless transformation.

    >>> init_empty_state({"w": 1.0})
    EmptyState()
    """
    del params
    return EmptyState()


# ----------------------------------------------------------------------------- errors

def _fail_state(name: str, expected: str, state: Any) -> None:
    got = type(state).__name__
    raise errors.OptimizerStateError(
        f"{name}.update received a state of type {got}, but it expects {expected}. The state "
        f"was made by another optimiser (or another position in a chain): pass the state "
        f"returned by this optimiser's own init/update.")


def check_state(state: Any, cls: type, name: str) -> None:
    """Raise `OptimizerStateError` unless ``state`` is an instance of ``cls``."""
    if not isinstance(state, cls):
        _fail_state(name, cls.__name__, state)


def _first_mismatch(a: PyTree, b: PyTree) -> str:
    """A readable path of the first place where trees ``a`` and ``b`` differ."""
    pa, _ = tree_util.tree_flatten_with_path(a, is_leaf=lambda x: x is None)
    pb, _ = tree_util.tree_flatten_with_path(b, is_leaf=lambda x: x is None)
    keys_a = [tree_util.keystr(p) for p, _ in pa]
    keys_b = [tree_util.keystr(p) for p, _ in pb]
    set_b = set(keys_b)
    set_a = set(keys_a)
    for k in keys_a:
        if k not in set_b:
            return f"{k or '<root>'} is in the {'{a}'} tree but not in the {'{b}'} tree"
    for k in keys_b:
        if k not in set_a:
            return f"{k or '<root>'} is in the {'{b}'} tree but not in the {'{a}'} tree"
    return "the containers differ in kind or order"


def check_same_tree(name: str, a: PyTree, a_name: str, b: PyTree, b_name: str) -> None:
    """Raise `zerax.errors.TreeMismatchError` naming the first differing path when
    pytrees ``a`` and ``b`` do not have the same structure."""
    sa = tree_util.tree_structure(a)
    sb = tree_util.tree_structure(b)
    if sa == sb:
        return
    where = _first_mismatch(a, b).replace("{a}", a_name).replace("{b}", b_name)
    raise errors.TreeMismatchError(
        f"{name}: the {a_name} and {b_name} trees do not match ({where}).\n"
        f"  {a_name}: {sa}\n  {b_name}: {sb}\n"
        f"Pass {a_name} with the same structure as the {b_name} the optimiser state was "
        f"initialised with.")


def _is_none(x) -> bool:
    return x is None


def params_for_updates(name: str, updates: PyTree, params: PyTree) -> PyTree:
    """``params`` cut to the structure of ``updates``: where an update is ``None`` the
    parameter (whatever it is: a model's activation function, a flag, a frozen array)
    becomes ``None`` too. This is optax's convention (its transformations map over the
    updates with ``None`` as a leaf), which lets a whole Equinox-style model be the
    ``params`` of ``update(grads, state, model)``.

    >>> params_for_updates("t", [1.0, None], [2.0, print])
    [2.0, None]
    """
    if tree_util.tree_structure(updates) == tree_util.tree_structure(params):
        return params
    try:
        return tree_util.tree_map(lambda u, p: None if u is None else p, updates, params,
                                  is_leaf=_is_none)
    except (ValueError, TypeError):
        check_same_tree(name, updates, "updates", params, "params")
        raise


def check_scalar(value: Any, what: str) -> Any:
    """Raise `ShapeError` unless ``value`` (a schedule's result) is a scalar."""
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = znp.shape(value)
    if tuple(shape) != ():
        raise errors.ShapeError(
            f"{what} returned a value of shape {tuple(shape)}; a schedule or hyper-parameter "
            f"must be a scalar. Return one number per step (e.g. reduce with .mean() or "
            f"index the value you meant).")
    return value


# ----------------------------------------------------------------------------- numerics

def safe_increment(count: Any) -> Any:
    """``count + 1`` that stops at the dtype's largest value instead of wrapping
    (optax's ``safe_increment``; counts are int32).

    >>> int(safe_increment(znp.asarray(2147483647, znp.int32)))
    2147483647
    """
    count = znp.asarray(count)
    dtype = count.dtype
    if znp.issubdtype(dtype, znp.integer):
        max_value = znp.iinfo(dtype).max
    elif znp.issubdtype(dtype, znp.floating):
        max_value = znp.finfo(dtype).max
    else:
        raise errors.ZeraxTypeError(
            f"Cannot safely increment a count of dtype {dtype}; use an integer or float count.")
    max_value = znp.asarray(max_value, dtype)
    return znp.where(count < max_value, count + znp.asarray(1, dtype), max_value)


safe_int32_increment = safe_increment


def abs_sq(x: Any) -> Any:
    """``|x|**2`` elementwise (real part of ``conj(x) * x``).

    >>> float(abs_sq(znp.asarray(-3.0)))
    9.0
    """
    x = znp.asarray(x)
    if znp.iscomplexobj(x):
        return znp.real(znp.conj(x) * x)
    return x * x


def safe_norm(x: Any, min_norm: Any, ord: Any = None, axis: Any = None,
              keepdims: bool = False) -> Any:
    """``max(norm(x), min_norm)`` whose gradient is finite at 0 (optax's ``safe_norm``).

    >>> float(safe_norm(znp.zeros(3), 1e-3))
    0.001
    """
    x = znp.asarray(x)
    norm = znp.linalg.norm(x, ord=ord, axis=axis, keepdims=True)
    x = znp.where(norm <= min_norm, znp.ones_like(x), x)
    norm = znp.squeeze(norm, axis=axis) if not keepdims else norm
    masked_norm = znp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    return znp.where(norm <= min_norm, min_norm, masked_norm)


def safe_root_mean_squares(x: Any, min_rms: Any) -> Any:
    """``max(rms(x), min_rms)`` with a finite gradient at 0 (optax's).

    >>> round(float(safe_root_mean_squares(znp.asarray([3.0, 4.0]), 1e-3)) ** 2, 12)
    12.5
    """
    x = znp.asarray(x)
    rms = znp.sqrt(znp.mean(abs_sq(x)))
    x = znp.where(rms <= min_rms, znp.ones_like(x), x)
    return znp.where(rms <= min_rms, min_rms, znp.sqrt(znp.mean(abs_sq(x))))


# ----------------------------------------------------------------------------- basics

def identity() -> GradientTransformation:
    """The transformation that returns the updates unchanged.

    >>> identity().update(1.0, EmptyState())
    (1.0, EmptyState())
    """
    def update_fn(updates, state, params=None):
        del params
        return updates, state
    return GradientTransformation(init_empty_state, update_fn)


def set_to_zero() -> GradientTransformation:
    """The transformation that sets every update to zero (freezes parameters).

    >>> float(set_to_zero().update(znp.asarray(3.0), EmptyState())[0])
    0.0
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(znp.zeros_like, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def stateless(f: Callable[[Updates, Optional[Params]], Updates]) -> GradientTransformation:
    """A stateless transformation from ``f(updates, params) -> updates``.

    >>> tx = stateless(lambda u, p: tree_util.tree_map(lambda x: 2 * x, u))
    >>> tx.update([1.0], tx.init([0.0]))[0]
    [2.0]
    """
    def update_fn(updates, state, params=None):
        del state
        return f(updates, params), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


def stateless_with_tree_map(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A stateless transformation applying ``f(update_leaf, param_leaf_or_None)`` per leaf.

    >>> tx = stateless_with_tree_map(lambda u, p: -u)
    >>> tx.update([1.0], tx.init([0.0]))[0]
    [-1.0]
    """
    def update_fn(updates, state, params=None):
        del state
        if params is not None:
            return tree_util.tree_map(f, updates, params), EmptyState()
        return tree_util.tree_map(lambda u: f(u, None), updates), EmptyState()
    return GradientTransformation(init_empty_state, update_fn)


# The extra arguments of the update protocol: what a training loop passes to every
# optimiser (`update(g, s, p, value=loss, grad=g, value_fn=f, residual_fn=r)`). A
# transformation that does not use one of them ignores it (optax's rule for
# transformations without extra arguments); other keywords are data for the loss
# functions (a batch...), passed to those that accept them.
EXTRA_ARG_NAMES = frozenset({"value", "grad", "value_fn", "residual_fn"})


def loss_data(extra: dict) -> dict:
    """The keyword arguments meant for the loss functions: ``extra`` without the update
    protocol's own `EXTRA_ARG_NAMES`.

    >>> loss_data({"value": 1.0, "batch": 2})
    {'batch': 2}
    """
    return {k: v for k, v in extra.items() if k not in EXTRA_ARG_NAMES}


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """Wrap ``tx`` so that its ``update`` accepts (and ignores) ``**extra_args``.

    >>> isinstance(with_extra_args_support(identity()), GradientTransformationExtraArgs)
    True
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx
    if not (isinstance(tx, tuple) and len(tx) == 2 and callable(tx[0]) and callable(tx[1])):
        raise errors.ZeraxTypeError(
            f"Expected a GradientTransformation (an (init, update) pair), got "
            f"{type(tx).__name__}. Build one with a zerax.optim factory such as "
            f"zerax.optim.adam(1e-3).")

    def update(updates, state, params=None, **extra_args):
        del extra_args
        return tx.update(updates, state, params)
    return GradientTransformationExtraArgs(tx.init, update)


def chain(*args: GradientTransformation) -> GradientTransformationExtraArgs:
    """Apply transformations one after the other; the state is the tuple of their states.

    >>> import zerax.optim as optim
    >>> tx = optim.chain(optim.clip(1.0), optim.scale(-0.5))
    >>> float(tx.update(znp.asarray(4.0), tx.init(znp.asarray(0.0)))[0])
    -0.5
    """
    transforms = [with_extra_args_support(t) for t in args]
    init_fns = [t.init for t in transforms]
    update_fns = [t.update for t in transforms]

    def init_fn(params):
        return tuple(fn(params) for fn in init_fns)

    def update_fn(updates, state, params=None, **extra_args):
        if not isinstance(state, tuple) or len(update_fns) != len(state):
            n = len(state) if isinstance(state, tuple) else type(state).__name__
            raise errors.OptimizerStateError(
                f"chain of {len(update_fns)} transformations received a state with "
                f"{n} parts: the state was made by another optimiser. Pass the state "
                f"returned by this chain's init.")
        new_state = []
        for s, fn in zip(state, update_fns):
            updates, new_s = fn(updates, s, params, **extra_args)
            new_state.append(new_s)
        return updates, tuple(new_state)
    return GradientTransformationExtraArgs(init_fn, update_fn)


def named_chain(*args: tuple[str, GradientTransformation]) -> GradientTransformationExtraArgs:
    """`chain` whose state is an ordered dict keyed by the given names.

    >>> import zerax.optim as optim
    >>> tx = named_chain(("clip", optim.clip(1.0)), ("lr", optim.scale(-1.0)))
    >>> list(tx.init(0.0))
    ['clip', 'lr']
    """
    names = [name for name, _ in args]
    if len(names) != len(set(names)):
        raise errors.ZeraxValueError(
            f"Named transformations must have unique names, but got {names}")
    transforms = [(name, with_extra_args_support(t)) for name, t in args]

    def init_fn(params):
        states = collections.OrderedDict()
        for name, tx in transforms:
            states[name] = tx.init(params)
        return states

    def update_fn(updates, state, params=None, **extra_args):
        new_state = collections.OrderedDict()
        for name, tx in transforms:
            if name not in state:
                raise errors.OptimizerStateError(
                    f"named_chain: the state has no entry {name!r}; it was made by another "
                    f"optimiser. Pass the state returned by this named_chain's init.")
            updates, new_state[name] = tx.update(updates, state[name], params, **extra_args)
        return updates, new_state
    return GradientTransformationExtraArgs(init_fn, update_fn)


def apply_updates(params: Params, updates: Updates) -> Params:
    """``params + updates`` leaf by leaf, keeping each parameter's dtype (optax's); a
    leaf whose update is ``None`` (a whole model's activation function...) is kept.

    >>> apply_updates({"w": znp.asarray(1.0)}, {"w": znp.asarray(-0.25)})["w"].item()
    0.75
    """
    if tree_util.tree_structure(updates) != tree_util.tree_structure(params):
        # a whole model as params: its leaves without an update (None) stay as they are
        params_for_updates("apply_updates", updates, params)   # (checks the structures)
        return tree_util.tree_map(lambda u, p: p if u is None else _add_update(p, u),
                                  updates, params, is_leaf=_is_none)
    return tree_util.tree_map(lambda p, u: None if p is None else _add_update(p, u),
                              params, updates, is_leaf=_is_none)


def _add_update(p, u):
    return znp.asarray(p + u).astype(znp.asarray(p).dtype)


def incremental_update(new_tensors: Params, old_tensors: Params, step_size: Any) -> Params:
    """``step_size * new + (1 - step_size) * old`` per leaf (Polyak averaging).

    >>> float(incremental_update(znp.asarray(1.0), znp.asarray(0.0), 0.25))
    0.25
    """
    check_same_tree("incremental_update", new_tensors, "new_tensors", old_tensors,
                    "old_tensors")
    return tree_util.tree_map(
        lambda new, old: None if new is None else step_size * new + (1.0 - step_size) * old,
        new_tensors, old_tensors, is_leaf=lambda x: x is None)


def periodic_update(new_tensors: Params, old_tensors: Params, steps: Any,
                    update_period: int) -> Params:
    """``new_tensors`` on steps that are multiples of ``update_period``, else ``old``.

    >>> float(periodic_update(znp.asarray(1.0), znp.asarray(0.0), 4, 2))
    1.0
    """
    return lax.cond(
        znp.mod(steps, update_period) == 0,
        lambda _: new_tensors,
        lambda _: old_tensors,
        None)
