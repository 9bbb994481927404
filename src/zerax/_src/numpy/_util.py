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
from ..ops.shape import broadcast_in_dim

_PY_SCALARS = (bool, int, float, complex)


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
            from .creation import array
            return array(x)
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


def _qualified(fname: str) -> str:
    """The name errors give: ``zerax.numpy.<fname>``, or ``fname`` itself when it names
    its namespace (``lax.reduce``)."""
    return fname if "." in fname else f"zerax.numpy.{fname}"


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
        from ..ops.shape import reshape
        x = reshape(x, [xs[i] for i in keep])
    return broadcast_in_dim(x, shape, tuple(nlead + i for i in keep))


def promote_and_broadcast(fname, args, dtype):
    """Convert every argument to ``dtype`` and a common shape."""
    shapes = [shape_of(a) for a in args]
    shape = shapes[0] if all(s == shapes[0] for s in shapes) else broadcast_shapes(fname, *shapes)
    out = []
    for a in args:
        a = as_dtype(a, dtype)
        out.append(broadcast_to_shape(a, shape) if tuple(a.shape) != shape and a.shape != () else a)
    return out


def normalize_axis(axis, ndim, fname="function"):
    if not isinstance(axis, (int, np.integer)):
        raise errors.ZeraxTypeError(f"{_qualified(fname)}: axis must be an integer, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1):
        raise errors.ShapeError(
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


def ensure_array(x, fname="function"):
    """A zerax value (Python scalars become 0-d Arrays of NumPy's default dtype)."""
    x = check_arg(x, fname)
    if type(x) in _PY_SCALARS:
        return Array._wrap(np.asarray(x))
    return x
