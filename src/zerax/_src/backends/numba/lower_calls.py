"""Numba lowerings of the call primitives: a nested ``jit``, ``custom_jvp_call``,
``custom_vjp_call``, ``checkpoint`` and ``checkpoint_jvp`` are inlined, their
sub-programs lowered into the enclosing program with the operands' names bound to the
sub-program's inputs."""

from __future__ import annotations

import hashlib

import numpy as np

from ...ops.call import jit_p
from ...ops.custom_calls import (custom_jvp_call_p, custom_vjp_call_p, remat_jvp_p, remat_p,
                                 remat_jvp_program)
from .codegen import dtype_name, literal_text, lower_jaxpr_body
from .rules import lowering_rules


def _const(ctx, value) -> str:
    """A local holding a constant array of a program traced at lowering time."""
    v = np.ascontiguousarray(np.asarray(getattr(value, "_value", value)))
    dt = dtype_name(v.dtype)
    name = ctx.fresh("k")
    shape = repr(tuple(int(d) for d in v.shape))
    if v.size == 0:
        ctx.emit(f"{name} = np.empty({shape}, {dt})")
    elif np.all(v == v.flat[0]) or (v.dtype.kind == "f" and np.all(np.isnan(v))):
        ctx.emit(f"{name} = np.full({shape}, {literal_text(v.flat[0], v.dtype)}, {dt})")
    else:
        # A module-level array (frozen into the machine code): named by its contents,
        # so that the on-disk cache can never confuse two programs' constants.
        digest = hashlib.sha256(v.dtype.str.encode() + shape.encode() + v.tobytes()).hexdigest()
        glob = ctx.helper(f"_zx_const_{digest[:24]}", v)
        ctx.emit(f"{name} = {glob}.copy()")
    return name


def _inline(ctx, eqn, sub_jaxpr, in_refs):
    """Lower ``sub_jaxpr`` in place with its inputs bound to ``in_refs`` (references as
    `ctx.ref` gives them) and bind ``eqn``'s outputs to the sub-program's outputs."""
    in_arrays = {text for kind, text in in_refs if kind == "array"}
    outs = lower_jaxpr_body(ctx, sub_jaxpr, list(in_refs))
    for v, (kind, text) in zip(eqn.outvars, outs):
        if kind == "array" and text in in_arrays:
            # The sub-program returns one of its inputs: outputs must be fresh arrays.
            fresh = ctx.fresh("v")
            ctx.emit(f"{fresh} = np.copy({text})")
            text = fresh
        ctx.bind_name(v, (kind, text))


def _jit_lower(ctx, eqn):
    """A nested jit is inlined into the enclosing program."""
    sub = eqn.params["jaxpr"]
    outs = lower_jaxpr_body(ctx, sub, [ctx.ref(a) for a in eqn.invars])
    for v, ref in zip(eqn.outvars, outs):
        ctx.bind_name(v, ref)


def _call_lower(param):
    def rule(ctx, eqn):
        ctx.emit(f"# {eqn.primitive.name} (inlined)")
        _inline(ctx, eqn, eqn.params[param], [ctx.ref(a) for a in eqn.invars])
        ctx.emit(f"# end {eqn.primitive.name}")
    return rule


def _remat_jvp_lower(ctx, eqn):
    """The JVP of a checkpointed program, traced now and inlined."""
    jaxpr, consts = remat_jvp_program(eqn.params["jaxpr"], [a.aval for a in eqn.invars])
    ctx.emit("# checkpoint_jvp (inlined JVP program)")
    refs = [("array", _const(ctx, c)) for c in consts]
    _inline(ctx, eqn, jaxpr, refs + [ctx.ref(a) for a in eqn.invars])
    ctx.emit("# end checkpoint_jvp")


lowering_rules[jit_p] = _jit_lower
lowering_rules[custom_jvp_call_p] = _call_lower("call_jaxpr")
lowering_rules[custom_vjp_call_p] = _call_lower("call_jaxpr")
lowering_rules[remat_p] = _call_lower("jaxpr")
lowering_rules[remat_jvp_p] = _remat_jvp_lower
