"""`zerax.optim.losses`: optax's loss functions (``optax.losses``), elementwise or per
example (no reduction over the batch: take ``.mean()`` yourself, as with optax).

>>> import zerax.numpy as znp
>>> from zerax.optim import losses
>>> float(losses.softmax_cross_entropy_with_integer_labels(znp.zeros((1, 4)), znp.asarray([2]))[0])
1.3862943611198906
"""

from __future__ import annotations

from typing import Any, Optional

import zerax.numpy as znp
from .. import errors, lax, nn

from ._losses_regression import (cosine_distance, cosine_similarity, huber_loss, l2_loss, log_cosh, squared_error)
from ._losses_self_supervised import ntxent, triplet_margin_loss

__all__ = [
    "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
    "safe_softmax_cross_entropy", "sigmoid_binary_cross_entropy", "sigmoid_focal_loss",
    "l2_loss", "squared_error", "huber_loss", "log_cosh", "hinge_loss", "perceptron_loss",
    "cosine_similarity", "cosine_distance", "kl_divergence", "kl_divergence_with_log_targets",
    "smooth_labels", "poly_loss_cross_entropy", "multiclass_hinge_loss",
    "convex_kl_divergence", "generalized_kl_divergence", "multiclass_perceptron_loss",
    "ntxent", "triplet_margin_loss",
]


