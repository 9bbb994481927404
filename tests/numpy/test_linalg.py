"""Tests for dot_general (zerax._src.ops.linalg), the products of zerax.numpy
(lax_numpy/linalg_ops.py) and zerax.numpy.linalg.

Values and dtypes are compared with NumPy (np.einsum for dot_general); derivatives are
checked with check_grads (forward mode against central differences, reverse mode by
the identity <ct, jvp(t)> = <vjp(ct), t>, to second order).
"""

import itertools
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import zerax as zx
from np_helpers import rand  # noqa: E402 - shared test helpers
import zerax.numpy as znp
from zerax import errors
from zerax._src.ops.linalg import dot, dot_general, dot_general_p
from zerax.test_util import check_grads

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
GRAD_SETTINGS = settings(max_examples=12, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow])

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.bool_]


# --------------------------------------------------------------------------- helpers


def assert_matches(got, want, rtol=None):
    """Same shape, same dtype, same values (exact for integers and bools)."""
    want = np.asarray(want)
    assert isinstance(got, zx.Array), type(got)
    got_v = np.asarray(got)
    assert got_v.shape == want.shape, (got_v.shape, want.shape)
    assert got_v.dtype == want.dtype, (got_v.dtype, want.dtype)
    if want.dtype.kind in "fc":
        if rtol is None:
            rtol = {2: 2e-2, 4: 2e-4}.get(want.dtype.itemsize, 1e-10)
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        np.testing.assert_allclose(got_v, want, rtol=rtol, atol=rtol * scale)
    else:
        np.testing.assert_array_equal(got_v, want)


# --------------------------------------------------------------------------- dot_general


@st.composite
def dot_general_cases(draw):
    """Shapes and dimension numbers with batch, contracting and free axes of both
    operands in random positions, plus the equivalent einsum subscripts."""
    nb = draw(st.integers(0, 2))
    nc = draw(st.integers(0, 2))
    nlf = draw(st.integers(0, 2))
    nrf = draw(st.integers(0, 2))
    size = st.integers(0, 4) if draw(st.booleans()) else st.integers(1, 4)
    letters = iter(string.ascii_letters)
    b = [(next(letters), draw(size)) for _ in range(nb)]
    c = [(next(letters), draw(size)) for _ in range(nc)]
    lf = [(next(letters), draw(size)) for _ in range(nlf)]
    rf = [(next(letters), draw(size)) for _ in range(nrf)]
    lhs_axes = draw(st.permutations(b + c + lf))
    rhs_axes = draw(st.permutations(b + c + rf))
    lpos = {lab: i for i, (lab, _) in enumerate(lhs_axes)}
    rpos = {lab: i for i, (lab, _) in enumerate(rhs_axes)}
    dn = ((tuple(lpos[lab] for lab, _ in c), tuple(rpos[lab] for lab, _ in c)),
          (tuple(lpos[lab] for lab, _ in b), tuple(rpos[lab] for lab, _ in b)))
    # NumPy's order: batch, lhs free (in lhs order), rhs free (in rhs order).
    out = ([lab for lab, _ in b] + [lab for lab, _ in lhs_axes if lab in dict(lf)]
           + [lab for lab, _ in rhs_axes if lab in dict(rf)])
    spec = "".join(lab for lab, _ in lhs_axes) + "," + "".join(lab for lab, _ in rhs_axes) \
        + "->" + "".join(out)
    return (tuple(n for _, n in lhs_axes), tuple(n for _, n in rhs_axes), dn, spec)


