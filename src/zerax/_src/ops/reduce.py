"""Reduction primitives: sum, max, min, prod, argmax, argmin over axes, and the
cumulative sum, product, max and min along one axis, with their rules.

Reductions keep the operand's dtype (``zerax.numpy`` converts first where NumPy
widens, e.g. ``sum`` of int32 gives int64).  ``reduce_sum`` and ``broadcast_in_dim``
are each other's transpose, and the padding value's cotangent of ``pad`` is a sum: those
two primitives (from `shape` and `slicing`, below) get their JVP and transpose here.
The lowerings are in ``backends/lowering/reduce.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.core import Primitive, ShapedArray, bind
from . import _factory
from ._factory import deflinear, not_differentiable
from .elementwise import convert_element_type, div, eq, maximum, minimum, mul, sub
from .shape import (_bid_summed_axes, broadcast_in_dim, broadcast_in_dim_p, concatenate, pad,
                    pad_p, reshape, rev, slice_p_bind, transpose)
from ..interpreters import ad
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules
from ..base.dtypes import kind as dtype_kind


def _norm_axes(axes, ndim):
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:  # as NumPy: a 0-d array has no axis to reduce
            raise errors.AxisError(f"axis {a} is out of bounds for an array of rank {ndim}")
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
    return broadcast_in_dim(y, x_shape, _keep_dims(x_shape, axes))


# --------------------------------------------------------------------------- sum

def _in_float32(fn):
    """A sum or product whose bfloat16 operand is accumulated in float32 and rounded
    once (JAX's rule; ml_dtypes' own loops would round every partial sum: 1000 ones
    would sum to 256)."""
    def impl(x, *, axes):
        if x.dtype.kind == "V":
            return fn(x.astype(np.float32), axes=axes).astype(x.dtype)
        return fn(x, axes=axes)
    return impl


reduce_sum_p = _reduction("reduce_sum",  # np.sum without its Python-level dispatch
                          _in_float32(lambda x, *, axes: np.add.reduce(x, axis=axes,
                                                                       dtype=x.dtype)))


def reduce_sum(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_sum_p, x, axes=axes)


deflinear(reduce_sum_p, lambda ct, x, *, axes: [_expand_back(ct, x.aval.shape, axes)])


def _expand_back_np(y, x_shape, axes):
    """`_expand_back` on NumPy values (for the tape's VJP rules)."""
    out = np.empty(x_shape, y.dtype)
    out[...] = y.reshape([1 if i in axes else n for i, n in enumerate(x_shape)])
    return out


vjp_rules[reduce_sum_p] = (lambda ct, ans, x, *, axes: _expand_back_np(ct, x.shape, axes),)


# broadcast_in_dim (declared in `shape`) is linear; its transpose sums the axes it
# created or stretched.
def _bid_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    axes = _bid_summed_axes(in_shape, shape, broadcast_dimensions)
    out = reduce_sum(ct, axes=axes) if axes else ct
    if tuple(out.shape) != in_shape:
        out = reshape(out, in_shape)
    return [out]


deflinear(broadcast_in_dim_p, _bid_transpose)


# pad (declared in `slicing`) is linear in (operand, padding value); the padding value's
# cotangent is the sum of the padded positions of the cotangent.
def _pad_transpose(ct, x, pv, *, padding_config):
    res = [None, None]
    if is_undefined(x):
        uncrop = tuple((max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config)
        full = pad(ct, np.zeros((), ct.dtype), uncrop)
        in_shape = x.aval.shape
        starts = [max(lo, 0) for lo, _, _ in padding_config]
        limits = [s + ((n - 1) * (i + 1) + 1 if n > 0 else 0)
                  for s, n, (_, _, i) in zip(starts, in_shape, padding_config)]
        strides = [i + 1 for _, _, i in padding_config]
        res[0] = slice_p_bind(full, starts, limits, strides)
    if is_undefined(pv):
        total = reduce_sum(ct, axes=tuple(range(len(ct.shape))))
        inner = res[0] if res[0] is not None else None
        if inner is not None:
            total = sub(total, reduce_sum(inner, axes=tuple(range(len(inner.shape)))))
        else:
            # The operand is a constant: its positions carry no padding value.
            mask = pad(np.zeros(x.shape, ct.dtype), np.ones((), ct.dtype), padding_config)
            total = reduce_sum(mul(ct, mask), axes=tuple(range(len(ct.shape))))
        res[1] = total
    return res


deflinear(pad_p, _pad_transpose)

# --------------------------------------------------------------------------- max / min


def _chooser_jvp(prim):
    """d max(x) = mean of the tangents at the positions that attain the max (JAX)."""

    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axes=axes)
        if type(t) is Zero or dtype_kind(ans.dtype) not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        location = convert_element_type(eq(x, _expand_back(ans, x.shape, axes)), x.dtype)
        counts = reduce_sum(location, axes)
        return ans, div(reduce_sum(mul(t, location), axes), counts)

    def vjp(ct, ans, x, *, axes):  # the transpose of the JVP above, on NumPy values
        location = np.equal(x, _expand_back_np(ans, x.shape, axes)).astype(x.dtype)
        counts = np.add.reduce(location, axis=axes, dtype=x.dtype)
        return _expand_back_np(ct / counts, x.shape, axes) * location

    jvp_rules[prim] = jvp
    vjp_rules[prim] = (vjp,)
    return prim


def _max_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = -np.inf if dtype_kind(x.dtype) == "f" else np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.max(x, axis=axes)


def _min_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = np.inf if dtype_kind(x.dtype) == "f" else np.iinfo(x.dtype).max if x.dtype.kind in "iu" else True
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.min(x, axis=axes)


reduce_max_p = _chooser_jvp(_reduction("reduce_max", _max_impl))
reduce_min_p = _chooser_jvp(_reduction("reduce_min", _min_impl))


def reduce_max(x, axes):
    return bind(reduce_max_p, x, axes=_norm_axes(axes, x.ndim))


def reduce_min(x, axes):
    return bind(reduce_min_p, x, axes=_norm_axes(axes, x.ndim))


# --------------------------------------------------------------------------- prod

reduce_prod_p = _reduction("reduce_prod", _in_float32(
    lambda x, *, axes: np.prod(x, axis=axes, dtype=x.dtype)))


def reduce_prod(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_prod_p, x, axes=axes)


def _prod_jvp(primals, tangents, *, axes):
    # d prod = sum_i t_i * prod_{j != i} x_j, with the "product of the others" built from
    # exclusive cumulative products, so zeros in x are handled exactly.
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if type(t) is Zero or dtype_kind(ans.dtype) not in "fc":
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


jvp_rules[reduce_prod_p] = _prod_jvp

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
    if op is mul:
        return np.ones(shape, dtype)
    if op is maximum:
        return np.full(shape, -np.inf, dtype)
    if op is minimum:
        return np.full(shape, np.inf, dtype)
    raise AssertionError(op)


def _scan_jvp(prim, op):
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axis=axis, reverse=reverse)
        if type(t) is Zero or dtype_kind(ans.dtype) not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        _, t_out = ad.jvp(lambda v: _prefix_scan(op, v, axis, reverse), (x,), (t,))
        return ans, t_out
    jvp_rules[prim] = jvp


_scan_jvp(cumprod_p, mul)
_scan_jvp(cummax_p, maximum)
_scan_jvp(cummin_p, minimum)

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


batch_rules[reduce_sum_p] = _reduction_batch(reduce_sum)
batch_rules[reduce_max_p] = _reduction_batch(reduce_max)
batch_rules[reduce_min_p] = _reduction_batch(reduce_min)
batch_rules[reduce_prod_p] = _reduction_batch(reduce_prod)
batch_rules[argmax_p] = _arg_batch(argmax_p)
batch_rules[argmin_p] = _arg_batch(argmin_p)
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    batch_rules[_p] = _cum_batch(_p)


_factory.install(reduce_sum=reduce_sum)  # for the elementwise rules' broadcasting
