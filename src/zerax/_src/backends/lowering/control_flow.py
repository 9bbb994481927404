"""Kernel-IR rules of the control-flow primitives (``ops/scan.py``, ``ops/while_loop.py``,
``ops/cond.py``): their sub-programs are lowered into the enclosing kernel.

- ``scan``: a serial `For` over the steps; the body's statements inside it, each ``x``
  read as a view of its row of the stacked input, each ``y`` computed into (or copied
  to) its row of the stacked output;
- ``while``: a `While` whose ``before`` block is the predicate's program;
- ``cond``: an `If` chain on the clamped index; each branch computes the results into
  the same buffers (scalars: `Declare`d before, assigned in each branch).

Loop carries (`Carries`): a 0-d carry is a `Declare`d scalar, assigned at the end of
each step from temporaries (so a body that permutes its carries stays right, and a
loop of scalars keeps them in registers).  An array carry the body updates in place
(``c.at[i].set(v)``, or passes through unchanged: `inplace.plan`) keeps one buffer: the
initial value's own when nothing else reads it (taken), else a copy made once.  The
other array carries of one shape and dtype share a pool of buffers, one per carry plus
one per value a step computes; the pool's slots are chosen by int64 variables, so a
step computes its new values into free slots and then only the slot variables move: no
copies, whatever permutation of the carries the body returns (a leapfrog's
``(u_next, u)``, a double-buffered state).  Every loop is serial; parallel loops stay
at the top level of the kernel.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel_ir as K
from ...ir.ir import Literal, Var
from ...ops.cond import cond_p
from ...ops.scan import scan_p
from ...ops.while_loop import bwd_program, while_p, while_transpose_p
from . import inplace
from .calls import as_scalar, constant, constant_problem, copy_into, inline, lower_call, value_of
from .calls import rules as _call_rules
from .calls import sub_programs as _call_programs
from .context import Ctx

rules: dict = dict(_call_rules)


# --------------------------------------------------------------------------- carries


def _loop_parts(eqn):
    """(body, first carry invar of the body, first carry operand, number of carries) of
    a scan, while or while_transpose equation."""
    p = eqn.params
    if eqn.primitive is scan_p:
        return p["jaxpr"], p["num_consts"], p["num_consts"], p["num_carry"]
    body = p["body_jaxpr"]
    return body, p["body_nconsts"], p["cond_nconsts"] + p["body_nconsts"], len(body.outvars)


def _staying(body, ins, outs):
    """The array carries (positions in ``ins``/``outs``, the body's carry invars and
    outvars) whose next value is in their own buffer (updated in place or unchanged),
    and the body's buffer sharing (`inplace.Plan.storage`)."""
    owned = frozenset(v for v in ins if v.aval.shape != ())
    storage = inplace.plan(body, owned).storage
    stay = [k for k in range(len(ins)) if ins[k].aval.shape != () and
            type(outs[k]) is Var and storage.get(outs[k]) is ins[k]]
    return stay, storage


def _taken_carries(eqn):
    """(operand position, output position) of the initial carries the loop takes as its
    carries' buffers, if nothing else reads them (`inplace.OVERWRITERS`)."""
    body, first, op_first, n = _loop_parts(eqn)
    stay, _ = _staying(body, body.invars[first:first + n], body.outvars[:n])
    return [(op_first + k, k) for k in stay]


inplace.OVERWRITERS[scan_p] = _taken_carries
inplace.OVERWRITERS[while_p] = _taken_carries


def _same_buffer(value, buf) -> bool:
    return value is buf or (isinstance(value, K.Buffer) and value.root is buf.root and
                            value.offset is buf.offset and value.size == buf.size)


