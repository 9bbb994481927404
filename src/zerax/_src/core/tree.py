"""Pytree machinery: flattening nested containers into leaves and rebuilding them.

This module owns the node-type registry, :class:`PyTreeDef`, and the
``tree_*`` functions. Built-in nodes are ``tuple``, ``list``, ``dict`` (children
in sorted-key order), ``None`` (a node with no children), namedtuples,
``collections.OrderedDict`` (insertion order) and ``collections.defaultdict``.
Every other object is a leaf unless registered with :func:`register_pytree_node`.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Iterable

from ... import errors

_NoneType = type(None)
_NO_INIT = object()


class _Spec:
    """How to take apart and rebuild one kind of node."""

    __slots__ = ("flatten", "unflatten", "keys")

    def __init__(self, flatten, unflatten, keys):
        self.flatten = flatten  # x -> (children, aux)
        self.unflatten = unflatten  # (nodetype, aux, children tuple) -> x
        self.keys = keys  # (nodetype, aux, n_children) -> path entries


# ----------------------------------------------------------------- path keys
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple(k) -> str:
    for attr in ("key", "idx", "name"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k)


def keystr(path, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string (``simple=True``: the bare keys, joined by
    ``separator``, as JAX's).

    >>> keystr((DictKey('a'), SequenceKey(0), GetAttrKey('x')))
    "['a'][0].x"
    >>> keystr((DictKey('a'), SequenceKey(0), GetAttrKey('x')), simple=True, separator='/')
    'a/0/x'
    """
    if simple:
        return separator.join(_simple(k) for k in path)
    return separator.join(str(k) for k in path)


# ------------------------------------------------------------------ registry
def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:  # unorderable mix of key types: fall back to a stable order
        return tuple(sorted(d, key=lambda k: (type(k).__qualname__, repr(k))))


def _flatten_dict(x):
    keys = _sorted_keys(x)
    return [x[k] for k in keys], keys


def _seq_keys(t, aux, n):
    return [SequenceKey(i) for i in range(n)]


def _dict_keys(t, aux, n):
    return [DictKey(k) for k in (aux[1] if t is collections.defaultdict else aux)]


def _flat_keys(t, aux, n):
    return [FlattenedIndexKey(i) for i in range(n)]


_REGISTRY: dict[type, _Spec] = {
    tuple: _Spec(lambda x: (x, None), lambda t, a, c: tuple(c), _seq_keys),
    list: _Spec(lambda x: (x, None), lambda t, a, c: list(c), _seq_keys),
    _NoneType: _Spec(lambda x: ((), None), lambda t, a, c: None, _seq_keys),
    dict: _Spec(_flatten_dict, lambda t, a, c: dict(zip(a, c)), _dict_keys),
    collections.OrderedDict: _Spec(
        lambda x: (list(x.values()), tuple(x)),
        lambda t, a, c: collections.OrderedDict(zip(a, c)),
        _dict_keys,
    ),
    collections.defaultdict: _Spec(
        lambda x: (_flatten_dict(x)[0], (x.default_factory, _sorted_keys(x))),
        lambda t, a, c: collections.defaultdict(a[0], zip(a[1], c)),
        _dict_keys,
    ),
}
_NAMEDTUPLE = _Spec(
    lambda x: (tuple(x), None),
    lambda t, a, c: t(*c),
    lambda t, a, n: [GetAttrKey(f) for f in t._fields],
)


def _spec_for(t: type) -> _Spec | None:
    spec = _REGISTRY.get(t)
    if spec is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        return _NAMEDTUPLE
    return spec


