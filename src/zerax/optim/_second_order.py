"""Second-order optimisers as ``GradientTransformationExtraArgs`` (beyond optax):

- ``newton_cg``: truncated conjugate gradient on exact Hessian-vector products
  ``jvp(grad(f))``, with damping, a negative-curvature stop and a backtracking line search;
- ``hessian_free``: CG on Gauss-Newton products ``J^T J v`` (jvp then vjp of the residual
  function) or on exact Hessian products, with Levenberg-Marquardt damping adapted by the
  reduction ratio (Martens 2010);
- ``gauss_newton`` and ``levenberg_marquardt`` for least squares ``0.5 |r(params)|^2``,
  solving the normal equations on the dense Jacobian (small problems).

The CG loops are ``lax.while_loop``s, so each ``update`` jits whole.  Extra keyword
arguments of ``update`` that ``value_fn``/``residual_fn`` accept are passed to them.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import numpy as np

import zerax
import zerax.numpy as znp
from .. import errors, lax, tree_util
from ..flatten_util import ravel_pytree

from . import tree_utils as otu
from ._base import GradientTransformationExtraArgs, check_state, loss_data, safe_increment


def _kwargs_for(fn, extra):
    """The data keywords of ``update`` that the loss function ``fn`` takes (the update
    protocol's own names, such as ``value=``, are never passed on)."""
    extra = loss_data(extra)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return extra
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return extra
    return {k: v for k, v in extra.items() if k in params}


def _check_extra(name, extra, *fns):
    """Data keywords that no loss function of this update takes are an error; the
    update protocol's names this transformation does not use are ignored."""
    used = set()
    for fn in fns:
        if fn is not None:
            used |= set(_kwargs_for(fn, extra))
    unused = sorted(set(loss_data(extra)) - used)
    if unused:
        raise errors.ZeraxTypeError(
            f"{name}.update got keyword arguments {unused} that neither value_fn nor "
            f"residual_fn accepts; pass only the data your loss takes (e.g. batch=...).")


def _cg(matvec, b, maxiter, tol, stop_on_negative_curvature=True):
    """Truncated CG for ``A x = b`` from 0; returns ``(x, iterations, negative)``.

    Stops after ``maxiter`` iterations, when ``|r| <= tol * |b|``, or (optionally) at a
    direction of non-positive curvature (then ``x`` is the last iterate)."""
    x0 = otu.tree_zeros_like(b)
    bnorm = otu.tree_norm(b)
    rr0 = otu.tree_vdot(b, b)

    def cond(c):
        i, x, r, p, rr, neg = c
        return (i < maxiter) & (znp.sqrt(rr) > tol * bnorm) & ~neg

    def body(c):
        i, x, r, p, rr, neg = c
        ap = matvec(p)
        curv = otu.tree_vdot(p, ap)
        bad = curv <= 0.0 if stop_on_negative_curvature else znp.asarray(False)
        alpha = rr / znp.where(bad, 1.0, curv)
        x_new = otu.tree_add_scale(x, alpha, p)
        r_new = otu.tree_add_scale(r, -alpha, ap)
        rr_new = otu.tree_vdot(r_new, r_new)
        p_new = otu.tree_add_scale(r_new, rr_new / znp.where(rr == 0.0, 1.0, rr), p)
        keep = lambda new, old: otu.tree_where(bad, old, new)  # noqa: E731
        return (i + znp.where(bad, 0, 1), keep(x_new, x), keep(r_new, r), keep(p_new, p),
                znp.where(bad, rr, rr_new), bad)

    init = (znp.asarray(0), x0, b, b, rr0, znp.asarray(False))
    i, x, _, _, _, neg = lax.while_loop(cond, body, init)
    return x, i, neg


def _backtracking(f, params, value, direction, slope, max_steps, decrease_factor, c1):
    """Largest ``t = decrease_factor**k`` (k < max_steps) with the Armijo condition
    ``f(x + t d) <= f(x) + c1 t <g, d>``; 0 when none is found."""
    def cond(c):
        k, t, fv, ok = c
        return (k < max_steps) & ~ok

    def body(c):
        k, t, fv, ok = c
        t_new = znp.where(k == 0, t, t * decrease_factor)
        fv_new = znp.asarray(f(otu.tree_add_scale(params, t_new, direction)))
        ok_new = fv_new <= value + c1 * t_new * slope
        return k + 1, t_new, fv_new, ok_new

    vd = znp.asarray(value).dtype
    init = (znp.asarray(0), znp.asarray(1.0, vd), znp.asarray(value), znp.asarray(False))
    k, t, fv, ok = lax.while_loop(cond, body, init)
    return znp.where(ok, t, 0.0).astype(vd), znp.where(ok, fv, value), k


def _hvp(f, params):
    grad_f = zerax.grad(f)
    return lambda v: zerax.jvp(grad_f, (params,), (v,))[1]


def _errstate():
    # Eager evaluation computes the unused sides of where(); compiled code never warns.
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


# ----------------------------------------------------------------------------- Newton-CG

class NewtonCGState(NamedTuple):
    """Newton-CG's step count and diagnostics of the last step: CG iterations, whether CG
    met negative curvature, the line-search step size and the new loss value."""
    count: Any
    cg_iterations: Any
    negative_curvature: Any
    stepsize: Any
    value: Any


def newton_cg(maxiter: int = 20, tol: float = 1e-5, damping: float = 0.0,
              linesearch: bool = True, max_linesearch_steps: int = 30,
              decrease_factor: float = 0.5, slope_rtol: float = 1e-4
              ) -> GradientTransformationExtraArgs:
    """Newton's method with the Newton system ``(H + damping I) d = -g`` solved by truncated
    conjugate gradient on Hessian-vector products (``maxiter`` CG iterations at most, until
    ``|r| <= tol |g|``, stopping at negative curvature; steepest descent if that happens at
    once).  ``update(grads, state, params, value_fn=loss)`` returns the whole step, scaled
    by a backtracking (Armijo) line search on ``value_fn`` unless ``linesearch=False``.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum((x - 2.0) ** 2) + 0.5 * x[0] * x[1]
    >>> opt = optim.newton_cg()
    >>> x = znp.zeros(2); state = opt.init(x)
    >>> u, state = opt.update(zx.grad(f)(x), state, x, value_fn=f)
    >>> optim.apply_updates(x, u).round(6).tolist()   # the exact minimiser of a quadratic
    [1.6, 1.6]
    """
    def init_fn(params):
        vd = znp.asarray(tree_util.tree_leaves(params)[0]).dtype
        return NewtonCGState(count=znp.zeros([], znp.int32), cg_iterations=znp.asarray(0),
                             negative_curvature=znp.asarray(False),
                             stepsize=znp.asarray(1.0, vd), value=znp.asarray(znp.inf, vd))

    def update_fn(updates, state, params, *, value_fn=None, value=None, **extra):
        check_state(state, NewtonCGState, "newton_cg")
        if value_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "newton_cg.update needs the params and the loss: update(grads, state, params, "
                "value_fn=loss).")
        _check_extra("newton_cg", extra, value_fn)
        kw = _kwargs_for(value_fn, extra)

        def f(p):
            return value_fn(p, **kw)
        with _errstate():
            hvp = _hvp(f, params)

            def matvec(v):
                hv = hvp(v)
                return otu.tree_add_scale(hv, damping, v) if damping else hv
            neg_g = otu.tree_scale(-1.0, updates)
            d, iters, neg = _cg(matvec, neg_g, maxiter, tol)
            # negative curvature at the first CG step leaves d = 0: use steepest descent
            d_is_zero = otu.tree_norm(d, squared=True) == 0.0
            d = otu.tree_where(d_is_zero, neg_g, d)
            if linesearch:
                v0 = f(params) if value is None else value
                slope = otu.tree_vdot(updates, d)
                t, new_value, _ = _backtracking(f, params, v0, d, slope, max_linesearch_steps,
                                                decrease_factor, slope_rtol)
            else:
                t = znp.asarray(1.0, znp.asarray(tree_util.tree_leaves(params)[0]).dtype)
                new_value = state.value
            step = otu.tree_scale(t, d)
        return step, NewtonCGState(count=safe_increment(state.count), cg_iterations=iters,
                                   negative_curvature=neg, stepsize=t,
                                   value=znp.asarray(new_value).astype(state.value.dtype))
    return GradientTransformationExtraArgs(init_fn, update_fn)


