"""Collectives over named axes: the reductions ``psum``, ``pmax``, ``pmin`` and
``axis_index``; the collectives that move data between members (``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``) are in `exchange`.  The user's functions
(pytrees, tuples of axis names, ``pmean``) are ``lax/parallel.py``.

A named axis is bound by ``vmap(f, axis_name="i")`` (its members are the batch) or by
`zerax.distributed.spmd` / ``shard_map`` (its members are processes: a
`core.ProcessAxis`).  Inside ``f`` a collective combines the values of all members:
``psum(x, "i")`` is, for every member, the sum of ``x`` over the members.

Every collective carries three static parameters, one entry per axis it names:
``axis_name``, ``axis_size`` and ``groups`` (the id of the process group of a process
axis, ``-1`` for a vmap axis), read from the live bindings when it is bound
(`bind_collective`).  So a program traced inside `spmd` knows which of its collectives
are calls of MPI, wherever it is compiled or run later.

Binding: a collective's operand need not vary over the named axis (``psum(1.0, "i")``
is the axis size), so the vmap that names the axis takes part in choosing the trace
that processes it, beside the operand's own traces (``core.bind`` asks
`named_axis_frames`).  That trace's batching rule (``batch(vals, dims, frame=...)``, told
its axis name and size) combines over its batch dimension; traces of other axes apply
the collective member by member.  A process axis is never a trace: a collective that
reaches no trace runs its implementation, which asks the process group's transport
(``backends/mpi/``: Allreduce, Allgather, Reduce_scatter, Alltoall, Sendrecv).

A collective recorded by `jit` whose operand turns out not to vary over a vmap axis
gets that unmapped meaning in compiled code (``psum`` multiplies by the axis size,
``pmax``/``pmin`` keep the operand, ``all_gather`` stacks copies); those whose result
would differ between the members (``psum_scatter``, ``all_to_all``, a partial
``ppermute``) say so in a clear error (`member_varying_error`).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import (Primitive, ShapedArray, bind, named_axis_frames, process_groups)
from .reduce import reduce_max, reduce_min, reduce_sum
from .shape import iota
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules


# --------------------------------------------------------------------------- binding

def axis_names(axis_name) -> tuple:
    """An axis name or a tuple/list of them, as a tuple."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def collective(name: str, multiple_results: bool = False) -> Primitive:
    """A primitive over named axes (its params: axis_name, axis_size, groups, ...)."""
    prim = Primitive(name, multiple_results=multiple_results)
    prim.named_axes = True
    return prim


def axis_params(names) -> dict:
    """``axis_name``, ``axis_size`` and ``groups`` of the axes ``names``, from their live
    bindings (the innermost vmap or process axis of each name)."""
    frames = named_axis_frames(names)
    return {"axis_name": tuple(names), "axis_size": tuple(f.axis_size for f in frames),
            "groups": tuple(getattr(f, "group", -1) for f in frames)}


def bind_collective(prim, *args, names, **params):
    return bind(prim, *args, **axis_params(names), **params)


def rest_params(params: dict, name) -> dict:
    """The axis parameters without the axis ``name`` (a batching rule has combined it)."""
    keep = [k for k, n in enumerate(params["axis_name"]) if n != name]
    return {"axis_name": tuple(params["axis_name"][k] for k in keep),
            "axis_size": tuple(params["axis_size"][k] for k in keep),
            "groups": tuple(params["groups"][k] for k in keep)}


def split_axes(axis_size, groups):
    """(the product of the vmap axes' sizes, the process groups of size > 1): a
    process group of one process combines nothing, as a vmap axis of one member."""
    local, procs = 1, []
    for n, g in zip(axis_size, groups):
        if g < 0 or n == 1:
            local *= n
        else:
            procs.append(g)
    return local, tuple(procs)


def describe(prim_name: str, axis_name, groups) -> str:
    """``psum over 'data'``: a collective over its process axes, for messages."""
    names = [repr(n) for n, g in zip(axis_name, groups) if g >= 0]
    return f"{prim_name} over {', '.join(names)}"


def communicator(groups):
    """The transport over the process axes ``groups`` together (backends/mpi)."""
    group = process_groups.get(groups[0])
    if group is None:
        raise errors.DistributedError(
            f"a collective names a process group ({groups[0]}) that this process does not "
            "have: a program traced inside zerax.distributed.spmd or shard_map ran "
            "after the process group ended.")
    return group.communicator(groups)


def member_varying_error(prim_name: str, axis_name) -> errors.NotSupportedError:
    return errors.NotSupportedError(
        f"{prim_name} over the vmap axis {axis_name!r} of a value that does not vary over "
        f"that axis, inside a jitted function or a loop body (at {errors.user_frame()}): "
        "its result differs between the members, which a program compiled outside the "
        "vmap cannot give. Pass the value into the vmapped function as a mapped argument, "
        "or call the collective outside jit.")


def _size_in(x_dtype, n):
    return np.asarray(n, dtype=x_dtype)