@SETTINGS
@given(dot_general_cases(), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_dot_general_matches_einsum(case, dtype, seed):
    lshape, rshape, dn, spec = case
    rng = np.random.default_rng(seed)
    lhs, rhs = rand(rng, lshape, dtype), rand(rng, rshape, dtype)
    assert_matches(dot_general(lhs, rhs, dn), np.einsum(spec, lhs, rhs))


@pytest.mark.parametrize("lshape,rshape,dn,spec", [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    ((3, 2), (3, 4), (((0,), (0,)), ((), ())), "ji,jk->ik"),
    ((2, 3), (4, 3), (((1,), (1,)), ((), ())), "ij,kj->ik"),
    ((3, 2), (4, 3), (((0,), (1,)), ((), ())), "ji,kj->ik"),
    ((3,), (3, 4), (((0,), (0,)), ((), ())), "j,jk->k"),
    ((3,), (3,), (((0,), (0,)), ((), ())), "j,j->"),
    ((2, 3), (3,), (((1,), (0,)), ((), ())), "ij,j->i"),
    ((), (2, 3), (((), ()), ((), ())), ",ij->ij"),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
])
def test_dot_general_fast_paths(lshape, rshape, dn, spec):
    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.int32, np.bool_):
        lhs, rhs = rand(rng, lshape, dtype), rand(rng, rshape, dtype)
        assert_matches(dot_general(lhs, rhs, dn), np.einsum(spec, lhs, rhs))


def test_dot_general_negative_dims_and_lax_dot():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    assert_matches(dot_general(a, b, (((-1,), (-2,)), ((), ()))), a @ b)
    assert_matches(dot(a, b), a @ b)
    assert_matches(dot(a, b[:, 0]), a @ b[:, 0])
    with pytest.raises(errors.ShapeError):
        dot(np.ones((2, 2, 2)), np.ones(2))


def test_dot_general_preferred_element_type():
    rng = np.random.default_rng(3)
    a = rng.integers(-100, 100, (4, 5)).astype(np.int8)
    b = rng.integers(-100, 100, (5, 3)).astype(np.int8)
    got = dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert_matches(got, a.astype(np.int32) @ b.astype(np.int32))
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = rng.standard_normal((5, 3)).astype(np.float32)
    f = lambda x, y: dot_general(x, y, (((1,), (0,)), ((), ())),  # noqa: E731
                                 preferred_element_type=np.float64)
    assert_matches(f(x, y), x.astype(np.float64) @ y.astype(np.float64))
    out, f_vjp = zx.vjp(f, x, y)
    ct = rng.standard_normal((4, 3))
    gx, gy = f_vjp(ct)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    np.testing.assert_allclose(np.asarray(gx), ct @ y.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gy), x.T @ ct, rtol=1e-5)


def test_dot_general_errors_name_both_shapes():
    with pytest.raises(errors.ShapeError, match=r"\(2, 3\).*\(4, 5\)"):
        dot_general(np.ones((2, 3)), np.ones((4, 5)), (((1,), (0,)), ((), ())))
    with pytest.raises(errors.ShapeError, match="batch"):
        dot_general(np.ones((2, 3)), np.ones((4, 3)), (((1,), (1,)), ((0,), (0,))))
    with pytest.raises(errors.ShapeError):
        dot_general(np.ones((2, 3)), np.ones((3, 3)), (((1,), (0, 1)), ((), ())))
    with pytest.raises(errors.ShapeError, match="out of range"):
        dot_general(np.ones((2, 3)), np.ones((3, 3)), (((2,), (0,)), ((), ())))
    with pytest.raises(errors.ShapeError, match="distinct"):
        dot_general(np.ones((3, 3)), np.ones((3, 3)), (((0,), (0,)), ((0,), (1,))))
    with pytest.raises(errors.ZeraxTypeError, match="dtype"):
        dot_general(np.ones((2, 3)), np.ones((3, 2), np.float32), (((1,), (0,)), ((), ())))
    with pytest.raises(errors.ZeraxTypeError):
        dot_general(np.ones((2, 3)), np.ones((3, 2)), ((1, 0), ()))


@GRAD_SETTINGS
@given(dot_general_cases(), st.integers(0, 2**32 - 1))
def test_dot_general_grads(case, seed):
    lshape, rshape, dn, _ = case
    rng = np.random.default_rng(seed)
    lhs, rhs = rng.standard_normal(lshape), rng.standard_normal(rshape)
    check_grads(lambda a, b: dot_general(a, b, dn), (lhs, rhs), order=2)
    # Each operand alone (the other a constant): exercises each transpose rule.
    check_grads(lambda a: dot_general(a, rhs, dn), (lhs,), order=2)
    check_grads(lambda b: dot_general(lhs, b, dn), (rhs,), order=2)


