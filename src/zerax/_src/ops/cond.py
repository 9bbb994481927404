"""``cond``: choose one of several sub-programs by an integer index.

All branches take the same operands (the constants of every branch, then the user's
operands) and return values of the same types.  The JVP evaluates the chosen branch
for the primal outputs, and a tangent-only version of the branches, linear in the
tangents, for the tangent outputs; its transpose runs transposed branches.  Under
vmap a batched index evaluates every branch and selects, as JAX does.  The
lowering is in ``backends/lowering/control_flow.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.ad_util import Zero, is_undefined
from ..core.core import Primitive, bind, get_aval
from ..ir.ir import eval_jaxpr
from ..ir.tracing import trace_closed, trace_to_jaxpr
from ..interpreters.ad import jvp_jaxpr, jvp_rules, transpose_jaxpr, transpose_rules
from ..interpreters.batching import batch_jaxpr, batch_rules, batch_size_of, bdim_at_front
from .elementwise import clamp, convert_element_type, ne, select_n
from .shape import broadcast_in_dim
from ..base.dtypes import kind as dtype_kind

cond_p = Primitive("cond", multiple_results=True)


def _clamped(index, n):
    return int(min(max(int(index), 0), n - 1))


def _cond_impl(index, *ops, branches):
    branch = branches[_clamped(np.asarray(index).item(), len(branches))]
    return [np.asarray(o) for o in eval_jaxpr(branch, [], *ops)]


cond_p.impl = _cond_impl
cond_p.abstract_eval = lambda index, *ops, branches: list(branches[0].out_avals)

def _uniform(programs, avals, name):
    """Branch programs ``(jaxpr, consts)`` (constants as leading inputs) as jaxprs that
    share one input list: every branch's constants, then the operands (of ``avals``).
    Returns (jaxprs, consts)."""
    all_consts = [c for _, consts in programs for c in consts]
    const_avals = [get_aval(c) for c in all_consts]
    jaxprs, offset = [], 0
    for inner, consts in programs:
        k = len(consts)

        def f(*args, _inner=inner, _lo=offset, _k=k):
            return eval_jaxpr(_inner, [], *args[_lo:_lo + _k], *args[len(all_consts):])
        jaxprs.append(trace_to_jaxpr(f, const_avals + list(avals), name).jaxpr)
        offset += k
    return tuple(jaxprs), all_consts


def cond_from_programs(index, programs, ops, name="cond"):
    """Bind ``cond`` for branch programs ``(jaxpr, consts)`` taking ``ops``."""
    jaxprs, consts = _uniform(programs, [get_aval(o) for o in ops], name)
    return bind(cond_p, index, *consts, *ops, branches=jaxprs)


def cond_from_fns(index, branch_fns, ops, name="cond"):
    """Bind ``cond`` for Python branch functions ``f(*ops) -> list`` (used by lax.cond
    and lax.switch)."""
    avals = [get_aval(o) for o in ops]
    programs = [trace_closed(f, avals, f"{name}_branch{i}") for i, f in enumerate(branch_fns)]
    return cond_from_programs(index, programs, ops, name)


# The rules below bind cond again, on the branches' derived programs (`jvp_jaxpr`,
# `transpose_jaxpr`, `batch_jaxpr`, each traced once per branch and mask).

def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    outs = bind(cond_p, index, *ops, branches=branches)
    t_ops = tangents[1:]
    nonzero = [type(t) is not Zero and dtype_kind(get_aval(o).dtype) in "fc"
               for t, o in zip(t_ops, ops)]
    out_avals = branches[0].out_avals
    if not any(nonzero):
        return outs, [Zero(a) for a in out_avals]
    nz_t = [t for t, m in zip(t_ops, nonzero) if m]
    t_outs = cond_from_programs(index, [jvp_jaxpr(b, nonzero) for b in branches],
                                list(ops) + nz_t, "jvp_cond")
    return outs, [t if dtype_kind(a.dtype) in "fc" else Zero(a) for t, a in zip(t_outs, out_avals)]


def _cond_transpose(cts, index, *args, branches):
    linear = [is_undefined(a) for a in args]
    defined = [a for a in args if not is_undefined(a)]
    cts = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c for c in cts]
    res = iter(cond_from_programs(index, [transpose_jaxpr(b, linear) for b in branches],
                                  defined + cts, "transpose_cond"))
    return [None] + [next(res) if m else None for m in linear]


def _cond_batch(args, dims, *, branches):
    index, *ops = args
    d_index, *d_ops = dims
    size = batch_size_of(args, dims)
    batched = [batch_jaxpr(b, d_ops, size) for b in branches]
    if d_index is None:
        return (cond_from_programs(index, batched, ops, "vmap_cond"),
                [0] * len(branches[0].outvars))
    # A batched index: evaluate every branch on the whole batch, then select per member.
    outs = [eval_jaxpr(bj, [], *consts, *ops) for bj, consts in batched]
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
