"""Complex values under grad follow JAX: a complex output needs holomorphic=True, a real
output of complex inputs gets df/dx - i df/dy, and |z| (not holomorphic) differentiates
as in JAX, to conj(z) / |z|."""

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
    # differentiable as in JAX since issue 14: d|z| gives conj(z) / |z|
    np.testing.assert_allclose(zx.grad(lambda v: zx.lax.abs(v).sum())(Z), np.conj(Z) / np.abs(Z))
    np.testing.assert_allclose(znp.abs(Z), np.abs(Z))            # not |Re z|


def test_jit_with_complex_constants():
    np.testing.assert_allclose(zx.jit(lambda v: v * v + 1)(Z), Z * Z + 1)
    np.testing.assert_allclose(zx.jit(lambda v: v * (2.0 - 0.5j))(Z), Z * (2.0 - 0.5j))


PARTS = [(znp.real, np.real), (znp.imag, np.imag), (znp.conj, np.conj)]


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_real_imag_conj_values(wrap):
    z = np.array([1.0 + 2.0j, -3.0 - 0.5j, np.inf + 1j, 0.0 - np.inf * 1j])
    for zf, nf in PARTS:
        got = wrap(zf)(z)
        np.testing.assert_array_equal(got, nf(z))
        assert got.dtype == nf(z).dtype
        np.testing.assert_array_equal(wrap(zf)(z.astype(np.complex64)),
                                      nf(z.astype(np.complex64)))
    # real inputs: the array itself, zeros, itself
    x = np.array([1.5, -2.0])
    for zf, nf in PARTS:
        np.testing.assert_array_equal(wrap(zf)(x), nf(x))
    # casting a complex value to a real dtype keeps the real part, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(wrap(lambda v: znp.asarray(v).astype(np.float64))(z),
                                      z.real)


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_real_output_through_real_imag_conj(wrap):
    def f(v):    # real output of complex inputs, through every part
        w = v * v + 2.0 * znp.conj(v) * v[::-1]
        return znp.sum(znp.real(w) * 3.0 + znp.imag(w) * znp.real(v))

    def f_np(v):
        w = v * v + 2.0 * np.conj(v) * v[::-1]
        return np.sum(w.real * 3.0 + w.imag * v.real)

    got = wrap(zx.grad(f))(Z)
    np.testing.assert_allclose(got, _wirtinger_reference(f_np, Z), rtol=1e-6)
    # per example under vmap, as the same gradient one at a time
    batch = np.stack([Z, Z[::-1] * 2.0])
    got = zx.vmap(zx.grad(f))(batch)
    for b in range(2):
        np.testing.assert_allclose(got[b], _wirtinger_reference(f_np, batch[b]), rtol=1e-6)


def test_real_inputs_through_complex_intermediates():
    # d/dx Im((x + 2i) * (x - i)^2) and d/dx Re(conj(x * (1 + i))^2), by hand
    def f(x):
        return znp.imag((x + 2j) * (x - 1j) * (x - 1j))

    def g(x):
        return znp.real(znp.conj(x * (1 + 1j)) ** 2)

    for x in (0.3, -1.7):
        # (x + 2i)(x - i)^2 = (x + 2i)(x^2 - 1 - 2ix) = x^3 + 3x - 2i: imaginary part -2
        np.testing.assert_allclose(zx.grad(f)(x), 0.0, atol=1e-12)
        np.testing.assert_allclose(f(x), -2.0)
        # conj(x (1 + i))^2 = (x (1 - i))^2 = -2i x^2: real part 0
        np.testing.assert_allclose(zx.grad(g)(x), 0.0, atol=1e-12)
        h = zx.grad(lambda x: znp.imag(znp.conj(x * (1 + 1j)) ** 2))    # -2 x^2 -> -4x
        np.testing.assert_allclose(h(x), -4.0 * x)
        np.testing.assert_allclose(zx.jit(h)(x), -4.0 * x)
    tangent = zx.jvp(lambda z: znp.imag(z * z), (Z,), (np.ones_like(Z),))[1]
    np.testing.assert_allclose(tangent, np.imag(2.0 * Z))     # d Im(z^2) along 1


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_angle_matches_numpy(wrap):
    for z in (np.array([1 + 1j, -1 - 1j, 1j, -2.0 + 0j, 0j]),
              np.array([1.0, -1.0, 0.0, -0.0, np.nan, np.inf, -np.inf]),
              np.array([1, -3]), np.array([True, False]), np.float32([-1.5, 2.0])):
        for deg in (False, True):
            got, want = wrap(lambda v, d=deg: znp.angle(v, deg=d))(z), np.angle(z, deg=deg)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-15)
    # a real function of complex inputs: df/dx - i df/dy of atan2(y, x)
    np.testing.assert_allclose(zx.grad(znp.angle)(1.0 + 1.0j), -0.5 - 0.5j)


def test_parts_of_bool_and_arrays_from_ranges():
    np.testing.assert_array_equal(znp.real(np.array([True, False])), [True, False])
    np.testing.assert_array_equal(znp.conj(np.array([True])), [True])
    np.testing.assert_array_equal(znp.imag(np.array([True])), [False])
    np.testing.assert_array_equal(znp.array(range(4)), np.arange(4))
    assert znp.asarray(range(2, 5), dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_nan_to_num_of_complex_treats_each_part(wrap):
    z = np.array([complex(1, np.nan), complex(np.inf, 2), complex(-np.inf, np.inf), 3 - 4j,
                  complex(np.nan, np.nan)])
    for dtype in (np.complex128, np.complex64):
        v = z.astype(dtype)
        got = wrap(znp.nan_to_num)(v)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.nan_to_num(v))
    np.testing.assert_array_equal(znp.nan_to_num(z, nan=5.0, posinf=7.0, neginf=-7.0),
                                  np.nan_to_num(z, nan=5.0, posinf=7.0, neginf=-7.0))
