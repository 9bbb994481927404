"""zerax.numpy against JAX's documented behaviour where it differs from plain NumPy
(results computed with NumPy, following JAX's documented rule), and clear zerax.errors
where JAX raises."""

import numpy as np
import pytest
from np_helpers import assert_same

import zerax as zx
import zerax.numpy as znp
from zerax import errors

# --------------------------------------------------------------------------- creation


@pytest.mark.parametrize("args", [(np.float32(1), 5), (np.int32(1), 5), (np.int8(2), 9, 3),
                                  (np.uint8(4),), (1, 2, np.float16(0.25)), (0, 5),
                                  (np.int32(0), 3.5), (np.float32(0), 1, 0.1)])
def test_arange_dtype_is_promotion_of_bounds(args):
    # JAX: "if dtype is not specified, it is determined via type promotion of start, stop
    # and step" (Python scalars weak)
    want = np.arange(*args, dtype=np.result_type(*args))
    assert_same(znp.arange(*args), want)


def test_arange_keywords_and_errors():
    assert_same(znp.arange(start=4), np.arange(4))
    assert_same(znp.arange(5, step=2), np.arange(0, 5, 2))
    assert_same(znp.arange(1, 7, 2, np.float32), np.arange(1, 7, 2, dtype=np.float32))
    with pytest.raises(errors.ZeraxTypeError):
        znp.arange(True)
    with pytest.raises(errors.ZeraxTypeError):
        znp.arange(np.int8(1), 300)


# --------------------------------------------------------------------------- shapes

_X = np.arange(24.0).reshape(2, 3, 4)
_reshape_f = (lambda x: (znp.reshape(x, (4, -1), order="F"), znp.ravel(x, order="F")))


def test_reshape_and_ravel_order_f():
    assert_same(znp.reshape(_X, (6, 4), order="F"), np.reshape(_X, (6, 4), order="F"))
    assert_same(znp.reshape(_X, -1, order="F"), np.reshape(_X, -1, order="F"))
    assert_same(znp.ravel(_X, order="F"), np.ravel(_X, order="F"))
    a, b = zx.make_jaxpr(_reshape_f)(_X)(_X)   # traced (no compile)
    assert_same(a, np.reshape(_X, (4, -1), order="F"))
    assert_same(b, np.ravel(_X, order="F"))
    g = zx.grad(lambda x: (znp.reshape(x, (4, 6), order="F")[0] * znp.arange(6.0)).sum())(_X)
    want = np.zeros((4, 6))
    want[0] = np.arange(6.0)
    assert_same(g, np.reshape(want, _X.shape, order="F"))
    with pytest.raises(errors.ZeraxTypeError):
        znp.reshape(_X, (6, 4), order="Q")


def _np_repeat_total(x, repeats, total, axis):
    # JAX: "If sum(repeats) is larger than total_repeat_length the remaining values are
    # discarded; if it is smaller, the final value is repeated."
    out = np.repeat(x, repeats, axis=axis)
    n = out.shape[axis]
    if n >= total:
        return np.take(out, np.arange(total), axis=axis)
    last = np.take(x, [x.shape[axis] - 1], axis=axis)
    return np.concatenate([out] + [last] * (total - n), axis=axis)


_repeat_traced = (lambda x, r: znp.repeat(x, r, axis=1, total_repeat_length=5))


@pytest.mark.parametrize("repeats,total", [([1, 2, 0], 4), ([1, 0, 1], 5), ([0, 0, 0], 2),
                                           (2, 4), (2, 8), ([3, 3, 3], 9), ([1, 1, 1], 0)])
def test_repeat_total_repeat_length(repeats, total):
    x = _X[0]
    for axis in (0, 1):
        r = repeats if np.ndim(repeats) == 0 or axis == 0 else repeats + [1]
        assert_same(znp.repeat(x, np.asarray(r), axis=axis, total_repeat_length=total),
                    _np_repeat_total(x, r, total, axis))


