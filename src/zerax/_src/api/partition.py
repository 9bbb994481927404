"""The partitioning pass: a program over whole (global) arrays, with the shardings of
its inputs, becomes the program each process runs on its blocks, with the collectives
inserted (GSPMD's design, over the processes of an MPI job).

1. The call primitives (``jit``, ``checkpoint``, custom derivatives) are inlined.
2. Propagation (``interpreters/sharding.py``) gives every value a spec: the inputs'
   are fixed, and so are the results of ``sharding_constraint`` (``jit``'s
   ``out_shardings`` and ``lax.with_sharding_constraint``).
3. Each equation is rewritten by its rule (``ops/sharding_rules.py``): its operands are
   *resharded* to the specs the rule asks for (`reshard`: an ``all_gather`` for an axis
   that stops splitting a dimension, an ``all_to_all`` for an axis that moves from one
   dimension to another, a local slice, free, for an axis that starts splitting one),
   the primitive runs on the blocks, and partial results are made whole (`finish`: a
   ``psum`` after a contracted split dimension, or a ``psum_scatter`` when the result
   is to be split along another).
4. The per-device function runs under one ``vmap`` per mesh axis within the process
   (``num_cpu_devices``; their collectives combine the members of the batch) with the
   mesh's process axes bound (their collectives are MPI calls), and is traced into the
   per-process program: an ordinary program, which ``jit`` compiles as any other.

A process holds, of an array split by a spec, its block along the process axes and
every block along the local axes the spec names, stacked in leading dimensions in the
mesh's order (`process_shape`, `process_block`).
"""

from __future__ import annotations

import weakref

import numpy as np

from ... import errors
from ..core.core import ProcessAxis, ShapedArray, bind, bind_process_axes
from ..interpreters.batching import vmap
from ..interpreters.sharding import (
    Propagation,
    local_shape,
    propagate,
    replicated,
    rule_for,
    sharding_rules,
    shards,
    spec_axes,
    spec_str,
)
from ..ir.ir import Eqn, Jaxpr, Literal, Var, pp_jaxpr
from ..ir.tracing import trace_closed
from ..lax import parallel as lax_par
from ..ops.collectives import bind_collective, pmax_p, pmin_p, psum_p
from ..ops.elementwise import mul
from ..ops.shape import broadcast_in_dim_p
from ..ops.sharding import constraint_spec, sharding_constraint_p
from ..ops.sharding_rules import Inlined
from ..ops.slicing import dynamic_slice
from .sharding import mesh_layout

__all__ = [
    "Partitioned",
    "assemble",
    "normal",
    "partition",
    "process_block",
    "process_shape",
    "reshard",
]


# --------------------------------------------------------------------------- specs

def normal(spec, sizes) -> tuple:
    """``spec`` without the mesh axes of one member (they split nothing)."""
    return tuple(tuple(a for a in d if sizes[a] > 1) for d in spec)


def _check_spec(spec, shape, sizes, what):
    seen = [a for d in spec for a in d]
    if len(set(seen)) != len(seen):
        raise errors.ZeraxValueError(f"{what}: {spec_str(spec)} uses a mesh axis twice")
    for d, (n, axes) in enumerate(zip(shape, spec)):
        if n % shards(axes, sizes):
            raise errors.ShapeError(
                f"{what}: dimension {d} of shape {tuple(shape)} does not split evenly over "
                f"mesh axes {axes} ({shards(axes, sizes)} blocks); choose a spec whose "
                "axes divide it, or pad the array")


# --------------------------------------------------------------------------- the process's data

def _locals(layout, sizes):
    return [a for a in layout.local_axes if sizes[a] > 1]


def _contiguous(x: np.ndarray) -> np.ndarray:
    """``x`` in C order, of its own shape (NumPy's ascontiguousarray makes 0-d 1-d)."""
    return x if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(x.shape)


def process_shape(shape, spec, layout, sizes) -> tuple:
    """The shape of what one process holds of an array of ``shape`` split by ``spec``:
    a leading dimension per local axis the spec names, then a device's block."""
    used = spec_axes(spec)
    return tuple(sizes[a] for a in _locals(layout, sizes) if a in used) + \
        local_shape(shape, spec, sizes)


