"""The IR: typed variables, equations and programs (jaxprs).

A `Jaxpr` is a list of equations in topological order over typed variables; a
`ClosedJaxpr` pairs it with the values of its constant variables.  This module owns
building blocks, the printer, the evaluator and the type checker; it knows nothing of
any particular primitive or transform.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..core.core import ShapedArray, bind, effectful_primitives, get_aval, short_dtype


class Var:
    """A typed variable; identity is the object itself."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = -1  # numbered when printed

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val):
        self.val = np.asarray(val)
        self.aval = ShapedArray(self.val.shape, self.val.dtype)

    def key(self):
        # The bits, not the value: 0.0 and -0.0 are equal but not interchangeable.
        return ("lit", self.val.dtype.str, self.val.tobytes())

    def __repr__(self):
        v = self.val.item()
        if isinstance(v, float):
            s = repr(v)
        else:
            s = str(v)
        return f"{s}:{short_dtype(self.val.dtype)}[]"


class Eqn:
    """``outvars = primitive[params](*invars)``."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source")

    def __init__(self, primitive, invars, outvars, params, source=None):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = dict(params)
        self.source = source  # "file:line (in function)" of the user's code, when tracked

    def __repr__(self):
        return f"Eqn({self.primitive.name}, {self.invars} -> {self.outvars})"


class Jaxpr:
    """A typed program: ``{ lambda constvars ; invars . let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "_executable", "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns):
        self._executable = None  # set by jit when the program is compiled
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]


class ClosedJaxpr:
    """A Jaxpr together with the values of its constant variables."""

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    def __call__(self, *args):
        return eval_jaxpr(self.jaxpr, self.consts, *args)


# --------------------------------------------------------------------------- eval

def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Evaluate ``jaxpr`` on ``args`` by binding each equation (so it composes with
    every transform); returns the list of outputs."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"program takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a):
        return a.val if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        out = bind(eqn.primitive, *ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outvars, out):
                env[v] = o
        else:
            env[eqn.outvars[0]] = out
    return [read(a) for a in jaxpr.outvars]


# --------------------------------------------------------------------------- printing

def _names():
    i = 0
    while True:
        n, s = i, ""
        while True:
            s = chr(ord("a") + n % 26) + s
            n = n // 26 - 1
            if n < 0:
                break
        yield s
        i += 1


