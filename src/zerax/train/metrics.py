"""`zerax.train.metrics`: per-batch metrics ``metric(outputs, targets) -> scalar`` that
`fit`/`evaluate` average over an epoch (weighted by batch size), and the names that
select them (``"accuracy"``, ``"top_k_accuracy"``, ``"mse"``, ``"mae"``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

import zerax.numpy as znp
from ..errors import ShapeError, ZeraxValueError

__all__ = ["Metric", "accuracy", "top_k_accuracy", "mse", "mae", "get"]


class Metric:
    """A named batch metric: ``fn(outputs, targets)`` gives the batch mean."""

    def __init__(self, name: str, fn: Callable):
        self.name, self.fn = name, fn

    def __call__(self, outputs, targets):
        return self.fn(outputs, targets)

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"

    # Metrics are static arguments of the compiled step: equal when they are the same.
    def __eq__(self, other):
        return isinstance(other, Metric) and (self.name, self.fn) == (other.name, other.fn)

    def __hash__(self):
        return hash((self.name, self.fn))


def _accuracy(outputs, targets):
    outputs, targets = znp.asarray(outputs), znp.asarray(targets)
    if np.issubdtype(np.dtype(targets.dtype), np.integer) and \
            targets.shape == outputs.shape[:-1]:
        return znp.mean((znp.argmax(outputs, axis=-1) == targets).astype(znp.float32))
    if outputs.shape == targets.shape:
        if outputs.ndim > 1 and outputs.shape[-1] > 1:  # one-hot / probability targets
            hits = znp.argmax(outputs, axis=-1) == znp.argmax(targets, axis=-1)
        else:  # binary: logits thresholded at 0 against 0/1 labels
            hits = (outputs > 0) == (targets > 0.5)
        return znp.mean(hits.astype(znp.float32))
    raise ShapeError(f"accuracy: outputs of shape {outputs.shape} and targets of shape "
                     f"{targets.shape} fit neither integer labels ([..., classes] vs [...]), "
                     "one-hot targets (equal shapes) nor binary logits")


def _top_k(k: int):
    def fn(outputs, targets):
        outputs, targets = znp.asarray(outputs), znp.asarray(targets)
        if not np.issubdtype(np.dtype(targets.dtype), np.integer):
            targets = znp.argmax(targets, axis=-1)
        if targets.shape != outputs.shape[:-1]:
            raise ShapeError(f"top_k_accuracy: labels of shape {targets.shape} do not fit "
                             f"outputs of shape {outputs.shape}")
        # Rank of the true class = how many classes score strictly higher (ties favour it).
        true = znp.take_along_axis(outputs, targets[..., None].astype(znp.int32), axis=-1)
        rank = znp.sum((outputs > true).astype(znp.int32), axis=-1)
        return znp.mean((rank < k).astype(znp.float32))
    return fn


accuracy = Metric("accuracy", _accuracy)
accuracy.__doc__ = """Fraction of correct predictions: argmax of the outputs against integer
labels or one-hot targets; binary logits (outputs shaped as targets, one class) are
thresholded at 0.

>>> import zerax.numpy as znp
>>> from zerax.train import metrics
>>> float(metrics.accuracy(znp.array([[0.1, 0.9], [0.8, 0.2]]), znp.array([1, 1])))
0.5
"""


def top_k_accuracy(k: int = 5) -> Metric:
    """Fraction of examples whose true class is among the ``k`` highest outputs.

    >>> import zerax.numpy as znp
    >>> from zerax.train import metrics
    >>> float(metrics.top_k_accuracy(2)(znp.array([[3.0, 2.0, 1.0]]), znp.array([1])))
    1.0
    """
    if type(k) is not int or k < 1:
        raise ZeraxValueError(f"top_k_accuracy: k must be a positive int, got {k!r}")
    return Metric(f"top_{k}_accuracy" if k != 5 else "top_k_accuracy", _top_k(k))


def _mse(outputs, targets):
    return znp.mean((znp.asarray(outputs) - znp.asarray(targets)) ** 2)


def _mae(outputs, targets):
    return znp.mean(znp.abs(znp.asarray(outputs) - znp.asarray(targets)))


mse = Metric("mse", _mse)
mae = Metric("mae", _mae)

_NAMES = {"accuracy": lambda: accuracy, "acc": lambda: accuracy,
          "top_k_accuracy": lambda: top_k_accuracy(5), "mse": lambda: mse, "mae": lambda: mae}


def get(metric) -> Metric:
    """A :class:`Metric` from a name, a Metric, or a function (named after it).

    >>> from zerax.train import metrics
    >>> metrics.get("accuracy").name, metrics.get("top_k_accuracy").name
    ('accuracy', 'top_k_accuracy')
    """
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        if metric in _NAMES:
            return _NAMES[metric]()
        if metric.startswith("top_") and metric.endswith("_accuracy") and \
                metric[4:-9].isdigit():
            return top_k_accuracy(int(metric[4:-9]))
        raise ZeraxValueError(f"unknown metric {metric!r}; use one of {sorted(_NAMES)}, "
                              "'top_<k>_accuracy', a train.metrics.Metric or a function "
                              "(outputs, targets) -> scalar")
    if callable(metric):
        return Metric(getattr(metric, "__name__", "metric"), metric)
    raise ZeraxValueError(f"a metric is a name or a function, got {type(metric).__name__}")
