"""``map_coordinates`` (JAX's ``jax.scipy.ndimage``): values of an array at fractional
coordinates, by nearest-neighbour (``order=0``) or linear (``order=1``) interpolation,
with SciPy's boundary modes ``constant`` (``cval`` outside), ``nearest``, ``wrap``,
``mirror`` and ``reflect``.  A composition of gathers and ``where``: differentiable in
the input and (for ``order=1``) in the coordinates, batched and compiled like them.
"""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from .... import errors
from ... import numpy as jnp
from ...lax.lax import round as _lax_round

__all__ = ["map_coordinates"]


def _mirror(index, size):
    s = size - 1
    return jnp.abs((index + s) % (2 * s) - s) if s > 0 else jnp.zeros_like(index)


def _reflect(index, size):
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FIXERS = {"constant": lambda i, n: i, "nearest": lambda i, n: jnp.clip(i, 0, n - 1),
           "wrap": lambda i, n: i % n, "mirror": _mirror, "reflect": _reflect}


def _round_away(a):
    return a if a.dtype.kind in "iu" else _lax_round(a)


def map_coordinates(input, coordinates, order: int, mode: str = "constant",
                    cval=0.0):
    """``input`` sampled at ``coordinates`` (one array per axis of ``input``, all of the
    output's shape), SciPy's ``ndimage.map_coordinates`` with JAX's restrictions
    (``order`` 0 or 1).

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.ndimage import map_coordinates
    >>> map_coordinates(znp.arange(5.0) ** 2, [znp.array([0.5, 2.25, 4.5])], order=1)
    Array([0.5 , 5.25, 8.  ], dtype=float64)
    """
    x = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, x.dtype)
    if len(coords) != x.ndim:
        raise errors.ZeraxValueError(
            f"coordinates must be a sequence of length input.ndim, but {len(coords)} != "
            f"{x.ndim}")
    fixer = _FIXERS.get(mode)
    if fixer is None:
        raise errors.NotSupportedError(
            f"map_coordinates does not support mode {mode!r}; the modes are "
            f"{sorted(_FIXERS)}.")
    if order not in (0, 1):
        raise errors.NotSupportedError(
            "map_coordinates supports order 0 (nearest) and 1 (linear), as JAX's.")
    per_axis = []
    for c, size in zip(coords, x.shape):
        if order == 0:
            nodes = [(_round_away(c).astype(np.int32), np.ones((), c.dtype))]
        else:
            lower = jnp.floor(c)
            upper_w = c - lower
            idx = lower.astype(np.int32)
            nodes = [(idx, 1 - upper_w), (idx + 1, upper_w)]
        fixed = []
        for idx, w in nodes:
            valid = (idx >= 0) & (idx < size) if mode == "constant" else None
            # (clamped for the gather: out-of-range entries are replaced by cval)
            fixed.append((jnp.clip(fixer(idx, size), 0, size - 1), valid, w))
        per_axis.append(fixed)
    outputs = []
    for items in itertools.product(*per_axis):
        idxs, valids, weights = zip(*items)
        vals = x[tuple(idxs)]
        if mode == "constant":
            vals = jnp.where(functools.reduce(operator.and_, valids), vals, cval)
        outputs.append(functools.reduce(operator.mul, weights) * vals)
    result = functools.reduce(operator.add, outputs)
    if x.dtype.kind in "iu":
        result = _round_away(result)
    return result.astype(x.dtype)
