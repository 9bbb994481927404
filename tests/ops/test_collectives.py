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


# --------------------------------------------------------------------------- JAX's values
# Recorded from JAX 0.10.2 (jax_enable_x64) with the same calls: jax.vmap(..., axis_name=)
# over x = arange(6).reshape(3, 2) (axis "i" of 3 members outside, "j" of 2 inside),
# x3 = arange(12).reshape(3, 2, 2), x36 = arange(18).reshape(3, 3, 2), and
# xr, W = default_rng(0).normal(size=(3, 3)) twice.

PSUM_I_FROM_INNER = [[6.0, 9.0], [6.0, 9.0], [6.0, 9.0]]
PMEAN_J = [[0.5, 0.5], [2.5, 2.5], [4.5, 4.5]]
PMIN_JI = [[-4.0, -4.0], [-4.0, -4.0], [-4.0, -4.0]]
AXIS_INDEX_JI = [[0, 3], [1, 4], [2, 5]]
ALL_TO_ALL_TUPLE = [
    [[0.0, 6.0, 12.0, 18.0, 24.0, 30.0], [1.0, 7.0, 13.0, 19.0, 25.0, 31.0]],
    [[2.0, 8.0, 14.0, 20.0, 26.0, 32.0], [3.0, 9.0, 15.0, 21.0, 27.0, 33.0]],
    [[4.0, 10.0, 16.0, 22.0, 28.0, 34.0], [5.0, 11.0, 17.0, 23.0, 29.0, 35.0]]]
AG_AXIS1 = [[[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]], [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]]]
AG_TILED_AXIS1 = [[0.0, 1.0, 4.0, 5.0, 8.0, 9.0], [2.0, 3.0, 6.0, 7.0, 10.0, 11.0]]
PSUM_SCATTER_D1 = [[18.0, 21.0], [24.0, 27.0], [30.0, 33.0]]
PSUM_SCATTER_TILED_D1 = [[[0.0, 21.0], [126.0, 147.0]], [[42.0, 63.0], [168.0, 189.0]],
                         [[84.0, 105.0], [210.0, 231.0]]]
PPERMUTE_SWAP = [[4.0, 5.0], [2.0, 3.0], [0.0, 1.0]]
ALL_TO_ALL_S0_C1 = [[[0.0, 6.0, 12.0], [1.0, 7.0, 13.0]], [[2.0, 8.0, 14.0], [3.0, 9.0, 15.0]],
                    [[4.0, 10.0, 16.0], [5.0, 11.0, 17.0]]]
ALL_TO_ALL_TILED_S1_C0 = [
    [[0.0, 1.0], [6.0, 7.0], [12.0, 13.0], [18.0, 19.0], [24.0, 25.0], [30.0, 31.0]],
    [[2.0, 3.0], [8.0, 9.0], [14.0, 15.0], [20.0, 21.0], [26.0, 27.0], [32.0, 33.0]],
    [[4.0, 5.0], [10.0, 11.0], [16.0, 17.0], [22.0, 23.0], [28.0, 29.0], [34.0, 35.0]]]
ALL_TO_ALL_S1_C2 = [
    [[[0.0, 12.0, 24.0], [1.0, 13.0, 25.0]], [[6.0, 18.0, 30.0], [7.0, 19.0, 31.0]]],
    [[[2.0, 14.0, 26.0], [3.0, 15.0, 27.0]], [[8.0, 20.0, 32.0], [9.0, 21.0, 33.0]]],
    [[[4.0, 16.0, 28.0], [5.0, 17.0, 29.0]], [[10.0, 22.0, 34.0], [11.0, 23.0, 35.0]]]]
GRAD_PSUM_SCATTER = [[0.07237293692626391, 0.3615576318158945, -1.0395642739464301],
                     [0.060382694759085004, 1.466072824051649, -0.5869581603014977],
                     [0.7506096163463103, -2.5920646797979874, 1.142336250842844]]
GRAD_PPERMUTE = [[-0.5845802170522879, 0.05779808304919449, -1.46346918659339],
                 [-0.15362056125924825, 0.5592456503472314, -0.22679263596266078],
                 [0.4265768844197861, -0.7366677838441567, -0.05117674070630618]]
GRAD_ALL_TO_ALL = [[-0.3181636846598887, 0.6142022021732003, -0.8601342755029855],
                   [-0.1307552113835794, 0.2248162919500926, -0.3902430235428209],
                   [-0.013931095622212687, -1.4725815215396947, 0.3916957648324429]]
