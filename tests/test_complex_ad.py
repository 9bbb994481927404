"""Complex values under grad follow JAX: a complex output needs holomorphic=True, a real
output of complex inputs gets df/dx - i df/dy, and non-holomorphic |z| is refused
instead of silently dropping the imaginary part."""

import warnings

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors

Z = np.array([1.0 + 2.0j, 3.0 - 1.0j])


def _wirtinger_reference(f, z, eps=1e-6):
    """JAX's gradient of a real f of complex z: df/dx - i df/dy, by central differences."""
    g = np.empty_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = eps
        dx = (f(z + e) - f(z - e)) / (2 * eps)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        g[k] = dx - 1j * dy
    return g


def test_complex_output_needs_holomorphic():
    with pytest.raises(errors.ZeraxTypeError, match="holomorphic=True"):
        zx.grad(lambda v: znp.sum(v * v))(Z)


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_holomorphic_derivative(wrap):
    g = wrap(zx.grad(lambda v: 3.0 * v * v + v, holomorphic=True))
    for z in Z:
        np.testing.assert_allclose(complex(g(z)), 6.0 * z + 1.0)   # d/dz (3z^2 + z)


def test_holomorphic_requires_complex_inputs_and_output():
    with pytest.raises(errors.ZeraxTypeError, match="requires complex inputs"):
        zx.grad(lambda v: v * v, holomorphic=True)(1.0)
    with pytest.raises(errors.ZeraxTypeError, match="return a complex value"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        zx.grad(lambda v: (v * v).astype(float), holomorphic=True)(Z[0])


def test_real_output_of_complex_inputs():
    def f(v):
        return znp.sum((v * v * v + 2.0 * v).astype(float))

    def f_np(v):
        return np.sum((v * v * v + 2.0 * v).real)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        got = zx.grad(f)(Z)
    np.testing.assert_allclose(got, _wirtinger_reference(f_np, Z), rtol=1e-6)


def test_abs_of_complex():
    np.testing.assert_allclose(zx.lax.abs(Z), np.abs(Z))
    np.testing.assert_allclose(zx.jit(zx.lax.abs)(Z), np.abs(Z))
    assert zx.lax.abs(Z).dtype == np.float64
    with pytest.raises(errors.NotSupportedError, match="abs of a complex value"):
        zx.grad(lambda v: zx.lax.abs(v).sum())(Z)
    with pytest.raises(errors.NotSupportedError, match="absolute: complex"):
        znp.abs(Z)            # rather than |Re z|


def test_jit_with_complex_constants():
    np.testing.assert_allclose(zx.jit(lambda v: v * v + 1)(Z), Z * Z + 1)
    np.testing.assert_allclose(zx.jit(lambda v: v * (2.0 - 0.5j))(Z), Z * (2.0 - 0.5j))
