"""Automatic differentiation: jvp, linearize, transposition, vjp, grad.

Forward mode is a trace (`JVPTrace`) whose tracers pair a primal with a tangent.
Reverse mode is *linearize then transpose*: the JVP trace runs on top of a recording
trace, so primal work happens at once (on concrete values, or in an enclosing
transform) while only the tangent work, linear by construction, is written down as a
program.  Transposing that program walks its equations in reverse, in a loop.

With no transform live, `vjp`, `grad` and `value_and_grad` take a faster road to the
same result: the eager tape of `tape.py` (NumPy values and per-primitive VJP rules,
falling back to this module's linearize-and-transpose one primitive at a time); its
`Tape` answers like `Linearized` (``out_avals``, ``transpose``).

Known-zero tangents and cotangents are the symbolic `Zero`: a JVP tracer is only
created when its tangent is non-zero, and an equation whose output cotangents are all
zero is skipped, so derivative programs hold no multiplications by zero.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from ... import errors
from ..core import tree
from ..core.api_util import OutTree, as_input, as_output, flatten_fun, normalize_argnums
from ..core.array import Array
from ..core.ad_util import (  # noqa: F401  (is_undefined: re-exported with the vocabulary)
    UndefinedPrimal, Zero, add_any, instantiate, is_undefined, zeros_for)
from ..core.core import (Primitive, Trace, Tracer, bind, current_level, find_top_trace,
                         get_aval, new_trace, rule_table)
from ..base.dtypes import float0, kind as dtype_kind
from ..ir.ir import ClosedJaxpr, Jaxpr, Literal, Var, dce, effects_suppressed, eval_jaxpr
from ..ir.tracing import RecordingTrace, fun_name, trace_closed

# --------------------------------------------------------------------------- rules

# prim -> jvp(primals, tangents, **params) -> (out, tangent_out)
jvp_rules = rule_table("jvp", "differentiation (jvp)")
# prim -> transpose(ct, *args, **params) -> cotangents: for primitives linear in some inputs
transpose_rules = rule_table("transpose", "reverse-mode differentiation (transpose)")


def _differentiable(dtype) -> bool:
    return dtype_kind(dtype) in "fc"


# --------------------------------------------------------------------------- JVP


class PrimalTracer(Tracer):
    """A tracer that carries its primal value beside what the transform adds (a tangent,
    a Taylor series): its type and its concrete value are the primal's."""
    __slots__ = ("primal",)

    @property
    def aval(self):
        return get_aval(self.primal)

    @property
    def shape(self):
        return self.primal.shape

    @property
    def dtype(self):
        return self.primal.dtype

    def to_concrete(self, what):
        # Python control flow on a value being differentiated is fine (as in JAX):
        # the primal decides, and its derivative follows the branch taken.
        return self.primal


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    """Forward mode: every value carries a tangent."""

    __slots__ = ()

    def _split(self, args):
        primals, tangents = [], []
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(Zero(get_aval(a)))
        return primals, tangents

    def _wrap(self, primal, tangent):
        if type(tangent) is Zero or tangent is None:
            return primal
        return JVPTracer(self, primal, tangent)

    def process_primitive(self, prim, args, params):
        primals, tangents = self._split(args)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise prim.rule_missing("differentiation (jvp)", "jvp")
        out, t_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self._wrap(p, t) for p, t in zip(out, t_out)]
        return self._wrap(out, t_out)

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        primals, tangents = self._split(args)
        outs, t_outs = jvp_rule(primals, [instantiate(t) for t in tangents])
        return [self._wrap(p, t) for p, t in zip(outs, t_outs)]

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        primals, tangents = self._split(args)
        outs, t_outs = custom_vjp_jvp(fwd, bwd, primals, tangents, params.get("fwd_jvp"))
        return [self._wrap(p, t) for p, t in zip(outs, t_outs)]


def _lower_out(trace, x):
    """Split an output of a JVP-traced function into (primal, tangent-or-Zero)."""
    if type(x) is JVPTracer and x._trace is trace:
        return x.primal, x.tangent
    return x, Zero(get_aval(x))


def _strip(trace, x):
    """Drop this trace's tangent (for auxiliary outputs)."""
    return x.primal if type(x) is JVPTracer and x._trace is trace else x


def _flatten_inputs(values, what):
    leaves, treedef = tree.tree_flatten(values)
    return [as_input(x, f"{what} leaf {i}") for i, x in enumerate(leaves)], treedef


def _flatten_tangents(values, what):
    """Like `_flatten_inputs`, but float0 arrays (the tangents of integer primals) pass."""
    leaves, treedef = tree.tree_flatten(values)
    return [x if isinstance(x, np.ndarray) and x.dtype == float0
            else as_input(x, f"{what} leaf {i}") for i, x in enumerate(leaves)], treedef


