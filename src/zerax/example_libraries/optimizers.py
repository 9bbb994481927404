"""`zerax.example_libraries.optimizers`: JAX's ``jax.example_libraries.optimizers`` on zerax.

An optimiser is an ``(init_fun, update_fun, get_params)`` triple (the `Optimizer` named
tuple): ``opt_state = init_fun(params)``, ``opt_state = update_fun(step, grads, opt_state)``,
``params = get_params(opt_state)``, for any pytree of arrays.  The `optimizer` decorator
lifts a triple written for one array to pytrees; the state is an `OptimizerState` pytree, so
it passes through ``jit``, ``vmap`` and ``lax`` loops.  Step-size schedules, ``l2_norm``,
``clip_grads`` and ``unpack_optimizer_state`` / ``pack_optimizer_state`` (plain trees of
`JoinPoint` markers, for saving with `zerax.io`; nothing is pickled) are as JAX's, and the
updates give JAX's numbers.

>>> import zerax as zx, zerax.numpy as znp
>>> from zerax.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.adam(0.1)
>>> state = opt_init({"w": znp.array([1.0, -2.0])})
>>> for i in range(3):
...     g = zx.grad(lambda p: znp.sum(p["w"] ** 2))(get_params(state))
...     state = opt_update(i, g, state)
>>> get_params(state)["w"]
Array([ 0.70158627, -1.70062339], dtype=float64)
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import errors
from .. import numpy as jnp
from .. import tree_util

__all__ = [
    "JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "clip_grads",
    "constant", "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule",
    "momentum", "nesterov", "optimizer", "pack_optimizer_state", "piecewise_constant",
    "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
    "unpack_optimizer_state",
]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of an `optimizer`-made optimiser: the flat list of
per-leaf states (the pytree's children) and, as static data, the parameter tree's structure
and each leaf state's structure."""
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple (JAX's field names)."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten(x):
    return tree_util.tree_flatten(x)


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorate a maker of ``(init, update, get_params)`` for single arrays so that the
    triple it makes works on pytrees of arrays (JAX's decorator).

    >>> import zerax.numpy as znp
    >>> @optimizer
    ... def halve():
    ...     return (lambda x0: x0, lambda i, g, x: x - 0.5 * g, lambda x: x)
    >>> init, update, get = halve()
    >>> get(update(0, (znp.array(2.0), [znp.array(4.0)]), init((1.0, [1.0]))))
    (Array(0., dtype=float64), [Array(-1., dtype=float64)])
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = _flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            flat = [_flatten(s) for s in initial_states]
            states_flat = [f[0] for f in flat]
            subtrees = [f[1] for f in flat]
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = _unpack(opt_state, "update_fun")
            grad_flat, tree2 = _flatten(grad_tree)
            if tree2 != tree:
                raise errors.ZeraxTypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}.")
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_flat = [_flatten(s) for s in new_states]
            for subtree, (_, subtree2) in zip(subtrees, new_flat):
                if subtree2 != subtree:
                    raise errors.ZeraxTypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {subtree} and output "
                        f"{subtree2}.")
            return OptimizerState([f[0] for f in new_flat], tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = _unpack(opt_state, "get_params")
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _unpack(opt_state, where):
    if not isinstance(opt_state, OptimizerState):
        raise errors.OptimizerStateError(
            f"optimizers {where}: expected the OptimizerState made by init_fun, got "
            f"{type(opt_state).__name__}. Pass the state returned by init_fun/update_fun "
            "(use pack_optimizer_state to rebuild one from unpack_optimizer_state's tree).")
    return opt_state


# --------------------------------------------------------------------------- optimisers

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x - step_size(i) * g``.

    >>> import zerax.numpy as znp
    >>> init, update, get = sgd(0.1)
    >>> get(update(0, znp.array([1.0, 2.0]), init(znp.zeros(2))))
    Array([-0.1, -0.2], dtype=float64)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """SGD with momentum: ``v = mass * v + g; x -= step_size(i) * v``.

    >>> import zerax.numpy as znp
    >>> init, update, get = momentum(0.1, 0.9)
    >>> s = update(1, znp.array(1.0), update(0, znp.array(1.0), init(znp.array(0.0))))
    >>> round(float(get(s)), 6)
    -0.29
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * velocity
        return x, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """SGD with Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``.

    >>> import zerax.numpy as znp
    >>> init, update, get = nesterov(0.1, 0.9)
    >>> round(float(get(update(0, znp.array(1.0), init(znp.array(0.0))))), 6)
    -0.19
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * (mass * velocity + g)
        return x, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum, as JAX's.

    >>> import zerax.numpy as znp
    >>> init, update, get = adagrad(1.0)
    >>> round(float(get(update(0, znp.array(2.0), init(znp.array(0.0))))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        return x, g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: ``a = gamma * a + (1 - gamma) * g**2; x -= step_size(i) * g / sqrt(a + eps)``.

    >>> import zerax.numpy as znp
    >>> init, update, get = rmsprop(0.01)
    >>> round(float(get(update(0, znp.array(1.0), init(znp.array(0.0))))), 6)
    -0.031623
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        x = x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x, avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step, as JAX's.

    >>> import zerax.numpy as znp
    >>> init, update, get = rmsprop_momentum(0.01)
    >>> round(float(get(update(0, znp.array(1.0), init(znp.array(0.0))))), 6)
    -0.031623
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        x = x - mom
        return x, avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba), bias-corrected with the step index ``i`` (0-based).

    >>> import zerax.numpy as znp
    >>> init, update, get = adam(0.1)
    >>> round(float(get(update(0, znp.array(3.0), init(znp.array(0.0))))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        x = x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps)
        return x, m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm).

    >>> import zerax.numpy as znp
    >>> init, update, get = adamax(0.1)
    >>> round(float(get(update(0, znp.array(3.0), init(znp.array(0.0))))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = (x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps))
        return x, m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per axis, as JAX's.

    >>> import zerax.numpy as znp
    >>> init, update, get = sm3(1.0)
    >>> get(update(0, znp.ones((2, 2)), init(znp.zeros((2, 2))))).shape
    (2, 2)
    """
    step_size = make_schedule(step_size)

    def splice(seq, i, x):
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim, x, axis):
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0):
        x_shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, j) for j, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


# --------------------------------------------------------------------------- schedules

def constant(step_size) -> Schedule:
    """The schedule ``i -> step_size``.

    >>> constant(0.1)(100)
    0.1
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``.

    >>> round(float(exponential_decay(1.0, 10, 0.5)(20)), 6)
    0.25
    """
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)`` (the quotient floored when
    ``staircase``).

    >>> float(inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` in ``decay_steps`` steps as
    ``(1 - i / decay_steps) ** power``, then constant.

    >>> float(polynomial_decay(1.0, 10, 0.0)(5)), float(polynomial_decay(1.0, 10, 0.0)(50))
    (0.5, 0.0)
    """
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """``values[k]`` where ``k`` is the number of ``boundaries`` below ``i``.

    >>> s = piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    >>> float(s(5)), float(s(10)), float(s(11)), float(s(25))
    (1.0, 1.0, 0.5, 0.1)
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise errors.ZeraxValueError(
            "piecewise_constant: boundaries and values must be sequences, got arrays of "
            f"{boundaries.ndim} and {values.ndim} dimensions.")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise errors.ZeraxValueError(
            "piecewise_constant: boundaries length must be one shorter than values length, "
            f"got {boundaries.shape[0]} boundaries and {values.shape[0]} values.")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A callable is a schedule already; a scalar becomes `constant`.

    >>> make_schedule(0.5)(3)
    0.5
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if not isinstance(scalar_or_schedule, (str, bytes)) and np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise errors.ZeraxTypeError(
        "make_schedule: step_size must be a scalar or a callable i -> step size, got "
        f"{type(scalar_or_schedule).__name__} {scalar_or_schedule!r:.60}.")


# --------------------------------------------------------------------------- utilities

def l2_norm(tree):
    """The l2 norm of a pytree of arrays (all leaves together).

    >>> import zerax.numpy as znp
    >>> float(l2_norm({"a": znp.array([3.0]), "b": znp.array([[4.0]])}))
    5.0
    """
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale a pytree of gradients down to l2 norm ``max_norm`` when it is larger.

    >>> import zerax.numpy as znp
    >>> clip_grads([znp.array([3.0, 4.0])], 1.0)[0]
    Array([0.6, 0.8], dtype=float64)
    """
    norm = l2_norm(grad_tree)

    def normalize(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_util.tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees: a leaf of the parameter
    tree holding that leaf's optimiser state."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """An `OptimizerState` as the parameter tree with a `JoinPoint` holding each leaf's
    state: plain containers and arrays (no tree definitions), ready to be saved.

    >>> import zerax.numpy as znp
    >>> init, update, get = momentum(0.1, 0.9)
    >>> marked = unpack_optimizer_state(init({"w": znp.ones(2)}))
    >>> marked["w"].subtree[1]
    Array([0., 0.], dtype=float64)
    >>> get(pack_optimizer_state(marked))["w"]
    Array([1., 1.], dtype=float64)
    """
    states_flat, tree_def, subtree_defs = _unpack(opt_state, "unpack_optimizer_state")
    subtrees = [tree_util.tree_unflatten(s, f) for s, f in zip(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`: rebuild the `OptimizerState`."""
    sentinels, tree_def = tree_util.tree_flatten(
        marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    bad = [type(s).__name__ for s in sentinels if not isinstance(s, JoinPoint)]
    if bad:
        raise errors.ZeraxTypeError(
            "pack_optimizer_state: every leaf must be a JoinPoint (as unpack_optimizer_state "
            f"makes), found {bad[0]}.")
    flat = [_flatten(s.subtree) for s in sentinels]
    return OptimizerState([f[0] for f in flat], tree_def, [f[1] for f in flat])

