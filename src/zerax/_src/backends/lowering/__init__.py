"""Lowering, shared by every target: a program (``Jaxpr``) to one kernel-IR `Kernel`.

Fusion (``backends/fusion.py``) groups the equations; fused groups become loop nests
(`fused.py`), every other equation is lowered by its primitive's rule (`rules`: the
shape and slicing primitives in `shape.py`, reductions in `reduce.py`); elementwise
primitives have one scalar rule each (`elementwise.py`).  A program with a primitive
or dtype this lowering does not carry raises `Unlowerable`.

The kernel takes the program's inputs (constants first) and its outputs as buffers;
each output value is computed straight into its output buffer where it can be, else
copied there at the end.
"""

from __future__ import annotations

import numpy as np

from .. import kernel_ir as K
from ..fusion import plan_groups
from ...ir.ir import ClosedJaxpr, Jaxpr, Literal, Var
from . import inplace
from .context import Ctx, Unlowerable
from .control_flow import rules as _control_flow_rules
from .control_flow import sub_programs
from .elementwise import scalar_rules
from .fused import fusible, lower_fused
from .indexing import rules as _indexing_rules
from .reduce import rules as _reduce_rules
from .shape import rules as _shape_rules

__all__ = ["Unlowerable", "lower_program", "lower_eqns", "covers", "rules", "scalar_rules"]

# primitive -> rule(ctx, eqn): the statement-level rules
rules: dict = {**_shape_rules, **_reduce_rules, **_control_flow_rules, **_indexing_rules}

# The dtypes the targets have scalars of.
_DTYPES = frozenset(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))


def covers(jaxpr: Jaxpr) -> str | None:
    """None when this lowering carries ``jaxpr``, else why not (one reason)."""
    for v in list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars):
        if np.dtype(v.aval.dtype) not in _DTYPES:
            return f"a {np.dtype(v.aval.dtype).name} value"
    for e in jaxpr.eqns:
        p = e.primitive
        if p not in rules and p not in scalar_rules:
            return f"{p.name} has no kernel-IR rule"
        for v in list(e.invars) + list(e.outvars):
            if np.dtype(v.aval.dtype) not in _DTYPES:
                return f"a {np.dtype(v.aval.dtype).name} value in {p.name}"
        subs = sub_programs(e)     # the programs its rule lowers into the kernel
        if subs is None:
            if any(isinstance(val, (Jaxpr, ClosedJaxpr)) for val in e.params.values()):
                return f"{p.name} has a sub-program"
            continue
        for sub in subs:
            why = sub if isinstance(sub, str) else covers(sub)
            if why is not None:
                return why
    return None


def _uses(jaxpr):
    count: dict = {}
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                count[a] = count.get(a, 0) + 1
    for a in jaxpr.outvars:
        if type(a) is Var:
            count[a] = count.get(a, 0) + 1
    return count


def lower_program(jaxpr: Jaxpr, name: str = "kernel") -> K.Kernel:
    """The kernel computing ``jaxpr`` (its constvars, if any, are leading inputs)."""
    why = covers(jaxpr)
    if why is not None:
        raise Unlowerable(why)
    ctx = Ctx(name)
    ctx.lower_eqns = lower_eqns
    invars = list(jaxpr.constvars) + list(jaxpr.invars)
    for k, v in enumerate(invars):
        buf = K.Buffer(f"in{k}", v.aval.shape, v.aval.dtype, "in")
        ctx.inputs.append(buf)
        ctx.bind_buffer(v, buf)
    inputs = set(invars)
    for k, v in enumerate(jaxpr.outvars):
        buf = K.Buffer(f"out{k}", v.aval.shape, v.aval.dtype, "out")
        ctx.outputs.append(buf)
        if type(v) is Var and v not in inputs and v not in ctx.out_slots:
            ctx.out_slots[v] = buf
    lower_eqns(ctx, jaxpr)
    for buf, v in zip(ctx.outputs, jaxpr.outvars):
        _finish_output(ctx, buf, v)
    return K.Kernel(name, ctx.inputs, ctx.outputs, ctx.block, ctx.temps)


def lower_eqns(ctx: Ctx, jaxpr: Jaxpr, owned=frozenset()) -> None:
    """Lower ``jaxpr``'s equations into ``ctx``'s current block (its inputs are bound
    already).  ``owned``: its invars whose buffers it may overwrite (`inplace.plan`)."""
    jaxpr = inplace.scheduled(jaxpr)   # reads of an updated operand first
    outer = ctx.inplace, ctx.program
    ctx.inplace, ctx.program = inplace.plan(jaxpr, owned).overwrite, jaxpr
    homes = inplace.forward_homes(ctx, jaxpr, ctx.inplace)
    try:
        total_uses = _uses(jaxpr)
        for kind, eqns in plan_groups(jaxpr, fusible):
            if kind == "fused":
                lower_fused(ctx, eqns, total_uses)
                continue
            (eqn,) = eqns
            rule = rules.get(eqn.primitive)
            if rule is None:
                lower_fused(ctx, [eqn], total_uses)
            else:
                rule(ctx, eqn)
    finally:
        ctx.inplace, ctx.program = outer
        for v in homes:
            del ctx.out_slots[v]


def _finish_output(ctx, buf, v):
    """Make sure output ``buf`` holds ``v`` (computed into it, or copied now)."""
    if type(v) is Literal:
        value = ctx.scalar(v)
        with ctx.nest(buf.shape) as idx:
            ctx.emit(K.Store(buf, idx, value))
        return
    held = ctx.values[v]
    if held is buf:
        return
    if ctx.out_slots.get(v) is buf and not isinstance(held, K.Buffer):
        return          # a scalar, stored into its output when it was bound
    with ctx.nest(buf.shape) as idx:
        value = held if not isinstance(held, K.Buffer) else K.Load(held, idx)
        ctx.emit(K.Store(buf, idx, value))
