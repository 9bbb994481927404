"""Explicit layer state for `zerax.nn` (Equinox's ``State``, ``StateIndex``,
``make_with_state``): running statistics of BatchNorm and the like live in a `State` pytree
that is passed into a layer and returned updated, never stored in the (immutable) model.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import zerax.numpy as znp
from .. import errors
from .. import tree_util as jtu

from ._tree import tree_at
from ._module import Module, field

__all__ = ["State", "StateIndex", "make_with_state", "delete_init_state"]


class _Sentinel(Module):
    pass


_sentinel = _Sentinel()

_OLD_STATE = ("this State was already used: State.set/update return a new State and retire "
              "the old one. Pass the State returned by the previous call (x, state = "
              "layer(x, state)); to keep an old one on purpose, copy it first with "
              "tree_unflatten(*reversed(tree_flatten(state))).")


class StateIndex(Module):
    """The key of one piece of state, holding its initial value (Equinox's ``StateIndex``).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> class Counter(nn.Module):
    ...     index: nn.StateIndex
    ...     def __init__(self):
    ...         self.index = nn.StateIndex(znp.array(0))
    ...     def __call__(self, x, state):
    ...         n = state.get(self.index)
    ...         return x + n, state.set(self.index, n + 1)
    >>> counter, state = nn.make_with_state(Counter)()
    >>> _, state = counter(1, state)
    >>> int(state.get(counter.index))
    1
    """

    marker: object = field(static=True)
    init: Any

    def __init__(self, init: Any):
        if callable(init) and not isinstance(init, Module):
            raise errors.ZeraxValueError(
                "StateIndex takes the initial value of the state itself, not a function that "
                "makes it")
        self.marker = object()
        self.init = init


def _is_index(x) -> bool:
    return isinstance(x, StateIndex)


def _asarray(x):
    return znp.asarray(x)


class State:
    """The state of a model's stateful layers: a pytree mapping each `StateIndex` to its
    current value. Build it with `make_with_state`; `get` reads, `set` returns a new State.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> bn, state = nn.make_with_state(nn.BatchNorm)(3, "batch", mode="batch")
    >>> type(state).__name__, len(zx.tree_util.tree_leaves(state))
    ('State', 3)
    """

    def __init__(self, model: Any):
        state = {}
        for leaf in jtu.tree_leaves(model, is_leaf=_is_index):
            if _is_index(leaf):
                if isinstance(leaf.init, _Sentinel):
                    raise errors.ZeraxValueError(
                        "do not call nn.State(model) on a model made by make_with_state; "
                        "call nn.make_with_state(ModelClass)(...args...) instead")
                state[leaf.marker] = jtu.tree_map(_asarray, leaf.init)
        self._state: Any = state

    def _live(self) -> dict:
        if isinstance(self._state, _Sentinel):
            raise errors.ZeraxValueError(_OLD_STATE)
        return self._state

    def get(self, item: StateIndex) -> Any:
        """The current value of the state at ``item``."""
        state = self._live()
        if type(item) is not StateIndex:
            raise errors.ZeraxTypeError("State.get takes an nn.StateIndex")
        if item.marker not in state:
            raise errors.ZeraxValueError(
                "this StateIndex is not part of this State (was the State made from this "
                "model?)")
        return state[item.marker]

    def set(self, item: StateIndex, value: Any) -> "State":
        """A new State with ``value`` at ``item`` (same structure, shapes and dtypes as
        before); this State is retired."""
        state = self._live()
        old = self.get(item)
        value = jtu.tree_map(_asarray, value)
        o_leaves, o_def = jtu.tree_flatten(old)
        n_leaves, n_def = jtu.tree_flatten(value)
        if o_def != n_def or any(a.shape != b.shape or np.dtype(a.dtype) != np.dtype(b.dtype)
                                 for a, b in zip(o_leaves, n_leaves)):
            raise errors.ZeraxValueError(
                "State.set: the new value has a different structure, shape or dtype than the "
                f"old one: old {_describe(old)}, new {_describe(value)}")
        new = dict(state)
        new[item.marker] = value
        out = object.__new__(State)
        out._state = new
        self._state = _sentinel
        return out

    def substate(self, pytree: Any) -> "State":
        """The part of this State used by the `StateIndex`es found in ``pytree``."""
        state = self._live()
        markers = [x.marker for x in jtu.tree_leaves(pytree, is_leaf=_is_index) if _is_index(x)]
        out = object.__new__(State)
        out._state = {k: state[k] for k in markers}
        return out

    def update(self, substate: "State") -> "State":
        """A new State with the values of ``substate`` (from `substate`) written back."""
        state = self._live()
        if type(substate) is not State:
            raise errors.ZeraxTypeError("State.update takes an nn.State")
        new = dict(state)
        for k, v in substate._live().items():
            if k not in new:
                raise errors.ZeraxValueError(
                    "state1.update(state2) needs state2 to be a substate of state1")
            new[k] = v
        out = object.__new__(State)
        out._state = new
        self._state = _sentinel
        return out

    def __repr__(self):
        if isinstance(self._state, _Sentinel):
            return "State(~old~)"
        return "State(" + ", ".join(f"{k}: {_describe(v)}" for k, v in self._state.items()) + ")"


def _describe(v) -> str:
    return repr(jtu.tree_map(
        lambda a: f"{np.dtype(a.dtype).name}{list(a.shape)}" if hasattr(a, "shape") else a, v))


def _state_unflatten(keys, values):
    out = object.__new__(State)
    out._state = dict(zip(keys, values))
    return out


jtu.register_pytree_with_keys(
    State, lambda s: ([(jtu.DictKey(str(k)), v) for k, v in zip(*_keys_vals(s))],
                      tuple(s._live())),
    _state_unflatten)


def _keys_vals(s):
    state = s._live()
    keys = tuple(state)
    return keys, [state[k] for k in keys]


def delete_init_state(model: Any) -> Any:
    """``model`` with the initial values held by its `StateIndex`es removed (they live in
    the `State` once it is made), as Equinox's ``delete_init_state``.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> bn = nn.BatchNorm(2, "batch", mode="batch")
    >>> len(zx.tree_util.tree_leaves(nn.delete_init_state(bn))) < len(zx.tree_util.tree_leaves(bn))
    True
    """
    def one(x):
        return tree_at(lambda y: y.init, x, _sentinel) if _is_index(x) else x
    return jtu.tree_map(one, model, is_leaf=_is_index)


def make_with_state(make_model: Callable) -> Callable:
    """Wrap a model constructor so that it returns ``(model, state)``: the `State` holding
    every `StateIndex`'s initial value, and the model without them (Equinox's
    ``make_with_state``). State keys are the indexes' paths in the model, so the same
    construction gives the same keys.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> bn, state = nn.make_with_state(nn.BatchNorm)(2, "batch", mode="batch")
    >>> print(repr(state).replace(", B", ",\\nB"))
    State(BatchNorm.batch_counter: 'int32[]',
    BatchNorm.batch_state_index: ('float32[2]', 'float32[2]'))
    """
    def impl(*args, **kwargs):
        model = make_model(*args, **kwargs)
        keyed, treedef = jtu.tree_flatten_with_path(model, is_leaf=_is_index)
        leaves = []
        for path, leaf in keyed:
            if _is_index(leaf):
                leaf = StateIndex(leaf.init)
                object.__setattr__(leaf, "marker",
                                   type(model).__name__ + jtu.keystr(path))
            leaves.append(leaf)
        model = jtu.tree_unflatten(treedef, leaves)
        state = State(model)
        return delete_init_state(model), state
    return impl
