"""Equinox's leaf serialisation (``tree_serialise_leaves`` / ``tree_deserialise_leaves``,
the ``.eqx`` format) and ``filter_eval_shape``.

The format is Equinox's: the leaves of a pytree written one after another with NumPy's
``.npy`` format (``np.save``), in the order of ``tree_leaves``; leaves that are not
arrays or Python/NumPy scalars are skipped.  Reading walks a ``like`` tree of the same
structure and loads one ``.npy`` record per array or scalar leaf (never with pickle),
checking type, shape and dtype.  A file written by Equinox loads here and back.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np

import zerax as zx
import zerax.numpy as znp

from .. import errors
from .. import tree_util as jtu
from ._filters import combine, is_array, partition

__all__ = ["default_deserialise_filter_spec", "default_serialise_filter_spec",
           "filter_eval_shape", "tree_deserialise_leaves", "tree_serialise_leaves"]

_SCALARS = (bool, int, float, complex, np.generic)


def default_serialise_filter_spec(f, x: Any) -> None:
    """Write leaf ``x`` to the binary file ``f`` with ``np.save`` if it is an array or
    a Python/NumPy scalar; skip it otherwise (Equinox's default).

    >>> import io, zerax.nn as nn, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> nn.default_serialise_filter_spec(buf, znp.arange(3.0))
    >>> buf.tell() > 0
    True
    """
    if isinstance(x, zx.Array) or isinstance(x, (np.ndarray,) + _SCALARS):
        np.save(f, np.asarray(x), allow_pickle=False)


def default_deserialise_filter_spec(f, x: Any) -> Any:
    """Read the record for leaf ``x`` of the ``like`` tree from ``f``: a zerax array for
    a zerax array (or `ShapeDtypeStruct`), a NumPy array for a NumPy array, a value of
    the same type for a scalar; other leaves are returned as they are (Equinox's
    default).

    >>> import io, zerax.nn as nn, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> nn.default_serialise_filter_spec(buf, znp.arange(3.0))
    >>> _ = buf.seek(0)
    >>> nn.default_deserialise_filter_spec(buf, znp.zeros(3))
    Array([0., 1., 2.], dtype=float64)
    """
    if isinstance(x, (zx.Array, zx.ShapeDtypeStruct)):
        return znp.asarray(np.load(f, allow_pickle=False))
    if isinstance(x, np.ndarray):
        return np.load(f, allow_pickle=False)
    if isinstance(x, _SCALARS):
        return type(x)(np.load(f, allow_pickle=False).item())
    return x


@contextlib.contextmanager
def _maybe_open(path_or_file, mode):
    if isinstance(path_or_file, (str, pathlib.Path)):
        path = pathlib.Path(path_or_file)
        if path.suffix == "":
            path = path.with_suffix(".eqx")
        with open(path, mode) as f:
            yield f
    else:
        yield path_or_file


def _ordered_map(fn, spec, tree, is_leaf=None):
    """``tree_map(fn, spec, tree)`` with ``spec`` a prefix tree of functions, called in
    the order of the leaves (the order of the records in the file)."""
    return jtu.tree_map(lambda s, sub: jtu.tree_map(lambda y: fn(s, y), sub, is_leaf=is_leaf),
                        spec, tree, is_leaf=lambda v: v is None)


def tree_serialise_leaves(path_or_file, pytree: Any,
                          filter_spec: Any = default_serialise_filter_spec,
                          is_leaf: Callable[[Any], bool] | None = None) -> None:
    """Save the array and scalar leaves of ``pytree`` to a file (a path, ``.eqx`` added
    when it has no suffix, or a binary file object), Equinox's format.
    ``filter_spec``: a function ``(file, leaf) -> None`` or a prefix tree of them.

    >>> import io, zerax.nn as nn, zerax.random as zr
    >>> mlp = nn.MLP(2, 2, 4, 1, key=zr.key(0))
    >>> buf = io.BytesIO()
    >>> nn.tree_serialise_leaves(buf, mlp)
    >>> _ = buf.seek(0)
    >>> back = nn.tree_deserialise_leaves(buf, nn.MLP(2, 2, 4, 1, key=zr.key(1)))
    >>> bool(nn.tree_equal(back, mlp))
    True
    """
    with _maybe_open(path_or_file, "wb") as f:
        _ordered_map(lambda spec, y: spec(f, y), filter_spec, pytree, is_leaf)


def tree_deserialise_leaves(path_or_file, like: Any,
                            filter_spec: Any = default_deserialise_filter_spec,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Load the leaves saved by `tree_serialise_leaves` into the structure of ``like``
    (a tree of the same structure, whose array leaves may be `ShapeDtypeStruct`, as
    `filter_eval_shape` gives); type, shape and dtype of each leaf must match.

    >>> import io, zerax.nn as nn, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> nn.tree_serialise_leaves(buf, {"w": znp.ones(2), "n": 3})
    >>> _ = buf.seek(0)
    >>> nn.tree_deserialise_leaves(buf, {"w": znp.zeros(2), "n": 0})
    {'n': 3, 'w': Array([1., 1.], dtype=float64)}
    """
    with _maybe_open(path_or_file, "rb") as f:
        try:
            out = _ordered_map(lambda spec, y: spec(f, y), filter_spec, like, is_leaf)
        except (EOFError, ValueError) as e:
            raise errors.CheckpointError(
                f"tree_deserialise_leaves: the file has fewer or different records than "
                f"the leaves of `like` ({e}). Pass a `like` built as the saved tree was.") from None

    def check(path, new, old):
        told = zx.Array if isinstance(old, zx.ShapeDtypeStruct) else type(old)
        if type(new) is not told:
            raise errors.CheckpointError(
                f"Deserialised leaf at path '{jtu.keystr(path)}' has changed type from "
                f"{type(old)} in `like` to {type(new)} on disk.")
        if isinstance(new, (np.ndarray, zx.Array)):
            if tuple(new.shape) != tuple(old.shape):
                raise errors.CheckpointError(
                    f"Deserialised leaf at path '{jtu.keystr(path)}' has changed shape "
                    f"from {tuple(old.shape)} in `like` to {tuple(new.shape)} on disk.")
            if np.dtype(new.dtype) != np.dtype(old.dtype):
                raise errors.CheckpointError(
                    f"Deserialised leaf at path '{jtu.keystr(path)}' has changed dtype "
                    f"from {np.dtype(old.dtype)} in `like` to {np.dtype(new.dtype)} on disk.")
    jtu.tree_map_with_path(check, out, like, is_leaf=is_leaf)
    return out


def filter_eval_shape(fun: Callable, *args, **kwargs) -> Any:
    """The output of ``fun(*args, **kwargs)`` with each array replaced by its
    `ShapeDtypeStruct`, computed by tracing (nothing runs); non-array arguments and
    outputs pass through as they are (Equinox's ``filter_eval_shape``; e.g. the
    ``like`` tree of `tree_deserialise_leaves` without drawing parameters).

    >>> import zerax.nn as nn, zerax.random as zr
    >>> shapes = nn.filter_eval_shape(nn.Linear, 3, 2, key=zr.key(0))
    >>> shapes.weight
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """
    dyn, static = partition((args, kwargs), is_array)
    box: list = []

    def run(d):
        a, k = combine(d, static)
        out = fun(*a, **k)
        o_dyn, o_static = partition(out, is_array)
        box.append(o_static)
        return o_dyn

    shapes = zx.eval_shape(run, dyn)
    return combine(shapes, box[-1])