def tangent_dtype(dtype):
    """The dtype of the tangents of values of ``dtype``: itself for floats and complex,
    float0 for integers and booleans (as in JAX)."""
    dtype = np.dtype(dtype)
    return dtype if dtype_kind(dtype) in "fc" else float0


def _check_tangents(p_leaves, t_leaves, where):
    """As JAX: each tangent has its primal's shape and tangent dtype."""
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        if tuple(p.shape) != tuple(t.shape):
            raise errors.ShapeError(
                f"{where}: primal {i} has shape {tuple(p.shape)} but its tangent has shape "
                f"{tuple(t.shape)}; they must match.")
        want = tangent_dtype(p.dtype)
        # Zeros of the primal's own integer dtype are accepted too (the library's loop
        # and branch rules pass them); JAX would ask for float0.
        if np.dtype(t.dtype) != want and np.dtype(t.dtype) != np.dtype(p.dtype):
            raise errors.ZeraxTypeError(
                f"{where}: primal {i} has dtype {np.dtype(p.dtype).name}, so its tangent must "
                f"have dtype {'float0' if want == float0 else want.name}, but it has "
                f"{'float0' if np.dtype(t.dtype) == float0 else np.dtype(t.dtype).name} "
                "(dtypes must match; integer and boolean primals take float0 tangents, e.g. "
                "np.zeros(shape, zerax.dtypes.float0)).")