GRAD_ALL_GATHER = [[26.786871789823863, 29.73860505709642, 26.460828283997103],
                   [35.80210894413837, 33.53715934396839, 39.28401693790365],
                   [11.863909018783541, 28.034639891889718, 38.88395817134567]]
GRAD_PMEAN = [[-0.30391894033517897, 0.11243408680761306, -0.6109943246784478],
              [-0.25356777526467905, 0.4559067342537536, -0.3449792511688395],
              [-3.152068838076685, -0.8060580100484627, 0.6713976072781048]]
JVP_PSUM_SCATTER = [[-3.760739573638801], [-1.1238658432397604], [-1.3733624858400266]]
# grad of sum(cos(vmap_i(vmap_j(v * psum(v, (i, j)) + all_gather(v, i)[0])))) at
# default_rng(0)'s third normal(size=(3, 2)) draw
GRAD_NESTED = [[-2.2126269291851632, 1.5104360414699654],
               [0.04442560405398427, 2.4676676014793206],
               [2.486215455211267, -1.9707635721446886]]

V = zx.vmap
X = np.arange(6.0).reshape(3, 2)
X3 = np.arange(12.0).reshape(3, 2, 2)
X36 = np.arange(18.0).reshape(3, 3, 2)
_rng = np.random.default_rng(0)
XR, W = _rng.normal(size=(3, 3)), _rng.normal(size=(3, 3))
X_NESTED = _rng.normal(size=(3, 2))


def _ij(f):
    """f under vmap over "j" (inner, 2 members) inside vmap over "i" (3 members)."""
    return V(V(f, axis_name="j"), axis_name="i")


def test_values_recorded_from_jax():
    i = lambda f: V(f, axis_name="i")  # noqa: E731
    cases = [
        (_ij(lambda v: lax.psum(v, "i"))(X), PSUM_I_FROM_INNER),
        (_ij(lambda v: lax.pmean(v, "j"))(X), PMEAN_J),
        (_ij(lambda v: lax.pmin(v * v - 4 * v, ("j", "i")))(X), PMIN_JI),
        (_ij(lambda v: lax.axis_index(("j", "i")))(X), AXIS_INDEX_JI),
        (_ij(lambda v: lax.all_to_all(v, ("i", "j"), 0, 0, tiled=True))(
            np.arange(36.0).reshape(3, 2, 6)), ALL_TO_ALL_TUPLE),
        (i(lambda v: lax.all_gather(v, "i", axis=1))(X3)[0], AG_AXIS1),
        (i(lambda v: lax.all_gather(v, "i", axis=1, tiled=True))(X3)[0], AG_TILED_AXIS1),
        (i(lambda v: lax.psum_scatter(v.T, "i", scatter_dimension=1))(X36), PSUM_SCATTER_D1),
        (i(lambda v: lax.psum_scatter(znp.arange(12.0).reshape(2, 6) * (1 + v[0, 0]), "i",
                                      scatter_dimension=1, tiled=True))(X36),
         PSUM_SCATTER_TILED_D1),
        (i(lambda v: lax.ppermute(v, "i", [(0, 2), (2, 0), (1, 1)]))(X), PPERMUTE_SWAP),
        (i(lambda v: lax.all_to_all(v, "i", 0, 1))(X36), ALL_TO_ALL_S0_C1),
        (i(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True))(
            np.arange(36.0).reshape(3, 2, 6)), ALL_TO_ALL_TILED_S1_C0),
        (i(lambda v: lax.all_to_all(v, "i", 1, 2))(np.arange(36.0).reshape(3, 2, 3, 2)),
         ALL_TO_ALL_S1_C2),
    ]
    for k, (got, want) in enumerate(cases):
        np.testing.assert_array_equal(got, want, err_msg=f"case {k}")
    assert _ij(lambda v: lax.axis_index(("j", "i")))(X).dtype == np.int32


