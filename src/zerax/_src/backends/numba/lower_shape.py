"""The Numba lowering of the shape and slicing primitives (``ops/shape.py``,
``ops/slicing.py``): broadcast, reshape, squeeze, transpose, concatenate, rev, iota,
slice, pad, dynamic_slice and dynamic_update_slice, each a loop nest that copies into a
fresh array (see lower_util.py).
"""

from __future__ import annotations

import numpy as np

from ...ops.shape import (broadcast_in_dim_p, concatenate_p, iota_p, reshape_p, rev_p,
                          squeeze_p, transpose_p)
from ...ops.slicing import dynamic_slice_p, dynamic_update_slice_p, pad_p, slice_p
from .codegen import dtype_name
from .lower_util import affine, array_of, copy_loop, empty_out, index_text, scalar_of, shape_text
from .rules import lowering_rules


# --------------------------------------------------------------------------- shape


def _bid_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    shape, bdims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    ctx.emit(f"# broadcast_in_dim {x.aval.shape} -> {tuple(shape)}")
    in_shape = x.aval.shape
    if in_shape == ():
        s = scalar_of(ctx, x)
        out = empty_out(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)):
            with ctx.nest(shape) as idx:
                ctx.emit(f"{out}[{index_text(idx)}] = {s}")
        return
    xn = array_of(ctx, x)
    out = empty_out(ctx, ov)
    copy_loop(ctx, out, lambda idx: idx, xn,
              lambda idx: [idx[dst] if in_shape[src] == shape[dst] else "0"
                           for src, dst in enumerate(bdims)], shape)


def _reshape_like_lower(prim_name):
    def rule(ctx, eqn):
        (x,), (ov,) = eqn.invars, eqn.outvars
        ctx.emit(f"# {prim_name} {x.aval.shape} -> {ov.aval.shape}")
        if ov.aval.shape == ():  # a single element: held as a scalar
            name = ctx.fresh("s")
            ctx.emit(f"{name} = {scalar_of(ctx, x)}" if x.aval.shape == () else
                     f"{name} = {ctx.name(x)}[{index_text(['0'] * len(x.aval.shape))}]")
            ctx.bind_scalar(ov, name)
            return
        xn = array_of(ctx, x)
        out = ctx.out(ov)
        ctx.emit(f"{out} = np.ascontiguousarray({xn}).reshape({shape_text(ov.aval.shape)}).copy()")
    return rule


def _transpose_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    perm = eqn.params["permutation"]
    ctx.emit(f"# transpose {perm}")
    xn = array_of(ctx, x)
    out = empty_out(ctx, ov)

    def src_ix(idx):
        src = [None] * len(perm)
        for k, p in enumerate(perm):
            src[p] = idx[k]
        return src
    copy_loop(ctx, out, lambda idx: idx, xn, src_ix, ov.aval.shape)


def _concat_lower(ctx, eqn):
    (ov,) = eqn.outvars
    dim = eqn.params["dimension"]
    ctx.emit(f"# concatenate along axis {dim}")
    names = [array_of(ctx, x) for x in eqn.invars]
    out = empty_out(ctx, ov)
    offset = 0
    for x, xn in zip(eqn.invars, names):
        shape = x.aval.shape

        def out_ix(idx, offset=offset):
            return [affine(i, offset) if d == dim else i for d, i in enumerate(idx)]
        copy_loop(ctx, out, out_ix, xn, lambda idx: idx, shape)
        offset += shape[dim]


def _rev_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    dims = eqn.params["dimensions"]
    shape = x.aval.shape
    ctx.emit(f"# rev {tuple(dims)}")
    xn = array_of(ctx, x)
    out = empty_out(ctx, ov)
    copy_loop(ctx, out, lambda idx: idx, xn,
              lambda idx: [f"{shape[d] - 1} - {i}" if d in dims else i
                           for d, i in enumerate(idx)], shape)


def _iota_lower(ctx, eqn):
    (ov,) = eqn.outvars
    dim = eqn.params["dimension"]
    shape = ov.aval.shape
    ctx.emit(f"# iota along axis {dim}")
    out = empty_out(ctx, ov)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    dt = dtype_name(ov.aval.dtype)
    with ctx.nest(shape) as idx:
        ctx.emit(f"{out}[{index_text(idx)}] = {dt}({idx[dim]})")


