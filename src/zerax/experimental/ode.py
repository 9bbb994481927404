"""`zerax.experimental.ode`: JAX's ``jax.experimental.ode.odeint`` on zerax.

Adaptive Dormand-Prince 5(4) Runge-Kutta integration with JAX's step-size controller,
initial step selection (Hairer, Norsett and Wanner, Sec. II.4) and 4th-order dense
output, written with ``zerax.lax.while_loop`` and ``scan`` so that it jits and vmaps.
Reverse-mode derivatives with respect to ``y0``, ``t`` and ``*args`` come from the adjoint
ODE solved backwards in time (Chen et al. 2018, Appendix C) through ``zerax.custom_vjp``,
as JAX's; forward mode (``jvp``, ``jacfwd``, which JAX's odeint refuses) from the forward
sensitivity equations integrated beside the state (``custom_vjp.defjvp_forward``).  Values that ``func`` closes over and that a transform traces are hoisted into
``*args`` first, so derivatives flow to them too.

>>> import zerax.numpy as znp
>>> from zerax.experimental.ode import odeint
>>> ys = odeint(lambda y, t, k: -k * y, znp.array(1.0), znp.array([0.0, 1.0]), 2.0)
>>> round(float(ys[1]), 8) == round(float(znp.exp(-2.0)), 8)
True
"""

from __future__ import annotations

import operator as op

import numpy as np

import zerax as zx
from .. import errors
from .. import lax
from .. import numpy as jnp
from ..flatten_util import ravel_pytree
from ..tree_util import tree_leaves, tree_map, tree_structure, tree_unflatten

__all__ = ["odeint"]


def _ravel_first_arg(func, unravel):
    def flat_func(y_flat, *args):
        ans_flat, _ = ravel_pytree(func(unravel(y_flat), *args))
        return ans_flat
    return flat_func


