"""The Numba lowering of the shape, slicing and window primitives (``ops/shape.py``,
``ops/slicing.py``, ``ops/windows.py``): broadcast, reshape, squeeze, transpose,
concatenate, rev, iota, slice, pad, dynamic_slice, dynamic_update_slice and
window_patches, each a loop nest that copies into a fresh array (see lower_util.py), and
window_patches_add, a loop nest that adds into a zeroed one.

Outputs come from `loops.output_buffer`: inside a loop body, a value that nothing keeps
past its step is written into one buffer allocated before the loop (small vectors built
from slices, reshapes and concatenations allocate nothing per step), and a loop's carry
or stacked output is written where it goes.
"""

from __future__ import annotations

import numpy as np

from ...ops.shape import (broadcast_in_dim_p, concatenate_p, iota_p, reshape_p, rev_p,
                          squeeze_p, transpose_p)
from ...ops.slicing import dynamic_slice_p, dynamic_update_slice_p, pad_p, slice_p
from ...ops.windows import window_patches_add_p, window_patches_p
from .codegen import PARALLEL_THRESHOLD, dtype_name
from .loops import one_element_values, output_buffer
from .lower_util import affine, array_of, copy_loop, index_text, scalar_of, shape_text
from .rules import lowering_rules


def empty_out(ctx, var) -> str:
    """Name ``var``'s output: an array the caller overwrites entirely (allocated once
    per kernel inside loop bodies where the value is private; see `output_buffer`)."""
    name = output_buffer(ctx, var, "v")
    ctx.bind_name(var, name)
    return name


def _element(ctx, atom) -> str:
    """Source text of the only element of a one-element operand (array or scalar)."""
    if ctx.is_scalar(atom):
        return ctx.scalar(atom)
    return f"{ctx.name(atom)}[{index_text(['0'] * len(atom.aval.shape))}]"


def held_as_scalar(ctx, var, text) -> bool:
    """Hold a one-element output as the scalar ``text`` (read now) when every reader
    of it takes scalars (`loops.one_element_values`): no array, no memory traffic."""
    if var.aval.shape != () and var not in one_element_values(ctx):
        return False
    name = ctx.fresh("s")
    ctx.emit(f"{name} = {text}")
    ctx.bind_scalar(var, name)
    return True


# --------------------------------------------------------------------------- shape


def _bid_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    shape, bdims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    ctx.emit(f"# broadcast_in_dim {x.aval.shape} -> {tuple(shape)}")
    in_shape = x.aval.shape
    if in_shape == () or ctx.is_scalar(x):   # (one element: every output element)
        s = scalar_of(ctx, x) if in_shape == () else ctx.scalar(x)
        if int(np.prod(shape, dtype=np.int64)) == 1 and held_as_scalar(ctx, ov, s):
            return
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


def reshape_is_view(ctx, x, ov) -> bool:
    """Whether a reshape may share its operand's buffer (a C-contiguous array, which
    Numba reshapes without copying), instead of copying it.  Only where nothing can
    write either buffer afterwards: at a kernel's top level (inside loop bodies, buffers
    are reused from step to step and carries written in place), with no destination
    named for the value (a loop's carry buffer), and from an operand that no update
    writes in place (`loops.inplace_plan`: only values held in such buffers are)."""
    return (ctx.level == 1 and ov not in ctx.dest and not ctx.is_scalar(x)
            and x not in ctx.update_roots)


def _reshape_like_lower(prim_name):
    def rule(ctx, eqn):
        (x,), (ov,) = eqn.invars, eqn.outvars
        ctx.emit(f"# {prim_name} {x.aval.shape} -> {ov.aval.shape}")
        shape = ov.aval.shape
        size = int(np.prod(shape, dtype=np.int64))
        # A single element: held as a scalar (always when 0-d)
        if size == 1 and held_as_scalar(ctx, ov, _element(ctx, x)):
            return
        if reshape_is_view(ctx, x, ov):
            ctx.emit(f"{ctx.out(ov)} = np.ascontiguousarray({ctx.name(x)})"
                     f".reshape({shape_text(shape)})")
            return
        out = empty_out(ctx, ov)
        if size == 0:
            return
        if ctx.is_scalar(x):   # one element, held as a scalar: no array to read
            ctx.emit(f"{out}[{index_text(['0'] * len(shape))}] = {ctx.scalar(x)}")
            return
        src_dims = [n for n in x.aval.shape if n != 1]
        if src_dims == [n for n in shape if n != 1]:   # only unit axes added or removed
            xn = ctx.name(x)
            with ctx.nest(shape) as idx:
                moving = iter([i for i, n in zip(idx, shape) if n != 1])
                src = [next(moving) if n != 1 else "0" for n in x.aval.shape]
                ctx.emit(f"{out}[{index_text(idx)}] = {xn}[{index_text(src)}]")
            return
        # Elements in C order: output index (i, j, ...) reads flat element i*n + j...
        flat = ctx.fresh("r")
        ctx.emit(f"{flat} = np.ascontiguousarray({ctx.name(x)}).reshape(({size},))")
        with ctx.nest(shape) as idx:
            terms, stride = [], 1
            for i, n in reversed(list(zip(idx, shape))):
                if n != 1:
                    terms.append(i if stride == 1 else f"{i} * {stride}")
                stride *= n
            pos = " + ".join(reversed(terms)) or "0"
            ctx.emit(f"{out}[{index_text(idx)}] = {flat}[{pos}]")
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
    names = [None if ctx.is_scalar(x) else ctx.name(x) for x in eqn.invars]
    out = empty_out(ctx, ov)
    offset = 0
    for x, xn in zip(eqn.invars, names):
        shape = x.aval.shape
        if xn is None:   # one element held as a scalar (`held_as_scalar`)
            ix = ["0"] * len(shape)
            ix[dim] = str(offset)
            ctx.emit(f"{out}[{index_text(ix)}] = {ctx.scalar(x)}")
            offset += 1
            continue

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
    if int(np.prod(ov.aval.shape, dtype=np.int64)) == 1 and \
            held_as_scalar(ctx, ov, f"{xn}[{index_text([str(a) for a in starts])}]"):
        return
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
    if int(np.prod(sizes, dtype=np.int64)) == 1 and \
            held_as_scalar(ctx, ov, f"{xn}[{index_text(st)}]"):
        return
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


