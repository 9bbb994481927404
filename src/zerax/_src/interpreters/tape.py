"""Eager reverse mode on a tape: `grad`, `value_and_grad` and `vjp` with no transform live.

Called outside every transform on concrete inputs, reverse mode needs no IR: the
function runs once on `TapeTracer`s, each holding a concrete NumPy value; every
primitive applied to them runs its NumPy implementation at once, and the tape notes the
primitive's VJP rules (``prim.vjp``, beside its other rules in ``ops/``), its operands
and its result.  Back-propagation is a loop over the tape in reverse (never recursion),
calling those rules on NumPy values.  This is the path of an eager ``grad``; the
general path (`ad.linearize_flat` + `ad.backward_pass`) builds tracers of two traces and
an IR program per primitive, several times the Python work for the same result.

Everything a VJP rule does not cover is still exact, because the tape falls back per
primitive, not per function: a primitive without VJP rules (control flow, scatter,
jit calls, ...) and every custom_jvp/custom_vjp call is linearized on its own by the
general path, and its small linear program is transposed in the loop.  Transforms
inside the function (an inner ``grad`` for higher orders, ``vmap``, ``jit``) start
traces above the tape's, whose primitives reach the tape like any others.

A ``vjp`` function may be called later with a traced cotangent (``jacrev`` maps it with
vmap): then the tape is replayed once under the general path's linearization (the
recorded primitives, not the user's function) and that linear program is transposed
with zerax operations, which the cotangent's transform sees.
"""

from __future__ import annotations

import sys

import numpy as np

from ..core import tree
from . import ad
from .ad import (JVPTracer, Zero, backward_pass, instantiate, linearize_flat, split_aux,
                 zeros_for)
from ..core.api_util import as_input
from ..core.ad_util import add_any
from ..core.array import Array, DeviceArray, device_buffers
from ..core.core import (ShapedArray, Trace, Tracer, _trace_stack, bind, find_top_trace,
                         new_trace, rule_table, run_impl)
from ..ir.ir import eval_jaxpr
from ..base.dtypes import kind as dtype_kind

# The fast path can be switched off (tests compare it with the general path).
enabled = True


# prim -> the eager tape's reverse rules on NumPy values: ``vjp[i](ct, ans, *operands,
# **params)`` is operand i's cotangent (None at i: no dependence); a function of the
# operand index instead of a tuple is allowed; no entry: the tape linearizes the primitive
vjp_rules = rule_table("vjp", "the eager tape (grad without a transform)")


class disabled:
    """``with tape.disabled():`` every reverse-mode call takes the general path."""

    def __enter__(self):
        global enabled
        self._old, enabled = enabled, False

    def __exit__(self, *exc):
        global enabled
        enabled = self._old
        return False


def _value_and_node(trace, x):
    """(the value, its tape node) of ``x`` for ``trace``: a tracer of that trace gives its
    concrete value as an Array and its node; anything else is itself, with no node."""
    if type(x) is TapeTracer and x._trace is trace:
        return Array._wrap(x.val), x.node
    return x, None


class TapeTracer(Tracer):
    """A concrete value whose cotangent the tape will compute (node: its slot).  Shape
    and dtype are plain attributes: user code reads them on every operation."""

    __slots__ = ("dtype", "ndim", "node", "shape", "val")

    def __init__(self, trace, val, node):
        self._trace = trace
        self.val = val
        self.node = node
        self.shape = val.shape
        self.dtype = val.dtype
        self.ndim = val.ndim

    @property
    def aval(self):
        return ShapedArray(self.val.shape, self.val.dtype)

    @property
    def size(self):
        return self.val.size

    def to_concrete(self, what):
        return self.val  # Python control flow follows the value, as under jvp


def _value(a):
    t = type(a)
    if t is Array:
        return a._value
    if t is np.ndarray:
        return a
    if t is DeviceArray:   # a device's buffer (a GPU's, a sharded array's) stays there
        return a._value
    return np.asarray(a)


def _accumulate(old, c):
    """The sum of two cotangents (NumPy's, or through zerax for device buffers)."""
    if type(old) is np.ndarray and type(c) is np.ndarray:
        return old + c
    return add_any(Array._wrap(old), Array._wrap(c))._value


