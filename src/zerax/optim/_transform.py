"""The ``scale_by_*`` family behind optax's aliases: adaptive rescalings of the updates
(Adam and its relatives, RMSProp, AdaGrad, AdaDelta, Lion, Yogi, RAdam, Rprop, SM3,
NovoGrad, AdaBelief, trust ratios, optimistic gradients, Polyak step sizes) and the
plain scalings (``scale``, ``scale_by_learning_rate``, ``scale_by_schedule``).

Each one follows optax 0.2.x's arithmetic operation by operation (the same eps placement,
bias corrections and int32 step counters), so the numbers agree with optax in float64.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import (NO_PARAMS_MSG, EmptyState, GradientTransformation, abs_sq, check_same_tree, check_scalar, params_for_updates, check_state, identity, init_empty_state, safe_increment, safe_norm, safe_root_mean_squares)


def _none(x):
    return x is None


def _zero_count():
    return znp.zeros([], znp.int32)


def _canonical_dtype(dtype):
    return None if dtype is None else znp.dtype(dtype)


def _reject_complex(params):
    if any(znp.iscomplexobj(x) for x in tree_util.tree_leaves(params)):
        raise errors.ZeraxValueError(
            "This transformation does not support complex parameters.")


def _check(name, state, cls, updates, field):
    check_state(state, cls, name)
    check_same_tree(name, updates, "updates", getattr(state, field), "optimizer state")


def _need_params(params, name):
    if params is None:
        raise errors.ZeraxValueError(f"{name}: {NO_PARAMS_MSG}")


# ----------------------------------------------------------------------------- scaling

def scale(step_size: Any) -> GradientTransformation:
    """Multiply the updates by a fixed ``step_size``.

    >>> float(scale(-0.1).update(znp.asarray(2.0), EmptyState())[0])
    -0.2
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(lambda g: step_size * g, updates), state
    return GradientTransformation(init_empty_state, update_fn)


class ScaleByScheduleState(NamedTuple):
    """The step count of `scale_by_schedule`."""
    count: Any


