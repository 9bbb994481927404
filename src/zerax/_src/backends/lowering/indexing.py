"""Kernel-IR rules of ``gather`` and the scatters (``ops/gather.py``,
``ops/index_update.py``): ``x[indexer]`` and ``x.at[indexer].<op>(u)``.

Both are a loop nest over the indexed shape (the gather's result, the scatter's
updates).  The indexer is static, so each operand axis's position is an expression:
``start + i * step`` for a slice, a constant for a static int, and for an index array
its element (broadcast against the others) read as int64 and wrapped when negative,
then clamped (``clip``) or checked (``fill``, ``drop``), computed once in the innermost
loop it depends on.  A scatter copies its operand and then combines the updates into
it in C order, so repeated indices accumulate in the order of NumPy's ``ufunc.at`` and
the last one wins for ``set``; when nothing reads the operand afterwards it writes into
the operand's buffer instead (`inplace.py`): ``ys.at[i].set(row)`` on a loop carry costs
the row.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from .. import kernel_ir as K
from ...ops.gather import _gather_shape, default_fill_value, gather_p
from ...ops.index_update import SCATTERS
from .calls import copy_into, value_of
from .context import Ctx

rules: dict = {}


def _static_int(v, n):
    """A static int index: (clamped position, whether it was in bounds after wrapping)."""
    w = v + n if v < 0 else v
    return min(max(w, 0), max(n - 1, 0)), 0 <= w < n


def _status(x_shape, indexer, checked):
    """(an index addresses an axis of size 0, a checked static index is out of bounds:
    so every index is)."""
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
    """Loops over the indexed shape; yields (the operand's position per axis, the
    condition that every index is in bounds (None when unchecked: clamped), the loop
    indices).  Statements emitted inside go to the innermost loop."""
    shape, bpos, bshape = _gather_shape(x_shape, indexer, [a.aval.shape for a in idx_atoms])
    nb = len(bshape)
    loops = [None] * len(shape)
    positions, pending = [], {}      # pending: loop depth -> [(axis, atom, n)]
    nonadv, axis = 0, 0
    for e in indexer:
        if e is None:
            nonadv += 1
            continue
        if e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] == "s":
            positions.append(("slice", nonadv if nonadv < bpos else nonadv + nb, e[1], e[3]))
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
    zero = K.Const(0, K.I64)

    def compute(depth):
        for ax, atom, n in pending.get(depth, ()):
            s = atom.aval.shape
            off = bpos + nb - len(s)
            if ctx.is_scalar(atom):
                read = ctx.scalar(atom)
            else:
                read = K.Load(ctx.buffer(atom), [loops[off + k] if m != 1 else zero
                                                 for k, m in enumerate(s)])
            t = _let(ctx, K.cast(read, K.I64))
            t = _let(ctx, K.select(K.op("lt", t, zero), K.op("add", t, K.Const(n, K.I64)), t))
            if checked:
                oks.append(_let(ctx, K.op("and", K.op("ge", t, zero),
                                          K.op("lt", t, K.Const(n, K.I64)))))
            # (clamped also when checked: the element read is in bounds either way)
            positions[ax] = _let(ctx, K.op("min", K.op("max", t, zero),
                                           K.Const(max(n - 1, 0), K.I64)))

    compute(0)
    big = parallel and math.prod(shape) >= 100_000
    with contextlib.ExitStack() as stack:
        for d, n in enumerate(shape):
            loops[d] = stack.enter_context(ctx.loop(n, parallel=big and d == 0))
            compute(d + 1)
        pos = [K.affine([(loops[p[1]], p[3])], p[2]) if type(p) is tuple else p
               for p in positions]
        cond = None
        for ok in oks:
            cond = ok if cond is None else K.op("and", cond, ok)
        yield pos, cond, loops


def _let(ctx, expr):
    if type(expr) in (K.Var, K.Const):
        return expr
    v = ctx.names.var("k", expr.dtype)
    ctx.emit(K.Let(v, expr))
    return v


def _gather(ctx: Ctx, eqn):
    x, *idx = eqn.invars
    (ov,) = eqn.outvars
    indexer, mode = eqn.params["indexer"], eqn.params["mode"]
    shape, dtype = tuple(ov.aval.shape), np.dtype(ov.aval.dtype)
    fill = None
    if mode == "fill":
        fv = eqn.params["fill_value"]
        fv = default_fill_value(dtype) if fv is None else fv
        with np.errstate(all="ignore"):
            fill = K.Const(np.asarray(fv).astype(dtype).item(), dtype)
    empty, static_oob = _status(x.aval.shape, indexer, mode == "fill")
    if math.prod(shape) == 0 or empty or static_oob:   # nothing but fill values / zeros
        const = fill if (fill is not None and math.prod(shape)) else K.Const(0, dtype)
        if shape == ():
            ctx.bind_scalar(ov, const)
        else:
            copy_into(ctx, ctx.new_buffer(ov), const)
        return
    src = ctx.buffer(x)
    out = None if shape == () else ctx.new_buffer(ov)
    with _index_nest(ctx, x.aval.shape, indexer, idx, checked=mode == "fill",
                     parallel=True) as (pos, ok, loops):
        value = K.Load(src, pos)
        if ok is not None:
            value = K.select(ok, value, fill)
        if out is None:                  # one element (no loops): a scalar
            ctx.bind_scalar(ov, value)
        else:
            ctx.emit(K.Store(out, loops, value))


rules[gather_p] = _gather


def _scatter(op):
    def rule(ctx: Ctx, eqn):
        x, u, *idx = eqn.invars
        (ov,) = eqn.outvars
        indexer, mode = eqn.params["indexer"], eqn.params["mode"]
        if ctx.overwrites(eqn) and not ctx.is_scalar(x):   # nothing reads x's old value
            out = ctx.buffer(x)
            ctx.bind_buffer(ov, out)
        else:
            out = ctx.new_buffer(ov)
            copy_into(ctx, out, value_of(ctx, x))
        checked = mode == "drop"
        _, static_oob = _status(x.aval.shape, indexer, checked)
        if math.prod(x.aval.shape) == 0 or math.prod(u.aval.shape) == 0 or static_oob:
            return
        if ctx.is_scalar(u):
            uval = ctx.scalar(u)
            read = lambda loops: uval          # noqa: E731
        else:
            ub = ctx.buffer(u)
            read = lambda loops: K.Load(ub, loops)   # noqa: E731
        with _index_nest(ctx, x.aval.shape, indexer, idx, checked=checked,
                         parallel=False) as (pos, ok, loops):
            new = read(loops) if op == "set" else K.op(op, K.Load(out, pos), read(loops))
            store = K.Store(out, pos, new)
            ctx.emit(store if ok is None else K.If(ok, [store]))
    return rule


for _op, _p in SCATTERS.items():
    rules[_p] = _scatter(_op)
