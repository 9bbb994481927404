"""The sharding rules of ``gather`` and the scatters (``ops/sharding_rules.py`` holds
the table and the other rules; ``interpreters/sharding.py`` says what a rule is).

Full-slice dimensions of the operand and the dimensions of the index arrays carry over
to the result, as a `DimMap`; a dimension indexed by an array must be whole, except in
the embedding's case: one index array into one split dimension, every other dimension
a full slice.  Then a gather looks each index up in the device's own rows (zeros for
the others' rows) and leaves a partial sum over the split axes: one all-reduce makes it
the lookup (Megatron's vocabulary-parallel embedding); a scatter into a split dimension
updates only the device's own rows, so an embedding's gradient stays split.  Indices
are wrapped and clipped (or filled, or dropped) as the primitives' implementations do
on the whole operand.
"""

from __future__ import annotations

import numpy as np

from ..interpreters.sharding import DimMap, DimMapRule, Plan, replicated
from . import gather as gth
from .elementwise import (add, bitwise_and, bitwise_not, clamp, convert_element_type, eq, ge,
                          lt, mul, select_n, sub)
from .shape import broadcast_in_dim

__all__ = ["GatherRule", "ScatterRule", "gather_layout"]


def _rank(a):
    return len(a.aval.shape)


def _full(n, start, limit, stride):
    return start == 0 and limit == n and (stride or 1) == 1


def gather_layout(x_shape, indexer, idx_shapes):
    """Where each dimension goes: (x dim -> result dim for full slices, the x dims
    indexed by arrays or ints, per index array its dims -> result dims)."""
    out_shape, bpos, bshape = gth._gather_shape(x_shape, indexer, idx_shapes)
    x_to_out, indexed, plain = {}, [], []
    axis = 0
    for e in indexer:
        if e is None:
            plain.append(None)
            continue
        if e[0] == "e":
            continue
        if e[0] == "s":
            full = _full(x_shape[axis], e[1], e[1] + e[2] * e[3], e[3])
            plain.append(axis if full else None)
        else:
            indexed.append((axis, e))
        axis += 1
    # the result: plain dims with the advanced block at bpos
    for k, src in enumerate(plain):
        j = k if k < bpos else k + len(bshape)
        if src is not None:
            x_to_out[src] = j
    idx_to_out = []
    for s in idx_shapes:
        off = len(bshape) - len(s)
        idx_to_out.append(tuple(bpos + off + i if s[i] == bshape[off + i] else None
                                for i in range(len(s))))
    return out_shape, x_to_out, indexed, idx_to_out


def _gather_map(eqn):
    p = eqn.params
    x = eqn.invars[0].aval.shape
    idx_shapes = [a.aval.shape for a in eqn.invars[1:]]
    out_shape, x_to_out, _, idx_to_out = gather_layout(x, p["indexer"], idx_shapes)
    xm = tuple(x_to_out.get(i) for i in range(len(x)))
    return DimMap([xm] + list(idx_to_out), len(out_shape))


def _local_indexer(indexer, x_global, x_local):
    """The indexer with each full slice over a split dimension cut to the block."""
    out, axis = [], 0
    for e in indexer:
        if e is None or e[0] == "e":
            out.append(e)
            continue
        if e[0] == "s" and _full(x_global[axis], e[1], e[1] + e[2] * e[3], e[3]):
            out.append(("s", 0, x_local[axis], 1))
        else:
            out.append(e)
        axis += 1
    return tuple(out)


def _vocab_split(eqn, x_spec, first_index):
    """(the x dimension, its axes) when ``eqn`` indexes one split dimension of its
    operand with one index array and every other dimension with full slices (an
    embedding lookup into a vocabulary split over devices); else None."""
    x = eqn.invars[0].aval
    if x.dtype == np.bool_:
        return None
    _, x_to_out, indexed, _ = gather_layout(
        x.shape, eqn.params["indexer"], [a.aval.shape for a in eqn.invars[first_index:]])
    if len(indexed) != 1 or indexed[0][1][0] != "a" or len(x_to_out) != len(x.shape) - 1:
        return None
    d = indexed[0][0]
    return (d, x_spec[d]) if x_spec[d] else None


