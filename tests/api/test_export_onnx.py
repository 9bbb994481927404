"""zerax.export.to_onnx: models checked by onnx.checker and run in onnxruntime, against
zerax's own results (float32: 1e-5 relative), for an MLP, a CNN and a scan-based RNN,
and for small programs covering each primitive that has an ONNX counterpart; the others
must be named in a clear error."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import export, lax, nn
from zerax.errors import ExportError, NotSupportedError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

RTOL = 1e-5


def _f32(tree):
    return zx.tree.map(lambda a: a.astype("float32") if hasattr(a, "astype") else a, tree)


def run_onnx(fun, *args, opset=17, **kw):
    """``fun(*args)`` through ONNX: the model's outputs, as a list."""
    model = export.to_onnx(fun, *args, opset=opset, **kw)
    onnx.checker.check_model(onnx.load_from_string(model), full_check=True)
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    leaves = [np.asarray(a) for a in zx.tree.leaves((args, kw))]
    feeds = {i.name: v for i, v in zip(sess.get_inputs(), leaves)}
    return sess.run(None, feeds)


def check(fun, *args, rtol=RTOL, atol=1e-6, opset=17):
    got = run_onnx(fun, *args, opset=opset)
    want = zx.tree.leaves(zx.jit(fun)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- models

def test_mlp():
    mlp = _f32(nn.MLP(64, 10, width_size=32, depth=2, key=zx.random.key(0)))
    x = np.random.default_rng(0).standard_normal((16, 64)).astype("float32")
    check(lambda v: nn.softmax(zx.vmap(mlp)(v), axis=-1), x)


class CNN(nn.Module):
    conv1: nn.Conv2d
    conv2: nn.Conv2d
    pool: nn.MaxPool2d
    fc: nn.Linear

    def __init__(self, key):
        k1, k2, k3 = zx.random.split(key, 3)
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, key=k1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, key=k2)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(16 * 4 * 4, 10, key=k3)

    def __call__(self, x):
        x = nn.relu(self.conv1(x.reshape(1, 8, 8)))
        x = self.pool(nn.relu(self.conv2(x)))
        return self.fc(x.reshape(-1))


def test_cnn():
    cnn = _f32(CNN(zx.random.key(1)))
    x = np.random.default_rng(1).standard_normal((6, 64)).astype("float32")
    check(lambda v: zx.vmap(cnn)(v), x)
    model = onnx.load_from_string(export.to_onnx(lambda v: zx.vmap(cnn)(v), x))
    assert sum(n.op_type == "Conv" for n in model.graph.node) >= 2


def test_scan_rnn():
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((5, 5)) * 0.3).astype("float32")
    u = rng.standard_normal((3, 5)).astype("float32")

    def rnn(xs, h0):
        def step(h, x):
            h = znp.tanh(h @ w + x @ u)
            return h, znp.maximum(h, 0.0).sum(-1)
        return lax.scan(step, h0, xs)
    xs = rng.standard_normal((7, 4, 3)).astype("float32")
    check(rnn, xs, np.zeros((4, 5), "float32"))
    check(lambda xs, h: lax.scan(lambda c, x: (c * 0.5 + x, c), h, xs, reverse=True),
          xs, np.ones((4, 3), "float32"))
    cell = _f32(nn.GRUCell(3, 5, key=zx.random.key(3)))
    check(lambda xs: lax.scan(lambda h, x: (cell(x, h), h), np.zeros(5, "float32"), xs)[1],
          xs[:, 0])


def test_control_flow():
    x = np.linspace(-2, 2, 6).astype("float32")
    check(lambda v: lax.cond(v.sum() > 0, lambda a: a * 2.0, lambda a: -a, v), x)
    check(lambda v, i: lax.switch(i, [lambda a: a + 1.0, znp.sin, znp.cos], v), x,
          np.int32(5))
    check(lambda v: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5),
                                   (0, v)), x)
    check(lambda v: lax.fori_loop(0, 4, lambda i, a: a + znp.sin(a) * 0.5, v), x)


