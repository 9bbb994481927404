"""`zerax.scipy.optimize`: ``minimize`` (BFGS, L-BFGS, Newton-CG, trust-ncg) with JAX's
``OptimizeResults``, and ``least_squares`` (Levenberg-Marquardt).

Every method is a ``lax.while_loop`` over pure steps, so ``jit(minimize)`` compiles the
whole solve; Newton-CG and trust-ncg use Hessian-vector products ``jvp(grad(fun))``, never
the dense Hessian.  BFGS follows ``jax.scipy.optimize.minimize(method='BFGS')`` step by
step (the same strong-Wolfe line search, inverse-Hessian update and status codes, and so
the same results, including JAX's line-search failures, e.g. status 3 on Rosenbrock from
(-1.2, 1)); L-BFGS and Newton-CG use that line search without its failure on brackets
given high-to-low.

>>> import zerax.numpy as znp
>>> from zerax.scipy.optimize import minimize
>>> rosen = lambda x: znp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
>>> res = minimize(rosen, znp.asarray([-1.2, 1.0]), method="trust-ncg")
>>> bool(res.success), res.x.round(5).tolist(), int(res.nit)
(True, [1.0, 1.0], 29)
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Optional

import numpy as np

from ...interpreters.ad import grad, jvp, value_and_grad
from ...api.jacobians import jacfwd
from ... import numpy as znp
from ...numpy import linalg as _linalg
from .... import errors
from ...lax import control_flow as _cf

__all__ = ["OptimizeResults", "minimize", "line_search", "LeastSquaresResults",
           "least_squares"]


class OptimizeResults(NamedTuple):
    """The result of `minimize` (JAX's fields).

    x: the solution; success: converged without a line-search failure; status: 0
    converged, 1 maximum iterations, 2+ a line-search failure (3 zoom failed, 5 maximum
    line-search iterations), 4 trust-region step failure; fun, jac: value and gradient at
    x; hess_inv: BFGS' inverse-Hessian estimate (None for the other methods); nfev, njev:
    function and gradient evaluations; nit: iterations."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _errstate():
    # Eager runs evaluate both sides of where(); compiled code never warns.
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


# ----------------------------------------------------------------------------- line search

class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    r0 = fb - fa - C * db
    r1 = fc - fa - C * dc
    A = (dc ** 2 * r0 - db ** 2 * r1) / denom
    B = (-dc ** 3 * r0 + db ** 3 * r1) / denom
    radical = B * B - 3.0 * A * C
    return a + (-B + znp.sqrt(radical)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    db = b - a
    B = (fb - fa - fpa * db) / db ** 2
    return a - fpa / (2.0 * B)


def _select(flag, new: dict, old: dict) -> dict:
    return {k: znp.where(flag, new[k], old[k]) for k in new}


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_dphi, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi, g_0,
          skip, robust):
    """Algorithm 3.6 of Nocedal & Wright: shrink [a_lo, a_hi] by cubic, quadratic or
    bisection steps until the strong Wolfe conditions hold."""
    dt = znp.asarray(phi_lo).dtype
    s = _Zoom(done=znp.asarray(False), failed=znp.asarray(False), j=znp.asarray(0),
              a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi,
              dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
              a_star=znp.asarray(1.0, dt), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
              nfev=znp.asarray(0), ngev=znp.asarray(0))
    threshold = 1e-5 if np.finfo(dt).bits < 64 else 1e-10

    def body(s):
        dalpha = s.a_hi - s.a_lo
        lo = znp.minimum(s.a_hi, s.a_lo)
        hi = znp.maximum(s.a_hi, s.a_lo)
        # JAX tests the signed width, so a bracket given high-to-low "fails" at once;
        # BFGS keeps that for parity with jax.scipy, the other methods use the width.
        width = znp.abs(dalpha) if robust else dalpha
        s = s._replace(failed=s.failed | (width <= threshold))
        a_cub = _cubicmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cub = (s.j > 0) & (a_cub > lo + 0.2 * dalpha) & (a_cub < hi - 0.2 * dalpha)
        a_quad = _quadmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cub & (a_quad > lo + 0.1 * dalpha) & (a_quad < hi - 0.1 * dalpha)
        a_j = znp.where(use_cub, a_cub, s.a_rec)
        a_j = znp.where(use_quad, a_quad, a_j)
        a_j = znp.where(~use_cub & ~use_quad, (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(s.phi_lo.dtype)
        dphi_j = dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= s.phi_lo)
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        d = s._asdict()
        d.update(_select(hi_to_j, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                                       phi_rec=s.phi_hi), d))
        d["done"] = star_to_j | d["done"]
        d.update(_select(star_to_j, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                                         g_star=g_j), d))
        d.update(_select(hi_to_lo, dict(a_hi=d["a_lo"], phi_hi=d["phi_lo"],
                                        dphi_hi=d["dphi_lo"], a_rec=d["a_hi"],
                                        phi_rec=d["phi_hi"]), d))
        d.update(_select(lo_to_j & ~hi_to_lo, dict(a_rec=d["a_lo"], phi_rec=d["phi_lo"]), d))
        d.update(_select(lo_to_j, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), d))
        d["j"] = s.j + 1
        d["failed"] = d["failed"] | (d["j"] >= 30)
        return _Zoom(**d)

    return _cf.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, s)