class _Pool:
    """The carries ``ks`` (of one shape and dtype) in the slots of one buffer: carry
    ``ks[i]`` is in slot ``slots[i]``; the step's new values go to the slots after."""

    def __init__(self, ctx, ks, claims, shape, dtype):
        self.ks, self.claims = ks, claims
        m = max(claims + [len(ks) - 1]) + 1
        self.size = math.prod(shape)
        self.buf = ctx.temp((m,) + tuple(shape), dtype)
        self.slots = [ctx.names.var("slot", K.I64) for _ in range(m)]
        for j, s in enumerate(self.slots):
            ctx.emit(K.Declare(s, K.Const(j, K.I64)))
        self.shape = tuple(shape)
        self.views = [self.buf.at(K.affine([(s, self.size)]), self.shape) for s in self.slots]

    def moves(self):
        """The slot variables' next values: each carry's slot (the one its new value is
        in), then the slots left free."""
        used = set(self.claims)
        return [self.slots[c] for c in self.claims] + \
            [self.slots[j] for j in range(len(self.slots)) if j not in used]


class Carries:
    """The carries of a loop, set up (declared, their buffers filled) before the loop
    is emitted: `values` are what the body's carry inputs are bound to, `dests` where
    the body computes its next values, `update` ends a step, `bind` binds the loop's
    carry outputs after it.

    ``body``: the loop body; ``ins``/``outs``: its carry invars and outvars; ``inits``:
    the initial values; ``home(k)``: the buffer of array carry ``k`` when the body
    updates it in place, and whether the initial value must be copied there."""

    def __init__(self, ctx: Ctx, body, ins, outs, inits, home):
        self.ctx = ctx
        self.owned = frozenset(v for v in ins if v.aval.shape != ())
        stay, storage = _staying(body, ins, outs)
        self.values: list = [None] * len(ins)
        self.pools: list = []
        self.where: dict = {}            # carry -> (pool, index in pool)
        groups: dict = {}
        for k, (v, init) in enumerate(zip(ins, inits)):
            aval = v.aval
            if aval.shape == ():
                var = ctx.names.var("c", aval.dtype)
                ctx.emit(K.Declare(var, K.cast(as_scalar(init), aval.dtype)))
                self.values[k] = var
            elif k in stay:
                buf, fill = home(k)
                if fill:
                    copy_into(ctx, buf, init)
                self.values[k] = buf
            else:
                groups.setdefault((tuple(aval.shape), np.dtype(aval.dtype)), []).append(k)
        for (shape, dtype), ks in groups.items():
            position = {ins[k]: i for i, k in enumerate(ks)}
            claims, fresh = [], len(ks)
            for k in ks:
                j = position.get(storage.get(outs[k])) if type(outs[k]) is Var else None
                if j is not None and j not in claims:
                    claims.append(j)            # the new value is carry j's, in its slot
                else:
                    claims.append(fresh)        # computed (or copied) into a free slot
                    fresh += 1
            pool = _Pool(ctx, ks, claims, shape, dtype)
            for i, k in enumerate(ks):
                copy_into(ctx, pool.buf.at(i * pool.size, shape), inits[k])
                self.values[k] = pool.views[i]
                self.where[k] = (pool, i)
            self.pools.append(pool)

    @classmethod
    def of(cls, ctx: Ctx, eqn):
        """The carries of a scan or while equation: a carry updated in place takes its
        initial value's buffer when nothing else reads it (`inplace.plan`), else is
        computed in the buffer of the loop's output (a copy made once)."""
        body, first, op_first, n = _loop_parts(eqn)
        inits = eqn.invars[op_first:op_first + n]

        def home(k):
            taken = ctx.take_buffer(inits[k], eqn.outvars[k])
            if taken is not None:
                return taken, False
            return ctx.new_buffer(eqn.outvars[k]), True
        return cls(ctx, body, body.invars[first:first + n], body.outvars[:n],
                   [value_of(ctx, a) for a in inits], home)

    def dests(self) -> dict:
        """{carry: the free slot its next value is computed into}."""
        out = {}
        for k, (pool, i) in self.where.items():
            c = pool.claims[i]
            if c >= len(pool.ks):
                out[k] = pool.views[c]
        return out

    def update(self, outs, landed) -> None:
        """End a step: the next values into their buffers, then the scalars and the
        slot variables assigned (through temporaries: the body may permute them)."""
        ctx = self.ctx
        later = []
        for k, value in enumerate(outs):
            if k in self.where:
                pool, i = self.where[k]
                c = pool.claims[i]
                if c >= len(pool.ks):
                    if not landed[k]:
                        copy_into(ctx, pool.views[c], value)
                elif not _same_buffer(value, pool.views[c]):
                    later.append((pool.views[c], value))
            elif isinstance(self.values[k], K.Buffer) and \
                    not _same_buffer(value, self.values[k]):
                later.append((self.values[k], value))
        # (into a carry's own buffer last: a value copied above may have been read there)
        for buf, value in later:
            copy_into(ctx, buf, value)
        moving = [(self.values[k], as_scalar(value)) for k, value in enumerate(outs)
                  if not isinstance(self.values[k], K.Buffer)]
        for pool in self.pools:
            moving += [(s, new) for s, new in zip(pool.slots, pool.moves()) if new is not s]
        assigned = {var for var, _ in moving}
        assigns = [(var, new if type(new) is K.Const or (type(new) is K.Var and
                                                          new not in assigned)
                    else _temporary(ctx, new)) for var, new in moving]
        for var, t in assigns:
            ctx.emit(K.Assign(var, t))

    def bind(self, outvars) -> None:
        for v, value in zip(outvars, self.values):
            if isinstance(value, K.Buffer):
                self.ctx.bind_buffer(v, value)
            else:
                self.ctx.bind_scalar(v, value)


