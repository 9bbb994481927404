"""``shard_map`` (JAX's ``jax.shard_map``): a function of blocks, run on every device of
a mesh, with collectives over the mesh's axes.

The arguments are the whole (global) arrays, the same in every process; each
``in_specs`` entry (a `PartitionSpec` per argument, a prefix of the arguments' tree)
says which mesh axes split each dimension.  Each device of the mesh runs ``f`` on its
block; ``out_specs`` says how the blocks of each output form the whole result, which
every process returns.  A mesh axis runs either across processes or within one
(`sharding.mesh_layout`):

- over the **process axes**, each process takes its own block of each argument (a
  static slice) and binds those axes (`core.ProcessAxis`): collectives over them are
  MPI calls; the outputs' blocks are brought together with ``all_gather`` over them;
- over the **local axes** (``zerax.config.num_cpu_devices`` devices per process),
  ``f`` is vmapped with the axis's name, so collectives over them combine the
  members of the batch.

So a 2-D mesh of processes x local devices runs ``f`` under one vmap in each process,
and ``psum(x, ("data", "model"))`` sums over the vmap, then over the processes.  An
output whose spec does not name an axis must be the same on every member of it: a
local axis checks that (vmap's ``out_axes=None``); across processes the value of each
process is returned as it is (JAX checks it statically).
"""

from __future__ import annotations

import functools
import math

from ... import errors
from ..core import tree
from ..core.api_util import as_input
from ..core.core import ProcessAxis, bind_process_axes
from ..interpreters.batching import vmap
from ..lax.parallel import all_gather
from ..ops.shape import reshape, squeeze, transpose
from ..ops.slicing import slice_p_bind
from .sharding import Mesh, PartitionSpec, current_mesh, mesh_layout

__all__ = ["shard_map"]


def _is_spec(x):
    return x is None or isinstance(x, PartitionSpec)


def _specs_for(what, specs, treedef, n):
    """One PartitionSpec (or None: replicated) per leaf of ``treedef`` from the prefix
    tree ``specs``."""
    if isinstance(specs, PartitionSpec) or specs is None:
        return [specs] * n
    spec_def = tree.tree_structure(specs, is_leaf=_is_spec)
    try:
        subtrees = spec_def.flatten_up_to(tree.tree_unflatten(treedef, [0] * n))
    except ValueError:
        raise errors.ZeraxValueError(
            f"shard_map {what} {specs!r} must be a tree prefix of the {what[:-6]}s' "
            f"structure {treedef}") from None
    out = []
    for spec, sub in zip(tree.tree_leaves(specs, is_leaf=_is_spec), subtrees):
        if not _is_spec(spec):
            raise errors.ZeraxTypeError(
                f"shard_map {what} holds {spec!r}: use PartitionSpec(...) or None")
        out.extend([spec] * len(tree.tree_leaves(sub)))
    return out


def _names(spec) -> set:
    """The mesh axes a PartitionSpec (or None) names."""
    return {n for e in (spec or ()) if e is not None
            for n in (e if isinstance(e, tuple) else (e,))}


def _axes_of(spec, ndim, mesh, what):
    axes = (PartitionSpec() if spec is None else spec).axes_of(ndim)
    seen = [a for names in axes for a in names]
    for a in seen:
        if a not in mesh.axis_names:
            raise errors.ZeraxValueError(f"shard_map: {what} names {a!r}, not an axis of "
                                         f"{mesh!r}")
    if len(set(seen)) != len(seen):
        raise errors.ZeraxValueError(f"shard_map: {what} uses a mesh axis twice: {spec!r}")
    return axes


