"""Sub-programs lowered in place (`inline`), and the kernel-IR rules of the call
primitives, whose sub-program is simply lowered into the enclosing kernel: a nested
``jit``, ``custom_jvp_call`` and ``custom_vjp_call`` (their primal program: the custom
rules are for transforms, which have run), ``checkpoint`` (``remat``), and the programs
traced now for ``checkpoint_jvp`` (its JVP program) and ``while_lin`` (the joint
primal-and-tangent loop, a while loop again).

A call's outputs are buffers of their own (`inplace.py` relies on it): an output that
is one of the call's operands, or shares a buffer with one or with another output, is
copied.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import kernel_ir as K
from ...ir.ir import Literal, Var
from ...ir.tracing import trace_closed
from ...ops.call import jit_p
from ...ops.custom_calls import (custom_jvp_call_p, custom_vjp_call_p, remat_jvp_p, remat_p,
                                 remat_jvp_program)
from ...ops.while_loop import joint_tangent, while_lin_p
from .context import Ctx, Unlowerable, kernel_dtype


def value_of(ctx: Ctx, atom):
    """An operand's value: a `Buffer`, or a scalar expression (0-d values)."""
    return ctx.scalar(atom) if type(atom) is Literal else ctx.values[atom]


def inline(ctx: Ctx, jaxpr, args, *, owned=frozenset(), dests=None):
    """Lower ``jaxpr``'s equations into the current block, its inputs (constvars, then
    invars) bound to ``args`` (values as `value_of` gives them).  ``dests``: {output
    position: Buffer} that output is computed into when its producer makes a buffer
    for it (a loop's next carry buffer, a row of a stacked output, a cond's result).
    ``owned``: invars whose buffers the program may overwrite.

    Returns (the outputs' values, [whether each output landed in its dest]).  The
    bindings the program made are dropped afterwards: values it computed inside a
    branch or loop body are not visible after it, and an operand it stored into a
    scratch buffer (`Ctx.buffer`) is read from where it was again."""
    saved = dict(ctx.values)
    invars = list(jaxpr.constvars) + list(jaxpr.invars)
    for v, a in zip(invars, args):
        ctx.values[v] = a
    inputs = set(invars)
    placed = {}
    for k, buf in (dests or {}).items():
        v = jaxpr.outvars[k]
        if type(v) is Var and v not in inputs and v not in ctx.out_slots and v not in placed:
            ctx.out_slots[v] = placed[v] = buf
    try:
        ctx.lower_eqns(ctx, jaxpr, owned)
        outs = [value_of(ctx, v) for v in jaxpr.outvars]
        landed = [type(v) is Var and k in dests and placed.get(v) is dests[k] and
                  (outs[k] is dests[k] or
                   (v.aval.shape == () and not isinstance(outs[k], K.Buffer)))
                  for k, v in enumerate(jaxpr.outvars)] if dests else [False] * len(outs)
    finally:
        for v in placed:
            del ctx.out_slots[v]
        ctx.values = saved
    return outs, landed


def copy_into(ctx: Ctx, dst: K.Buffer, value) -> None:
    """``dst[...] = value`` (a buffer of ``dst``'s size, or a scalar for every element)."""
    if value is dst:
        return
    if isinstance(value, K.Buffer):
        src = value.reshaped(dst.shape)
        with ctx.nest(dst.shape) as idx:
            ctx.emit(K.Store(dst, idx, K.Load(src, idx)))
        return
    with ctx.nest(dst.shape) as idx:
        ctx.emit(K.Store(dst, idx, value))


def as_scalar(value) -> K.Expr:
    """A 0-d value as an expression (one held in a buffer is loaded)."""
    if isinstance(value, K.Buffer):
        return K.Load(value, (K.Const(0, K.I64),) * len(value.shape))
    return value


def bind_outputs(ctx: Ctx, outvars, outs, landed, args) -> None:
    """Bind a call's ``outvars`` to the values its program computed; an output that
    shares a buffer with an operand or an earlier output is copied into its own."""
    seen = {id(a.root) for a in args if isinstance(a, K.Buffer)}
    for v, value, ok in zip(outvars, outs, landed):
        if v.aval.shape == ():
            ctx.bind_scalar(v, as_scalar(value))
            continue
        if ok:
            ctx.bind_buffer(v, value)
        elif not isinstance(value, K.Buffer) or id(value.root) in seen:
            copy_into(ctx, ctx.new_buffer(v), value)
        else:
            ctx.bind_buffer(v, value)
        seen.add(id(ctx.values[v].root))


def _array_dests(ctx, outvars) -> dict:
    return {k: ctx.out_slots[v] for k, v in enumerate(outvars)
            if v.aval.shape != () and v in ctx.out_slots}


