"""Equinox's filters and tree surgery for `zerax.nn`: `is_array`, `is_inexact_array`,
`filter`, `partition`, `combine`, `tree_at`, `inference_mode`.

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
           "partition", "combine", "tree_at", "inference_mode", "apply_updates",
           "tree_equal"]


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


# ------------------------------------------------------------------ tree_at
class _Marker:
    """Stands for a leaf (or a childless node) of the tree while ``where`` runs."""

    __slots__ = ("path", "value")

    def __init__(self, path, value):
        self.path = path
        self.value = value

    def __getattr__(self, name):
        # An AttributeError (so hasattr works), saying why the leaf has no attribute.
        raise AttributeError(
            f"tree_at: `where` looked at attribute {name!r} of a leaf; `where` must only "
            "select nodes of the pytree, not depend on the leaves' values")


def _children(node, is_leaf):
    """(children, treedef) one level down, or None for a leaf / childless node."""
    if is_leaf is not None and is_leaf(node):
        return None
    leaves, treedef = jtu.tree_flatten(node, is_leaf=lambda x: x is not node)
    if len(leaves) == 1 and leaves[0] is node:
        return None
    if not leaves:
        return None
    return leaves, treedef


def _mark(node, path, is_leaf, ids):
    sub = _children(node, is_leaf)
    if sub is None:
        m = _Marker(path, node)
        ids[id(m)] = (path, m)
        return m
    leaves, treedef = sub
    out = jtu.tree_unflatten(treedef, [_mark(c, path + (i,), is_leaf, ids)
                                       for i, c in enumerate(leaves)])
    ids[id(out)] = (path, out)
    return out


def _rebuild(node, path, is_leaf, repl):
    if path in repl:
        return repl[path](node)
    sub = _children(node, is_leaf)
    if sub is None:
        return node
    leaves, treedef = sub
    n = len(path)
    if not any(len(p) > n and p[:n] == path for p in repl):
        return node  # nothing below is replaced: keep the node itself
    return jtu.tree_unflatten(treedef, [_rebuild(c, path + (i,), is_leaf, repl)
                                        for i, c in enumerate(leaves)])


_SENTINEL = object()


def tree_at(where: Callable[[Any], Any], pytree: Any, replace: Any = _SENTINEL,
            replace_fn: Callable[[Any], Any] = _SENTINEL,
            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """A copy of ``pytree`` with the node(s) that ``where(pytree)`` selects replaced by
    ``replace`` (or by ``replace_fn(node)``), as Equinox's ``tree_at``: out-of-place surgery
    on an immutable model.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> lin = nn.Linear(2, 1, key=zx.random.key(0))
    >>> lin2 = nn.tree_at(lambda m: m.bias, lin, znp.zeros(1, np.float32))
    >>> lin2.bias, lin.bias is not lin2.bias
    (Array([0.], dtype=float32), True)
    >>> nn.tree_at(lambda t: (t[0], t[2]), [1, 2, 3], replace_fn=lambda x: -x)
    [-1, 2, -3]
    """
    if (replace is _SENTINEL) == (replace_fn is _SENTINEL):
        raise errors.ZeraxValueError("tree_at: give exactly one of replace= and replace_fn=")
    ids: dict = {}
    marked = _mark(pytree, (), is_leaf, ids)
    selected = where(marked)
    if id(selected) in ids and ids[id(selected)][1] is selected:
        nodes = [selected]
        replaces = [replace]
    else:
        if not isinstance(selected, (list, tuple)):
            raise errors.ZeraxValueError(
                "tree_at: `where` must return a node of the pytree or a sequence of nodes, "
                f"got {selected!r}")
        nodes = list(selected)
        if replace is not _SENTINEL:
            if not isinstance(replace, (list, tuple)) or len(replace) != len(nodes):
                raise errors.ZeraxValueError(
                    f"tree_at: `where` selected {len(nodes)} nodes, so `replace` must be a "
                    "sequence of as many values")
            replaces = list(replace)
        else:
            replaces = [None] * len(nodes)
    repl: dict = {}
    for node, r in zip(nodes, replaces):
        entry = ids.get(id(node))
        if entry is None or entry[1] is not node:
            raise errors.ZeraxValueError(
                "tree_at: `where` returned something that is not a node of the pytree "
                f"({node!r}); select attributes or items of its argument")
        path = entry[0]
        if path in repl:
            raise errors.ZeraxValueError("tree_at: `where` selected the same node twice")
        if replace_fn is not _SENTINEL:
            repl[path] = replace_fn
        else:
            repl[path] = lambda _, r=r: r
    return _rebuild(pytree, (), is_leaf, repl)


def inference_mode(pytree: Any, value: bool = True) -> Any:
    """Set every ``inference`` field (Dropout, BatchNorm, MultiheadAttention...) in
    ``pytree`` to ``value`` (Equinox's ``nn.inference_mode``).

    >>> import zerax.nn as nn
    >>> nn.inference_mode([nn.Dropout(0.5)])[0].inference
    True
    """
    def where(tree):
        found = []

        def walk(t):
            if not isinstance(t, _Marker) and hasattr(t, "inference"):
                found.append(t.inference)
            for c in _children_objs(t):
                walk(c)
        walk(tree)
        return found

    def _children_objs(t):
        if isinstance(t, _Marker):
            return []
        leaves, _ = jtu.tree_flatten(t, is_leaf=lambda x: x is not t)
        return [] if (len(leaves) == 1 and leaves[0] is t) else leaves

    return tree_at(where, pytree, replace_fn=lambda _: value)


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


def tree_equal(*pytrees: Any, typematch: bool = False, rtol: float = 0.0,
               atol: float = 0.0) -> bool:
    """True when the pytrees have the same structure and equal leaves (arrays: same shape
    and dtype, values equal, or within ``rtol``/``atol`` for floating point), as Equinox's
    ``tree_equal`` on concrete values. ``typematch`` also requires leaves of one type.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.tree_equal([znp.ones(2), "a"], [znp.ones(2), "a"]), nn.tree_equal([1], [2])
    (True, False)
    """
    flat = [jtu.tree_flatten(t) for t in pytrees]
    first_leaves, first_def = flat[0]
    for leaves, treedef in flat[1:]:
        if treedef != first_def:
            return False
        for a, b in zip(first_leaves, leaves):
            if typematch and type(a) is not type(b):
                return False
            if is_array(a) or is_array(b):
                if not (is_array(a) and is_array(b)):
                    return False
                if tuple(a.shape) != tuple(b.shape) or np.dtype(a.dtype) != np.dtype(b.dtype):
                    return False
                x, y = np.asarray(a), np.asarray(b)
                if (rtol or atol) and np.issubdtype(x.dtype, np.inexact):
                    if not np.allclose(x, y, rtol=rtol, atol=atol):
                        return False
                elif not np.array_equal(x, y):
                    return False
            elif a is not b and a != b:
                return False
    return True