# ----------------------------------------------------------------------------- Hessian-free

class HessianFreeState(NamedTuple):
    """Hessian-free's step count, current damping, last reduction ratio, CG iterations
    and loss value."""
    count: Any
    damping: Any
    rho: Any
    cg_iterations: Any
    value: Any


def hessian_free(maxiter: int = 50, tol: float = 1e-6, damping: float = 1.0,
                 min_damping: float = 1e-8, damping_increase: float = 1.5,
                 damping_decrease: float = 2.0 / 3.0) -> GradientTransformationExtraArgs:
    """Hessian-free optimisation (Martens 2010): CG on ``(B + damping I) d = -g`` with
    ``B = J^T J`` from ``update(..., residual_fn=r)`` (Gauss-Newton, loss ``0.5 |r|^2``),
    or the exact Hessian from ``update(..., value_fn=loss)``; given both, it uses
    ``residual_fn`` (Gauss-Newton's ``B`` is positive semi-definite, which CG needs) and
    ignores ``value_fn``.  The damping follows
    Levenberg-Marquardt: multiplied by ``damping_increase`` when the reduction ratio
    ``rho = (f(x) - f(x + d)) / -(g.d + 0.5 d.B d)`` is below 1/4, by ``damping_decrease``
    above 3/4; a step that does not reduce the loss is rejected (zero update).

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> r = lambda x: znp.stack([x[0] - 1.0, 10.0 * (x[1] - x[0] ** 2)])
    >>> opt = optim.hessian_free()
    >>> x = znp.asarray([-1.2, 1.0]); state = opt.init(x)
    >>> f = lambda x: 0.5 * znp.sum(r(x) ** 2)
    >>> for _ in range(40):
    ...     u, state = opt.update(zx.grad(f)(x), state, x, residual_fn=r)
    ...     x = optim.apply_updates(x, u)
    >>> x.round(6).tolist()
    [1.0, 1.0]
    """
    def init_fn(params):
        vd = znp.asarray(tree_util.tree_leaves(params)[0]).dtype
        return HessianFreeState(count=znp.zeros([], znp.int32),
                                damping=znp.asarray(damping, vd), rho=znp.asarray(0.0, vd),
                                cg_iterations=znp.asarray(0), value=znp.asarray(znp.inf, vd))

    def update_fn(updates, state, params, *, residual_fn=None, value_fn=None, **extra):
        check_state(state, HessianFreeState, "hessian_free")
        if (residual_fn is None and value_fn is None) or params is None:
            raise errors.ZeraxTypeError(
                "hessian_free.update needs the params and residual_fn= (Gauss-Newton "
                "products, loss 0.5 |r|^2) or value_fn= (exact Hessian).")
        if residual_fn is not None:
            value_fn = None   # both given: Gauss-Newton (positive semi-definite B)
        _check_extra("hessian_free", extra, residual_fn, value_fn)
        with _errstate():
            if residual_fn is not None:
                kw = _kwargs_for(residual_fn, extra)

                def res(p):
                    return residual_fn(p, **kw)

                def f(p):
                    return 0.5 * otu.tree_norm(res(p), squared=True)
                _, jvp_fn = zerax.linearize(res, params)
                _, vjp_fn = zerax.vjp(res, params)

                def bmat(v):
                    return vjp_fn(jvp_fn(v))[0]
            else:
                kw = _kwargs_for(value_fn, extra)

                def f(p):
                    return value_fn(p, **kw)
                bmat = _hvp(f, params)
            lam = state.damping

            def matvec(v):
                return otu.tree_add_scale(bmat(v), lam, v)
            d, iters, _ = _cg(matvec, otu.tree_scale(-1.0, updates), maxiter, tol)
            f0 = f(params)
            f1 = f(otu.tree_add(params, d))
            predicted = otu.tree_vdot(updates, d) + 0.5 * otu.tree_vdot(d, bmat(d))
            rho = (f1 - f0) / znp.where(predicted == 0.0, -1.0, predicted)
            rho = znp.where(znp.isfinite(rho), rho, -znp.inf)
            new_lam = znp.where(rho < 0.25, lam * damping_increase,
                                znp.where(rho > 0.75, lam * damping_decrease, lam))
            new_lam = znp.maximum(new_lam, min_damping)
            accept = (f1 < f0) & znp.isfinite(f1)
            step = otu.tree_where(accept, d, otu.tree_zeros_like(d))
            value = znp.where(accept, f1, f0)
        vd = state.damping.dtype
        return step, HessianFreeState(count=safe_increment(state.count),
                                      damping=new_lam.astype(vd), rho=rho.astype(vd),
                                      cg_iterations=iters, value=value.astype(vd))
    return GradientTransformationExtraArgs(init_fn, update_fn)