def _temporary(ctx, expr):
    if type(expr) is K.Const:
        return expr
    t = ctx.names.var("n", expr.dtype)
    ctx.emit(K.Let(t, expr))
    return t


# --------------------------------------------------------------------------- scan


def _scan(ctx: Ctx, eqn):
    p = eqn.params
    body, length, nc, nk = p["jaxpr"], p["length"], p["num_consts"], p["num_carry"]
    args = eqn.invars
    consts = [value_of(ctx, a) for a in args[:nc]]
    carries = Carries.of(ctx, eqn)
    xs = [ctx.buffer(a) for a in args[nc + nk:]]
    ys = [ctx.new_buffer(v) for v in eqn.outvars[nk:]]
    with ctx.loop(length, prefix="it") as it:
        if p["reverse"]:
            ix = _temporary(ctx, K.affine([(it, -1)], length - 1))
        else:
            ix = it
        x_rows = [_row(ctx, xb, ix) for xb in xs]
        y_rows = [_row_view(yb, ix) for yb in ys]
        dests = carries.dests()
        dests.update({nk + j: r for j, r in enumerate(y_rows)})
        outs, landed = inline(ctx, body, consts + list(carries.values) + x_rows,
                              owned=carries.owned, dests=dests)
        for j, r in enumerate(y_rows):
            if not landed[nk + j]:
                copy_into(ctx, r, outs[nk + j])
        carries.update(outs[:nk], landed[:nk])
    carries.bind(eqn.outvars[:nk])


def _row_view(buf, ix):
    shape = buf.shape[1:]
    size = math.prod(shape)
    return buf.at(ix.value * size if type(ix) is K.Const else K.affine([(ix, size)]), shape)


def _row(ctx, buf, ix):
    """Row ``ix`` of a stacked input: a scalar (read now) or a view."""
    if len(buf.shape) == 1:
        return _temporary(ctx, K.Load(buf, (ix,)))
    return _row_view(buf, ix)


rules[scan_p] = _scan


# --------------------------------------------------------------------------- while


def _while(ctx: Ctx, eqn):
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cc = [value_of(ctx, a) for a in eqn.invars[:ncc]]
    bc = [value_of(ctx, a) for a in eqn.invars[ncc:ncc + nbc]]
    carries = Carries.of(ctx, eqn)
    recorder = None
    if _reversed_later(ctx, eqn):    # its reverse pass comes later: record it now
        recorder = _Recorder(ctx, p["body_jaxpr"].out_avals, p["checkpoint_every"])
        ctx.recorded[record_key(eqn)] = recorder
    _emit_while(ctx, p, cc, bc, carries, recorder)
    carries.bind(eqn.outvars)


