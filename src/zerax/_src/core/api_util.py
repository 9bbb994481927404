"""Helpers shared by the public transforms: input conversion and argument checks."""

from __future__ import annotations

import numpy as np

from ... import errors
from .array import Array
from .core import Tracer


def as_input(x, where: str):
    """Convert a user value (NumPy array, list, Python scalar, Array, tracer) to a
    zerax value, or raise a TypeError that names the offending argument."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        arr = np.array(x)
        if arr.dtype.kind in "biufc":
            if not arr.dtype.isnative:  # big-endian data: converted once, on entry
                arr = arr.astype(arr.dtype.newbyteorder("="))
            return Array._wrap(arr)
    elif isinstance(x, (list, tuple)):
        try:
            arr = np.array(x)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.dtype.kind in "biufc":
            return Array._wrap(arr)
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
