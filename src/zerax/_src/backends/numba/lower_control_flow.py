"""The Numba lowering of the control-flow primitives (``ops/cond.py``, ``ops/scan.py``,
``ops/while_loop.py``): their sub-programs are inlined into the enclosing kernel.

- ``cond``: ``if index == 0: ... elif ...``, each branch assigning the outputs;
- ``scan``: a counted loop, carries as loop variables, the ys written into stacked
  arrays allocated before the loop;
- ``while``: ``while True`` with the predicate's program and a ``break``;
  ``while_lin`` (forward mode) the joint primal-and-tangent loop; ``while_transpose``
  (reverse mode) a forward pass recording every k-th carry in a growable buffer, then
  the transposed body backwards over them, segment by segment.

No step of a loop allocates its array carries (``loops.BufferedCarries``).
"""

from __future__ import annotations

from ...core.core import ShapedArray
from ...ir.ir import Var
from ...ir.tracing import trace_to_jaxpr
from ...ops.cond import cond_p
from ...ops.scan import scan_p
from ...ops.while_loop import (bwd_program, joint_tangent, split_operands, while_lin_p,
                               while_p, while_transpose_p)
from ..lowering.control_flow import record_key, reversed_later
from .codegen import dtype_name, inline_closed, lower_jaxpr_body
from .loops import (BufferedCarries, copy_rows, slice_ref, start_carries, step_dests,
                    store_row)
from .rules import lowering_rules


# --------------------------------------------------------------------------- cond


def _cond_lower_numba(ctx, eqn):
    """``if index == 0: ... elif ...``: each branch is inlined and assigns the outputs."""
    branches = eqn.params["branches"]
    index, *ops = eqn.invars
    idx = ctx.fresh("b")
    ctx.emit(f"{idx} = min(max(int({ctx.scalar(index)}), 0), {len(branches) - 1})")
    outs = [ctx.fresh("o") for _ in eqn.outvars]
    for k, branch in enumerate(branches):
        head = "if" if k == 0 else "elif"
        ctx.emit(f"{head} {idx} == {k}:" if k < len(branches) - 1 else "else:")
        with ctx.block():
            refs = lower_jaxpr_body(ctx, branch, [ctx.ref(o) for o in ops])
            for name, ref, v in zip(outs, refs, eqn.outvars):
                if v.aval.shape == ():
                    ctx.emit(f"{name} = {dtype_name(v.aval.dtype)}({ctx.text(ref, True)})")
                else:
                    ctx.emit(f"{name} = np.ascontiguousarray({ctx.text(ref, False)})")
    for v, name in zip(eqn.outvars, outs):
        if v.aval.shape == ():
            ctx.bind_scalar(v, name)
        else:
            ctx.bind_name(v, name)


lowering_rules[cond_p] = _cond_lower_numba


# --------------------------------------------------------------------------- scan