def _emit_while(ctx, p, cc, bc, carries, recorder=None):
    """The `While` of a while loop's params ``p``; with a `_Recorder`, each step first
    keeps the carry entering it."""
    ctx.depth += 1
    try:
        with ctx.capture() as before:
            (pred,), _ = inline(ctx, p["cond_jaxpr"], cc + list(carries.values))
            pred = as_scalar(pred)
        with ctx.capture() as body:
            if recorder is not None:
                recorder.keep(ctx, carries.values)
            outs, landed = inline(ctx, p["body_jaxpr"], bc + list(carries.values),
                                  owned=carries.owned, dests=carries.dests())
            carries.update(outs, landed)
            if recorder is not None:
                ctx.emit(K.Assign(recorder.count, K.op("add", recorder.count,
                                                       K.Const(1, K.I64))))
    finally:
        ctx.depth -= 1
    ctx.emit(K.While(before, pred, body))


rules[while_p] = _while


# --------------------------------------------------------------------------- while_transpose
# Reverse mode through a while loop (ops/while_loop.py): a forward pass keeps every k-th
# carry in buffers that grow as the loop runs (done by the primal loop itself when the
# program has one, `_reversed_later`), then, segment by segment from the last, the
# segment's carries are recomputed from its checkpoint and the body's backward program
# runs over them in reverse, accumulating the constants' cotangents.


class _Recorder:
    """Every ``k``-th carry entering a step of a while loop, in "grow" buffers, and the
    number of steps run (``count``)."""

    def __init__(self, ctx, avals, k):
        self.k = max(1, int(k))
        self.bufs = []
        for a in avals:
            buf = K.Buffer(ctx.names("g"), (16,) + tuple(a.shape), a.dtype, "grow")
            ctx.temps.append(buf)
            self.bufs.append(buf)
        self.count = ctx.names.var("steps", K.I64)
        ctx.emit(K.Declare(self.count, K.Const(0, K.I64)))

    def keep(self, ctx, values):
        k = self.k
        with ctx.capture() as block:
            row = self.count if k == 1 else \
                _temporary(ctx, K.op("floordiv", self.count, K.Const(k, K.I64)))
            rows = K.op("add", row, K.Const(1, K.I64))
            for buf in self.bufs:
                ctx.emit(K.Call("reserve", (buf, rows)))
            for buf, value in zip(self.bufs, values):
                _store_row(ctx, buf, row, value)
        if k == 1:
            ctx.block.extend(block)
        else:
            ctx.emit(K.If(K.op("eq", K.op("rem", self.count, K.Const(k, K.I64)),
                               K.Const(0, K.I64)), block))


def _store_row(ctx, buf, ix, value):
    if len(buf.shape) == 1:
        ctx.emit(K.Store(buf, (ix,), as_scalar(value)))
    else:
        copy_into(ctx, _row_view(buf, ix), value)


def record_key(eqn):
    """What identifies a while loop's forward pass: its programs, policy, operands."""
    p = eqn.params
    n = p["cond_nconsts"] + p["body_nconsts"] + len(p["body_jaxpr"].outvars)
    return (id(p["cond_jaxpr"]), id(p["body_jaxpr"]), max(1, int(p["checkpoint_every"])),
            tuple((str(a.aval), repr(a.val)) if type(a) is Literal else id(a)
                  for a in eqn.invars[:n]))


def reversed_later(eqns, eqn) -> bool:
    """Whether a while loop ``eqn`` of the program ``eqns`` is reversed after it
    (``jit(grad(f))`` binds the primal while, then while_transpose of the same loop)."""
    at = next((i for i, e in enumerate(eqns) if e is eqn), len(eqns))
    key = record_key(eqn)
    return any(e.primitive is while_transpose_p and record_key(e) == key
               for e in eqns[at + 1:])


