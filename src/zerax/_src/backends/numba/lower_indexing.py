"""The Numba lowering of ``gather`` and the scatters (``ops/gather.py``,
``ops/index_update.py``).

A gather (and a scatter) is a loop nest over the indexed shape (the gather's result
shape).  The indexer is static, so each operand axis's position is written out:
``start + i * step`` for a slice, a constant for a static int, and for an index array its
element (broadcast against the others) read as int64, wrapped when negative and then
clamped (``clip``) or checked (``fill``/``drop``).  An index array's value is computed
once, in the innermost loop it depends on.
"""

from __future__ import annotations

import numpy as np

from ...ops.gather import _gather_shape, default_fill_value, gather_p
from ...ops.index_update import SCATTERS
from .codegen import PARALLEL_THRESHOLD, dtype_name, literal_text
from .lower_reduce import combine
from .loops import output_buffer
from .lower_util import affine, array_of, index_text, scalar_of, shape_text
from .rules import lowering_rules


# --------------------------------------------------------------------------- gather


def _static_int(v, n):
    """A static int index: (clamped position, whether it was in bounds after wrapping)."""
    w = v + n if v < 0 else v
    return min(max(w, 0), max(n - 1, 0)), 0 <= w < n


def _index_nest(ctx, x_shape, indexer, idx_atoms, *, checked, parallel, body):
    """Emit loops over the indexed shape of ``x_shape`` by ``indexer``, then call
    ``body(positions, oks, out_index)``: ``positions`` the source text of the operand's
    index per axis, ``oks`` names of booleans that are all true where every index is in
    bounds (only with ``checked``; clamped positions otherwise), ``out_index`` the loop
    variables (one per axis of the indexed shape)."""
    shape, bpos, bshape = _gather_shape(x_shape, indexer, [a.aval.shape for a in idx_atoms])
    nb = len(bshape)
    names = [ctx.fresh("i") for _ in shape]
    positions, pending = [], {}  # pending: loop depth -> [(axis, atom, n)]
    nonadv, axis = 0, 0
    for e in indexer:
        if e is None:
            nonadv += 1
            continue
        if e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] == "s":
            d = nonadv if nonadv < bpos else nonadv + nb
            positions.append(affine(names[d], e[1], e[3]))
            nonadv += 1
        elif e[0] == "i":
            positions.append(str(_static_int(e[1], n)[0]))
        else:
            atom = idx_atoms[e[1]]
            s = atom.aval.shape
            off = bpos + nb - len(s)
            deps = [off + k for k, m in enumerate(s) if m != 1]
            pending.setdefault(max(deps) + 1 if deps else 0, []).append((axis, atom, n))
            positions.append(None)
        axis += 1
    oks = []

    def compute(depth):
        for ax, atom, n in pending.get(depth, ()):
            s = atom.aval.shape
            off = bpos + nb - len(s)
            if s == ():
                read = ctx.scalar(atom)
            else:
                ix = [names[off + k] if m != 1 else "0" for k, m in enumerate(s)]
                read = f"{ctx.name(atom)}[{index_text(ix)}]"
            t = ctx.fresh("t")
            ctx.emit(f"{t} = np.int64({read})")
            ctx.emit(f"if {t} < 0:")
            ctx.emit(f"    {t} += {n}")
            if checked:
                ok = ctx.fresh("ok")
                ctx.emit(f"{ok} = {t} >= 0 and {t} < {n}")
                oks.append(ok)
            else:
                ctx.emit(f"{t} = min(max({t}, 0), {n - 1})")
            positions[ax] = t

    compute(0)
    total = int(np.prod(shape, dtype=np.int64))
    outer = ctx.level
    for d, n in enumerate(shape):
        rng = "range"
        if parallel and d == 0 and total >= PARALLEL_THRESHOLD and ctx.level == 1:
            rng, ctx.uses_prange = "prange", True
        ctx.emit(f"for {names[d]} in {rng}({n}):")
        ctx.level += 1
        compute(d + 1)
    body(positions, oks, names)
    ctx.level = outer


def _index_status(x_shape, indexer, checked):
    """Static facts about an indexing: whether an index addresses an axis of size 0, and
    (with ``checked``) whether a static int index is out of bounds (so every index is)."""
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


