"""`zerax.train.fit` and `zerax.train.evaluate`: the training loop.

A training step is one compiled program (`zerax.nn.filter_jit`): forward pass over the
batch (``vmap`` of a one-example model, or the model on the whole batch with
``batched=True``), loss, gradients (`zerax.nn.filter_value_and_grad`), optimiser update,
metrics.  The step function lives at module level and takes the optimiser, loss and
metrics as static arguments, so it is compiled once per model structure and batch shape
and reused across epochs and across calls of ``fit``.

Randomness is a pure function of the run: step ``s`` uses ``fold_in(key, s)``, and the
loader's order depends only on (seed, epoch); that is what makes a run resumed from a
checkpoint (model, optimiser state, loader position, step) bit-identical to one that
never stopped.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import zerax
import zerax.nn as nn
import zerax.random as zr
from .. import data as zdata
from .. import tree_util as tu
from ..errors import ZeraxTypeError, ZeraxValueError

from . import metrics as _metrics
from .callbacks import Callback, History, Run

__all__ = ["fit", "evaluate"]


class _Config:
    """The static part of a step: compared by identity of its functions.  ``dist`` is
    None, or (axis name, process count, this process's index) of a data-parallel run."""

    def __init__(self, optimizer, loss_fn, metrics, batched, stateful, axis_name, dist=None):
        self.items = (optimizer, loss_fn, tuple(metrics), bool(batched), bool(stateful),
                      axis_name, dist)
        self.optimizer, self.loss_fn, self.metrics = optimizer, loss_fn, tuple(metrics)
        self.batched, self.stateful, self.axis_name = bool(batched), bool(stateful), axis_name
        self.dist = dist

    def __eq__(self, other):
        return isinstance(other, _Config) and all(
            a is b or a == b for a, b in zip(self.items, other.items))

    def __hash__(self):
        return hash(tuple(id(x) if callable(x) else x for x in self.items[:2])
                    + self.items[2:])


def _forward(model, state, inputs, key, cfg):
    """Outputs of the model on a batch, and the new model state (None if stateless)."""
    kw = {} if key is None else {"key": key}
    if cfg.batched:
        if cfg.stateful:
            return model(inputs, state, **kw)
        return model(inputs, **kw), state
    n = tu.tree_leaves(inputs)[0].shape[0]
    if key is not None and cfg.dist is not None:
        # this process's examples are every count-th of the global batch, from its index:
        # they take the same keys as in one process reading the whole batch
        _, count, index = cfg.dist
        keys = zr.split(key, n * count)[index::count]
    elif key is not None:
        keys = zr.split(key, n)
    if key is None:
        if cfg.stateful:
            return zerax.vmap(lambda x, s: model(x, s), in_axes=(0, None),
                              out_axes=(0, None), axis_name=cfg.axis_name)(inputs, state)
        return zerax.vmap(lambda x: model(x))(inputs), state
    if cfg.stateful:
        return zerax.vmap(lambda x, s, k: model(x, s, key=k), in_axes=(0, None, 0),
                          out_axes=(0, None), axis_name=cfg.axis_name)(inputs, state, keys)
    return zerax.vmap(lambda x, k: model(x, key=k))(inputs, keys), state


def _apply_updates(model, updates):
    # Equinox's apply_updates: None updates (non-trainable leaves) leave the leaf alone;
    # each parameter keeps its dtype, as optax's apply_updates.
    return tu.tree_map(lambda u, p: p if u is None else (p + u).astype(p.dtype),
                       updates, model, is_leaf=lambda x: x is None)


def _split_batch(batch):
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ZeraxTypeError("fit/evaluate need batches of (inputs, targets), got a "
                             f"{type(batch).__name__}; pass step_fn= for other batch layouts")
    return batch[0], batch[1]


def _train_step_fn(model, opt_state, state, batch, key, step, cfg):
    inputs, targets = _split_batch(batch)
    if key is not None:
        key = zr.fold_in(key, step)

    def loss_of(m):
        outputs, new_state = _forward(m, state, inputs, key, cfg)
        return cfg.loss_fn(outputs, targets), (outputs, new_state)

    (loss, (outputs, new_state)), grads = nn.filter_value_and_grad(loss_of, has_aux=True)(model)
    logs = {"loss": loss}
    for m in cfg.metrics:
        logs[m.name] = m(outputs, targets)
    if cfg.dist is not None:   # every process holds an equal share of the global batch
        grads, logs, new_state = _pmean((grads, logs, new_state), cfg.dist[0])
    params = nn.filter(model, nn.is_inexact_array)
    updates, opt_state = cfg.optimizer.update(grads, opt_state, params)
    model = _apply_updates(model, updates)
    return model, opt_state, new_state, logs


def _pmean(tree, axis_name):
    """The mean over the processes of every floating-point leaf (others kept), all in
    one collective (one round of MPI calls per step)."""
    leaves, treedef = tu.tree_flatten(tree)
    at = [k for k, v in enumerate(leaves) if nn.is_inexact_array(v)]
    for k, mean in zip(at, zerax.lax.pmean([leaves[k] for k in at], axis_name)):
        leaves[k] = mean
    return tu.tree_unflatten(treedef, leaves)


def _eval_step_fn(model, state, batch, cfg):
    inputs, targets = _split_batch(batch)
    outputs, _ = _forward(model, state, inputs, None, cfg)
    logs = {} if cfg.loss_fn is None else {"loss": cfg.loss_fn(outputs, targets)}
    for m in cfg.metrics:
        logs[m.name] = m(outputs, targets)
    if cfg.dist is not None:
        logs = _pmean(logs, cfg.dist[0])
    return logs


# Compiled once per model structure, configuration and batch shape (filter_jit's cache).
_train_step = nn.filter_jit(_train_step_fn)
_eval_step = nn.filter_jit(_eval_step_fn)


def _batch_size(batch) -> int:
    leaves = tu.tree_leaves(batch)
    if not leaves or not getattr(leaves[0], "shape", ()):
        return 1
    return int(leaves[0].shape[0])


class _Mean:
    """Batch-size-weighted means of per-batch logs over an epoch."""

    def __init__(self, sums=None, count=0):
        self.sums, self.count = dict(sums or {}), count

    def add(self, logs: dict, n: int) -> None:
        for k, v in logs.items():
            self.sums[k] = self.sums.get(k, 0.0) + float(v) * n
        self.count += n

    def result(self, prefix: str = "") -> dict:
        return {prefix + k: v / max(self.count, 1) for k, v in self.sums.items()}


def _as_loader(data, name: str):
    if data is None:
        return None
    if isinstance(data, tuple) and len(data) == 2 and all(
            hasattr(x, "shape") for x in tu.tree_leaves(data)):
        # (inputs, targets) arrays: batches of 256
        return zdata.DataLoader(zdata.ArrayDataset(*data), batch_size=256, prefetch=0)
    if not isinstance(data, Iterable):
        raise ZeraxTypeError(f"{name} must be a DataLoader, an iterable of (inputs, targets) "
                             f"batches or an (inputs, targets) tuple of arrays, got "
                             f"{type(data).__name__}")
    return data


def evaluate(model, loss_fn: Callable | None, data, metrics: Sequence = (), *,
             state=None, batched: bool = False, axis_name: Any = "batch",
             jit: bool = True, distributed: bool | str = False) -> dict:
    """Mean loss and metrics of ``model`` over ``data`` (batches of (inputs, targets)),
    in inference mode (Dropout off, BatchNorm on its running statistics).  With
    ``distributed`` (as in `fit`), the processes share a DataLoader's batches and
    every process returns the figures of the whole data.

    >>> import numpy as np, zerax.numpy as znp
    >>> from zerax import train, data
    >>> model = lambda x: znp.stack([x[0], -x[0]])         # any callable pytree
    >>> ds = data.ArrayDataset(np.array([[1.0], [-1.0]]), np.array([0, 0]))
    >>> train.evaluate(model, None, data.DataLoader(ds, 2), ["accuracy"])
    {'accuracy': 0.5}
    """
    loader, dist = _shard_for(_as_loader(data, "data"), _data_parallel(distributed))
    cfg = _Config(None, loss_fn, [_metrics.get(m) for m in metrics], batched,
                  state is not None, axis_name, dist)
    return _evaluate(model, state, loader, cfg, jit)


def _progress_bar(enabled: bool, total, desc: str):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="batch", leave=True, dynamic_ncols=True,
                file=sys.stderr)


