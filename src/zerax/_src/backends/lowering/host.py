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

import functools

from ...ir.ir import ClosedJaxpr, Jaxpr
from ...ops import collectives as co
from ...ops import elementwise as ew
from ...ops import exchange as ex
from ...ops import special_ops as sp
from .. import kernel_ir as K
from .context import Ctx

# The primitives whose kernel-IR lowering is a host call, by design: the special
# functions of base/special*.py (scalar code with series and recurrences, no rule of
# their own yet) and the collectives (an MPI call of backends/mpi/, or over a vmap axis
# their unmapped meaning).  A primitive with no rule and not listed here is refused, so
# a new primitive cannot pass through host calls unnoticed (the registry tests).
HOST_CALLED = frozenset({
    ew.digamma_p, ew.polygamma_p, ew.erf_inv_p,
    sp.igamma_p, sp.igammac_p, sp.igamma_grad_a_p, sp.regularized_incomplete_beta_p,
    sp.bessel_i0e_p, sp.bessel_i1e_p, sp.bessel_j0_p, sp.bessel_j1_p, sp.bessel_y0_p,
    sp.bessel_y1_p, sp.bessel_jv_p, sp.bessel_iv_p, sp.bessel_ive_p, sp.zeta_p, sp.expn_p,
    sp.expi_p, sp.sph_legendre_p,
    co.psum_p, co.pmax_p, co.pmin_p, co.axis_index_p,
    ex.all_gather_p, ex.psum_scatter_p, ex.all_to_all_p, ex.ppermute_p,
})


# Host-called primitives whose implementation can write its results into the kernel's
# output buffers (``fn(outs, ins, **params)`` -> the results, which are ``outs`` where it
# did): a cross-process reduction then receives straight into the kernel's buffer,
# sparing a copy of the gradients a data-parallel step averages.
WRITES_INTO = {p: functools.partial(co.reduce_into, p) for p in (co.psum_p, co.pmax_p,
                                                                  co.pmin_p)}


def refusal(eqn, host_step: bool = False) -> str | None:
    """Why ``eqn`` cannot be a host call (None: it can); ``host_step``: its primitive
    is one of the host steps (`lowering.HOST`), here inside a sub-program."""
    p = eqn.primitive
    if p.impl is None or not (host_step or p in HOST_CALLED):
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
