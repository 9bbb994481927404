"""Complex inputs to the transcendental functions (issue 14): exp, log, sin, cos, tan,
sinh, cosh, tanh, sqrt, log1p, expm1, power and abs.

Values are NumPy's (branch cuts included); ``grad(..., holomorphic=True)`` is the analytic
derivative; gradients of real losses of complex inputs are JAX's (df/dx - i df/dy, and
conj(z)/|z| for |z|), recorded with jax 0.10.2 (x64) and pasted below."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors

FUNCS = ["exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sqrt", "log1p", "expm1"]

# d/dz of each function, in NumPy (the analytic derivatives)
DERIV = {
    "exp": np.exp, "log": lambda z: 1 / z, "sin": np.cos, "cos": lambda z: -np.sin(z),
    "tan": lambda z: 1 / np.cos(z) ** 2, "sinh": np.cosh, "cosh": np.sinh,
    "tanh": lambda z: 1 / np.cosh(z) ** 2, "sqrt": lambda z: 0.5 / np.sqrt(z),
    "log1p": lambda z: 1 / (1 + z), "expm1": np.exp,
}

Z = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.5j, -0.4 - 0.9j])

# Points on and beside the branch cuts (log, sqrt: the negative real axis; log1p: below
# -1), with both signs of zero: NumPy's side of each cut.
CUTS = np.array([complex(-2.0, 0.0), complex(-2.0, -0.0), complex(-0.5, 0.0),
                 complex(-0.5, -0.0), complex(0.0, 0.0), complex(0.0, -0.0),
                 complex(-3.0, 1e-300), complex(-3.0, -1e-300), complex(2.0, 0.0)])


def _parts(lo=-2.0, hi=2.0):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


# values away from the branch cuts: real part > -0.9 keeps log1p (cut at re < -1) and
# log/sqrt (cut at re < 0, im = 0) a distance from them when |im| >= 0.05
_away = st.tuples(_parts(-0.9, 2.0), _parts(0.05, 2.0), st.booleans()).map(
    lambda t: complex(t[0], t[1] if t[2] else -t[1]))


@settings(max_examples=40, deadline=None)
@given(st.lists(_away, min_size=1, max_size=5))
def test_values_match_numpy(zs):
    z = np.array(zs)
    for name in FUNCS:
        got = getattr(znp, name)(z)
        assert got.dtype == np.complex128, name
        np.testing.assert_allclose(np.asarray(got), getattr(np, name)(z), rtol=1e-13,
                                   atol=1e-15, err_msg=name)
    np.testing.assert_allclose(np.asarray(znp.abs(z)), np.abs(z), rtol=1e-15)
    assert znp.abs(z).dtype == np.float64
    w = z[::-1] * 0.5
    np.testing.assert_allclose(np.asarray(znp.power(z, w)), np.power(z, w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(z ** znp.asarray(w)), np.power(z, w), rtol=1e-12)


def test_complex64_and_mixed_dtypes():
    z = Z.astype(np.complex64)
    for name in FUNCS:
        got = getattr(znp, name)(z)
        assert got.dtype == np.complex64, name
        np.testing.assert_allclose(np.asarray(got), getattr(np, name)(z), rtol=2e-6,
                                   atol=1e-6, err_msg=name)
    assert znp.abs(z).dtype == np.float32
    # NumPy 2's promotion: a real array to a complex power, a complex array to a real one
    x = np.array([0.5, 1.5, 2.5, 3.5])
    for a, b in [(x, Z), (Z, x), (Z, 2.5), (Z, 3), (Z, -2), (2.0, Z), (Z, 1j)]:
        got = znp.power(a, b)
        want = np.power(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_branch_cuts_as_numpy():
    with np.errstate(all="ignore"):
        for name in ["log", "sqrt", "log1p"]:
            want = getattr(np, name)(CUTS)
            np.testing.assert_array_equal(np.asarray(getattr(znp, name)(CUTS)), want)
            got = np.asarray(zx.jit(getattr(znp, name))(CUTS))
            np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=name)
            # the side of the cut is the sign of the imaginary part, as NumPy's
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def _all_functions(z, w):
    out = [getattr(znp, name)(z) for name in FUNCS]
    return out + [znp.abs(z), znp.power(z, w), z ** 3, z ** -2, z ** 2.5]


def _all_functions_np(z, w):
    out = [getattr(np, name)(z) for name in FUNCS]
    return out + [np.abs(z), np.power(z, w), z ** 3, z ** -2.0, z ** 2.5]


_JIT_ALL = zx.jit(_all_functions)

_INF, _NAN = np.inf, np.nan
_GRID = [0.0, -0.0, 1.0, -2.5, 30.0, -30.0, _INF, -_INF, _NAN]
# large, tiny and non-finite parts, where naive complex formulas overflow to nan or
# lose digits: the compiled code keeps NumPy's values (and signs of zeros/infinities)
EDGES = np.array([1e-10 + 1e-10j, -1e-12 + 3e-9j, 1e-5 - 2e-7j, 400 + 1j, -400 + 0.5j,
                  1 + 400j, 1 - 400j, 710 + 0j, 710 + 1j, 720 + 0.3j, 1500 + 1j, 0 + 800j,
                  22.5 + 1j, -23 + 1e-300j, 0.5 + 30j]
                 + [complex(a, b) for a in _GRID for b in _GRID])


def _same(got, want, rtol):
    """Equal parts with equal signs, or both nan, or close (finite parts)."""
    def part(g, e):
        exact = (g == e) & (np.signbit(g) == np.signbit(e))
        return exact | (np.isnan(g) & np.isnan(e)) | (np.isfinite(e) & np.isclose(g, e, rtol=rtol, atol=0))
    return part(got.real, want.real) & part(got.imag, want.imag)


def test_jit_matches_eager():
    z = np.concatenate([Z, EDGES])
    w = np.concatenate([Z[::-1] * 0.5, np.ones(len(EDGES), complex)])
    got = _JIT_ALL(z, w)
    with np.errstate(all="ignore"):
        want = _all_functions_np(z, w)
    n = len(Z)
    for k, (g, e) in enumerate(zip(got, want)):
        assert g.dtype == e.dtype, k
        g = np.asarray(g)
        np.testing.assert_allclose(g[:n], e[:n], rtol=1e-13, atol=1e-15, err_msg=str(k))
        if k < len(FUNCS) + 1:        # the functions and abs on the edge values too
            ok = _same(np.asarray(g[n:], complex), np.asarray(e[n:], complex), 1e-13)
            assert ok.all(), (k, EDGES[~ok], g[n:][~ok], e[n:][~ok])


def test_vmap_matches_stacking():
    zs = np.stack([Z, Z * 0.5 + 0.1j])
    w = np.array([0.5 - 0.25j, 1.5, 2.0 + 1j, -0.5j])
    got = zx.vmap(_all_functions, in_axes=(0, None))(zs, w)
    for k in range(len(got)):
        want = np.stack([np.asarray(_all_functions(z, w)[k]) for z in zs])
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-14, err_msg=str(k))


@pytest.mark.parametrize("name", FUNCS)
def test_holomorphic_derivatives(name):
    f = getattr(znp, name)
    g = zx.grad(f, holomorphic=True)
    for z in Z:
        np.testing.assert_allclose(complex(g(z)), DERIV[name](z), rtol=1e-12)
    # forward mode: the JVP is the derivative times the tangent
    t = 0.3 - 0.8j
    _, tan = zx.jvp(f, (Z,), (np.full_like(Z, t),))
    np.testing.assert_allclose(np.asarray(tan), DERIV[name](Z) * t, rtol=1e-12)


def test_holomorphic_second_derivatives_and_jit():
    d2 = zx.grad(zx.grad(znp.sqrt, holomorphic=True), holomorphic=True)
    np.testing.assert_allclose(complex(d2(Z[0])), -0.25 * Z[0] ** -1.5, rtol=1e-12)
    d2 = zx.grad(zx.grad(znp.log, holomorphic=True), holomorphic=True)
    np.testing.assert_allclose(complex(d2(Z[1])), -1 / Z[1] ** 2, rtol=1e-12)
    # one jitted, vmapped derivative of a composition of them
    f = lambda z: znp.sin(znp.exp(z)) * znp.sqrt(z) + znp.tanh(znp.log1p(z))
    df = lambda z: (np.cos(np.exp(z)) * np.exp(z) * np.sqrt(z)
                    + np.sin(np.exp(z)) * 0.5 / np.sqrt(z)
                    + (1 - np.tanh(np.log1p(z)) ** 2) / (1 + z))
    got = zx.jit(zx.vmap(zx.grad(f, holomorphic=True)))(Z)
    np.testing.assert_allclose(np.asarray(got), df(Z), rtol=1e-12)


def test_holomorphic_power():
    z, w = 0.8 + 0.6j, 1.5 - 0.5j
    dz = zx.grad(lambda a: znp.power(a, w), holomorphic=True)(z)
    dw = zx.grad(lambda b: znp.power(z, b), holomorphic=True)(w)
    np.testing.assert_allclose(complex(dz), w * z ** (w - 1), rtol=1e-12)
    np.testing.assert_allclose(complex(dw), z ** w * np.log(z), rtol=1e-12)
    d3 = zx.grad(lambda a: a ** 3, holomorphic=True)(z)
    np.testing.assert_allclose(complex(d3), 3 * z ** 2, rtol=1e-12)


# JAX 0.10.2 (jax_enable_x64): jax.grad of each loss at the point beside it.
def _loss_expconj(z):
    return (znp.exp(z) * znp.conj(znp.exp(z))).real


def _loss_mix(z):
    return znp.abs(znp.sin(z) * znp.log(z) + znp.sqrt(z)) ** 2


def _loss_mix2(z):
    return (znp.real(znp.tan(z) + znp.cosh(z) * znp.tanh(z))
            + znp.imag(znp.expm1(z) * znp.log1p(z)) + znp.abs(znp.power(z, 1.5 + 0.5j)))


def _loss_mix3(z):
    return znp.abs(znp.cos(z) - znp.sinh(z))


JAX_GRADS = [
    (lambda z: znp.abs(z), 0.3 + 0.7j, 0.3939192985791677 - 0.9191450300180579j),
    (lambda z: znp.abs(z), 0j, 0j),
    (_loss_expconj, 0.3 + 0.7j, 3.644237600781018 - 3.7468388489690485e-17j),
    (_loss_mix, 0.3 + 0.7j, 0.889047249161746 - 2.5829011651517924j),
    (_loss_mix2, 0.3 + 0.7j, 3.2948426727025644 - 0.4081032597384977j),
    (_loss_mix3, -1.1 + 0.4j, -0.6200146507680976 + 0.23609005102162883j),
]


@pytest.mark.parametrize("k", range(len(JAX_GRADS)))
def test_real_loss_gradients_as_jax(k):
    f, z, want = JAX_GRADS[k]
    got = complex(zx.grad(f)(z))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # forward mode agrees: df/dx and df/dy are jvp's along 1 and i
    dx = zx.jvp(f, (z,), (1.0 + 0j,))[1]
    dy = zx.jvp(f, (z,), (1j,))[1]
    np.testing.assert_allclose(complex(dx - 1j * dy), want, rtol=1e-12, atol=1e-15)


def test_real_loss_gradient_under_jit_and_vmap():
    zs = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.5j])
    f = lambda z: znp.sum(znp.abs(znp.exp(z) + z ** 2))
    want = [2.7565278315638104 - 0.4663432675807935j, -2.303349431843314 - 0.20336340930782565j,
            10.981783142921994 + 2.7209036610522173j]   # jax.grad, recorded
    np.testing.assert_allclose(np.asarray(zx.grad(f)(zs)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(zx.jit(zx.grad(f))(zs)), want, rtol=1e-12)


def test_other_functions_still_refuse_complex():
    # (arcsin, log2, ... take complex inputs now: tests/test_complex_inverse.py)
    with pytest.raises(errors.ZeraxTypeError, match="cbrt"):
        znp.cbrt(Z)


def test_real_losses_check_grads_order_2():
    # as functions of the real and imaginary parts, so that finite differences probe
    # both directions of each complex input
    from zerax.test_util import check_grads
    x, y = np.array([0.3, -1.2]), np.array([0.7, 0.4])
    for loss in (_loss_mix, _loss_mix2, _loss_mix3):
        check_grads(lambda a, b, f=loss: znp.sum(f(zx.lax.complex(a, b))), (x, y), order=2,
                    modes=("fwd", "rev"))


def test_isinf_of_complex_is_either_part_infinite():
    # NumPy's rule: isinf(complex(nan, inf)) is True (a nan part does not hide the other)
    z = np.array([complex(np.nan, np.inf), complex(np.inf, np.nan), 1 + 2j,
                  complex(np.nan, 0.0), complex(-np.inf, 1.0), complex(0.0, -np.inf)])
    for got in (znp.isinf(z), zx.jit(znp.isinf)(z)):
        np.testing.assert_array_equal(np.asarray(got), np.isinf(z))
