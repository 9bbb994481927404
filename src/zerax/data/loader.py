"""`zerax.data.DataLoader`: reproducible, resumable, shardable batches with prefetching.

The example order of an epoch is a pure function of ``(seed, epoch)``: NumPy's PCG64
generator seeded with ``SeedSequence([seed, epoch])`` permutes the indices, so two runs,
two processes, or a run and its resumed copy see exactly the same batches.  The loader
keeps a cursor (epoch, next batch) that advances as the caller consumes batches;
``state()``/``restore()`` save and set it.  A background thread prepares up to
``prefetch`` batches ahead in a bounded queue; it stops when iteration ends (also on
``break``) and an exception raised while preparing a batch is re-raised in the caller.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator

import numpy as np

import zerax
from .. import tree_util as tu
from ..errors import DatasetError

from .dataset import _gather, stack

__all__ = ["DataLoader"]


def _to_zerax(x):
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        arr = np.asarray(x)
        dt = zerax.dtypes.canonicalize_dtype(arr.dtype)   # the mode's: float32 with x64 off
        if dt != arr.dtype:
            arr = arr.astype(dt)
        # The batch was just gathered (a fresh buffer nobody else holds): wrap it without
        # the defensive copy of zerax.Array(...), which would double the loader's cost.
        wrap = getattr(zerax.Array, "_wrap", None)
        if wrap is not None and arr.base is None and arr.flags.owndata:
            return wrap(arr)
        return zerax.Array(arr)
    return x


class _Failure:
    """A worker's exception, carried through the queue to the caller."""

    def __init__(self, exc: BaseException):
        self.exc = exc


_DONE = object()