def _log_softmax(x, axis, where):
    if where is None:
        return nn.log_softmax(x, axis=axis)
    x_max = znp.max(znp.where(where, x, -znp.inf), axis=axis, keepdims=True)
    x_safe = znp.where(where, x, -znp.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    lse = znp.log(znp.sum(znp.exp(shifted), axis=axis, where=where, keepdims=True))
    return znp.where(where, shifted - lse, -znp.inf)


def softmax_cross_entropy(logits: Any, labels: Any, axis: Any = -1,
                          where: Optional[Any] = None) -> Any:
    """``-sum(labels * log_softmax(logits))`` over ``axis`` (labels are probabilities).

    >>> float(softmax_cross_entropy(znp.zeros(4), znp.asarray([0., 1., 0., 0.])))
    1.3862943611198906
    """
    logits = znp.asarray(logits)
    labels = znp.asarray(labels)
    if where is not None:
        where = znp.asarray(where)
        if where.ndim != logits.ndim:
            where = znp.expand_dims(where, axis)
    log_probs = _log_softmax(logits, axis, where)
    if where is not None:
        log_probs = znp.where(where, log_probs, 0.0)   # masked entries are -inf
    prod = labels * log_probs
    if where is None:
        return -prod.sum(axis)
    return -znp.sum(znp.where(where, prod, 0.0), axis=axis)


def safe_softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """`softmax_cross_entropy` that gives 0 (not nan) where a label is 0 and a logit is
    -inf.

    >>> logits, labels = znp.asarray([0.0, -znp.inf]), znp.asarray([1.0, 0.0])
    >>> float(safe_softmax_cross_entropy(logits, labels)) == 0
    True
    """
    logits = znp.asarray(logits)
    labels = znp.asarray(labels)
    lsm = nn.log_softmax(logits, axis=-1)
    nz = labels != 0.0
    # 0 * -inf is nan: take the product only where the label is non-zero
    return -znp.sum(znp.where(nz, labels * znp.where(nz, lsm, 0.0), 0.0), axis=-1)


def softmax_cross_entropy_with_integer_labels(logits: Any, labels: Any, axis: Any = -1,
                                              where: Optional[Any] = None) -> Any:
    """Cross entropy of ``logits`` with integer class ``labels`` (``logsumexp(logits) -
    logits[label]``).

    >>> float(softmax_cross_entropy_with_integer_labels(znp.asarray([0.0, 0.0]), znp.asarray(1)))
    0.6931471805599453
    """
    logits = znp.asarray(logits)
    labels = znp.asarray(labels)
    if not znp.issubdtype(labels.dtype, znp.integer):
        raise errors.ZeraxTypeError(
            f"softmax_cross_entropy_with_integer_labels needs integer labels, got "
            f"{labels.dtype}; use softmax_cross_entropy for probability labels.")
    if where is not None:
        where = znp.asarray(where)
        if where.ndim != logits.ndim:
            where = znp.expand_dims(where, axis)
    if isinstance(axis, int):
        axis = axis % logits.ndim if -logits.ndim <= axis < logits.ndim else None
        if axis is None:
            raise errors.ZeraxValueError("axis is out of bounds for the logits")
    elif isinstance(axis, tuple):
        logit_axis = tuple(a % logits.ndim for a in axis)
        batch_axis = tuple(x for x in range(logits.ndim) if x not in logit_axis)
        axis = len(batch_axis)
        logits = logits.transpose(batch_axis + logit_axis)
        logits = logits.reshape(logits.shape[:len(batch_axis)] + (-1,))
        if where is not None:
            where = where.transpose(batch_axis + logit_axis)
            where = where.reshape(where.shape[:len(batch_axis)] + (-1,))
    else:
        raise errors.ZeraxTypeError(
            f"Keyword argument 'axis' must be of type 'int' or 'tuple[int, ...]' but actual "
            f"type is {type(axis)}.")
    label_logits = znp.take_along_axis(logits, znp.expand_dims(labels, axis), axis=axis)
    label_logits = znp.squeeze(label_logits, axis=axis)
    if where is None:
        log_norm = nn.logsumexp(logits, axis=axis)
    else:
        x_max = lax.stop_gradient(znp.max(znp.where(where, logits, -znp.inf), axis=axis,
                                          keepdims=True))
        x_max = znp.where(znp.isfinite(x_max), x_max, 0.0)
        log_norm = znp.squeeze(x_max, axis) + znp.log(znp.sum(
            znp.exp(logits - x_max), axis=axis, where=where))
    out = log_norm - label_logits
    if where is not None:
        out = znp.where(znp.any(where, axis), out, 0.0)
    return out


def sigmoid_binary_cross_entropy(logits: Any, labels: Any) -> Any:
    """Elementwise ``-labels log sigmoid(logits) - (1 - labels) log sigmoid(-logits)``.

    >>> float(sigmoid_binary_cross_entropy(znp.asarray(0.0), znp.asarray(1.0)))
    0.6931471805599453
    """
    logits = znp.asarray(logits)
    labels = znp.asarray(labels).astype(logits.dtype)
    return -labels * nn.log_sigmoid(logits) - (1.0 - labels) * nn.log_sigmoid(-logits)


def sigmoid_focal_loss(logits: Any, labels: Any, *, alpha: Optional[Any] = None,
                       gamma: Any = 2.0) -> Any:
    """Focal loss: sigmoid cross entropy weighted by ``(1 - p_t)**gamma``.

    >>> round(float(sigmoid_focal_loss(znp.asarray(0.0), znp.asarray(1.0))), 6)
    0.173287
    """
    logits = znp.asarray(logits)
    labels = znp.asarray(labels).astype(logits.dtype)
    ce = sigmoid_binary_cross_entropy(logits, labels)
    log_p = nn.log_sigmoid(logits)
    log_q = nn.log_sigmoid(-logits)
    log_1mpt = nn.logsumexp(znp.stack([log_p, log_q], axis=-1), axis=-1,
                            b=znp.stack([1 - labels, labels], axis=-1))
    loss = ce * znp.exp(gamma * log_1mpt)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def hinge_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, 1 - outputs * targets)`` for targets in {-1, 1}.

    >>> hinge_loss(znp.asarray([0.5, 2.0]), znp.asarray([1.0, 1.0])).tolist()
    [0.5, 0.0]
    """
    return znp.maximum(0, 1 - znp.asarray(predictor_outputs) * targets)


def perceptron_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, -outputs * targets)``.

    >>> perceptron_loss(znp.asarray([-0.5]), znp.asarray([1.0])).tolist()
    [0.5]
    """
    return znp.maximum(0, -znp.asarray(predictor_outputs) * targets)


def multiclass_hinge_loss(scores: Any, labels: Any) -> Any:
    """Multiclass hinge loss ``max(scores + 1 - onehot) - scores[label]``.

    >>> float(multiclass_hinge_loss(znp.asarray([2.0, 0.0]), znp.asarray(1)))
    3.0
    """
    scores = znp.asarray(scores)
    one_hot = nn.one_hot(labels, scores.shape[-1], dtype=scores.dtype)
    return znp.max(scores + 1.0 - one_hot, axis=-1) - znp.sum(scores * one_hot, axis=-1)


