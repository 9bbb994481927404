"""Lowering, shared by every target: a program (``Jaxpr``) to one kernel-IR `Kernel`.

A program is a list of steps (`lower_steps`): kernels, and between them the host steps
of the primitives in `HOST` (their NumPy implementations) at its top level.  In a kernel, fusion
(``backends/fusion.py``) groups the equations; fused groups become loop nests
(`fused.py`), every other equation is lowered by its primitive's rule (`rules`: the
shape and slicing primitives in `shape.py`, reductions in `reduce.py`); elementwise
primitives have one scalar rule each (`elementwise.py`); an equation with no rule (and
one of `HOST` inside a loop body, a branch or a call) is a host call in the kernel
(`host.py`: its NumPy implementation, called back from the machine code); a ``psum``
over the processes of one machine, at the top level, sums in shared memory
(`process_sums.py`).  A program
with a primitive or dtype this lowering does not carry raises `Unlowerable`.

Equations on values of a dtype the kernels lack (long double) are host steps too, as
eagerly; float0 outputs (JAX's tangents of integers) carry no data and are no step's:
the executable makes them.

The kernel takes the program's inputs (constants first) and its outputs as buffers;
each output value is computed straight into its output buffer where it can be, else
copied there at the end.
"""

from __future__ import annotations

import numpy as np

from .. import kernel_ir as K
from ..fusion import index_reads, plan_groups
from ...base.dtypes import float0
from ...ir.ir import ClosedJaxpr, Jaxpr, Literal, Var, dce
from ...ops.debug import debug_callback_p
from ...ops.decompositions import cholesky_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p
from ...ops.eig import eig_p
from ...ops.fft import fft_p
from ...ops.linalg import dot_general_p, product_work
from ...ops.sort import argsort_p, sort_p
from . import inplace, process_sums
from .context import Ctx, Unlowerable, kernel_dtype
from .control_flow import rules as _control_flow_rules
from .control_flow import sub_programs
from .elementwise import complex_ok, scalar_rules
from .fused import fusible, lower_fused
from .host import HOST_CALLED, lower_host_call, refusal
from .indexing import rules as _indexing_rules
from .linalg import rules as _linalg_rules
from .reduce import rules as _reduce_rules
from .shape import rules as _shape_rules

__all__ = ["HOST", "HOST_CALLED", "Step", "Unlowerable", "format_steps", "lower_program", "lower_steps",
           "lower_eqns", "covers", "rules", "scalar_rules", "without_float0_outputs"]

# Primitives run between the kernels by their NumPy implementation (LAPACK, pocketfft,
# the user's callbacks), where they appear at the top level of a program (host steps);
# inside a sub-program they are host calls in the kernel (host.py).
HOST = frozenset({cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, svd_p, eig_p, fft_p,
                  debug_callback_p, sort_p, argsort_p})

# primitive -> rule(ctx, eqn): the statement-level rules
rules: dict = {**_shape_rules, **_reduce_rules, **_linalg_rules, **_indexing_rules,
               **_control_flow_rules}



def _kernel_dtype(v) -> bool:
    return kernel_dtype(np.dtype(v.aval.dtype))


def _on_host(eqn) -> bool:
    """Whether a top-level equation is a host step: a `HOST` primitive, or one with a
    value of a dtype the kernels have no scalars of (long double: as eagerly, its NumPy
    implementation)."""
    return eqn.primitive in HOST or not all(map(_kernel_dtype, eqn.invars + eqn.outvars))


def _steps_needed(jaxpr) -> bool:
    """Whether the program is more than one kernel: host steps, or inputs or outputs
    of a dtype the kernels lack (passed between the steps as they are)."""
    return any(map(_on_host, jaxpr.eqns)) or not all(map(_kernel_dtype, _top_vars(jaxpr)))


def _top_vars(jaxpr):
    return list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars)


