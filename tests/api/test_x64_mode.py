"""JAX's two modes (``jax_enable_x64``): the switch, the dtypes each mode gives, weak
types, and that eager, jit, vmap and derivatives agree in each.

With x64 on (zerax's default) dtypes are NumPy 2's; with x64 off (JAX's default) NumPy
arrays, Python numbers, requested dtypes and results are canonicalised to 32 bits.  The
dtype table below was recorded once from JAX 0.10.2 (jax_enable_x64=False) by
evaluating each expression with ``N = jax.numpy`` and the inputs defined here, and
printing ``result.dtype``.
"""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.lax as lax
import zerax.numpy as N
from zerax import errors

f32 = np.array([0.5, -1.5, 2.0], np.float32)
f64 = np.array([0.5, -1.5, 2.0])
i32 = np.array([3, -1, 2], np.int32)
i64 = np.array([3, -1, 2])
u8 = np.array([3, 1, 2], np.uint8)
i8 = np.array([3, -1, 2], np.int8)
f16 = np.array([0.5, -1.5, 2.0], np.float16)
b = np.array([True, False, True])
m = np.array([[2.0, 1.0], [1.0, 3.0]])
c = np.array([1 + 2j, 3 - 1j])
one32 = np.array([1], np.int32)

# JAX's result dtype with x64 off -> the expressions giving it
JAX_DTYPES_X32 = {
    "bool": [
        'N.asarray(True)',
        'N.isclose(f32, 0.5)',
        'N.allclose(f32, f32)',
        'N.array_equal(f32, f32)',
        'N.signbit(f32)',
        'N.isnan(f32)',
        'N.isin(i32, i32)',
        'N.max(b)',
    ],
    "complex64": [
        'N.zeros(2, dtype=complex)',
        'N.asarray(1 + 2j)',
        'N.fft.fft(f32)',
        'N.fft.fft(i32)',
        'N.fft.rfft(f64)',
        'N.roots(np.array([1.0, -3.0, 2.0]))',
    ],
    "float16": [
        'N.asarray(f16) * 2.0',
    ],
    "float32": [
        'N.zeros(3)',
        'N.ones((2,))',
        'N.empty(2)',
        'N.full(3, 1.5)',
        'N.eye(2)',
        'N.identity(2)',
        'N.arange(0.0, 1.0, 0.25)',
        'N.arange(1, 7, 2.5)',
        'N.linspace(0, 1, 5)',
        'N.logspace(0, 2, 3)',
        'N.geomspace(1, 1000, 4)',
        'N.tri(3)',
        'N.zeros(2, dtype=float)',
        'N.asarray(2.0)',
        'N.array([1.0, 2.0])',
        'N.asarray(f64)',
        'N.asarray(np.float64(2.5))',
        'N.zeros_like(f64)',
        'N.full_like(f32, 2.0)',
        'N.asarray(i32) * 0.5',
        'N.asarray(i32) / 2',
        'N.asarray(i32) + N.asarray(f32)',
        'N.asarray(f32) * 2',
        'N.asarray(i8) * 2.5',
        'N.asarray(b) * 1.5',
        'N.sin(i32)',
        'N.sin(2)',
        'N.sqrt(2.0)',
        'N.power(i32, 0.5)',
        'N.true_divide(i32, i32)',
        'N.float_power(f32, 2)',
        'N.round(f32, 1)',
        'N.abs(c)',
        'N.angle(c)',
        'N.real(c)',
        'N.mean(i32)',
        'N.mean(f32)',
        'N.var(i32)',
        'N.std(f32)',
        'N.cumprod(f32)',
        'N.average(i32)',
        'N.median(i32)',
        'N.quantile(f32, 0.5)',
        'N.percentile(i32, 50)',
        'N.nanmean(i32)',
        'N.ptp(f32)',
        'N.histogram(f32, bins=3)[1]',
        'N.where(f32 > 0, 1.0, 0.0)',
        'N.where(f32 > 0, f32, 0)',
        'N.clip(i32, 0, 1.5)',
        'N.dot(f32, f32)',
        'N.matmul(m, m)',
        "N.einsum('i,i->', f32, f32)",
        'N.outer(i32, f32)',
        'N.linalg.inv(m)',
        'N.linalg.det(m)',
        'N.linalg.norm(f32)',
        'N.linalg.norm(i32)',
        'N.linalg.svd(m)[1]',
        'N.linalg.eigh(m)[0]',
        'N.linalg.slogdet(m)[1]',
        'N.linalg.lstsq(m, f64[:2])[0]',
        'N.linalg.pinv(m)',
        'N.linalg.qr(m)[0]',
        'N.linalg.cholesky(m)',
        'N.fft.fftfreq(4)',
        'N.fft.rfftfreq(4)',
        'N.fft.irfft(c)',
        'N.polyval(np.array([1.0, 2.0]), 3.0)',
        'N.polyfit(f64, f64, 1)',
        'N.hanning(4)',
        'N.kaiser(4, 2.0)',
        'N.convolve(f32, f32)',
        'N.interp(0.5, f64, f64)',
        'N.gradient(f32)',
        'N.cross(f64, f64)',
        'N.trapezoid(f32)',
        'N.cov(m)',
        'N.corrcoef(m)',
        'N.concatenate([f32, i32])',
        'N.stack([f32, f32])',
        'N.flip(f64)',
        'N.transpose(m)',
        'N.squeeze(m[:1])',
        'N.astype(f32, float)',
        'N.asarray(i32).astype(float)',
        'N.heaviside(f32, 0.5)',
        'N.logaddexp(f32, 1)',
        'N.hypot(i32, i32)',
        'N.arctan2(i32, 1)',
        'N.ldexp(f32, 2)',
        'N.modf(f32)[0]',
        'N.copysign(i32, -1)',
        'N.nextafter(f32, 1)',
        'N.sinc(f32)',
        'N.deg2rad(i32)',
        'N.i0(f32)',
        'N.exp2(i32)',
        'N.logaddexp2(i32, i32)',
        'N.cbrt(i32)',
        'N.reciprocal(f32)',
        'N.rint(f32)',
        'N.nan_to_num(f32)',
        'N.nancumsum(f32)',
        'N.nanmedian(i32)',
        'N.vdot(f32, f32)',
        'N.trace(m)',
        'N.tensordot(m, m)',
        'N.bincount(N.asarray(np.array([0, 1], np.int32)), weights=f32[:2])',
        'N.select([f32 > 0], [f32])',
        'N.piecewise(f32, [f32 > 0], [1.0, 0.0])',
        'N.choose(N.asarray(np.array([0, 1], np.int32)), [f32[:2], f32[:2]])',
        'N.take(f32, N.asarray(np.array([0], np.int32)))',
        'N.vander(f32, 2)',
        'N.c_[f32, f32]',
        'N.diagonal(m)',
        'N.tril(m)',
        'N.rot90(m)',
        'N.linalg.eigvalsh(m)',
        'N.linalg.matrix_power(m, 2)',
        'N.linalg.cond(m)',
    ],
    "int32": [
        'N.full(3, 2)',
        'N.arange(5)',
        'N.linspace(0, 10, 4, dtype=int)',
        'N.zeros(2, dtype=int)',
        'N.asarray(2)',
        'N.array([1, 2])',
        'N.asarray(i64)',
        'N.ones_like(i64)',
        'N.indices((2, 2))',
        'N.meshgrid(N.arange(2), N.arange(2))[0]',
        'N.asarray(i32) + N.asarray(np.array([1], np.uint32))',
        'N.asarray(b) + 1',
        'N.power(i32, 2)',
        'N.floor_divide(i32, 2)',
        'N.sum(i32)',
        'N.sum(b)',
        'N.prod(i8)',
        'N.cumsum(i32)',
        'N.cumsum(b)',
        'N.max(i32)',
        'N.argmax(f32)',
        'N.argmin(i32)',
        'N.argsort(f32)',
        'N.nonzero(i32)[0]',
        'N.argwhere(i32)',
        'N.flatnonzero(i32)',
        'N.searchsorted(N.sort(f32), 0.0)',
        'N.digitize(f32, np.array([0.0, 1.0]))',
        'N.count_nonzero(i32)',
        'N.bincount(N.asarray(np.array([0, 1, 1, 3], np.int32)))',
        'N.unique(i32)',
        'N.unique(i32, return_counts=True)[1]',
        'N.unique(i32, return_inverse=True)[1]',
        'N.unravel_index(3, (2, 2))[0]',
        'N.ravel_multi_index((one32, one32), (2, 2))',
        'N.tril_indices(3)[0]',
        'N.diag_indices(2)[0]',
        'N.where(f32 > 0)[0]',
        'N.dot(i32, i32)',
        'N.linalg.matrix_rank(m)',
        'N.diff(i32)',
        'N.pad(i32, 1)',
        'N.tile(i32, 2)',
        'N.repeat(i32, 2)',
        'N.sort(i32)',
        'N.expand_dims(i64, 0)',
        'N.asarray(f32).astype(int)',
        'N.frexp(f32)[1]',
        'N.sign(i32)',
        'N.square(i32)',
        'N.gcd(i32, 4)',
        'N.lcm(i32, 4)',
        'N.left_shift(i32, 1)',
        'N.invert(i32)',
        'N.nanargmax(f32)',
        'N.inner(i32, i32)',
        'N.kron(i32, i32)',
        'N.lexsort((i32, i32))',
        'N.argpartition(f32, 1)',
        'N.setdiff1d(i32, i32)',
        'N.intersect1d(i32, i32, return_indices=True)[1]',
        'N.mgrid[0:2][0]',
        'N.ogrid[0:3]',
        'N.r_[1, 2]',
        'N.prod(b)',
        'N.roll(i32, 1)',
        'N.fft.fftshift(i32)',
    ],
    "int8": [
        'N.arange(np.int8(3))',
    ],
    "uint32": [
        'N.sum(u8)',
    ],
    "uint8": [
        'N.asarray(u8) + 1',
        'N.packbits(b)',
        'N.bitwise_count(i32)',
    ],}