class _LS(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


def line_search(f: Callable, xk: Any, pk: Any, old_fval: Any = None, old_old_fval: Any = None,
                gfk: Any = None, c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20,
                *, _robust: bool = False):
    """A step size along ``pk`` satisfying the strong Wolfe conditions (Nocedal & Wright,
    Algorithm 3.5, as JAX's ``line_search``); returns ``(failed, nit, nfev, ngev, k, a_k,
    f_k, g_k, status)``.

    >>> import zerax.numpy as znp
    >>> r = line_search(lambda x: znp.sum(x ** 2), znp.asarray([1.0]), znp.asarray([-1.0]))
    >>> float(r.a_k), bool(r.failed)
    (1.0, False)
    """
    xk = znp.asarray(xk)
    pk = znp.asarray(pk)
    if not np.issubdtype(xk.dtype, np.inexact):
        xk = xk.astype(float)
    vg = value_and_grad(f)

    def phi_dphi(t):
        t = znp.asarray(t, dtype=pk.dtype)
        phi, g = vg(xk + t * pk)
        return phi, znp.real(znp.dot(g, pk)), g

    with _errstate():
        given = old_fval is not None and gfk is not None
        if not given:
            phi_0, dphi_0, gfk = phi_dphi(0.0)
        else:
            phi_0 = znp.asarray(old_fval)
            dphi_0 = znp.real(znp.dot(gfk, pk))
        if old_old_fval is not None:
            cand = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
            start = znp.where(cand > 1, 1.0, cand)
        else:
            start = znp.asarray(1.0)

        def wolfe_one(a, phi):
            return phi > phi_0 + c1 * a * dphi_0

        def wolfe_two(dphi):
            return znp.abs(dphi) <= -c2 * dphi_0

        dt = znp.asarray(phi_0).dtype
        n0 = znp.asarray(0 if given else 1)
        s = _LS(done=znp.asarray(False), failed=znp.asarray(False), i=znp.asarray(1),
                a_i1=znp.asarray(0.0, dt), phi_i1=phi_0, dphi_i1=dphi_0, nfev=n0, ngev=n0,
                a_star=znp.asarray(0.0, dt), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

        def body(s):
            a_i = znp.where(s.i == 1, start, s.a_i1 * 2.0).astype(dt)
            phi_i, dphi_i, g_i = phi_dphi(a_i)
            s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
            to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
            to_i = wolfe_two(dphi_i) & ~to_zoom1
            to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~to_i
            z1 = _zoom(phi_dphi, wolfe_one, wolfe_two, s.a_i1, s.phi_i1, s.dphi_i1, a_i, phi_i,
                       dphi_i, gfk, ~to_zoom1, _robust)
            z2 = _zoom(phi_dphi, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, s.a_i1, s.phi_i1,
                       s.dphi_i1, gfk, ~to_zoom2, _robust)
            d = s._asdict()
            d["nfev"] = s.nfev + z1.nfev + z2.nfev
            d["ngev"] = s.ngev + z1.ngev + z2.ngev
            keys = ("a_star", "phi_star", "dphi_star", "g_star")
            d["done"] = to_zoom1 | d["done"]
            d["failed"] = (to_zoom1 & z1.failed) | d["failed"]
            d.update(_select(to_zoom1, {k: getattr(z1, k) for k in keys}, d))
            d["done"] = to_i | d["done"]
            d.update(_select(to_i, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                                        g_star=g_i), d))
            d["done"] = to_zoom2 | d["done"]
            d["failed"] = (to_zoom2 & z2.failed) | d["failed"]
            d.update(_select(to_zoom2, {k: getattr(z2, k) for k in keys}, d))
            d.update(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
            return _LS(**d)

        s = _cf.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, s)
        status = znp.where(s.failed, 1, znp.where(s.i > maxiter, 3, 0))
        a_k = znp.asarray(s.a_star)
        if np.finfo(a_k.dtype).bits != 64:
            a_k = znp.where(znp.abs(a_k) < 1e-8, znp.sign(a_k) * 1e-8, a_k)
    return _LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev,
                              ngev=s.ngev, k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star,
                              status=status)


