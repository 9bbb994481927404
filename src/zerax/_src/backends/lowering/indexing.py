"""Kernel-IR rules of ``gather`` and the scatters (``ops/gather.py``,
``ops/index_update.py``).

A gather (and a scatter) is a loop nest over the indexed shape (the gather's result
shape).  The indexer is static, so each operand axis's position is known in form:
``start + i * step`` for a slice, a constant for a static int, and for an index array
its element (broadcast against the others) read as int64, wrapped when negative, then
clamped (``clip``) or checked (``fill``/``drop``).  An index array's value is read
once, in the innermost loop it depends on.  A checked gather reads a clamped position
and selects the fill value where the index was out of bounds (no branch); a scatter
copies its operand (or takes its buffer, when nothing reads the operand later: an
update in place) and then updates it in one serial loop in C order (repeated indices
accumulate in that order; for ``set`` the last one wins), as the implementation does.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import kernel_ir as K
from ...ops.gather import _gather_shape, default_fill_value, gather_p
from ...ops.index_update import SCATTERS
from .context import Ctx
from .reduce import _combine
from .shape import _operand

rules: dict = {}


def _static_int(v, n):
    """A static int index: (clamped position, whether it was in bounds after wrapping)."""
    w = v + n if v < 0 else v
    return min(max(w, 0), max(n - 1, 0)), 0 <= w < n


def _index_status(x_shape, indexer, checked):
    """(an index addresses an axis of size 0, a static int index is out of bounds)."""
    empty, static_oob, axis = False, False, 0
    for e in indexer:
        if e is None or e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] in ("i", "a"):
            empty = empty or n == 0
        if e[0] == "i" and n and checked and not _static_int(e[1], n)[1]:
            static_oob = True
        axis += 1
    return empty, static_oob


@contextlib.contextmanager
def _index_nest(ctx: Ctx, x_shape, indexer, idx_atoms, *, checked, parallel):
    """Loops over the indexed shape of ``x_shape`` by ``indexer``; yields (positions,
    ok, out_index): the operand's index per axis (clamped into bounds), a bool
    expression that is true where every index was in bounds (None unless ``checked``
    and some index can be out of bounds), and the loop indices."""
    shape, bpos, bshape = _gather_shape(x_shape, indexer, [a.aval.shape for a in idx_atoms])
    nb = len(bshape)
    positions, pending = [], {}
    nonadv, axis = 0, 0
    slices = []          # (axis, loop dim, start, step)
    for e in indexer:
        if e is None:
            nonadv += 1
            continue
        if e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] == "s":
            slices.append((axis, nonadv if nonadv < bpos else nonadv + nb, e[1], e[3]))
            positions.append(None)
            nonadv += 1
        elif e[0] == "i":
            positions.append(K.Const(_static_int(e[1], n)[0], K.I64))
        else:
            atom = idx_atoms[e[1]]
            s = atom.aval.shape
            off = bpos + nb - len(s)
            deps = [off + k for k, m in enumerate(s) if m != 1]
            pending.setdefault(max(deps) + 1 if deps else 0, []).append((axis, atom, n))
            positions.append(None)
        axis += 1
    oks = []
    idx: list = []
    readers = {id(a): _operand(ctx, a) for a in idx_atoms}

    def compute(depth):
        for ax, atom, n in pending.get(depth, ()):
            s = atom.aval.shape
            off = bpos + nb - len(s)
            ix = tuple(idx[off + k] if m != 1 else K.Const(0, K.I64) for k, m in enumerate(s))
            t = _let(ctx, K.cast(readers[id(atom)](ix), K.I64))
            zero = K.Const(0, K.I64)
            t = _let(ctx, K.select(K.op("lt", t, zero), K.op("add", t, K.Const(n, K.I64)), t))
            if checked:
                oks.append(K.op("and", K.op("ge", t, zero), K.op("lt", t, K.Const(n, K.I64))))
            positions[ax] = _let(ctx, K.op("min", K.op("max", t, zero),
                                          K.Const(max(n - 1, 0), K.I64)))

    total = int(np.prod(shape, dtype=np.int64))
    with contextlib.ExitStack() as stack:
        compute(0)
        for d, n in enumerate(shape):
            idx.append(stack.enter_context(ctx.loop(
                n, parallel=parallel and d == 0 and ctx.large(total))))
            compute(d + 1)
        for ax, d, start, step in slices:
            positions[ax] = K.affine([(idx[d], step)], start)
        ok = None
        for c in oks:
            ok = c if ok is None else K.op("and", ok, c)
        yield positions, ok, tuple(idx)


def _let(ctx, expr):
    if type(expr) in (K.Var, K.Const):
        return expr
    v = ctx.names.var("g", expr.dtype)
    ctx.emit(K.Let(v, expr))
    return v


def _gather(ctx: Ctx, eqn):
    x, *idx = eqn.invars
    (out,) = eqn.outvars
    indexer, mode = eqn.params["indexer"], eqn.params["mode"]
    shape, dtype = tuple(out.aval.shape), np.dtype(out.aval.dtype)
    fill = None
    if mode == "fill":
        fv = eqn.params["fill_value"]
        fv = default_fill_value(dtype) if fv is None else fv
        with np.errstate(all="ignore"):
            fill = K.Const(np.asarray(fv).astype(dtype).item(), dtype)
    empty, static_oob = _index_status(x.aval.shape, indexer, mode == "fill")
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0 or empty or static_oob:      # nothing, or only fill values / zeros
        const = fill if (mode == "fill" and size) else K.Const(0, dtype)
        if shape == ():
            ctx.bind_scalar(out, const)
        else:
            buf = ctx.new_buffer(out)
            with ctx.nest(shape) as i:
                ctx.emit(K.Store(buf, i, const))
        return
    read = _operand(ctx, x)
    if shape == ():
        with _index_nest(ctx, x.aval.shape, indexer, idx, checked=mode == "fill",
                         parallel=False) as (pos, ok, _):
            value = read(tuple(pos))
            ctx.bind_scalar(out, value if ok is None else K.select(ok, value, fill))
        return
    buf = ctx.new_buffer(out)
    with _index_nest(ctx, x.aval.shape, indexer, idx, checked=mode == "fill",
                     parallel=True) as (pos, ok, i):
        value = read(tuple(pos))
        ctx.emit(K.Store(buf, i, value if ok is None else K.select(ok, value, fill)))


def _scatter(op):
    def rule(ctx: Ctx, eqn):
        x, u, *idx = eqn.invars
        (out,) = eqn.outvars
        indexer, mode = eqn.params["indexer"], eqn.params["mode"]
        dtype = np.dtype(out.aval.dtype)
        buf = ctx.take_buffer(x, out)          # in place when nothing reads x later
        if buf is None:
            buf = ctx.new_buffer(out)
            src = _operand(ctx, x)
            with ctx.nest(x.aval.shape) as i:
                ctx.emit(K.Store(buf, i, src(i)))
        checked = mode == "drop"
        _, static_oob = _index_status(x.aval.shape, indexer, checked)
        if (int(np.prod(x.aval.shape, dtype=np.int64)) == 0 or
                int(np.prod(u.aval.shape, dtype=np.int64)) == 0 or static_oob):
            return
        upd = _operand(ctx, u)
        scalar_update = u.aval.shape == ()
        with _index_nest(ctx, x.aval.shape, indexer, idx, checked=checked,
                         parallel=False) as (pos, ok, i):
            val = upd(() if scalar_update else i)
            new = val if op == "set" else _combine(
                {"add": "add", "mul": "mul", "min": "min", "max": "max"}[op], dtype,
                K.Load(buf, tuple(pos)), val)
            store = K.Store(buf, tuple(pos), new)
            ctx.emit(store if ok is None else K.If(ok, [store]))
    return rule


rules[gather_p] = _gather
for _op, _p in SCATTERS.items():
    rules[_p] = _scatter(_op)