def _summed(rule):
    """A rule for a 0-d operand broadcast against a larger one: sum its cotangent."""
    def summed(ct, ans, *vals, **params):
        c = rule(ct, ans, *vals, **params)
        c = c._value if type(c) is Array else np.asarray(c)
        return np.sum(c, dtype=c.dtype)
    return summed


def _on_device(args) -> bool:
    """Whether a primitive's operands hold a device buffer (see core.array)."""
    return any(type(a) is DeviceArray or type(a) is TapeTracer and type(a.val) in device_buffers
               for a in args)


class TapeTrace(Trace):
    """Runs primitives at once on concrete values and notes how to go back.

    ``entries`` holds, in program order, either
      (out_node, pairs, ans, vals, params, prim)    pairs: (in_node, rule, operand index)
    or, for a primitive linearized by the general path,
      (None, out_nodes, closed_jaxpr, in_nodes, out_values)
    """

    __slots__ = ("entries", "n")

    def __init__(self, level, name=""):
        super().__init__(level, name)
        self.entries = []
        self.n = 0

    def new_input(self, value):
        t = TapeTracer(self, value, self.n)
        self.n += 1
        return t

    def process_primitive(self, prim, args, params):
        rules = vjp_rules.get(prim)
        if rules is None or prim.multiple_results and rules != () or \
                device_buffers and _on_device(args):
            # (operands holding a device buffer, which the NumPy rules here cannot take,
            # also take the general path: its eager steps run on the buffer's backend)
            return self._linearized(prim, lambda full: bind(prim, *full, **params), args,
                                    prim.multiple_results)
        vals, tracked = [], []
        for i, a in enumerate(args):
            t = type(a)
            if t is TapeTracer:
                vals.append(a.val)
                tracked.append(i)
            elif t is Array:
                vals.append(a._value)
            elif t is np.ndarray:
                vals.append(a)
            else:
                vals.append(np.asarray(a))
        try:
            ans = prim.impl(*vals, **params)
        except (ValueError, TypeError, IndexError):
            ans = run_impl(prim, vals, params)  # raises the zerax error
        if prim.multiple_results:
            return [Array._wrap(o) for o in ans]
        if not isinstance(ans, (np.ndarray, np.generic)):
            ans = np.asarray(ans)
        if not rules or dtype_kind(ans.dtype) not in "fc":
            return Array._wrap(ans)
        pairs = []
        for i in tracked:
            if type(rules) is tuple:
                rule = rules[i] if i < len(rules) else None
            else:
                rule = rules(i)
            if rule is None:
                continue
            if prim.elementwise and ans.ndim and not vals[i].ndim:
                rule = _summed(rule)
            pairs.append((args[i].node, rule, i))
        if not pairs:
            return Array._wrap(ans)
        node = self.n
        self.n = node + 1
        self.entries.append((node, pairs, ans, vals, params, prim))
        return TapeTracer(self, ans, node)

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        return self._linearized(
            prim, lambda full: find_top_trace(full).process_custom_jvp(
                prim, fun, jvp_rule, full, params), args, True)

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        return self._linearized(
            prim, lambda full: find_top_trace(full).process_custom_vjp(
                prim, fun, fwd, bwd, full, params), args, True)

    def _linearized(self, prim, call, args, multiple):
        """Apply ``call(operands)`` under the general path's linearization, with the
        tape's values as the point; the tape keeps the small linear program."""
        vals, nodes = map(list, zip(*[_value_and_node(self, a) for a in args])) \
            if args else ([], [])

        def flat(*xs):
            it = iter(xs)
            full = [v if n is None else next(it) for v, n in zip(vals, nodes)]
            out = call(full)
            return (list(out) if multiple else [out]), None

        diff = [v for v, n in zip(vals, nodes) if n is not None]
        outs, lin, _ = linearize_flat(flat, diff, prim.name, cse=False)
        res, out_nodes = [], []
        for o, m in zip(outs, lin.out_mask):
            if m:
                out_nodes.append(self.n)
                res.append(TapeTracer(self, _value(o), self.n))
                self.n += 1
            else:
                res.append(o)
        if out_nodes:
            self.entries.append((None, out_nodes, lin.closed,
                                 [n for n in nodes if n is not None],
                                 [r.val for r in res if type(r) is TapeTracer]))
        return res if multiple else res[0]


# --------------------------------------------------------------------------- backward