def _global_index(ctx, idx, n, mode_clip):
    """Indices wrapped (negative += n) and, in clip mode, clamped: the row each one
    reads in the whole operand."""
    idx = convert_element_type(idx, np.dtype(np.int64))
    n_ = np.asarray(n, np.int64)
    idx = select_n(lt(idx, np.asarray(0, np.int64)), idx, add(idx, n_))
    if mode_clip:
        idx = clamp(np.asarray(0, np.int64), idx, np.asarray(n - 1, np.int64))
    return idx


def _in_block(ctx, idx, axes, nl):
    """(index within this device's rows, whether the row is this device's)."""
    off = mul(convert_element_type(ctx.block_index(axes), np.dtype(np.int64)),
              np.asarray(nl, np.int64))
    loc = sub(idx, off)
    mine = bitwise_and(ge(loc, np.asarray(0, np.int64)), lt(loc, np.asarray(nl, np.int64)))
    return loc, mine


class GatherRule(DimMapRule):
    def __init__(self):
        super().__init__(_gather_map, name="gather")

    def partition(self, eqn, ins, outs, sizes):
        vocab = _vocab_split(eqn, ins[0], 1)
        if vocab is None:
            plan = super().partition(eqn, ins, outs, sizes)
            plan.local = self._plain(eqn)
            return plan
        d, axes = vocab
        out = outs[0]
        x_shape = eqn.invars[0].aval.shape
        _, x_to_out, _, idx_to_out = gather_layout(
            x_shape, eqn.params["indexer"], [a.aval.shape for a in eqn.invars[1:]])
        # the result cannot be split over the vocabulary's axes (the sum is over them)
        result = tuple(tuple(a for a in dd if a not in axes) for dd in out)
        xs = [result[x_to_out[i]] if i in x_to_out else () for i in range(len(x_shape))]
        xs[d] = axes
        idx_specs = [tuple(result[j] if j is not None else () for j in m) for m in idx_to_out]
        return Plan([tuple(xs)] + idx_specs, [result], self._vocab(eqn, d, axes),
                    [{a: "sum" for a in axes}])

    def _plain(self, eqn):
        def local(ctx, x, *idx, result_shapes):
            p = eqn.params
            indexer = _local_indexer(p["indexer"], eqn.invars[0].aval.shape, x.shape)
            return ctx.bind(eqn.primitive, (x, *idx), dict(p, indexer=indexer))
        return local

    def _vocab(self, eqn, d, axes):
        p = eqn.params
        n = eqn.invars[0].aval.shape[d]

        def local(ctx, x, idx, result_shapes):
            nl = x.shape[d]
            g_idx = _global_index(ctx, idx, n, p["mode"] == "clip")
            loc, mine = _in_block(ctx, g_idx, axes, nl)
            loc = clamp(np.asarray(0, np.int64), loc, np.asarray(nl - 1, np.int64))
            indexer = _local_indexer(p["indexer"], eqn.invars[0].aval.shape, x.shape)
            (rows,) = ctx.bind(gth.gather_p, (x, loc), dict(p, indexer=indexer, mode="clip",
                                                              fill_value=None))
            dims = _index_dims(x.shape, indexer, loc.shape)
            keep = broadcast_in_dim(mine, rows.shape, dims)
            zero = np.zeros((), x.dtype)
            out = select_n(keep, zero, rows)
            if p["mode"] == "fill":
                # an index out of bounds everywhere gives the fill value, once (on the
                # first block), so that the sum over the devices is that value
                valid = bitwise_and(ge(g_idx, np.asarray(0, np.int64)),
                                    lt(g_idx, np.asarray(n, np.int64)))
                first = broadcast_in_dim(bitwise_and(bitwise_not(valid), _is_first(ctx, axes)),
                                         rows.shape, dims)
                out = select_n(first, out, np.asarray(p["fill_value"], x.dtype))
            return [out]
        return local


