"""Equinox's filters for `zerax.nn`: `is_array`, `is_inexact_array`, `filter`,
`partition`, `combine`, `apply_updates`.

A model mixes arrays with Python objects (activation functions, sizes, flags); filtering
splits a pytree into the part a transform should see and the rest, with ``None`` in the
holes, and `combine` puts the parts back together.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import zerax as zx
from .. import errors
from .. import tree_util as jtu

__all__ = ["is_array", "is_array_like", "is_inexact_array", "is_inexact_array_like", "filter",
           "partition", "combine", "apply_updates"]


def is_array(element: Any) -> bool:
    """True for arrays: zerax arrays (concrete or traced) and NumPy arrays/scalars.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.is_array(znp.ones(2)), nn.is_array(1.0), nn.is_array(np.float32(1))
    (True, False, True)
    """
    return isinstance(element, (zx.Array, np.ndarray, np.generic)) or (
        hasattr(element, "aval") and hasattr(element, "shape") and hasattr(element, "dtype"))


def is_array_like(element: Any) -> bool:
    """True for arrays and Python numbers (``bool``, ``int``, ``float``, ``complex``).

    >>> import zerax.nn as nn
    >>> nn.is_array_like(1.0), nn.is_array_like("a")
    (True, False)
    """
    return is_array(element) or isinstance(element, (bool, int, float, complex))


def is_inexact_array(element: Any) -> bool:
    """True for arrays of a floating or complex dtype (what gradients are taken for).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.is_inexact_array(znp.ones(2)), nn.is_inexact_array(znp.arange(2))
    (True, False)
    """
    return is_array(element) and np.issubdtype(np.dtype(element.dtype), np.inexact)


def is_inexact_array_like(element: Any) -> bool:
    """True for inexact arrays and Python ``float``/``complex``.

    >>> import zerax.nn as nn
    >>> nn.is_inexact_array_like(1.0), nn.is_inexact_array_like(1)
    (True, False)
    """
    if is_array(element):
        return is_inexact_array(element)
    return isinstance(element, (float, complex))


def _filter_tree(filter_spec, pytree, is_leaf):
    def one(mask, sub):
        if is_array(mask) and not isinstance(mask, (np.ndarray, np.generic, zx.Array)):
            raise errors.ZeraxValueError("filter_spec leaves cannot be traced arrays")
        if isinstance(mask, (bool, np.bool_)):
            return jtu.tree_map(lambda _: bool(mask), sub, is_leaf=is_leaf)
        if callable(mask):
            return jtu.tree_map(mask, sub, is_leaf=is_leaf)
        raise errors.ZeraxValueError(
            f"filter_spec must be made of booleans and callables, got {mask!r}")
    return jtu.tree_map(one, filter_spec, pytree, is_leaf=lambda x: x is None)


def filter(pytree: Any, filter_spec: Any, inverse: bool = False, replace: Any = None,
           is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Keep the leaves of ``pytree`` where ``filter_spec`` (a bool, a callable on leaves, or a
    prefix tree of those) is true; the others become ``replace`` (Equinox's ``filter``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.filter([znp.ones(2), 3, "a"], nn.is_array)
    [Array([1., 1.], dtype=float64), None, None]
    """
    inverse = bool(inverse)
    mask = _filter_tree(filter_spec, pytree, is_leaf)
    return jtu.tree_map(lambda m, x: x if bool(m) != inverse else replace, mask, pytree,
                        is_leaf=is_leaf)


def partition(pytree: Any, filter_spec: Any, replace: Any = None,
              is_leaf: Callable[[Any], bool] | None = None) -> tuple[Any, Any]:
    """Split ``pytree`` in two: the leaves ``filter_spec`` selects, and the rest
    (Equinox's ``partition``); `combine` inverts it.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> params, static = nn.partition([znp.ones(1), "relu"], nn.is_array)
    >>> static, nn.combine(params, static)[1]
    ([None, 'relu'], 'relu')
    """
    mask = _filter_tree(filter_spec, pytree, is_leaf)
    left = jtu.tree_map(lambda m, x: x if m else replace, mask, pytree, is_leaf=is_leaf)
    right = jtu.tree_map(lambda m, x: replace if m else x, mask, pytree, is_leaf=is_leaf)
    return left, right


def _first_not_none(*xs):
    for x in xs:
        if x is not None:
            return x
    return None


def combine(*pytrees: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Merge pytrees of the same structure, taking at each leaf the first non-``None``
    value (Equinox's ``combine``).

    >>> import zerax.nn as nn
    >>> nn.combine([1, None, None], [None, 2, None])
    [1, 2, None]
    """
    if not pytrees:
        raise errors.ZeraxValueError("combine needs at least one pytree")
    if is_leaf is None:
        leaf = lambda x: x is None  # noqa: E731
    else:
        leaf = lambda x: x is None or is_leaf(x)  # noqa: E731
    return jtu.tree_map(_first_not_none, *pytrees, is_leaf=leaf)


def apply_updates(model: Any, updates: Any) -> Any:
    """``model + updates`` leaf by leaf, where ``updates`` has ``None`` for leaves that do not
    change (non-arrays, frozen parameters), as Equinox's ``apply_updates``.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.apply_updates([znp.ones(2), "relu"], [znp.ones(2), None])
    [Array([2., 2.], dtype=float64), 'relu']
    """
    def one(u, p):
        return p if u is None else p + u
    return jtu.tree_map(one, updates, model, is_leaf=lambda x: x is None)
