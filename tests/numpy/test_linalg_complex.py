"""Complex Hermitian ``eigh``/``eigvalsh`` and complex ``svd``/``svdvals``, and what is
built on them (``norm`` ord 2/-2/'nuc', ``pinv``, ``lstsq``, ``matrix_rank``,
``cond``), issue 14.

Values are NumPy's (the same LAPACK routines, so eigenvectors and singular vectors
match NumPy's phases exactly, eagerly, under ``jit`` and under ``vmap``); derivatives
are checked against central finite differences along *complex* directions (``check_grads``
draws real tangents only), in forward and reverse mode, to second order, on quantities
that do not depend on the arbitrary phases (eigenvalues, singular values, eigenvector
projectors, ``U diag(c) Vh``, ``|U|^2``); gradients also against their closed forms
(JAX's convention: ``grad`` of a real ``f`` of complex ``z`` is ``df/dx - i df/dy``).
"""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
import zerax.scipy.linalg as zsl
from zerax import errors
from zerax.test_util import check_grads, numerical_jvp

RNG = np.random.default_rng(14)


def _crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _hermitian_distinct(n):
    """A Hermitian matrix with eigenvalues -1.5, -0.5, 1, 2.5, ... (well apart)."""
    q, _ = np.linalg.qr(_crandn(n, n))
    w = np.array([-1.5, -0.5, 1.0, 2.5, 4.0, 6.0][:n])
    return (q * w) @ q.conj().T


def _distinct_sv(m, n):
    """A complex m x n matrix with singular values 1, 2, ..., min(m, n)."""
    k = min(m, n)
    u, _ = np.linalg.qr(_crandn(m, k))
    v, _ = np.linalg.qr(_crandn(n, k))
    return (u * np.arange(1.0, k + 1)) @ v.conj().T


H3 = _hermitian_distinct(3)
A33 = _distinct_sv(3, 3)
A43 = _distinct_sv(4, 3)
A34 = _distinct_sv(3, 4)
STACK = np.stack([_hermitian_distinct(3) for _ in range(3)])


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# --------------------------------------------------------------- complex-direction grads


def _pair(a, b):
    """JAX's pairing of cotangents and tangents: Re(sum(a * b)) (no conjugate)."""
    return float(np.sum(np.asarray(a) * np.asarray(b)).real)


def _direction(rng, x):
    x = np.asarray(x)
    t = rng.standard_normal(x.shape)
    if x.dtype.kind == "c":
        t = t + 1j * rng.standard_normal(x.shape)
    return t.astype(x.dtype)