def _scan_lower_numba(ctx, eqn):
    """A sequential loop; the body is inlined, carries are loop variables and the ys
    are written into preallocated stacked arrays.

    No step allocates what it returns: a y computed by the body's own loops is written
    straight into its row of the stacked output, and, when the body computes its array
    carries itself, each such carry lives in two buffers allocated before the loop
    (the step writes the new value into the one the old value is not in, then they
    swap; see `loops.carry_buffers`)."""
    p = eqn.params
    jaxpr, length, nc, nk = p["jaxpr"], p["length"], p["num_consts"], p["num_carry"]
    args = eqn.invars
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    carry_avals = jaxpr.out_avals[:nk]
    ctx.emit(f"# scan over {length} steps{' (reversed)' if p['reverse'] else ''}")
    carries = start_carries(ctx, carry_avals, [ctx.ref(a) for a in init], init_vars=init)
    ys = []
    for v in eqn.outvars[nk:]:
        name = ctx.fresh("ys")
        ctx.emit(f"{name} = np.empty({tuple(v.aval.shape)!r}, {dtype_name(v.aval.dtype)})")
        ys.append(name)
    u = max(1, min(int(p.get("unroll", 1)), length or 1))
    it, ix = ctx.fresh("it"), ctx.fresh("ix")
    produced = {v for e in jaxpr.eqns for v in e.outvars}
    carry_bufs = BufferedCarries(ctx, jaxpr, jaxpr.outvars[:nk], jaxpr.invars[nc:nc + nk],
                                 carry_avals)

    def one_step(step_index):
        ctx.emit(f"{ix} = {length - 1} - ({step_index})" if p["reverse"]
                 else f"{ix} = {step_index}")
        x_refs = []
        for x in xs:
            if len(x.aval.shape) == 1:
                x_refs.append(("scalar", f"{ctx.name(x)}[{ix}]"))
            else:   # the step's slice, once (not an indexing per element read)
                o = ctx.fresh("o")
                ctx.emit(f"{o} = {ctx.name(x)}[{ix}]")
                x_refs.append(("array", o))
        dest = carry_bufs.dests()
        carry_vars = set(dest)
        for name, o, aval in zip(ys, jaxpr.outvars[nk:], jaxpr.out_avals[nk:]):
            if aval.shape != () and type(o) is Var and o in produced and o not in dest:
                dest[o] = f"{name}[{ix}]"
        with step_dests(ctx, dest) as used:
            outs = lower_jaxpr_body(ctx, jaxpr,
                                    [ctx.ref(c) for c in consts] + carries + x_refs)
        for name, o, ref, aval in zip(ys, jaxpr.outvars[nk:], outs[nk:],
                                      jaxpr.out_avals[nk:]):
            if not (o in used and o not in carry_vars):
                store_row(ctx, name, ix, ref, aval)
        carry_bufs.update(ctx, carries, outs[:nk], used)

    main = length - length % u
    if u > 1:
        ctx.emit(f"# unrolled {u} times")
    ctx.emit(f"for {it} in range(0, {main}, {u}):")
    with ctx.block():
        for j in range(u):
            one_step(f"{it} + {j}" if j else it)
    if main < length:
        with ctx.serial_loop(it, f"{main}, {length}"):
            one_step(it)
    carry_bufs.finish(ctx)
    for v, ref in zip(eqn.outvars[:nk], carries):
        ctx.bind_name(v, ref)
    for v, name in zip(eqn.outvars[nk:], ys):
        ctx.bind_name(v, name)


lowering_rules[scan_p] = _scan_lower_numba


# --------------------------------------------------------------------------- while


def _start_buffers(ctx, body, n_consts, avals):
    return BufferedCarries(ctx, body, body.outvars, body.invars[n_consts:], avals)


def _reversed_later(ctx, eqn) -> bool:
    """Whether the program being lowered reverses this loop after it: then the primal
    loop records the carries, and the reverse pass does not run the loop again."""
    return reversed_later(ctx.body.eqns if ctx.body is not None else [], eqn)


