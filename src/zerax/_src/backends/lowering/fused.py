"""Fused groups (``backends/fusion.py``'s plan) as one loop nest each.

A group's elementwise equations compute scalars inside the nest; broadcasts read their
operand at the mapped index; only the values used outside the group are stored.  A
group may end with a reduction of one of its values, accumulated inside the same nest
(`reduce.py`'s order: pairwise over trailing reduced axes, NumPy's memory order
otherwise).  0-d operands from outside are read once, before the loops.
"""

from __future__ import annotations

import math

from .. import kernel_ir as K
from ..fusion import (_REDUCTIONS, _group_shape, _is_broadcast, concat_sources,
                      independent_parts)
from ...ir.ir import Literal, Var
from .context import PARALLEL_BLOCK_ELEMENTS, Ctx, Unlowerable
from .elementwise import scalar_rules
from .reduce import COMBINER, accumulate_in_order, reduce_trailing


def lower_fused(ctx: Ctx, eqns, total_uses) -> None:
    shape = _group_shape(eqns[0])
    reduction = eqns[-1] if eqns[-1].primitive in _REDUCTIONS else None
    body = eqns[:-1] if reduction is not None else eqns
    produced = {v for e in body for v in e.outvars}
    inner_uses: dict = {}
    for e in eqns:
        for a in e.invars:
            if type(a) is Var and a in produced:
                inner_uses[a] = inner_uses.get(a, 0) + 1
    stored = [v for e in body for v in e.outvars
              if total_uses.get(v, 0) > inner_uses.get(v, 0)]
    if shape == ():
        for e in eqns:
            ctx.bind_scalar(e.outvars[0], _element(ctx, e, [ctx.scalar(a) for a in e.invars]))
        return
    # 0-d operands from outside: read once, before the loops
    pre: dict = {}
    for e in body:
        for a in e.invars:
            if type(a) is Var and a not in produced and a.aval.shape == () and a not in pre:
                pre[a] = _hoisted(ctx, ctx.scalar(a))
    buffers = {v: ctx.new_buffer(v) for v in stored}

    def elements(idx, eqns_=body):
        """The statements of one element at index ``idx`` (of the equations ``eqns_``,
        a part of the body); returns its values."""
        local: dict = {}
        for e in eqns_:
            if _is_broadcast(e):
                local[e.outvars[0]] = _broadcast_read(ctx, e, idx, pre)
                continue
            if id(e) in ctx.index_reads.concats:
                local[e.outvars[0]] = _concat_read(ctx, e, idx)
                continue
            args = []
            for a in e.invars:
                if type(a) is Literal:
                    args.append(ctx.scalar(a))
                elif a in local:
                    args.append(local[a])
                elif a in pre:
                    args.append(pre[a])
                elif ctx.buffer(a).root.kind == "sum":
                    # (a sum over processes adds every process's slot: once per element)
                    local[a] = ctx.names.var("x", a.aval.dtype)
                    ctx.emit(K.Let(local[a], K.Load(ctx.buffer(a), idx)))
                    args.append(local[a])
                else:
                    args.append(K.Load(ctx.buffer(a), idx))
            local[e.outvars[0]] = _let(ctx, _element(ctx, e, args))
        for v in stored:
            if v in local:
                ctx.emit(K.Store(buffers[v], idx, local[v]))
        return local

    if reduction is None:
        parts = independent_parts(body, lambda e: concat_sources(e, ctx.index_reads)
                                  if id(e) in ctx.index_reads.concats else e.invars) \
            if ctx.depth == 0 and ctx.large(math.prod(shape)) else [body]
        if len(parts) > 1:
            _blocked_parts(ctx, shape, parts, elements)
            return
        with ctx.nest(shape) as idx:
            elements(idx)
        return
    red_in = reduction.invars[0]
    kind = COMBINER[reduction.primitive]
    axes = tuple(reduction.params["axes"])
    if axes == tuple(range(len(shape) - len(axes), len(shape))):
        reduce_trailing(ctx, reduction.outvars[0], shape, axes, kind,
                        lambda idx: elements(idx)[red_in])
    else:
        accumulate_in_order(ctx, reduction.outvars[0], shape, axes, kind,
                            lambda idx: elements(idx)[red_in])


def fusible(eqn) -> bool:
    """Whether the kernel-IR lowering computes ``eqn`` one element at a time."""
    return eqn.primitive in scalar_rules


