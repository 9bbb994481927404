"""Collectives over named vmap axes (ops/collectives.py) against NumPy over the batch."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.lax as lax
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

_shapes = st.tuples(st.integers(1, 4), st.integers(1, 3))


@settings(max_examples=15, deadline=None)
@given(_shapes, st.integers(0, 2**31 - 1))
def test_reductions_match_numpy_over_the_batch(shape, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    out = zx.vmap(lambda v: (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"),
                             lax.pmin(v, "i")), axis_name="i")(x)
    for got, ref in zip(out, (x.sum(0), x.mean(0), x.max(0), x.min(0))):
        np.testing.assert_allclose(got, np.broadcast_to(ref, x.shape), rtol=1e-12)


@pytest.mark.parametrize("axis,tiled", [(0, False), (1, False), (0, True), (1, True)])
def test_all_gather_stacks_every_member(axis, tiled):
    x = np.arange(12.0).reshape(3, 2, 2)
    out = zx.vmap(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), axis_name="i")(x)
    ref = np.stack(list(x), axis=axis)
    if tiled:
        ref = np.concatenate(list(x), axis=axis)
    np.testing.assert_array_equal(out, np.broadcast_to(ref, (3,) + ref.shape))


def test_axis_index_and_size():
    x = np.zeros((4, 2))
    idx = zx.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x)
    assert idx.dtype == np.int32
    np.testing.assert_array_equal(idx, np.arange(4))
    np.testing.assert_array_equal(
        zx.vmap(lambda v: v + lax.axis_size("i"), axis_name="i")(x), x + 4)


def test_unmapped_operands_and_nested_axes():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        zx.vmap(lambda v: lax.psum(1.0, "i"), axis_name="i")(x), [3.0, 3.0, 3.0])
    inner = zx.vmap(lambda v: lax.psum(v, "i"), axis_name="j")
    np.testing.assert_array_equal(zx.vmap(inner, axis_name="i")(x),
                                  np.broadcast_to(x.sum(0), x.shape))
    both = zx.vmap(zx.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(both(x), np.full(x.shape, x.sum()))


def test_under_jit_and_control_flow():
    x = np.arange(6.0).reshape(3, 2)
    center = lambda v: v - lax.pmean(v, "i")  # noqa: E731
    ref = x - x.mean(0)
    np.testing.assert_allclose(zx.jit(zx.vmap(center, axis_name="i"))(x), ref)
    np.testing.assert_allclose(zx.vmap(zx.jit(center), axis_name="i")(x), ref)
    # a jitted function whose operand does not vary over the axis
    const = zx.vmap(lambda v: v + zx.jit(lambda c: lax.psum(c, "i"))(2.0), axis_name="i")
    np.testing.assert_allclose(const(x), x + 6.0)
    scanned = zx.vmap(lambda r: lax.scan(lambda c, t: (c + lax.psum(t, "i"), None), 0.0, r)[0],
                      axis_name="i")
    np.testing.assert_allclose(scanned(x), np.full(3, x.sum()))


def test_derivatives():
    x = np.random.default_rng(0).normal(size=(3, 2))

    def f(x):
        return znp.sum(zx.vmap(lambda v: znp.sin(v) * lax.psum(v, "i")
                               + lax.all_gather(v * v, "i")[0], axis_name="i")(x))

    def f_np(x):
        return np.sum(np.sin(x) * x.sum(0)) + 3 * np.sum(x[0] ** 2)

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    eps = 1e-6
    num = np.array([(f_np(x + eps * e) - f_np(x - eps * e)) / (2 * eps)
                    for e in np.eye(x.size).reshape((x.size,) + x.shape)]).reshape(x.shape)
    np.testing.assert_allclose(zx.grad(f)(x), num, rtol=1e-6)
    # psum's transpose is psum (JAX's rule): each member's output is the whole sum
    np.testing.assert_allclose(
        zx.vmap(zx.grad(lambda v: lax.psum(v ** 2, "i")), axis_name="i")(np.array([1., 2.])),
        [4.0, 8.0])


def test_errors():
    with pytest.raises(errors.UnboundAxisError, match="unbound axis name: 'i'"):
        lax.psum(1.0, "i")
    with pytest.raises(NameError):
        zx.vmap(lambda v: lax.pmean(v, "j"), axis_name="i")(np.ones(2))
    with pytest.raises(errors.NotSupportedError, match="not differentiable"):
        zx.vmap(zx.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(np.ones(3))


def test_a_jitted_function_batched_under_two_axis_names():
    f = zx.jit(lambda v: v - lax.pmean(v, "i") - lax.pmean(v, "j"))
    x = np.arange(6.0).reshape(3, 2)
    # the same jitted program batched along an axis named "i", then one named "j"
    inner_i = zx.vmap(f, axis_name="i")
    inner_j = zx.vmap(f, axis_name="j")
    out_i = zx.vmap(inner_i, axis_name="j", in_axes=1, out_axes=1)(x)
    out_j = zx.vmap(inner_j, axis_name="i", in_axes=1, out_axes=1)(x)
    ref = x - x.mean(0) - x.mean(1, keepdims=True)
    np.testing.assert_allclose(out_i, ref)
    np.testing.assert_allclose(out_j, ref)