def _index_dims(x_shape, indexer, idx_shape):
    """The result dimensions of a gather that the index array's dimensions fill."""
    _, bpos, bshape = gth._gather_shape(x_shape, indexer, [idx_shape])
    off = len(bshape) - len(idx_shape)
    return tuple(bpos + off + i for i in range(len(idx_shape)))


def _is_first(ctx, axes):
    return eq(ctx.block_index(axes), np.asarray(0, np.int32))


def _scatter_map(eqn):
    p = eqn.params
    x = eqn.invars[0].aval.shape
    idx_shapes = [a.aval.shape for a in eqn.invars[2:]]
    out_shape, x_to_out, _, _ = gather_layout(x, p["indexer"], idx_shapes)
    # dims of the updates (the indexed shape) -> the operand's dims
    u_to_x = {j: i for i, j in x_to_out.items()}
    xm = tuple(i if i in x_to_out else None for i in range(len(x)))
    um = tuple(u_to_x.get(j) for j in range(len(out_shape)))
    # the indexed dimensions are left to the result's users: split, the scatter updates
    # each device's own rows (`ScatterRule`)
    free = [i for i in range(len(x)) if i not in x_to_out]
    return DimMap([xm, um] + [tuple(None for _ in s) for s in idx_shapes], len(x), free)


class ScatterRule(DimMapRule):
    def __init__(self):
        super().__init__(_scatter_map, name="scatter")

    def partition(self, eqn, ins, outs, sizes):
        vocab = _vocab_split(eqn, outs[0], 2)
        if vocab is None:   # the indexed dimensions whole
            x_shape = eqn.invars[0].aval.shape
            _, x_to_out, _, _ = gather_layout(x_shape, eqn.params["indexer"],
                                               [a.aval.shape for a in eqn.invars[2:]])
            whole = tuple(d if i in x_to_out else () for i, d in enumerate(outs[0]))
            plan = super().partition(eqn, ins, [whole] * len(outs), sizes)
            plan.local = self._plain(eqn)
            return plan
        d, axes = vocab
        out = outs[0]
        x_shape = eqn.invars[0].aval.shape
        _, x_to_out, _, _ = gather_layout(x_shape, eqn.params["indexer"],
                                           [a.aval.shape for a in eqn.invars[2:]])
        u_rank = _rank(eqn.invars[1])
        us = [()] * u_rank
        for i, j in x_to_out.items():
            us[j] = tuple(a for a in out[i] if a not in axes)
        xs = tuple(out[i] if i == d or i in x_to_out else () for i in range(len(x_shape)))
        idx = [replicated(_rank(a)) for a in eqn.invars[2:]]
        return Plan([xs, tuple(us)] + idx, [xs], self._vocab(eqn, d, axes))

    def _plain(self, eqn):
        def local(ctx, x, u, *idx, result_shapes):
            p = eqn.params
            indexer = _local_indexer(p["indexer"], eqn.invars[0].aval.shape, x.shape)
            return ctx.bind(eqn.primitive, (x, u, *idx), dict(p, indexer=indexer))
        return local

    def _vocab(self, eqn, d, axes):
        p = eqn.params
        n = eqn.invars[0].aval.shape[d]

        def local(ctx, x, u, idx, result_shapes):
            nl = x.shape[d]
            g_idx = _global_index(ctx, idx, n, p["mode"] == "clip")
            loc, mine = _in_block(ctx, g_idx, axes, nl)
            # rows of other devices: an index past the block, which the scatter drops
            loc = select_n(mine, np.asarray(nl, np.int64), loc)
            indexer = _local_indexer(p["indexer"], eqn.invars[0].aval.shape, x.shape)
            return ctx.bind(eqn.primitive, (x, u, loc), dict(p, indexer=indexer, mode="drop"))
        return local
