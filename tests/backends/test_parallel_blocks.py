"""Parallel elementwise loops: blocks claimed by the threads as they go, and one loop
per independent part of a fused group (backends/lowering/fused.py, cpu/threads.py).

Values are checked against NumPy on shapes whose sizes are not multiples of the block,
with one thread and with the default setting; the kernel IR is checked for the
structure (no timing here: speed is measured in benchmarks/)."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax._src.backends.fusion import independent_parts
from zerax._src.backends.lowering.context import PARALLEL_BLOCK_ELEMENTS as PARALLEL_BLOCK
from zerax._src.backends.lowering.context import PARALLEL_THRESHOLD


def _adam_like(gs, ms, vs, count):
    """Moments and steps of several arrays, as optim.adam's update (one fused group)."""
    b1c = 1 - 0.9 ** count
    b2c = 1 - 0.999 ** count
    outs = []
    for g, m, v in zip(gs, ms, vs):
        m2 = 0.1 * g + 0.9 * m
        v2 = 0.001 * g * g + 0.999 * v
        outs.append((m2, v2, -1e-3 * (m2 / b1c) / (np.sqrt(v2 / b2c) + 1e-8)))
    return outs


@pytest.fixture(scope="module")
def adam_data():
    rng = np.random.default_rng(0)
    n = 100_003                          # not a multiple of the block
    gs, ms, vs = ([rng.standard_normal(n).astype(np.float32) for _ in range(3)]
                  for _ in range(3))
    vs = [np.abs(v) for v in vs]
    return gs, ms, vs


def _jitted_adam():
    def f(gs, ms, vs, count):
        b1c = 1 - 0.9 ** count
        b2c = 1 - 0.999 ** count
        outs = []
        for g, m, v in zip(gs, ms, vs):
            m2 = 0.1 * g + 0.9 * m
            v2 = 0.001 * g * g + 0.999 * v
            outs.append((m2, v2, -1e-3 * (m2 / b1c) / (znp.sqrt(v2 / b2c) + 1e-8)))
        return outs
    return zx.jit(f)


def test_independent_arrays_get_one_loop_each(adam_data):
    gs, ms, vs = adam_data
    f = _jitted_adam()
    args = ([znp.asarray(g) for g in gs], [znp.asarray(m) for m in ms],
            [znp.asarray(v) for v in vs], znp.asarray(np.float32(3.0)))
    src = f.lower(*args).as_text()
    assert src.count("parallel for") == 1        # one parallel loop for the whole group
    got = f(*args)
    want = _adam_like(gs, ms, vs, np.float32(3.0))
    for g_out, w_out in zip(got, want):
        for a, b in zip(g_out, w_out):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6 * np.abs(b).max())


@pytest.mark.parametrize("shape", [(100_003,), (3, 50_001), (401, 301), (7, 130, 113)])
def test_blocked_loops_match_numpy(shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape)
    row = rng.standard_normal(shape[-1])

    def f(a, b, row):
        # two parts (one reads a and row, the other b), a broadcast read in place
        return znp.exp(-a * a) + row, znp.arctan(b) * 2.0 - b
    jf = zx.jit(f)
    assert "parallel for" in jf.lower(a, b, row).as_text()
    x, y = jf(a, b, row)
    np.testing.assert_allclose(np.asarray(x), np.exp(-a * a) + row, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(np.asarray(y), np.arctan(b) * 2.0 - b, rtol=1e-14, atol=1e-15)


def test_one_thread_and_rolled_reads():
    """A concatenation of slices (jnp.roll) read in place inside the blocks; the same
    values with num_threads 1 (one task takes every block)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(300_001)

    def f(x):
        return znp.roll(x, 7) * 2.0 + x, znp.sin(x)
    jf = zx.jit(f)
    before = zx.config.num_threads
    try:
        for n in (1, before):
            zx.config.update("num_threads", n)
            u, s = jf(x)
            np.testing.assert_allclose(np.asarray(u), np.roll(x, 7) * 2.0 + x, rtol=1e-15, atol=1e-15)
            np.testing.assert_allclose(np.asarray(s), np.sin(x), rtol=1e-14, atol=1e-16)
    finally:
        zx.config.update("num_threads", before)


def test_reductions_keep_their_loop():
    """A group ending in a reduction keeps NumPy's pairwise order: its value is
    NumPy's."""
    x = np.linspace(-3.0, 3.0, 200_001)
    jf = zx.jit(lambda x: znp.sum(znp.exp(x) * x))
    np.testing.assert_allclose(float(jf(x)), np.sum(np.exp(x) * x), rtol=1e-11)


def test_small_loops_stay_serial():
    x = np.ones(PARALLEL_THRESHOLD - 1)
    assert "parallel" not in zx.jit(lambda x: x * 2.0 + 1.0).lower(x).as_text()


def test_independent_parts():
    x = np.ones(5)

    def f(a, b, c, s):
        p = a * s           # part 1: a
        q = p + 1.0
        r = b * 2.0         # part 2: b, c (c is read by both of its equations)
        t = r + c
        u = c * s
        return q, t, u
    jaxpr = zx.make_jaxpr(f)(x, x, x, np.float64(2.0)).jaxpr
    parts = independent_parts(jaxpr.eqns)
    assert [len(p) for p in parts] == [2, 3]
    flat = [e for p in parts for e in p]
    assert sorted(map(id, flat)) == sorted(map(id, jaxpr.eqns))


def _ulps(got, want):
    """The largest difference in units of the last place of ``want``'s dtype."""
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    fin = np.isfinite(want) & (want != 0)
    return (np.abs(got[fin] - want[fin]) / spacing[fin]).max()


@pytest.fixture(scope="module")
def trig_args():
    """Random arguments, with the edge cases written into a few blocks: zeros of both
    signs, inf, nan, huge and tiny values, multiples of pi/2 and the range limit 7."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(300_000) * 2.5
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e22, 5e-324, -1e-310,
             np.pi / 2, -np.pi, 1.5 * np.pi, 2 * np.pi, 7.0, np.nextafter(7.0, 0.0),
             -7.0, 1e6 + 0.5, 3.0e5]
    x[5 * PARALLEL_BLOCK + 17:5 * PARALLEL_BLOCK + 17 + len(edges)] = edges
    x[-3] = np.nan                                # in the last, partial block
    x[40 * PARALLEL_BLOCK:41 * PARALLEL_BLOCK] = rng.uniform(-1e4, 1e4, PARALLEL_BLOCK)
    return x


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_in_blocks_match_numpy(trig_args, name):
    """Parallel loops use mathlib's branch-free sin/cos and recompute a block holding an
    argument beyond its range with the exact code: NumPy's values everywhere (1 ulp),
    its special values (nan, -0.0) too, float32 as well."""
    zf, nf = getattr(znp, name), getattr(np, name)
    jf = zx.jit(lambda x: zf(x) * 2.0)
    assert "parallel for" in jf.lower(trig_args).as_text()
    with np.errstate(invalid="ignore"):
        want = nf(trig_args) * 2.0
    got = np.asarray(jf(trig_args))
    assert _ulps(got, want) <= 1.0
    assert np.array_equal(np.isnan(got), np.isnan(want))
    zeros = want == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    with np.errstate(over="ignore"):
        x32 = trig_args.astype(np.float32)
    with np.errstate(invalid="ignore"):
        want32 = nf(x32)
    got32 = np.asarray(zx.jit(zf)(x32))
    assert got32.dtype == np.float32
    assert _ulps(got32, want32) <= 1.0
    assert np.array_equal(np.isnan(got32), np.isnan(want32))