def _aux_eq(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. arrays with ambiguous truth values
        return False


# ----------------------------------------------------------------- PyTreeDef
class PyTreeDef:
    """The structure of a pytree: node types, their aux data, and leaf slots.

    >>> tree_structure((1, {'a': 2}))
    PyTreeDef((*, {'a': *}))
    """

    __slots__ = ("_type", "_aux", "_children", "_spec", "num_leaves", "num_nodes", "_hash")

    def __init__(self, nodetype, aux, children, spec=None):
        self._type, self._aux, self._children, self._spec = nodetype, aux, tuple(children), spec
        self._hash = None
        if nodetype is None:  # a leaf
            self.num_leaves, self.num_nodes = 1, 1
        else:
            self.num_leaves = sum(c.num_leaves for c in self._children)
            self.num_nodes = 1 + sum(c.num_nodes for c in self._children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a tree of this structure from ``leaves``.

        >>> tree_structure([0, (0, 0)]).unflatten('abc')
        ['a', ('b', 'c')]
        """
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise errors.ZeraxValueError(f"{self} expects {self.num_leaves} leaves, got {len(leaves)}")
        if self._type is tuple and self.num_nodes == self.num_leaves + 1:
            return tuple(leaves)  # fast path: flat tuple
        return self._build(iter(leaves))

    def _build(self, it):
        if self._type is None:
            return next(it)
        children = []
        for c in self._children:  # plain loop: one stack frame per tree level
            children.append(c._build(it))
        return self._spec.unflatten(self._type, self._aux, tuple(children))

    def flatten_up_to(self, tree: Any) -> list:
        """Split ``tree`` into the subtrees sitting at this structure's leaves.

        >>> tree_structure((0, 0)).flatten_up_to(([1, 2], {'a': 3}))
        [[1, 2], {'a': 3}]
        """
        out: list = []
        if not self._up_to(tree, out):
            raise errors.ZeraxValueError(
                f"Tree structure mismatch: expected {self}, got {tree_structure(tree)}"
            )
        return out

    def _up_to(self, x, out) -> bool:
        if self._type is None:
            out.append(x)
            return True
        if type(x) is not self._type:
            return False
        children, aux = self._spec.flatten(x)
        children = tuple(children)
        if len(children) != len(self._children) or not _aux_eq(aux, self._aux):
            return False
        for c, d in zip(children, self._children):  # plain loop: one frame per level
            if not d._up_to(c, out):
                return False
        return True

    def children(self) -> list[PyTreeDef]:
        """The treedefs of this node's immediate children.

        >>> tree_structure((1, [2, 3])).children()
        [PyTreeDef(*), PyTreeDef([*, *])]
        """
        return list(self._children)

    def _paths(self, prefix, out):
        if self._type is None:
            out.append(prefix)
            return
        keys = self._spec.keys(self._type, self._aux, len(self._children))
        for k, c in zip(keys, self._children):
            c._paths(prefix + (k,), out)

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        stack = [(self, other)]  # iterative, so deep trees cannot overflow the stack
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if (
                a._type is not b._type
                or a.num_nodes != b.num_nodes
                or a.num_leaves != b.num_leaves
                or len(a._children) != len(b._children)
                or not _aux_eq(a._aux, b._aux)
            ):
                return False
            stack.extend(zip(a._children, b._children))
        return True

    def __hash__(self):
        if self._hash is None:
            order, stack = [], [self]  # iterative: hash children before their parents
            while stack:
                node = stack.pop()
                if node._hash is None:
                    order.append(node)
                    stack.extend(node._children)
            for node in reversed(order):
                kids = tuple(c._hash for c in node._children)
                try:
                    node._hash = hash((node._type, node._aux, kids))
                except TypeError:  # unhashable aux data
                    node._hash = hash((node._type, kids))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        t = self._type
        cs = []
        for c in self._children:  # plain loop: one frame per level
            cs.append(c._str())
        if t is None:
            return "*"
        if t is _NoneType:
            return "None"
        if t is tuple:
            return f"({cs[0]},)" if len(cs) == 1 else f"({', '.join(cs)})"
        if t is list:
            return f"[{', '.join(cs)}]"
        if t in (dict, collections.OrderedDict, collections.defaultdict):
            keys = self._aux[1] if t is collections.defaultdict else self._aux
            body = "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(keys, cs)) + "}"
            if t is dict:
                return body
            if t is collections.OrderedDict:
                return f"OrderedDict({body})"
            factory = getattr(self._aux[0], "__name__", repr(self._aux[0]))
            return f"defaultdict({factory}, {body})"
        if self._spec is _NAMEDTUPLE:
            fields = ", ".join(f"{n}={c}" for n, c in zip(t._fields, cs))
            return f"{t.__name__}({fields})"
        return f"CustomNode({t.__name__}[{self._aux!r}], [{', '.join(cs)}])"


_LEAF = PyTreeDef(None, None, ())


@functools.lru_cache(maxsize=256)
def _flat_tuple_def(n: int) -> PyTreeDef:
    return PyTreeDef(tuple, None, (_LEAF,) * n, _REGISTRY[tuple])


def _flatten(x, is_leaf, leaves) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    spec = _spec_for(t)
    if spec is None:
        leaves.append(x)
        return _LEAF
    children, aux = spec.flatten(x)
    defs = []
    for c in children:  # plain loop: one stack frame per tree level
        defs.append(_flatten(c, is_leaf, leaves))
    return PyTreeDef(t, aux, defs, spec)


# -------------------------------------------------------------- public API
def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten ``tree`` into ``(leaves, treedef)``; leaves in left-to-right order.

    ``is_leaf(x) -> bool`` may stop the recursion at any subtree.

    >>> tree_flatten((1, {'b': 3, 'a': 2}, None))
    ([1, 2, 3], PyTreeDef((*, {'a': *, 'b': *}, None)))
    """
    if is_leaf is None and type(tree) is tuple:  # fast path: flat tuple of leaves
        for x in tree:
            t = type(x)
            if t in _REGISTRY or issubclass(t, tuple):
                break
        else:
            return list(tree), _flat_tuple_def(len(tree))
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree with structure ``treedef`` from ``leaves``.

    >>> leaves, treedef = tree_flatten([1, (2, 3)])
    >>> tree_unflatten(treedef, [x * 10 for x in leaves])
    [10, (20, 30)]
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree`` as a list.

    >>> tree_leaves({'x': [1, 2], 'y': None, 'z': 'str'})
    [1, 2, 'str']
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``.

    >>> tree_structure([1, (2, None)])
    PyTreeDef([*, (*, None)])
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf=None) -> Any:
    """Apply ``f`` leafwise; ``rest`` trees must match ``tree``'s structure.

    >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2, 3)}, {'a': 10, 'b': (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    return treedef.unflatten([f(*xs) for xs in _zip_rest("tree_map", leaves, treedef, rest)])


def _zip_rest(name, leaves, treedef, rest):
    columns = [leaves]
    for i, other in enumerate(rest, 1):
        try:
            columns.append(treedef.flatten_up_to(other))
        except ValueError:
            raise errors.ZeraxValueError(
                f"{name}: argument {i} has structure {tree_structure(other)}, "
                f"which does not match the first tree's structure {treedef}"
            ) from None
    return zip(*columns)


def tree_reduce(f: Callable, tree: Any, initializer: Any = _NO_INIT, is_leaf=None) -> Any:
    """Fold ``f`` over the leaves of ``tree`` from left to right.

    >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)], 100)
    106
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        if not leaves:
            raise errors.ZeraxTypeError(
                "tree_reduce of a tree with no leaves needs an initializer")
        return functools.reduce(f, leaves)
    return functools.reduce(f, leaves, initializer)