def check_complex_grads(f, args, order, eps=1e-6, tol=1e-6, seed=0):
    """``check_grads`` along complex directions: forward mode against a central
    difference ``(f(x + eps t) - f(x - eps t)) / 2 eps`` for a random complex ``t``;
    reverse mode by ``<vjp(ct), t> == <ct, jvp(t)>`` under the pairing Re(sum(a * b)),
    with the finite-difference jvp; higher orders on the derivative functions."""
    rng = np.random.default_rng(seed)

    def flat(*xs):
        out = f(*xs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def recurse(fun, prims, k):
        ts = [_direction(rng, p) for p in prims]
        _, tan = zx.jvp(fun, tuple(prims), tuple(ts))
        fd = numerical_jvp(fun, prims, ts, eps)
        for i, (g, w) in enumerate(zip(tan, fd)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol,
                                       err_msg=f"order {order - k + 1} forward, output {i}")
        out, f_vjp = zx.vjp(fun, *prims)
        cts = [_direction(rng, o) for o in out]
        cts_in = f_vjp(list(cts))
        lhs = sum(_pair(c, t) for c, t in zip(cts_in, ts))
        rhs = sum(_pair(c, n) for c, n in zip(cts, fd))
        scale = max(1.0, abs(rhs))
        assert abs(lhs - rhs) <= tol * scale, (order - k + 1, lhs, rhs)
        if k > 1:
            recurse(lambda *p: list(zx.jvp(fun, tuple(p), tuple(ts))[1]), prims, k - 1)
            recurse(lambda *p: list(zx.vjp(fun, *p)[1](list(cts))), prims, k - 1)

    recurse(flat, [np.asarray(a) for a in args], order)


# --------------------------------------------------------------------------- eigh values


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_eigh_matches_numpy(dtype):
    a = H3.astype(dtype)
    w, v = znp.linalg.eigh(a)
    nw, nv = np.linalg.eigh(a)
    rdt = np.float32 if dtype == np.complex64 else np.float64
    assert w.dtype == rdt and v.dtype == dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    close(w, nw, tol)
    close(v, nv, tol)            # the same LAPACK routine: the same phases
    assert np.all(np.diff(np.asarray(w)) > 0)
    close(znp.linalg.eigvalsh(a), nw, tol)
    assert znp.linalg.eigvalsh(a).dtype == rdt
    av = np.asarray(v)
    close(av @ np.diag(np.asarray(w)) @ av.conj().T, a, 10 * tol)


def test_eigh_reads_one_triangle_without_symmetrize():
    # garbage above (below) the diagonal and an imaginary part on it are ignored, as LAPACK
    a = np.tril(H3) + np.triu(_crandn(3, 3), 1) + 0.3j * np.eye(3)
    for uplo, m in (("L", a), ("U", a.conj().T)):
        w, v = znp.linalg.eigh(m, UPLO=uplo, symmetrize_input=False)
        nw, nv = np.linalg.eigh(m, UPLO=uplo)
        close(w, nw)
        close(v, nv)


def test_eigh_symmetrize_input_uses_the_conjugate_transpose():
    a = H3 + 0.2 * _crandn(3, 3)
    h = (a + a.conj().T) / 2
    close(znp.linalg.eigvalsh(a), np.linalg.eigvalsh(h))


def test_eigh_jit_and_vmap_match_numpy():
    nw, nv = np.linalg.eigh(STACK)
    w, v = zx.jit(znp.linalg.eigh)(STACK)
    close(w, nw)
    close(v, nv)
    w, v = zx.vmap(znp.linalg.eigh)(STACK)
    close(w, nw)
    close(v, nv)
    close(zx.vmap(znp.linalg.eigvalsh, in_axes=1)(np.moveaxis(STACK, 0, 1)), nw)


# --------------------------------------------------------------------------- svd values


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_numpy(dtype, shape, full):
    a = _crandn(*shape).astype(dtype)
    u, s, vh = znp.linalg.svd(a, full_matrices=full)
    nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
    rdt = np.float32 if dtype == np.complex64 else np.float64
    assert s.dtype == rdt and u.dtype == dtype and vh.dtype == dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    close(s, ns, tol)
    close(u, nu, tol)
    close(vh, nvh, tol)
    k = min(shape)
    close(np.asarray(u)[:, :k] * np.asarray(s) @ np.asarray(vh)[:k], a, 10 * tol)
    close(znp.linalg.svdvals(a), ns, tol)
    assert znp.linalg.svdvals(a).dtype == rdt


def test_svd_of_empty_and_hermitian():
    s = znp.linalg.svdvals(np.zeros((2, 0, 3), np.complex64))
    assert s.shape == (2, 0) and s.dtype == np.float32
    u, s, vh = znp.linalg.svd(H3, hermitian=True)
    close(s, np.linalg.svd(H3, compute_uv=False))
    close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), H3)
    close(np.asarray(u).conj().T @ np.asarray(u), np.eye(3))


def test_svd_jit_and_vmap_match_numpy():
    stack = np.stack([A43, _crandn(4, 3), _crandn(4, 3)])
    nu, ns, nvh = np.linalg.svd(stack, full_matrices=False)
    f = lambda x: znp.linalg.svd(x, full_matrices=False)
    for g in (zx.jit(f), zx.vmap(f)):
        u, s, vh = g(stack)
        close(s, ns)
        close(u, nu)
        close(vh, nvh)
    close(zx.vmap(znp.linalg.svdvals)(stack), ns)


