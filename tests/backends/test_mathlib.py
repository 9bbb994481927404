"""The inline exp/expm1/log/log1p/tanh/arctan/sin/cos of compiled loops
(``backends/cpu/mathlib.py``) agree with NumPy.

Each function is jitted alone over an array and compared with NumPy in units in the
last place, over the whole float64 range (uniform and log-uniform samples of both
signs), the special values, and the edges of each range reduction; once in a serial
loop and once in a parallel one (100,000 elements or more: the branch-free ``sin``/
``cos`` with the exact code for blocks holding large arguments)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp

# name -> (NumPy reference, largest allowed error in ulp)
FUNCTIONS = {"exp": (np.exp, 1), "expm1": (np.expm1, 2), "log": (np.log, 1),
             "log1p": (np.log1p, 2), "tanh": (np.tanh, 3), "sin": (np.sin, 1),
             "cos": (np.cos, 1), "arctan": (np.arctan, 1)}

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
           -2.2250738585072014e-308, 1e-300, 1.0, -1.0, 1e-20, -1e-20, 3.7e-9, -3.7e-9,
           0.34657359027997264, -0.34657359027997264, 0.5, -0.5, 0.7071067811865476,
           1.4142135623730951, 2.0, 22.0, -22.0, 40.0, -40.0, 709.78, 709.79, -745.1,
           -745.2, -708.4, -746.0, 710.0, 1e308, -1e308, np.finfo(np.float64).max,
           -0.9999999999999999, -1.0000000000000002, -2.0, 1e-16, -1e-16,
           0.66, np.nextafter(0.66, 1), 2.414213562373095, 2.4142135623730954, 1e-310,
           # sin/cos: next to multiples of pi/2 (zeros of one of them) and the fast limit
           *[s * k * np.pi / 2 for k in range(1, 6) for s in (1.0, -1.0)],
           *[np.nextafter(k * np.pi / 2, t) for k in range(1, 5) for t in (0.0, 10.0)],
           0.7853981633974483, 2.356194490192345, 6.999999999999999, 7.0, -7.0]

_JITTED = {name: zx.jit(getattr(znp, name)) for name in FUNCTIONS}


def _ulp_error(got, want):
    with np.errstate(all="ignore"):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        return np.where(same, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))


def _check(name, x):
    x = np.asarray(x, np.float64)
    got = np.asarray(_JITTED[name](x))
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


def _wide_samples(seed, n):
    rng = np.random.default_rng(seed)
    magnitudes = np.exp(rng.uniform(-745.0, 709.0, n))
    return np.concatenate([magnitudes * rng.choice([-1.0, 1.0], n),
                           rng.uniform(-50.0, 50.0, n), rng.uniform(-1.0, 1.0, n),
                           rng.uniform(-800.0, 800.0, n), SPECIAL])


@pytest.mark.parametrize("n", [5000, 40000], ids=["serial", "parallel"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_matches_numpy_over_the_whole_range(name, n):
    _check(name, _wide_samples(seed=len(name), n=n))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                       min_size=1, max_size=20))
def test_matches_numpy_on_any_float64(name, values):
    _check(name, values)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_near_every_quadrant_edge(name):
    """Each quadrant's reduction (|x| - n pi/2, exact) and its neighbours: dense
    samples around the boundaries n pi/2 +- pi/4 and the zeros n pi/2 (in parallel
    blocks too: more than 100,000 values)."""
    rng = np.random.default_rng(7)
    centres = [k * np.pi / 4 for k in range(1, 10)]
    x = np.concatenate([c + rng.uniform(-1e-6, 1e-6, 6000) for c in centres] +
                       [c * (1.0 + rng.integers(-50, 50, 200) * 2.0 ** -52)
                        for c in centres])
    _check(name, np.concatenate([x, -x]))


def test_arctan_float32_is_rounded_once():
    f = zx.jit(lambda x: znp.arctan(x) * 2.0)
    x = np.concatenate([np.random.default_rng(1).normal(size=4000) * 10.0 ** np.arange(
        -8, 8, 0.004), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    for dt in (np.float64, np.float32):
        xs = x.astype(dt)
        y, ref = np.asarray(f(xs)), np.arctan(xs) * dt(2.0)
        assert y.dtype == dt
        both_nan = np.isnan(y) & np.isnan(ref)
        ulp = np.abs(y - ref)[~both_nan] / np.spacing(np.abs(ref[~both_nan]))
        assert ulp.max() <= 2.0
        assert np.signbit(y[-4]) and not np.signbit(y[-5])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_no_libm_call_in_the_loop(name):
    """The point of the library: the loop calls no libm function, so LLVM can
    vectorise it."""
    llvm = _JITTED[name].lower(np.ones(64)).as_text("llvm")
    assert f"@{name}(" not in llvm and f"@llvm.{name}" not in llvm