def kl_divergence(log_predictions: Any, targets: Any, axis: Any = -1,
                  where: Optional[Any] = None) -> Any:
    """``sum(targets * (log(targets) - log_predictions))`` (0 log 0 = 0).

    >>> float(kl_divergence(znp.log(znp.asarray([0.5, 0.5])), znp.asarray([1.0, 0.0])))
    0.6931471805599453
    """
    targets = znp.asarray(targets)
    log_t = znp.log(znp.where(targets == 0, 1.0, targets))
    loss = targets * (znp.where(targets == 0, 0, log_t) - log_predictions)
    return znp.sum(loss, axis=axis, where=True if where is None else where)


def kl_divergence_with_log_targets(log_predictions: Any, log_targets: Any, axis: Any = -1,
                                   where: Optional[Any] = None) -> Any:
    """`kl_divergence` with the targets given as log-probabilities.

    >>> lp = znp.log(znp.asarray([0.5, 0.5]))
    >>> float(kl_divergence_with_log_targets(lp, lp))
    0.0
    """
    log_targets = znp.asarray(log_targets)
    loss = znp.exp(log_targets) * (log_targets - log_predictions)
    return znp.sum(loss, axis=axis, where=True if where is None else where)


def poly_loss_cross_entropy(logits: Any, labels: Any, *, epsilon: Any = 2.0, axis: Any = -1,
                            where: Optional[Any] = None) -> Any:
    """Poly-1 loss: cross entropy plus ``epsilon * (1 - p_t)``.

    >>> round(float(poly_loss_cross_entropy(znp.zeros(2), znp.asarray([1.0, 0.0]))), 6)
    1.693147
    """
    logits = znp.asarray(logits)
    w = True if where is None else where
    lsm = _log_softmax(logits, axis, None if where is None else znp.asarray(where))
    p = znp.exp(lsm)
    one_minus_pt = znp.sum(labels * (1 - p), axis=axis, where=w)
    return softmax_cross_entropy(logits, labels, axis=axis, where=where) + epsilon * one_minus_pt


def smooth_labels(labels: Any, alpha: Any, *, axis: Any = -1, where: Optional[Any] = None) -> Any:
    """Label smoothing: ``(1 - alpha) * labels + alpha / num_categories``.

    >>> smooth_labels(znp.asarray([0.0, 1.0]), 0.2).tolist()
    [0.1, 0.9]
    """
    labels = znp.asarray(labels)
    if where is None:
        if isinstance(axis, tuple):
            n = 1
            for a in axis:
                n *= labels.shape[a]
        else:
            n = labels.shape[axis]
    else:
        n = znp.sum(where, axis, keepdims=True)
    return (1.0 - alpha) * labels + alpha / n


def generalized_kl_divergence(log_predictions: Any, targets: Any, axis: Any = -1,
                              where: Any = None) -> Any:
    """The KL divergence extended to unnormalised measures: `kl_divergence` plus
    ``sum(exp(log_predictions) - targets)`` (optax's).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> float(optax.losses.generalized_kl_divergence(znp.log(znp.array([1.0, 1.0])),
    ...                                              znp.array([1.0, 1.0])))
    0.0
    """
    log_predictions = znp.asarray(log_predictions)
    x = kl_divergence(log_predictions, targets, axis=axis, where=where)
    y = znp.sum(znp.exp(log_predictions) - znp.asarray(targets), axis=axis,
                where=True if where is None else where)
    return x + y


def convex_kl_divergence(log_predictions: Any, targets: Any, axis: Any = -1,
                         where: Any = None) -> Any:
    """optax's older name of `generalized_kl_divergence`.

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> float(optax.convex_kl_divergence(znp.zeros(2), znp.ones(2)))
    0.0
    """
    return generalized_kl_divergence(log_predictions, targets, axis=axis, where=where)


def multiclass_perceptron_loss(scores: Any, labels: Any) -> Any:
    """``max(scores) - scores[label]`` over the last axis (optax's).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> optax.losses.multiclass_perceptron_loss(znp.array([[1.0, 3.0, 2.0]]), znp.array([2]))
    Array([1.], dtype=float64)
    """
    scores = znp.asarray(scores)
    one_hot = nn.one_hot(labels, scores.shape[-1], dtype=scores.dtype)
    return znp.max(scores, axis=-1) - znp.sum(scores * one_hot, axis=-1)