# ----------------------------------------------------------------------------- BFGS

class _BFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    ls_status: Any


def _norm(g, ord):
    return _linalg.norm(g, ord=ord)


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    maxiter = int(np.size(x0) * 200) if maxiter is None else maxiter
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    s = _BFGS(converged=_norm(g0, norm) < gtol, failed=znp.asarray(False), k=znp.asarray(0),
              nfev=znp.asarray(1), ngev=znp.asarray(1), x_k=x0, f_k=f0, g_k=g0,
              H_k=znp.eye(n, dtype=x0.dtype), old_old_fval=f0 + _linalg.norm(g0) / 2,
              ls_status=znp.asarray(0))

    def body(s):
        p = -znp.dot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        sk = ls.a_k.astype(p.dtype) * p
        y = ls.g_k - s.g_k
        rho = 1.0 / znp.dot(y, sk)
        w = znp.eye(n, dtype=rho.dtype) - rho * sk[:, None] * y[None, :]
        h_new = w @ s.H_k @ w.T + rho * sk[:, None] * sk[None, :]
        h_new = znp.where(znp.isfinite(rho), h_new, s.H_k)
        return _BFGS(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s.k + 1,
                     nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + sk,
                     f_k=ls.f_k, g_k=ls.g_k, H_k=h_new, old_old_fval=s.f_k,
                     ls_status=ls.status)

    s = _cf.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, s)
    status = znp.where(s.converged, 0, znp.where(s.k == maxiter, 1,
                                                 znp.where(s.failed, 2 + s.ls_status, -1)))
    return OptimizeResults(x=s.x_k, success=s.converged & ~s.failed, status=status, fun=s.f_k,
                           jac=s.g_k, hess_inv=s.H_k, nfev=s.nfev, njev=s.ngev, nit=s.k)


# ----------------------------------------------------------------------------- L-BFGS

class _LBFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_hist: Any
    y_hist: Any
    rho_hist: Any
    gamma: Any
    old_old_fval: Any
    ls_status: Any


