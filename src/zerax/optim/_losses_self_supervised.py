"""optax's self-supervised (metric learning) losses for `zerax.optim.losses`:
``triplet_margin_loss`` and ``ntxent`` (the NT-Xent loss of contrastive learning).
"""

from __future__ import annotations

from typing import Any

import zerax.numpy as znp
from .. import errors, lax

from ._losses_regression import cosine_similarity

__all__ = ["ntxent", "triplet_margin_loss"]


def _floating(x, fname, what):
    x = znp.asarray(x)
    if x.dtype.kind != "f":
        raise errors.ZeraxTypeError(f"{fname}: {what} must be floating-point, got {x.dtype}")
    return x


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