# --------------------------------------------------------------------------- built on them


def test_norms_match_numpy():
    for a in (A43, A34, _crandn(2, 3, 3)):
        for o in (2, -2, "nuc"):
            close(znp.linalg.norm(a, o, axis=(-2, -1)), np.linalg.norm(a, o, axis=(-2, -1)))
    close(znp.linalg.norm(A43, 2, axis=(1, 0)), np.linalg.norm(A43, 2, axis=(1, 0)))
    close(znp.linalg.matrix_norm(A34, ord="nuc"), np.linalg.norm(A34, "nuc"))
    assert znp.linalg.norm(A43.astype(np.complex64), 2).dtype == np.float32


def test_pinv_lstsq_rank_cond_match_numpy():
    close(znp.linalg.pinv(A43), np.linalg.pinv(A43))
    close(znp.linalg.pinv(A34), np.linalg.pinv(A34))
    close(znp.linalg.pinv(H3, hermitian=True), np.linalg.pinv(H3, hermitian=True))
    low = _crandn(4, 2) @ _crandn(2, 3)
    assert int(znp.linalg.matrix_rank(low)) == 2 == np.linalg.matrix_rank(low)
    assert int(znp.linalg.matrix_rank(A43)) == 3
    assert int(znp.linalg.matrix_rank(H3, hermitian=True)) == 3
    assert int(znp.linalg.matrix_rank(A43, tol=1.5)) == 2 == np.linalg.matrix_rank(A43, tol=1.5)
    for p in (None, 2, -2):
        close(znp.linalg.cond(A33, p), np.linalg.cond(A33, p))
        close(znp.linalg.cond(A43, p), np.linalg.cond(A43, p))
    b = _crandn(4)
    x, res, rank, s = znp.linalg.lstsq(A43, b)
    nx, nres, nrank, ns = np.linalg.lstsq(A43, b, rcond=None)
    close(x, nx)
    close(res, nres)
    assert res.dtype == np.float64 and s.dtype == np.float64
    assert int(rank) == nrank
    close(s, ns)
    x, res, _, _ = znp.linalg.lstsq(A43, np.stack([b, 2 * b], 1))
    close(x, np.linalg.lstsq(A43, np.stack([b, 2 * b], 1), rcond=None)[0])
    close(zx.jit(znp.linalg.pinv)(A43), np.linalg.pinv(A43))


def test_cond_of_complex_in_every_norm():
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(znp.linalg.cond(A33, p), np.linalg.cond(A33, p),
                                   rtol=1e-12)


# --------------------------------------------------------------------------- derivatives


def _eigh_invariants(a):
    """Eigenvalues, the projector on the first eigenvector and |V|^2: none depends on
    the eigenvectors' phases."""
    w, v = znp.linalg.eigh(a)
    p = v[:, :1] @ znp.conj(v[:, :1]).T
    return w, p, znp.real(v * znp.conj(v))


def test_eigh_derivatives_along_complex_directions():
    check_complex_grads(_eigh_invariants, (H3,), order=2)
    # only the lower triangle read (its tangent too)
    check_complex_grads(lambda a: _eigh_invariants_raw(a, "L"), (H3,), order=1)
    check_complex_grads(lambda a: _eigh_invariants_raw(a, "U"), (H3,), order=1)


def _eigh_invariants_raw(a, uplo):
    w, v = znp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False)
    return w, v[:, 2:] @ znp.conj(v[:, 2:]).T