def _lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, gtol=1e-5, ftol=2.2e-9,
           maxfun=None, maxgrad=None, maxls=20):
    maxiter = int(np.size(x0) * 200) if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    n = x0.shape[0]
    dt = x0.dtype
    f0, g0 = value_and_grad(fun)(x0)
    s = _LBFGS(converged=_norm(g0, norm) < gtol, failed=znp.asarray(False), k=znp.asarray(0),
               nfev=znp.asarray(1), ngev=znp.asarray(1), x_k=x0, f_k=f0, g_k=g0,
               s_hist=znp.zeros((maxcor, n), dt), y_hist=znp.zeros((maxcor, n), dt),
               rho_hist=znp.zeros((maxcor,), dt), gamma=znp.asarray(1.0, dt),
               old_old_fval=f0 + _linalg.norm(g0) / 2, ls_status=znp.asarray(0))

    def two_loop(g, s_hist, y_hist, rho_hist, gamma, k):
        # the newest pair is at index (k - 1) % maxcor; unused slots have rho = 0
        idx = (k - 1 - znp.arange(maxcor)) % maxcor

        def first(q, i):
            a = rho_hist[i] * znp.dot(s_hist[i], q)
            return q - a * y_hist[i], a
        q, alphas = _cf.scan(first, g, idx)
        r = gamma * q

        def second(r, ia):
            i, a = ia
            b = rho_hist[i] * znp.dot(y_hist[i], r)
            return r + s_hist[i] * (a - b), None
        r, _ = _cf.scan(second, r, (idx[::-1], alphas[::-1]))
        return r

    def body(s):
        p = -two_loop(s.g_k, s.s_hist, s.y_hist, s.rho_hist, s.gamma, s.k)
        # the scaled L-BFGS direction has a natural length: start the search at 1
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=None,
                         gfk=s.g_k, maxiter=maxls, _robust=True)
        sk = ls.a_k.astype(dt) * p
        y = ls.g_k - s.g_k
        sy = znp.dot(sk, y)
        rho = znp.where(sy > 0, 1.0 / znp.where(sy > 0, sy, 1.0), 0.0)
        gamma = znp.where(sy > 0, sy / znp.dot(y, y), s.gamma)
        slot = s.k % maxcor
        conv = (_norm(ls.g_k, norm) < gtol) | (
            (s.f_k - ls.f_k) / znp.maximum(znp.maximum(znp.abs(s.f_k), znp.abs(ls.f_k)), 1.0)
            <= ftol)
        return _LBFGS(converged=conv, failed=ls.failed | (s.nfev + ls.nfev > maxfun)
                      | (s.ngev + ls.ngev > maxgrad),
                      k=s.k + 1, nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev,
                      x_k=s.x_k + sk, f_k=ls.f_k, g_k=ls.g_k,
                      s_hist=s.s_hist.at[slot].set(sk), y_hist=s.y_hist.at[slot].set(y),
                      rho_hist=s.rho_hist.at[slot].set(rho), gamma=gamma,
                      old_old_fval=s.f_k, ls_status=ls.status)

    s = _cf.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, s)
    status = znp.where(s.converged, 0, znp.where(s.k == maxiter, 1,
                                                 znp.where(s.failed, 2 + s.ls_status, -1)))
    return OptimizeResults(x=s.x_k, success=s.converged & ~s.failed, status=status, fun=s.f_k,
                           jac=s.g_k, hess_inv=None, nfev=s.nfev, njev=s.ngev, nit=s.k)


# ----------------------------------------------------------------------------- Newton-CG

def _hvp(fun, x):
    g = grad(fun)
    return lambda v: jvp(g, (x,), (v,))[1]


