"""`zerax.train` callbacks: hooks called by :func:`zerax.train.fit` (`Callback`), the
per-epoch record (`History`, with ``plot`` and ``to_csv``), `EarlyStopping`,
`Checkpoint` (through a :class:`zerax.io.CheckpointManager`) and `EMA` (a moving average
of the parameters).

A callback sees the run through ``self.run`` (a :class:`Run`: the current model,
optimiser state, loader, key, epoch and step) and may set ``run.stop_training``.
"""

from __future__ import annotations

import csv
import math
import os
from typing import Any

import numpy as np

import zerax
import zerax.nn as nn
from .. import tree_util as tu
from ..errors import MissingDependencyError, ZeraxValueError

__all__ = ["Callback", "History", "EarlyStopping", "Checkpoint", "EMA", "Run"]


class Run:
    """The state of a :func:`zerax.train.fit` run, as callbacks see it."""

    def __init__(self, **fields: Any):
        self.model = self.opt_state = self.state = self.key = self.train_data = None
        self.epoch = self.step = 0
        self.epochs = 0
        self.batch_in_epoch = 0
        self.stop_training = False
        self.partial: dict = {}
        self.__dict__.update(fields)


class Callback:
    """Base class: override any of the hooks (each gets the logs dict of numbers)."""

    run: Run | None = None

    def set_run(self, run: Run) -> None:
        self.run = run

    def on_train_begin(self, logs: dict) -> None: ...

    def on_epoch_begin(self, epoch: int, logs: dict) -> None: ...

    def on_batch_end(self, step: int, logs: dict) -> None: ...

    def on_epoch_end(self, epoch: int, logs: dict) -> None: ...

    def on_train_end(self, logs: dict) -> None: ...


