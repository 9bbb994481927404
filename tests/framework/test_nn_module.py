"""zerax.nn's Module, filters, tree_at, filtered transforms and State (Equinox's semantics),
checked against plain Python/NumPy expectations."""

import dataclasses

import numpy as np
import pytest

import zerax as zx
import zerax.nn as nn
import zerax.numpy as znp
import zerax.random as zr
from zerax import errors
from zerax import tree_util as jtu


class Affine(nn.Module):
    w: zx.Array
    b: zx.Array
    act: object
    n: int = nn.field(static=True)

    def __call__(self, x):
        return self.act(self.w * x + self.b) * self.n

    def double(self, x):
        return 2 * self(x)


def _affine():
    return Affine(znp.array([1.0, -2.0]), znp.array([0.5, 0.5]), zx.nn.relu, 3)


def test_module_is_pytree_with_static_fields():
    m = _affine()
    leaves, treedef = jtu.tree_flatten(m)
    assert len(leaves) == 3 and leaves[2] is zx.nn.relu     # w, b, act (n is static)
    m2 = jtu.tree_unflatten(treedef, [leaves[0] * 2, leaves[1], leaves[2]])
    assert type(m2) is Affine and m2.n == 3
    np.testing.assert_array_equal(m2.w, [2.0, -4.0])
    paths = [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(m)[0]]
    assert paths == [".w", ".b", ".act"]
    # static fields are part of the structure
    m3 = Affine(m.w, m.b, m.act, 4)
    assert jtu.tree_structure(m3) != treedef
    assert dataclasses.is_dataclass(m) and "n=3" in repr(m) and "f64[2]" in repr(m)


def test_module_is_immutable_and_init_checks():
    m = _affine()
    with pytest.raises(errors.FrozenModuleError, match="immutable"):
        m.w = znp.zeros(2)
    with pytest.raises(AttributeError):          # FrozenModuleError is an AttributeError
        m.new_attr = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        del m.w

    class Missing(nn.Module):
        a: int
        b: int

        def __init__(self):
            self.a = 1

    with pytest.raises(TypeError, match="Field 'b' was not initialized"):   # Equinox's type
        Missing()

    class Checked(nn.Module):
        x: int = nn.field(converter=int)

        def __check_init__(self):
            if self.x < 0:
                raise ValueError("x must be >= 0")

    assert Checked("5").x == 5 and isinstance(Checked(2.7).x, int)
    with pytest.raises(ValueError, match="x must be"):
        Checked(-1)

    class Child(Checked):      # inherits the generated __init__ and the check
        pass
    with pytest.raises(ValueError):
        Child(-3)


def test_function_valued_field_default_is_a_value():
    class Act(nn.Module):
        w: zx.Array
        fn: object = zx.nn.relu

        def __call__(self, x):
            return self.fn(self.w * x)

    a = Act(znp.array([1.0, -1.0]))
    assert a.fn is zx.nn.relu
    np.testing.assert_array_equal(a(2.0), [2.0, 0.0])


def test_custom_init_inherited_and_reassignment_during_init():
    class Base(nn.Module):
        a: int

        def __init__(self, a):
            self.a = a
            self.a = a + 1       # assignment is allowed until __init__ returns

    class Sub(Base):
        def total(self):
            return self.a * 10

    assert Sub(1).a == 2 and Sub(1).total() == 20


def test_bound_methods_are_pytrees_and_transformable():
    m = _affine()
    bm = m.double
    assert isinstance(bm, nn.BoundMethod) and bm.__self__ is m
    assert len(jtu.tree_leaves(bm)) == 3
    x = znp.array([1.0, 1.0])
    np.testing.assert_allclose(nn.filter_jit(bm)(x), [9.0, 0.0])
    # gradients through the method see the module's arrays
    g = nn.filter_grad(lambda f, x: f(x).sum())(bm, x)
    np.testing.assert_allclose(g.__self__.w, [6.0, 0.0])
    assert Affine.double is Affine.__dict__["double"].fn      # class access: plain function


