"""JAX's sharding vocabulary: `Mesh`, `PartitionSpec`, `NamedSharding`, `make_mesh`.

A `Mesh` is an array of devices with a name per axis.  zerax's devices are the CPU
devices of the processes of a `zerax.distributed` job (`zerax.devices`), so each axis
of a mesh either runs across processes (its collectives are MPI calls) or within one
process (over its ``num_cpu_devices`` devices: a vmapped axis); `mesh_layout` tells
them apart, and ``shard_map`` runs a function over the mesh.  A `PartitionSpec` says,
per dimension of an array, which mesh axes split it (None: not split);
`NamedSharding` pairs the two (what ``device_put`` and ``jit(in_shardings=)`` will
place arrays by; today every array is whole in each process).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ... import errors
from ..backends import mpi as _mpi
from ..base.config import config
from ..core.array import Device
from . import distributed

__all__ = ["Mesh", "PartitionSpec", "NamedSharding", "make_mesh", "current_mesh",
           "MeshLayout", "mesh_layout"]


class PartitionSpec(tuple):
    """How each dimension of an array is split over the axes of a mesh: an entry per
    leading dimension, each None (not split), a mesh axis name, or a tuple of names
    (split over their product, the first name varying slowest); missing trailing
    entries are None (JAX's ``PartitionSpec``).

    >>> from zerax.sharding import PartitionSpec as P
    >>> P("data", None), P(("data", "model"))
    (PartitionSpec('data', None), PartitionSpec(('data', 'model'),))
    """

    def __new__(cls, *partitions):
        for p in partitions:
            names = p if isinstance(p, tuple) else (p,)
            if p is not None and not all(isinstance(n, str) for n in names):
                raise errors.ZeraxTypeError(
                    f"PartitionSpec entries are None, a mesh axis name or a tuple of "
                    f"names, got {p!r}")
        return super().__new__(cls, tuple(tuple(p) if isinstance(p, list) else p
                                          for p in partitions))

    def __repr__(self):
        return f"PartitionSpec({', '.join(map(repr, self))}{',' if len(self) == 1 else ''})"

    def axes_of(self, ndim: int) -> list:
        """The mesh axis names splitting each of ``ndim`` dimensions (a tuple each)."""
        if len(self) > ndim:
            raise errors.ZeraxValueError(
                f"{self!r} has {len(self)} entries for an array of rank {ndim}")
        out = []
        for p in tuple(self) + (None,) * (ndim - len(self)):
            out.append(() if p is None else p if isinstance(p, tuple) else (p,))
        return out

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


_mesh_stack = threading.local()


class Mesh:
    """Devices in an array whose axes have names (JAX's ``jax.sharding.Mesh``); ``with
    mesh:`` makes it the default mesh of ``shard_map``.

    >>> import numpy as np, zerax as zx
    >>> from zerax.sharding import Mesh
    >>> mesh = Mesh(np.array(zx.devices()), ("data",))
    >>> mesh.shape, mesh.size
    ({'data': 1}, 1)
    """

    def __init__(self, devices, axis_names, *, axis_types=None):
        del axis_types
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        devs = np.empty(np.shape(np.asarray(devices, dtype=object)), dtype=object)
        devs[...] = np.asarray(devices, dtype=object)
        if devs.ndim != len(axis_names):
            raise errors.ZeraxValueError(
                f"Mesh: {len(axis_names)} axis names {axis_names} for a device array of "
                f"rank {devs.ndim} (shape {devs.shape})")
        if len(set(axis_names)) != len(axis_names) or not all(
                isinstance(n, str) for n in axis_names):
            raise errors.ZeraxValueError(f"Mesh axis names must be distinct strings, got "
                                         f"{axis_names}")
        if not all(isinstance(d, Device) for d in devs.flat):
            raise errors.ZeraxTypeError("Mesh takes an array of zerax devices "
                                        "(zerax.devices()), e.g. np.array(zx.devices())")
        ids = [d.id for d in devs.flat]
        if len(set(ids)) != len(ids):
            raise errors.ZeraxValueError(f"Mesh: a device appears twice ({ids})")
        self.devices, self.axis_names = devs, axis_names

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        rank = distributed.world().rank
        return [d for d in self.devices.flat if d.process_index == rank]

    @property
    def is_multi_process(self) -> bool:
        return len({d.process_index for d in self.devices.flat}) > 1

    def __enter__(self):
        stack = getattr(_mesh_stack, "meshes", None)
        if stack is None:
            stack = _mesh_stack.meshes = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _mesh_stack.meshes.pop()
        return False

    def _key(self):
        return (self.axis_names, self.devices.shape, tuple(self.device_ids.flat))

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return "Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape.items()) + ")"


def current_mesh():
    """The mesh of the innermost ``with mesh:`` (None outside one)."""
    stack = getattr(_mesh_stack, "meshes", None)
    return stack[-1] if stack else None


def make_mesh(axis_shapes, axis_names, *, devices=None, axis_types=None) -> Mesh:
    """A mesh of the given shape over ``devices`` (default: every device of the job,
    process by process), as JAX's ``jax.make_mesh``.

    >>> import zerax as zx
    >>> zx.make_mesh((1,), ("data",))
    Mesh('data': 1)
    """
    devs = distributed.global_devices() if devices is None else list(devices)
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if math.prod(axis_shapes) != len(devs):
        raise errors.ZeraxValueError(
            f"make_mesh: the shape {axis_shapes} holds {math.prod(axis_shapes)} devices, "
            f"but there are {len(devs)} ({distributed.world().size} process(es) x "
            f"{config.num_cpu_devices} CPU device(s) each: zerax.config "
            "num_cpu_devices)")
    return Mesh(np.array(devs, dtype=object).reshape(axis_shapes), axis_names,
                axis_types=axis_types)


class NamedSharding:
    """An array split over a mesh by a `PartitionSpec` (JAX's
    ``jax.sharding.NamedSharding``).

    >>> import numpy as np, zerax as zx
    >>> from zerax.sharding import Mesh, NamedSharding, PartitionSpec as P
    >>> s = NamedSharding(Mesh(np.array(zx.devices()), ("data",)), P("data"))
    >>> s.shard_shape((4, 3)), s.is_fully_replicated
    ((4, 3), True)
    """

    def __init__(self, mesh: Mesh, spec=None, *, memory_kind=None):
        if not isinstance(mesh, Mesh):
            raise errors.ZeraxTypeError(f"NamedSharding takes a Mesh, got {mesh!r}")
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            raise errors.ZeraxTypeError(f"NamedSharding takes a PartitionSpec, got {spec!r}")
        for p in spec:
            for n in (() if p is None else p if isinstance(p, tuple) else (p,)):
                if n not in mesh.axis_names:
                    raise errors.ZeraxValueError(
                        f"{spec!r} names {n!r}, not an axis of {mesh!r}")
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind

    def shard_shape(self, global_shape) -> tuple:
        """The shape of each device's block of an array of ``global_shape``."""
        shape = list(global_shape)
        for i, names in enumerate(self.spec.axes_of(len(shape))):
            n = math.prod(self.mesh.shape[a] for a in names)
            if shape[i] % n:
                raise errors.ShapeError(
                    f"dimension {i} of shape {tuple(global_shape)} does not split over "
                    f"mesh axes {names} ({n} blocks)")
            shape[i] //= n
        return tuple(shape)

    @property
    def device_set(self) -> set:
        return set(self.mesh.devices.flat)

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def is_fully_replicated(self) -> bool:
        return all(math.prod(self.mesh.shape[a] for a in names) == 1
                   for names in self.spec.axes_of(len(self.spec)))

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and (self.mesh, self.spec) == (
            other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


# --------------------------------------------------------------------------- layouts

class MeshLayout:
    """A mesh seen from this process: its axes over processes (``process_axes``, with
    the `ProcessMesh` of their grid) and its axes within each process
    (``local_axes``, vmapped), in mesh order."""

    def __init__(self, mesh, process_axes, local_axes, process_mesh):
        self.mesh, self.process_axes, self.local_axes = mesh, process_axes, local_axes
        self.process_mesh = process_mesh

    def size(self, name) -> int:
        return self.mesh.shape[name]

    def collective_params(self, names) -> dict:
        """The ``axis_name``/``axis_size``/``groups`` parameters of a collective over the
        mesh axes ``names`` in this process's program (a process axis by its group, a
        local axis as a vmap axis): what a pass that partitions a program over the mesh
        binds its psum, all_gather, psum_scatter or all_to_all with, with no axis bound
        while it runs."""
        names = tuple(names)
        groups = dict(zip(self.process_axes, self.process_mesh.group_ids))
        return {"axis_name": names, "axis_size": tuple(self.size(n) for n in names),
                "groups": tuple(groups.get(n, -1) for n in names)}


_layouts: dict = {}


def mesh_layout(mesh: Mesh) -> MeshLayout:
    """Which axes of ``mesh`` run across processes and which within one; an axis that
    mixes both, or a mesh that does not hold every process exactly as often, is an
    error."""
    world = distributed.world()
    key = (mesh, world.size, world.rank)
    layout = _layouts.get(key)
    if layout is not None:
        return layout
    per = config.num_cpu_devices
    procs = np.vectorize(lambda d: d.process_index, otypes=[int])(mesh.devices)
    slots = np.vectorize(lambda d: d.id - d.process_index * per, otypes=[int])(mesh.devices)
    if procs.max(initial=0) >= world.size or (slots < 0).any() or (slots >= per).any():
        raise errors.DistributedError(
            f"{mesh!r} holds devices this job does not have ({world.size} process(es) x "
            f"{per} CPU device(s); build it from zerax.devices())")
    process_axes, local_axes = [], []
    for k, name in enumerate(mesh.axis_names):
        varies_p = (np.diff(procs, axis=k) != 0).any()
        varies_s = (np.diff(slots, axis=k) != 0).any()
        if varies_p and varies_s:
            raise errors.NotSupportedError(
                f"mesh axis {name!r} of {mesh!r} mixes processes and the devices of one "
                "process: order the devices so that each axis runs either across "
                "processes or within one (make_mesh does)")
        (local_axes if varies_s else process_axes).append(k)
    first = tuple(0 if k in local_axes else slice(None) for k in range(procs.ndim))
    grid = procs[first]
    if sorted(np.ravel(grid).tolist()) != list(range(world.size)):
        raise errors.DistributedError(
            f"{mesh!r} must hold every one of the {world.size} processes once along its "
            f"process axes (it holds processes {sorted(set(np.ravel(procs).tolist()))})")
    names = tuple(mesh.axis_names[k] for k in process_axes)
    pmesh = _mpi.ProcessMesh(world, np.asarray(grid).reshape(
        [mesh.devices.shape[k] for k in process_axes]), names)
    layout = _layouts[key] = MeshLayout(mesh, [mesh.axis_names[k] for k in process_axes],
                                        [mesh.axis_names[k] for k in local_axes], pmesh)
    return layout