def test_eigh_gradient_closed_form():
    # d w_k = Re(v_k^H dA v_k) (symmetrized dA): grad w_k = conj(v_k v_k^H)
    _nw, nv = np.linalg.eigh(H3)
    for k in range(3):
        g = zx.grad(lambda a, k=k: znp.linalg.eigvalsh(a)[k])(H3)
        close(g, np.conj(np.outer(nv[:, k], nv[:, k].conj())), 1e-12)


def _svd_invariants(a):
    u, s, vh = znp.linalg.svd(a, full_matrices=False)
    c = np.array([1.0, -2.0, 0.5][:s.shape[0]])
    return s, (u * c) @ vh, znp.real(u * znp.conj(u)), znp.real(vh * znp.conj(vh))


@pytest.mark.parametrize("a", [A33, A43, A34], ids=["square", "tall", "wide"])
def test_svd_derivatives_along_complex_directions(a):
    check_complex_grads(_svd_invariants, (a,), order=2 if a is A43 else 1)
    check_complex_grads(znp.linalg.svdvals, (a,), order=2)


def test_hermitian_svd_derivatives():
    def f(a):
        u, s, vh = znp.linalg.svd((a + znp.conj(a).T) / 2, hermitian=True)
        return s, (u * np.array([1.0, -2.0, 0.5])) @ vh
    check_complex_grads(f, (H3,), order=2)


def test_svd_full_square_and_complex64_derivatives():
    def f(x):
        u, s, vh = znp.linalg.svd(x)       # full_matrices: square
        return s, u @ vh
    check_complex_grads(f, (A33,), order=1)
    a = A33.astype(np.complex64)
    check_complex_grads(znp.linalg.svdvals, (a,), order=1, eps=1e-2, tol=2e-2)


def test_norm_second_derivatives():
    for o in (2, -2, "nuc"):
        f = lambda a, o=o: znp.linalg.norm(a, o)
        check_complex_grads(f, (A43,), order=2)
        # check_grads, on the real and imaginary parts (real inputs, real tangents)
        check_grads(lambda x, y, o=o: znp.linalg.norm(zx.lax.complex(x, y), o),
                    (A34.real.copy(), A34.imag.copy()), order=2, modes=("fwd", "rev"))


def test_norm_gradient_closed_form():
    # grad ||A||_2 = conj(u_1 v_1^H); grad ||A||_nuc = conj(U V^H)
    u, _s, vh = np.linalg.svd(A43, full_matrices=False)
    close(zx.grad(lambda a: znp.linalg.norm(a, 2))(A43),
          np.conj(np.outer(u[:, 0], vh[0])), 1e-12)
    close(zx.grad(lambda a: znp.linalg.norm(a, "nuc"))(A43), np.conj(u @ vh), 1e-12)
    close(zx.grad(lambda a: znp.linalg.norm(a, -2))(A43),
          np.conj(np.outer(u[:, -1], vh[-1])), 1e-12)


def test_pinv_derivatives_along_complex_directions():
    check_complex_grads(znp.linalg.pinv, (A43,), order=2)
    check_complex_grads(lambda a, b: znp.linalg.lstsq(a, b)[:2], (A43, _crandn(4)), order=1)
    # (hermitian=True: of Hermitian matrices, so along Hermitian directions)
    check_complex_grads(lambda a: znp.linalg.pinv((a + znp.conj(a).T) / 2, hermitian=True),
                        (H3,), order=1)


def test_derivatives_under_jit_and_vmap():
    def loss(a):
        w, v = znp.linalg.eigh(a)
        u, _s, vh = znp.linalg.svd(a)
        return w[0] + znp.real(v[0, 1] * znp.conj(v[2, 1])) + znp.imag(u[1, 0] * vh[0, 2])
    g = zx.grad(loss)
    want = g(H3 + 0.1 * A33)
    close(zx.jit(g)(H3 + 0.1 * A33), want, 1e-10)
    stack = np.stack([H3 + 0.1 * A33, H3 - 0.1 * A33])
    close(zx.vmap(g)(stack), np.stack([g(x) for x in stack]), 1e-10)
    # and the gradient itself against finite differences along complex directions
    check_complex_grads(loss, (H3 + 0.1 * A33,), order=1)


