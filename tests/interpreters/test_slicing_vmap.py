"""vmap of the dynamic slicing primitives with start indices that vary over the batch.

``zerax.vmap`` of ``lax.dynamic_slice`` / ``dynamic_update_slice`` / ``dynamic_slice_in_dim``
must equal a Python loop over the batch (and a NumPy reference with JAX's clamping of the
starts into ``[0, n - k]``) for every combination of mapped operand, mapped update and
mapped starts, out-of-range starts included; derivatives through them must batch too; and
the batched program must not loop (its size does not depend on the batch size).
"""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import lax

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

B = 4
SHAPE = (5, 6)
SIZES = (2, 3)


def _clamp(starts, shape, sizes):
    return [min(max(int(s), 0), n - k) for s, n, k in zip(starts, shape, sizes)]


def np_dynamic_slice(x, starts, sizes):
    st = _clamp(starts, x.shape, sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(st, sizes))]


def np_dynamic_update_slice(x, u, starts):
    st = _clamp(starts, x.shape, u.shape)
    out = x.copy()
    out[tuple(slice(s, s + k) for s, k in zip(st, u.shape))] = u
    return out


def example(a, axis, b):
    return a if axis is None else np.take(a, b, axis=axis)


def stack_operand(rng, shape, axis):
    """A float64 operand: one example (axis None) or ``B`` of them stacked along ``axis``."""
    if axis is None:
        return rng.normal(size=shape)
    return np.stack([rng.normal(size=shape) for _ in range(B)], axis=axis)


def starts_for(rng, mapped, dtype=np.int64, lo=-3, hi=9):
    """One start per operand axis: a 0-d value, or a batch of ``B`` (out-of-range ones
    included, so that clamping is exercised)."""
    out = []
    for m in mapped:
        v = rng.integers(lo, hi, size=B if m else ()).astype(dtype)
        out.append(v if m else dtype(v))
    return out


def check(actual, expected):
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


MAPPED_STARTS = [m for m in itertools.product([False, True], repeat=2) if any(m)]


@pytest.mark.parametrize("x_axis", [None, 0, 1, 2])
@pytest.mark.parametrize("mapped", MAPPED_STARTS)
def test_dynamic_slice_batched_starts(x_axis, mapped):
    rng = np.random.default_rng(hash((x_axis, mapped)) % 2**32)
    x = stack_operand(rng, SHAPE, x_axis)
    i, j = starts_for(rng, mapped)
    in_axes = (x_axis, 0 if mapped[0] else None, 0 if mapped[1] else None)
    out = zx.vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), SIZES), in_axes=in_axes)(x, i, j)
    expected = np.stack([np_dynamic_slice(example(x, x_axis, b), (example(i, in_axes[1], b),
                                                                  example(j, in_axes[2], b)),
                                          SIZES) for b in range(B)])
    check(out, expected)
    # The eager primitive, looped over the batch, agrees too.
    loop = np.stack([np.asarray(lax.dynamic_slice(
        zx.Array(example(x, x_axis, b)), (example(i, in_axes[1], b), example(j, in_axes[2], b)),
        SIZES)) for b in range(B)])
    check(out, loop)


@pytest.mark.parametrize("x_axis", [None, 0, 2])
@pytest.mark.parametrize("u_axis", [None, 0, 1])
@pytest.mark.parametrize("mapped", MAPPED_STARTS)
def test_dynamic_update_slice_batched_starts(x_axis, u_axis, mapped):
    rng = np.random.default_rng(hash((x_axis, u_axis, mapped)) % 2**32)
    x = stack_operand(rng, SHAPE, x_axis)
    u = stack_operand(rng, SIZES, u_axis)
    i, j = starts_for(rng, mapped)
    in_axes = (x_axis, u_axis, 0 if mapped[0] else None, 0 if mapped[1] else None)
    out = zx.vmap(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
                  in_axes=in_axes)(x, u, i, j)
    expected = np.stack([np_dynamic_update_slice(
        example(x, x_axis, b), example(u, u_axis, b),
        (example(i, in_axes[2], b), example(j, in_axes[3], b))) for b in range(B)])
    check(out, expected)


@FEW
@given(st.integers(1, 4), st.integers(0, 3), st.integers(1, 5),
       st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64]),
       st.sampled_from([None, 0, 1, 2]), st.data())