class _Namer:
    def __init__(self):
        self.names = {}
        self.gen = _names()

    def __call__(self, v):
        if type(v) is Literal:
            return repr(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = next(self.gen)
        return name

    def decl(self, v):
        return f"{self(v)}:{v.aval.str_short()}"


def _pp_param(value, namer, indent):
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return "\n" + pp_jaxpr(value, indent + 4, namer)
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    return repr(value)


def pp_jaxpr(jaxpr: Jaxpr, indent: int = 0, namer: _Namer | None = None) -> str:
    """Print a program like a jaxpr: one equation per line, typed numbered variables."""
    namer = namer or _Namer()
    pad = " " * indent
    consts = " ".join(namer.decl(v) for v in jaxpr.constvars)
    ins = " ".join(namer.decl(v) for v in jaxpr.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let"]
    for eqn in jaxpr.eqns:
        outs = " ".join(namer.decl(v) for v in eqn.outvars)
        params = ""
        if eqn.params:
            params = "[" + ", ".join(f"{k}={_pp_param(v, namer, indent + 4)}"
                                     for k, v in sorted(eqn.params.items())) + "]"
        args = " ".join(namer(a) for a in eqn.invars)
        lines.append(f"{pad}    {outs} = {eqn.primitive.name}{params} {args}")
    outs = ", ".join(namer(v) for v in jaxpr.outvars)
    lines.append(f"{pad}  in ({outs},) }}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- checks

class JaxprTypeError(TypeError):
    """A program that is not well typed (an internal error: please report it)."""


def typecheck(jaxpr: Jaxpr) -> None:
    """Check that every variable is defined once before use and that each equation's
    output types are what its primitive's shape rule says."""
    defined = set()
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if v in defined:
            raise JaxprTypeError(f"variable {v} bound twice")
        defined.add(v)
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is not Literal and a not in defined:
                raise JaxprTypeError(f"{eqn.primitive} uses an undefined variable {a}")
        in_avals = [a.aval for a in eqn.invars]
        out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        got = [v.aval for v in eqn.outvars]
        if list(outs) != got:
            raise JaxprTypeError(f"{eqn.primitive}: shape rule says {outs}, IR has {got}")
        for v in eqn.outvars:
            if v in defined:
                raise JaxprTypeError(f"variable {v} bound twice")
            defined.add(v)
    for a in jaxpr.outvars:
        if type(a) is not Literal and a not in defined:
            raise JaxprTypeError(f"output {a} is not defined")


def dce(jaxpr: Jaxpr) -> Jaxpr:
    """Dead-code elimination: drop equations none of whose outputs are used, unless
    they have an effect (`has_effects`)."""
    live = {v for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or eqn_has_effects(eqn):
            kept.append(eqn)
            for a in eqn.invars:
                if type(a) is Var:
                    live.add(a)
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept)


# --------------------------------------------------------------------------- effects
# An *effect* is what a primitive does besides computing its outputs (a host callback
# prints).  Its module adds it to ``effectful_primitives`` (core.py's, where `bind`
# routes it to the innermost program); DCE then keeps its equations, and every call,
# loop or branch whose sub-program holds one (an effect inside ``jit``, ``scan`` or
# ``cond`` whose outputs are unused still happens).
_effects_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Jaxpr -> bool


def has_effects(jaxpr) -> bool:
    """Whether running ``jaxpr`` (a Jaxpr or ClosedJaxpr) has an effect, in any of its
    equations or sub-programs (memoised per program: programs are immutable)."""
    if type(jaxpr) is ClosedJaxpr:
        jaxpr = jaxpr.jaxpr
    if not effectful_primitives:
        return False
    known = _effects_of.get(jaxpr)
    if known is None:
        known = _effects_of[jaxpr] = any(eqn_has_effects(e) for e in jaxpr.eqns)
    return known


def eqn_has_effects(eqn) -> bool:
    if eqn.primitive in effectful_primitives:
        return True
    for p in eqn.params.values():
        if type(p) in (Jaxpr, ClosedJaxpr):
            if has_effects(p):
                return True
        elif type(p) in (tuple, list) and any(  # cond's branches
                type(q) in (Jaxpr, ClosedJaxpr) and has_effects(q) for q in p):
            return True
    return False


class effects_suppressed:
    """``with effects_suppressed():`` effectful primitives bound meanwhile do nothing
    and are not recorded.  For the programs a transform derives from one that has
    already run: the tangent program of ``jvp_jaxpr`` and the transposed program of
    ``transpose_jaxpr`` recompute the primal values, but the primal call made the
    effects (a print under ``grad(jit(f))`` prints once, as JAX's does)."""

    _depth = 0

    def __enter__(self):
        effects_suppressed._depth += 1

    def __exit__(self, *exc):
        effects_suppressed._depth -= 1
        return False

    @staticmethod
    def active() -> bool:
        return effects_suppressed._depth > 0


def jaxpr_as_fun(closed: ClosedJaxpr):
    """A Python function that evaluates ``closed`` (returns a list of outputs)."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun


def convert_constvars(jaxpr: Jaxpr) -> Jaxpr:
    """The same program with its constant variables turned into leading inputs."""
    return Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)


__all__ = ["Var", "Literal", "Eqn", "Jaxpr", "ClosedJaxpr", "eval_jaxpr", "pp_jaxpr",
           "typecheck", "dce", "jaxpr_as_fun", "convert_constvars", "get_aval",
           "effectful_primitives", "has_effects", "effects_suppressed"]
