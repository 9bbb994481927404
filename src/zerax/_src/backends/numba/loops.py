"""Lowering helpers shared by the control-flow primitives: loop-carried variables.

A carry is held in a variable that is reassigned at the end of every iteration (a
scalar for 0-d carries, so scalar loops allocate nothing); new values are computed
into temporaries first, so a body that permutes its carries stays correct.
"""

from __future__ import annotations

from .codegen import dtype_name


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