class History(Callback):
    """Per-epoch values of the loss and metrics, train and validation (``val_`` names).

    ``history.history`` maps each name to its list of per-epoch values, ``history.epoch``
    lists the epochs.  ``plot(path=None)`` draws one panel per quantity (train against
    validation); ``to_csv(path)`` writes one row per epoch.

    >>> from zerax.train import History
    >>> h = History()
    >>> h.on_epoch_end(0, {"loss": 1.0, "val_loss": 1.5})
    >>> h.on_epoch_end(1, {"loss": 0.5, "val_loss": 0.9})
    >>> h.history["val_loss"], h.epoch
    ([1.5, 0.9], [0, 1])
    """

    def __init__(self):
        self.history: dict[str, list[float]] = {}
        self.epoch: list[int] = []

    def on_epoch_end(self, epoch: int, logs: dict) -> None:
        self.epoch.append(epoch)
        for k, v in logs.items():
            column = self.history.setdefault(k, [math.nan] * (len(self.epoch) - 1))
            column.append(float(v))
        for k, column in self.history.items():
            if len(column) < len(self.epoch):
                column.append(math.nan)

    def __getitem__(self, name: str) -> list[float]:
        return self.history[name]

    def __repr__(self) -> str:
        last = {k: round(v[-1], 4) for k, v in self.history.items() if v}
        return f"History({len(self.epoch)} epochs, last={last})"

    def state(self) -> dict:
        """The record as a pytree of Python numbers (saved in checkpoints)."""
        return {"epoch": list(self.epoch), "history": {k: list(v)
                                                       for k, v in self.history.items()}}

    def restore(self, state: dict) -> None:
        self.epoch = [int(e) for e in state["epoch"]]
        self.history = {k: [float(x) for x in v] for k, v in state["history"].items()}

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write ``epoch`` and every quantity, one row per epoch.

        >>> import os, tempfile
        >>> from zerax.train import History
        >>> h = History(); h.on_epoch_end(0, {"loss": 0.25})
        >>> path = os.path.join(tempfile.mkdtemp(), "h.csv"); h.to_csv(path)
        >>> open(path).read().split()
        ['epoch,loss', '0,0.25']
        """
        names = list(self.history)
        with open(os.fspath(path), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["epoch"] + names)
            for i, e in enumerate(self.epoch):
                w.writerow([e] + [repr(self.history[n][i]) for n in names])

    def plot(self, path: str | os.PathLike | None = None):
        """Draw loss and metrics per epoch (train solid, validation dashed), one panel per
        quantity; save to ``path`` if given.  Returns the matplotlib Figure.

        Uses matplotlib's Agg backend when no display backend is set, so it works
        headless (``pip install matplotlib``)."""
        try:
            import matplotlib
            if path is not None and "matplotlib.pyplot" not in __import__("sys").modules:
                matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise MissingDependencyError("History.plot needs matplotlib: "
                                         "`pip install matplotlib`") from None
        bases = [k for k in self.history if not k.startswith("val_")]
        bases += [k[4:] for k in self.history if k.startswith("val_") and k[4:] not in bases]
        fig, axes = plt.subplots(1, max(len(bases), 1), figsize=(4.5 * max(len(bases), 1), 3.4),
                                 squeeze=False)
        epochs = [e + 1 for e in self.epoch]
        for ax, name in zip(axes[0], bases):
            if name in self.history:
                ax.plot(epochs, self.history[name], "o-", label="train", markersize=3)
            if "val_" + name in self.history:
                ax.plot(epochs, self.history["val_" + name], "s--", label="validation",
                        markersize=3)
            ax.set_title(name)
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
            ax.legend()
        fig.tight_layout()
        if path is not None:
            fig.savefig(os.fspath(path), dpi=110)
            plt.close(fig)
        return fig


def _better(mode: str, monitor: str):
    if mode == "auto":
        mode = "max" if any(s in monitor for s in ("acc", "auc", "precision", "recall")) \
            else "min"
    if mode not in ("min", "max"):
        raise ZeraxValueError(f"mode must be 'min', 'max' or 'auto', got {mode!r}")
    return mode


def _monitored(logs: dict, monitor: str, who: str) -> float:
    if monitor not in logs:
        raise ZeraxValueError(f"{who} monitors {monitor!r}, which fit does not log "
                              f"(it logs {sorted(logs)}); pass val_data= to fit for 'val_' "
                              "quantities, or choose another monitor=")
    return float(logs[monitor])


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs (Keras 3's semantics, including its stopping rule
    ``wait >= patience``; ``mode="auto"`` maximises accuracies and minimises the rest).
    ``restore_best_weights=True`` returns the best epoch's model and optimiser state
    instead of the last.

    >>> from zerax.train import EarlyStopping, Run
    >>> es = EarlyStopping(monitor="val_loss", patience=1); es.set_run(Run())
    >>> es.on_train_begin({})
    >>> for epoch, v in enumerate([1.0, 0.8, 0.9]):
    ...     es.on_epoch_end(epoch, {"val_loss": v})
    >>> es.run.stop_training, es.stopped_epoch, es.best
    (True, 2, 0.8)
    """

    def __init__(self, monitor: str = "val_loss", patience: int = 0, mode: str = "auto",
                 min_delta: float = 0.0, baseline: float | None = None,
                 restore_best_weights: bool = False):
        if type(patience) is not int or patience < 0:
            raise ZeraxValueError(f"patience must be a non-negative int, got {patience!r}")
        self.monitor, self.patience = monitor, patience
        self.mode = _better(mode, monitor)
        self.min_delta, self.baseline = abs(float(min_delta)), baseline
        self.restore_best_weights = restore_best_weights
        self.on_train_begin({})

    def on_train_begin(self, logs: dict) -> None:
        self.wait = 0
        self.stopped_epoch = None
        self.best = math.inf if self.mode == "min" else -math.inf
        self.best_epoch = None
        self.best_weights = None

    def _improved(self, value: float, reference: float) -> bool:
        if self.mode == "min":
            return value < reference - self.min_delta
        return value > reference + self.min_delta

    def on_epoch_end(self, epoch: int, logs: dict) -> None:
        # Keras 3's EarlyStopping, step for step.
        value = _monitored(logs, self.monitor, "EarlyStopping")
        self.wait += 1
        if self._improved(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights and self.run is not None:
                self.best_weights = (self.run.model, self.run.opt_state, self.run.state)
            # Only restart the wait if both the baseline and the previous best are beaten.
            if self.baseline is None or self._improved(value, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            if self.run is not None:
                self.run.stop_training = True

    def on_train_end(self, logs: dict) -> None:
        if self.restore_best_weights and self.best_weights is not None and self.run is not None:
            self.run.model, self.run.opt_state, self.run.state = self.best_weights


class Checkpoint(Callback):
    """Save the run (model, optimiser state, model state, loader position, key, history)
    through ``manager`` (a :class:`zerax.io.CheckpointManager`) at the end of each epoch,
    or every ``every_n_steps`` steps; the step number is the global training step.
    With ``monitor`` and ``save_best_only=True`` only improvements are saved.  The epoch's
    logs go with each save, so the manager's ``best_fn`` can rank them.

    Resume with ``train.fit(..., resume=manager)``: training continues bit-identically.
    """

    def __init__(self, manager, monitor: str | None = None, mode: str = "auto",
                 save_best_only: bool = False, every_n_steps: int | None = None):
        if not hasattr(manager, "save") or not hasattr(manager, "restore"):
            raise ZeraxValueError("Checkpoint needs a zerax.io.CheckpointManager, got "
                                  f"{type(manager).__name__}")
        if save_best_only and monitor is None:
            raise ZeraxValueError("Checkpoint(save_best_only=True) needs monitor=")
        if every_n_steps is not None and (type(every_n_steps) is not int or every_n_steps < 1):
            raise ZeraxValueError(f"every_n_steps must be a positive int, got {every_n_steps!r}")
        self.manager, self.monitor = manager, monitor
        self.mode = _better(mode, monitor) if monitor else "min"
        self.save_best_only, self.every_n_steps = save_best_only, every_n_steps
        self.best = math.inf if self.mode == "min" else -math.inf

    def on_batch_end(self, step: int, logs: dict) -> None:
        if self.every_n_steps and step % self.every_n_steps == 0 and \
                not self.save_best_only and self.run.batch_in_epoch != 0:
            # Mid-epoch only: the end of an epoch is saved by on_epoch_end with its logs.
            self.run.save_to(self.manager, None)

    def on_epoch_end(self, epoch: int, logs: dict) -> None:
        if self.monitor is not None:
            value = _monitored(logs, self.monitor, "Checkpoint")
            improved = value < self.best if self.mode == "min" else value > self.best
            if improved:
                self.best = value
            if self.save_best_only and not improved:
                return
        self.run.save_to(self.manager, logs)


class EMA(Callback):
    """An exponential moving average of the model's floating-point parameters over the
    training steps, which replaces them when training ends (Polyak averaging; Keras'
    ``use_ema=True`` with its swap at the end of ``fit``, timm's ``ModelEmaV2``).

    After each step ``every``-th step, ``average = decay * average + (1 - decay) *
    params`` (per array, in its dtype, in NumPy); the average starts as the parameters
    after the first step.  It smooths the noise of the last steps out of the model: the
    average of the last ``~1 / (1 - decay)`` steps (times ``every``) generalises a little
    better and varies less from seed to seed than the last iterate.  Per-epoch training
    and validation logs are those of the model being trained; the averaged model is what
    ``fit`` returns (``swap=False``: the last iterate, the average in
    :meth:`averaged_model`).  BatchNorm's statistics (``state``) are not averaged.  The
    average is not saved by :class:`Checkpoint`: a resumed run restarts it.

    >>> import numpy as np, zerax.nn as nn, zerax.optim as optim, zerax.random as zr
    >>> from zerax import data, train
    >>> x = np.linspace(-1, 1, 64, dtype=np.float32)[:, None]
    >>> loader = data.DataLoader(data.ArrayDataset(x, 3 * x), batch_size=16)
    >>> ema = train.EMA(decay=0.9)
    >>> model, _, _ = train.fit(nn.Linear(1, 1, key=zr.key(0)), optim.sgd(0.5),
    ...                         train.losses.mse, loader, epochs=20, callbacks=[ema],
    ...                         progress=False, jit=False)
    >>> round(float(model.weight[0, 0]), 2), ema.updates   # the average of the last steps
    (3.0, 80)
    """

    def __init__(self, decay: float = 0.999, every: int = 1, swap: bool = True):
        decay = float(decay)
        if not 0.0 <= decay < 1.0:
            raise ZeraxValueError(f"EMA decay must be in [0, 1), got {decay!r}")
        if type(every) is not int or every < 1:
            raise ZeraxValueError(f"EMA every must be a positive int, got {every!r}")
        self.decay, self.every, self.swap = decay, every, bool(swap)
        self.average: list | None = None
        self.updates = 0

    def on_train_begin(self, logs: dict) -> None:
        self.average, self.updates = None, 0

    def _params(self):
        return [leaf if nn.is_inexact_array(leaf) else None
                for leaf in tu.tree_leaves(self.run.model)]

    def on_batch_end(self, step: int, logs: dict) -> None:
        if step % self.every:
            return
        params = self._params()
        if self.average is None:
            self.average = [None if p is None else np.array(p, copy=True) for p in params]
        else:
            if len(params) != len(self.average):
                raise ZeraxValueError("EMA: the model's structure changed during training")
            a = self.decay
            for acc, p in zip(self.average, params):
                if acc is not None:
                    acc *= a  # in place: no new arrays per step
                    acc += (1 - a) * np.asarray(p)
        self.updates += 1

    def averaged_model(self):
        """The current model with its floating-point parameters replaced by their average
        (the model itself before the first step)."""
        if self.average is None:
            return self.run.model
        leaves, treedef = tu.tree_flatten(self.run.model)
        return tu.tree_unflatten(treedef, [
            leaf if acc is None else zerax.Array(acc.astype(np.asarray(leaf).dtype, copy=False))
            for leaf, acc in zip(leaves, self.average)])

    def on_train_end(self, logs: dict) -> None:
        if self.swap and self.average is not None:
            self.run.model = self.averaged_model()
