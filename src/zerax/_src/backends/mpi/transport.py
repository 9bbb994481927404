"""The transport of collectives over processes: MPI calls on contiguous NumPy buffers.

A `ProcessMesh` is a grid of the job's processes with one named axis per dimension
(`zerax.distributed.spmd` uses the 1-D grid of every process; ``shard_map`` the
process axes of its mesh).  Each of its axes is a *process group*, registered in
``core.process_groups`` under an id that the collectives over it carry (their
``groups`` parameter); `AxisGroup.communicator` gives the `Communicator` of one or
several axes of a mesh together: an MPI communicator (``Comm.Split`` of the world)
whose ranks are the axes' members in row-major order.

Every collective first checks that all its processes call the same collective on
operands of the same shape and dtype: one Allreduce of two integers (a digest of what
each process passes, and its negation, reduced by MAX: equal everywhere exactly when
the maximum and the minimum agree).  When they differ, every process learns what each
one passed (an Allgather of fixed-size descriptions) and raises the same
`CollectiveMismatchError`, instead of MPI reading past a buffer or waiting forever.

The data calls take the operand's buffer as it is (the collective has made it
contiguous, moving the named dimension to the front where needed) and write into a
new array: Allreduce, Allgather, Reduce_scatter_block, Alltoall, Sendrecv, Bcast.

A reduction among a few processes of one machine (at most `SHARED_MAX_PROCESSES`,
messages of `SHARED_MIN_BYTES` to `SHARED_MAX_BYTES` per process) goes through an MPI-3
shared-memory window (`SharedSlots`) instead of Allreduce: each process copies its
operands into its slot of the window, a barrier, and each sums every slot, in rank
order, into its result (so every process holds the same bits).  That is two passes over
the data where MPICH's Allreduce pipelines it through small cells: 5.4 MB of float64
on 2 processes took 0.9 to 1.2 ms with Allreduce, 0.5 ms so.  A compiled program skips
the copy and the second pass (``lowering/process_sums.py``: its kernel computes the
operands into the slot and sums where it reads).  Data that is only moved travels as
bytes, so every dtype goes through; sums of float16
are taken in float32 (MPI has no float16 arithmetic), and ``pmax``/``pmin`` give NaN
wherever any process holds one (as the vmap reduction does; MPI's MAX does not).
"""

from __future__ import annotations

import abc
import ctypes
import hashlib
import itertools
import math
import os

import numpy as np

from .... import errors
from ...base.dtypes import is_bfloat16
from ...base.dtypes import kind as dtype_kind
from ...core.core import process_groups
from .world import World, mpi

_DESCRIPTION_BYTES = 400
_group_ids = itertools.count()

# The reductions that go through a shared-memory window (`SharedSlots`): messages from
# SHARED_MIN_BYTES per process (below, Allreduce's latency is as short) up to
# SHARED_MAX_BYTES (the window holds every process's message at once, in the machine's
# shared memory, /dev/shm: a container may give it little), among at most
# SHARED_MAX_PROCESSES processes (each reads every slot: the reads grow with the count).
SHARED_MIN_BYTES = 64 << 10
SHARED_MAX_BYTES = 32 << 20
SHARED_MAX_PROCESSES = 4
_SLOT_ALIGN = 64


def digest(text: str) -> int:
    """A 56-bit digest of ``text``, the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=7).digest(), "little")


def _contiguous(x) -> np.ndarray:
    """``x`` as a C-contiguous array of its own shape (NumPy's ascontiguousarray makes
    a 0-d array 1-d)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(x.shape)