def test_derivatives_recorded_from_jax():
    def loss_of(g):
        return lambda x: znp.sum(W * znp.sin(V(g, axis_name="i")(x)))
    cases = [
        (loss_of(lambda v: znp.tile(lax.psum_scatter(v * v, "i", tiled=True), 3)),
         GRAD_PSUM_SCATTER),
        (loss_of(lambda v: lax.ppermute(v * v, "i", [(0, 1), (1, 2), (2, 0)])), GRAD_PPERMUTE),
        (loss_of(lambda v: lax.all_to_all(v * v, "i", 0, 0, tiled=True)), GRAD_ALL_TO_ALL),
        (loss_of(lambda v: lax.pmean(v * v, "i")), GRAD_PMEAN),
        (lambda x: znp.sum(znp.sin(V(lambda v: lax.all_gather(v, "i"), axis_name="i")(x))
                           * np.arange(27.0).reshape(3, 3, 3)), GRAD_ALL_GATHER),
    ]
    for k, (f, want) in enumerate(cases):
        np.testing.assert_allclose(zx.grad(f)(XR), want, rtol=1e-13, err_msg=f"case {k}")
        np.testing.assert_allclose(zx.jit(zx.grad(f))(XR), want, rtol=1e-13)
    _, t = zx.jvp(V(lambda v: lax.psum_scatter(znp.sin(v), "i", tiled=True), axis_name="i"),
                  (XR,), (W,))
    np.testing.assert_allclose(t, JVP_PSUM_SCATTER, rtol=1e-13)
    nested = lambda x: znp.sum(znp.cos(_ij(  # noqa: E731
        lambda v: v * lax.psum(v, ("i", "j")) + lax.all_gather(v, "i")[0])(x)))
    np.testing.assert_allclose(zx.grad(nested)(X_NESTED), GRAD_NESTED, rtol=1e-13)


# --------------------------------------------------------------------------- against NumPy

def _np_all_to_all(xs, split, concat):
    """Member n gets row n (along split) of every member's x, stacked at concat."""
    m = xs.shape[0]
    return np.stack([np.stack([np.take(xs[k], n, axis=split) for k in range(m)], axis=concat)
                     for n in range(m)])


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2 ** 31 - 1), st.booleans())
def test_exchanges_match_numpy_loops(m, n, seed, tiled):
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(m, m * n, 2))
    # all_gather: every member sees the stack (or concatenation) of all members
    ag = V(lambda v: lax.all_gather(v, "i", axis=1, tiled=tiled), axis_name="i")(xs)
    ref = np.concatenate(list(xs), axis=1) if tiled else np.stack(list(xs), axis=1)
    np.testing.assert_array_equal(ag, np.broadcast_to(ref, (m,) + ref.shape))
    # psum_scatter: member k gets block k of the sum
    total = xs.sum(0)
    if tiled:
        ps = V(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(xs)
        np.testing.assert_allclose(ps, total.reshape(m, n, 2), rtol=1e-12)
    ys = rng.normal(size=(m, m, 3))
    ps = V(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0), axis_name="i")(ys)
    np.testing.assert_allclose(ps, ys.sum(0), rtol=1e-12)
    # all_to_all
    for split, concat in [(0, 0), (0, 1), (1, 0)]:
        zs = np.moveaxis(ys, 1, 1 + split)
        got = V(lambda v: lax.all_to_all(v, "i", split, concat), axis_name="i")(zs)
        np.testing.assert_array_equal(got, _np_all_to_all(zs, split, concat))
    # ppermute by a random partial permutation: zeros where nothing arrives
    perm = [(int(s), int(t)) for s, t in zip(rng.permutation(m), rng.permutation(m))][:n]
    got = V(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(xs)
    ref = np.zeros_like(xs)
    for s, t in perm:
        ref[t] = xs[s]
    np.testing.assert_array_equal(got, ref)


def test_tuples_of_axes_are_their_row_major_product():
    xs = np.arange(24.0).reshape(3, 2, 4)    # members (i, j): linear index 2 i + j
    flat = xs.reshape(6, 4)
    ag = _ij(lambda v: lax.all_gather(v, ("i", "j")))(xs)
    np.testing.assert_array_equal(ag, np.broadcast_to(flat, (3, 2, 6, 4)))
    ag_ji = _ij(lambda v: lax.all_gather(v, ("j", "i")))(xs)
    np.testing.assert_array_equal(ag_ji[0, 0], xs.transpose(1, 0, 2).reshape(6, 4))
    ys = np.arange(3 * 2 * 12.0).reshape(3, 2, 12)
    ps = _ij(lambda v: lax.psum_scatter(v, ("i", "j"), tiled=True))(ys)
    np.testing.assert_array_equal(ps.reshape(6, 2), ys.sum((0, 1)).reshape(6, 2))
    perm = [(0, 5), (5, 0), (1, 2)]
    pp = _ij(lambda v: lax.ppermute(v, ("i", "j"), perm))(xs).reshape(6, 4)
    ref = np.zeros_like(flat)
    for s, t in perm:
        ref[t] = flat[s]
    np.testing.assert_array_equal(pp, ref)
    assert int(_ij(lambda v: lax.axis_size(("i", "j")) + 0 * v[0])(xs)[0, 0]) == 6


def test_unmapped_operands():
    # every member holds the same value: the collective of equal members
    c = np.arange(3.0)
    np.testing.assert_array_equal(
        V(lambda v: lax.psum_scatter(c, "i"), axis_name="i")(X), [0.0, 3.0, 6.0])
    np.testing.assert_array_equal(  # (JAX's vmap returns mis-shaped values here)
        V(lambda v: lax.all_to_all(c, "i", 0, 0), axis_name="i")(X),
        [[0.0] * 3, [1.0] * 3, [2.0] * 3])
    np.testing.assert_array_equal(
        V(lambda v: lax.ppermute(5.0, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(X), [5.0] * 3)
    np.testing.assert_array_equal(
        V(lambda v: lax.ppermute(5.0, "i", [(0, 1)]), axis_name="i")(X), [0.0, 5.0, 0.0])
    np.testing.assert_array_equal(
        V(lambda v: lax.all_gather(np.array([7.0, 8.0]), "i", tiled=True), axis_name="i")(X),
        np.tile([7.0, 8.0], (3, 3)))


def test_check_grads_of_every_linear_exchange():
    for g in [lambda v: lax.all_gather(v, "i", tiled=True),
              lambda v: lax.psum_scatter(v, "i", tiled=True),
              lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2)]),
              lambda v: lax.all_to_all(v, "i", 0, 0),
              lambda v: lax.ppermute(v, ("i",), [(2, 0)])]:
        check_grads(lambda x: znp.sin(V(g, axis_name="i")(x)), (XR,), order=2,
                    modes=("fwd", "rev"))


