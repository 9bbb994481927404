"""`zerax.example_libraries.stax`: JAX's ``jax.example_libraries.stax`` on zerax.

A layer is an ``(init_fun, apply_fun)`` pair: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` applies the layer
(``rng=`` is the only keyword the layers here read: Dropout's key).  Layers compose with
`serial`, `parallel` and `shape_dependent`; params are plain tuples and lists, so they are
pytrees for ``zerax.grad``, ``jit`` and the optimisers of
`zerax.example_libraries.optimizers`.

The defaults are JAX's: Dense and convolution weights ``glorot_normal``, biases
``normal`` (1e-2 for Dense, 1e-6 for convolutions), in the mode's default float (float64,
or float32 with ``jax_enable_x64`` off), drawn from `zerax.random`, so the same key gives
JAX's parameters in either mode.  ``input_shape`` may hold -1 for an unknown batch
size, as in JAX.  As in JAX, ``Dropout(rate)`` keeps each unit with probability ``rate``.

>>> import zerax.numpy as znp, zerax.random as zr
>>> from zerax.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))
>>> out_shape, params = init_fun(zr.PRNGKey(0), (-1, 4))
>>> out_shape
(-1, 2)
>>> apply_fun(params, znp.ones((5, 4), znp.float32)).shape
(5, 2)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import errors
from .. import lax, random
from .. import numpy as jnp
from ..nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus,
                  standardize)
from ..nn import initializers as _init

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "glorot",
    "glorot_normal", "logsoftmax", "normal", "ones", "parallel", "randn", "serial",
    "shape_dependent", "zeros",
]

# JAX's initializers themselves: they draw the mode's default float (float64; float32 with
# x64 off), as jax.example_libraries.stax's do
glorot_normal = _init.glorot_normal
normal = _init.normal
zeros = _init.zeros
ones = _init.ones

# aliases JAX keeps for backwards compatibility
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _check_dim(value, what, layer):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value <= 0:
        raise errors.ZeraxValueError(
            f"stax.{layer}: {what} must be a positive int, got {value!r}.")
    return int(value)


def _check_shape(input_shape, layer, ndim=None):
    try:
        shape = tuple(int(d) for d in input_shape)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"stax.{layer}: input_shape must be a tuple of ints, got {input_shape!r}.") from None
    if ndim is not None and len(shape) != ndim:
        raise errors.ShapeError(
            f"stax.{layer}: input_shape {shape} has {len(shape)} dimensions, the layer's "
            f"dimension numbers need {ndim}.")
    return shape


# --------------------------------------------------------------------------- shape rules
# JAX's lax.padtype_to_pads / conv_general_shape_tuple / conv_transpose_shape_tuple /
# reduce_window_shape_tuple, written on ints so that a -1 batch dimension passes through.

def _pads(in_shape, window, strides, padding, layer):
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(in_shape)
        if mode in ("SAME", "SAME_LOWER"):
            out = [-(-d // s) for d, s in zip(in_shape, strides)]
            total = [max((o - 1) * s + w - d, 0)
                     for o, s, w, d in zip(out, strides, window, in_shape)]
            if mode == "SAME":
                return [(p // 2, p - p // 2) for p in total]
            return [(p - p // 2, p // 2) for p in total]
        raise errors.ZeraxValueError(
            f"stax.{layer}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
            f"(low, high) pairs, got {padding!r}.")
    pads = [tuple(int(q) for q in p) for p in padding]
    if len(pads) != len(in_shape) or any(len(p) != 2 for p in pads):
        raise errors.ZeraxValueError(
            f"stax.{layer}: explicit padding needs one (low, high) pair per spatial "
            f"dimension ({len(in_shape)}), got {padding!r}.")
    return pads


def _stride_dim(d, window, stride):
    return max(0, (d - window) // stride + 1)


def _perms(dimension_numbers):
    return lax.conv_general_permutations(tuple(dimension_numbers))


def _unpermute(out_trans, out_perm):
    return tuple(int(out_trans[j]) for j in np.argsort(out_perm))


def _conv_shape(lhs_shape, rhs_shape, strides, padding, dimension_numbers, layer):
    lhs_perm, rhs_perm, out_perm = _perms(dimension_numbers)
    lhs = [lhs_shape[i] for i in lhs_perm]
    rhs = [rhs_shape[i] for i in rhs_perm]
    pads = _pads(lhs[2:], rhs[2:], strides, padding, layer)
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs[2:], pads)]
    space = [_stride_dim(d, w, s) for d, w, s in zip(padded, rhs[2:], strides)]
    return _unpermute([lhs[0], rhs[0], *space], out_perm)


def _conv_transpose_padding(k, s, padding, layer):
    if isinstance(padding, str) and padding.upper() == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif isinstance(padding, str) and padding.upper() == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise errors.ZeraxValueError(
            f"stax.{layer}: padding must be 'SAME', 'VALID' or a sequence of (low, high) "
            f"pairs, got {padding!r}.")
    return pad_a, pad_len - pad_a


def _conv_transpose_shape(lhs_shape, rhs_shape, strides, padding, dimension_numbers, layer):
    lhs_perm, rhs_perm, out_perm = _perms(dimension_numbers)
    lhs = [lhs_shape[i] for i in lhs_perm]
    rhs = [rhs_shape[i] for i in rhs_perm]
    if isinstance(padding, str):
        pads = [_conv_transpose_padding(k, s, padding, layer) for k, s in zip(rhs[2:], strides)]
    else:
        pads = _pads(lhs[2:], rhs[2:], strides, padding, layer)
    space = [(i - 1) * s - k + 2 + sum(p)
             for i, k, s, p in zip(lhs[2:], rhs[2:], strides, pads)]
    return _unpermute([lhs[0], rhs[0], *space], out_perm)


def _promote(inputs, W):
    # lax convolutions take equal dtypes; inputs and parameters of different dtypes (a
    # float32 batch with float64 parameters) promote as jnp.dot does in Dense
    inputs, W = jnp.asarray(inputs), jnp.asarray(W)
    dtype = jnp.result_type(inputs.dtype, W.dtype)
    return inputs.astype(dtype), W.astype(dtype)


# --------------------------------------------------------------------------- layers

def Dense(out_dim, W_init=None, b_init=None):
    """A dense (fully-connected) layer: ``inputs @ W + b``.

    ``W_init`` defaults to ``glorot_normal()``, ``b_init`` to ``normal()`` (stddev 1e-2),
    both in the mode's default float, as JAX's.

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = Dense(3)
    >>> out_shape, (W, b) = init_fun(zr.PRNGKey(0), (2, 4))
    >>> out_shape, W.shape, b.shape
    ((2, 3), (4, 3), (3,))
    """
    out_dim = _check_dim(out_dim, "out_dim", "Dense")
    W_init = glorot_normal() if W_init is None else W_init
    b_init = normal() if b_init is None else b_init

    def init_fun(rng, input_shape):
        input_shape = _check_shape(input_shape, "Dense")
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _check_specs(dimension_numbers, filter_shape, layer):
    try:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
    except (TypeError, ValueError):
        raise errors.ZeraxValueError(
            f"stax.{layer}: dimension_numbers must be three strings such as "
            f"('NHWC', 'HWIO', 'NHWC'), got {dimension_numbers!r}.") from None
    n = len(tuple(filter_shape))
    if not (len(lhs_spec) == len(rhs_spec) == len(out_spec) == n + 2) \
            or sorted(lhs_spec.replace("N", "").replace("C", "")) != \
            sorted(out_spec.replace("N", "").replace("C", "")):
        raise errors.ZeraxValueError(
            f"stax.{layer}: dimension_numbers {dimension_numbers!r} do not fit a "
            f"{n}-dimensional filter_shape {tuple(filter_shape)}.")
    return lhs_spec, rhs_spec, out_spec


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=None):
    """A convolution layer with the layouts ``dimension_numbers = (lhs, rhs, out)``.

    ``W_init`` defaults to ``glorot_normal`` over the kernel's I and O axes, ``b_init``
    to ``normal(1e-6)``; the bias has shape 1 in every output axis but C.

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = GeneralConv(('NCHW', 'OIHW', 'NCHW'), 4, (3, 3))
    >>> out_shape, (W, b) = init_fun(zr.PRNGKey(0), (2, 1, 8, 8))
    >>> out_shape, W.shape, b.shape
    ((2, 4, 6, 6), (4, 1, 3, 3), (1, 4, 1, 1))
    """
    lhs_spec, rhs_spec, out_spec = _check_specs(dimension_numbers, filter_shape, "GeneralConv")
    out_chan = _check_dim(out_chan, "out_chan", "GeneralConv")
    filter_shape = tuple(filter_shape)
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    b_init = normal(1e-6) if b_init is None else b_init

    def init_fun(rng, input_shape):
        input_shape = _check_shape(input_shape, "GeneralConv", len(lhs_spec))
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else
                        input_shape[lhs_spec.index("C")] if c == "I" else
                        next(filter_shape_iter) for c in rhs_spec]
        output_shape = _conv_shape(input_shape, kernel_shape, strides, padding,
                                   dimension_numbers, "GeneralConv")
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        inputs, W = _promote(inputs, W)
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "GeneralConv with JAX's NHWC/HWIO layouts: ``Conv(out_chan, filter_shape, ...)``."


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=None):
    """A transposed-convolution layer (``lax.conv_transpose``) with layouts
    ``dimension_numbers``; initialisers as `GeneralConv`'s.

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = ConvTranspose(2, (3, 3), strides=(2, 2), padding='SAME')
    >>> init_fun(zr.PRNGKey(0), (1, 4, 4, 3))[0]
    (1, 8, 8, 2)
    """
    lhs_spec, rhs_spec, out_spec = _check_specs(dimension_numbers, filter_shape,
                                                "GeneralConvTranspose")
    out_chan = _check_dim(out_chan, "out_chan", "GeneralConvTranspose")
    filter_shape = tuple(filter_shape)
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    b_init = normal(1e-6) if b_init is None else b_init

    def init_fun(rng, input_shape):
        input_shape = _check_shape(input_shape, "GeneralConvTranspose", len(lhs_spec))
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else
                        input_shape[lhs_spec.index("C")] if c == "I" else
                        next(filter_shape_iter) for c in rhs_spec]
        output_shape = _conv_transpose_shape(input_shape, kernel_shape, strides, padding,
                                             dimension_numbers, "GeneralConvTranspose")
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        inputs, W = _promote(inputs, W)
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "GeneralConvTranspose with JAX's 1-D NHC/HIO layouts."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "GeneralConvTranspose with JAX's NHWC/HWIO layouts."


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalisation over ``axis`` (the statistics of the batch itself, as JAX's
    stax: there are no running averages), then ``gamma * z + beta``.

    >>> import zerax.numpy as znp, zerax.random as zr
    >>> init_fun, apply_fun = BatchNorm(axis=0)
    >>> _, params = init_fun(zr.PRNGKey(0), (4, 3))
    >>> y = apply_fun(params, znp.arange(12.0).reshape(4, 3))
    >>> [round(float(v), 6) for v in y.mean(axis=0)]
    [0.0, 0.0, 0.0]
    """
    axis = (int(axis),) if np.isscalar(axis) else tuple(int(a) for a in axis)

    def init_fun(rng, input_shape):
        input_shape = _check_shape(input_shape, "BatchNorm")
        nd = len(input_shape)
        if any(not -nd <= a < nd for a in axis):
            raise errors.ZeraxValueError(
                f"stax.BatchNorm: axis {axis} out of range for input_shape {input_shape}.")
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``.

    >>> import zerax.numpy as znp
    >>> init_fun, apply_fun = elementwise(znp.square)
    >>> apply_fun((), znp.arange(3.0))
    Array([0., 1., 4.], dtype=float64)
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(name, reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        if len(strides) != len(window_shape):
            raise errors.ZeraxValueError(
                f"stax.{name}: strides {strides} and window_shape {window_shape} differ in "
                "length.")
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            input_shape = _check_shape(input_shape, name, len(window_shape))
            pads = _pads(input_shape, window_shape, strides, padding, name)
            out_shape = tuple(_stride_dim(d + lo + hi, w, s) for d, (lo, hi), w, s
                              in zip(input_shape, pads, window_shape, strides))
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0., lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


MaxPool = _pooling_layer("MaxPool", lax.max, -np.inf)
MaxPool.__doc__ = """Max pooling over ``window_shape`` (spatial dims; layout NHWC unless
``spec`` names N and C).

>>> import zerax.numpy as znp
>>> init_fun, apply_fun = MaxPool((2, 2), strides=(2, 2))
>>> x = znp.arange(16.0).reshape(1, 4, 4, 1)
>>> apply_fun((), x)[0, :, :, 0]
Array([[ 5.,  7.],
       [13., 15.]], dtype=float64)
"""
SumPool = _pooling_layer("SumPool", lax.add, 0.)
SumPool.__doc__ = """Sum pooling over ``window_shape`` (as `MaxPool`).

>>> import zerax.numpy as znp
>>> init_fun, apply_fun = SumPool((2, 2), strides=(2, 2))
>>> float(apply_fun((), znp.ones((1, 4, 4, 1))).sum())
16.0
"""
AvgPool = _pooling_layer("AvgPool", lax.add, 0., _normalize_by_window_size)
AvgPool.__doc__ = """Average pooling over ``window_shape``; with 'SAME' padding each
window is divided by the number of input elements it covers (as JAX's).

>>> import zerax.numpy as znp
>>> init_fun, apply_fun = AvgPool((2, 2), padding='SAME')
>>> float(apply_fun((), znp.ones((1, 3, 3, 1))).max())
1.0
"""


def _make_flatten():
    def init_fun(rng, input_shape):
        input_shape = _check_shape(input_shape, "Flatten")
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _make_flatten()   # a layer, not a constructor (as JAX's)


def _make_identity():
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


Identity = _make_identity()


def FanOut(num):
    """A layer giving ``num`` copies of its input (a list), for `parallel`.

    >>> init_fun, apply_fun = FanOut(2)
    >>> init_fun(None, (3,))[0]
    [(3,), (3,)]
    """
    num = _check_dim(num, "num", "FanOut")
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _make_fan_in_sum():
    return (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


FanInSum = _make_fan_in_sum()


def FanInConcat(axis=-1):
    """A layer concatenating a list of inputs along ``axis``.

    >>> init_fun, apply_fun = FanInConcat()
    >>> init_fun(None, [(2, 3), (2, 5)])[0]
    (2, 8)
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:])
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout, JAX's semantics: in mode 'train' each unit is KEPT with probability
    ``rate`` and scaled by ``1 / rate``; any other mode is the identity.  ``apply_fun``
    needs ``rng=`` in train mode.

    >>> import zerax.numpy as znp, zerax.random as zr
    >>> init_fun, apply_fun = Dropout(0.5)
    >>> y = apply_fun((), znp.ones(4), rng=zr.PRNGKey(0))
    >>> sorted(set(float(v) for v in y)) in ([0.0, 2.0], [0.0], [2.0])
    True
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise errors.ZeraxValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=key)` where `key` is a PRNG key "
                "(e.g. from `zerax.random.PRNGKey`).")
        if mode == "train":
            # JAX draws the uniforms in the dtype of `rate`: a Python float takes the
            # mode's default float (float64 with x64 on, float32 off)
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# --------------------------------------------------------------------------- combinators

def _check_layers(layers, name):
    for i, layer in enumerate(layers):
        if not (isinstance(layer, tuple) and len(layer) == 2 and all(map(callable, layer))):
            raise errors.ZeraxTypeError(
                f"stax.{name}: argument {i} is not a layer (an (init_fun, apply_fun) pair): "
                f"{layer!r:.80}. Layer constructors such as Dense(10) must be called; "
                "Relu, Flatten, Identity and FanInSum are layers already.")


def serial(*layers):
    """Compose layers in sequence: params are a list, one entry per layer; an ``rng`` to
    ``apply_fun`` is split into one key per layer.

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = serial(Dense(4), Relu, Dense(1))
    >>> out_shape, params = init_fun(zr.PRNGKey(1), (5, 3))
    >>> out_shape, len(params)
    ((5, 1), 3)
    """
    _check_layers(layers, "serial")
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layers side by side to a sequence of inputs (usually between `FanOut` and
    `FanInSum` / `FanInConcat`).

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = serial(FanOut(2), parallel(Dense(3), Identity), FanInConcat())
    >>> init_fun(zr.PRNGKey(0), (2, 4))[0]
    (2, 7)
    """
    _check_layers(layers, "parallel")
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """Delay building a layer until the input shape is known: ``make_layer(shape)`` returns
    the ``(init_fun, apply_fun)`` pair.

    >>> import zerax.random as zr
    >>> init_fun, apply_fun = shape_dependent(lambda shape: Dense(shape[-1]))
    >>> init_fun(zr.PRNGKey(0), (2, 6))[0]
    (2, 6)
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
