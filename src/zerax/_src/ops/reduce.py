"""Reduction primitives: sum, max, min, prod, argmax, argmin over axes, and the
cumulative sum, product, max and min along one axis.

Reductions keep the operand's dtype (``zerax.numpy`` converts first where NumPy
widens, e.g. ``sum`` of int32 gives int64).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..ad import Zero
from ..core import Primitive, ShapedArray, bind
from ._factory import deflinear, not_differentiable


def _norm_axes(axes, ndim):
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise errors.ShapeError(f"axis {a} is out of bounds for an array of rank {ndim}")
        out.append(a % max(ndim, 1))
    return tuple(sorted(set(out)))


def _reduced_aval(x, axes, dtype=None):
    return ShapedArray([n for i, n in enumerate(x.shape) if i not in axes], dtype or x.dtype)


def _keep_dims(x_shape, axes):
    return tuple(i for i in range(len(x_shape)) if i not in axes)


def _reduction(name, impl):
    prim = Primitive(name)
    prim.impl = impl
    prim.abstract_eval = lambda x, *, axes: _reduced_aval(x, axes)
    return prim


def _expand_back(y, x_shape, axes):
    """Broadcast a reduced value back to the operand's shape."""
    from .shape import broadcast_in_dim
    return broadcast_in_dim(y, x_shape, _keep_dims(x_shape, axes))


# --------------------------------------------------------------------------- sum

reduce_sum_p = _reduction("reduce_sum", lambda x, *, axes: np.sum(x, axis=axes, dtype=x.dtype))


def reduce_sum(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_sum_p, x, axes=axes)


deflinear(reduce_sum_p, lambda ct, x, *, axes: [_expand_back(ct, x.aval.shape, axes)])

# --------------------------------------------------------------------------- max / min


def _chooser_jvp(prim):
    """d max(x) = mean of the tangents at the positions that attain the max (JAX)."""

    def jvp(primals, tangents, *, axes):
        from .elementwise import convert_element_type, div, eq, mul
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axes=axes)
        if type(t) is Zero or ans.dtype.kind not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        location = convert_element_type(eq(x, _expand_back(ans, x.shape, axes)), x.dtype)
        counts = reduce_sum(location, axes)
        return ans, div(reduce_sum(mul(t, location), axes), counts)

    prim.jvp = jvp
    return prim


def _max_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.max(x, axis=axes)


def _min_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max if x.dtype.kind in "iu" else True
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.min(x, axis=axes)


reduce_max_p = _chooser_jvp(_reduction("reduce_max", _max_impl))
reduce_min_p = _chooser_jvp(_reduction("reduce_min", _min_impl))


def reduce_max(x, axes):
    return bind(reduce_max_p, x, axes=_norm_axes(axes, x.ndim))


def reduce_min(x, axes):
    return bind(reduce_min_p, x, axes=_norm_axes(axes, x.ndim))


# --------------------------------------------------------------------------- prod

reduce_prod_p = _reduction("reduce_prod", lambda x, *, axes: np.prod(x, axis=axes, dtype=x.dtype))


def reduce_prod(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_prod_p, x, axes=axes)


def _prod_jvp(primals, tangents, *, axes):
    # d prod = sum_i t_i * prod_{j != i} x_j, with the "product of the others" built from
    # exclusive cumulative products, so zeros in x are handled exactly.
    from .elementwise import mul
    from .shape import reshape, transpose
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if type(t) is Zero or ans.dtype.kind not in "fc":
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    keep = _keep_dims(x.shape, axes)
    perm = keep + axes
    kept_shape = [x.shape[i] for i in keep]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    xr = reshape(transpose(x, perm), kept_shape + [n])
    tr = reshape(transpose(t, perm), kept_shape + [n])
    others = _exclusive_products(xr)
    return ans, reduce_sum(mul(tr, others), (len(kept_shape),))


def _exclusive_products(x):
    """For each position along the last axis, the product of all other elements."""
    from .elementwise import mul
    from .shape import concatenate, slice_p_bind
    last = x.ndim - 1
    n = x.shape[last]
    ones = np.ones(tuple(x.shape[:-1]) + (1,), x.dtype)
    starts = [0] * x.ndim
    head = list(x.shape)
    head[last] = n - 1
    tail_start = list(starts)
    tail_start[last] = 1
    if n == 0:
        return x
    left = cumprod(concatenate([ones, slice_p_bind(x, starts, head)], last), last)
    right = cumprod(concatenate([slice_p_bind(x, tail_start, x.shape), ones], last), last,
                    reverse=True)
    return mul(left, right)


reduce_prod_p.jvp = _prod_jvp

# --------------------------------------------------------------------------- argmax / argmin


def _arg_abstract(x, *, axis, index_dtype):
    return ShapedArray([n for i, n in enumerate(x.shape) if i != axis], index_dtype)


def _arg_impl(fn):
    def impl(x, *, axis, index_dtype):
        if x.shape[axis] == 0:
            raise errors.ShapeError(f"attempt to get {fn.__name__} of an empty sequence")
        return fn(x, axis=axis).astype(index_dtype)
    return impl


