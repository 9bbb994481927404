"""Kernels compiled straight to LLVM IR (backends/numba/direct/), without Numba.

Each program is compared with NumPy (bit for bit where the arithmetic is exact, or where
the kernel sums pairwise as NumPy does), and the tests check that the kernels they mean
to exercise really were compiled by the translator, not handed to Numba.
"""

import ast
import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax._src.backends.cpu import diskcache
from zerax._src.backends.numba import direct, native

# The translator compiles the generated-source path's kernels (numba_path: conftest.py).
pytestmark = [pytest.mark.skipif(not direct.enabled(), reason="direct kernels are off"),
              pytest.mark.usefixtures("numba_path")]


def _compiled_directly(fn, *args):
    """``fn(*args)`` under jit, and whether its kernels were all compiled here."""
    before = (direct.stats["compiled"], direct.stats["refused"])
    out = zx.jit(fn)(*args)
    after = (direct.stats["compiled"], direct.stats["refused"])
    return out, after[0] > before[0] and after[1] == before[1]


def _kernel(source, helpers=None):
    tree = ast.parse(textwrap.dedent(source))
    return tree.body[0], helpers or {}


def _run_source(source, *args):
    fn_ast, helpers = _kernel(source)
    kernel = direct.compile_kernel(fn_ast, helpers, tuple((a.dtype, a.shape) for a in args))
    return kernel.call(*args)


def test_cross_entropy_gradient_is_compiled_directly_and_matches_numpy():
    # reductions (max, pairwise sums), exp and log, a gather and its scatter-add transpose
    rng = np.random.default_rng(0)
    logits, y = rng.standard_normal((64, 10)), rng.integers(0, 10, 64)

    def loss(z):
        logp = z - zx.nn.logsumexp(z, axis=1, keepdims=True)
        return -znp.mean(logp[znp.arange(64), y])

    (g, value), ok = _compiled_directly(lambda z: (zx.grad(loss)(z), loss(z)), logits)
    assert ok
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d = p.copy()
    d[np.arange(64), y] -= 1.0
    np.testing.assert_allclose(np.asarray(g), d / 64, rtol=1e-12, atol=1e-15)
    assert abs(float(value) + np.log(p[np.arange(64), y]).mean()) < 1e-12


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 700), rows=st.integers(1, 4), f32=st.booleans())
def test_row_sums_round_as_numpy_pairwise(n, rows, f32):
    dt = np.float32 if f32 else np.float64
    x = np.random.default_rng(n).standard_normal((rows, n)).astype(dt)
    out = np.asarray(zx.jit(lambda a: znp.sum(a, axis=1))(x))
    assert out.dtype == dt and np.array_equal(out, x.sum(axis=1))