def _arithmetic(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype MPI reduces: float16 and bfloat16 (which MPI has no arithmetic
    for) widened to float32, exactly, and rounded back by the caller; booleans as bytes."""
    if x.dtype == np.float16 or is_bfloat16(x.dtype):
        return x.astype(np.float32)
    if x.dtype == np.bool_:
        return x.view(np.uint8)
    return x


def _as_bytes(x: np.ndarray) -> np.ndarray:
    return _contiguous(x).reshape(-1).view(np.uint8)


def slot_offsets(sizes) -> tuple[list, int]:
    """Where each of messages of ``sizes`` bytes starts in a slot (64-byte aligned),
    and the slot's size."""
    offsets, end = [], 0
    for n in sizes:
        offsets.append(end)
        end += -(-int(n) // _SLOT_ALIGN) * _SLOT_ALIGN
    return offsets, end


def shared_sum_fits(processes: int, nbytes: int) -> bool:
    """Whether a sum of ``nbytes`` per process among ``processes`` processes of one
    machine goes through their shared slots (the one rule, eager and compiled)."""
    return 1 < processes <= SHARED_MAX_PROCESSES and \
        SHARED_MIN_BYTES <= nbytes <= SHARED_MAX_BYTES


class Slots(abc.ABC):
    """One slot of ``nbytes`` per process of a communicator (``slots[rank]``, bytes),
    every slot readable by every process after `exchange`.  A process writes only its
    own slot, between `acquire` and `exchange`.

    A use of the slots starts with a collective of every process (the agreement check)
    and has read them before it returns: so no process writes its slot while another
    still reads the last use's values."""

    def __init__(self, comm, nbytes: int, slots: list):
        self.comm, self.nbytes, self.slots = comm, nbytes, slots
        self.bases = [slot.ctypes.data for slot in slots]

    def address(self, rank: int, offset: int) -> int:
        """The address of byte ``offset`` of process ``rank``'s slot, here."""
        return self.bases[rank] + offset

    def acquire(self) -> None:
        """Before this process writes its slot (the agreement check has run)."""

    @abc.abstractmethod
    def exchange(self, used: int) -> None:
        """Every process has written the first ``used`` bytes of its slot: make every
        slot's visible to all."""

    @abc.abstractmethod
    def free(self) -> None:
        """Give the memory back (collective)."""


class SharedSlots(Slots):
    """The slots in the machine's shared memory: an MPI-3 shared-memory window
    (``MPI.Win.Allocate_shared``) of the processes of one machine."""

    def __init__(self, comm, nbytes: int):
        MPI = mpi()
        self.win = MPI.Win.Allocate_shared(nbytes, 1, comm=comm)
        # one passive epoch for the window's life: Sync + Barrier order the accesses
        self.win.Lock_all(MPI.MODE_NOCHECK)
        super().__init__(comm, nbytes, [np.frombuffer(self.win.Shared_query(r)[0],
                                                      np.uint8)[:nbytes]
                                        for r in range(comm.Get_size())])

    def acquire(self) -> None:
        self.win.Sync()       # (MPI-3's unified model: the others' reads are done)

    def exchange(self, used: int) -> None:
        self.win.Sync()
        self.comm.Barrier()
        self.win.Sync()

    def free(self) -> None:
        self.win.Unlock_all()
        self.win.Free()


class GatheredSlots(Slots):
    """The slots in this process's memory, where the machine's shared memory lacks room
    (or the processes do not share one): `exchange` copies every process's slot to
    every process (Allgather)."""

    def __init__(self, comm, nbytes: int):
        self.memory = np.zeros(comm.Get_size() * nbytes, np.uint8)
        self._types: dict = {}
        super().__init__(comm, nbytes, [self.memory[r * nbytes:(r + 1) * nbytes]
                                        for r in range(comm.Get_size())])

    def exchange(self, used: int) -> None:
        if not used:
            return
        kind = self._types.get(used)
        if kind is None:     # ``used`` bytes at the start of each slot of ``nbytes``
            run = mpi().BYTE.Create_contiguous(used)
            kind = self._types[used] = run.Create_resized(0, self.nbytes).Commit()
            run.Free()
        self.comm.Allgather(mpi().IN_PLACE, [self.memory, 1, kind])

    def free(self) -> None:
        for kind in self._types.values():
            kind.Free()
        self.memory = self.slots = None


class ProgramSums:
    """The sums in shared memory of a compiled program (``lowering/process_sums.py``)
    over the process axes ``procs``: ``entries``, for each hosted buffer of the kernel
    in order, whose slot it is (a rank, or None for this process's) and its offset
    there; ``nbytes`` of each slot used; ``text`` says what they are (for the agreement
    check)."""

    def __init__(self, procs, entries, text: str, nbytes: int):
        self.procs, self.entries, self.nbytes = tuple(procs), list(entries), nbytes
        self.text = f"the sums in shared memory of a compiled program: {text}"
        self.digest = digest(self.text)
        self._table = (None, None)    # (the slots, the addresses of entries in them)

    def bind(self, address: int) -> None:
        """Write the hosted buffers' addresses (int64 each) at ``address``, after the
        agreement check of every process."""
        comm = process_groups[self.procs[0]].communicator(self.procs)
        slots = comm.slots_for_program(self.text, self.digest, self.nbytes)
        seen, table = self._table
        if seen is not slots:
            table = np.array([slots.address(comm.rank if r is None else r, off)
                              for r, off in self.entries], np.int64)
            self._table = slots, table
        ctypes.memmove(address, table.ctypes.data, table.nbytes)

    def exchange(self, address: int) -> None:
        """Every process has computed its operands into its slot: make the slots
        visible to all (``address``: the host call's table, empty)."""
        comm = process_groups[self.procs[0]].communicator(self.procs)
        comm.exchange_program_slots(self.nbytes)


def _read_slots(slots: Slots, works: list, offsets: list) -> list:
    """Each process's copy of ``works`` in ``slots`` (views), by rank."""
    return [[slot[o:o + w.nbytes].view(w.dtype).reshape(w.shape)
             for o, w in zip(offsets, works)] for slot in slots.slots]


class Communicator:
    """Collectives among the processes of some axes (``names``, for messages)."""

    def __init__(self, comm, names: tuple, one_machine: bool = False):
        self.comm, self.names = comm, names
        self.size, self.rank = comm.Get_size(), comm.Get_rank()
        self.one_machine = one_machine   # whether they all run on this machine
        # the slots of eager sums, and those of compiled programs (apart: an eager sum
        # inside a compiled program, a loop body's, must not touch the program's)
        self._slots = self._program_slots = None

    def _grown(self, slots, nbytes: int) -> Slots:
        """``slots``, or new ones with room for ``nbytes`` per process: in the machine's
        shared memory where it has room, else gathered.  Collective: every process asks
        with the same ``nbytes`` (after an agreement check), so all decide alike."""
        if slots is not None and slots.nbytes >= nbytes:
            return slots
        want = max(nbytes, min(2 * slots.nbytes, SHARED_MAX_BYTES) if slots is not None
                   else 0)
        MPI = mpi()
        room = np.array([self.one_machine and
                         _shared_memory_free() >= 2 * want * self.size], np.int8)
        every = np.empty(1, np.int8)
        self.comm.Allreduce(room, every, op=MPI.MIN)
        if slots is not None:
            slots.free()
        try:
            return (SharedSlots if every[0] else GatheredSlots)(self.comm, want)
        except (MPI.Exception, MemoryError) as e:   # (MPI's own error, not for the user)
            where = "the machine's shared memory" if every[0] else "this process"
            raise errors.DistributedError(
                f"sums over the process axes {', '.join(map(repr, self.names))}: "
                f"{want * self.size} bytes for their slots could not be allocated in "
                f"{where} ({type(e).__name__}: {e}). Free memory (or space in /dev/shm), "
                "or sum smaller values at a time.") from None

    def eager_slots(self, nbytes: int) -> Slots:
        """The slots of eager sums (and of host calls' sums), with room for ``nbytes``
        per process; the caller has run the agreement check."""
        self._slots, old = None, self._slots     # (never kept once freed)
        self._slots = self._grown(old, nbytes)
        self._slots.acquire()
        return self._slots

    def slots_for_program(self, text: str, text_digest: int, nbytes: int) -> Slots:
        """The slots of a compiled program's sums (``text``: what they are, for the
        agreement check, ``text_digest`` its `digest`), after checking that every
        process runs the same sums."""
        self._agree_digest(text, text, text_digest)
        self._program_slots, old = None, self._program_slots
        self._program_slots = self._grown(old, nbytes)
        self._program_slots.acquire()
        return self._program_slots

    def exchange_program_slots(self, used: int) -> None:
        """Every process has written its slot of the program slots: make them visible."""
        self._program_slots.exchange(used)

    # -- agreement
    def _agree(self, what: str, x, detail: str = "", nan: bool = False) -> bool:
        """Check that every process calls ``what`` on operands (an array or a list of
        them) of the same shapes and dtypes; returns whether any process's operands hold
        a NaN (when ``nan``)."""
        xs = x if isinstance(x, list) else [x]
        text = f"{what}{detail} of " + ", ".join(f"{v.dtype.name}{list(v.shape)}" for v in xs)
        has_nan = bool(nan) and any(dtype_kind(v.dtype) == "f" and
                                    bool(np.isnan(_arithmetic(v)).any()) for v in xs)
        return self._agree_digest(what, text, digest(text), has_nan)

    def _agree_digest(self, what: str, text: str, h: int, has_nan: bool = False) -> bool:
        buf = np.array([h, -h, int(has_nan)], np.int64)
        out = np.empty(3, np.int64)
        self.comm.Allreduce(buf, out, op=mpi().MAX)
        if out[0] != h or out[1] != -h:
            raise self._mismatch(what, text)
        return bool(out[2])

    def _mismatch(self, what: str, text: str) -> errors.CollectiveMismatchError:
        mine = np.zeros(_DESCRIPTION_BYTES, np.uint8)
        raw = f"process {mpi().COMM_WORLD.Get_rank()}: {text}".encode()[:_DESCRIPTION_BYTES]
        mine[:len(raw)] = np.frombuffer(raw, np.uint8)
        every = np.empty((self.size, _DESCRIPTION_BYTES), np.uint8)
        self.comm.Allgather(mine, every)
        lines = []
        for k in range(self.size):
            desc = every[k].tobytes().rstrip(b"\0").decode(errors="replace")
            lines.append(f"  {desc}")
        err = errors.CollectiveMismatchError(
            f"the processes of {what} disagree (at {errors.user_frame()}):\n"
            + "\n".join(lines) + "\nEvery process must call "
            "the same collectives, in the same order, on operands of the same shape and "
            "dtype (a per-process value of another size: pad it, or all_gather sizes "
            "first).")
        err.same_on_every_process = True   # (the fault handler prints it once)
        return err

    # -- collectives
    def allreduce(self, xs: list, op: str, what: str, outs=None) -> list:
        """The elementwise ``op`` ("sum", "max", "min") over the processes of each array
        of ``xs``: one agreement check, then through the shared slots (a few processes
        of one machine, a message of a size that gains) or one nonblocking Iallreduce
        per array, all in flight together (packing them into one buffer first measured
        several times slower: the copy and the fresh pages cost more than the calls
        they save).  ``outs`` (or None): writable C-contiguous arrays of the results'
        shapes and dtypes, written into directly where no conversion is needed."""
        xs = [_contiguous(x) for x in xs]
        if any(x.dtype.kind == "c" for x in xs) and op != "sum":
            raise errors.ZeraxTypeError(
                f"{what} of complex values over processes: complex numbers have no order "
                "(take pmax of their real part or magnitude)")
        works = [_arithmetic(x) for x in xs]
        offsets, nbytes = slot_offsets([w.nbytes for w in works])
        shared = self.one_machine and shared_sum_fits(self.size, nbytes)
        # (the shared reduction's maximum is NaN wherever a process holds one already)
        has_nan = self._agree(what, xs, nan=op != "sum" and not shared)
        MPI = mpi()
        mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
        given = outs if outs is not None else [None] * len(xs)
        outs = [o if o is not None and w is x and o.dtype == x.dtype and
                o.shape == x.shape and o.flags.c_contiguous and o.flags.writeable and
                not np.may_share_memory(o, x)
                else np.empty_like(w) for x, w, o in zip(xs, works, given)]
        live = [k for k, w in enumerate(works) if w.size]
        if shared:
            slots = self.eager_slots(nbytes)
            views = _read_slots(slots, works, offsets)
            for mine, w in zip(views[self.rank], works):
                np.copyto(mine, w)
            slots.exchange(nbytes)
            add = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
            for k, out in enumerate(outs):     # in rank order: the same bits everywhere
                add(views[0][k], views[1][k], out=out)
                for theirs in views[2:]:
                    add(out, theirs[k], out=out)
        elif len(live) == 1:
            self.comm.Allreduce(works[live[0]], outs[live[0]], op=mpi_op)
        elif live:
            MPI.Request.Waitall([self.comm.Iallreduce(works[k], outs[k], op=mpi_op)
                                 for k in live])
        if has_nan:   # NaN wins, as in the vmap reduction (MPI's MAX does not say)
            for w, out in zip(works, outs):
                if w.dtype.kind == "f" and w.size:
                    mask = np.isnan(w).view(np.uint8)
                    anywhere = np.empty_like(mask)
                    self.comm.Allreduce(mask, anywhere, op=MPI.MAX)
                    out[anywhere.astype(bool)] = np.nan
        return [out.view(np.bool_) if x.dtype == np.bool_ else out.astype(x.dtype, copy=False)
                for x, out in zip(xs, outs)]

    def allgather(self, x: np.ndarray, what: str) -> np.ndarray:
        """Every process's ``x``, stacked along a new first dimension."""
        x = _contiguous(x)
        self._agree(what, x)
        out = np.empty((self.size,) + x.shape, x.dtype)
        self.comm.Allgather(_as_bytes(x), out.reshape(-1).view(np.uint8))
        return out

    def reduce_scatter(self, x: np.ndarray, what: str) -> np.ndarray:
        """Row ``rank`` of the sum over the processes of ``x`` (``x.shape[0] == size``)."""
        x = _contiguous(x)
        self._agree(what, x)
        dtype = x.dtype
        work = _arithmetic(x)
        out = np.empty(x.shape[1:], work.dtype)
        self.comm.Reduce_scatter_block(work, out, op=mpi().SUM)
        return out.astype(dtype) if out.dtype != dtype else out

    def alltoall(self, x: np.ndarray, what: str) -> np.ndarray:
        """Row ``rank`` of every process's ``x``, stacked (``x.shape[0] == size``)."""
        x = _contiguous(x)
        self._agree(what, x)
        out = np.empty_like(x)
        self.comm.Alltoall(_as_bytes(x), out.reshape(-1).view(np.uint8))
        return out

    def permute(self, x: np.ndarray, perm, what: str) -> np.ndarray:
        """The ``x`` of the process that sends here (zeros if none): one Sendrecv."""
        x = _contiguous(x)
        self._agree(what, x, f" {list(perm)}")
        MPI = mpi()
        dest = next((t for s, t in perm if s == self.rank), MPI.PROC_NULL)
        source = next((s for s, t in perm if t == self.rank), MPI.PROC_NULL)
        out = np.zeros_like(x)
        if x.size:
            self.comm.Sendrecv(_as_bytes(x), dest=dest, recvbuf=out.reshape(-1).view(np.uint8),
                               source=source)
        return out

    def broadcast(self, x: np.ndarray, root: int, what: str) -> np.ndarray:
        """Process ``root``'s ``x`` (every process passes one of the same shape)."""
        x = _contiguous(x)
        self._agree(what, x, f" from {root}")
        out = x.copy() if self.rank == root else np.empty_like(x)
        if x.size:
            self.comm.Bcast(out.reshape(-1).view(np.uint8), root=root)
        return out

    def barrier(self) -> None:
        self.comm.Barrier()


def _shared_memory_free() -> int:
    """Bytes free in the machine's shared memory (/dev/shm, where MPI's shared windows
    live); 0 where it cannot be read."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


class ProcessMesh:
    """The job's processes as a grid: ``ranks[c]`` is the world rank of the process at
    grid position ``c``; axis ``k`` of the grid is named ``names[k]``."""

    def __init__(self, world: World, ranks: np.ndarray, names: tuple):
        ranks = np.asarray(ranks, np.int64)
        if sorted(ranks.reshape(-1).tolist()) != list(range(world.size)):
            raise errors.DistributedError(
                f"a process mesh must hold every process of the job once: ranks "
                f"{ranks.reshape(-1).tolist()} for {world.size} processes")
        self.world, self.ranks, self.names = world, ranks, tuple(names)
        self.shape = ranks.shape
        # every process of the job on this machine: its reductions can go through
        # shared memory (`SharedSlots`)
        self.one_machine = world.local_size == world.size
        where = np.argwhere(ranks == world.rank)
        self.coords = tuple(int(c) for c in where[0])
        self._comms: dict = {}
        self.group_ids = []
        for k in range(ranks.ndim):
            gid = next(_group_ids)
            process_groups[gid] = AxisGroup(self, k)
            self.group_ids.append(gid)

    def communicator(self, axes: tuple) -> Communicator:
        """The communicator of the grid axes ``axes`` together (row-major, in order)."""
        comm = self._comms.get(axes)
        if comm is None:
            others = [k for k in range(len(self.shape)) if k not in axes]
            color = int(np.ravel_multi_index([self.coords[k] for k in others],
                                             [self.shape[k] for k in others])) if others else 0
            key = int(np.ravel_multi_index([self.coords[k] for k in axes],
                                           [self.shape[k] for k in axes]))
            # (decided alike in every process: Split is a collective of the world)
            whole = axes == tuple(range(len(self.shape))) and np.array_equal(
                self.ranks.reshape(-1), np.arange(self.world.size))
            sub = self.world.comm if whole else self.world.comm.Split(color, key)
            comm = self._comms[axes] = Communicator(sub, tuple(self.names[k] for k in axes),
                                                    one_machine=self.one_machine)
        return comm


class AxisGroup:
    """One axis of a `ProcessMesh`, as ``core.process_groups`` holds it."""

    def __init__(self, mesh: ProcessMesh, axis: int):
        self.mesh, self.axis = mesh, axis
        self.size, self.index = mesh.shape[axis], mesh.coords[axis]

    def sums_in_shared_memory(self, group_ids, nbytes: int) -> bool:
        """Whether a sum of ``nbytes`` per process over the axes ``group_ids`` (of this
        mesh) goes through `SharedSlots`: its processes share this machine, they are
        few, and the message is of a size that gains (no collective: a compiler asks)."""
        sizes = [process_groups[g].size for g in group_ids
                 if isinstance(process_groups.get(g), AxisGroup)
                 and process_groups[g].mesh is self.mesh]
        return self.mesh.one_machine and len(sizes) == len(group_ids) and \
            shared_sum_fits(math.prod(sizes), nbytes)

    def communicator(self, group_ids) -> Communicator:
        axes = []
        for gid in group_ids:
            g = process_groups.get(gid)
            if not isinstance(g, AxisGroup) or g.mesh is not self.mesh:
                raise errors.NotSupportedError(
                    f"a collective over the process axes of two different meshes "
                    f"({group_ids}): name axes of one mesh (zerax.sharding.Mesh) at a time")
            axes.append(g.axis)
        return self.mesh.communicator(tuple(axes))
