"""eval_shape, ShapeDtypeStruct, linear_transpose, tree_util.Partial and the device
no-ops, against their definitions (NumPy results, explicit matrices)."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax.tree_util import Partial


def test_eval_shape_traces_without_computing():
    calls = []

    def f(params, x):
        calls.append(type(x).__name__)
        return {"y": znp.tanh(x @ params["w"]) + params["b"], "n": znp.sum(x)}

    params = {"w": zx.ShapeDtypeStruct((4, 3), np.float32), "b": np.zeros(3, np.float32)}
    out = zx.eval_shape(f, params, zx.ShapeDtypeStruct((2, 4), np.float32))
    assert out == {"y": zx.ShapeDtypeStruct((2, 3), np.float32),
                   "n": zx.ShapeDtypeStruct((), np.float32)}
    assert calls and calls[0] != "Array"          # traced, not run on values
    assert zx.eval_shape(lambda a: a.astype(np.int32), np.ones((5,))).dtype == np.int32


def test_linear_transpose_is_the_matrix_transpose():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 4))
    f_t = zx.linear_transpose(lambda x: znp.asarray(m) @ x, zx.ShapeDtypeStruct((4,), float))
    ct = rng.standard_normal(3)
    (got,) = f_t(ct)
    np.testing.assert_allclose(got, m.T @ ct)


def test_partial_is_a_pytree_through_jit_and_grad():
    scale = Partial(lambda s, x: s * x, 3.0)
    assert zx.tree_util.tree_leaves(scale) == [3.0]
    f = zx.jit(lambda g, x: g(x) ** 2)
    assert float(f(scale, 2.0)) == pytest.approx(36.0)
    grad_s = zx.grad(lambda g: g(2.0) ** 2)(scale)
    assert isinstance(grad_s, Partial) and float(grad_s.args[0]) == pytest.approx(24.0)


def test_device_calls_are_identities_on_the_cpu():
    x = {"a": np.arange(3.0)}
    put = zx.device_put(x)
    assert isinstance(put["a"], zx.Array)
    np.testing.assert_array_equal(put["a"], x["a"])
    assert zx.block_until_ready(put) is put
    assert zx.devices()[0].platform == "cpu" and zx.default_backend() == "cpu"
    assert znp.ones(3, np.float32).itemsize == 4


def test_linear_transpose_rejects_a_nonlinear_function_and_fills_unused_inputs():
    with pytest.raises(zx.errors.ZeraxTypeError, match="not linear"):
        zx.linear_transpose(znp.sin, 1.0)(1.0)
    with pytest.raises(zx.errors.ZeraxTypeError, match="not linear"):
        zx.linear_transpose(lambda a: a * a, 1.0)(1.0)
    gx, gy = zx.linear_transpose(lambda x, y: 2.0 * x, 1.0, np.ones(2))(1.0)
    assert float(gx) == 2.0
    np.testing.assert_array_equal(gy, np.zeros(2))


def test_device_put_is_the_identity_under_transforms():
    f = lambda a: zx.device_put(a) * 2.0  # noqa: E731
    np.testing.assert_array_equal(zx.jit(f)(np.arange(3.0)), np.arange(3.0) * 2)
    assert float(zx.grad(lambda a: f(a).sum())(1.0)) == 2.0


def test_array_sharding_is_one_device_and_device_put_takes_it():
    x = znp.arange(6.0).reshape(2, 3)
    s = x.sharding
    dev = zx.devices()[0]
    assert isinstance(s, zx.sharding.SingleDeviceSharding)
    assert s.device_set == x.devices() == {dev} == s.addressable_devices
    assert s.is_fully_replicated and s.is_fully_addressable and s.num_devices == 1
    assert s.shard_shape(x.shape) == (2, 3)
    assert s.devices_indices_map(x.shape) == {dev: (slice(None), slice(None))}
    assert s == zx.sharding.SingleDeviceSharding(dev) and hash(s) == hash(x.sharding)
    y = zx.device_put(np.ones(3), s)
    assert isinstance(y, zx.Array) and y.devices() == {dev}
    with pytest.raises(zx.errors.ZeraxTypeError, match="zerax Device"):
        zx.sharding.SingleDeviceSharding("cpu:0")


def test_device_get_and_process_helpers():
    out = zx.device_get({"a": znp.arange(3.0), "b": (2, "s"), "c": np.ones(2)})
    assert type(out["a"]) is np.ndarray and out["b"] == (2, "s")
    np.testing.assert_array_equal(out["a"], [0.0, 1.0, 2.0])
    with pytest.raises(zx.errors.ConcretizationError):
        zx.jit(lambda x: zx.device_get(x))(1.0)
    assert zx.local_devices() == zx.devices()
    assert zx.process_index() == 0 and zx.process_count() == 1


def test_scope_contexts_change_nothing():
    @zx.jit
    def f(x):
        with zx.named_scope("block"), zx.ensure_compile_time_eval():
            n = int(znp.sum(znp.array([1, 2])))      # concrete inside jit
        return zx.named_call(znp.sin, name="s")(x) * n

    with zx.default_device(zx.devices()[0]):
        np.testing.assert_allclose(f(0.5), 3 * np.sin(0.5))
    with pytest.raises(zx.errors.ZeraxTypeError):
        with zx.named_scope(3):
            pass


def test_clear_caches_retraces():
    traces = []

    @zx.jit
    def f(x):
        traces.append(1)
        return x * 2.0

    f(1.0)
    f(2.0)
    assert len(traces) == 1
    zx.clear_caches()
    np.testing.assert_allclose(f(3.0), 6.0)
    assert len(traces) == 2


def test_typing_names():
    from zerax.typing import ArrayLike, DTypeLike

    def double(x: ArrayLike, dtype: DTypeLike = None):
        return znp.asarray(x, dtype=dtype) * 2

    np.testing.assert_array_equal(double([1.0, 2.0]), [2.0, 4.0])
    assert "ArrayLike" in zx.typing.__all__


def test_pmap_is_vmap_with_collectives_compiled():
    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(zx.pmap(lambda v: v ** 2)(x), x ** 2)
    got = zx.pmap(lambda v: v / zx.lax.psum(v, "d"), axis_name="d")(x)
    np.testing.assert_allclose(got, x / x.sum(0), rtol=1e-15)

    def update(params, batch, lr):
        g = zx.grad(lambda p: znp.sum((batch @ p) ** 2))(params)
        return params - lr * zx.lax.pmean(g, "b")

    step = zx.pmap(update, axis_name="b", static_broadcasted_argnums=(2,))
    params = np.ones((4, 3))
    batches = x[:, None, :] * np.ones((4, 2, 3))
    per = np.stack([2 * b.T @ (b @ p) for p, b in zip(params, batches)])
    np.testing.assert_allclose(step(params, batches, 0.1), params - 0.1 * per.mean(0),
                               rtol=1e-12)
    np.testing.assert_allclose(zx.pmap(lambda a, b: a + b, in_axes=(0, None))(x, np.ones(3)),
                               x + 1)
    with pytest.raises(zx.errors.ZeraxValueError, match="in_axes"):
        zx.pmap(lambda a, b: a + b, in_axes=(0,))(x, x)


def test_segment_reductions_against_python_loops():
    rs = np.random.RandomState(0)
    data = rs.randn(7, 2)
    ids = np.array([0, 2, 2, -1, 4, 0, 9])          # -1 and 9 are dropped (5 segments)
    n = 5
    ops = {"sum": (zx.ops.segment_sum, np.add, 0.0),
           "prod": (zx.ops.segment_prod, np.multiply, 1.0),
           "max": (zx.ops.segment_max, np.maximum, -np.inf),
           "min": (zx.ops.segment_min, np.minimum, np.inf)}
    for name, (fn, op, ident) in ops.items():
        want = np.full((n, 2), ident)
        for row, i in zip(data, ids):
            if 0 <= i < n:
                want[i] = op(want[i], row)
        np.testing.assert_allclose(fn(data, ids, n), want, rtol=1e-15, err_msg=name)
        np.testing.assert_allclose(zx.jit(lambda d, s, fn=fn: fn(d, s, n))(data, ids), want,
                                   rtol=1e-15, err_msg=name)
    ints = zx.ops.segment_min(np.arange(4), np.array([1, 1, 0, 0]), 3)
    np.testing.assert_array_equal(ints, [2, 0, np.iinfo(np.int64).max])
    np.testing.assert_allclose(zx.ops.segment_sum(np.ones(3), np.array([0, 2, 2])), [1, 0, 2])
    g = zx.grad(lambda d: znp.sum(zx.ops.segment_sum(d, np.array([0, 1, 1]), 2) ** 2))(
        np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, [2.0, 10.0, 10.0])
    with pytest.raises(zx.errors.ShapeError):
        zx.ops.segment_sum(np.ones(3), np.array([0, 1]), 2)