# ----------------------------------------------------------------------------- least squares

class GaussNewtonState(NamedTuple):
    """Gauss-Newton's step count and the loss ``0.5 |r|^2`` at the params it was given."""
    count: Any
    value: Any


def _dense_system(residual_fn, params, kw):
    flat, unravel = ravel_pytree(params)

    def r_flat(x):
        leaves = tree_util.tree_leaves(residual_fn(unravel(x), **kw))
        return znp.concatenate([znp.ravel(leaf) for leaf in leaves])
    r = r_flat(flat)
    jac = zerax.jacfwd(r_flat)(flat)
    return flat, unravel, r, jac


def gauss_newton(learning_rate: float = 1.0, damping: float = 0.0
                 ) -> GradientTransformationExtraArgs:
    """Gauss-Newton for least squares ``0.5 |r(params)|^2``: the step solves
    ``(J^T J + damping I) d = -J^T r`` on the dense Jacobian (``jacfwd``) and is scaled by
    ``learning_rate``; ``update(grads, state, params, residual_fn=r)`` (``grads`` may be
    None: the step uses ``J^T r``).

    >>> import zerax.numpy as znp, zerax.optim as optim
    >>> r = lambda p: p["a"] * znp.exp(p["b"] * znp.arange(3.0)) - znp.asarray([2.0, 1.0, 0.5])
    >>> opt = optim.gauss_newton()
    >>> p = {"a": znp.asarray(1.0), "b": znp.asarray(0.0)}; s = opt.init(p)
    >>> for _ in range(8):
    ...     u, s = opt.update(None, s, p, residual_fn=r); p = optim.apply_updates(p, u)
    >>> round(float(p["a"]), 6), round(float(p["b"]), 6)
    (2.0, -0.693147)
    """
    def init_fn(params):
        vd = znp.asarray(tree_util.tree_leaves(params)[0]).dtype
        return GaussNewtonState(count=znp.zeros([], znp.int32), value=znp.asarray(znp.inf, vd))

    def update_fn(updates, state, params, *, residual_fn=None, **extra):
        del updates
        check_state(state, GaussNewtonState, "gauss_newton")
        if residual_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "gauss_newton.update needs the params and residual_fn=: update(grads, state, "
                "params, residual_fn=r).")
        _check_extra("gauss_newton", extra, residual_fn)
        flat, unravel, r, jac = _dense_system(residual_fn, params,
                                              _kwargs_for(residual_fn, extra))
        a = jac.T @ jac + damping * znp.eye(flat.shape[0], dtype=jac.dtype)
        d = znp.linalg.solve(a, -(jac.T @ r))
        value = 0.5 * znp.sum(r * r)
        step = unravel(learning_rate * d)
        return step, GaussNewtonState(count=safe_increment(state.count),
                                      value=value.astype(state.value.dtype))
    return GradientTransformationExtraArgs(init_fn, update_fn)


