"""Argument handling shared by the samplers: dtypes, shapes, parameter broadcasting."""

from __future__ import annotations

import functools

import numpy as np

from .... import errors
from ...base import dtypes
from ...core.api_util import as_input
from ...core.core import Tracer
from ... import numpy as jnp
from ...ops import elementwise as ew
from .keys import PRNGKeyArray
from ...base.dtypes import kind as dtype_kind


def float_dtype(dtype, name, allow_complex=False):
    """The sampler's float dtype: the mode's default float (float64; float32 with x64 off)
    unless ``dtype`` is given (canonicalised for the mode, as JAX does)."""
    dt = dtypes.default_float() if dtype is None else dtypes.requested(dtype, name)
    kinds = "fc" if allow_complex else "f"
    if dt.kind not in kinds:
        what = "a float or complex" if allow_complex else "a float"
        raise errors.ZeraxValueError(
            f"dtype argument to `{name}` must be {what} dtype, got {dt.name}.")
    return dt


def int_dtype(dtype, name):
    dt = dtypes.default_int() if dtype is None else dtypes.requested(dtype, name)
    if dt.kind not in "iu":
        raise errors.ZeraxTypeError(
            f"{name} only accepts integer dtypes, got {dt.name}.")
    return dt


def inexact_param(x):
    """A parameter as floats: its own float dtype, integers the mode's default float."""
    return x if dtype_kind(np.dtype(x.dtype)) in "fc" else cast(x, dtypes.default_float())


def param(x, name, what):
    """A sampler parameter as a zerax value (keys are refused: they are not data)."""
    if isinstance(x, PRNGKeyArray):
        raise errors.KeyTypeError(
            f"{name}: {what} is a PRNG key, but a number or an array of numbers is expected.")
    if isinstance(x, Tracer):
        return x
    return as_input(x, f"{name}: {what}")


def check_shape(name, shape, **params):
    """JAX's rule: the parameters' shapes broadcast with ``shape`` to exactly ``shape``."""
    shape = tuple(shape)
    for what, p in params.items():
        pshape = tuple(np.shape(p)) if not hasattr(p, "shape") else tuple(p.shape)
        try:
            out = np.broadcast_shapes(shape, pshape)
        except ValueError:
            out = None
        if out != shape:
            raise errors.ShapeError(
                f"{name}: parameter {what} of shape {pshape} does not broadcast to the shape "
                f"argument {shape} (parameter shapes must broadcast to exactly `shape`). "
                f"Pass shape=None to use the parameters' broadcast shape, or reshape {what}.")


def broadcast_param_shapes(*params):
    try:
        return tuple(np.broadcast_shapes(*(tuple(p.shape) for p in params)))
    except ValueError:
        shapes = ", ".join(str(tuple(p.shape)) for p in params)
        raise errors.ShapeError(f"parameter shapes {shapes} do not broadcast together.") from None


def const(x, value):
    """A 0-d constant of ``x``'s dtype."""
    return np.array(value, dtype=np.dtype(x.dtype))


def scalar_of(dtype, value):
    """A 0-d constant of ``dtype``."""
    return np.array(value, dtype)


def cast(x, dtype):
    if np.dtype(x.dtype) == np.dtype(dtype):
        return x
    return ew.convert_element_type(x, np.dtype(dtype))


def bshape(x, shape):
    return jnp.broadcast_to(x, tuple(shape))


def quiet(fn):
    """Run a sampler with NumPy's floating-point warnings off: rejection samplers compute
    both branches of a select (an infinite ratio where p = 1, say) as JAX does, and the
    eager NumPy implementation must not warn about the branch that is thrown away."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return wrapper