# --------------------------------------------------------------------------- primitives

_X = np.random.default_rng(5).uniform(-2, 2, (3, 4)).astype("float32")
_P = np.random.default_rng(6).uniform(0.1, 3, (3, 4)).astype("float32")
_I = np.arange(-5, 7).reshape(3, 4).astype("int32")

ELEMENTWISE = {
    "math": (lambda x, p: (znp.sin(x), znp.cos(x), znp.tan(x), znp.tanh(x), znp.exp(x),
                           znp.log(p), znp.sqrt(p), lax.rsqrt(p), znp.abs(x), -x,
                           znp.floor(x), znp.ceil(x), znp.round(x * 3), znp.sign(x),
                           znp.arcsin(x / 3), znp.arccos(x / 3), znp.arctan(x),
                           znp.arcsinh(x), znp.arccosh(p + 1), znp.arctanh(x / 3),
                           znp.sinh(x), znp.cosh(x), lax.erf(x), nn.sigmoid(x), znp.exp2(x),
                           znp.cbrt(x)), (_X, _P)),
    "accurate": (lambda x: (znp.expm1(x * 1e-6), znp.log1p(x * 1e-6), znp.expm1(x),
                            znp.log1p(x + 2.5)), (_X,)),
    "binary": (lambda x, p: (x + p, x - p, x * p, x / p, p ** x, znp.maximum(x, p),
                             znp.minimum(x, p), lax.rem(x, p), znp.arctan2(x, p - 1.5),
                             znp.floor_divide(x, p), lax.integer_pow(x, 3),
                             lax.integer_pow(p, -2), znp.clip(x, -1, p)), (_X, _P)),
    "compare": (lambda x, p: (x < p, x <= p, x > p, x >= p, x == p, x != p,
                              znp.where(x > 0, x, p), znp.isnan(x / p),
                              znp.isfinite(x / (p - p)),
                              znp.logical_and(x > 0, p > 1), znp.logical_not(x > 0),
                              znp.logical_or(x > 0, p > 1), znp.logical_xor(x > 0, p > 1)),
                (_X, _P)),
    "integers": (lambda i: (i + 3, i * i, i // 3, lax.rem(i, 4), -i, znp.abs(i),
                            znp.sign(i), i.astype("float32") / 2, (i > 0).astype("int32"),
                            znp.floor_divide(i, -3), znp.maximum(i, 1)), (_I,)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name):
    fun, args = ELEMENTWISE[name]
    check(fun, *args)


def test_reductions_and_shapes():
    x = _X
    check(lambda v: (v.sum(0), v.max(1), v.min(), znp.prod(v, 1), v.mean(), znp.argmax(v, 1),
                     znp.argmin(v, 0), znp.cumsum(v, 1), znp.cumsum(v[::-1], 0)[::-1],
                     znp.any(v > 1, axis=1), znp.all(v > -3)), x)
    check(lambda v: (v.T, v.reshape(2, 6), znp.broadcast_to(v[:, :1], (3, 4)),
                     znp.concatenate([v, v * 2], 1), v[::-1, ::-2], v[1:, 2:], v[None, :, 1],
                     znp.squeeze(v[:1]), znp.pad(v, ((1, 2), (0, 1))),
                     lax.pad(v, np.float32(7), ((1, -1, 1), (-2, 1, 2))),
                     znp.arange(5.0, dtype="float32") + v[0, 0], znp.sort(v, axis=1),
                     znp.sort(v, axis=0), znp.tile(v, (2, 1))), x)


def test_indexing():
    x = np.arange(24.0, dtype="float32").reshape(2, 3, 4)
    idx = np.array([[2, 0], [-1, 1]], np.int32)
    check(lambda v, i: (v[:, i], v[1, i], v[i, 1], v[:, 0, i], v[0][i, i], v[i, :, i],
                        v[..., i], v[:, None, i], v[1, :, 3], v[-1], v[:, [0, 2]],
                        znp.take(v, i, axis=2),
                        znp.take_along_axis(v, np.arange(12).reshape(2, 3, 2) % 4, 2),
                        v.at[i].get(mode="fill", fill_value=-1.0)), x, idx)
    check(lambda v, s: (lax.dynamic_slice(v, (s, s + 1, 0), (1, 2, 3)),
                        lax.dynamic_update_slice(v, v[:1, :2, :2] * 0.0 - 1, (s, 9, s)),
                        lax.dynamic_slice(v, (s - 5, 0, s), (2, 1, 2))), x, np.int32(1))


def test_dot_general_forms():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    b = rng.standard_normal((2, 4, 5)).astype("float32")
    check(lambda a, b: (a @ b, znp.einsum("bij,bjk->bik", a, b), znp.einsum("bij,bkj->bik", a,
                                                                             a),
                        znp.tensordot(a, b, ((0, 2), (0, 1))), a[0] @ a[0].T, a[0, 0] @ b[0],
                        znp.vdot(a[0, 0], a[1, 0]), znp.einsum("ijk,ijk->k", a, a)), a, b)


def test_windows_pooling_and_their_gradients():
    x = np.random.default_rng(8).standard_normal((2, 3, 7, 6)).astype("float32")
    w = np.random.default_rng(9).standard_normal((4, 3, 3, 2)).astype("float32")

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 1)), rhs_dilation=(1, 2))
    check(conv, x, w)
    check(lambda x: (lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                       "VALID"),
                     lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 2), "SAME")),
          x)
    check(zx.grad(lambda x, w: (conv(x, w) ** 2).sum(), argnums=(0, 1)), x, w, rtol=1e-4)


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 5), width=st.integers(1, 9), seed=st.integers(0, 99))
def test_mlp_shapes(batch, width, seed):
    mlp = _f32(nn.MLP(3, 2, width_size=width, depth=1, key=zx.random.key(seed)))
    x = np.random.default_rng(seed).standard_normal((batch, 3)).astype("float32")
    check(lambda v: zx.vmap(mlp)(v), x)