@GRAD_SETTINGS
@given(dot_general_cases(), st.integers(0, 2**32 - 1))
def test_dot_general_vjp_matches_einsum_transpose(case, seed):
    """The cotangents equal the textbook formulas written with np.einsum."""
    lshape, rshape, dn, spec = case
    rng = np.random.default_rng(seed)
    lhs, rhs = rng.standard_normal(lshape), rng.standard_normal(rshape)
    out, f_vjp = zx.vjp(lambda a, b: dot_general(a, b, dn), lhs, rhs)
    ct = rng.standard_normal(out.shape)
    gl, gr = f_vjp(ct)
    ins, o = spec.split("->")
    ls, rs = ins.split(",")
    np.testing.assert_allclose(np.asarray(gl), np.einsum(f"{o},{rs}->{ls}", ct, rhs), atol=1e-10)
    np.testing.assert_allclose(np.asarray(gr), np.einsum(f"{ls},{o}->{rs}", lhs, ct), atol=1e-10)


def test_dot_general_zero_tangent_and_int_outputs():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    # grad with respect to one operand only: the other tangent is a symbolic zero.
    w = rng.standard_normal((2, 4))
    g = zx.grad(lambda a: znp.vdot(dot_general(a, b, (((1,), (0,)), ((), ()))), w))(a)
    np.testing.assert_allclose(np.asarray(g), w @ b.T, rtol=1e-12)
    ia, ib = rand(rng, (2, 3), np.int64), rand(rng, (3, 4), np.int64)
    out, t = zx.jvp(lambda x: dot_general(x, ib, (((1,), (0,)), ((), ()))), (ia,),
                    (np.zeros((2, 3), np.int64),))
    assert_matches(out, ia @ ib)


def test_dot_general_traces():
    a, b = np.ones((5, 2, 3)), np.ones((5, 3, 4))
    dn = (((2,), (1,)), ((0,), (0,)))
    closed = zx.make_jaxpr(lambda a, b: dot_general(a, b, dn))(a, b)
    assert [e.primitive for e in closed.jaxpr.eqns] == [dot_general_p]
    assert closed.jaxpr.outvars[0].aval.shape == (5, 2, 4)
    text = str(closed)
    assert "dot_general" in text and "f64[5,2,4]" in text
    # The gradient program is itself made of dot_generals (and transposes).
    sq = lambda a: znp.vdot(dot_general(a, b, dn), dot_general(a, b, dn))  # noqa: E731
    closed_g = zx.make_jaxpr(zx.grad(sq))(a)
    assert dot_general_p in {e.primitive for e in closed_g.jaxpr.eqns}
    res = zx.eval_jaxpr(closed.jaxpr, closed.consts, a, b)
    assert_matches(res[0], np.einsum("bij,bjk->bik", a, b))


# --------------------------------------------------------------------------- matmul & co


@st.composite
def matmul_shapes(draw):
    """Operand shapes for matmul: 1-D or N-D with broadcastable batch axes."""
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(0, 4)), draw(st.integers(1, 4))
    batch_rank = draw(st.integers(0, 3))
    batch = [draw(st.integers(1, 3)) for _ in range(batch_rank)]

    def side_batch():
        r = draw(st.integers(0, batch_rank))
        return [1 if draw(st.booleans()) else s for s in batch[batch_rank - r:]]

    a = [k] if draw(st.integers(0, 4)) == 0 else side_batch() + [n, k]
    b = [k] if draw(st.integers(0, 4)) == 0 else side_batch() + [k, m]
    return tuple(a), tuple(b)