@pytest.mark.parametrize("expr", [e for es in JAX_DTYPES_X32.values() for e in es])
def test_result_dtypes_are_jaxs_with_x64_off(expr, x32):
    want = next(d for d, es in JAX_DTYPES_X32.items() if expr in es)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (an explicit 64-bit request warns, as JAX's)
        got = eval(expr)   # noqa: S307 - a literal expression of this file
    assert str(got.dtype) == want


# Where NumPy 2's rule (zerax's, in both modes) and JAX's lattice differ even with x64
# off: expression -> (zerax's dtype, JAX's).  NumPy's sin of int8 is float16; counts of
# histogram are integers (histogramdd's floats), JAX's the other way round.
NUMPY_RULES = {
    "N.exp(N.asarray(i8))": ("float16", "float32"),
    "N.histogram(f32, bins=3)[0]": ("int32", "float32"),
    "N.histogram2d(f32, f32, bins=2)[0]": ("float32", "int32"),
}


@pytest.mark.parametrize("expr", sorted(NUMPY_RULES))
def test_where_numpy_rules_differ_from_jaxs(expr, x32):
    assert str(eval(expr).dtype) == NUMPY_RULES[expr][0]   # noqa: S307


# --------------------------------------------------------------------------- the switch

def _run(code, **env):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **env)
    for var in ("ZERAX_ENABLE_X64", "JAX_ENABLE_X64"):
        if var not in env:
            full.pop(var, None)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=120)


