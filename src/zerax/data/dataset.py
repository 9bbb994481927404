"""Datasets: the protocol (`Dataset`), in-memory arrays (`ArrayDataset`) and lazy
per-example transforms (`MapDataset`, `map`).

A dataset is anything with ``__len__`` and ``__getitem__(i)`` giving one example as a
pytree of arrays.  It may also define ``__getitems__(indices)`` giving a whole batch at
once (already stacked); :class:`zerax.data.DataLoader` uses it when present, which is
what makes batching an in-memory dataset a single fancy-indexing per array.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

import zerax
from .. import tree_util as tu
from ..errors import DatasetError

__all__ = ["Dataset", "ArrayDataset", "MapDataset", "map"]


@runtime_checkable
class Dataset(Protocol):
    """The dataset protocol: a length and indexed examples (pytrees of arrays)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Any: ...


def _as_numpy(x):
    # Datasets hold host (NumPy) arrays: indexing them is cheap and thread-safe; the
    # loader turns batches into zerax Arrays.
    return np.asarray(x)


class ArrayDataset:
    """Examples are rows of in-memory arrays sharing their first dimension.

    ``ArrayDataset(x, y)`` gives ``(x[i], y[i])``; with one argument, ``x[i]``.  Each
    argument may itself be a pytree of arrays (a dict of features...).

    >>> import numpy as np
    >>> from zerax import data
    >>> ds = data.ArrayDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
    >>> len(ds), ds[1]
    (5, (array([2., 3.]), np.int64(1)))
    """

    def __init__(self, *arrays):
        if not arrays:
            raise DatasetError("ArrayDataset needs at least one array")
        self._single = len(arrays) == 1
        tree = arrays[0] if self._single else tuple(arrays)
        leaves, self._treedef = tu.tree_flatten(tree)
        self._leaves = [_as_numpy(x) for x in leaves]
        if not self._leaves:
            raise DatasetError("ArrayDataset was given no arrays (empty pytrees)")
        for x in self._leaves:
            if x.ndim == 0:
                raise DatasetError("ArrayDataset needs arrays with a leading (example) "
                                   f"dimension, got a scalar of dtype {x.dtype}")
        sizes = {x.shape[0] for x in self._leaves}
        if len(sizes) != 1:
            raise DatasetError("ArrayDataset's arrays must have the same number of examples "
                               f"(first dimension); got sizes {sorted(sizes)}")
        self._n = sizes.pop()

    @property
    def arrays(self):
        """The arrays (NumPy), in the structure they were given."""
        return tu.tree_unflatten(self._treedef, self._leaves)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            if not -self._n <= index < self._n:
                raise IndexError(f"example {index} is out of range for a dataset of "
                                 f"{self._n} examples")
        return tu.tree_unflatten(self._treedef, [x[index] for x in self._leaves])

    def __getitems__(self, indices):
        """A whole batch at once: each array indexed by ``indices``."""
        indices = np.asarray(indices, dtype=np.intp)
        return tu.tree_unflatten(self._treedef, [x[indices] for x in self._leaves])

    def map(self, fn: Callable, *, batched: bool = False,
            seed: int | None = None) -> "MapDataset":
        """A dataset of ``fn(example)`` (see :func:`zerax.data.map`)."""
        return MapDataset(self, fn, batched=batched, seed=seed)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in self._leaves)
        return f"ArrayDataset({shapes})"


