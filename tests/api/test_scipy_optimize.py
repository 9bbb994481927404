"""zerax.scipy.optimize: minimize (BFGS step for step as jax.scipy.optimize.minimize,
L-BFGS, Newton-CG, trust-ncg) and least_squares (Levenberg-Marquardt).

BFGS reference values were recorded once with jax.scipy.optimize.minimize(method='BFGS')
(JAX 0.10, jax_enable_x64, CPU); least_squares' with scipy.optimize.least_squares(
method='lm', xtol=ftol=gtol=1e-12) (SciPy 1.x).  Neither is a test dependency.
"""

import numpy as np
import pytest

import zerax.numpy as znp
from zerax import errors
from zerax.scipy.optimize import OptimizeResults, least_squares, line_search, minimize


def rosen(x):
    return znp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quartic(x):
    return (znp.sum(znp.arange(1.0, 5.0) * (x - 1.5) ** 2) + x[0] * x[1]
            + 0.01 * znp.sum(x ** 4))


# (fun, x0) -> x, success, status, nit, nfev, njev, fun from jax.scipy BFGS
JAX_BFGS = [
    (rosen, [-1.2, 1.0], [-0.2778069614751315, 0.043338775200157394], False, 3, 8, 17, 17,
     1.7472911993555371),
    (rosen, [0.5, 0.5, 0.5], [0.9684639200502567, 0.933206720793092, 0.8658402610285096],
     False, 3, 13, 23, 23, 0.010214237872033176),
    (quartic, [0.0, 0.0, 0.0, 0.0],
     [0.8544813357911424, 1.266084372647131, 1.4784555953353147, 1.4836701692101875], True,
     0, 9, 12, 12, 1.7376929087712032),
]


@pytest.mark.parametrize("case", range(len(JAX_BFGS)))
def test_bfgs_matches_jax_step_for_step(case):
    """Including JAX's line-search failures (status 3): the same iterates, counts and
    status codes."""
    fun, x0, x, success, status, nit, nfev, njev, f = JAX_BFGS[case]
    res = minimize(fun, znp.asarray(x0), method="BFGS")
    assert isinstance(res, OptimizeResults)
    assert res._fields == ("x", "success", "status", "fun", "jac", "hess_inv", "nfev",
                           "njev", "nit")
    np.testing.assert_allclose(np.asarray(res.x), x, rtol=1e-10)
    assert (bool(res.success), int(res.status), int(res.nit), int(res.nfev),
            int(res.njev)) == (success, status, nit, nfev, njev)
    assert float(res.fun) == pytest.approx(f, rel=1e-10)
    assert res.hess_inv.shape == (len(x0), len(x0))
    if case == 2:   # JAX's minimize ignores tol for BFGS; options['gtol'] is the knob
        assert int(minimize(fun, znp.asarray(x0), method="BFGS", tol=1e-14).nit) == nit
        assert int(minimize(fun, znp.asarray(x0), method="BFGS",
                            options={"gtol": 1e-3}).nit) < nit


@pytest.mark.parametrize("method", ["L-BFGS", "Newton-CG", "trust-ncg"])
@pytest.mark.parametrize("x0", [[-1.2, 1.0], [0.0] * 6])
def test_second_order_methods_solve_rosenbrock(method, x0):
    res = minimize(rosen, znp.asarray(x0), method=method)
    assert bool(res.success) and int(res.status) == 0
    np.testing.assert_allclose(np.asarray(res.x), np.ones(len(x0)), atol=1e-4)
    assert float(res.fun) < 1e-8
    if method != "L-BFGS":     # L-BFGS may stop on SciPy's relative-decrease test (ftol)
        assert np.max(np.abs(np.asarray(res.jac))) < 1e-5
    assert int(res.nfev) >= int(res.nit) > 0


def test_args_tol_and_logistic_regression():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.randn(40) > 0).astype(float)

    def nll(w, X, y, lam):
        z = X @ w
        return znp.sum(znp.logaddexp(0.0, z) - y * z) + lam * znp.sum(w ** 2)
    results = {m: minimize(nll, znp.zeros(3), (X, y, 0.1), method=m, tol=1e-9)
               for m in ("BFGS", "L-BFGS", "Newton-CG", "trust-ncg")}
    # BFGS (as JAX's) may end on a line-search failure this close to gtol=1e-9
    assert all(bool(r.success) for m, r in results.items() if m != "BFGS")
    sols = [np.asarray(r.x) for r in results.values()]
    # independent reference: Newton's method in NumPy
    w = np.zeros(3)
    for _ in range(30):
        p = 1 / (1 + np.exp(-X @ w))
        g = X.T @ (p - y) + 0.2 * w
        H = X.T @ (X * (p * (1 - p))[:, None]) + 0.2 * np.eye(3)
        w = w - np.linalg.solve(H, g)
    for s in sols:
        np.testing.assert_allclose(s, w, rtol=1e-6, atol=1e-7)


def test_line_search_wolfe_conditions():
    x = znp.asarray([-1.2, 1.0])
    g = np.array([-215.6, -88.0])
    res = line_search(rosen, x, -g)
    a = float(res.a_k)
    f0, f1 = float(rosen(x)), float(res.f_k)
    assert not bool(res.failed) and a > 0
    assert f1 <= f0 + 1e-4 * a * float(-g @ g)                         # sufficient decrease
    assert abs(float(np.asarray(res.g_k) @ -g)) <= 0.9 * float(g @ g)   # curvature


def test_least_squares_levenberg_marquardt_matches_scipy():
    t = np.arange(6.0)
    y = 2.5 * np.exp(-0.4 * t) + 0.3 + 0.01 * np.sin(3 * t)
    res = least_squares(lambda p: p[0] * znp.exp(p[1] * t) + p[2] - y,
                        znp.asarray([1.0, 0.0, 0.0]), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    np.testing.assert_allclose(np.asarray(res.x), [2.4934361347562475, -0.40224835997915304,
                                                   0.3073479009427433], rtol=1e-8)
    assert float(res.cost) == pytest.approx(4.328139583360375e-05, rel=1e-9)
    assert bool(res.success) and int(res.status) in (1, 2, 3)
    np.testing.assert_allclose(np.asarray(res.grad),
                               np.asarray(res.jac).T @ np.asarray(res.fun), rtol=1e-12)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(errors.ZeraxValueError, match="not recognized"):
        minimize(rosen, znp.zeros(2), method="Nelder-Mead")
    with pytest.raises(errors.ShapeError, match="1-D"):
        minimize(rosen, znp.zeros((2, 2)), method="BFGS")
    with pytest.raises(errors.ZeraxTypeError, match="tuple"):
        minimize(rosen, znp.zeros(2), args=[1], method="BFGS")
    with pytest.raises(errors.ZeraxTypeError, match="unknown option"):
        minimize(rosen, znp.zeros(2), method="BFGS", options={"bogus": 1})