def lower_call(ctx: Ctx, eqn, jaxpr, args) -> None:
    """``eqn``'s outputs are ``jaxpr`` applied to ``args``, lowered in place."""
    outs, landed = inline(ctx, jaxpr, args, dests=_array_dests(ctx, eqn.outvars))
    bind_outputs(ctx, eqn.outvars, outs, landed, args)


def _call_rule(param):
    def rule(ctx, eqn):
        lower_call(ctx, eqn, eqn.params[param], [value_of(ctx, a) for a in eqn.invars])
    return rule


# --------------------------------------------------------------------------- traced programs

# Programs traced for an equation (checkpoint_jvp's JVP, while_lin's joint loop): traced
# once per sub-program and operand types; the constants of their traces become
# constants of the kernel.
_traced: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _trace_once(anchor, key, make):
    entries = _traced.setdefault(anchor, [])
    for k, program in entries:
        if k == key:
            return program
    program = make()
    entries.append((key, program))
    return program


def _remat_jvp_program(eqn):
    avals = tuple(a.aval for a in eqn.invars)
    jaxpr = eqn.params["jaxpr"]
    return _trace_once(jaxpr, ("checkpoint_jvp", avals),
                       lambda: remat_jvp_program(jaxpr, list(avals)))


def _while_lin_program(eqn):
    params = dict(eqn.params)
    params.pop("checkpoint_every")
    avals = tuple(a.aval for a in eqn.invars)
    key = ("while_lin", avals, params["nz_bc"], params["fc"], params["cond_nconsts"],
           params["body_nconsts"], id(params["cond_jaxpr"]))

    def make():
        return trace_closed(lambda *a: joint_tangent(a, **params), list(avals), "while_jvp")
    return _trace_once(params["body_jaxpr"], key, make)


TRACED = {remat_jvp_p: _remat_jvp_program, while_lin_p: _while_lin_program}


def constant(ctx: Ctx, value):
    """A constant of a traced program, as a kernel value: a scalar, or a buffer filled
    with its one value, or with its values (copied at the kernel's start from the
    kernel's own constant data)."""
    v = np.asarray(getattr(value, "_value", value))
    why = constant_problem(v)
    if why is not None:
        raise Unlowerable(why)
    if v.shape == ():
        return K.Const(v.item(), v.dtype)
    if v.size == 0 or _one_value(v):
        return ctx.temp(v.shape, v.dtype, fill=v.flat[0].item() if v.size else 0)
    return ctx.temp(v.shape, v.dtype, fill=np.array(v, v.dtype.newbyteorder("="), order="C"))


def _one_value(v) -> bool:
    # bit for bit: -0.0 is not 0.0, and a NaN's payload is kept
    b = np.ascontiguousarray(v).view(np.uint8).reshape(v.size, v.dtype.itemsize)
    return bool((b == b[0]).all())


def constant_problem(value) -> str | None:
    """Why a traced program's constant cannot be a kernel value, or None."""
    v = np.asarray(getattr(value, "_value", value))
    if not kernel_dtype(v.dtype.newbyteorder("=")):
        return f"a traced sub-program closes over a {v.dtype.name} constant"
    return None


def traced_program(eqn):
    """(jaxpr, consts) of the program traced for ``eqn`` (a `TRACED` primitive)."""
    return TRACED[eqn.primitive](eqn)


def _traced_rule(ctx, eqn):
    jaxpr, consts = traced_program(eqn)
    args = [constant(ctx, c) for c in consts] + [value_of(ctx, a) for a in eqn.invars]
    lower_call(ctx, eqn, jaxpr, args)


rules = {
    jit_p: _call_rule("jaxpr"),
    custom_jvp_call_p: _call_rule("call_jaxpr"),
    custom_vjp_call_p: _call_rule("call_jaxpr"),
    remat_p: _call_rule("jaxpr"),
    remat_jvp_p: _traced_rule,
    while_lin_p: _traced_rule,
}


def sub_programs(eqn):
    """The programs a call rule lowers for ``eqn`` (a reason string in place of one it
    cannot), or None when ``eqn`` is not a call."""
    p = eqn.primitive
    if p in TRACED:
        jaxpr, consts = traced_program(eqn)
        why = next((w for w in map(constant_problem, consts) if w is not None), None)
        return [why if why is not None else jaxpr]
    if p in (jit_p, remat_p):
        return [eqn.params["jaxpr"]]
    if p in (custom_jvp_call_p, custom_vjp_call_p):
        return [eqn.params["call_jaxpr"]]
    return None


__all__ = ["inline", "value_of", "copy_into", "as_scalar", "lower_call", "rules",
           "sub_programs"]