@SETTINGS
@given(matmul_shapes(), st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       st.integers(0, 2**32 - 1))
def test_matmul_matches_numpy(shapes, da, db, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(rng, shapes[0], da), rand(rng, shapes[1], db)
    want = np.matmul(a, b)
    assert_matches(znp.matmul(a, b), want)
    assert_matches(zx.Array(a) @ zx.Array(b), want)


@GRAD_SETTINGS
@given(matmul_shapes(), st.integers(0, 2**32 - 1))
def test_matmul_grads(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    check_grads(znp.matmul, (a, b), order=2)


def test_matmul_errors():
    with pytest.raises(errors.ShapeError):
        znp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(errors.ShapeError):
        znp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 5)))
    with pytest.raises(errors.ShapeError):
        znp.matmul(2.0, np.ones(3))


@SETTINGS
@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from(DTYPES),
       st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_dot_inner_vdot_outer_kron(nda, ndb, da, db, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    a = rand(rng, tuple(rng.integers(1, 4, nda - 1)) + (k,) if nda else (), da)
    b_shape = tuple(rng.integers(1, 4, ndb))
    if ndb == 1:
        b_shape = (k,)
    elif ndb >= 2:
        b_shape = b_shape[:-2] + (k, b_shape[-1])
    b = rand(rng, b_shape, db)
    assert_matches(znp.dot(a, b), np.dot(a, b))
    assert_matches(znp.kron(a, b), np.kron(a, b))
    assert_matches(znp.outer(a, b), np.outer(a, b))
    b_inner = rand(rng, b_shape[:-2] + (b_shape[-1], k) if ndb >= 2 else b_shape, db)
    assert_matches(znp.inner(a, b_inner), np.inner(a, b_inner))
    if a.size == b.size:
        assert_matches(znp.vdot(a, b.reshape(a.shape)), np.vdot(a, b.reshape(a.shape)))


def test_python_scalars_are_not_weak_in_products():
    f32 = np.ones(3, np.float32)
    assert_matches(znp.dot(2.0, f32), np.dot(2.0, f32))
    assert_matches(znp.einsum("i,->i", f32, 2.0), np.einsum("i,->i", f32, 2.0))
    assert_matches(znp.kron(f32, 2), np.kron(f32, 2))
    assert_matches(znp.dot([1, 2], [[1.5], [2.0]]), np.dot([1, 2], [[1.5], [2.0]]))


@SETTINGS
@given(st.data(), st.sampled_from(DTYPES[:5]))
def test_tensordot_matches_numpy(data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    na = data.draw(st.integers(0, 4))
    nb = data.draw(st.integers(0, 4))
    a_shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=na, max_size=na)))
    if data.draw(st.booleans()):
        n = data.draw(st.integers(0, min(na, nb)))
        b_rest = data.draw(st.lists(st.integers(1, 3), min_size=nb - n, max_size=nb - n))
        b_shape = a_shape[na - n:] + tuple(b_rest)
        axes = n
    else:
        n = data.draw(st.integers(0, min(na, nb)))
        ax_a = data.draw(st.permutations(range(na)))[:n]
        b_shape = list(data.draw(st.lists(st.integers(1, 3), min_size=nb, max_size=nb)))
        ax_b = data.draw(st.permutations(range(nb)))[:n]
        for i, j in zip(ax_a, ax_b):
            b_shape[j] = a_shape[i]
        b_shape = tuple(b_shape)
        axes = (list(ax_a), list(ax_b))
    a, b = rand(rng, a_shape, dtype), rand(rng, b_shape, dtype)
    assert_matches(znp.tensordot(a, b, axes), np.tensordot(a, b, axes))
    assert_matches(znp.linalg.tensordot(a, b, axes=axes), np.linalg.tensordot(a, b, axes=axes))


def test_tensordot_errors_and_grads():
    with pytest.raises(errors.ShapeError, match="mismatch"):
        znp.tensordot(np.ones((2, 3)), np.ones((4, 2)), axes=([1], [0]))
    with pytest.raises(errors.ShapeError):
        znp.tensordot(np.ones((2, 3)), np.ones(3), axes=2)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 2))
    check_grads(lambda a, b: znp.tensordot(a, b, axes=([1, 2], [1, 0])), (a, b), order=2)


