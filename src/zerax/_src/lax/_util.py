"""Argument helpers shared by `lax` and `numpy` (numpy imports them from here): axis
normalisation, NumPy's broadcasting of shapes, and the error prefix a function name gets.

They use the primitives of ``ops`` only, so ``lax`` needs nothing from the NumPy layer.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..ops.shape import broadcast_in_dim, reshape

# the Python scalar types, and the name errors give a function (shared with ops)
from ..ops.values import PY_SCALARS as _PY_SCALARS, qualified as _qualified  # noqa: E402


def shape_of(x):
    return () if type(x) in _PY_SCALARS else tuple(x.shape)


def broadcast_shapes(fname, *shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise errors.ShapeError(
            f"{_qualified(fname)}: operands could not be broadcast together with shapes "
            f"{' '.join(str(tuple(s)) for s in shapes)}") from None


def broadcast_to_shape(x, shape):
    """Broadcast ``x`` to ``shape`` (NumPy rules); a 0-d value is left 0-d because
    elementwise primitives broadcast 0-d operands themselves."""
    xs = tuple(x.shape)
    if xs == shape or xs == ():
        return x
    nlead = len(shape) - len(xs)
    keep = [i for i, n in enumerate(xs) if n == shape[nlead + i]]
    if len(keep) != len(xs):
        x = reshape(x, [xs[i] for i in keep])
    return broadcast_in_dim(x, shape, tuple(nlead + i for i in keep))


def normalize_axis(axis, ndim, fname="function"):
    if not isinstance(axis, (int, np.integer)):
        raise errors.ZeraxTypeError(f"{_qualified(fname)}: axis must be an integer, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1):
        raise errors.AxisError(
            f"{_qualified(fname)}: axis {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % max(ndim, 1)


def normalize_axes(axis, ndim, fname="function"):
    """``None`` -> all axes; int or tuple -> sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    elif not isinstance(axis, (tuple, list)):
        try:
            seq = None if isinstance(axis, (str, bytes)) else tuple(axis)
        except TypeError:  # not iterable: a float, a 0-d array, ...
            seq = None
        if seq is None:
            raise errors.ZeraxTypeError(
                f"{_qualified(fname)}: axis must be None, an integer or a tuple of integers, "
                f"got {axis!r}")
        axis = seq
    axes = tuple(normalize_axis(a, ndim, fname) for a in axis)
    if len(set(axes)) != len(axes):
        raise errors.ShapeError(f"{_qualified(fname)}: repeated axis in {axis}")
    return tuple(sorted(axes))