def _reversed_later(ctx, eqn) -> bool:
    return reversed_later(ctx.program.eqns if ctx.program is not None else [], eqn)


def _while_transpose(ctx: Ctx, eqn):
    p = eqn.params
    body, k = p["body_jaxpr"], max(1, int(p["checkpoint_every"]))
    ncc, nbc, n = p["cond_nconsts"], p["body_nconsts"], len(p["body_jaxpr"].outvars)
    bc_atoms = eqn.invars[ncc:ncc + nbc]
    bc = [value_of(ctx, a) for a in bc_atoms]
    cts = [value_of(ctx, a) for a in eqn.invars[ncc + nbc + n:]]
    recorder = ctx.recorded.pop(record_key(eqn), None)
    if recorder is None:                 # no primal loop before: run the forward pass
        first = ncc + nbc
        inits = [value_of(ctx, a) for a in eqn.invars[first:first + n]]
        carries = Carries(ctx, body, body.invars[nbc:], body.outvars, inits,
                          lambda j: (ctx.temp(body.out_avals[j].shape,
                                              body.out_avals[j].dtype), True))
        recorder = _Recorder(ctx, body.out_avals, k)
        _emit_while(ctx, p, [value_of(ctx, a) for a in eqn.invars[:ncc]], bc, carries,
                    recorder)
    bwd = bwd_program(body, nbc, p["nz_bc"], p["fc"])
    consts = [constant(ctx, c) for c in bwd.consts]
    bj = bwd.jaxpr
    nacc = sum(p["nz_bc"])
    acc = []
    for a, m in zip(bc_atoms, p["nz_bc"]):
        if not m:
            continue
        zero = K.Const(0, a.aval.dtype)
        if a.aval.shape == ():
            var = ctx.names.var("acc", a.aval.dtype)
            ctx.emit(K.Declare(var, zero))
            acc.append(var)
        else:
            buf = ctx.temp(a.aval.shape, a.aval.dtype)
            copy_into(ctx, buf, zero)
            acc.append(buf)
    ct = Carries(ctx, bj, bj.invars[nbc + n:], bj.outvars[nacc:], cts,
                 lambda j: (ctx.temp(bj.out_avals[nacc + j].shape,
                                     bj.out_avals[nacc + j].dtype), True))

    def backwards(steps, bufs):
        """The backward program over the carries in rows steps-1 .. 0 of ``bufs``."""
        with ctx.loop(steps, prefix="j") as jj:
            j = _temporary(ctx, K.affine([(jj, -1), (steps, 1)], -1))
            outs, landed = inline(ctx, bj, consts + bc + [_row(ctx, b, j) for b in bufs] +
                                  list(ct.values), owned=ct.owned,
                                  dests={nacc + c: d for c, d in ct.dests().items()})
            for a, d in zip(acc, outs[:nacc]):
                _accumulate(ctx, a, d)
            ct.update(outs[nacc:], landed[nacc:])

    count = recorder.count
    if k == 1:                           # every carry was kept
        backwards(count, recorder.bufs)
    else:
        seg = [ctx.temp((k,) + tuple(a.shape), a.dtype) for a in body.out_avals]
        segments = _temporary(ctx, K.op("floordiv", K.op("add", count, K.Const(k - 1, K.I64)),
                                        K.Const(k, K.I64)))
        with ctx.loop(segments, prefix="seg") as s:
            segment = _temporary(ctx, K.affine([(s, -1), (segments, 1)], -1))
            steps = _temporary(ctx, K.op("min", K.Const(k, K.I64), K.op(
                "sub", count, K.op("mul", segment, K.Const(k, K.I64)))))
            for buf, sb in zip(recorder.bufs, seg):  # the segment starts at its checkpoint
                _store_row(ctx, sb, K.Const(0, K.I64), _row(ctx, buf, segment))
            with ctx.loop(steps, start=1, prefix="j") as j:   # and is recomputed from there
                prev = _temporary(ctx, K.op("sub", j, K.Const(1, K.I64)))
                rows = [_row_view(sb, j) for sb in seg]
                outs, landed = inline(ctx, body, bc + [_row(ctx, sb, prev) for sb in seg],
                                      dests={c: r for c, r in enumerate(rows)
                                             if len(r.shape)})
                for sb, value, ok in zip(seg, outs, landed):
                    if not ok:
                        _store_row(ctx, sb, j, value)
            backwards(steps, seg)
    for v, a in zip(eqn.outvars[:nacc], acc):
        if isinstance(a, K.Buffer):
            ctx.bind_buffer(v, a)
        else:
            ctx.bind_scalar(v, a)
    ct.bind(eqn.outvars[nacc:])


