"""Sorting primitives: ``sort`` (differentiable) and ``argsort`` (integer indices).

Both sort stably along one dimension with NumPy's order (NaNs last; complex numbers
lexicographically).  The derivative of ``sort`` moves the tangent the way the values
moved: a gather of the tangent by the sorting permutation (``argsort``), which
transposes to a scatter-add.  Batching sorts along the same dimension of the batched
operand (the batch dimension stays where it is).  Under jit a sort is a host
step between the kernels (its NumPy implementation: ``backends/lowering/``).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from ._factory import not_differentiable
from .gather import take_along_axis
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules
from ..base.dtypes import kind as dtype_kind


def _norm_dim(dimension, ndim, name):
    d = int(dimension)
    if ndim == 0 or not -ndim <= d < ndim:
        raise errors.AxisError(
            f"{name}: dimension {dimension} is out of bounds for an array of rank {ndim}")
    return d % ndim


# --------------------------------------------------------------------------- sort

sort_p = Primitive("sort")


def sort(x, dimension=-1, is_stable=True):
    """``x`` sorted along ``dimension`` (ascending, stable, NaNs last)."""
    return bind(sort_p, x, dimension=_norm_dim(dimension, x.ndim, "sort"))


def _sort_impl(x, *, dimension):
    return np.sort(x, axis=dimension, kind="stable")


def _sort_abstract(x, *, dimension):
    _norm_dim(dimension, x.ndim, "sort")
    return ShapedArray(x.shape, x.dtype)


def _sort_jvp(primals, tangents, *, dimension):
    (x,), (t,) = primals, tangents
    out = bind(sort_p, x, dimension=dimension)
    if type(t) is Zero or dtype_kind(out.dtype) not in "fc":
        return out, Zero(ShapedArray(out.shape, out.dtype))
    perm = bind(argsort_p, x, dimension=dimension)
    return out, take_along_axis(t, perm, dimension)


sort_p.impl = _sort_impl
sort_p.abstract_eval = _sort_abstract
jvp_rules[sort_p] = _sort_jvp
sort_p.unsupported["transpose"] = "sort is not linear (its derivative is a gather)"

# --------------------------------------------------------------------------- argsort

argsort_p = not_differentiable(Primitive("argsort"), "it returns integer indices")


def argsort(x, dimension=-1, is_stable=True):
    """The int64 permutation that sorts ``x`` along ``dimension`` (stable, NaNs last)."""
    return bind(argsort_p, x, dimension=_norm_dim(dimension, x.ndim, "argsort"))


def _argsort_impl(x, *, dimension):
    return np.argsort(x, axis=dimension, kind="stable").astype(np.int64)


def _argsort_abstract(x, *, dimension):
    _norm_dim(dimension, x.ndim, "argsort")
    return ShapedArray(x.shape, np.int64)


argsort_p.impl = _argsort_impl
argsort_p.abstract_eval = _argsort_abstract

# --------------------------------------------------------------------------- batching


def _sort_batch(prim):
    def rule(args, dims, *, dimension):
        (x,), (d,) = args, dims
        return bind(prim, x, dimension=dimension + (dimension >= d)), d
    batch_rules[prim] = rule
    return rule


_sort_batch(sort_p)
_sort_batch(argsort_p)

__all__ = ["sort", "argsort", "sort_p", "argsort_p"]
