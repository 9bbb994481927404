"""Turning Python functions into IR: the recording trace and `make_jaxpr`.

`RecordingTrace` writes one equation per primitive applied to its tracers.  Values
from outside (concrete arrays, tracers of enclosing transforms) become constant
variables; scalars become inline literals.  While recording it merges an equation
identical to one already recorded (common-subexpression elimination) and asks the
primitive's ``simplify`` rule to fold trivial algebra (``x*1``, ``x+0``, ``--x``), so
derivative programs stay small.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..core.core import (ShapedArray, Trace, Tracer, _trace_stack, concretization_error, get_aval,
                         new_trace)
from .ir import (ClosedJaxpr, Eqn, Jaxpr, Literal, Var, convert_constvars, dce,
                 effectful_primitives, effects_suppressed)


# prim -> simplify(trace, args, atoms, params) -> value | None: algebraic folding while
# recording (x * 1 -> x, ...); not a transform, so not a registered rule table
simplify_rules: dict = {}
# custom-derivative primitive -> record(trace, fun, rule, ..., args, params): how a
# recording trace writes a custom_jvp / custom_vjp call (api/custom.py fills it in)
record_rules: dict = {}


class RecordingTracer(Tracer):
    __slots__ = ("ir_var", "_weak_type")

    def __init__(self, trace, var):
        self._trace = trace
        self.ir_var = var   # (not .var: that is the array method)
        self._weak_type = None

    @property
    def aval(self):
        return self.ir_var.aval

    @property
    def shape(self):
        return self.ir_var.aval.shape

    @property
    def dtype(self):
        return self.ir_var.aval.dtype

    def to_concrete(self, what):
        raise concretization_error(self, what)


def _is_scalar_const(x) -> bool:
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return True
    v = getattr(x, "_value", x)
    return isinstance(v, np.ndarray) and v.ndim == 0


class RecordingTrace(Trace):
    """Records equations; the base of make_jaxpr, linearize, jit and control flow."""

    __slots__ = ("eqns", "invars", "_const_vars", "const_values", "_cse", "producer",
                 "track_source", "records_program")

    def __init__(self, level, name="", cse: bool = True, track_source: bool = False,
                 records_program: bool = True):
        super().__init__(level, name)
        # False for linearization, which records only the tangent program: the primal
        # values (and effects) are computed by the traces below it.
        self.records_program = records_program
        self.track_source = track_source  # note the user's line per equation (for jit errors)
        # cse=False for linearization: the tangent program is transposed at once, and
        # transposition emits into the enclosing trace, which merges duplicates itself.
        self._cse = {} if cse else None
        self.eqns: list = []
        self.invars: list = []
        # id(value) -> (var, value): the value is held so that its id stays its own
        self._const_vars: dict[int, tuple] = {}
        self.const_values: dict[Var, object] = {}
        self.producer: dict[Var, object] = {}  # var -> the equation that defines it

    # -- atoms
    def new_arg(self, aval: ShapedArray) -> RecordingTracer:
        v = Var(aval)
        self.invars.append(v)
        return RecordingTracer(self, v)

    def to_atom(self, x):
        if type(x) is RecordingTracer and x._trace is self:
            return x.ir_var
        if not isinstance(x, Tracer) and _is_scalar_const(x):
            return Literal(getattr(x, "_value", x))
        known = self._const_vars.get(id(x))
        if known is not None:
            return known[0]
        # (not in a linearization's tangent program, which transposition reads as
        # linear in every equation: its constants reach the program being recorded
        # when it is evaluated or transposed there)
        if self.records_program and self._cse is not None and _broadcast_p is not None:
            spread = _broadcast_view(x)
            if spread is not None:   # recorded as the broadcast NumPy kept it as
                base, shape, dims = spread
                v = self.process_primitive(_broadcast_p, [base], {
                    "shape": shape, "broadcast_dimensions": dims}).ir_var
                self._const_vars[id(x)] = (v, x)
                return v
        key = _small_const_key(x) if self._cse is not None else None
        v = None if key is None else self._cse.get(key)
        if v is None:
            v = Var(get_aval(x))
            self.const_values[v] = x
            if key is not None:
                self._cse[key] = v
        self._const_vars[id(x)] = (v, x)
        return v

    def value_of(self, atom):
        """The value an atom stands for, as seen by code running in this trace."""
        if type(atom) is Literal:
            return atom.val
        if atom in self.const_values:
            return self.const_values[atom]
        return RecordingTracer(self, atom)

    # -- primitives
    def process_primitive(self, prim, args, params):
        if prim in effectful_primitives and effects_suppressed.active():
            # A derived program (a tangent or transposed one) re-running primal code:
            # the primal program made the effect (effectful primitives have no outputs).
            return []
        atoms = []
        for a in args:
            if type(a) is RecordingTracer and a._trace is self:
                atoms.append(a.ir_var)
            else:
                atoms.append(self.to_atom(a))
        cse = self._cse
        key = None
        if cse is not None:  # folding and CSE: only for programs that are kept
            simplify = simplify_rules.get(prim)
            if simplify is not None:
                folded = simplify(self, args, atoms, params)
                if folded is not None:
                    return folded
            try:
                ins = tuple(a.key() if type(a) is Literal else a for a in atoms)
                if prim.commutative:  # x*y and y*x are one equation
                    ins = tuple(sorted(ins, key=_atom_order))
                key = (prim, ins, tuple(sorted(params.items())) if params else ())
                outvars = cse.get(key)
            except TypeError:  # an unhashable parameter: record without merging
                key = outvars = None
        else:
            outvars = None
        if outvars is None:
            if prim.abstract_eval is None:
                raise prim.rule_missing("tracing (no shape rule)", "abstract_eval")
            out = prim.abstract_eval(*[a.aval for a in atoms], **params)
            outs = out if prim.multiple_results else (out,)
            outvars = [Var(aval) for aval in outs]
            eqn = Eqn(prim, atoms, outvars, params,
                      errors.user_frame() if self.track_source else None)
            self.eqns.append(eqn)
            producer = self.producer
            for v in outvars:
                producer[v] = eqn
            if key is not None:
                cse[key] = outvars
        if prim.multiple_results:
            return [RecordingTracer(self, v) for v in outvars]
        return RecordingTracer(self, outvars[0])

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        return record_rules.get(prim)(self, fun, jvp_rule, args, params)

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        return record_rules.get(prim)(self, fun, fwd, bwd, args, params)

    # -- result
    def to_jaxpr(self, outs, prune: bool = True) -> ClosedJaxpr:
        outvars = [self.to_atom(o) for o in outs]
        jaxpr = Jaxpr([], self.invars, outvars, self.eqns)
        if not prune:  # kept whole: every constant stays (transposition skips dead code)
            jaxpr.constvars = list(self.const_values)
            return ClosedJaxpr(jaxpr, list(self.const_values.values()))
        jaxpr = dce(jaxpr)
        used = set()
        for eqn in jaxpr.eqns:
            used.update(a for a in eqn.invars if type(a) is Var)
        used.update(a for a in outvars if type(a) is Var)
        constvars = [v for v in self.const_values if v in used]
        jaxpr.constvars = constvars
        return ClosedJaxpr(jaxpr, [self.const_values[v] for v in constvars])


# Constants up to this many elements are merged by value (their bits) when CSE is on:
# forward mode computes equal constants as new arrays at every order (w * 1.0 for a
# closed-over w), which would otherwise keep equal equations apart.
_MERGE_CONST_ELEMENTS = 1 << 16


def _small_const_key(x):
    v = getattr(x, "_value", x)
    if type(v) is not np.ndarray or v.size > _MERGE_CONST_ELEMENTS:
        return None
    return ("const", v.dtype.str, v.shape, v.tobytes())


# The broadcast primitive (declared in ops/, a layer above, which installs it here).
_broadcast_p = None


def install_broadcast(prim) -> None:
    global _broadcast_p
    _broadcast_p = prim


def _broadcast_view(x):
    """``(base, shape, broadcast_dimensions)`` when the concrete ``x`` is a NumPy
    broadcast view (a zero stride along an axis longer than one: ``np.broadcast_to``,
    which eager ``broadcast_in_dim`` and vmap's broadcast of an unmapped operand give),
    else None.  A program keeps such a value as the broadcast of its small base, which
    the fused loops read in place: as a constant it would be copied out whole, a
    batch-sized array read from memory by every kernel that uses it."""
    v = getattr(x, "_value", x)
    if type(v) is not np.ndarray or v.ndim == 0:
        return None
    spread = [i for i, (n, st) in enumerate(zip(v.shape, v.strides)) if st == 0 and n > 1]
    if not spread:
        return None
    dims = tuple(i for i in range(v.ndim) if i not in spread)
    base = v[tuple(0 if i in spread else slice(None) for i in range(v.ndim))]
    base = np.ascontiguousarray(base) if base.ndim else base[()]
    return base, tuple(v.shape), dims


def _atom_order(k):
    return (0, id(k)) if type(k) is Var else (1, repr(k))


def trace_to_jaxpr(fun, in_avals, name: str = "", track_source: bool = False) -> ClosedJaxpr:
    """Trace ``fun(*tracers) -> list of outputs`` into a closed program.  Sub-programs
    traced inside a source-tracking trace track sources too."""
    track_source = track_source or any(getattr(t, "track_source", False) for t in _trace_stack)
    with new_trace(RecordingTrace, name, track_source=track_source) as trace:
        tracers = [trace.new_arg(a) for a in in_avals]
        outs = fun(*tracers)
        return trace.to_jaxpr(outs)


def trace_closed(fun, in_avals, name: str = "", track_source: bool = False):
    """``fun`` traced as a program whose constants are leading inputs: ``(jaxpr,
    consts)``, bound as ``bind(call_p, *consts, *args, jaxpr=jaxpr)`` by the call
    primitives (jit, checkpoint) and the derived programs of `jvp_jaxpr` and friends."""
    closed = trace_to_jaxpr(fun, in_avals, name, track_source=track_source)
    return convert_constvars(closed.jaxpr), closed.consts


def fun_name(fun) -> str:
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", type(fun).__name__)