def test_lax_linalg_takes_complex():
    v, w = zx.lax.linalg.eigh(H3.astype(np.complex64))
    assert w.dtype == np.float32 and v.dtype == np.complex64
    close(w, np.linalg.eigvalsh(H3), 1e-5)
    u, s, vh = zx.lax.linalg.svd(A43, full_matrices=False)
    close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), A43)
    assert s.dtype == np.float64


def test_scipy_linalg_eigh_and_svd_take_complex():
    w, v = zsl.eigh(H3)
    nw, nv = np.linalg.eigh(H3)
    close(w, nw)
    close(v, nv)
    close(zsl.eigh(H3.conj().T, lower=False, eigvals_only=True), nw)
    close(zsl.svd(A43, compute_uv=False), np.linalg.svd(A43, compute_uv=False))


# jax.grad of phase-dependent entries of the eigenvectors and singular vectors (JAX's
# gauge: V^H dV and the V side of the SVD have no diagonal), recorded with jax 0.10.2
# (x64), whose CPU eigh/svd are the same LAPACK routines as NumPy's (the same phases).
JH = np.array([[1.0, 0.5 - 0.3j, 0.2j], [0.5 + 0.3j, -0.7, 0.4 + 0.1j],
               [-0.2j, 0.4 - 0.1j, 2.0]])
JA = np.array([[1.0 + 0.2j, -0.4j, 0.3], [0.5 - 0.1j, 0.8 + 0.6j, -0.2 + 0.1j],
               [0.1j, 0.3 - 0.5j, 1.4], [0.2, -0.6 + 0.2j, 0.5j]])
JAX_EIGVEC_GRAD = np.array([
    [0.0069603635909070045, -0.06134799119259537 - 0.035192910880743264j,
     -0.030491101986975182 + 0.1368356676637465j],
    [-0.06134799119259537 + 0.035192910880743264j, -0.0654809243659871,
     -0.07088070070954056 - 0.12032216578457276j],
    [-0.030491101986975182 - 0.1368356676637465j,
     -0.07088070070954056 + 0.12032216578457276j, 0.058520560775079916]])
JAX_SINGVEC_GRAD = np.array([
    [1.676062524609658 - 0.6837282637594778j, -1.08323647311795 - 0.07076154296254317j,
     0.5379411073124716 - 0.2825961013654447j],
    [-0.22372550597219273 + 0.7774964278005948j, -1.4022336713874932 + 0.6928383039390892j,
     0.9733763921050245 - 0.7642633167406201j],
    [0.37317428125134305 - 0.22679963093641858j, 0.40031981871716127 + 0.23276710261323535j,
     -0.16834128429056452 + 0.06643739317819691j],
    [1.2424608806739323 - 0.03183523838413052j, 0.6536862533534581 - 0.044211919061192706j,
     -0.3017947088611625 + 0.2892767717748349j]])


def test_singular_vector_gradients_as_jax():
    def f1(a):
        v = znp.linalg.eigh(a)[1]
        return znp.real(v[0, 1]) + znp.imag(v[2, 0])

    def f2(a):
        u, _, vh = znp.linalg.svd(a, full_matrices=False)
        return znp.real(u[1, 0]) + znp.imag(vh[1, 2])

    close(zx.grad(f1)(JH), JAX_EIGVEC_GRAD, 1e-12)
    close(zx.grad(f2)(JA), JAX_SINGVEC_GRAD, 1e-12)


# --------------------------------------------------------------------------- LU, Cholesky, QR
# inv, solve, det, slogdet, matrix_power (LU with partial pivoting and triangular solves),
# cholesky and qr of complex matrices: values against NumPy, derivatives along complex
# directions (all holomorphic except slogdet's and QR's, whose rules are JAX's).