_PROBE = ("import zerax as zx, zerax.numpy as znp; "
          "print(zx.config.jax_enable_x64, znp.ones(2).dtype, znp.arange(2).dtype)")


@pytest.mark.parametrize("env, want", [
    ({}, "True float64 int64"),
    ({"JAX_ENABLE_X64": "0"}, "False float32 int32"),
    ({"ZERAX_ENABLE_X64": "false", "JAX_ENABLE_X64": "1"}, "False float32 int32"),
    ({"JAX_ENABLE_X64": "False", "ZERAX_ENABLE_X64": "yes"}, "True float64 int64"),
])
def test_environment_variables_set_the_mode_at_import(env, want):
    out = _run(_PROBE, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == want.split()


def test_a_bad_environment_value_is_a_clear_error():
    out = _run("import zerax", ZERAX_ENABLE_X64="maybe")
    assert out.returncode != 0
    assert "ZERAX_ENABLE_X64='maybe' is not a truth value" in out.stderr


def test_config_update_and_read():
    assert zx.config.jax_enable_x64 and zx.config.x64_enabled
    zx.config.update("jax_enable_x64", False)    # (the conftest guard restores the mode)
    try:
        assert not zx.config.jax_enable_x64
        assert N.zeros(2).dtype == np.float32 and N.asarray(1).dtype == np.int32
        assert zx.dtypes.canonicalize_dtype(np.float64) == np.float32
        assert zx.dtypes.canonicalize_dtype(np.int16) == np.int16
    finally:
        zx.config.update("jax_enable_x64", True)
    assert N.zeros(2).dtype == np.float64
    zx.config.update("jax_enable_x64", "0")    # strings as the environment's
    assert not zx.config.x64_enabled
    zx.config.update("jax_enable_x64", "on")
    assert zx.config.x64_enabled
    with pytest.raises(errors.ZeraxValueError, match="not a truth value"):
        zx.config.update("jax_enable_x64", "sometimes")


def test_enable_x64_is_a_thread_local_block_restored_on_error():
    seen = {}

    def other():
        seen["other"] = N.ones(1).dtype

    with pytest.raises(RuntimeError):
        with zx.enable_x64(False):
            t = threading.Thread(target=other)
            t.start()
            t.join()
            seen["here"] = N.ones(1).dtype
            raise RuntimeError
    assert seen == {"here": np.float32, "other": np.float64}
    assert N.ones(1).dtype == np.float64
    with zx.enable_x64(False):
        with zx.enable_x64(True):
            assert N.ones(1).dtype == np.float64
        assert N.ones(1).dtype == np.float32


def test_a_test_that_leaves_x64_off_does_not_leak_1_of_2():
    zx.config.update("jax_enable_x64", False)     # not restored here: the guard does it


def test_a_test_that_leaves_x64_off_does_not_leak_2_of_2():
    assert zx.config.jax_enable_x64 and N.ones(1).dtype == np.float64


# --------------------------------------------------------------------------- canonical values

def test_values_entering_zerax_are_canonicalised(x32):
    for v, want in [(1.5, np.float32), (3, np.int32), (True, np.bool_), (1j, np.complex64),
                    (np.float64(2), np.float32), (np.arange(3), np.int32),
                    (np.ones(2, np.uint64), np.uint32), ([1.0, 2.0], np.float32),
                    (np.ones(2, np.float16), np.float16), (np.ones(2, np.int8), np.int8)]:
        assert N.asarray(v).dtype == want
        assert N.asarray(zx.jit(lambda x: x)(v)).dtype == want      # jit's arguments too
        assert zx.vmap(lambda x: x)(N.asarray(v) if np.ndim(v) else N.asarray([v])).dtype \
            == want
    # an Array made with x64 on keeps its dtype (as JAX's)
    with zx.enable_x64(True):
        a = N.ones(2)
    assert a.dtype == np.float64 and N.asarray(a).dtype == np.float64


def test_python_int_out_of_int32_range_is_an_overflow_error(x32):
    with pytest.raises(OverflowError, match="int32"):
        N.asarray(2 ** 40)
    with pytest.raises(OverflowError):
        N.ones(2, np.int32) + 2 ** 40
    with pytest.raises(errors.ZeraxValueError, match="int32"):
        zx.grad(lambda x: x * 1.0)(2 ** 40)


def test_array_api_default_dtypes_follow_the_mode(x64):
    got = N.__array_namespace_info__().default_dtypes()
    want = (np.float64, np.complex128, np.int64) if x64 else (np.float32, np.complex64,
                                                              np.int32)
    assert (got["real floating"], got["complex floating"], got["integral"],
            got["indexing"]) == (*want, want[2])


def test_explicit_64_bit_dtypes_warn_and_truncate_as_jaxs(x32):
    with pytest.warns(UserWarning, match="float64 requested in zerax.numpy.zeros is not "
                                         "available"):
        assert N.zeros(2, np.float64).dtype == np.float32
    with pytest.warns(UserWarning, match="int64 requested in lax.convert_element_type"):
        assert lax.convert_element_type(f32, np.int64).dtype == np.int32
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # Python types and 32-bit dtypes: no warning
        assert N.zeros(2, float).dtype == np.float32 and N.zeros(2, int).dtype == np.int32
        assert N.asarray(f32).astype(np.float32).dtype == np.float32


# --------------------------------------------------------------------------- weak types


def test_python_scalars_are_weak_in_both_modes(x64):
    for x in (N.ones(2, np.float16), N.ones(2, np.float32), N.ones(2, np.int8)):
        assert (x * 2).dtype == x.dtype and (2 + x).dtype == x.dtype
    assert (N.ones(2, np.float16) * 2.0).dtype == np.float16
    assert (N.ones(2, np.int32) * 0.5).dtype == (np.float64 if x64 else np.float32)
    # jit's Python-number arguments are weak: float16 x times a traced 2.0 stays float16
    f = zx.jit(lambda x, s: x * s)
    assert f(N.ones(2, np.float16), 2.0).dtype == np.float16
    assert f(N.ones(2, np.float32), 2).dtype == np.float32
    # alone, a Python number is the mode's default dtype
    assert zx.jit(lambda s: s * 1)(2.0).dtype == (np.float64 if x64 else np.float32)
    assert lax.add(1.0, 2.0).dtype == (np.float64 if x64 else np.float32)
    assert lax.fori_loop(0, 3, lambda i, v: v + i, 0).dtype == \
        (np.int64 if x64 else np.int32)
    assert lax.scan(lambda c, x: (c + x, c), 0.0, f32)[0].dtype == np.float32


def test_jit_cache_key_holds_the_mode():
    f = zx.jit(lambda x, s: N.sin(x) * s + N.arange(3))
    x = np.linspace(0.0, 1.0, 3)
    y64 = f(x, 2.0)
    with zx.enable_x64(False):
        y32 = f(x, 2.0)
        assert f(x, 2.0).dtype == np.float32     # the fast path keys on the mode too
    assert f(x, 2.0).dtype == np.float64 and y64.dtype == np.float64
    assert y32.dtype == np.float32 and len(f._cache) == 2
    np.testing.assert_allclose(np.asarray(y32), np.asarray(y64), rtol=1e-6)


def test_compiled_float32_is_computed_in_float32(x32):
    # ((x + y) - y) / y: in float64 and rounded once the sum's rounding would vanish
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = np.float32(3.3)
    want = ((x + y) - y) / y                    # NumPy in float32, operation by operation
    got = np.asarray(zx.jit(lambda x: ((x + 3.3) - 3.3) / 3.3)(x))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # a multiply-add rounds twice, as NumPy's float32 (no contraction into one FMA)
    got = np.asarray(zx.jit(lambda x: x * 0.1 + 1.0)(x))
    np.testing.assert_array_equal(got, x * np.float32(0.1) + np.float32(1.0))
    via64 = (((x.astype(np.float64) + 3.3) - 3.3) / 3.3).astype(np.float32)
    assert (via64 != want).sum() > 100


# --------------------------------------------------------------------------- transforms

_UNARY = {"sin": N.sin, "exp": N.exp, "tanh": N.tanh, "sqrt1p": lambda v: N.sqrt(1 + N.square(v)),
          "poly": lambda v: N.asarray(v) * v * 0.5 - v / 3 + 1, "mean": lambda v: N.mean(v) * v,
          "cumsum": N.cumsum, "softplus": lambda v: N.logaddexp(v, 0.0)}


@settings(max_examples=20, deadline=None)
@given(mode=st.booleans(), name=st.sampled_from(sorted(_UNARY)),
       dtype=st.sampled_from(["float32", "float64", "int32", "int16", "uint8", "bool"]),
       seed=st.integers(0, 2 ** 16))
def test_eager_vmap_and_numpy_agree_in_both_modes(mode, name, dtype, seed):
    fn = _UNARY[name]
    raw = np.random.default_rng(seed).uniform(-3, 3, (2, 3))
    x = (raw > 0) if dtype == "bool" else np.abs(raw).astype(dtype) if dtype == "uint8" \
        else raw.astype(dtype)
    with zx.enable_x64(True):       # NumPy 2's dtype for these inputs
        numpy_dt = fn(x).dtype
    with zx.enable_x64(mode):
        eager = fn(x)
        mapped = zx.vmap(fn)(x)
        assert eager.dtype == mapped.dtype == zx.dtypes.canonicalize_dtype(numpy_dt)
        stacked = np.stack([np.asarray(fn(x[i])) for i in range(2)])
        np.testing.assert_allclose(np.asarray(mapped), stacked, rtol=2e-6, atol=1e-6)
        # the same function of the same values converted to the mode's dtype first
        xc = np.asarray(N.asarray(x))
        assert xc.dtype == zx.dtypes.canonicalize_dtype(x.dtype)
        np.testing.assert_allclose(np.asarray(eager), np.asarray(fn(xc)), rtol=2e-6,
                                   atol=1e-6)
    if not mode and eager.dtype == np.float32:   # float32 math, near the float64 results
        with zx.enable_x64(True):
            ref = np.asarray(fn(np.asarray(xc, np.float64)))
        np.testing.assert_allclose(np.asarray(eager), ref, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def jitted_unary():
    return {name: zx.jit(fn) for name, fn in _UNARY.items()}


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_jit_and_derivatives_agree_with_eager_in_32_bit_mode(name, jitted_unary, x32):
    fn = _UNARY[name]
    x = np.array([0.3, -1.2, 2.1], np.float32)
    eager = fn(x)
    assert eager.dtype == np.float32
    np.testing.assert_allclose(np.asarray(jitted_unary[name](x)), np.asarray(eager),
                               rtol=4e-7, atol=1e-7)
    g = zx.grad(lambda v: N.sum(fn(v)))(x)
    gj = zx.jit(zx.grad(lambda v: N.sum(fn(v))))(x)
    _, t = zx.jvp(fn, (x,), (np.ones(3, np.float32),))
    assert g.dtype == gj.dtype == t.dtype == np.float32
    np.testing.assert_allclose(np.asarray(gj), np.asarray(g), rtol=2e-6, atol=1e-6)
    # the float32 derivative against the same derivative in float64 (x64 on)
    with zx.enable_x64(True):
        g64 = zx.grad(lambda v: N.sum(fn(v)))(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(g), np.asarray(g64), rtol=2e-5, atol=1e-5)
    h = zx.hessian(lambda v: N.sum(fn(v)))(x)
    assert h.dtype == np.float32 and h.shape == (3, 3)


_BINARY = {"add": (N.add, np.add), "multiply": (N.multiply, np.multiply),
           "true_divide": (N.true_divide, np.true_divide), "maximum": (N.maximum, np.maximum),
           "arctan2": (N.arctan2, np.arctan2), "power": (N.power, np.power)}
_DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "uint32", "bool"]


@settings(max_examples=40, deadline=None)
@given(mode=st.booleans(), name=st.sampled_from(sorted(_BINARY)),
       dts=st.tuples(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES + ["py_float",
                                                                        "py_int"])),
       seed=st.integers(0, 2 ** 16))
