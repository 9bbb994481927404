"""Small pieces of JAX's top-level API that ported code uses: shapes without running
(`eval_shape`, `ShapeDtypeStruct`), `linear_transpose`, and the device calls that are
no-ops on zerax's CPU arrays (`block_until_ready`, `device_put`, `devices`)."""

from __future__ import annotations

import numpy as np

from . import tree
from .ad import vjp
from .api_util import as_input
from .array import Array
from .core import ShapedArray, get_aval
from .tracing import fun_name, trace_to_jaxpr


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array (``eval_shape``'s results and inputs).

    >>> ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def _aval(x, what):
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (Array, np.ndarray)):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))   # e.g. jax.ShapeDtypeStruct
    return get_aval(as_input(x, what))


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a tree of
    `ShapeDtypeStruct`, found by tracing: nothing is computed. Arguments may be arrays
    or anything with ``.shape`` and ``.dtype``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.eval_shape(lambda x: (x @ x.T, x.sum()), ShapeDtypeStruct((3, 4), np.float32))
    (ShapeDtypeStruct(shape=(3, 3), dtype=float32), ShapeDtypeStruct(shape=(), dtype=float32))
    """
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    avals = [_aval(x, f"argument of {fun_name(fun)}") for x in leaves]
    out_box = []

    def flat(*tracers):
        a, kw = tree.tree_unflatten(in_tree, list(tracers))
        out_leaves, out_tree = tree.tree_flatten(fun(*a, **kw))
        out_avals = [get_aval(as_input(o, f"output of {fun_name(fun)}")) for o in out_leaves]
        out_box.append((out_tree, out_avals))
        return out_leaves

    trace_to_jaxpr(flat, avals, fun_name(fun))
    out_tree, out_avals = out_box[-1]
    return tree.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype)
                                          for a in out_avals])


def linear_transpose(fun, *primals):
    """The transpose of the linear function ``fun``: ``f_t(ct)`` returns a tuple of
    cotangents shaped like ``primals`` (which only give shapes and dtypes).

    >>> import zerax as zx
    >>> f_t = zx.linear_transpose(lambda x: 3.0 * x, 1.0)
    >>> f_t(1.0)
    (Array(3., dtype=float64),)
    """
    zeros = tree.tree_map(lambda p: np.zeros(_aval(p, "primal").shape, _aval(p, "primal").dtype),
                          primals)

    def transposed(ct):
        return vjp(fun, *zeros)[1](ct)
    return transposed


def block_until_ready(x):
    """``x`` itself: zerax computes eagerly on the CPU, so results are always ready."""
    return x


def device_put(x, device=None):
    """``x`` with every leaf as a zerax Array (there is one device: the CPU)."""
    return tree.tree_map(lambda v: v if isinstance(v, Array) else Array._wrap(
        np.array(as_input(v, "device_put argument"))), x)


class CpuDevice:
    """The one device zerax computes on."""

    id = 0
    platform = "cpu"
    device_kind = "cpu"

    def __repr__(self):
        return "CpuDevice(id=0)"


_CPU = CpuDevice()


def devices(backend=None):
    """``[CpuDevice(id=0)]``."""
    return [_CPU]


def default_backend():
    return "cpu"
