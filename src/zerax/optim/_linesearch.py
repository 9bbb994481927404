"""Line searches as gradient transformations (optax's): the zoom line search (strong
Wolfe conditions, cubic/quadratic/bisection interpolation; Nocedal & Wright, Alg. 3.5-3.6)
used by `lbfgs`, the backtracking (Armijo) line search, and
``value_and_grad_from_state``, which reuses the value and gradient a line search stored
in the state.  The searches are ``lax.while_loop``s, so an optimiser step jits whole.
"""

from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

import zerax
import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import GradientTransformationExtraArgs, check_state, loss_data, safe_increment


def _extract_fns_kwargs(fns, kwargs):
    # (residual_fn, the update protocol's name a line search has no use for, is ignored)
    kwargs = loss_data(kwargs)
    names = [list(inspect.signature(fn).parameters.keys()) for fn in fns]
    fns_kwargs = [{k: v for k, v in kwargs.items() if k in n} for n in names]
    all_names = functools.reduce(operator.add, names)
    remaining = {k: v for k, v in kwargs.items() if k not in all_names}
    return fns_kwargs, remaining


def _need(name, **kw):
    missing = [k for k, v in kw.items() if v is None]
    if missing:
        raise errors.ZeraxTypeError(
            f"{name}.update needs the keyword arguments {', '.join(missing)}: call "
            f"update(updates, state, params, value=loss, grad=grads, value_fn=loss_fn) "
            f"(optax's extra arguments).")


def _val_dtype(params):
    leaf = znp.asarray(tree_util.tree_leaves(params)[0])
    return znp.real(znp.zeros((), leaf.dtype)).dtype


# ----------------------------------------------------------------------------- backtracking

class BacktrackingLinesearchInfo(NamedTuple):
    """Diagnostics of the last backtracking search."""
    num_linesearch_steps: Any
    decrease_error: Any


class ScaleByBacktrackingLinesearchState(NamedTuple):
    """The accepted step size, value and (optionally) gradient of the last search."""
    learning_rate: Any
    value: Any
    grad: Any
    info: BacktrackingLinesearchInfo


class _BacktrackingSearchState(NamedTuple):
    learning_rate: Any
    new_value: Any
    new_grad: Any
    decrease_error: Any
    iter_num: Any


