"""optax's regression losses for `zerax.optim.losses`: ``squared_error``, ``l2_loss``,
``huber_loss``, ``log_cosh``, and the cosine similarity and distance, elementwise or per
example (no reduction).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import zerax.numpy as znp
from .. import errors

__all__ = ["squared_error", "l2_loss", "huber_loss", "log_cosh", "cosine_similarity",
           "cosine_distance"]


def _check_shapes(name, a, b):
    if znp.shape(a) != znp.shape(b):
        raise errors.ShapeError(
            f"{name}: the shapes {znp.shape(a)} and {znp.shape(b)} of the two arguments "
            f"differ; pass arrays of the same shape.")


def squared_error(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``(predictions - targets)**2``.

    >>> squared_error(znp.asarray([1.0, 3.0]), znp.asarray([0.0, 1.0])).tolist()
    [1.0, 4.0]
    """
    predictions = znp.asarray(predictions)
    if targets is not None:
        targets = znp.asarray(targets)
        _check_shapes("squared_error", predictions, targets)
    err = predictions - targets if targets is not None else predictions
    return err ** 2


def l2_loss(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``0.5 * (predictions - targets)**2``.

    >>> l2_loss(znp.asarray([2.0])).tolist()
    [2.0]
    """
    return 0.5 * squared_error(znp.asarray(predictions), targets)


def huber_loss(predictions: Any, targets: Optional[Any] = None, *, delta: Any = 1.0) -> Any:
    """Huber loss: quadratic within ``delta``, linear beyond.

    >>> huber_loss(znp.asarray([0.5, 3.0])).tolist()
    [0.125, 2.5]
    """
    predictions = znp.asarray(predictions)
    err = predictions - targets if targets is not None else predictions
    abs_err = znp.abs(err)
    quadratic = znp.minimum(abs_err, delta)
    return 0.5 * quadratic ** 2 + delta * (abs_err - quadratic)


def log_cosh(predictions: Any, targets: Optional[Any] = None) -> Any:
    """Elementwise ``log(cosh(predictions - targets))``, computed stably.

    >>> round(float(log_cosh(znp.asarray(1.0))), 10)
    0.4337808305
    """
    predictions = znp.asarray(predictions)
    err = predictions - targets if targets is not None else predictions
    return znp.logaddexp(err, -err) - znp.asarray(math.log(2.0)).astype(err.dtype)


def cosine_similarity(predictions: Any, targets: Any, *, epsilon: Any = 0.0, axis: Any = -1,
                      where: Optional[Any] = None) -> Any:
    """Cosine of the angle between ``predictions`` and ``targets`` along ``axis``.

    >>> float(cosine_similarity(znp.asarray([1.0, 0.0]), znp.asarray([1.0, 1.0])))
    0.7071067811865475
    """
    a = znp.asarray(predictions)
    b = znp.asarray(targets)
    w = True if where is None else where
    a_norm = znp.sqrt(znp.clip(znp.sum(znp.square(a), axis=axis, where=w, keepdims=True),
                               epsilon))
    b_norm = znp.sqrt(znp.clip(znp.sum(znp.square(b), axis=axis, where=w, keepdims=True),
                               epsilon))
    return znp.sum((a / a_norm) * (b / b_norm), axis=axis, where=w)


def cosine_distance(predictions: Any, targets: Any, *, epsilon: Any = 0.0, axis: Any = -1,
                    where: Optional[Any] = None) -> Any:
    """``1 - cosine_similarity``.

    >>> float(cosine_distance(znp.asarray([1.0, 0.0]), znp.asarray([0.0, 1.0])))
    1.0
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis, where=where)