def _element(ctx, eqn, args) -> K.Expr:
    rule = scalar_rules.get(eqn.primitive)
    if rule is None:
        raise Unlowerable(f"{eqn.primitive.name} has no kernel-IR rule")
    extra = {"let": lambda e: _let(ctx, e)} if getattr(rule, "needs_let", False) else {}
    return rule(args, [a.aval.dtype for a in eqn.invars], eqn.outvars[0].aval.dtype,
                **eqn.params, **extra)


def _let(ctx, expr):
    if type(expr) in (K.Var, K.Const, K.Load):
        return expr
    v = ctx.names.var("x", expr.dtype)
    ctx.emit(K.Let(v, expr))
    return v


def _hoisted(ctx, expr):
    """A 0-d operand read before the loops (a `Let`), so the loop body reads a name."""
    if type(expr) in (K.Var, K.Const):
        return expr
    v = ctx.names.var("p", expr.dtype)
    ctx.emit(K.Let(v, expr))
    return v


def _broadcast_read(ctx, eqn, idx, pre):
    """A broadcast read in place: the loop index mapped to the operand's."""
    (x,) = eqn.invars
    if type(x) is Literal or x.aval.shape == ():
        if type(x) is Var and x in pre:
            return pre[x]
        return ctx.scalar(x)
    out_shape = eqn.params["shape"]
    dims = eqn.params["broadcast_dimensions"]
    src = [K.Const(0, K.I64) if x.aval.shape[j] == 1 and out_shape[d] != 1 else idx[d]
           for j, d in enumerate(dims)]
    if ctx.is_scalar(x):
        return ctx.scalar(x)
    return K.Load(ctx.buffer(x), src)



def _concat_read(ctx, eqn, idx):
    """A concatenation read in place: the element of the piece the index falls in (a
    deferred slice read at its shifted index in its operand; ``fusion.index_reads``),
    chosen by a branch on the concatenated axis' index (one piece's range at a time:
    well predicted, and no out-of-bounds load is ever made)."""
    axis = eqn.params["dimension"]
    out = ctx.names.var("c", eqn.outvars[0].aval.dtype)
    pieces, offset = [], 0
    for a, src in zip(eqn.invars, concat_sources(eqn, ctx.index_reads)):
        n = a.aval.shape[axis]
        if n:
            sl = ctx.index_reads.slices.get(a)
            starts = sl.params["start_indices"] if sl is not None else (0,) * len(idx)
            strides = (sl.params["strides"] if sl is not None else None) or (1,) * len(idx)
            at = tuple(K.affine([(i, st)], s0 - (offset * st if d == axis else 0))
                       for d, (i, s0, st) in enumerate(zip(idx, starts, strides)))
            read = ctx.scalar(src) if type(src) is not Var or ctx.is_scalar(src) \
                else K.Load(ctx.buffer(src), at)
            pieces.append((offset + n, read))
        offset += n
    if len(pieces) == 1:
        return _let(ctx, pieces[0][1])
    ctx.emit(K.Declare(out, K.Const(0, out.dtype)))
    stmts = [K.Assign(out, pieces[-1][1])]
    for end, read in reversed(pieces[:-1]):
        stmts = [K.If(K.op("lt", idx[axis], K.Const(end, K.I64)), [K.Assign(out, read)], stmts)]
    for st in stmts:
        ctx.emit(st)
    return out


def _blocked_parts(ctx, shape, parts, elements):
    """A large group of independent parts (an optimiser's update of many arrays): one
    parallel loop over blocks of rows, in each block one loop nest per part, so each
    loop streams a few arrays (one loop over all of them streams them all at once,
    several times slower) while the threads share the blocks."""
    inner = shape[1:]
    rows = max(1, PARALLEL_BLOCK_ELEMENTS // max(1, math.prod(inner)))
    blocks = -(-shape[0] // rows)
    with ctx.loop(blocks, parallel=True, prefix="blk") as blk:
        lo = ctx.names.var("lo", K.I64)
        hi = ctx.names.var("hi", K.I64)
        ctx.emit(K.Let(lo, K.op("mul", blk, K.Const(rows, K.I64))))
        ctx.emit(K.Let(hi, K.op("min", K.op("add", lo, K.Const(rows, K.I64)),
                                K.Const(shape[0], K.I64))))
        for part in parts:
            with ctx.loop(hi, start=lo) as i, ctx.nest(inner, parallel=False) as rest:
                elements((i,) + tuple(rest), part)
