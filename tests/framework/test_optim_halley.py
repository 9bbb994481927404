"""`zerax.optim.householder_root` and `scale_by_halley_linesearch`: against the same
iterations in NumPy on closed-form derivatives, their order of convergence, exact line
minimisation (quadratics in one step, a line minimum found by bisection in NumPy),
the Armijo safeguard, jit, and a full descent against Newton's method in NumPy."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
import zerax.optim as optim
from zerax import errors


def _householder_numpy(derivs, x, order, maxiter=50, xtol=1.48e-8):
    """Householder's method in NumPy: the derivatives of 1/f by the quotient rule written
    out (Faa di Bruno through the series of 1/f, on closed-form derivatives of f)."""
    xs = [x]
    for _ in range(maxiter):
        d = derivs(x)
        if d[0] == 0:
            break
        c = [d[k] / math.factorial(k) for k in range(order + 1)]
        r = [1.0 / c[0]]
        for k in range(1, order + 1):
            r.append(-sum(c[j] * r[k - j] for j in range(1, k + 1)) / c[0])
        dx = r[order - 1] / r[order]
        x = x + dx
        xs.append(x)
        if abs(dx) <= xtol:
            break
    return xs


def _cos_derivs(x):   # f = cos(x) - x
    return [math.cos(x) - x, -math.sin(x) - 1, -math.cos(x), math.sin(x), math.cos(x)]


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_householder_against_numpy(order):
    want = _householder_numpy(_cos_derivs, 1.0, order)
    r = optim.householder_root(lambda x: znp.cos(x) - x, 1.0, order=order)
    assert int(r.iterations) == len(want) - 1
    np.testing.assert_allclose(float(r.root), want[-1], rtol=1e-15)
    assert bool(r.converged) and abs(float(r.value)) < 1e-15


def test_order_of_convergence():
    # e_{n+1} ~ C e_n^(d+1): log(e_{n+1}/e_n) / log(e_n/e_{n-1}) approaches d + 1
    root = 0.7390851332151607
    for order in (1, 2, 3, 4):
        errs = [abs(x - root) for x in _householder_numpy(_cos_derivs, 2.0, order)]
        errs = [e for e in errs if e > 1e-14]
        rates = [math.log(c / b) / math.log(b / a) for a, b, c in zip(errs, errs[1:], errs[2:])]
        assert rates and abs(rates[-1] - (order + 1)) < 0.5, (order, rates)
        # and zerax's iterates are those
        its = [int(optim.householder_root(lambda x: znp.cos(x) - x, 2.0, order=order,
                                          maxiter=n).iterations) for n in (1, 2)]
        assert its == [1, 2]


@settings(max_examples=10, deadline=None)
@given(st.floats(0.5, 40.0))
def test_householder_roots_of_a_parameter_under_jit(a):
    solve = zx.jit(lambda a: optim.householder_root(lambda x: x ** 3 - a, 1.0, order=2).root)
    np.testing.assert_allclose(float(solve(a)), a ** (1 / 3), rtol=1e-12)


def test_householder_errors():
    with pytest.raises(errors.ZeraxValueError, match="order"):
        optim.householder_root(znp.sin, 1.0, order=0)


# ----------------------------------------------------------------------------- line search

def _step(opt, f, x, **kw):
    state = opt.init(x)
    u, state = opt.update(zx.grad(f)(x), state, x, value_fn=f, **kw)
    return optim.apply_updates(x, u), state


def test_quadratic_line_minimum_in_one_halley_step():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    f = lambda x: 0.5 * x @ a @ x - x @ np.array([1.0, -1.0])  # noqa: E731
    x0 = znp.array([2.0, -1.0])
    g = a @ np.asarray(x0) - np.array([1.0, -1.0])
    t = g @ g / (g @ a @ g)          # the exact step along -g
    x1, state = _step(optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch()), f, x0)
    np.testing.assert_allclose(np.asarray(x1), np.asarray(x0) - t * g, rtol=1e-13)
    assert int(state[1].iterations) <= 2


def _line_minimum_numpy(x0, d, c):
    """The step t > 0 with phi'(t) = 0 along d, by bisection in NumPy, for
    f(x) = sum(exp(c x) - 2 x) + cosh(x[0])."""
    def dphi(t):
        x = x0 + t * d
        g = c * np.exp(c * x) - 2.0
        g[0] += np.sinh(x[0])
        return g @ d
    lo, hi = 0.0, 1.0
    while dphi(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dphi(mid) < 0 else (lo, mid)
    return lo


def _convex(c):
    return lambda x: znp.sum(znp.exp(c * x) - 2.0 * x) + znp.cosh(x[0])   # one minimum


@settings(max_examples=8, deadline=None)
@given(st.floats(-2, 2), st.floats(-2, 2), st.floats(0.5, 3.0))
def test_line_minimum_against_bisection(a, b, c):
    f = _convex(c)
    x0 = znp.array([a, b])
    d = -np.asarray(zx.grad(f)(x0))
    assume(np.linalg.norm(d) > 1e-3)    # (at a stationary point every step is a minimum)
    x1, state = _step(optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch()), f, x0)
    np.testing.assert_allclose(float(state[1].stepsize),
                               _line_minimum_numpy(np.asarray(x0), d, c), rtol=1e-7)


def test_line_search_converged_at_rounding_level_stays():
    # from (1, 1) with c = 3 the search brackets, bisects, then Halley converges; a last
    # step below rounding must end it, not restart bisection
    f, x0 = _convex(3.0), znp.array([1.0, 1.0])
    d = -np.asarray(zx.grad(f)(x0))
    _, state = _step(optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch()), f, x0)
    np.testing.assert_allclose(float(state[1].stepsize),
                               _line_minimum_numpy(np.asarray(x0), d, 3.0), rtol=1e-12)
    assert int(state[1].iterations) < 15


def test_armijo_safeguard_and_an_ascent_direction():
    f = lambda x: znp.sum(znp.cos(x))  # noqa: E731  (phi'' < 0 near the start)
    x0 = znp.array([3.0])
    opt = optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch())
    x1, state = _step(opt, f, x0)
    assert float(f(x1)) <= float(f(x0))          # never worse
    # an ascent direction: no step passes Armijo's test, the step is 0
    up = optim.chain(optim.sgd(-1.0), optim.scale_by_halley_linesearch(max_backtracking_steps=5))
    x1, state = _step(up, lambda x: znp.sum(x * x), znp.array([1.0]))
    assert float(state[1].stepsize) == 0.0 and float(x1[0]) == 1.0


def test_descent_with_extra_args_under_jit():
    # logistic regression: steepest descent with exact line search, against Newton in NumPy
    rng = np.random.RandomState(0)
    X = rng.randn(30, 2)
    y = (X @ np.array([1.5, -1.0]) > 0).astype(float)

    def loss(w, batch):
        Xb, yb = batch
        z = Xb @ w
        return znp.sum(znp.logaddexp(0.0, z) - yb * z) + 0.5 * znp.sum(w ** 2)
    opt = optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch())

    @zx.jit
    def step(w, state):
        g = zx.grad(loss)(w, (X, y))
        u, state = opt.update(g, state, w, value_fn=loss, batch=(X, y))
        return optim.apply_updates(w, u), state
    w, state = znp.zeros(2), opt.init(znp.zeros(2))
    for _ in range(60):
        w, state = step(w, state)
    v = np.zeros(2)
    for _ in range(30):
        p = 1 / (1 + np.exp(-X @ v))
        H = X.T @ (X * (p * (1 - p))[:, None]) + np.eye(2)
        v = v - np.linalg.solve(H, X.T @ (p - y) + v)
    np.testing.assert_allclose(np.asarray(w), v, rtol=1e-6)
    with pytest.raises(errors.ZeraxTypeError, match="value_fn"):
        opt.update(zx.grad(loss)(w, (X, y)), opt.init(w), w)
