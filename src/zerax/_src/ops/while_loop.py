"""``while_loop``: a loop whose trip count is known only at run time.

``while_p(*cond_consts, *body_consts, *init, cond_jaxpr, body_jaxpr, cond_nconsts,
body_nconsts)``.  Forward mode runs primal and tangent together (``while_lin``, linear
in the tangents).  Reverse mode, which JAX refuses for while loops, transposes
``while_lin`` into ``while_transpose``: it reruns the primal loop, recording the carry
entering each iteration in a growable buffer (or every k-th carry, recomputing the
rest: ``checkpoint_every``), then runs the transposed body backwards over them.  In
compiled code, a primal loop whose reverse pass comes later in the same program does
the recording itself, so the loop runs once.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..interpreters.ad import Zero, is_undefined, jvp as ad_jvp, vjp as ad_vjp
from ..core.core import Primitive, ShapedArray, bind, get_aval
from ..ir.ir import convert_constvars, eval_jaxpr
from ..ir.tracing import trace_to_jaxpr
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules

while_p = Primitive("while", multiple_results=True)


def _split(args, cond_nconsts, body_nconsts):
    return (list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts]),
            list(args[cond_nconsts + body_nconsts:]))


def _truth(x) -> bool:
    from ..core.core import concrete_value
    return bool(concrete_value(x, "the while_loop predicate"))


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint_every):
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    while _truth(eval_jaxpr(cond_jaxpr, [], *cc, *carry)[0]):
        carry = eval_jaxpr(body_jaxpr, [], *bc, *carry)
    return [np.asarray(c) for c in carry]


while_p.impl = _while_impl
while_p.abstract_eval = lambda *avals, body_jaxpr, **params: list(body_jaxpr.out_avals)



def _trace_fn(fn, avals, name):
    closed = trace_to_jaxpr(fn, avals, name)
    return convert_constvars(closed.jaxpr), list(closed.consts)


def while_from_fns(cond_fn, body_fn, init, name="while_loop", checkpoint_every=1):
    """Trace ``cond_fn(carry) -> bool`` and ``body_fn(carry) -> carry`` (flat lists)
    and bind while_p; closed-over values become constant operands.
    ``checkpoint_every``: the memory policy of reverse mode (keep every k-th carry)."""
    avals = [get_aval(c) for c in init]
    cj, cc = _trace_fn(lambda *c: [cond_fn(list(c))], avals, f"{name}_cond")
    bj, bc = _trace_fn(lambda *c: list(body_fn(list(c))), avals, f"{name}_body")
    return bind(while_p, *cc, *bc, *init, cond_jaxpr=cj, body_jaxpr=bj,
                cond_nconsts=len(cc), body_nconsts=len(bc),
                checkpoint_every=int(checkpoint_every))


def _is_float(a):
    return get_aval(a).dtype.kind in "fc"


def _zeros(a):
    a = a if isinstance(a, ShapedArray) else get_aval(a)
    return np.zeros(a.shape, a.dtype)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
               checkpoint_every):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    outs = bind(while_p, *primals, checkpoint_every=checkpoint_every, **params)
    cc, bc, init = _split(primals, cond_nconsts, body_nconsts)
    _, t_bc, t_init = _split(tangents, cond_nconsts, body_nconsts)
    nz_bc = tuple(type(t) is not Zero and _is_float(c) for t, c in zip(t_bc, bc))
    fc = tuple(_is_float(c) for c in init)
    if not any(nz_bc) and all(type(t) is Zero for t in t_init):
        return outs, [Zero(get_aval(o)) for o in outs]
    t_args = [t for t, m in zip(t_bc, nz_bc) if m] + \
        [_zeros(c) if type(t) is Zero else t for t, c, f in zip(t_init, init, fc) if f]
    t_outs = iter(bind(while_lin_p, *cc, *bc, *init, *t_args, nz_bc=nz_bc, fc=fc,
                       checkpoint_every=checkpoint_every, **params))
    return outs, [next(t_outs) if f else Zero(get_aval(c)) for c, f in zip(init, fc)]


# --------------------------------------------------------------------------- while_lin

while_lin_p = Primitive("while_lin", multiple_results=True)


def _lin_parts(args, cond_nconsts, body_nconsts, nz_bc, fc, n_carry):
    cc, bc = list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts])
    rest = args[cond_nconsts + body_nconsts:]
    init, ts = list(rest[:n_carry]), list(rest[n_carry:])
    n_tbc = sum(nz_bc)
    return cc, bc, init, ts[:n_tbc], ts[n_tbc:]


def _joint_tangent(args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_bc, fc):
    """Primal and tangent loops run together, as one while loop; returns the tangents."""
    n_carry = len(body_jaxpr.outvars)
    cc, bc, init, t_bc, t_init = _lin_parts(args, cond_nconsts, body_nconsts, nz_bc, fc,
                                            n_carry)

    def cond(carry):
        return eval_jaxpr(cond_jaxpr, [], *cc, *carry[:n_carry])[0]

    def body(carry):
        p, t = carry[:n_carry], iter(carry[n_carry:])
        tb = iter(t_bc)
        tans = [next(tb) if m else _zeros(c) for m, c in zip(nz_bc, bc)] + \
            [next(t) if f else _zeros(c) for f, c in zip(fc, p)]
        new_p, new_t = ad_jvp(lambda *a: eval_jaxpr(body_jaxpr, [], *a),
                              tuple(bc) + tuple(p), tuple(tans))
        return list(new_p) + [nt for nt, f in zip(new_t, fc) if f]

    outs = while_from_fns(cond, body, list(init) + list(t_init), "while_jvp")
    return outs[n_carry:]


def _lin_abstract(*avals, body_jaxpr, fc, **params):
    return [a for a, f in zip(body_jaxpr.out_avals, fc) if f]


def _lin_impl(*args, **params):
    params.pop("checkpoint_every")
    return [np.asarray(t) for t in _joint_tangent(args, **params)]


def _lin_jvp(primals, tangents, **params):
    p = dict(params)
    p.pop("checkpoint_every")
    outs = bind(while_lin_p, *primals, **params)
    tans = [_zeros(get_aval(x)) if type(t) is Zero else t for t, x in zip(tangents, primals)]
    _, t_out = ad_jvp(lambda *a: _joint_tangent(a, **p), tuple(primals), tuple(tans))
    return outs, list(t_out)


def _lin_batch(args, dims, **params):
    from ..interpreters.batching import vmap
    p = dict(params)
    p.pop("checkpoint_every")
    outs = vmap(lambda *a: _joint_tangent(a, **p), in_axes=tuple(dims))(*args)
    return list(outs), [0] * len(outs)


def _lin_transpose(cts, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_bc, fc,
                   checkpoint_every):
    n_carry = len(body_jaxpr.outvars)
    n_fixed = cond_nconsts + body_nconsts + n_carry
    fixed = args[:n_fixed]
    if any(is_undefined(a) for a in fixed):
        raise errors.ZeraxInternalError("while_lin transpose: a primal operand is linear")
    cts = [_zeros(c.aval) if type(c) is Zero else c for c in cts]
    outs = bind(while_transpose_p, *fixed, *cts, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                cond_nconsts=cond_nconsts, body_nconsts=body_nconsts, nz_bc=nz_bc, fc=fc,
                checkpoint_every=checkpoint_every)
    return [None] * n_fixed + list(outs)


while_lin_p.impl = _lin_impl
while_lin_p.abstract_eval = _lin_abstract
jvp_rules[while_lin_p] = _lin_jvp
batch_rules[while_lin_p] = _lin_batch
transpose_rules[while_lin_p] = _lin_transpose

# --------------------------------------------------------------------------- while_transpose

while_transpose_p = Primitive("while_transpose", multiple_results=True)


def _bwd_program(body_jaxpr, body_nconsts, nz_bc, fc, bc_avals, carry_avals):
    """``(body consts, carry, carry cotangent) -> (cotangents of the differentiated
    consts, cotangent of the carry before the step)``, traced once."""
    n_bc = body_nconsts

    def bwd(*a):
        bc, carry, ct = a[:n_bc], a[n_bc:n_bc + len(carry_avals)], a[n_bc + len(carry_avals):]
        lin_bc = [c for c, m in zip(bc, nz_bc) if m]
        lin_k = [c for c, f in zip(carry, fc) if f]

        def f(*lin):
            lb, lk = iter(lin[:len(lin_bc)]), iter(lin[len(lin_bc):])
            full_bc = [next(lb) if m else c for m, c in zip(nz_bc, bc)]
            full_k = [next(lk) if f else c for f, c in zip(fc, carry)]
            outs = eval_jaxpr(body_jaxpr, [], *full_bc, *full_k)
            return [o for o, f in zip(outs, fc) if f]
        _, pull = ad_vjp(f, *lin_bc, *lin_k)
        return list(pull(list(ct)))

    ct_avals = [a for a, f in zip(carry_avals, fc) if f]
    closed = trace_to_jaxpr(bwd, list(bc_avals) + list(carry_avals) + ct_avals, "while_bwd")
    return closed


def _transpose_impl_fn(args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_bc, fc,
                       checkpoint_every):
    """The reverse pass, in zerax operations (so it can itself be differentiated)."""
    from .elementwise import add
    n_carry = len(body_jaxpr.outvars)
    cc, bc, rest = _split(args, cond_nconsts, body_nconsts)
    init, ct = list(rest[:n_carry]), list(rest[n_carry:])
    bwd = _bwd_program(body_jaxpr, body_nconsts, nz_bc, fc, [get_aval(c) for c in bc],
                       [get_aval(c) for c in init])
    k = max(1, int(checkpoint_every))

    def step(c):
        return eval_jaxpr(body_jaxpr, [], *bc, *c)

    # Forward: run the loop again, keeping every k-th carry (a growable list).
    checkpoints, n, carry = [], 0, init
    while _truth(eval_jaxpr(cond_jaxpr, [], *cc, *carry)[0]):
        if n % k == 0:
            checkpoints.append(carry)
        carry = step(carry)
        n += 1
    acc = [_zeros(c) for c, m in zip(bc, nz_bc) if m]
    # Backward: segment by segment, recomputing the carries inside each segment.
    for seg in range(len(checkpoints) - 1, -1, -1):
        start = seg * k
        carries = [checkpoints[seg]]
        for _ in range(start + 1, min(start + k, n)):
            carries.append(step(carries[-1]))
        for c in reversed(carries):
            d = eval_jaxpr(bwd.jaxpr, bwd.consts, *bc, *c, *ct)
            acc = [add(a, g) for a, g in zip(acc, d[:len(acc)])]
            ct = d[len(acc):]
    return list(acc) + list(ct)


def _transpose_abstract(*avals, cond_nconsts, body_nconsts, nz_bc, fc, body_jaxpr, **params):
    bc = avals[cond_nconsts:cond_nconsts + body_nconsts]
    return [a for a, m in zip(bc, nz_bc) if m] + \
        [a for a, f in zip(body_jaxpr.out_avals, fc) if f]


def _transpose_impl(*args, **params):
    return [np.asarray(x) for x in _transpose_impl_fn(args, **params)]


def _transpose_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                   nz_bc, fc, checkpoint_every):
    """Forward mode of the reverse pass (``hessian`` = jacfwd of jacrev), with loops only.

    The reverse pass is ``J(p)^T ct``: J the Jacobian of the loop F with respect to its
    linear inputs (the differentiated consts and float carries), at the primal operands
    p.  Its derivative along (dp, dct) is ``J(p)^T dct`` (the same reverse pass) plus
    ``d/de J(p + e dp)^T ct``, which by the symmetry of second derivatives is the
    gradient, with respect to the linear inputs, of ``<ct, jvp(F)(p; dp)>``: reverse
    mode through the joint primal-and-tangent loop.  Every step binds loop primitives,
    so this works with trip counts known only at run time, under jit and vmap too.

    With concrete operands the reverse pass is instead differentiated as it runs (its
    Python loop, `_transpose_impl_fn`): the result is then made of ordinary operations,
    which a further reverse pass can transpose (``grad(grad(f))``)."""
    from .elementwise import add, mul
    from .reduce import reduce_sum
    params = {"cond_jaxpr": cond_jaxpr, "body_jaxpr": body_jaxpr,
              "cond_nconsts": cond_nconsts, "body_nconsts": body_nconsts, "nz_bc": nz_bc,
              "fc": fc, "checkpoint_every": checkpoint_every}
    dense = [_zeros(get_aval(x)) if type(t) is Zero else t for t, x in zip(tangents, primals)]
    try:
        outs, t_out = ad_jvp(lambda *a: _transpose_impl_fn(a, **params), tuple(primals),
                             tuple(dense))
        return list(outs), list(t_out)
    except errors.ConcretizationError:
        pass                                  # traced operands: the loops-only form below
    outs = bind(while_transpose_p, *primals, **params)
    n_carry = len(body_jaxpr.outvars)
    n_fixed = cond_nconsts + body_nconsts + n_carry
    cc, bc, init = _split(primals[:n_fixed], cond_nconsts, body_nconsts)
    ct = list(primals[n_fixed:])
    t_bc = tangents[cond_nconsts:cond_nconsts + body_nconsts]
    t_init, t_ct = tangents[cond_nconsts + body_nconsts:n_fixed], tangents[n_fixed:]
    t_out = None
    if any(type(t) is not Zero for t in t_ct):        # J(p)^T dct
        dct = [_zeros(c) if type(t) is Zero else t for t, c in zip(t_ct, ct)]
        t_out = bind(while_transpose_p, *primals[:n_fixed], *dct, **params)
    moving = [(k, t) for k, t in enumerate(list(t_bc) + list(t_init))
              if type(t) is not Zero and _is_float((bc + init)[k])]
    if moving:                                          # d/de J(p + e dp)^T ct
        lin_pos = [k for k, m in enumerate(nz_bc) if m] + \
            [body_nconsts + k for k, f in enumerate(fc) if f]

        def loop(*operands):
            return bind(while_p, *cc, *operands, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                        body_nconsts=body_nconsts, checkpoint_every=checkpoint_every)

        def paired(*lin):
            operands = list(bc) + list(init)
            for k, v in zip(lin_pos, lin):
                operands[k] = v
            dirs = [_zeros(x) for x in operands]
            for k, t in moving:
                dirs[k] = t
            _, tans = ad_jvp(loop, tuple(operands), tuple(dirs))
            total = None
            for c, t in zip(ct, [t for t, f in zip(tans, fc) if f]):
                term = reduce_sum(mul(c, t), tuple(range(len(get_aval(t).shape))))
                total = term if total is None else add(total, term)
            return total

        lin_vals = [(list(bc) + list(init))[k] for k in lin_pos]
        value, pull = ad_vjp(paired, *lin_vals)
        second = pull(np.ones((), get_aval(value).dtype))
        t_out = list(second) if t_out is None else [add(a, b) for a, b in zip(t_out, second)]
    if t_out is None:
        return list(outs), [Zero(get_aval(o)) for o in outs]
    return list(outs), list(t_out)


def _transpose_batch(args, dims, **params):
    from ..interpreters.batching import batch_by_loop
    # Each batch member may run a different number of iterations.
    return batch_by_loop(while_transpose_p, args, dims, params)


while_transpose_p.impl = _transpose_impl
while_transpose_p.abstract_eval = _transpose_abstract
jvp_rules[while_transpose_p] = _transpose_jvp
batch_rules[while_transpose_p] = _transpose_batch
while_transpose_p.unsupported["transpose"] = (
    "reverse mode over reverse mode through a while_loop needs concrete operands (it "
    "works without jit); under jit use forward over reverse: zx.hessian or "
    "zx.jacfwd(zx.grad(f))")
while_p.unsupported["transpose"] = "it is never linear; while_lin is transposed instead"

# --------------------------------------------------------------------------- batching


def _while_batch(args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                 checkpoint_every):
    from ..interpreters.batching import batch_size_of, bdim_at_front, vmap
    from .elementwise import select_n
    from .reduce import reduce_max
    from .shape import broadcast_in_dim
    size = batch_size_of(args, dims)
    cc, bc, init = _split(args, cond_nconsts, body_nconsts)
    d_cc, d_bc, d_k = _split(dims, cond_nconsts, body_nconsts)
    n = len(init)
    batched = [d is not None for d in d_k]
    cc0 = [c if d is None else bdim_at_front(c, d, size) for c, d in zip(cc, d_cc)]
    bc0 = [c if d is None else bdim_at_front(c, d, size) for c, d in zip(bc, d_bc)]
    ax_cc = tuple(None if d is None else 0 for d in d_cc)
    ax_bc = tuple(None if d is None else 0 for d in d_bc)

    from ..interpreters.batching import batched_outputs, example_aval
    ex_cc = [example_aval(c, d) for c, d in zip(cc, d_cc)]
    ex_bc = [example_aval(c, d) for c, d in zip(bc, d_bc)]
    ex_k = [example_aval(c, d) for c, d in zip(init, d_k)]

    def probe_batched(fn_jaxpr, ex_consts, ax_consts, carry_batched):
        return batched_outputs(fn_jaxpr, ex_consts + ex_k,
                               [a is not None for a in ax_consts] + list(carry_batched), size)

    while True:  # fixpoint: which carries vary over the batch
        new = [a or b for a, b in zip(batched, probe_batched(body_jaxpr, ex_bc, ax_bc, batched))]
        if new == batched:
            break
        batched = new
    pred_batched = probe_batched(cond_jaxpr, ex_cc, ax_cc, batched)[0]
    if pred_batched:
        batched = [True] * n
    carry0 = [bdim_at_front(c, d, size) if b else c for c, d, b in zip(init, d_k, batched)]
    ax_k = tuple(0 if b else None for b in batched)
    v_cond = vmap(lambda *a: eval_jaxpr(cond_jaxpr, [], *a)[0], in_axes=ax_cc + ax_k,
                  out_axes=0 if pred_batched else None, axis_size=size)
    v_body = vmap(lambda *a: tuple(eval_jaxpr(body_jaxpr, [], *a)), in_axes=ax_bc + ax_k,
                  out_axes=ax_k, axis_size=size)
    if not pred_batched:
        outs = while_from_fns(lambda c: v_cond(*cc0, *c), lambda c: list(v_body(*bc0, *c)),
                              carry0, "vmap_while", checkpoint_every)
        return outs, [0 if b else None for b in batched]

    # A batched predicate: run until every member is done; finished members keep their
    # carry (masked updates).
    def cond(c):
        return reduce_max(v_cond(*cc0, *c), (0,))

    def body(c):
        pred = v_cond(*cc0, *c)
        new = list(v_body(*bc0, *c))
        out = []
        for old, upd in zip(c, new):
            p = pred if len(upd.shape) == 1 else broadcast_in_dim(pred, tuple(upd.shape), (0,))
            out.append(select_n(p, old, upd))
        return out

    outs = while_from_fns(cond, body, carry0, "vmap_while", checkpoint_every)
    return outs, [0] * n


jvp_rules[while_p] = _while_jvp
batch_rules[while_p] = _while_batch


# --------------------------------------------------------------------------- Numba lowering


def _start_buffers(ctx, body, n_consts, avals):
    from ..backends.numba.loops import BufferedCarries
    return BufferedCarries(ctx, body, body.outvars, body.invars[n_consts:], avals)


def _record_key(eqn):
    """What identifies a while loop's forward pass: its programs, operands and policy."""
    from ..ir.ir import Literal
    p = eqn.params
    n = p["cond_nconsts"] + p["body_nconsts"] + len(p["body_jaxpr"].outvars)
    return (id(p["cond_jaxpr"]), id(p["body_jaxpr"]), max(1, int(p["checkpoint_every"])),
            tuple((str(a.aval), repr(a.val)) if type(a) is Literal else id(a)
                  for a in eqn.invars[:n]))


