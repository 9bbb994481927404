"""zerax.numpy.linalg.eig / eigvals and zerax.lax.linalg.eig (general matrices): NumPy's
values, JAX's dtypes and derivatives (recorded from JAX 0.10.2), vmap, jit, errors."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax.test_util import check_grads

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4))
STACK = RNG.standard_normal((2, 3, 4, 4))
CPLX = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))


@pytest.mark.parametrize("a", [A, STACK, CPLX, A.astype(np.float32)],
                         ids=["float64", "stack", "complex", "float32"])
def test_values_match_numpy(a):
    w, v = znp.linalg.eig(a)
    want_w, want_v = np.linalg.eig(a)
    cdt = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    assert w.dtype == cdt and v.dtype == cdt   # complex even when NumPy's are real
    tol = 1e-5 if cdt == np.complex64 else 1e-12
    np.testing.assert_allclose(w, want_w, atol=tol)
    np.testing.assert_allclose(v, want_v, atol=tol)
    np.testing.assert_allclose(znp.linalg.eigvals(a), want_w, atol=tol)
    np.testing.assert_allclose(np.asarray(a) @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :],
                               atol=10 * tol)


def test_left_eigenvectors():
    w, vl, vr = lax.linalg.eig(A)
    w, vl, vr = map(np.asarray, (w, vl, vr))
    np.testing.assert_allclose(vl.conj().T @ A, w[:, None] * vl.conj().T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0)
    big = vl[np.abs(vl).argmax(axis=0), range(4)]   # LAPACK's: largest component real
    np.testing.assert_allclose(big.imag, 0.0, atol=1e-15)
    (only_w,) = lax.linalg.eig(A, compute_left_eigenvectors=False,
                               compute_right_eigenvectors=False)
    np.testing.assert_allclose(only_w, w)


# jax.jvp(lambda a: jax.lax.linalg.eig(a, enable_eigvec_derivs=True), (a,), (t,)) at
# these points, JAX 0.10.2 with x64
JA = np.array([[1.0, 2.0, 0.5], [-1.0, 0.5, 1.5], [0.3, -0.7, 2.0]])
JT = np.array([[0.2, -0.1, 0.4], [0.3, 0.1, -0.2], [-0.5, 0.25, 0.1]])
JAX_DW = np.array([0.26016670971188227 - 0.41287743595623072j,
                   0.26016670971188227 + 0.41287743595623072j, -0.1203334194237646])
JAX_DVL = np.array(
    [[0.08836840286691942 + 0.0921448236291494j, 0.08836840286691944 - 0.0921448236291494j,
      -0.2025765221739082],
     [0.0065247453451196, 0.00652474534511959, -0.15460828384802094],
     [0.00746232879924059 + 0.0845376099496622j, 0.00746232879924057 - 0.0845376099496622j,
      0.05703087773576976]])
JAX_DVR = np.array(
    [[0.09729204286648341, 0.09729204286648341, 0.15043970830064],
     [0.0190371733099284 - 0.06733371372739613j, 0.0190371733099284 + 0.06733371372739613j,
      -0.12781478279652958],
     [0.1331568724191761 + 0.09738783261865147j, 0.1331568724191761 - 0.09738783261865147j,
      -0.11388799702373774]])


def test_jvp_matches_jax():
    f = lambda a: lax.linalg.eig(a, enable_eigvec_derivs=True)
    _, (dw, dvl, dvr) = zx.jvp(f, (JA,), (JT,))
    np.testing.assert_allclose(dw, JAX_DW, atol=1e-13)
    np.testing.assert_allclose(dvl, JAX_DVL, atol=1e-13)
    np.testing.assert_allclose(dvr, JAX_DVR, atol=1e-13)
    _, dw2 = zx.jvp(znp.linalg.eigvals, (JA,), (JT,))
    np.testing.assert_allclose(dw2, JAX_DW, atol=1e-13)


def _parts(z):
    return [znp.real(z), znp.imag(z)]


def test_eigenvalue_derivatives():
    check_grads(lambda a: _parts(znp.linalg.eigvals(a)), (A,), order=2, modes=("fwd", "rev"))
    # sum of eigenvalues = trace, product = det: their gradients are known exactly
    np.testing.assert_allclose(zx.grad(lambda a: znp.real(znp.linalg.eigvals(a)).sum())(A),
                               np.eye(4), atol=1e-12)
    det_grad = zx.grad(lambda a: znp.real(znp.prod(znp.linalg.eigvals(a))))(A)
    np.testing.assert_allclose(det_grad, np.linalg.det(A) * np.linalg.inv(A).T, atol=1e-12)
    # complex input (a holomorphic function of a, checked along real directions)
    check_grads(lambda x: _parts(znp.linalg.eigvals(x + 0.5j * x.T)), (A[:3, :3],),
                order=1, modes=("fwd", "rev"))


def test_eigenvector_derivatives():
    """LAPACK may flip an eigenvector's sign between nearby matrices, so finite
    differences are taken of functions that do not see the sign: |v|^2 and the spectral
    projectors vr_j vl_j^H / (vl_j^H vr_j)."""
    def f(a):
        _w, vl, vr = lax.linalg.eig(a, enable_eigvec_derivs=True)
        d = znp.sum(znp.conj(vl) * vr, axis=0)
        proj = vr[:, None, :] * znp.conj(vl)[None, :, :] / d
        return [znp.abs(vr) ** 2, znp.abs(vl) ** 2, *_parts(proj)]

    check_grads(f, (JA,), order=2, modes=("fwd", "rev"))
    with pytest.raises(errors.NotSupportedError, match="enable_eigvec_derivs"):
        zx.jvp(znp.linalg.eig, (A,), (A,))


def test_vmap_and_jit():
    np.testing.assert_allclose(zx.vmap(znp.linalg.eigvals)(STACK[0]),
                               np.linalg.eigvals(STACK[0]), atol=1e-12)
    w, _v = zx.jit(znp.linalg.eig)(A)
    np.testing.assert_allclose(w, np.linalg.eigvals(A), atol=1e-12)
    g = zx.jit(zx.grad(lambda a: znp.real(znp.prod(znp.linalg.eigvals(a)))))
    np.testing.assert_allclose(g(A), np.linalg.det(A) * np.linalg.inv(A).T, atol=1e-12)
    per = zx.vmap(zx.grad(lambda a: znp.imag(znp.linalg.eigvals(a)).sum()))(STACK[0])
    np.testing.assert_allclose(per, np.zeros_like(STACK[0]), atol=1e-12)


def test_special_inputs_and_errors():
    w = znp.linalg.eigvals(np.array([[0, -1], [1, 0]]))        # integers: as float64
    np.testing.assert_allclose(w, [1j, -1j])
    assert w.dtype == np.complex128
    assert znp.linalg.eigvals(np.eye(2, dtype=np.float16)).dtype == np.complex64
    nan = znp.linalg.eigvals(np.array([[[1.0, np.nan], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]]))
    assert np.isnan(np.asarray(nan[0])).all()
    np.testing.assert_allclose(nan[1], [2.0, 3.0])
    assert znp.linalg.eig(np.zeros((0, 0)))[1].shape == (0, 0)
    with pytest.raises(errors.ShapeError, match="square"):
        znp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(errors.ShapeError, match="square"):
        znp.linalg.eigvals(np.ones(3))
    with pytest.raises(errors.ZeraxTypeError, match="float"):
        lax.linalg.eig(np.eye(2, dtype=np.int32))
    # inside a compiled loop body eig calls LAPACK from the kernel: the loop's values
    def loop(a):
        return lax.fori_loop(0, 2, lambda i, m: m + znp.real(znp.linalg.eigvals(m)).sum(), a)
    want = np.asarray(A, np.float64)
    for _ in range(2):
        want = want + np.real(np.linalg.eigvals(want)).sum()
    np.testing.assert_allclose(np.asarray(zx.jit(loop)(A)), want, rtol=1e-12)


def test_left_eigenvectors_of_a_matrix_without_a_basis(monkeypatch):
    """Where vr cannot be inverted (a defective matrix), the left eigenvectors are NaN
    and the eigenvalues and right eigenvectors are still LAPACK's."""
    real_inv = np.linalg.inv

    def inv(x):  # singular for the first matrix, as an exactly defective vr would be
        if (np.abs(x[..., 0, 1] + 1) < 1e-9).any():
            raise np.linalg.LinAlgError("Singular matrix")
        return real_inv(x)

    monkeypatch.setattr(np.linalg, "inv", inv)
    a = np.stack([np.array([[1.0, 1.0], [0.0, 1.0]]), np.diag([2.0, 3.0])])
    w, vl, vr = lax.linalg.eig(a)
    np.testing.assert_allclose(w, [[1, 1], [2, 3]])
    assert np.isnan(np.asarray(vl[0])).all()
    np.testing.assert_allclose(vl[1], np.eye(2))
    np.testing.assert_allclose(vr, np.linalg.eig(a)[1])
