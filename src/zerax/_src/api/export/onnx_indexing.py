"""ONNX rules of slicing and indexing: ``slice``, ``pad`` (negative and interior padding
included), ``dynamic_slice``/``dynamic_update_slice`` (start indices clamped into range,
as zerax and JAX do), and ``gather``, zerax's NumPy-style indexing: basic slices become
``Slice``, the advanced indices (arrays and integers) one ``GatherND`` over the indexed
axes moved to the front, with NumPy's placement of the broadcast index dimensions
(``ops/gather.py``) and its modes (negative indices wrap, out-of-bounds ones clamp or
give the fill value).
"""

from __future__ import annotations

import numpy as np

from ...ops import gather as gather_ops, slicing
from .onnx_rules import onnx_rules, scalar

_I64 = np.int64


def _slice(ctx, eqn, ins):
    p = eqn.params
    n = len(p["start_indices"])
    steps = p["strides"] or (1,) * n
    return ctx.node("Slice", [ins[0], ctx.ints(p["start_indices"]), ctx.ints(p["limit_indices"]),
                              ctx.ints(range(n)), ctx.ints(steps)])


def _pad(ctx, eqn, ins):
    x, pv = ins
    shape = list(eqn.invars[0].aval.shape)
    config = eqn.params["padding_config"]
    for axis, (_, _, interior) in enumerate(config):   # interior: a new axis, padded, merged
        n = shape[axis]
        if interior == 0 or n == 0:
            continue
        x = ctx.node("Unsqueeze", [x, ctx.ints([axis + 1])])
        pads = [0] * (len(shape) + 1) * 2
        pads[len(shape) + 1 + axis + 1] = interior
        x = ctx.node("Pad", [x, ctx.ints(pads), pv], mode="constant")
        merged = shape[:axis] + [n * (interior + 1)] + shape[axis + 1:]
        x = ctx.node("Reshape", [x, ctx.ints(merged)])
        shape[axis] = n + (n - 1) * interior
        x = ctx.node("Slice", [x, ctx.ints([0]), ctx.ints([shape[axis]]), ctx.ints([axis])])
    lo = [max(c[0], 0) for c in config]
    hi = [max(c[1], 0) for c in config]
    if any(lo) or any(hi):
        x = ctx.node("Pad", [x, ctx.ints(lo + hi), pv], mode="constant")
    crop = [(a, max(-c[0], 0), max(-c[1], 0)) for a, c in enumerate(config)
            if c[0] < 0 or c[1] < 0]
    if crop:
        full = [s + lo[a] + hi[a] for a, s in enumerate(shape)]
        x = ctx.node("Slice", [x, ctx.ints([c[1] for c in crop]),
                               ctx.ints([full[c[0]] - c[2] for c in crop]),
                               ctx.ints([c[0] for c in crop])])
    return x


def _starts(ctx, starts, sizes, shape):
    """The clamped start indices as one int64 vector: min(max(s, 0), n - k)."""
    parts = []
    for s, k, n in zip(starts, sizes, shape):
        s = ctx.node("Cast", [s], to=ctx.onnx_type(_I64))
        s = ctx.node("Clip", [s, ctx.const(_I64(0)), ctx.const(_I64(n - k))])
        parts.append(ctx.node("Unsqueeze", [s, ctx.ints([0])]))
    return ctx.node("Concat", parts, axis=0) if len(parts) > 1 else parts[0]


def _dynamic_slice(ctx, eqn, ins):
    x, *starts = ins
    sizes = eqn.params["slice_sizes"]
    shape = eqn.invars[0].aval.shape
    if not shape:
        return ctx.node("Identity", [x])
    st = _starts(ctx, starts, sizes, shape)
    ends = ctx.node("Add", [st, ctx.ints(sizes)])
    return ctx.node("Slice", [x, st, ends, ctx.ints(range(len(shape)))])


def _dynamic_update_slice(ctx, eqn, ins):
    x, update, *starts = ins
    shape = eqn.invars[0].aval.shape
    ushape = eqn.invars[1].aval.shape
    if not shape:
        return ctx.node("Identity", [update])
    if 0 in ushape:
        return ctx.node("Identity", [x])
    st = _starts(ctx, starts, ushape, shape)
    grid = np.stack(np.indices(ushape), axis=-1).astype(_I64)   # every updated position
    indices = ctx.node("Add", [ctx.const(grid), st])
    return ctx.node("ScatterND", [x, indices, update])


