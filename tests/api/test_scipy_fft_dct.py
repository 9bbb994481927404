"""zerax.scipy.fft's type-2 DCTs against their definition (NumPy matrix products), the
inverses, n/s padding, complex inputs and derivatives."""

import numpy as np
import pytest

import zerax as zx
from zerax import errors
from zerax.scipy.fft import dct, dctn, idct, idctn
from zerax.test_util import check_grads


def _dct_mat(n, ortho):
    k = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    m = 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n))
    if ortho:
        m = m * np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    return m


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_dct_idct_match_the_definition(norm, axis):
    x = np.random.RandomState(0).randn(5, 6, 4)
    m = _dct_mat(x.shape[axis], norm == "ortho")
    want = np.moveaxis(np.tensordot(m, np.moveaxis(x, axis, 0), axes=1), 0, axis)
    np.testing.assert_allclose(dct(x, axis=axis, norm=norm), want, rtol=1e-12, atol=1e-12)
    inv = np.moveaxis(np.tensordot(np.linalg.inv(m), np.moveaxis(x, axis, 0), axes=1), 0, axis)
    np.testing.assert_allclose(idct(x, axis=axis, norm=norm), inv, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(idct(dct(x, axis=axis, norm=norm), axis=axis, norm=norm), x,
                               rtol=1e-12, atol=1e-12)


def test_dctn_padding_complex_and_derivatives():
    x = np.random.RandomState(1).randn(4, 5)
    want = _dct_mat(4, False) @ x @ _dct_mat(5, False).T
    np.testing.assert_allclose(dctn(x), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(idctn(dctn(x, norm="ortho"), norm="ortho"), x, atol=1e-12)
    padded = np.zeros((4, 7))
    padded[:, :5] = x
    np.testing.assert_allclose(dctn(x, s=(4, 7)), _dct_mat(4, False) @ padded
                               @ _dct_mat(7, False).T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dct(x, n=3), x[:, :3] @ _dct_mat(3, False).T, rtol=1e-12,
                               atol=1e-12)
    z = x[0] + 1j * x[1]
    np.testing.assert_allclose(dct(z), _dct_mat(5, False) @ z, rtol=1e-12, atol=1e-12)
    check_grads(lambda v: dct(v, norm="ortho") ** 2, (x[0],), order=2)
    np.testing.assert_allclose(zx.jit(dctn)(x), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(errors.NotSupportedError):
        dct(x, type=3)
    with pytest.raises(errors.ZeraxValueError):
        dct(x, norm="forward")