def _accumulate(ctx, acc, value):
    """``acc += value`` (a declared scalar, or a buffer element by element)."""
    if not isinstance(acc, K.Buffer):
        ctx.emit(K.Assign(acc, K.op("add", acc, as_scalar(value))))
        return
    src = value.reshaped(acc.shape) if isinstance(value, K.Buffer) else None
    with ctx.nest(acc.shape) as idx:
        ctx.emit(K.Store(acc, idx, K.op("add", K.Load(acc, idx),
                                        K.Load(src, idx) if src is not None else value)))


rules[while_transpose_p] = _while_transpose


# --------------------------------------------------------------------------- cond


def _cond(ctx: Ctx, eqn):
    branches = eqn.params["branches"]
    index, *ops = eqn.invars
    args = [value_of(ctx, a) for a in ops]
    n = len(branches)
    which = K.cast(as_scalar(value_of(ctx, index)), K.I64)
    if type(which) is K.Const or n == 1:     # known now: that branch only
        k = 0 if n == 1 else min(max(int(which.value), 0), n - 1)
        return lower_call(ctx, eqn, branches[k], args)
    which = _temporary(ctx, K.op("min", K.op("max", which, K.Const(0, K.I64)),
                                 K.Const(n - 1, K.I64)))
    results = []
    for v in eqn.outvars:
        if v.aval.shape == ():
            var = ctx.names.var("o", v.aval.dtype)
            ctx.emit(K.Declare(var, K.Const(0, v.aval.dtype)))
            results.append(var)
        else:
            results.append(ctx.new_buffer(v))
    dests = {k: r for k, r in enumerate(results) if isinstance(r, K.Buffer)}
    blocks = []
    for branch in branches:
        with ctx.capture() as block:
            outs, landed = inline(ctx, branch, args, dests=dests)
            for r, value, ok in zip(results, outs, landed):
                if isinstance(r, K.Buffer):
                    if not ok:
                        copy_into(ctx, r, value)
                else:
                    ctx.emit(K.Assign(r, as_scalar(value)))
        blocks.append(block)
    chain = blocks[-1]
    for k in range(n - 2, -1, -1):
        chain = [K.If(K.op("eq", which, K.Const(k, K.I64)), blocks[k], chain)]
    for s in chain:
        ctx.emit(s)
    for v, r in zip(eqn.outvars, results):
        if isinstance(r, K.Buffer):
            ctx.bind_buffer(v, r)
        else:
            ctx.bind_scalar(v, r)


rules[cond_p] = _cond


def sub_programs(eqn):
    """The programs the rule of ``eqn``'s primitive lowers into the kernel (a reason
    string for one it cannot), or None when it has no sub-program."""
    p = eqn.primitive
    if p is scan_p:
        return [eqn.params["jaxpr"]]
    if p is while_p:
        return [eqn.params["cond_jaxpr"], eqn.params["body_jaxpr"]]
    if p is while_transpose_p:
        q = eqn.params
        bwd = bwd_program(q["body_jaxpr"], q["body_nconsts"], q["nz_bc"], q["fc"])
        why = next((w for w in map(constant_problem, bwd.consts) if w is not None), None)
        return [q["cond_jaxpr"], q["body_jaxpr"], why if why is not None else bwd.jaxpr]
    if p is cond_p:
        return list(eqn.params["branches"])
    return _call_programs(eqn)