def test_scan_with_swapped_carry_buffers_and_zero_steps():
    x = np.linspace(0.0, 1.0, 16)

    def body(c, _):
        c = znp.sin(c) * 0.5 + znp.cos(c)
        return c, c * 2.0

    def run(x, n):
        return zx.lax.scan(body, x, None, length=n)

    for n in (0, 1, 7):
        (c, ys), ok = _compiled_directly(lambda x, n=n: run(x, n), x)
        assert ok
        ref, rows = x.copy(), []
        for _ in range(n):
            ref = np.sin(ref) * 0.5 + np.cos(ref)
            rows.append(ref * 2.0)
        np.testing.assert_allclose(np.asarray(c), ref, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(np.asarray(ys).reshape(n, 16),
                                   np.array(rows).reshape(n, 16), rtol=1e-14, atol=1e-15)


def test_scalar_fori_loop_of_a_0d_argument():
    out, ok = _compiled_directly(lambda c: zx.lax.fori_loop(
        0, 100, lambda i, c: c * 0.99 + 0.01 * i, c), np.float64(1.0))
    assert ok
    ref = 1.0
    for i in range(100):
        ref = ref * 0.99 + 0.01 * i
    assert abs(float(out) - ref) < 1e-12


def test_parallel_loops_run_on_the_thread_pool():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(300_000), rng.standard_normal(300_000)
    out, ok = _compiled_directly(lambda a, b: znp.tanh(a) * b + znp.sin(a * a + 8.0), a, b)
    assert ok
    np.testing.assert_allclose(np.asarray(out), np.tanh(a) * b + np.sin(a * a + 8.0),
                               rtol=1e-13, atol=1e-14)
    m = rng.standard_normal((600, 300))
    rows, ok = _compiled_directly(lambda m: znp.sum(m * 2.0, axis=1), m)
    assert ok
    np.testing.assert_allclose(np.asarray(rows), (m * 2.0).sum(axis=1), rtol=1e-12, atol=1e-12)


def test_arguments_the_kernel_was_not_compiled_for():
    f = zx.jit(lambda a: a * 2.0 + 1.0)
    v = np.arange(9.0)
    f(v)
    kernel = f.lower(v).compile()._exe.kernel
    kernel = getattr(kernel, "__wrapped__", kernel)
    assert isinstance(kernel, direct.Dispatcher)
    np.testing.assert_array_equal(kernel(np.arange(18.0)[::2])[0], np.arange(0, 18, 2) * 2.0 + 1)
    np.testing.assert_array_equal(kernel(np.arange(9, dtype=np.float32))[0],
                                  np.arange(9.0) * 2.0 + 1)
    big = np.arange(9.0).astype(">f8")                    # another byte order
    np.testing.assert_array_equal(kernel(big)[0], np.arange(9.0) * 2.0 + 1)
    np.testing.assert_array_equal(kernel(v)[0], v * 2.0 + 1.0)


def test_loop_bodies_with_products_and_reductions_are_compiled_directly():
    # In a fori_loop body: float64 products of register tiles (microkernel.py, with and
    # without an init array, transposed operands), and reduction accumulators made anew
    # each iteration (one buffer for all iterations). Against the same loop in NumPy.
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((24, 30)) / 5, rng.standard_normal((30, 7)) / 5
    x0 = rng.standard_normal((13, 24))

    def step(x):
        h = znp.tanh(x @ w1)
        out = h @ w2 + x[:, :7]
        g = (h.T @ x) @ w1          # a transposed operand, then a product of it
        return x * 0.9 + 0.01 * (out.sum(axis=1, keepdims=True) + g.sum(axis=0)[:24])

    def np_step(x):
        h = np.tanh(x @ w1)
        out = h @ w2 + x[:, :7]
        g = (h.T @ x) @ w1
        return x * 0.9 + 0.01 * (out.sum(axis=1, keepdims=True) + g.sum(axis=0)[:24])

    got, ok = _compiled_directly(lambda x: zx.lax.fori_loop(0, 5, lambda i, x: step(x), x),
                                 x0)
    assert ok
    want = x0
    for _ in range(5):
        want = np_step(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


LOOP_ALLOCATIONS = """
def kernel(a0):
    out = np.empty((3,), np.float64)
    for i in range(3):
        acc = np.full((2,), 1.5, np.float64)
        scratch = np.empty((2,), np.float64)
        view = scratch.reshape((1, 2))
        for j in range(2):
            view[0, j] = a0[i, j] * 2.0
            acc[j] += scratch[j]
        out[i] = acc[0] + acc[1]
    return (out,)
"""


def test_allocations_inside_loops_reuse_one_buffer_when_only_indexed():
    a = np.arange(6.0).reshape(3, 2)
    (out,) = _run_source(LOOP_ALLOCATIONS, a)
    np.testing.assert_array_equal(out, (1.5 + 2 * a).sum(axis=1))
    # an array made in a loop and kept past its iteration (here: returned) is refused
    escaping = LOOP_ALLOCATIONS.replace("    return (out,)", "    return (out, acc)")
    fn_ast, helpers = _kernel(escaping)
    with pytest.raises(direct.Unsupported, match="allocation inside a loop"):
        direct.compile_kernel(fn_ast, helpers, ((a.dtype, a.shape),))


def test_refused_constructs_go_to_numba_with_the_same_results():
    z = np.array([1 + 2j, -0.5 + 0.25j, 3.0 - 1j])
    before = direct.stats["refused"]
    out = zx.jit(lambda z: z ** z + 1.0)(z)
    assert direct.stats["refused"] > before                # complex power: Numba's kernel
    np.testing.assert_allclose(np.asarray(out), z ** z + 1.0, rtol=1e-13)


INT_DIVMOD = """
def kernel(a0, a1):
    v1 = np.empty((N,), np.int64)
    v2 = np.empty((N,), np.int64)
    for i in range(N):
        x = a0[i]
        y = a1[i]
        v1[i] = x // y
        v2[i] = x % y
    return (v1, v2)
"""


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1),
                          st.sampled_from([0, -1, 1, 3, -7, 2**62, -2**63])),
                min_size=1, max_size=6))