def jvp(fun, primals, tangents, has_aux: bool = False):
    """Forward-mode derivative: ``(fun(*primals), d fun(primals) . tangents)``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> y, t = zx.jvp(znp.sin, (0.0,), (2.0,))
    >>> float(y), float(t)
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise errors.ZeraxTypeError(
            "jvp expects primals and tangents as tuples or lists, e.g. "
            "zx.jvp(f, (x,), (t,)); got "
            f"{type(primals).__name__} and {type(tangents).__name__}")
    p_leaves, p_tree = _flatten_inputs(tuple(primals), "primal")
    t_leaves, t_tree = _flatten_tangents(tuple(tangents), "tangent")
    if p_tree != t_tree:
        raise errors.ZeraxTypeError(
            f"jvp: primals and tangents must have the same tree structure, got {p_tree} "
            f"and {t_tree}")
    _check_tangents(p_leaves, t_leaves, "jvp")
    with new_trace(JVPTrace) as trace:
        ins = [JVPTracer(trace, p, t) if _differentiable(p.dtype) else p
               for p, t in zip(p_leaves, t_leaves)]
        out = fun(*tree.tree_unflatten(p_tree, ins))
        if has_aux:
            out, aux = split_aux(out, True, fun_name(fun))
            aux = tree.tree_map(lambda a: _strip(trace, a), aux)
        out_leaves, out_tree = tree.tree_flatten(out)
        pairs = [_lower_out(trace, as_input(o, f"output {i} of {fun_name(fun)}"))
                 for i, o in enumerate(out_leaves)]
    primals_out = [as_output(p) for p, _ in pairs]
    tangents_out = [as_output(instantiate(t)) for _, t in pairs]
    res = (tree.tree_unflatten(out_tree, primals_out), tree.tree_unflatten(out_tree, tangents_out))
    return res + (aux,) if has_aux else res


# --------------------------------------------------------------------------- linearize


class Linearized:
    """The linear part of a function at a point: a recorded tangent program."""

    def __init__(self, closed, in_avals, in_mask, out_avals, out_mask):
        self.closed = closed          # ClosedJaxpr: tangents of masked inputs -> tangents
        self.in_avals = in_avals      # avals of all flat inputs
        self.in_mask = in_mask        # which inputs are differentiable
        self.out_avals = out_avals
        self.out_mask = out_mask      # which outputs have a non-zero tangent

    def jvp(self, tangents):
        ins = [t for t, m in zip(tangents, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.closed.jaxpr, self.closed.consts, *ins))
        return [next(outs) if m else zeros_for(a) for a, m in zip(self.out_avals, self.out_mask)]

    def transpose(self, cts):
        cts = [c for c, m in zip(cts, self.out_mask) if m]
        if _scalar_map(self):
            # A linear map of one real number to one real number is its own transpose:
            # evaluated forward on the cotangent, it gives grad the expressions of forward
            # mode, which the recording trace's CSE keeps polynomial in size when grads
            # are nested (reverse over reverse doubles the program at each order).
            (ct_in,) = eval_jaxpr(dce(self.closed.jaxpr), self.closed.consts, *cts)
            return [ct_in if m else zeros_for(a) for a, m in zip(self.in_avals, self.in_mask)]
        ins = iter(backward_pass(self.closed.jaxpr, self.closed.consts, cts))
        res = []
        for aval, m in zip(self.in_avals, self.in_mask):
            c = next(ins) if m else None
            res.append(zeros_for(aval) if c is None else c)
        return res


# Primitives whose derivative is only known backwards (a custom_vjp function's bwd):
# a linear program holding one, or holding a sub-program that calls one (a loop body
# differentiated later), cannot be evaluated forward.
_BACKWARD_ONLY = {"custom_lin", "custom_vjp_call", "function_call"}


def _not_self_adjoint(prim) -> bool:
    # collectives couple the members of a named vmap axis: per member the map is not
    # one number to one number (psum's transpose is psum, not the identity)
    return prim.name in _BACKWARD_ONLY or prim.named_axes


def _scalar_map(lin) -> bool:
    """Whether ``lin`` maps one real scalar to one real scalar and can run forward."""
    ins = [a for a, m in zip(lin.in_avals, lin.in_mask) if m]
    outs = [a for a, m in zip(lin.out_avals, lin.out_mask) if m]
    if len(ins) != 1 or len(outs) != 1:
        return False
    if any(a.shape != () or dtype_kind(a.dtype) != "f" for a in (ins[0], outs[0])) \
            or ins[0].dtype != outs[0].dtype:   # (the transpose converts back)
        return False
    return not uses_primitive(lin.closed.jaxpr, _not_self_adjoint)


def uses_primitive(jaxpr, pred) -> bool:
    """Whether a primitive satisfying ``pred`` is bound in ``jaxpr`` or in one of its
    sub-programs."""
    todo = [jaxpr]
    while todo:
        j = todo.pop()
        for eqn in j.eqns:
            if pred(eqn.primitive):
                return True
            for p in eqn.params.values():
                for q in (p if isinstance(p, (tuple, list)) else (p,)):
                    q = getattr(q, "jaxpr", q)
                    if isinstance(q, Jaxpr):
                        todo.append(q)
    return False


def linearize_flat(flat_fun, primals, name="linearize", cse=None, prune=None):
    """Run ``flat_fun(*primals) -> (out_leaves, aux)`` recording its linearization.
    ``prune=False`` keeps dead equations: for a caller that transposes the program once
    right away (a dead equation then costs nothing); by default it is pruned unless it
    is an eager linearization transposed at once."""
    # Folding and CSE pay off when the tangent program is itself traced by an enclosing
    # transform (higher-order derivatives); for a plain eager grad they are skipped.
    if cse is None:
        cse = current_level() > 0
    with new_trace(RecordingTrace, name, cse=cse, records_program=False) as rec:
        with new_trace(JVPTrace) as jt:
            in_avals = [get_aval(p) for p in primals]
            in_mask = [dtype_kind(a.dtype) in "fc" for a in in_avals]
            ins = [JVPTracer(jt, p, rec.new_arg(a)) if m else p
                   for p, a, m in zip(primals, in_avals, in_mask)]
            outs, aux = flat_fun(*ins)
            pairs = [_lower_out(jt, as_input(o, f"output {i} of {name}"))
                     for i, o in enumerate(outs)]
            if aux is not None:
                aux = tree.tree_map(lambda a: _strip(jt, a), aux)
        out_mask = [type(t) is not Zero for _, t in pairs]
        closed = rec.to_jaxpr([t for _, t in pairs if type(t) is not Zero],
                              prune=rec._cse is not None if prune is None else prune)
    primals_out = [p for p, _ in pairs]
    lin = Linearized(closed, in_avals, in_mask,
                     [get_aval(p) for p in primals_out], out_mask)
    return primals_out, lin, aux


def linearize(fun, *primals, has_aux: bool = False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linear map
    (``(fun(*primals)[0], f_jvp, aux)`` with ``has_aux``, as in JAX).

    >>> import zerax as zx, zerax.numpy as znp
    >>> y, f_jvp = zx.linearize(znp.exp, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    leaves, in_tree = _flatten_inputs(primals, "primal")
    name = fun_name(fun)
    out_store = OutTree()
    flat_fun = flatten_fun(lambda *a: split_aux(fun(*a), has_aux, name), in_tree, out_store,
                           has_aux=True)
    # f_jvp evaluates the program at every call: prune it once.
    primals_out, lin, aux = linearize_flat(flat_fun, leaves, prune=True)
    out_tree = out_store.tree

    def f_jvp(*tangents):
        t_leaves, t_tree = _flatten_tangents(tangents, "tangent")
        if t_tree != in_tree:
            raise errors.ZeraxTypeError(
                f"linearized function expects tangents structured like {in_tree}, got {t_tree}")
        _check_tangents(leaves, t_leaves, f"the linearized function of {name}")
        outs = [as_output(o) for o in lin.jvp(t_leaves)]
        return tree.tree_unflatten(out_tree, outs)

    out = tree.tree_unflatten(out_tree, [as_output(p) for p in primals_out])
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# --------------------------------------------------------------------------- transpose


add_cotangents = add_any


def backward_pass(jaxpr, consts, cts_out):
    """Transpose a linear program: cotangents of outputs -> cotangents of inputs.

    A loop over the equations in reverse order (never recursion), so a chain of any
    length is transposed without growing Python's stack."""
    const_env = dict(zip(jaxpr.constvars, consts))
    ct_env: dict = {}

    def accumulate(v, ct):
        old = ct_env.get(v)
        ct_env[v] = ct if old is None else add_cotangents(old, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        if ct is not None and type(ct) is not Zero and type(v) is Var and v not in const_env:
            accumulate(v, ct)
    for eqn in reversed(jaxpr.eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in cts):
                continue
            ct = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        else:
            ct = ct_env.pop(eqn.outvars[0], None)
            if ct is None:
                continue
        args = []
        for a in eqn.invars:
            if type(a) is Literal:
                args.append(a.val)
            elif a in const_env:
                args.append(const_env[a])
            else:
                args.append(UndefinedPrimal(a.aval))
        rule = transpose_rules.get(prim)
        if rule is None:
            raise prim.rule_missing("reverse-mode differentiation (transpose)", "transpose")
        cts_in = rule(ct, *args, **eqn.params)
        for a, arg, c in zip(eqn.invars, args, cts_in):
            if c is None or type(c) is Zero or type(arg) is not UndefinedPrimal:
                continue
            accumulate(a, c)
    return [ct_env.get(v) for v in jaxpr.invars]


# --------------------------------------------------------------------------- vjp / grad


def vjp(fun, *primals, has_aux: bool = False):
    """Reverse mode: ``(fun(*primals), f_vjp)``; ``f_vjp(ct)`` returns a tuple of
    cotangents, one per primal.

    >>> import zerax as zx, zerax.numpy as znp
    >>> y, f_vjp = zx.vjp(lambda x: x * x, 3.0)
    >>> f_vjp(1.0)
    (Array(6., dtype=float64),)
    """
    return vjp_with(fun, primals, has_aux, eager_tape=True)


def split_aux(out, has_aux, name):
    """``(output, aux)`` of a function transformed with ``has_aux`` (aux None without)."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise errors.ZeraxTypeError(
            f"{name} was transformed with has_aux=True, so it must return a pair "
            f"(output, auxiliary data); it returned {type(out).__name__}.")
    return out


def output_cotangents(ct, out_tree, out_avals, where):
    """The leaves of ``ct`` as zerax values, checked against the output they belong to
    (tree structure and shapes)."""
    ct_leaves, ct_tree = tree.tree_flatten(ct)
    if ct_tree != out_tree:
        raise errors.ZeraxTypeError(
            f"the cotangent passed to {where} must have the structure of its output, "
            f"{out_tree}; got {ct_tree}.")
    cts = []
    for i, (c, aval) in enumerate(zip(ct_leaves, out_avals)):
        if not (isinstance(c, np.ndarray) and c.dtype == float0):
            c = as_input(c, f"cotangent leaf {i}")
        if tuple(c.shape) != tuple(aval.shape):
            raise errors.ShapeError(
                f"cotangent {i} has shape {tuple(c.shape)} but the output it belongs to has "
                f"shape {tuple(aval.shape)}.")
        want = tangent_dtype(aval.dtype)
        if np.dtype(c.dtype) != want and np.dtype(c.dtype) != np.dtype(aval.dtype):
            got = np.dtype(c.dtype)
            raise errors.ZeraxTypeError(
                f"cotangent {i} passed to {where} has dtype "
                f"{'float0' if got == float0 else got.name}, but the output it belongs to "
                f"has dtype {np.dtype(aval.dtype).name}, so its cotangent must be "
                f"{'float0' if want == float0 else want.name} (as in JAX, dtypes must match).")
        cts.append(c)
    return cts


# The eager tape (tape.py) builds on this module, so it installs itself here when it is
# imported (interpreters/__init__.py imports both); `vjp` and `value_and_grad` pick it
# when no transform is live.
_tape = None


def install_eager_tape(tape_module) -> None:
    global _tape
    _tape = tape_module


def vjp_with(fun, primals, has_aux, eager_tape):
    """`vjp`; ``eager_tape=False`` always linearizes, for callers that pull back under
    another transform anyway (``jacrev`` vmaps the pullback, which a tape would replay)."""
    leaves, in_tree = _flatten_inputs(primals, "primal")
    out_store = OutTree()
    flat_fun = flatten_fun(lambda *a: split_aux(fun(*a), has_aux, fun_name(fun)), in_tree,
                           out_store, has_aux=True)

    if eager_tape and _tape.applies(leaves):  # no transform live: the tape (tape.py)
        primals_out, lin, aux = _tape.vjp_flat(flat_fun, leaves, fun_name(fun))
    else:
        primals_out, lin, aux = linearize_flat(flat_fun, leaves, fun_name(fun))
    out_tree = out_store.tree
    f_vjp = VJPFunction(lin, in_tree, out_tree, fun_name(fun))
    out = tree.tree_unflatten(out_tree, [as_output(p) for p in primals_out])
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


class VJPFunction:
    """The function `vjp` returns: ``f_vjp(ct)`` is a tuple of cotangents, one per
    primal.  As JAX's (a ``tree_util.Partial`` over the residuals) it is a pytree whose
    leaves are the residuals, the values the backward pass reads: it passes in and out
    of ``jit``, ``make_jaxpr(lambda *a: vjp(f, *a))`` traces, and ``tree_flatten`` lists
    them (``ad_checkpoint.saved_residuals`` reads them there).  (Concrete 0-d
    residuals are constants of the linear program, not leaves.)

    >>> import zerax as zx, zerax.numpy as znp
    >>> _, f_vjp = zx.vjp(znp.sin, znp.array([0.0, 1.0]))
    >>> zx.tree_util.tree_leaves(f_vjp)[0].round(6).tolist()
    [1.0, 0.540302]
    """

    __slots__ = ("_lin", "_in_tree", "_out_tree", "_name")

    def __init__(self, lin, in_tree, out_tree, name):
        # lin: a Linearized, or the eager tape's Tape (tape.py), the same interface
        self._lin, self._in_tree, self._out_tree, self._name = lin, in_tree, out_tree, name

    def __call__(self, ct):
        lin = self._lin
        cts = output_cotangents(ct, self._out_tree, lin.out_avals,
                                f"the vjp function of {self._name}")
        res = [as_output(c) for c in lin.transpose(cts)]
        return tuple(tree.tree_unflatten(self._in_tree, res))

    def __repr__(self):
        return f"<vjp function of {self._name}>"

    def _linear_program(self):
        """``(Linearized, input mask, output mask)``: the linear program over the flat
        inputs and outputs the masks select (a tape's covers the differentiable ones)."""
        lin = self._lin
        if isinstance(lin, Linearized):
            return lin, (True,) * len(lin.in_avals), (True,) * len(lin.out_avals)
        return lin.linearized(), tuple(n is not None for n in lin.in_nodes), \
            tuple(n is not None for n in lin.out_nodes)


def _flatten_vjp_function(f):
    lin, in_sel, out_sel = f._linear_program()
    aux = (lin.closed.jaxpr, tuple(lin.in_avals), tuple(lin.in_mask), tuple(lin.out_avals),
           tuple(lin.out_mask), in_sel, out_sel, tuple(f._lin.in_avals),
           tuple(f._lin.out_avals), f._in_tree, f._out_tree, f._name)
    return list(lin.closed.consts), aux


def _unflatten_vjp_function(aux, residuals):
    (jaxpr, in_avals, in_mask, out_avals, out_mask, in_sel, out_sel, all_in, all_out,
     in_tree, out_tree, name) = aux
    lin = Linearized(ClosedJaxpr(jaxpr, list(residuals)), list(in_avals), list(in_mask),
                     list(out_avals), list(out_mask))
    if not (all(in_sel) and all(out_sel)):
        lin = _Selected(lin, in_sel, out_sel, all_in, all_out)
    return VJPFunction(lin, in_tree, out_tree, name)


class _Selected:
    """A linear program over some of a function's flat inputs and outputs (a tape's,
    rebuilt from its residuals), seen as one over all of them."""

    def __init__(self, lin, in_sel, out_sel, in_avals, out_avals):
        self.lin, self.in_sel, self.out_sel = lin, in_sel, out_sel
        self.in_avals, self.out_avals = list(in_avals), list(out_avals)
        self.in_nodes = [0 if m else None for m in in_sel]
        self.out_nodes = [0 if m else None for m in out_sel]

    def linearized(self):
        return self.lin

    def transpose(self, cts):
        it = iter(self.lin.transpose([c for c, m in zip(cts, self.out_sel) if m]))
        return [next(it) if m else zeros_for(a) for a, m in zip(self.in_avals, self.in_sel)]


tree.register_pytree_node(VJPFunction, _flatten_vjp_function, _unflatten_vjp_function)


def check_reduce_axes(reduce_axes, where):
    """JAX's deprecated ``reduce_axes``: only the empty default is accepted."""
    if reduce_axes is None or (isinstance(reduce_axes, (tuple, list)) and not reduce_axes):
        return
    raise errors.NotSupportedError(
        f"{where}: the reduce_axes argument is deprecated in JAX and not supported by zerax "
        f"(got {reduce_axes!r}); leave it at its default ().")


def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()):
    """``fun``'s value and its gradient with respect to the ``argnums`` arguments.

    >>> import zerax as zx, zerax.numpy as znp
    >>> v, g = zx.value_and_grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
    >>> float(v), float(g[0]), float(g[1])
    (6.0, 3.0, 2.0)

    As in JAX, a complex output needs ``holomorphic=True`` (and complex inputs): the
    result is then the complex derivative of a holomorphic ``fun``.  With
    ``allow_int=True`` integer and boolean arguments are accepted and their gradient is
    an array of float0 zeros.
    """
    check_reduce_axes(reduce_axes, "value_and_grad")
    name = fun_name(fun)
    out_kind = "c" if holomorphic else "f"   # the output dtype kind grad accepts

    def check_output(ans):
        """The dtype of ``ans``, a differentiable scalar (else a zerax error)."""
        if type(ans) is Array:
            v = ans._value
            if v.shape == () and v.dtype.kind == out_kind:
                return v.dtype
        aval = get_aval(ans) if isinstance(ans, Tracer) or hasattr(ans, "shape") else None
        if aval is None or aval.shape != ():
            shape = None if aval is None else aval.shape
            raise errors.NonScalarOutputError(
                f"grad requires {name} to return a scalar (shape ()), but it returned "
                f"{'shape ' + str(shape) if aval is not None else type(ans).__name__}. "
                "For vector outputs use zx.vjp (with a cotangent) or zx.jacrev.")
        if holomorphic and aval.dtype.kind != "c":
            raise errors.ZeraxTypeError(
                f"grad with holomorphic=True requires {name} to return a complex value, "
                f"but it returned {aval.dtype.name}. Drop holomorphic=True for real "
                "outputs.")
        if aval.dtype.kind == "c" and not holomorphic:
            raise errors.ZeraxTypeError(
                f"grad requires {name} to return a real value, but it returned "
                f"{aval.dtype.name}. For the derivative of a holomorphic function pass "
                "holomorphic=True; otherwise differentiate a real part or magnitude.")
        if not _differentiable(aval.dtype):
            raise errors.ZeraxTypeError(
                f"grad requires {name} to return a float, but it returned {aval.dtype.name}.")
        return aval.dtype

    def check_input(x, i):
        """Inputs grad can differentiate: floats, or complex ones under holomorphic.
        Returns True for an integer input accepted by ``allow_int`` (float0 gradient)."""
        dtype = np.dtype(x.dtype)
        if holomorphic and dtype.kind != "c":
            raise errors.ZeraxTypeError(
                f"grad of {name} with holomorphic=True requires complex inputs, but "
                f"argument {i} has dtype {dtype.name}. Pass complex values (e.g. "
                "x.astype(complex)) or drop holomorphic=True.")
        if not _differentiable(dtype):
            if allow_int and dtype.kind in "biu":
                return True
            raise errors.IntegerInputError(
                f"grad of {name} with respect to argument {i}: its dtype is "
                f"{dtype.name}, but derivatives are only defined for "
                "float (or complex) inputs. Pass floats (e.g. 1.0 instead of 1, or "
                "x.astype(float)), pass allow_int=True for float0 zero gradients, or "
                "exclude this argument from argnums.")
        return False

    nums_for = {}  # number of arguments -> normalize_argnums(...)

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        norm = nums_for.get(len(args))
        if norm is None:
            norm = nums_for[len(args)] = normalize_argnums(argnums, len(args), name)
        single, nums = norm
        dyn = []
        all_arrays = True
        for i in nums:
            a = args[i]
            if type(a) is Array:
                if dtype_kind(a._value.dtype) == "f" and not holomorphic:
                    dyn.append(([a], _tape._LEAF))
                    continue
                leaves, t = [a], _tape._LEAF
            else:
                leaves, t = tree.tree_flatten(a)
                leaves = [as_input(x, f"argument {i} of {name}") for x in leaves]
            for x in leaves:
                if type(x) is not Array:
                    all_arrays = False
                if check_input(x, i):   # an integer leaf under allow_int: no tape
                    all_arrays = False
            dyn.append((leaves, t))

        if all_arrays and _tape.enabled and not current_level():
            # No transform is live: the eager tape (tape.py).
            ans, aux, grads = _tape.value_and_grad(fun, args, kwargs, nums, dyn, has_aux,
                                                   name, check_output)
            g = grads[0] if single else tuple(grads)
            return ((ans, aux) if has_aux else ans), g

        def partial_fun(*dyn_args):
            full = list(args)
            for i, v in zip(nums, dyn_args):
                full[i] = v
            return fun(*full, **kwargs)

        partial_fun.__name__ = name
        res = vjp(partial_fun, *[tree.tree_unflatten(t, leaves) for leaves, t in dyn],
                  has_aux=has_aux)
        ans, f_vjp = res[0], res[1]
        grads = f_vjp(np.ones((), check_output(ans)))
        g = grads[0] if single else tuple(grads)
        value = (ans, res[2]) if has_aux else ans
        return value, g

    return value_and_grad_fun


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
    """The gradient of a scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> float(zx.grad(znp.sin)(0.0))
    1.0
    >>> float(zx.grad(zx.grad(zx.grad(znp.tanh)))(0.0))
    -2.0
    """
    check_reduce_axes(reduce_axes, "grad")
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_fun


# --------------------------------------------------------------------------- sub-programs
# The JVP and the transpose of a program as programs: what the call and control-flow
# primitives (jit, checkpoint, cond, while, scan) bind for their sub-programs.  Each is
# traced once per program and mask, and cached.

# program -> {(kind, mask...): derived program}.  Keyed by the program object itself, weakly:
# a key by ``id`` would hand a new program the derived program of a dead one that had the
# same id.
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def derived_program(jaxpr, key, make):
    """``make()`` once per program ``jaxpr`` and ``key`` (what it is derived with)."""
    per = _derived.get(jaxpr)
    if per is None:
        per = _derived[jaxpr] = {}
    fn = per.get(key)
    if fn is None:
        fn = per[key] = make()
    return fn


def jvp_jaxpr(jaxpr, nonzero, with_primals: bool = False):
    """The program ``(primals, tangents of the inputs flagged in nonzero) -> tangent
    outputs`` of ``jaxpr`` (constants first), with integer outputs' tangents zero.
    ``with_primals``: the primal outputs come first, then the tangents (one pass, as a
    loop body that carries both needs)."""
    def make():
        n = len(jaxpr.invars)

        def f(*args):
            # Only the flagged inputs carry tangents; the others enter as plain values
            # (symbolic zeros inside, not zero arrays: a custom_vjp's derivative in the
            # program has none along its residuals, and nested derived programs keep it so).
            primals, ts = args[:n], args[n:]
            moving = [i for i, m in enumerate(nonzero) if m]

            def along(*xs):
                full = list(primals)
                for i, x in zip(moving, xs):
                    full[i] = x
                return eval_jaxpr(jaxpr, [], *full)
            p_out, t_out = jvp(along, tuple(primals[i] for i in moving), tuple(ts))
            t_out = [t if dtype_kind(a.dtype) in "fc" else np.zeros(a.shape, a.dtype)
                     for t, a in zip(t_out, jaxpr.out_avals)]
            return list(p_out) + t_out if with_primals else t_out
        avals = list(jaxpr.in_avals) + [a for a, m in zip(jaxpr.in_avals, nonzero) if m]
        with effects_suppressed():  # it recomputes primals: their call made the effects
            return trace_closed(f, avals, "jvp")
    return derived_program(jaxpr, ("jvp", tuple(nonzero), with_primals), make)


def transpose_jaxpr(jaxpr, linear):
    """The program ``(inputs not flagged in linear, output cotangents) -> cotangents of
    the linear inputs`` of ``jaxpr``, linear in the flagged inputs (constants first)."""
    def make():
        lin_avals = [a for a, m in zip(jaxpr.in_avals, linear) if m]
        def_avals = [a for a, m in zip(jaxpr.in_avals, linear) if not m]
        n_def = len(def_avals)

        def f(*args):
            defined, cts = args[:n_def], args[n_def:]

            def f_lin(*lin):
                li, di = iter(lin), iter(defined)
                full = [next(li) if m else next(di) for m in linear]
                return eval_jaxpr(jaxpr, [], *full)

            zeros = [np.zeros(a.shape, a.dtype) for a in lin_avals]
            _, pullback = vjp(f_lin, *zeros)
            return list(pullback(list(cts)))
        with effects_suppressed():
            return trace_closed(f, def_avals + list(jaxpr.out_avals), "transpose")
    return derived_program(jaxpr, ("transpose", tuple(linear)), make)


def vjp_jaxpr(jaxpr, wrt, out_mask):
    """The program ``(all inputs, cotangents of the outputs flagged in out_mask) ->
    cotangents of the inputs flagged in wrt`` of ``jaxpr`` (constants first): its
    reverse-mode derivative at the point given, for a program that need not be linear
    (a loop body run backwards; `transpose_jaxpr` is for linear ones)."""
    def make():
        n = len(jaxpr.invars)

        def f(*args):
            point, cts = args[:n], args[n:]

            def f_wrt(*xs):
                it = iter(xs)
                full = [next(it) if m else v for v, m in zip(point, wrt)]
                return [o for o, m in zip(eval_jaxpr(jaxpr, [], *full), out_mask) if m]

            _, pullback = vjp(f_wrt, *[v for v, m in zip(point, wrt) if m])
            return list(pullback(list(cts)))
        avals = list(jaxpr.in_avals) + [a for a, m in zip(jaxpr.out_avals, out_mask) if m]
        with effects_suppressed():
            return trace_closed(f, avals, "vjp")
    return derived_program(jaxpr, ("vjp", tuple(wrt), tuple(out_mask)), make)


# --------------------------------------------------------------------------- custom_vjp
# A custom_vjp function under a JVP trace: its forward pass runs, and the tangents go
# through one linear equation, ``custom_lin``, whose transpose is the user's ``bwd``
# applied to the residuals (JAX's design).  It lives here, with the JVP trace that emits
# it; its batching rule is in batching.py.

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_impl(*args, num_res, bwd, out_avals, num_primals=0, fwd_jvp=None):
    if fwd_jvp is not None:   # the function's forward rule, on its primal inputs
        primals = list(args[num_res - num_primals:num_res])
        return [np.asarray(t) for t in fwd_jvp(primals, list(args[num_res:]))]
    if all(not np.any(np.asarray(t)) for t in args[num_res:]):
        # linear in its tangents: at zero tangents it is zero.  (Transposing a linear
        # program by a vjp evaluates it there: cond/scan/while/jit transposes do.)
        return [np.zeros(a.shape, a.dtype) for a in out_avals]
    raise errors.CustomVJPForwardModeError(
        "forward-mode differentiation (jvp, jacfwd, hessian's outer jacfwd) of a custom_vjp "
        f"function is not supported (at {errors.user_frame()}): its derivative is only known "
        "through its bwd rule. Use reverse mode (grad, vjp, jacrev), define a custom_jvp, "
        "or give the custom_vjp function a forward rule with .defjvp_forward.")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, num_primals=0, fwd_jvp=None):
    res = args[:num_res - num_primals]
    cts = [instantiate(c) if type(c) is Zero else c for c in cts]
    in_cts = bwd(list(res), cts)
    n_in = len(args) - num_res
    if len(in_cts) != n_in:
        raise errors.ZeraxTypeError(
            f"a custom_vjp bwd rule returned {len(in_cts)} cotangents for {n_in} inputs")
    return [None] * num_res + list(in_cts)