def _block(x, axes, layout, coords, what):
    """This process's block of ``x``: process axes sliced; each local axis's blocks as
    a leading dimension, in the mesh's order (absent: not split over it)."""
    shape = list(x.shape)
    split, front = [], []   # the shape with each split dimension opened up
    for i, names in enumerate(axes):
        n = math.prod(layout.size(a) for a in names)
        if shape[i] % n:
            raise errors.ShapeError(
                f"shard_map: {what} of shape {tuple(shape)} cannot be split along "
                f"dimension {i} over mesh axes {names} ({n} blocks)")
        for a in names:
            front.append((a, len(split)))
            split.append(layout.size(a))
        split.append(shape[i] // n)
    y = reshape(x, split)
    dims = dict(front)
    # take this process's block along each process axis
    starts, limits = [0] * len(split), list(split)
    for a in layout.process_axes:
        if a in dims:
            starts[dims[a]], limits[dims[a]] = coords[a], coords[a] + 1
    y = slice_p_bind(y, starts, limits)
    gone = sorted(dims[a] for a in layout.process_axes if a in dims)
    y = squeeze(y, gone)
    pos = {k: k - sum(g < k for g in gone) for k in range(len(split)) if k not in gone}
    lead = [pos[dims[a]] for a in layout.local_axes if a in dims]
    rest = [k for k in range(len(y.shape)) if k not in lead]
    return transpose(y, lead + rest), [a in dims for a in layout.local_axes]


def _assemble(y, axes, layout, present):
    """The whole output from this process's blocks: ``y`` holds a leading dimension per
    local axis in ``present`` (mesh order); process axes are gathered."""
    front = [a for a, p in zip(layout.local_axes, present) if p]
    for names in axes:
        for a in names:
            if a in layout.process_axes:
                y = all_gather(y, a, axis=0)
                front.insert(0, a)
    r = len(y.shape) - len(front)
    perm, shape = [], []
    for i, names in enumerate(axes[:r]):
        size = 1
        for a in names:
            perm.append(front.index(a))
            size *= layout.size(a)
        perm.append(len(front) + i)
        shape.append(size * y.shape[len(front) + i])
    return reshape(transpose(y, perm), shape)


def shard_map(f=None, mesh=None, in_specs=None, out_specs=None, check_rep=None,
              auto=frozenset(), *, check_vma=None, axis_names=None):
    """``f`` on every device of ``mesh``, each on its block of the arguments (split by
    ``in_specs``), the results' blocks joined by ``out_specs`` (JAX's ``shard_map``; see
    the module docstring for how axes over processes and within one run).

    >>> import numpy as np, zerax as zx, zerax.lax as lax
    >>> from zerax.sharding import Mesh, PartitionSpec as P
    >>> mesh = Mesh(np.array(zx.devices()), ("data",))
    >>> f = zx.shard_map(lambda b: b - lax.pmean(b.mean(), "data"), mesh=mesh,
    ...                  in_specs=P("data"), out_specs=P("data"))
    >>> f(np.arange(4.0))
    Array([-1.5, -0.5,  0.5,  1.5], dtype=float64)
    """
    del check_rep, check_vma, axis_names
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs,
                                 out_specs=out_specs, auto=auto)
    if auto:
        raise errors.NotSupportedError("shard_map(auto=...) is not supported: name every "
                                       "mesh axis in the specs")
    if not callable(f):
        raise errors.ZeraxTypeError(f"shard_map takes a function, got {type(f).__name__}")

    @functools.wraps(f)
    def mapped(*args):
        m = mesh if mesh is not None else current_mesh()
        if not isinstance(m, Mesh):
            raise errors.ZeraxTypeError(
                "shard_map needs a zerax.sharding.Mesh (mesh=..., or inside `with mesh:`)")
        layout = mesh_layout(m)
        pmesh = layout.process_mesh
        coords = dict(zip(layout.process_axes, pmesh.coords))
        leaves, treedef = tree.tree_flatten(args)
        leaves = [as_input(x, f"argument leaf {i} of shard_map")
                  for i, x in enumerate(leaves)]
        specs = _specs_for("in_specs", in_specs, treedef, len(leaves))
        blocks, present = [], []
        for i, (x, spec) in enumerate(zip(leaves, specs)):
            axes = _axes_of(spec, len(x.shape), m, f"in_specs of argument leaf {i}")
            b, p = _block(x, axes, layout, coords, f"argument leaf {i}")
            blocks.append(b)
            present.append(p)
        frames = [ProcessAxis(a, layout.size(a), coords[a], g)
                  for a, g in zip(layout.process_axes, pmesh.group_ids)]
        def body(*xs):
            return f(*tree.tree_unflatten(treedef, list(xs)))

        fn = body
        for k in reversed(range(len(layout.local_axes))):
            a = layout.local_axes[k]
            out_axes = tree.tree_map(lambda s, a=a: 0 if a in _names(s) else None,
                                     out_specs, is_leaf=_is_spec)
            fn = vmap(fn, in_axes=tuple(0 if p[k] else None for p in present),
                      out_axes=out_axes, axis_name=a, axis_size=layout.size(a))
        with bind_process_axes(frames):
            out = fn(*blocks)
            out_leaves, out_tree = tree.tree_flatten(out)
            o_specs = _specs_for("out_specs", out_specs, out_tree, len(out_leaves))
            results = []
            for i, (y, spec) in enumerate(zip(out_leaves, o_specs)):
                here = [a in _names(spec) for a in layout.local_axes]
                nd = len(y.shape) - sum(here)
                axes = _axes_of(spec, nd, m, f"out_specs of output leaf {i}")
                results.append(_assemble(y, axes, layout, here))
        return tree.tree_unflatten(out_tree, results)

    return mapped
