"""zerax.nn as a drop-in for ``import equinox as eqx``: Module's semantics as Equinox 0.13
defines them (errors, defaults, abstract attributes, warnings), the tree utilities
(tree_equal, tree_pformat, tree_check, tree_flatten_one_level), and the filtered transforms
as pytrees (filter_jit's shared cache and .lower(), filter_pmap). Expected strings and
behaviours were recorded from Equinox 0.13.8 (JAX 0.10.2)."""

import abc
import dataclasses
import inspect
import warnings
from typing import Any, ClassVar

import numpy as np
import pytest

import zerax as zx
import zerax.nn as eqx
import zerax.numpy as jnp
from zerax import errors
from zerax import tree_util as jtu


def test_one_import_serves_equinox_and_equinox_nn():
    assert eqx.nn is eqx
    for name in ("Module", "field", "filter_jit", "filter_grad", "filter_vmap", "filter_pmap",
                 "filter_custom_jvp", "filter_custom_vjp", "filter_closure_convert",
                 "tree_at", "tree_equal", "tree_pformat", "tree_pprint", "tree_check",
                 "tree_flatten_one_level", "partition", "combine", "is_array",
                 "AbstractVar", "AbstractClassVar", "Partial", "module_update_wrapper"):
        assert callable(getattr(eqx, name)), name
    for name in ("Linear", "MLP", "Conv2d", "SpectralNorm", "WeightNorm", "Shared",
                 "inference_mode", "State", "StateIndex", "make_with_state", "BatchNorm"):
        assert callable(getattr(eqx.nn, name)), name


# ------------------------------------------------------------------ Module
def test_unset_field_is_a_type_error_and_defaults_fill_in():
    class NoInit(eqx.Module):
        weight: Any

        def __init__(self):
            pass

    with pytest.raises(TypeError, match="Field 'weight' was not initialized"):
        NoInit()

    class WithDefault(eqx.Module):
        a: int
        b: int = 7

        def __init__(self):
            self.a = 1

    m = WithDefault()
    assert (m.a, m.b) == (1, 7)
    assert jtu.tree_leaves(m) == [1]          # (Equinox: the unset default is not a leaf)
    m2 = jtu.tree_unflatten(jtu.tree_structure(m), [5])
    assert (m2.a, m2.b) == (5, 7)

    class Abstract(eqx.Module):
        foo: int = dataclasses.field(init=False)

    class Concrete(Abstract):
        @property
        def foo(self):
            return 3

    c = Concrete()
    assert c.foo == 3 and jtu.tree_leaves(c) == []
    assert jtu.tree_unflatten(jtu.tree_structure(c), []).foo == 3