lowering_rules[broadcast_in_dim_p] = _bid_lower
lowering_rules[reshape_p] = _reshape_like_lower("reshape")
lowering_rules[squeeze_p] = _reshape_like_lower("squeeze")
lowering_rules[transpose_p] = _transpose_lower
lowering_rules[concatenate_p] = _concat_lower
lowering_rules[rev_p] = _rev_lower
lowering_rules[iota_p] = _iota_lower


# --------------------------------------------------------------------------- slicing


def _slice_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    starts, limits = eqn.params["start_indices"], eqn.params["limit_indices"]
    strides = eqn.params["strides"] or (1,) * len(starts)
    ctx.emit(f"# slice {starts}:{limits}:{strides}")
    xn = array_of(ctx, x)
    out = empty_out(ctx, ov)
    copy_loop(ctx, out, lambda idx: idx, xn,
              lambda idx: [affine(i, a, s) for i, a, s in zip(idx, starts, strides)],
              ov.aval.shape)


lowering_rules[slice_p] = _slice_lower


def _pad_lower(ctx, eqn):
    (x, pv), (ov,) = eqn.invars, eqn.outvars
    config = eqn.params["padding_config"]
    out_shape = ov.aval.shape
    ctx.emit(f"# pad {config}")
    # Operand element i of an axis lands at lo + i * (interior + 1); keep those inside.
    first, count, base, step = [], [], [], []
    for n, d, (lo, _, interior) in zip(x.aval.shape, out_shape, config):
        s = interior + 1
        i_min = max(0, (-lo + s - 1) // s)
        i_max = min(n, max(0, (d - lo + s - 1) // s))
        first.append(i_min)
        count.append(max(0, i_max - i_min))
        base.append(lo + i_min * s)
        step.append(s)
    covers = all(s == 1 and c == d for s, c, d in zip(step, count, out_shape))
    dt = dtype_name(ov.aval.dtype)
    out = ctx.out(ov)
    if covers:  # a pure crop: every output element comes from the operand
        ctx.emit(f"{out} = np.empty({shape_text(out_shape)}, {dt})")
    else:
        fill = scalar_of(ctx, pv)
        if np.dtype(pv.aval.dtype) != np.dtype(ov.aval.dtype):
            fill = f"{dt}({fill})"
        ctx.emit(f"{out} = np.full({shape_text(out_shape)}, {fill}, {dt})")
    xn = array_of(ctx, x)
    copy_loop(ctx, out, lambda idx: [affine(i, b, s) for i, b, s in zip(idx, base, step)],
              xn, lambda idx: [affine(i, f) for i, f in zip(idx, first)], count)


lowering_rules[pad_p] = _pad_lower


def _clamped_starts(ctx, atoms, shape, sizes):
    """Locals holding the start indices clamped into ``[0, n - k]`` (as the
    implementation's ``slicing._clamp_starts``)."""
    names = []
    for a, n, k in zip(atoms, shape, sizes):
        s = scalar_of(ctx, a)
        name = ctx.fresh("st")
        hi = n - k
        if np.dtype(a.aval.dtype).kind == "u":
            ctx.emit(f"{name} = {hi} if {s} > {dtype_name(a.aval.dtype)}({hi}) "
                     f"else np.int64({s})")
        else:
            ctx.emit(f"{name} = min(max(np.int64({s}), 0), {hi})")
        names.append(name)
    return names


def _ds_lower(ctx, eqn):
    (x, *starts), (ov,) = eqn.invars, eqn.outvars
    sizes = eqn.params["slice_sizes"]
    ctx.emit(f"# dynamic_slice sizes {tuple(sizes)}")
    xn = array_of(ctx, x)
    st = _clamped_starts(ctx, starts, x.aval.shape, sizes)
    out = empty_out(ctx, ov)
    copy_loop(ctx, out, lambda idx: idx, xn,
              lambda idx: [f"{i} + {s}" for i, s in zip(idx, st)], sizes)


lowering_rules[dynamic_slice_p] = _ds_lower


def _dus_lower(ctx, eqn):
    (x, update, *starts), (ov,) = eqn.invars, eqn.outvars
    ctx.emit("# dynamic_update_slice")
    xn = array_of(ctx, x)
    un = array_of(ctx, update)
    st = _clamped_starts(ctx, starts, x.aval.shape, update.aval.shape)
    out = ctx.out(ov)
    ctx.emit(f"{out} = np.copy({xn})")
    copy_loop(ctx, out, lambda idx: [f"{i} + {s}" for i, s in zip(idx, st)], un,
              lambda idx: idx, update.aval.shape)


lowering_rules[dynamic_update_slice_p] = _dus_lower
