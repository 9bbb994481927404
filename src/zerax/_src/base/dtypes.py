"""Dtypes: NumPy 2 promotion with weak Python scalars, and dtype predicates.

zerax follows NumPy 2 for result dtypes: `np.result_type` already treats Python
scalars as weak, so promotion is delegated to it with the Python scalar *values*
kept in the argument list.
"""

from __future__ import annotations

import numpy as np

float0 = np.dtype([("float0", np.void, 0)])  # the tangent dtype of integer values (as in JAX)

default_float = np.dtype(np.float64)
default_int = np.dtype(np.int64)

_PY_SCALARS = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    return type(x) in _PY_SCALARS


def dtype_of(x) -> np.dtype:
    """The dtype a value has (or will have once converted to an array)."""
    d = getattr(x, "dtype", None)
    if d is not None:
        return np.dtype(d)
    return np.asarray(x).dtype


def result_type(*args) -> np.dtype:
    """NumPy 2's result dtype; Python scalars among ``args`` are weak."""
    return np.result_type(*[a if type(a) in _PY_SCALARS else dtype_of(a) for a in args])


def is_inexact(dtype) -> bool:
    return np.issubdtype(dtype, np.inexact)


def is_float(dtype) -> bool:
    return np.issubdtype(dtype, np.floating)


def is_complex(dtype) -> bool:
    return np.issubdtype(dtype, np.complexfloating)


def is_integer(dtype) -> bool:
    return np.issubdtype(dtype, np.integer)


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def to_inexact(dtype) -> np.dtype:
    """The float dtype NumPy 2 uses for e.g. ``np.sin`` of ``dtype``."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    return np.result_type(dtype, np.float16) if dtype.itemsize < 4 and not is_bool(dtype) else (
        np.dtype(np.float16) if is_bool(dtype) else np.result_type(dtype, 1.0))


def canonicalize(dtype) -> np.dtype:
    return np.dtype(dtype)
