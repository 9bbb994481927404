"""`zerax.experimental.multihost_utils`: JAX's ``jax.experimental.multihost_utils`` names
for programs on several processes, on `zerax.distributed`.

>>> import zerax.numpy as znp
>>> from zerax.experimental import multihost_utils
>>> multihost_utils.process_allgather(znp.ones(2))   # one process: a stack of one
Array([[1., 1.]], dtype=float64)
"""

from __future__ import annotations

import zerax
from .. import distributed
from ..errors import NotSupportedError

__all__ = ["broadcast_one_to_all", "process_allgather", "sync_global_devices"]


def broadcast_one_to_all(in_tree, is_source=None):
    """Process 0's value of ``in_tree`` on every process (``is_source``, when given,
    must be true on process 0 only, as JAX's default).

    >>> import zerax.numpy as znp
    >>> from zerax.experimental import multihost_utils
    >>> multihost_utils.broadcast_one_to_all({"w": znp.zeros(2)})["w"]
    Array([0., 0.], dtype=float64)
    """
    if is_source is not None and bool(is_source) != (zerax.process_index() == 0):
        raise NotSupportedError(
            "broadcast_one_to_all(is_source=...) other than 'process 0' is not supported; "
            "use zerax.distributed.broadcast(tree, root=k)")
    return distributed.broadcast(in_tree, root=0)


def process_allgather(in_tree, tiled: bool = False):
    """Every process's value of each leaf, stacked (``tiled``: concatenated) along a new
    first axis in process order."""
    return distributed.process_allgather(in_tree, tiled=tiled)


def sync_global_devices(name: str) -> None:
    """Wait until every process has reached this point (``name`` is for messages)."""
    del name
    distributed.barrier()