class MapDataset:
    """``fn`` applied lazily to each example of ``dataset`` (when it is read).

    ``batched=True`` says ``fn`` takes and gives a whole stacked batch (a vectorised
    transform, much faster than one call per example); the loader then calls it once per
    batch.

    ``seed`` (an int) makes it a random transform (augmentation): ``fn`` is then called as
    ``fn(example, rng)`` (or ``fn(batch, rng)``) with ``rng`` a NumPy ``Generator`` seeded
    from ``(seed, epoch, the example indices read)``.  The epoch is the one a
    :class:`zerax.data.DataLoader` is iterating (it calls :meth:`set_epoch`), so each epoch
    sees fresh random draws, and a run, its rerun and its resumed copy see the same ones.
    A batched transform gets one generator per batch (seeded from all its indices); a
    per-example one, one per example.

    >>> import numpy as np
    >>> from zerax import data
    >>> ds = data.map(data.ArrayDataset(np.arange(4.0)), lambda x: x * 10)
    >>> ds[3]
    np.float64(30.0)
    >>> noisy = data.map(data.ArrayDataset(np.zeros(4)), lambda x, rng: x + rng.normal(),
    ...                  seed=0)
    >>> bool(noisy[1] == noisy[1]), bool(noisy[1] != noisy[2])
    (True, True)
    """

    def __init__(self, dataset, fn: Callable, *, batched: bool = False,
                 seed: int | None = None):
        if not callable(fn):
            raise DatasetError(f"map needs a callable, got {type(fn).__name__}")
        if seed is not None and (not isinstance(seed, (int, np.integer))
                                 or isinstance(seed, bool) or seed < 0):
            raise DatasetError(f"map's seed must be None or a non-negative int, got {seed!r}")
        self.dataset, self.fn, self.batched = dataset, fn, batched
        self.seed = None if seed is None else int(seed)
        self.epoch = 0

    def __len__(self) -> int:
        return len(self.dataset)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the random draws of a seeded map come from (passed on to the wrapped
        dataset when it has ``set_epoch`` too); :class:`DataLoader` calls it."""
        self.epoch = int(epoch)
        inner = getattr(self.dataset, "set_epoch", None)
        if callable(inner):
            inner(epoch)

    def _rng(self, indices) -> np.random.Generator:
        n = len(self.dataset)
        # SeedSequence mixes every word: the draws depend on the seed, the epoch and exactly
        # which examples are read (not on thread timing or on what was read before).
        words = [self.seed, self.epoch] + [int(i) % n for i in indices]
        return np.random.default_rng(words)

    def _call(self, value, indices):
        if self.seed is None:
            return self.fn(value)
        return self.fn(value, self._rng(indices))

    def __getitem__(self, index):
        if self.batched:
            batch = _gather(self.dataset, np.asarray([index]))
            return tu.tree_map(lambda x: x[0], self._call(batch, [index]))
        return self._call(self.dataset[index], [index])

    def __getitems__(self, indices):
        if self.batched:
            return self._call(_gather(self.dataset, indices), indices)
        return stack([self._call(self.dataset[int(i)], [i]) for i in indices])

    def map(self, fn: Callable, *, batched: bool = False,
            seed: int | None = None) -> "MapDataset":
        return MapDataset(self, fn, batched=batched, seed=seed)


def map(dataset, fn: Callable, *, batched: bool = False,  # noqa: A001
        seed: int | None = None) -> MapDataset:
    """A dataset whose examples are ``fn(example)`` (or, with ``batched=True``, whose
    batches are ``fn(batch)``), computed when read: augmentation, normalisation, casts.
    With ``seed``, ``fn`` also receives a NumPy ``Generator`` (``fn(example, rng)``) drawn
    from ``(seed, epoch, example indices)``: reproducible random augmentation (see
    :class:`MapDataset` and :mod:`zerax.data.transforms`).

    >>> import numpy as np
    >>> from zerax import data
    >>> ds = data.map(data.ArrayDataset(np.ones((3, 2)), np.arange(3)),
    ...               lambda xy: (xy[0] * 2, xy[1]), batched=True)
    >>> ds[2]
    (array([2., 2.]), np.int64(2))
    """
    return MapDataset(dataset, fn, batched=batched, seed=seed)


def _to_host(x):
    return np.asarray(x) if isinstance(x, zerax.Array) else x


def stack(examples: list):
    """Stack a list of examples (pytrees of arrays) into one batch of NumPy arrays."""
    if not examples:
        raise DatasetError("cannot make a batch of no examples")
    try:
        return tu.tree_map(lambda *xs: np.stack([np.asarray(_to_host(x)) for x in xs]),
                           *examples)
    except ValueError as e:
        raise DatasetError(f"the examples of a batch do not stack into arrays ({e}); give "
                           "every example the same structure and shapes, or pass collate=")\
            from None


def _gather(dataset, indices):
    getitems = getattr(dataset, "__getitems__", None)
    if getitems is not None:
        return getitems(indices)
    return stack([dataset[int(i)] for i in indices])