def _fmt(logs: dict) -> dict:
    return {k: f"{v:.4g}" for k, v in logs.items()}


def fit(model, optimizer, loss_fn: Callable | None, train_data, *, epochs: int,
        val_data=None, metrics: Sequence = (), callbacks: Sequence[Callback] = (),
        progress: bool = True, key=None, batched: bool = False, state=None,
        opt_state=None, step_fn: Callable | None = None, jit: bool = True,
        initial_epoch: int = 0, resume=None, axis_name: Any = "batch",
        distributed: bool | str = False):
    """Train ``model`` for ``epochs`` epochs; returns ``(model, opt_state, history)``.

    ``train_data`` gives batches ``(inputs, targets)`` (a :class:`zerax.data.DataLoader`,
    whose epoch ``e`` is set for epoch ``e``).  The loss is ``loss_fn(outputs, targets)``
    with ``outputs = vmap(model)(inputs)`` (``batched=True``: ``model(inputs)``).
    ``optimizer`` is an optax-style ``GradientTransformation`` (``zerax.optim``); it
    updates the floating-point arrays of the model.  ``metrics`` are names
    (``"accuracy"``, ``"top_k_accuracy"``, ``"mse"``...) or functions; each epoch logs
    ``loss`` and the metrics, and ``val_loss``... with ``val_data``.

    ``key`` (a `zerax.random` key) is passed to the model as ``key=`` (per example under
    vmap), step ``s`` using ``fold_in(key, s)``: Dropout and other random layers.  With
    ``state`` (a `zerax.nn.State`), the model is called ``model(x, state)`` giving
    ``(y, state)`` under ``vmap(..., axis_name=axis_name)`` (BatchNorm), and the returned
    model is the pair ``(model, state)``.  ``step_fn(model, opt_state, batch, key) ->
    (model, opt_state, logs)`` replaces the default step (GANs, custom state).  Steps are
    compiled with ``filter_jit``; ``jit=False`` runs them op by op (debugging, or tiny
    models where compiling costs more than it saves).  ``resume`` (a
    :class:`zerax.io.CheckpointManager` written by :class:`Checkpoint`) continues from its
    latest step, bit-identically to the run that never stopped.  A tqdm bar per epoch
    shows the running loss and metrics when ``progress`` is set and stderr is a terminal.

    ``distributed=True`` trains data-parallel on the processes of a `zerax.distributed`
    job (``mpiexec -n 4 python train.py``; the axis name is ``"data"``, or the string
    given): a DataLoader's ``batch_size`` is then the global batch, of which each
    process reads every ``count``-th example (``DataLoader.shard(..., split_batch=True)``),
    the gradients, logs and model state are averaged over the processes after each
    step (``lax.pmean``), random keys are those of the whole batch, so the run gives
    the parameters of one process training on the global batches.  Only process 0
    shows progress and writes checkpoints; ``resume`` reads them on any number of
    processes (with the same global batch, the run continues as if uninterrupted).

    >>> import numpy as np, zerax.nn as nn, zerax.optim as optim, zerax.random as zr
    >>> from zerax import data, train
    >>> x = np.linspace(-1, 1, 64, dtype=np.float32)[:, None]
    >>> loader = data.DataLoader(data.ArrayDataset(x, 3 * x), batch_size=16)
    >>> model, opt_state, history = train.fit(nn.Linear(1, 1, key=zr.key(0)), optim.sgd(0.5),
    ...                                       train.losses.mse, loader, epochs=20,
    ...                                       progress=False)
    >>> round(float(model.weight[0, 0]), 3), history.history["loss"][-1] < 1e-6
    (3.0, True)
    """
    if type(epochs) is not int or epochs < 0:
        raise ZeraxValueError(f"epochs must be a non-negative int, got {epochs!r}")
    if step_fn is None and (not hasattr(optimizer, "init") or not hasattr(optimizer, "update")):
        raise ZeraxTypeError("fit needs an optimiser with init/update (an optax-style "
                             f"GradientTransformation such as zerax.optim.adam(1e-3)), got "
                             f"{type(optimizer).__name__}")
    if step_fn is None and loss_fn is None:
        raise ZeraxValueError("fit needs a loss_fn (or a step_fn that computes its own)")
    loader = _as_loader(train_data, "train_data")
    val_loader = _as_loader(val_data, "val_data")
    dist = _data_parallel(distributed)
    if dist is not None and isinstance(loader, zdata.DataLoader) and loader.shard_count == 1:
        loader = loader.shard(dist[2], dist[1], split_batch=True)
    val_loader, val_dist = _shard_for(val_loader, dist)
    metric_objs = [_metrics.get(m) for m in metrics]
    cfg = _Config(optimizer, loss_fn, metric_objs, batched, state is not None, axis_name,
                  dist)
    eval_cfg = _Config(None, loss_fn, metric_objs, batched, state is not None, axis_name,
                       val_dist)
    if opt_state is None and step_fn is None:
        opt_state = optimizer.init(nn.filter(model, nn.is_inexact_array))
    train_step = _over_processes(_train_step if jit else _train_step_fn, dist)
    user_step = None
    if step_fn is not None:
        user_step = _over_processes(nn.filter_jit(step_fn) if jit else step_fn, dist)
    count = 1 if dist is None else dist[1]   # (logs are weighted by the global batch)

    callbacks = list(callbacks)
    history = next((c for c in callbacks if isinstance(c, History)), None)
    if history is None:
        history = History()
        callbacks.append(history)
    run = Run(model=model, opt_state=opt_state, state=state, key=key, train_data=loader,
              epochs=epochs, step=0, epoch=initial_epoch, history=history)
    run.save_to = lambda manager, logs: _save_run(run, manager, logs) \
        if dist is None or dist[2] == 0 else None   # process 0 writes checkpoints
    for c in callbacks:
        c.set_run(run)

    start_epoch, start_batch, partial = initial_epoch, 0, _Mean()
    if resume is not None and resume.latest_step() is not None:
        start_epoch, start_batch, partial = _restore_run(run, resume)
    show = bool(progress) and sys.stderr.isatty() and (dist is None or dist[2] == 0)

    for c in callbacks:
        c.on_train_begin({})
    for epoch in range(start_epoch, epochs):
        if run.stop_training:
            break
        run.epoch = epoch
        if hasattr(loader, "set_epoch"):
            if start_batch and epoch == start_epoch:
                loader.restore({"epoch": epoch, "batch": start_batch})
            else:
                loader.set_epoch(epoch)
        mean = partial if epoch == start_epoch else _Mean()
        run.partial = mean
        for c in callbacks:
            c.on_epoch_begin(epoch, {})
        total = len(loader) if hasattr(loader, "__len__") else None
        bar = _progress_bar(show, total, f"Epoch {epoch + 1}/{epochs}")
        if bar is not None and epoch == start_epoch and start_batch:
            bar.update(start_batch)
        try:
            for i, batch in enumerate(loader):
                if user_step is not None:
                    step_key = None if run.key is None else zr.fold_in(run.key, run.step)
                    run.model, run.opt_state, logs = user_step(run.model, run.opt_state, batch,
                                                               step_key)
                else:
                    step_arr = None if run.key is None else np.int32(run.step)
                    run.model, run.opt_state, run.state, logs = train_step(
                        run.model, run.opt_state, run.state, batch, run.key, step_arr, cfg)
                run.step += 1
                mean.add(logs, _batch_size(batch) * count)
                run.batch_in_epoch = loader.state()["batch"] if hasattr(loader, "state") \
                    else i + 1
                if bar is not None:
                    bar.update(1)
                    if i % 10 == 0 or (total is not None and bar.n >= total):
                        bar.set_postfix(_fmt(mean.result()), refresh=False)
                for c in callbacks:
                    c.on_batch_end(run.step, logs)
            epoch_logs = mean.result()
            if val_loader is not None:
                epoch_logs.update({"val_" + k: v for k, v in _evaluate(
                    run.model, run.state, val_loader, eval_cfg, jit).items()})
            if bar is not None:
                bar.set_postfix(_fmt(epoch_logs), refresh=True)
        finally:
            if bar is not None:
                bar.close()
        run.partial = _Mean()
        run.batch_in_epoch = 0
        for c in callbacks:
            c.on_epoch_end(epoch, epoch_logs)
    for c in callbacks:
        c.on_train_end({})
    out_model = run.model if state is None else (run.model, run.state)
    return out_model, run.opt_state, history