def test_dynamic_slice_in_dim_batched_start(n0, size, n1, dtype, x_axis, data):
    shape = (n0, size + n1)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = stack_operand(rng, shape, x_axis)
    lo = 0 if np.dtype(dtype).kind == "u" else -20
    starts = np.array(data.draw(st.lists(st.integers(lo, 40), min_size=B, max_size=B)), dtype)
    out = zx.vmap(lambda x, s: lax.dynamic_slice_in_dim(x, s, size, axis=1),
                  in_axes=(x_axis, 0))(x, starts)
    expected = np.stack([np_dynamic_slice(example(x, x_axis, b), (0, starts[b]), (n0, size))
                         for b in range(B)])
    check(out, expected)
    u = rng.normal(size=(B, n0, size))
    out = zx.vmap(lambda x, u, s: lax.dynamic_update_slice_in_dim(x, u, s, axis=1),
                  in_axes=(x_axis, 0, 0))(x, u, starts)
    expected = np.stack([np_dynamic_update_slice(example(x, x_axis, b), u[b],
                                                 (np.int64(0), starts[b])) for b in range(B)])
    check(out, expected)


def test_uint64_start_beyond_int64_range_is_clamped():
    x = np.arange(12.0).reshape(3, 4)
    starts = np.array([1, 2**63 + 5, 2**64 - 1], np.uint64)
    out = zx.vmap(lambda s: lax.dynamic_slice_in_dim(zx.Array(x), s, 2, axis=1))(starts)
    check(out, np.stack([x[:, s:s + 2] for s in (1, 2, 2)]))


def test_python_int_starts_beside_batched_ones():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 1, 3])
    out = zx.vmap(lambda i: lax.dynamic_slice(x, (0, i), (2, 2)))(idx)
    check(out, np.stack([x[0:2, min(i, 2):min(i, 2) + 2] for i in idx]))
    out = zx.vmap(lambda i: lax.dynamic_update_slice(x, np.ones((2, 2)), (1, i)))(idx)
    want = np.stack([x] * 3)
    for b, i in enumerate(idx):
        want[b, 1:3, min(i, 2):min(i, 2) + 2] = 1.0
    check(out, want)


def test_zero_sized_slice_with_batched_starts():
    x = np.arange(6.0).reshape(2, 3)
    i = np.array([-1, 0, 5])
    out = zx.vmap(lambda i: lax.dynamic_slice(zx.Array(x), (i, np.int64(1)), (0, 2)))(i)
    check(out, np.zeros((3, 0, 2)))
    out = zx.vmap(lambda i: lax.dynamic_update_slice(zx.Array(x), znp.zeros((0, 2)),
                                                      (i, np.int64(1))))(i)
    check(out, np.stack([x] * 3))


def _sum_dynamic_slice(x, i, j):
    return znp.sum(znp.sin(lax.dynamic_slice(x, (i, j), SIZES)) * np.arange(6.0).reshape(2, 3))


def _sum_dynamic_update_slice(x, u, i, j):
    y = lax.dynamic_update_slice(x, u * u, (i, j))
    return znp.sum(znp.cos(y) * np.arange(30.0).reshape(5, 6))


@pytest.mark.parametrize("x_mapped", [False, True])
def test_vmap_grad_through_dynamic_slice(x_mapped):
    rng = np.random.default_rng(1)
    x = stack_operand(rng, SHAPE, 0 if x_mapped else None)
    i, j = np.array([-2, 0, 3, 7]), np.array([1, 5, 2, -1])
    in_axes = (0 if x_mapped else None, 0, 0)
    g = zx.vmap(zx.grad(_sum_dynamic_slice), in_axes=in_axes)(x, i, j)
    expected = np.stack([np.asarray(zx.grad(_sum_dynamic_slice)(
        zx.Array(example(x, in_axes[0], b)), i[b], j[b])) for b in range(B)])
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-12, atol=1e-12)
    # Second order (the batched program's own derivative).
    h = zx.vmap(zx.grad(lambda x, i, j: znp.sum(zx.grad(_sum_dynamic_slice)(x, i, j) ** 2)),
                in_axes=in_axes)(x, i, j)
    expected = np.stack([np.asarray(zx.grad(
        lambda x, i, j: znp.sum(zx.grad(_sum_dynamic_slice)(x, i, j) ** 2))(
            zx.Array(example(x, in_axes[0], b)), i[b], j[b])) for b in range(B)])
    np.testing.assert_allclose(np.asarray(h), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_mapped,u_mapped", [(False, True), (True, False), (True, True)])
def test_vmap_grad_through_dynamic_update_slice(x_mapped, u_mapped):
    rng = np.random.default_rng(2)
    x = stack_operand(rng, SHAPE, 0 if x_mapped else None)
    u = stack_operand(rng, SIZES, 0 if u_mapped else None)
    i, j = np.array([-2, 0, 3, 7]), np.array([1, 5, 2, -1])
    in_axes = (0 if x_mapped else None, 0 if u_mapped else None, 0, 0)
    gx, gu = zx.vmap(zx.grad(_sum_dynamic_update_slice, argnums=(0, 1)),
                     in_axes=in_axes)(x, u, i, j)
    for b in range(B):
        ex, eu = zx.grad(_sum_dynamic_update_slice, argnums=(0, 1))(
            zx.Array(example(x, in_axes[0], b)), zx.Array(example(u, in_axes[1], b)), i[b], j[b])
        np.testing.assert_allclose(np.asarray(gx)[b], np.asarray(ex), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gu)[b], np.asarray(eu), rtol=1e-12, atol=1e-12)