def without_float0_outputs(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without its float0 outputs (JAX's tangents of integer values: they
    carry no data, so the executable makes them, and no step computes them)."""
    keep = [v for v in jaxpr.outvars if v.aval.dtype != float0]
    if len(keep) == len(jaxpr.outvars):
        return jaxpr
    return dce(Jaxpr(jaxpr.constvars, jaxpr.invars, keep, jaxpr.eqns))


def covers(jaxpr: Jaxpr, top: bool = True) -> str | None:
    """None when this lowering carries ``jaxpr``, else why not (one reason).  Host
    steps take values of any dtype; the kernels (their host calls too), those of
    `context.kernel_dtype`; float0 outputs are made by the executable.  A sub-program (``top=False``:
    a loop body, a branch, a call) is lowered into its kernel whole: its equations of
    `HOST` are host calls there."""
    if top:
        jaxpr = without_float0_outputs(jaxpr)
    else:
        for v in _top_vars(jaxpr):
            if not _kernel_dtype(v):
                return f"a {np.dtype(v.aval.dtype).name} value"
    for e in jaxpr.eqns:
        p = e.primitive
        if top and _on_host(e):    # a host step
            continue
        host_call = p in HOST or (p not in rules and p not in scalar_rules)
        if host_call:
            why = refusal(e, host_step=p in HOST)
            if why is not None:
                return why
        for v in list(e.invars) + list(e.outvars):
            d = np.dtype(v.aval.dtype)
            if not kernel_dtype(d):
                return f"a {d.name} value in {p.name}"
            if d.kind == "c" and p in scalar_rules and not complex_ok(e):
                return f"complex {p.name}"
        subs = None if host_call else sub_programs(e)   # what its rule lowers in place
        if subs is None:
            if any(isinstance(val, (Jaxpr, ClosedJaxpr)) for val in e.params.values()):
                return f"{p.name} has a sub-program"
            continue
        for sub in subs:
            why = sub if isinstance(sub, str) else covers(sub, top=False)
            if why is not None:
                return why
    return None


class Step:
    """One step of a program: a kernel (``kernel``) computing ``outs`` from ``ins``, or
    a host call of ``eqn``'s primitive (its NumPy implementation: decompositions,
    FFTs, callbacks) between the kernels."""

    __slots__ = ("kernel", "eqn", "ins", "outs")

    def __init__(self, ins, outs, kernel=None, eqn=None):
        self.ins, self.outs, self.kernel, self.eqn = list(ins), list(outs), kernel, eqn


def format_steps(steps) -> str:
    """The readable form of a program's steps (``jit(f).lower(x).as_text()``)."""
    return "\n\n".join(
        K.format_kernel(s.kernel) if s.kernel is not None else
        f"host {s.eqn.primitive.name}({', '.join(v.aval.str_short() for v in s.ins)}) -> "
        f"({', '.join(v.aval.str_short() for v in s.outs)})" for s in steps)


