"""More of optax's losses: ``generalized_kl_divergence`` (and its deprecated name
``convex_kl_divergence``), ``multiclass_perceptron_loss``, ``triplet_margin_loss`` and
``ntxent`` (the contrastive NT-Xent loss), with optax's formulas and signatures.
"""

from __future__ import annotations

from typing import Any

import zerax.numpy as znp

from .. import errors, lax, nn
from .losses import cosine_similarity, kl_divergence

__all__ = ["convex_kl_divergence", "generalized_kl_divergence", "multiclass_perceptron_loss",
           "ntxent", "triplet_margin_loss"]


def _floating(x, fname, what):
    x = znp.asarray(x)
    if x.dtype.kind != "f":
        raise errors.ZeraxTypeError(f"{fname}: {what} must be floating-point, got {x.dtype}")
    return x


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


def triplet_margin_loss(anchors: Any, positives: Any, negatives: Any, axis: int = -1,
                        norm_degree: Any = 2, margin: Any = 1.0, eps: Any = 1e-6) -> Any:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``norm_degree`` distance
    along ``axis`` (``eps`` inside the root), optax's ``triplet_margin_loss``.

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> a, p, n = znp.zeros((1, 2)), znp.ones((1, 2)), 2 * znp.ones((1, 2))
    >>> optax.losses.triplet_margin_loss(a, p, n, eps=0.0).round(6)
    Array([0.], dtype=float64)
    """
    anchors = _floating(anchors, "triplet_margin_loss", "anchors")
    positives = _floating(positives, "triplet_margin_loss", "positives")
    negatives = _floating(negatives, "triplet_margin_loss", "negatives")
    pos = znp.power(znp.power(anchors - positives, norm_degree).sum(axis) + eps,
                    1 / norm_degree)
    neg = znp.power(znp.power(anchors - negatives, norm_degree).sum(axis) + eps,
                    1 / norm_degree)
    return znp.maximum(pos - neg + margin, 0)


def ntxent(embeddings: Any, labels: Any, temperature: Any = 0.07) -> Any:
    """The normalised temperature-scaled cross entropy of contrastive learning (SimCLR):
    for each pair of rows with the same label, the log-softmax of their cosine
    similarity against all rows of other labels, averaged (optax's ``ntxent``).

    >>> import zerax.numpy as znp, zerax.optim as optax
    >>> e = znp.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> round(float(optax.losses.ntxent(e, znp.array([0, 0, 1, 1]))), 6)
    1.1e-05
    """
    embeddings = _floating(embeddings, "ntxent", "embeddings")
    labels = znp.asarray(labels)
    if labels.shape[0] != embeddings.shape[0]:
        raise errors.ZeraxValueError(
            "Labels and embeddings must have the same leading dimension, found "
            f"{labels.shape[0]} for labels and {embeddings.shape[0]} for embeddings.")
    xcs = cosine_similarity(embeddings[None, :, :], embeddings[:, None, :],
                            epsilon=znp.finfo(embeddings.dtype).eps) / temperature
    same = labels[:, None] == labels[None, :]
    diffs = ~same
    matches = same & ~znp.eye(same.shape[0], dtype=bool)      # no self-similarity
    xcs_diffs = znp.where(diffs, xcs, -znp.inf)
    xcs_matches = znp.where(matches, xcs, -znp.inf)
    comb = znp.concatenate((xcs_diffs, xcs_matches), axis=-1)
    xcs_max = znp.max(comb, axis=1, keepdims=True)
    shift_diffs = xcs_diffs - lax.stop_gradient(xcs_max)
    shift_matches = xcs_matches - lax.stop_gradient(xcs_max)
    denom = znp.sum(znp.exp(shift_diffs), axis=1, keepdims=True) + znp.exp(shift_matches)
    log_softm = shift_matches - znp.log(denom)
    return -znp.where(matches, log_softm, 0.0).sum() / matches.sum()
