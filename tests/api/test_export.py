"""zerax.export: export / serialize / deserialize / call, against the original function.

Values are compared with the jitted original (the loaded program is the same IR, so the
same bits on the same sizes), and with NumPy; derivatives of loaded programs with the
original's (and finite differences through check_grads); symbolic dimensions with every
batch size drawn by hypothesis; errors by their messages."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import export, lax, nn
from zerax._src.api.export import blob as blob_format
from zerax.errors import ExportError
from zerax.test_util import check_grads

B, = export.symbolic_shape("b")


def _f32(tree):
    return zx.tree.map(lambda a: a.astype("float32") if hasattr(a, "astype") else a, tree)


@pytest.fixture(scope="module")
def mlp():
    return _f32(nn.MLP(6, 3, width_size=8, depth=2, activation=nn.tanh, key=zx.random.key(0)))


@pytest.fixture(scope="module")
def mlp_exported(mlp):
    predict = zx.jit(lambda x: zx.vmap(mlp)(x))
    exp = export.export(predict)(zx.ShapeDtypeStruct((B, 6), "float32"))
    return predict, exp, export.deserialize(exp.serialize(vjp_order=2))


# --------------------------------------------------------------------------- round trips

@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 40), seed=st.integers(0, 2 ** 16))
def test_symbolic_batch_loaded_equals_original(mlp_exported, batch, seed):
    predict, _, loaded = mlp_exported
    x = np.random.default_rng(seed).standard_normal((batch, 6)).astype("float32")
    np.testing.assert_allclose(loaded.call(x), predict(x), rtol=2e-6, atol=1e-7)


def test_exported_attributes_and_text(mlp_exported):
    _, exp, loaded = mlp_exported
    for e in (exp, loaded):
        assert [a.str_short() for a in e.in_avals] == ["f32[b,6]"]
        assert [a.str_short() for a in e.out_avals] == ["f32[b,3]"]
        assert e.fun_name == "<lambda>" and e.nr_devices == 1 and e.platforms == ("cpu",)
        assert e.in_tree == zx.tree.structure(([0], {}))
        assert e.out_tree == zx.tree.structure(0)
    text = loaded.as_text()
    assert "f32[b,6]" in text and "dot_general" in text and "tanh" in text
    assert loaded.mlir_module() == text
    assert str(loaded) == "Exported(fun_name=<lambda>, ...)"


def test_call_composes_with_jit_vmap_grad(mlp_exported, mlp):
    predict, exp, loaded = mlp_exported
    x = np.random.default_rng(1).standard_normal((4, 6)).astype("float32")
    np.testing.assert_allclose(zx.jit(lambda v: loaded.call(v) * 2.0)(x), predict(x) * 2.0,
                               rtol=2e-6)
    xs = x.reshape(2, 2, 6)
    np.testing.assert_allclose(zx.vmap(loaded.call)(xs), zx.vmap(predict)(xs), rtol=2e-6)

    def loss(f):
        return lambda v: znp.sum(znp.sin(f(v)))
    for e in (exp, loaded):
        np.testing.assert_allclose(zx.grad(loss(e.call))(x), zx.grad(loss(predict))(x),
                                   rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(zx.jit(zx.grad(loss(e.call)))(x),
                                   zx.grad(loss(predict))(x), rtol=2e-5, atol=1e-6)
    # second order, through the VJP of the VJP serialised with vjp_order=2
    v = np.random.default_rng(2).standard_normal((4, 6)).astype("float32")
    hvp = zx.grad(lambda s: znp.vdot(zx.grad(loss(loaded.call))(x + s * v), v))
    want = zx.grad(lambda s: znp.vdot(zx.grad(loss(predict))(x + s * v), v))
    np.testing.assert_allclose(hvp(np.float32(0)), want(np.float32(0)), rtol=1e-4)


def test_derivatives_against_finite_differences():
    exp = export.export(zx.jit(lambda x, y: znp.tanh(x) * y + x ** 3))(
        zx.ShapeDtypeStruct((B,), "float64"), zx.ShapeDtypeStruct((B,), "float64"))
    loaded = export.deserialize(exp.serialize(vjp_order=2))
    x = np.linspace(-1.0, 1.0, 5)
    check_grads(lambda a, b: loaded.call(a, b), (x, x[::-1] + 0.3), order=2, modes=("rev",))


def test_vjp_order_bounds_the_derivatives():
    exp = export.export(zx.jit(znp.sin))(1.0)
    assert exp.has_vjp()
    zero = export.deserialize(exp.serialize())
    assert not zero.has_vjp()
    assert float(zero.call(0.5)) == float(np.sin(0.5))
    with pytest.raises(ExportError, match="vjp_order"):
        zx.grad(zero.call)(0.5)
    one = export.deserialize(exp.serialize(vjp_order=1))
    assert float(zx.grad(one.call)(0.5)) == pytest.approx(np.cos(0.5))
    with pytest.raises(ExportError, match="has no VJP"):
        zx.grad(zx.grad(one.call))(0.5)
    two = export.deserialize(exp.serialize(vjp_order=2))
    assert float(zx.grad(zx.grad(two.call))(0.5)) == pytest.approx(-np.sin(0.5))
    # a fresh export differentiates to any order (its VJPs are exported on demand)
    assert float(zx.grad(zx.grad(zx.grad(exp.call)))(0.5)) == pytest.approx(-np.cos(0.5))
    with pytest.raises(ExportError, match="vjp_order must be"):
        exp.serialize(vjp_order=-1)


def test_custom_vjp_rules_survive_in_the_serialised_vjp():
    @zx.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (znp.clip(g, -1.0, 1.0),))
    f = zx.jit(lambda x: znp.sum(clip_gradient(x) ** 2))
    loaded = export.deserialize(export.export(f)(zx.ShapeDtypeStruct((B,), "float64"))
                                .serialize(vjp_order=1))
    x = np.array([-3.0, -0.2, 0.1, 4.0])
    np.testing.assert_array_equal(zx.grad(loaded.call)(x), np.clip(2 * x, -1, 1))
    np.testing.assert_array_equal(zx.grad(loaded.call)(x), zx.grad(f)(x))


def test_integer_inputs_and_outputs():
    def f(x, n):
        return x * n, n + 1
    exp = export.export(zx.jit(f))(zx.ShapeDtypeStruct((B,), "float32"), np.int32(3))
    loaded = export.deserialize(exp.serialize(vjp_order=1))
    x = np.arange(3, dtype="float32")
    y, m = loaded.call(x, np.int32(2))
    np.testing.assert_array_equal(y, x * 2)
    assert int(m) == 3 and m.dtype == np.int32
    g = zx.grad(lambda v: loaded.call(v, np.int32(5))[0].sum())(x)
    np.testing.assert_array_equal(g, np.full(3, 5.0, "float32"))


# --------------------------------------------------------------------------- programs

def _roundtrip(f, *args, **kw):
    exp = export.export(zx.jit(f))(*args, **kw)
    return export.deserialize(exp.serialize())


@pytest.mark.parametrize("name", ["scan_rnn", "cond_while_fori", "indexing", "reductions",
                                  "linalg", "shapes"])
def test_programs_of_every_kind_load_and_agree(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    w = rng.standard_normal((5, 5)) * 0.3

    def scan_rnn(xs):
        return lax.scan(lambda h, v: (znp.tanh(h @ w + v), h.sum()), znp.zeros(5), xs)

    def cond_while_fori(x):
        y = lax.cond(x[0, 0] > 0, lambda v: v + 1.0, lambda v: v * v, x)
        n, y = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 0.9), (0, y))
        return lax.fori_loop(0, 4, lambda i, a: a + i * znp.cos(a), y), n

    def indexing(x):
        idx = znp.array([3, 0, 1])
        return (x[idx], x[:, ::2], x[1:3, -1], x.at[0].add(1.0), x[idx, idx % 5],
                znp.take_along_axis(x, znp.argsort(x, axis=1), axis=1))

    def reductions(x):
        return (x.max(axis=0), x.min(), znp.argmax(x, axis=1), znp.cumsum(x, axis=1),
                znp.prod(x[:, :2]), znp.sort(x, axis=0), znp.mean(x, axis=1))

    def linalg(x):
        a = x[:, :4] @ x[:, :4].T + 4 * znp.eye(4)
        return znp.linalg.cholesky(a), znp.linalg.solve(a, x[:, 0]), znp.linalg.svd(a)[1]

    def shapes(x):
        y = znp.pad(x, ((1, 0), (0, 2)))
        return (znp.concatenate([x, x[::-1]], axis=0).reshape(5, 8).T, znp.flip(y, 1),
                znp.expand_dims(x, 0) + x[:, None, :1], znp.where(x > 0, x, 0.0))

    f = locals()[name]
    arg = x if name != "scan_rnn" else rng.standard_normal((6, 5))
    loaded = _roundtrip(f, arg)
    want = zx.jit(f)(arg)
    for a, b in zip(zx.tree.leaves(loaded.call(arg)), zx.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def test_constants_that_depend_on_the_batch_size():
    def f(x):
        h = znp.zeros((x.shape[0], 3), x.dtype)
        count = znp.arange(x.shape[0])
        return h + x[:, :3], count * 2, x.mean(axis=0), x - x.sum(0) / x.shape[0]
    loaded = _roundtrip(f, zx.ShapeDtypeStruct((B, 4), "float32"))
    text = loaded.as_text()
    assert "iota" in text and "broadcast_in_dim" in text
    for n in (1, 3, 10):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype("float32")
        for a, b in zip(loaded.call(x), zx.jit(f)(x)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_two_symbolic_dimensions_and_expressions():
    b, n = export.symbolic_shape("b, n")

    def f(x, y):
        return znp.concatenate([x, y], axis=0).reshape(-1), x @ x.T

    loaded = _roundtrip(f, zx.ShapeDtypeStruct((b, n), "float64"),
                        zx.ShapeDtypeStruct((2 * b + 1, n), "float64"))
    assert [a.str_short() for a in loaded.out_avals] == ["f64[3*b*n + n]", "f64[b,b]"]
    x, y = np.ones((2, 3)), np.ones((5, 3))
    out = loaded.call(x, y)
    assert out[0].shape == (21,) and out[1].shape == (2, 2)
    with pytest.raises(ExportError, match=r"args\[1\]\.shape\[0\] to be 2\*b \+ 1"):
        loaded.call(x, np.ones((4, 3)))


def test_params_as_inputs_with_pytrees():
    key = zx.random.key(1)
    model = _f32(nn.MLP(3, 2, width_size=4, depth=1, key=key))
    leaves, treedef = zx.tree.flatten(model)
    where = [k for k, a in enumerate(leaves) if isinstance(a, zx.Array)]
    params = [leaves[k] for k in where]

    def predict(params, x, *, scale):
        full = list(leaves)
        for k, p in zip(where, params):
            full[k] = p
        m = zx.tree.unflatten(treedef, full)
        return {"y": zx.vmap(m)(x) * scale, "n": x.shape[0]}

    exp = export.export(zx.jit(predict))(params, zx.ShapeDtypeStruct((B, 3), "float32"),
                                          scale=np.float32(2))
    loaded = export.deserialize(exp.serialize())
    x = np.ones((5, 3), "float32")
    got = loaded.call(params, x, scale=np.float32(3))
    want = zx.jit(predict)(params, x, scale=np.float32(3))
    np.testing.assert_array_equal(got["y"], want["y"])
    assert int(got["n"]) == 5
    with pytest.raises(ExportError, match="structured"):
        loaded.call(params, x)   # scale missing


def test_registered_nodes_serialise_and_unregistered_ones_are_refused():
    from typing import NamedTuple

    class State(NamedTuple):
        h: object
        c: object

    f = zx.jit(lambda s: State(s.c, s.h + 1.0))
    exp = export.export(f)(State(np.zeros(2), np.ones(2)))
    with pytest.raises(ExportError, match="register"):
        exp.serialize()
    export.register_namedtuple_serialization(State, serialized_name="tests.State")
    loaded = export.deserialize(exp.serialize())
    out = loaded.call(State(np.zeros(2), np.ones(2)))
    assert isinstance(out, State)
    np.testing.assert_array_equal(out.c, np.ones(2))


# --------------------------------------------------------------------------- errors

def test_call_errors_name_the_argument_and_dimension(mlp_exported):
    _, _, loaded = mlp_exported
    with pytest.raises(ExportError, match=r"args\[0\]\.shape\[1\] to be 6.*got 5"):
        loaded.call(np.ones((3, 5), "float32"))
    with pytest.raises(ExportError, match="dtype float32.*got float64"):
        loaded.call(np.ones((3, 6)))
    with pytest.raises(ExportError, match="rank 2"):
        loaded.call(np.ones(6, "float32"))
    with pytest.raises(ExportError, match="structured"):
        loaded.call(np.ones((3, 6), "float32"), np.ones(2))
    two = _roundtrip(lambda x, y: x + y, zx.ShapeDtypeStruct((B,), "float32"),
                     zx.ShapeDtypeStruct((B,), "float32"))
    with pytest.raises(ExportError, match=r"dimension 'b' is 3 from args\[0\]\.shape\[0\] "
                                          r"but 4 from args\[1\]\.shape\[0\]"):
        two.call(np.ones(3, "float32"), np.ones(4, "float32"))


def test_constraints():
    b, = export.symbolic_shape("b", constraints=["b >= 4"])
    loaded = _roundtrip(lambda x: x[:4], zx.ShapeDtypeStruct((b,), "float32"))
    assert loaded.call(np.ones(9, "float32")).shape == (4,)
    with pytest.raises(ExportError, match="'b' must be >= 4, got 3"):
        loaded.call(np.ones(3, "float32"))


def test_export_errors():
    with pytest.raises(ExportError, match="zerax.jit"):
        export.export(znp.sin)
    with pytest.raises(ExportError, match="differs"):
        _roundtrip(lambda x: x * 2 if x.shape[0] > 40 else x, zx.ShapeDtypeStruct((B,), "f4"))
    with pytest.raises(ExportError, match="cannot be exported"):
        _roundtrip(lambda x: zx.debug.print("{}", x) or x, np.ones(2))
    n, = export.symbolic_shape("n")
    with pytest.raises(ExportError, match="do not appear alone"):
        _roundtrip(lambda x: x, zx.ShapeDtypeStruct((n * n,), "float32"))


def test_symbolic_shape_parsing():
    assert export.symbolic_shape("b, 784") == (B, 784)
    assert str(export.symbolic_shape("2*b + (n - 1)*3")[0]) == "2*b + 3*n - 3"
    assert export.symbolic_shape("") == ()
    assert export.is_symbolic_dim(B) and not export.is_symbolic_dim(3)
    with pytest.raises(zx.errors.ZeraxValueError, match="unexpected character"):
        export.symbolic_shape("b / 2")
    with pytest.raises(zx.errors.ShapeError, match="no concrete value"):
        int(B)
    with pytest.raises(zx.errors.NotSupportedError):
        export.symbolic_shape("b", constraints=["b > a"])


def test_zerax_nn_modules_as_inputs():
    """Parameters as inputs in their Module (Equinox's partition): zerax.nn's classes
    are found in the loading process by name, among its pytree classes (never imported);
    a class the loading process does not define is refused by name."""
    model = _f32(nn.MLP(4, 2, width_size=5, depth=1, key=zx.random.key(2)))
    params, static = nn.partition(model, nn.is_array)
    f = zx.jit(lambda p, x: zx.vmap(nn.combine(p, static))(x))
    loaded = export.deserialize(
        export.export(f)(params, zx.ShapeDtypeStruct((B, 4), "float32")).serialize(1))
    x = np.random.default_rng(4).standard_normal((3, 4)).astype("float32")
    np.testing.assert_array_equal(loaded.call(params, x), f(params, x))
    g = zx.grad(lambda p: loaded.call(p, x).sum())(params)
    want = zx.grad(lambda p: f(p, x).sum())(params)
    for a, b in zip(zx.tree.leaves(g), zx.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

    class Local(nn.Module):
        w: object

        def __call__(self, x):
            return x * self.w

    blob = export.export(zx.jit(lambda m, x: m(x)))(Local(np.ones(2)), np.ones(2)).serialize()
    assert export.deserialize(blob).call(Local(np.full(2, 3.0)), np.ones(2)).tolist() == [3, 3]
    manifest, consts, _ = blob_format.read_blob(blob)
    text = json.dumps(manifest).replace(".<locals>.Local", ".<locals>.Gone")
    forged = blob_format.write_blob(json.loads(text), consts, "0.1.0")
    with pytest.raises(ExportError, match="this process has not defined"):
        export.deserialize(forged)


def test_to_onnx_without_onnx_names_the_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)   # as if it were not installed
    with pytest.raises(zx.errors.MissingDependencyError, match=r"zerax\[onnx\]"):
        export.to_onnx(znp.sin, np.zeros(2))
