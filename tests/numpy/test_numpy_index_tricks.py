"""zerax.numpy's index objects (mgrid, ogrid, r_, c_, s_, index_exp), apply_over_axes,
mask_indices, and JAX's dtype aliases, against NumPy."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches


def test_apply_over_axes_and_mask_indices():
    a = np.arange(24.0).reshape(2, 3, 4)
    assert_matches(znp.apply_over_axes(znp.sum, a, [0, 2]), np.apply_over_axes(np.sum, a, [0, 2]))
    assert_matches(znp.apply_over_axes(znp.max, a, -1), np.apply_over_axes(np.max, a, -1))
    assert_matches(znp.apply_over_axes(lambda v, ax: znp.cumsum(v, axis=ax), a, (1,)),
          np.cumsum(a, axis=1))
    with pytest.raises(zx.errors.ZeraxValueError):
        znp.apply_over_axes(lambda v, ax: znp.ravel(v), a, [0])
    for k in (-1, 0, 2):
        for got, want in zip(znp.mask_indices(4, znp.triu, k), np.mask_indices(4, np.triu, k)):
            assert_matches(got, want)
    for got, want in zip(znp.mask_indices(3, znp.tril), np.mask_indices(3, np.tril)):
        assert_matches(got, want)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # NumPy's 'r'/'c' matrices
def test_index_objects():
    for key in (np.s_[0:5], np.s_[0:5, 0:3], np.s_[0:1:5j, 0:3], np.s_[-1:1:0.5],
                np.s_[2:10:3, 0:1:3j, 1:3]):
        assert_matches(znp.mgrid[key], np.mgrid[key])
        got, want = znp.ogrid[key], np.ogrid[key]
        if isinstance(want, np.ndarray):
            assert_matches(got, want)
        else:
            assert isinstance(got, list) and len(got) == len(want)
            for g, w in zip(got, want):
                assert_matches(g, w)
    a = np.arange(6).reshape(2, 3)
    a32 = np.arange(3, dtype=np.int32)
    cases = [
        lambda m: m.r_[-1:5:1, 0, 0, np.array([1, 2, 3])],
        lambda m: m.r_[-1:1:6j, 0, np.array([1, 2, 3])],
        lambda m: m.r_["0,2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["1,3,1", a, a],
        lambda m: m.r_["r", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["c", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["-1", a, a],
        lambda m: m.r_[a32, 5],                      # Python scalars stay weak
        lambda m: m.r_[a32, 5.5],
        lambda m: m.c_[a, a],
        lambda m: m.c_["0,2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.c_["r", [1, 2, 3], [4, 5, 6]],
        lambda m: m.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])],
        lambda m: m.c_[1:4, 4:7],
    ]
    for case in cases:
        assert_matches(case(znp), case(np))
    assert znp.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))
    assert znp.index_exp[1:2] == (slice(1, 2),)
    x = np.array([0.5, -1.0, 2.0])
    g = zx.grad(lambda v: (znp.r_[v, 2 * v, 1.0] ** 2).sum())(x)
    assert_matches(g, 10 * x)
    assert_matches(zx.jit(lambda v: znp.c_[v, v])(x), np.c_[x, x])


def test_dtype_aliases():
    # JAX's scalar types (callable casts) that equal NumPy's (tests/test_jax_names.py)
    assert znp.single is znp.float32 == np.float32 and znp.double is znp.float64 == np.float64
    assert znp.csingle == np.complex64 and znp.cdouble == np.complex128
    assert znp.int_ == np.int64 and znp.uint == np.uint64
    assert znp.zeros(2, znp.single).dtype == np.float32
    assert znp.isdtype(znp.float32, "real floating") and not znp.isdtype(znp.int_, "bool")
    assert znp.iterable([1]) and not znp.iterable(1)