def _evaluate(model, state, loader, cfg, jit: bool) -> dict:
    model = nn.inference_mode(model)
    step = _over_processes(_eval_step if jit else _eval_step_fn, cfg.dist)
    count = 1 if cfg.dist is None else cfg.dist[1]
    mean = _Mean()
    for batch in loader:
        mean.add(step(model, state, batch, cfg), _batch_size(batch) * count)
    if mean.count == 0:
        raise ZeraxValueError("evaluation data gave no batches")
    return mean.result()


# ---------------------------------------------------------------- data parallelism


def _data_parallel(distributed):
    """(axis name, process count, this process's index) of a data-parallel run, or None."""
    if distributed is False or distributed is None:
        return None
    if distributed is not True and not isinstance(distributed, str):
        raise ZeraxTypeError(f"distributed must be a bool or an axis name, got "
                             f"{distributed!r}")
    zerax.distributed.initialize()
    return ("data" if distributed is True else distributed, zerax.process_count(),
            zerax.process_index())


def _shard_for(loader, dist):
    """This process's part of a validation DataLoader whose batch is the global batch,
    and the data-parallel setting its steps use (None: every process reads all of
    ``loader``, a loader whose batch the processes do not divide, or another iterable)."""
    if dist is None or not isinstance(loader, zdata.DataLoader):
        return loader, None
    if loader.shard_count != 1:   # the user's own shards
        return loader, dist
    if loader.batch_size % dist[1]:
        return loader, None
    return loader.shard(dist[2], dist[1], split_batch=True), dist


