"""Complex scalars and Numba-compiled helpers in kernels compiled straight to LLVM IR
(backends/numba/direct/: complex.py, helpers.py, numba_cmath.py).

Each program is checked three ways: its kernel was compiled by the translator (not
handed to Numba), its result is the one the same kernel compiled by Numba gives (bit
for bit, nans equal), and it agrees with NumPy.
"""

import ast
import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax._src.backends.numba import direct

# The translator compiles the generated-source path's kernels (numba_path: conftest.py).
pytestmark = [pytest.mark.skipif(not direct.enabled(), reason="direct kernels are off"),
              pytest.mark.usefixtures("numba_path")]

_SPECIAL = [0.0, -0.0, 1.5, -2.25, 1e-300, -1e300, 800.0, np.inf, -np.inf, np.nan]
SPECIAL = np.array([complex(a, b) for a, b in itertools.product(_SPECIAL, _SPECIAL)])


def _direct_kernel(f, *args):
    """(f(*args) under jit, its one kernel, the kernel's arguments), asserting the
    translator compiled the kernel."""
    kernel = f.lower(*args).compile()._exe.kernel
    kernel = getattr(kernel, "__wrapped__", kernel)
    assert isinstance(kernel, direct.Dispatcher)
    seen = []
    general = kernel.general

    def recording(*kernel_args):
        seen.append(kernel_args)
        return general(*kernel_args)

    kernel._fast, kernel.general = None, recording
    try:
        out = f(*args)
    finally:
        del kernel.general
    assert kernel.compiled and not kernel.refused, direct.refusals
    return out, kernel, seen[-1]


def _same_as_numba(f, *args):
    """f(*args), checked to be the Numba-compiled kernel's result (nans equal, zeros'
    signs compared)."""
    out, kernel, kernel_args = _direct_kernel(f, *args)
    (ref,) = kernel.numba(*kernel_args)
    got = np.asarray(out)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
    for part in ("real", "imag") if got.dtype.kind == "c" else ("real",):
        g, r = getattr(got, part), getattr(ref, part)
        assert np.array_equal(np.signbit(g) | np.isnan(g), np.signbit(r) | np.isnan(r))
    return got


def _close_to_numpy(got, want, rtol=1e-14):
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=1e-300)
    assert np.array_equal(np.isfinite(got), finite)


complexes = st.complex_numbers(allow_nan=True, allow_infinity=True)
ARITH = zx.jit(lambda a, b, r: a * b - a / b + r * a + (-b) / r)
COMPARE = zx.jit(lambda a, b: (a == b) | (a != b * 2.0))
PARTS = zx.jit(lambda a: znp.abs(a) + znp.real(a) * 2.0 - znp.imag(znp.conj(a)))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(complexes, complexes, st.floats()), min_size=8, max_size=8))
def test_arithmetic_as_numba_with_inf_nan_and_signed_zeros(triples):
    a = np.array([t[0] for t in triples])
    b = np.array([t[1] for t in triples])
    b[:2] = [0j, complex(-0.0, 0.0)]              # the guarded division by zero
    r = np.array([t[2] for t in triples])
    got = _same_as_numba(ARITH, a, b, r)
    with np.errstate(all="ignore"):
        ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(r) & (b != 0) & (r != 0) & \
            (np.abs(a) < 1e150) & (np.abs(b) < 1e150) & (np.abs(b) > 1e-150) & \
            (np.abs(r) < 1e150) & (np.abs(r) > 1e-150)
        want = a * b - a / b + r * a + (-b) / r
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-9, atol=1e-300)
    with np.errstate(all="ignore"):
        want = (a == b) | (a != b * 2.0)
    np.testing.assert_array_equal(_same_as_numba(COMPARE, a, b), want)
    got = _same_as_numba(PARTS, a)
    with np.errstate(all="ignore"):
        want = np.abs(a) + a.real * 2.0 - np.conj(a).imag
        finite = np.isfinite(want)
        assert np.all(np.abs(got - want)[finite] <= 1e-15 * np.abs(a)[finite] * 4)
    small = np.abs(a) < 1e300                  # (no overflow in either order of the sum)
    assert np.array_equal(np.isfinite(got)[small], finite[small])


def test_complex_division_by_zero_is_numpys():
    a = np.array([1 + 2j, -3 + 0j, 0j, np.nan + 1j])
    b = np.zeros(4, complex)
    with np.errstate(all="ignore"):
        got = _same_as_numba(zx.jit(lambda a, b: a / b), a, b)
        np.testing.assert_array_equal(got, a / b)


def test_complex64_casts_and_mixed_promotion():
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    x = rng.standard_normal(64)
    f32 = x.astype(np.float32)
    got = _same_as_numba(zx.jit(lambda z, f: z * f + z / 2.0), z, f32)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, z * f32 + z / np.float32(2.0), rtol=1e-6)
    got = _same_as_numba(zx.jit(lambda z, x: z.astype(np.complex128) * x - z), z, x)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, z.astype(np.complex128) * x - z, rtol=1e-15)
    got = _same_as_numba(zx.jit(lambda x: zx.lax.complex(x, x * 2.0).astype(np.complex64)), x)
    np.testing.assert_array_equal(got, (x + 2j * x).astype(np.complex64))