def test_opsets_and_names():
    x, p = _X, _P
    for opset in (13, 18, 21):
        check(lambda a, b: (a.max(0) * b.min(1)[:, None], znp.logical_not(a > 0)), x, p,
              opset=opset)
    model = onnx.load_from_string(export.to_onnx(lambda d: d["w"] @ d["x"],
                                                 {"x": x.T, "w": p}))
    assert [i.name for i in model.graph.input] == ["args_0_w", "args_0_x"]
    assert [o.name for o in model.graph.output] == ["out_0"]
    assert model.producer_name == "zerax"
    with pytest.raises(ExportError, match="opset"):
        export.to_onnx(znp.sin, x, opset=7)
    with pytest.raises(ExportError, match="opset >= 18"):
        export.to_onnx(lambda i: i & 3, _I, opset=17)
    assert run_onnx(lambda i: i & 3, _I, opset=18)[0].tolist() == (_I & 3).tolist()


def test_primitives_without_counterpart_are_named():
    a = np.eye(3, dtype="float32") * 2
    with pytest.raises(NotSupportedError, match="'cholesky'.*no ONNX counterpart.*decomp"):
        export.to_onnx(znp.linalg.cholesky, a)
    with pytest.raises(NotSupportedError, match="'threefry2x32'"):
        export.to_onnx(lambda k: zx.random.normal(zx.random.wrap_key_data(k), (2,)),
                       np.zeros(2, "uint32"))
    with pytest.raises(ExportError, match="complex"):
        export.to_onnx(lambda x: x * 1j, a)
    with pytest.raises(ExportError, match="concrete shapes"):
        export.to_onnx(znp.sin, zx.ShapeDtypeStruct(export.symbolic_shape("b"), "float32"))
