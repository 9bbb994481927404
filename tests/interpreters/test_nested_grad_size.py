"""Nested grad stays compact (issue 32): the program of the n-th nested ``grad`` grows
polynomially in n, for scalar functions and a small MLP by its input, with the values of
Taylor mode; the exact rewrites behind it (a scalar linear map evaluated forward,
negations pulled out, equal constants merged) keep dtypes and bits."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp

_RNG = np.random.default_rng(32)
_W1, _B1 = _RNG.normal(size=8), _RNG.normal(size=8)
_W2, _B2, _W3 = _RNG.normal(size=(8, 8)) / 3, _RNG.normal(size=8), _RNG.normal(size=8)

FUNCTIONS = {
    "tanh": znp.tanh,
    "tanh_sin": lambda x: znp.tanh(x) * znp.sin(x),
    "exp_sin": lambda x: znp.exp(znp.sin(x)),
    "runge": lambda x: 1.0 / (1.0 + x ** 2),
    "mlp": lambda x: znp.dot(_W3, znp.tanh(znp.dot(_W2, znp.tanh(_W1 * x + _B1)) + _B2)),
}


def _nested(f, n):
    for _ in range(n):
        f = zx.grad(f)
    return f


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_program_size_grows_polynomially(name):
    f = FUNCTIONS[name]
    sizes = [len(zx.make_jaxpr(_nested(f, n))(0.3).jaxpr.eqns) for n in range(1, 8)]
    # exponential growth (reverse over reverse, JAX's) doubles the program per order;
    # here the growth ratio falls towards 1, as a polynomial's does
    ratios = [b / a for a, b in zip(sizes[3:], sizes[4:])]
    assert max(ratios) < 1.7 and ratios[-1] < 1.5, (sizes, ratios)
    assert sizes[-1] < 250, sizes


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_equal_taylor_mode(name):
    f = FUNCTIONS[name]
    want = zx.taylor.derivatives(f, 5)(0.3)
    for n in range(1, 6):   # eagerly, and the compiled program of the 5th
        g = _nested(f, n)
        np.testing.assert_allclose(float(g(0.3)), float(want[n]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(zx.jit(g)(0.3)), float(want[5]), rtol=1e-9, atol=1e-12)


def test_dtypes_are_kept():
    # a float32 input whose function computes in float64: its gradient is float32
    f = lambda x: znp.sin(x.astype(np.float64)) * 2  # noqa: E731
    for g in (zx.jit(zx.grad(f)), zx.grad(zx.grad(f)), zx.jit(zx.grad(zx.grad(f)))):
        assert g(np.float32(0.3)).dtype == np.float32


_specials = st.sampled_from([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 1e-310, 3.0e300])


@settings(max_examples=40)
@given(_specials, _specials)
def test_pulled_negations_are_exact(a, b):
    # (-x) op y == -(x op y) and x + (-y) == x - y to the bit, signed zeros included
    fns = [lambda x, y: (-x) * y, lambda x, y: x * (-y), lambda x, y: (-x) / y,
           lambda x, y: x / (-y), lambda x, y: x + (-y), lambda x, y: (-x) + y,
           lambda x, y: x - (-y), lambda x, y: (-x) * (-y)]
    with np.errstate(all="ignore"):
        for fn in fns:
            want = np.asarray(fn(np.float64(a), np.float64(b)))
            got = np.asarray(zx.make_jaxpr(fn)(a, b)(a, b)[0])
            np.testing.assert_array_equal(got, want)
            if not np.isnan(want):      # (a NaN's sign bit carries no meaning)
                assert np.signbit(got) == np.signbit(want)


def test_equal_constants_are_one():
    a, b = np.arange(4.0), np.arange(4.0)          # two arrays, one value
    jaxpr = zx.make_jaxpr(lambda x: x * a + x * b)(np.ones(4)).jaxpr
    assert len(jaxpr.constvars) == 1 and len(jaxpr.eqns) == 2   # x*a once, then the sum