def lower_steps(jaxpr: Jaxpr) -> list:
    """The program as `Step`s: runs of equations lowered to kernels, and host calls
    (its float0 outputs dropped: `without_float0_outputs`)."""
    why = covers(jaxpr)
    if why is not None:
        raise Unlowerable(why)
    jaxpr = without_float0_outputs(jaxpr)
    long = len(jaxpr.eqns) > SPLIT_ABOVE and \
        sum(_large_product(e) for e in jaxpr.eqns) >= SPLIT_PRODUCTS
    if not long and not _steps_needed(jaxpr):
        return [Step(list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars,
                     kernel=lower_program(jaxpr))]
    segments, current = [], []
    for e in jaxpr.eqns:
        if _on_host(e):
            if current:
                segments.append(current)
                current = []
            segments.append(e)
            continue
        current.append(e)
        if long and _large_product(e):   # a layer's end: the next one's kernel is new
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    later = []     # for each segment: the values later segments or the outputs read
    used = {v for v in jaxpr.outvars if type(v) is Var}
    for seg in reversed(segments):
        later.append(set(used))
        for e in (seg if isinstance(seg, list) else [seg]):
            used.update(a for a in e.invars if type(a) is Var)
    later.reverse()
    steps = []
    for seg, after in zip(segments, later):
        if not isinstance(seg, list):
            steps.append(Step(seg.invars, seg.outvars, eqn=seg))
            continue
        defined = {v for e in seg for v in e.outvars}
        live_in = list(dict.fromkeys(a for e in seg for a in e.invars
                                     if type(a) is Var and a not in defined))
        live_out = [v for e in seg for v in e.outvars if v in after]
        if live_out:
            steps.append(Step(live_in, live_out, kernel=lower_program(
                Jaxpr([], live_in, live_out, seg))))
    if long and not _steps_needed(jaxpr) and not _repeats(steps):
        # no layer repeats another: splitting would compile as many kernels and only
        # cost each call its kernels' calls and intermediate arrays (a VAE step of 10
        # different layers: 2.6 -> 3.3 ms split)
        return [Step(list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars,
                     kernel=lower_program(jaxpr))]
    return steps


def _repeats(steps) -> bool:
    """Whether two of the kernels of ``steps`` are the same (print the same)."""
    texts = [K.format_kernel(s.kernel) for s in steps if s.kernel is not None]
    return len(set(texts)) < len(texts)


# A long program (more equations than this, with at least this many large products) is
# compiled as one kernel per layer (a segment ending with a product), so the identical
# layers of a network are one kernel, compiled once (kernels are named by content), and
# LLVM optimises small functions (its time grows faster than a function's size).
SPLIT_ABOVE = 200
SPLIT_PRODUCTS = 4


def _large_product(eqn) -> bool:
    return eqn.primitive is dot_general_p and product_work(eqn)[1] >= 1 << 15


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
    why = covers(jaxpr, top=False)     # one kernel: no host step
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
    process_sums.finish(ctx)
    return K.Kernel(name, ctx.inputs, ctx.outputs, ctx.block, ctx.temps, ctx.host_calls)


def lower_eqns(ctx: Ctx, jaxpr: Jaxpr, owned=frozenset()) -> None:
    """Lower ``jaxpr``'s equations into ``ctx``'s current block (its inputs are bound
    already): the whole program, or a sub-program (a loop body, a branch, a call).
    ``owned``: its invars whose buffers it may overwrite (loop carries: `inplace.plan`
    says which updates write into their operand's buffer)."""
    jaxpr = inplace.scheduled(jaxpr)   # reads of an updated operand first
    if ctx.program is None:            # the kernel's own program (not a loop body's)
        process_sums.plan(ctx, jaxpr)
    outer = ctx.takes, ctx.program, ctx.index_reads
    plan = inplace.plan(jaxpr, owned)
    ctx.takes, ctx.program = plan.takes, jaxpr
    # concatenations read in place (their slices deferred), but not of a buffer an
    # update overwrites: the deferred read would see the new values
    ctx.index_reads = reads = index_reads(jaxpr, lambda v: v not in plan.overwritten)
    homes = inplace.forward_homes(ctx, jaxpr, ctx.takes)
    try:
        total_uses = _uses(jaxpr)
        for kind, eqns in plan_groups(jaxpr, fusible, reads):
            if kind == "fused":
                lower_fused(ctx, eqns, total_uses)
                continue
            (eqn,) = eqns
            rule = rules.get(eqn.primitive)
            if process_sums.lowers(ctx, eqn):
                process_sums.lower(ctx, eqn)
            elif rule is not None:
                rule(ctx, eqn)
            elif fusible(eqn):
                lower_fused(ctx, [eqn], total_uses)
            else:
                lower_host_call(ctx, eqn)
    finally:
        ctx.takes, ctx.program, ctx.index_reads = outer
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