class Plain(nn.Module):
    w: zx.Array
    b: zx.Array

    def __call__(self, x):
        return 3 * zx.nn.relu(self.w * x + self.b)


def test_grad_vmap_jit_through_module():
    m = Plain(znp.array([1.0, -2.0]), znp.array([0.5, 0.5]))   # arrays only: plain zx.grad
    x = znp.array([2.0, -1.0])

    def loss(m, x):
        return znp.sum(m(x) ** 2)

    g = zx.grad(loss)(m, x)
    # loss = sum(9 * relu(w x + b)^2): d/dw = 18 relu(.) x 1[.>0]
    z = np.array([1.0 * 2 + 0.5, -2.0 * -1 + 0.5])
    np.testing.assert_allclose(g.w, 18 * z * np.array([2.0, -1.0]))
    np.testing.assert_allclose(g.b, 18 * z)
    ys = zx.vmap(m)(znp.stack([x, 2 * x]))
    np.testing.assert_allclose(ys, np.stack([m(x), m(2 * x)]))
    np.testing.assert_allclose(zx.jit(loss)(m, x), loss(m, x))
    np.testing.assert_allclose(nn.filter_jit(loss)(m, x), loss(m, x))
    # a module holding a function is not a plain array pytree: zx.grad refuses it (as
    # jax.grad does), nn.filter_grad handles it
    with pytest.raises(errors.ZeraxTypeError):
        zx.grad(loss)(_affine(), x)


def test_filter_partition_combine():
    tree = {"a": znp.ones(2), "b": [1, znp.arange(3), "s"], "c": np.float32(2.0)}
    arrays = nn.filter(tree, nn.is_array)
    assert arrays["b"][0] is None and arrays["b"][2] is None and arrays["c"] is not None
    inexact = nn.filter(tree, nn.is_inexact_array)
    assert inexact["b"][1] is None and inexact["a"] is tree["a"]
    inv = nn.filter(tree, nn.is_array, inverse=True)
    assert inv["b"] == [1, None, "s"]
    left, right = nn.partition(tree, nn.is_inexact_array)
    back = nn.combine(left, right)
    assert jtu.tree_structure(back) == jtu.tree_structure(tree)
    assert all(a is b for a, b in zip(jtu.tree_leaves(back), jtu.tree_leaves(tree)))
    # a prefix tree of booleans as filter_spec
    l2, r2 = nn.partition([znp.ones(1), [znp.ones(2), 3]], [True, False])
    assert l2[1] == [None, None] and r2[0] is None
    assert nn.is_array_like(1.0) and not nn.is_array_like("x")
    assert nn.is_inexact_array_like(1.0) and not nn.is_inexact_array_like(1)
    with pytest.raises(errors.ZeraxValueError, match="booleans and callables"):
        nn.filter([1], ["no"])


def test_tree_equal():
    m = _affine()
    assert nn.tree_equal(m, m) and nn.tree_equal(m, nn.tree_at(lambda t: t.w, m, m.w + 0))
    assert not nn.tree_equal(m, nn.tree_at(lambda t: t.w, m, m.w + 1e-9))
    assert nn.tree_equal(m, nn.tree_at(lambda t: t.w, m, m.w + 1e-9), rtol=1e-6)
    assert not nn.tree_equal([znp.ones(2)], [znp.ones(2, np.float32)])      # dtypes differ
    assert not nn.tree_equal([1], (1,)) and not nn.tree_equal([1], [1.0], typematch=True)


