"""Kernel-IR rules of the shape and slicing primitives (``ops/shape.py``,
``ops/slicing.py``): each result is a loop nest over its shape reading the operand at
the mapped index; a reshape or squeeze of a buffer is a view (no copy)."""

from __future__ import annotations

import numpy as np

from .. import kernel_ir as K
from ...ops.shape import (broadcast_in_dim_p, concatenate_p, iota_p, reshape_p, rev_p,
                          squeeze_p, transpose_p)
from ...ops.slicing import dynamic_slice_p, dynamic_update_slice_p, pad_p, slice_p
from ...ops.windows import window_patches_add_p, window_patches_p
from .context import Ctx

rules: dict = {}


def _copy_nest(ctx: Ctx, out, shape, read):
    """``out[idx] = read(idx)`` over ``shape``."""
    with ctx.nest(shape) as idx:
        ctx.emit(K.Store(out, idx, read(idx)))


def _operand(ctx, x):
    """A reader of operand ``x`` at an index (a 0-d value read as a scalar)."""
    if ctx.is_scalar(x):
        value = ctx.scalar(x)
        return lambda idx: value
    buf = ctx.buffer(x)
    return lambda idx: K.Load(buf, idx)


def _broadcast(ctx, eqn):
    (x,), (out,) = eqn.invars, eqn.outvars
    shape, dims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    read = _operand(ctx, x)
    if out.aval.shape == ():
        ctx.bind_scalar(out, read(()))
        return
    xs = tuple(x.aval.shape)
    _copy_nest(ctx, ctx.new_buffer(out), shape, lambda idx: read(tuple(
        K.Const(0, K.I64) if xs[j] == 1 and shape[d] != 1 else idx[d]
        for j, d in enumerate(dims))))


def _reshape(ctx, eqn):
    (x,), (out,) = eqn.invars, eqn.outvars
    shape = tuple(out.aval.shape)
    if ctx.is_scalar(x) or shape == ():
        read = _operand(ctx, x)
        if shape == ():
            ctx.bind_scalar(out, ctx.scalar(x) if ctx.is_scalar(x)
                            else read((K.Const(0, K.I64),) * len(x.aval.shape)))
            return
        _copy_nest(ctx, ctx.new_buffer(out), shape, lambda idx: read(()))
        return
    src = ctx.buffer(x).reshaped(shape)
    if out in ctx.out_slots:      # an output of the program: its own buffer
        _copy_nest(ctx, ctx.new_buffer(out), shape, lambda idx: K.Load(src, idx))
    else:
        ctx.bind_buffer(out, src)


def _transpose(ctx, eqn):
    (x,), (out,) = eqn.invars, eqn.outvars
    perm = eqn.params["permutation"]
    read = _operand(ctx, x)
    inverse = np.argsort(perm)
    _copy_nest(ctx, ctx.new_buffer(out), out.aval.shape,
               lambda idx: read(tuple(idx[int(inverse[d])] for d in range(len(perm)))))


def _slice(ctx, eqn):
    (x,), (out,) = eqn.invars, eqn.outvars
    starts = eqn.params["start_indices"]
    strides = eqn.params["strides"] or (1,) * len(starts)
    read = _operand(ctx, x)
    mapped = lambda idx: read(tuple(K.affine([(i, st)], s0)      # noqa: E731
                                    for i, s0, st in zip(idx, starts, strides)))
    if out.aval.shape == ():
        ctx.bind_scalar(out, mapped(()))
        return
    _copy_nest(ctx, ctx.new_buffer(out), out.aval.shape, mapped)


def _rev(ctx, eqn):
    (x,), (out,) = eqn.invars, eqn.outvars
    dims = set(eqn.params["dimensions"])
    shape = x.aval.shape
    read = _operand(ctx, x)
    _copy_nest(ctx, ctx.new_buffer(out), shape, lambda idx: read(tuple(
        K.affine([(i, -1)], shape[d] - 1) if d in dims else i for d, i in enumerate(idx))))


