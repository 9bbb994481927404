"""``cond``: choose one of several sub-programs by an integer index.

All branches take the same operands (the constants of every branch, then the user's
operands) and return values of the same types.  The JVP evaluates the chosen branch
for the primal outputs, and a tangent-only version of the branches, linear in the
tangents, for the tangent outputs; its transpose runs transposed branches.  Under
vmap a batched index evaluates every branch and selects, as JAX does.  The Numba
lowering is in ``backends/numba/lower_control_flow.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.ad_util import Zero, is_undefined
from ..interpreters.ad import jvp as ad_jvp, vjp as ad_vjp
from ..core.core import Primitive, bind, get_aval
from ..ir.ir import convert_constvars, eval_jaxpr
from ..ir.tracing import trace_to_jaxpr
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, batch_size_of, bdim_at_front, vmap
from .elementwise import clamp, convert_element_type, ne, select_n
from .shape import broadcast_in_dim

cond_p = Primitive("cond", multiple_results=True)


def _clamped(index, n):
    return int(min(max(int(index), 0), n - 1))


def _cond_impl(index, *ops, branches):
    branch = branches[_clamped(np.asarray(index).item(), len(branches))]
    return [np.asarray(o) for o in eval_jaxpr(branch, [], *ops)]


cond_p.impl = _cond_impl
cond_p.abstract_eval = lambda index, *ops, branches: list(branches[0].out_avals)

def _uniform(branch_fns, avals, name):
    """Trace branches ``f(*ops) -> list`` into jaxprs sharing one input list
    (all branches' constants, then the operands).  Returns (jaxprs, consts)."""
    closed = [trace_to_jaxpr(f, avals, f"{name}_branch{i}") for i, f in enumerate(branch_fns)]
    all_consts = [c for cj in closed for c in cj.consts]
    const_avals = [get_aval(c) for c in all_consts]
    jaxprs, offset = [], 0
    for cj in closed:
        k = len(cj.consts)
        inner = convert_constvars(cj.jaxpr)

        def f(*args, _inner=inner, _lo=offset, _k=k):
            consts = args[_lo:_lo + _k]
            ops = args[len(all_consts):]
            return eval_jaxpr(_inner, [], *consts, *ops)
        jaxprs.append(trace_to_jaxpr(f, const_avals + list(avals), name).jaxpr)
        offset += k
    return tuple(jaxprs), all_consts


def cond_from_fns(index, branch_fns, ops, name="cond"):
    """Bind ``cond`` for Python branch functions (used by lax.cond / lax.switch and by
    the rules below)."""
    avals = [get_aval(o) for o in ops]
    jaxprs, consts = _uniform(branch_fns, avals, name)
    return bind(cond_p, index, *consts, *ops, branches=jaxprs)


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    outs = bind(cond_p, index, *ops, branches=branches)
    t_ops = tangents[1:]
    nonzero = [type(t) is not Zero and get_aval(o).dtype.kind in "fc"
               for t, o in zip(t_ops, ops)]
    out_avals = branches[0].out_avals
    if not any(nonzero):
        return outs, [Zero(a) for a in out_avals]
    n = len(ops)

    def tangent_branch(b):
        def f(*args):
            prim, ts = args[:n], iter(args[n:])
            tans = [next(ts) if m else np.zeros(get_aval(o).shape, get_aval(o).dtype)
                    for m, o in zip(nonzero, ops)]
            _, t_out = ad_jvp(lambda *p: eval_jaxpr(b, [], *p), tuple(prim), tuple(tans))
            return [t if a.dtype.kind in "fc" else np.zeros(a.shape, a.dtype)
                    for t, a in zip(t_out, out_avals)]
        return f

    nz_t = [t for t, m in zip(t_ops, nonzero) if m]
    t_outs = cond_from_fns(index, [tangent_branch(b) for b in branches], list(ops) + nz_t,
                           "jvp_cond")
    return outs, [t if a.dtype.kind in "fc" else Zero(a) for t, a in zip(t_outs, out_avals)]


def _cond_transpose(cts, index, *args, branches):
    linear = [is_undefined(a) for a in args]
    defined = [a for a in args if not is_undefined(a)]
    lin_avals = [a.aval for a in args if is_undefined(a)]
    cts = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c for c in cts]

    def transposed(b):
        def f(*xs):
            dvals, ct = xs[:len(defined)], xs[len(defined):]

            def f_lin(*lin):
                li, di = iter(lin), iter(dvals)
                return eval_jaxpr(b, [], *[next(li) if m else next(di) for m in linear])
            zeros = [np.zeros(a.shape, a.dtype) for a in lin_avals]
            _, pull = ad_vjp(f_lin, *zeros)
            return list(pull(list(ct)))
        return f

    res = iter(cond_from_fns(index, [transposed(b) for b in branches], defined + cts,
                             "transpose_cond"))
    return [None] + [next(res) if m else None for m in linear]


def _cond_batch(args, dims, *, branches):
    index, *ops = args
    d_index, *d_ops = dims
    size = batch_size_of(args, dims)
    if d_index is None:
        fns = [lambda *a, _b=b: list(vmap(lambda *x: eval_jaxpr(_b, [], *x),
                                          in_axes=tuple(d_ops), axis_size=size)(*a))
               for b in branches]
        return cond_from_fns(index, fns, ops, "vmap_cond"), [0] * len(branches[0].outvars)
    # A batched index: evaluate every branch on the whole batch, then select per member.
    outs = [vmap(lambda *x, _b=b: eval_jaxpr(_b, [], *x), in_axes=tuple(d_ops),
                 axis_size=size)(*ops) for b in branches]
    idx = bdim_at_front(index, d_index, size)
    idx = convert_element_type(_clamp_index(idx, len(branches)), np.int32)
    selected = []
    for k in range(len(outs[0])):
        cases = [o[k] for o in outs]
        shape = tuple(cases[0].shape)
        pred = broadcast_in_dim(idx, shape, (0,)) if len(shape) > 1 else idx
        if len(branches) == 2:
            pred = ne(pred, np.zeros((), pred.dtype))
        selected.append(select_n(pred, *cases))
    return selected, [0] * len(selected)


def _clamp_index(idx, n):
    return clamp(np.zeros((), idx.dtype), idx, np.array(n - 1, idx.dtype))


jvp_rules[cond_p] = _cond_jvp
transpose_rules[cond_p] = _cond_transpose
batch_rules[cond_p] = _cond_batch