class LevenbergMarquardtState(NamedTuple):
    """Levenberg-Marquardt's step count, damping ``mu``, its growth factor ``nu`` and the
    loss ``0.5 |r|^2`` after the step."""
    count: Any
    damping: Any
    nu: Any
    value: Any


def levenberg_marquardt(damping: float = 1e-3, scale_by_diagonal: bool = False
                        ) -> GradientTransformationExtraArgs:
    """Levenberg-Marquardt for least squares ``0.5 |r(params)|^2``: solve
    ``(J^T J + mu D) d = -J^T r`` (``D = I``, or ``diag(J^T J)`` when
    ``scale_by_diagonal``), accept the step when it lowers the loss, and adapt ``mu`` by
    Nielsen's rule (``mu *= max(1/3, 1 - (2 rho - 1)^3)`` on success, ``mu *= nu, nu *= 2``
    on failure).  ``update(grads, state, params, residual_fn=r)``.

    >>> import zerax.numpy as znp, zerax.optim as optim
    >>> r = lambda x: znp.stack([x[0] - 1.0, 10.0 * (x[1] - x[0] ** 2)])
    >>> opt = optim.levenberg_marquardt()
    >>> x = znp.asarray([-1.2, 1.0]); s = opt.init(x)
    >>> for _ in range(30):
    ...     u, s = opt.update(None, s, x, residual_fn=r); x = optim.apply_updates(x, u)
    >>> x.round(8).tolist()
    [1.0, 1.0]
    """
    def init_fn(params):
        vd = znp.asarray(tree_util.tree_leaves(params)[0]).dtype
        return LevenbergMarquardtState(count=znp.zeros([], znp.int32),
                                       damping=znp.asarray(damping, vd),
                                       nu=znp.asarray(2.0, vd), value=znp.asarray(znp.inf, vd))

    def update_fn(updates, state, params, *, residual_fn=None, **extra):
        del updates
        check_state(state, LevenbergMarquardtState, "levenberg_marquardt")
        if residual_fn is None or params is None:
            raise errors.ZeraxTypeError(
                "levenberg_marquardt.update needs the params and residual_fn=: "
                "update(grads, state, params, residual_fn=r).")
        _check_extra("levenberg_marquardt", extra, residual_fn)
        kw = _kwargs_for(residual_fn, extra)
        with _errstate():
            flat, unravel, r, jac = _dense_system(residual_fn, params, kw)
            jtj = jac.T @ jac
            g = jac.T @ r
            diag = znp.diag(jtj) if scale_by_diagonal else znp.ones_like(flat)
            mu = state.damping
            d = znp.linalg.solve(jtj + mu * znp.diag(diag), -g)
            f0 = 0.5 * znp.sum(r * r)
            leaves = tree_util.tree_leaves(residual_fn(unravel(flat + d), **kw))
            r1 = znp.concatenate([znp.ravel(leaf) for leaf in leaves])
            f1 = 0.5 * znp.sum(r1 * r1)
            predicted = -(znp.dot(g, d) + 0.5 * znp.dot(d, jtj @ d))
            rho = (f0 - f1) / znp.where(predicted == 0.0, 1.0, predicted)
            accept = (f1 < f0) & znp.isfinite(f1)
            new_mu = znp.where(accept, mu * znp.maximum(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3),
                               mu * state.nu)
            new_nu = znp.where(accept, 2.0, 2.0 * state.nu)
            step = unravel(znp.where(accept, d, znp.zeros_like(d)))
            value = znp.where(accept, f1, f0)
        vd = state.damping.dtype
        return step, LevenbergMarquardtState(count=safe_increment(state.count),
                                             damping=new_mu.astype(vd), nu=new_nu.astype(vd),
                                             value=value.astype(vd))
    return GradientTransformationExtraArgs(init_fn, update_fn)



