"""Dense layers and containers of `zerax.nn` (Equinox's ``Linear``, ``Identity``, ``MLP``,
``Sequential``, ``Lambda``), and the parameter-initialisation helper they share with the
other layers (``default_init``: Equinox's uniform(-lim, lim) draw).

Each layer acts on one example; `zerax.vmap` makes a batch.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import zerax as zx
import zerax.numpy as znp
import zerax.random as zr
from .. import errors

from ._activations import relu as _relu
from ._module import Module, field
from ._filters import is_array

__all__ = ["Linear", "Identity", "MLP", "Sequential", "Lambda", "StatefulLayer"]


def random_module():
    """`zerax.random` (the layers draw their initial parameters with it)."""
    return zr


def param_dtype(dtype) -> np.dtype:
    """Parameters default to float32 (as Equinox, PyTorch and JAX's default mode)."""
    return np.dtype(np.float32) if dtype is None else np.dtype(dtype)


def default_init(key, shape: tuple, dtype, lim: float):
    """Equinox's ``default_init``: uniform on [-lim, lim) (real and imaginary parts drawn
    from two split keys for complex dtypes)."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        real_dtype = np.finfo(dtype).dtype
        rkey, ikey = zr.split(key, 2)
        real = zr.uniform(rkey, shape, real_dtype, minval=-lim, maxval=lim)
        imag = zr.uniform(ikey, shape, real_dtype, minval=-lim, maxval=lim)
        return real.astype(dtype) + 1j * imag.astype(dtype)
    return zr.uniform(key, shape, dtype, minval=-lim, maxval=lim)


def check_key(key, layer: str):
    if key is None:
        raise errors.ZeraxTypeError(
            f"{layer} needs key= (a zerax.random key) to draw its initial parameters, e.g. "
            f"{layer}(..., key=zerax.random.key(0))")


class Linear(Module):
    """``y = weight @ x + bias`` on one example (Equinox's ``Linear``).

    ``weight`` has shape ``(out_features, in_features)``, both drawn uniform on
    ``[-1/sqrt(in_features), 1/sqrt(in_features))``; ``'scalar'`` sizes mean a
    shape-``()`` input or output.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> lin = nn.Linear(3, 2, key=zr.key(0))
    >>> lin.weight.shape, lin.bias.dtype, lin(znp.ones(3, np.float32)).shape
    ((2, 3), dtype('float32'), (2,))
    """

    weight: Any
    bias: Any
    in_features: Any = field(static=True)
    out_features: Any = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, in_features: int | str, out_features: int | str, use_bias: bool = True,
                 dtype=None, *, key):
        check_key(key, "Linear")
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not (v == "scalar" or (isinstance(v, (int, np.integer)) and v >= 0)):
                raise errors.ZeraxValueError(
                    f"Linear: {name} must be a non-negative int or 'scalar', got {v!r}")
        dtype = param_dtype(dtype)
        wkey, bkey = random_module().split(key, 2)
        i = 1 if in_features == "scalar" else int(in_features)
        o = 1 if out_features == "scalar" else int(out_features)
        lim = 1.0 if i == 0 else 1 / math.sqrt(i)
        self.weight = default_init(wkey, (o, i), dtype, lim)
        self.bias = default_init(bkey, (o,), dtype, lim) if use_bias else None
        self.in_features = in_features
        self.out_features = out_features
        self.use_bias = use_bias

    def __call__(self, x, *, key=None):
        if self.in_features == "scalar":
            if znp.shape(x) != ():
                raise errors.ShapeError(
                    f"Linear('scalar', ...) takes a scalar input, got shape {znp.shape(x)}")
            x = znp.broadcast_to(x, (1,))
        elif znp.ndim(x) != 1 or znp.shape(x)[0] != self.weight.shape[1]:
            raise errors.ShapeError(
                f"Linear({self.in_features}, {self.out_features}) takes one example of shape "
                f"({self.in_features},), got shape {znp.shape(x)}; use zerax.vmap(layer)(xs) "
                "for a batch")
        x = self.weight @ x
        if self.bias is not None:
            x = x + self.bias
        if self.out_features == "scalar":
            x = znp.squeeze(x)
        return x


class Identity(Module):
    """Returns its input (Equinox's ``Identity``; constructor arguments are ignored).

    >>> import zerax.nn as nn
    >>> nn.Identity(3, foo=1)(5)
    5
    """

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __call__(self, x, *, key=None):
        return x


def _identity(x):
    return x


def _elementwise_fns() -> set:
    fns = {_identity, znp.tanh, znp.sin, znp.cos, znp.exp, znp.abs}
    for name in ("relu", "relu6", "sigmoid", "softplus", "log_sigmoid", "silu", "swish", "gelu",
                 "elu", "leaky_relu", "celu", "selu", "hard_tanh", "identity", "tanh",
                 "hard_sigmoid", "hard_silu", "hard_swish", "mish", "soft_sign", "squareplus",
                 "sparse_plus", "sparse_sigmoid"):
        f = getattr(zx.nn, name, None)
        if f is not None:
            fns.add(f)
    return fns


_ELEMENTWISE: set = set()


def apply_activation(act: Callable, x):
    """Apply ``act`` to each element of ``x`` separately, as Equinox's MLP does (it vmaps
    the activation over the neurons); the known elementwise functions are called on the
    whole vector directly (same result, no vmap)."""
    if not _ELEMENTWISE:
        _ELEMENTWISE.update(_elementwise_fns())
    try:
        if act in _ELEMENTWISE:
            return act(x)
    except TypeError:  # an unhashable callable
        pass
    if znp.ndim(x) == 0:
        return act(x)
    return zx.vmap(act)(x)


def _per_neuron(act: Callable, shape: tuple) -> Callable:
    """A learnt activation (one holding arrays, such as a `PReLU`) with a separate copy
    of its parameters for each neuron: its arrays get leading axes ``shape`` (Equinox's
    MLP, which builds them with nested ``filter_vmap``s). Plain functions are returned
    as they are."""
    if not any(is_array(x) for x in zx.tree_util.tree_leaves(act)):
        return act
    return zx.tree_util.tree_map(
        lambda x: znp.broadcast_to(x, shape + tuple(x.shape)) if is_array(x) else x, act)


def _apply_per_neuron(act: Callable, x):
    """``act`` on each neuron of ``x`` with that neuron's parameters (its arrays' leading
    axis); an activation without parameters goes through `apply_activation`."""
    if not any(is_array(a) for a in zx.tree_util.tree_leaves(act)) or znp.ndim(x) == 0:
        return apply_activation(act, x)
    leaves, treedef = zx.tree_util.tree_flatten(act)
    arrays = [a for a in leaves if is_array(a)]

    def one(v, *arrs):
        it = iter(arrs)
        return zx.tree_util.tree_unflatten(
            treedef, [next(it) if is_array(a) else a for a in leaves])(v)
    return zx.vmap(one)(x, *arrays)


def _layer_activation(act: Callable, i):
    return zx.tree_util.tree_map(lambda a: a[i] if is_array(a) else a, act)


class MLP(Module):
    """A multi-layer perceptron: ``depth`` hidden layers of ``width_size`` with
    ``activation`` between them (Equinox's ``MLP``; keys split ``depth + 1`` ways).
    ``scan=True`` stacks the hidden-to-hidden layers into one `Linear` with a leading axis
    (same parameters) and runs them with `zerax.lax.scan`: one traced layer.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> mlp = nn.MLP(4, 2, width_size=8, depth=2, key=zr.key(0))
    >>> [l.weight.shape for l in mlp.layers], mlp(znp.ones(4, np.float32)).shape
    ([(8, 4), (8, 8), (2, 8)], (2,))
    """

    layers: tuple
    activation: Callable
    final_activation: Callable
    use_bias: bool = field(static=True)
    use_final_bias: bool = field(static=True)
    in_size: Any = field(static=True)
    out_size: Any = field(static=True)
    width_size: int = field(static=True)
    depth: int = field(static=True)
    scan: bool = field(static=True, default=False)

    def __init__(self, in_size: int | str, out_size: int | str, width_size: int, depth: int,
                 activation: Callable = _relu, final_activation: Callable = _identity,
                 use_bias: bool = True, use_final_bias: bool = True, dtype=None, *,
                 scan: bool = False, key):
        check_key(key, "MLP")
        if not isinstance(depth, (int, np.integer)) or depth < 0:
            raise errors.ZeraxValueError(f"MLP: depth must be a non-negative int, got {depth!r}")
        keys = random_module().split(key, depth + 1)
        layers = []
        if depth == 0:
            layers.append(Linear(in_size, out_size, use_final_bias, dtype, key=keys[0]))
        else:
            layers.append(Linear(in_size, width_size, use_bias, dtype, key=keys[0]))
            if scan:
                # The hidden layers stacked along a leading axis (built by vmapping the
                # constructor over their keys), run by lax.scan: one traced layer.
                hidden = [Linear(width_size, width_size, use_bias, dtype, key=keys[i])
                          for i in range(1, depth)]
                layers.append(_stack_layers(hidden, width_size, use_bias, dtype))
            else:
                for i in range(1, depth):
                    layers.append(Linear(width_size, width_size, use_bias, dtype, key=keys[i]))
            layers.append(Linear(width_size, out_size, use_final_bias, dtype, key=keys[-1]))
        self.layers = tuple(layers)
        self.in_size = in_size
        self.out_size = out_size
        self.width_size = width_size
        self.depth = depth
        self.scan = bool(scan)
        # a learnt activation gets a copy of its parameters per neuron, as in Equinox
        self.activation = _per_neuron(activation, (depth, width_size))
        self.final_activation = (final_activation if out_size == "scalar" else
                                 _per_neuron(final_activation, (out_size,)))
        self.use_bias = use_bias
        self.use_final_bias = use_final_bias

    def __call__(self, x, *, key=None):
        act = self.activation
        if self.scan and self.depth > 0:
            first, hidden, last = self.layers
            x = _apply_per_neuron(_layer_activation(act, 0), first(x))
            leaves, treedef = zx.tree_util.tree_flatten(hidden)

            def step(h, inputs):
                i, layer_leaves = inputs
                layer = zx.tree_util.tree_unflatten(treedef, list(layer_leaves))
                return _apply_per_neuron(_layer_activation(act, i), layer(h)), None
            x, _ = zx.lax.scan(step, x, (znp.arange(1, self.depth), leaves))
        else:
            for i, layer in enumerate(self.layers[:-1]):
                x = _apply_per_neuron(_layer_activation(act, i), layer(x))
        x = self.layers[-1](x)
        return _apply_per_neuron(self.final_activation, x)


def _stack_layers(layers: list, width: int, use_bias: bool, dtype):
    """One `Linear` whose arrays hold ``layers``' arrays stacked on a new leading axis."""
    if not layers:
        w = znp.zeros((0, width, width), param_dtype(dtype))
        b = znp.zeros((0, width), param_dtype(dtype)) if use_bias else None
    else:
        w = znp.stack([layer.weight for layer in layers])
        b = znp.stack([layer.bias for layer in layers]) if use_bias else None
    proto = object.__new__(Linear)
    proto.__dict__.update(weight=w, bias=b, in_features=width, out_features=width,
                          use_bias=use_bias)
    return proto



class StatefulLayer(Module):
    """A layer whose call may take and return a `State` (Equinox's ``StatefulLayer``):
    `Sequential` passes the state through the layers whose `is_stateful` is True."""

    def is_stateful(self) -> bool:
        return True


_NO_STATE = object()


class Sequential(StatefulLayer):
    """Calls its layers in order (Equinox's ``Sequential``); a key is split between them,
    and a `State` is threaded through the stateful ones.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> seq = nn.Sequential([nn.Linear(2, 3, key=zr.key(0)), nn.Lambda(zx.nn.relu)])
    >>> seq(znp.ones(2, np.float32)).shape, len(seq), type(seq[1:]).__name__
    ((3,), 2, 'Sequential')
    """

    layers: tuple

    def __init__(self, layers: Sequence[Callable]):
        self.layers = tuple(layers)

    def is_stateful(self) -> bool:
        return any(isinstance(x, StatefulLayer) and x.is_stateful() for x in self.layers)

    def __call__(self, x, state=_NO_STATE, *, key=None):
        if key is None:
            keys = [None] * len(self.layers)
        else:
            keys = random_module().split(key, len(self.layers))
        for layer, k in zip(self.layers, keys):
            if isinstance(layer, StatefulLayer) and layer.is_stateful():
                if state is _NO_STATE:
                    raise errors.ZeraxTypeError(
                        f"Sequential: layer {type(layer).__name__} is stateful; call "
                        "seq(x, state) with the State from nn.make_with_state")
                x, state = layer(x, state=state, key=k)
            else:
                x = layer(x, key=k)
        return x if state is _NO_STATE else (x, state)

    def __getitem__(self, i: int | slice):
        if isinstance(i, (int, np.integer)):
            return self.layers[i]
        if isinstance(i, slice):
            return Sequential(self.layers[i])
        raise errors.ZeraxTypeError(f"Sequential: cannot index with {type(i).__name__}")

    def __iter__(self):
        yield from self.layers

    def __len__(self):
        return len(self.layers)


class Lambda(Module):
    """Wraps a function as a layer (Equinox's ``Lambda``), e.g. an activation in a
    `Sequential`; the ``key`` argument is dropped.

    >>> import zerax.nn as nn
    >>> nn.Lambda(lambda x: x * 2)(3, key=None)
    6
    """

    fn: Callable

    def __call__(self, x, *, key=None):
        return self.fn(x)