def test_binary_promotion_in_both_modes_is_numpys_canonicalised(mode, name, dts, seed):
    fn, np_fn = _BINARY[name]
    rng = np.random.default_rng(seed)

    def draw(dt):
        if dt == "py_float":
            return float(rng.uniform(0.5, 2))
        if dt == "py_int":
            return int(rng.integers(1, 3))
        v = rng.uniform(1, 3, 4)
        return (v > 2) if dt == "bool" else v.astype(dt)

    a, b = draw(dts[0]), draw(dts[1])
    if name == "power" and np.dtype(getattr(b, "dtype", "f")).kind in "iu" and \
            np.dtype(a.dtype).kind in "iub":
        b = np.abs(b)
    with zx.enable_x64(mode):
        got = fn(a, b)
        mapped = zx.vmap(fn, in_axes=(0, None if type(b) in (int, float) else 0))(a, b)
        xa, xb = N.asarray(a), b if type(b) in (int, float) else N.asarray(b)
        want_dt = zx.dtypes.canonicalize_dtype(np_fn(a, b).dtype)
    assert got.dtype == want_dt == mapped.dtype
    assert mode or got.dtype.itemsize <= 4
    # NumPy on the values as zerax holds them, in the result dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np_fn(np.asarray(xa).astype(want_dt), np.asarray(xb).astype(want_dt))
    tol = {2: 1e-3, 4: 2e-6}.get(want_dt.itemsize, 1e-13) if want_dt.kind == "f" else 0
    np.testing.assert_allclose(np.asarray(got), ref, rtol=tol)
    np.testing.assert_allclose(np.asarray(mapped), ref, rtol=tol)