class _NCG(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    old_old_fval: Any
    ls_status: Any


def _newton_cg(fun, x0, maxiter=None, gtol=1e-5, norm=np.inf, cg_maxiter=None,
               line_search_maxiter=20):
    n = x0.shape[0]
    maxiter = int(n * 200) if maxiter is None else maxiter
    cg_maxiter = 20 * n if cg_maxiter is None else cg_maxiter
    f0, g0 = value_and_grad(fun)(x0)
    s = _NCG(converged=_norm(g0, norm) < gtol, failed=znp.asarray(False), k=znp.asarray(0),
             nfev=znp.asarray(1), ngev=znp.asarray(1), x_k=x0, f_k=f0, g_k=g0,
             old_old_fval=f0 + _linalg.norm(g0) / 2, ls_status=znp.asarray(0))

    def direction(x, g):
        # truncated CG with SciPy's forcing term: stop at |r| <= min(0.5, sqrt|g|) |g|
        hvp = _hvp(fun, x)
        gnorm1 = znp.sum(znp.abs(g))
        eta = znp.minimum(0.5, znp.sqrt(gnorm1))
        term = eta * gnorm1

        def cond(c):
            i, z, r, p, rr, stop = c
            return (i < cg_maxiter) & ~stop & (znp.sum(znp.abs(r)) > term)

        def body(c):
            i, z, r, p, rr, stop = c
            ap = hvp(p)
            curv = znp.dot(p, ap)
            neg = curv <= 0.0
            # negative curvature: keep the current iterate (steepest descent if first)
            alpha = rr / znp.where(neg, 1.0, curv)
            z_new = z + alpha * p
            r_new = r + alpha * ap
            rr_new = znp.dot(r_new, r_new)
            p_new = -r_new + (rr_new / rr) * p
            return (i + 1, znp.where(neg, znp.where(i == 0, -g, z), z_new),
                    znp.where(neg, r, r_new), znp.where(neg, p, p_new),
                    znp.where(neg, rr, rr_new), neg)
        init = (znp.asarray(0), znp.zeros_like(g), g, -g, znp.dot(g, g), znp.asarray(False))
        _, z, _, _, _, _ = _cf.while_loop(cond, body, init)
        return znp.where(znp.all(z == 0), -g, z)

    def body(s):
        p = direction(s.x_k, s.g_k)
        # a Newton step has a natural length: start the search at 1
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=None,
                         gfk=s.g_k, maxiter=line_search_maxiter, _robust=True)
        sk = ls.a_k.astype(p.dtype) * p
        return _NCG(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s.k + 1,
                    nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + sk, f_k=ls.f_k,
                    g_k=ls.g_k, old_old_fval=s.f_k, ls_status=ls.status)

    s = _cf.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, s)
    status = znp.where(s.converged, 0, znp.where(s.k == maxiter, 1,
                                                 znp.where(s.failed, 2 + s.ls_status, -1)))
    return OptimizeResults(x=s.x_k, success=s.converged & ~s.failed, status=status, fun=s.f_k,
                           jac=s.g_k, hess_inv=None, nfev=s.nfev, njev=s.ngev, nit=s.k)


# ----------------------------------------------------------------------------- trust-ncg

