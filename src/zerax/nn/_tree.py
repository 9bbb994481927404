"""Equinox's tree utilities for `zerax.nn`: `tree_at` (out-of-place surgery),
`tree_equal`, `tree_check`, `tree_flatten_one_level`, `tree_pformat`/`tree_pprint` (the
repr of every `Module`) and `inference_mode`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import wadler_lindig as wl

import zerax as zx
import zerax.numpy as znp
from .. import errors
from .. import tree_util as jtu

from ._filters import is_array

__all__ = ["tree_at", "tree_equal", "tree_check", "tree_flatten_one_level", "tree_pformat",
           "tree_pprint", "inference_mode"]


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


# ------------------------------------------------------------------ comparisons
def _array_equal(x, y, npi, rtol, atol):
    if (isinstance(rtol, (int, float)) and isinstance(atol, (int, float))
            and rtol == 0 and atol == 0) or not np.issubdtype(np.dtype(x.dtype), np.inexact):
        return npi.all(x == y)
    return npi.allclose(x, y, rtol=rtol, atol=atol)


def tree_equal(*pytrees: Any, typematch: bool = False, rtol: Any = 0.0,
               atol: Any = 0.0) -> Any:
    """Whether the pytrees have the same structure and equal leaves, as Equinox's
    ``tree_equal``: arrays need the same shape and dtype and equal values (within
    ``rtol``/``atol`` for floating point); other leaves compare with ``==``;
    ``typematch`` also requires leaves of one type. A structural difference is
    ``False``; with zerax arrays among the leaves the answer is a boolean array (so it
    works under `zerax.jit`), with NumPy arrays and Python values a ``bool``.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.tree_equal([znp.ones(2), "a"], [znp.ones(2), "a"])
    Array(True, dtype=bool)
    >>> nn.tree_equal([1], [2]), nn.tree_equal([znp.ones(2)], [znp.ones(3)])
    (False, False)
    """
    flat, treedef = jtu.tree_flatten(pytrees[0])
    out: Any = True
    for pytree in pytrees[1:]:
        flat_, treedef_ = jtu.tree_flatten(pytree)
        if treedef_ != treedef:
            return False
        for a, b in zip(flat, flat_):
            if typematch and type(a) is not type(b):
                return False
            if isinstance(a, (np.ndarray, np.generic)) and isinstance(b, (np.ndarray, np.generic)):
                if a.shape != b.shape or a.dtype != b.dtype or \
                        not _array_equal(a, b, np, rtol, atol):
                    return False
            elif is_array(a):
                if not is_array(b) or tuple(a.shape) != tuple(b.shape) or \
                        np.dtype(a.dtype) != np.dtype(b.dtype):
                    return False
                out = out & _array_equal(a, b, znp, rtol, atol)
            elif is_array(b):
                return False
            elif a != b:
                return False
    return out


def tree_flatten_one_level(pytree: Any) -> tuple[list, Any]:
    """The immediate children of a pytree node and its treedef (a leaf gives itself), as
    Equinox's ``tree_flatten_one_level``; a node that contains itself is a ``ValueError``.

    >>> import zerax.nn as nn
    >>> nn.tree_flatten_one_level({"a": 3, "b": (1, 2)})[0]
    [3, (1, 2)]
    """
    seen = [False]

    def is_leaf(node):
        if node is pytree:
            if seen[0]:
                raise errors.ZeraxValueError(
                    f"a pytree node of type {type(pytree).__name__} contains itself as an "
                    "immediate child (for example `x = []; x.append(x)`)")
            seen[0] = True
            return False
        return True
    return jtu.tree_flatten(pytree, is_leaf=is_leaf)


_leaf_treedef = jtu.tree_structure(0)


def tree_check(pytree: Any) -> None:
    """Raise a ``ValueError`` if ``pytree`` contains itself, or holds one non-leaf node
    (a layer, a non-empty list) in two places: a transform would turn the two into
    independent copies (Equinox's ``tree_check``). Repeated leaves are fine.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> lin = nn.Linear(2, 2, key=zr.key(0))
    >>> nn.tree_check([lin, nn.Linear(2, 2, key=zr.key(1))])
    >>> nn.tree_check([lin, lin])
    Traceback (most recent call last):
    ...
    zerax.errors.ZeraxValueError: a pytree node of type Linear appears in the pytree more than once: a transform (jit, grad...) would turn the occurrences into independent copies. Build separate nodes, or use nn.Shared to tie parameters
    """
    _tree_check(pytree, {})


def _tree_check(node, seen):
    subnodes, treedef = tree_flatten_one_level(node)
    if treedef != _leaf_treedef and treedef.num_leaves > 0:
        entry = seen.get(id(node))
        name = type(node).__name__
        if entry is not None:
            if entry:
                raise errors.ZeraxValueError(
                    f"a pytree node of type {name} contains itself; pytrees must be trees")
            raise errors.ZeraxValueError(
                f"a pytree node of type {name} appears in the pytree more than once: a "
                "transform (jit, grad...) would turn the occurrences into independent "
                "copies. Build separate nodes, or use nn.Shared to tie parameters")
        seen[id(node)] = True   # on the current path
        for sub in subnodes:
            _tree_check(sub, seen)
        seen[id(node)] = False


# ------------------------------------------------------------------ pretty-printing
def _false(_):
    return False


class _TreeCustom:
    """The wadler-lindig customisation Equinox uses: arrays as ``f32[2,3]``."""

    def __init__(self, truncate_leaf, short_arrays, struct_as_array):
        self.truncate_leaf = truncate_leaf
        self.short_arrays = short_arrays
        self.struct_as_array = struct_as_array

    def __call__(self, obj):
        if self.truncate_leaf(obj):
            return wl.TextDoc(f"{type(obj).__name__}(...)")
        if self.short_arrays and (
                (is_array(obj) and not isinstance(obj, (np.ndarray, np.generic))) or
                (self.struct_as_array and isinstance(obj, zx.ShapeDtypeStruct))):
            dtype = np.dtype(obj.dtype).name
            if getattr(obj, "weak_type", False):
                dtype = f"weak_{dtype}"
            return wl.array_summary(tuple(obj.shape), dtype, kind=None)
        if isinstance(obj, (zx.custom_jvp, zx.custom_vjp)):
            return wl.pdoc(obj.__wrapped__)
        return None


def tree_pformat(pytree: Any, *, width: int = 80, indent: int = 2, short_arrays: bool = True,
                 struct_as_array: bool = False,
                 truncate_leaf: Callable[[Any], bool] = _false) -> str:
    """A pytree pretty-printed (Wadler-Lindig layout, through the `wadler_lindig`
    package, as Equinox's ``tree_pformat``): zerax arrays as ``f32[3,2]`` (NumPy's as
    ``f64[2](numpy)``), lines broken to fit ``width``. It is every `Module`'s repr.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> print(nn.tree_pformat(nn.Linear(2, 3, key=zr.key(0))))
    Linear(
      weight=f32[3,2], bias=f32[3], in_features=2, out_features=3, use_bias=True
    )
    >>> nn.tree_pformat({"w": znp.ones(3)}, short_arrays=False)
    "{'w': Array([1., 1., 1.], dtype=float64)}"
    """
    return wl.pformat(pytree, width=width, indent=indent, short_arrays=short_arrays,
                      custom=_TreeCustom(truncate_leaf, short_arrays, struct_as_array))


def tree_pprint(pytree: Any, *, width: int = 80, indent: int = 2, short_arrays: bool = True,
                struct_as_array: bool = False,
                truncate_leaf: Callable[[Any], bool] = _false) -> None:
    """Print `tree_pformat` of ``pytree`` (Equinox's ``tree_pprint``).

    >>> import zerax.nn as nn
    >>> nn.tree_pprint([znp.ones((2, 3), np.float32), 1.5])
    [f32[2,3], 1.5]
    """
    print(tree_pformat(pytree, width=width, indent=indent, short_arrays=short_arrays,
                       struct_as_array=struct_as_array, truncate_leaf=truncate_leaf))
