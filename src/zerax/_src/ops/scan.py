"""``scan``: a loop of fixed length over a carry and stacked inputs/outputs.

``scan_p(*consts, *init, *xs, jaxpr, length, reverse, num_consts, num_carry)``; the
body maps ``(consts, carry, x slices) -> (carry, y slices)``, and the outputs are the
final carry and the stacked ``y``s.

Reverse mode stores what the backward pass needs: the JVP runs a primal scan that
also records the carry before each step, and a tangent scan, linear in the tangents,
that reads those carries; transposing a scan gives a scan in the other direction over
the transposed body.  Every piece is itself a scan, so derivatives of any order, vmap
and jit apply to them.  The lowering is in
``backends/lowering/control_flow.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.ad_util import Zero, is_undefined
from ..interpreters.ad import linearize_flat, transpose_jaxpr
from ..core.core import Primitive, ShapedArray, Tracer, bind, get_aval
from ..ir.ir import convert_constvars, eval_jaxpr
from ..ir.tracing import trace_to_jaxpr
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import (batch_jaxpr, batch_rules, batch_size_of,
                                     batched_carries, bdim_at_front, example_aval, moveaxis)
from .elementwise import add
from ..base.dtypes import kind as dtype_kind

scan_p = Primitive("scan", multiple_results=True)


def _split(args, num_consts, num_carry):
    return (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
            list(args[num_consts + num_carry:]))


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(args, num_consts, num_carry)
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = eval_jaxpr(jaxpr, [], *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = np.asarray(y)
    return [np.asarray(c) for c in carry] + ys


def _scan_abstract(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [ShapedArray((length,) + tuple(a.shape), a.dtype)
                                     for a in outs[num_carry:]]


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract


def _slice_aval(a):
    return ShapedArray(tuple(get_aval(a).shape[1:]), get_aval(a).dtype)


def scan_from_fn(body, consts, init, xs, length, reverse=False, name="scan", unroll=1):
    """Trace ``body(consts, carry, x) -> (carry, ys)`` (flat lists) and bind scan_p.
    ``unroll``: copies of the body per iteration of the compiled loop."""
    nc, nk = len(consts), len(init)
    avals = [get_aval(c) for c in consts] + [get_aval(c) for c in init] + \
        [_slice_aval(x) for x in xs]

    def flat(*a):
        new_carry, ys = body(list(a[:nc]), list(a[nc:nc + nk]), list(a[nc + nk:]))
        return list(new_carry) + list(ys)
    closed = trace_to_jaxpr(flat, avals, name)
    jaxpr = convert_constvars(closed.jaxpr)
    outs = bind(scan_p, *closed.consts, *consts, *init, *xs, jaxpr=jaxpr, length=length,
                reverse=reverse, num_consts=len(closed.consts) + nc, num_carry=nk,
                unroll=max(1, int(unroll)))
    return outs[:nk], outs[nk:]


def _is_float(a):
    return dtype_kind(get_aval(a).dtype) in "fc"


def _zeros(a):
    a = a if isinstance(a, ShapedArray) else get_aval(a)
    return np.zeros(a.shape, a.dtype)


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, init, xs = _split(primals, num_consts, num_carry)
    t_consts, t_init, t_xs = _split(tangents, num_consts, num_carry)
    nz_c = [type(t) is not Zero and _is_float(c) for t, c in zip(t_consts, consts)]
    nz_x = [type(t) is not Zero and _is_float(x) for t, x in zip(t_xs, xs)]
    any_in = any(nz_c) or any(nz_x) or any(type(t) is not Zero for t in t_init)
    params = dict(jaxpr=jaxpr, length=length, reverse=reverse, num_consts=num_consts,
                  num_carry=num_carry, unroll=unroll)
    out_avals = _scan_abstract(*[get_aval(p) for p in primals], **params)
    if not any_in:
        return bind(scan_p, *primals, **params), [Zero(a) for a in out_avals]
    # Every float carry may pick up a tangent inside the loop: all of them are tracked.
    fc = [_is_float(c) for c in init]
    diff_mask = nz_c + fc + nz_x
    n_y = len(jaxpr.outvars) - num_carry

    # 1) the primal scan. Each step is linearized where it runs, and the values its
    #    linear part reads (residuals) are kept: step values are stacked as extra ys,
    #    while residuals that are the scan's own consts or xs are passed along as they
    #    are. The tangent scan then never recomputes the primal step.
    lin_box = []

    def record(cs, carry, x):
        ins = list(cs) + list(carry) + list(x)

        def step(*diff):
            it = iter(diff)
            return eval_jaxpr(jaxpr, [], *[next(it) if m else v
                                           for v, m in zip(ins, diff_mask)]), None
        outs, lin, _ = linearize_flat(step, [v for v, m in zip(ins, diff_mask) if m],
                                      "scan_step")
        kinds, stacked = [], []
        for r in lin.closed.consts:
            kind = _residual_kind(r, cs, x)
            if kind is None:
                kind = ("stack", len(stacked))
                stacked.append(r)
            kinds.append(kind)
        lin_box.append((lin, kinds))
        return outs[:num_carry], list(outs[num_carry:]) + stacked

    final, ys_and_res = scan_from_fn(record, consts, init, xs, length, reverse,
                                     "scan_record")
    ys, stacked_res = ys_and_res[:n_y], ys_and_res[n_y:]
    lin, kinds = lin_box[-1]
    res_consts = [consts[k] if kind == "const" else k for kind, k in kinds
                  if kind in ("const", "value")]
    res_xs = [xs[k] if kind == "x" else stacked_res[k] for kind, k in kinds
              if kind in ("x", "stack")]

    # 2) the tangent scan: the recorded linear step, applied to the tangents
    tc_nz = [t for t, m in zip(t_consts, nz_c) if m]
    tx_nz = [t for t, m in zip(t_xs, nz_x) if m]
    t_init_f = [_zeros(c) if type(t) is Zero else t for t, c, f in zip(t_init, init, fc) if f]
    n_rc, n_rx = len(res_consts), len(res_xs)

    def lin_body(cs, t_carry, x):
        rc, rx = iter(cs[:n_rc]), iter(x[:n_rx])
        residuals = [next(rc) if kind in ("const", "value") else next(rx) for kind, _ in kinds]
        t_in = list(cs[n_rc:]) + list(t_carry) + list(x[n_rx:])
        t_out = iter(eval_jaxpr(lin.closed.jaxpr, residuals,
                                *[t for t, m in zip(t_in, lin.in_mask) if m]))
        t_out = [next(t_out) if m else _zeros(a) for a, m in zip(lin.out_avals, lin.out_mask)]
        new_tc = [t for t, f in zip(t_out[:num_carry], fc) if f]
        t_ys = [t if dtype_kind(a.dtype) in "fc" else _zeros(a)
                for t, a in zip(t_out[num_carry:], jaxpr.out_avals[num_carry:])]
        return new_tc, t_ys

    t_final, t_ys = scan_from_fn(lin_body, res_consts + tc_nz, t_init_f,
                                 res_xs + tx_nz, length, reverse, "scan_tangent")
    it = iter(t_final)
    t_carry_out = [next(it) if f else Zero(get_aval(c)) for f, c in zip(fc, init)]
    t_ys_out = [t if dtype_kind(get_aval(y).dtype) in "fc" else Zero(get_aval(y))
                for t, y in zip(t_ys, ys)]
    return list(final) + list(ys), t_carry_out + t_ys_out


def _residual_kind(r, step_consts, step_xs):
    """How the tangent scan gets residual ``r`` of a linearized step: one of the scan's
    consts or xs as it is, a value that is not a traced step value (a constant), or
    None when it is computed in the step (then it is stacked)."""
    for kind, seq in (("const", step_consts), ("x", step_xs)):
        for k, v in enumerate(seq):
            if r is v:
                return (kind, k)
    if not isinstance(r, Tracer):
        return ("value", r)
    return None


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, init, xs = _split(args, num_consts, num_carry)
    lin_c = [is_undefined(c) for c in consts]
    lin_x = [is_undefined(x) for x in xs]
    # Every carry of a linear scan is linear; a defined one is an instantiated zero
    # tangent, transposed like the others and its cotangent dropped.
    carry_defined = [not is_undefined(c) for c in init]
    ct_carry = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c
                for c in cts[:num_carry]]
    ct_ys = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c
             for c in cts[num_carry:]]
    d_consts = [c for c, m in zip(consts, lin_c) if not m]
    d_xs = [x for x, m in zip(xs, lin_x) if not m]
    n_lc = sum(lin_c)
    acc0 = [np.zeros(c.aval.shape, c.aval.dtype) for c, m in zip(consts, lin_c) if m]
    # the transposed body: (defined consts, defined xs, carry and y cotangents) ->
    # cotangents of the linear consts, the carry and the linear xs
    tj, t_consts = transpose_jaxpr(jaxpr, lin_c + [True] * num_carry + lin_x)

    def body_t(cs, carry, x):
        ct_c, acc = carry[:num_carry], carry[num_carry:]
        dx, ct_y = x[:len(d_xs)], x[len(d_xs):]
        d = eval_jaxpr(tj, [], *t_consts, *cs, *dx, *ct_c, *ct_y)
        d_c, d_k, d_x = d[:n_lc], d[n_lc:n_lc + num_carry], d[n_lc + num_carry:]
        new_acc = [add(a, g) for a, g in zip(acc, d_c)]
        return list(d_k) + new_acc, d_x

    final, ct_xs = scan_from_fn(body_t, d_consts, ct_carry + acc0, d_xs + ct_ys, length,
                                not reverse, "scan_transpose")
    ct_init, ct_lc = final[:num_carry], iter(final[num_carry:])
    ct_init = [None if d else c for c, d in zip(ct_init, carry_defined)]
    ct_x_it = iter(ct_xs)
    return ([next(ct_lc) if m else None for m in lin_c] + list(ct_init) +
            [next(ct_x_it) if m else None for m in lin_x])


jvp_rules[scan_p] = _scan_jvp
transpose_rules[scan_p] = _scan_transpose


def _scan_batch(args, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    size = batch_size_of(args, dims)
    consts, init, xs = _split(args, num_consts, num_carry)
    d_c, d_k, d_x = _split(dims, num_consts, num_carry)
    # Which carries vary over the batch (a fixpoint over the body).
    example = ([example_aval(c, d) for c, d in zip(consts, d_c)] +
               [example_aval(c, d) for c, d in zip(init, d_k)] +
               [_slice_aval_of(example_aval(x, d)) for x, d in zip(xs, d_x)])
    carry_batched, _ = batched_carries(
        jaxpr, example, [d is not None for d in dims], num_consts, num_carry, size)
    consts0 = [c if d is None else bdim_at_front(c, d, size) for c, d in zip(consts, d_c)]
    init0 = [bdim_at_front(c, d, size) if b else c
             for c, d, b in zip(init, d_k, carry_batched)]
    xs1 = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, d_x)]
    # the batched body: batched operands along axis 0, unbatched carries left unbatched
    bj, b_consts = batch_jaxpr(
        jaxpr, [d if d is None else 0 for d in d_c] + [0 if b else None for b in carry_batched]
        + [None if d is None else 0 for d in d_x], size,
        [0 if b else None for b in carry_batched] + [0] * (len(jaxpr.outvars) - num_carry))

    def body(cs, carry, x):
        outs = eval_jaxpr(bj, [], *b_consts, *cs, *carry, *x)
        return outs[:num_carry], outs[num_carry:]

    final, ys = scan_from_fn(body, consts0, init0, xs1, length, reverse, "vmap_scan")
    return list(final) + list(ys), [0 if b else None for b in carry_batched] + [1] * len(ys)


def _slice_aval_of(aval):
    return ShapedArray(tuple(aval.shape[1:]), aval.dtype)


batch_rules[scan_p] = _scan_batch
