"""Matrix decompositions (zerax._src.ops.decompositions) and the functions built on them
(zerax.numpy.linalg, zerax.scipy.linalg, zerax.lax.linalg): values against NumPy or
reconstructions, derivatives with check_grads, vmap against a loop, jit against eager
(two compiled programs, shared), and the errors for bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
import zerax.scipy.linalg as zsl
from zerax import errors
from zerax.lax import linalg as lxl
from zerax.test_util import check_grads

SETTINGS = settings(max_examples=10, deadline=None)
batches = st.sampled_from([(), (2,), (1, 2)])
sizes = st.integers(1, 5)
seeds = st.integers(0, 2**31 - 1)


def _general(rng, shape):
    """A well-conditioned square (or rectangular) matrix stack."""
    a = rng.normal(size=shape)
    if shape[-1] == shape[-2]:
        a = a + 3.0 * np.eye(shape[-1])
    return a


def _spd(rng, shape):
    r = rng.normal(size=shape)
    return r @ np.swapaxes(r, -1, -2) + shape[-1] * np.eye(shape[-1])


def _distinct_sym(rng, n):
    """A symmetric matrix with eigenvalues 1, 2, ..., n (well apart)."""
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * np.arange(1.0, n + 1)) @ q.T


def _distinct_sv(rng, m, n):
    """An m x n matrix with singular values 1, 2, ..., min(m, n)."""
    k = min(m, n)
    u, _ = np.linalg.qr(rng.normal(size=(m, k)))
    v, _ = np.linalg.qr(rng.normal(size=(n, k)))
    return (u * np.arange(1.0, k + 1)) @ v.T


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def _unpack_lu(lu, perm, m, n):
    lu = np.asarray(lu)
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
    return lower, np.triu(lu[..., :k, :]), np.asarray(perm)


# --------------------------------------------------------------------------- values


@SETTINGS
@given(batch=batches, n=sizes, seed=seeds)
def test_square_decompositions_against_numpy(batch, n, seed):
    rng = np.random.default_rng(seed)
    s, a = _spd(rng, batch + (n, n)), _general(rng, batch + (n, n))
    L = znp.linalg.cholesky(s)
    close(L, np.linalg.cholesky(s))
    close(znp.linalg.cholesky(s, upper=True), np.swapaxes(np.linalg.cholesky(s), -1, -2))
    w, v = znp.linalg.eigh(s)
    close(w, np.linalg.eigvalsh(s))
    close(np.asarray(v) * np.asarray(w)[..., None, :] @ np.swapaxes(v, -1, -2), s, 1e-9)
    close(znp.linalg.eigvalsh(s, UPLO="U"), np.linalg.eigvalsh(s))
    lu, piv, perm = lxl.lu(a)
    lower, upper, perm = _unpack_lu(lu, perm, n, n)
    close(lower @ upper, np.take_along_axis(a, perm[..., None], -2))
    assert piv.dtype == np.int32 and perm.dtype == np.int32
    close(znp.linalg.solve(a, a[..., :2]), np.linalg.solve(a, a[..., :2]), 1e-9)
    close(znp.linalg.inv(a), np.linalg.inv(a), 1e-9)
    close(znp.linalg.det(a), np.linalg.det(a), 1e-9)
    sign, logdet = znp.linalg.slogdet(a)
    nsign, nlogdet = np.linalg.slogdet(a)
    close(sign, nsign)
    close(logdet, nlogdet, 1e-9)
    close(znp.linalg.cond(a), np.linalg.cond(a), 1e-8)
    close(znp.linalg.cond(a, "fro"), np.linalg.cond(a, "fro"), 1e-8)
    close(znp.linalg.cond(a, "nuc"), np.linalg.cond(a, "nuc"), 1e-8)
    close(znp.linalg.cond(a, -np.inf), np.linalg.cond(a, -np.inf), 1e-8)


@SETTINGS
@given(batch=batches, m=sizes, n=sizes, seed=seeds)
def test_rectangular_decompositions_against_numpy(batch, m, n, seed):
    rng = np.random.default_rng(seed)
    a = _general(rng, batch + (m, n))
    for mode in ("reduced", "complete"):
        q, r = znp.linalg.qr(a, mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        close(q, nq)
        close(r, nr)
    close(znp.linalg.qr(a, mode="r"), np.linalg.qr(a, mode="r"))
    for full in (True, False):
        u, s, vh = znp.linalg.svd(a, full_matrices=full)
        k = min(m, n)
        close(s, np.linalg.svd(a, compute_uv=False))
        us = np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :]
        close(us @ np.asarray(vh)[..., :k, :], a)
    close(znp.linalg.svdvals(a), np.linalg.svd(a, compute_uv=False))
    lu, _, perm = lxl.lu(a)
    lower, upper, perm = _unpack_lu(lu, perm, m, n)
    close(lower @ upper, np.take_along_axis(a, perm[..., None], -2))
    close(znp.linalg.pinv(a), np.linalg.pinv(a), 1e-9)
    close(znp.linalg.matrix_rank(a), np.linalg.matrix_rank(a))
    if not batch:
        b = rng.normal(size=(m, 2))
        x, res, rank, sv = znp.linalg.lstsq(a, b)
        nx, _, nrank, nsv = np.linalg.lstsq(a, b)
        close(x, nx, 1e-9)
        assert int(rank) == nrank
        close(sv, nsv)
        close(res, ((b - a @ nx) ** 2).sum(0), 1e-9)


@SETTINGS
@given(batch=batches, n=sizes, k=st.integers(1, 3), seed=seeds)
def test_triangular_solve_all_options(batch, n, k, seed):
    rng = np.random.default_rng(seed)
    a = _general(rng, batch + (n, n))
    for left in (True, False):
        b = rng.normal(size=batch + ((n, k) if left else (k, n)))
        for lower in (True, False):
            for trans in (False, True):
                for unit in (False, True):
                    x = lxl.triangular_solve(a, b, left_side=left, lower=lower,
                                             transpose_a=trans, unit_diagonal=unit)
                    t = np.tril(a) if lower else np.triu(a)
                    if unit:
                        t[..., range(n), range(n)] = 1.0
                    if trans:
                        t = np.swapaxes(t, -1, -2)
                    close(t @ x if left else x @ t, b, 1e-9)


def test_dtypes_and_special_values():
    a32 = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    for f in (znp.linalg.cholesky, znp.linalg.inv, znp.linalg.det, znp.linalg.svdvals,
              znp.linalg.eigvalsh, znp.linalg.pinv):
        assert f(a32).dtype == np.float32, f
    assert znp.linalg.qr(a32).Q.dtype == np.float32
    assert znp.linalg.solve(a32, np.ones(2, np.float32)).dtype == np.float32
    ai = np.array([[2, 1], [1, 2]])
    assert znp.linalg.inv(ai).dtype == np.float64
    close(znp.linalg.det(ai), 3.0)
    # not positive definite: NaNs (as JAX), no exception
    assert np.isnan(np.asarray(znp.linalg.cholesky(-np.eye(2)))).all()
    # singular: det 0, slogdet (0, -inf)
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(znp.linalg.det(sing)) == 0.0
    with np.errstate(divide="ignore"):   # log(0) eagerly
        sign, logdet = znp.linalg.slogdet(sing)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    close(znp.linalg.matrix_rank(sing), 1)
    sym = np.array([[2.0, -3.0], [-3.0, 1.0]])
    u, s, vh = znp.linalg.svd(sym, hermitian=True)
    close(s, np.linalg.svd(sym, compute_uv=False))
    close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), sym)


def test_tensor_functions():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3
    b = rng.normal(size=(2, 3))
    close(znp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b), 1e-9)
    a2 = rng.normal(size=(6, 2, 3)) + np.eye(6).reshape(6, 2, 3) * 3
    b2 = np.arange(6.0).reshape(2, 3)
    close(znp.linalg.tensorsolve(a2, b2, axes=(0,)), np.linalg.tensorsolve(a2, b2, axes=(0,)),
          1e-9)
    close(znp.linalg.tensorinv(a, ind=2), np.linalg.tensorinv(a, ind=2), 1e-9)


def test_scipy_linalg():
    rng = np.random.default_rng(1)
    s, a = _spd(rng, (4, 4)), _general(rng, (4, 4))
    b, bv = rng.normal(size=(4, 2)), rng.normal(size=4)
    close(np.asarray(zsl.cholesky(s)).T @ np.asarray(zsl.cholesky(s)), s)
    close(zsl.cholesky(s, lower=True), np.linalg.cholesky(s))
    for lower in (False, True):
        close(zsl.cho_solve(zsl.cho_factor(s, lower=lower), b), np.linalg.solve(s, b))
    close(zsl.solve(s, bv, assume_a="pos"), np.linalg.solve(s, bv))
    close(zsl.solve(s, b, assume_a="pos", lower=True), np.linalg.solve(s, b))
    close(zsl.solve(a, b), np.linalg.solve(a, b))
    for trans, op in ((0, a), ("N", a), (1, a.T), ("T", a.T)):
        close(zsl.lu_solve(zsl.lu_factor(a), b, trans=trans), np.linalg.solve(op, b))
        close(zsl.solve_triangular(a, bv, trans=trans, lower=True),
              np.linalg.solve(np.tril(op) if op is a else np.triu(op), bv))
    tall = rng.normal(size=(5, 3))
    for x in (a, tall, tall.T):
        p, lo, up = zsl.lu(x)
        close(np.asarray(p) @ np.asarray(lo) @ np.asarray(up), x)
        pl, up2 = zsl.lu(x, permute_l=True)
        close(np.asarray(pl) @ np.asarray(up2), x)
    q, r = zsl.qr(tall)
    assert q.shape == (5, 5) and r.shape == (5, 3)
    q, r = zsl.qr(tall, mode="economic")
    close(np.asarray(q) @ np.asarray(r), tall)
    (r_only,) = zsl.qr(tall, mode="r")
    close(np.abs(np.asarray(r_only)), np.abs(np.linalg.qr(tall, mode="complete")[1]))
    w, v = zsl.eigh(s)
    close(w, np.linalg.eigvalsh(s))
    close((np.asarray(v) * np.asarray(w)) @ np.asarray(v).T, s)
    close(zsl.eigh(np.tril(s), eigvals_only=True), np.linalg.eigvalsh(s))
    close(zsl.eigh(np.triu(s), lower=False, eigvals_only=True), np.linalg.eigvalsh(s))
    u, sv, vh = zsl.svd(tall, full_matrices=False)
    close((np.asarray(u) * np.asarray(sv)) @ np.asarray(vh), tall)
    close(zsl.det(a), np.linalg.det(a))
    close(zsl.inv(a), np.linalg.inv(a))


# --------------------------------------------------------------------------- derivatives


def _grads(f, args, order=2):
    check_grads(f, args, order=order, modes=("fwd", "rev"))


def test_primitive_grads():
    rng = np.random.default_rng(2)
    s, a = _spd(rng, (3, 3)), _general(rng, (3, 3))
    b = rng.normal(size=(3, 2))
    _grads(lxl.cholesky, (s,))
    _grads(lambda x: lxl.cholesky(x, symmetrize_input=False), (s,))
    for left in (True, False):
        rhs = b if left else b.T
        _grads(lambda x, y, left=left: lxl.triangular_solve(x, y, left_side=left, lower=True),
               (a, rhs))
        _grads(lambda x, y, left=left: lxl.triangular_solve(
            x, y, left_side=left, lower=False, transpose_a=True, unit_diagonal=True), (a, rhs))
    _grads(lambda x: lxl.lu(x)[0], (a,))
    for shape in ((4, 2), (2, 4)):
        _grads(lambda x: lxl.lu(x)[0], (_general(rng, shape),), order=1)
    _grads(lambda x: lxl.qr(x), (a,))
    _grads(lambda x: lxl.qr(x, full_matrices=False), (rng.normal(size=(4, 2)),))

    def eig(x):   # eigenvectors up to sign: a sign-invariant function of them
        v, w = lxl.eigh(x)
        return w, v * v[..., :1, :]
    _grads(eig, (_distinct_sym(rng, 3),))
    for m, n in ((3, 3), (4, 2), (2, 4)):
        a_mn = _distinct_sv(rng, m, n)

        def sv(x):
            u, s_, vh = lxl.svd(x, full_matrices=False)
            return s_, (u * s_[..., None, :]) @ vh, u * u[..., :1, :], vh * vh[..., :, :1]
        _grads(sv, (a_mn,))
        _grads(lambda x: lxl.svd(x, compute_uv=False), (a_mn,))


def test_function_grads():
    rng = np.random.default_rng(3)
    a, s = _general(rng, (3, 3)), _spd(rng, (3, 3))
    b = rng.normal(size=(3, 2))
    _grads(znp.linalg.solve, (a, b))
    _grads(znp.linalg.inv, (a,))
    _grads(znp.linalg.det, (a,))
    _grads(lambda x: znp.linalg.slogdet(x).logabsdet, (a,))
    _grads(lambda x: (znp.linalg.eigvalsh(x) ** 2).sum(), (s,))
    _grads(lambda x: znp.linalg.svdvals(x).max(), (_distinct_sv(rng, 3, 2),))
    _grads(znp.linalg.pinv, (rng.normal(size=(4, 2)),), order=1)
    _grads(znp.linalg.pinv, (np.eye(3),), order=1)   # repeated singular values
    _grads(lambda x, y: znp.linalg.lstsq(x, y)[0], (rng.normal(size=(4, 2)),
                                                    rng.normal(size=(4, 1))), order=1)
    _grads(lambda x, y: zsl.cho_solve(zsl.cho_factor(x), y), (s, b), order=1)
    _grads(lambda x, y: zsl.lu_solve(zsl.lu_factor(x), y, trans=1), (a, b), order=1)
    # det's gradient is cofactor-based: finite for any invertible matrix
    g = zx.grad(znp.linalg.det)(a)
    close(g, np.linalg.det(a) * np.linalg.inv(a).T, 1e-9)


# --------------------------------------------------------------------------- vmap


def test_vmap_matches_a_loop():
    rng = np.random.default_rng(4)
    s, a = _spd(rng, (3, 3, 3)), _general(rng, (3, 3, 3))
    b = rng.normal(size=(3, 3, 2))
    fns = {
        "cholesky": (lambda x, y, z: lxl.cholesky(x)),
        "lu": (lambda x, y, z: lxl.lu(y)),
        "qr": (lambda x, y, z: lxl.qr(y)),
        "eigh": (lambda x, y, z: lxl.eigh(x)),
        "svd": (lambda x, y, z: lxl.svd(y)),
        "trisolve": (lambda x, y, z: lxl.triangular_solve(y, z, left_side=True)),
        "solve": (lambda x, y, z: znp.linalg.solve(y, z)),
        "slogdet": (lambda x, y, z: znp.linalg.slogdet(y)),
    }
    for f in fns.values():
        got = zx.vmap(f)(s, a, b)
        for i in range(3):
            want = f(s[i], a[i], b[i])
            for g, w in zip(zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(want)):
                close(np.asarray(g)[i], w, 1e-12)
    # one operand unbatched (broadcast by the batching rule)
    got = zx.vmap(lambda z: lxl.triangular_solve(a[0], z, left_side=True, lower=True))(b)
    for i in range(3):
        close(got[i], lxl.triangular_solve(a[0], b[i], left_side=True, lower=True))
    # gradients of batched decompositions
    g = zx.vmap(zx.grad(lambda x: znp.linalg.slogdet(x).logabsdet))(a)
    close(g, np.linalg.inv(a).transpose(0, 2, 1), 1e-9)


# --------------------------------------------------------------------------- jit


def test_jit_top_level_matches_eager():
    """Decompositions at the top level run on the host between the kernels."""
    rng = np.random.default_rng(5)
    s, a = _spd(rng, (2, 3, 3)), _general(rng, (2, 3, 3))
    tall = _distinct_sv(rng, 4, 2)

    def f(s, a, tall):   # few kernels between the host calls: each one is a compile
        q, r = znp.linalg.qr(tall)
        u, sv, _ = znp.linalg.svd(tall, full_matrices=False)
        return (lxl.lu(a), znp.linalg.cholesky(s, symmetrize_input=False), q, r,
                znp.linalg.eigh(s, symmetrize_input=False), u * u[:1], sv,
                znp.linalg.solve(a, s),
                zx.grad(lambda x: znp.linalg.slogdet(x).logabsdet.sum())(a))
    got, want = zx.jit(f)(s, a, tall), f(s, a, tall)
    for g, w in zip(zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        close(g, w, 1e-11)
    text = zx.jit(f).lower(s, a, tall).as_text()
    assert ("_lu(" in text and "(host)" in text) or "host lu(" in text


def test_jit_in_loop_bodies():
    """Inside compiled loop bodies cholesky, lu and triangular_solve are Numba loop nests."""
    rng = np.random.default_rng(6)
    s, a = _spd(rng, (2, 3, 3)), _general(rng, (3, 4))

    def loop(s, a):
        def body(i, c):
            L = lxl.cholesky(s + c, symmetrize_input=False)
            lu, _, perm = lxl.lu(a + c[0, :, :1])
            y = lxl.triangular_solve(L, s, left_side=True, lower=True)
            z = lxl.triangular_solve(L, y, left_side=False, lower=True, transpose_a=True)
            w = lxl.triangular_solve(lu[:, :3], L, left_side=True, lower=True,
                                     unit_diagonal=True)
            return c + 0.01 * (z + w + lu[:, :3] + perm.astype(np.float64)[:, None])
        return zx.lax.fori_loop(0, 3, body, np.zeros((2, 3, 3)))
    close(zx.jit(loop)(s, a), loop(s, a), 1e-11)
    bad = np.array([[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    nan_loop = zx.jit(lambda x: zx.lax.fori_loop(0, 1, lambda i, c: lxl.cholesky(c), x))
    assert np.isnan(np.asarray(nan_loop(bad))).all()



def test_jit_decompositions_that_call_back_in_loop_bodies():
    """qr, eigh, svd and eig inside compiled loop bodies call NumPy from the kernel: the
    values of the same loop written with NumPy, in scan, fori_loop, cond, under vmap and
    with a derivative through the loop."""
    rng = np.random.default_rng(7)
    s = _spd(rng, (3, 3))
    g = rng.standard_normal((3, 3))

    def step(c):
        w, v = znp.linalg.eigh(c, symmetrize_input=False)
        u, sv, vt = znp.linalg.svd(c)
        q, r = znp.linalg.qr(c)
        ev = znp.linalg.eigvals(g + c)
        nxt = c + 0.01 * (v[:, :1] * v[:, :1].T + u[:, :1] * vt[:1] + r * q[0, 0])
        return nxt, (w, sv, ev)

    def np_step(c):
        w, v = np.linalg.eigh(c)
        u, sv, vt = np.linalg.svd(c)
        q, r = np.linalg.qr(c)
        ev = np.linalg.eigvals(g + c)
        return c + 0.01 * (v[:, :1] * v[:, :1].T + u[:, :1] * vt[:1] + r * q[0, 0]), \
            (w, sv, ev)

    c, want = s, []
    for _ in range(3):
        c, ys = np_step(c)
        want.append(ys)
    carry, ys = zx.jit(lambda c: zx.lax.scan(lambda c, _: step(c), c, None, length=3))(s)
    close(carry, c, 1e-12)
    for k in range(3):
        close(ys[k], np.stack([w[k] for w in want]), 1e-12)
    assert np.asarray(ys[2]).dtype == np.complex128
    close(zx.jit(lambda c: zx.lax.fori_loop(0, 3, lambda i, c: step(c)[0], c))(s), c, 1e-12)

    batch = np.stack([s, 2 * s])
    branch = zx.jit(zx.vmap(lambda x: zx.lax.cond(
        x[0, 0] > 1e9, lambda y: y, lambda y: znp.linalg.eigh(y)[1] * znp.linalg.svd(y)[1][0], x)))
    close(branch(batch), np.stack([np.linalg.eigh(x)[1] * np.linalg.svd(x)[1][0]
                                   for x in batch]), 1e-12)

    def loss(c):
        return zx.lax.fori_loop(0, 2, lambda i, c: step(c)[0], c)[0, 0]
    close(zx.jit(zx.grad(loss))(s), zx.grad(loss)(s), 1e-10)
    check_grads(loss, (s,), order=1, modes=["rev"])


# --------------------------------------------------------------------------- errors


def test_errors_say_what_was_wrong():
    with pytest.raises(errors.ShapeError, match="square"):
        znp.linalg.inv(np.ones((2, 3)))
    with pytest.raises(errors.ShapeError, match="rank >= 2"):
        znp.linalg.cholesky(np.ones(3))
    with pytest.raises(errors.ShapeError, match=r"b must have shape \(3,\) or"):
        znp.linalg.solve(np.eye(3), np.ones((2, 2)))
    with pytest.raises(errors.ShapeError, match="do not broadcast"):
        lxl.triangular_solve(np.eye(2)[None].repeat(2, 0), np.ones((3, 2, 2)), left_side=True)
    with pytest.raises(errors.ShapeError, match="must have 2 rows"):
        lxl.triangular_solve(np.eye(2), np.ones((3, 1)), left_side=True)
    with pytest.raises(errors.ZeraxTypeError, match="one dtype"):
        lxl.triangular_solve(np.eye(2) * 1j, np.ones((2, 1)), left_side=True)
    with pytest.raises(errors.ZeraxTypeError, match="floating-point"):
        lxl.cholesky(np.eye(2, dtype=np.int64))
    with pytest.raises(errors.ZeraxValueError, match="mode"):
        znp.linalg.qr(np.eye(2), mode="bogus")
    with pytest.raises(errors.NotSupportedError, match="derivative of qr"):
        zx.jvp(lambda x: znp.linalg.qr(x).R, (np.ones((2, 3)),), (np.ones((2, 3)),))
    with pytest.raises(errors.NotSupportedError, match="full_matrices=False"):
        zx.jvp(lambda x: znp.linalg.svd(x).U, (np.ones((2, 3)),), (np.ones((2, 3)),))
    with pytest.raises(errors.ZeraxValueError, match="trans"):
        zsl.solve_triangular(np.eye(2), np.ones(2), trans=5)


# --------------------------------------------------------------------------- review fixes


def _cofactors(a):
    """The cofactor matrix of a square matrix, from its minors (NumPy)."""
    n = a.shape[0]
    c = np.ones_like(a)
    if n > 1:
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(a, i, 0), j, 1)
                c[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


def _svd_functions(a3, h3, r, bm, low3):
    """The SVD-based functions whose intermediate shapes differ (broadcasting inside)."""
    u, s, vh = znp.linalg.svd(h3, hermitian=True)
    return {
        "pinv": znp.linalg.pinv(a3),
        "svd_herm": ((u * s[..., None, :]) @ vh, s),
        "lstsq": znp.linalg.lstsq(r, bm)[:3],
        "rank": znp.linalg.matrix_rank(low3),
        "rank_tol": znp.linalg.matrix_rank(low3, tol=np.array([0.5, 1e-9, 2.0])),
        "grad_pinv": zx.grad(lambda x: (znp.linalg.pinv(x) ** 2).sum())(r),
    }


def test_svd_based_functions_under_jit_and_vmap():
    rng = np.random.default_rng(10)
    a3 = rng.normal(size=(3, 4, 3))
    h3 = _distinct_sym(rng, 4)[None] * np.array([1.0, -1.0, 2.0])[:, None, None]
    r, bm = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    low3 = rng.normal(size=(3, 4, 2)) @ rng.normal(size=(3, 2, 4))      # rank 2
    args = (a3, h3, r, bm, low3)
    eager = _svd_functions(*args)
    close(eager["pinv"], np.linalg.pinv(a3))
    close(eager["svd_herm"][0], h3)
    close(eager["svd_herm"][1], np.linalg.svd(h3, compute_uv=False))
    x, resid, rank, _ = np.linalg.lstsq(r, bm)
    close(eager["lstsq"][0], x)
    close(eager["lstsq"][1], resid)
    assert int(eager["lstsq"][2]) == rank
    np.testing.assert_array_equal(eager["rank"], np.linalg.matrix_rank(low3))
    np.testing.assert_array_equal(eager["rank_tol"],
                                  np.linalg.matrix_rank(low3, tol=np.array([0.5, 1e-9, 2.0])))
    check_grads(lambda x: (znp.linalg.pinv(x) ** 2).sum(), (r,), order=1, modes=("rev",))
    got = zx.jit(_svd_functions)(*args)
    for g, w in zip(zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(eager)):
        close(g, w, 1e-9)
    # vmap over the leading axis: each function of one matrix, against NumPy per matrix
    vm = zx.vmap(lambda a, h, b, lo: (
        znp.linalg.pinv(a), znp.linalg.pinv(h, hermitian=True),
        znp.linalg.svd(h, hermitian=True, compute_uv=False), znp.linalg.lstsq(a, b)[0],
        znp.linalg.matrix_rank(lo), zx.grad(lambda y: (znp.linalg.pinv(y) ** 2).sum())(a)))
    b3 = rng.normal(size=(3, 4, 2))
    p, ph, sh, xs, rk, gp = vm(a3, h3, b3, low3)
    close(p, np.linalg.pinv(a3))
    close(ph, np.linalg.pinv(h3))
    close(sh, np.linalg.svd(h3, compute_uv=False))
    close(xs, np.stack([np.linalg.lstsq(a3[i], b3[i])[0] for i in range(3)]))
    np.testing.assert_array_equal(rk, [2, 2, 2])
    for i in range(3):
        close(gp[i], zx.grad(lambda y: (znp.linalg.pinv(y) ** 2).sum())(a3[i]), 1e-9)


def test_pinv_and_matrix_rank_tolerances():
    stack = np.stack([np.diag([1.0, 1e-3])] * 2)
    rtol = np.array([1e-2, 1e-4])
    close(znp.linalg.pinv(stack, rtol=rtol), np.linalg.pinv(stack, rtol=rtol))
    close(zx.jit(znp.linalg.pinv)(stack, rtol), np.linalg.pinv(stack, rtol=rtol))
    close(znp.linalg.pinv(stack[0], rcond=1e-2), np.linalg.pinv(stack[0], rtol=1e-2))
    np.testing.assert_array_equal(znp.linalg.matrix_rank(stack, rtol=rtol),
                                  np.linalg.matrix_rank(stack, rtol=rtol))


def test_scipy_cholesky_reads_one_triangle():
    # Reference: NumPy's cholesky of the matrix the named triangle describes
    # (scipy is not a test dependency).
    rng = np.random.default_rng(11)
    s = _spd(rng, (4, 4))
    junk = np.triu(rng.normal(size=(4, 4)) * 10, 1)
    want_lower = np.linalg.cholesky(s)
    for lower, a in ((True, s + junk), (False, s + junk.T)):
        want = want_lower if lower else want_lower.T
        close(zsl.cholesky(a, lower=lower), want)
        c, low = zsl.cho_factor(a, lower=lower)
        tri = np.tril if lower else np.triu
        close(tri(np.asarray(c)), want)
        b = rng.normal(size=(4, 2))
        close(zsl.cho_solve((c, low), b), np.linalg.solve(s, b))


def test_lstsq_rcond_follows_numpy():
    a = np.diag([1.0, 1e-17, 0.0])
    # (rcond=0 differs: LAPACK's gelsd, under NumPy, takes eps for it; JAX, followed
    # here, keeps every nonzero singular value)
    for rcond in (-1, -0.5, None, 1e-2):
        x, _, rank, _ = znp.linalg.lstsq(a, np.ones(3), rcond=rcond)
        want = np.linalg.lstsq(a, np.ones(3), rcond=rcond)
        close(x, want[0])
        assert int(rank) == want[2]
    rng = np.random.default_rng(12)
    low = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 4))
    b = rng.normal(size=(5, 3))
    x, _, rank, _ = znp.linalg.lstsq(low, b, rcond=-1)
    want = np.linalg.lstsq(low, b, rcond=-1)
    close(x, want[0], 1e-9)
    assert int(rank) == want[2] == 2


def test_det_gradient_at_singular_matrices():
    mats = [np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 0.0]]),
            np.zeros((2, 2)), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
            np.outer([1.0, 2.0, 3.0], [1.0, 1.0, 2.0]), np.diag([1.0, 0.0, 2.0]),
            np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])]
    g = zx.grad(znp.linalg.det)
    close(g(mats[0]), [[4.0, -2.0], [-2.0, 1.0]], 1e-12)          # by hand
    for a in mats:
        close(g(a), _cofactors(a), 1e-12)
    three = np.stack(mats[3:])
    want = np.stack([_cofactors(a) for a in three])
    close(zx.vmap(g)(three), want, 1e-12)
    close(zx.jit(zx.grad(lambda x: znp.linalg.det(x).sum()))(three), want, 1e-12)
    # jvp as well, and higher derivatives where the matrix is invertible
    t = np.arange(9.0).reshape(3, 3)
    close(zx.jvp(znp.linalg.det, (mats[3],), (t,))[1], (_cofactors(mats[3]) * t).sum(), 1e-9)
    check_grads(znp.linalg.det, (np.eye(3),), order=2, modes=("fwd", "rev"))


def test_cond_of_singular_matrices_is_inf():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for p in ("fro", "nuc", 1, -1, np.inf, -np.inf):
        assert float(znp.linalg.cond(sing, p)) == np.inf, p     # JAX's rule
        if p != "nuc":                                             # NumPy's SVD fails there
            assert np.linalg.cond(sing, p) == np.inf
    with np.errstate(invalid="ignore"):     # 0 / 0 (eagerly, in NumPy)
        assert float(znp.linalg.cond(np.zeros((2, 2)), -2)) == np.inf
    assert np.isnan(float(znp.linalg.cond(np.array([[np.nan, 2.0], [2.0, 4.0]]), "fro")))
    got = zx.vmap(lambda x: znp.linalg.cond(x, "nuc"))(np.stack([sing, np.eye(2)]))
    np.testing.assert_array_equal(got, [np.inf, 4.0])


def test_review_errors_say_what_was_wrong():
    a = np.eye(4) + 0.1
    lu_piv = zsl.lu_factor(a)
    with pytest.raises(errors.ShapeError, match=r"batch dimensions of a \(2, 4, 4\) and b"):
        znp.linalg.solve(np.stack([a, a]), np.ones((3, 4, 1)))
    with pytest.raises(errors.ShapeError, match="batch dimensions of lu"):
        zsl.lu_solve((np.stack([a, a]), np.zeros((2, 4), np.int32)), np.ones((3, 4, 1)))
    with pytest.raises(errors.ShapeError, match=r"rtol of shape \(3,\) does not broadcast"):
        znp.linalg.pinv(np.ones((2, 3, 3)), rtol=np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="rtol and rcond were both given"):
        znp.linalg.pinv(a, rtol=0.1, rcond=0.2)
    with pytest.raises(errors.ZeraxTypeError, match="rcond must be a number"):
        znp.linalg.lstsq(a, np.ones(4), rcond="x")
    with pytest.raises(errors.ZeraxTypeError, match=r"pair \(lu, piv\) that lu_factor"):
        zsl.lu_solve(a, np.ones(4))
    with pytest.raises(errors.ZeraxTypeError, match=r"pair \(c, lower\) that cho_factor"):
        zsl.cho_solve(a, np.ones(4))
    with pytest.raises(errors.ShapeError, match=r"pivots must have shape \(\.\.\., 4\)"):
        zsl.lu_solve((lu_piv[0], np.array([3, 3])), np.ones(4))
    with pytest.raises(errors.ZeraxIndexError, match=r"pivot indices must be in \[0, 4\)"):
        zsl.lu_solve((lu_piv[0], np.array([9, 1, 2, 3])), np.ones(4))
    with pytest.raises(errors.ZeraxTypeError, match="pivots must be integers"):
        zsl.lu_solve((lu_piv[0], np.array([0.0, 1.0, 2.0, 3.0])), np.ones(4))
    with pytest.raises(errors.ShapeError, match=r"tol of shape \(3,\) does not broadcast"):
        znp.linalg.matrix_rank(np.ones((2, 3, 3)), tol=np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="tol and rtol were both given"):
        znp.linalg.matrix_rank(a, tol=0.1, rtol=0.1)
