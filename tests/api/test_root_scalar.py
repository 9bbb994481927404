"""`zerax.scipy.optimize.root_scalar` (Newton, Halley) against SciPy's results recorded
as literals (scipy 1.x ``root_scalar`` with the derivatives given: the same roots,
iteration counts and function-call counts), with derivatives from Taylor mode, under
jit and vmap, and its errors."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.scipy.optimize import root_scalar

# name -> (f, f', f'', x0, SciPy's newton (root, iterations, calls), halley (...))
PROBLEMS = {
    "cubic": (lambda x: x ** 3 - 2 * x - 5, lambda x: 3 * x ** 2 - 2, lambda x: 6 * x, 2.0,
              (2.0945514815423265, 4, 8), (2.0945514815423265, 3, 9)),
    "cos": (lambda x: znp.cos(x) - x, lambda x: -znp.sin(x) - 1, lambda x: -znp.cos(x), 1.0,
            (0.7390851332151607, 4, 8), (0.7390851332151607, 3, 9)),
    "exp": (lambda x: znp.exp(x) - 2.0, znp.exp, znp.exp, 3.0,
            (0.6931471805599454, 7, 14), (0.6931471805599453, 4, 13)),
    "sqrt612": (lambda x: x * x - 612, lambda x: 2 * x, lambda x: 2.0 + 0 * x, 10.0,
                (24.73863375370596, 6, 12), (24.738633753705965, 5, 15)),
    "kepler": (lambda e: e - 0.9 * znp.sin(e) - 0.3, lambda e: 1 - 0.9 * znp.cos(e),
               lambda e: 0.9 * znp.sin(e), 0.3,
               (1.103517720303087, 7, 14), (1.103517720303087, 5, 15)),
    "atan": (znp.arctan, lambda x: 1 / (1 + x * x), lambda x: -2 * x / (1 + x * x) ** 2, 1.3,
             (0.0, 7, 14), (0.0, 5, 15)),
    "log": (lambda x: znp.log(x) - 1.0, lambda x: 1 / x, lambda x: -1 / x ** 2, 0.5,
            (2.718281828459045, 6, 12), (2.7182818284590455, 4, 13)),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_as_scipy_with_given_derivatives(name):
    f, fp, fpp, x0, newton, halley = PROBLEMS[name]
    r = root_scalar(f, x0=x0, fprime=fp, method="newton")
    assert (float(r.root), int(r.iterations), int(r.function_calls)) == newton
    assert bool(r.converged) and r.flag == "converged" and r.method == "newton"
    r = root_scalar(f, x0=x0, fprime=fp, fprime2=fpp)     # Halley by default with f''
    assert (float(r.root), int(r.iterations), int(r.function_calls)) == halley
    assert r.method == "halley"


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_derivatives_from_taylor_mode(name):
    # the same iterates (so the same counts of iterations) with f, f', f'' from one jet
    # per iteration, which counts as one call
    f, _, _, x0, newton, halley = PROBLEMS[name]
    for method, (root, its, _) in (("newton", newton), ("halley", halley)):
        r = root_scalar(f, x0=x0, method=method)
        np.testing.assert_allclose(float(r.root), root, rtol=1e-15, atol=1e-300)
        assert int(r.iterations) == its
        assert int(r.function_calls) in (its, its + 1)   # +1: a last call found f == 0


def test_halley_takes_fewer_iterations_than_newton():
    for f, _, _, x0, newton, halley in PROBLEMS.values():
        assert halley[1] < newton[1]


def test_tolerances_args_and_scipy_failures():
    r = root_scalar(PROBLEMS["cubic"][0], x0=2.0, method="halley", xtol=1e-3)
    assert int(r.iterations) == 2 and abs(float(r.root) - 2.0945514815401642) < 1e-15
    r = root_scalar(lambda x, a: x ** 2 - a, args=(3.0,), x0=1.0, method="newton", rtol=1e-6,
                    xtol=1e-300)
    assert float(r.root) == 1.7320508075688772 and int(r.iterations) == 5
    # SciPy: a zero derivative is a convergence error after 1 iteration, 2 calls
    r = root_scalar(lambda x: x * x + 1, x0=0.0, fprime=lambda x: 2 * x, method="newton")
    assert (float(r.root), int(r.iterations), int(r.function_calls)) == (0.0, 1, 2)
    assert not bool(r.converged) and r.flag == "convergence error" and int(r.status) == 1
    # no root: the iteration limit (SciPy: root 0.841530602630985 after 5, 10 calls)
    r = root_scalar(lambda x: x * x + 1, x0=0.5, fprime=lambda x: 2 * x, method="newton",
                    maxiter=5)
    assert (float(r.root), int(r.iterations), int(r.function_calls)) == (0.841530602630985,
                                                                           5, 10)
    assert r.flag == "convergence error" and int(r.status) == 2


def test_under_jit_and_vmap():
    f = PROBLEMS["kepler"][0]
    solve = zx.jit(lambda x0: root_scalar(f, x0=x0, method="halley").root)
    assert float(solve(0.3)) == 1.103517720303087
    its = zx.vmap(lambda x0: root_scalar(PROBLEMS["cos"][0], x0=x0, method="halley").iterations)
    assert np.asarray(its(znp.array([0.5, 1.0, 3.0]))).tolist() == [3, 3, 6]
    # the root as a function of a parameter, differentiated through the iterations
    dr = zx.grad(lambda a: root_scalar(lambda x: x * x - a, x0=1.0, method="halley").root)(2.0)
    np.testing.assert_allclose(float(dr), 0.5 / np.sqrt(2.0), rtol=1e-8)


def test_errors():
    f = PROBLEMS["cubic"][0]
    with pytest.raises(errors.NotSupportedError, match="bracket"):
        root_scalar(f, bracket=(0.0, 3.0), method="halley", x0=1.0)
    with pytest.raises(errors.NotSupportedError, match="'brentq'"):
        root_scalar(f, bracket=(0.0, 3.0), method="brentq")
    with pytest.raises(errors.ZeraxValueError, match="x0"):
        root_scalar(f, method="newton")
    with pytest.raises(errors.ZeraxTypeError, match="fprime"):
        root_scalar(f, x0=1.0, fprime=True)
    with pytest.raises(errors.ZeraxTypeError, match="tuple"):
        root_scalar(f, x0=1.0, args=3.0)