B32 = _crandn(3, 2)
PD3 = H3 @ H3.conj().T + np.eye(3)       # Hermitian positive definite


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_lu_cholesky_qr_functions_match_numpy(dtype):
    a, b, h = A33.astype(dtype), B32.astype(dtype), PD3.astype(dtype)
    tol = 1e-10 if dtype == np.complex128 else 2e-4
    lin = znp.linalg
    for got, want in ((lin.inv(a), np.linalg.inv(a)), (lin.solve(a, b), np.linalg.solve(a, b)),
                      (lin.solve(a, b[:, 0]), np.linalg.solve(a, b[:, 0])),
                      (lin.det(a), np.linalg.det(a)),
                      (lin.slogdet(a).sign, np.linalg.slogdet(a).sign),
                      (lin.slogdet(a).logabsdet, np.linalg.slogdet(a).logabsdet),
                      (lin.matrix_power(a, -3), np.linalg.matrix_power(a, -3)),
                      (lin.cholesky(h), np.linalg.cholesky(h)),
                      (lin.cholesky(h, upper=True), np.linalg.cholesky(h).conj().T),
                      (lin.qr(a).Q, np.linalg.qr(a).Q), (lin.qr(A43).R, np.linalg.qr(A43).R)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        close(got, want, tol)
    f = zx.jit(lambda a, h: (lin.inv(a), lin.det(a), lin.cholesky(h)))
    for g, w in zip(f(a, h), (np.linalg.inv(a), np.linalg.det(a), np.linalg.cholesky(h))):
        close(g, w, tol)
    # inside a compiled loop the complex factorizations call NumPy (no real loop nest)
    got = zx.jit(lambda a: zx.lax.fori_loop(0, 2, lambda i, m: lin.inv(m), a))(a)
    close(got, a, tol)
    stack = np.stack([a, 2 * a])
    close(zx.vmap(lin.det)(stack), np.linalg.det(stack), tol)


def test_lu_cholesky_qr_derivatives_along_complex_directions():
    check_complex_grads(znp.linalg.inv, (A33,), order=2)
    check_complex_grads(lambda a: znp.linalg.solve(a, B32), (A33,), order=1)
    check_complex_grads(znp.linalg.det, (A33,), order=2)
    check_complex_grads(lambda a: znp.linalg.slogdet(a).logabsdet, (A33,), order=1)
    # cholesky reads a Hermitian matrix: directions that keep it Hermitian
    check_complex_grads(lambda s: znp.linalg.cholesky(PD3 + s + s.conj().T), (0 * A33,),
                        order=2)
    check_complex_grads(lambda a: znp.linalg.qr(a).R, (A43,), order=1)
    check_complex_grads(lambda a: znp.linalg.qr(a).Q @ znp.diag(znp.array([1.0, 2.0, 3.0]))
                        @ znp.conj(znp.linalg.qr(a).Q).T, (A33,), order=1)
    # det and inv are holomorphic: jacfwd(holomorphic=True), and JAX's grad convention
    want = np.linalg.det(A33) * np.linalg.inv(A33).T
    close(zx.jacfwd(znp.linalg.det, holomorphic=True)(A33), want)
    close(zx.grad(lambda a: znp.real(znp.linalg.det(a)))(A33), want)


def test_lax_linalg_cholesky_and_triangular_solve_take_complex():
    from zerax.lax import linalg as lxl
    L = lxl.cholesky(PD3)
    close(L, np.linalg.cholesky(PD3))
    # op(a) = a^H with transpose_a and conjugate_a
    x = lxl.triangular_solve(L, B32, left_side=True, lower=True, transpose_a=True,
                             conjugate_a=True)
    close(np.asarray(L).conj().T @ np.asarray(x), B32)
    x = lxl.triangular_solve(L, B32.T, left_side=False, lower=True, conjugate_a=True)
    close(np.asarray(x) @ np.asarray(L).conj(), B32.T)