class _TR(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    radius: Any


def _steihaug(hvp, g, radius, maxiter):
    """Steihaug-Toint CG for ``min g.p + 0.5 p.Hp`` within ``|p| <= radius``."""
    gnorm = _linalg.norm(g)
    tol = znp.minimum(0.5, znp.sqrt(gnorm)) * gnorm

    def to_boundary(z, d):
        a = znp.dot(d, d)
        b = 2 * znp.dot(z, d)
        c = znp.dot(z, z) - radius ** 2
        tau = (-b + znp.sqrt(znp.maximum(b * b - 4 * a * c, 0.0))) / (2 * a)
        return z + tau * d

    def cond(c):
        i, z, r, d, done = c
        return (i < maxiter) & ~done

    def body(c):
        i, z, r, d, done = c
        bd = hvp(d)
        dbd = znp.dot(d, bd)
        rr = znp.dot(r, r)
        alpha = rr / znp.where(dbd == 0, 1.0, dbd)
        z_next = z + alpha * d
        neg = dbd <= 0
        outside = _linalg.norm(z_next) >= radius
        z_b = to_boundary(z, d)
        r_next = r + alpha * bd
        small = _linalg.norm(r_next) < tol
        rr_next = znp.dot(r_next, r_next)
        d_next = -r_next + (rr_next / znp.where(rr == 0, 1.0, rr)) * d
        z_out = znp.where(neg | outside, z_b, z_next)
        stop = neg | outside | small
        return i + 1, z_out, znp.where(stop, r, r_next), znp.where(stop, d, d_next), stop
    init = (znp.asarray(0), znp.zeros_like(g), g, -g, gnorm < tol)
    _, p, _, _, _ = _cf.while_loop(cond, body, init)
    return p


def _trust_ncg(fun, x0, maxiter=None, gtol=1e-5, norm=np.inf, initial_trust_radius=1.0,
               max_trust_radius=1000.0, eta=0.15, cg_maxiter=None):
    n = x0.shape[0]
    maxiter = int(n * 200) if maxiter is None else maxiter
    cg_maxiter = 20 * n if cg_maxiter is None else cg_maxiter
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    dt = znp.asarray(f0).dtype
    s = _TR(converged=_norm(g0, norm) < gtol, failed=znp.asarray(False), k=znp.asarray(0),
            nfev=znp.asarray(1), ngev=znp.asarray(1), x_k=x0, f_k=f0, g_k=g0,
            radius=znp.asarray(initial_trust_radius, dt))

    def body(s):
        hvp = _hvp(fun, s.x_k)
        p = _steihaug(hvp, s.g_k, s.radius, cg_maxiter)
        predicted = -(znp.dot(s.g_k, p) + 0.5 * znp.dot(p, hvp(p)))
        f_new, g_new = vg(s.x_k + p)
        actual = s.f_k - f_new
        rho = actual / znp.where(predicted == 0, 1.0, predicted)
        rho = znp.where(znp.isfinite(rho), rho, -1.0)
        # at rounding level the model and the function agree as well as they can
        tiny = znp.abs(predicted) <= 4 * np.finfo(dt).eps * znp.maximum(1.0, znp.abs(s.f_k))
        rho = znp.where(tiny, 1.0, rho)
        pnorm = _linalg.norm(p)
        radius = znp.where(rho < 0.25, 0.25 * s.radius,
                           znp.where((rho > 0.75) & (pnorm >= 0.99 * s.radius),
                                     znp.minimum(2 * s.radius, max_trust_radius), s.radius))
        accept = rho > eta
        x = znp.where(accept, s.x_k + p, s.x_k)
        f = znp.where(accept, f_new, s.f_k)
        g = znp.where(accept, g_new, s.g_k)
        return _TR(converged=_norm(g, norm) < gtol, failed=radius < 1e-14 * (1 + pnorm),
                   k=s.k + 1, nfev=s.nfev + 1, ngev=s.ngev + 1, x_k=x, f_k=f, g_k=g,
                   radius=radius.astype(dt))

    s = _cf.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, s)
    status = znp.where(s.converged, 0, znp.where(s.k == maxiter, 1, 4))
    return OptimizeResults(x=s.x_k, success=s.converged, status=status, fun=s.f_k,
                           jac=s.g_k, hess_inv=None, nfev=s.nfev, njev=s.ngev, nit=s.k)


_METHODS = {"bfgs": _bfgs, "l-bfgs": _lbfgs, "l-bfgs-b": _lbfgs,
            "l-bfgs-experimental-do-not-rely-on-this": _lbfgs, "newton-cg": _newton_cg,
            "trust-ncg": _trust_ncg}


