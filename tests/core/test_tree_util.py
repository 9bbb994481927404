"""Tests for zerax.tree_util (pytree flattening, mapping and registration)."""

import collections
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
from zerax import tree_util as tu
from zerax._src.core import tree as tree_impl

# ----------------------------------------------------------------- strategies
ints = st.integers(-100, 100)
trees = st.recursive(
    ints | st.none(),
    lambda kids: st.tuples(kids, kids)
    | st.lists(kids, max_size=4)
    | st.lists(kids, max_size=4).map(tuple)
    | st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), kids, max_size=4),
    max_leaves=30,
)


def hand_map(f, t):
    """Reference recursion for the built-in node types used by `trees`."""
    if t is None:
        return None
    if isinstance(t, (tuple, list)):
        return type(t)(hand_map(f, x) for x in t)
    if isinstance(t, dict):
        return {k: hand_map(f, v) for k, v in t.items()}
    return f(t)


def hand_leaves(t):
    if t is None:
        return []
    if isinstance(t, (tuple, list)):
        return [y for x in t for y in hand_leaves(x)]
    if isinstance(t, dict):
        return [y for k in sorted(t) for y in hand_leaves(t[k])]
    return [t]


def same_types(a, b):
    """Structural equality that also distinguishes tuple from list."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_types(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_types(a[k], b[k]) for k in a)
    return a == b


# ------------------------------------------------------------------ properties
@settings(max_examples=200, deadline=None)
@given(trees)
def test_roundtrip(t):
    leaves, treedef = tu.tree_flatten(t)
    assert leaves == hand_leaves(t)
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == t and same_types(rebuilt, t)
    assert tu.tree_structure(rebuilt) == treedef
    assert hash(tu.tree_structure(rebuilt)) == hash(treedef)


@settings(max_examples=200, deadline=None)
@given(trees)
def test_tree_map_matches_hand_recursion(t):
    f = lambda x: x * 3 - 1  # noqa: E731
    assert same_types(tu.tree_map(f, t), hand_map(f, t))
    other = hand_map(lambda x: x + 7, t)
    assert same_types(tu.tree_map(lambda a, b: a - b, other, t), hand_map(lambda x: 7, t))


@settings(max_examples=100, deadline=None)
@given(trees)
def test_structure_ignores_leaf_values(t):
    assert tu.tree_structure(t) == tu.tree_structure(hand_map(str, t))


# ------------------------------------------------------------------ built-ins
def test_none_is_a_node_not_a_leaf():
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    td = tu.tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert tu.tree_unflatten(td, []) is None
    assert tu.tree_map(lambda x: x + 1, (None, 1)) == (None, 2)


def test_dict_sorted_ordereddict_insertion_order():
    assert tu.tree_leaves({"b": 1, "a": 2}) == [2, 1]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tu.tree_leaves(od) == [1, 2]
    out = tu.tree_map(lambda x: x * 10, od)
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]
    assert tu.tree_structure(od) != tu.tree_structure({"b": 1, "a": 2})


def test_defaultdict():
    dd = collections.defaultdict(list, {"y": 1, "x": 2})
    out = tu.tree_map(lambda x: -x, dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"x": -2, "y": -1}
    assert "defaultdict(list" in repr(tu.tree_structure(dd))


def test_namedtuple():
    Point = collections.namedtuple("Point", ["x", "y"])
    t = (Point(1, (2, 3)), 4)
    leaves, td = tu.tree_flatten(t)
    assert leaves == [1, 2, 3, 4]
    out = tu.tree_unflatten(td, [10, 20, 30, 40])
    assert type(out[0]) is Point and out == (Point(10, (20, 30)), 40)
    assert repr(td) == "PyTreeDef((Point(x=*, y=(*, *)), *))"
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))


def test_other_objects_are_leaves():
    arr = np.arange(3)
    leaves = tu.tree_leaves({"a": arr, "s": "text", "f": 1.5, "o": object})
    assert leaves[0] is arr and leaves[1:] == [1.5, object, "text"]
    assert tu.tree_leaves("abc") == ["abc"]
    assert tu.tree_structure(np.ones(2)).num_leaves == 1


def test_repr():
    assert repr(tu.tree_structure((1, {"a": 2}))) == "PyTreeDef((*, {'a': *}))"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure([None, ()])) == "PyTreeDef([None, ()])"
    assert repr(tu.tree_structure(5)) == "PyTreeDef(*)"


def test_flat_tuple_fast_path_agrees_with_general_path():
    t = (1, 2.0, "s", np.zeros(2))
    fast_leaves, fast = tu.tree_flatten(t)
    slow_leaves, slow = tu.tree_flatten(t, is_leaf=lambda x: False)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert [id(x) for x in fast_leaves] == [id(x) for x in slow_leaves]
    assert tu.tree_unflatten(fast, [1, 2, 3, 4]) == (1, 2, 3, 4)
    Point = collections.namedtuple("Point", "x y")
    assert tu.tree_leaves((1, Point(2, 3), None)) == [1, 2, 3]


def test_deep_tree():
    t = 0
    for i in range(700):
        t = [t, i] if i % 2 else {"k": t}
    leaves, td = tu.tree_flatten(t)
    assert len(leaves) == 351 and td.num_leaves == 351
    assert tu.tree_structure(tu.tree_unflatten(td, leaves)) == td
    assert hash(td) == hash(tu.tree_structure(t)) and repr(td).startswith("PyTreeDef([{'k': [")
    tu.tree_map(lambda a, b: a, t, t)


# ------------------------------------------------------------ API behaviour
def test_structure_mismatch_error_names_both_structures():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a + b, (1, [2, 3]), (1, [2]))
    msg = str(info.value)
    assert "PyTreeDef((*, [*, *]))" in msg and "PyTreeDef((*, [*]))" in msg
    with pytest.raises(ValueError, match="does not match"):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="does not match"):
        tu.tree_map(lambda a, b: a, [1, 2], (1, 2))


def test_tree_map_prefix_and_is_leaf():
    # Leaves of the first tree may line up with whole subtrees of the others.
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), ([3], {"k": 4})) == ((1, [3]), (2, {"k": 4}))
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2  # noqa: E731
    assert tu.tree_map(sum, [(1, 2), (3, 4)], is_leaf=is_pair) == [3, 7]
    assert tu.tree_leaves([(1, 2)], is_leaf=is_pair) == [(1, 2)]


def test_unflatten_wrong_leaf_count():
    td = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match="expects 2 leaves"):
        td.unflatten([1])
    with pytest.raises(ValueError):
        tu.tree_unflatten(td, [1, 2, 3])


def test_treedef_properties():
    td = tu.tree_structure((1, [2, None], {"a": 3}))
    assert td.num_leaves == 3 and td.num_nodes == 7
    assert td.children() == [tu.tree_structure(0), tu.tree_structure([0, None]),
                             tu.tree_structure({"a": 0})]
    assert len({td, tu.tree_structure((9, [9, None], {"a": 9}))}) == 1
    assert td != tu.tree_structure((1, [2, None], {"b": 3}))
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure([1]))


def test_reduce_all_transpose_paths():
    assert tu.tree_reduce(lambda a, b: a * b, [2, (3, {"k": 4})]) == 24
    assert tu.tree_reduce(lambda a, b: a + b, [], 5) == 5
    assert tu.tree_all([1, (True, "x")]) and not tu.tree_all({"a": [1, 0]})
    assert tu.tree_all([])
    outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure({"a": 0, "b": 0})
    t = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    assert tu.tree_transpose(outer, inner, t) == {"a": [1, 3, 5], "b": [2, 4, 6]}
    pairs, _ = tu.tree_flatten_with_path({"a": [5, (6,)], "b": None})
    assert [(tu.keystr(p), x) for p, x in pairs] == [("['a'][0]", 5), ("['a'][1][0]", 6)]
    assert tu.all_leaves([1, "a", np.ones(2)]) and not tu.all_leaves([1, None])


# ---------------------------------------------------------------- registration
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)


tu.register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda lab, ch: Box(ch[0], lab))


def test_register_pytree_node():
    t = [Box((1, 2), "L"), 3]
    leaves, td = tu.tree_flatten(t)
    assert leaves == [1, 2, 3]
    assert tu.tree_unflatten(td, [4, 5, 6]) == [Box((4, 5), "L"), 6]
    assert "CustomNode(Box['L'], [(*, *)])" in repr(td)
    assert td != tu.tree_structure([Box((1, 2), "M"), 3])  # aux data is part of structure
    with pytest.raises(ValueError, match="does not match"):
        tu.tree_map(lambda a, b: a, Box(1, "L"), Box(1, "M"))
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box(0, ""))
    pairs, _ = tu.tree_flatten_with_path(Box(7, "L"))
    assert tu.keystr(pairs[0][0]) == "[<flat index 0>]"


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_register_pytree_node_class():
    out = tu.tree_map(lambda x: x + 1, Pair(1, [2]))
    assert isinstance(out, Pair) and out.a == 2 and out.b == [3]


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata={"static": True})


@dataclasses.dataclass(frozen=True)
class Layer:
    weight: object
    size: int


tu.register_dataclass(Layer, data_fields=["weight"], meta_fields=["size"])


def test_register_dataclass():
    p = Params(np.ones(2), 3.0)
    leaves, td = tu.tree_flatten(p)
    assert leaves[1] == 3.0 and len(leaves) == 2
    out = tu.tree_map(lambda x: x * 2, p)
    assert isinstance(out, Params) and out.b == 6.0 and out.name == "p"
    np.testing.assert_array_equal(out.w, np.full(2, 2.0))
    assert tu.tree_structure(Params(1, 2, "q")) != td
    pairs, _ = tu.tree_flatten_with_path(p)
    assert [tu.keystr(k) for k, _ in pairs] == [".w", ".b"]

    layer = Layer((1, 2), size=3)
    assert tu.tree_leaves(layer) == [1, 2]
    assert tu.tree_map(lambda x: x + 1, layer) == Layer((2, 3), 3)
    assert tu.tree_structure(Layer(0, 3)) != tu.tree_structure(Layer(0, 4))


def test_public_module_exports():
    for name in tu.__all__:
        assert getattr(tu, name) is getattr(tree_impl, name)


def test_register_dataclass_parametrised_decorator_and_map_with_path():
    @tu.register_dataclass(data_fields=["x"], meta_fields=["tag"])
    @dataclasses.dataclass
    class Tagged:
        x: object
        tag: str

    out = tu.tree_map_with_path(
        lambda p, a, b: (tu.keystr(p), a + b), Tagged([1], "t"), Tagged([2], "t")
    )
    assert out == Tagged([(".x[0]", 3)], "t")
    with pytest.raises(ValueError, match="tree_map_with_path"):
        tu.tree_map_with_path(lambda p, a, b: a, Tagged(1, "t"), Tagged(1, "u"))
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Box)


def test_ravel_pytree_roundtrip_dtypes_and_grad():
    from zerax.flatten_util import ravel_pytree
    tree = {"w": np.arange(6.0).reshape(2, 3), "n": (np.arange(2, dtype=np.int32),),
            "s": np.float32(1.5)}
    flat, unravel = ravel_pytree(tree)
    leaves = [tree["n"][0], tree["s"], tree["w"]]         # dict keys in sorted order
    np.testing.assert_array_equal(flat, np.concatenate([np.ravel(x) for x in leaves]))
    assert flat.dtype == np.float64
    back = unravel(flat)
    for got, want in zip(zx.tree_util.tree_leaves(back), leaves):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    # differentiable: the gradient of a function of the flat vector, mapped back
    g = zx.grad(lambda v: zx.numpy.sum(unravel(v)["w"] ** 2))(flat)
    np.testing.assert_allclose(unravel(g)["w"], 2 * tree["w"])
    with pytest.raises(zx.errors.ShapeError):
        unravel(flat[:3])
    empty, unravel_empty = ravel_pytree(())
    assert empty.shape == (0,) and unravel_empty(empty) == ()


def test_ravel_pytree_python_scalars_are_weak():
    from zerax.flatten_util import ravel_pytree
    flat, unravel = ravel_pytree([np.ones(2, np.float32), 1])
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(unravel(flat)[0], np.ones(2, np.float32))


def test_jax_tree_short_names():
    # zerax.tree mirrors jax.tree: the same functions as tree_util under short names
    import zerax
    t = {"a": 1.0, "b": (2.0, None, [3.0])}
    assert zerax.tree.map(lambda x: x + 1, t) == {"a": 2.0, "b": (3.0, None, [4.0])}
    assert zerax.tree.leaves(t) == [1.0, 2.0, 3.0]
    leaves, treedef = zerax.tree.flatten(t)
    assert zerax.tree.unflatten(treedef, leaves) == t
    assert zerax.tree.structure(t) == treedef
    assert zerax.tree.reduce(lambda a, b: a + b, t) == 6.0
    assert zerax.tree.all([True, (1, 2)]) and not zerax.tree.all([True, 0])
    assert [p for p, _ in zerax.tree.leaves_with_path(t)] == \
        [p for p, _ in zerax.tree_util.tree_leaves_with_path(t)]
    outer, inner = zerax.tree.structure([0, 0]), zerax.tree.structure((0, 0, 0))
    assert zerax.tree.transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert zerax.jacobian is zerax.jacrev


def test_register_static_treedef_children_tuple_and_broadcast():
    import zerax.numpy as znp

    @tu.register_static
    class Cfg:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return hash(self.n)

        def __eq__(self, other):
            return isinstance(other, Cfg) and other.n == self.n

    tree = {"cfg": Cfg(3), "w": 2.0}
    assert tu.tree_leaves(tree) == [2.0]
    out = zx.jit(lambda t: t["w"] * t["cfg"].n)(tree)      # static: keyed on its hash
    assert float(out) == 6.0
    assert tu.tree_map(lambda x: x, tree)["cfg"] is tree["cfg"]
    g = zx.grad(lambda t: t["w"] ** 2 * t["cfg"].n)(tree)
    assert float(g["w"]) == 12.0 and g["cfg"] == Cfg(3)
    td = tu.tree_structure([1, (2, 3), {"a": 4}])
    kids = tu.treedef_children(td)
    assert kids == [tu.tree_structure(1), tu.tree_structure((2, 3)),
                    tu.tree_structure({"a": 4})]
    tup = tu.treedef_tuple(kids)
    assert tup == tu.tree_structure((1, (2, 3), {"a": 4}))
    assert tup.unflatten([1, 2, 3, 4]) == (1, (2, 3), {"a": 4})
    assert tu.tree_broadcast([1, 2], [(10, 20), {"a": 30, "b": 40}]) == \
        [(1, 1), {"a": 2, "b": 2}]
    assert zx.tree.broadcast({"x": 0.5}, {"x": [1, 2, 3]}) == {"x": [0.5, 0.5, 0.5]}
    np.testing.assert_array_equal(
        tu.tree_broadcast(znp.ones(2), (1, 2))[0], np.ones(2))