def tree_all(tree: Any, is_leaf=None) -> bool:
    """True when every leaf is truthy.

    >>> tree_all([True, (1, 'x')]), tree_all({'a': 0})
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, tree: Any) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    rows = [inner_treedef.flatten_up_to(sub) for sub in outer_treedef.flatten_up_to(tree)]
    n = inner_treedef.num_leaves
    cols = [outer_treedef.unflatten([r[j] for r in rows]) for j in range(n)]
    return inner_treedef.unflatten(cols)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a one-node treedef (a leaf, or a childless node such as ``None``).

    >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure([1]))
    (True, False)
    """
    return treedef.num_nodes == 1


def all_leaves(iterable: Iterable[Any], is_leaf=None) -> bool:
    """True when every element of ``iterable`` is itself a leaf.

    >>> all_leaves([1, 'a', 2.0]), all_leaves([1, (2,)])
    (True, False)
    """
    return all(
        (is_leaf is not None and is_leaf(x)) or _spec_for(type(x)) is None for x in iterable
    )


def tree_flatten_with_path(tree: Any, is_leaf=None):
    """Like :func:`tree_flatten`, but each leaf is paired with its key path.

    >>> pairs, _ = tree_flatten_with_path({'a': [5, 6]})
    >>> [(keystr(p), x) for p, x in pairs]
    [("['a'][0]", 5), ("['a'][1]", 6)]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths: list = []
    treedef._paths((), paths)
    return list(zip(paths, leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf=None) -> list:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> [(keystr(p), x) for p, x in tree_leaves_with_path({'a': [5, 6]})]
    [("['a'][0]", 5), ("['a'][1]", 6)]
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf=None) -> Any:
    """Like :func:`tree_map`, but ``f`` receives the key path first.

    >>> tree_map_with_path(lambda p, x: keystr(p), (1, {'k': 2}))
    ('[0]', {'k': "[1]['k']"})
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    columns = _zip_rest("tree_map_with_path", [x for _, x in pairs], treedef, rest)
    return treedef.unflatten([f(p, *xs) for (p, _), xs in zip(pairs, columns)])


