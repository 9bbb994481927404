"""Neural-network activation functions (the `zerax.nn` namespace), as compositions.

Like JAX's, ``relu`` has derivative 0 at 0, and ``gelu`` uses the tanh approximation
unless ``approximate=False``.
"""

from __future__ import annotations

import math

import numpy as np

from . import lax_numpy as jnp
from .scipy_special import erf, expit, log_softmax, logsumexp, softmax

__all__ = ["relu", "relu6", "sigmoid", "softplus", "log_sigmoid", "silu", "swish", "gelu",
           "elu", "leaky_relu", "celu", "selu", "hard_tanh", "softmax", "log_softmax",
           "logsumexp", "one_hot", "standardize"]


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


def one_hot(x, num_classes, dtype=np.float64, axis=-1):
    """One-hot encoding of integer class labels."""
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


softmax, log_softmax, logsumexp  # re-exported