def test_tree_at():
    m = _affine()
    m2 = nn.tree_at(lambda t: t.b, m, znp.zeros(2))
    np.testing.assert_array_equal(m2.b, [0.0, 0.0])
    assert m2.w is m.w and m.b is not m2.b                  # out of place
    m3 = nn.tree_at(lambda t: (t.w, t.b), m, replace_fn=lambda a: a * 10)
    np.testing.assert_array_equal(m3.w, [10.0, -20.0])
    np.testing.assert_array_equal(m3.b, [5.0, 5.0])
    # subtrees, None leaves and empty containers are nodes that can be replaced
    t = {"x": [1, (2, 3)], "y": None, "z": ()}
    assert nn.tree_at(lambda t: t["x"][1], t, "new") == {"x": [1, "new"], "y": None, "z": ()}
    assert nn.tree_at(lambda t: t["y"], t, 5)["y"] == 5
    assert nn.tree_at(lambda t: t["z"], t, [9])["z"] == [9]
    nested = [m, m]
    out = nn.tree_at(lambda t: t[1].act, nested, zx.nn.sigmoid)
    assert out[1].act is zx.nn.sigmoid and out[0].act is zx.nn.relu
    with pytest.raises(errors.ZeraxValueError, match="node"):
        nn.tree_at(lambda t: znp.ones(1), m, 1)
    with pytest.raises(errors.ZeraxValueError, match="same node twice"):
        nn.tree_at(lambda t: (t.w, t.w), m, (1, 2))
    with pytest.raises(errors.ZeraxValueError, match="exactly one"):
        nn.tree_at(lambda t: t.w, m)
    with pytest.raises(errors.ZeraxValueError, match="as many"):
        nn.tree_at(lambda t: (t.w, t.b), m, (1,))


def test_filter_jit_static_and_dynamic():
    calls = []

    @nn.filter_jit
    def f(x, act, n, flag=True):
        calls.append(1)
        return act(x) * n if flag else x, {"tag": "out", "n": n}

    x = znp.array([-1.0, 2.0])
    y, aux = f(x, zx.nn.relu, 3)
    np.testing.assert_allclose(y, [0.0, 6.0])
    assert aux == {"tag": "out", "n": 3}
    n_traces = len(calls)
    f(x + 1, zx.nn.relu, 3)                      # same static part, same shapes: cached
    assert len(calls) == n_traces
    y2, _ = f(x, zx.nn.relu, 4)                  # a new static value retraces
    np.testing.assert_allclose(y2, [0.0, 8.0])
    y3, _ = f(x, zx.nn.relu, 3, flag=False)
    np.testing.assert_allclose(y3, x)
    assert len(calls) == n_traces + 2


def test_filter_grad_and_value_and_grad_freeze():
    m = _affine()
    x = znp.array([2.0, 1.0])

    def loss(model, x):
        return znp.sum(model(x))

    g = nn.filter_grad(loss)(m, x)
    assert g.act is None and g.n == 3                  # non-arrays get None, static kept
    np.testing.assert_allclose(g.w, [6.0, 0.0])        # relu kills the second unit
    (v, aux), g2 = nn.filter_value_and_grad(lambda m, x: (loss(m, x), "aux"),
                                            has_aux=True)(m, x)
    assert aux == "aux" and float(v) == pytest.approx(float(loss(m, x)))
    g3, aux3 = nn.filter_grad(lambda m, x: (loss(m, x), 7), has_aux=True)(m, x)
    assert aux3 == 7
    np.testing.assert_allclose(g3.w, g.w)
    # freezing: differentiate only the part in the first argument
    trainable, frozen = nn.partition(m, nn.is_inexact_array)
    trainable = nn.tree_at(lambda t: t.b, trainable, None, is_leaf=lambda x: x is None)
    frozen = nn.tree_at(lambda t: t.b, frozen, m.b, is_leaf=lambda x: x is None)
    gf = nn.filter_grad(lambda tr, fr, x: loss(nn.combine(tr, fr), x))(trainable, frozen, x)
    assert gf.b is None
    np.testing.assert_allclose(gf.w, g.w)
    # integer arrays are not differentiated
    gi = nn.filter_grad(lambda t: znp.sum(t[0] * t[1]))([znp.array([1.0, 2.0]), znp.arange(2)])
    assert gi[1] is None
    np.testing.assert_allclose(gi[0], [0.0, 1.0])


