"""L-BFGS (optax's ``scale_by_lbfgs`` and ``lbfgs``): the two-loop recursion over a ring
buffer of the last ``memory_size`` parameter and gradient differences, both loops
``lax.scan``s, followed by a zoom line search; an L-BFGS step jits whole.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import zerax.numpy as znp
from .. import errors, lax, tree_util

from . import tree_utils as otu
from ._base import (GradientTransformation, GradientTransformationExtraArgs, chain, check_same_tree, check_state, identity, safe_increment)
from ._linesearch import scale_by_zoom_linesearch
from ._transform import scale, scale_by_learning_rate


class ScaleByLBFGSState(NamedTuple):
    """L-BFGS' step count, previous params and updates, and the memory of differences
    and their curvature weights ``1 / <dg, dx>``."""
    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _precondition_by_lbfgs(updates, diff_params_memory, diff_updates_memory, weights_memory,
                           identity_scale, memory_idx):
    rhos = weights_memory
    memory_size = weights_memory.shape[0]
    indices = (memory_idx + znp.arange(memory_size)) % memory_size

    def right_product(vec, idx):
        dwi, dui = tree_util.tree_map(lambda x: x[idx], (diff_params_memory,
                                                          diff_updates_memory))
        alpha = rhos[idx] * znp.real(otu.tree_vdot(dwi, vec))
        new = otu.tree_cast_like(otu.tree_add_scale(vec, -alpha, dui), vec)
        return new, alpha

    precond, alphas = lax.scan(right_product, updates, indices, reverse=True)
    precond = otu.tree_scale(identity_scale, precond)

    def left_product(vec, idx_alpha):
        idx, alpha = idx_alpha
        dwi, dui = tree_util.tree_map(lambda x: x[idx], (diff_params_memory,
                                                          diff_updates_memory))
        beta = rhos[idx] * znp.real(otu.tree_vdot(dui, vec))
        new = otu.tree_cast_like(otu.tree_add_scale(vec, alpha - beta, dwi), vec)
        return new, beta

    precond, _ = lax.scan(left_product, precond, (indices, alphas))
    return precond


def scale_by_lbfgs(memory_size: int = 10, scale_init_precond: bool = True
                   ) -> GradientTransformation:
    """Precondition the updates by the L-BFGS approximation of the inverse Hessian.

    >>> import zerax.numpy as znp
    >>> tx = scale_by_lbfgs()
    >>> x = znp.asarray([3.0, 4.0])
    >>> tx.update(x, tx.init(x), x)[0].round(12).tolist()   # first: the gradient over its norm
    [0.6, 0.8]
    """
    if memory_size < 1:
        raise errors.ZeraxValueError("memory_size must be >= 1")

    def init_fn(params):
        stacked = tree_util.tree_map(
            lambda leaf: znp.zeros((memory_size,) + znp.shape(leaf),
                                   dtype=znp.asarray(leaf).dtype), params)
        return ScaleByLBFGSState(
            count=znp.asarray(0, dtype=znp.int32), params=otu.tree_zeros_like(params),
            updates=otu.tree_zeros_like(params), diff_params_memory=stacked,
            diff_updates_memory=stacked, weights_memory=znp.zeros(memory_size))

    def update_fn(updates, state, params):
        check_state(state, ScaleByLBFGSState, "scale_by_lbfgs")
        if params is None:
            raise errors.ZeraxValueError(
                "scale_by_lbfgs.update needs the current params: update(grads, state, params).")
        check_same_tree("scale_by_lbfgs", updates, "updates", state.updates, "optimizer state")
        memory_idx = state.count % memory_size
        prev_idx = (state.count - 1) % memory_size
        diff_params = otu.tree_sub(params, state.params)
        diff_updates = otu.tree_sub(updates, state.updates)
        vdot = znp.real(otu.tree_vdot(diff_updates, diff_params))
        weight = znp.where(vdot == 0.0, 0.0, 1.0 / znp.where(vdot == 0.0, 1.0, vdot))
        diff_params, diff_updates, weight = tree_util.tree_map(
            lambda x: znp.where(state.count > 0, x, znp.zeros_like(x)),
            (diff_params, diff_updates, weight))
        dpm, dum, wm = tree_util.tree_map(
            lambda x, y: x.at[prev_idx].set(y),
            (state.diff_params_memory, state.diff_updates_memory, state.weights_memory),
            (diff_params, diff_updates, weight))
        if scale_init_precond:
            numerator = znp.real(otu.tree_vdot(diff_updates, diff_params))
            denominator = otu.tree_norm(diff_updates, squared=True)
            identity_scale = znp.where(denominator > 0.0,
                                       numerator / znp.where(denominator > 0.0, denominator,
                                                             1.0), 1.0)
            update_norm = otu.tree_norm(lax.stop_gradient(updates))
            safe = znp.where(update_norm > 0, update_norm, 1.0)   # 1/0 = inf, silently
            capped_inv_norm = znp.where(update_norm > 0, znp.minimum(1.0, 1.0 / safe), 1.0)
            identity_scale = znp.where(state.count > 0, identity_scale, capped_inv_norm)
        else:
            identity_scale = 1.0
        precond = _precondition_by_lbfgs(updates, dpm, dum, wm, identity_scale, memory_idx)
        return precond, ScaleByLBFGSState(
            count=safe_increment(state.count), params=params, updates=updates,
            diff_params_memory=dpm, diff_updates_memory=dum, weights_memory=wm)
    return GradientTransformation(init_fn, update_fn)


_DEFAULT = object()


def lbfgs(learning_rate: Optional[Any] = None, memory_size: int = 10,
          scale_init_precond: bool = True, linesearch: Any = _DEFAULT
          ) -> GradientTransformationExtraArgs:
    """L-BFGS with a zoom line search (optax's ``lbfgs``); ``update`` takes ``value=``,
    ``grad=`` and ``value_fn=``.

    >>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
    >>> f = lambda x: znp.sum((x - 1.0) ** 2) + x[0] ** 4
    >>> opt = optim.lbfgs()
    >>> x = znp.zeros(3); state = opt.init(x)
    >>> vg = optim.value_and_grad_from_state(f)
    >>> for _ in range(10):
    ...     v, g = vg(x, state=state)
    ...     u, state = opt.update(g, state, x, value=v, grad=g, value_fn=f)
    ...     x = optim.apply_updates(x, u)
    >>> x.round(5).tolist()
    [0.58975, 1.0, 1.0]
    """
    if linesearch is _DEFAULT:
        linesearch = scale_by_zoom_linesearch(max_linesearch_steps=20,
                                              initial_guess_strategy="one")
    base_scaling = scale(-1.0) if learning_rate is None else scale_by_learning_rate(
        learning_rate)
    if linesearch is None:
        linesearch = identity()
    return chain(scale_by_lbfgs(memory_size=memory_size,
                                scale_init_precond=scale_init_precond),
                 base_scaling, linesearch)
