"""Lowering helpers shared by the control-flow primitives: loop-carried variables.

A carry is held in a variable that is reassigned at the end of every iteration (a
scalar for 0-d carries, so scalar loops allocate nothing); new values are computed
into temporaries first, so a body that permutes its carries stays correct.
"""

from __future__ import annotations

import contextlib

from ...ir import Var
from .codegen import dtype_name, plan_groups


def start_carries(ctx, avals, init_refs, prefix="c"):
    """Declare carry variables initialised from ``init_refs``; returns their refs."""
    refs = []
    for aval, ref in zip(avals, init_refs):
        name = ctx.fresh(prefix)
        if aval.shape == ():
            ctx.emit(f"{name} = {dtype_name(aval.dtype)}({ctx.text(ref, True)})")
            refs.append(("scalar", name))
        else:
            ctx.emit(f"{name} = {ctx.text(ref, False)}")
            refs.append(("array", name))
    return refs


def update_carries(ctx, avals, carry_refs, new_refs):
    """``carry = new`` for every carry, through temporaries."""
    temps = []
    for aval, new in zip(avals, new_refs):
        t = ctx.fresh("n")
        if aval.shape == ():
            ctx.emit(f"{t} = {dtype_name(aval.dtype)}({ctx.text(new, True)})")
        else:
            ctx.emit(f"{t} = {ctx.text(new, False)}")
        temps.append(t)
    for (_, name), t in zip(carry_refs, temps):
        ctx.emit(f"{name} = {t}")


def carry_buffers(ctx, avals, which):
    """Two arrays for each carry flagged in ``which`` (None for the others), allocated
    here, two lines each.  A step writes the carry's new value into the first (the one
    the old value is not in) and `update_buffered_carries` swaps them, so a loop whose
    body computes its carries allocates nothing per step."""
    bufs = []
    for aval, w in zip(avals, which):
        if not w:
            bufs.append(None)
            continue
        pair = (ctx.fresh("cb"), ctx.fresh("cb"))
        for nm in pair:
            ctx.emit(f"{nm} = np.empty({tuple(aval.shape)!r}, {dtype_name(aval.dtype)})")
        bufs.append(pair)
    return bufs


def update_buffered_carries(ctx, avals, carry_refs, new_refs, bufs, buffered, taken):
    """``carry = new`` where the carries flagged in ``buffered`` take their first buffer:
    the body already wrote the new value there where ``taken``, else it is copied in
    (before any carry changes).  Then each pair swaps.  No carry array ever aliases
    another's buffer, and the buffer written next holds a value two steps old."""
    temps = []
    for k, (aval, new) in enumerate(zip(avals, new_refs)):
        if buffered[k]:
            if not taken[k]:
                src, dst = ctx.text(new, False), bufs[k][0]
                with ctx.nest(aval.shape, parallel=False) as idx:
                    ix = ", ".join(idx)
                    ctx.emit(f"{dst}[{ix}] = {src}[{ix}]")
            temps.append(bufs[k][0])
            continue
        t = ctx.fresh("n")
        if aval.shape == ():
            ctx.emit(f"{t} = {dtype_name(aval.dtype)}({ctx.text(new, True)})")
        else:
            ctx.emit(f"{t} = {ctx.text(new, False)}")
        temps.append(t)
    for (_, name), t in zip(carry_refs, temps):
        ctx.emit(f"{name} = {t}")
    for pair in bufs:
        if pair is not None:
            ctx.emit(f"{pair[0]}, {pair[1]} = {pair[1]}, {pair[0]}")


def slice_ref(ctx, array_text, index, aval):
    """The ``index``-th slice of a stacked array, as a reference."""
    if len(aval.shape) == 1:
        return ("scalar", f"{array_text}[{index}]")
    return ("array", f"{array_text}[{index}]")


def store_row(ctx, array_text, index, ref, aval):
    """``array[index] = value`` for a value of type ``aval``, as explicit element loops
    (Numba compiles a row or slice assignment far more slowly than a loop)."""
    if aval.shape == ():
        ctx.emit(f"{array_text}[{index}] = {ctx.text(ref, True)}")
        return
    src = ctx.text(ref, False)
    with ctx.nest(aval.shape, parallel=False) as idx:
        ix = ", ".join(idx)
        ctx.emit(f"{array_text}[{index}, {ix}] = {src}[{ix}]")


def copy_rows(ctx, dst_text, src_text, count, row_shape):
    """``dst[:count] = src[:count]`` as explicit loops."""
    q = ctx.fresh("q")
    ctx.emit(f"for {q} in range({count}):")
    with ctx.block():
        if not row_shape:
            ctx.emit(f"{dst_text}[{q}] = {src_text}[{q}]")
            return
        with ctx.nest(row_shape, parallel=False) as idx:
            ix = ", ".join(idx)
            ctx.emit(f"{dst_text}[{q}, {ix}] = {src_text}[{q}, {ix}]")


@contextlib.contextmanager
def prelude(ctx):
    """Emit into the kernel's prelude: lines run once, before the kernel's first line,
    for values that loop bodies use but that do not change from one iteration to the
    next (computed there once per call instead of once per iteration)."""
    lines, level = ctx.lines, ctx.level
    ctx.lines, ctx.level = ctx.prelude, 1
    try:
        yield
    finally:
        ctx.lines, ctx.level = lines, level


def is_invariant(ctx, text) -> bool:
    """Whether ``text`` names an array that nothing in the kernel reassigns or writes
    (a kernel argument or a constant), so a value computed from it can be hoisted into
    the prelude."""
    return text in ctx.reserved or text.startswith("K_")


def private_values(ctx) -> set:
    """Values of the program being lowered (``ctx.body``) whose arrays nothing keeps
    past the program's end: not its outputs, and read only by fused elementwise loops
    and by products, which read their operands and write new arrays.  Inside a loop
    body such a value can live in one buffer reused by every iteration."""
    body = ctx.body
    if body is None:
        return set()
    key = ("private", id(body))
    held = ctx.hoisted.get(key)
    if held is None or held[0] is not body:   # (the program is kept: ids are reused)
        shared = {v for v in body.outvars if type(v) is Var}
        for kind, eqns in plan_groups(body):
            for e in eqns:
                if kind != "fused" and e.primitive.name != "dot_general":
                    shared.update(a for a in e.invars if type(a) is Var)
        held = ctx.hoisted[key] = (body, {v for e in body.eqns for v in e.outvars} - shared)
    return held[1]


def output_buffer(ctx, var, prefix="p") -> str:
    """A new array for ``var``'s value, which the caller overwrites entirely.  Inside a
    loop body, a private value's array is allocated once, in the kernel's prelude; a
    value with a destination in ``ctx.dest`` (a loop's carry buffer, a row of a stacked
    output) is written there instead."""
    name = ctx.fresh(prefix)
    dest = ctx.dest.pop(var, None)
    if dest is not None:   # the caller named where the value goes (written once)
        ctx.emit(f"{name} = {dest}")
        ctx.dest_used.add(var)
        return name
    line = f"{name} = np.empty({tuple(var.aval.shape)!r}, {dtype_name(var.aval.dtype)})"
    if ctx.level > 1 and var in private_values(ctx):
        with prelude(ctx):
            ctx.emit(line)
    else:
        ctx.emit(line)
    return name