def interp_fit_dopri(y0, y1, k, dt):
    """Coefficients of the quartic through a Dormand-Prince step (dense output)."""
    dps_c_mid = jnp.array([
        6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
        -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
        -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2], dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(dps_c_mid, k)
    return jnp.stack(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """The quartic (highest power first) with these ends, slopes and midpoint."""
    dt = dt.astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def _abs(x):
    return jnp.sqrt(_abs2(x)) if jnp.iscomplexobj(x) else jnp.abs(x)


def _polyval(coeffs, x):
    # Horner's rule over the five dense-output coefficients (jnp.polyval's order)
    y = coeffs[0]
    for c in coeffs[1:]:
        y = y * x + c
    return y


def _norm(x):
    return jnp.sqrt(jnp.sum(_abs2(x)))


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """The first step (Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4)."""
    dtype = y0.dtype
    scale = atol + _abs(y0) * rtol
    d0 = _norm(y0 / scale.astype(dtype))
    d1 = _norm(f0 / scale.astype(dtype))
    # the unselected branches are kept finite (the same values as JAX's where; no
    # division-by-zero warnings from the eager NumPy implementations)
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = jnp.where(small, 1e-6, 0.01 * d0 / jnp.where(small, 1.0, d1))
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = _norm((f1 - f0) / scale.astype(dtype)) / h0
    flat = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = jnp.where(flat, jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.where(flat, 1.0, jnp.maximum(d1, d2))) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


_ALPHA = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0]
_BETA = [[1 / 5, 0, 0, 0, 0, 0, 0], [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
         [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]]
_C_SOL = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]
_C_ERROR = [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085,
            125 / 192 - 451 / 720, -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300,
            -1. / 60.]


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step: ``(y1, f1, y1_error, k)`` with the seven stages ``k``."""
    alpha = jnp.array(_ALPHA, dtype=dt.dtype)
    beta = jnp.array(_BETA, dtype=f0.dtype)
    c_sol = jnp.array(_C_SOL, dtype=f0.dtype)
    c_error = jnp.array(_C_ERROR, dtype=f0.dtype)

    def body_fun(i, k):
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt.astype(f0.dtype) * jnp.dot(beta[i - 1, :], k)
        ft = func(yi, ti)
        return k.at[i, :].set(ft)

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, body_fun, k)
    y1 = dt.astype(f0.dtype) * jnp.dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * jnp.dot(c_error, k)
    f1 = k[-1]
    return y1, f1, y1_error, k


def _abs2(x):
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """The RMS of the error estimate over the mixed tolerance."""
    err_tol = atol + rtol * jnp.maximum(_abs(y0), _abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(_abs2(err_ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                      order=5.0):
    """JAX's step-size controller: grow at most 10x, shrink at most 5x (only on rejection)."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    zero = mean_error_ratio == 0
    ratio = jnp.where(zero, 1.0, mean_error_ratio)
    factor = jnp.minimum(ifactor, jnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(zero, last_step * ifactor, last_step * factor)


# --------------------------------------------------------------------------- closures

def _is_traced(x):
    return not isinstance(x, (np.ndarray, np.generic, zx.Array, int, float, complex, bool))


def _closure_convert(func, y0, t0, *args):
    """``(converted, hoisted)``: ``converted(y, t, *args, *hoisted)`` is ``func`` with
    the traced inexact values it closes over passed in explicitly (JAX's
    ``closure_convert``), so that custom_vjp's backward pass differentiates them."""
    closed, out_shape = zx.make_jaxpr(func, return_shape=True)(y0, t0, *args)
    consts = list(closed.consts)
    hoist = [i for i, c in enumerate(consts)
             if _is_traced(c) and np.issubdtype(np.dtype(c.dtype), np.inexact)]
    if not hoist:
        return func, []
    out_tree = tree_structure(out_shape)
    jaxpr, nargs = closed.jaxpr, len(args)

    def converted(y, t, *rest):
        cs = list(consts)
        for i, h in zip(hoist, rest[nargs:]):
            cs[i] = h
        outs = zx.eval_jaxpr(jaxpr, cs, *tree_leaves((y, t, *rest[:nargs])))
        return tree_unflatten(out_tree, list(outs))

    return converted, [consts[i] for i in hoist]


def _check_args(args, t):
    for arg in tree_leaves(args):
        if isinstance(arg, (str, bytes)) or not (
                isinstance(arg, (bool, int, float, complex, np.ndarray, np.generic))
                or (hasattr(arg, "shape") and hasattr(arg, "dtype"))):
            raise errors.ZeraxTypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg!r:.80}.")
    t = jnp.asarray(t)
    if not np.issubdtype(np.dtype(t.dtype), np.floating):
        raise errors.ZeraxTypeError(
            f"odeint: t must be an array of floats, but got dtype {t.dtype} "
            "(write the times as floats, e.g. znp.linspace(0., 10., 101)).")
    if t.ndim != 1 or t.shape[0] < 1:
        raise errors.ShapeError(
            f"odeint: t must be a non-empty 1-D array of times, got shape {t.shape}.")
    return t


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``, returning ``y`` at each
    time in ``t`` (JAX's ``jax.experimental.ode.odeint``).

    Args:
      func: ``func(y, t, *args)``, returning a pytree structured as ``y0``.
      y0: an array or pytree of arrays, the state at ``t[0]``.
      t: 1-D float array of increasing times.
      *args: arrays, scalars or pytrees of them passed to ``func`` (differentiable).
      rtol, atol: relative and absolute local error tolerances.
      mxstep: maximum number of steps (accepted or rejected) per output interval; when it
        is reached the solver stops and interpolates, as JAX's (no error).
      hmax: maximum step size.

    Returns:
      ``y0``'s structure with a leading axis of length ``len(t)``.

    >>> import zerax.numpy as znp
    >>> ts = znp.linspace(0., 3.14159265, 3)
    >>> ys = odeint(lambda y, t: (y[1], -y[0]), (znp.array(0.0), znp.array(1.0)), ts)
    >>> [round(float(v), 6) + 0.0 for v in ys[0]]
    [0.0, 1.0, 0.0]
    """
    if not callable(func):
        raise errors.ZeraxTypeError(f"odeint: func must be callable, got {func!r:.60}.")
    t = _check_args(args, t)
    y0 = tree_map(_as_inexact, y0)
    if not tree_leaves(y0):
        raise errors.ZeraxValueError("odeint: y0 has no arrays (an empty pytree).")
    for name, v in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool) \
                or not v > 0:
            raise errors.ZeraxValueError(
                f"odeint: {name} must be a positive Python number, got {v!r:.40}.")
    converted, consts = _closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _as_inexact(x):
    x = jnp.asarray(x)
    if not np.issubdtype(np.dtype(x.dtype), np.inexact):
        x = x.astype(jnp.result_type(x.dtype, 1.0) if x.dtype != np.bool_ else float)
    return x


def _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y0, unravel = ravel_pytree(y0)
    func = _ravel_first_arg(func, unravel)
    out = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return zx.vmap(unravel)(out)


def _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    def func_(y, t):
        return func(y, t, *args)

    def scan_fun(carry, target_t):
        def cond_fun(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state):
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = jnp.clip(optimal_step_size(dt, error_ratio), min=0., max=hmax)
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            accept = error_ratio <= 1.
            return [jnp.where(accept, a, b) for a, b in zip(new, old)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [jnp.asarray(0)] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = _polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = jnp.clip(initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax)
    interp_coeff = jnp.stack([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = lax.scan(scan_fun, init_carry, ts[1:])
    return jnp.concatenate((y0[None], ys))


_odeint = zx.custom_vjp(_odeint_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def aug_dynamics(augmented_state, t, *args):
        """The system augmented with vjp_y, vjp_t and vjp_args (``t`` is negated time)."""
        y, y_bar, *_ = augmented_state
        y_dot, vjpfun = zx.vjp(func, y, -t, *args)
        return (-y_dot, *vjpfun(y_bar))

    def scan_fun(carry, i):
        y_bar, t0_bar, args_bar = carry
        # the effect of moving the measurement time (t_bar is real even for complex y)
        t_bar = jnp.real(jnp.dot(func(ys[i], ts[i], *args), g[i]))
        t0_bar = t0_bar - t_bar
        # run the augmented system backwards to the previous observation
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar),
            jnp.stack([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(op.itemgetter(1), (y_bar, t0_bar, args_bar))
        # add the gradient from the current output
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, args_bar), t_bar

    init_carry = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        scan_fun, init_carry, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.reshape(t0_bar, (1,)).astype(ts.dtype),
                              rev_ts_bar[::-1].astype(ts.dtype)])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)


def _odeint_jvp(func, rtol, atol, mxstep, hmax, primals, tangents):
    """Forward mode: the sensitivity ``s = dy`` along the tangents solves
    ``ds/dt = d_y func . s + d_args func . args_dot`` from ``s(t0) = y0_dot - func(y0, t0)
    t_dot[0]`` (moving the start), integrated beside ``y`` (error control on both); moving
    an output time ``t_i`` adds ``func(y_i, t_i) t_dot[i]``."""
    y0, ts, *args = primals
    y0_dot, ts_dot, *args_dot = tangents
    n = len(args)
    s0 = y0_dot - func(y0, ts[0], *args) * ts_dot[0].astype(y0.dtype)

    def aug(state, t, *a):
        y, sens = state
        return zx.jvp(lambda y_, *a_: func(y_, t, *a_), (y, *a[:n]), (sens, *a[n:]))

    ys, ss = odeint(aug, (y0, s0), ts, *args, *args_dot, rtol=rtol, atol=atol, mxstep=mxstep,
                    hmax=hmax)
    fs = zx.vmap(lambda y, t: func(y, t, *args))(ys, ts)
    return ss + fs * ts_dot[:, None].astype(ys.dtype)


_odeint.defjvp_forward(_odeint_jvp)
