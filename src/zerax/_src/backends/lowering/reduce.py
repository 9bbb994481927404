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

from .. import kernel_ir as K
from ...ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p
from .context import PARALLEL_THRESHOLD, Ctx

COMBINER = {reduce_sum_p: "add", reduce_prod_p: "mul", reduce_max_p: "max",
            reduce_min_p: "min"}


def _unflatten(flat, dims):
    """The multi-index of ``flat`` in C order over ``dims`` (expressions)."""
    if len(dims) == 1:
        return [flat]
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
    dtype = np.dtype(outvar.aval.dtype)
    identity = K.Const(K.identity(kind, dtype), dtype)

    def one(kept_idx):
        acc = ctx.names.var("acc", dtype)
        ctx.emit(K.Declare(acc, identity))
        r = ctx.names.var("r", K.I64)
        with ctx.capture() as body:
            value = value_at(tuple(kept_idx) + tuple(_unflatten(r, red_dims)))
        ctx.emit(K.Reduce(acc, kind, r, count, body, value))
        return acc

    if not kept:
        ctx.bind_scalar(outvar, one(()))
        return
    out = ctx.new_buffer(outvar)
    with ctx.nest(kept, parallel=count * math.prod(kept) >= PARALLEL_THRESHOLD) as idx:
        ctx.emit(K.Store(out, idx, one(idx)))


def accumulate_in_order(ctx: Ctx, outvar, shape, axes, kind, value_at) -> None:
    """``outvar`` = the reduction over ``axes`` of ``value_at(idx)`` in memory order."""
    dtype = np.dtype(outvar.aval.dtype)
    out = ctx.new_buffer(outvar)
    identity = K.Const(K.identity(kind, dtype), dtype)
    with ctx.nest(out.shape, parallel=False) as oidx:
        ctx.emit(K.Store(out, oidx, identity))
    lead = min(axes)
    large = math.prod(shape) >= PARALLEL_THRESHOLD
    with ctx.nest(shape[:lead], parallel=large) as outer, \
            ctx.nest(shape[lead:], parallel=False) as rest:
        idx = tuple(outer) + tuple(rest)
        value = value_at(idx)
        slot = tuple(i for d, i in enumerate(idx) if d not in axes)
        ctx.emit(K.Store(out, slot, _combine(kind, dtype, K.Load(out, slot), value)))


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