def minimize(fun: Callable, x0: Any, args: tuple = (), *, method: str,
             tol: Optional[float] = None, options: Optional[Mapping[str, Any]] = None
             ) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` over a 1-D array ``x`` from ``x0`` (JAX's signature).

    ``method``: ``'BFGS'`` (options ``maxiter``, ``norm``, ``gtol``,
    ``line_search_maxiter``), ``'L-BFGS'`` (``maxiter``, ``norm``, ``maxcor``, ``gtol``,
    ``ftol``, ``maxfun``, ``maxgrad``, ``maxls``), ``'Newton-CG'`` (``maxiter``, ``gtol``,
    ``norm``, ``cg_maxiter``, ``line_search_maxiter``) or ``'trust-ncg'`` (``maxiter``,
    ``gtol``, ``norm``, ``initial_trust_radius``, ``max_trust_radius``, ``eta``,
    ``cg_maxiter``).  ``tol``, when given, is the default ``gtol`` (and L-BFGS' ``ftol``)
    except for BFGS, which ignores it as JAX's does (pass ``options={'gtol': ...}``).
    Differentiable ``fun`` only (gradients and Hessian-vector products come from zerax's
    autodiff).

    >>> import zerax.numpy as znp
    >>> res = minimize(lambda x, a: znp.sum((x - a) ** 2), znp.zeros(2), (3.0,),
    ...                method="Newton-CG")
    >>> res.x.round(8).tolist(), bool(res.success)
    ([3.0, 3.0], True)
    """
    if not isinstance(args, tuple):
        raise errors.ZeraxTypeError(
            f"args argument to zerax.scipy.optimize.minimize must be a tuple, got "
            f"{type(args).__name__}")
    if not isinstance(method, str) or method.lower() not in _METHODS:
        raise errors.ZeraxValueError(
            f"Method {method!r} not recognized; use one of 'BFGS', 'L-BFGS', 'Newton-CG', "
            f"'trust-ncg'.")
    x0 = znp.asarray(x0)
    if x0.ndim != 1:
        raise errors.ShapeError(
            f"minimize: x0 must be a 1-D array, got shape {x0.shape}; ravel it (e.g. with "
            f"zerax.flatten_util.ravel_pytree) and unravel inside fun.")
    if not np.issubdtype(x0.dtype, np.floating):
        x0 = x0.astype(float)
    options = dict(options or {})
    # jax.scipy's BFGS ignores ``tol`` (only options['gtol'] counts): so does this one
    if tol is not None and method.lower() != "bfgs":
        options.setdefault("gtol", tol)
        if method.lower().startswith("l-bfgs"):
            options.setdefault("ftol", tol)   # as SciPy's L-BFGS-B

    def fun_with_args(x):
        return fun(x, *args)
    impl = _METHODS[method.lower()]
    try:
        with _errstate():
            return impl(fun_with_args, x0, **options)
    except TypeError as e:
        if "unexpected keyword" in str(e):
            raise errors.ZeraxTypeError(
                f"minimize(method={method!r}): unknown option ({e}); see the docstring for "
                f"the options of each method.") from None
        raise


# ----------------------------------------------------------------------------- least squares

class LeastSquaresResults(NamedTuple):
    """The result of `least_squares` (SciPy's fields): x; cost ``0.5 |r|^2``; fun, the
    residuals; jac, their Jacobian; grad ``J^T r``; optimality ``|grad|_inf``; nfev and
    njev; nit; status (1 gtol, 2 ftol, 3 xtol met, 0 max_nfev reached); success."""
    x: Any
    cost: Any
    fun: Any
    jac: Any
    grad: Any
    optimality: Any
    nfev: Any
    njev: Any
    nit: Any
    status: Any
    success: Any


class _LM(NamedTuple):
    k: Any
    nfev: Any
    njev: Any
    x: Any
    r: Any
    jac: Any
    mu: Any
    nu: Any
    status: Any


def least_squares(fun: Callable, x0: Any, args: tuple = (), *, method: str = "lm",
                  ftol: float = 1e-8, xtol: float = 1e-8, gtol: float = 1e-8,
                  max_nfev: Optional[int] = None) -> LeastSquaresResults:
    """Minimise ``0.5 * sum(fun(x, *args)**2)`` by Levenberg-Marquardt (``method='lm'``,
    SciPy's tolerances ``ftol``, ``xtol``, ``gtol``; ``max_nfev`` defaults to
    ``100 * (n + 1)``), with the Jacobian from ``jacfwd``; jittable.

    >>> import zerax.numpy as znp
    >>> t = znp.arange(5.0)
    >>> res = least_squares(lambda p: p[0] * znp.exp(p[1] * t) - 2.0 * znp.exp(-0.5 * t),
    ...                     znp.asarray([1.0, 0.0]))
    >>> bool(res.success), res.x.round(6).tolist()
    (True, [2.0, -0.5])
    """
    if method != "lm":
        raise errors.ZeraxValueError(
            f"least_squares: method {method!r} is not supported; use method='lm'.")
    if not isinstance(args, tuple):
        raise errors.ZeraxTypeError("least_squares: args must be a tuple")
    x0 = znp.asarray(x0)
    if x0.ndim != 1:
        raise errors.ShapeError(f"least_squares: x0 must be 1-D, got shape {x0.shape}")
    if not np.issubdtype(x0.dtype, np.floating):
        x0 = x0.astype(float)
    n = x0.shape[0]
    max_nfev = 100 * (n + 1) if max_nfev is None else max_nfev

    def res(x):
        return znp.ravel(znp.asarray(fun(x, *args)))
    jac_fn = jacfwd(res)
    with _errstate():
        r0 = res(x0)
        j0 = jac_fn(x0)
        dt = r0.dtype
        mu0 = 1e-3 * znp.max(znp.diag(j0.T @ j0))
        s = _LM(k=znp.asarray(0), nfev=znp.asarray(1), njev=znp.asarray(1), x=x0, r=r0, jac=j0,
                mu=znp.asarray(mu0, dt), nu=znp.asarray(2.0, dt),
                status=znp.where(znp.max(znp.abs(j0.T @ r0)) <= gtol, 1, -1))

        def body(s):
            jtj = s.jac.T @ s.jac
            g = s.jac.T @ s.r
            d = _linalg.solve(jtj + s.mu * znp.eye(n, dtype=dt), -g)
            r1 = res(s.x + d)
            f0 = 0.5 * znp.dot(s.r, s.r)
            f1 = 0.5 * znp.dot(r1, r1)
            pred = -(znp.dot(g, d) + 0.5 * znp.dot(d, jtj @ d))
            rho = (f0 - f1) / znp.where(pred == 0, 1.0, pred)
            accept = (f1 < f0) & znp.isfinite(f1)
            x_new = znp.where(accept, s.x + d, s.x)
            r_new = znp.where(accept, r1, s.r)
            j_new = _cf.cond(accept, lambda x: jac_fn(x), lambda x: s.jac, x_new)
            mu = znp.where(accept, s.mu * znp.maximum(1 / 3, 1 - (2 * rho - 1) ** 3),
                           s.mu * s.nu)
            nu = znp.where(accept, 2.0, 2.0 * s.nu)
            g_new = j_new.T @ r_new
            status = znp.where(znp.max(znp.abs(g_new)) <= gtol, 1, znp.where(
                accept & (f0 - f1 <= ftol * f0), 2, znp.where(
                    accept & (_linalg.norm(d) <= xtol * (xtol + _linalg.norm(s.x))), 3,
                    -1)))
            return _LM(k=s.k + 1, nfev=s.nfev + 1, njev=s.njev + accept.astype(s.njev.dtype),
                       x=x_new, r=r_new, jac=j_new,
                       mu=mu.astype(dt), nu=nu.astype(dt), status=status)

        s = _cf.while_loop(lambda s: (s.status < 0) & (s.nfev < max_nfev), body, s)
        grad = s.jac.T @ s.r
        status = znp.where(s.status < 0, 0, s.status)
    return LeastSquaresResults(x=s.x, cost=0.5 * znp.dot(s.r, s.r), fun=s.r, jac=s.jac,
                               grad=grad, optimality=znp.max(znp.abs(grad)), nfev=s.nfev,
                               njev=s.njev, nit=s.k, status=status, success=status > 0)



