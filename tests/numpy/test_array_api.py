"""The Python array API standard's parts of zerax.numpy: the namespace and its version,
the inspection namespace, to_device, DLPack (read-only exports), and the behaviours the
standard fixes where NumPy-style code used to differ: vecdot's conjugate, the sign bit
of NaN, an out-of-range axis as an IndexError, -0.0 in outer, clip's parameter names.
References are NumPy 2 and the standard's text."""

import inspect

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors


def test_namespace_and_version():
    x = znp.ones(3)
    assert x.__array_namespace__() is znp
    for version in ("2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=version) is znp
    assert znp.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2019.01")
    # traced values name the same namespace (array-api-compat code under jit)
    assert float(zx.jit(lambda v: v.__array_namespace__().sum(v))(x)) == 3.0


def test_inspection_namespace():
    info = znp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert caps["max dimensions"] == 64
    assert info.default_device() in info.devices() and znp.ones(2).device in info.devices()
    assert info.default_dtypes() == {"real floating": np.float64,
                                     "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert list(info.dtypes(kind="real floating")) == ["float32", "float64"]
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64",
                                                                    "complex128"}
    assert set(info.dtypes(kind="integral")) == {f"{u}int{b}" for u in ("", "u")
                                                 for b in (8, 16, 32, 64)}
    assert len(info.dtypes()) == 13
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="device"):
        info.default_dtypes(device="gpu:3")


def test_to_device():
    x = znp.arange(3)
    assert x.to_device(x.device) is x and x.to_device("cpu") is x
    with pytest.raises(ValueError, match="device"):
        x.to_device("cuda:0")


def test_dlpack_exports_read_only_and_imports():
    x = znp.arange(4.0)
    assert x.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(x)                     # a DLPack 1.0 consumer: shared, read-only
    np.testing.assert_array_equal(y, [0.0, 1.0, 2.0, 3.0])
    assert not y.flags.writeable
    # an older consumer cannot be told the buffer is read-only: it gets a copy, or none
    capsule = x.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    with pytest.raises(BufferError, match="read-only"):
        x.__dlpack__(copy=False)
    z = znp.from_dlpack(np.arange(3, dtype=np.int32))
    assert z.dtype == np.int32 and z.tolist() == [0, 1, 2]
    source = np.arange(3.0)
    copied, shared = znp.from_dlpack(source), znp.from_dlpack(source, copy=False)
    source[0] = 9.0
    assert float(copied[0]) == 0.0 and float(shared[0]) == 9.0
    assert znp.from_dlpack(x) is x
    with pytest.raises(TypeError, match="DLPack"):
        znp.from_dlpack([1, 2])


def test_vecdot_conjugates_the_first_argument():
    a = np.array([1j, 2.0, 3 - 1j])
    b = np.array([2j, 1 + 1j, 3.0])
    for fn in ("vecdot", "vdot"):
        np.testing.assert_allclose(getattr(znp, fn)(a, b), getattr(np, fn)(a, b))
    np.testing.assert_allclose(znp.linalg.vecdot(a, b), np.linalg.vecdot(a, b))
    m = np.outer(b, a)
    np.testing.assert_allclose(znp.vecmat(a, m), np.vecmat(a, m))
    np.testing.assert_allclose(zx.jit(znp.vecdot)(a, b), np.vecdot(a, b))


def test_sign_bit_of_nan():
    x = np.array([-np.nan, np.nan, -0.0, 0.0, -np.inf, 2.0])
    for dt in (np.float16, np.float32, np.float64):
        np.testing.assert_array_equal(znp.signbit(x.astype(dt)), np.signbit(x.astype(dt)))
        np.testing.assert_array_equal(zx.jit(znp.signbit)(x.astype(dt)),
                                      np.signbit(x.astype(dt)))
    got = znp.copysign(np.array([1.0, 2.0, -3.0]), np.array([-np.nan, -0.0, np.nan]))
    np.testing.assert_array_equal(got, [-1.0, -2.0, 3.0])


def test_out_of_range_axis_is_an_index_error():
    x = np.ones((2, 3))
    calls = [lambda: znp.sum(x, axis=2), lambda: znp.sort(x, axis=-3),
             lambda: znp.expand_dims(x, 4), lambda: znp.argmax(x, axis=5),
             lambda: znp.concatenate([x, x], axis=2), lambda: znp.flip(x, axis=3),
             lambda: znp.cumulative_sum(x, axis=2), lambda: znp.vecdot(x, x, axis=2),
             lambda: znp.max(znp.ones(()), axis=1)]
    for call in calls:
        with pytest.raises(errors.AxisError) as info:
            call()
        assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)


def test_outer_keeps_negative_zero():
    got = np.asarray(znp.linalg.outer(np.array([-0.0, 1.0]), np.array([1.0, 2.0])))
    np.testing.assert_array_equal(np.signbit(got), [[True, True], [False, False]])
    np.testing.assert_array_equal(got, np.outer([-0.0, 1.0], [1.0, 2.0]))
    g = zx.grad(lambda v: znp.outer(v, 2 * v).sum())(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [12.0, 12.0])


def test_clip_takes_the_standards_names():
    params = inspect.signature(znp.clip).parameters
    assert list(params)[:3] == ["x", "min", "max"]
    assert params["min"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    x = np.arange(5.0)
    for got in (znp.clip(x, 1, 3), znp.clip(x, min=1, max=3), znp.clip(x, a_min=1, a_max=3)):
        np.testing.assert_array_equal(got, np.clip(x, 1, 3))
    with pytest.raises(ValueError, match="twice"):
        znp.clip(x, 1, a_min=1)
