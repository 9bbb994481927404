"""JAX's lax conveniences: defaults and semantics checked against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax.test_util import check_grads


def test_cumulative_reductions_default_to_the_first_axis():
    x = np.arange(1.0, 13.0).reshape(3, 4)
    np.testing.assert_allclose(lax.cumsum(x), np.cumsum(x, axis=0))
    np.testing.assert_allclose(lax.cumprod(x), np.cumprod(x, axis=0))
    np.testing.assert_allclose(lax.cummax(x[::-1]), np.maximum.accumulate(x[::-1], axis=0))
    np.testing.assert_allclose(lax.cummin(x), np.minimum.accumulate(x, axis=0))
    np.testing.assert_allclose(lax.cumsum(x, axis=1, reverse=True),
                               np.cumsum(x[:, ::-1], axis=1)[:, ::-1])


MONOIDS = [(lax.add, np.add, 0.0), (lax.mul, np.multiply, 1.0),
           (lax.max, np.maximum, -np.inf), (lax.min, np.minimum, np.inf),
           (znp.add, np.add, 0.0)]


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_reduce_with_monoids_matches_numpy(shape, data):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    dims = data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))
    comp, ufunc, init = data.draw(st.sampled_from(MONOIDS))
    got = lax.reduce(x, init, comp, tuple(dims))
    np.testing.assert_allclose(got, ufunc.reduce(x, axis=tuple(dims)), rtol=1e-12)


def test_reduce_with_any_computation_and_pytrees():
    x = np.arange(1.0, 13.0).reshape(3, 4)
    # a computation that is not a known monoid goes through scan: values, grad, jit
    def prod_rows(a):
        return lax.reduce(a, 1.0, lambda u, w: u * w + 0.0 * u, (1,))
    np.testing.assert_allclose(prod_rows(x), x.prod(1))
    np.testing.assert_allclose(zx.jit(prod_rows)(x), x.prod(1))
    check_grads(lambda a: prod_rows(a).sum(), (x / 4,), order=1)
    pair = lax.reduce((x, 2 * x), (0.0, 0.0), lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,))
    np.testing.assert_allclose(pair[0], x.sum(0))
    np.testing.assert_allclose(pair[1], 2 * x.sum(0))
    ints = np.array([[1, 2], [4, 8]])
    np.testing.assert_array_equal(lax.reduce(ints, 0, lax.bitwise_or, (1,)), [3, 12])
    with pytest.raises(zx.errors.ZeraxTypeError, match="init values"):
        lax.reduce((x, x), (0.0,), lax.add, (0,))


def test_optimization_barrier_and_sharding_constraint_pass_values_through():
    tree = {"a": np.arange(3.0), "b": (2.0, np.ones((2, 2), np.float32))}
    for fn in (lax.optimization_barrier, lambda t: lax.with_sharding_constraint(t, None)):
        out = fn(tree)
        np.testing.assert_array_equal(out["a"], tree["a"])
        assert out["b"][1].dtype == np.float32 and float(out["b"][0]) == 2.0
        np.testing.assert_allclose(zx.grad(lambda x, fn=fn: znp.sum(fn(x) ** 2))(np.ones(2)),
                                   [2.0, 2.0])
        np.testing.assert_array_equal(zx.jit(fn)(tree)["a"], tree["a"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(-9, 9).filter(bool)),
                min_size=1, max_size=8),
       st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-50, 50).filter(lambda v: v != 0)),
                min_size=1, max_size=8))
def test_rem_has_the_sign_of_the_dividend_as_c_fmod(ints, floats):
    # lax.rem is C's fmod (JAX's): rem(-7, 3) == -1, where numpy.remainder gives 2
    a, b = (np.array(v, np.int64) for v in zip(*ints))
    np.testing.assert_array_equal(np.asarray(lax.rem(a, b)), np.fmod(a, b))
    np.testing.assert_array_equal(np.asarray(zx.jit(lax.rem)(a, b)), np.fmod(a, b))
    x, y = (np.array(v, np.float64) for v in zip(*floats))
    for got in (lax.rem(x, y), zx.jit(lax.rem)(x, y)):
        got = np.asarray(got)
        np.testing.assert_array_equal(got, np.fmod(x, y))
        assert (np.signbit(got) == np.signbit(np.fmod(x, y))).all()


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


def test_python_numbers_are_operands_of_the_shape_and_reduction_ops():
    """``lax.broadcast_in_dim(2.0, (3,), ())`` and its kin take a Python number as JAX's
    do (a value of the mode's dtype); a concatenation of 0-d operands is a clear error."""
    np.testing.assert_array_equal(np.asarray(lax.broadcast_in_dim(2.0, (3,), ())), [2.0] * 3)
    np.testing.assert_array_equal(np.asarray(lax.reshape(2, (1, 1))), [[2]])
    np.testing.assert_array_equal(np.asarray(lax.expand_dims(True, (0,))), [True])
    assert float(lax.reduce_sum(2.5, ())) == 2.5
    got = zx.jit(lambda: lax.broadcast_in_dim(2.0, (2, 2), ()))()
    np.testing.assert_array_equal(np.asarray(got), np.full((2, 2), 2.0))
    with zx.enable_x64(False):
        assert lax.broadcast_in_dim(2.0, (3,), ()).dtype == np.float32
    with pytest.raises(errors.ShapeError, match="out of bounds"):
        lax.concatenate([1.0, 2.0], 0)
    with pytest.raises(TypeError):       # as JAX's (a ShapeError is a TypeError too)
        lax.concatenate([np.ones(2), np.ones(2)], 1)