def register_pytree_node(nodetype: type, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_fn(x) -> (children, aux_data)``; ``unflatten_fn(aux_data, children) -> x``.

    >>> class Box:
    ...     def __init__(self, v): self.v = v
    >>> register_pytree_node(Box, lambda b: ((b.v,), None), lambda _, c: Box(*c))
    >>> tree_map(lambda x: x + 1, Box(1)).v
    2
    """
    _register(nodetype, _Spec(flatten_fn, lambda t, a, c: unflatten_fn(a, c), _flat_keys))


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_fn: Callable, flatten_fn: Callable | None = None) -> None:
    """Make ``nodetype`` a pytree node whose children have named keys (for paths).

    ``flatten_with_keys(x) -> (((key, child), ...), aux_data)``;
    ``unflatten_fn(aux_data, children) -> x``.

    >>> class Box:
    ...     def __init__(self, v): self.v = v
    >>> register_pytree_with_keys(Box, lambda b: (((GetAttrKey('v'), b.v),), None),
    ...                           lambda _, c: Box(*c))
    >>> [(keystr(p), x) for p, x in tree_leaves_with_path(Box(3))]
    [('.v', 3)]
    """
    def flatten(x):
        keyed, aux = flatten_with_keys(x)
        keyed = tuple(keyed)
        return [c for _, c in keyed], (tuple(k for k, _ in keyed), aux)

    _register(nodetype, _Spec(flatten, lambda t, a, c: unflatten_fn(a[1], c),
                              lambda t, a, n: list(a[0])))


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register via ``x.tree_flatten_with_keys()`` and
    ``cls.tree_unflatten(aux, children)``."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


def _register(nodetype, spec):
    if nodetype in _REGISTRY:
        raise errors.ZeraxValueError(f"{nodetype!r} is already registered as a pytree node")
    _REGISTRY[nodetype] = spec


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register via ``x.tree_flatten()`` and ``cls.tree_unflatten(aux, ch)``.

    >>> @register_pytree_node_class
    ... class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    ...     def tree_flatten(self): return (self.a, self.b), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> tree_leaves(Pair(1, [2, 3]))
    [1, 2, 3]
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None):
    """Register a dataclass; ``data_fields`` become children, ``meta_fields`` aux data.

    Without explicit lists, fields with ``metadata={'static': True}`` are meta and
    all other ``init`` fields are data. Usable as a bare or parametrised decorator.

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Pt:
    ...     x: int
    ...     y: int
    >>> tree_map(lambda v: v * 2, Pt(1, 2))
    Pt(x=2, y=4)
    """
    if nodetype is None:
        return functools.partial(
            register_dataclass, data_fields=data_fields, meta_fields=meta_fields
        )
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise errors.ZeraxTypeError(f"{nodetype!r} is not a dataclass; give data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        names = [f.name for f in fields]
        if meta_fields is None and data_fields is None:
            meta_fields = [f.name for f in fields if f.metadata.get("static")]
        if data_fields is None:
            data_fields = [n for n in names if n not in set(meta_fields)]
        else:
            meta_fields = [n for n in names if n not in set(data_fields)]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(t, aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    _register(nodetype, _Spec(flatten, unflatten, lambda t, a, n: [GetAttrKey(d) for d in data]))
    return nodetype


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its bound arguments are the children
    (so they can be arrays that transforms see through) and the function is static,
    as JAX's ``tree_util.Partial``.

    >>> import operator
    >>> add_one = Partial(operator.add, 1)
    >>> tree_leaves(add_one), add_one(2)
    ([1], 3)
    """


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


def register_static(cls: type) -> type:
    """Register ``cls`` as a pytree node with no children: its instances are static
    structure (aux data), never leaves, so transforms pass them through untouched and
    ``jit`` keys on their hash (JAX's ``tree_util.register_static``; instances must be
    hashable).  Usable as a class decorator.

    >>> @register_static
    ... class Config:
    ...     def __init__(self, n): self.n = n
    ...     def __hash__(self): return hash(self.n)
    ...     def __eq__(self, other): return isinstance(other, Config) and other.n == self.n
    >>> tree_leaves([Config(2), 1.0])
    [1.0]
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of ``treedef``'s root node (JAX's name).

    >>> treedef_children(tree_structure([1, (2, 3)]))
    [PyTreeDef(*), PyTreeDef((*, *))]
    """
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the structures ``treedefs``.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    return PyTreeDef(tuple, None, list(treedefs), _REGISTRY[tuple])


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``prefix_tree`` with each of its leaves repeated over the subtree of
    ``full_tree`` at its place, so the result has ``full_tree``'s structure (JAX's
    ``tree_util.tree_broadcast``).

    >>> tree_broadcast([1, 2], [(10, 20), {"a": 30}])
    [(1, 1), {'a': 2}]
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = treedef.flatten_up_to(full_tree)
    out = [tree_map(lambda _, v=v: v, sub, is_leaf=is_leaf) for v, sub in zip(leaves, subtrees)]
    return treedef.unflatten(out)