def test_complex_sums_and_tests():
    z = np.concatenate([SPECIAL, np.arange(6) - 1j])
    got = _same_as_numba(zx.jit(lambda z: znp.isnan(z) | znp.isfinite(z) * 4), z)
    np.testing.assert_array_equal(got, np.isnan(z) | np.isfinite(z) * 4)
    w = np.arange(10) * (1 - 0.5j)
    np.testing.assert_array_equal(_same_as_numba(zx.jit(znp.sum), w), w.sum())


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sinh", "cosh", "sin",
                                  "cos", "tan", "expm1", "log1p", "arcsinh", "arcsin",
                                  "arccos", "arccosh", "arctanh", "arctan", "sign"])
def test_complex_functions_are_numbas_and_numpys(name):
    rng = np.random.default_rng(1)
    z = np.concatenate([SPECIAL, 3 * rng.standard_normal(200) + 3j * rng.standard_normal(200),
                        [1 + 1e-9j, 1e-9 - 1j, 0.9 + 0.3j]])
    got = _same_as_numba(zx.jit(getattr(znp, name)), z)
    ok = np.isfinite(z) & (np.abs(z) < 100)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z[ok])
    _close_to_numpy(got[ok], want, rtol=1e-12)


def test_special_functions_and_random_bits_call_translated_helpers():
    x = np.concatenate([np.linspace(-7.5, 12.0, 97), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    for f in (zx.lax.erf, zx.lax.erfc, zx.lax.lgamma, zx.lax.digamma, zx.lax.bessel_i0e):
        _same_as_numba(zx.jit(f), x)
    got = _same_as_numba(zx.jit(lambda a: zx.lax.igamma(znp.abs(a) + 0.5, znp.abs(a))), x)
    assert np.all((got[np.isfinite(x)] >= 0) & (got[np.isfinite(x)] <= 1))
    key = np.asarray(zx.random.key_data(zx.random.PRNGKey(7)))
    zero = np.zeros(64, np.uint32)
    bits = _same_as_numba(zx.jit(lambda k, c: zx.random.bits(zx.random.wrap_key_data(k),
                                                              (64,)) ^ c), key, zero)
    np.testing.assert_array_equal(bits, np.asarray(zx.random.bits(zx.random.PRNGKey(7),
                                                                  (64,))))


def _compile(source, specs):
    fn = ast.parse(textwrap.dedent(source)).body[0]
    return direct.compile_kernel(fn, {}, specs)


C16 = np.dtype(np.complex128)


@pytest.mark.parametrize("source, why", [
    ("def kernel(a0):\n    x = a0[0] / a0[1]\n    return (a0,)\n", "divisor may be 0"),
    ("def kernel(a0):\n    x = np.float64(a0[0])\n    return (a0,)\n", "cast of complex128"),
    ("def kernel(a0):\n    x = a0[0] < a0[1]\n    return (a0,)\n", "ordering"),
    ("def kernel(a0):\n    x = np.sqrt(np.complex64(a0[0]))\n    return (a0,)\n", "sqrt"),
    ("def kernel(a0):\n    x = math.exp(a0[0])\n    return (a0,)\n", "math.exp"),
])
def test_complex_constructs_numba_computes_differently_are_refused(source, why):
    with pytest.raises(direct.Unsupported, match=why):
        _compile(source, ((C16, (4,)),))


def test_a_guarded_division_and_a_constant_divisor_are_translated():
    src = """
    def kernel(a0, a1):
        v = np.empty((3,), np.complex128)
        for i in range(3):
            d = a1[i]
            v[i] = (complex(a0[i].real / abs(d.real), a0[i].imag / abs(d.real)) if
                    (d.real == 0 and d.imag == 0) else a0[i] / d) + a0[i] / 4j
        return (v,)
    """
    a, b = np.array([1 + 1j, 2 - 1j, -3j]), np.array([0j, 1 + 2j, 1e-3 - 2j])
    kernel = _compile(src, ((C16, (3,)), (C16, (3,))))
    (got,) = kernel.call(a, b)
    with np.errstate(all="ignore"):
        want = a / b + a / 4j
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-15)
    assert np.isinf(got[0].real) and np.isinf(got[0].imag)


def test_float_sign_remainder_and_bitcasts_are_numbas():
    x = np.array([1.5, -2.0, 0.0, -0.0, np.nan, np.inf, -np.inf, 3e-310, 7.25, -7.25])
    got = _same_as_numba(zx.jit(znp.sign), x)
    np.testing.assert_array_equal(got, np.sign(x))
    got = _same_as_numba(zx.jit(lambda a: znp.remainder(a, 0.7) - znp.remainder(a, -0.7)), x)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, np.remainder(x, 0.7) - np.remainder(x, -0.7))
    u = np.arange(10, dtype=np.uint32) * np.uint32(1000003)
    got = _same_as_numba(zx.jit(lambda a: zx.lax.bitcast_convert_type(a, np.float32) * 2), u)
    np.testing.assert_array_equal(got, u.view(np.float32) * np.float32(2))
