"""JAX's smaller lax functions: split, tile, stack/unstack, empty, broadcast_shapes, the
bit operations and nextafter, against NumPy."""

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


def test_split_tile_stack_unstack():
    x = np.arange(24.0).reshape(4, 6)
    parts = lax.split(x, (1, 0, 5), axis=1)
    for got, want in zip(parts, np.split(x, [1, 1], axis=1)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(zx.errors.ShapeError):
        lax.split(x, (2, 3), axis=1)
    np.testing.assert_array_equal(lax.tile(x, (2, 3)), np.tile(x, (2, 3)))
    np.testing.assert_array_equal(lax.tile(x, (1, 0)), np.tile(x, (1, 0)))
    with pytest.raises(zx.errors.ShapeError):
        lax.tile(x, (2,))
    np.testing.assert_array_equal(lax.stack([x, 2 * x], axis=-1), np.stack([x, 2 * x], -1))
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.stack([x, x.astype(np.float32)])
    for got, want in zip(lax.unstack(x, axis=1), x.T):
        np.testing.assert_array_equal(got, want)
    # they are compositions: gradients flow
    g = zx.grad(lambda v: (lax.tile(v, (2, 1)) ** 2).sum() + lax.split(v, (3, 1))[1].sum())(x)
    np.testing.assert_allclose(g, 4 * x + (np.arange(4) == 3)[:, None])


def test_empty_broadcast_shapes_nextafter():
    e = lax.empty((2, 3), np.float32)
    assert e.shape == (2, 3) and e.dtype == np.float32
    assert lax.broadcast_shapes((2, 1), (1, 3), (3,)) == (2, 3)
    with pytest.raises(zx.errors.ShapeError):
        lax.broadcast_shapes((2,), (3,))
    for dt in (np.float32, np.float64):
        a = np.array([0.0, 1.0, -1.0, 1e-30, np.inf, 3.0], dt)
        b = np.array([1.0, 2.0, -2.0, 0.0, 0.0, 3.0], dt)
        got = lax.nextafter(a, b)
        assert got.dtype == dt
        np.testing.assert_array_equal(got, np.nextafter(a, b))
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.nextafter(np.float32(1), np.float64(2))


def test_bad_arguments_give_zerax_errors_not_silent_wraparound():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(zx.errors.ShapeError, match="out of bounds"):
        lax.reduce(x, 0.0, lax.add, (5,))
    with pytest.raises(zx.errors.ShapeError, match="non-negative"):
        lax.reduce(x, 0.0, lax.add, (-1,))
    with pytest.raises(zx.errors.ShapeError, match="equal shapes"):
        lax.reduce((x, x.T), (0.0, 0.0), lambda a, b: a, (0,))
    with pytest.raises(zx.errors.ShapeError, match="out of bounds"):
        lax.split(x, (1, 2), axis=3)
    with pytest.raises(zx.errors.ShapeError, match="out of bounds"):
        lax.reduce_xor(np.ones((2, 2), int), (4,))
    with pytest.raises(zx.errors.ZeraxTypeError, match="padding"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), [(1,)])
    with pytest.raises(zx.errors.ZeraxTypeError, match="rhs_dilation"):
        lax.conv_transpose(np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 5)), (2, 2), "SAME",
                           rhs_dilation=2)
    with pytest.raises(zx.errors.ShapeError, match="out of bounds"):
        zx.nn.glu(np.ones((2, 4)), axis=3)
    with pytest.raises(zx.errors.ShapeError, match="leading axis"):
        lax.map(lambda v: v, (np.ones(4), np.ones(5)), batch_size=2)
    with pytest.raises(zx.errors.ZeraxTypeError, match="batch_size"):
        lax.map(lambda v: v, np.ones(4), batch_size=2.5)
    assert lax.split(x, (1, 2), axis=-1)[1].shape == (2, 2)