def test_assigning_a_non_field_or_a_method_in_init():
    class Extra(eqx.Module):
        weight: Any

        def __init__(self, weight):
            self.weight = weight
            self.something_else = True

    with pytest.raises(AttributeError, match="not a field"):
        Extra(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Extra.__new__(Extra).__setattr__("x", 1)

    class Cycle(eqx.Module):
        foo: Any
        x: Any

        def __init__(self, x):
            self.foo = self.bar
            self.x = x

        def bar(self):
            return self.x + 1

    with pytest.raises(ValueError, match="Cannot assign methods in __init__"):
        Cycle(1)

    class Reassign(eqx.Module):
        x: int

        def __init__(self):
            self.x = 3
            self.x = 4
    assert Reassign().x == 4


def test_abstract_methods_and_attributes():
    class Base(eqx.Module):
        size: eqx.AbstractVar[int]
        kind: eqx.AbstractClassVar[str]

        @abc.abstractmethod
        def f(self):
            ...

    assert Base.__abstractvars__ == frozenset({"size"})
    assert Base.__abstractclassvars__ == frozenset({"kind"})
    with pytest.raises(TypeError):
        Base()

    class Half(Base):
        kind: ClassVar[str] = "a"

        def f(self):
            return 1

    assert Half.__abstractvars__ == frozenset({"size"}) and not Half.__abstractclassvars__
    with pytest.raises(TypeError, match="size"):
        Half()

    class Full(Half):
        size: int

    assert Full(3).size == 3 and Full(3).f() == 1 and Full.kind == "a"

    class Prop(Half):
        @property
        def size(self):
            return 5

    assert Prop().size == 5

    class NoMethod(Base):
        size: int
        kind = "b"

    with pytest.raises(TypeError, match="abstract"):
        NoMethod(1)

    class Explicit(eqx.Module, is_abstract=True):
        pass

    with pytest.raises(TypeError):
        Explicit()

    class Strict(eqx.Module, strict=True):     # Equinox 0.13 accepts (and ignores) strict
        x: int
    assert Strict(1).x == 1


def test_init_inheritance_follows_equinox():
    class A:                                  # a non-Module base with its own __init__
        def __init__(self, x):
            self.x = x

    class B(eqx.Module):
        x: Any = eqx.field(converter=jnp.asarray)

    class C(A, B):
        pass

    c = C(2)
    assert isinstance(c.x, zx.Array) and int(c.x) == 2

    class D(eqx.Module):
        pass

    D.__init__.__doc__ = "Hey there!"

    class E(D):
        pass

    assert E.__init__.__doc__ == "Hey there!"

    class F(eqx.Module):
        a: int

        def __call__(self, b: int):
            pass

    @dataclasses.dataclass
    class G:
        a: int

        def __call__(self, b: int):
            pass

    assert inspect.signature(F) == inspect.signature(G)
    assert inspect.signature(F(1)) == inspect.signature(G(1))

    def conv(x: int):
        return x

    class H(eqx.Module):
        x: str = eqx.field(converter=conv)

    assert H.__init__.__annotations__["x"] is int


def test_warnings_equinox_gives():
    with pytest.warns(UserWarning, match=r"`__init__` method and a `__post_init__`"):
        class A(eqx.Module):
            x: int

            def __init__(self):
                self.x = 1

            def __post_init__(self):
                pass

    class S(eqx.Module):
        a: Any = eqx.field(static=True)

    with pytest.warns(UserWarning, match="A JAX array is being set as static!"):
        S(jnp.ones(2))

    class T(eqx.Module):
        f: Any

    with pytest.warns(UserWarning, match="JAX-transformed callable"):
        T(zx.vmap(eqx.nn.Linear(2, 2, key=zx.random.key(0))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T(eqx.filter_vmap(eqx.nn.Linear(2, 2, key=zx.random.key(0))))   # a pytree: fine

    with pytest.warns(UserWarning, match="deprecated"):
        eqx.static_field()


def test_slots_generic_and_methods_of_other_classes():
    class Slotted(eqx.Module):
        __slots__ = ("x",)
        x: int

        def __init__(self):
            self.x = 3

    s = Slotted()
    assert jtu.tree_leaves(s) == [3]
    assert jtu.tree_unflatten(jtu.tree_structure(s), [4]).x == 4

    from typing import Generic, TypeVar
    T = TypeVar("T")

    class Gen(eqx.Module, Generic[T]):
        pass

    assert Gen[int]().__orig_class__ == Gen[int]

    class A(eqx.Module):
        x: int

        def add_five(self):
            return self.x + 5

    class B(eqx.Module):
        add_five = A(3).add_five

    assert B.add_five() == 8 and B().add_five() == 8


def test_wrapper_attributes_survive_flattening():
    def f(x: int) -> str:
        """some doc"""
        return "hi"

    for wrapper in (eqx.filter_jit, eqx.filter_grad, eqx.filter_value_and_grad,
                    eqx.filter_vmap, eqx.filter_pmap, eqx.filter_checkpoint):
        w = wrapper(f)
        w2 = jtu.tree_unflatten(*reversed(jtu.tree_flatten(w)))
        for k in (w, w2):
            assert k.__name__ == "f" and k.__doc__ == "some doc"
            assert k.__qualname__.endswith("<locals>.f")
            assert k.__annotations__ == {"x": int, "return": str}
        assert w == w2 and hash(w) == hash(w2)


# ------------------------------------------------------------------ tree utilities
def test_tree_equal_returns_an_array_and_jits():
    a = [jnp.ones(2), "s", 1]
    out = eqx.tree_equal(a, [jnp.ones(2), "s", 1])
    assert isinstance(out, zx.Array) and out.dtype == np.bool_ and bool(out)
    assert not bool(eqx.tree_equal(a, [jnp.zeros(2), "s", 1]))
    assert eqx.tree_equal(a, [jnp.ones(3), "s", 1]) is False        # shapes differ
    assert eqx.tree_equal(a, [jnp.ones(2), "t", 1]) is False
    assert eqx.tree_equal([np.ones(2)], [np.ones(2)]) is True     # NumPy: a bool
    assert eqx.tree_equal([1], [1.0], typematch=True) is False
    assert bool(eqx.tree_equal([jnp.ones(2)], [jnp.ones(2) + 1e-9], rtol=1e-6))
    f = zx.jit(lambda x, y: eqx.tree_equal({"a": x}, {"a": y}))
    assert bool(f(jnp.ones(2), jnp.ones(2))) and not bool(f(jnp.ones(2), jnp.zeros(2)))
    lin = eqx.nn.Linear(2, 2, key=zx.random.key(0))
    assert bool(lin == jtu.tree_unflatten(*reversed(jtu.tree_flatten(lin))))


def act(x):
    return x


def final(x):
    return x


class Block(eqx.Module):
    linear: eqx.nn.Linear
    scale: float
    name: str = eqx.field(static=True)


# eqx.tree_pformat(...) of the same trees, from Equinox 0.13.8 (wadler-lindig 0.1.8)
PFORMAT = {
    "MLP": 'MLP(\n  layers=(\n    Linear(\n      weight=f32[4,2], bias=f32[4], in_features=2, out_features=4, use_bias=True\n    ),\n    Linear(\n      weight=f32[3,4], bias=f32[3], in_features=4, out_features=3, use_bias=True\n    )\n  ),\n  activation=<function act>,\n  final_activation=<function final>,\n  use_bias=True,\n  use_final_bias=True,\n  in_size=2,\n  out_size=3,\n  width_size=4,\n  depth=1\n)',  # noqa: E501
    "BLOCK": "Block(\n  linear=Linear(\n    weight=f32[2,3], bias=None, in_features=3, out_features=2, use_bias=False\n  ),\n  scale=0.5,\n  name='blk'\n)",  # noqa: E501
    "BLOCK_W40": "Block(\n  linear=Linear(\n    weight=f32[2,3],\n    bias=None,\n    in_features=3,\n    out_features=2,\n    use_bias=False\n  ),\n  scale=0.5,\n  name='blk'\n)",  # noqa: E501
    "DICT": "{'a': f64[2,3](numpy), 'b': [i32[4], 1.0, <function act>, (f32[2],)], 'c': None}",
    "TRUNC": "[\n  Block(linear=Linear(...), scale=0.5, name='blk'),\n  MLP(\n    layers=(Linear(...), Linear(...)),\n    activation=<function act>,\n    final_activation=<function final>,\n    use_bias=True,\n    use_final_bias=True,\n    in_size=2,\n    out_size=3,\n    width_size=4,\n    depth=1\n  )\n]",  # noqa: E501
    "STRUCT": "f32[2,3]",
    "INDENT4": "Block(\n    linear=Linear(\n        weight=f32[2,3],\n        bias=None,\n        in_features=3,\n        out_features=2,\n        use_bias=False\n    ),\n    scale=0.5,\n    name='blk'\n)",  # noqa: E501
}


def test_tree_pformat_matches_equinox():
    mlp = eqx.nn.MLP(2, 3, 4, 1, activation=act, final_activation=final,
                     key=zx.random.PRNGKey(0))
    blk = Block(eqx.nn.Linear(3, 2, use_bias=False, key=zx.random.PRNGKey(1)), 0.5, "blk")
    got = {
        "MLP": eqx.tree_pformat(mlp), "BLOCK": eqx.tree_pformat(blk),
        "BLOCK_W40": eqx.tree_pformat(blk, width=40),
        "DICT": eqx.tree_pformat({"a": np.ones((2, 3)), "b": [jnp.zeros((4,), jnp.int32), 1.0,
                                                             act, (jnp.ones(2, jnp.float32),)],
                                  "c": None}),
        "TRUNC": eqx.tree_pformat([blk, mlp],
                                  truncate_leaf=lambda x: isinstance(x, eqx.nn.Linear)),
        "STRUCT": eqx.tree_pformat(zx.ShapeDtypeStruct((2, 3), jnp.float32),
                                   struct_as_array=True),
        "INDENT4": eqx.tree_pformat(blk, indent=4, width=30),
    }
    assert got == PFORMAT
    assert repr(blk) == PFORMAT["BLOCK"]


def test_tree_check_and_flatten_one_level():
    lin = eqx.nn.Linear(2, 2, key=zx.random.key(0))
    eqx.tree_check([lin, eqx.nn.Linear(2, 2, key=zx.random.key(1)), 1, 1, [], []])
    with pytest.raises(ValueError, match="more than once"):
        eqx.tree_check([lin, lin])
    x = [1]
    with pytest.raises(ValueError, match="more than once"):
        eqx.tree_check([x, x])
    y = []
    y.append(y)
    with pytest.raises(ValueError, match="contains itself"):
        eqx.tree_flatten_one_level(y)
    leaves, treedef = eqx.tree_flatten_one_level({"a": 3, "b": (1, 2)})
    assert leaves == [3, (1, 2)] and jtu.tree_unflatten(treedef, leaves) == {"a": 3, "b": (1, 2)}
    assert eqx.tree_flatten_one_level(4)[0] == [4]
    sub, _ = eqx.tree_flatten_one_level(lin)
    assert [s.shape for s in sub] == [(2, 2), (2,)]


# ------------------------------------------------------------------ filtered transforms
def test_filter_jit_does_not_retrace_for_equal_functions_models_and_wrappers():
    traces = []

    def f(model, x, flag):
        traces.append(1)
        return model(x) * (2 if flag else 1)

    x = jnp.ones(3, jnp.float32)
    m1 = eqx.nn.Linear(3, 2, key=zx.random.key(0))
    m2 = eqx.nn.Linear(3, 2, key=zx.random.key(1))       # equal structure, other values
    out1 = eqx.filter_jit(f)(m1, x, True)
    out2 = eqx.filter_jit(f)(m2, x, True)                 # a new wrapper of the same f
    assert len(traces) == 1
    np.testing.assert_allclose(out2, 2 * m2(x), rtol=1e-6)
    eqx.filter_jit(f)(m1, x, False)                       # a new static value: traces
    assert len(traces) == 2
    # a wrapper (a pytree) as the jitted function: equal wrappers share the program
    v1 = eqx.filter_jit(eqx.filter_vmap(m1))
    v2 = eqx.filter_jit(eqx.filter_vmap(m2))
    np.testing.assert_allclose(v2(jnp.ones((4, 3), jnp.float32)),
                               zx.vmap(m2)(jnp.ones((4, 3), jnp.float32)), rtol=1e-6)
    assert bool(v1 == eqx.filter_jit(eqx.filter_vmap(m1)))
    assert bool(v1.__wrapped__.__wrapped__ == m1)
    # its parameters are leaves of the wrapper, so it is differentiable as a model
    g = eqx.filter_grad(lambda w, x: w(x).sum())(v1, jnp.ones((4, 3), jnp.float32))
    np.testing.assert_allclose(g.__wrapped__.__wrapped__.weight, np.full((2, 3), 4.0))
    # bound methods of equal models, too
    calls = []

    class Net(eqx.Module):
        w: Any

        def apply(self, x):
            calls.append(1)
            return self.w * x

    for k in range(3):
        eqx.filter_jit(Net(jnp.ones(2) * k).apply)(jnp.ones(2))
    assert len(calls) == 1


def test_filter_jit_lower_and_compile():
    f = eqx.filter_jit(lambda x, n: (x * n, "tag"))
    low = f.lower(jnp.arange(3.0), 2)
    assert "mul" in low.as_text() or len(low.as_text()) > 0
    comp = low.compile()
    out, tag = comp(jnp.ones(3), 2)
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
    assert tag == "tag"
    with pytest.raises(errors.ZeraxTypeError, match="lowered for other arguments"):
        comp(jnp.ones(4), 2)

    class M(eqx.Module):
        w: Any

        @eqx.filter_jit
        def __call__(self, x):
            return self.w + x

    assert float(M(jnp.asarray(1.0))(2.0)) == 3.0


def test_filter_pmap_and_vmap_wrappers():
    f = eqx.filter_pmap(lambda x, n: x / zx.lax.psum(x, "i") * n, axis_name="i")
    np.testing.assert_allclose(f(jnp.arange(1.0, 4.0), 6), [1.0, 2.0, 3.0])
    ens = eqx.filter_vmap(lambda k: eqx.nn.Linear(2, 2, key=k))(zx.random.split(zx.random.key(0), 3))
    assert ens.weight.shape == (3, 2, 2)
    out = eqx.filter_pmap(lambda m, x: m(x), in_axes=(eqx.if_array(0), None))(
        ens, jnp.ones(2, jnp.float32))
    np.testing.assert_allclose(out, zx.vmap(lambda w, b: w @ jnp.ones(2, jnp.float32) + b)(
        ens.weight, ens.bias), rtol=1e-6)
    assert eqx.if_array(1) == eqx.if_array(1) and eqx.if_array(1) != eqx.if_array(0)


def test_jax_names_equinox_programs_import():
    seen = []

    def f(x):
        seen.append(isinstance(x, zx.core.Tracer))
        return x * 2

    f(jnp.ones(2))
    zx.jit(f)(jnp.ones(2))
    zx.grad(lambda x: f(x).sum())(jnp.ones(2))
    zx.vmap(f)(jnp.ones(2))
    assert seen == [False, True, True, True]
    with zx.numpy_dtype_promotion("standard"):
        assert (jnp.ones(2, jnp.float16) + jnp.ones(2, jnp.float32)).dtype == np.float32
    with pytest.raises(errors.NotSupportedError, match="strict"):
        with zx.numpy_dtype_promotion("strict"):
            pass
    with pytest.raises(ValueError):
        with zx.numpy_dtype_promotion("loose"):
            pass
