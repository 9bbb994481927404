"""zerax.optim's second-order methods: newton_cg, hessian_free, gauss_newton,
levenberg_marquardt (against NumPy linear algebra and known minimisers) and the
Hutchinson-based adahessian and sophia (against their update formulas)."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
import zerax.optim as optim
from zerax import errors

RNG = np.random.RandomState(0)
_M = RNG.randn(4, 4)
H = _M @ _M.T + 4 * np.eye(4)           # symmetric positive definite
B = RNG.randn(4)


def quad(p):
    x = znp.concatenate([p["a"], p["b"]])
    return 0.5 * x @ (H @ x) - B @ x


P0 = {"a": znp.zeros(2), "b": znp.zeros(2)}


def flat(p):
    return np.concatenate([np.asarray(p["a"]), np.asarray(p["b"])])


def test_newton_cg_solves_a_quadratic_in_one_step():
    opt = optim.newton_cg(maxiter=10, tol=1e-12)
    u, state = opt.update(zx.grad(quad)(P0), opt.init(P0), P0, value_fn=quad)
    np.testing.assert_allclose(flat(optim.apply_updates(P0, u)), np.linalg.solve(H, B),
                               rtol=1e-10)
    assert int(state.cg_iterations) <= 4 and float(state.stepsize) == 1.0
    assert not bool(state.negative_curvature)


def test_newton_cg_damping_and_truncation():
    lam = 0.7
    opt = optim.newton_cg(maxiter=50, tol=1e-13, damping=lam, linesearch=False)
    u, _ = opt.update(zx.grad(quad)(P0), opt.init(P0), P0, value_fn=quad)
    np.testing.assert_allclose(flat(u), np.linalg.solve(H + lam * np.eye(4), B), rtol=1e-10)
    # one CG iteration is the Cauchy point along -g
    opt1 = optim.newton_cg(maxiter=1, linesearch=False)
    u1, s1 = opt1.update(zx.grad(quad)(P0), opt1.init(P0), P0, value_fn=quad)
    g = -B
    np.testing.assert_allclose(flat(u1), -(g @ g) / (g @ H @ g) * g, rtol=1e-12)
    assert int(s1.cg_iterations) == 1


def test_newton_cg_negative_curvature_falls_back_to_descent():
    def saddle(x):
        return x[0] ** 2 - x[1] ** 2 + 0.1 * x[1]
    opt = optim.newton_cg()
    x = znp.asarray([1.0, 0.0])
    u, s = opt.update(zx.grad(saddle)(x), opt.init(x), x, value_fn=saddle)
    assert float(saddle(x + u)) < float(saddle(x))
    assert float(s.value) == pytest.approx(float(saddle(x + u)))


def _rosen(x):
    return znp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_newton_cg_converges_on_rosenbrock_and_extra_args_reach_value_fn():
    opt = optim.newton_cg(maxiter=20)

    def loss(x, scale):
        return scale * _rosen(x)
    x = znp.asarray([-1.2, 1.0])
    state = opt.init(x)
    for _ in range(40):
        u, state = opt.update(zx.grad(loss)(x, 2.0), state, x, value_fn=loss, scale=2.0)
        x = optim.apply_updates(x, u)
    np.testing.assert_allclose(np.asarray(x), [1.0, 1.0], atol=1e-8)
    with pytest.raises(errors.ZeraxTypeError, match="bogus"):
        opt.update(zx.grad(_rosen)(x), state, x, value_fn=_rosen, bogus=1)


def test_newton_cg_step_jits_with_its_cg_loop():
    opt = optim.newton_cg(maxiter=8)
    step = zx.jit(lambda g, s, p: opt.update(g, s, p, value_fn=_rosen))
    x = znp.asarray([-1.2, 1.0, 0.5])
    s = opt.init(x)
    g = zx.grad(_rosen)(x)
    u_e, s_e = opt.update(g, s, x, value_fn=_rosen)
    u_j, s_j = step(g, s, x)
    np.testing.assert_allclose(np.asarray(u_j), np.asarray(u_e), rtol=1e-12)
    assert int(s_j.cg_iterations) == int(s_e.cg_iterations)
    assert "while" in str(zx.make_jaxpr(lambda g, s, p: opt.update(g, s, p,
                                                                    value_fn=_rosen))(g, s, x))


# ----------------------------------------------------------------------------- least squares

A = RNG.randn(6, 3)
Y = RNG.randn(6)


def linear_residual(p):
    return A @ p - Y


def test_gauss_newton_solves_linear_least_squares_in_one_step():
    opt = optim.gauss_newton()
    x = znp.zeros(3)
    u, s = opt.update(None, opt.init(x), x, residual_fn=linear_residual)
    np.testing.assert_allclose(np.asarray(u), np.linalg.lstsq(A, Y, rcond=None)[0],
                               rtol=1e-10)
    assert float(s.value) == pytest.approx(0.5 * Y @ Y)


def test_hessian_free_gauss_newton_products_and_damping_adaptation():
    lam = 0.5
    opt = optim.hessian_free(damping=lam, tol=1e-14)
    x = znp.zeros(3)
    f = lambda p: 0.5 * znp.sum(linear_residual(p) ** 2)  # noqa: E731
    u, s = opt.update(zx.grad(f)(x), opt.init(x), x, residual_fn=linear_residual)
    np.testing.assert_allclose(np.asarray(u), np.linalg.solve(A.T @ A + lam * np.eye(3), A.T @ Y),
                               rtol=1e-9)
    d = np.asarray(u)
    g = -A.T @ Y
    pred = g @ d + 0.5 * d @ (A.T @ A) @ d
    actual = 0.5 * np.sum((A @ d - Y) ** 2) - 0.5 * Y @ Y
    assert float(s.rho) == pytest.approx(actual / pred, rel=1e-10)
    # a quadratic model that is exact gives rho = 1 > 3/4: the damping shrinks
    assert float(s.damping) == pytest.approx(lam * 2 / 3)


@pytest.mark.parametrize("kind", ["residual", "value"])
def test_hessian_free_minimises_rosenbrock(kind):
    def r(x):
        return znp.stack([1.0 - x[0], 10.0 * (x[1] - x[0] ** 2)])

    def f(x):
        return 0.5 * znp.sum(r(x) ** 2)
    opt = optim.hessian_free()
    x = znp.asarray([-1.2, 1.0])
    s = opt.init(x)
    kw = {"residual_fn": r} if kind == "residual" else {"value_fn": f}
    for _ in range(40):
        u, s = opt.update(zx.grad(f)(x), s, x, **kw)
        x = optim.apply_updates(x, u)
    np.testing.assert_allclose(np.asarray(x), [1.0, 1.0], atol=1e-7)


def test_levenberg_marquardt_fits_an_exponential_pytree():
    t = np.linspace(0, 2, 8)
    y = 3.0 * np.exp(-1.3 * t)

    def residual(p):
        return p["amp"] * znp.exp(p["rate"] * t) - y
    opt = optim.levenberg_marquardt(scale_by_diagonal=True)
    p = {"amp": znp.asarray(1.0), "rate": znp.asarray(0.0)}
    s = opt.init(p)
    values = []
    for _ in range(40):
        u, s = opt.update(None, s, p, residual_fn=residual)
        p = optim.apply_updates(p, u)
        values.append(float(s.value))
    assert float(p["amp"]) == pytest.approx(3.0, rel=1e-8)
    assert float(p["rate"]) == pytest.approx(-1.3, rel=1e-8)
    assert all(b <= a for a, b in zip(values, values[1:]))   # never accepts an increase
    with pytest.raises(errors.ZeraxTypeError, match="residual_fn"):
        opt.update(None, s, p)


# ----------------------------------------------------------------------------- Hutchinson

D = np.array([1.0, 4.0, 9.0])


def diag_quad(x):
    return 0.5 * znp.sum(D * x ** 2)


def test_adahessian_first_step_formula():
    # with a diagonal Hessian, z * (H z) = diag(H) exactly for Rademacher z
    lr, eps = 0.1, 1e-4
    opt = optim.adahessian(lr, eps=eps, weight_decay=0.01, seed=3)
    x = znp.asarray([1.0, -1.0, 0.5])
    g = zx.grad(diag_quad)(x)
    u, s = opt.update(g, opt.init(x), x, value_fn=diag_quad)
    expect = -lr * (np.asarray(g) / (np.abs(D) + eps) + 0.01 * np.asarray(x))
    np.testing.assert_allclose(np.asarray(u), expect, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(s.nu), 0.001 * D ** 2, rtol=1e-12)


def test_sophia_formula_refresh_and_determinism():
    lr, gamma = 0.1, 0.05
    opt = optim.sophia(lr, b1=0.9, b2=0.99, gamma=gamma, update_hessian_every=2, seed=1)
    x = znp.asarray([1.0, -1.0, 0.5])
    s = opt.init(x)
    g = zx.grad(diag_quad)(x)
    u, s = opt.update(g, s, x, value_fn=diag_quad)
    m = 0.1 * np.asarray(g)
    h = 0.01 * D
    np.testing.assert_allclose(np.asarray(u), -lr * np.clip(m / np.maximum(gamma * h, 1e-12),
                                                            -1, 1), rtol=1e-12)
    u2, s2 = opt.update(g, s, x, value_fn=diag_quad)       # step 2: Hessian not refreshed
    np.testing.assert_array_equal(np.asarray(s2.hessian), np.asarray(s.hessian))
    _, s3 = opt.update(g, s2, x, value_fn=diag_quad)        # step 3: refreshed
    np.testing.assert_allclose(np.asarray(s3.hessian), 0.99 * h + 0.01 * D, rtol=1e-12)
    # the probes are a pure function of the seed
    u_again, _ = optim.sophia(lr, b1=0.9, b2=0.99, gamma=gamma, update_hessian_every=2,
                              seed=1).update(g, opt.init(x), x, value_fn=diag_quad)
    np.testing.assert_array_equal(np.asarray(u_again), np.asarray(u))


def test_hutchinson_estimate_is_unbiased_for_a_full_hessian():
    # adahessian's nu after one step with b2 = 0 is (z * Hz)^2; average z * Hz over seeds
    Hf = np.array([[2.0, 0.5], [0.5, 1.0]])

    def f(x):
        return 0.5 * x @ (Hf @ x)
    x = znp.asarray([0.3, -0.2])
    ests = []
    for seed in range(8):
        opt = optim.sophia(1.0, b2=0.0, update_hessian_every=1, seed=seed)
        _, s = opt.update(zx.grad(f)(x), opt.init(x), x, value_fn=f)
        ests.append(np.asarray(s.hessian))
    ests = np.array(ests)
    # each estimate is diag(H) +- the off-diagonal term (z_i z_j = +-1)
    np.testing.assert_allclose(np.abs(ests - np.diag(Hf)), 0.5, rtol=1e-12)