def _backward_concrete(entries, n, seeds):
    """Cotangents of every node, given concrete ``seeds`` [(node, ndarray)]."""
    cts = [None] * n
    for node, ct in seeds:
        old = cts[node]
        cts[node] = ct if old is None else old + ct
    for entry in reversed(entries):
        out = entry[0]
        if out is None:
            _, out_nodes, closed, in_nodes, _ = entry
            outs = [cts[o] for o in out_nodes]
            if all(c is None for c in outs):
                continue
            for o in out_nodes:
                cts[o] = None
            # User code may run here (custom_vjp bwd, Function.backward): it gets
            # immutable Arrays, never the tape's (possibly shared) buffers.
            outs = [None if c is None else Array._wrap(c) for c in outs]
            for node, c in zip(in_nodes, backward_pass(closed.jaxpr, closed.consts, outs)):
                if c is None or type(c) is Zero:
                    continue
                c = _value(c)
                old = cts[node]
                cts[node] = c if old is None else _accumulate(old, c)
            continue
        ct = cts[out]
        if ct is None:
            continue
        cts[out] = None
        _, pairs, ans, vals, params, _ = entry
        for node, rule, _ in pairs:
            c = rule(ct, ans, *vals, **params)
            if c is None:
                continue
            if type(c) is not np.ndarray:
                c = _value(c)
            old = cts[node]
            cts[node] = c if old is None else _accumulate(old, c)
    return cts


def _linearize_tape(tp):
    """The tape as one linear program (an `ad.Linearized` of the tape's float inputs),
    for cotangents traced by a live transform: the recorded primitives are replayed
    under the general path's linearization (primal values are recomputed by NumPy; the
    user's function is not run again) and a fallback entry's linear program is inlined."""

    in_nodes = [n for n in tp.in_nodes if n is not None]
    out_nodes = [n for n in tp.out_nodes if n is not None]

    def replay(*xs):
        env = [None] * tp.n
        for node, x in zip(in_nodes, xs):
            env[node] = x
        jvp_trace = xs[0]._trace
        for entry in tp.entries:
            if entry[0] is None:
                _, outs, closed, ins, out_vals = entry
                tangents = []
                for node in ins:
                    x = env[node]
                    tangents.append(x.tangent if type(x) is JVPTracer and x._trace is jvp_trace
                                    else instantiate(Zero(ShapedArray(x.shape, x.dtype))))
                t_outs = eval_jaxpr(closed.jaxpr, closed.consts, *tangents)
                for node, v, t in zip(outs, out_vals, t_outs):
                    env[node] = JVPTracer(jvp_trace, Array._wrap(v), t)
            else:
                node, pairs, _, vals, params, prim = entry
                args = [Array._wrap(v) for v in vals]
                for in_node, _, i in pairs:
                    args[i] = env[in_node]
                env[node] = bind(prim, *args, **params)
        return [env[n] for n in out_nodes], None

    _, lin, _ = linearize_flat(replay, [Array._wrap(v) for v in tp.in_vals], "vjp")
    return lin


class Tape:
    """A finished tape: the VJP of a function at a point (ad.Linearized's sibling)."""

    def __init__(self, entries, n, in_avals, in_nodes, in_vals, out_avals, out_nodes):
        self.entries = entries
        self.n = n
        self.in_avals = in_avals
        self.in_nodes = in_nodes     # node of each flat input (None: not differentiable)
        self.in_vals = in_vals       # values of the differentiable inputs
        self.out_avals = out_avals
        self.out_nodes = out_nodes   # node of each flat output (None: constant)
        self._linearized = None      # the tape as a linear program, once needed

    def linearized(self):
        """The tape as a linear program (``ad.Linearized``) from the differentiable
        inputs to the non-constant outputs; its constants are the residuals."""
        if self._linearized is None:
            self._linearized = _linearize_tape(self)
        return self._linearized

    def transpose(self, cts):
        """Input cotangents (zeros where none flows) for output cotangents ``cts``."""
        seeds = [(node, c) for node, c in zip(self.out_nodes, cts) if node is not None]
        if all(type(c) is Array or type(c) is np.ndarray for _, c in seeds):
            seeds = [(node, _value(c)) for node, c in seeds]
            cts_all = _backward_concrete(self.entries, self.n, seeds)
            found = [None if node is None else cts_all[node] for node in self.in_nodes]
        else:  # traced cotangents: transpose the tape's linear program with zerax ops
            it = iter(self.linearized().transpose([c for node, c in zip(self.out_nodes, cts)
                                                  if node is not None]))
            found = [None if node is None else next(it) for node in self.in_nodes]
        return [zeros_for(aval) if c is None else c for aval, c in zip(self.in_avals, found)]


