"""Tracing without computing: `ShapeDtypeStruct`, `eval_shape` and `make_jaxpr`.

The control-flow functions use them to find the types a branch or a loop body gives;
``zerax`` re-exports them (through ``api.extras``) as JAX's top-level functions.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import tree
from ..core.api_util import as_input
from ..core.array import Array
from ..core.core import ShapedArray, get_aval
from ..core.shape_poly import DimExpr
from ..ir.tracing import fun_name, trace_to_jaxpr


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array (``eval_shape``'s results and inputs).
    A dimension may be symbolic (``zerax.export.symbolic_shape``), for `zerax.export`.

    >>> ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(d if isinstance(d, DimExpr) and not d.is_constant() else int(d)
                           for d in shape)
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


def make_jaxpr(fun, static_argnums=(), return_shape: bool = False):
    """A function that returns the IR of ``fun`` for given example arguments, as JAX's:
    keyword arguments are traced inputs too, negative ``static_argnums`` count from the
    end, and ``return_shape=True`` also gives the result's tree of `ShapeDtypeStruct`.

    >>> import zerax as zx, zerax.numpy as znp
    >>> print(zx.make_jaxpr(lambda x: znp.sin(x) * 2.0)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
        c:f64[] = mul b 2.0:f64[]
      in (c,) }
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)
    name = fun_name(fun)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        n = len(args)
        static = {i % n for i in static_argnums if -n <= i < n}
        dyn_idx = [i for i in range(n) if i not in static]
        leaves, in_tree = tree.tree_flatten(([args[i] for i in dyn_idx], kwargs))
        # name each leaf by its argument (or keyword) for error messages
        where = [f"argument {i}" for i in dyn_idx for _ in tree.tree_leaves(args[i])] + \
            [f"keyword argument {k!r}" for k in sorted(kwargs)
             for _ in tree.tree_leaves(kwargs[k])]
        avals = [_aval(x, f"{w} of {name}") for x, w in zip(leaves, where)]
        out_box = []

        def flat(*tracers):
            dyn, kw = tree.tree_unflatten(in_tree, list(tracers))
            full = list(args)
            for i, v in zip(dyn_idx, dyn):
                full[i] = v
            out_leaves, out_tree = tree.tree_flatten(fun(*full, **kw))
            out_box.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat, avals, name)
        if return_shape:
            shapes = [ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.outvars]
            return closed, tree.tree_unflatten(out_box[-1], shapes)
        return closed

    return make
