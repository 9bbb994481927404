"""ONNX rules of calls and control flow: the call primitives (``jit``, ``checkpoint``,
custom JVP/VJP calls) are written inline; ``cond`` becomes ``If`` (nested for more than
two branches; an index is clamped into range, as zerax does); ``while`` and ``scan``
(which ``fori_loop`` becomes) become ``Loop``.  A loop body reads its constants and
sequences from the enclosing graph by name; ``scan``'s per-step outputs are the Loop's
scan outputs (reversed back for a reverse scan).
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...ops import call, cond, custom_calls, scan, while_loop
from .onnx_rules import onnx_rules, scalar

_I64 = np.int64
_BOOL = ShapedArray((), np.bool_)
_STEP = ShapedArray((), _I64)


def _inline(param):
    def rule(ctx, eqn, ins):
        return ctx.lower(eqn.params[param], [], ins)
    return rule


def _checkpoint_jvp(ctx, eqn, ins):
    jaxpr, consts = custom_calls.remat_jvp_program(eqn.params["jaxpr"],
                                                   [a.aval for a in eqn.invars])
    return ctx.lower(jaxpr, [], [ctx.const(np.asarray(getattr(c, "_value", c)))
                                 for c in consts] + list(ins))


def _cond(ctx, eqn, ins):
    index, *ops = ins
    branches = eqn.params["branches"]
    out_avals = [v.aval for v in eqn.outvars]
    idx_dtype = eqn.invars[0].aval.dtype

    def choose(k):   # branches k.. given index > k - 1
        if k == len(branches) - 1:
            return ctx.lower(branches[k], [], ops)
        pred = ctx.node("LessOrEqual", [index, scalar(ctx, k, idx_dtype)])
        graphs = []
        for name, fn in (("then", lambda: ctx.lower(branches[k], [], ops)),
                         ("else", lambda: choose(k + 1))):
            graphs.append(ctx.subgraph(f"cond_{name}_{k}", [],
                                       lambda _, fn=fn: list(zip(fn(), out_avals))))
        outs = ctx.node("If", [pred], n_out=len(out_avals) or 1, then_branch=graphs[0],
                        else_branch=graphs[1])
        return outs if isinstance(outs, list) else [outs]
    return choose(0)


def _while(ctx, eqn, ins):
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, init = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
    avals = [v.aval for v in eqn.outvars]
    first = ctx.lower(p["cond_jaxpr"], [], list(cconsts) + list(init))[0]

    def body(names):
        carry = names[2:]
        new = ctx.lower(p["body_jaxpr"], [], list(bconsts) + carry)
        keep = ctx.lower(p["cond_jaxpr"], [], list(cconsts) + new)[0]
        return [(keep, _BOOL)] + list(zip(new, avals))
    graph = ctx.subgraph("while_body", [("i", _STEP), ("cond", _BOOL)] +
                         [(n, a) for n, a in zip(init, avals)], body)
    outs = ctx.node("Loop", ["", first] + list(init), n_out=len(avals) or 1, body=graph)
    return outs if isinstance(outs, list) else [outs]


def _scan(ctx, eqn, ins):
    p = eqn.params
    nc, nk, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    out_avals = [v.aval for v in eqn.outvars]
    carry_avals, ys_avals = out_avals[:nk], out_avals[nk:]
    if length == 0:
        return list(init) + [ctx.node("Identity", [ctx.const(np.zeros(a.shape, a.dtype))])
                             for a in ys_avals]

    def body(names):
        # (the iteration number is a scalar or a [1]: made a scalar)
        i, carry = ctx.node("Reshape", [names[0], ctx.ints([])]), names[2:]
        step = ctx.node("Sub", [ctx.const(_I64(length - 1)), i]) if reverse else i
        x_t = [ctx.node("Gather", [x, step], axis=0) for x in xs]
        outs = ctx.lower(p["jaxpr"], [], list(consts) + list(carry) + x_t)
        return [(ctx.const(np.bool_(True)), _BOOL)] + \
            list(zip(outs[:nk], carry_avals)) + \
            [(y, ShapedArray(a.shape[1:], a.dtype)) for y, a in zip(outs[nk:], ys_avals)]
    graph = ctx.subgraph("scan_body", [("i", _STEP), ("cond", _BOOL)] +
                         [(n, a) for n, a in zip(init, carry_avals)], body)
    outs = ctx.node("Loop", [ctx.const(_I64(length)), ""] + list(init),
                    n_out=len(out_avals) or 1, body=graph)
    outs = outs if isinstance(outs, list) else [outs]
    if reverse:   # the Loop stacks step outputs in the order it ran them
        outs = outs[:nk] + [ctx.node("Slice", [y, ctx.ints([-1]), ctx.ints([-length - 1]),
                                               ctx.ints([0]), ctx.ints([-1])])
                            for y in outs[nk:]]
    return outs


onnx_rules[call.jit_p] = _inline("jaxpr")
onnx_rules[custom_calls.remat_p] = _inline("jaxpr")
onnx_rules[custom_calls.custom_jvp_call_p] = _inline("call_jaxpr")
onnx_rules[custom_calls.custom_vjp_call_p] = _inline("call_jaxpr")
onnx_rules[custom_calls.remat_jvp_p] = _checkpoint_jvp
onnx_rules[cond.cond_p] = _cond
onnx_rules[while_loop.while_p] = _while
onnx_rules[scan.scan_p] = _scan
