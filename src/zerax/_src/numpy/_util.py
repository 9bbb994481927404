"""Shared machinery of `zerax.numpy`: argument checks, NumPy-2 promotion, broadcasting.

Result dtypes are NumPy's own: the dtype a NumPy function gives for arguments of the
same dtypes (Python scalars passed as Python scalars, so they stay weak) is asked of
NumPy once, on tiny samples, and cached.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from ..ops.values import (  # noqa: F401  (the numpy layer's argument handling, shared with ops)
    IntegerOverflowError, _build, _has_tracer, _lead1, _numpy_dtype, _promotion_key, _proxy,
    as_dtype, check_arg, numpy_result_dtype, weak_type_of)
from ..base.dtypes import kind as dtype_kind
from ..lax._util import (  # noqa: F401  (re-exported to the numpy modules)
    _PY_SCALARS, _qualified, broadcast_shapes, broadcast_to_shape, normalize_axes,
    normalize_axis, shape_of)


def _sample(x):
    """A stand-in for ``x`` that promotes exactly as ``x`` does."""
    if type(x) in _PY_SCALARS:
        return type(x)(1)
    return np.ones((), np.dtype(x.dtype))


_WEAK_TYPE_OF_KIND = {"i": int, "u": int, "f": float, "c": complex}


def keep_weak(out, *inputs):
    """``out`` of an elementwise function of ``inputs``: weak when every input is (a
    traced weak value combined only with weak ones stays weak, as in JAX)."""
    if isinstance(out, Tracer) and any(isinstance(a, Tracer) for a in inputs) and \
            all(weak_type_of(a) is not None for a in inputs):
        out._weak_type = _WEAK_TYPE_OF_KIND.get(np.dtype(out.dtype).kind)
    return out


def result_type(*args) -> np.dtype:
    """NumPy 2's promotion of ``args`` (Python scalars and weak traced values weak), in
    the mode's dtypes."""
    return dtypes.result_type(*[a if type(a) in _PY_SCALARS else _weak_sample(a) for a in args])


def _weak_sample(a):
    w = weak_type_of(a)
    return w(0) if w is not None else np.dtype(a.dtype)


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
    """A zerax value (Python scalars become 0-d Arrays of the mode's default dtype)."""
    x = check_arg(x, fname)
    if type(x) in _PY_SCALARS:
        try:
            return Array._wrap(dtypes.scalar_array(x))
        except OverflowError as e:
            raise IntegerOverflowError(f"zerax.numpy.{fname}: {e}") from None
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
    out = dtypes.canonical_ndarray(np.asarray(out))
    if dtype_kind(out.dtype) not in "biufc":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: the result would have dtype {out.dtype}, which zerax does "
            "not support (only bool, integer, float and complex)")
    # Copied in native byte order: big-endian input is converted once, on entry.
    return Array._wrap(np.array(out, dtype=out.dtype.newbyteorder("=")))


def array_of_list(x, dtype=None):
    """A nested list holding traced values as one array, in the dtype NumPy gives the
    list (or ``dtype``): what ``zerax.numpy.array`` does with such a list."""
    ref = _wrap_np("array", np.array, _proxy(x), dtype=dtype)
    out = _build(x, dtypes.canonicalize(ref.dtype))
    return Array._wrap(out) if isinstance(out, np.ndarray) else out