class DataLoader:
    """Batches of a dataset as pytrees of zerax Arrays.

    Each ``for batch in loader`` is one epoch; the next one is the next epoch (set it
    with :meth:`set_epoch`).  With ``shuffle=True`` the order of epoch ``e`` depends only on
    ``(seed, e)``.  ``collate(list_of_examples)`` replaces the default stacking;
    ``prefetch`` is how many batches a background thread prepares ahead (0: none).  A
    dataset with a ``set_epoch(epoch)`` method (a seeded :func:`zerax.data.map`) is told
    the epoch before each iteration reads it.

    >>> import numpy as np
    >>> from zerax import data
    >>> ds = data.ArrayDataset(np.arange(10), np.arange(10) * 10)
    >>> loader = data.DataLoader(ds, batch_size=4)
    >>> [x.tolist() for x, y in loader]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    >>> len(loader), loader.state()
    (3, {'epoch': 1, 'batch': 0})
    """

    def __init__(self, dataset, batch_size: int, *, shuffle: bool = False, seed: int = 0,
                 drop_last: bool = False, collate: Callable[[list], Any] | None = None,
                 prefetch: int = 2):
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise DatasetError("DataLoader needs a dataset with __len__ and __getitem__ "
                               f"(e.g. zerax.data.ArrayDataset), got {type(dataset).__name__}")
        if type(batch_size) is not int or batch_size < 1:
            raise DatasetError(f"batch_size must be a positive int, got {batch_size!r}")
        if type(prefetch) is not int or prefetch < 0:
            raise DatasetError(f"prefetch must be a non-negative int, got {prefetch!r}")
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise DatasetError(f"seed must be a non-negative int, got {seed!r}")
        if collate is not None and not callable(collate):
            raise DatasetError(f"collate must be callable, got {type(collate).__name__}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.drop_last = bool(drop_last)
        self.collate = collate
        self.prefetch = prefetch
        self.shard_index, self.shard_count = 0, 1
        self._epoch, self._batch = 0, 0
        self._resume = False  # restore() was called: the next iteration continues there

    # ---------------------------------------------------------------- order

    def _shard_size(self) -> int:
        n, c = len(self.dataset), self.shard_count
        # Every shard gets the same count (collectives need equal steps): drop the tail with
        # drop_last, otherwise wrap around as torch's DistributedSampler pads.
        return n // c if self.drop_last else -(-n // c)

    def indices(self, epoch: int | None = None) -> np.ndarray:
        """The example indices this loader (shard) visits in ``epoch``, in order.

        >>> import numpy as np
        >>> from zerax import data
        >>> loader = data.DataLoader(data.ArrayDataset(np.arange(6)), 2, shuffle=True)
        >>> bool((loader.indices(3) == loader.indices(3)).all())
        True
        >>> sorted(loader.indices(0).tolist())
        [0, 1, 2, 3, 4, 5]
        """
        epoch = self._epoch if epoch is None else int(epoch)
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng([self.seed, epoch]).permutation(n)
        else:
            order = np.arange(n)
        if self.shard_count > 1:
            size = self._shard_size()
            total = size * self.shard_count
            if total > n:
                order = np.resize(order, total)  # wrap around
            order = order[self.shard_index:total:self.shard_count]
        return order

    def __len__(self) -> int:
        """The number of batches per epoch."""
        size = self._shard_size() if self.shard_count > 1 else len(self.dataset)
        return size // self.batch_size if self.drop_last else -(-size // self.batch_size)

    # ---------------------------------------------------------------- cursor

    @property
    def epoch(self) -> int:
        """The epoch the next iteration runs (or the one in progress)."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration run ``epoch`` from its first batch."""
        if type(epoch) is not int or epoch < 0:
            raise DatasetError(f"epoch must be a non-negative int, got {epoch!r}")
        self._epoch, self._batch, self._resume = epoch, 0, False

    def state(self) -> dict:
        """Where the loader is: ``{"epoch", "batch"}``, the next batch to be consumed
        (a dict of ints: save it in a checkpoint with the model)."""
        return {"epoch": self._epoch, "batch": self._batch}

    def restore(self, state: dict) -> None:
        """Continue at ``state`` (from :meth:`state`): the next iteration yields exactly the
        batches the saved loader had not yet given."""
        try:
            epoch, batch = int(state["epoch"]), int(state["batch"])
        except (TypeError, KeyError, ValueError):
            raise DatasetError("restore() needs a state from DataLoader.state() (a dict with "
                               f"int 'epoch' and 'batch'), got {state!r:.200}") from None
        if epoch < 0 or not 0 <= batch <= len(self):
            raise DatasetError(f"cannot restore to epoch {epoch}, batch {batch}: this loader "
                               f"has {len(self)} batches per epoch")
        self._epoch, self._batch, self._resume = epoch, batch, True
        if batch == len(self):
            self._epoch, self._batch = epoch + 1, 0

    def shard(self, index: int, count: int, *, split_batch: bool = False) -> "DataLoader":
        """The part of this loader that process ``index`` of ``count`` reads: every
        ``count``-th example of the shared (seed, epoch) order, the same number of batches
        on every process.  With ``split_batch``, ``batch_size`` is the batch of all the
        processes together: each shard's batches have ``batch_size / count`` examples,
        and batch ``b`` of the shards together holds exactly the examples of batch ``b``
        of this loader (when ``count`` divides the dataset's size), whatever ``count`` is.

        >>> import numpy as np
        >>> from zerax import data
        >>> loader = data.DataLoader(data.ArrayDataset(np.arange(6)), 2)
        >>> [x.tolist() for x in loader.shard(1, 2)]
        [[1, 3], [5]]
        >>> [x.tolist() for x in loader.shard(1, 2, split_batch=True)]
        [[1], [3], [5]]
        """
        if type(count) is not int or count < 1 or type(index) is not int \
                or not 0 <= index < count:
            raise DatasetError(f"shard(index, count) needs 0 <= index < count, got "
                               f"({index!r}, {count!r})")
        if self.shard_count != 1:
            raise DatasetError("this loader is already a shard; shard the full loader")
        batch_size = self.batch_size
        if split_batch:
            if batch_size % count:
                raise DatasetError(
                    f"shard(split_batch=True): a batch of {batch_size} examples does not "
                    f"split among {count} processes; use a batch size that {count} divides")
            batch_size //= count
        part = DataLoader(self.dataset, batch_size, shuffle=self.shuffle, seed=self.seed,
                          drop_last=self.drop_last, collate=self.collate,
                          prefetch=self.prefetch)
        part.shard_index, part.shard_count = index, count
        part._epoch, part._batch, part._resume = self._epoch, self._batch, self._resume
        return part

    # ---------------------------------------------------------------- iteration

    def _make_batch(self, idx: np.ndarray):
        if self.collate is not None:
            batch = self.collate([self.dataset[int(i)] for i in idx])
        else:
            batch = _gather(self.dataset, idx)
        return tu.tree_map(_to_zerax, batch)

    def __iter__(self) -> Iterator:
        if not self._resume and self._batch > 0:
            # The last epoch was abandoned part-way (a break): a new iteration is a new epoch.
            self._epoch, self._batch = self._epoch + 1, 0
        self._resume = False
        epoch, start = self._epoch, self._batch
        # A dataset with set_epoch (a seeded data.map: random augmentation) draws from the
        # epoch being read; told before the worker thread starts reading it.
        hook = getattr(self.dataset, "set_epoch", None)
        if callable(hook):
            hook(epoch)
        order = self.indices(epoch)
        nb = len(self)
        bounds = [(b * self.batch_size, min((b + 1) * self.batch_size, len(order)))
                  for b in range(start, nb)]
        return self._consume(epoch, start, nb, order, bounds)

    def _start_worker(self, order, bounds):
        q: queue.Queue = queue.Queue(maxsize=self.prefetch)
        stop = threading.Event()

        def put(item) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        x64 = zerax.config.x64_enabled   # the reading thread's mode, for the worker too

        def work():
            try:
                with zerax.enable_x64(x64):
                    for lo, hi in bounds:
                        if stop.is_set() or not put(self._make_batch(order[lo:hi])):
                            return
            except BaseException as e:  # carried to the caller, re-raised there
                put(_Failure(e))
                return
            put(_DONE)

        thread = threading.Thread(target=work, name="zerax-DataLoader", daemon=True)
        thread.start()

        def produce():
            while True:
                item = q.get()
                if item is _DONE:
                    return
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        return produce(), (stop, thread, q)

    def _consume(self, epoch, start, nb, order, bounds):
        # A generator: the worker starts with the first next() and is stopped in `finally`
        # when the loop ends, breaks (the generator is closed) or raises.
        worker = None
        try:
            if self.prefetch == 0:
                produce = (self._make_batch(order[lo:hi]) for lo, hi in bounds)
            else:
                produce, worker = self._start_worker(order, bounds)
            for b, batch in enumerate(produce, start):
                # Count the batch as consumed when it is handed over, so state() taken in the
                # loop body points at the next one.
                if b + 1 == nb:
                    self._epoch, self._batch = epoch + 1, 0
                else:
                    self._epoch, self._batch = epoch, b + 1
                yield batch
            if start >= nb:  # restored at the very end of an epoch: nothing left in it
                self._epoch, self._batch = max(self._epoch, epoch + 1), 0
        finally:
            if worker is not None:
                stop, thread, q = worker
                stop.set()
                while thread.is_alive():  # unblock a worker waiting on a full queue
                    try:
                        q.get_nowait()
                    except queue.Empty:
                        pass
                    thread.join(timeout=0.01)

    def __repr__(self) -> str:
        shard = f", shard={self.shard_index}/{self.shard_count}" if self.shard_count > 1 else ""
        return (f"DataLoader({len(self.dataset)} examples, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, seed={self.seed}{shard})")


def default_collate(examples: list):
    """Stack examples (pytrees of arrays) into a batch of NumPy arrays (the default)."""
    return stack(examples)