@SETTINGS
@given(st.data(), st.sampled_from([np.float64, np.int32, np.int8]))
def test_vecdot_matvec_vecmat_cross(data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shapes = data.draw(matmul_shapes())
    n = 3
    batch_a = [s for s in shapes[0][:-2]]
    batch_b = [s for s in shapes[1][:-2]]
    x = rand(rng, tuple(batch_a) + (n,), dtype)
    y = rand(rng, tuple(batch_b) + (n,), dtype)
    assert_matches(znp.vecdot(x, y), np.vecdot(x, y))
    assert_matches(znp.linalg.vecdot(x, y), np.linalg.vecdot(x, y))
    assert_matches(znp.cross(x, y), np.cross(x, y))
    m = rand(rng, tuple(batch_b) + (2, n), dtype)
    assert_matches(znp.matvec(m, x), np.matvec(m, x))
    mt = rand(rng, tuple(batch_b) + (n, 2), dtype)
    assert_matches(znp.vecmat(x, mt), np.vecmat(x, mt))
    xt = np.moveaxis(x, -1, 0)
    assert_matches(znp.vecdot(xt, y[..., None] if y.ndim == 1 else np.moveaxis(y, -1, 0), axis=0),
                   np.vecdot(xt, y[..., None] if y.ndim == 1 else np.moveaxis(y, -1, 0), axis=0))


def test_cross_axes_and_grads():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((4, 1, 3))
    assert_matches(znp.cross(a, b, axisa=0, axisc=1), np.cross(a, b, axisa=0, axisc=1))
    assert_matches(znp.linalg.cross(b, b[::-1]), np.linalg.cross(b, b[::-1]))
    check_grads(lambda a, b: znp.cross(a, b, axisa=0, axisc=1), (a, b), order=2)
    with pytest.raises(errors.NotSupportedError):
        znp.cross(np.ones(2), np.ones(2))
    with pytest.raises(errors.ZeraxTypeError):
        znp.cross(np.ones(3, bool), np.ones(3, bool))


def test_product_grads():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    check_grads(znp.dot, (a, b), order=2)
    check_grads(znp.kron, (a, b), order=2)
    check_grads(znp.outer, (a[0], b[0]), order=2)
    check_grads(znp.inner, (a, b.T), order=2)
    check_grads(znp.vdot, (a, b.T), order=2)
    check_grads(znp.vecdot, (a, b.T), order=2)


# --------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("Ba", [(2, 3)]),
    ("bA", [(2, 3)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("...ij,jk", [(4, 2, 3), (3, 5)]),
    ("i...->...", [(2, 3, 4)]),
    ("...", [(2, 3)]),
    ("i,i->i", [(1,), (3,)]),
    ("i,->i", [(3,), ()]),
    ("ij,kl,jk->il", [(2, 3), (4, 5), (3, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("abc,cde,efa->bdf", [(2, 3, 4), (4, 2, 3), (3, 2, 2)]),
    ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (1,)]),
    ("ii,i->i", [(1, 1), (3,)]),
    ("ij,i", [(0, 3), (0,)]),
    ("bij,bjk->bki", [(0, 2, 3), (0, 3, 4)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
    ("iijj->", [(2, 2, 3, 3)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_einsum_cases(spec, shapes, dtype):
    rng = np.random.default_rng(8)
    ops = [rand(rng, s, dtype) for s in shapes]
    assert_matches(znp.einsum(spec, *ops), np.einsum(spec, *ops))
    assert_matches(znp.einsum(spec, *ops, optimize=True), np.einsum(spec, *ops))


@st.composite
def einsum_specs(draw):
    """Random einsum problems: 1-3 operands whose subscripts are drawn from a few
    letters (repeats within an operand allowed), explicit or implicit output."""
    nlab = draw(st.integers(1, 5))
    labels = string.ascii_letters[:nlab]
    sizes = {lab: draw(st.integers(1, 3)) for lab in labels}
    nops = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from(labels), max_size=4)) for _ in range(nops)]
    used = sorted(set(itertools.chain.from_iterable(terms)))
    if draw(st.booleans()):
        out = draw(st.permutations(used))
        out = out[:draw(st.integers(0, len(out)))]
        spec = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    else:
        spec = ",".join("".join(t) for t in terms)
    shapes = [tuple(sizes[lab] for lab in t) for t in terms]
    return spec, shapes


@SETTINGS
@given(einsum_specs(), st.sampled_from([np.float64, np.float32, np.int64, np.int8]),
       st.integers(0, 2**32 - 1))
def test_einsum_matches_numpy(problem, dtype, seed):
    spec, shapes = problem
    rng = np.random.default_rng(seed)
    ops = [rand(rng, s, dtype) for s in shapes]
    assert_matches(znp.einsum(spec, *ops), np.einsum(spec, *ops))


@GRAD_SETTINGS
@given(einsum_specs(), st.integers(0, 2**32 - 1))
def test_einsum_grads(problem, seed):
    spec, shapes = problem
    rng = np.random.default_rng(seed)
    ops = [rng.standard_normal(s) for s in shapes]
    check_grads(lambda *xs: znp.einsum(spec, *xs), ops, order=2)


def test_einsum_mixed_dtypes_sublists_and_kwargs():
    rng = np.random.default_rng(9)
    a = rand(rng, (2, 3), np.int32)
    b = rand(rng, (3, 4), np.float32)
    assert_matches(znp.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
    assert_matches(znp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                   np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    assert_matches(znp.einsum(a, [Ellipsis, 1], b, [1, 2]), np.einsum(a, [Ellipsis, 1], b, [1, 2]))
    assert_matches(znp.einsum("ij,jk->ik", a, b, dtype=np.float64),
                   np.einsum("ij,jk->ik", a, b, dtype=np.float64, casting="unsafe"))
    assert_matches(znp.einsum(" ij , jk -> ik ", a, a.T), np.einsum("ij,jk->ik", a, a.T))


def test_einsum_errors():
    x = np.ones((2, 3))
    with pytest.raises(errors.ZeraxTypeError):
        znp.einsum("ij,jk->ik", x)
    with pytest.raises(errors.ShapeError):
        znp.einsum("ijk", x)
    with pytest.raises(errors.ShapeError, match="sizes"):
        znp.einsum("ij,ij->ij", x, np.ones((2, 4)))
    with pytest.raises(errors.ShapeError):
        znp.einsum("ii", x)
    with pytest.raises(errors.ZeraxTypeError):
        znp.einsum("ij->ik", x)
    with pytest.raises(errors.ZeraxTypeError):
        znp.einsum("ij->ii", x)
    with pytest.raises(errors.ZeraxTypeError):
        znp.einsum("i1", x)
    with pytest.raises(errors.ShapeError):
        znp.einsum("...i->i", np.ones((2, 3)))


def test_einsum_traces_to_dot_general():
    a, b = np.ones((4, 2, 3)), np.ones((4, 3, 5))
    closed = zx.make_jaxpr(lambda a, b: znp.einsum("bij,bjk->bik", a, b))(a, b)
    assert [e.primitive for e in closed.jaxpr.eqns] == [dot_general_p]
    closed = zx.make_jaxpr(lambda x: znp.einsum("ii", x))(np.ones((3, 3)))
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert "dot_general" not in names and "reduce_sum" in names
    res = zx.eval_jaxpr(closed.jaxpr, closed.consts, np.arange(9.0).reshape(3, 3))
    assert float(np.asarray(res[0])) == 12.0


# --------------------------------------------------------------------------- linalg namespace


@st.composite
def norm_cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    kind = draw(st.sampled_from(["none", "vector", "matrix"]))
    if kind == "none" or (kind == "matrix" and nd < 2):
        ord_ = None if nd > 2 else draw(st.sampled_from(
            [None, 1, -1, np.inf, -np.inf] + (["fro"] if nd == 2 else [2, 0, 3, 0.5])))
        axis = None
    elif kind == "vector":
        axis = draw(st.integers(-nd, nd - 1))
        ord_ = draw(st.sampled_from([None, 2, 1, 0, -1, 3, 0.5, -2.5, np.inf, -np.inf]))
    else:
        axis = tuple(draw(st.permutations(range(nd)))[:2])
        ord_ = draw(st.sampled_from([None, "fro", 1, -1, np.inf, -np.inf]))
    return shape, ord_, axis, draw(st.booleans())


@SETTINGS
@given(norm_cases(), st.sampled_from([np.float64, np.float32, np.int32]),
       st.integers(0, 2**32 - 1))
def test_norm_matches_numpy(case, dtype, seed):
    shape, ord_, axis, keepdims = case
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dtype)
    if ord_ is not None and not isinstance(ord_, str) and ord_ < 0 or ord_ == 0.5:
        assume(np.all(x != 0))   # negative orders divide by |x|
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(x, ord_, axis, keepdims)
    assert_matches(znp.linalg.norm(x, ord_, axis, keepdims), want)


@SETTINGS
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int64, np.bool_]))
def test_vector_and_matrix_norm(data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    nd = data.draw(st.integers(2, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd)))
    x = rand(rng, shape, dtype)
    ord_ = data.draw(st.sampled_from([2, 1, np.inf, -np.inf, 0, 3]))
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.permutations(range(nd)).map(lambda p: tuple(p[:2]))))
    keepdims = data.draw(st.booleans())
    assert_matches(znp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord_),
                   np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord_))
    mord = data.draw(st.sampled_from(["fro", 1, -1, np.inf, -np.inf]))
    assert_matches(znp.linalg.matrix_norm(x, keepdims=keepdims, ord=mord),
                   np.linalg.matrix_norm(x, keepdims=keepdims, ord=mord))


