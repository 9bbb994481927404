"""zerax.numpy.fft and lax.fft: values and dtypes against numpy.fft, derivatives by finite
differences (check_grads, order 2) and against explicit DFT matrices (JAX's transpose
convention: the plain transpose, no conjugation), vmap, jit, and clear errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax
import zerax.numpy as znp
from zerax import errors, lax
from zerax.test_util import check_grads

RNG = np.random.default_rng(14)
NORMS = [None, "backward", "ortho", "forward"]


def _real(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


def _cplx(*shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def _close(got, want, rtol=1e-12, atol=1e-12):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
def test_1d_values_match_numpy(name, norm):
    complex_in = name in ("fft", "ifft", "irfft", "hfft")
    x = _cplx(3, 6) if complex_in else _real(3, 6)
    zf, nf = getattr(znp.fft, name), getattr(np.fft, name)
    for n, axis in [(None, -1), (4, -1), (9, 1), (None, 0), (5, 0)]:
        _close(zf(x, n=n, axis=axis, norm=norm), nf(x, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("norm", NORMS)
def test_2d_values_match_numpy(name, norm):
    x = _real(2, 4, 6) if name == "rfft2" else _cplx(2, 4, 6)
    zf, nf = getattr(znp.fft, name), getattr(np.fft, name)
    for s, axes in [(None, (-2, -1)), ((3, 8), (-2, -1)), (None, (0, 2)), ((5, 2), (2, 0))]:
        _close(zf(x, s=s, axes=axes, norm=norm), nf(x, s=s, axes=axes, norm=norm))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_values_match_numpy(name):
    x = _real(3, 4, 5) if name == "rfftn" else _cplx(3, 4, 5)
    zf, nf = getattr(znp.fft, name), getattr(np.fft, name)
    for s, axes, norm in [(None, None, None), (None, (1,), "ortho"), ((2, 6), (0, 2), None),
                          ((4, 3, 6), None, "forward"), (None, (2, 0, 1), "ortho"),
                          ((4, 4), None, None)]:
        np_axes = axes if axes is not None or s is None else tuple(range(3 - len(s), 3))
        _close(zf(x, s=s, axes=axes, norm=norm), nf(x, s=s, axes=np_axes, norm=norm))


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       single=st.booleans(), norm=st.sampled_from(NORMS))
@settings(max_examples=15, deadline=None)
def test_roundtrips_and_dtypes_hypothesis(shape, single, norm):
    dtype = np.float32 if single else np.float64
    x = _real(*shape, dtype=dtype)
    got = znp.fft.rfftn(x, norm=norm)
    want = np.fft.rfftn(x, norm=norm)
    assert got.dtype == (np.complex64 if single else np.complex128) == want.dtype
    tol = 1e-5 if single else 1e-12
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(znp.fft.fftn(x, norm=norm)),
                               np.fft.fftn(x, norm=norm), rtol=tol, atol=tol)
    back = znp.fft.irfftn(got, s=x.shape, norm=norm)
    assert back.dtype == dtype
    np.testing.assert_allclose(np.asarray(back), x, rtol=tol, atol=tol)


def test_integer_and_bool_inputs_compute_in_float64():
    x = np.arange(6)
    _close(znp.fft.fft(x), np.fft.fft(x))
    _close(znp.fft.rfft(x), np.fft.rfft(x))
    _close(znp.fft.fft(x.astype(bool)), np.fft.fft(x.astype(bool)))


def test_frequencies_and_shifts():
    for n in (1, 4, 7):
        for d in (1.0, 0.25):
            _close(znp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
            _close(znp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    _close(znp.fft.fftfreq(5, dtype=np.float32), np.fft.fftfreq(5).astype(np.float32),
           rtol=1e-7)
    x = np.arange(30.0).reshape(5, 6)
    for axes in (None, 0, 1, (1, 0), (-1,)):
        _close(znp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        _close(znp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    # traced spacing
    g = zerax.grad(lambda d: znp.sum(znp.fft.fftfreq(4, d) ** 2))(0.5)
    np.testing.assert_allclose(float(g), -2 * np.sum(np.fft.fftfreq(4, 0.5) ** 2) / 0.5)
    assert np.asarray(zerax.jit(znp.fft.fftshift)(x)).tolist() == np.fft.fftshift(x).tolist()


def test_lax_fft_types():
    x, z, h = _real(2, 4, 6), _cplx(3, 5), _cplx(2, 4, 4)
    _close(lax.fft(x, lax.FftType.FFT, (6,)), np.fft.fft(x))
    _close(lax.fft(x, "RFFT", (4, 6)), np.fft.rfft2(x))
    _close(lax.fft(z, lax.FftType.IFFT, (3, 5)), np.fft.ifft2(z))
    _close(lax.fft(h, "irfft", (4, 6)), np.fft.irfft2(h, s=(4, 6)))
    assert lax.fft(x.astype(np.float32), "FFT", (6,)).dtype == np.complex64
    assert lax.fft(x, "FFT", ()).dtype == np.complex128


# --------------------------------------------------------------------------- derivatives

def _dft(n, inverse=False):
    j = np.arange(n)
    w = np.exp((2j if inverse else -2j) * np.pi * np.outer(j, j) / n)
    return w / n if inverse else w


def test_vjps_are_transposes_of_dft_matrices():
    n = 5
    x, z, z3 = _real(n), _cplx(n), _cplx(n // 2 + 1)
    ct_c, ct_h, ct_r = _cplx(n), _cplx(n // 2 + 1), _real(n)
    w, wi = _dft(n), _dft(n, inverse=True)
    # fft / ifft: y = W z, the cotangent is W^T ct (W is symmetric)
    _close(zerax.vjp(znp.fft.fft, z)[1](ct_c)[0], w.T @ ct_c)
    _close(zerax.vjp(znp.fft.ifft, z)[1](ct_c)[0], wi.T @ ct_c)
    # rfft of real x: y = W[:m] x, cotangent Re(W[:m]^T ct)
    _close(zerax.vjp(znp.fft.rfft, x)[1](ct_h)[0], np.real(w[: n // 2 + 1].T @ ct_h))
    # irfft: y = Re(A^T z), A[k, j] = c_k e^{2 pi i kj/n} / n; cotangent A ct
    m = n // 2 + 1
    c = np.full(m, 2.0)
    c[0] = 1.0
    a = c[:, None] * wi[:m]
    _close(zerax.vjp(lambda v: znp.fft.irfft(v, n=n), z3)[1](ct_r)[0], a @ ct_r)
    # even length: the Nyquist term has weight 1
    n2 = 6
    m2 = n2 // 2 + 1
    c2 = np.full(m2, 2.0)
    c2[0] = c2[-1] = 1.0
    a2 = c2[:, None] * _dft(n2, inverse=True)[:m2]
    ct6 = _real(n2)
    _close(zerax.vjp(lambda v: znp.fft.irfft(v, n=n2), _cplx(m2))[1](ct6)[0], a2 @ ct6)
    # values recorded from jax.vjp(jnp.fft.rfft / irfft(n=5)) on jax 0.10 (x64), with
    # x, z, cotangents from numpy.random.default_rng(0) as in the comment below
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=5)
    z0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    ctc0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    ctr0 = rng.normal(size=5)
    np.testing.assert_allclose(
        np.asarray(zerax.vjp(znp.fft.rfft, x0)[1](ctc0)[0]),
        [-2.50249646, -1.51647691, 1.94191015, 1.76749995, 0.51619317], rtol=1e-7)
    np.testing.assert_allclose(
        np.asarray(zerax.vjp(lambda v: znp.fft.irfft(v, n=5), z0)[1](ctr0)[0]),
        [0.47515451, -0.20250528 - 0.08791013j, -0.58894939 - 0.66998783j], rtol=1e-7)
    np.testing.assert_allclose(
        np.asarray(zerax.vjp(lambda v: znp.fft.hfft(v, n=5, norm="ortho"), z0)[1](ctr0)[0]),
        [1.06247779, -0.45281557 + 0.19657302j, -1.31693087 + 1.49813834j], rtol=1e-7)


def _parts(f, complex_in):
    """``f`` as a map between real arrays (check_grads compares real values): complex
    inputs from two real parts, complex outputs as stacked real and imaginary parts."""
    def g(*args):
        v = lax.complex(*args) if complex_in else args[0]
        out = f(v)
        if out.dtype.kind == "c":
            return znp.stack([znp.real(out), znp.imag(out)])
        return out
    return g


@pytest.mark.parametrize("name", ONE_D)
def test_check_grads_1d(name):
    complex_in = name in ("fft", "ifft", "irfft", "hfft")
    args = (_real(2, 5), _real(2, 5)) if complex_in else (_real(2, 5),)
    f = getattr(znp.fft, name)
    for kw in ({"n": 4, "norm": "ortho"}, {"axis": 0}):
        check_grads(_parts(lambda v: f(v, **kw), complex_in), args, order=2,
                    modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["fft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                                  "irfftn"])
def test_check_grads_nd(name):
    complex_in = not name.startswith("rfft")
    args = (_real(3, 4), _real(3, 4)) if complex_in else (_real(3, 4),)
    f = getattr(znp.fft, name)
    check_grads(_parts(lambda v: f(v, s=(2, 5)), complex_in), args, order=2,
                modes=("fwd", "rev"))


def test_nonlinear_loss_gradients_composition():
    x = _real(8)

    def power_spectrum_loss(v):
        spec = znp.fft.rfft(znp.tanh(v))
        return znp.sum(znp.real(spec) ** 2 + znp.imag(spec) ** 2)

    check_grads(power_spectrum_loss, (x,), order=2, modes=("fwd", "rev"))
    # Parseval: sum |rfft(t)|^2 weighted back equals n * sum t^2 with double-counted
    # interior bins; compare against the fft form instead, which is exact.
    full = lambda v: znp.sum(znp.abs(znp.real(znp.fft.fft(v))) ** 2  # noqa: E731
                             + znp.imag(znp.fft.fft(v)) ** 2)
    np.testing.assert_allclose(float(full(x)), 8 * np.sum(x ** 2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(zerax.grad(full)(x)), 16 * x, rtol=1e-12)
    eager = zerax.grad(power_spectrum_loss)(x)
    for fn in (zerax.jit(zerax.grad(power_spectrum_loss)),
               zerax.grad(zerax.jit(power_spectrum_loss))):
        np.testing.assert_allclose(np.asarray(fn(x)), np.asarray(eager), rtol=1e-12)
    hv = zerax.jvp(zerax.grad(power_spectrum_loss), (x,), (np.ones(8),))[1]
    h = zerax.hessian(power_spectrum_loss)(x)
    np.testing.assert_allclose(np.asarray(hv), np.asarray(h).sum(1), rtol=1e-10)


# --------------------------------------------------------------------------- vmap and jit

def test_vmap_matches_stacked_calls():
    x = _real(4, 3, 6)
    for f in (lambda v: znp.fft.rfft(v), lambda v: znp.fft.fft2(v),
              lambda v: znp.fft.irfft(znp.fft.rfft(v, axis=0), n=3, axis=0),
              lambda v: znp.fft.fftn(v, s=(2, 4), norm="ortho")):
        want = np.stack([np.asarray(f(x[i])) for i in range(4)])
        np.testing.assert_allclose(np.asarray(zerax.vmap(f)(x)), want, rtol=1e-12, atol=1e-12)
        want1 = np.stack([np.asarray(f(x[:, i])) for i in range(3)])
        np.testing.assert_allclose(np.asarray(zerax.vmap(f, in_axes=1)(x)), want1,
                                   rtol=1e-12, atol=1e-12)
    g = zerax.vmap(zerax.grad(lambda v: znp.sum(znp.real(znp.fft.fft(v)) ** 3)))(x[:, 0])
    want = np.stack([np.asarray(zerax.grad(lambda v: znp.sum(znp.real(znp.fft.fft(v)) ** 3))(
        x[i, 0])) for i in range(4)])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)


def test_jit_matches_numpy():
    x, z = _real(3, 8), _cplx(3, 8)

    def prog(x, z):
        a = znp.fft.rfft(x * 2.0, norm="ortho")
        b = znp.fft.ifft2(z + 1.0, s=(4, 4))
        c = znp.fft.irfft(a, n=8) + 1.0
        return a, b, c, znp.fft.fftshift(c)

    got = zerax.jit(prog)(x, z)
    a = np.fft.rfft(x * 2.0, norm="ortho")
    want = (a, np.fft.ifft2(z + 1.0, s=(4, 4)), np.fft.irfft(a, n=8) + 1.0)
    want = want + (np.fft.fftshift(want[2]),)
    for g, w in zip(got, want):
        _close(g, w)
    f32 = zerax.jit(lambda v: znp.fft.rfft(v))(x.astype(np.float32))
    assert f32.dtype == np.complex64


def test_fft_inside_compiled_loop_matches_eager():
    # (every variant in loops: tests/backends/test_fft_in_loops.py)
    def body(c, v):
        return c + znp.sum(znp.real(znp.fft.fft(v))), None

    xs = _real(3, 4)
    want = float(np.sum(np.real(np.fft.fft(xs))))
    np.testing.assert_allclose(float(lax.scan(body, 0.0, xs)[0]), want, rtol=1e-12)
    got = zerax.jit(lambda xs: lax.scan(body, 0.0, xs)[0])(xs)
    np.testing.assert_allclose(float(got), want, rtol=1e-12)


# --------------------------------------------------------------------------- errors

def test_bad_arguments_are_clear_errors():
    with pytest.raises(errors.ZeraxValueError, match="norm"):
        znp.fft.fft(np.ones(4), norm="bogus")
    with pytest.raises(errors.ZeraxTypeError, match="real"):
        znp.fft.rfft(np.ones(4) + 1j)
    with pytest.raises(errors.ZeraxValueError, match="repeated"):
        znp.fft.fftn(np.ones((2, 2)), axes=(0, 0))
    with pytest.raises(errors.ZeraxValueError, match="data points"):
        znp.fft.fft(np.ones(4), n=0)
    with pytest.raises(errors.ZeraxValueError, match="data points"):
        znp.fft.irfft(np.ones(1))
    with pytest.raises(errors.ZeraxTypeError, match="axis must be an integer"):
        znp.fft.fft(np.ones((2, 2)), axis=(0, 1))
    with pytest.raises(errors.ZeraxValueError, match="2 entries"):
        znp.fft.fft2(np.ones((2, 2, 2)), axes=(0, 1, 2))
    with pytest.raises(errors.ZeraxValueError, match="different lengths"):
        znp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1))
    with pytest.raises(errors.ZeraxValueError, match="fft_type"):
        lax.fft(np.ones(4), "DCT", (4,))
    with pytest.raises(errors.ShapeError, match="must end in"):
        lax.fft(np.ones(4) + 0j, "FFT", (5,))
    with pytest.raises(errors.ZeraxValueError, match="positive"):
        znp.fft.fftfreq(0)


def test_eager_tape_rules_match_the_general_path():
    # The tape's direct NumPy rules (fft_p.vjp) against linearize + transpose.
    from np_helpers import compare_with_general_path  # a shared test helper
    x, z = _real(3, 6), _cplx(3, 6)
    compare_with_general_path(lambda v: lax.fft(v, "FFT", (3, 6)), (z,))
    compare_with_general_path(lambda v: lax.fft(v, "IFFT", (6,)), (z,))
    compare_with_general_path(lambda v: lax.fft(v, "RFFT", (3, 6)), (x,))
    compare_with_general_path(lambda v: lax.fft(v, "RFFT", (5,)), (_real(2, 5),))
    compare_with_general_path(lambda v: lax.fft(v, "IRFFT", (3, 6)), (_cplx(3, 4),))
    compare_with_general_path(lambda v: lax.fft(v, "IRFFT", (7,)), (_cplx(2, 4),))
