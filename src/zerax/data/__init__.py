"""`zerax.data`: datasets and a reproducible, resumable, shardable DataLoader.

A dataset is anything with ``__len__`` and ``__getitem__`` giving one example as a pytree
of arrays (:class:`Dataset`); :class:`ArrayDataset` holds in-memory arrays and
:func:`map` transforms examples lazily.  :class:`DataLoader` batches them into pytrees of
zerax Arrays, in an order that is a pure function of ``(seed, epoch)``, with
``state()``/``restore()`` for exact mid-epoch resume, ``shard(index, count)`` for
data-parallel processes and a background prefetch thread.  :mod:`zerax.data.datasets`
holds spiral, digits, MNIST, Fashion-MNIST and CIFAR-10 readers (no downloads);
:mod:`zerax.data.transforms` holds batch augmentations (``random_affine``) for a seeded
``data.map``.

>>> import numpy as np
>>> from zerax import data
>>> loader = data.DataLoader(data.ArrayDataset(np.ones((5, 2)), np.arange(5)), batch_size=2)
>>> [x.shape for x, y in loader]
[(2, 2), (2, 2), (1, 2)]
"""

from . import datasets, transforms
from .dataset import ArrayDataset, Dataset, MapDataset, map  # noqa: A004
from .loader import DataLoader, default_collate

__all__ = ["ArrayDataset", "DataLoader", "Dataset", "MapDataset", "datasets",
           "default_collate", "map", "transforms"]
