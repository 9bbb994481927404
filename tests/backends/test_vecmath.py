"""The inline exp/expm1/log/log1p/tanh/sin/cos used in generated loops agree with NumPy.

Each function is compiled once into a loop over an array (as the generated kernels use
it) and compared with NumPy in units in the last place, over the whole float64 range
(uniform and log-uniform samples of both signs), the special values, and the edges of
each range reduction."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zerax._src.backends.numba import vecmath
from zerax._src.backends.numba.compile import KERNEL_FASTMATH

# name -> (NumPy reference, largest allowed error in ulp)
FUNCTIONS = {"exp": (np.exp, 1), "expm1": (np.expm1, 2), "log": (np.log, 1),
             "log1p": (np.log1p, 2), "tanh": (np.tanh, 3), "sin": (np.sin, 1),
             "cos": (np.cos, 1), "scalar_sin": (np.sin, 1), "scalar_cos": (np.cos, 1)}

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
           -2.2250738585072014e-308, 1e-300, 1.0, -1.0, 1e-20, -1e-20, 3.7e-9, -3.7e-9,
           0.34657359027997264, -0.34657359027997264, 0.5, -0.5, 0.7071067811865476,
           1.4142135623730951, 2.0, 22.0, -22.0, 40.0, -40.0, 709.78, 709.79, -745.1,
           -745.2, -708.4, -746.0, 710.0, 1e308, -1e308, np.finfo(np.float64).max,
           -0.9999999999999999, -1.0000000000000002, -2.0, 1e-16, -1e-16,
           # sin/cos: next to multiples of pi/2 (zeros of one of them) and the fast limit
           *[s * k * np.pi / 2 for k in range(1, 6) for s in (1.0, -1.0)],
           *[np.nextafter(k * np.pi / 2, t) for k in range(1, 5) for t in (0.0, 10.0)],
           0.7853981633974483, 2.356194490192345, 6.999999999999999, 7.0, -7.0]


def _loop(fn):
    @numba.njit(error_model="numpy", fastmath=set(KERNEL_FASTMATH))   # as kernels are
    def apply(a, out):
        for i in range(a.size):
            out[i] = fn(a[i])
    return apply


@pytest.fixture(scope="module")
def loops():
    return {name: _loop(getattr(vecmath, name)) for name in FUNCTIONS}


def _ulp_error(got, want):
    with np.errstate(all="ignore"):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        return np.where(same, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))


def _check(loops, name, x):
    x = np.asarray(x, np.float64)
    got = np.empty_like(x)
    loops[name](x, got)
    ref, max_ulp = FUNCTIONS[name]
    with np.errstate(all="ignore"):
        want = ref(x)
    err = _ulp_error(got, want)
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulp, (name, x[worst], got[worst], want[worst], err[worst])
    # zeros keep their sign, infinities and nans where NumPy has them
    finite_or_inf = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[finite_or_inf]),
                                  np.signbit(want[finite_or_inf]))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def _wide_samples(seed, n=20000):
    rng = np.random.default_rng(seed)
    magnitudes = np.exp(rng.uniform(-745.0, 709.0, n))
    return np.concatenate([magnitudes * rng.choice([-1.0, 1.0], n),
                           rng.uniform(-50.0, 50.0, n), rng.uniform(-1.0, 1.0, n),
                           rng.uniform(-800.0, 800.0, n), SPECIAL])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_matches_numpy_over_the_whole_range(loops, name):
    _check(loops, name, _wide_samples(seed=len(name)))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                       min_size=1, max_size=20))
def test_matches_numpy_on_any_float64(loops, name, values):
    _check(loops, name, values)


@pytest.mark.parametrize("name", ["sin", "cos", "scalar_sin", "scalar_cos"])
def test_sin_cos_near_every_quadrant_edge(loops, name):
    """Each fast quadrant's reduction (|x| - n pi/2, exact) and its neighbours: dense
    samples around the boundaries n pi/2 +- pi/4 and the zeros n pi/2."""
    rng = np.random.default_rng(7)
    centres = [k * np.pi / 4 for k in range(1, 10)]
    x = np.concatenate([c + rng.uniform(-1e-6, 1e-6, 2000) for c in centres] +
                       [c * (1.0 + rng.integers(-50, 50, 200) * 2.0 ** -52)
                        for c in centres])
    _check(loops, name, np.concatenate([x, -x]))


@pytest.mark.parametrize("name", ["scalar_sin", "scalar_cos"])
def test_scalar_sin_cos_at_every_cell(loops, name):
    """The cells of width 1/16 (vecmath's scalar_sin/scalar_cos): both edges of each,
    where |r| is largest, dense points in each, and both signs; the libm fallback and
    the quadrant code (near the zeros) are reached from the same dispatch."""
    rng = np.random.default_rng(8)
    edges = (np.arange(0, 113) + 0.5) / 16
    x = np.concatenate([edges, np.nextafter(edges, 0.0), np.nextafter(edges, 8.0),
                        np.linspace(0.0, 7.0, 200001), rng.uniform(0.0, 7.0, 100000)])
    _check(loops, name, np.concatenate([x, -x]))


def test_scalar_sin_cos_cells_cover_the_fast_range():
    """Every cell either has a polynomial row or is one where the function comes near
    zero (and the quadrant code takes it)."""
    for want_sin, f in ((True, np.sin), (False, np.cos)):
        rows, row_of = vecmath._cell_table(want_sin)
        assert len(rows) == len(row_of) > 90
        for k in range(vecmath._CELL_COUNT):
            cell = np.linspace(k / 16 - 1 / 32, k / 16 + 1 / 32, 101)
            near_zero = np.abs(f(cell)).min() < 1 / 16
            assert (k in row_of) != near_zero, (want_sin, k)


def test_generated_loop_is_vectorised(loops):
    """The point of the module: no libm call is left in the loop, so LLVM vectorises it
    (AVX2 and wider use ymm registers; SSE-only machines are skipped)."""
    x = np.linspace(-3.0, 3.0, 64)
    loops["tanh"](x, np.empty_like(x))
    asm = loops["tanh"].inspect_asm(loops["tanh"].signatures[0])
    if "ymm" not in asm and "zmm" not in asm:
        pytest.skip("no AVX on this CPU")
    assert "tanh" not in asm.lower().replace("vecmath4tanh", "")
