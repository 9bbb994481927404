"""Symbolic dimensions (JAX's shape polymorphism): ``symbolic_shape("b, 784")``.

A `DimExpr` is a polynomial with integer coefficients in named dimension variables
(``b``, ``2*b + 1``, ``b*n``).  It stands for a size in the shape of an argument given to
``zerax.export.export`` (through `ShapeDtypeStruct`), so that one exported program runs
for every value of the variable.  This module owns the expressions, their parser (a
small grammar: integers, names, ``+``, ``-``, ``*`` and parentheses; nothing is
evaluated) and their constraints (``b >= 16``); tracing never sees them: the export
traces the function at concrete sizes (see ``api/export/symbolic.py``).
"""

from __future__ import annotations

import re

from ... import errors

__all__ = ["DimExpr", "SymbolicScope", "symbolic_shape", "is_symbolic_dim"]


class SymbolicScope:
    """The dimension variables that may be used together, and their constraints
    (``"b >= 16"``, ``"b <= 1024"``: a variable against an integer).  Every variable is
    at least 1, as in JAX.

    >>> scope = SymbolicScope(["b >= 2"])
    >>> scope.bounds("b")
    (2, None)
    """

    def __init__(self, constraints=()):
        if isinstance(constraints, str):
            raise errors.ZeraxTypeError(
                "SymbolicScope takes a sequence of constraint strings, e.g. ['b >= 16'], "
                f"not one string {constraints!r}")
        self.constraints = tuple(constraints)
        self._bounds: dict[str, list] = {}
        for c in self.constraints:
            m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=)\s*(-?\d+)\s*", str(c))
            if m is None:
                raise errors.NotSupportedError(
                    f"symbolic constraint {c!r}: zerax supports bounds of one dimension "
                    "variable by an integer ('b >= 16', 'b <= 1024').")
            name, op, k = m.group(1), m.group(2), int(m.group(3))
            lo, hi = self._bounds.setdefault(name, [1, None])
            if op == ">=":
                self._bounds[name][0] = max(lo, k)
            else:
                self._bounds[name][1] = k if hi is None else min(hi, k)

    def bounds(self, name: str) -> tuple:
        """(lower, upper) bound of ``name`` (upper None: unbounded)."""
        lo, hi = self._bounds.get(name, (1, None))
        return lo, hi

    def __repr__(self):
        return f"SymbolicScope({list(self.constraints)})"


_DEFAULT_SCOPE = SymbolicScope()


class DimExpr:
    """A symbolic dimension: ``sum(coef * prod(variables))`` with integer coefficients.

    >>> b, n = symbolic_shape("b, n")
    >>> 2 * b * n + 1
    2*b*n + 1
    >>> (b + 1).evaluate({"b": 4})
    5
    """

    __slots__ = ("terms", "scope")

    def __init__(self, terms, scope: SymbolicScope | None = None):
        # terms: {monomial (sorted tuple of variable names, repeated for powers): coef}
        self.terms = tuple(sorted((m, c) for m, c in dict(terms).items() if c != 0))
        self.scope = scope if scope is not None else _DEFAULT_SCOPE

    @staticmethod
    def var(name: str, scope: SymbolicScope | None = None) -> DimExpr:
        return DimExpr({(name,): 1}, scope)

    # -- algebra
    @staticmethod
    def _lift(x, scope):
        if isinstance(x, DimExpr):
            if x.scope is not scope and x.scope is not _DEFAULT_SCOPE \
                    and scope is not _DEFAULT_SCOPE:
                raise errors.ZeraxValueError(
                    "symbolic dimensions from different SymbolicScopes were combined; make "
                    "them with one scope (symbolic_shape(..., scope=scope)).")
            return x
        if isinstance(x, int) and not isinstance(x, bool):
            return DimExpr({(): x}, scope)
        return None

    def _combine(self, other, sign):
        o = DimExpr._lift(other, self.scope)
        if o is None:
            return NotImplemented
        terms = dict(self.terms)
        for m, c in o.terms:
            terms[m] = terms.get(m, 0) + sign * c
        return DimExpr(terms, self._scope_with(o))

    def _scope_with(self, o):
        return self.scope if self.variables() or not o.variables() else o.scope

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __neg__(self):
        return DimExpr({m: -c for m, c in self.terms}, self.scope)

    def __mul__(self, other):
        o = DimExpr._lift(other, self.scope)
        if o is None:
            return NotImplemented
        terms: dict = {}
        for m1, c1 in self.terms:
            for m2, c2 in o.terms:
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, 0) + c1 * c2
        return DimExpr(terms, self._scope_with(o))

    __rmul__ = __mul__

    def __eq__(self, other):
        o = DimExpr._lift(other, self.scope)
        if o is None:
            return NotImplemented
        return self.terms == o.terms

    def __hash__(self):
        if self.is_constant():
            return hash(self.constant())
        return hash(self.terms)

    # -- queries
    def variables(self) -> tuple:
        """The names of the variables, sorted."""
        return tuple(sorted({v for m, _ in self.terms for v in m}))

    def is_constant(self) -> bool:
        return all(not m for m, _ in self.terms)

    def constant(self) -> int:
        return dict(self.terms).get((), 0)

    def as_linear(self):
        """``(name, coef, offset)`` when the expression is ``coef * name + offset``
        with one variable, else None."""
        nonconst = [(m, c) for m, c in self.terms if m]
        if len(nonconst) != 1 or len(nonconst[0][0]) != 1:
            return None
        (m, c), = nonconst
        return m[0], c, self.constant()

    def evaluate(self, env) -> int:
        """The value for ``env`` (variable name -> int)."""
        total = 0
        for m, c in self.terms:
            v = c
            for name in m:
                v *= env[name]
            total += v
        return total

    # -- no concrete value
    def _no_value(self, what):
        raise errors.ShapeError(
            f"the symbolic dimension {self} has no concrete value ({what}); symbolic "
            "dimensions only describe the arguments given to zerax.export.export.")

    def __int__(self):
        if self.is_constant():
            return self.constant()
        self._no_value("int()")

    __index__ = __int__

    def __bool__(self):
        self._no_value("bool()")

    def __lt__(self, other):
        self._no_value("a comparison")

    __le__ = __gt__ = __ge__ = __lt__

    def __str__(self):
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms, key=lambda mc: (-len(mc[0]), mc[0])):
            factors = "*".join(m)
            if not m:
                body = str(abs(c))
            elif abs(c) == 1:
                body = factors
            else:
                body = f"{abs(c)}*{factors}"
            if not parts:
                parts.append(body if c > 0 else f"-{body}")
            else:
                parts.append(f"+ {body}" if c > 0 else f"- {body}")
        return " ".join(parts)

    __repr__ = __str__