def test_norm_grads_and_errors():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 4)) + 0.1
    for ord_, axis in [(None, None), (None, 1), (3, 0), (1, 1), ("fro", None), (1, None),
                       (np.inf, None), (-np.inf, (1, 0))]:
        check_grads(lambda x: znp.linalg.norm(x, ord_, axis), (x,), order=2)
    check_grads(lambda x: znp.linalg.vector_norm(x, axis=(0, 1), ord=3), (x,), order=2)
    g = zx.grad(lambda v: znp.linalg.norm(v))(np.array([3.0, 4.0]))
    np.testing.assert_allclose(np.asarray(g), [0.6, 0.8])
    for ord_ in (2, -2, "nuc"):   # from the singular values (distinct here)
        np.testing.assert_allclose(np.asarray(znp.linalg.norm(x, ord_)),
                                   np.linalg.norm(x, ord_), rtol=1e-12)
        check_grads(lambda x: znp.linalg.norm(x, ord_), (x,), order=1)
    x3 = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(np.asarray(znp.linalg.norm(x3, 2, axis=(2, 0))),
                               np.linalg.norm(x3, 2, axis=(2, 0)), rtol=1e-12)
    with pytest.raises(errors.ZeraxTypeError):
        znp.linalg.norm(x[0], "fro")
    with pytest.raises(errors.ShapeError):
        znp.linalg.norm(np.ones((2, 2, 2)), 1)
    with pytest.raises(errors.ShapeError):
        znp.linalg.norm(x, axis=(0, 0))


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint8, np.bool_])
def test_trace_diagonal_transpose(dtype):
    rng = np.random.default_rng(11)
    x = rand(rng, (2, 4, 3), dtype)
    for off in range(-5, 6):
        assert_matches(znp.linalg.diagonal(x, offset=off), np.linalg.diagonal(x, offset=off))
        assert_matches(znp.linalg.trace(x, offset=off), np.linalg.trace(x, offset=off))
    assert_matches(znp.linalg.trace(x, dtype=np.float32), np.linalg.trace(x, dtype=np.float32))
    assert_matches(znp.linalg.matrix_transpose(x), np.linalg.matrix_transpose(x))
    with pytest.raises(errors.ShapeError):
        znp.linalg.matrix_transpose(np.ones(3))


