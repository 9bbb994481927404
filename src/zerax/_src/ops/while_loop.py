"""``while_loop``: a loop whose trip count is known only at run time.

``while_p(*cond_consts, *body_consts, *init, cond_jaxpr, body_jaxpr, cond_nconsts,
body_nconsts)``.  Forward mode runs primal and tangent together (``while_lin``, linear
in the tangents).  Reverse mode, which JAX refuses for while loops, transposes
``while_lin`` into ``while_transpose``: it reruns the primal loop, recording the carry
entering each iteration in a growable buffer (or every k-th carry, recomputing the
rest: ``checkpoint_every``), then runs the transposed body backwards over them.  In
compiled code, a primal loop whose reverse pass comes later in the same program does
the recording itself, so the loop runs once (``backends/lowering/control_flow.py``).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..interpreters.ad import (derived_program, jvp as ad_jvp, jvp_jaxpr, vjp as ad_vjp,
                               vjp_jaxpr)
from ..core.core import Primitive, ShapedArray, bind, concrete_value, get_aval
from ..ir.ir import ClosedJaxpr, Jaxpr, convert_constvars, eval_jaxpr
from ..ir.tracing import trace_to_jaxpr
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import (batch_by_loop, batch_jaxpr, batch_rules,
                                     batch_size_of, batched_carries, batched_outputs,
                                     bdim_at_front, example_aval, vmap)
from .elementwise import add, mul, select_n
from .reduce import reduce_max, reduce_sum
from .shape import broadcast_in_dim
from ..base.dtypes import kind as dtype_kind

while_p = Primitive("while", multiple_results=True)


def split_operands(args, cond_nconsts, body_nconsts):
    return (list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts]),
            list(args[cond_nconsts + body_nconsts:]))


def _truth(x) -> bool:
    return bool(concrete_value(x, "the while_loop predicate"))


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, checkpoint_every):
    cc, bc, carry = split_operands(args, cond_nconsts, body_nconsts)
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
    return dtype_kind(get_aval(a).dtype) in "fc"


def _zeros(a):
    a = a if isinstance(a, ShapedArray) else get_aval(a)
    return np.zeros(a.shape, a.dtype)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
               checkpoint_every):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    outs = bind(while_p, *primals, checkpoint_every=checkpoint_every, **params)
    cc, bc, init = split_operands(primals, cond_nconsts, body_nconsts)
    _, t_bc, t_init = split_operands(tangents, cond_nconsts, body_nconsts)
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


def joint_tangent(args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_bc, fc):
    """Primal and tangent loops run together, as one while loop; returns the tangents."""
    n_carry = len(body_jaxpr.outvars)
    cc, bc, init, t_bc, t_init = _lin_parts(args, cond_nconsts, body_nconsts, nz_bc, fc,
                                            n_carry)
    # the body's JVP program: (consts, carry, nonzero tangents) -> (carry, tangents)
    jj, j_consts = jvp_jaxpr(body_jaxpr, list(nz_bc) + list(fc), with_primals=True)

    def cond(carry):
        return eval_jaxpr(cond_jaxpr, [], *cc, *carry[:n_carry])[0]

    def body(carry):
        p, t = carry[:n_carry], carry[n_carry:]
        outs = eval_jaxpr(jj, [], *j_consts, *bc, *p, *t_bc, *t)
        new_p, new_t = outs[:n_carry], outs[n_carry:]
        return list(new_p) + [nt for nt, f in zip(new_t, fc) if f]

    outs = while_from_fns(cond, body, list(init) + list(t_init), "while_jvp")
    return outs[n_carry:]


def _lin_abstract(*avals, body_jaxpr, fc, **params):
    return [a for a, f in zip(body_jaxpr.out_avals, fc) if f]


def _lin_impl(*args, **params):
    params.pop("checkpoint_every")
    return [np.asarray(t) for t in joint_tangent(args, **params)]


def _lin_jvp(primals, tangents, **params):
    p = dict(params)
    p.pop("checkpoint_every")
    outs = bind(while_lin_p, *primals, **params)
    tans = [_zeros(get_aval(x)) if type(t) is Zero else t for t, x in zip(tangents, primals)]
    _, t_out = ad_jvp(lambda *a: joint_tangent(a, **p), tuple(primals), tuple(tans))
    return outs, list(t_out)


def _lin_batch(args, dims, **params):
    p = dict(params)
    p.pop("checkpoint_every")
    outs = vmap(lambda *a: joint_tangent(a, **p), in_axes=tuple(dims))(*args)
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


def bwd_program(body_jaxpr, body_nconsts, nz_bc, fc, bc_avals=None, carry_avals=None):
    """One backward step of the loop: ``(body consts, carry, carry cotangent) ->
    (cotangents of the differentiated consts, cotangent of the carry before the step)``,
    the body's `vjp_jaxpr` as a closed program (traced once per body and masks; the
    avals are the body's own, accepted for the lowering's call)."""
    del body_nconsts, bc_avals, carry_avals

    def make():
        bj, consts = vjp_jaxpr(body_jaxpr, list(nz_bc) + list(fc), fc)
        k = len(consts)
        # its constants become constant variables again (the lowering inlines it)
        return ClosedJaxpr(Jaxpr(bj.invars[:k], bj.invars[k:], bj.outvars, bj.eqns), consts)
    return derived_program(body_jaxpr, ("while_bwd", tuple(nz_bc), tuple(fc)), make)


def _transpose_impl_fn(args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_bc, fc,
                       checkpoint_every):
    """The reverse pass, in zerax operations (so it can itself be differentiated)."""
    n_carry = len(body_jaxpr.outvars)
    cc, bc, rest = split_operands(args, cond_nconsts, body_nconsts)
    init, ct = list(rest[:n_carry]), list(rest[n_carry:])
    bwd = bwd_program(body_jaxpr, body_nconsts, nz_bc, fc)
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
    cc, bc, init = split_operands(primals[:n_fixed], cond_nconsts, body_nconsts)
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
    size = batch_size_of(args, dims)
    cc, bc, init = split_operands(args, cond_nconsts, body_nconsts)
    d_cc, d_bc, d_k = split_operands(dims, cond_nconsts, body_nconsts)
    n = len(init)
    batched = [d is not None for d in d_k]
    cc0 = [c if d is None else bdim_at_front(c, d, size) for c, d in zip(cc, d_cc)]
    bc0 = [c if d is None else bdim_at_front(c, d, size) for c, d in zip(bc, d_bc)]
    ax_cc = tuple(None if d is None else 0 for d in d_cc)
    ax_bc = tuple(None if d is None else 0 for d in d_bc)

    ex_cc = [example_aval(c, d) for c, d in zip(cc, d_cc)]
    ex_bc = [example_aval(c, d) for c, d in zip(bc, d_bc)]
    ex_k = [example_aval(c, d) for c, d in zip(init, d_k)]
    # which carries vary over the batch (a fixpoint over the body); then the predicate
    batched, _ = batched_carries(body_jaxpr, ex_bc + ex_k,
                                 [a is not None for a in ax_bc] + batched, len(bc), n, size)
    pred_batched = batched_outputs(cond_jaxpr, ex_cc + ex_k,
                                   [a is not None for a in ax_cc] + batched, size)[0]
    if pred_batched:
        batched = [True] * n
    carry0 = [bdim_at_front(c, d, size) if b else c for c, d, b in zip(init, d_k, batched)]
    ax_k = tuple(0 if b else None for b in batched)
    cj, c_consts = batch_jaxpr(cond_jaxpr, ax_cc + ax_k, size, [0 if pred_batched else None])
    bj, b_consts = batch_jaxpr(body_jaxpr, ax_bc + ax_k, size, ax_k)

    def v_cond(*a):
        return eval_jaxpr(cj, [], *c_consts, *a)[0]

    def v_body(*a):
        return eval_jaxpr(bj, [], *b_consts, *a)

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
