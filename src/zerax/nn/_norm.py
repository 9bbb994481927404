"""Normalisation layers of `zerax.nn` (Equinox's ``LayerNorm``, ``RMSNorm``, ``GroupNorm``,
``BatchNorm``). Statistics are computed in at least float32 and the output keeps the input's
dtype. BatchNorm keeps its running statistics in an explicit `State` and averages over the
vmap axis named ``axis_name`` (Equinox 0.13's ``mode='batch'`` and ``'ema'``).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

import zerax as zx
import zerax.lax as lax
import zerax.numpy as znp
from .. import errors

from ._linear import StatefulLayer, param_dtype
from ._module import Module, field
from ._state import State, StateIndex

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm"]

_NO_STATE = object()


def _compute_dtype(x) -> np.dtype:
    return np.result_type(np.dtype(x.dtype), np.float32)


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _ret(out, state):
    return out if state is _NO_STATE else (out, state)


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the whole input of shape
    ``shape`` (Equinox's ``LayerNorm``; vmap it over other axes).

    >>> import zerax.nn as nn
    >>> nn.LayerNorm(2)(znp.array([1.0, 3.0], np.float32))
    Array([-0.999995,  0.999995], dtype=float32)
    """

    shape: tuple = field(static=True)
    eps: float = field(static=True)
    use_weight: bool = field(static=True)
    use_bias: bool = field(static=True)
    weight: Any
    bias: Any

    def __init__(self, shape: int | Sequence[int], eps: float = 1e-5, use_weight: bool = True,
                 use_bias: bool = True, dtype=None, *, elementwise_affine: bool | None = None):
        shape = _shape(shape)
        if elementwise_affine is not None:
            use_weight = use_bias = elementwise_affine
        dtype = param_dtype(dtype)
        self.shape = shape
        self.eps = eps
        self.use_weight = use_weight
        self.use_bias = use_bias
        self.weight = znp.ones(shape, dtype) if use_weight else None
        self.bias = znp.zeros(shape, dtype) if use_bias else None

    def __call__(self, x, state=_NO_STATE, *, key=None):
        if tuple(znp.shape(x)) != self.shape:
            raise errors.ShapeError(
                f"LayerNorm(shape={self.shape}) needs x.shape == shape, got {znp.shape(x)}; "
                "use zerax.vmap(layer_norm)(x) to normalise each row of a batch")
        x = znp.asarray(x)
        orig = x.dtype
        dtype = _compute_dtype(x)
        x = x.astype(dtype)
        mean = znp.mean(x, keepdims=True)
        var = znp.maximum(0.0, znp.var(x, keepdims=True))
        out = (x - mean) * lax.rsqrt(var + self.eps)
        if self.use_weight:
            out = self.weight.astype(dtype) * out
        if self.use_bias:
            out = out + self.bias.astype(dtype)
        return _ret(out.astype(orig), state)


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight + bias`` (Equinox's ``RMSNorm``).

    >>> import zerax.nn as nn
    >>> nn.RMSNorm(2, eps=0.0)(znp.array([3.0, 4.0], np.float32)).round(4)
    Array([0.8485, 1.1314], dtype=float32)
    """

    shape: tuple = field(static=True)
    eps: float = field(static=True)
    use_weight: bool = field(static=True)
    use_bias: bool = field(static=True)
    weight: Any
    bias: Any

    def __init__(self, shape: int | Sequence[int], eps: float = 1e-5, use_weight: bool = True,
                 use_bias: bool = True, dtype=None):
        shape = _shape(shape)
        dtype = param_dtype(dtype)
        self.shape = shape
        self.eps = eps
        self.use_weight = use_weight
        self.use_bias = use_bias
        self.weight = znp.ones(shape, dtype) if use_weight else None
        self.bias = znp.zeros(shape, dtype) if use_bias else None

    def __call__(self, x, state=_NO_STATE, *, key=None):
        if tuple(znp.shape(x)) != self.shape:
            raise errors.ShapeError(
                f"RMSNorm(shape={self.shape}) needs x.shape == shape, got {znp.shape(x)}; "
                "use zerax.vmap(rms_norm)(x) for a batch")
        x = znp.asarray(x)
        orig = x.dtype
        dtype = _compute_dtype(x)
        x = x.astype(dtype)
        out = lax.rsqrt(znp.mean(x ** 2) + self.eps) * x
        if self.use_weight:
            out = self.weight.astype(dtype) * out
        if self.use_bias:
            out = out + self.bias.astype(dtype)
        return _ret(out.astype(orig), state)


class GroupNorm(Module):
    """Normalises each of ``groups`` groups of channels of an input ``(channels, ...)``
    (Equinox's ``GroupNorm``), then a per-channel affine map.

    >>> import zerax.nn as nn
    >>> nn.GroupNorm(2, 4)(znp.array([1.0, 3.0, 5.0, 5.0], np.float32))
    Array([-0.999995,  0.999995,  0.      ,  0.      ], dtype=float32)
    """

    groups: int = field(static=True)
    channels: Any = field(static=True)
    eps: float = field(static=True)
    channelwise_affine: bool = field(static=True)
    weight: Any
    bias: Any

    def __init__(self, groups: int, channels: int | None = None, eps: float = 1e-5,
                 channelwise_affine: bool = True, dtype=None):
        if channels is not None and channels % groups != 0:
            raise errors.ZeraxValueError(
                f"GroupNorm: groups (={groups}) must divide channels (={channels})")
        if channels is None and channelwise_affine:
            raise errors.ZeraxValueError(
                "GroupNorm: give channels= when channelwise_affine=True")
        dtype = param_dtype(dtype)
        self.groups = groups
        self.channels = channels
        self.eps = eps
        self.channelwise_affine = channelwise_affine
        self.weight = znp.ones(channels, dtype) if channelwise_affine else None
        self.bias = znp.zeros(channels, dtype) if channelwise_affine else None

    def __call__(self, x, state=_NO_STATE, *, key=None):
        x = znp.asarray(x)
        c = x.shape[0] if x.ndim else 0
        if x.ndim == 0 or c % self.groups or (self.channels is not None and c != self.channels):
            raise errors.ShapeError(
                f"GroupNorm(groups={self.groups}, channels={self.channels}) got an input of "
                f"shape {x.shape}: the first axis must hold the channels")
        orig = x.dtype
        dtype = _compute_dtype(x)
        x = x.astype(dtype)
        y = x.reshape((self.groups, c // self.groups) + x.shape[1:])
        axes = tuple(range(1, y.ndim))
        mean = znp.mean(y, axis=axes, keepdims=True)
        var = znp.maximum(0.0, znp.var(y, axis=axes, keepdims=True))
        out = ((y - mean) * lax.rsqrt(var + self.eps)).reshape(x.shape)
        if self.channelwise_affine:
            bshape = (c,) + (1,) * (x.ndim - 1)
            out = (self.weight.astype(dtype).reshape(bshape) * out
                   + self.bias.astype(dtype).reshape(bshape))
        return _ret(out.astype(orig), state)


def _pmean(x, axis_name):
    pmean = getattr(lax, "pmean", None)
    if pmean is None:  # a zerax without collectives over named vmap axes
        raise errors.NotSupportedError(
            "BatchNorm in training mode averages over the vmap axis named by axis_name, "
            "which needs zerax.lax.pmean; use inference mode, or LayerNorm/GroupNorm")
    return pmean(x, axis_name)


class BatchNorm(StatefulLayer):
    """Batch normalisation over the vmap axis ``axis_name`` (Equinox 0.13's ``BatchNorm``).

    Call it inside ``zerax.vmap(..., axis_name=axis_name)`` with its `State`:
    ``y, state = bn(x, state)`` with ``x`` of shape ``(input_size, ...)``. ``mode='batch'``
    keeps bias-corrected running averages (a counter and the debiased mean/variance);
    ``mode='ema'`` (the default, with a warning in Equinox) an exponential moving average
    seeded by the first batch. ``inference=True`` uses the running statistics.

    >>> import zerax.nn as nn
    >>> bn, state = nn.make_with_state(nn.BatchNorm)(2, "batch", mode="batch")
    >>> x = znp.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    >>> y, state = zx.vmap(bn, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
    ...     x, state)
    >>> y.round(4)
    Array([[-1., -1.],
           [ 1.,  1.]], dtype=float32)
    >>> int(state.get(bn.batch_counter))
    1
    """

    weight: Any
    bias: Any
    ema_first_time_index: Any
    ema_state_index: Any
    batch_counter: Any
    batch_state_index: Any
    axis_name: Any
    inference: bool
    input_size: int = field(static=True)
    eps: float = field(static=True)
    channelwise_affine: bool = field(static=True)
    momentum: float = field(static=True)
    mode: str = field(static=True)

    def __init__(self, input_size: int, axis_name: Hashable | Sequence[Hashable],
                 eps: float = 1e-5, channelwise_affine: bool = True, momentum: float = 0.99,
                 inference: bool = False, dtype=None, mode: str = "ema"):
        if mode == "legacy":
            mode = "ema"
        if mode not in ("ema", "batch"):
            raise errors.ZeraxValueError(
                f"BatchNorm: mode must be 'ema' or 'batch', got {mode!r}")
        dtype = param_dtype(dtype)
        self.mode = mode
        if channelwise_affine:
            self.weight = znp.ones((input_size,), dtype)
            self.bias = znp.zeros((input_size,), dtype)
        else:
            self.weight = None
            self.bias = None
        if mode == "ema":
            self.ema_first_time_index = StateIndex(znp.array(True))
            # Equinox starts these buffers with jnp.empty; zeros are as good (they are
            # replaced by the first batch's statistics) and deterministic.
            self.ema_state_index = StateIndex((znp.zeros((input_size,), dtype),
                                               znp.zeros((input_size,), dtype)))
            self.batch_counter = None
            self.batch_state_index = None
        else:
            self.batch_counter = StateIndex(znp.array(0, np.int32))
            self.batch_state_index = StateIndex((znp.zeros((input_size,), dtype),
                                                 znp.ones((input_size,), dtype)))
            self.ema_first_time_index = None
            self.ema_state_index = None
        self.inference = inference
        self.axis_name = axis_name
        self.input_size = input_size
        self.eps = eps
        self.channelwise_affine = channelwise_affine
        self.momentum = momentum

    def __call__(self, x, state: State, *, key=None, inference: bool | None = None):
        if inference is None:
            inference = self.inference
        x = znp.asarray(x)
        if x.ndim == 0 or x.shape[0] != self.input_size:
            raise errors.ShapeError(
                f"BatchNorm(input_size={self.input_size}) takes one example whose first axis "
                f"has the channels, got shape {x.shape}; vmap it over the batch with "
                f"axis_name={self.axis_name!r}")
        if not isinstance(state, State):
            raise errors.ZeraxTypeError(
                "BatchNorm needs its State: bn, state = nn.make_with_state(nn.BatchNorm)(...); "
                "y, state = bn(x, state)")

        def stats(y):
            mean = _pmean(znp.mean(y), self.axis_name)
            var = _pmean(znp.mean((y - mean) * znp.conj(y - mean)), self.axis_name)
            return mean, znp.maximum(0.0, var)

        if self.mode == "ema":
            if inference:
                mean, var = state.get(self.ema_state_index)
            else:
                first = state.get(self.ema_first_time_index)
                state = state.set(self.ema_first_time_index, znp.array(False))
                bmean, bvar = zx.vmap(stats)(x)
                rmean, rvar = state.get(self.ema_state_index)
                m = self.momentum
                mean = (1 - m) * bmean + m * rmean
                var = (1 - m) * bvar + m * rvar
                mean = lax.select(znp.broadcast_to(first, mean.shape), bmean, mean)
                var = lax.select(znp.broadcast_to(first, var.shape), bvar, var)
                mean = mean.astype(rmean.dtype)
                var = var.astype(rvar.dtype)
                state = state.set(self.ema_state_index, (mean, var))
        else:
            counter = state.get(self.batch_counter)
            hmean, hvar = state.get(self.batch_state_index)
            if inference:
                scale = znp.where(counter == 0, 1, 1 - self.momentum ** counter)
                scale = scale.astype(hmean.dtype)
                mean = hmean / scale
                var = hvar / scale
            else:
                mean, var = zx.vmap(stats)(x)
                m = self.momentum
                state = state.set(self.batch_counter, counter + 1)
                state = state.set(self.batch_state_index,
                                  ((hmean * m + mean * (1 - m)).astype(hmean.dtype),
                                   (hvar * m + var * (1 - m)).astype(hvar.dtype)))

        bshape = (self.input_size,) + (1,) * (x.ndim - 1)
        out = (x - mean.reshape(bshape)) / znp.sqrt(var.reshape(bshape) + self.eps)
        if self.channelwise_affine:
            out = out * self.weight.reshape(bshape) + self.bias.reshape(bshape)
        return out, state
