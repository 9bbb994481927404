"""`zerax.train`: the training loop (`fit`, `evaluate`), losses, metrics, callbacks
(`History` with plots and CSV, `EarlyStopping`, `Checkpoint`, `EMA`) and a tqdm progress
bar.

A model is any callable pytree acting on one example (a `zerax.nn` module) or, with
``batched=True``, on a batch; an optimiser is an optax-style ``GradientTransformation``
(`zerax.optim`).  See :func:`fit`.
"""

from . import losses, metrics
from .callbacks import EMA, Callback, Checkpoint, EarlyStopping, History, Run
from .loop import evaluate, fit

__all__ = ["EMA", "Callback", "Checkpoint", "EarlyStopping", "History", "Run", "evaluate",
           "fit", "losses", "metrics"]
