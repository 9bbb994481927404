"""`zerax.distributed`: one program on several processes (SPMD), over MPI.

``mpiexec -n 4 python train.py`` starts four copies of the program; in each,
`initialize` reads MPI's world (through mpi4py) and `spmd` runs a function with a named
axis whose members are the processes: ``lax.psum(g, "data")`` inside it sums ``g``
over the four processes (an MPI Allreduce), eagerly, under ``grad`` (the transpose of
a cross-process psum is a cross-process psum) and inside ``jit`` (the compiled
program calls MPI between its kernels).  Without a launcher the world is this one
process and the same program runs unchanged.

Each process has one CPU device (``zerax.config.num_cpu_devices`` of them: a mesh axis
over them is vmapped); `zerax.devices` lists every process's, `zerax.local_devices`
this process's, and the device of this process's arrays is its first one.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from ... import errors
from ..backends import mpi as _mpi
from ..base.config import config
from ..core import tree
from ..core.api_util import as_input
from ..core.array import CPU, Array, Device
from ..core.core import ProcessAxis, Tracer, bind_process_axes

__all__ = ["initialize", "is_initialized", "shutdown", "spmd", "broadcast",
           "process_allgather", "barrier", "world", "global_devices", "local_devices"]

_state: dict = {"world": None, "mesh": None, "explicit": False}


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, *, use_mpi=None, **kwargs) -> None:
    """Start this process's part of a multi-process program (JAX's
    ``jax.distributed.initialize``): under ``mpiexec`` (or a cluster's launcher) it
    reads MPI's world through mpi4py; without one the world is this process alone (no
    MPI is loaded; ``use_mpi=True`` loads it anyway).  Idempotent.

    JAX's arguments are accepted: a coordinator address has no use over MPI, and
    ``num_processes``/``process_id``, when given, must agree with MPI's world.  On a
    job of several processes it also makes an uncaught exception in one process end
    the whole job with that process's traceback printed once, leaves the notices of
    long compiles to process 0, and, unless ``ZERAX_NUM_THREADS`` says otherwise, gives
    compiled programs the cores of this machine shared among its processes.

    >>> from zerax import distributed
    >>> distributed.initialize()
    >>> distributed.is_initialized()
    True
    """
    del coordinator_address, local_device_ids, kwargs
    w = _state["world"]
    # (a world read before initialize, by process_index() say, is this process alone)
    if not _state["explicit"] or (use_mpi and w.comm is None):
        w = _mpi.start(use_mpi)
        _state["world"], _state["mesh"] = w, None
        if w.size > 1:
            _mpi.install_fault_handler(w)
            _share_cores(w)
            if w.rank != 0:   # one "compiling ..." notice per job, from process 0
                config.compile_notice_s = None
    _state["explicit"] = True
    if num_processes is not None and int(num_processes) != w.size:
        raise errors.DistributedError(
            f"initialize(num_processes={num_processes}) but MPI started {w.size} "
            f"process(es) (mpiexec -n {num_processes} python ...).")
    if process_id is not None and int(process_id) != w.rank:
        raise errors.DistributedError(
            f"initialize(process_id={process_id}) but MPI numbers this process {w.rank}.")
    _sync_devices()


def _share_cores(w) -> None:
    if os.environ.get("ZERAX_NUM_THREADS") or w.local_size <= 1:
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:   # (not on Linux)
        cores = os.cpu_count() or 1
    config.update("num_threads", max(1, cores // w.local_size))


def is_initialized() -> bool:
    """Whether `initialize` has run in this process."""
    return _state["explicit"]


def shutdown() -> None:
    """Wait for every process (a barrier), as JAX's ``jax.distributed.shutdown`` does
    before leaving; MPI itself is finalised when the process exits."""
    if _state["world"] is not None and _state["world"].size > 1:
        world().comm.Barrier()


def world():
    """This job's processes (`backends.mpi.World`); a world of this one process until
    `initialize` runs."""
    w = _state["world"]
    if w is None:
        w = _state["world"] = _mpi.start(False)
    return w


def world_mesh():
    """The 1-D process mesh of every process, in rank order (the axis of `spmd`)."""
    mesh = _state["mesh"]
    if mesh is None:
        w = world()
        mesh = _state["mesh"] = _mpi.ProcessMesh(w, np.arange(w.size), ("world",))
    return mesh


# --------------------------------------------------------------------------- devices

_devices_of: dict = {}


def _sync_devices() -> None:
    """Number this process's devices: process p's local device k has id ``p * L + k``;
    the first is the host device every array lives on (``core.array.CPU``)."""
    w, per = world(), config.num_cpu_devices
    CPU.id, CPU.process_index = w.rank * per, w.rank


def global_devices() -> list:
    """Every process's CPU devices, by id."""
    w, per = world(), config.num_cpu_devices
    _sync_devices()
    key = (w.size, w.rank, per)
    devs = _devices_of.get(key)
    if devs is None:
        devs = []
        for p in range(w.size):
            for k in range(per):
                devs.append(CPU if (p, k) == (w.rank, 0) else
                            Device("numba", "cpu", p * per + k, process_index=p))
        _devices_of[key] = devs
    return list(devs)