def _gather(ctx, eqn, ins):
    p = eqn.params
    x, *idx = ins
    aval = eqn.invars[0].aval
    out_aval = eqn.outvars[0].aval
    indexer, mode = p["indexer"], p["mode"]
    # 1. basic slices, axis by axis; the advanced entries (arrays, ints) recorded
    starts, ends, axes_, steps = [], [], [], []
    adv = []            # (axis, ("a", k) | ("i", v))
    real_dims = []      # output dims in order, None marking where the advanced ones go
    axis = 0
    seen, gap, contiguous = False, False, True
    for e in indexer:
        if e is None:
            gap = gap or seen
            continue
        if e[0] == "e":
            gap = gap or seen
            continue
        n = aval.shape[axis]
        if e[0] == "s":
            _, start, size, step = e
            stop = start + size * step
            if size and (start, stop, step) != (0, n, 1):
                starts.append(start)
                ends.append(stop if stop >= 0 else -n - 1)
                axes_.append(axis)
                steps.append(step)
            real_dims.append(axis)
            gap = gap or seen
        else:
            adv.append((axis, e))
            if not seen:
                real_dims.append(None)
                seen = True
            elif gap:
                contiguous = False
        axis += 1
    if any(aval.shape[a] == 0 for a in axes_) or 0 in out_aval.shape:
        return ctx.node("Identity", [ctx.const(np.zeros(out_aval.shape, out_aval.dtype))])
    if starts:
        x = ctx.node("Slice", [x, ctx.ints(starts), ctx.ints(ends), ctx.ints(axes_),
                               ctx.ints(steps)])
    if not adv:
        return ctx.node("Reshape", [x, ctx.ints(out_aval.shape)])
    # 2. the advanced indices: normalised, broadcast, stacked; one GatherND
    idx_shapes = [() if e[0] == "i" else eqn.invars[1 + e[1]].aval.shape for _, e in adv]
    bshape = tuple(np.broadcast_shapes(*idx_shapes))
    cols, valid = [], None
    for (a, e), s in zip(adv, idx_shapes):
        n = aval.shape[a]
        if e[0] == "i":
            v = e[1] + n if e[1] < 0 else e[1]
            ok = 0 <= v < n
            i = ctx.const(_I64(min(max(v, 0), n - 1)))
            good = None if ok else ctx.const(np.bool_(False))
        else:
            i = ctx.node("Cast", [idx[e[1]]], to=ctx.onnx_type(_I64))
            i = ctx.node("Where", [ctx.node("Less", [i, ctx.const(_I64(0))]),
                                   ctx.node("Add", [i, ctx.const(_I64(n))]), i])
            good = None
            if mode == "fill":
                good = ctx.node("And", [
                    ctx.node("GreaterOrEqual", [i, ctx.const(_I64(0))]),
                    ctx.node("Less", [i, ctx.const(_I64(n))])])
            i = ctx.node("Clip", [i, ctx.const(_I64(0)), ctx.const(_I64(max(n - 1, 0)))])
        if good is not None:
            valid = good if valid is None else ctx.node("And", [valid, good])
        i = ctx.node("Expand", [i, ctx.ints(bshape)]) if s != bshape else i
        cols.append(ctx.node("Unsqueeze", [i, ctx.ints([len(bshape)])]))
    index = ctx.node("Concat", cols, axis=-1) if len(cols) > 1 else cols[0]
    adv_axes = [a for a, _ in adv]
    rest = [d for d in range(aval.ndim) if d not in adv_axes]
    if adv_axes != list(range(len(adv_axes))):
        x = ctx.node("Transpose", [x], perm=adv_axes + rest)
    g = ctx.node("GatherND", [x, index])          # bshape + rest dims
    if valid is not None and mode == "fill":
        fill = p["fill_value"]
        mask = ctx.node("Reshape", [ctx.node("Expand", [valid, ctx.ints(bshape)]),
                                    ctx.ints(bshape + (1,) * len(rest))])
        g = ctx.node("Where", [mask, g, scalar(ctx, fill, out_aval.dtype)])
    # 3. NumPy's placement: the index dims where the first advanced entry was, when the
    # advanced entries are contiguous, else first; then the new axes (None) by reshape
    if contiguous:
        before = real_dims.index(None)
        if before:
            nb = len(bshape)
            perm = list(range(nb, nb + before)) + list(range(nb)) + \
                list(range(nb + before, nb + len(rest)))
            g = ctx.node("Transpose", [g], perm=perm)
    return ctx.node("Reshape", [g, ctx.ints(out_aval.shape)])


onnx_rules[slicing.slice_p] = _slice
onnx_rules[slicing.pad_p] = _pad
onnx_rules[slicing.dynamic_slice_p] = _dynamic_slice
onnx_rules[slicing.dynamic_update_slice_p] = _dynamic_update_slice
onnx_rules[gather_ops.gather_p] = _gather
