"""Reparametrised and tied parameters of `zerax.nn` (Equinox's ``SpectralNorm``,
``WeightNorm`` and ``Shared``): wrappers that rebuild a layer with a transformed or
borrowed weight each time it is called, so the model stays a tree of independent arrays.
"""

from __future__ import annotations

from typing import Any, Callable

import zerax as zx
import zerax.lax as lax
import zerax.numpy as znp
from .. import errors

from ._linear import StatefulLayer, check_key, random_module
from ._module import Module, field
from ._serialise import filter_eval_shape
from ._state import State, StateIndex
from ._tree import tree_at, tree_equal

__all__ = ["SpectralNorm", "WeightNorm", "Shared", "SharedNode"]


def _power_iteration(weight, u, v, eps):
    u = weight @ v
    u = u / znp.maximum(eps, znp.sqrt(znp.sum(u ** 2)))
    v = weight.T @ u
    v = v / znp.maximum(eps, znp.sqrt(znp.sum(v ** 2)))
    return u, v


class SpectralNorm(StatefulLayer):
    """``layer`` with its parameter ``weight_name`` divided by (an estimate of) its
    largest singular value σ (Equinox's ``SpectralNorm``; Miyato et al. 2018). σ comes
    from power iterations on the weight reshaped to ``(shape[0], -1)``, whose vectors
    ``u, v`` live in the `State` and advance by ``num_power_iterations`` at each call
    (not in inference mode). Initial ``u, v``: normal draws from ``key`` in the weight's
    dtype, then 15 iterations, as Equinox.

    >>> import zerax.nn as nn, zerax.numpy as znp, zerax.random as zr, numpy as np
    >>> sn, state = nn.make_with_state(nn.SpectralNorm)(
    ...     nn.Linear(3, 2, key=zr.key(0)), "weight", key=zr.key(1))
    >>> y, state = sn(znp.ones(3, np.float32), state)
    >>> y.shape, [a.shape for a in state.get(sn.uv_index)]
    ((2,), [(2,), (3,)])
    """

    layer: Any
    weight_name: str = field(static=True)
    uv_index: StateIndex
    num_power_iterations: int = field(static=True)
    eps: float = field(static=True)
    inference: bool

    def __init__(self, layer: Any, weight_name: str, num_power_iterations: int = 1,
                 eps: float = 1e-12, inference: bool = False, *, key: Any):
        check_key(key, "SpectralNorm")
        self.layer = layer
        self.weight_name = weight_name
        self.num_power_iterations = num_power_iterations
        self.eps = eps
        self.inference = inference
        weight = getattr(layer, weight_name)
        if znp.ndim(weight) < 2:
            raise errors.ShapeError(
                f"SpectralNorm: {type(layer).__name__}.{weight_name} must be at least "
                f"two-dimensional, got shape {znp.shape(weight)}")
        weight = znp.reshape(weight, (weight.shape[0], -1))
        ukey, vkey = random_module().split(key)
        u = zx.random.normal(ukey, (weight.shape[0],), dtype=weight.dtype)
        v = zx.random.normal(vkey, (weight.shape[1],), dtype=weight.dtype)
        for _ in range(15):
            u, v = _power_iteration(weight, u, v, eps)
        self.uv_index = StateIndex((u, v))

    def __call__(self, x, state: State, *, key=None, inference: bool | None = None):
        u, v = state.get(self.uv_index)
        weight = getattr(self.layer, self.weight_name)
        shape = weight.shape
        weight = znp.reshape(weight, (shape[0], -1))
        if inference is None:
            inference = self.inference
        if not inference:
            # the power iterations estimate σ; no gradient flows through them
            stop_weight = lax.stop_gradient(weight)
            for _ in range(self.num_power_iterations):
                u, v = _power_iteration(stop_weight, u, v, self.eps)
            state = state.set(self.uv_index, (u, v))
        sigma = znp.einsum("i,ij,j->", u, weight, v)
        layer = tree_at(lambda m: getattr(m, self.weight_name), self.layer,
                        znp.reshape(weight / sigma, shape))
        return layer(x), state


def _norm_except_axis(v, axis):
    if axis is None:
        return znp.linalg.norm(v, keepdims=True)
    axes = tuple(a for a in range(znp.ndim(v)) if a != axis % znp.ndim(v))
    return znp.sqrt(znp.sum(znp.square(znp.abs(v)), axis=axes, keepdims=True))


class WeightNorm(Module):
    """``layer`` with its parameter ``weight_name`` (v) replaced by ``g * v / ||v||``,
    the norm taken over every axis but ``axis`` (all axes for ``axis=None``), so the
    direction and the magnitude ``g`` are learnt separately (Equinox's ``WeightNorm``;
    Salimans and Kingma 2016). ``g`` starts at ``||v||``: the layer computes what it did.

    >>> import zerax.nn as nn, zerax.numpy as znp, zerax.random as zr, numpy as np
    >>> lin = nn.Linear(3, 2, key=zr.key(0))
    >>> wn = nn.WeightNorm(lin)
    >>> x = znp.ones(3, np.float32)
    >>> wn.g.shape, bool(znp.allclose(wn(x), lin(x)))
    ((2, 1), True)
    """

    layer: Any
    g: Any
    weight_name: str = field(static=True)
    axis: int | None = field(static=True)

    def __init__(self, layer: Any, weight_name: str = "weight", axis: int | None = 0):
        self.layer = layer
        self.weight_name = weight_name
        self.axis = axis
        self.g = _norm_except_axis(getattr(layer, weight_name), axis)

    def __call__(self, x, *, key=None):
        v = getattr(self.layer, self.weight_name)
        weight = v * self.g / _norm_except_axis(v, self.axis)
        layer = tree_at(lambda m: getattr(m, self.weight_name), self.layer, weight)
        return layer(x)


class SharedNode:
    """What `Shared` leaves in place of the nodes it ties (a pytree leaf)."""

    def __repr__(self):
        return "SharedNode"


class Shared(Module):
    """Tie nodes of a pytree together (Equinox's ``Shared``): the nodes ``where(pytree)``
    are removed and, at each call, rebuilt from ``get(pytree)``, so one parameter
    serves both places (and gets the gradients of both). ``where`` and ``get`` select
    nodes as in `tree_at`: one node or a sequence of them, of the same structure, shapes
    and dtypes.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> emb = nn.Embedding(5, 3, key=zr.key(0))
    >>> out = nn.Linear(3, 5, key=zr.key(1))
    >>> shared = nn.Shared((emb, out), lambda p: p[1].weight, lambda p: p[0].weight)
    >>> e, o = shared()
    >>> o.weight is e.weight
    True
    >>> shared.pytree[1]
    Linear(
      weight=SharedNode, bias=f32[5], in_features=3, out_features=5, use_bias=True
    )
    """

    pytree: Any
    where: Callable
    get: Callable

    def __init__(self, pytree: Any, where: Callable, get: Callable):
        source = filter_eval_shape(get, pytree)
        dest = filter_eval_shape(where, pytree)
        if tree_equal(source, dest) is not True:
            raise errors.ZeraxValueError(
                "Shared: the nodes tied together must have the same structure, shapes "
                f"and dtypes; get(pytree) gives {source} and where(pytree) selects {dest}")
        self.pytree = tree_at(where, pytree, replace_fn=lambda _: SharedNode())
        self.where = where
        self.get = get

    def __call__(self):
        return tree_at(self.where, self.pytree, self.get(self.pytree))
