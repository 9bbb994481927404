"""Kernel-IR rules of the reductions (``ops/reduce.py``), and the two orders every
reduction of this lowering takes (also the fused groups' trailing reductions).

- **Trailing axes** (the reduced axes are the last ones, as for a full reduction):
  each output element is a `kernel_ir.Reduce` over its run of elements, so float sums
  are pairwise (NumPy's blocks: the result is NumPy's to the bit for a contiguous
  operand), and the kept axes form an outer loop nest, parallel when large.
- **Other axes**: the output starts at the combiner's identity and the elements are
  combined into it in memory order, as NumPy's reduction loops do (the same bits as
  eager); only the kept axes before the first reduced one may run in parallel.
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from .. import kernel_ir as K
from ...ops.reduce import (argmax_p, argmin_p, cummax_p, cummin_p, cumprod_p, cumsum_p,
                           reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p)
from .context import Ctx, Unlowerable
from ...base.dtypes import kind as dtype_kind

COMBINER = {reduce_sum_p: "add", reduce_prod_p: "mul", reduce_max_p: "max",
            reduce_min_p: "min"}


def _unflatten(flat, dims):
    """The multi-index of ``flat`` in C order over ``dims`` (expressions)."""
    if len(dims) == 1:
        return [flat]
    if 0 in dims:          # (no element: never read)
        return [K.Const(0, K.I64)] * len(dims)
    out = []
    stride = math.prod(dims)
    for n in dims:
        stride //= n
        q = K.op("floordiv", flat, K.Const(stride, K.I64)) if stride > 1 else flat
        out.append(K.op("rem", q, K.Const(n, K.I64)) if out else q)
    return out


def reduce_trailing(ctx: Ctx, outvar, shape, axes, kind, value_at) -> None:
    """``outvar`` = the reduction of the values ``value_at(idx)`` over the trailing
    ``axes`` of ``shape`` (see the module's docstring)."""
    nd = len(shape)
    kept = shape[:nd - len(axes)]
    red_dims = tuple(shape[a] for a in axes)
    count = math.prod(red_dims)
    out_dtype = np.dtype(outvar.aval.dtype)
    dtype = _accumulator_dtype(kind, out_dtype)
    identity = K.Const(K.identity(kind, dtype), dtype)

    def one(kept_idx):
        acc = ctx.names.var("acc", dtype)
        ctx.emit(K.Declare(acc, identity))
        r = ctx.names.var("r", K.I64)
        with ctx.capture() as body:
            value = K.cast(value_at(tuple(kept_idx) + tuple(_unflatten(r, red_dims))), dtype)
        ctx.emit(K.Reduce(acc, kind, r, count, body, value))
        return K.cast(acc, out_dtype)

    if not kept:
        ctx.bind_scalar(outvar, one(()))
        return
    out = ctx.new_buffer(outvar)
    with ctx.nest(kept, parallel=ctx.large(count * math.prod(kept))) as idx:
        ctx.emit(K.Store(out, idx, one(idx)))


def _accumulator_dtype(kind, dtype):
    """Sums and products of bfloat16 accumulate in float32, rounded once at the end (as
    JAX's reductions and the NumPy impls, ops/reduce.py)."""
    return np.dtype(np.float32) if dtype.kind == "V" and kind in ("add", "mul") else dtype


def accumulate_in_order(ctx: Ctx, outvar, shape, axes, kind, value_at) -> None:
    """``outvar`` = the reduction over ``axes`` of ``value_at(idx)`` in memory order."""
    out_dtype = np.dtype(outvar.aval.dtype)
    dtype = _accumulator_dtype(kind, out_dtype)
    result = ctx.new_buffer(outvar)
    out = result if dtype == out_dtype else ctx.temp(result.shape, dtype)
    identity = K.Const(K.identity(kind, dtype), dtype)
    with ctx.nest(out.shape, parallel=False) as oidx:
        ctx.emit(K.Store(out, oidx, identity))
    lead = min(axes)
    large = ctx.large(math.prod(shape))
    with ctx.nest(shape[:lead], parallel=large) as outer, \
            ctx.nest(shape[lead:], parallel=False) as rest:
        idx = tuple(outer) + tuple(rest)
        value = value_at(idx)
        slot = tuple(i for d, i in enumerate(idx) if d not in axes)
        ctx.emit(K.Store(out, slot, _combine(kind, dtype, K.Load(out, slot),
                                             K.cast(value, dtype))))
    if out is not result:
        with ctx.nest(out.shape, parallel=False) as oidx:
            ctx.emit(K.Store(result, oidx, K.cast(K.Load(out, oidx), out_dtype)))


def _combine(kind, dtype, a, b):
    if np.dtype(dtype).kind == "b":
        return K.op("or" if kind in ("add", "max") else "and", a, b)
    return K.op(kind, a, b)


def _reduce_rule(kind):
    def rule(ctx: Ctx, eqn):
        (x,), (out,) = eqn.invars, eqn.outvars
        shape = tuple(x.aval.shape)
        nd = len(shape)
        axes = tuple(sorted(a for a in eqn.params["axes"] if a < nd))
        if nd == 0 or not axes:
            value = ctx.scalar(x) if nd == 0 else None
            if value is not None:
                ctx.bind_scalar(out, _combine(kind, out.aval.dtype,
                                              K.Const(K.identity(kind, out.aval.dtype),
                                                      out.aval.dtype), value))
                return
            buf = ctx.new_buffer(out)
            src = ctx.buffer(x)
            with ctx.nest(shape) as idx:
                ctx.emit(K.Store(buf, idx, K.Load(src, idx)))
            return
        src = ctx.buffer(x)

        def value_at(idx):
            return K.Load(src, idx)
        if axes == tuple(range(nd - len(axes), nd)):
            reduce_trailing(ctx, out, shape, axes, kind, value_at)
        else:
            accumulate_in_order(ctx, out, shape, axes, kind, value_at)
    return rule


rules = {p: _reduce_rule(k) for p, k in COMBINER.items()}


# --------------------------------------------------------------------------- arg, cumulative


def _arg_rule(kind):
    """argmax/argmin along one axis: the first occurrence wins, and the first NaN."""
    def rule(ctx: Ctx, eqn):
        (x,), (out,) = eqn.invars, eqn.outvars
        axis, index_dtype = eqn.params["axis"], np.dtype(eqn.params["index_dtype"])
        shape, dtype = tuple(x.aval.shape), np.dtype(x.aval.dtype)
        if shape == ():
            ctx.bind_scalar(out, K.Const(0, index_dtype))
            return
        if shape[axis] == 0:
            raise errors.ShapeError(f"attempt to get {kind} of an empty sequence")
        src = ctx.buffer(x)
        buf = ctx.new_buffer(out) if out.aval.shape != () else None
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        cmp = "gt" if kind == "argmax" else "lt"
        with ctx.nest(pre + post) as idx:
            pidx, qidx = idx[:len(pre)], idx[len(pre):]
            best = ctx.names.var("best", dtype)
            pos = ctx.names.var("pos", K.I64)
            ctx.emit(K.Declare(best, K.Load(src, pidx + (K.Const(0, K.I64),) + qidx)))
            ctx.emit(K.Declare(pos, K.Const(0, K.I64)))
            j = ctx.names.var("j", K.I64)
            v = ctx.names.var("v", dtype)
            better = K.op(cmp, v, best)
            if dtype_kind(dtype) == "f":       # replace a non-NaN best by a bigger value or a NaN
                better = K.op("and", K.op("eq", best, best),
                              K.op("or", better, K.op("ne", v, v)))
            elif dtype.kind == "c":
                raise Unlowerable(f"{kind} of complex numbers")
            ctx.emit(K.For(j, 1, n, [K.Let(v, K.Load(src, pidx + (j,) + qidx)),
                                     K.If(better, [K.Assign(best, v), K.Assign(pos, j)])]))
            result = K.cast(pos, index_dtype)
            if buf is None:
                ctx.bind_scalar(out, result)
            else:
                ctx.emit(K.Store(buf, idx, result))
    return rule


def _cumulative_rule(kind):
    """cumsum/cumprod/cummax/cummin along one axis (reversed: from the end), in order."""
    def rule(ctx: Ctx, eqn):
        (x,), (out,) = eqn.invars, eqn.outvars
        axis, reverse = eqn.params["axis"], eqn.params["reverse"]
        shape, dtype = tuple(x.aval.shape), np.dtype(x.aval.dtype)
        if shape == ():
            ctx.bind_scalar(out, ctx.scalar(x))
            return
        if dtype.kind == "c" and kind in ("max", "min"):
            raise Unlowerable(f"cum{kind} of complex numbers")
        src = ctx.buffer(x)
        buf = ctx.new_buffer(out)
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        if n == 0:
            return
        with ctx.nest(pre + post) as idx:
            pidx, qidx = idx[:len(pre)], idx[len(pre):]
            first = K.Const(n - 1 if reverse else 0, K.I64)
            acc = ctx.names.var("acc", dtype)
            ctx.emit(K.Declare(acc, K.Load(src, pidx + (first,) + qidx)))
            ctx.emit(K.Store(buf, pidx + (first,) + qidx, acc))
            j = ctx.names.var("j", K.I64)
            at = K.affine([(j, -1)], n - 1) if reverse else j
            ctx.emit(K.For(j, 1, n, [
                K.Assign(acc, _combine(kind, dtype, acc, K.Load(src, pidx + (at,) + qidx))),
                K.Store(buf, pidx + (at,) + qidx, acc)]))
    return rule


rules.update({argmax_p: _arg_rule("argmax"), argmin_p: _arg_rule("argmin"),
              cumsum_p: _cumulative_rule("add"), cumprod_p: _cumulative_rule("mul"),
              cummax_p: _cumulative_rule("max"), cummin_p: _cumulative_rule("min")})
