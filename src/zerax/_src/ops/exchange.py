"""Collectives that move data between the members of one named axis: ``all_gather``,
``psum_scatter``, ``all_to_all`` and ``ppermute`` (see `collectives` for the
bindings, the ``groups`` parameter and the reductions).

Each primitive here names one axis and has no ``tiled`` form: ``lax/parallel.py`` writes
JAX's tiled variants and tuples of axes with reshapes around them (a tuple is the axes'
product, indexed row-major: the first name varies slowest).  On a member of an axis of
``S`` members:

- ``all_gather(x, axis)``: every member's ``x`` stacked along a new dimension ``axis``;
- ``psum_scatter(x, scatter_dimension)``: ``x.shape[scatter_dimension] == S``; member
  ``k`` gets row ``k`` of the sum over members (that dimension removed);
- ``all_to_all(x, split_axis, concat_axis)``: ``x.shape[split_axis] == S``; member ``n``
  gets row ``n`` of every member's ``x``, stacked in member order along a new dimension
  ``concat_axis`` of the result;
- ``ppermute(x, perm)``: member ``dst`` gets the ``x`` of member ``src`` for each pair
  ``(src, dst)`` of ``perm``; a member no pair sends to gets zeros (JAX's documented
  meaning; JAX's vmap accepts only complete permutations).

Over a process axis each is one MPI call on contiguous buffers (Allgather,
Reduce_scatter_block, Alltoall, Sendrecv), the named dimension moved to the front first
when it is not there.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import ShapedArray, bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, bdim_at_front, moveaxis
from ..interpreters.tape import vjp_rules
from .collectives import collective, communicator, describe, member_varying_error, split_axes
from .elementwise import select_n
from .gather import take_along_axis
from .reduce import reduce_sum
from .shape import broadcast_in_dim, transpose

all_gather_p = collective("all_gather")
psum_scatter_p = collective("psum_scatter")
all_to_all_p = collective("all_to_all")
ppermute_p = collective("ppermute")


def _one_axis(axis_size, groups):
    """(members, the transport or None for a vmap axis or a single process)."""
    (size,), (group,) = axis_size, groups
    _, procs = split_axes(axis_size, groups)
    return size, (communicator(procs) if procs else None), group


def _linear_rules(prim, transpose_rule):
    """JVP (the operation on the tangent) and transpose of a linear collective."""
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, **params)
        if type(t) is Zero:
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, bind(prim, t, **params)

    def transpose_(ct, x, **params):
        if type(ct) is Zero:
            return [Zero(x.aval)]
        return [transpose_rule(ct, **params)]

    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose_
    vjp_rules.pop(prim, None)


def _other_axis(prim, x, d, params, shifted: dict):
    """Another vmap's axis: the collective member by member, the batch dimension at 0
    and the parameters ``shifted`` (dimension numbers) moved past it."""
    new = dict(params)
    new.update({k: v + 1 for k, v in shifted.items()})
    return bind(prim, moveaxis(x, d, 0), **new), 0


# --------------------------------------------------------------------------- all_gather

def _all_gather_aval(x, *, axis, axis_size, **params):
    shape = list(x.shape)
    shape.insert(axis, axis_size[0])
    return ShapedArray(tuple(shape), x.dtype)


def _all_gather_impl(x, *, axis_name, axis_size, groups, axis):
    size, comm, _ = _one_axis(axis_size, groups)
    x = np.asarray(x)
    if comm is None:   # every member of a vmap axis holds x
        return np.stack([x] * size, axis=axis)
    return np.moveaxis(comm.allgather(x, describe("all_gather", axis_name, groups)), 0, axis)


def _all_gather_batch(vals, dims, *, frame, axis, **params):
    (x,), (d,) = vals, dims
    name, size = frame
    if name not in params["axis_name"]:
        return _other_axis(all_gather_p, x, d, dict(params, axis=axis), {"axis": axis})
    if d is None:
        nd = len(x.shape)
        shape = list(x.shape)
        shape.insert(axis, size)
        return broadcast_in_dim(x, tuple(shape),
                                tuple(k if k < axis else k + 1 for k in range(nd))), None
    return moveaxis(x, d, axis), None


all_gather_p.impl = _all_gather_impl
all_gather_p.abstract_eval = _all_gather_aval
batch_rules[all_gather_p] = _all_gather_batch
# the adjoint of gathering: each member's cotangent is its own row of the sum of every
# member's gathered cotangent (JAX's psum_scatter)
_linear_rules(all_gather_p, lambda ct, axis, **params: bind(
    psum_scatter_p, ct, scatter_dimension=axis, **params))


# --------------------------------------------------------------------------- psum_scatter

def _scatter_aval(x, *, scatter_dimension, axis_size, axis_name, **params):
    shape = list(x.shape)
    if shape[scatter_dimension] != axis_size[0]:
        raise _size_error("psum_scatter", "scatter_dimension", scatter_dimension, shape,
                          axis_name[0], axis_size[0])
    del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype)


def _size_error(what, param, dim, shape, name, size):
    return errors.ShapeError(
        f"{what} over axis {name!r} of {size} members needs the operand's dimension "
        f"{param}={dim} to have {size} entries (one per member), but the operand has "
        f"shape {tuple(shape)} (at {errors.user_frame()}).")


def _psum_scatter_impl(x, *, axis_name, axis_size, groups, scatter_dimension):
    size, comm, _ = _one_axis(axis_size, groups)
    x = np.asarray(x)
    if comm is None:
        if size != 1:
            raise member_varying_error("psum_scatter", axis_name[0])
        return np.take(x, 0, axis=scatter_dimension)
    return comm.reduce_scatter(np.moveaxis(x, scatter_dimension, 0),
                               describe("psum_scatter", axis_name, groups))


def _psum_scatter_batch(vals, dims, *, frame, scatter_dimension, **params):
    (x,), (d,) = vals, dims
    name, size = frame
    if name not in params["axis_name"]:
        return _other_axis(psum_scatter_p, x, d,
                           dict(params, scatter_dimension=scatter_dimension),
                           {"scatter_dimension": scatter_dimension})
    total = x * np.asarray(size, x.dtype) if d is None else reduce_sum(x, (d,))
    # member k takes row k of the sum: that dimension becomes the batch dimension
    return total, scatter_dimension


psum_scatter_p.impl = _psum_scatter_impl
psum_scatter_p.abstract_eval = _scatter_aval
batch_rules[psum_scatter_p] = _psum_scatter_batch
_linear_rules(psum_scatter_p, lambda ct, scatter_dimension, **params: bind(
    all_gather_p, ct, axis=scatter_dimension, **params))


# --------------------------------------------------------------------------- all_to_all

def _all_to_all_aval(x, *, split_axis, concat_axis, axis_size, axis_name, **params):
    shape = list(x.shape)
    if shape[split_axis] != axis_size[0]:
        raise _size_error("all_to_all", "split_axis", split_axis, shape, axis_name[0],
                          axis_size[0])
    del shape[split_axis]
    shape.insert(concat_axis, axis_size[0])
    return ShapedArray(tuple(shape), x.dtype)


def _all_to_all_impl(x, *, axis_name, axis_size, groups, split_axis, concat_axis):
    size, comm, _ = _one_axis(axis_size, groups)
    x = np.asarray(x)
    if comm is None:
        if size != 1:
            raise member_varying_error("all_to_all", axis_name[0])
        return np.moveaxis(x, split_axis, concat_axis)
    out = comm.alltoall(np.moveaxis(x, split_axis, 0),
                        describe("all_to_all", axis_name, groups))
    return np.moveaxis(out, 0, concat_axis)


def _all_to_all_batch(vals, dims, *, frame, split_axis, concat_axis, **params):
    (x,), (d,) = vals, dims
    name, size = frame
    if name not in params["axis_name"]:
        return _other_axis(all_to_all_p, x, d,
                           dict(params, split_axis=split_axis, concat_axis=concat_axis),
                           {"split_axis": split_axis, "concat_axis": concat_axis})
    # x[m, ..., n (split), ...] of member m: the split dimension n becomes the batch
    # dimension and the members m a dimension at concat_axis of each result
    x = bdim_at_front(x, d, size)
    nd = len(x.shape) - 1
    rest = [1 + k for k in range(nd) if k != split_axis]
    rest.insert(concat_axis, 0)
    return transpose(x, [1 + split_axis] + rest), 0


all_to_all_p.impl = _all_to_all_impl
all_to_all_p.abstract_eval = _all_to_all_aval
batch_rules[all_to_all_p] = _all_to_all_batch
_linear_rules(all_to_all_p, lambda ct, split_axis, concat_axis, **params: bind(
    all_to_all_p, ct, split_axis=concat_axis, concat_axis=split_axis, **params))


# --------------------------------------------------------------------------- ppermute

def _sources(perm, size):
    """For each member, the member it receives from (``size``: none)."""
    src = np.full(size, size, np.int64)
    for s, t in perm:
        src[t] = s
    return src


def _ppermute_impl(x, *, axis_name, axis_size, groups, perm):
    size, comm, _ = _one_axis(axis_size, groups)
    x = np.asarray(x)
    if comm is None:
        src = _sources(perm, size)
        if (src < size).all():      # every member receives: each gets the same x
            return x
        if size == 1:
            return np.zeros_like(x)
        raise member_varying_error("ppermute (of a permutation not onto every member)",
                                   axis_name[0])
    return comm.permute(x, perm, describe("ppermute", axis_name, groups))


def _ppermute_batch(vals, dims, *, frame, perm, **params):
    (x,), (d,) = vals, dims
    name, size = frame
    if name not in params["axis_name"]:
        return bind(ppermute_p, x, perm=perm, **params), d
    src = _sources(perm, size)
    if d is None:
        if (src < size).all():
            return x, None
        shape = (size,) + tuple(x.shape)
        xb = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
        keep = broadcast_in_dim(np.asarray(src < size), shape, (0,))
        return select_n(keep, np.zeros(shape, x.dtype), xb), 0
    index_shape = [1] * len(x.shape)
    index_shape[d] = size
    return take_along_axis(x, src.reshape(index_shape), d, mode="fill", fill_value=0), d


def _invert(perm):
    return tuple((t, s) for s, t in perm)


ppermute_p.impl = _ppermute_impl
ppermute_p.abstract_eval = lambda x, **params: ShapedArray(x.shape, x.dtype)
batch_rules[ppermute_p] = _ppermute_batch
# a permutation's adjoint sends every cotangent back where its value came from
_linear_rules(ppermute_p, lambda ct, perm, **params: bind(
    ppermute_p, ct, perm=_invert(perm), **params))


__all__ = ["all_gather_p", "psum_scatter_p", "all_to_all_p", "ppermute_p"]