def test_jvp_of_vmap_matches_loop():
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=(B,) + SHAPE), rng.normal(size=(B,) + SHAPE)
    i, j = np.array([-2, 0, 3, 7]), np.array([1, 5, 2, -1])
    def g(x):
        return zx.vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), SIZES))(x, i, j)
    out, tout = zx.jvp(g, (x,), (t,))
    check(out, np.stack([np_dynamic_slice(x[b], (i[b], j[b]), SIZES) for b in range(B)]))
    np.testing.assert_allclose(
        np.asarray(tout), np.stack([np_dynamic_slice(t[b], (i[b], j[b]), SIZES)
                                    for b in range(B)]))


def _eqn_counts(make, sizes=(2, 9)):
    counts = []
    for n in sizes:
        counts.append(len(make(n).eqns))
    return counts


@pytest.mark.parametrize("x_mapped", [False, True])
def test_batched_programs_do_not_loop(x_mapped):
    def ds(n):
        x = np.zeros((n,) + SHAPE) if x_mapped else np.zeros(SHAPE)
        i = np.zeros(n, np.int64)
        return zx.make_jaxpr(zx.vmap(lambda x, i: lax.dynamic_slice(x, (i, i), SIZES),
                                     in_axes=(0 if x_mapped else None, 0)))(x, i)

    def dus(n):
        x = np.zeros((n,) + SHAPE) if x_mapped else np.zeros(SHAPE)
        i = np.zeros(n, np.int64)
        return zx.make_jaxpr(zx.vmap(
            lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int64(1))),
            in_axes=(0 if x_mapped else None, 0, 0)))(x, np.zeros((n,) + SIZES), i)

    def vg(n):
        x = np.zeros((n,) + SHAPE) if x_mapped else np.zeros(SHAPE)
        i = np.zeros(n, np.int64)
        return zx.make_jaxpr(zx.vmap(zx.grad(_sum_dynamic_slice),
                                     in_axes=(0 if x_mapped else None, 0, 0)))(x, i, i)

    for make in (ds, dus, vg):
        a, b = _eqn_counts(make)
        assert a == b, (make.__name__, a, b)
    names = {e.primitive.name for e in ds(3).eqns}
    assert "gather" in names and "dynamic_slice" not in names
    names = {e.primitive.name for e in dus(3).eqns}
    assert "scatter" in names and "dynamic_update_slice" not in names


def test_unbatched_starts_keep_dynamic_slice():
    x = np.arange(2 * 30.0).reshape(2, 5, 6)
    jaxpr = zx.make_jaxpr(zx.vmap(lambda x: lax.dynamic_slice(x, (np.int64(4), np.int64(-1)),
                                                              SIZES)))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["dynamic_slice"]
    out = zx.vmap(lambda x: lax.dynamic_slice(x, (np.int64(4), np.int64(-1)), SIZES))(x)
    check(out, np.stack([np_dynamic_slice(x[b], (4, -1), SIZES) for b in range(2)]))


def test_jit_of_vmap_with_batched_starts():
    rng = np.random.default_rng(4)
    x, u = rng.normal(size=(B,) + SHAPE), rng.normal(size=(B,) + SIZES)
    i, j = np.array([-2, 0, 3, 7]), np.array([1, 5, 2, -1])

    def f(x, u, i, j):
        return (lax.dynamic_slice(x, (i, j), SIZES), lax.dynamic_update_slice(x, u, (i, j)))
    out = zx.jit(zx.vmap(f))(x, u, i, j)
    check(out[0], np.stack([np_dynamic_slice(x[b], (i[b], j[b]), SIZES) for b in range(B)]))
    check(out[1], np.stack([np_dynamic_update_slice(x[b], u[b], (i[b], j[b]))
                            for b in range(B)]))