def scale_by_backtracking_linesearch(
        max_backtracking_steps: int, slope_rtol: Any = 1e-4, decrease_factor: Any = 0.8,
        increase_factor: Any = 1.5, max_learning_rate: Any = 1.0, atol: Any = 0.0,
        rtol: Any = 0.0, store_grad: bool = False, verbose: bool = False
) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size found by backtracking until the Armijo
    (sufficient decrease) condition holds; ``update`` takes ``value=``, ``grad=`` and
    ``value_fn=`` (optax's).

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum(x ** 2)
    >>> tx = optim.chain(optim.sgd(1.0), scale_by_backtracking_linesearch(15))
    >>> x = znp.asarray([1.0, -2.0]); v, g = zx.value_and_grad(f)(x)
    >>> u, s = tx.update(g, tx.init(x), x, value=v, grad=g, value_fn=f)
    >>> float(f(x + u)) < float(v)
    True
    """
    del verbose

    def init_fn(params):
        grad = otu.tree_zeros_like(params) if store_grad else None
        vd = _val_dtype(params)
        return ScaleByBacktrackingLinesearchState(
            learning_rate=znp.asarray(1.0, dtype=vd), value=znp.asarray(znp.inf, dtype=vd),
            grad=grad, info=BacktrackingLinesearchInfo(
                num_linesearch_steps=znp.asarray(0),
                decrease_error=znp.asarray(znp.inf, dtype=vd)))

    def decrease_error_of(stepsize, slope, value, new_value):
        err = new_value - (1.0 + rtol) * value - stepsize * slope_rtol * slope
        err = znp.where(znp.isnan(err), znp.inf, err)
        return znp.maximum(err, 0.0)

    def update_fn(updates, state, params, *, value=None, grad=None, value_fn=None,
                  **extra_args):
        check_state(state, ScaleByBacktrackingLinesearchState,
                    "scale_by_backtracking_linesearch")
        _need("scale_by_backtracking_linesearch", value=value, grad=grad, value_fn=value_fn)
        (fn_kwargs,), remaining = _extract_fns_kwargs((value_fn,), extra_args)
        if remaining:
            raise errors.ZeraxTypeError(
                f"Unexpected keyword arguments passed to "
                f"`scale_by_backtracking_linesearch.update`: {sorted(remaining)} are not "
                f"arguments of `value_fn`.")
        value_fn_ = functools.partial(value_fn, **fn_kwargs)
        slope = znp.real(otu.tree_vdot(updates, otu.tree_conj(grad)))

        def cond_fn(s):
            return (~(s.decrease_error <= atol)) & (s.iter_num <= max_backtracking_steps)

        def body_fn(s):
            lr = znp.where(s.iter_num > 0, decrease_factor * s.learning_rate, s.learning_rate)
            new_params = otu.tree_add_scale(params, lr, updates)
            new_grad = s.new_grad
            if store_grad:
                new_value, new_g = zerax.value_and_grad(value_fn_)(new_params)
                err = decrease_error_of(lr, slope, value, new_value)
                new_grad = otu.tree_where(
                    (err <= atol) | (s.iter_num == max_backtracking_steps), new_g, new_grad)
            else:
                new_value = value_fn_(new_params)
                err = decrease_error_of(lr, slope, value, new_value)
            new = _BacktrackingSearchState(learning_rate=lr, new_value=new_value,
                                           new_grad=new_grad, decrease_error=err,
                                           iter_num=s.iter_num + 1)
            return otu.tree_cast_like(new, s)

        lr0 = znp.minimum(increase_factor * state.learning_rate, max_learning_rate)
        vd = znp.asarray(value).dtype
        search = _BacktrackingSearchState(
            learning_rate=znp.asarray(lr0), new_value=znp.asarray(value),
            new_grad=otu.tree_zeros_like(params),
            decrease_error=znp.asarray(znp.inf, dtype=vd), iter_num=znp.asarray(0))
        search = lax.while_loop(cond_fn, body_fn, search)
        new_lr = znp.where(znp.isinf(search.decrease_error), 0.0, search.learning_rate)
        new_state = ScaleByBacktrackingLinesearchState(
            learning_rate=new_lr, value=search.new_value,
            grad=search.new_grad if store_grad else None,
            info=BacktrackingLinesearchInfo(num_linesearch_steps=search.iter_num,
                                            decrease_error=search.decrease_error))
        return otu.tree_scale(new_lr, updates), otu.tree_cast_like(new_state, state)
    return GradientTransformationExtraArgs(init_fn, update_fn)


# ----------------------------------------------------------------------------- zoom

class ZoomLinesearchState(NamedTuple):
    """The state of one zoom line search (optax's fields)."""
    count: Any
    params: Any
    updates: Any
    stepsize_guess: Any
    stepsize: Any
    value: Any
    grad: Any
    slope: Any
    value_init: Any
    slope_init: Any
    decrease_error: Any
    curvature_error: Any
    error: Any
    interval_found: Any
    done: Any
    failed: Any
    low: Any
    value_low: Any
    slope_low: Any
    high: Any
    value_high: Any
    slope_high: Any
    cubic_ref: Any
    value_cubic_ref: Any
    safe_stepsize: Any
    safe_value: Any
    safe_grad: Any


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    r0 = fb - fa - C * db
    r1 = fc - fa - C * dc
    A = (dc ** 2 * r0 + (-db ** 2) * r1) / denom
    B = ((-dc ** 3) * r0 + db ** 3 * r1) / denom
    radical = B * B - 3.0 * A * C
    return a + (-B + znp.sqrt(radical)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    D = fa
    C = fpa
    db = b - a
    B = (fb - D - C * db) / db ** 2
    return a - C / (2.0 * B)


def zoom_linesearch(max_linesearch_steps: int, max_stepsize: Optional[Any] = None,
                    tol: Any = 0.0, increase_factor: Any = 2.0, slope_rtol: Any = 1e-4,
                    curv_rtol: Any = 0.9, approx_dec_rtol: Optional[Any] = 1e-6,
                    interval_threshold: Any = 1e-5, verbose: bool = False):
    """The zoom line search as ``(init, step, cond)`` functions (optax's); see
    `scale_by_zoom_linesearch` for the transformation.

    >>> init, step, cond = zoom_linesearch(10)
    >>> callable(step)
    True
    """
    del verbose

    def on_line(vg_fn, params, stepsize, updates, fn_kwargs):
        step = otu.tree_add_scale(params, stepsize, updates)
        value_step, grad_step = vg_fn(step, **fn_kwargs)
        slope_step = znp.real(otu.tree_vdot(otu.tree_conj(grad_step), updates))
        return step, value_step, grad_step, slope_step

    def decrease_error_of(stepsize, value_step, slope_step, value_init, slope_init):
        err = value_step - value_init - slope_rtol * stepsize * slope_init
        if approx_dec_rtol is not None:
            approx = slope_step - (2 * slope_rtol - 1.0) * slope_init
            delta = value_step - value_init - approx_dec_rtol * znp.abs(value_init)
            approx = znp.maximum(approx, delta)
            err = znp.minimum(approx, err)
        err = znp.maximum(err, 0.0)
        return znp.where(znp.isnan(err), znp.inf, err)

    def curvature_error_of(slope_step, slope_init):
        err = znp.abs(slope_step) - curv_rtol * znp.abs(slope_init)
        err = znp.maximum(err, 0.0)
        return znp.where(znp.isnan(err), znp.inf, err)

    def try_safe_step(state):
        outside = znp.isinf(state.decrease_error)
        fs, fv, fg = otu.tree_where((state.safe_stepsize > 0.0) | outside,
                                    [state.safe_stepsize, state.safe_value, state.safe_grad],
                                    [state.stepsize, state.value, state.grad])
        return otu.tree_cast_like(state._replace(stepsize=fs, grad=fg, value=fv), state)

    def search_interval(state, vg_fn, fn_kwargs):
        it = state.count
        larger = increase_factor * state.stepsize
        new_stepsize = znp.where(it == 0, state.stepsize_guess, larger)
        if max_stepsize is not None:
            max_reached = new_stepsize >= max_stepsize
            new_stepsize = znp.minimum(new_stepsize, max_stepsize)
        else:
            max_reached = znp.asarray(False)
        _, new_value, new_grad, new_slope = on_line(vg_fn, state.params, new_stepsize,
                                                    state.updates, fn_kwargs)
        dec = decrease_error_of(new_stepsize, new_value, new_slope, state.value_init,
                                state.slope_init)
        curv = curvature_error_of(new_slope, state.slope_init)
        new_error = znp.maximum(dec, curv)
        safe_decrease = dec <= tol
        n_safe_s, n_safe_v, n_safe_g = otu.tree_where(
            safe_decrease, [new_stepsize, new_value, new_grad],
            [state.safe_stepsize, state.safe_value, state.safe_grad])
        set_high = (dec > 0.0) | ((new_value >= state.value) & (it > 0))
        set_low = (new_slope >= 0.0) & ~set_high
        default = [state.stepsize, state.value, state.slope, new_stepsize, new_value, new_slope]
        candidate = [new_stepsize, new_value, new_slope, state.stepsize, state.value,
                     state.slope]
        low, value_low, slope_low, high, value_high, slope_high = otu.tree_where(
            set_low, candidate, default)
        interval_found = set_high | set_low | (new_error <= tol)
        done = (new_error <= tol) | (max_reached & ~interval_found)
        failed = ((it + 1) >= max_linesearch_steps) & ~done
        new = ZoomLinesearchState(
            count=safe_increment(it), params=state.params, updates=state.updates,
            stepsize_guess=state.stepsize_guess, stepsize=new_stepsize, value=new_value,
            grad=new_grad, slope=new_slope, value_init=state.value_init,
            slope_init=state.slope_init, decrease_error=dec, curvature_error=curv,
            error=new_error, interval_found=znp.asarray(interval_found),
            done=znp.asarray(done), failed=znp.asarray(failed), low=low, value_low=value_low,
            slope_low=slope_low, high=high, value_high=value_high, slope_high=slope_high,
            cubic_ref=low, value_cubic_ref=value_low, safe_stepsize=n_safe_s,
            safe_value=n_safe_v, safe_grad=n_safe_g)
        return otu.tree_cast_like(new, state)

    def zoom_into_interval(state, vg_fn, fn_kwargs):
        it = state.count
        low, value_low, slope_low = state.low, state.value_low, state.slope_low
        high, value_high, slope_high = state.high, state.value_high, state.slope_high
        delta = znp.abs(high - low)
        left = znp.minimum(high, low)
        right = znp.maximum(high, low)
        cubic_chk = 0.2 * delta
        quad_chk = 0.1 * delta
        too_small = delta <= interval_threshold
        mid_cubic = _cubicmin(low, value_low, slope_low, high, value_high, state.cubic_ref,
                              state.value_cubic_ref)
        use_cubic = (mid_cubic > left + cubic_chk) & (mid_cubic < right - cubic_chk)
        mid_quad = _quadmin(low, value_low, slope_low, high, value_high)
        use_quad = ~use_cubic & (mid_quad > left + quad_chk) & (mid_quad < right - quad_chk)
        mid_bis = (low + high) / 2.0
        use_bis = ~use_cubic & ~use_quad
        middle = znp.where(use_cubic, mid_cubic, state.cubic_ref)
        middle = znp.where(use_quad, mid_quad, middle)
        middle = znp.where(use_bis, mid_bis, middle)
        _, v_mid, g_mid, s_mid = on_line(vg_fn, state.params, middle, state.updates,
                                         fn_kwargs)
        dec = decrease_error_of(middle, v_mid, s_mid, state.value_init, state.slope_init)
        curv = curvature_error_of(s_mid, state.slope_init)
        new_error = znp.maximum(dec, curv)
        upd_safe = (dec <= tol) & (v_mid < state.safe_value)
        n_safe_s, n_safe_v, n_safe_g = otu.tree_where(
            upd_safe, [middle, v_mid, g_mid],
            [state.safe_stepsize, state.safe_value, state.safe_grad])
        done = new_error <= tol
        set_high_mid = (dec > 0.0) | (v_mid >= value_low)
        secant = s_mid * (high - low)
        set_high_low = (secant >= 0.0) & ~set_high_mid
        set_low_mid = ~set_high_mid
        nh = otu.tree_where(set_high_mid, [middle, v_mid, s_mid], [high, value_high, slope_high])
        new_high, new_vh, new_sh = otu.tree_where(set_high_low, [low, value_low, slope_low], nh)
        new_low, new_vl, new_sl = otu.tree_where(set_low_mid, [middle, v_mid, s_mid],
                                                 [low, value_low, slope_low])
        new_cref, new_vcref = otu.tree_where(set_high_mid | set_high_low, [high, value_high],
                                             [low, value_low])
        max_iter = (it + 1) >= max_linesearch_steps
        presumably_failed = znp.asarray(max_iter) | (too_small & (n_safe_s > 0.0))
        failed = presumably_failed & ~done
        new = ZoomLinesearchState(
            count=safe_increment(it), params=state.params, updates=state.updates,
            stepsize_guess=state.stepsize_guess, stepsize=middle, value=v_mid, grad=g_mid,
            slope=s_mid, value_init=state.value_init, slope_init=state.slope_init,
            decrease_error=dec, curvature_error=curv, error=new_error,
            interval_found=state.interval_found, done=done, failed=failed, low=new_low,
            value_low=new_vl, slope_low=new_sl, high=new_high, value_high=new_vh,
            slope_high=new_sh, cubic_ref=new_cref, value_cubic_ref=new_vcref,
            safe_stepsize=n_safe_s, safe_value=n_safe_v, safe_grad=n_safe_g)
        return otu.tree_cast_like(new, state)

    def init_fn(updates, params, *, value, grad, prev_stepsize=1.0,
                initial_guess_strategy="one"):
        if initial_guess_strategy == "one":
            guess = znp.asarray(1.0)
        elif initial_guess_strategy == "keep":
            guess = znp.asarray(prev_stepsize)
        else:
            raise errors.ZeraxValueError(
                f"Unknown initial guess strategy: {initial_guess_strategy!r}; use 'one' or "
                f"'keep'.")
        vd = _val_dtype(params)
        value = znp.asarray(value)
        slope = znp.real(otu.tree_vdot(updates, grad))
        return ZoomLinesearchState(
            count=znp.asarray(0), params=params, updates=updates, stepsize_guess=guess,
            stepsize=znp.asarray(0.0, dtype=vd), value=value.astype(vd), grad=grad,
            slope=slope, value_init=value, slope_init=slope,
            decrease_error=znp.asarray(znp.inf), curvature_error=znp.asarray(znp.inf),
            error=znp.asarray(znp.inf), interval_found=znp.asarray(False),
            done=znp.asarray(False), failed=znp.asarray(False), low=znp.asarray(0.0),
            value_low=value, slope_low=slope, high=znp.asarray(0.0), value_high=value,
            slope_high=slope, cubic_ref=znp.asarray(0.0), value_cubic_ref=value,
            safe_stepsize=znp.asarray(0.0), safe_value=value, safe_grad=grad)

    def step_fn(state, *, value_and_grad_fn, fn_kwargs):
        new = lax.cond(state.interval_found,
                       functools.partial(zoom_into_interval, vg_fn=value_and_grad_fn,
                                         fn_kwargs=fn_kwargs),
                       functools.partial(search_interval, vg_fn=value_and_grad_fn,
                                         fn_kwargs=fn_kwargs),
                       state)
        new = lax.cond(new.failed, try_safe_step, lambda x: x, new)
        return otu.tree_cast_like(new, state)

    def cond_fn(state):
        return ~(state.done | state.failed)

    return init_fn, step_fn, cond_fn


class ZoomLinesearchInfo(NamedTuple):
    """Diagnostics of the last zoom search."""
    num_linesearch_steps: Any
    decrease_error: Any
    curvature_error: Any


class ScaleByZoomLinesearchState(NamedTuple):
    """The accepted step size, and the value and gradient at the accepted point."""
    learning_rate: Any
    value: Any
    grad: Any
    info: ZoomLinesearchInfo


def scale_by_zoom_linesearch(max_linesearch_steps: int, max_learning_rate: Optional[Any] = None,
                             tol: Any = 0.0, increase_factor: Any = 2.0,
                             slope_rtol: Any = 1e-4, curv_rtol: Any = 0.9,
                             approx_dec_rtol: Optional[Any] = 1e-6,
                             stepsize_precision: Any = 1e-5,
                             initial_guess_strategy: str = "keep", verbose: bool = False
                             ) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size satisfying the strong Wolfe conditions (zoom
    line search); ``update`` takes ``value=``, ``grad=`` and ``value_fn=`` and stores the
    value and gradient at the new point in the state (see `value_and_grad_from_state`).

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum((x - 1.0) ** 2)
    >>> tx = optim.chain(optim.sgd(1.0), scale_by_zoom_linesearch(10))
    >>> x = znp.zeros(2); v, g = zx.value_and_grad(f)(x)
    >>> u, s = tx.update(g, tx.init(x), x, value=v, grad=g, value_fn=f)
    >>> (x + u).tolist()
    [1.0, 1.0]
    """
    init_ls, step_ls, cond_ls = zoom_linesearch(
        max_linesearch_steps=max_linesearch_steps, max_stepsize=max_learning_rate, tol=tol,
        increase_factor=increase_factor, slope_rtol=slope_rtol, curv_rtol=curv_rtol,
        approx_dec_rtol=approx_dec_rtol, interval_threshold=stepsize_precision,
        verbose=verbose)

    def init_fn(params):
        vd = _val_dtype(params)
        return ScaleByZoomLinesearchState(
            learning_rate=znp.asarray(1.0, dtype=vd), value=znp.asarray(znp.inf, dtype=vd),
            grad=otu.tree_zeros_like(params),
            info=ZoomLinesearchInfo(num_linesearch_steps=znp.asarray(0),
                                    decrease_error=znp.asarray(znp.inf),
                                    curvature_error=znp.asarray(znp.inf)))

    def update_fn(updates, state, params, *, value=None, grad=None, value_fn=None,
                  **extra_args):
        check_state(state, ScaleByZoomLinesearchState, "scale_by_zoom_linesearch")
        _need("scale_by_zoom_linesearch", value=value, grad=grad, value_fn=value_fn)
        (fn_kwargs,), remaining = _extract_fns_kwargs((value_fn,), extra_args)
        if remaining:
            raise errors.ZeraxTypeError(
                f"Unexpected keyword arguments passed to `scale_by_zoom_linesearch.update`: "
                f"{sorted(remaining)} are not arguments of `value_fn`.")
        vg_fn = zerax.value_and_grad(value_fn)
        with np.errstate(divide="ignore", invalid="ignore"):
            # eagerly both interpolation candidates are computed; a 0/0 in the unused one
            # must not warn (compiled code never does)
            return _zoom_update(updates, state, params, value, grad, vg_fn, fn_kwargs)

    def _zoom_update(updates, state, params, value, grad, vg_fn, fn_kwargs):
        init_state = init_ls(updates, params, value=value, grad=grad,
                             prev_stepsize=state.learning_rate,
                             initial_guess_strategy=initial_guess_strategy)
        final = lax.while_loop(
            cond_ls, functools.partial(step_ls, value_and_grad_fn=vg_fn, fn_kwargs=fn_kwargs),
            init_state)
        lr = final.stepsize
        new_state = ScaleByZoomLinesearchState(
            learning_rate=lr, value=final.value, grad=final.grad,
            info=ZoomLinesearchInfo(num_linesearch_steps=final.count,
                                    decrease_error=final.decrease_error,
                                    curvature_error=final.curvature_error))
        return otu.tree_scale(lr, updates), otu.tree_cast_like(new_state, state)
    return GradientTransformationExtraArgs(init_fn, update_fn)


def value_and_grad_from_state(value_fn: Callable) -> Callable:
    """``value_and_grad(value_fn)`` that takes ``state=`` and returns the value and
    gradient a line search stored there when they are finite (saving one evaluation per
    L-BFGS step), else computes them.

    >>> import zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum(x ** 2)
    >>> opt = optim.lbfgs()
    >>> x = znp.asarray([1.0, 2.0]); s = opt.init(x)
    >>> v, g = value_and_grad_from_state(f)(x, state=s)
    >>> float(v), g.tolist()
    (5.0, [2.0, 4.0])
    """
    def _value_and_grad(params, *fn_args, state, **fn_kwargs):
        value = otu.tree_get(state, "value")
        grad = otu.tree_get(state, "grad")
        if value is None or grad is None:
            raise errors.ZeraxValueError(
                "Value or gradient not found in the state. Make sure that these values are "
                "stored in the state by the optimizer (e.g. with a zoom line search, as "
                "zerax.optim.lbfgs does).")
        value = znp.asarray(value)
        return lax.cond(
            (~znp.isinf(value)) & (~znp.isnan(value)),
            lambda p, a, kw: (value, grad),
            lambda p, a, kw: zerax.value_and_grad(value_fn)(p, *a, **kw),
            params, fn_args, fn_kwargs)
    return _value_and_grad