def test_integer_floor_division_is_pythons_with_numbas_edges(pairs):
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    q, r = _run_source(INT_DIVMOD.replace("N", str(len(a))), a, b)
    for x, y, qq, rr in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist()):
        if y == 0:
            assert qq == 0 and rr == 0                     # Numba's 'numpy' error model
        elif y == -1:
            assert qq == (-x + 2**63) % 2**64 - 2**63 and rr == 0   # wraps at INT_MIN
        else:
            assert (qq, rr) == (x // y, x % y)


def test_casts_and_mixed_types_follow_numbas_rules():
    src = """
    def kernel(a0, a1):
        v = np.empty((4,), np.float32)
        w = np.empty((4,), np.int8)
        for i in range(4):
            v[i] = np.float32(a0[i]) * np.float32(1.5)
            w[i] = np.int8(a1[i] + a1[i])
        return (v, w)
    """
    a = np.array([1.0, -2.5, 1e40, np.nan])
    b = np.array([100, -100, 7, 127], np.int8)
    v, w = _run_source(src, a, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(v, a.astype(np.float32) * np.float32(1.5))
    np.testing.assert_array_equal(w, (b.astype(np.int64) * 2).astype(np.int8))


@pytest.mark.parametrize("source", [
    "def kernel(a0):\n    return (a0 + a0,)\n",                    # array arithmetic
    "def kernel(a0):\n    v = a0[1:3]\n    return (v,)\n",          # slicing
    "def kernel(a0):\n    x = np.float32(a0[0]) + 1\n    return (a0,)\n",   # f32 + int64
])
def test_untranslatable_source_is_refused(source):
    fn_ast, helpers = _kernel(source)
    with pytest.raises(direct.Unsupported):
        direct.compile_kernel(fn_ast, helpers, ((np.dtype(np.float64), (4,)),))


def test_a_tampered_direct_record_is_rejected():
    good = {"object": 0, "symbol": "zerax_direct_x", "as_tuple": True, "writes_args": False,
            "args": [["<f8", [4]]], "buffers": [["<f8", [4], ["n", None]]],
            "returns": [[[4], "buf", 0, 0]]}
    native._read_direct(good, [b"obj"])
    bad = [
        dict(good, symbol="system"),
        dict(good, object=3),
        dict(good, args=[["O", [4]]]),
        dict(good, args=[["<f8", [-1]]]),
        dict(good, buffers=[["<f8", [4], ["s", "x"]]]),
        dict(good, returns=[[[4], "buf", 5, 0]]),
        dict(good, returns=[[[4], "eval", 0, 0]]),
        dict(good, as_tuple="yes"),
    ]
    for record in bad:
        with pytest.raises(diskcache.CacheRejected):
            native._read_direct(record, [b"obj"])


FLOAT_MOD = """
def kernel(a0, a1):
    v1 = np.empty((N,), np.float64)
    for i in range(N):
        v1[i] = a0[i] % a1[i]
    return (v1,)
"""


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.floats(), st.one_of(st.floats(), st.sampled_from([0.0, -0.0]))),
                min_size=1, max_size=6))
