"""Helpers shared by the transforms: input conversion, argument checks, and
`flatten_fun` (a function of pytrees as a function of flat leaves)."""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from . import tree
from .array import Array
from .core import Tracer


def as_input(x, where: str):
    """Convert a user value (NumPy array, list, Python scalar, Array, tracer) to a
    zerax value, or raise a TypeError that names the offending argument.  Values that
    are not zerax arrays take the mode's dtypes (``base/dtypes.py``)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if type(x) in (bool, int, float, complex):
        try:
            return Array._wrap(dtypes.scalar_array(x))
        except OverflowError as e:
            raise errors.ZeraxValueError(f"{where}: {e}") from None
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        arr = np.array(x)
        if dtype_kind(arr.dtype) in "biufc":
            if not arr.dtype.isnative:  # big-endian data: converted once, on entry
                arr = arr.astype(arr.dtype.newbyteorder("="))
            return Array._wrap(dtypes.canonical_ndarray(arr))
    elif isinstance(x, (list, tuple)):
        try:
            arr = np.array(x)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and dtype_kind(arr.dtype) in "biufc":
            return Array._wrap(dtypes.canonical_ndarray(arr))
    raise errors.ZeraxTypeError(
        f"{where} has type {type(x).__name__} ({x!r:.60}), which is not a valid zerax array "
        "type. Pass NumPy arrays, zerax Arrays, Python scalars or (nested) lists of numbers; "
        "mark non-array arguments static instead.")


def as_output(x):
    """Results handed back to users are zerax values, never raw ndarrays."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return Array(x)
    return x


def normalize_argnums(argnums, nargs: int, fun_name: str):
    single = isinstance(argnums, (int, np.integer))
    if single:
        nums = (argnums,)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise errors.ZeraxTypeError(
            f"argnums must be an int or a tuple of ints, got {argnums!r} "
            f"({type(argnums).__name__}).")
    for a in nums:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise errors.ZeraxTypeError(
                f"argnums must be an int or a tuple of ints, got {argnums!r}.")
        if not -nargs <= a < nargs:
            raise errors.ZeraxTypeError(
                f"argnums={argnums!r} is out of range for {fun_name}, which was called with "
                f"{nargs} positional argument(s).")
    norm = tuple(int(a) % nargs for a in nums)
    if len(set(norm)) != len(norm):
        raise errors.ZeraxValueError(
            f"argnums={argnums!r} names the same argument of {fun_name} more than once; "
            "each argument may appear once.")
    return single, norm


class OutTree:
    """Where a function made by `flatten_fun` leaves its output's tree structure (known
    once the function has run, typically while it is traced)."""

    __slots__ = ("tree",)

    def __init__(self):
        self.tree = None


def flatten_fun(fun, in_tree, out: OutTree, *, apply=None, has_aux: bool = False,
                out_what: str | None = None):
    """``fun`` of pytrees as ``flat_fun(*leaves) -> output leaves``: the leaves are
    rebuilt as ``in_tree``, ``fun`` is called on them (``fun(*rebuilt)``, or
    ``apply(fun, rebuilt)`` when the rebuilt value is not the argument tuple), and its
    output is flattened; the output's structure is stored in ``out``.  With ``has_aux``
    ``fun`` returns ``(output, aux)`` and ``flat_fun`` returns ``(leaves, aux)``.  With
    ``out_what`` every output leaf is made a zerax value (`as_input`), and one that
    cannot be is an error naming it ``out_what``.

    >>> from zerax._src.core import tree
    >>> leaves, in_tree = tree.tree_flatten(((1.0, {"b": 2.0}),))
    >>> out = OutTree()
    >>> flat = flatten_fun(lambda p: [p[0] + p[1]["b"]], in_tree, out)
    >>> flat(*leaves), out.tree
    ([3.0], PyTreeDef([*]))
    """
    def flat_fun(*leaves):
        args = tree.tree_unflatten(in_tree, list(leaves))
        res = fun(*args) if apply is None else apply(fun, args)
        aux = None
        if has_aux:
            res, aux = res
        out_leaves, out.tree = tree.tree_flatten(res)
        if out_what is not None:
            out_leaves = [as_input(o, out_what) for o in out_leaves]
        return (out_leaves, aux) if has_aux else out_leaves
    return flat_fun
