"""zerax.scipy.linalg's structured matrices (block_diag, toeplitz, hankel, circulant,
hilbert) and polar, against their definitions written with NumPy loops."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
import zerax.scipy.linalg as zsl
from zerax import errors


def test_block_diag_places_blocks():
    a, b, c = np.arange(4.0).reshape(2, 2), np.array([5.0]), np.array([[1, 2, 3]])
    got = zsl.block_diag(a, b, c)
    want = np.zeros((4, 6))
    want[:2, :2] = a
    want[2, 2] = 5.0
    want[3, 3:] = [1, 2, 3]
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float64
    assert zsl.block_diag(np.ones((1, 1), np.float32)).dtype == np.float32
    assert zsl.block_diag().shape == (1, 0)
    g = zx.grad(lambda x: znp.sum(zsl.block_diag(x, 2 * x) ** 2))(a)
    np.testing.assert_allclose(g, 10 * a)
    with pytest.raises(errors.ShapeError):
        zsl.block_diag(np.ones((2, 2, 2)))


def _toeplitz_ref(c, r):
    return np.array([[c[i - j] if i >= j else r[j - i] for j in range(len(r))]
                     for i in range(len(c))])


def test_toeplitz_hankel_circulant():
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 5.0, 6.0, 7.0])
    np.testing.assert_array_equal(zsl.toeplitz(c, r), _toeplitz_ref(c, r))
    np.testing.assert_array_equal(zsl.toeplitz(c), _toeplitz_ref(c, c))
    cz = np.array([1.0, 2 + 1j, 3 - 2j])
    np.testing.assert_array_equal(zsl.toeplitz(cz), _toeplitz_ref(cz, cz.conj()))
    hank = np.array([[(np.concatenate([c, r[1:]]))[i + j] for j in range(4)] for i in range(3)])
    np.testing.assert_array_equal(zsl.hankel(c, r), hank)
    np.testing.assert_array_equal(zsl.hankel(c), [[1, 2, 3], [2, 3, 0], [3, 0, 0]])
    circ = np.array([[c[(i - j) % 3] for j in range(3)] for i in range(3)])
    np.testing.assert_array_equal(zsl.circulant(c), circ)
    # batched over leading dimensions, as JAX's
    cb = np.stack([c, 2 * c])
    np.testing.assert_array_equal(zsl.toeplitz(cb, r)[1], _toeplitz_ref(2 * c, r))
    np.testing.assert_array_equal(zsl.circulant(cb)[1], 2 * circ)
    # differentiable: d sum(T) / d c_k counts the entries c_k fills
    g = zx.grad(lambda v: znp.sum(zsl.toeplitz(v, r)))(c)
    np.testing.assert_allclose(g, [3.0, 2.0, 1.0])


def test_hilbert():
    np.testing.assert_allclose(zsl.hilbert(4), 1.0 / (np.add.outer(np.arange(4), np.arange(4)) + 1))
    with pytest.raises(errors.ZeraxValueError):
        zsl.hilbert(-1)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_factors(shape, side):
    rs = np.random.RandomState(1)
    a = rs.randn(*shape)
    u, p = zsl.polar(a, side=side)
    u, p = np.asarray(u), np.asarray(p)
    np.testing.assert_allclose(u @ p if side == "right" else p @ u, a, atol=1e-12)
    np.testing.assert_allclose(p, p.T, atol=1e-12)
    assert np.linalg.eigvalsh(p).min() > -1e-12
    m, n = shape
    np.testing.assert_allclose(u.T @ u if m >= n else u @ u.T, np.eye(min(m, n)), atol=1e-12)
    c = rs.randn(3, 3) + 1j * rs.randn(3, 3)
    uc, pc = zsl.polar(c, side=side)
    np.testing.assert_allclose(uc @ pc if side == "right" else pc @ uc, c, atol=1e-12)
    with pytest.raises(errors.ZeraxValueError):
        zsl.polar(a, side="up")