def test_float_remainder_is_pythons_with_nan_for_a_zero_divisor(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    (r,) = _run_source(FLOAT_MOD.replace("N", str(len(a))), a, b)
    for x, y, got in zip(a.tolist(), b.tolist(), r.tolist()):
        if y == 0 or np.isnan(x) or np.isnan(y) or np.isinf(x):
            assert np.isnan(got)
        else:
            want = x % y
            assert got == want and np.signbit(got) == np.signbit(want)


_NUMBA_GAMMA = []


def _numba_gamma(x):
    if not _NUMBA_GAMMA:
        import numba
        _NUMBA_GAMMA.append(numba.njit(lambda x: math.gamma(x)))
    return _NUMBA_GAMMA[0](x)


MATH_FNS = """
def kernel(a0, a1):
    v1 = np.empty((N,), np.float64)
    v2 = np.empty((N,), np.float64)
    v3 = np.empty((N,), np.int64)
    v4 = np.empty((N,), np.float64)
    v5 = np.empty((N,), np.float64)
    for i in range(N):
        x = a0[i]
        y = a1[i]
        v1[i] = max(x, y) - min(x, y)
        m, e = math.frexp(x)
        v2[i] = math.ldexp(m, e + 3)
        v3[i] = math.floor(x) // 2
        v4[i] = math.gamma(x)
        v5[i] = math.pow(abs(x), y)
    return (v1, v2, v3, v4, v5)
"""


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.floats(-150, 150), st.one_of(st.floats(-4, 4), st.just(np.nan))),
                min_size=1, max_size=6))
def test_math_builtins_as_python_computes_them(pairs):
    # Numba's math.* are Python's: min/max keep the first of equals and lose a later
    # nan, frexp/ldexp are exact, floor is an int; gamma is Numba's own (its helperlib's,
    # not CPython's: gamma(13) is 479001599.99999994 there)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    v1, v2, v3, v4, v5 = _run_source(MATH_FNS.replace("N", str(len(a))), a, b)
    for k, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        np.testing.assert_equal(v1[k], max(x, y) - min(x, y))
        assert v2[k] == x * 8.0 and v3[k] == math.floor(x) // 2
        np.testing.assert_equal(v4[k], _numba_gamma(x))
        if not np.isnan(y) and x != 0:
            try:
                assert v5[k] == math.pow(abs(x), y)
            except OverflowError:
                assert v5[k] == math.inf


def test_a_variable_of_two_types_has_numbas_unified_type():
    # ``acc = one`` (int8) then ``acc = acc * x`` (int64): Numba types acc (and x) int64
    # throughout (scalarmath.int_pow, a helper); ``k = 1`` then ``k = k + 0.5``: float64
    a = np.arange(-10, 10, dtype=np.int8)
    f = zx.jit(lambda a: zx.lax.integer_pow(a, 11))
    out, ok = _compiled_directly(f, a)
    assert ok
    np.testing.assert_array_equal(np.asarray(out), a ** 11)
    src = """
    def kernel(a0):
        v = np.empty((3,), np.float64)
        for i in range(3):
            k = 1
            k = k + a0[i]
            v[i] = k / 2
        return (v,)
    """
    x = np.array([0.5, -1.0, 2.25])
    (v,) = _run_source(textwrap.dedent(src), x)
    np.testing.assert_array_equal(v, (1 + x) / 2)
    mixed = src.replace("k = k + a0[i]", "k = np.uint64(k) + np.uint64(2)")
    with pytest.raises(direct.Unsupported, match="changes type|a variable of"):
        _run_source(textwrap.dedent(mixed), x)
