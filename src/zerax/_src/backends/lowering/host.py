"""Host calls: an equation the kernel IR has no rule for, run inside the kernel by its
primitive's NumPy implementation (`kernel_ir.HostCall`).

The primitives without a kernel-IR rule (the special functions of ``base/special*.py``,
the collectives over MPI processes, ``axis_index``) and, inside a loop body, a branch or
a call, those `lowering.HOST` runs between kernels at the top level (decompositions,
FFTs, sorts, ``debug_callback``) become a statement that calls back into Python: the
kernel takes the GIL, the caller's function wraps the buffers as NumPy arrays, runs
``prim.impl(*ins, **params)`` (the eager implementation: jit equals eager bit for bit)
and writes the results into the output buffers.  Such a call costs microseconds (see
docs/compiler.md), so it is for what has no loop of its own; it is never fused and
never inside a parallel loop.

A primitive whose implementation must not run inside a compiled program says why in
``unsupported["lower"]`` (a zerax.Function's NumPy forward, the forward-mode
derivative of a custom_vjp function); such a program is refused with that reason.
"""

from __future__ import annotations

from ...ir.ir import ClosedJaxpr, Jaxpr
from .. import kernel_ir as K
from .context import Ctx


def refusal(eqn) -> str | None:
    """Why ``eqn`` cannot be a host call (None: it can)."""
    p = eqn.primitive
    if p.impl is None:
        return f"{p.name} has no kernel-IR rule"
    why = p.unsupported.get("lower")
    if why is not None:
        return f"{p.name} cannot run in a compiled program: {why}"
    if any(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in eqn.params.values()):
        # (its implementation would interpret its program eagerly at every call)
        return f"{p.name} has a sub-program"
    return None


def lower_host_call(ctx: Ctx, eqn) -> None:
    """``eqn`` as the kernel's next `HostCall`: its operands as buffers (a scalar is
    stored into one first), its results computed into new buffers (or the kernel's
    output buffers)."""
    ins = [ctx.buffer(a) for a in eqn.invars]
    outs = [ctx.new_buffer(v) for v in eqn.outvars]
    stmt = K.HostCall(len(ctx.host_calls), eqn, ins, outs)
    ctx.host_calls.append(stmt)
    ctx.emit(stmt)
