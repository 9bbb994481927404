"""Dropping the casts of generated scalar code that Numba does not need.

The scalar rules (``lower_elementwise.py``) wrap every element expression in a cast to
its output dtype, ``np.float64(y4 * x5)``, because Numba's arithmetic does not always
keep NumPy's dtypes (``int8 + int8`` is ``int64`` in Numba).  Each such cast is one more
function call for Numba's type inference to resolve, and typing is most of a cold
compile of a long fused chain: a 1,000-equation chain compiled in 6.1 s with the casts
and 1.8 s without them.

`cast_free` removes a cast only where Numba's type of the expression is provably the
output dtype already, from the exact Numba types of its operands (`ExactTypes`): a
value loaded from an array, a typed literal, or an earlier expression proved the same
way.  Anything it does not recognise keeps its cast, so the worst case is today's
code.  (``tests/test_compile_casts.py`` checks the arithmetic it relies on against
NumPy, bit for bit, in every dtype it names.)
"""

from __future__ import annotations

import re

import numpy as np

# Dtypes whose Numba arithmetic ``T op T`` gives ``T`` for +, - and * (and unary -);
# narrower integers are widened to int64 by Numba, so their casts stay.
_CLOSED = frozenset(np.dtype(d) for d in (np.float64, np.float32, np.complex128,
                                            np.complex64, np.int64, np.uint64))
_ORDERED = "fiub"  # kinds whose comparisons are Numba's plain ones (complex: scalarmath)

_OPERAND = r"(\w+|np\.\w+\([-\w.+]*\))"
_ARITH = re.compile(rf"^{_OPERAND} ([-+*]) {_OPERAND}$")
_DIV = re.compile(rf"^{_OPERAND} / {_OPERAND}$")
_NEG = re.compile(rf"^-{_OPERAND}$")
# NumPy ufuncs of one float whose Numba loop keeps the dtype (float32 -> float32)
_UNARY = re.compile(rf"^np\.(sqrt|abs|floor|ceil|rint|sign)\({_OPERAND}\)$")
_COMPARE = re.compile(rf"^{_OPERAND} (==|!=|<|<=|>|>=) {_OPERAND}$")
_SELECT = re.compile(rf"^\({_OPERAND} if (\S+) else {_OPERAND}\)$")
_VECMATH = re.compile(r"^_vm_\w+(?=\()")
_INNER_F64 = re.compile(r"np\.float64\((\w+)\)")
_LITERAL = re.compile(r"^np\.(\w+)\([-\w.+]*\)$")


def _dtype_name(dtype) -> str:
    d = np.dtype(dtype)
    return "np.bool_" if d == np.bool_ else f"np.{d.name}"


class ExactTypes:
    """The scalar names of one generated kernel whose Numba type is exactly a dtype."""

    def __init__(self):
        self._of: dict[str, np.dtype] = {}

    def add(self, name: str, dtype) -> None:
        self._of[name] = np.dtype(dtype)

    def of(self, text: str):
        """The exact dtype of an operand's text (a name or a typed literal), or None."""
        d = self._of.get(text)
        if d is not None:
            return d
        m = _LITERAL.match(text)
        if m is not None and m.group(1) != "full":
            try:
                return np.dtype(m.group(1).rstrip("_"))
            except TypeError:
                return None
        if text in ("True", "False"):
            return np.dtype(np.bool_)
        return None


def _strip_outer(expr: str, cast: str):
    """``inner`` of ``cast(inner)`` (the cast spanning the whole text), or None."""
    if not (expr.startswith(cast + "(") and expr.endswith(")")):
        return None
    depth = 0
    for k in range(len(cast), len(expr)):
        c = expr[k]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and k != len(expr) - 1:
                return None      # cast(a) + f(b): the cast does not span the text
    return expr[len(cast) + 1:-1]


def cast_free(expr: str, out_dtype, types: ExactTypes):
    """``(expr', exact)``: ``expr`` without the casts Numba does not need, and whether
    Numba's type of ``expr'`` is exactly ``out_dtype`` (so that a name assigned it may
    go into ``types``)."""
    od = np.dtype(out_dtype)
    # float64(name) of a float64 name: the argument of a vecmath intrinsic, typically
    expr = _INNER_F64.sub(lambda m: m.group(1) if types.of(m.group(1)) == np.float64
                          else m.group(0), expr)
    inner = _strip_outer(expr, _dtype_name(od))
    if inner is None:
        m = _SELECT.match(expr)
        exact = m is not None and types.of(m.group(1)) == od and types.of(m.group(3)) == od
        return expr, exact
    m = _ARITH.match(inner)
    if m is not None and od in _CLOSED and types.of(m.group(1)) == od == types.of(m.group(3)):
        return inner, True
    m = _DIV.match(inner)   # float / float of one dtype (integer / is float64 in Numba)
    if m is not None and od.kind == "f" and types.of(m.group(1)) == od == types.of(m.group(2)):
        return inner, True
    m = _UNARY.match(inner)
    if m is not None and od.kind == "f" and types.of(m.group(2)) == od:
        return inner, True
    m = _NEG.match(inner)
    if m is not None and od in _CLOSED and types.of(m.group(1)) == od:
        return inner, True
    m = _COMPARE.match(inner)
    if m is not None and od == np.bool_:
        a, b = types.of(m.group(1)), types.of(m.group(3))
        if a is not None and a == b and a.kind in _ORDERED:
            return inner, True
    m = _VECMATH.match(inner)
    if m is not None and od == np.float64 and _strip_outer(inner, m.group(0)) is not None:
        return inner, True   # vecmath's intrinsics are float64 -> float64
    return expr, True    # the cast itself makes the type exact