def is_symbolic_dim(d) -> bool:
    """Whether ``d`` is a dimension that is not a constant (a `DimExpr` with variables)."""
    return isinstance(d, DimExpr) and not d.is_constant()


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _tokens(text: str):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        num, name, op = m.groups()
        if op is not None and op not in "+-*(),":
            raise errors.ZeraxValueError(
                f"symbolic shape {text!r}: unexpected character {op!r} at position "
                f"{m.start(3)} (dimensions are integers, names, +, -, * and parentheses)")
        out.append(int(num) if num is not None else name if name is not None else op)
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text, scope, like_dim):
        self.text, self.toks, self.i = text, _tokens(text), 0
        self.scope, self.like_dim = scope, like_dim

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def fail(self, what):
        raise errors.ZeraxValueError(f"symbolic shape {self.text!r}: {what}")

    def expr(self):
        e = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            t = self.term()
            e = e + t if op == "+" else e - t
        return e

    def term(self):
        e = self.factor()
        while self.peek() == "*":
            self.take()
            e = e * self.factor()
        return e

    def factor(self):
        t = self.take()
        if t == "-":
            return -self.factor()
        if t == "(":
            e = self.expr()
            if self.take() != ")":
                self.fail("unbalanced parentheses")
            return e
        if isinstance(t, int):
            return DimExpr({(): t}, self.scope)
        if t == "_":
            return self.like_dim()
        if isinstance(t, str) and t not in "+-*(),":
            return DimExpr.var(t, self.scope)
        self.fail(f"expected a dimension, got {t!r}")


def symbolic_shape(shape_spec, *, constraints=(), scope: SymbolicScope | None = None,
                   like=None) -> tuple:
    """A shape with symbolic dimensions, from a string (JAX's
    ``jax.export.symbolic_shape``): ``"b, 784"`` gives ``(b, 784)``.  ``_`` takes the
    dimension from ``like`` (a concrete shape); ``constraints`` bound variables
    (``"b >= 16"``).  Constant dimensions come back as ints.

    >>> symbolic_shape("b, 2*n + 1")
    (b, 2*n + 1)
    >>> symbolic_shape("_, b", like=(3, None))
    (3, b)
    """
    if scope is None:
        scope = SymbolicScope(constraints) if constraints else _DEFAULT_SCOPE
    elif constraints:
        raise errors.ZeraxValueError("symbolic_shape: give constraints or a scope, not both")
    if shape_spec is None:
        raise errors.ZeraxTypeError("symbolic_shape takes a string like 'b, 784'")
    text = str(shape_spec).strip()
    if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1]
    index = [0]

    def like_dim():
        k = index[0]
        if like is None or k >= len(like) or like[k] is None:
            raise errors.ZeraxValueError(
                f"symbolic shape {shape_spec!r}: '_' at dimension {k} needs like= with a "
                "known size there")
        return DimExpr({(): int(like[k])}, scope)

    parser = _Parser(text, scope, like_dim)
    out = []
    if parser.peek() is not None:
        while True:
            out.append(parser.expr())
            index[0] += 1
            t = parser.take()
            if t is None:
                break
            if t != ",":
                parser.fail(f"expected ',' between dimensions, got {t!r}")
            if parser.peek() is None:
                break
    if like is not None and len(like) != len(out):
        raise errors.ZeraxValueError(
            f"symbolic shape {shape_spec!r} has {len(out)} dimensions but like= has "
            f"{len(like)}")
    return tuple(d.constant() if d.is_constant() else d for d in out)