def _while_lower_numba(ctx, eqn):
    p = eqn.params
    cc, bc, init = split_operands(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    body = p["body_jaxpr"]
    avals = body.out_avals
    if _reversed_later(ctx, eqn):
        carries, recorded = _record_forward(ctx, eqn)
        ctx.recorded[record_key(eqn)] = recorded
    else:
        ctx.emit("# while_loop")
        carries = start_carries(ctx, avals, [ctx.ref(a) for a in init], init_vars=init)
        bufs = _start_buffers(ctx, body, p["body_nconsts"], avals)
        ctx.emit("while True:")
        with ctx.block():
            (pred,) = lower_jaxpr_body(ctx, p["cond_jaxpr"],
                                       [ctx.ref(c) for c in cc] + carries)
            ctx.emit(f"if not {ctx.text(pred, True)}:")
            with ctx.block():
                ctx.emit("break")
            _step(ctx, bufs, body, [ctx.ref(c) for c in bc], carries)
        bufs.finish(ctx)
    for v, ref in zip(eqn.outvars, carries):
        ctx.bind_name(v, ref)


def _step(ctx, bufs, body, bc_refs, carries):
    """Lower one step of a while body, its array carries written into the two buffers
    of ``bufs`` (see `loops.BufferedCarries`): no step allocates them."""
    with step_dests(ctx, bufs.dests()) as used:
        outs = lower_jaxpr_body(ctx, body, bc_refs + carries)
    bufs.update(ctx, carries, outs, used)


def _lin_lower_numba(ctx, eqn):
    """Forward mode: the joint primal-and-tangent loop, traced and inlined."""
    params = dict(eqn.params)
    params.pop("checkpoint_every")
    avals = [a.aval for a in eqn.invars]
    closed = trace_to_jaxpr(lambda *a: joint_tangent(a, **params), avals, "while_jvp")
    outs = inline_closed(ctx, closed, [ctx.ref(a) for a in eqn.invars])
    for v, ref in zip(eqn.outvars, outs):
        ctx.bind_name(v, ref)


def _store_rows(ctx, bufs, index, refs, avals):
    for b, ref, a in zip(bufs, refs, avals):
        store_row(ctx, b, index, ref, a)


def _alloc_rows(ctx, size, avals, prefix):
    names = []
    for a in avals:
        b = ctx.fresh(prefix)
        ctx.emit(f"{b} = np.empty(({size},) + {tuple(a.shape)!r}, {dtype_name(a.dtype)})")
        names.append(b)
    return names


def _record_forward(ctx, eqn):
    """The loop of a while or while_transpose equation, keeping every k-th carry in a
    growable buffer (its capacity doubles when full).  Returns the final carries and
    (buffers, name of the step count)."""
    p = eqn.params
    body = p["body_jaxpr"]
    k = max(1, int(p["checkpoint_every"]))
    cc, bc, rest = split_operands(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    init = rest[:len(body.outvars)]
    avals = body.out_avals
    ctx.emit(f"# while_loop, reverse mode: forward pass keeping every {k}-th carry")
    carries = start_carries(ctx, avals, [ctx.ref(a) for a in init], init_vars=init)
    cap, n = ctx.fresh("cap"), ctx.fresh("steps")
    ctx.emit(f"{cap} = 16")
    ctx.emit(f"{n} = 0")
    bufs = _alloc_rows(ctx, cap, avals, "buf")
    carry_bufs = _start_buffers(ctx, body, p["body_nconsts"], avals)
    ctx.emit("while True:")
    with ctx.block():
        (pred,) = lower_jaxpr_body(ctx, p["cond_jaxpr"], [ctx.ref(c) for c in cc] + carries)
        ctx.emit(f"if not {ctx.text(pred, True)}:")
        with ctx.block():
            ctx.emit("break")
        ctx.emit(f"if {n} % {k} == 0:")
        with ctx.block():
            ctx.emit(f"if {n} // {k} == {cap}:")
            with ctx.block():
                for b, a in zip(bufs, avals):
                    t = ctx.fresh("grown")
                    ctx.emit(f"{t} = np.empty((2 * {cap},) + {tuple(a.shape)!r}, "
                             f"{dtype_name(a.dtype)})")
                    copy_rows(ctx, t, b, cap, tuple(a.shape))
                    ctx.emit(f"{b} = {t}")
                ctx.emit(f"{cap} = 2 * {cap}")
            _store_rows(ctx, bufs, f"{n} // {k}", carries, avals)
        _step(ctx, carry_bufs, body, [ctx.ref(c) for c in bc], carries)
        ctx.emit(f"{n} += 1")
    carry_bufs.finish(ctx)
    return carries, (bufs, n)


def _transpose_lower_numba(ctx, eqn):
    """Reverse mode: the forward pass recorded every k-th carry (`_record_forward`, run
    here unless the primal loop of this program already did), then, segment by segment
    from the last, recompute the segment's carries and run the transposed body
    backwards over them."""
    p = eqn.params
    body = p["body_jaxpr"]
    k = max(1, int(p["checkpoint_every"]))
    n_carry = len(body.outvars)
    cc, bc, rest = split_operands(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    cts = rest[n_carry:]
    avals = body.out_avals
    bc_refs = [ctx.ref(c) for c in bc]
    recorded = ctx.recorded.pop(record_key(eqn), None)
    if recorded is None:
        _, recorded = _record_forward(ctx, eqn)
    bufs, n = recorded

    def alloc(size, prefix):
        return _alloc_rows(ctx, size, avals, prefix)

    def store(bufs, index, refs):
        _store_rows(ctx, bufs, index, refs, avals)

    ctx.emit("# backward pass, segment by segment")
    bwd = bwd_program(body, p["body_nconsts"], p["nz_bc"], p["fc"],
                       [a.aval for a in bc], list(avals))
    acc_avals = [a.aval for a, m in zip(bc, p["nz_bc"]) if m]
    ct_avals = [a for a, f in zip(avals, p["fc"]) if f]
    acc = []
    for a in acc_avals:
        name = ctx.fresh("acc")
        if a.shape == ():
            ctx.emit(f"{name} = {dtype_name(a.dtype)}(0)")
            acc.append(("scalar", name))
        else:
            ctx.emit(f"{name} = np.zeros({tuple(a.shape)!r}, {dtype_name(a.dtype)})")
            acc.append(("array", name))
    ct = start_carries(ctx, ct_avals, [ctx.ref(c) for c in cts], "ct")
    # No step allocates: the carry cotangents live in two buffers each, and the
    # gradient contributions are written into scratch arrays and added in place into
    # the accumulators (arrays of this kernel's own, from np.zeros above).
    n_acc, n_bc = len(acc), len(bc)
    bwd_outs = bwd.jaxpr.outvars
    ct_bufs = BufferedCarries(ctx, bwd.jaxpr, bwd_outs[n_acc:],
                              bwd.jaxpr.invars[n_bc + n_carry:], ct_avals)
    produced = {v for e in bwd.jaxpr.eqns for v in e.outvars}
    scratch = {}
    for o, a in zip(bwd_outs[:n_acc], acc_avals):
        if a.shape != () and type(o) is Var and o in produced and o not in scratch:
            scratch[o] = ctx.fresh("da")
            ctx.emit(f"{scratch[o]} = np.empty({tuple(a.shape)!r}, {dtype_name(a.dtype)})")
    seg_bufs = alloc(k, "seg")
    seg, count, j = ctx.fresh("segment"), ctx.fresh("count"), ctx.fresh("j")
    ctx.emit(f"for {seg} in range(({n} + {k} - 1) // {k} - 1, -1, -1):")
    with ctx.block():
        ctx.emit(f"{count} = min({k}, {n} - {seg} * {k})")
        # recompute the segment's carries from its checkpoint
        first = [slice_ref(ctx, b, seg, _stacked(a)) for b, a in zip(bufs, avals)]
        store(seg_bufs, 0, first)
        ctx.emit(f"for {j} in range(1, {count}):")
        with ctx.block():
            prev = [slice_ref(ctx, b, f"{j} - 1", _stacked(a)) for b, a in zip(seg_bufs, avals)]
            outs = lower_jaxpr_body(ctx, body, bc_refs + prev)
            store(seg_bufs, j, outs)
        ctx.emit(f"for {j} in range({count} - 1, -1, -1):")
        with ctx.block():
            carry_refs = [slice_ref(ctx, b, j, _stacked(a)) for b, a in zip(seg_bufs, avals)]
            dest = ct_bufs.dests()
            for o, name in scratch.items():
                dest.setdefault(o, name)
            with step_dests(ctx, dest) as used:
                d = inline_closed(ctx, bwd, bc_refs + carry_refs + ct)
            for ref, dref, a in zip(acc, d[:n_acc], acc_avals):
                if a.shape == ():
                    ctx.emit(f"{ref[1]} = {dtype_name(a.dtype)}({ref[1]} + "
                             f"{ctx.text(dref, True)})")
                    continue
                whole = dref[0] == "array"   # else one value for every element
                src = ctx.text(dref, not whole)
                with ctx.nest(a.shape, parallel=False) as idx:
                    ix = ", ".join(idx)
                    ctx.emit(f"{ref[1]}[{ix}] += {src}[{ix}]" if whole
                             else f"{ref[1]}[{ix}] += {src}")
            ct_bufs.update(ctx, ct, list(d[n_acc:]), used)
    ct_bufs.finish(ctx)
    for v, ref in zip(eqn.outvars, acc + ct):
        ctx.bind_name(v, ref)


def _stacked(aval):
    return ShapedArray((1,) + tuple(aval.shape), aval.dtype)


lowering_rules[while_p] = _while_lower_numba
lowering_rules[while_lin_p] = _lin_lower_numba
lowering_rules[while_transpose_p] = _transpose_lower_numba