# --------------------------------------------------------------------------- psum, pmax, pmin
# Variadic, as JAX's: one equation reduces every leaf of a pytree, so that over processes
# a network's gradients take one MPI call per dtype (a bucket, as PyTorch's DDP makes)
# instead of one per array.

psum_p = collective("psum", multiple_results=True)
pmax_p = collective("pmax", multiple_results=True)
pmin_p = collective("pmin", multiple_results=True)

_REDUCERS = {psum_p: reduce_sum, pmax_p: reduce_max, pmin_p: reduce_min}
_MPI_OPS = {psum_p: "sum", pmax_p: "max", pmin_p: "min"}


def _same_avals(*xs, **params):
    return [ShapedArray(x.shape, x.dtype) for x in xs]


def reduce_into(prim, outs, xs, *, axis_name, axis_size, groups) -> list:
    """``prim`` (psum, pmax or pmin) of ``xs``, its implementation.  ``outs`` (or None):
    arrays of the results' shapes and dtypes that the MPI call may write into, sparing
    a copy (a compiled program's own buffers, `backends/cpu/executable.py`); the
    results returned are those arrays where it did."""
    local, procs = split_axes(axis_size, groups)
    xs = [np.asarray(x) for x in xs]
    if prim is psum_p and local != 1:  # every member of a vmap axis holds x
        xs = [(x * _size_in(x.dtype, local)).astype(x.dtype) for x in xs]
    if procs:
        return communicator(procs).allreduce(xs, _MPI_OPS[prim],
                                             describe(prim.name, axis_name, groups),
                                             outs=outs)
    return xs


def _reduce_impl(prim):
    def impl(*xs, **params):
        return reduce_into(prim, None, xs, **params)
    return impl


def _reduce_batch(prim):
    def rule(vals, dims, *, frame, **params):
        name, size = frame
        if name not in params["axis_name"]:  # another vmap's axis: member by member
            return bind(prim, *vals, **params), list(dims)
        outs = []
        for x, d in zip(vals, dims):
            if d is None:
                outs.append(x * _size_in(x.dtype, size) if prim is psum_p else x)
            else:
                outs.append(_REDUCERS[prim](x, (d,)))
        rest = rest_params(params, name)
        if rest["axis_name"]:
            outs = bind(prim, *outs, **rest)
        return outs, [None] * len(outs)
    return rule


for _p in (psum_p, pmax_p, pmin_p):
    _p.impl = _reduce_impl(_p)
    _p.abstract_eval = _same_avals
    batch_rules[_p] = _reduce_batch(_p)
    vjp_rules.pop(_p, None)


def _psum_nonzero(xs, params):
    """psum of the operands that are not symbolic zeros (zeros stay)."""
    live = [k for k, x in enumerate(xs) if type(x) is not Zero]
    outs = list(xs)
    if live:
        for k, o in zip(live, bind(psum_p, *[xs[k] for k in live], **params)):
            outs[k] = o
    return outs


def _psum_jvp(primals, tangents, **params):
    return bind(psum_p, *primals, **params), _psum_nonzero(tangents, params)


def _psum_transpose(cts, *xs, **params):
    # psum's Jacobian is the all-ones matrix over the members: symmetric, so its
    # transpose is psum again (JAX's rule), over processes as over a vmap axis
    return _psum_nonzero(cts, params)


jvp_rules[psum_p] = _psum_jvp
transpose_rules[psum_p] = _psum_transpose
for _p in (pmax_p, pmin_p):
    _p.unsupported["jvp"] = (f"{_p.name} is not differentiable in zerax (nor in JAX); "
                             "use psum of a smooth function instead")
    _p.unsupported["transpose"] = f"{_p.name} is not linear"


# --------------------------------------------------------------------------- axis_index

axis_index_p = collective("axis_index")


def _axis_index_impl(*, axis_name, axis_size, groups):
    (name,), (size,), (group,) = axis_name, axis_size, groups
    if group >= 0:
        return np.asarray(process_groups[group].index if size > 1 else 0, np.int32)
    if size == 1:
        return np.zeros((), np.int32)
    raise errors.UnboundAxisError(
        f"axis_index({name!r}) ran outside the vmap that names that axis "
        f"(at {errors.user_frame()}); call it inside vmap(..., axis_name={name!r}).")


def _axis_index_batch(vals, dims, *, frame, **params):
    return iota(np.dtype(np.int32), (frame[1],)), 0


def _axis_index_jvp(primals, tangents, **params):
    out = bind(axis_index_p, **params)
    return out, Zero(ShapedArray((), np.dtype(np.int32)))


axis_index_p.impl = _axis_index_impl
axis_index_p.abstract_eval = lambda **params: ShapedArray((), np.dtype(np.int32))
batch_rules[axis_index_p] = _axis_index_batch
jvp_rules[axis_index_p] = _axis_index_jvp
vjp_rules[axis_index_p] = ()
axis_index_p.unsupported["transpose"] = "axis_index has no operands"


__all__ = ["reduce_into", "psum_p", "pmax_p", "pmin_p", "axis_index_p", "axis_names", "axis_params",
           "bind_collective", "collective", "communicator", "describe", "member_varying_error",
           "rest_params", "split_axes"]