def process_block(x: np.ndarray, spec, layout, sizes) -> np.ndarray:
    """This process's part (see `process_shape`) of the whole array ``x``."""
    coords = dict(zip(layout.process_axes, layout.process_mesh.coords))
    split, where = [], {}
    for d, axes in enumerate(spec):
        for a in axes:
            where[a] = len(split)
            split.append(sizes[a])
        split.append(x.shape[d] // shards(axes, sizes))
    y = x.reshape(split)
    index = [slice(None)] * len(split)
    gone = []
    for a, k in where.items():
        if a in coords:
            index[k] = coords[a]
            gone.append(k)
    y = y[tuple(index)]
    keep = [k for k in range(len(split)) if k not in gone]
    pos = {k: i for i, k in enumerate(keep)}
    lead = [pos[where[a]] for a in _locals(layout, sizes) if a in where]
    rest = [i for i in range(len(keep)) if i not in lead]
    return _contiguous(np.transpose(y, lead + rest))


def assemble(block: np.ndarray, shape, spec, layout, sizes) -> np.ndarray:
    """The whole array from this process's part, when the process holds all of it (no
    process axis splits it)."""
    locals_ = [a for a in _locals(layout, sizes) if a in spec_axes(spec)]
    nl = len(locals_)
    if any(sizes[a] > 1 for a in spec_axes(spec) if a not in locals_):
        raise errors.ZeraxInternalError("assemble of an array split over processes")
    # block: (local axes..., block dims...) -> per dim, its axes' sizes then the block
    src = []
    for d, axes in enumerate(spec):
        for a in axes:
            src.append(locals_.index(a))
        src.append(nl + d)
    y = np.transpose(block, src) if src else block
    return _contiguous(y.reshape(shape))


# --------------------------------------------------------------------------- resharding

def _prefix(a, b) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def reshard_steps(src, dst, shape, sizes) -> list:
    """How a device's block of a value split by ``src`` (its shape: ``shape``) becomes
    its block of the value split by ``dst``: ``("all_to_all", axis, split, concat)``
    where an axis moves from dimension ``concat`` to dimension ``split`` (one exchange),
    ``("all_gather", axis, dim)`` where an axis stops splitting a dimension (its minor
    axes first), then one ``("slice", {dim: axes})`` of the device's own block where
    axes start splitting dimensions (no communication).  The cost model
    (api/planner.py) reads the same steps."""
    src, dst = [tuple(d) for d in src], [tuple(d) for d in dst]
    steps: list = []
    if src == dst:
        return steps
    shape = list(shape)
    nd = len(src)
    moved = True
    while moved:
        moved = False
        for d1 in range(nd):
            if len(src[d1]) <= _prefix(src[d1], dst[d1]):
                continue
            a = src[d1][-1]
            for d2 in range(nd):
                c2 = _prefix(src[d2], dst[d2])
                if d2 != d1 and len(src[d2]) == c2 and len(dst[d2]) > c2 and \
                        dst[d2][c2] == a and shape[d2] % sizes[a] == 0:
                    steps.append(("all_to_all", a, d2, d1))
                    shape[d2] //= sizes[a]
                    shape[d1] *= sizes[a]
                    src[d1], src[d2] = src[d1][:-1], src[d2] + (a,)
                    moved = True
                    break
    for d in range(nd):
        c = _prefix(src[d], dst[d])
        for a in reversed(src[d][c:]):
            steps.append(("all_gather", a, d))
            shape[d] *= sizes[a]
        src[d] = src[d][:c]
    cut = {d: dst[d][len(src[d]):] for d in range(nd) if len(dst[d]) > len(src[d])}
    if cut:
        steps.append(("slice", cut))
    return steps


def reshard(x, src, dst, sizes):
    """A device's block of a value split by ``src``, as a block of it split by
    ``dst`` (the collectives of `reshard_steps`)."""
    if type(x) is Literal or tuple(map(tuple, src)) == tuple(map(tuple, dst)):
        return x
    for step in reshard_steps(src, dst, x.shape, sizes):
        if step[0] == "all_to_all":
            _, a, split, concat = step
            x = lax_par.all_to_all(x, a, split, concat, tiled=True)
        elif step[0] == "all_gather":
            _, a, d = step
            x = lax_par.all_gather(x, a, axis=d, tiled=True)
        else:
            cut = step[1]
            starts, sizes_out = [], []
            for d, n in enumerate(x.shape):
                if d in cut:
                    k = n // shards(cut[d], sizes)
                    starts.append(mul(lax_par.axis_index(cut[d]), np.int32(k)))
                    sizes_out.append(k)
                else:
                    starts.append(np.int32(0))
                    sizes_out.append(n)
            x = dynamic_slice(x, starts, sizes_out)
    return x


def finish(x, spec, partial, scatter, target, sizes):
    """A result block that is partial over some axes (see `interpreters.sharding.Plan`)
    made whole, then resharded to ``target``."""
    spec = [tuple(d) for d in spec]
    for a, j in scatter.items():
        x = lax_par.psum_scatter(x, a, scatter_dimension=j, tiled=True)
        spec[j] = spec[j] + (a,)
    for op, prim in (("sum", psum_p), ("max", pmax_p), ("min", pmin_p)):
        axes = tuple(a for a, o in partial.items() if o == op and a not in scatter)
        if axes:
            (x,) = bind_collective(prim, x, names=axes)
    return reshard(x, spec, target, sizes)


# --------------------------------------------------------------------------- inlining

def inline_calls(jaxpr, splats=()) -> Jaxpr:
    """``jaxpr`` with the equations of its call primitives replaced by their programs'
    (recursively; loop and branch bodies are left as they are).  The inputs numbered in
    ``splats`` (constants whose entries are all equal: the zeros of a gradient, say)
    become scalars broadcast in the program, so that each device makes only its block
    of them."""
    eqns: list = []
    invars = list(jaxpr.invars)
    for k in splats:
        v = invars[k]
        invars[k] = Var(ShapedArray((), v.aval.dtype))
        eqns.append(Eqn(broadcast_in_dim_p, [invars[k]], [v],
                        {"shape": tuple(v.aval.shape), "broadcast_dimensions": ()}))
    outs = _inline(jaxpr, list(jaxpr.invars), eqns)
    return Jaxpr([], invars, outs, eqns)


def _inline(jaxpr, args, eqns):
    env = dict(zip(jaxpr.invars, args))

    def read(a):
        return a if type(a) is Literal else env[a]

    for e in jaxpr.eqns:
        ins = [read(a) for a in e.invars]
        rule = sharding_rules.get(e.primitive)
        if isinstance(rule, Inlined):
            inner = e.params[rule.param]
            inner = getattr(inner, "jaxpr", inner)
            outs = _inline(inner, ins, eqns)
        else:
            outs = [Var(v.aval) for v in e.outvars]
            eqns.append(Eqn(e.primitive, ins, outs, e.params, e.source))
        env.update(zip(e.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


# --------------------------------------------------------------------------- the pass

class Context:
    """What the rules' local functions use while the per-device program is traced:
    the mesh axes' ``sizes``, `bind`, `block_index`, `sub_fn` (a loop or branch body,
    partitioned) and ``result_specs`` (the specs of the blocks the equation being
    rewritten computes)."""

    def __init__(self, sizes, mesh):
        self.sizes, self.mesh = sizes, mesh
        self.result_specs = None

    def bind(self, prim, blocks, params):
        out = bind(prim, *blocks, **params)
        return list(out) if prim.multiple_results else [out]

    def block_index(self, axes):
        """This device's block (int32) along the mesh axes ``axes`` (row-major)."""
        return lax_par.axis_index(tuple(axes))

    def sub_fn(self, jaxpr, in_specs, out_specs):
        """``jaxpr`` (a body: inputs split by ``in_specs``) as a function of blocks
        whose results are split by ``out_specs``."""
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        flat = inline_calls(jaxpr)
        prop = _propagated(flat, [tuple(s) for s in in_specs], self.sizes, self.mesh)

        def fn(*blocks):
            return run_device(flat, prop, self, blocks, [tuple(s) for s in out_specs])
        return fn


def _propagated(flat, in_specs, sizes, mesh, backward=True) -> Propagation:
    prop = Propagation(sizes)
    for v, s in zip(flat.invars, in_specs):
        prop.fix(v, s)
    _fix_constraints(flat, prop, sizes, mesh)
    return propagate(flat, prop, backward=backward)


def _fix_constraints(flat, prop, sizes, mesh):
    for e in flat.eqns:
        if e.primitive is sharding_constraint_p:
            s = e.params["sharding"]
            if s.mesh != mesh:
                raise errors.ZeraxValueError(
                    f"a sharding constraint over {s.mesh!r} in a program partitioned over "
                    f"{mesh!r} (at {e.source or errors.user_frame()}): use one mesh")
            (v,) = e.outvars
            spec = normal(constraint_spec(s, len(v.aval.shape)), sizes)
            _check_spec(spec, v.aval.shape, sizes,
                        f"with_sharding_constraint at {e.source or 'its equation'}")
            prop.fix(v, spec)


def run_device(flat, prop, ctx, blocks, out_specs=None):
    """The per-device computation of ``flat`` (propagated in ``prop``) on ``blocks``."""
    env = dict(zip(flat.invars, blocks))
    sizes = ctx.sizes

    def read(a):
        return a.val if type(a) is Literal else env[a]

    for eqn in flat.eqns:
        ins = [prop.final(a) for a in eqn.invars]
        outs = [prop.final(v) for v in eqn.outvars]
        try:
            plan = rule_for(eqn.primitive).partition(eqn, ins, outs, sizes)
        except errors.NotSupportedError as e:
            raise errors.NotSupportedError(
                f"{e} (in the partitioned program, at {eqn.source or 'an equation'})") from None
        ops = [reshard(read(a), s, t, sizes)
               for a, s, t in zip(eqn.invars, ins, plan.operands)]
        shapes = [local_shape(v.aval.shape, r, sizes) for v, r in zip(eqn.outvars, plan.results)]
        ctx.result_specs = plan.results
        res = plan.local(ctx, *ops, result_shapes=shapes)
        for k, v in enumerate(eqn.outvars):
            env[v] = finish(res[k], plan.results[k], plan.partial[k], plan.scatter[k],
                            outs[k], sizes)
    results = [read(a) for a in flat.outvars]
    if out_specs is not None:
        results = [reshard(r, prop.final(a), s, sizes)
                   for r, a, s in zip(results, flat.outvars, out_specs)]
    return results


class Partitioned:
    """A program partitioned over a mesh: ``jaxpr`` (with ``consts``, leading inputs)
    is what this process runs on its parts of the inputs (split by ``in_specs``); its
    results are its parts of the outputs (split by ``out_specs``).  ``flat`` and
    ``prop`` are the inlined global program and its propagated specs (what the planner
    costs and ``sharding_plan`` prints)."""

    def __init__(self, global_jaxpr, flat, prop, layout, in_specs, out_specs, jaxpr,
                 consts, name):
        self.global_jaxpr, self.flat, self.prop, self.layout = global_jaxpr, flat, prop, layout
        self.in_specs, self.out_specs = in_specs, out_specs
        self.jaxpr, self.consts, self.name = jaxpr, consts, name
        self.sizes = layout.mesh.shape

    def text(self) -> str:
        """The per-process program, headed by the mesh and the inputs' and outputs'
        specs."""
        pm = self.layout.process_mesh
        head = [f"# {self.name}: the program of process {pm.world.rank} of "
                f"{pm.world.size} over {self.layout.mesh!r}",
                "# inputs:  " + ", ".join(spec_str(s) for s in self.in_specs),
                "# outputs: " + ", ".join(spec_str(s) for s in self.out_specs)]
        return "\n".join(head) + "\n" + pp_jaxpr(self.jaxpr)


_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def partition(jaxpr, mesh, in_specs, name="jit", splats=()) -> Partitioned:
    """``jaxpr`` (constants as leading inputs) partitioned over ``mesh`` with its inputs
    split by ``in_specs`` (normalised specs, one per input); the inputs numbered in
    ``splats`` are passed as scalars (`inline_calls`).  Memoised per program and
    specs."""
    layout = mesh_layout(mesh)
    sizes = mesh.shape
    splats = tuple(sorted(splats))
    in_specs = tuple(() if k in splats else normal(s, sizes) for k, s in enumerate(in_specs))
    key = (mesh, in_specs, splats, tuple(layout.process_mesh.group_ids))
    per = _cache.setdefault(jaxpr, {})
    hit = per.get(key)
    if hit is not None:
        return hit
    for k, (v, s) in enumerate(zip(jaxpr.invars, in_specs)):
        if k not in splats:
            _check_spec(s, v.aval.shape, sizes, f"the sharding of input {k} of {name}")
    flat = inline_calls(jaxpr, splats)
    prop = _propagated(flat, in_specs, sizes, mesh)
    out_specs = tuple(prop.final(a) for a in flat.outvars)
    ctx = Context(sizes, mesh)
    locals_ = _locals(layout, sizes)

    def device(*blocks):
        return run_device(flat, prop, ctx, blocks)

    # one vmap per mesh axis within the process; a result whole over such an axis is
    # the same on every member: the first member's is kept (loops and branches mark
    # their results as varying over the batch whether or not they do)
    fn = device
    for a in reversed(locals_):
        fn = vmap(fn, in_axes=tuple(0 if a in spec_axes(s) else None for s in in_specs),
                  out_axes=0, axis_name=a, axis_size=sizes[a])

    def process(*xs):
        outs = list(fn(*xs))
        for k, s in enumerate(out_specs):
            used = spec_axes(s)
            if any(a not in used for a in locals_):
                outs[k] = outs[k][tuple(slice(None) if a in used else 0 for a in locals_)]
        return outs

    avals = [ShapedArray(process_shape(v.aval.shape, s, layout, sizes), v.aval.dtype)
             for v, s in zip(flat.invars, in_specs)]
    pmesh = layout.process_mesh
    frames = [ProcessAxis(a, sizes[a], c, g) for a, c, g in
              zip(layout.process_axes, pmesh.coords, pmesh.group_ids)]
    with bind_process_axes(frames):
        local, consts = trace_closed(process, avals, f"{name}_partitioned")
    result = Partitioned(jaxpr, flat, prop, layout, in_specs, out_specs, local, consts, name)
    per[key] = result
    return result


def replicated_specs(jaxpr) -> tuple:
    return tuple(replicated(len(v.aval.shape)) for v in jaxpr.invars)
