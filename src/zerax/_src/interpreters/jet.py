"""Taylor mode (jet): a truncated power series pushed through a program in one pass.

A `JetTracer` pairs a primal ``x0`` with the Taylor coefficients ``x1 .. xK`` of a path
``x(t) = x0 + x1 t + x2 t^2 + ... + xK t^K`` (normalized coefficients, not
derivatives: ``x_k = x^(k)(0) / k!``; the public ``jet`` converts).  Each primitive's
rule maps the input series to the output's coefficients, with O(K^2) work for the
elementwise and bilinear ones, so the first K derivatives along a direction cost one
pass instead of K nested JVPs.  A coefficient that is known to be zero is ``None``
(it is never materialised); a whole series that is zero is ``None`` too, and a value
with a zero series is not wrapped at all.

This module owns the trace, the rule table ``jet_rules`` (filled in by
``ops/taylor.py``, beside the primitives' other semantics), `jet_flat` (a function of
flat arrays run on series) and `jet_jaxpr` (the series program of a sub-program: what
jit, checkpoint, cond, scan and while bind for their bodies, so the series of a loop
carry advances with the loop).  ``zerax.jet`` and ``zerax.taylor`` (``api/taylor.py``)
are the public faces.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core.core import Trace, bind, get_aval, new_trace, rule_table
from ..ir.ir import eval_jaxpr
from ..ir.tracing import trace_closed
from .ad import PrimalTracer, derived_program

# prim -> rule(primals, series, **params) -> (primal_out, series_out).  ``series[i]``
# is None (operand i has no series) or a list of K coefficients, each an array or None
# (known zero); ``series_out`` has the same form (one per output for primitives with
# several results).
jet_rules = rule_table("jet", "Taylor mode (jet)")

# Installed by ops/taylor.py (a layer above): how a custom_jvp function's series comes
# from its JVP rule.  ``custom_jvp(jvp_rule, primals, series, order) -> (outs, series)``.
_hooks: dict = {}


def install_custom_jvp(rule) -> None:
    _hooks["custom_jvp"] = rule


def is_float(x) -> bool:
    return dtype_kind(get_aval(x).dtype) in "fc"


class JetTracer(PrimalTracer):
    """A primal and its ``terms`` (as under jvp, Python control flow on the value is
    decided by its primal, and the series follows the branch taken)."""
    __slots__ = ("terms",)

    def __init__(self, trace, primal, terms):
        self._trace = trace
        self.primal = primal
        self.terms = terms


class JetTrace(Trace):
    """Every value carries the Taylor coefficients of its path, to ``order``."""

    __slots__ = ("order",)

    def __init__(self, level, order: int):
        super().__init__(level, "jet")
        self.order = order

    def split(self, x):
        """``(primal, series or None)`` of a value seen by this trace."""
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.terms
        return x, None

    def wrap(self, primal, terms):
        if terms is None or not is_float(primal) or all(t is None for t in terms):
            return primal
        if len(terms) != self.order:
            raise errors.ZeraxInternalError(
                f"a series of {len(terms)} terms in a jet of order {self.order}")
        return JetTracer(self, primal, list(terms))

    def process_primitive(self, prim, args, params):
        primals, series = [], []
        for a in args:
            p, s = self.split(a)
            primals.append(p)
            series.append(s)
        if all(s is None for s in series):
            return bind(prim, *primals, **params)
        rule = jet_rules.get(prim)
        if rule is None:
            raise prim.rule_missing("Taylor mode (jet)", "jet")
        out, s_out = rule(primals, series, **params)
        if prim.multiple_results:
            return [self.wrap(o, s) for o, s in zip(out, s_out)]
        return self.wrap(out, s_out)

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        # The series of a custom_jvp function comes from its JVP rule (differentiated
        # again for the higher coefficients), so jet agrees with nested jvp.
        primals, series = zip(*[self.split(a) for a in args]) if args else ((), ())
        if all(s is None for s in series):
            return fun(*primals)
        outs, s_out = _hooks["custom_jvp"](jvp_rule, list(primals), list(series), self.order)
        return [self.wrap(o, s) for o, s in zip(outs, s_out)]

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        # Only the primal function is known in forward mode: its series is the one of the
        # function as written (bwd describes reverse mode only).
        return fun(*args)


def jet_flat(fun, primals, series, order: int):
    """Run ``fun(*values) -> list`` on values carrying the Taylor series ``series`` (one
    per primal, None for none) to ``order``: ``(outputs, their series)``."""
    with new_trace(JetTrace, order) as trace:
        ins = [trace.wrap(p, s) for p, s in zip(primals, series)]
        outs = fun(*ins)
        pairs = [trace.split(o) for o in outs]
    return [p for p, _ in pairs], [s for _, s in pairs]


def jet_jaxpr(jaxpr, order: int, mask):
    """The series program of ``jaxpr``: ``(primal inputs, the ``order`` coefficients of
    each input flagged in ``mask``) -> (primal outputs, the ``order`` coefficients of
    each output)``, the coefficients of every output instantiated (zeros where known to
    vanish).  ``(jaxpr, consts)`` with the constants as leading inputs, traced once per
    program, order and mask."""
    mask = tuple(bool(m) for m in mask)

    def make():
        n = len(jaxpr.invars)

        def f(*args):
            rest = iter(args[n:])
            series = [[next(rest) for _ in range(order)] if m else None for m in mask]
            outs, s_out = jet_flat(lambda *a: eval_jaxpr(jaxpr, [], *a), list(args[:n]),
                                   series, order)
            terms = []
            for a, s in zip(jaxpr.out_avals, s_out):
                for k in range(order):
                    t = None if s is None else s[k]
                    terms.append(np.zeros(a.shape, a.dtype) if t is None else t)
            return list(outs) + terms
        avals = list(jaxpr.in_avals) + [a for a, m in zip(jaxpr.in_avals, mask) if m
                                        for _ in range(order)]
        return trace_closed(f, avals, "jet")
    return derived_program(jaxpr, ("jet", order, mask), make)


def split_series_outputs(outs, n_out: int, order: int):
    """The outputs of a `jet_jaxpr` program: ``(primals, [K coefficients per output])``."""
    primals, terms = list(outs[:n_out]), list(outs[n_out:])
    return primals, [terms[i * order:(i + 1) * order] for i in range(n_out)]
