"""lax.bitcast_convert_type: the bitcast primitive against NumPy's ``.view``, eagerly,
under jit (the Numba lowering) and under vmap; width-changing forms as JAX's."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.lax as lax
from zerax import errors

PAIRS = [(np.uint32, np.float32), (np.float32, np.int32), (np.uint64, np.float64),
         (np.float64, np.int64), (np.int16, np.float16), (np.int8, np.uint8)]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_same_width_matches_numpy_view(data):
    src, dst = data.draw(st.sampled_from(PAIRS))
    n = data.draw(st.integers(0, 6))
    raw = data.draw(st.binary(min_size=n * np.dtype(src).itemsize,
                              max_size=n * np.dtype(src).itemsize))
    x = np.frombuffer(raw, dtype=src).copy()
    out = np.asarray(lax.bitcast_convert_type(x, dst))
    assert out.dtype == np.dtype(dst)
    np.testing.assert_array_equal(out.view(np.uint8), x.view(np.uint8))


def test_jit_and_vmap():
    x = (np.arange(12, dtype=np.uint32) * np.uint32(2654435761)).reshape(3, 4)
    one = np.uint32(0x3F800000)
    f = lambda v: lax.bitcast_convert_type((v >> np.uint32(9)) | one, np.float32) - 1  # noqa
    expected = ((x >> np.uint32(9)) | one).view(np.float32) - np.float32(1)
    np.testing.assert_array_equal(np.asarray(zx.jit(f)(x)), expected)
    np.testing.assert_array_equal(np.asarray(zx.vmap(f)(x)), expected)
    g = zx.jit(lambda v: lax.bitcast_convert_type(v * 2.0, np.int64))
    v = np.array([-1.5, 0.0, 3.25, np.inf])
    np.testing.assert_array_equal(np.asarray(g(v)), (v * 2.0).view(np.int64))
    # a 0-d operand keeps its shape
    assert lax.bitcast_convert_type(np.float32(1.0), np.uint32).shape == ()


def test_width_changes_as_jax():
    wide = np.array([2 ** 32 + 3, 7], np.uint64)
    narrow = lax.bitcast_convert_type(wide, np.uint32)
    np.testing.assert_array_equal(np.asarray(narrow), wide.view(np.uint32).reshape(2, 2))
    back = lax.bitcast_convert_type(narrow, np.uint64)
    np.testing.assert_array_equal(np.asarray(back), wide)
    f = np.array([1.5, -2.0], np.float64)
    np.testing.assert_array_equal(np.asarray(lax.bitcast_convert_type(f, np.float32)),
                                  f.view(np.float32).reshape(2, 2))


def test_errors_and_no_gradient():
    with pytest.raises(errors.ShapeError, match="last axis"):
        lax.bitcast_convert_type(np.zeros(3, np.uint32), np.uint64)
    with pytest.raises(errors.ZeraxTypeError, match="complex"):
        lax.bitcast_convert_type(np.zeros(2, np.complex64), np.uint64)
    g = zx.grad(lambda x: lax.bitcast_convert_type(x, np.int64).astype(float) * 0 + x)(1.0)
    assert float(g) == 1.0
