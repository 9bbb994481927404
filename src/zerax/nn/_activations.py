"""JAX's ``jax.nn`` in `zerax.nn`: activation functions and ``dot_product_attention``,
as compositions of `zerax.numpy` operations.

Like JAX's, ``relu`` has derivative 0 at 0, and ``gelu`` uses the tanh approximation
unless ``approximate=False``.
"""

from __future__ import annotations

import math

import numpy as np

import zerax.numpy as jnp
from .. import errors
from ..lax import stop_gradient
from ..scipy.special import erf, expit, logsumexp
from ..scipy.special import log_softmax as _log_softmax
from ..scipy.special import softmax as _softmax

__all__ = ["relu", "relu6", "sigmoid", "softplus", "log_sigmoid", "silu", "swish", "gelu",
           "elu", "leaky_relu", "celu", "selu", "hard_tanh", "softmax", "log_softmax",
           "logsumexp", "one_hot", "standardize", "glu", "hard_sigmoid", "hard_silu",
           "hard_swish", "identity", "log1mexp", "logmeanexp", "mish", "soft_sign",
           "sparse_plus", "sparse_sigmoid", "squareplus", "tanh", "dot_product_attention"]


def relu(x):
    """``max(x, 0)`` with derivative 0 at 0.

    >>> import zerax as zx
    >>> float(zx.grad(zx.nn.relu)(0.0))
    0.0
    """
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, 0)


def relu6(x):
    """``min(max(x, 0), 6)``."""
    x = jnp.asarray(x)
    return jnp.where(x > 6, 6, relu(x))


def sigmoid(x):
    """The logistic function."""
    return expit(x)


def softplus(x):
    """``log(1 + exp(x))``, computed stably."""
    return jnp.logaddexp(x, 0)


def log_sigmoid(x):
    """``log(sigmoid(x))``, computed stably."""
    return -softplus(-jnp.asarray(x))