def _reversed_later(ctx, eqn) -> bool:
    """Whether the program being lowered reverses this loop after it (``jit(grad(f))``
    binds the primal while, then while_transpose of the same loop): then the primal
    loop records the carries, and the reverse pass does not run the loop again."""
    eqns = ctx.body.eqns if ctx.body is not None else []
    later = eqns[next((i for i, e in enumerate(eqns) if e is eqn), len(eqns)) + 1:]
    key = _record_key(eqn)
    return any(e.primitive is while_transpose_p and _record_key(e) == key for e in later)


def _while_lower_numba(ctx, eqn):
    from ..backends.numba.codegen import lower_jaxpr_body
    from ..backends.numba.loops import start_carries
    p = eqn.params
    cc, bc, init = _split(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    body = p["body_jaxpr"]
    avals = body.out_avals
    if _reversed_later(ctx, eqn):
        carries, recorded = _record_forward(ctx, eqn)
        ctx.recorded[_record_key(eqn)] = recorded
    else:
        ctx.emit("# while_loop")
        carries = start_carries(ctx, avals, [ctx.ref(a) for a in init])
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
    from ..backends.numba.codegen import lower_jaxpr_body
    from ..backends.numba.loops import step_dests
    with step_dests(ctx, bufs.dests()) as used:
        outs = lower_jaxpr_body(ctx, body, bc_refs + carries)
    bufs.update(ctx, carries, outs, used)


def _lin_lower_numba(ctx, eqn):
    """Forward mode: the joint primal-and-tangent loop, traced and inlined."""
    from ..backends.numba.codegen import inline_closed
    params = dict(eqn.params)
    params.pop("checkpoint_every")
    avals = [a.aval for a in eqn.invars]
    closed = trace_to_jaxpr(lambda *a: _joint_tangent(a, **params), avals, "while_jvp")
    outs = inline_closed(ctx, closed, [ctx.ref(a) for a in eqn.invars])
    for v, ref in zip(eqn.outvars, outs):
        ctx.bind_name(v, ref)


def _store_rows(ctx, bufs, index, refs, avals):
    from ..backends.numba.loops import store_row
    for b, ref, a in zip(bufs, refs, avals):
        store_row(ctx, b, index, ref, a)


def _alloc_rows(ctx, size, avals, prefix):
    from ..backends.numba.codegen import dtype_name
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
    from ..backends.numba.codegen import dtype_name, lower_jaxpr_body
    from ..backends.numba.loops import copy_rows, start_carries
    p = eqn.params
    body = p["body_jaxpr"]
    k = max(1, int(p["checkpoint_every"]))
    cc, bc, rest = _split(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    init = rest[:len(body.outvars)]
    avals = body.out_avals
    ctx.emit(f"# while_loop, reverse mode: forward pass keeping every {k}-th carry")
    carries = start_carries(ctx, avals, [ctx.ref(a) for a in init])
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
    from ..backends.numba.codegen import dtype_name, inline_closed, lower_jaxpr_body
    from ..backends.numba.loops import BufferedCarries, slice_ref, start_carries, step_dests
    from ..ir.ir import Var
    p = eqn.params
    body = p["body_jaxpr"]
    k = max(1, int(p["checkpoint_every"]))
    n_carry = len(body.outvars)
    cc, bc, rest = _split(eqn.invars, p["cond_nconsts"], p["body_nconsts"])
    cts = rest[n_carry:]
    avals = body.out_avals
    bc_refs = [ctx.ref(c) for c in bc]
    recorded = ctx.recorded.pop(_record_key(eqn), None)
    if recorded is None:
        _, recorded = _record_forward(ctx, eqn)
    bufs, n = recorded

    def alloc(size, prefix):
        return _alloc_rows(ctx, size, avals, prefix)

    def store(bufs, index, refs):
        _store_rows(ctx, bufs, index, refs, avals)

    ctx.emit("# backward pass, segment by segment")
    bwd = _bwd_program(body, p["body_nconsts"], p["nz_bc"], p["fc"],
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


while_p.lower_numba = _while_lower_numba
while_lin_p.lower_numba = _lin_lower_numba
while_transpose_p.lower_numba = _transpose_lower_numba
