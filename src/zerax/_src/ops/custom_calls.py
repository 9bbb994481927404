"""The call primitives of the custom-derivative API: their semantics and rules.

``custom_jvp_call`` and ``custom_vjp_call`` record a call of a function with a
user-supplied derivative (the rules travel as parameters), ``checkpoint`` (JAX's
``remat``) a call whose forward pass is recomputed in the backward pass, with
``checkpoint_jvp`` its JVP program, and ``function_call`` a call of a seed-style
``zerax.Function``.  The user API that binds them is ``api/custom.py``; the JVP trace's
``custom_lin`` (a custom_vjp's tangent equation) is in ``interpreters/ad.py``.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..core.ad_util import Zero, instantiate
from ..core.core import Primitive, ShapedArray, bind, get_aval
from ..interpreters.ad import custom_vjp_jvp, jvp as ad_jvp, jvp_rules, transpose_rules
from ..interpreters.ad import vjp as ad_vjp
from ..interpreters.batching import (batch_by_loop, batch_jaxpr, batch_rules, batch_size_of,
                                     batched_custom_call, bdim_at_front)
from ..ir.ir import convert_constvars, eval_jaxpr
from ..ir.tracing import record_rules, trace_closed, trace_to_jaxpr
from ..base.dtypes import kind as dtype_kind


def _eval_call_impl(*args, call_jaxpr, **params):
    outs = eval_jaxpr(call_jaxpr, [], *args)
    return [np.asarray(o) for o in outs]


def _call_abstract(*avals, call_jaxpr, **params):
    return list(call_jaxpr.out_avals)


def _record(prim, trace, fun, rules, args, name):
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args], name)
    return bind(prim, *closed.consts, *args, call_jaxpr=convert_constvars(closed.jaxpr),
                num_consts=len(closed.consts), **rules)


# --------------------------------------------------------------------------- custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.impl = _eval_call_impl
custom_jvp_call_p.abstract_eval = _call_abstract
custom_jvp_call_p.unsupported["transpose"] = "it is never linear; its JVP rule is used instead"
record_rules[custom_jvp_call_p] = lambda trace, fun, jvp, args, params: _record(
    custom_jvp_call_p, trace, fun, {"jvp": jvp}, args, "custom_jvp")


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts):
    outs, t_outs = jvp(list(primals[num_consts:]),
                       [instantiate(t) for t in tangents[num_consts:]])
    return outs, t_outs


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


# --------------------------------------------------------------------------- custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.impl = _eval_call_impl
custom_vjp_call_p.abstract_eval = _call_abstract
custom_vjp_call_p.unsupported["transpose"] = "it is never linear; custom_lin is transposed instead"
record_rules[custom_vjp_call_p] = lambda trace, fun, fwd, bwd, args, params: _record(
    custom_vjp_call_p, trace, fun, {"fwd": fwd, "bwd": bwd, **params}, args, "custom_vjp")


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts,
                         fwd_jvp=None):
    return custom_vjp_jvp(fwd, bwd, list(primals[num_consts:]), list(tangents[num_consts:]),
                          fwd_jvp)


def _with_const_cts(bwd, call_jaxpr, num_consts):
    def bwd_all(res, cts):
        return [np.zeros(a.shape, a.dtype) for a in call_jaxpr.in_avals[:num_consts]] + \
            list(bwd(res, cts))
    return bwd_all


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


# --------------------------------------------------------------------------- checkpoint

remat_p = Primitive("checkpoint", multiple_results=True)
remat_p.impl = _eval_call_impl
remat_p.abstract_eval = lambda *avals, jaxpr: list(jaxpr.out_avals)
remat_p.impl = lambda *args, jaxpr: _eval_call_impl(*args, call_jaxpr=jaxpr)
remat_p.unsupported["transpose"] = "it is never linear; checkpoint_jvp is transposed instead"
remat_jvp_p = Primitive("checkpoint_jvp", multiple_results=True)


def _remat_jvp_fn(jaxpr, args):
    n = len(jaxpr.invars)
    primals, tangents = args[:n], args[n:]
    _, t_out = ad_jvp(lambda *p: eval_jaxpr(jaxpr, [], *p), tuple(primals), tuple(tangents))
    return [t if dtype_kind(a.dtype) in "fc" else np.zeros(a.shape, a.dtype)
            for t, a in zip(t_out, jaxpr.out_avals)]


def _remat_jvp(primals, tangents, *, jaxpr):
    outs = bind(remat_p, *primals, jaxpr=jaxpr)
    avals = jaxpr.out_avals
    if all(type(t) is Zero for t in tangents):
        return outs, [Zero(a) for a in avals]
    t_outs = bind(remat_jvp_p, *primals, *[instantiate(t) for t in tangents], jaxpr=jaxpr)
    return outs, [t if dtype_kind(a.dtype) in "fc" else Zero(a) for t, a in zip(t_outs, avals)]


def _remat_jvp_transpose(cts, *args, jaxpr):
    # The rematerialisation: the forward pass runs again here, at transpose time.
    n = len(jaxpr.invars)
    primals = args[:n]
    _, f_vjp = ad_vjp(lambda *p: eval_jaxpr(jaxpr, [], *p), *primals)
    cts = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c for c in cts]
    in_cts = f_vjp(list(cts))
    return [None] * n + [c if dtype_kind(a.dtype) in "fc" else None
                         for c, a in zip(in_cts, jaxpr.in_avals)]


def _remat_jvp_jvp(primals, tangents, *, jaxpr):
    outs = bind(remat_jvp_p, *primals, jaxpr=jaxpr)
    _, t_outs = ad_jvp(lambda *a: _remat_jvp_fn(jaxpr, a), tuple(primals),
                       tuple(instantiate(t) for t in tangents))
    return outs, list(t_outs)


jvp_rules[remat_p] = _remat_jvp
remat_jvp_p.impl = lambda *args, jaxpr: [np.asarray(t) for t in _remat_jvp_fn(jaxpr, args)]
remat_jvp_p.abstract_eval = lambda *avals, jaxpr: list(jaxpr.out_avals)
jvp_rules[remat_jvp_p] = _remat_jvp_jvp
transpose_rules[remat_jvp_p] = _remat_jvp_transpose


def remat_jvp_program(jaxpr, in_avals):
    """The JVP of a checkpointed program as a program ``(consts, primals, tangents) ->
    tangent outputs``: ``(jaxpr, consts)``, what a backend inlines for checkpoint_jvp."""
    return trace_closed(lambda *a: _remat_jvp_fn(jaxpr, a), in_avals, "checkpoint_jvp")


# --------------------------------------------------------------------------- Function

function_call_p = Primitive("function_call", multiple_results=True)
function_call_p.unsupported["jvp"] = "a zerax.Function is differentiated through its backward"
function_call_p.unsupported["transpose"] = "a zerax.Function is differentiated through its backward"
function_call_p.unsupported["lower"] = (
    "a zerax.Function's forward is NumPy code, which runs in Python, not in a compiled "
    "program; call it outside jit, or write the forward with zerax operations")
# (the kernel IR's host calls could run it, but a compiled program stays zerax code)


def _function_impl(*xs, fn):
    out = fn.forward(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o) for o in outs]


@functools.lru_cache(maxsize=256)
def _function_out_avals(fn, in_avals):
    dummies = [np.zeros(a.shape, a.dtype) for a in in_avals]
    return tuple(ShapedArray(o.shape, o.dtype) for o in _function_impl(*dummies, fn=fn))


function_call_p.impl = _function_impl
function_call_p.abstract_eval = lambda *avals, fn: list(_function_out_avals(fn, tuple(avals)))


# --------------------------------------------------------------------------- batching

def _custom_jvp_call_batch(args, dims, *, call_jaxpr, jvp, num_consts):

    def fun(*a):
        return eval_jaxpr(call_jaxpr, [], *a)

    def jvp_all(primals, tangents):
        return jvp(list(primals[num_consts:]), list(tangents[num_consts:]))

    outs = batched_custom_call(custom_jvp_call_p, fun, (jvp_all,), args, dims,
                               batch_size_of(args, dims))
    return outs, [0] * len(outs)


def _custom_vjp_call_batch(args, dims, *, call_jaxpr, fwd, bwd, num_consts, fwd_jvp=None):

    def fun(*a):
        return eval_jaxpr(call_jaxpr, [], *a)

    def fwd_all(*a):
        return fwd(*a[num_consts:])

    jvp_all = None if fwd_jvp is None else (
        lambda p, t: fwd_jvp(list(p[num_consts:]), list(t[num_consts:])))
    outs = batched_custom_call(custom_vjp_call_p, fun,
                               (fwd_all, _with_const_cts(bwd, call_jaxpr, num_consts), jvp_all),
                               args, dims, batch_size_of(args, dims))
    return outs, [0] * len(outs)


def _remat_batch(prim):
    def rule(args, dims, *, jaxpr):
        size = batch_size_of(args, dims)
        args0 = [bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        n = len(jaxpr.invars)
        bj, consts = batch_jaxpr(jaxpr, [0] * n, size)
        if prim is remat_jvp_p:
            # checkpoint_jvp's operands are (primals, tangents) of the same program.
            outs = bind(prim, *args0, jaxpr=_with_consts_as_inputs(bj, consts))
        else:
            outs = bind(prim, *consts, *args0, jaxpr=bj)
        return outs, [0] * len(outs)
    return rule


def _with_consts_as_inputs(jaxpr, consts):
    if consts:
        raise errors.NotSupportedError(
            "vmap of the forward-mode derivative of a checkpointed function that closes "
            "over batched values is not supported")
    return jaxpr


def _function_call_batch(args, dims, *, fn):
    # A Function's forward is NumPy code for one example: run it example by example.
    return batch_by_loop(function_call_p, args, dims, {"fn": fn})


batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batch_rules[remat_p] = _remat_batch(remat_p)
batch_rules[remat_jvp_p] = _remat_batch(remat_jvp_p)
batch_rules[function_call_p] = _function_call_batch