def test_compositions_with_jit():
    f = V(lambda v: lax.ppermute(v * v, "i", [(0, 1), (1, 2)]) + lax.all_to_all(
        v, "i", 0, 0), axis_name="i")
    eager = f(XR)
    np.testing.assert_allclose(zx.jit(f)(XR), eager, rtol=1e-15)
    np.testing.assert_allclose(V(zx.jit(lambda v: lax.ppermute(v * v, "i", [(0, 1), (1, 2)])
                                         + lax.all_to_all(v, "i", 0, 0)), axis_name="i")(XR),
                               eager, rtol=1e-15)
    g = lambda x: znp.sum(f(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(zx.jit(zx.grad(g))(XR), zx.grad(g)(XR), rtol=1e-13)
    np.testing.assert_allclose(zx.grad(zx.jit(g))(XR), zx.grad(g)(XR), rtol=1e-13)
    # pshuffle is a permutation by sources
    np.testing.assert_array_equal(
        V(lambda v: lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(X), X[[2, 0, 1]])


def test_bool_psum_counts_in_int32_and_pytrees():
    out = V(lambda v: lax.psum(v, "i"), axis_name="i")(X > 2)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[1, 2]] * 3)
    tree = V(lambda v: lax.psum({"a": v, "b": 2 * v}, "i"), axis_name="i")(X)
    np.testing.assert_array_equal(tree["b"], [[12.0, 18.0]] * 3)


def test_exchange_errors():
    with pytest.raises(errors.ShapeError, match="multiple of 3"):
        V(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(np.ones((3, 4)))
    with pytest.raises(errors.ShapeError, match="equal 3"):
        V(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(np.ones((3, 2)))
    with pytest.raises(errors.ZeraxValueError, match="twice"):
        V(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(X)
    with pytest.raises(errors.ZeraxValueError, match="outside the 3 members"):
        V(lambda v: lax.ppermute(v, "i", [(0, 3)]), axis_name="i")(X)
    with pytest.raises(errors.ZeraxValueError, match="out of range"):
        V(lambda v: lax.all_gather(v, "i", axis=3), axis_name="i")(X)
    # a member-varying result of a value compiled outside the vmap
    with pytest.raises(errors.NotSupportedError, match="does not vary"):
        V(lambda v: v + zx.jit(lambda c: lax.psum_scatter(c, "i"))(np.arange(3.0)),
          axis_name="i")(np.ones((3, 3)))
