"""Derivatives that were wrong at ties and singular points (issue 14): logaddexp and
logaddexp2 at x1 == x2, hypot at |x1| == |x2|, x ** 0.0 at 0.  References are closed forms."""

import math

import numpy as np
import pytest

import zerax
import zerax.numpy as znp
from zerax.test_util import check_grads


@pytest.mark.parametrize("f", [znp.logaddexp, znp.logaddexp2])
def test_logaddexp_tie_partials_are_halves(f):
    for x in (-3.0, 0.0, 1.5):
        g = zerax.grad(f, argnums=(0, 1))(x, x)
        np.testing.assert_allclose([float(g[0]), float(g[1])], [0.5, 0.5], rtol=1e-15)
        gj = zerax.jit(zerax.grad(f, argnums=(0, 1)))(x, x)
        np.testing.assert_allclose([float(gj[0]), float(gj[1])], [0.5, 0.5], rtol=1e-15)


def test_logaddexp_second_derivatives_at_tie():
    # d2/dx1^2 log(e^x1 + e^x2) = s(1 - s), s = sigmoid(x1 - x2) = 1/2 at a tie.
    h = zerax.hessian(znp.logaddexp, argnums=(0, 1))(0.7, 0.7)
    np.testing.assert_allclose(np.array(h, dtype=float), [[0.25, -0.25], [-0.25, 0.25]],
                               rtol=1e-14)
    # logaddexp2(x, y) = logaddexp(x ln2, y ln2) / ln2: the Hessian scales by ln2.
    h2 = zerax.hessian(znp.logaddexp2, argnums=(0, 1))(0.7, 0.7)
    np.testing.assert_allclose(np.array(h2, dtype=float),
                               np.log(2) * np.array([[0.25, -0.25], [-0.25, 0.25]]), rtol=1e-14)


@pytest.mark.parametrize("f,ref", [(znp.logaddexp, np.logaddexp),
                                   (znp.logaddexp2, np.logaddexp2)])
def test_logaddexp_values_grads_vmap(f, ref):
    x = np.array([-800.0, -1.0, 0.0, 2.0, 700.0, 3.0, -np.inf, np.inf, -np.inf])
    y = np.array([-799.0, 4.0, 0.0, -5.0, 710.0, 3.0, 1.0, np.inf, -np.inf])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(np.asarray(f(x, y)), ref(x, y), rtol=1e-15)
        np.testing.assert_allclose(np.asarray(zerax.jit(f)(x, y)), ref(x, y), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(zerax.vmap(f)(x[:6], y[:6])), ref(x[:6], y[:6]),
                               rtol=1e-15)
    for a, b in [(0.3, -1.2), (2.0, 2.0), (-4.0, 1.0)]:
        check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
    # sigmoid partials, off ties too
    g = zerax.vmap(zerax.grad(f, argnums=(0, 1)))(x[1:6], y[1:6])
    scale = 1.0 if f is znp.logaddexp else math.log(2)
    s = 1 / (1 + np.exp(-(x[1:6] - y[1:6]) * scale))
    np.testing.assert_allclose(np.asarray(g[0]), s, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g[1]), 1 - s, rtol=1e-12)


def test_hypot_second_derivative_at_tie():
    # d2/dx2 sqrt(x^2 + y^2) = y^2 / r^3; at (2, 2): 4 / 8**1.5 = 0.1767766952966369.
    expected = 4.0 / 8.0 ** 1.5
    for fn in (zerax.grad(zerax.grad(znp.hypot)), zerax.jit(zerax.grad(zerax.grad(znp.hypot)))):
        np.testing.assert_allclose(float(fn(2.0, 2.0)), expected, rtol=1e-14)
    np.testing.assert_allclose(float(zerax.grad(zerax.grad(znp.hypot))(-2.0, 2.0)), expected,
                               rtol=1e-14)
    h = zerax.hessian(znp.hypot, argnums=(0, 1))(3.0, -3.0)
    r3 = 18.0 ** 1.5
    np.testing.assert_allclose(np.array(h, dtype=float),
                               [[9 / r3, 9 / r3], [9 / r3, 9 / r3]], rtol=1e-14)
    check_grads(znp.hypot, (2.0, 2.0), order=2, modes=("fwd", "rev"))
    check_grads(znp.hypot, (1.0, -3.5), order=2, modes=("fwd", "rev"))


def test_hypot_values_unchanged():
    x = np.array([3.0, -1e300, 0.0, np.inf, np.nan, 2.0])
    y = np.array([4.0, 1e300, 0.0, np.nan, -np.inf, 2.0])
    np.testing.assert_array_equal(np.asarray(znp.hypot(x, y)), np.hypot(x, y))
    np.testing.assert_array_equal(np.asarray(zerax.jit(znp.hypot)(x, y)), np.hypot(x, y))


def test_power_zero_exponent_derivatives_at_zero():
    f = lambda x: x ** 0.0  # noqa: E731
    for fn in (zerax.grad(f), zerax.grad(zerax.grad(f)), zerax.grad(zerax.grad(zerax.grad(f))),
               zerax.jit(zerax.grad(zerax.grad(f)))):
        assert float(fn(0.0)) == 0.0
    assert float(zerax.jvp(zerax.grad(f), (0.0,), (1.0,))[1]) == 0.0
    # elsewhere x ** y keeps its derivatives: d2/dx2 x**2.5 = 3.75 x**0.5
    np.testing.assert_allclose(float(zerax.grad(zerax.grad(lambda x: x ** 2.5))(4.0)), 7.5)
    check_grads(lambda x, y: x ** y, (1.3, 0.0), order=2, modes=("fwd", "rev"))
    check_grads(lambda x, y: x ** y, (0.8, 2.2), order=2, modes=("fwd", "rev"))
