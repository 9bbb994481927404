"""`zerax.train.losses`: batch losses ``loss(outputs, targets) -> scalar`` (means over the
batch), written with zerax operations so they differentiate, vmap and jit.

>>> import zerax.numpy as znp
>>> from zerax.train import losses
>>> round(float(losses.cross_entropy(znp.array([[2.0, 0.0], [0.0, 2.0]]), znp.array([0, 1]))), 6)
0.126928
"""

from __future__ import annotations

import numpy as np

import zerax.nn as nn
import zerax.numpy as znp
from ..errors import ShapeError, ZeraxValueError

__all__ = ["cross_entropy", "mse", "bce"]


def _is_integer(x) -> bool:
    return np.issubdtype(np.dtype(x.dtype), np.integer)


def cross_entropy(logits, targets, *, label_smoothing: float = 0.0):
    """Softmax cross-entropy of ``logits`` (``[..., classes]``), averaged over examples.

    ``targets`` are integer class labels (shape ``logits.shape[:-1]``) or one-hot /
    probability vectors (shape ``logits.shape``), as optax's
    ``softmax_cross_entropy_with_integer_labels`` and ``softmax_cross_entropy``.
    ``label_smoothing=a`` trains against ``(1 - a) * one_hot + a / classes`` (optax's
    ``smooth_labels``, torch's ``CrossEntropyLoss(label_smoothing=a)``); pass it to
    ``train.fit`` with ``functools.partial(cross_entropy, label_smoothing=0.1)``.

    >>> import zerax.numpy as znp
    >>> from zerax.train import losses
    >>> logits = znp.array([[1.0, 2.0, 3.0]])
    >>> float(losses.cross_entropy(logits, znp.array([2]))) == \\
    ...     float(losses.cross_entropy(logits, znp.array([[0.0, 0.0, 1.0]])))
    True
    >>> round(float(losses.cross_entropy(logits, znp.array([2]), label_smoothing=0.3)), 6)
    0.707606
    """
    logits, targets = znp.asarray(logits), znp.asarray(targets)
    a = float(label_smoothing)
    if not 0.0 <= a <= 1.0:
        raise ZeraxValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing!r}")
    logp = nn.log_softmax(logits, axis=-1)
    if _is_integer(targets):
        if targets.shape != logits.shape[:-1]:
            raise ShapeError(f"cross_entropy: integer labels of shape {targets.shape} do not "
                             f"fit logits of shape {logits.shape} (expected labels of shape "
                             f"{logits.shape[:-1]})")
        picked = znp.take_along_axis(logp, targets[..., None].astype(znp.int32), axis=-1)
        if a == 0.0:
            return -znp.mean(picked)
        # (1 - a) * one_hot + a / K against log p, without building the one-hot.
        return -znp.mean((1.0 - a) * picked[..., 0] + a * znp.mean(logp, axis=-1))
    if targets.shape != logits.shape:
        raise ShapeError(f"cross_entropy: one-hot/probability targets of shape "
                         f"{targets.shape} do not match logits of shape {logits.shape}")
    if a != 0.0:
        targets = (1.0 - a) * targets + a / logits.shape[-1]
    return -znp.mean(znp.sum(targets * logp, axis=-1))


def mse(outputs, targets):
    """Mean squared error, averaged over every element.

    >>> import zerax.numpy as znp
    >>> from zerax.train import losses
    >>> float(losses.mse(znp.array([1.0, 2.0]), znp.array([0.0, 0.0])))
    2.5
    """
    outputs, targets = znp.asarray(outputs), znp.asarray(targets)
    if outputs.shape != targets.shape:
        raise ShapeError(f"mse: outputs of shape {outputs.shape} and targets of shape "
                         f"{targets.shape} differ")
    return znp.mean((outputs - targets) ** 2)


def bce(logits, targets):
    """Binary cross-entropy of ``logits`` (pre-sigmoid) against 0/1 (or soft) ``targets``,
    averaged over every element; the stable form of optax's
    ``sigmoid_binary_cross_entropy``.

    >>> import zerax.numpy as znp
    >>> from zerax.train import losses
    >>> round(float(losses.bce(znp.array([0.0, 100.0]), znp.array([1.0, 1.0]))), 6)
    0.346574
    """
    logits, targets = znp.asarray(logits), znp.asarray(targets)
    if logits.shape != targets.shape:
        raise ShapeError(f"bce: logits of shape {logits.shape} and targets of shape "
                         f"{targets.shape} differ")
    targets = targets.astype(logits.dtype)
    return znp.mean(-targets * nn.log_sigmoid(logits)
                    - (1 - targets) * nn.log_sigmoid(-logits))