def local_devices(process_index=None) -> list:
    """The CPU devices of process ``process_index`` (default: this one)."""
    p = world().rank if process_index is None else int(process_index)
    return [d for d in global_devices() if d.process_index == p]


# --------------------------------------------------------------------------- spmd

def spmd(fun=None, axis_name="data"):
    """``fun`` run by every process on its own arguments, with ``axis_name`` naming the
    axis whose members are the processes (in rank order): collectives over it
    (``lax.psum``, ``pmean``, ``all_gather``, ``ppermute``, ...) are MPI calls among
    them.  ``fun`` may be jitted, and may be jitted after; every process must call the
    collectives in the same order on operands of the same shapes (else each raises a
    `CollectiveMismatchError`).  `initialize` runs first if it has not.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> from zerax import distributed
    >>> mean = distributed.spmd(lambda g: lax.pmean(g, "data"), axis_name="data")
    >>> mean(znp.array([1.0, 3.0]))        # one process here: the mean of one value
    Array([1., 3.], dtype=float64)
    """
    if fun is None:
        return functools.partial(spmd, axis_name=axis_name)
    if not callable(fun):
        raise errors.ZeraxTypeError(f"spmd takes a function, got {type(fun).__name__}")
    if not isinstance(axis_name, str):
        raise errors.ZeraxTypeError(f"spmd's axis_name must be a string, got {axis_name!r}")

    @functools.wraps(fun)
    def run(*args, **kwargs):
        if not _state["explicit"]:
            initialize()
        mesh = world_mesh()
        axis = ProcessAxis(axis_name, mesh.shape[0], mesh.coords[0], mesh.group_ids[0])
        with bind_process_axes([axis]):
            return fun(*args, **kwargs)
    return run


# --------------------------------------------------------------------------- utilities

def _is_array(leaf) -> bool:
    return isinstance(leaf, (Array, np.ndarray, np.generic, Tracer, int, float, complex))


def _leaves(what, x):
    """The array leaves of ``x`` as NumPy arrays (other leaves, a Module's functions
    say, stay as they are: ``None`` in the list), and the tree."""
    leaves, treedef = tree.tree_flatten(x)
    vals = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tracer):
            raise errors.ConcretizationError(
                f"{what} of a traced value (leaf {i}): it moves concrete arrays between "
                "processes; call it outside jit/grad/vmap, or use a collective "
                "(lax.all_gather) inside spmd instead.")
        vals.append(np.asarray(as_input(leaf, f"{what} leaf {i}")._value)
                    if _is_array(leaf) else None)
    return leaves, vals, treedef


def broadcast(x, root: int = 0):
    """Process ``root``'s value of the pytree ``x`` on every process (the same initial
    parameters everywhere), as JAX's ``multihost_utils.broadcast_one_to_all``: every
    process passes a tree of the same structure, shapes and dtypes.

    >>> import zerax.numpy as znp
    >>> from zerax import distributed
    >>> distributed.broadcast({"w": znp.ones(2)})["w"]
    Array([1., 1.], dtype=float64)
    """
    w = world()
    if not 0 <= int(root) < w.size:
        raise errors.ZeraxValueError(f"broadcast: root={root} is not a process of the "
                                     f"{w.size} of this job")
    leaves, vals, treedef = _leaves("broadcast", x)
    comm = world_mesh().communicator((0,)) if w.size > 1 else None
    out = []
    for leaf, v in zip(leaves, vals):
        if v is not None:
            leaf = Array(v if comm is None else comm.broadcast(v, int(root), "broadcast"))
        out.append(leaf)
    return tree.tree_unflatten(treedef, out)


def process_allgather(x, tiled: bool = False):
    """Every process's value of each leaf of ``x``, stacked along a new first axis in
    process order (concatenated along the first axis with ``tiled``), on every process
    (JAX's ``multihost_utils.process_allgather``).

    >>> import zerax.numpy as znp
    >>> from zerax import distributed
    >>> distributed.process_allgather(znp.arange(2.0))   # one process: a stack of one
    Array([[0., 1.]], dtype=float64)
    """
    w = world()
    leaves, vals, treedef = _leaves("process_allgather", x)
    out = []
    for leaf, v in zip(leaves, vals):
        if v is None:
            out.append(leaf)
            continue
        g = world_mesh().communicator((0,)).allgather(v, "process_allgather") \
            if w.size > 1 else v[None]
        if tiled:
            if g.ndim < 2:
                raise errors.ZeraxValueError(
                    "process_allgather(tiled=True) concatenates along the first axis: "
                    "the leaves need one (0-d leaves: use tiled=False)")
            g = g.reshape((-1,) + g.shape[2:])
        out.append(Array(g))
    return tree.tree_unflatten(treedef, out)


def barrier() -> None:
    """Wait until every process of the job has reached this point."""
    if world().size > 1:
        world().comm.Barrier()