def _over_processes(step, dist):
    """``step`` with the processes' axis bound (its pmeans span the processes)."""
    return step if dist is None else zerax.distributed.spmd(step, axis_name=dist[0])


# ---------------------------------------------------------------- checkpoints of a run


def _run_items(run: Run) -> dict:
    loader_state = run.train_data.state() if hasattr(run.train_data, "state") else \
        {"epoch": run.epoch, "batch": run.batch_in_epoch}
    return {"model": run.model, "opt_state": run.opt_state, "state": run.state,
            "key": run.key, "step": run.step, "loader": dict(loader_state),
            "history": json.dumps(run.history.state()),
            "partial": json.dumps({"sums": getattr(run.partial, "sums", {}),
                                   "count": getattr(run.partial, "count", 0)})}


def _save_run(run: Run, manager, logs) -> None:
    manager.save(run.step, _run_items(run), metrics=None if logs is None else dict(logs))


def _restore_run(run: Run, manager):
    like = _run_items(run)
    like["step"], like["loader"] = 0, {"epoch": 0, "batch": 0}
    items = manager.restore(like=like)
    run.model, run.opt_state, run.state = items["model"], items["opt_state"], items["state"]
    if items["key"] is not None:
        run.key = items["key"]
    run.step = int(items["step"])
    run.history.restore(json.loads(items["history"]))
    part = json.loads(items["partial"])
    epoch, batch = int(items["loader"]["epoch"]), int(items["loader"]["batch"])
    if batch == 0:  # saved at the end of an epoch: the partial sums belong to no epoch
        return epoch, 0, _Mean()
    return epoch, batch, _Mean(part["sums"], part["count"])