def test_repeat_total_repeat_length_traced_repeats():
    r = np.array([2, 0, 1, 4])
    got, = zx.make_jaxpr(_repeat_traced)(_X[0], r)(_X[0], r)   # traced repeats
    assert_same(got, _np_repeat_total(_X[0], r, 5, 1))
    g = zx.grad(lambda x: znp.repeat(x, r, total_repeat_length=5).sum())(np.arange(4.0))
    assert_same(g, np.bincount(np.repeat(np.arange(4), r)[:5], minlength=4).astype(float))
    with pytest.raises(errors.ShapeError):
        znp.repeat(_X[0], [1, 2], axis=1, total_repeat_length=3)
    with pytest.raises(errors.ShapeError):
        znp.repeat(_X[0], 1, total_repeat_length=-1)


# --------------------------------------------------------------------------- indexing

_unravel = zx.jit(lambda i: znp.unravel_index(i, (3, 4)))


def test_unravel_index_clips_like_jax():
    # JAX: "negative indices are supported, and out-of-bound indices are clipped to the
    # nearest valid value" -- the same eagerly and under jit
    idx = np.array([-1, 13, 5, -13, 100, 0, 11])
    want = np.unravel_index(np.clip(idx, -12, 11) % 12, (3, 4))
    assert_same(znp.unravel_index(idx, (3, 4)), want)
    assert_same(_unravel(idx), want)


def test_take_mode_errors_are_zerax_errors():
    with pytest.raises(errors.ZeraxIndexError):
        znp.take(np.arange(5.0), np.array([0, 13]), mode="raise")
    with pytest.raises(errors.ZeraxIndexError):
        znp.take(np.zeros(0), np.array([0]), mode="wrap")


# --------------------------------------------------------------------------- set functions

_U = np.array([3, 1, 2, 1, 3, 3, 0], np.int32)
_B = np.array([1, 7])
_sized_sets = (lambda a, b: (znp.setdiff1d(a, b, size=4, fill_value=-9),
                                   znp.union1d(a, b, size=8, fill_value=-1)))


def _pad(v, size, fill):
    v = np.asarray(v)
    v = v[:size]
    return np.concatenate([v, np.full(size - v.size, fill, v.dtype)])


def test_setdiff1d_and_union1d_size():
    # JAX: with size=, the result has that many entries, padded with fill_value (setdiff1d:
    # default 0; union1d: as unique, the smallest value)
    d, u = np.setdiff1d(_U, _B), np.union1d(_U, _B)
    assert_same(znp.setdiff1d(_U, _B, size=2), _pad(d, 2, 0))
    assert_same(znp.setdiff1d(_U, _B, size=5), _pad(d, 5, 0))
    assert_same(znp.union1d(_U, _B, size=7), _pad(u, 7, u.min()))
    a, b = zx.make_jaxpr(_sized_sets)(_U, _B)(_U, _B)   # traced (no compile)
    assert_same(a, _pad(d, 4, -9))
    assert_same(b, _pad(u, 8, -1))
    x = np.array([4.0, 2.0, 5.0])
    assert_same(znp.setdiff1d(x, np.array([5.0]), size=3, assume_unique=True),
                _pad(np.setdiff1d(x, [5.0], assume_unique=True), 3, 0.0))
    assert_same(znp.setdiff1d(np.zeros(0), _B, size=2), np.zeros(2))


# --------------------------------------------------------------------------- promotion


@pytest.mark.parametrize("dtype,value", [("uint8", 300), ("uint8", -1), ("int8", 1000),
                                         ("uint32", -1)])
def test_out_of_range_python_int_is_a_zerax_error(dtype, value):
    # NumPy 2 raises OverflowError here; zerax raises a zerax error (also an OverflowError)
    x = np.zeros(2, dtype)
    with pytest.raises(OverflowError):
        np.add(x, value)
    with pytest.raises(errors.ZeraxValueError, match="out of bounds"):
        znp.zeros(2, dtype) + value
    with pytest.raises(OverflowError):
        znp.maximum(znp.zeros(2, dtype), value)


def test_clip_takes_bounds_by_position_or_either_keyword_as_numpy_2():
    x = np.array([-3.0, 0.5, 4.0])
    want = np.clip(x, -1.0, 2.0)
    for got in (znp.clip(x, -1.0, 2.0), znp.clip(x, min=-1.0, max=2.0),
                znp.clip(x, a_min=-1.0, a_max=2.0), znp.clip(x, -1.0, max=2.0)):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(znp.clip(x, a_max=0.0)), np.minimum(x, 0.0))
    with pytest.raises(zx.errors.ZeraxValueError, match="given twice"):
        znp.clip(x, a_min=0.0, min=1.0)
