"""User values below the NumPy layer: Python scalars, NumPy arrays and nested lists (which
may hold traced values) taken as zerax values, and NumPy 2's result dtype for them.

Python scalars, and traced values marked weak (``_weak_type``), promote as NumPy 2's weak
scalars.  Result dtypes are NumPy's own: the dtype a NumPy function gives for arguments
of the same dtypes is asked of NumPy once, on tiny samples, and cached.  ``x.at[idx]``
(`indexing`) and `index_update` take user values with these rules; `zerax.numpy`
applies the same ones to every function's arguments.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core.array import Array
from ..core.core import Tracer
from .elementwise import convert_element_type
from .shape import concatenate, reshape

PY_SCALARS = (bool, int, float, complex)


def qualified(fname: str) -> str:
    """The name errors give: ``zerax.numpy.<fname>``, or ``fname`` itself when it names
    its namespace (``x.at[idx].set``)."""
    return fname if "." in fname else f"zerax.numpy.{fname}"


def check_arg(x, fname: str, pos: int = 0):
    """Accept zerax values, NumPy values, Python scalars and nested lists (NumPy values
    and lists in the mode's dtypes; Python scalars stay Python scalars, which are weak)."""
    if isinstance(x, (Array, Tracer)) or type(x) in PY_SCALARS:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if dtype_kind(x.dtype) not in "biufc":
            raise errors.ZeraxTypeError(
                f"{qualified(fname)}: argument {pos} has dtype {x.dtype}, which zerax does not "
                "support (only bool, integer, float and complex arrays)")
        return Array._wrap(dtypes.canonical_ndarray(np.array(x)))
    if isinstance(x, (list, tuple)):
        try:
            arr = np.array(x)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and dtype_kind(arr.dtype) in "biufc":
            return Array._wrap(dtypes.canonical_ndarray(arr))
        if _has_tracer(x):
            return array_from_nested(x)
    raise errors.ZeraxTypeError(
        f"{qualified(fname)}: argument {pos} has type {type(x).__name__} ({x!r:.60}); expected "
        "an array, a Python number or a (nested) list of numbers.")


def _has_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tracer(e) for e in x)
    return False


def weak_type_of(x):
    """The Python scalar type ``x`` promotes as (NumPy 2's weak scalars, JAX's weak
    types): a Python number's own type, or a traced value's ``_weak_type``; None for
    everything else, which promotes by its dtype."""
    t = type(x)
    if t in PY_SCALARS:
        return t
    return x._weak_type if isinstance(x, Tracer) else None


def _promotion_key(a):
    w = weak_type_of(a)
    return w if w is not None else np.dtype(a.dtype)


@functools.lru_cache(maxsize=4096)
def _numpy_dtype(fn, keys):
    if any(isinstance(k, np.dtype) and dtypes.is_bfloat16(k) for k in keys):
        return _bfloat16_numpy_dtype(fn, keys)
    samples = [k() if isinstance(k, type) and k in PY_SCALARS else np.ones((), k) for k in keys]
    with np.errstate(all="ignore"):
        out = fn(*samples)
    return np.asarray(out).dtype


def _bfloat16_numpy_dtype(fn, keys):
    """`_numpy_dtype` with a bfloat16 among ``keys``: NumPy (through ml_dtypes' loops,
    or float32 where ml_dtypes has none) says whether the result is a bool, an integer
    or inexact; an inexact result takes JAX's promotion of ``keys`` (ml_dtypes' NumPy
    promotions differ: int32 with bfloat16 is float64 there)."""
    bf16 = dtypes.bfloat16_dtype()

    def run(sub):
        samples = [k() if isinstance(k, type) and k in PY_SCALARS else np.ones((), k)
                   for k in [sub if k == bf16 else k for k in keys]]
        with np.errstate(all="ignore"):
            return np.asarray(fn(*samples)).dtype

    try:
        out = run(bf16)
    except TypeError:           # no bfloat16 loop (e.g. np.cbrt): its float32 one
        out = run(np.dtype(np.float32))
    if dtype_kind(out) not in "fc":
        return out
    promoted = dtypes.result_type(*[k() if isinstance(k, type) and k in PY_SCALARS else k
                                    for k in keys])      # (weak: Python values)
    return promoted if dtype_kind(promoted) in "fc" and (out.kind == "c") <= (
        promoted.kind == "c") else out


def numpy_result_dtype(fn, *args) -> np.dtype:
    """The dtype ``fn`` (a NumPy function) returns for arguments like ``args``, in the
    mode's dtypes (canonicalised: with x64 off int32 + float32 is float32)."""
    return dtypes.canonicalize(_numpy_dtype(fn, tuple(_promotion_key(a) for a in args)))


class IntegerOverflowError(errors.ZeraxValueError, OverflowError):
    """A Python integer that does not fit the integer dtype it combines with (NumPy 2
    refuses it; JAX would wrap it around)."""


def as_dtype(x, dtype):
    """``x`` as a zerax value of ``dtype`` (Python scalars become 0-d constants)."""
    dtype = np.dtype(dtype)
    if type(x) in PY_SCALARS:
        try:
            return np.asarray(x, dtype=dtype)
        except OverflowError:
            raise IntegerOverflowError(
                f"Python integer {x} is out of bounds for {dtype}: NumPy 2 refuses to "
                f"combine it with an array of dtype {dtype} (JAX wraps it around). Use a "
                f"value in "
                f"range, or cast the array first, e.g. x.astype('int64').") from None
    if np.dtype(x.dtype) != dtype:
        return convert_element_type(x, dtype)
    return x


# --------------------------------------------------------------------------- nested lists


def _proxy(x):
    """``x`` with traced values replaced by NumPy stand-ins of the same shape and dtype."""
    if isinstance(x, Tracer):
        return np.zeros(x.shape, x.dtype)
    if isinstance(x, (list, tuple)):
        return [_proxy(e) for e in x]
    return x


def _lead1(x):
    if isinstance(x, np.ndarray):
        return x.reshape((1,) + x.shape)
    return reshape(x, (1,) + tuple(x.shape))


def _build(x, dtype):
    """A nested list holding traced values, stacked with primitives."""
    if isinstance(x, (list, tuple)):
        if not _has_tracer(x):
            return np.array(x, dtype=dtype)
        return concatenate([_lead1(_build(e, dtype)) for e in x], 0)
    if isinstance(x, Tracer):
        return as_dtype(x, dtype)
    return np.asarray(x, dtype=dtype)


def array_from_nested(x):
    """``zerax.numpy.array(x)`` for nested lists that hold traced values: NumPy's dtype
    for the same structure, the elements converted to it and stacked."""
    try:
        ref = np.asarray(np.array(_proxy(x)))
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        raise errors.ShapeError(f"zerax.numpy.array: {e}") from None
    except TypeError as e:
        raise errors.ZeraxTypeError(f"zerax.numpy.array: {e}") from None
    if dtype_kind(ref.dtype) not in "biufc":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.array: the result would have dtype {ref.dtype}, which zerax does "
            "not support (only bool, integer, float and complex)")
    out = _build(x, dtypes.canonicalize(ref.dtype.newbyteorder("=")))
    if isinstance(out, np.ndarray):
        out = Array._wrap(out)
    return out