def test_linalg_products_and_grads():
    rng = np.random.default_rng(12)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    assert_matches(znp.linalg.matmul(a, b), np.linalg.matmul(a, b))
    assert_matches(znp.linalg.outer(a[0], c), np.linalg.outer(a[0], c))
    with pytest.raises(errors.ShapeError):
        znp.linalg.outer(a, c)
    assert_matches(znp.linalg.multi_dot([a[0], a.T, a, b, c]),
                   np.linalg.multi_dot([a[0], a.T, a, b, c]))
    assert_matches(znp.linalg.multi_dot([a, b, b.T]), np.linalg.multi_dot([a, b, b.T]))
    assert_matches(znp.linalg.multi_dot([b.T, a.T, c[:2]]),
                   np.linalg.multi_dot([b.T, a.T, c[:2]]))
    m = rng.standard_normal((2, 3, 3))
    im = rng.integers(-2, 3, (3, 3))
    for n in range(6):
        assert_matches(znp.linalg.matrix_power(m, n), np.linalg.matrix_power(m, n))
        assert_matches(znp.linalg.matrix_power(im, n), np.linalg.matrix_power(im, n))
    for n in (-1, -3):
        np.testing.assert_allclose(np.asarray(znp.linalg.matrix_power(m, n)),
                                   np.linalg.matrix_power(m, n), rtol=1e-9, atol=1e-9)
    check_grads(lambda m: znp.linalg.matrix_power(m, 3), (m,), order=2)
    check_grads(lambda x: znp.linalg.trace(x, offset=1), (m,), order=2)
    check_grads(lambda x: znp.linalg.diagonal(x, offset=-1), (m,), order=2)
    check_grads(lambda a, b, c: znp.linalg.multi_dot([a, b, c]), (a, b, c), order=2)