def test_one_loop_body_or_branch_in_both_modes():
    # the dtypes control flow learns from a body (a Python-number carry's) or a branch
    # (the other branch's output) are per mode
    body = lambda i, v: v + i * 0.5   # noqa: E731
    b1, b2 = (lambda x: N.zeros(2) + x), (lambda x: N.ones(2) * x)
    for mode in (True, False, True):
        with zx.enable_x64(mode):
            want = np.float64 if mode else np.float32
            assert lax.fori_loop(0, 3, body, 0.0).dtype == want
            assert lax.cond(True, b1, b2, 1.0).dtype == want
            assert lax.scan(lambda c, x: (c + x * 1.5, None), 0, N.arange(3))[0].dtype == want


# --------------------------------------------------------------------------- values

# JAX's float32 values with x64 off (recorded as the dtype table, with ``S = jax.scipy``,
# ``I = jax.image``, ``X = jax`` and the inputs below): the NumPy inputs are canonicalised
# to float32 and every function computes in float32. Zerax agrees to a few float32 ulps;
# near zero (a cancellation: cholesky's and pinv's off-diagonal, gammaln(1)) within 1e-6.
v64 = np.array([0.5, -1.5, 2.0, 0.25])
m3 = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 4.0]])
img = np.arange(16.0).reshape(4, 4) / 7
JAX_VALUES_X32 = {
    'N.sin(v64)':
        [0.4794255495071411, -0.9974949955940247, 0.9092974066734314, 0.24740396440029144],
    'N.exp(v64)': [1.6487212181091309, 0.22313016653060913, 7.389056205749512, 1.2840254306793213],
    'N.log1p(N.abs(v64))':
        [0.40546509623527527, 0.9162907600402832, 1.0986123085021973, 0.2231435477733612],
    'N.tanh(v64)':
        [0.46211716532707214, -0.9051482081413269, 0.9640275835990906, 0.24491865932941437],
    'N.arctan2(v64, 0.7)':
        [0.6202495098114014, -1.134169101715088, 1.234121561050415, 0.34302395582199097],
    'N.hypot(v64, 1.5)': [1.5811388492584229, 2.1213202476501465, 2.5, 1.5206905603408813],
    'N.logaddexp(v64, 0.3)':
        [1.0981389284133911, 0.45297762751579285, 2.167786121368408, 0.9684596061706543],
    'N.sinc(v64)':
        [0.6366197466850281, -0.21220658719539642, 2.7827534054836178e-08,
         0.9003162980079651],
    'N.i0(v64)': [1.063483476638794, 1.6467232704162598, 2.279585123062134, 1.0156861543655396],
    'N.mean(v64)': 0.3125,
    'N.var(v64)': 1.54296875,
    'N.std(v64)': 1.2421629428863525,
    'N.cumsum(v64)': [0.5, -1.0, 1.0, 1.25],
    'N.cumprod(v64)': [0.5, -0.75, -1.5, -0.375],
    'N.linalg.inv(m3)':
        [[0.6161290407180786, -0.20000000298023224, -0.06451612710952759],
         [-0.20000000298023224, 0.4000000059604645, 0.0], [-0.06451612710952759, 0.0,
         0.25806450843811035]],
    'N.linalg.det(m3)': 19.375,
    'N.linalg.svd(m3)[1]': [4.34166955947876, 3.3102054595947266, 1.3481241464614868],
    'N.linalg.eigh(m3)[0]': [1.3481242656707764, 3.3102052211761475, 4.341670036315918],
    'N.linalg.solve(m3, v64[:3])': [0.4790322482585907, -0.699999988079071, 0.4838709533214569],
    'N.linalg.norm(m3)': 5.623610973358154,
    'N.linalg.slogdet(m3)[1]': 2.9639835357666016,
    'N.linalg.cholesky(m3)':
        [[1.4142135381698608, 0.0, 0.0], [0.7071067690849304, 1.5811388492584229, 0.0],
         [0.3535533845424652, 9.424321767426136e-09, 1.9685019254684448]],
    'N.linalg.pinv(m3)':
        [[0.6161290407180786, -0.19999994337558746, -0.06451603025197983],
         [-0.19999995827674866, 0.40000003576278687, -6.024190213338443e-08],
         [-0.06451604515314102, -4.5912273094472766e-08, 0.2580645978450775]],
    'N.fft.fft(v64)':
        [complex(1.25, 0.0), complex(-1.5, 1.75), complex(3.75, 0.0), complex(-1.5, -1.75)],
    'N.fft.rfft(v64)': [complex(1.25, 0.0), complex(-1.5, 1.75), complex(3.75, 0.0)],
    'N.fft.irfft(N.fft.rfft(v64))': [0.5, -1.5, 2.0, 0.25],
    'N.polyval(np.array([1.5, -2.0, 0.5]), v64)': [-0.125, 6.875, 2.5, 0.09375],
    'N.convolve(v64, v64)': [0.25, -1.5, 4.25, -5.75, 3.25, 1.0, 0.0625],
    'N.interp(0.3, np.sort(v64), v64)': -0.7999998331069946,
    'N.cov(m3)':
        [[0.5833333134651184, 0.083333320915699, -1.1458332538604736], [0.083333320915699,
         2.0208332538604736, -2.2395832538604736], [-1.1458332538604736,
         -2.2395832538604736, 4.3958330154418945]],
    'N.corrcoef(m3)':
        [[0.9999999403953552, 0.07675294578075409, -0.7155539989471436],
         [0.07675294578075409, 1.0, -0.7514176368713379], [-0.7155540585517883,
         -0.7514175772666931, 1.0]],
    "N.einsum('ij,jk->ik', m3, m3)":
        [[5.25, 5.125, 3.25], [5.125, 10.0625, 2.25], [3.25, 2.25, 16.3125]],
    'N.matmul(m3, m3)': [[5.25, 5.125, 3.25], [5.125, 10.0625, 2.25], [3.25, 2.25, 16.3125]],
    'N.outer(v64, v64)':
        [[0.25, -0.75, 1.0, 0.125], [-0.75, 2.25, -3.0, -0.375], [1.0, -3.0, 4.0, 0.5],
         [0.125, -0.375, 0.5, 0.0625]],
    'S.special.gammaln(N.abs(v64) + 0.5)':
        [4.76837158203125e-07, 0.0, 0.2846829891204834, 0.20328092575073242],
    'S.special.erf(v64)':
        [0.5204998850822449, -0.966105043888092, 0.9953222274780273, 0.27632635831832886],
    'S.special.expit(v64)':
        [0.622459352016449, 0.18242552876472473, 0.8807970285415649, 0.562176525592804],
    'S.special.logsumexp(v64)': 2.3556456565856934,
    'S.special.digamma(N.abs(v64) + 1)':
        [0.03649008274078369, 0.7031568288803101, 0.9227842688560486, -0.2274538278579712],
    'S.special.xlogy(N.abs(v64), 2.0)':
        [0.3465735912322998, 1.0397207736968994, 1.3862943649291992, 0.1732867956161499],
    'S.stats.norm.logpdf(v64)':
        [-1.0439385175704956, -2.043938636779785, -2.918938636779785, -0.9501885175704956],
    'S.stats.norm.cdf(v64)':
        [0.6914624571800232, 0.06680721789598465, 0.9772498607635498, 0.5987063646316528],
    'S.linalg.expm(m3 / 4)':
        [[1.7219570875167847, 0.48327532410621643, 0.2876623570919037], [0.4832753539085388,
         2.184311628341675, 0.18567177653312683], [0.2876623868942261, 0.18567177653312683,
         2.7429003715515137]],
    'S.special.i0e(v64)':
        [0.6450353264808655, 0.3674336373806, 0.3085083067417145, 0.7910171747207642],
    'S.special.betainc(2.0, 3.0, N.abs(v64) / 3)':
        [0.13194450736045837, 0.6874998211860657, 0.8888888359069824, 0.03718173876404762],
    "I.resize(img, (3, 3), 'linear')":
        [[0.2142857313156128, 0.3857142925262451, 0.5571429133415222], [0.9000000357627869,
         1.0714285373687744, 1.2428572177886963], [1.585714340209961, 1.7571430206298828,
         1.9285715818405151]],
    "I.resize(img, (6, 6), 'cubic')":
        [[-0.046992287039756775, 0.021229706704616547, 0.12907283008098602,
         0.2243109494447708, 0.3321540951728821, 0.4003761410713196], [0.2258957177400589,
         0.2941177189350128, 0.4019608199596405, 0.4971988797187805, 0.6050420999526978,
         0.67326420545578], [0.6572681069374084, 0.725490152835846, 0.8333332538604736,
         0.928571343421936, 1.036414623260498, 1.1046366691589355], [1.038220763206482,
         1.1064428091049194, 1.2142857313156128, 1.3095238208770752, 1.4173671007156372,
         1.4855890274047852], [1.4695932865142822, 1.5378153324127197, 1.6456584930419922,
         1.7408965826034546, 1.848739743232727, 1.9169617891311646], [1.7424813508987427,
         1.8107033967971802, 1.9185465574264526, 2.013784646987915, 2.1216278076171875,
         2.189849853515625]],
    'N.quantile(v64, 0.3)': 0.07500006258487701,
    'N.median(v64)': 0.375,
    'X.nn.softmax(v64)':
        [0.1563519835472107, 0.021159939467906952, 0.7007209658622742, 0.12176704406738281],
    'X.nn.gelu(v64)':
        [0.3457140028476715, -0.10042843222618103, 1.9545977115631104, 0.14967535436153412],
    'X.nn.log_softmax(v64)':
        [-1.8556455373764038, -3.8556456565856934, -0.3556455373764038,
         -2.1056456565856934],
    'X.nn.silu(v64)':
        [0.3112296760082245, -0.2736383080482483, 1.7615940570831299, 0.140544131398201],}


@pytest.mark.parametrize("expr", sorted(JAX_VALUES_X32))
def test_float32_values_are_jaxs_with_x64_off(expr, x32):
    import zerax.image as I           # noqa: F401,E741 - read by the expressions
    import zerax.scipy as S           # noqa: F401 - read by the expressions
    import zerax.scipy.linalg, zerax.scipy.special, zerax.scipy.stats  # noqa: F401,E401
    X = zx                            # noqa: F841 - read by the expressions
    got = np.asarray(eval(expr))      # noqa: S307 - a literal expression of this file
    want = np.asarray(JAX_VALUES_X32[expr])
    assert got.dtype == (np.complex64 if want.dtype.kind == "c" else np.float32)
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6)