def _iota(ctx, eqn):
    (out,) = eqn.outvars
    dtype, shape, dim = eqn.params["dtype"], eqn.params["shape"], eqn.params["dimension"]
    if tuple(shape) == ():
        ctx.bind_scalar(out, K.Const(0, dtype))
        return
    _copy_nest(ctx, ctx.new_buffer(out), shape, lambda idx: K.cast(idx[dim], dtype))


def _concatenate(ctx, eqn):
    (out,) = eqn.outvars
    axis = eqn.params["dimension"]
    buf = ctx.new_buffer(out)
    offset = 0
    for x in eqn.invars:
        n = x.aval.shape[axis]
        if n:
            read = _operand(ctx, x)
            with ctx.nest(x.aval.shape) as idx:
                dst = tuple(K.affine([(i, 1)], offset) if d == axis else i
                            for d, i in enumerate(idx))
                ctx.emit(K.Store(buf, dst, read(idx)))
        offset += n


def _pad(ctx, eqn):
    """The result filled with the padding value, then the operand's elements stored at
    ``lo + i * (interior + 1)`` where that lands inside (negative padding crops)."""
    x, pv = eqn.invars
    (out,) = eqn.outvars
    config = eqn.params["padding_config"]
    value = ctx.scalar(pv)
    buf = ctx.new_buffer(out)
    _copy_nest(ctx, buf, out.aval.shape, lambda idx: value)
    read = _operand(ctx, x)
    shape = x.aval.shape
    # the operand's index range that lands inside the result, per axis
    ranges = []
    for n, m, (lo, _, interior) in zip(shape, out.aval.shape, config):
        step = interior + 1
        first = max(0, -(-(-lo) // step)) if lo < 0 else 0      # smallest i: lo + i*step >= 0
        last = min(n, (m - 1 - lo) // step + 1) if m > 0 else 0  # i with lo + i*step < m
        ranges.append((first, max(first, last), lo, step))
    if any(a >= b for a, b, _, _ in ranges):
        return
    with _ranges_nest(ctx, ranges) as idx:
        dst = tuple(K.affine([(i, step)], lo) for i, (_, _, lo, step) in zip(idx, ranges))
        ctx.emit(K.Store(buf, dst, read(idx)))


class _ranges_nest:
    """Serial loops over the index ranges [first, last) of each axis."""

    def __init__(self, ctx, ranges):
        self.ctx, self.ranges = ctx, ranges

    def __enter__(self):
        self.cms = []
        idx = []
        for first, last, _, _ in self.ranges:
            cm = self.ctx.loop(last, start=first)
            idx.append(cm.__enter__())
            self.cms.append(cm)
        return tuple(idx)

    def __exit__(self, *exc):
        for cm in reversed(self.cms):
            cm.__exit__(*exc)


def _clamped_starts(ctx, starts, shape, sizes):
    """JAX's dynamic start indices: each clamped into [0, n - k], as int64."""
    out = []
    for s, n, k in zip(starts, shape, sizes):
        v = K.cast(ctx.scalar(s), K.I64)
        out.append(K.op("min", K.op("max", v, K.Const(0, K.I64)), K.Const(n - k, K.I64)))
    return out


def _dynamic_slice(ctx, eqn):
    x, *starts = eqn.invars
    (out,) = eqn.outvars
    sizes = eqn.params["slice_sizes"]
    st = [_let(ctx, e) for e in _clamped_starts(ctx, starts, x.aval.shape, sizes)]
    read = _operand(ctx, x)
    mapped = lambda idx: read(tuple(K.op("add", i, s) for i, s in zip(idx, st)))  # noqa: E731
    if out.aval.shape == ():
        ctx.bind_scalar(out, mapped(()))
        return
    _copy_nest(ctx, ctx.new_buffer(out), out.aval.shape, mapped)


def _dynamic_update_slice(ctx, eqn):
    x, update, *starts = eqn.invars
    (out,) = eqn.outvars
    st = [_let(ctx, e) for e in _clamped_starts(ctx, starts, x.aval.shape, update.aval.shape)]
    buf = ctx.take_buffer(x, out)              # in place when nothing reads x later
    if buf is None:
        buf = ctx.new_buffer(out)
        _copy_nest(ctx, buf, out.aval.shape, _operand(ctx, x))
    upd = _operand(ctx, update)
    with ctx.nest(update.aval.shape, parallel=False) as idx:
        ctx.emit(K.Store(buf, tuple(K.op("add", i, s) for i, s in zip(idx, st)), upd(idx)))


def _let(ctx, expr):
    v = ctx.names.var("k", expr.dtype)
    ctx.emit(K.Let(v, expr))
    return v


rules.update({
    broadcast_in_dim_p: _broadcast, reshape_p: _reshape, squeeze_p: _reshape,
    transpose_p: _transpose, slice_p: _slice, rev_p: _rev, iota_p: _iota,
    concatenate_p: _concatenate, pad_p: _pad, dynamic_slice_p: _dynamic_slice,
    dynamic_update_slice_p: _dynamic_update_slice,
})


# --------------------------------------------------------------------------- windows


def _window_source(o, k, stride, dilation):
    """The operand position of output position ``o`` at window offset ``k``."""
    return K.affine([(o, stride), (k, dilation)])


def _window_linear(ks, window):
    """The patch index of window offsets ``ks`` (C order)."""
    terms, stride = [], 1
    for k, n in zip(reversed(ks), reversed(window)):
        terms.append((k, stride))
        stride *= n
    return K.affine(list(reversed(terms)))


def _patches(ctx, eqn):
    """im2col: one loop per window offset (no division to split the patch index)."""
    (x,), (out,) = eqn.invars, eqn.outvars
    window, strides, dil = (eqn.params[k] for k in ("window", "strides", "dilation"))
    nsp = len(window)
    lead = len(x.aval.shape) - nsp
    out_sp = tuple(out.aval.shape[lead + 1:])
    buf = ctx.new_buffer(out)
    if int(np.prod(out.aval.shape, dtype=np.int64)) == 0:
        return
    read = _operand(ctx, x)
    with ctx.nest(tuple(x.aval.shape[:lead]) + tuple(window) + out_sp) as idx:
        li, ks, os_ = idx[:lead], idx[lead:lead + nsp], idx[lead + nsp:]
        src = tuple(li) + tuple(_window_source(o, k, s, d)
                                for o, k, s, d in zip(os_, ks, strides, dil))
        dst = tuple(li) + (_window_linear(ks, window),) + tuple(os_)
        ctx.emit(K.Store(buf, dst, read(src)))


def _patches_add(ctx, eqn):
    """col2im: zeros, then each patch element added where it was read from.  Windows
    overlap, so the adds of one leading index run in order; distinct leading indices
    write distinct elements and may run in parallel."""
    (p,), (out,) = eqn.invars, eqn.outvars
    window, strides, dil = (eqn.params[k] for k in ("window", "strides", "dilation"))
    nsp = len(window)
    lead = len(p.aval.shape) - nsp - 1
    out_sp = tuple(p.aval.shape[lead + 1:])
    dtype = np.dtype(out.aval.dtype)
    buf = ctx.new_buffer(out)
    with ctx.nest(out.aval.shape, parallel=False) as idx:
        ctx.emit(K.Store(buf, idx, K.Const(0, dtype)))
    if int(np.prod(p.aval.shape, dtype=np.int64)) == 0:
        return
    read = _operand(ctx, p)
    large = ctx.large(int(np.prod(p.aval.shape, dtype=np.int64)))
    with ctx.nest(tuple(p.aval.shape[:lead]), parallel=large) as li, \
            ctx.nest(tuple(window) + out_sp, parallel=False) as rest:
        ks, os_ = rest[:nsp], rest[nsp:]
        dst = tuple(li) + tuple(_window_source(o, k, s, d)
                                for o, k, s, d in zip(os_, ks, strides, dil))
        src = tuple(li) + (_window_linear(ks, window),) + tuple(os_)
        ctx.emit(K.Store(buf, dst, K.op("add", K.Load(buf, dst), read(src))))


rules.update({window_patches_p: _patches, window_patches_add_p: _patches_add})
