"""zerax.numpy creation and shape functions against NumPy 2: values, dtypes, errors,
derivatives (check_grads) and tracing (make_jaxpr).  Joining and splitting are tested in
test_numpy_joining.py, pad in test_numpy_padding.py."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

from np_helpers import (  # noqa: E402 - shared test helpers
    DTYPES, SETTINGS, arrays, assert_same, assert_traced_matches, small_shapes, traced,
)


def total(y):
    """The sum of all elements (with the lax reduction, independent of znp.sum)."""
    return zx.lax.reduce_sum(y, tuple(range(y.ndim)))

# --------------------------------------------------------------------------- creation


@SETTINGS
@given(small_shapes(), st.sampled_from([None] + DTYPES))
def test_filled(shape, dtype):
    for name in ("zeros", "ones", "empty"):
        got = getattr(znp, name)(shape, dtype)
        want = getattr(np, name)(shape, dtype)
        assert got.dtype == want.dtype and got.shape == want.shape
        if name != "empty":
            assert_same(got, want)
    assert_same(znp.full(shape, 3, dtype), np.full(shape, 3, dtype))
    assert_same(znp.full(shape, 2.5), np.full(shape, 2.5))


@SETTINGS
@given(arrays(), st.sampled_from([None] + DTYPES), st.sampled_from([None, (2, 3), 4]))
def test_like(x, dtype, shape):
    for name in ("zeros_like", "ones_like"):
        assert_same(getattr(znp, name)(znp.array(x), dtype, shape=shape),
                    getattr(np, name)(x, dtype, shape=shape))
    got = znp.empty_like(x, dtype, shape=shape)
    want = np.empty_like(x, dtype, shape=shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert_same(znp.full_like(x, 7, dtype, shape=shape), np.full_like(x, 7, dtype, shape=shape))
    assert_same(znp.full_like(x, 1.75, shape=shape), np.full_like(x, 1.75, shape=shape))


def test_like_python_scalars_and_lists():
    assert_same(znp.zeros_like(2.0), np.zeros_like(2.0))
    assert_same(znp.ones_like([1, 2]), np.ones_like([1, 2]))
    assert_same(znp.full_like(True, 0), np.full_like(True, 0))


def test_full_broadcast_and_traced_fill():
    assert_same(znp.full((2, 3), [1.0, 2.0, 3.0]), np.full((2, 3), [1.0, 2.0, 3.0]))
    f = lambda v: znp.full((2, 3), v)
    assert_same(f(np.float32(1.5)), np.full((2, 3), np.float32(1.5)))
    assert_traced_matches(f, np.float32(1.5))
    assert float(zx.grad(lambda v: total(znp.full((2, 3), v)))(1.0)) == 6.0
    g = zx.grad(lambda v: total(znp.full_like(np.zeros((4,)), v)))(2.0)
    assert float(g) == 4.0


@SETTINGS
@given(arrays(), st.sampled_from([None] + DTYPES), st.integers(0, 5))
def test_array_asarray(x, dtype, ndmin):
    if dtype is not None and np.dtype(dtype).kind in "iu" and x.dtype.kind in "fi":
        x = np.abs(x)  # NumPy refuses out-of-range Python numbers (zerax too)
    assert_same(znp.array(x, dtype, ndmin=ndmin), np.array(x, dtype, ndmin=ndmin))
    assert_same(znp.array(x.tolist(), dtype), np.array(x.tolist(), dtype))
    assert_same(znp.asarray(znp.array(x), dtype), np.asarray(x, dtype))
    assert_same(znp.copy(x), np.copy(x))
    assert_same(znp.array(znp.array(x), ndmin=ndmin), np.array(x, ndmin=ndmin))


def test_array_scalars_and_nested_arrays():
    for v in (1, 2.5, True, [1, 2.0], [[True, False]], (1, 2), [], [[], []]):
        assert_same(znp.array(v), np.array(v))
    a = znp.array([1.0, 2.0], dtype=znp.float32)
    assert_same(znp.array([a, a]), np.array([np.float32([1, 2])] * 2))
    assert_same(znp.array([np.float32(1), 1.0]), np.array([np.float32(1), 1.0]))


def test_array_of_tracers():
    f = lambda a, b: znp.array([[a, 1.0], [b, a * b]])
    assert_same(f(2.0, 3.0), np.array([[2.0, 1.0], [3.0, 6.0]]))
    assert_traced_matches(f, 2.0, 3.0)
    ga, gb = zx.grad(lambda a, b: total(f(a, b) ** 2), argnums=(0, 1))(2.0, 3.0)
    assert float(ga) == pytest.approx(2 * 2.0 + 2 * 6.0 * 3.0)
    assert float(gb) == pytest.approx(2 * 3.0 + 2 * 6.0 * 2.0)
    # Traced rows, int dtype request, promotion as NumPy (float32 with a Python float)
    g = lambda x: znp.array([x, x + 1], dtype=int)
    assert_same(g(np.array([1.5, 2.5])), np.array([[1, 2], [2, 3]]))
    h = lambda x: znp.array([x, 1.0])
    assert traced(h, np.float32(2.0))[0].dtype == np.array([np.float32(2.0), 1.0]).dtype
    with pytest.raises(errors.ShapeError):
        zx.make_jaxpr(lambda x: znp.array([x, [1.0, 2.0, 3.0]]))(np.ones(2))
    check_grads(lambda x: znp.sin(znp.array([[x, 2 * x], [x * x, 1.0]])), (0.7,), order=2)


def test_array_bad_input():
    with pytest.raises(errors.ZeraxTypeError):
        znp.array("abc")
    with pytest.raises(errors.ZeraxTypeError):
        znp.array([1, 2], dtype="U3")
    with pytest.raises(errors.ShapeError):
        znp.array([[1, 2], [3]])


@SETTINGS
@given(arrays(), st.sampled_from(DTYPES))
def test_astype(x, dtype):
    if np.dtype(dtype).kind in "iu" and x.dtype.kind == "f":
        x = np.clip(x, 0, 100)
    assert_same(znp.astype(znp.array(x), dtype), np.astype(x, dtype))
    assert_same(znp.array(x).astype(dtype), x.astype(dtype))


@SETTINGS
@given(st.integers(-6, 6), st.one_of(st.none(), st.integers(-6, 6)),
       st.sampled_from([None, 1, 2, -1, 3, 0.5, 1.5]),
       st.sampled_from([None, np.float64, np.float32, np.int64, np.int16]))
def test_arange(a, b, step, dtype):
    if step is None and b is None:
        assert_same(znp.arange(a, dtype=dtype), np.arange(a, dtype=dtype))
        return
    if b is None:
        b = a + 3
    if step is None:
        assert_same(znp.arange(a, b, dtype=dtype), np.arange(a, b, dtype=dtype))
        return
    assert_same(znp.arange(a, b, step, dtype=dtype), np.arange(a, b, step, dtype=dtype),
                exact=False)
    assert_same(znp.arange(float(a), b, step), np.arange(float(a), b, step), exact=False)


def test_arange_errors():
    with pytest.raises(errors.ShapeError):
        znp.arange(0, 5, 0)
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda n: znp.arange(n))(5)


@SETTINGS
@given(st.floats(-10, 10), st.floats(-10, 10), st.integers(0, 7), st.booleans(),
       st.sampled_from([None, np.float32, np.int64, np.int32]))
def test_linspace_scalars(start, stop, num, endpoint, dtype):
    got, step = znp.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype)
    want, wstep = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype)
    if want.dtype.kind in "iu":
        # floor of a value within rounding of an integer can differ by one
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.max(np.abs(np.asarray(got) - want), initial=0) <= 1
    else:
        assert_same(got, want, exact=False, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(np.asarray(step), wstep, rtol=1e-12)


@SETTINGS
@given(arrays(dtypes=[np.float64, np.float32, np.int32], max_dims=2, max_side=3),
       st.floats(-5, 5), st.integers(0, 5), st.booleans(), st.integers(-3, 2))
def test_linspace_arrays(start, stop, num, endpoint, axis):
    axis = axis % (start.ndim + 1) - (start.ndim + 1) if axis < 0 else min(axis, start.ndim)
    got = znp.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    want = np.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    assert_same(got, want, exact=False, rtol=1e-5 if want.dtype == np.float32 else 1e-12)


def test_linspace_dtypes_and_grad():
    for a, b in [(0, 1), (np.int8(0), np.int8(3)), (np.float16(0), 3), (False, True),
                 (np.float32(0), 1.0), (0, np.float32(1))]:
        assert znp.linspace(a, b, 4).dtype == np.linspace(a, b, 4).dtype
    check_grads(lambda a, b: znp.linspace(a, b, 5) ** 2, (0.5, np.array([1.0, 2.0])), order=2)
    check_grads(lambda a, b: znp.linspace(a, b, 4, endpoint=False, axis=1),
                (np.array([0.5, 1.5]), 2.0), order=1)
    assert_traced_matches(lambda a, b: znp.linspace(a, b, 6), 1.0, 2.0)
    with pytest.raises(errors.ShapeError):
        znp.linspace(0, 1, -1)


@SETTINGS
@given(st.floats(-3, 3), st.floats(-3, 3), st.integers(0, 6), st.booleans(),
       st.sampled_from([10.0, 2, 2.5]), st.sampled_from([None, np.float32]))
def test_logspace(start, stop, num, endpoint, base, dtype):
    assert_same(znp.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=dtype),
                np.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=dtype),
                exact=False, rtol=1e-5 if dtype else 1e-12)


def test_logspace_array_base_and_dtype():
    base = np.array([2.0, 3.0])
    assert_same(znp.logspace(0.0, 2.0, 3, base=base), np.logspace(0.0, 2.0, 3, base=base),
                exact=False)
    assert_same(znp.logspace(0.0, 2.0, 3, base=base, axis=1),
                np.logspace(0.0, 2.0, 3, base=base, axis=1), exact=False)
    s = np.float32([0, 1])
    assert znp.logspace(s, 2, 3).dtype == np.logspace(s, 2, 3).dtype


@SETTINGS
@given(st.floats(0.1, 100), st.floats(0.1, 100), st.booleans(), st.booleans(),
       st.integers(0, 6), st.booleans(), st.sampled_from([None, np.float32, np.int64]))
def test_geomspace(start, stop, neg_a, neg_b, num, endpoint, dtype):
    start, stop = -start if neg_a else start, -stop if neg_b else stop
    with np.errstate(invalid="ignore"):
        want = np.geomspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    with np.errstate(invalid="ignore"):  # mixed signs give nan, as in NumPy
        got = znp.geomspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    if want.dtype.kind in "iu":
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.max(np.abs(np.asarray(got) - want), initial=0) <= 1
    else:
        assert_same(got, want, exact=False, rtol=1e-5 if dtype else 1e-12)


def test_geomspace_arrays_and_errors():
    a, b = np.array([1.0, -2.0]), np.array([[100.0, -50.0]] * 2)
    assert_same(znp.geomspace(a, b, 4, axis=-1), np.geomspace(a, b, 4, axis=-1), exact=False)
    assert znp.geomspace(np.float32(1), 2, 3).dtype == np.geomspace(np.float32(1), 2, 3).dtype
    with pytest.raises(errors.ShapeError):
        znp.geomspace(0.0, 1.0)
    check_grads(lambda a, b: znp.geomspace(a, b, 5), (0.5, 2.0), order=2)


@SETTINGS
@given(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 5)), st.integers(-6, 6),
       st.sampled_from([float, int, bool, np.float32]))
def test_eye_tri_identity(n, m, k, dtype):
    assert_same(znp.eye(n, m, k, dtype), np.eye(n, m, k, dtype))
    assert_same(znp.eye(n, m, k=k), np.eye(n, m, k=k))
    assert_same(znp.tri(n, m, k, dtype), np.tri(n, m, k, dtype))
    assert_same(znp.identity(n), np.identity(n))
    assert_same(znp.identity(n, dtype), np.identity(n, dtype))


@SETTINGS
@given(arrays(min_dims=1, max_dims=4), st.integers(-5, 5))
def test_tril_triu(x, k):
    assert_same(znp.tril(x, k), np.tril(x, k))
    assert_same(znp.triu(x, k), np.triu(x, k))
    assert_same(znp.tril(x), np.tril(x))


@SETTINGS
@given(arrays(min_dims=1, max_dims=2, min_side=0, max_side=5), st.integers(-6, 6))
def test_diag_diagflat(v, k):
    assert_same(znp.diag(v, k), np.diag(v, k))
    assert_same(znp.diagflat(v, k), np.diagflat(v, k))


def test_triangle_diag_traced_and_grads():
    x = np.arange(12.0).reshape(3, 4) / 7
    for f in (lambda x: znp.tril(x, 1), lambda x: znp.triu(x, -1), znp.diag,
              lambda x: znp.diag(znp.diag(x), -2), lambda x: znp.diagflat(x, 1)):
        assert_traced_matches(f, x)
        check_grads(lambda x, f=f: znp.sin(f(x)), (x,), order=2)
    v = np.array([0.5, -1.0, 2.0])
    check_grads(lambda v: znp.diag(v, 1) ** 2, (v,), order=2)


@SETTINGS
@given(st.lists(arrays(dtypes=[np.float64, np.int32], min_dims=0, max_dims=1, max_side=4),
                min_size=0, max_size=4),
       st.booleans(), st.sampled_from(["xy", "ij"]))
def test_meshgrid(xs, sparse, indexing):
    assert_same(znp.meshgrid(*xs, sparse=sparse, indexing=indexing),
                np.meshgrid(*xs, sparse=sparse, indexing=indexing))


@SETTINGS
@given(small_shapes(max_dims=3), st.booleans(), st.sampled_from([int, np.int32, float]))
def test_indices(dims, sparse, dtype):
    assert_same(znp.indices(dims, dtype, sparse), np.indices(dims, dtype, sparse))


def test_meshgrid_traced_grad():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0])
    f = lambda x, y: znp.meshgrid(x, y)[0] * znp.meshgrid(x, y)[1]
    assert_traced_matches(f, x, y)
    check_grads(f, (x, y), order=2)

# --------------------------------------------------------------------------- reshaping


@SETTINGS
@given(arrays(), st.data())
def test_reshape_ravel_transpose(x, data):
    n = x.size
    divisors = [d for d in range(1, n + 1) if n % d == 0] or [1]
    d = data.draw(st.sampled_from(divisors))
    shapes = [(n,), (-1,), (d, -1), (-1, d, 1)] if n else [(0,), (2, 0, 3), (-1, 0)][:2]
    for s in shapes:
        assert_same(znp.reshape(x, s), np.reshape(x, s))
        assert_same(znp.array(x).reshape(s), x.reshape(s))
    assert_same(znp.ravel(x), np.ravel(x))
    assert_same(znp.transpose(x), np.transpose(x))
    perm = data.draw(st.permutations(range(x.ndim)))
    neg = [p - x.ndim if i % 2 else p for i, p in enumerate(perm)]
    assert_same(znp.transpose(x, neg), np.transpose(x, neg))
    assert_same(znp.permute_dims(x, perm), np.permute_dims(x, perm))
    if x.ndim >= 2:
        assert_same(znp.matrix_transpose(x), np.matrix_transpose(x))
        assert_same(znp.array(x).mT, x.mT)
    if x.ndim:
        i, j = data.draw(st.integers(-x.ndim, x.ndim - 1)), data.draw(st.integers(0, x.ndim - 1))
        assert_same(znp.swapaxes(x, i, j), np.swapaxes(x, i, j))
        assert_same(znp.moveaxis(x, i, j), np.moveaxis(x, i, j))
        k = data.draw(st.integers(1, x.ndim))
        src = data.draw(st.permutations(range(x.ndim)))[:k]
        dst = data.draw(st.permutations(range(x.ndim)))[:k]
        assert_same(znp.moveaxis(x, src, dst), np.moveaxis(x, src, dst))


def test_reshape_errors():
    x = znp.arange(6)
    assert_same(znp.reshape(x, (2, 3), order="F"), np.reshape(np.arange(6), (2, 3), order="F"))
    with pytest.raises(errors.ShapeError):
        znp.reshape(x, (4, -1))
    with pytest.raises(errors.ShapeError):
        znp.reshape(x, (-1, -1))
    with pytest.raises(errors.ShapeError):
        znp.transpose(znp.ones((2, 3)), (0, 0))
    with pytest.raises(errors.ShapeError):
        znp.matrix_transpose(x)
    with pytest.raises(errors.ShapeError):
        znp.swapaxes(x, 0, 1)
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda n: znp.reshape(x, (n, -1)))(2)


@SETTINGS
@given(arrays(max_side=2), st.data())
def test_squeeze_expand_dims(x, data):
    assert_same(znp.squeeze(x), np.squeeze(x))
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    if ones:
        sub = tuple(data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True)))
        assert_same(znp.squeeze(x, sub), np.squeeze(x, sub))
        assert_same(znp.squeeze(x, sub[0] - x.ndim), np.squeeze(x, sub[0] - x.ndim))
    others = [i for i, n in enumerate(x.shape) if n != 1]
    if others:
        with pytest.raises(errors.ShapeError):
            znp.squeeze(x, others[0])
    k = data.draw(st.integers(1, 3))
    axes = tuple(data.draw(st.lists(st.integers(-(x.ndim + k), x.ndim + k - 1), min_size=k,
                                    max_size=k, unique_by=lambda a: a % (x.ndim + k))))
    assert_same(znp.expand_dims(x, axes), np.expand_dims(x, axes))
    one = data.draw(st.integers(-x.ndim - 1, x.ndim))
    assert_same(znp.expand_dims(x, one), np.expand_dims(x, one))


@SETTINGS
@given(arrays(max_dims=3))
def test_atleast_and_queries(x):
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        assert_same(getattr(znp, name)(x), getattr(np, name)(x))
        assert_same(getattr(znp, name)(x, 1.0), getattr(np, name)(x, 1.0))
    assert znp.shape(x) == np.shape(x) and znp.ndim(x) == np.ndim(x)
    assert znp.size(x) == np.size(x)
    for ax in range(x.ndim):
        assert znp.size(x, ax) == np.size(x, ax)
    assert znp.shape(3.0) == () and znp.shape([[1, 2]]) == (1, 2)

# --------------------------------------------------------------------------- tile, repeat


@SETTINGS
@given(arrays(max_dims=3, max_side=3),
       st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=4)))
def test_tile(x, reps):
    assert_same(znp.tile(x, reps), np.tile(x, reps))


@SETTINGS
@given(arrays(max_dims=3, max_side=4), st.data())
def test_repeat(x, data):
    r = data.draw(st.integers(0, 3))
    assert_same(znp.repeat(x, r), np.repeat(x, r))
    if x.ndim:
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        assert_same(znp.repeat(x, r, axis), np.repeat(x, r, axis))
        reps = data.draw(st.lists(st.integers(0, 3), min_size=x.shape[axis],
                                  max_size=x.shape[axis]))
        assert_same(znp.repeat(x, reps, axis), np.repeat(x, reps, axis))
        assert_same(znp.array(x).repeat(np.array(reps), axis), x.repeat(reps, axis))
        assert_same(znp.repeat(x, [r], axis), np.repeat(x, [r], axis))


@SETTINGS
@given(arrays(max_dims=3), small_shapes(max_dims=3))
def test_resize(x, shape):
    assert_same(znp.resize(x, shape), np.resize(x, shape))


def test_repeat_errors():
    with pytest.raises(errors.ShapeError):
        znp.repeat(znp.arange(3), [1, 2])
    with pytest.raises(errors.ShapeError):
        znp.repeat(znp.arange(3), -1)
    with pytest.raises(errors.ZeraxTypeError):
        znp.repeat(znp.arange(3), 1.5)
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda r: znp.repeat(np.arange(3.0), r))(2)
    with pytest.raises(errors.ShapeError):
        znp.tile(znp.arange(3), -1)

# --------------------------------------------------------------------------- flips, rolls


@SETTINGS
@given(arrays(max_dims=3), st.data())
def test_flip_roll_rot90(x, data):
    assert_same(znp.flip(x), np.flip(x))
    if x.ndim:
        axes = tuple(data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True)))
        assert_same(znp.flip(x, axes), np.flip(x, axes))
        assert_same(znp.flipud(x), np.flipud(x))
    if x.ndim >= 2:
        assert_same(znp.fliplr(x), np.fliplr(x))
        k = data.draw(st.integers(-5, 5))
        pair = data.draw(st.permutations(range(x.ndim)))[:2]
        assert_same(znp.rot90(x, k, pair), np.rot90(x, k, pair))
    else:
        with pytest.raises(errors.ShapeError):
            znp.fliplr(x)
    shift = data.draw(st.integers(-7, 7))
    assert_same(znp.roll(x, shift), np.roll(x, shift))
    if x.ndim:
        axes = tuple(data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1,
                                        max_size=3)))
        shifts = tuple(data.draw(st.lists(st.integers(-7, 7), min_size=len(axes),
                                          max_size=len(axes))))
        assert_same(znp.roll(x, shifts, axes), np.roll(x, shifts, axes))
        assert_same(znp.roll(x, shift, axes), np.roll(x, shift, axes))


def test_roll_traced_shift():
    x = np.arange(10.0).reshape(2, 5)
    for s in (-7, -1, 0, 3, 12):
        got = traced(lambda x, s: znp.roll(x, s, axis=1), x, s)[0]
        np.testing.assert_array_equal(np.asarray(got), np.roll(x, s, axis=1))
        got = traced(lambda x, s: znp.roll(x, (s, 1), axis=(1, 1)), x, s)[0]
        np.testing.assert_array_equal(np.asarray(got), np.roll(x, s + 1, axis=1))
    check_grads(lambda x: znp.roll(x, np.int64(3), 1) * x, (x,), order=2)

# --------------------------------------------------------------------------- broadcasting


@SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3), st.data())
def test_broadcast(shapes, data):
    xs = [data.draw(arrays(shape=s)) for s in shapes.input_shapes]
    assert znp.broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(
        *shapes.input_shapes)
    assert_same(znp.broadcast_arrays(*xs), np.broadcast_arrays(*xs))
    for x in xs:
        assert_same(znp.broadcast_to(x, shapes.result_shape),
                    np.broadcast_to(x, shapes.result_shape))


def test_broadcast_errors():
    with pytest.raises(errors.ShapeError):
        znp.broadcast_to(znp.ones(3), (2, 4))
    with pytest.raises(errors.ShapeError):
        znp.broadcast_to(znp.ones((2, 3)), (3,))
    with pytest.raises(errors.ShapeError):
        znp.broadcast_shapes((2,), (3,))
    assert_same(znp.broadcast_to(2.0, 3), np.broadcast_to(2.0, 3))

# --------------------------------------------------------------------------- diagonals


@SETTINGS
@given(arrays(min_dims=2, max_dims=4, max_side=4), st.integers(-5, 5), st.data())
def test_diagonal_trace(x, offset, data):
    a1, a2 = data.draw(st.permutations(range(x.ndim)))[:2]
    a1 -= data.draw(st.sampled_from([0, x.ndim]))
    assert_same(znp.diagonal(x, offset, a1, a2), np.diagonal(x, offset, a1, a2))
    assert_same(znp.trace(x, offset, a1, a2), np.trace(x, offset, a1, a2),
                exact=x.dtype.kind != "f", rtol=1e-5)
    dtype = data.draw(st.sampled_from([None, np.float64, np.int32]))
    assert_same(znp.trace(x, offset, a1, a2, dtype), np.trace(x, offset, a1, a2, dtype),
                exact=x.dtype.kind != "f" and dtype != np.float64, rtol=1e-5)
    assert_same(znp.array(x).diagonal(offset, a1, a2), x.diagonal(offset, a1, a2))


def test_diagonal_errors():
    with pytest.raises(errors.ShapeError):
        znp.diagonal(znp.ones(3))
    with pytest.raises(errors.ShapeError):
        znp.diagonal(znp.ones((3, 3)), 0, 1, 1)
    with pytest.raises(errors.ShapeError):
        znp.diag(znp.ones((2, 2, 2)))

# --------------------------------------------------------------------------- derivatives

X34 = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
X234 = np.linspace(-1.0, 2.0, 24).reshape(2, 3, 4)

GRAD_CASES = {
    "tile": (lambda x: znp.tile(x, (2, 1, 3)), (X34,)),
    "repeat": (lambda x: znp.repeat(x, 2, axis=1), (X34,)),
    "repeat_array": (lambda x: znp.repeat(x, [2, 0, 1, 3], axis=1), (X34,)),
    "flip": (lambda x: znp.flip(x, (0, 2)), (X234,)),
    "roll": (lambda x: znp.roll(x, (1, -2), (0, 2)), (X234,)),
    "rot90": (lambda x: znp.rot90(x, 3, (2, 0)), (X234,)),
    "diagonal": (lambda x: znp.diagonal(x, 1, 2, 0), (X234,)),
    "trace": (lambda x: znp.trace(x, -1, 1, 2), (X234,)),
    "tril": (lambda x: znp.tril(x, -1), (X234,)),
    "triu": (lambda x: znp.triu(x, 1), (X34,)),
    "reshape": (lambda x: znp.reshape(x, (4, -1)), (X234,)),
    "transpose": (lambda x: znp.transpose(x, (2, 0, 1)), (X234,)),
    "moveaxis": (lambda x: znp.moveaxis(x, 0, -1), (X234,)),
    "broadcast_to": (lambda x: znp.broadcast_to(x, (2, 3, 4)), (X34,)),
    "expand_squeeze": (lambda x: znp.squeeze(znp.expand_dims(x, (0, 3)), 0), (X34,)),
    "resize": (lambda x: znp.resize(x, (5, 5)), (X34,)),
    "array": (lambda x, y: znp.array([[x, y], [y, x]]), (X34, X34)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads(name):
    f, args = GRAD_CASES[name]

    def nonlinear(*a):
        return znp.sin(f(*a)) * 1.5
    check_grads(nonlinear, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_traced(name):
    f, args = GRAD_CASES[name]
    assert_traced_matches(f, *args)


def test_grad_against_finite_difference():
    x = X34.copy()
    f = lambda x: total(znp.pad(znp.roll(x, 1, 0), 1, mode="reflect") ** 2)
    g = np.asarray(zx.grad(f)(x))
    eps = 1e-6
    for idx in [(0, 0), (1, 2), (2, 3)]:
        e = np.zeros_like(x)
        e[idx] = eps
        fd = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
        assert g[idx] == pytest.approx(fd, rel=1e-6)
