"""zerax.numpy's bit functions (bitwise_count, packbits, unpackbits) against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64])
def test_bitwise_count(dtype):
    if dtype is np.bool_:
        x = np.array([True, False, True])
    else:
        info = np.iinfo(dtype)
        x = np.random.default_rng(0).integers(info.min, info.max, 40, dtype=dtype,
                                              endpoint=True)
        x = np.concatenate([x, np.array([info.min, info.max, 0], dtype)])
    assert_matches(znp.bitwise_count(x), np.bitwise_count(x))
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.bitwise_count(np.ones(2))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 11), min_size=0, max_size=3), seed=st.integers(0, 99),
       data=st.data())
def test_packbits_unpackbits(shape, seed, data):
    rng = np.random.default_rng(seed)
    nd = len(shape)
    axis = None if nd == 0 or data.draw(st.booleans()) else data.draw(st.integers(-nd, nd - 1))
    order = data.draw(st.sampled_from(["big", "little"]))
    x = rng.integers(0, 3, shape)
    if data.draw(st.booleans()):
        x = x > 0
    assert_matches(znp.packbits(x, axis=axis, bitorder=order), np.packbits(x, axis=axis, bitorder=order))
    u = rng.integers(0, 256, shape, dtype=np.uint8)
    n_bits = 8 * (u.size if axis is None else u.shape[axis])
    count = data.draw(st.one_of(st.none(), st.integers(-n_bits, 3 * n_bits + 2)))
    if count is not None and count > 0 and u.size == 0:
        count = None                  # NumPy leaves such padding uninitialised
    assert_matches(znp.unpackbits(u, axis=axis, count=count, bitorder=order),
          np.unpackbits(u, axis=axis, count=count, bitorder=order))


def test_bits_errors_and_vmap():
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.unpackbits(np.array([1, 2]))             # uint8 only
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.packbits(np.ones(3))
    with pytest.raises(zx.errors.ZeraxValueError):
        znp.unpackbits(np.array([1], np.uint8), count=-9)
    x = np.random.default_rng(1).integers(0, 2, (3, 10))
    assert_matches(zx.vmap(znp.packbits)(x), np.packbits(x, axis=1))
