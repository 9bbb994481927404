"""Flattening a pytree of arrays into one vector, as ``jax.flatten_util``.

>>> import zerax.numpy as znp
>>> from zerax.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": znp.ones((2, 2)), "b": znp.zeros(2)})
>>> flat
Array([0., 0., 1., 1., 1., 1.], dtype=float64)
>>> unravel(flat)["w"].shape
(2, 2)
"""

from __future__ import annotations

import numpy as np

from . import numpy as znp
from ._src.base.dtypes import default_float, result_type
from ._src.core.tree import tree_flatten, tree_unflatten
from .errors import ShapeError

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves raveled and concatenated (in tree order, promoted
    to their common dtype), and a function mapping such a vector back to the tree, each
    leaf with its own shape and dtype. Works on concrete and traced leaves alike."""
    leaves, treedef = tree_flatten(pytree)
    arrays = [znp.asarray(leaf) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    # Python scalars among the leaves are weak, as in every zerax.numpy promotion
    dtype = result_type(*leaves) if leaves else default_float()
    if arrays:
        flat = znp.concatenate([znp.ravel(a).astype(dtype) for a in arrays])
    else:
        flat = znp.zeros(0, dtype)
    total = sum(sizes)

    def unravel(vector):
        vector = znp.asarray(vector)
        if vector.shape != (total,):
            raise ShapeError(f"unravel expects a vector of shape ({total},) as produced by "
                             f"ravel_pytree, got shape {vector.shape}.")
        out, start = [], 0
        for shape, dt, size in zip(shapes, dtypes, sizes):
            out.append(vector[start:start + size].reshape(shape).astype(dt))
            start += size
        return tree_unflatten(treedef, out)

    return flat, unravel
