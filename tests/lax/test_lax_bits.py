"""lax's bit operations (population_count, clz, shift_right_logical, reduce_xor) against
NumPy, eagerly and under jit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
from zerax import lax


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _ints(dtype, n, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return np.concatenate([x, np.array([0, 1, info.min, info.max], dtype)])


def _unsigned(x):
    return x.view(f"uint{x.dtype.itemsize * 8}")


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_population_count_and_clz(dtype):
    x = _ints(dtype, 40, 0)
    pc = lax.population_count(x)
    assert pc.dtype == dtype
    np.testing.assert_array_equal(pc, np.bitwise_count(_unsigned(x)).astype(dtype))
    bits = np.dtype(dtype).itemsize * 8
    want = [bits - int(v).bit_length() for v in _unsigned(x)]
    got = lax.clz(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array(want).astype(dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64])
def test_shift_right_logical(dtype):
    x = _ints(dtype, 30, 1)
    bits = np.dtype(dtype).itemsize * 8
    y = np.random.default_rng(2).integers(0, bits + 3, x.shape).astype(dtype)
    ux, uy = _unsigned(x), _unsigned(y)
    want = np.where(uy < bits, ux >> np.minimum(uy, bits - 1).astype(ux.dtype), 0)
    got = lax.shift_right_logical(x, y)
    assert got.dtype == dtype
    np.testing.assert_array_equal(_unsigned(np.asarray(got)), want)
    if np.dtype(dtype).kind == "i":      # a negative shift gives 0, as in XLA
        np.testing.assert_array_equal(lax.shift_right_logical(x, np.full_like(x, -1)), 0)
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.shift_right_logical(np.ones(2), np.ones(2))


def test_bit_operations_jit():
    x = _ints(np.int32, 10, 3)
    f = zx.jit(lambda v: (lax.population_count(v), lax.clz(v),
                          lax.shift_right_logical(v, np.int32(3))))
    pc, lz, sr = f(x)
    np.testing.assert_array_equal(pc, lax.population_count(x))
    np.testing.assert_array_equal(lz, lax.clz(x))
    np.testing.assert_array_equal(sr, (_unsigned(x) >> 3).view(np.int32))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data())
def test_reduce_xor(shape, data):
    x = np.random.default_rng(len(shape)).integers(-50, 50, shape)
    axes = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1))))
    np.testing.assert_array_equal(lax.reduce_xor(x, axes), np.bitwise_xor.reduce(x, axis=axes))
    b = x > 0
    np.testing.assert_array_equal(lax.reduce_xor(b, axes), np.logical_xor.reduce(b, axis=axes))