def applies(leaves) -> bool:
    """Whether the tape may run a reverse-mode call on these flat inputs: the fast path
    is on, no transform is live and every input is a concrete Array."""
    return enabled and not _trace_stack and all(type(x) is Array for x in leaves)


def vjp_flat(flat_fun, leaves, name):
    """Run ``flat_fun(*leaves) -> (out_leaves, aux)`` on a tape: the primal outputs (NumPy
    values), the `Tape`, and ``aux`` with every tape tracer replaced by its value."""
    with new_trace(TapeTrace, name) as trace:
        ins, in_nodes = [], []
        for x in leaves:
            if dtype_kind(x.dtype) in "fc":
                t = trace.new_input(x._value)
                ins.append(t)
                in_nodes.append(t.node)
            else:
                ins.append(x)
                in_nodes.append(None)
        outs, aux = flat_fun(*ins)
        primals_out, out_nodes = [], []
        for i, o in enumerate(outs):
            v, node = _value_and_node(trace, as_input(o, f"output {i} of {name}"))
            primals_out.append(v)
            out_nodes.append(node)
        if aux is not None:
            aux = _aux_values(trace, aux)
    tape = Tape(trace.entries, trace.n, [x.aval for x in leaves], in_nodes,
                [x._value for x, n in zip(leaves, in_nodes) if n is not None],
                [ShapedArray(p.shape, p.dtype) for p in primals_out], out_nodes)
    return primals_out, tape, aux


# --------------------------------------------------------------------------- value_and_grad

_LEAF = tree.tree_structure(0)
_ONES: dict = {}  # dtype -> the 0-d seed cotangent (never mutated: rules make new arrays)


def _aux_values(trace, aux):
    return tree.tree_map(lambda a: _value_and_node(trace, a)[0], aux)


def value_and_grad(fun, args, kwargs, nums, dyn, has_aux, name, check_output):
    """`ad.value_and_grad`'s fast path: ``dyn`` holds (float Array leaves, treedef) per
    argument in ``nums``; ``check_output(ans)`` raises for a non-scalar or non-float
    value.  Returns (value, aux, one gradient tree per argument in ``nums``)."""
    with new_trace(TapeTrace, name) as trace:
        full = list(args)
        in_nodes = []
        for i, (leaves, treedef) in zip(nums, dyn):
            start = trace.n
            ts = [TapeTracer(trace, x._value, start + k) for k, x in enumerate(leaves)]
            trace.n = start + len(ts)
            in_nodes.append(range(start, trace.n))
            full[i] = ts[0] if treedef is _LEAF else tree.tree_unflatten(treedef, ts)
        out, aux = split_aux(fun(*full, **kwargs), has_aux, name)
        if has_aux:
            aux = _aux_values(trace, aux)
        if type(out) is TapeTracer or type(out) is Array:
            out_leaves, out_tree = [out], _LEAF
        else:
            out_leaves, out_tree = tree.tree_flatten(out)
        vals, node = [], None
        for i, o in enumerate(out_leaves):
            if type(o) is not TapeTracer and type(o) is not Array:
                o = as_input(o, f"output {i} of {name}")
            v, n = _value_and_node(trace, o)
            vals.append(v)
            if n is not None:
                node = n
    ans = vals[0] if out_tree is _LEAF else tree.tree_unflatten(out_tree, vals)
    dtype = check_output(ans)
    if node is not None:
        seed = _ONES.get(dtype)
        if seed is None:
            seed = np.ones((), dtype)
            seed.flags.writeable = False
            _ONES[dtype] = seed
        cts = _backward_concrete(trace.entries, trace.n, [(node, seed)])
    grads = []
    for (leaves, treedef), nodes in zip(dyn, in_nodes):
        g = []
        for x, n in zip(leaves, nodes):
            c = None if node is None else cts[n]
            g.append(Array._wrap(np.zeros(x.shape, x.dtype)) if c is None else
                     Array._wrap(c) if type(c) in device_buffers else Array(c))
        grads.append(g[0] if treedef is _LEAF else tree.tree_unflatten(treedef, g))
    return ans, aux, grads


ad.install_eager_tape(sys.modules[__name__])
