"""NumPy's results at the edges, in compiled code, where Numba's operators differ.

Numba's integer ``//`` and ``%`` trap (SIGFPE) or give 0 at ``INT_MIN // -1``, its
shifts by the bit width or more are LLVM poison, its ``np.power`` of integers goes
through floats (``3 ** 39`` loses its last digits), its complex division by zero
raises ``ZeroDivisionError`` and it has no ordering of complex numbers.  `lower` gives
the scalar expression NumPy's loops compute instead (``numpy/_core/src/umath``):

* integer ``a // b``: 0 where ``b == 0``, ``-a`` (wrapping) where ``b == -1``;
  ``a % b``: 0 where ``b`` is 0 or -1, else Python's (floored) remainder;
* ``a << b``: 0 where ``b`` is negative or at least the bit width; ``a >> b``: the sign
  fill (-1 or 0) there;
* integer powers by repeated squaring in the integer type (wrapping as NumPy's);
* complex ``a / b`` with ``b == 0``: ``(a.real / |b.real|, a.imag / |b.real|)``, so inf
  or nan as NumPy's;
* complex ``<``, ``<=``, ``>``, ``>=``, ``max``, ``min``: NumPy's lexicographic order, with
  its nan rules (``CLT``/``CGE``... in ``loops.c.src``).

Expressions are inline (no helper calls, so LLVM still vectorises fused loops) and
repeat an operand's text only when it is a name or a literal, as the fused loop
generator passes them.  `None` means the caller's default expression is right.
"""

from __future__ import annotations

import numpy as np

from .fusion import LoweringError

# Integer powers up to this exponent are written as a product (LLVM turns it into
# squarings); larger ones call `int_pow`, a loop of squarings.
_UNROLLED_POW = 8


def _dn(dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


def _int_kind(dtype) -> str | None:
    k = np.dtype(dtype).kind
    return k if k in "iu" else None


def int_pow(x, n, one):
    """``x ** n`` (``n >= 0``) by repeated squaring, wrapping as the integer type does
    (``one`` is 1 of the result type)."""
    acc = one
    while n > 0:
        if n & 1:
            acc = acc * x
        x = x * x
        n >>= 1
    return acc


_INT_POW: list = []


def _int_pow_helper(ctx):
    import numba
    if not _INT_POW:    # one dispatcher per process, shared by every program
        _INT_POW.append(numba.njit(int_pow, cache=False))
    return ctx.helper("_zx_int_pow", _INT_POW[0])


# Constants are written in the operands' dtype: Numba unifies an int64 literal with a
# uint64 value as float64, which would round large uint64 results.

def _floor_divide(a, b, dtype):
    zero = f"{_dn(dtype)}(0)"
    if np.dtype(dtype).kind == "u":
        return f"({zero} if {b} == {zero} else {a} // {b})"
    return f"({zero} if {b} == 0 else (-{a} if {b} == -1 else {a} // {b}))"


def _rem(a, b, dtype):
    zero = f"{_dn(dtype)}(0)"
    if np.dtype(dtype).kind == "u":
        return f"({zero} if {b} == {zero} else {a} % {b})"
    return f"({zero} if ({b} == 0 or {b} == -1) else {a} % {b})"


def _shift(a, b, dtype, bdtype, left):
    bits = np.dtype(dtype).itemsize * 8
    limit = f"{_dn(bdtype)}({bits})"
    out_of_range = f"{b} >= {limit}" if np.dtype(bdtype).kind == "u" \
        else f"({b} < 0 or {b} >= {limit})"
    zero = f"{_dn(dtype)}(0)"
    if left:
        return f"({zero} if {out_of_range} else {a} << {b})"
    if np.dtype(dtype).kind == "u":
        return f"({zero} if {out_of_range} else {a} >> {b})"
    # a >> (bits - 1) is the sign fill: -1 for negative a, 0 otherwise.
    return f"({a} >> {bits - 1} if {out_of_range} else {a} >> {b})"


def _integer_pow(x, y, dtype, ctx):
    if y < 0:
        raise LoweringError(None, "integers to negative integer powers are not allowed")
    if y == 0:
        return f"{_dn(dtype)}(1)"
    if y <= _UNROLLED_POW:
        return " * ".join([x] * y)
    return f"{_int_pow_helper(ctx)}({x}, {int(y)}, {_dn(dtype)}(1))"


def _pow(x, y, dtype, ydtype, ctx):
    # An integer power of an integer array by an integer array; NumPy raises on a
    # negative exponent, which a kernel cannot: x ** -n is then computed as C's
    # integer division 1 / x ** n would (1, -1 or 0), the value NumPy 1 gave.
    fn = _int_pow_helper(ctx)
    neg = f"(1 if {x} == 1 else ((1 if {y} % 2 == 0 else -1) if {x} == -1 else 0))"
    if np.dtype(ydtype).kind == "u":
        return f"{fn}({x}, {y}, {_dn(dtype)}(1))"
    return f"({neg} if {y} < 0 else {fn}({x}, {y}, {_dn(dtype)}(1)))"


def _complex_div(a, b):
    return (f"(complex({a}.real / abs({b}.real), {a}.imag / abs({b}.real)) "
            f"if ({b}.real == 0 and {b}.imag == 0) else {a} / {b})")


def _isnan(z):
    return f"({z} != {z})"


def _ordered(op, a, b):
    """NumPy's CLT/CLE/CGT/CGE of complex ``a`` and ``b``."""
    strict = {"lt": "<", "le": "<", "gt": ">", "ge": ">"}[op]
    tie = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
    ar, ai, br, bi = f"{a}.real", f"{a}.imag", f"{b}.real", f"{b}.imag"
    return (f"(({ar} {strict} {br} and {ai} == {ai} and {bi} == {bi}) or "
            f"({ar} == {br} and {ai} {tie} {bi}))")


def _complex_extreme(a, b, greater):
    keep_a = _ordered("ge" if greater else "le", a, b)
    return f"({a} if ({keep_a} or {_isnan(f'{a}.real')} or {_isnan(f'{a}.imag')}) else {b})"


def lower(name: str, args, in_dtypes, ctx, **params) -> str | None:
    """The scalar expression of primitive ``name`` where NumPy's edge results need
    one (its value, before the cast to the output dtype); None otherwise."""
    dtype = np.dtype(in_dtypes[0])
    kind = _int_kind(dtype)
    if kind is not None:
        if name == "floor_divide":
            return _floor_divide(args[0], args[1], dtype)
        if name == "rem":
            return _rem(args[0], args[1], dtype)
        if name in ("shift_left", "shift_right"):
            return _shift(args[0], args[1], dtype, in_dtypes[1], name == "shift_left")
        if name == "integer_pow":
            return _integer_pow(args[0], int(params["y"]), dtype, ctx)
        if name == "pow" and _int_kind(in_dtypes[1]) is not None:
            return _pow(args[0], args[1], dtype, in_dtypes[1], ctx)
        return None
    if dtype.kind == "c":
        if name == "div":
            return _complex_div(args[0], args[1])
        if name in ("lt", "le", "gt", "ge"):
            return _ordered(name, args[0], args[1])
        if name in ("max", "min"):
            return _complex_extreme(args[0], args[1], name == "max")
    return None
