"""Shared machinery of `zerax.numpy`: argument checks, NumPy-2 promotion, broadcasting.

Result dtypes are NumPy's own: the dtype a NumPy function gives for arguments of the
same dtypes (Python scalars passed as Python scalars, so they stay weak) is asked of
NumPy once, on tiny samples, and cached.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..core.array import Array
from ..core.core import Tracer
from ..ops.elementwise import convert_element_type
from ..ops import shape as sh
from ..lax._util import (_PY_SCALARS, _qualified, broadcast_shapes, broadcast_to_shape, normalize_axes,
                         normalize_axis, shape_of)


def check_arg(x, fname: str, pos: int = 0):
    """Accept zerax values, NumPy values, Python scalars and nested lists."""
    if isinstance(x, (Array, Tracer)) or type(x) in _PY_SCALARS:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind not in "biufc":
            raise errors.ZeraxTypeError(
                f"{_qualified(fname)}: argument {pos} has dtype {x.dtype}, which zerax does not "
                "support (only bool, integer, float and complex arrays)")
        return Array._wrap(np.array(x))
    if isinstance(x, (list, tuple)):
        try:
            arr = np.array(x)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.dtype.kind in "biufc":
            return Array._wrap(arr)
        if any(isinstance(e, Tracer) for e in _flat(x)):
            return array_of_list(x)
    raise errors.ZeraxTypeError(
        f"{_qualified(fname)}: argument {pos} has type {type(x).__name__} ({x!r:.60}); expected "
        "an array, a Python number or a (nested) list of numbers.")


def _flat(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _flat(e)
    else:
        yield x


def _sample(x):
    """A stand-in for ``x`` that promotes exactly as ``x`` does."""
    if type(x) in _PY_SCALARS:
        return type(x)(1)
    return np.ones((), np.dtype(x.dtype))


@functools.lru_cache(maxsize=4096)
def _numpy_dtype(fn, keys):
    samples = [k() if isinstance(k, type) and k in _PY_SCALARS else np.ones((), k) for k in keys]
    with np.errstate(all="ignore"):
        out = fn(*samples)
    return np.asarray(out).dtype


_WEAK_TYPE_OF_KIND = {"i": int, "u": int, "f": float, "c": complex}


def weak_type_of(x):
    """The Python scalar type ``x`` promotes as (NumPy 2's weak scalars, JAX's weak
    types): a Python number's own type, or a traced value's ``_weak_type``; None for
    everything else, which promotes by its dtype."""
    t = type(x)
    if t in _PY_SCALARS:
        return t
    return x._weak_type if isinstance(x, Tracer) else None


def keep_weak(out, *inputs):
    """``out`` of an elementwise function of ``inputs``: weak when every input is (a
    traced weak value combined only with weak ones stays weak, as in JAX)."""
    if isinstance(out, Tracer) and any(isinstance(a, Tracer) for a in inputs) and \
            all(weak_type_of(a) is not None for a in inputs):
        out._weak_type = _WEAK_TYPE_OF_KIND.get(np.dtype(out.dtype).kind)
    return out


def _promotion_key(a):
    w = weak_type_of(a)
    return w if w is not None else np.dtype(a.dtype)


def numpy_result_dtype(fn, *args) -> np.dtype:
    """The dtype ``fn`` (a NumPy function) returns for arguments like ``args``."""
    return _numpy_dtype(fn, tuple(_promotion_key(a) for a in args))


def result_type(*args) -> np.dtype:
    return np.result_type(*[a if type(a) in _PY_SCALARS else _weak_sample(a) for a in args])


def _weak_sample(a):
    w = weak_type_of(a)
    return w(0) if w is not None else np.dtype(a.dtype)


class IntegerOverflowError(errors.ZeraxValueError, OverflowError):
    """A Python integer that does not fit the integer dtype it combines with (NumPy 2
    refuses it; JAX would wrap it around)."""


def as_dtype(x, dtype):
    """``x`` as a zerax value of ``dtype`` (Python scalars become 0-d constants)."""
    dtype = np.dtype(dtype)
    if type(x) in _PY_SCALARS:
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


def promote_and_broadcast(fname, args, dtype):
    """Convert every argument to ``dtype`` and a common shape."""
    shapes = [shape_of(a) for a in args]
    shape = shapes[0] if all(s == shapes[0] for s in shapes) else broadcast_shapes(fname, *shapes)
    out = []
    for a in args:
        a = as_dtype(a, dtype)
        out.append(broadcast_to_shape(a, shape) if tuple(a.shape) != shape and a.shape != () else a)
    return out


def ensure_array(x, fname="function"):
    """A zerax value (Python scalars become 0-d Arrays of NumPy's default dtype)."""
    x = check_arg(x, fname)
    if type(x) in _PY_SCALARS:
        return Array._wrap(np.asarray(x))
    return x


# --------------------------------------------------------------------------- arrays of lists


def _wrap_np(fname, fn, *args, **kwargs):
    """Run a NumPy constructor on static arguments, turning its errors into zerax's."""
    try:
        out = fn(*args, **kwargs)
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        raise errors.ShapeError(f"zerax.numpy.{fname}: {e}") from None
    except TypeError as e:
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: {e}") from None
    out = np.asarray(out)
    if out.dtype.kind not in "biufc":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: the result would have dtype {out.dtype}, which zerax does "
            "not support (only bool, integer, float and complex)")
    # Copied in native byte order: big-endian input is converted once, on entry.
    return Array._wrap(np.array(out, dtype=out.dtype.newbyteorder("=")))


def _has_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tracer(e) for e in x)
    return False


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
    return sh.reshape(x, (1,) + tuple(x.shape))


def _build(x, dtype):
    """A nested list holding traced values, stacked with primitives."""
    if isinstance(x, (list, tuple)):
        if not _has_tracer(x):
            return np.array(x, dtype=dtype)
        return sh.concatenate([_lead1(_build(e, dtype)) for e in x], 0)
    if isinstance(x, Tracer):
        return as_dtype(x, dtype)
    return np.asarray(x, dtype=dtype)


def array_of_list(x, dtype=None):
    """A nested list holding traced values as one array, in the dtype NumPy gives the
    list (or ``dtype``): what ``zerax.numpy.array`` does with such a list."""
    ref = _wrap_np("array", np.array, _proxy(x), dtype=dtype)
    out = _build(x, np.dtype(ref.dtype))
    return Array._wrap(out) if isinstance(out, np.ndarray) else out
