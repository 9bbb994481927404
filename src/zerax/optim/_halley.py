"""Halley's and Householder's methods (beyond optax), their derivatives from Taylor mode:

- `householder_root`: a root of a function of one number by Householder's method of
  order d (1: Newton, 2: Halley, ...), which converges with order d + 1.  The step
  ``x + d (1/f)^(d-1) / (1/f)^(d)`` needs the first d derivatives of f: one
  `zerax.taylor.derivatives` pass per iteration, whatever d.
- `scale_by_halley_linesearch`: a line search that minimises ``phi(a) = f(params + a
  d)`` along the update ``d`` by Halley's method on ``phi'(a) = 0`` (cubic
  convergence), with ``phi'``, ``phi''`` and ``phi'''`` from one jet of order 3 along
  ``d``; an Armijo test guards the result (backtracking when it fails).

Both are ``lax.while_loop``s, so they jit whole.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

import zerax
import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import GradientTransformationExtraArgs, check_state, safe_increment
from ._second_order import _check_extra, _errstate, _kwargs_for


class HouseholderResult(NamedTuple):
    """`householder_root`'s result: the root, ``f`` there, the iterations taken, and
    whether it converged (a zero of f, or a step below the tolerance)."""
    root: Any
    value: Any
    iterations: Any
    converged: Any


def _householder_step(coefs):
    """``x_new - x`` of Householder's method of order d from the Taylor coefficients
    ``c_0 .. c_d`` of f at x: ``r_{d-1} / r_d`` with r the coefficients of 1/f, from
    ``s_k = r_k c_0^(k+1)``: ``s_0 = 1``, ``s_k = -sum_j c_j c_0^(j-1) s_{k-j}`` (free of
    the overflow of 1/f near the root): ``c_0 s_{d-1} / s_d``."""
    c0 = coefs[0]
    s, pows = [znp.ones_like(c0)], [znp.ones_like(c0)]      # pows[j] = c0^j
    for k in range(1, len(coefs)):
        pows.append(pows[-1] * c0)
        s.append(-sum(coefs[j] * pows[j - 1] * s[k - j] for j in range(1, k + 1)))
    return c0 * s[-2] / s[-1]


def householder_root(fun: Callable, x0: Any, order: int = 2, *, maxiter: int = 50,
                     xtol: float = 1.48e-8, rtol: float = 0.0) -> HouseholderResult:
    """A root of ``fun``, a function of one number, from ``x0`` by Householder's method
    of ``order`` d: Newton's for d = 1, Halley's for d = 2; the error shrinks with power
    d + 1 near a simple root.  Stops at a zero of ``fun``, at a step ``|dx| <= xtol +
    rtol |x|`` (SciPy's test), or after ``maxiter`` iterations.

    >>> import zerax.numpy as znp, zerax.optim as optim
    >>> r = optim.householder_root(lambda x: znp.cos(x) - x, 1.0, order=3)
    >>> round(float(r.root), 12), int(r.iterations), bool(r.converged)
    (0.739085133215, 2, True)
    """
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise errors.ZeraxValueError(
            f"householder_root: order must be a positive integer (1 Newton, 2 Halley, ...), "
            f"got {order!r}")
    derivs = zerax.taylor.derivatives(fun, int(order))
    fact = [float(math.factorial(k)) for k in range(order + 1)]
    x0 = znp.asarray(x0)
    x0 = x0 if x0.dtype.kind == "f" else x0.astype(float)

    def body(s):
        it, x, _, _, _ = s
        ds = derivs(x)
        f0 = ds[0]
        with _errstate():
            dx = _householder_step([d / c for d, c in zip(ds, fact)])
        found = f0 == 0
        dx = znp.where(found, 0.0, dx)
        bad = ~znp.isfinite(dx)
        x_new = znp.where(bad, x, x + dx)
        close = znp.abs(dx) <= xtol + rtol * znp.abs(x_new)
        # (as SciPy counts: a pass that finds f == 0 takes no step)
        return (znp.where(found, it, it + 1), x_new, f0, found | close | bad,
                (found | close) & ~bad)

    init = (znp.zeros((), np.int32), x0, znp.full((), np.nan, x0.dtype), znp.asarray(False),
            znp.asarray(False))
    n = znp.zeros((), np.int32)

    # the loop counts passes for maxiter (the last pass may find f == 0 and take no step)
    _, (it, x, f, _, ok) = lax.while_loop(lambda c: ~c[1][3] & (c[0] < maxiter),
                                          lambda c: (c[0] + 1, body(c[1])), (n, init))
    return HouseholderResult(root=x, value=znp.asarray(fun(x)), iterations=it, converged=ok)


# ----------------------------------------------------------------------------- line search

class ScaleByHalleyLinesearchState(NamedTuple):
    """The step count, and of the last step: the step size found, the loss there, and
    the Halley iterations it took."""
    count: Any
    stepsize: Any
    value: Any
    iterations: Any


def _halley_1d(dphi, a0, maxiter, tol):
    """A minimum of ``phi`` on ``a > 0`` by Halley's iteration for ``phi'(a) = 0`` from
    ``a0``, safeguarded as Numerical Recipes' ``rtsafe``: a bracket ``[lo, hi]`` with
    ``phi'(lo) < 0 < phi'(hi)`` (from ``lo = 0``, a descent direction) is kept, and a
    step that leaves it, or does not halve the one before, is replaced by bisection (or by
    doubling while no ``hi`` is known).  ``dphi(a)`` returns phi and its first three
    derivatives at ``a``."""
    def body(s):
        k, a, lo, hi, dx_old, _ = s
        _, g, h, t = dphi(a)
        lo = znp.where(g < 0, a, lo)
        hi = znp.where(g > 0, a, hi)
        with _errstate():
            den = 2 * h * h - g * t
            halley = -2 * g * h / den
            step = znp.where((den > 0) & znp.isfinite(halley), halley, -g / h)
        cand = a + step
        # a step below the tolerance is convergence (at rounding level a + step may not
        # even leave a, which the bracket test would send back to bisection)
        small = (h > 0) & (znp.abs(step) <= tol * (1 + znp.abs(a)))
        ok = small | ((h > 0) & znp.isfinite(cand) & (cand > lo) & (cand < hi)
                      & (znp.abs(step) <= 0.5 * znp.abs(dx_old)))
        a_new = znp.where(ok, cand, znp.where(znp.isfinite(hi), 0.5 * (lo + hi), 2 * a))
        dx = a_new - a
        done = (g == 0) | small | (znp.abs(dx) <= tol * (1 + znp.abs(a_new)))
        return k + 1, znp.where(g == 0, a, a_new), lo, hi, dx, done
    inf = znp.asarray(np.inf, a0.dtype)
    init = (znp.zeros((), np.int32), a0, znp.zeros_like(a0), inf, inf, znp.asarray(False))
    k, a, _, _, _, _ = lax.while_loop(lambda s: ~s[5] & (s[0] < maxiter), body, init)
    return a, k


def scale_by_halley_linesearch(max_linesearch_steps: int = 30, tol: float = 1e-10,
                               initial_stepsize: float = 1.0, slope_rtol: float = 1e-4,
                               max_backtracking_steps: int = 30,
                               decrease_factor: float = 0.5) -> GradientTransformationExtraArgs:
    """Scale the update ``d`` (a descent direction, e.g. ``-lr * grad`` from `sgd`) by
    the step ``a`` that minimises ``phi(a) = value_fn(params + a d)``: Halley's method on
    ``phi'(a) = 0`` from ``initial_stepsize``, ``phi'``, ``phi''`` and ``phi'''`` coming
    from one Taylor-mode pass along ``d`` per iteration (at most
    ``max_linesearch_steps``; until a step below ``tol (1 + |a|)``), safeguarded by a
    bracket of the minimum (bisection where Halley's step leaves it).  The step must pass
    Armijo's test ``phi(a) <= phi(0) + slope_rtol a phi'(0)``; if it does not, the search
    backtracks from ``initial_stepsize`` by ``decrease_factor``.

    ``update(updates, state, params, value_fn=loss)``; other keyword arguments that
    ``value_fn`` accepts are passed to it.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum(znp.exp(x) - 2.0 * x)          # minimum at log 2
    >>> opt = optim.chain(optim.sgd(1.0), optim.scale_by_halley_linesearch())
    >>> x = znp.zeros(2); state = opt.init(x)
    >>> u, state = opt.update(zx.grad(f)(x), state, x, value_fn=f)
    >>> optim.apply_updates(x, u).round(10).tolist()      # one exact line minimisation
    [0.6931471806, 0.6931471806]
    """
    def init_fn(params):
        vd = znp.asarray(tree_util.tree_leaves(params)[0]).dtype
        return ScaleByHalleyLinesearchState(
            count=znp.zeros([], np.int32), stepsize=znp.asarray(initial_stepsize, vd),
            value=znp.asarray(np.inf, vd), iterations=znp.zeros([], np.int32))

    def update_fn(updates, state, params, *, value_fn=None, **extra):
        check_state(state, ScaleByHalleyLinesearchState, "scale_by_halley_linesearch")
        if value_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "scale_by_halley_linesearch.update needs the params and the loss: "
                "update(updates, state, params, value_fn=loss).")
        extra = {k: v for k, v in extra.items() if k not in ("value", "grad")}
        _check_extra("scale_by_halley_linesearch", extra, value_fn)
        kw = _kwargs_for(value_fn, extra)
        vd = state.stepsize.dtype

        def phi(a):
            return value_fn(otu.tree_add_scale(params, a, updates), **kw)
        dphi = zerax.taylor.derivatives(phi, 3)
        phi0, slope = zerax.taylor.derivatives(phi, 1)(znp.zeros((), vd))
        a, iters = _halley_1d(dphi, znp.asarray(initial_stepsize, vd), max_linesearch_steps,
                              tol)

        def armijo(t, v):
            return (t > 0) & znp.isfinite(v) & (v <= phi0 + slope_rtol * t * slope)
        value = phi(a)

        def cond(c):
            k, t, v = c
            return (k < max_backtracking_steps) & ~armijo(t, v)

        def body(c):
            k, t, _ = c
            t_new = initial_stepsize * decrease_factor ** k.astype(vd)
            return k + 1, t_new, phi(t_new)
        _, a, value = lax.while_loop(cond, body, (znp.zeros((), np.int32), a, value))
        a = znp.where(armijo(a, value), a, 0.0).astype(vd)
        return otu.tree_scale(a, updates), ScaleByHalleyLinesearchState(
            count=safe_increment(state.count), stepsize=a,
            value=znp.asarray(value).astype(vd), iterations=iters)

    return GradientTransformationExtraArgs(init_fn, update_fn)
