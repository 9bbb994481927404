"""Arrays split over the processes of a mesh: what ``device_put(x, NamedSharding(...))``
and a partitioned ``jit`` return.

A sharded array is a zerax `Array` whose buffer is a `ShardBuffer`: the array's global
shape and dtype, its `NamedSharding`, and the part of it this process holds (its block
along the mesh's process axes; along the mesh's axes within the process, every block,
stacked: `partition.process_shape`).  The global array is never formed in one process
unless asked (`distributed.process_allgather`, or converting an array this process
holds whole: a replicated one, or one split only within the process).

The buffer type is routed to `ShardedArrays` (``core.array.device_buffers``), so an
eager operation on sharded arrays runs partitioned as ``jit`` runs a program: the one
equation is propagated and partitioned over the mesh (`apply`), each process computing
its blocks, with the collectives the rules insert.  ``addressable_shards`` lists the
blocks of this process's devices (JAX's ``Shard``: device, index, replica_id, data);
`make_array_from_callback` builds an array from a function giving each block, which is
how ``zerax.io`` loads one without reading the rest of the file.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core import tree
from ..core.api_util import as_input
from ..core.array import (
    CPU,
    Array,
    Shard,
    register_buffer_type,
    unregister_buffer_type,
)
from ..core.core import ShapedArray, Tracer, bind
from ..interpreters.sharding import shards, spec_axes, spec_str
from ..ir.ir import ClosedJaxpr, Eqn, Jaxpr, Var, eval_jaxpr
from ..ops.sharding import sharding_constraint_p
from .partition import _check_spec, assemble, normal, partition, process_block, process_shape
from .sharding import Mesh, NamedSharding, PartitionSpec, current_mesh, mesh_layout

__all__ = [
    "ShardBuffer",
    "gather_global",
    "is_sharded",
    "make_array_from_callback",
    "shard_put",
    "spec_of",
    "with_sharding_constraint",
    "wrap_blocks",
]


class ShardBuffer:
    """This process's part of a sharded array (``data``), with the whole array's
    ``shape`` and ``dtype``, its ``sharding`` and normalised ``spec``."""

    __slots__ = ("data", "dtype", "shape", "sharding", "spec")

    def __init__(self, data, sharding, spec, shape, dtype):
        self.data, self.sharding, self.spec = data, sharding, spec
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        # the buffer type is routed to its owner while any exists (an empty table of
        # device buffers keeps the eager fast paths on: core.array)
        if _live[0] == 0:
            register_buffer_type(ShardBuffer, _OWNER)
        _live[0] += 1

    def __del__(self):
        _live[0] -= 1
        if _live[0] == 0:
            unregister_buffer_type(ShardBuffer)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __repr__(self):
        return f"ShardBuffer({self.dtype.name}{list(self.shape)}, {spec_str(self.spec)})"


def is_sharded(x) -> bool:
    return isinstance(x, Array) and type(x._value) is ShardBuffer


def spec_of(x):
    """The normalised spec of a sharded array (None for any other value)."""
    return x._value.spec if is_sharded(x) else None


def _sizes(mesh):
    return mesh.shape


def partition_spec(spec) -> PartitionSpec:
    """The PartitionSpec of a normalised spec (trailing unsplit dimensions left out, as
    one writes it)."""
    entries = [None if not d else d[0] if len(d) == 1 else tuple(d) for d in spec]
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def sharding_of_spec(mesh, spec) -> NamedSharding:
    return NamedSharding(mesh, partition_spec(spec))


def wrap_blocks(data, mesh, spec, shape, dtype):
    """A zerax Array from this process's part ``data`` of an array of ``shape`` split by
    ``spec`` over ``mesh``; a spec that splits nothing gives a plain array."""
    if not spec_axes(spec):
        return Array._wrap(np.asarray(data))
    sharding = NamedSharding(mesh, partition_spec(spec))
    return Array._wrap(ShardBuffer(np.asarray(data), sharding, tuple(spec), shape, dtype))


def _fully_addressable(buf) -> bool:
    layout = mesh_layout(buf.sharding.mesh)
    sizes = buf.sharding.mesh.shape
    return not any(sizes[a] > 1 for a in spec_axes(buf.spec) if a in layout.process_axes)


class ShardedArrays:
    """The owner of ShardBuffers (``core.array.device_buffers``): their device,
    their conversion to a host array, and eager primitives on them."""

    name = "sharded"

    def device_of(self, buf):
        return CPU

    def sharding_of(self, buf):
        return buf.sharding

    def to_host(self, buf):
        if not _fully_addressable(buf):
            raise errors.DistributedError(
                f"this array ({buf.dtype.name}{list(buf.shape)}, split by "
                f"{spec_str(buf.spec)} over {buf.sharding.mesh!r}) lies in several "
                "processes, and this one holds only its part: gather it on every process "
                "with zerax.distributed.process_allgather(x) (a collective: every process "
                "calls it), or read this process's part from x.addressable_shards.")
        layout = mesh_layout(buf.sharding.mesh)
        return assemble(buf.data, buf.shape, buf.spec, layout, buf.sharding.mesh.shape)

    def addressable_shards(self, buf) -> list:
        return _shards(buf)

    def fully_addressable(self, buf) -> bool:
        return _fully_addressable(buf)

    def apply(self, prim, vals, params):
        return _apply(prim, vals, params)

    def allgather(self, buf) -> np.ndarray:
        """The whole array on every process (a collective)."""
        return gather_global(Array._wrap(buf))


_OWNER = ShardedArrays()
_live = [0]   # ShardBuffers alive


# --------------------------------------------------------------------------- blocks

def _device_coords(mesh, device):
    where = np.argwhere(np.vectorize(lambda d: d is device or d.id == device.id,
                                     otypes=[bool])(mesh.devices))
    return dict(zip(mesh.axis_names, (int(c) for c in where[0])))


def _block_index(spec, shape, coords, sizes):
    """The global index (slices) of the block at mesh position ``coords``."""
    index = []
    for n, axes in zip(shape, spec):
        k = 0
        for a in axes:
            k = k * sizes[a] + coords[a]
        size = n // shards(axes, sizes)
        index.append(slice(k * size, (k + 1) * size))
    return tuple(index)


def _replica(spec, coords, mesh):
    """The number of a block's copy: this device's position along the axes the spec
    does not name (0: the first copy)."""
    used = spec_axes(spec)
    k = 0
    for a in mesh.axis_names:
        if a not in used:
            k = k * mesh.shape[a] + coords[a]
    return k


def _shards(buf) -> list:
    mesh, spec, sizes = buf.sharding.mesh, buf.spec, buf.sharding.mesh.shape
    layout = mesh_layout(mesh)
    locals_ = [a for a in layout.local_axes if sizes[a] > 1 and a in spec_axes(spec)]
    out = []
    for dev in mesh.local_devices:
        c = _device_coords(mesh, dev)
        data = buf.data[tuple(c[a] for a in locals_)] if locals_ else buf.data
        out.append(Shard(dev, _block_index(spec, buf.shape, c, sizes), _replica(spec, c, mesh),
                         Array._wrap(np.array(data, order="C"))))
    return out


def make_array_from_callback(shape, sharding, data_callback):
    """An array of ``shape`` split by ``sharding``, whose blocks this process asks
    ``data_callback(index)`` for (``index``: a tuple of slices of the whole array), one
    call per distinct block of its devices (JAX's ``jax.make_array_from_callback``).

    >>> import numpy as np, zerax as zx
    >>> from zerax.sharding import NamedSharding, PartitionSpec as P
    >>> mesh = zx.make_mesh((1,), ("x",))
    >>> whole = np.arange(6.0).reshape(2, 3)
    >>> zx.make_array_from_callback((2, 3), NamedSharding(mesh, P("x")), lambda i: whole[i])
    Array([[0., 1., 2.],
           [3., 4., 5.]], dtype=float64)
    """
    if not isinstance(sharding, NamedSharding):
        raise errors.ZeraxTypeError(f"make_array_from_callback takes a NamedSharding, got "
                                    f"{sharding!r}")
    shape = tuple(int(n) for n in shape)
    mesh, sizes = sharding.mesh, sharding.mesh.shape
    spec = normal(sharding.spec.axes_of(len(shape)), sizes)
    _check_spec(spec, shape, sizes, "make_array_from_callback")
    layout = mesh_layout(mesh)
    locals_ = [a for a in layout.local_axes if sizes[a] > 1 and a in spec_axes(spec)]
    want = process_shape(shape, spec, layout, sizes)
    blocks, dtype = {}, None
    for dev in mesh.local_devices:
        c = _device_coords(mesh, dev)
        key = tuple(c[a] for a in locals_)
        if key in blocks:
            continue
        index = _block_index(spec, shape, c, sizes)
        b = np.asarray(as_input(data_callback(index), "make_array_from_callback block"))
        expect = tuple(s.stop - s.start for s in index)
        if b.shape != expect:
            raise errors.ShapeError(f"make_array_from_callback: the callback gave a block of "
                                    f"shape {b.shape} for index {index} (expected {expect})")
        if dtype is not None and b.dtype != dtype:
            raise errors.ZeraxTypeError("make_array_from_callback: the blocks' dtypes differ "
                                        f"({dtype} and {b.dtype})")
        dtype = b.dtype
        blocks[key] = b
    data = np.empty(want, dtype)
    for key, b in blocks.items():
        data[key] = b
    if mesh.size == 1:
        return Array._wrap(data)
    return Array._wrap(ShardBuffer(data, sharding, spec, shape, dtype))


# --------------------------------------------------------------------------- placing

def shard_put(x, sharding: NamedSharding):
    """``x`` split by ``sharding``: from a whole array (every process passes the same
    value; each keeps its part), or resharded from a sharded one."""
    x = as_input(x, "device_put argument")
    mesh = sharding.mesh
    if isinstance(x, Tracer):
        return bind(sharding_constraint_p, x, sharding=sharding)
    sizes = mesh.shape
    spec = normal(sharding.spec.axes_of(len(x.shape)), sizes)
    _check_spec(spec, x.shape, sizes, "device_put")
    if is_sharded(x):
        if x._value.sharding.mesh == mesh and x._value.spec == spec:
            return x
        return bind(sharding_constraint_p, x, sharding=sharding)
    if mesh.size == 1:
        return x
    host = np.asarray(x)
    data = process_block(host, spec, mesh_layout(mesh), sizes)
    return Array._wrap(ShardBuffer(data, sharding, spec, host.shape, host.dtype))


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree) with each leaf split by its sharding (a prefix tree of
    NamedShardings, or PartitionSpecs of the mesh of an enclosing ``with
    mesh:``; None leaves a leaf alone), as JAX's: inside ``jit`` it fixes how the
    partitioned program splits the value, outside it places the value.

    >>> import zerax.lax as lax, zerax.numpy as znp
    >>> lax.with_sharding_constraint(znp.arange(3.0), None)
    Array([0., 1., 2.], dtype=float64)
    """
    leaves, treedef = tree.tree_flatten(x)
    shards_ = flatten_shardings("with_sharding_constraint", shardings, treedef, len(leaves))
    out = []
    for i, (leaf, s) in enumerate(zip(leaves, shards_)):
        leaf = as_input(leaf, f"with_sharding_constraint argument leaf {i}")
        out.append(leaf if s is None else shard_put(leaf, s))
    return tree.tree_unflatten(treedef, out)


def _is_sharding_leaf(s):
    return s is None or isinstance(s, (NamedSharding, PartitionSpec)) or isinstance(s, str)


def as_named(what, s, mesh=None):
    """A NamedSharding from a NamedSharding, or a PartitionSpec of ``mesh`` (or of the
    mesh of an enclosing ``with mesh:``)."""
    if s is None or isinstance(s, NamedSharding):
        return s
    if isinstance(s, PartitionSpec):
        m = mesh if mesh is not None else current_mesh()
        if not isinstance(m, Mesh):
            raise errors.ZeraxValueError(
                f"{what}: a PartitionSpec ({s!r}) needs a mesh: pass a NamedSharding, or "
                "call inside `with mesh:` (or give jit mesh=...)")
        return NamedSharding(m, s)
    raise errors.ZeraxTypeError(f"{what} takes NamedShardings, PartitionSpecs or None, "
                                f"got {s!r:.80}")


def flatten_shardings(what, shardings, treedef, n, mesh=None) -> list:
    """One NamedSharding (or None) per leaf of ``treedef`` from the prefix tree
    ``shardings``."""
    if _is_sharding_leaf(shardings) and not isinstance(shardings, str):
        return [as_named(what, shardings, mesh)] * n
    spec_def = tree.tree_structure(shardings, is_leaf=_is_sharding_leaf)
    try:
        subtrees = spec_def.flatten_up_to(tree.tree_unflatten(treedef, [0] * n))
    except ValueError:
        raise errors.ZeraxValueError(
            f"{what}: the shardings {shardings!r:.120} are not a tree prefix of the "
            f"arguments' structure {treedef}") from None
    out = []
    for s, sub in zip(tree.tree_leaves(shardings, is_leaf=_is_sharding_leaf), subtrees):
        out.extend([as_named(what, s, mesh)] * len(tree.tree_leaves(sub)))
    return out


# --------------------------------------------------------------------------- eager

_programs: dict = {}


def _apply(prim, vals, params):
    """One primitive on sharded (and host) operands: the one-equation program
    partitioned over the operands' mesh and run eagerly."""
    mesh = None
    for v in vals:
        if type(v) is ShardBuffer:
            if mesh is None:
                mesh = v.sharding.mesh
            elif v.sharding.mesh != mesh:
                raise errors.ZeraxValueError(
                    f"{prim.name} at {errors.user_frame()}: its operands are split over "
                    f"two meshes ({mesh!r} and {v.sharding.mesh!r}); reshard one first "
                    "(zerax.device_put)")
    avals = [ShapedArray(v.shape, v.dtype) for v in vals]
    specs = tuple(v.spec if type(v) is ShardBuffer else ((),) * len(v.shape) for v in vals)
    try:
        key = (prim, tuple(sorted(params.items())), tuple((a.shape, a.dtype) for a in avals),
               specs, mesh)
        hash(key)
    except TypeError:
        key = None
    pt = _programs.get(key) if key is not None else None
    if pt is None:
        ins = [Var(a) for a in avals]
        out = prim.abstract_eval(*avals, **params)
        outs = [Var(a) for a in (out if prim.multiple_results else [out])]
        jaxpr = Jaxpr([], ins, outs, [Eqn(prim, ins, outs, params)])
        pt = partition(jaxpr, mesh, specs, prim.name)
        if key is not None:
            if len(_programs) > 512:
                _programs.clear()
            _programs[key] = (pt, jaxpr)
    else:
        pt = pt[0]
    blocks = [v.data if type(v) is ShardBuffer else np.asarray(v) for v in vals]
    res = eval_jaxpr(pt.jaxpr, [], *pt.consts, *blocks)
    out = [_result(r, pt, k) for k, r in enumerate(res)]
    return out if prim.multiple_results else out[0]


def _result(r, pt, k):
    v = pt.flat.outvars[k]
    spec = pt.out_specs[k]
    data = np.asarray(r._value if isinstance(r, Array) else r)
    if not spec_axes(spec):
        return data
    mesh = pt.layout.mesh
    return wrap_blocks(data, mesh, spec, v.aval.shape, v.aval.dtype)._value


def gather_global(x) -> np.ndarray:
    """The whole of a sharded array, on every process (a collective)."""
    buf = x._value
    sharding = NamedSharding(buf.sharding.mesh, PartitionSpec())
    y = bind(sharding_constraint_p, x, sharding=sharding)
    return np.asarray(y)



# --------------------------------------------------------------------------- jit's calls

_constraint_meshes: dict = {}


def _meshes_in(jaxpr, found: set, seen: set) -> None:
    if id(jaxpr) in seen:
        return
    seen.add(id(jaxpr))
    for e in jaxpr.eqns:
        if e.primitive is sharding_constraint_p:
            found.add(e.params["sharding"].mesh)
        for p in e.params.values():
            for q in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(q, (Jaxpr, ClosedJaxpr)):
                    _meshes_in(getattr(q, "jaxpr", q), found, seen)


def constraint_meshes(jaxpr) -> frozenset:
    """The meshes the sharding constraints of ``jaxpr`` (and its sub-programs) name."""
    hit = _constraint_meshes.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    found: set = set()
    _meshes_in(jaxpr, found, set())
    if len(_constraint_meshes) > 4096:
        _constraint_meshes.clear()
    _constraint_meshes[id(jaxpr)] = (jaxpr, frozenset(found))
    return frozenset(found)


def program_mesh(jaxpr, values, shardings=(), mesh=None, what="jit"):
    """The mesh a call of ``jaxpr`` on ``values`` (its inputs, constants first) is
    partitioned over: the one its sharded inputs, the given ``shardings`` (per input,
    None allowed) and its constraints share; None when nothing is sharded (or the mesh
    has one device).  Two meshes are an error."""
    meshes = set(constraint_meshes(jaxpr))
    meshes.update(s.mesh for s in shardings if s is not None)
    meshes.update(v._value.sharding.mesh for v in values if is_sharded(v))
    if mesh is not None:
        meshes.add(mesh)
    if len(meshes) > 1:
        raise errors.ZeraxValueError(
            f"{what}: its inputs, shardings and constraints name several meshes "
            f"({', '.join(sorted(map(repr, meshes)))}); a program is partitioned over one")
    m = next(iter(meshes), None)
    return m if m is not None and m.size > 1 else None


def input_specs(values, shardings, mesh, name) -> list:
    """The spec of each input of a call: its sharding's (given), else its own (a
    sharded array's), else whole."""
    sizes = mesh.shape
    specs = []
    for k, (v, s) in enumerate(zip(values, shardings)):
        shape = tuple(np.shape(v)) if not isinstance(v, (Array, Tracer)) else tuple(v.shape)
        if s is not None:
            spec = normal(s.spec.axes_of(len(shape)), sizes)
            _check_spec(spec, shape, sizes, f"the sharding of input {k} of {name}")
        elif is_sharded(v):
            spec = v._value.spec
        else:
            spec = ((),) * len(shape)
        specs.append(spec)
    return specs


def input_blocks(values, specs, mesh) -> list:
    """This process's part of each input, split by its spec (a sharded array split
    otherwise is resharded first; a whole array is cut, on the host)."""
    sizes = mesh.shape
    layout = mesh_layout(mesh)
    blocks = []
    for v, spec in zip(values, specs):
        if is_sharded(v):
            if v._value.spec != spec or v._value.sharding.mesh != mesh:
                v = shard_put(v, NamedSharding(mesh, partition_spec(spec)))
            blocks.append(v._value.data if is_sharded(v) else np.asarray(v))
        else:
            host = np.asarray(v)
            blocks.append(process_block(host, spec, layout, sizes) if spec_axes(spec)
                          else host)
    return blocks


_splats: dict = {}


def splat_constants(jaxpr, values, n_consts) -> tuple:
    """The constants among the first ``n_consts`` inputs whose entries are all equal
    (memoised per program: its constants do not change)."""
    hit = _splats.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    found = []
    for k, v in enumerate(values[:n_consts]):
        if isinstance(v, Tracer) or is_sharded(v):
            continue
        a = np.asarray(v)
        if a.size > 1 and dtype_kind(a.dtype) in "biufc" and (a == a.flat[0]).all() and \
                not (dtype_kind(a.dtype) in "fc" and np.isnan(a.flat[0])):
            found.append(k)
    if len(_splats) > 4096:
        _splats.clear()
    _splats[id(jaxpr)] = (jaxpr, tuple(found))
    return tuple(found)


def prepare_call(jaxpr, values, shardings, mesh, name, n_consts=0):
    """(the partitioned program, this process's blocks of ``values``): each input split
    by its sharding in ``shardings`` (None: as the value is, a whole array replicated);
    of the first ``n_consts`` (the program's constants), those whose entries are all
    equal are passed as one scalar each."""
    specs = input_specs(values, shardings, mesh, name)
    splats = splat_constants(jaxpr, values, n_consts)
    blocks = input_blocks([np.asarray(v).flat[0] if k in splats else v
                           for k, v in enumerate(values)],
                          [() if k in splats else s for k, s in enumerate(specs)], mesh)
    return partition(jaxpr, mesh, specs, name, splats), blocks


def call_outputs(pt, results) -> list:
    """The zerax Arrays of a partitioned program's results (this process's parts)."""
    out = []
    for k, r in enumerate(results):
        v = pt.flat.outvars[k]
        out.append(wrap_blocks(r, pt.layout.mesh, pt.out_specs[k], v.aval.shape,
                               v.aval.dtype))
    return out
