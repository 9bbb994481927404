"""`zerax.io.CheckpointManager`: numbered checkpoints of a training run in one directory.

Each step is one safetensors file ``step_<n>.safetensors`` written by :func:`zerax.io.save`
(atomically, and durably unless ``durable=False``), so a crash mid-save never leaves a
damaged checkpoint under a step's name; the manager keeps the newest ``max_to_keep`` (or,
with ``best_fn``, the best ones by a metric saved beside the step, plus the newest so that
a run can always resume).  A save that fails removes its temporary file; the temporary of
a process killed mid-save is removed by the next manager opened on the directory (once no
process holds it).
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Callable

from ..errors import CheckpointError

from . import _files  # save/load/load_metadata, which zerax.io re-exports
from ._safetensors import parse_json, remove_stale_temporaries

_NAME = re.compile(r"^step_(\d{1,18})\.safetensors$")


class CheckpointManager:
    """Save and restore numbered checkpoints (any pytree per step) in ``directory``.

    ``max_to_keep=None`` keeps every step.  With ``best_fn`` (a function of the metrics dict
    passed to :meth:`save`, giving a number), the ``max_to_keep`` steps with the highest
    value (``best_mode="max"``; ``"min"`` for a loss) are kept, together with the newest.

    Saves are atomic and, by default, durable (``durable=True``: each file and the
    directory are fsynced before older checkpoints are deleted, so a power loss cannot
    leave the run with none); ``durable=False`` skips the fsyncs (scratch runs, fast
    local disks where a lost checkpoint is cheap to redo).  A save that fails (a full
    disk, an exception) leaves the directory as it was: the previous steps, no temporary
    file.  A process killed mid-save cannot clean up; opening a manager on the directory
    deletes such leftovers (temporaries of ``step_<n>`` files that no live process holds
    and that were last written over a minute ago; orbax's manager does the same when it
    starts, with ``cleanup_tmp_directories=True``).

    >>> import tempfile, zerax.numpy as znp
    >>> from zerax import io
    >>> mgr = io.CheckpointManager(tempfile.mkdtemp(), max_to_keep=2)
    >>> for step in range(3):
    ...     mgr.save(step, {"w": znp.full(2, float(step))})
    >>> mgr.all_steps(), mgr.latest_step()
    ([1, 2], 2)
    >>> mgr.restore(like={"w": znp.zeros(2)})["w"]
    Array([2., 2.], dtype=float64)
    """

    def __init__(self, directory: str | os.PathLike, max_to_keep: int | None = None,
                 best_fn: Callable[[dict], float] | None = None, best_mode: str = "max",
                 *, durable: bool = True):
        if max_to_keep is not None and (type(max_to_keep) is not int or max_to_keep < 1):
            raise CheckpointError(f"max_to_keep must be None or a positive int, got "
                                  f"{max_to_keep!r}")
        if best_mode not in ("max", "min"):
            raise CheckpointError(f"best_mode must be 'max' or 'min', got {best_mode!r}")
        self.directory = os.fspath(directory)
        self.max_to_keep = max_to_keep
        self.best_fn = best_fn
        self.best_mode = best_mode
        self.durable = bool(durable)
        os.makedirs(self.directory, exist_ok=True)
        remove_stale_temporaries(self.directory, lambda name: _NAME.match(name) is not None)

    def path(self, step: int) -> str:
        """The file of ``step``."""
        return os.path.join(self.directory, f"step_{int(step)}.safetensors")

    def all_steps(self) -> list[int]:
        """The saved steps, in increasing order."""
        steps = []
        for name in os.listdir(self.directory):
            m = _NAME.match(name)
            if m:
                steps.append(int(m.group(1)))
        return sorted(steps)

    def latest_step(self) -> int | None:
        """The newest saved step, or None if there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def save(self, step: int, items: Any, metrics: dict | None = None) -> None:
        """Save ``items`` (any pytree: model, optimiser state, loader state, key...) as
        ``step``, with optional ``metrics`` (numbers, used by ``best_fn``); then delete the
        checkpoints that are no longer kept (:meth:`path` gives the file)."""
        if type(step) is not int or step < 0:
            raise CheckpointError(f"step must be a non-negative int, got {step!r}")
        meta = {}
        if metrics is not None:
            try:
                meta["zerax.metrics"] = json.dumps(
                    {str(k): float(v) for k, v in metrics.items()})
            except (TypeError, ValueError, AttributeError):
                raise CheckpointError("metrics must be a dict of names to numbers, got "
                                      f"{metrics!r:.200}") from None
        path = self.path(step)
        _files.save(path, items, metadata=meta, durable=self.durable)
        self._prune()

    def metrics(self, step: int) -> dict | None:
        """The metrics saved with ``step`` (None if none were given)."""
        raw = _files.load_metadata(self.path(step)).get("zerax.metrics")
        if raw is None:
            return None
        value = parse_json(raw, f"the metrics of step {step}")
        if not isinstance(value, dict):
            raise CheckpointError(f"the metrics of step {step} are malformed")
        return value

    def best_step(self) -> int | None:
        """The kept step with the best ``best_fn`` value (None without best_fn or metrics)."""
        if self.best_fn is None:
            return None
        scored = self._scored()
        return scored[0][1] if scored else None

    def _scored(self) -> list[tuple[float, int]]:
        scored = []
        for s in self.all_steps():
            m = self.metrics(s)
            if m is not None:
                v = float(self.best_fn(m))
                if not math.isnan(v):
                    scored.append((-v if self.best_mode == "max" else v, s))
        return sorted(scored)

    def _prune(self) -> None:
        if self.max_to_keep is None:
            return
        steps = self.all_steps()
        if self.best_fn is None:
            keep = set(steps[-self.max_to_keep:])
        else:
            # The best by metric; steps without metrics are kept (their worth is unknown)
            # and so is the newest, from which a run resumes.
            scored = self._scored()
            keep = {s for _, s in scored[:self.max_to_keep]}
            keep |= set(steps) - {s for _, s in scored}
            if steps:
                keep.add(steps[-1])
        for s in steps:
            if s not in keep:
                try:
                    os.remove(self.path(s))
                except FileNotFoundError:
                    pass
                self._remove_parts(s)

    def _remove_parts(self, step: int) -> None:
        """The part files of a step saved from arrays split over processes."""
        prefix = os.path.basename(self.path(step)) + ".part"
        for name in os.listdir(self.directory):
            if name.startswith(prefix) and name[len(prefix):].isdigit():
                try:
                    os.remove(os.path.join(self.directory, name))
                except FileNotFoundError:
                    pass

    def restore(self, step: int | None = None, like: Any = None, *, shardings=None) -> Any:
        """Load ``step`` (the latest when None) into a tree like ``like``, split over a
        mesh by ``shardings`` if given (see :func:`zerax.io.load`)."""
        if step is None:
            step = self.latest_step()
            if step is None:
                raise CheckpointError(f"no checkpoint to restore in {self.directory!r}")
        if not os.path.exists(self.path(step)):
            raise CheckpointError(f"no checkpoint for step {step} in {self.directory!r} "
                                  f"(saved steps: {self.all_steps()})")
        return _files.load(self.path(step), like=like, shardings=shardings)