def _custom_lin_jvp(primals, tangents, *, num_res, **params):
    """custom_lin is linear in its tangent operands, so its JVP along them is itself.
    (Needed where a linear program is transposed by a vjp.)  Along the residuals it
    would be a second derivative through ``bwd``, which is not known."""
    params = dict(num_res=num_res, **params)
    if any(type(t) is not Zero for t in tangents[:num_res]):
        raise errors.CustomVJPForwardModeError(
            "forward-mode differentiation of a custom_vjp function's derivative with "
            f"respect to its residuals is not supported (at {errors.user_frame()}): it "
            "would need the derivative of its bwd rule. Use reverse mode only, or define "
            "a custom_jvp.")
    outs = bind(custom_lin_p, *primals, **params)
    ts = [instantiate(t) for t in tangents[num_res:]]
    t_outs = bind(custom_lin_p, *primals[:num_res], *ts, **params)
    return outs, t_outs


custom_lin_p.impl = _custom_lin_impl
custom_lin_p.abstract_eval = lambda *avals, out_avals, **params: list(out_avals)
transpose_rules[custom_lin_p] = _custom_lin_transpose
jvp_rules[custom_lin_p] = _custom_lin_jvp
custom_lin_p.unsupported["lower"] = (
    "it is the forward-mode derivative of a custom_vjp function, which is only known "
    "through its bwd rule (use reverse mode, or a custom_jvp)")