argmax_p = not_differentiable(Primitive("argmax"), "it returns integer indices")
argmin_p = not_differentiable(Primitive("argmin"), "it returns integer indices")
argmax_p.impl, argmax_p.abstract_eval = _arg_impl(np.argmax), _arg_abstract
argmin_p.impl, argmin_p.abstract_eval = _arg_impl(np.argmin), _arg_abstract


def argmax(x, axis, index_dtype=np.int64):
    return bind(argmax_p, x, axis=_norm_axes((axis,), x.ndim)[0], index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype=np.int64):
    return bind(argmin_p, x, axis=_norm_axes((axis,), x.ndim)[0], index_dtype=np.dtype(index_dtype))


# --------------------------------------------------------------------------- cumulative


def _cumulative(name, ufunc):
    prim = Primitive(name)

    def impl(x, *, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype) if x.shape[axis] else x.copy()
        return np.flip(out, axis) if reverse else out

    prim.impl = impl
    prim.abstract_eval = lambda x, *, axis, reverse: ShapedArray(x.shape, x.dtype)
    return prim


cumsum_p = _cumulative("cumsum", np.add)
cumprod_p = _cumulative("cumprod", np.multiply)
cummax_p = _cumulative("cummax", np.maximum)
cummin_p = _cumulative("cummin", np.minimum)


def _cum_bind(prim, x, axis, reverse):
    return bind(prim, x, axis=_norm_axes((axis,), x.ndim)[0], reverse=bool(reverse))


def cumsum(x, axis, reverse=False):
    return _cum_bind(cumsum_p, x, axis, reverse)


def cumprod(x, axis, reverse=False):
    return _cum_bind(cumprod_p, x, axis, reverse)


def cummax(x, axis, reverse=False):
    return _cum_bind(cummax_p, x, axis, reverse)


def cummin(x, axis, reverse=False):
    return _cum_bind(cummin_p, x, axis, reverse)


deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def _prefix_scan(op, x, axis, reverse):
    """The cumulative ``op`` written as a log-depth (Hillis-Steele) scan of primitives.

    Its derivative is the derivative of this composition, which is exact where a
    formula like ``cumprod(x) * cumsum(t / x)`` would divide by zero."""
    from .shape import concatenate, rev, slice_p_bind
    if reverse:
        x = rev(x, (axis,))
    n = x.shape[axis]
    shift = 1
    while shift < n:
        limits = list(x.shape)
        limits[axis] = n - shift
        fill_shape = list(x.shape)
        fill_shape[axis] = shift
        shifted = concatenate([_identity_block(op, fill_shape, x.dtype),
                               slice_p_bind(x, [0] * x.ndim, limits)], axis)
        x = op(x, shifted)
        shift *= 2
    return rev(x, (axis,)) if reverse else x


def _identity_block(op, shape, dtype):
    from .elementwise import maximum, minimum, mul
    if op is mul:
        return np.ones(shape, dtype)
    if op is maximum:
        return np.full(shape, -np.inf, dtype)
    if op is minimum:
        return np.full(shape, np.inf, dtype)
    raise AssertionError(op)


def _scan_jvp(prim, op_name):
    def jvp(primals, tangents, *, axis, reverse):
        from .. import ad
        from . import elementwise
        op = getattr(elementwise, op_name)
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axis=axis, reverse=reverse)
        if type(t) is Zero or ans.dtype.kind not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        _, t_out = ad.jvp(lambda v: _prefix_scan(op, v, axis, reverse), (x,), (t,))
        return ans, t_out
    prim.jvp = jvp


_scan_jvp(cumprod_p, "mul")
_scan_jvp(cummax_p, "maximum")
_scan_jvp(cummin_p, "minimum")

for _p in (reduce_max_p, reduce_min_p, reduce_prod_p, cumprod_p, cummax_p, cummin_p):
    _p.unsupported["transpose"] = f"{_p.name} is not linear"


# --------------------------------------------------------------------------- batching


def _actual_axes(nd, d, axes):
    ex = [i for i in range(nd) if i != d]
    return tuple(ex[a] for a in axes)


def _reduction_batch(bind_fn):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        actual = _actual_axes(len(x.shape), d, axes)
        return bind_fn(x, actual), d - sum(1 for a in actual if a < d)
    return rule


def _arg_batch(prim):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        (actual,) = _actual_axes(len(x.shape), d, (axis,))
        return bind(prim, x, axis=actual, index_dtype=index_dtype), d - (actual < d)
    return rule


def _cum_batch(prim):
    def rule(args, dims, *, axis, reverse):
        (x,), (d,) = args, dims
        (actual,) = _actual_axes(len(x.shape), d, (axis,))
        return bind(prim, x, axis=actual, reverse=reverse), d
    return rule


reduce_sum_p.batch = _reduction_batch(reduce_sum)
reduce_max_p.batch = _reduction_batch(reduce_max)
reduce_min_p.batch = _reduction_batch(reduce_min)
reduce_prod_p.batch = _reduction_batch(reduce_prod)
argmax_p.batch = _arg_batch(argmax_p)
argmin_p.batch = _arg_batch(argmin_p)
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    _p.batch = _cum_batch(_p)
