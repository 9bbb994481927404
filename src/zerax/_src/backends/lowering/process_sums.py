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
has finished reading the slots' last values.  A result read other than element by
element (by a product, a host call) is copied out of the slots first.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from .. import kernel_ir as K
from ..mpi.transport import digest, slot_offsets
from ...core.core import process_groups
from ...ir.ir import Literal, Var
from ...ops.collectives import communicator, describe, psum_p, split_axes
from .context import Ctx
from .fused import fusible

# The dtypes whose sums the kernel adds as NumPy does (integers wrap around, as MPI's)
_DTYPES = frozenset(np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64))


class _Sums:
    """The shared sums of one kernel: their process axes, and for each operand its
    slot offset, this process's hosted buffer and every process's (rank order)."""

    def __init__(self, procs, size):
        self.procs, self.size = procs, size
        self.eqns: dict = {}       # id(eqn) -> [(mine, parts, offset)] per operand
        self.texts: list = []
        self.end = 0               # bytes of a slot used so far
        self.first = None          # the first of the sums (the bind call names it)


def plan(ctx: Ctx, jaxpr) -> None:
    """Choose the psums of the top-level program ``jaxpr`` that sum in shared memory,
    and give their operands hosted buffers to be computed into (`Ctx.new_buffer`)."""
    sums = None
    for eqn in jaxpr.eqns:
        procs = _shared_axes(eqn)
        if procs is None or (sums is not None and procs != sums.procs):
            continue
        if sums is None:
            sums = _Sums(procs, math.prod(process_groups[g].size for g in procs))
            sums.first = eqn
        offsets, nbytes = slot_offsets([_nbytes(v) for v in eqn.invars])
        operands = []
        for v, off in zip(eqn.invars, offsets):
            shape, dtype = v.aval.shape, v.aval.dtype
            mine = K.Buffer(ctx.names("h"), shape, dtype, "hosted")
            parts = [K.Buffer(ctx.names("h"), shape, dtype, "hosted")
                     for _ in range(sums.size)]
            ctx.temps.extend([mine, *parts])
            ctx.hosted_for.setdefault(v, mine)
            operands.append((mine, parts, sums.end + off))
        sums.eqns[id(eqn)] = operands
        sums.end += nbytes
        sums.texts.append(describe(eqn.primitive.name, eqn.params["axis_name"],
                                   eqn.params["groups"]) + " of " +
                          ", ".join(v.aval.str_short() for v in eqn.invars))
    ctx.process_sums = sums


def _nbytes(v) -> int:
    return math.prod(v.aval.shape) * np.dtype(v.aval.dtype).itemsize


def _shared_axes(eqn):
    """The process axes (group ids) of ``eqn`` if it is a psum to sum in shared memory."""
    if eqn.primitive is not psum_p or any(type(v) is Literal for v in eqn.invars) or \
            any(np.dtype(v.aval.dtype) not in _DTYPES for v in eqn.invars):
        return None
    local, procs = split_axes(eqn.params["axis_size"], eqn.params["groups"])
    group = process_groups.get(procs[0]) if procs and local == 1 else None
    ask = getattr(group, "sums_in_shared_memory", None)
    nbytes = slot_offsets([_nbytes(v) for v in eqn.invars])[1]
    return procs if ask is not None and ask(procs, nbytes) else None


def lowers(ctx: Ctx, eqn) -> bool:
    """Whether ``eqn`` is one of the kernel's shared sums (`lower` is its rule)."""
    sums = ctx.process_sums
    return sums is not None and id(eqn) in sums.eqns


def lower(ctx: Ctx, eqn) -> None:
    """The operands into this process's slots, the exchange, the results as sums of
    every process's slot."""
    sums = ctx.process_sums
    operands = sums.eqns[id(eqn)]
    for v, (mine, _, _) in zip(eqn.invars, operands):
        if ctx.values.get(v) is not mine:        # computed elsewhere: copied in
            held = ctx.values[v]
            with ctx.nest(mine.shape) as idx:
                ctx.emit(K.Store(mine, idx, K.Load(held, idx) if isinstance(held, K.Buffer)
                                 else held))
    stmt = K.HostCall(len(ctx.host_calls), eqn, (), (), role="exchange",
                      layout=sums.procs)
    ctx.host_calls.append(stmt)
    ctx.emit(stmt)
    uses = _uses(ctx.program)
    for y, (_, parts, _) in zip(eqn.outvars, operands):
        total = K.Buffer(ctx.names("s"), y.aval.shape, y.aval.dtype, "sum", parts=parts)
        ctx.temps.append(total)
        if y not in ctx.out_slots and uses.get(y) and all(map(fusible, uses[y])):
            ctx.bind_buffer(y, total)       # read element by element: summed as read
            continue
        buf = ctx.new_buffer(y)
        with ctx.nest(buf.shape) as idx:
            ctx.emit(K.Store(buf, idx, K.Load(total, idx)))


def _uses(jaxpr) -> dict:
    uses: dict = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if type(a) is Var:
                uses.setdefault(a, []).append(e)
    return uses


def finish(ctx: Ctx) -> None:
    """The bind call, first in the kernel: the hosted buffers' addresses."""
    sums = ctx.process_sums
    if sums is None:
        return
    bufs, layout = [], []
    for operands in sums.eqns.values():
        for mine, parts, offset in operands:
            bufs.append(mine)
            layout.append((None, offset))
            for rank, part in enumerate(parts):
                bufs.append(part)
                layout.append((rank, offset))
    stmt = K.HostCall(len(ctx.host_calls), sums.first, (), bufs, role="bind",
                      layout=(sums.procs, layout, "; ".join(sums.texts), sums.end))
    ctx.host_calls.append(stmt)
    ctx.block.insert(0, stmt)


# --------------------------------------------------------------------------- at run time

def host_function(stmt):
    """``call(address)`` for a host call of role "bind" (writes the hosted buffers'
    addresses at ``address``) or "exchange"."""
    if stmt.role == "exchange":
        procs = stmt.layout

        def exchange(address):
            communicator(procs).exchange()
        return exchange
    procs, layout, text, nbytes = stmt.layout
    text = f"the sums in shared memory of a compiled program: {text}"
    h = digest(text)
    table_type = ctypes.c_int64 * max(len(layout), 1)

    def bind(address):
        comm = communicator(procs)
        slots = comm.slots_for_program(text, h, nbytes)
        table = table_type.from_address(address)
        for j, (rank, offset) in enumerate(layout):
            table[j] = slots.address(comm.rank if rank is None else rank, offset)
    return bind