def _transposed_later(tangents) -> bool:
    """Whether tangents are being recorded into a linearization (grad, vjp, linearize):
    their program is transposed, so a custom_vjp's bwd serves; otherwise they are
    computed forward (jvp, jacfwd, eagerly or into a program that runs)."""
    top = find_top_trace(tangents)
    return top is not None and getattr(top, "records_program", True) is False


def custom_vjp_jvp(fwd, bwd, primals, tangents, fwd_jvp=None):
    """The JVP trace's handling of a custom_vjp call: run ``fwd`` now, and emit one
    linear equation whose transpose is ``bwd`` applied to the residuals.  With a forward
    rule ``fwd_jvp(primals, tangents) -> output tangents`` (``custom_vjp.defjvp_forward``)
    tangents computed forward come from it; the linear equation (for a linearization)
    then carries the primals too, so that evaluating it forward calls the rule."""
    outs, res = fwd(*primals)
    out_avals = tuple(get_aval(o) for o in outs)
    if all(type(t) is Zero for t in tangents):
        return outs, [Zero(a) for a in out_avals]
    ts = [instantiate(t) for t in tangents]
    if fwd_jvp is not None and not _transposed_later(ts):
        t_outs = list(fwd_jvp(list(primals), ts))
    elif fwd_jvp is not None:
        t_outs = bind(custom_lin_p, *res, *primals, *ts, num_res=len(res) + len(primals),
                      num_primals=len(primals), bwd=bwd, fwd_jvp=fwd_jvp, out_avals=out_avals)
    else:
        t_outs = bind(custom_lin_p, *res, *ts, num_res=len(res), bwd=bwd, out_avals=out_avals)
    t_outs = [Zero(a) if dtype_kind(a.dtype) not in "fc" else t for a, t in zip(out_avals, t_outs)]
    return outs, t_outs