# --------------------------------------------------------------------------- windows


def _linear(names, sizes) -> str:
    """The C-order linear index of per-axis window offsets (the patches' window axis)."""
    text = names[0]
    for nm, n in zip(names[1:], sizes[1:]):
        text = f"({text}) * {n} + {nm}"
    return text


def _window_source(o, k, stride, dilation) -> str:
    return f"{affine(o, 0, stride)} + {affine(k, 0, dilation)}"


def _patches_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    window, strides, dil = (eqn.params[k] for k in ("window", "strides", "dilation"))
    nsp = len(window)
    lead = len(x.aval.shape) - nsp
    out_sp = tuple(ov.aval.shape[lead + 1:])
    ctx.emit(f"# window_patches window {window} strides {strides} dilation {dil}")
    xn = array_of(ctx, x)
    out = empty_out(ctx, ov)
    if int(np.prod(ov.aval.shape, dtype=np.int64)) == 0:
        return
    # One loop per window offset (no division to split the patch index).
    with ctx.nest(tuple(x.aval.shape[:lead]) + tuple(window) + out_sp) as idx:
        li, ks, os_ = idx[:lead], idx[lead:lead + nsp], idx[lead + nsp:]
        src = li + [_window_source(o, k, s, d) for o, k, s, d in zip(os_, ks, strides, dil)]
        dst = li + [_linear(ks, window)] + os_
        ctx.emit(f"{out}[{index_text(dst)}] = {xn}[{index_text(src)}]")


def _patches_add_lower(ctx, eqn):
    (p,), (ov,) = eqn.invars, eqn.outvars
    window, strides, dil = (eqn.params[k] for k in ("window", "strides", "dilation"))
    nsp = len(window)
    lead = len(p.aval.shape) - nsp - 1
    out_sp = tuple(p.aval.shape[lead + 1:])
    ctx.emit(f"# window_patches_add window {window} strides {strides} dilation {dil}")
    pn = array_of(ctx, p)
    out = ctx.out(ov)
    ctx.emit(f"{out} = np.zeros({shape_text(ov.aval.shape)}, "
             f"{dtype_name(ov.aval.dtype)})")
    if int(np.prod(p.aval.shape, dtype=np.int64)) == 0:
        return
    # Windows overlap, so the adds of one leading index run in order; distinct leading
    # indices write distinct elements and may run in parallel.
    opened = 0
    li = []
    for j, n in enumerate(p.aval.shape[:lead]):
        name = ctx.fresh("i")
        parallel = (j == 0 and ctx.level == 1 and n > 1
                    and int(np.prod(p.aval.shape, dtype=np.int64)) >= PARALLEL_THRESHOLD)
        if parallel:
            ctx.uses_prange = True
        ctx.emit(f"for {name} in {'prange' if parallel else 'range'}({n}):")
        ctx.level += 1
        opened += 1
        li.append(name)
    ks, os_ = [], []
    for n, names in ((window, ks), (out_sp, os_)):
        for m in n:
            name = ctx.fresh("i")
            ctx.emit(f"for {name} in range({m}):")
            ctx.level += 1
            opened += 1
            names.append(name)
    dst = li + [_window_source(o, k, s, d) for o, k, s, d in zip(os_, ks, strides, dil)]
    src = li + [_linear(ks, window)] + os_
    ctx.emit(f"{out}[{index_text(dst)}] += {pn}[{index_text(src)}]")
    ctx.level -= opened


lowering_rules[window_patches_p] = _patches_lower
lowering_rules[window_patches_add_p] = _patches_add_lower