def silu(x):
    """``x * sigmoid(x)``."""
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit."""
    x = jnp.asarray(x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + jnp.tanh(c * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def elu(x, alpha=1.0):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    x = jnp.asarray(x)
    safe = jnp.where(x > 0, 0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


def leaky_relu(x, negative_slope=0.01):
    """``x`` for x >= 0, ``negative_slope * x`` otherwise."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU."""
    x = jnp.asarray(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    """Scaled ELU with the self-normalising constants."""
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * elu(x, alpha)


def hard_tanh(x):
    """``clip(x, -1, 1)``."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably; with ``where`` (a mask
    broadcastable to ``x``) only those elements count and the others are 0 (JAX's
    ``jax.nn.softmax``).

    >>> import zerax.nn as nn
    >>> nn.softmax([1.0, 2.0, 3.0], where=[True, False, True]).round(4)
    Array([0.1192, 0.    , 0.8808], dtype=float64)
    """
    return _softmax(x, axis=axis, where=where)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``; with ``where`` only those elements count and
    the others are -inf (JAX's ``jax.nn.log_softmax``).

    >>> import zerax.nn as nn
    >>> nn.log_softmax([0.0, 5.0, 0.0], where=[True, False, True]).round(4)
    Array([-0.6931,    -inf, -0.6931], dtype=float64)
    """
    return _log_softmax(x, axis=axis, where=where)


def one_hot(x, num_classes, dtype=float, axis=-1):
    """One-hot encoding of integer class labels (the mode's default float unless
    ``dtype`` is given)."""
    x = jnp.asarray(x)
    classes = jnp.arange(num_classes)
    out = jnp.expand_dims(x, axis) == jnp.reshape(
        classes, [num_classes if i == (axis % (x.ndim + 1)) else 1 for i in range(x.ndim + 1)])
    return out.astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis``."""
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis=axis, keepdims=True) - jnp.square(mean)
    return (x - mean) / jnp.sqrt(variance + epsilon)



def identity(x):
    """The identity activation (returns ``x`` as an array).

    >>> import zerax.nn as nn
    >>> nn.identity([1.0, -2.0])
    Array([ 1., -2.], dtype=float64)
    """
    return jnp.asarray(x)


def tanh(x, /):
    """The hyperbolic tangent activation.

    >>> import zerax.nn as nn
    >>> float(nn.tanh(0.0))
    0.0
    """
    return jnp.tanh(x)


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``.

    >>> import zerax.nn as nn
    >>> nn.hard_sigmoid([-4.0, 0.0, 4.0])
    Array([0. , 0.5, 1. ], dtype=float64)
    """
    return relu6(jnp.asarray(x) + 3.0) / 6.0


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also named ``hard_swish``).

    >>> import zerax.nn as nn
    >>> nn.hard_silu([-4.0, 1.0, 4.0])
    Array([-0.        ,  0.66666667,  4.        ], dtype=float64)
    """
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """``x * tanh(softplus(x))``.

    >>> import zerax.nn as nn
    >>> round(float(nn.mish(1.0)), 6)
    0.865098
    """
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def soft_sign(x):
    """``x / (|x| + 1)``.

    >>> import zerax.nn as nn
    >>> nn.soft_sign([-3.0, 1.0])
    Array([-0.75,  0.5 ], dtype=float64)
    """
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU.

    >>> import zerax.nn as nn
    >>> float(nn.squareplus(0.0))
    1.0
    """
    x = jnp.asarray(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x):
    """0 for x <= -1, ``(x + 1)**2 / 4`` for -1 < x < 1, x for x >= 1.

    >>> import zerax.nn as nn
    >>> nn.sparse_plus([-2.0, 0.0, 2.0])
    Array([0.  , 0.25, 2.  ], dtype=float64)
    """
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """``clip(x + 1, 0, 2) / 2``, the derivative of ``sparse_plus``.

    >>> import zerax.nn as nn
    >>> nn.sparse_sigmoid([-2.0, 0.0, 2.0])
    Array([0. , 0.5, 1. ], dtype=float64)
    """
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


def log1mexp(x):
    """``log(1 - exp(-x))``, computed stably (nan for x < 0, -inf at 0).

    >>> import zerax.nn as nn
    >>> round(float(nn.log1mexp(2.0)), 6)
    -0.145413
    """
    x = jnp.asarray(x)
    c = math.log(2.0)
    small = x < c
    # each branch sees only the arguments it is accurate for, so gradients stay finite
    xs = jnp.where(small, x, 1.0)
    xl = jnp.where(small, 1.0, x)
    return jnp.where(small, jnp.log(-jnp.expm1(-xs)), jnp.log1p(-jnp.exp(-xl)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis``, computed stably; ``where`` selects entries.

    >>> import zerax.nn as nn
    >>> float(nn.logmeanexp([0.0, 0.0]))
    0.0
    """
    x = jnp.asarray(x)
    if where is not None:
        where = jnp.broadcast_to(jnp.asarray(where, dtype=bool), x.shape)
        x = jnp.where(where, x, -np.inf)
        count = jnp.sum(where, axis=axis, keepdims=keepdims)
    else:
        count = jnp.sum(jnp.ones(x.shape, bool), axis=axis, keepdims=keepdims)
    lse = logsumexp(x, axis=axis, keepdims=keepdims)
    return lse - jnp.log(count.astype(lse.dtype))


def glu(x, axis=-1):
    """Gated linear unit: split ``x`` in two halves ``a, b`` along ``axis``, return
    ``a * sigmoid(b)``.

    >>> import zerax.nn as nn
    >>> nn.glu([1.0, 2.0, 0.0, 0.0])
    Array([0.5, 1. ], dtype=float64)
    """
    x = jnp.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise errors.ShapeError(f"zerax.nn.glu: axis {axis} is out of bounds for an array "
                                f"of rank {x.ndim}")
    axis = axis % x.ndim
    if x.shape[axis] % 2:
        raise errors.ShapeError(f"zerax.nn.glu: the size {x.shape[axis]} of axis {axis} must "
                                "be divisible by 2")
    a, b = jnp.split(x, 2, axis)
    return a * sigmoid(b)


# --------------------------------------------------------------------------- attention


def _large_negative(dtype):
    # capped at float32's range, as JAX does (it computes the softmax in float32)
    m = min(float(np.finfo(dtype).max), float(np.finfo(np.float32).max))
    return np.asarray(-0.7 * m, dtype)


def _ensure_4d(t):
    t = jnp.asarray(t)
    return jnp.reshape(t, (1,) * (4 - t.ndim) + tuple(t.shape)) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise errors.ShapeError(f"dot_product_attention: {name} ndim should be {len(shape)}, "
                                f"but got {t.ndim}")
    if dtype is not None and np.dtype(t.dtype) != np.dtype(dtype):
        raise errors.ZeraxTypeError(f"dot_product_attention: {name} dtype should be "
                                    f"{np.dtype(dtype)}, but got {np.dtype(t.dtype)}")
    for want, got in zip(shape, t.shape):
        if want != -1 and want != got:
            raise errors.ShapeError(f"dot_product_attention: {name} shape should be {shape}: "
                                    f"but got {tuple(t.shape)}")


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention, ``softmax(Q K^T * scale + bias) V`` per head (JAX's
    ``jax.nn.dot_product_attention`` with the 'xla' implementation's semantics).

    Shapes: ``query`` (B, T, N, H), ``key``/``value`` (B, S, K, H) with N a multiple of
    K (grouped-query attention), or the same without the batch axis.  ``bias`` and the
    boolean ``mask`` (True = attend) broadcast to (B, N, T, S).  ``scale`` defaults to
    ``1 / sqrt(H)``.  ``is_causal``, ``query_seq_lengths``, ``key_value_seq_lengths``
    and ``local_window_size`` add masks as in JAX; masked logits become a large
    negative number.  Unlike JAX, the softmax runs in the logits' dtype
    (``promote_types(query.dtype, float32)``), so float64 inputs stay float64 throughout.

    >>> import numpy as np, zerax.nn as nn
    >>> q = k = v = np.ones((2, 5, 4, 8))          # B T N H
    >>> nn.dot_product_attention(q, k, v, is_causal=True).shape
    (2, 5, 4, 8)
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise errors.NotSupportedError(
                "zerax.nn.dot_product_attention: implementation='cudnn' is not available; "
                "use implementation=None or 'xla'.")
        raise errors.ZeraxValueError(f"Unsupported implementation option: {implementation}")
    out_shape = tuple(jnp.asarray(query).shape)
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(mask, [-1] * 4, np.bool_, "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(query_seq_lengths, [B], None, "query_seq_lengths")
    _check(key_value_seq_lengths, [B], None, "key_value_seq_lengths")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise errors.ShapeError("dot_product_attention: the number of query heads must be a "
                                f"multiple of key/value heads, but got {N} vs {K}")
    G = N // K
    scale = (1.0 / math.sqrt(H)) if scale is None else scale
    ldt = np.promote_types(np.dtype(q.dtype), np.float32)
    qg = jnp.reshape(q, (B, T, K, G, H))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", qg, k, preferred_element_type=ldt)
    logits = jnp.reshape(logits, (B, N, T, S)).astype(ldt)
    logits = logits * jnp.asarray(scale, dtype=ldt)
    if bias is not None:
        logits = (logits + bias).astype(ldt)
    keep = None

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)

    if mask is not None:
        keep = both(keep, mask)
    if is_causal:
        keep = both(keep, jnp.tril(jnp.ones((T, S), dtype=bool))[None, None])
    if local_window_size is not None:
        left, right = local_window_size
        qpos, kpos = jnp.arange(T)[:, None], jnp.arange(S)[None, :]
        keep = both(keep, jnp.logical_and(qpos <= kpos + left, qpos >= kpos - right)[None, None])
    if query_seq_lengths is not None or key_value_seq_lengths is not None:
        pad = jnp.ones((B, T, S), dtype=bool)
        if query_seq_lengths is not None:
            pad = jnp.logical_and(pad, jnp.arange(T)[None, :, None]
                                  < query_seq_lengths[:, None, None])
        if key_value_seq_lengths is not None:
            pad = jnp.logical_and(pad, jnp.arange(S)[None, None, :]
                                  < key_value_seq_lengths[:, None, None])
        keep = both(keep, pad[:, None])
    if keep is not None:
        logits = jnp.where(keep, logits, _large_negative(ldt))
    probs = softmax(logits, axis=-1).astype(k.dtype)
    probs = jnp.reshape(probs, (B, K, G, T, S))
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    encoded = jnp.reshape(encoded, (B, T, N, H))
    if query_seq_lengths is not None:
        qmask = jnp.arange(T)[None, :] < query_seq_lengths[:, None]
        encoded = encoded * qmask[:, :, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, out_shape)
    if return_residual:
        lse = logsumexp(logits, axis=-1).astype(k.dtype)          # B N T
        lse = jnp.reshape(jnp.transpose(lse, (0, 2, 1)), out_shape[:-1])
        return encoded, stop_gradient(lse)
    return encoded
