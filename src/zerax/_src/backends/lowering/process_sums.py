"""Sums over the processes of one machine inside a kernel: ``lax.psum`` over a process
axis (`zerax.distributed.spmd`, ``shard_map``) at a kernel's top level.

As a host call (`host.py`), such a psum is MPI's Allreduce into new buffers that the
code after it (a data-parallel step's update) reads again: three passes over the
gradients after the backward pass.  Where the processes share the machine and are few
(`transport.AxisGroup.sums_in_shared_memory`) the kernel sums in shared memory
instead (`transport.SharedSlots`, an MPI-3 shared window):

- each operand is computed straight into this process's slot of the window: a
  "hosted" buffer, whose address the kernel's first statement, a host call of role
  "bind", asks the host for (an operand computed elsewhere is copied there);
- a host call of role "exchange" waits until every process has written its slot;
- the result is a "sum" buffer: reading an element adds that element of every
  process's slot, in rank order, so the code reading it (the update) sums as it goes.
  The order is eager psum's (`transport.Communicator.allreduce`): every process gets
  the same bits, and jit equals eager.

The bind call first checks that every process runs the same sums (the agreement check
of every collective, an Allreduce): so no process writes its slot before every other
has finished reading the slots' last values (`transport.Slots`).  A result read other
than element by element (by a product, a host call, a loop) or returned is copied out
of the slots, and a hosted buffer is never updated in place (`Ctx.take_buffer`).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.core import process_groups
from ...ir.ir import Literal
from ...ops.collectives import describe, psum_p, split_axes
from .. import kernel_ir as K
from ..mpi.transport import SHARED_MAX_BYTES, AxisGroup, ProgramSums, slot_offsets
from .context import Ctx
from .fused import fusible
from .inplace import use_positions

# The dtypes whose sums the kernel adds as NumPy does (integers wrap around, as MPI's)
_DTYPES = frozenset(np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64))


class _Plan:
    """The shared sums of one kernel, over the process axes ``procs`` (``size``
    processes): for each psum, for each operand, this process's hosted buffer, every
    process's (rank order) and its offset in a slot."""

    def __init__(self, procs, size, first):
        self.procs, self.size, self.first = procs, size, first
        self.operands: dict = {}   # id(eqn) -> [(mine, parts, offset)]
        self.texts: list = []
        self.end = 0               # bytes of a slot used so far
        self.read_as_sums: set = set()   # results every use of which reads elementwise
        self.sums = None           # the `transport.ProgramSums` (`finish`)


def plan(ctx: Ctx, jaxpr) -> None:
    """Choose the psums of the top-level program ``jaxpr`` that sum in shared memory,
    and give their operands hosted buffers to be computed into (`Ctx.new_buffer`)."""
    p = None
    uses = use_positions(jaxpr.eqns)
    for eqn in jaxpr.eqns:
        procs = _shared_axes(eqn)
        if procs is None or (p is not None and procs != p.procs):
            continue
        offsets, nbytes = slot_offsets([_nbytes(v) for v in eqn.invars])
        if p is not None and p.end + nbytes > SHARED_MAX_BYTES:
            continue
        if p is None:
            p = _Plan(procs, math.prod(process_groups[g].size for g in procs), eqn)
        operands = []
        for v, off in zip(eqn.invars, offsets):
            shape, dtype = v.aval.shape, v.aval.dtype
            mine = K.Buffer(ctx.names("h"), shape, dtype, "hosted")
            parts = [K.Buffer(ctx.names("h"), shape, dtype, "hosted") for _ in range(p.size)]
            ctx.temps.extend([mine, *parts])
            ctx.hosted_for.setdefault(v, mine)
            operands.append((mine, parts, p.end + off))
        p.operands[id(eqn)] = operands
        p.end += nbytes
        p.texts.append(describe(eqn.primitive.name, eqn.params["axis_name"],
                                eqn.params["groups"]) + " of " +
                       ", ".join(v.aval.str_short() for v in eqn.invars))
        p.read_as_sums.update(y for y in eqn.outvars if uses.get(y) and
                              all(fusible(jaxpr.eqns[k]) for k in uses[y]))
    ctx.process_sums = p


def _nbytes(v) -> int:
    return math.prod(v.aval.shape) * np.dtype(v.aval.dtype).itemsize


def _shared_axes(eqn):
    """The process axes (group ids) of ``eqn`` if it is a psum to sum in shared memory."""
    if eqn.primitive is not psum_p or any(type(v) is Literal for v in eqn.invars) or \
            any(np.dtype(v.aval.dtype) not in _DTYPES for v in eqn.invars):
        return None
    local, procs = split_axes(eqn.params["axis_size"], eqn.params["groups"])
    group = process_groups.get(procs[0]) if procs and local == 1 else None
    nbytes = slot_offsets([_nbytes(v) for v in eqn.invars])[1]
    return procs if isinstance(group, AxisGroup) and \
        group.sums_in_shared_memory(procs, nbytes) else None


def lowers(ctx: Ctx, eqn) -> bool:
    """Whether ``eqn`` is one of the kernel's shared sums (`lower` is its rule)."""
    p = ctx.process_sums
    return p is not None and id(eqn) in p.operands


def lower(ctx: Ctx, eqn) -> None:
    """The operands into this process's slots, the exchange, the results as sums of
    every process's slot."""
    p = ctx.process_sums
    operands = p.operands[id(eqn)]
    for v, (mine, _, _) in zip(eqn.invars, operands):
        held = ctx.values[v]
        if held is not mine:        # computed elsewhere (an input, a view): copied in
            with ctx.nest(mine.shape) as idx:
                ctx.emit(K.Store(mine, idx, K.Load(held, idx) if isinstance(held, K.Buffer)
                                 else held))
    stmt = K.HostCall(len(ctx.host_calls), eqn, (), (), role="exchange", layout=p)
    ctx.host_calls.append(stmt)
    ctx.emit(stmt)
    for y, (_, parts, _) in zip(eqn.outvars, operands):
        total = K.Buffer(ctx.names("s"), y.aval.shape, y.aval.dtype, "sum", parts=parts)
        ctx.temps.append(total)
        if y in p.read_as_sums and y not in ctx.out_slots:
            ctx.bind_buffer(y, total)       # read element by element: summed as read
            continue
        buf = ctx.new_buffer(y)
        with ctx.nest(buf.shape) as idx:
            ctx.emit(K.Store(buf, idx, K.Load(total, idx)))


def finish(ctx: Ctx) -> None:
    """The bind call, first in the kernel (the hosted buffers' addresses), and the
    sums' run-time half (`transport.ProgramSums`) for both host calls."""
    p = ctx.process_sums
    if p is None:
        return
    bufs, entries = [], []
    for operands in p.operands.values():
        for mine, parts, offset in operands:
            bufs.append(mine)
            entries.append((None, offset))
            for rank, part in enumerate(parts):
                bufs.append(part)
                entries.append((rank, offset))
    p.sums = ProgramSums(p.procs, entries, "; ".join(p.texts), p.end)
    for s in ctx.host_calls:
        if s.role == "exchange":
            s.layout = p.sums
    stmt = K.HostCall(len(ctx.host_calls), p.first, (), bufs, role="bind", layout=p.sums)
    ctx.host_calls.append(stmt)
    ctx.block.insert(0, stmt)