def _gather_lower_numba(ctx, eqn):
    x, *idx = eqn.invars
    (ov,) = eqn.outvars
    indexer, mode = eqn.params["indexer"], eqn.params["mode"]
    shape, dtype = ov.aval.shape, np.dtype(ov.aval.dtype)
    dt = dtype_name(dtype)
    ctx.emit(f"# gather {x.aval.str_short()} -> {ov.aval.str_short()} (mode {mode})")
    fill = None
    if mode == "fill":
        fv = eqn.params["fill_value"]
        fv = default_fill_value(dtype) if fv is None else fv
        with np.errstate(all="ignore"):
            fill = literal_text(np.asarray(fv).astype(dtype), dtype)
    empty, static_oob = _index_status(x.aval.shape, indexer, mode == "fill")
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0 or empty or static_oob:  # nothing, or nothing but fill values / zeros
        const = fill if (mode == "fill" and size) else literal_text(np.zeros((), dtype))
        if shape == ():
            ctx.bind_scalar(ov, const)
        else:
            out = ctx.out(ov)
            ctx.emit(f"{out} = np.full({shape_text(shape)}, {const}, {dt})")
        return
    xn = array_of(ctx, x)
    if shape == ():  # one element: held as a scalar
        target = ctx.fresh("s")
    else:   # every element is written: a buffer reused by loop steps (output_buffer)
        out = output_buffer(ctx, ov, "v")
        ctx.bind_name(ov, out)

    def body(positions, oks, names):
        dst = target if shape == () else f"{out}[{index_text(names)}]"
        read = f"{xn}[{index_text(positions)}]"
        if oks:
            ctx.emit(f"if {' and '.join(oks)}:")
            ctx.emit(f"    {dst} = {read}")
            ctx.emit("else:")
            ctx.emit(f"    {dst} = {fill}")
        else:
            ctx.emit(f"{dst} = {read}")

    _index_nest(ctx, x.aval.shape, indexer, idx, checked=mode == "fill", parallel=True,
                body=body)
    if shape == ():
        ctx.bind_scalar(ov, target)


lowering_rules[gather_p] = _gather_lower_numba


# --------------------------------------------------------------------------- scatters


def _complex_pick(kind, a, b) -> str:
    """``np.maximum``/``np.minimum`` of complex scalars: lexicographic, NaN propagates."""
    cmp, eq_cmp = (">", ">=") if kind == "max" else ("<", "<=")
    return (f"({a} if ({a}.real != {a}.real or {a}.imag != {a}.imag or "
            f"({a}.real {cmp} {b}.real and {a}.imag == {a}.imag and {b}.imag == {b}.imag) or "
            f"({a}.real == {b}.real and {a}.imag {eq_cmp} {b}.imag)) else {b})")


def _scatter_lower_numba(op):
    """``out = x.copy()``, then one serial loop over the updates in C order (repeated
    indices accumulate in that order, and for ``set`` the last one wins, as the impl)."""
    kind = {"add": "sum", "mul": "prod", "min": "min", "max": "max"}.get(op)

    def rule(ctx, eqn):
        x, u, *idx = eqn.invars
        (ov,) = eqn.outvars
        indexer, mode = eqn.params["indexer"], eqn.params["mode"]
        dtype = np.dtype(ov.aval.dtype)
        ctx.emit(f"# {eqn.primitive.name} of {u.aval.str_short()} into "
                 f"{x.aval.str_short()} (mode {mode})")
        xn = array_of(ctx, x)
        out = ctx.out(ov)
        ctx.emit(f"{out} = np.copy({xn})")
        checked = mode == "drop"
        _, static_oob = _index_status(x.aval.shape, indexer, checked)
        if (int(np.prod(x.aval.shape, dtype=np.int64)) == 0 or
                int(np.prod(u.aval.shape, dtype=np.int64)) == 0 or static_oob):
            return
        uval = scalar_of(ctx, u) if u.aval.shape == () else None
        un = None if uval is not None else array_of(ctx, u)

        def body(positions, oks, names):
            dst = f"{out}[{index_text(positions)}]"
            val = uval if uval is not None else f"{un}[{index_text(names)}]"
            if op == "set":
                new = val
            elif dtype.kind == "c" and kind in ("min", "max"):
                new = _complex_pick(kind, dst, val)
            else:
                new = combine(kind, dtype, dst, val)
            if oks:
                ctx.emit(f"if {' and '.join(oks)}:")
                ctx.emit(f"    {dst} = {new}")
            else:
                ctx.emit(f"{dst} = {new}")

        _index_nest(ctx, x.aval.shape, indexer, idx, checked=checked, parallel=False,
                    body=body)

    return rule


for _op, _p in SCATTERS.items():
    lowering_rules[_p] = _scatter_lower_numba(_op)