def test_grad_through_products_known_values():
    rng = np.random.default_rng(13)
    a, b, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    ga, gb = zx.grad(lambda a, b: znp.vdot(a @ b, w), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), w @ b.T, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), a.T @ w, rtol=1e-12)
    # d/dX trace(X^T X) = 2 X through einsum
    g = zx.grad(lambda x: znp.einsum("ij,ij->", x, x))(a)
    np.testing.assert_allclose(np.asarray(g), 2 * a, rtol=1e-12)
    x = 1.5

    def f(s):
        col = zx.lax.reshape(s, (1,))
        v = zx.lax.concatenate([col, zx.lax.reshape(s * s, (1,))], 0)
        return znp.vdot(znp.outer(v, col), np.ones((2, 1)))

    d2 = zx.grad(zx.grad(f))(x)
    # f(s) = s^2 + s^3, f''(s) = 2 + 6 s
    np.testing.assert_allclose(float(d2), 2 + 6 * x, rtol=1e-12)


def test_products_trace():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    for f in (znp.matmul, znp.dot, lambda a, b: znp.tensordot(a, b, 1),
              lambda a, b: znp.linalg.norm(a @ b, 1), lambda a, b: znp.kron(a, b),
              lambda a, b: znp.einsum("ij,jk->ki", a, b)):
        closed = zx.make_jaxpr(f)(a, b)
        res = zx.eval_jaxpr(closed.jaxpr, closed.consts, a, b)
        assert_matches(res[0], np.asarray(f(a, b)))


def test_precision_and_preferred_element_type_are_accepted():
    # JAX code passes precision= to every product (ignored here: products are computed
    # in their operands' dtype) and preferred_element_type= to accumulate wider
    import zerax.lax as lax
    a = np.arange(4.0).reshape(2, 2)
    for f in (znp.dot, znp.matmul, znp.inner, znp.tensordot, znp.vdot):
        np.testing.assert_array_equal(f(a, a, precision=lax.Precision.HIGHEST),
                                      getattr(np, f.__name__)(a, a))
    np.testing.assert_array_equal(lax.dot(a, a, lax.Precision.HIGH), a @ a)
    np.testing.assert_array_equal(
        lax.dot_general(a, a, (((1,), (0,)), ((), ())), precision="highest"), a @ a)
    i8 = np.full((2, 2), 100, np.int8)
    for f in (znp.dot, znp.tensordot, znp.inner):
        out = f(i8, i8, preferred_element_type=np.int32)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, getattr(np, f.__name__)(i8.astype(np.int32),
                                                                    i8.astype(np.int32)))