def test_filter_vmap():
    m = _affine()
    xs = znp.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    out = nn.filter_vmap(lambda m, x: m(x), in_axes=(None, 0))(m, xs)
    np.testing.assert_allclose(out, np.stack([m(x) for x in xs]))
    # default: every array argument mapped on axis 0, non-arrays shared
    f = nn.filter_vmap(lambda x, act, s: (act(x).sum(), s))
    y, s = f(xs, zx.nn.relu, "tag")
    np.testing.assert_allclose(y, np.maximum(np.asarray(xs), 0).sum(axis=1))
    assert s == "tag"
    # an ensemble: vmap over stacked models
    ms = nn.filter_vmap(lambda w: Affine(w, znp.zeros(2), zx.nn.relu, 1))(znp.ones((4, 2)))
    assert ms.w.shape == (4, 2)
    outs = nn.filter_vmap(lambda m, x: m(x), in_axes=(nn.if_array(0), None))(ms, xs[0])
    assert outs.shape == (4, 2)
    out_ax1 = nn.filter_vmap(lambda x: x * 2, out_axes=1)(xs)
    np.testing.assert_allclose(out_ax1, 2 * np.asarray(xs).T)
    with pytest.raises(errors.ZeraxValueError, match="cannot be mapped"):
        nn.filter_vmap(lambda a: a, in_axes=(0,))("s")


def test_inference_mode():
    model = [nn.Dropout(0.5), {"d": nn.Dropout(0.1, inference=False)}, nn.Linear]
    inf = nn.inference_mode(model)
    assert inf[0].inference and inf[1]["d"].inference and inf[2] is nn.Linear
    assert not model[0].inference                                # out of place
    back = nn.inference_mode(inf, value=False)
    assert not back[0].inference and not back[1]["d"].inference


class Counter(nn.Module):
    index: nn.StateIndex

    def __init__(self):
        self.index = nn.StateIndex((znp.array(0), znp.zeros(2)))

    def __call__(self, x, state):
        n, acc = state.get(self.index)
        return x + n, state.set(self.index, (n + 1, acc + x))


def test_state_roundtrip_and_errors():
    model, state = nn.make_with_state(Counter)()
    assert model.index.marker == "Counter.index"
    y, state2 = model(znp.ones(2), state)
    np.testing.assert_array_equal(y, [1.0, 1.0])
    with pytest.raises(errors.ZeraxValueError, match="already used"):
        state.get(model.index)                      # the old state is retired
    n, acc = state2.get(model.index)
    assert int(n) == 1
    np.testing.assert_array_equal(acc, [1.0, 1.0])
    leaves, treedef = jtu.tree_flatten(state2)
    assert len(leaves) == 2
    clone = jtu.tree_unflatten(treedef, leaves)
    with pytest.raises(errors.ZeraxValueError, match="different structure, shape or dtype"):
        clone.set(model.index, (znp.array(0), znp.zeros(3)))
    # state passes through jit and a scan-like loop
    step = nn.filter_jit(lambda m, x, s: m(x, s))
    s = clone
    for _ in range(3):
        _, s = step(model, znp.ones(2), s)
    assert int(s.get(model.index)[0]) == 4
    # State(model) refuses a model whose init values were moved into the state
    with pytest.raises(errors.ZeraxValueError, match="make_with_state"):
        nn.State(model)
    sub = s.substate(model)
    s2 = s.update(sub)
    assert int(s2.get(model.index)[0]) == 4
    with pytest.raises(errors.ZeraxValueError):
        nn.StateIndex(lambda: 0)