def scale_by_schedule(step_size_fn: Any) -> GradientTransformation:
    """Multiply the updates by ``step_size_fn(count)``, counting steps from 0.

    >>> tx = scale_by_schedule(lambda c: 1.0 / (c + 1))
    >>> s = tx.init(0.0); u, s = tx.update(znp.asarray(1.0), s); u, s = tx.update(u, s)
    >>> float(u)
    0.5
    """
    def init_fn(params):
        del params
        return ScaleByScheduleState(count=_zero_count())

    def update_fn(updates, state, params=None):
        del params
        check_state(state, ScaleByScheduleState, "scale_by_schedule")
        step_size = check_scalar(step_size_fn(state.count), "The learning-rate schedule")
        updates = tree_util.tree_map(
            lambda g: znp.asarray(step_size, dtype=znp.asarray(g).dtype) * g, updates)
        return updates, ScaleByScheduleState(count=safe_increment(state.count))
    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate: Any = None, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Scale by ``-learning_rate`` (a number or a schedule; identity when None).

    >>> float(scale_by_learning_rate(0.1).update(znp.asarray(1.0), EmptyState())[0])
    -0.1
    """
    if learning_rate is None:
        return identity()
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


def scale_by_sign() -> GradientTransformation:
    """Replace each update by its sign.

    >>> scale_by_sign().update(znp.asarray([-2.0, 0.0, 3.0]), EmptyState())[0].tolist()
    [-1.0, 0.0, 1.0]
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(znp.sign, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def centralize() -> GradientTransformation:
    """Subtract from each update of rank > 1 its mean over all but the first axis.

    >>> centralize().update(znp.asarray([[1.0, 3.0]]), EmptyState())[0].tolist()
    [[-1.0, 1.0]]
    """
    def sub_mean(g):
        if g.ndim > 1:
            return g - g.mean(tuple(range(1, g.ndim)), keepdims=True)
        return g

    def update_fn(updates, state, params=None):
        del params
        return tree_util.tree_map(sub_mean, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_norm(min_scale: Any = 1e-3) -> GradientTransformation:
    """Scale each update by the norm of its parameter block (at least ``min_scale``).

    >>> tx = scale_by_param_block_norm()
    >>> float(tx.update(znp.asarray([1.0, 1.0]), EmptyState(), znp.asarray([3.0, 4.0]))[0][0])
    5.0
    """
    def update_fn(updates, state, params):
        _need_params(params, "scale_by_param_block_norm")
        params = params_for_updates("scale_by_param_block_norm", updates, params)
        return tree_util.tree_map(lambda u, p: u * safe_norm(p, min_scale),
                                  updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_rms(min_scale: Any = 1e-3) -> GradientTransformation:
    """Scale each update by the RMS of its parameter block (at least ``min_scale``).

    >>> tx = scale_by_param_block_rms()
    >>> float(tx.update(znp.asarray([1.0]), EmptyState(), znp.asarray([3.0]))[0][0])
    3.0
    """
    def update_fn(updates, state, params):
        _need_params(params, "scale_by_param_block_rms")
        params = params_for_updates("scale_by_param_block_rms", updates, params)
        return tree_util.tree_map(lambda u, p: u * safe_root_mean_squares(p, min_scale),
                                  updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def scale_by_trust_ratio(min_norm: Any = 0.0, trust_coefficient: Any = 1.0,
                         eps: Any = 0.0) -> GradientTransformation:
    """Scale each block by ``trust_coefficient * |param| / (|update| + eps)`` (LARS/LAMB).

    >>> tx = scale_by_trust_ratio()
    >>> tx.update(znp.asarray([0.0, 2.0]), EmptyState(), znp.asarray([3.0, 4.0]))[0].tolist()
    [0.0, 5.0]
    """
    def scale_one(update, param):
        param_norm = safe_norm(param, min_norm)
        update_norm = safe_norm(update, min_norm)
        trust_ratio = trust_coefficient * param_norm / (update_norm + eps)
        zero_norm = znp.logical_or(param_norm == 0.0, update_norm == 0.0)
        safe_ratio = znp.where(zero_norm, znp.asarray(1.0, dtype=param.dtype), trust_ratio)
        return update * safe_ratio

    def update_fn(updates, state, params):
        _need_params(params, "scale_by_trust_ratio")
        params = params_for_updates("scale_by_trust_ratio", updates, params)
        return tree_util.tree_map(scale_one, updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def normalize_by_update_norm(scale_factor: Any = 1.0, eps: Any = 1e-6) -> GradientTransformation:
    """Divide the updates by their global norm (plus ``eps``), times ``scale_factor``.

    >>> float(normalize_by_update_norm(eps=0.0).update(znp.asarray([3.0, 4.0]), EmptyState())[0][0])
    0.6
    """
    def update_fn(updates, state, params=None):
        del params
        g_norm = (otu.tree_norm(updates) + eps) / scale_factor
        return tree_util.tree_map(lambda g: g / g_norm, updates), state
    return GradientTransformation(init_empty_state, update_fn)


# ----------------------------------------------------------------------------- RMS family

class ScaleByRssState(NamedTuple):
    """AdaGrad's running sum of squared gradients."""
    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value: Any = 0.1, eps: Any = 1e-7) -> GradientTransformation:
    """Divide by the root of the running sum of squared gradients (AdaGrad).

    >>> tx = scale_by_rss(0.0, 0.0)
    >>> float(tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))[0])
    1.0
    """
    def init_fn(params):
        return ScaleByRssState(sum_of_squares=otu.tree_full_like(
            params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_rss", state, ScaleByRssState, updates, "sum_of_squares")
        sos = tree_util.tree_map(lambda g, t: abs_sq(g) + t, updates, state.sum_of_squares)
        inv = tree_util.tree_map(lambda t: znp.where(t > 0, lax.rsqrt(t + eps), 0.0), sos)
        return otu.tree_mul(inv, updates), ScaleByRssState(sum_of_squares=sos)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRmsState(NamedTuple):
    """RMSProp's moving average of squared gradients."""
    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """RMSProp's state with a step count (``bias_correction=True``)."""
    count: Any
    nu: Any


def scale_by_rms(decay: Any = 0.9, eps: Any = 1e-8, initial_scale: Any = 0.0,
                 eps_in_sqrt: bool = True, bias_correction: bool = False
                 ) -> GradientTransformation:
    """Divide by the root of a moving average of squared gradients (RMSProp).

    >>> tx = scale_by_rms(decay=0.0, eps=0.0)
    >>> float(tx.update(znp.asarray(-2.0), tx.init(znp.asarray(0.0)))[0])
    -1.0
    """
    cls = ScaleByRmsWithCountState if bias_correction else ScaleByRmsState

    def init_fn(params):
        nu = otu.tree_full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRmsWithCountState(count=_zero_count(), nu=nu)
        return ScaleByRmsState(nu=nu)

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_rms", state, cls, updates, "nu")
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            nu_hat = otu.tree_bias_correction(nu, decay, count_inc)
        else:
            nu_hat = nu
        if eps_in_sqrt:
            scaling = tree_util.tree_map(lambda n: lax.rsqrt(n + eps), nu_hat)
        else:
            scaling = tree_util.tree_map(lambda n: 1 / (znp.sqrt(n) + eps), nu_hat)
        updates = tree_util.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRmsWithCountState(count=count_inc, nu=nu)
        return updates, ScaleByRmsState(nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    """Centred RMSProp's moving first and second moments."""
    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """Centred RMSProp's state with a step count (``bias_correction=True``)."""
    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay: Any = 0.9, eps: Any = 1e-8, initial_scale: Any = 0.0,
                    eps_in_sqrt: bool = True, bias_correction: bool = False
                    ) -> GradientTransformation:
    """Divide by a moving estimate of the gradients' standard deviation (centred RMSProp).

    >>> tx = scale_by_stddev(decay=0.5, eps=0.0)
    >>> float(tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))[0])
    2.0
    """
    cls = ScaleByRStdDevWithCountState if bias_correction else ScaleByRStdDevState

    def init_fn(params):
        mu = otu.tree_zeros_like(params)
        nu = otu.tree_full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRStdDevWithCountState(count=_zero_count(), mu=mu, nu=nu)
        return ScaleByRStdDevState(mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_stddev", state, cls, updates, "nu")
        mu = otu.tree_update_moment(updates, state.mu, decay, 1)
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            mu_hat = otu.tree_bias_correction(mu, decay, count_inc)
            nu_hat = otu.tree_bias_correction(nu, decay, count_inc)
        else:
            mu_hat, nu_hat = mu, nu
        if eps_in_sqrt:
            scaling = tree_util.tree_map(lambda m, n: lax.rsqrt(n - abs_sq(m) + eps),
                                         mu_hat, nu_hat)
        else:
            scaling = tree_util.tree_map(lambda m, n: 1 / (znp.sqrt(n - abs_sq(m)) + eps),
                                         mu_hat, nu_hat)
        updates = tree_util.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRStdDevWithCountState(count=count_inc, mu=mu, nu=nu)
        return updates, ScaleByRStdDevState(mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


# ----------------------------------------------------------------------------- Adam family

class ScaleByAdamState(NamedTuple):
    """Adam's step count and first/second moments."""
    count: Any
    mu: Any
    nu: Any


def _nesterov_mu_hat(mu, updates, b1, count_inc):
    return tree_util.tree_map(
        lambda m, g: b1 * m + (1 - b1) * g,
        otu.tree_bias_correction(mu, b1, safe_increment(count_inc)),
        otu.tree_bias_correction(updates, b1, count_inc))


def _adam_ratio(mu_hat, nu_hat, eps, eps_root):
    return tree_util.tree_map(
        lambda m, v: None if m is None else m / (znp.sqrt(v + eps_root) + eps),
        mu_hat, nu_hat, is_leaf=_none)


def scale_by_adam(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                  mu_dtype: Optional[Any] = None, *, nesterov: bool = False
                  ) -> GradientTransformation:
    """Rescale by Adam's bias-corrected moments: ``m_hat / (sqrt(v_hat + eps_root) + eps)``.

    >>> tx = scale_by_adam()
    >>> round(float(tx.update(znp.asarray(3.0), tx.init(znp.asarray(0.0)))[0]), 6)
    1.0
    """
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(),
                                mu=otu.tree_zeros_like(params, dtype=mu_dtype),
                                nu=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adam", state, ScaleByAdamState, updates, "nu")
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = otu.tree_bias_correction(mu, b1, count_inc)
        nu_hat = otu.tree_bias_correction(nu, b2, count_inc)
        updates = _adam_ratio(mu_hat, nu_hat, eps, eps_root)
        mu = otu.tree_cast(mu, mu_dtype)
        nu = otu.tree_cast_like(nu, state.nu)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByAmsgradState(NamedTuple):
    """AMSGrad's step count, moments and running maximum of the second moment."""
    count: Any
    mu: Any
    nu: Any
    nu_max: Any


def scale_by_amsgrad(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                     mu_dtype: Optional[Any] = None, bias_correction_mu: bool = True,
                     bias_correction_nu: bool = True) -> GradientTransformation:
    """Adam with the running maximum of the (bias-corrected) second moment (AMSGrad).

    >>> tx = scale_by_amsgrad()
    >>> round(float(tx.update(znp.asarray(3.0), tx.init(znp.asarray(0.0)))[0]), 6)
    1.0
    """
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAmsgradState(count=_zero_count(),
                                   mu=otu.tree_zeros_like(params, dtype=mu_dtype),
                                   nu=otu.tree_zeros_like(params),
                                   nu_max=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_amsgrad", state, ScaleByAmsgradState, updates, "nu")
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        mu_hat = otu.tree_bias_correction(mu, b1, count_inc) if bias_correction_mu else mu
        nu_eff = otu.tree_bias_correction(nu, b2, count_inc) if bias_correction_nu else nu
        nu_max = tree_util.tree_map(znp.maximum, state.nu_max, nu_eff)
        updates = _adam_ratio(mu_hat, nu_max, eps, eps_root)
        mu = otu.tree_cast(mu, mu_dtype)
        return updates, ScaleByAmsgradState(count=count_inc, mu=mu, nu=nu, nu_max=nu_max)
    return GradientTransformation(init_fn, update_fn)


def scale_by_adamax(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8) -> GradientTransformation:
    """Adam with the infinity norm as second moment (Adamax).

    >>> tx = scale_by_adamax(eps=0.0)
    >>> round(float(tx.update(znp.asarray(3.0), tx.init(znp.asarray(0.0)))[0]), 6)
    1.0
    """
    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(), mu=otu.tree_zeros_like(params),
                                nu=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adamax", state, ScaleByAdamState, updates, "nu")
        count_inc = safe_increment(state.count)
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_infinity_moment(updates, state.nu, b2, eps)
        mu_hat = otu.tree_bias_correction(mu, b1, count_inc)
        updates = tree_util.tree_map(lambda m, v: m / v, mu_hat, nu)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByLionState(NamedTuple):
    """Lion's step count and momentum."""
    count: Any
    mu: Any


def scale_by_lion(b1: Any = 0.9, b2: Any = 0.99, mu_dtype: Optional[Any] = None, *,
                  mode: str = "hard", smooth_beta: float = 1.0) -> GradientTransformation:
    """The sign of an interpolation of momentum and gradient (Lion).

    >>> tx = scale_by_lion()
    >>> float(tx.update(znp.asarray(-3.0), tx.init(znp.asarray(0.0)))[0])
    -1.0
    """
    mu_dtype = _canonical_dtype(mu_dtype)
    if mode not in ("hard", "smooth", "refined"):
        raise errors.ZeraxValueError(
            f'Unknown lion mode: {mode}. It needs to be one of ["hard", "smooth", "refined"].')

    def comb(g, m):
        x = (1.0 - b1) * g + b1 * m
        if mode == "hard":
            return znp.sign(x)
        if mode == "smooth":
            return znp.tanh(smooth_beta * x)
        return znp.where(znp.abs(x) < 1.0, x, znp.sign(x))

    def init_fn(params):
        return ScaleByLionState(count=_zero_count(),
                                mu=otu.tree_zeros_like(params, dtype=mu_dtype))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_lion", state, ScaleByLionState, updates, "mu")
        new_updates = tree_util.tree_map(comb, updates, state.mu)
        mu = otu.tree_cast(otu.tree_update_moment(updates, state.mu, b2, 1), mu_dtype)
        return new_updates, ScaleByLionState(count=safe_increment(state.count), mu=mu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByAdaDeltaState(NamedTuple):
    """AdaDelta's moving averages of squared gradients and squared updates."""
    e_g: Any
    e_x: Any


def scale_by_adadelta(rho: Any = 0.9, eps: Any = 1e-6) -> GradientTransformation:
    """AdaDelta's rescaling ``sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g``.

    >>> tx = scale_by_adadelta()
    >>> round(float(tx.update(znp.asarray(1.0), tx.init(znp.asarray(0.0)))[0]), 6)
    0.003162
    """
    def init_fn(params):
        return ScaleByAdaDeltaState(e_g=otu.tree_zeros_like(params),
                                    e_x=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adadelta", state, ScaleByAdaDeltaState, updates, "e_g")
        e_g = otu.tree_update_moment(updates, state.e_g, rho, 2)
        updates = tree_util.tree_map(
            lambda g, cur_e_g, prev_e_x: znp.sqrt(prev_e_x + eps) / znp.sqrt(cur_e_g + eps) * g,
            updates, e_g, state.e_x)
        e_x = otu.tree_update_moment(updates, state.e_x, rho, 2)
        return updates, ScaleByAdaDeltaState(e_g=e_g, e_x=e_x)
    return GradientTransformation(init_fn, update_fn)


class ScaleByAdanState(NamedTuple):
    """Adan's moments, previous gradient and step count."""
    m: Any
    v: Any
    n: Any
    g: Any
    t: Any


def scale_by_adan(b1: Any = 0.98, b2: Any = 0.92, b3: Any = 0.99, eps: Any = 1e-8,
                  eps_root: Any = 0.0) -> GradientTransformation:
    """Adan's Nesterov-accelerated adaptive moments.

    >>> tx = scale_by_adan()
    >>> round(float(tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))[0]), 6)
    1.0
    """
    def init_fn(params):
        z = otu.tree_zeros_like
        return ScaleByAdanState(m=z(params), v=z(params), n=z(params), g=z(params),
                                t=_zero_count())

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_adan", state, ScaleByAdanState, updates, "m")
        g = updates
        diff = otu.tree_where(state.t == 0, otu.tree_zeros_like(g), otu.tree_sub(g, state.g))
        m = otu.tree_update_moment(g, state.m, b1, 1)
        v = otu.tree_update_moment(diff, state.v, b2, 1)
        sq = otu.tree_add_scale(g, 1 - b2, diff)
        n = otu.tree_update_moment_per_elem_norm(sq, state.n, b3, 2)
        t = safe_increment(state.t)
        m_hat = otu.tree_bias_correction(m, b1, t)
        v_hat = otu.tree_bias_correction(v, b2, t)
        n_hat = otu.tree_bias_correction(n, b3, t)
        u = otu.tree_add_scale(m_hat, 1 - b2, v_hat)
        denom = tree_util.tree_map(lambda nh: znp.sqrt(nh + eps_root) + eps, n_hat)
        return otu.tree_div(u, denom), ScaleByAdanState(m=m, v=v, n=n, g=g, t=t)
    return GradientTransformation(init_fn, update_fn)


class ScaleByBeliefState(NamedTuple):
    """AdaBelief's step count, first moment and belief (prediction-error) moment."""
    count: Any
    mu: Any
    nu: Any


def scale_by_belief(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-16, eps_root: Any = 1e-16,
                    *, nesterov: bool = False) -> GradientTransformation:
    """AdaBelief: Adam whose second moment tracks ``(g - m)**2``.

    >>> tx = scale_by_belief()
    >>> u, _ = tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))
    >>> float(u) > 0
    True
    """
    def init_fn(params):
        return ScaleByBeliefState(count=_zero_count(), mu=otu.tree_zeros_like(params),
                                  nu=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_belief", state, ScaleByBeliefState, updates, "mu")
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        prediction_error = otu.tree_sub(updates, mu)
        nu = otu.tree_update_moment_per_elem_norm(prediction_error, state.nu, b2, 2)
        nu = tree_util.tree_map(lambda v: v + eps_root, nu)
        count_inc = safe_increment(state.count)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = otu.tree_bias_correction(mu, b1, count_inc)
        nu_hat = otu.tree_bias_correction(nu, b2, count_inc)
        updates = tree_util.tree_map(
            lambda m, v: None if m is None else m / (znp.sqrt(v) + eps),
            mu_hat, nu_hat, is_leaf=_none)
        return updates, ScaleByBeliefState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


def scale_by_yogi(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-3, eps_root: Any = 0.0,
                  initial_accumulator_value: Any = 1e-6) -> GradientTransformation:
    """Yogi: Adam whose second moment moves additively by ``sign(v - g^2) g^2``.

    >>> tx = scale_by_yogi()
    >>> u, _ = tx.update(znp.asarray(2.0), tx.init(znp.asarray(0.0)))
    >>> float(u) > 0
    True
    """
    def init_fn(params):
        return ScaleByAdamState(
            count=_zero_count(),
            mu=otu.tree_full_like(params, initial_accumulator_value),
            nu=otu.tree_full_like(params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_yogi", state, ScaleByAdamState, updates, "nu")
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_util.tree_map(
            lambda g, v: v - (1 - b2) * znp.sign(v - abs_sq(g)) * abs_sq(g),
            updates, state.nu)
        count_inc = safe_increment(state.count)
        mu_hat = otu.tree_bias_correction(mu, b1, count_inc)
        nu_hat = otu.tree_bias_correction(nu, b2, count_inc)
        updates = _adam_ratio(mu_hat, nu_hat, eps, eps_root)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


def scale_by_radam(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                   threshold: Any = 5.0, *, nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam: the variance-rectified Adam step once the SMA length exceeds
    ``threshold``, the bias-corrected momentum before.

    >>> tx = scale_by_radam()
    >>> round(float(tx.update(znp.asarray(3.0), tx.init(znp.asarray(0.0)))[0]), 6)
    3.0
    """
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def radam_update(ro, mu_hat, nu_hat):
        x = (ro - 4.0) * (ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * ro)
        # nan (as sqrt of a negative) without NumPy's warning on the early, unused steps
        r = znp.sqrt(znp.where(x >= 0, x, znp.nan))
        return tree_util.tree_map(
            lambda m, v: r.astype(m.dtype) * m / (znp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)

    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(), mu=otu.tree_zeros_like(params),
                                nu=otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_radam", state, ScaleByAdamState, updates, "nu")
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        b2t = b2 ** count_inc
        ro = ro_inf - 2 * count_inc * b2t / (1 - b2t)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = otu.tree_bias_correction(mu, b1, count_inc)
        nu_hat = otu.tree_bias_correction(nu, b2, count_inc)
        updates = tree_util.tree_map(lambda t, f: znp.where(ro >= threshold, t, f),
                                     radam_update(ro, mu_hat, nu_hat), mu_hat)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRpropState(NamedTuple):
    """Rprop's per-element step sizes and previous updates."""
    step_sizes: Any
    prev_updates: Any


def scale_by_rprop(learning_rate: Any, eta_minus: Any = 0.5, eta_plus: Any = 1.2,
                   min_step_size: Any = 1e-6, max_step_size: Any = 50.0
                   ) -> GradientTransformation:
    """Rprop: per-element step sizes grown while the gradient keeps its sign.

    >>> tx = scale_by_rprop(0.1)
    >>> s = tx.init(znp.asarray(0.0)); u, s = tx.update(znp.asarray(2.0), s)
    >>> float(tx.update(znp.asarray(2.0), s)[0])
    0.1
    """
    def init_fn(params):
        return ScaleByRpropState(otu.tree_full_like(params, learning_rate),
                                 otu.tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        _check("scale_by_rprop", state, ScaleByRpropState, updates, "step_sizes")
        sign = tree_util.tree_map(lambda g, pg: g * pg, updates, state.prev_updates)
        step_sizes = tree_util.tree_map(
            lambda s, st: znp.where(s == 0, st, znp.clip(
                st * znp.where(s > 0, eta_plus, eta_minus), min=min_step_size,
                max=max_step_size)),
            sign, state.step_sizes)
        prev_updates = tree_util.tree_map(
            lambda s, g, st: znp.where(s < 0, znp.zeros_like(g), st * znp.sign(g)),
            sign, updates, step_sizes)
        updates = tree_util.tree_map(
            lambda s, g, pg: znp.where(s < 0, znp.zeros_like(pg), pg),
            sign, prev_updates, state.prev_updates)
        return updates, ScaleByRpropState(step_sizes, prev_updates)
    return GradientTransformation(init_fn, update_fn)