def test_checkpoint_and_hessian_vector_products_through_a_model():
    mlp = nn.MLP(3, 1, 4, 2, activation=znp.tanh, dtype=np.float64, key=zx.random.key(0))
    xs = np.random.default_rng(0).standard_normal((5, 3))
    params, static = nn.partition(mlp, nn.is_inexact_array)

    def loss(p):
        model = nn.combine(p, static)
        return znp.mean(zx.vmap(model)(xs) ** 2)

    # checkpointing a block (the whole model here) leaves the gradient unchanged
    def loss_ckpt(p):
        model = nn.combine(p, static)
        f = nn.filter_checkpoint(lambda m, x: m(x))
        return znp.mean(zx.vmap(lambda x: f(model, x))(xs) ** 2)

    g, g_ck = zx.grad(loss)(params), zx.grad(loss_ckpt)(params)
    for a, b in zip(zx.tree_util.tree_leaves(g), zx.tree_util.tree_leaves(g_ck)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # Hessian-vector product (forward over reverse) against a central difference of grads
    v = zx.tree_util.tree_map(lambda p: znp.ones_like(p) * 0.1, params)
    hvp = zx.jvp(zx.grad(loss), (params,), (v,))[1]
    eps = 1e-5
    shift = lambda s: zx.tree_util.tree_map(lambda p, t: p + s * t, params, v)  # noqa: E731
    gp, gm = zx.grad(loss)(shift(eps)), zx.grad(loss)(shift(-eps))
    for h, a, b in zip(*(zx.tree_util.tree_leaves(t) for t in (hvp, gp, gm))):
        np.testing.assert_allclose(h, (np.asarray(a) - np.asarray(b)) / (2 * eps), rtol=1e-5,
                                   atol=1e-8)
    # a whole training step under filter_jit equals the eager step
    def step(model, x):
        grads = nn.filter_grad(lambda m: znp.mean(zx.vmap(m)(x) ** 2))(model)
        return nn.apply_updates(model, zx.tree_util.tree_map(lambda t: -0.1 * t, grads))

    eager, jitted = step(mlp, xs), nn.filter_jit(step)(mlp, xs)
    for a, b in zip(zx.tree_util.tree_leaves(eager), zx.tree_util.tree_leaves(jitted)):
        if nn.is_array(a):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_filter_vmap_models_with_none_fields():
    # A Linear without bias has a None field: it has no leaf, so no axis, whether the
    # model is shared (in_axes None), mapped (an ensemble) or returned.
    lin = nn.Linear(3, 2, use_bias=False, key=zr.key(0))
    xs = np.arange(12.0).reshape(4, 3)
    out = nn.filter_vmap(lambda m, x: m(x), in_axes=(None, 0))(lin, xs)
    np.testing.assert_allclose(out, xs @ np.asarray(lin.weight, np.float64).T, rtol=1e-6)
    ens = nn.filter_vmap(lambda k: nn.Linear(3, 2, use_bias=False, key=k))(
        zr.split(zr.key(1), 5))
    assert ens.weight.shape == (5, 2, 3) and ens.bias is None
    outs = nn.filter_vmap(lambda m, x: m(x), in_axes=(nn.if_array(0), None))(ens, xs[1])
    np.testing.assert_allclose(outs, np.asarray(ens.weight, np.float64) @ xs[1], rtol=1e-6)


def test_tree_serialise_leaves_is_equinoxs_npy_sequence(tmp_path):
    import io
    mlp = nn.MLP(2, 2, 4, 1, key=zr.key(0))
    tree = {"model": mlp, "step": 7, "lr": 0.5, "tag": "x", "np": np.arange(3)}
    nn.tree_serialise_leaves(tmp_path / "ckpt", tree)            # ".eqx" added
    raw = (tmp_path / "ckpt.eqx").read_bytes()
    # the format: np.save of every array/scalar leaf, in tree_leaves order
    want = io.BytesIO()
    for leaf in jtu.tree_leaves(tree):
        if isinstance(leaf, (zx.Array, np.ndarray, int, float)):   # (not the functions)
            np.save(want, np.asarray(leaf), allow_pickle=False)
    assert raw == want.getvalue()
    like = {"model": nn.filter_eval_shape(nn.MLP, 2, 2, 4, 1, key=zr.key(1)), "step": 0,
            "lr": 0.0, "tag": "y", "np": np.zeros(3, np.int64)}
    back = nn.tree_deserialise_leaves(tmp_path / "ckpt.eqx", like)
    assert nn.tree_equal(back["model"], mlp)
    assert back["step"] == 7 and back["lr"] == 0.5 and back["tag"] == "y"
    assert type(back["np"]) is np.ndarray and type(back["model"].layers[0].weight) is zx.Array
    with pytest.raises(errors.CheckpointError, match="shape"):
        nn.tree_deserialise_leaves(tmp_path / "ckpt.eqx",
                                   {**like, "model": nn.MLP(2, 3, 4, 1, key=zr.key(1))})
    with pytest.raises(errors.CheckpointError, match="fewer"):
        nn.tree_deserialise_leaves(tmp_path / "ckpt.eqx", [like, like])


def test_filter_eval_shape_keeps_non_arrays():
    s = nn.filter_eval_shape(nn.Linear, 3, 2, key=zr.key(0))
    assert s.weight == zx.ShapeDtypeStruct((2, 3), np.float32) and s.in_features == 3
    out = nn.filter_eval_shape(lambda x, f: (f(x) @ znp.ones((2, 5)), f), znp.ones((4, 2)),
                               znp.tanh)
    assert out[0] == zx.ShapeDtypeStruct((4, 5), np.float64) and out[1] is znp.tanh


def test_filter_jvp_vjp_jacobians_hold_non_float_leaves_fixed():
    lin = nn.Linear(3, 2, key=zr.key(0))
    w, b = np.asarray(lin.weight, np.float64), np.asarray(lin.bias, np.float64)
    x = np.array([1.0, 2.0, 3.0])
    # d(Wx + b) in the direction (dW, db, dx) = (1, 1, 0): row sums of x plus 1
    tan = (jtu.tree_map(znp.ones_like, lin), np.zeros(3))
    out, t = nn.filter_jvp(lambda m, v: m(v), (lin, x), tan)
    np.testing.assert_allclose(out, w @ x + b, rtol=1e-6)
    np.testing.assert_allclose(t, [x.sum() + 1] * 2, rtol=1e-6)
    out, vjp_fn = nn.filter_vjp(lambda m, v, n: m(v) * n, lin, x, 3)
    g_m, g_x, g_n = vjp_fn(np.ones(2))
    np.testing.assert_allclose(g_m.weight, 3 * np.tile(x, (2, 1)), rtol=1e-6)
    np.testing.assert_allclose(g_x, 3 * w.sum(0), rtol=1e-6)
    assert g_n is None and g_m.in_features == 3
    for jac in (nn.filter_jacfwd, nn.filter_jacrev):
        J = jac(lambda m: m(x))(lin)
        np.testing.assert_allclose(J.weight, np.einsum("ij,k->ijk", np.eye(2), x), rtol=1e-6)
        np.testing.assert_allclose(J.bias, np.eye(2), rtol=1e-6)
    H = nn.filter_hessian(lambda p: znp.sum(znp.sin(p[0]) * p[1]))([x, 2])
    np.testing.assert_allclose(H[0][0], np.diag(-2 * np.sin(x)), rtol=1e-12)
    assert H[0][1] is None and H[1] is None
    assert float(nn.filter_jit(lambda p, y: p(y))(nn.Partial(znp.multiply, 2.0), 4.0)) == 8.0


def test_abstract_vars_must_be_provided_by_concrete_modules():
    class Base(nn.Module):
        scale: nn.AbstractVar[float]
        kind: nn.AbstractClassVar[str]

        def __call__(self, x):
            return self.scale * x

    class Concrete(Base):
        scale: float
        kind = "plain"

    class Prop(Base):
        kind = "prop"

        @property
        def scale(self):
            return 3.0

    class Missing(Base):
        scale: float

    assert float(Concrete(2.0)(znp.asarray(1.5))) == 3.0
    assert [f.name for f in dataclasses.fields(Concrete)] == ["scale"]
    assert jtu.tree_leaves(Concrete(2.0)) == [2.0]
    assert float(Prop()(znp.asarray(1.0))) == 3.0
    for cls, missing in ((Base, "abstract class attributes kind"), (Missing, "kind")):
        with pytest.raises(TypeError, match=missing):
            cls(1.0) if cls is Missing else cls()
