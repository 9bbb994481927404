"""Elementwise primitives: arithmetic, comparisons, logic, and NumPy's math functions.

Each primitive is declared once here with its NumPy implementation, its shape/dtype
rule (from the `elementwise` factory), its JVP, its transpose where it is linear, and
its algebraic simplification where one applies.  Operands share one shape and one
dtype, except that a 0-d operand broadcasts (as a literal does); `zerax.numpy`
promotes and broadcasts before it binds.  Their compiled forms (one scalar expression
per element, fused into loop nests) are in each backend's ``lower_elementwise.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..base import fma as _fma
from ..base import special
from ..core.ad_util import Zero, install_add, is_undefined
from ..core.core import ShapedArray, Tracer, bind
from ._factory import defjvp, elementwise, not_differentiable, same_dtype, unbroadcast
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.tape import vjp_rules
from ..ir.tracing import simplify_rules
from ..base.dtypes import kind as dtype_kind

# --------------------------------------------------------------------------- helpers


def _c(x, v):
    """A 0-d constant of ``x``'s dtype (rules never use weak Python scalars)."""
    return np.array(v, dtype=x.dtype)


def _is_const(x, value) -> bool:
    """Whether ``x`` is a concrete scalar equal to ``value`` (for folding)."""
    if isinstance(x, Tracer):
        return False
    v = getattr(x, "_value", x)
    v = np.asarray(v)
    if v.ndim != 0 or v != value:
        return False
    # Signed zeros: x + (-0.0) is x for every float x, x + 0.0 is not (-0.0 + 0.0 is +0.0).
    return dtype_kind(v.dtype) not in "fc" or bool(np.signbit(v.real) == np.signbit(value))


def _binary_identity(identity_right=None, identity_left=None):
    """simplify rule: ``op(x, e) -> x`` and ``op(e, x) -> x`` for an identity element
    ``e`` (a concrete scalar of the same dtype that does not change the result's shape)."""

    def simplify(trace, args, atoms, params):
        ax, ay = atoms[0].aval, atoms[1].aval
        if ax.dtype != ay.dtype:
            return None
        if identity_right is not None and _is_const(args[1], identity_right) \
                and len(ax.shape) >= len(ay.shape):
            return args[0]
        if identity_left is not None and _is_const(args[0], identity_left) \
                and len(ay.shape) >= len(ax.shape):
            return args[1]
        return None

    return simplify


# --------------------------------------------------------------------------- arithmetic

add_p = elementwise("add", np.add, 2)
sub_p = elementwise("sub", np.subtract, 2)
mul_p = elementwise("mul", np.multiply, 2)
div_p = elementwise("div", np.true_divide, 2, kinds="fc")
neg_p = elementwise("neg", np.negative, 1)


def add(x, y):
    return bind(add_p, x, y)


add_any = add
install_add(add)  # core.ad_util.add_any: how transforms sum cotangents


def sub(x, y):
    return bind(sub_p, x, y)


def mul(x, y):
    return bind(mul_p, x, y)


def div(x, y):
    return bind(div_p, x, y)


def neg(x):
    return bind(neg_p, x)


# Each ``vjp=`` below is the transpose of the JVP rule beside it, in NumPy on concrete
# values, for the eager tape (tape.py); computed as that transpose computes it, so the
# two paths agree to the last bit.  Python float constants are weak (NEP 50): ``1.0 - a``
# keeps ``a``'s dtype, as ``_c(x, 1.0) - a`` does.
defjvp(add_p, lambda g, ans, x, y: g, lambda g, ans, x, y: g,
       vjp=(lambda ct, ans, x, y: ct, lambda ct, ans, x, y: ct))
defjvp(sub_p, lambda g, ans, x, y: g, lambda g, ans, x, y: neg(g),
       vjp=(lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct))
defjvp(mul_p, lambda g, ans, x, y: mul(g, y), lambda g, ans, x, y: mul(x, g),
       vjp=(lambda ct, ans, x, y: ct * y, lambda ct, ans, x, y: x * ct))
# d(x/y)/dy = -x y^-2 (not -(x/y)/y): the powers of y form a family closed under
# differentiation, so nested derivatives of quotients stay polynomial in size (CSE merges
# each y^-k), where chains of divisions spell equal terms differently at every order.
defjvp(div_p, lambda g, ans, x, y: div(g, y),
       lambda g, ans, x, y: neg(mul(g, mul(x, integer_pow(y, -2)))),
       vjp=(lambda ct, ans, x, y: ct / y,
            lambda ct, ans, x, y: -(ct * (x * _integer_pow_impl(y, -2)))))
defjvp(neg_p, lambda g, ans, x: neg(g), vjp=(lambda ct, ans, x: -ct,))


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(ct, y.aval) if is_undefined(y) else None]


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(neg(ct), y.aval) if is_undefined(y) else None]


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise errors.ZeraxInternalError(
            "mul transposed in both operands: the program is not linear")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise errors.ZeraxInternalError("div is not linear in its divisor")
    return [unbroadcast(div(ct, y), x.aval), None]


for _p in (add_p, sub_p, mul_p, div_p, neg_p):
    _p.unsupported.pop("transpose", None)  # linear (in one operand at a time)
transpose_rules[add_p] = _add_transpose
transpose_rules[sub_p] = _sub_transpose
transpose_rules[mul_p] = _mul_transpose
transpose_rules[div_p] = _div_transpose
transpose_rules[neg_p] = lambda ct, x: [neg(ct)]

def _negated(trace, atom):
    """``x`` when ``atom`` was recorded in ``trace`` as ``neg(x)``, else None."""
    eqn = trace.producer.get(atom)
    return trace.value_of(eqn.invars[0]) if eqn is not None and eqn.primitive is neg_p else None


def _pull_negation(prim):
    """``(-x) op y`` and ``x op (-y)`` as ``-(x op y)`` for mul and div, ``x + (-y)`` as
    ``x - y`` and ``x - (-y)`` as ``x + y``: exact in IEEE arithmetic (signed zeros
    included), and what keeps nested derivatives small, where each order otherwise
    spells one value with its signs in different places, which CSE cannot merge."""
    def simplify(trace, args, atoms, params):
        nx, ny = _negated(trace, atoms[0]), _negated(trace, atoms[1])
        if nx is None and ny is None:
            return None
        x = args[0] if nx is None else nx
        y = args[1] if ny is None else ny
        if prim in (mul_p, div_p):
            out = bind(prim, x, y)
            return out if nx is not None and ny is not None else neg(out)
        if prim is add_p:
            if ny is not None and nx is None:
                return sub(x, y)
            if nx is not None and ny is None:
                return sub(y, x)
            return None     # -(x + y) would turn an exact +0 into -0
        return add(x, y) if ny is not None and nx is None else None   # sub
    return simplify


def _first(*rules):
    def simplify(trace, args, atoms, params):
        for rule in rules:
            out = rule(trace, args, atoms, params)
            if out is not None:
                return out
        return None
    return simplify


simplify_rules[add_p] = _first(_binary_identity(-0.0, -0.0),   # -0.0: the float identity
                               _pull_negation(add_p))
simplify_rules[sub_p] = _first(_binary_identity(0.0, None), _pull_negation(sub_p))
simplify_rules[mul_p] = _first(_binary_identity(1, 1), _pull_negation(mul_p))
simplify_rules[div_p] = _first(_binary_identity(1, None), _pull_negation(div_p))


for _p in (add_p, mul_p):
    _p.commutative = True


def _neg_simplify(trace, args, atoms, params):
    eqn = trace.producer.get(atoms[0])
    if eqn is not None and eqn.primitive is neg_p:
        return trace.value_of(eqn.invars[0])  # neg(neg(x)) -> x
    return None


simplify_rules[neg_p] = _neg_simplify

# --------------------------------------------------------------------------- integer-ish

floor_divide_p = not_differentiable(elementwise("floor_divide", np.floor_divide, 2))
rem_p = elementwise("rem", np.remainder, 2)
sign_p = not_differentiable(elementwise("sign", np.sign, 1))
floor_p = not_differentiable(elementwise("floor", np.floor, 1, kinds="f"))
ceil_p = not_differentiable(elementwise("ceil", np.ceil, 1, kinds="f"))
round_p = not_differentiable(elementwise("round", lambda x: np.round(x), 1, kinds="f"))


def floor_divide(x, y):
    return bind(floor_divide_p, x, y)


def rem(x, y):
    return bind(rem_p, x, y)


def truncated_rem(x, y):
    """The remainder with the sign of the dividend (C's ``fmod``, JAX's ``lax.rem``): a
    composition of `rem` (which has the divisor's sign, as NumPy's ``remainder``)."""
    if dtype_kind(x.dtype) == "f":
        # |x| mod |y| is exact and already the magnitude; the sign is x's, read with
        # atan2 (-pi for x < 0 and for -0.0) so that -0.0 keeps its sign.  (Fixing up
        # rem(x, y) by subtracting y instead cancels digits when |x| < |y|.)
        r = rem(bind(abs_p, x), bind(abs_p, y))
        negative = lt(bind(atan2_p, x, np.full((), -1.0, x.dtype)), np.zeros((), x.dtype))
        return select_n(negative, r, neg(r))
    r = rem(x, y)
    zero = np.zeros((), r.dtype)
    wrong_sign = bitwise_and(ne(r, zero), ne(lt(r, zero), lt(x, zero)))
    return select_n(wrong_sign, r, sub(r, y))


def sign(x):
    return bind(sign_p, x)


def floor(x):
    return bind(floor_p, x)


def ceil(x):
    return bind(ceil_p, x)


def round(x):  # noqa: A001 - lax's name; rounds half to even, like NumPy
    return bind(round_p, x)


defjvp(rem_p, lambda g, ans, x, y: g,
       lambda g, ans, x, y: mul(g, neg(floor(div(x, y)))))

# --------------------------------------------------------------------------- max/min/pow

max_p = elementwise("max", np.maximum, 2)
min_p = elementwise("min", np.minimum, 2)
def _pow_impl(x, y):
    # Half and single precision through float64, rounded once: NumPy's SIMD float32
    # power (AVX-512 builds) can be an ulp off where libm's powf, XLA's and the
    # compiled kernels' are correctly rounded (optax's schedules compute in float32).
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype in (np.float32, np.float16):
        return np.power(x.astype(np.float64), y.astype(np.float64)).astype(x.dtype)
    return np.power(x, y)


pow_p = elementwise("pow", _pow_impl, 2)
integer_pow_p = elementwise("integer_pow", lambda x, *, y: _integer_pow_impl(x, y), 1)
atan2_p = elementwise("atan2", np.arctan2, 2, kinds="f")


def _integer_pow_impl(x, y):
    """``x ** y`` by squaring, multiplications in JAX's order (``lax.integer_pow``: x^3
    is x * (x * x)), each rounded in ``x``'s dtype; 1 / x^|y| for a negative ``y``."""
    x = np.asarray(x)
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError("integers to negative integer powers are not allowed")
    if y == 0:
        return np.ones_like(x)
    acc, n = None, abs(y)
    with np.errstate(over="ignore"):      # integers wrap, as compiled code does
        while n:
            if n & 1:
                acc = x if acc is None else acc * x
            n >>= 1
            if n:
                x = x * x
        return np.asarray(np.true_divide(1, acc, dtype=acc.dtype) if y < 0 else acc)


max_p.commutative = min_p.commutative = True


def maximum(x, y):
    return bind(max_p, x, y)


def minimum(x, y):
    return bind(min_p, x, y)


def pow(x, y):  # noqa: A001 - lax's name
    return bind(pow_p, x, y)


def integer_pow(x, y: int):
    return bind(integer_pow_p, x, y=int(y))


def _balanced_mask(x, y, pick_greater):
    """1 where this operand wins, 0.5 on ties, 0 where it loses (JAX's convention)."""
    wins = gt(x, y) if pick_greater else lt(x, y)
    one = _c(x, 1.0)
    half = _c(x, 0.5)
    zero = _c(x, 0.0)
    return select_n(wins, select_n(eq(x, y), zero, half), one)


def _balanced_mask_np(x, y, pick_greater):
    """`_balanced_mask` on concrete NumPy values (the eager tape's rules)."""
    wins = np.greater(x, y) if pick_greater else np.less(x, y)
    return np.where(wins, np.array(1.0, x.dtype),
                    np.where(np.equal(x, y), np.array(0.5, x.dtype), np.array(0.0, x.dtype)))


defjvp(max_p, lambda g, ans, x, y: mul(g, _balanced_mask(x, y, True)),
       lambda g, ans, x, y: mul(g, _balanced_mask(y, x, True)),
       vjp=(lambda ct, ans, x, y: ct * _balanced_mask_np(x, y, True),
            lambda ct, ans, x, y: ct * _balanced_mask_np(y, x, True)))
defjvp(min_p, lambda g, ans, x, y: mul(g, _balanced_mask(x, y, False)),
       lambda g, ans, x, y: mul(g, _balanced_mask(y, x, False)),
       vjp=(lambda ct, ans, x, y: ct * _balanced_mask_np(x, y, False),
            lambda ct, ans, x, y: ct * _balanced_mask_np(y, x, False)))


def _pow_jvp_x(g, ans, x, y):
    # d/dx x**y = y * x**(y-1); at x == 0, y == 0 that reads 0 * inf, and the limit is 0.
    # x is replaced by 1 there (not only the result by 0), so that the derivatives of
    # this rule stay finite too: d2/dx2 x**0.0 at 0 is 0, not 0 * inf = nan.
    both_zero = bitwise_and(eq(x, _c(x, 0.0)), eq(y, _c(y, 0.0)))
    safe_x = select_n(both_zero, x, _c(x, 1.0))
    jac = mul(y, pow(safe_x, sub(y, _c(y, 1.0))))
    return mul(g, jac)


def _pow_jvp_y(g, ans, x, y):
    safe_log = log(select_n(eq(x, _c(x, 0.0)), x, _c(x, 1.0)))
    return mul(g, mul(ans, safe_log))


defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)


def _integer_pow_jvp(g, ans, x, *, y):
    if y == 0:
        return mul(g, _c(x, 0.0))
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_c(x, 2.0), x))
    return mul(g, mul(_c(x, float(y)), integer_pow(x, y - 1)))


def _integer_pow_vjp(ct, ans, x, *, y):
    if y == 0:
        return ct * np.zeros((), x.dtype)
    if y == 1:
        return ct
    if y == 2:
        return ct * (2.0 * x)
    return ct * (float(y) * _integer_pow_impl(x, y - 1))


defjvp(integer_pow_p, _integer_pow_jvp, vjp=(_integer_pow_vjp,))


def _integer_pow_simplify(trace, args, atoms, params):
    if params["y"] == 1:
        return args[0]
    return None


simplify_rules[integer_pow_p] = _integer_pow_simplify


def _atan2_denominator(x, y):
    return add(mul(x, x), mul(y, y))


defjvp(atan2_p, lambda g, ans, y, x: mul(g, div(x, _atan2_denominator(x, y))),
       lambda g, ans, y, x: mul(g, neg(div(y, _atan2_denominator(x, y)))))

# --------------------------------------------------------------------------- comparisons, logic

_bool_out = lambda *avals, **params: np.dtype(np.bool_)  # noqa: E731
_cmp_dtype = lambda *avals, **params: (_check_same(avals), np.dtype(np.bool_))[1]  # noqa: E731


def _check_same(avals):
    return same_dtype("comparison", avals)


eq_p = not_differentiable(elementwise("eq", np.equal, 2, dtype_rule=_cmp_dtype))
ne_p = not_differentiable(elementwise("ne", np.not_equal, 2, dtype_rule=_cmp_dtype))
lt_p = not_differentiable(elementwise("lt", np.less, 2, dtype_rule=_cmp_dtype))
le_p = not_differentiable(elementwise("le", np.less_equal, 2, dtype_rule=_cmp_dtype))
gt_p = not_differentiable(elementwise("gt", np.greater, 2, dtype_rule=_cmp_dtype))
ge_p = not_differentiable(elementwise("ge", np.greater_equal, 2, dtype_rule=_cmp_dtype))
and_p = not_differentiable(elementwise("and", np.bitwise_and, 2, kinds="biu"))
or_p = not_differentiable(elementwise("or", np.bitwise_or, 2, kinds="biu"))
xor_p = not_differentiable(elementwise("xor", np.bitwise_xor, 2, kinds="biu"))
not_p = not_differentiable(elementwise("not", np.invert, 1, kinds="biu"))
shift_left_p = not_differentiable(elementwise("shift_left", np.left_shift, 2, kinds="iu"))
shift_right_p = not_differentiable(elementwise("shift_right", np.right_shift, 2, kinds="iu"))
is_finite_p = not_differentiable(
    elementwise("is_finite", np.isfinite, 1, dtype_rule=_bool_out))
isnan_p = not_differentiable(elementwise("isnan", np.isnan, 1, dtype_rule=_bool_out))


def eq(x, y):
    return bind(eq_p, x, y)


def ne(x, y):
    return bind(ne_p, x, y)


def lt(x, y):
    return bind(lt_p, x, y)


def le(x, y):
    return bind(le_p, x, y)


def gt(x, y):
    return bind(gt_p, x, y)


def ge(x, y):
    return bind(ge_p, x, y)


def bitwise_and(x, y):
    return bind(and_p, x, y)


def bitwise_or(x, y):
    return bind(or_p, x, y)


def bitwise_not(x):
    return bind(not_p, x)


def bitwise_xor(x, y):
    return bind(xor_p, x, y)


def shift_left(x, y):
    return bind(shift_left_p, x, y)


def shift_right(x, y):
    return bind(shift_right_p, x, y)


def is_finite(x):
    return bind(is_finite_p, x)


def isnan(x):
    return bind(isnan_p, x)


# --------------------------------------------------------------------------- select, clamp

def _select_impl(pred, *cases):
    if len(cases) == 2 and pred.dtype == np.bool_:
        return np.where(pred, cases[1], cases[0])
    return np.choose(np.asarray(pred, dtype=np.intp), cases)


def _select_dtype(pred, *cases, **params):
    if pred.dtype.kind not in "biu":
        raise errors.ZeraxTypeError(
            f"select_n: the predicate must be bool or int, got {pred.dtype}")
    return same_dtype("select_n", cases)


select_n_p = elementwise("select_n", _select_impl, (2, None), dtype_rule=_select_dtype)


def select_n(pred, *cases):
    """``cases[pred]`` elementwise (for a bool ``pred``: ``where(pred, cases[1], cases[0])``)."""
    return bind(select_n_p, pred, *cases)


def _select_jvp(primals, tangents):
    pred, *cases = primals
    ans = select_n(pred, *cases)
    case_ts = tangents[1:]
    if dtype_kind(ans.dtype) not in "fc" or all(type(t) is Zero for t in case_ts):
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    ts = [_zeros_like_aval(t.aval) if type(t) is Zero else t for t in case_ts]
    return ans, select_n(pred, *ts)


def _zeros_like_aval(aval):
    return np.zeros(aval.shape, aval.dtype)


def _select_transpose(ct, pred, *cases):
    if is_undefined(pred):
        raise errors.ZeraxInternalError("select_n is not linear in its predicate")
    out_shape = tuple(ct.shape)
    zero = _zeros_like_aval(ShapedArray((), ct.dtype))
    res = [None]
    for i, c in enumerate(cases):
        if is_undefined(c):
            branches = [ct if j == i else zero for j in range(len(cases))]
            res.append(unbroadcast(select_n(pred, *branches), c.aval))
        else:
            res.append(None)
    del out_shape
    return res


def _select_simplify(trace, args, atoms, params):
    cases = atoms[1:]
    first = cases[0]
    if all(c is first for c in cases) and first.aval.shape == _out_shape(atoms):
        return args[1]
    return None


def _out_shape(atoms):
    for a in atoms:
        if a.aval.shape:
            return a.aval.shape
    return ()


def _select_vjp(i):
    """Tape rule for operand i: the cotangent where case i-1 was picked, 0 elsewhere."""
    if i == 0:
        return None  # the predicate

    def rule(ct, ans, pred, *cases):
        zero = np.zeros((), ct.dtype)
        return _select_impl(pred, *[ct if j == i - 1 else zero for j in range(len(cases))])
    return rule


jvp_rules[select_n_p] = _select_jvp
vjp_rules[select_n_p] = _select_vjp
select_n_p.unsupported.pop("transpose", None)
transpose_rules[select_n_p] = _select_transpose
simplify_rules[select_n_p] = _select_simplify

clamp_p = elementwise("clamp", lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), 3)


def clamp(lo, x, hi):
    return bind(clamp_p, lo, x, hi)


# a * b + c rounded once (IEEE's fusedMultiplyAdd).  Not a JAX primitive: the random
# samplers use it where XLA's code generator fuses their multiply and add, so that
# their bits are JAX's under jit and eagerly alike (compiled code never contracts a
# multiply and an add by itself; see docs/compiler.md).
fma_p = elementwise("fma", lambda a, b, c: _fma.fma(a, b, c), 3, kinds="f")


def fma(a, b, c):
    return bind(fma_p, a, b, c)


defjvp(fma_p, lambda g, ans, a, b, c: mul(g, b), lambda g, ans, a, b, c: mul(a, g),
       lambda g, ans, a, b, c: g)


def _zero_like(x):
    return _c(x, 0.0)


defjvp(clamp_p,
       lambda g, ans, lo, x, hi: select_n(lt(x, lo), _zero_like(g), g),
       lambda g, ans, lo, x, hi: select_n(bitwise_and(gt(x, lo), lt(x, hi)), _zero_like(g), g),
       lambda g, ans, lo, x, hi: select_n(gt(x, hi), _zero_like(g), g))

# --------------------------------------------------------------------------- math functions


def _unary(name, impl, jvp_rule, kinds="fc", vjp=None):
    prim = elementwise(name, impl, 1, kinds=kinds)
    defjvp(prim, jvp_rule, vjp=None if vjp is None else (vjp,))
    return prim


def _special(fname):
    """The NumPy implementation of a special function (base/special.py)."""
    return getattr(special, fname)


exp_p = _unary("exp", np.exp, lambda g, ans, x: mul(g, ans),
               vjp=lambda ct, ans, x: ct * ans)
exp2_p = _unary("exp2", np.exp2, lambda g, ans, x: mul(g, mul(ans, _c(x, math.log(2.0)))))
log_p = _unary("log", np.log, lambda g, ans, x: div(g, x), vjp=lambda ct, ans, x: ct / x)
log1p_p = _unary("log1p", np.log1p, lambda g, ans, x: div(g, add(x, _c(x, 1.0))))
expm1_p = _unary("expm1", np.expm1, lambda g, ans, x: mul(g, add(ans, _c(x, 1.0))))
sin_p = _unary("sin", np.sin, lambda g, ans, x: mul(g, cos(x)),
               vjp=lambda ct, ans, x: ct * np.cos(x))
cos_p = _unary("cos", np.cos, lambda g, ans, x: neg(mul(g, sin(x))),
               vjp=lambda ct, ans, x: -(ct * np.sin(x)))
tan_p = _unary("tan", np.tan, lambda g, ans, x: mul(g, add(_c(x, 1.0), mul(ans, ans))))
asin_p = _unary("asin", np.arcsin,
                lambda g, ans, x: mul(g, rsqrt(sub(_c(x, 1.0), mul(x, x)))))
acos_p = _unary("acos", np.arccos,
                lambda g, ans, x: neg(mul(g, rsqrt(sub(_c(x, 1.0), mul(x, x))))))
atan_p = _unary("atan", np.arctan, lambda g, ans, x: div(g, add(_c(x, 1.0), mul(x, x))))
sinh_p = _unary("sinh", np.sinh, lambda g, ans, x: mul(g, cosh(x)))
cosh_p = _unary("cosh", np.cosh, lambda g, ans, x: mul(g, sinh(x)))
tanh_p = _unary("tanh", np.tanh, lambda g, ans, x: mul(g, sub(_c(x, 1.0), mul(ans, ans))),
                vjp=lambda ct, ans, x: ct * (1.0 - ans * ans))
asinh_p = _unary("asinh", np.arcsinh,
                 lambda g, ans, x: mul(g, rsqrt(add(mul(x, x), _c(x, 1.0)))))
def _acosh_jvp(g, ans, x):
    """1/sqrt(x^2 - 1); of a complex z, 1/(sqrt(z - 1) sqrt(z + 1)), the derivative of
    NumPy's principal arccosh (one sqrt of the product takes the wrong sign for
    re z < 0)."""
    if np.dtype(x.dtype).kind == "c":
        return div(g, mul(sqrt(sub(x, _c(x, 1.0))), sqrt(add(x, _c(x, 1.0)))))
    return mul(g, rsqrt(mul(sub(x, _c(x, 1.0)), add(x, _c(x, 1.0)))))


acosh_p = _unary("acosh", np.arccosh, _acosh_jvp)
atanh_p = _unary("atanh", np.arctanh,
                 lambda g, ans, x: div(g, sub(_c(x, 1.0), mul(x, x))))
sqrt_p = _unary("sqrt", np.sqrt, lambda g, ans, x: div(g, mul(_c(x, 2.0), ans)),
                vjp=lambda ct, ans, x: ct / (2.0 * ans))
rsqrt_p = _unary("rsqrt", lambda x: 1.0 / np.sqrt(x),
                 lambda g, ans, x: mul(g, mul(_c(x, -0.5), div(ans, x))))
cbrt_p = _unary("cbrt", np.cbrt, lambda g, ans, x: div(g, mul(_c(x, 3.0), mul(ans, ans))))
logistic_p = _unary("logistic", lambda x: _logistic_impl(x),
                    lambda g, ans, x: mul(g, mul(ans, sub(_c(x, 1.0), ans))),
                    vjp=lambda ct, ans, x: ct * (ans * (1.0 - ans)))
erf_p = _unary("erf", _special("erf"),
               lambda g, ans, x: mul(g, mul(_c(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x))))),
               kinds="f")
erfc_p = _unary("erfc", _special("erfc"),
                lambda g, ans, x: mul(g, mul(_c(x, -2.0 / math.sqrt(math.pi)),
                                             exp(neg(mul(x, x))))), kinds="f")
erf_inv_p = _unary("erf_inv", _special("erf_inv"),
                   lambda g, ans, x: mul(g, mul(_c(x, math.sqrt(math.pi) / 2.0),
                                                exp(mul(ans, ans)))), kinds="f")
lgamma_p = _unary("lgamma", _special("lgamma"), lambda g, ans, x: mul(g, digamma(x)), kinds="f")
digamma_p = _unary("digamma", _special("digamma"),
                   lambda g, ans, x: mul(g, polygamma(1, x)), kinds="f")
polygamma_p = elementwise("polygamma", lambda x, *, m: _polygamma_impl(m, x), 1, kinds="f")
defjvp(polygamma_p, lambda g, ans, x, *, m: mul(g, polygamma(m + 1, x)))


def _polygamma_impl(m, x):
    return special.polygamma(m, x)


def _logistic_impl(x):
    # exp(-|x|) never overflows; both halves are exact to rounding.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


abs_p = elementwise("abs", np.abs, 1,   # |z| of a complex z is real, as in NumPy and JAX
                    dtype_rule=lambda x: np.abs(np.zeros((), x.dtype)).dtype)


def _abs_jvp(g, ans, x):
    """d|x| = g for real x >= 0 and -g below (1 at 0, as in JAX).  For a complex z,
    d|z| = Re(g * conj(z) / |z|) (JAX's rule; 0 at z = 0), so that ``grad`` of a real
    function of z gives JAX's ``conj(z) / |z|``."""
    if np.dtype(x.dtype).kind == "c":
        safe = select_n(eq(ans, _c(ans, 0.0)), ans, _c(ans, 1.0))
        return real(mul(g, div(conj(x), complex_(safe, _c(ans, 0.0)))))
    return select_n(ge(x, _c(x, 0.0)), neg(g), g)


def _abs_vjp(ct, ans, x):
    if np.dtype(x.dtype).kind == "c":
        safe = np.where(ans == 0, np.ones((), ans.dtype), ans)
        return ct * (np.conjugate(x) / safe)
    return np.where(x >= 0.0, ct, -ct)


defjvp(abs_p, _abs_jvp, vjp=(_abs_vjp,))


def exp(x):
    return bind(exp_p, x)


def log(x):
    return bind(log_p, x)


def sin(x):
    return bind(sin_p, x)


def cos(x):
    return bind(cos_p, x)


def sinh(x):
    return bind(sinh_p, x)


def cosh(x):
    return bind(cosh_p, x)


def tanh(x):
    return bind(tanh_p, x)


def sqrt(x):
    return bind(sqrt_p, x)


def rsqrt(x):
    return bind(rsqrt_p, x)


def digamma(x):
    return bind(digamma_p, x)


def polygamma(m: int, x):
    return bind(polygamma_p, x, m=int(m))


# --------------------------------------------------------------------------- complex parts
# Linear (over the reals) maps between a complex value and its two real parts, with
# JAX's transposes: a real cotangent t of real(z) is t + 0i, of imag(z) is 0 - ti.

def _part_dtype(x):
    """float64 for complex128, float32 for complex64."""
    return np.zeros((), x.dtype).real.dtype


def _complex_dtype(x, y):
    """complex128 for float64 parts, complex64 for float32 (both parts one dtype, as
    JAX requires: a float32 imaginary part beside float64 would be rounded silently)."""
    return np.result_type(same_dtype("complex", [x, y]), np.complex64)


def _complex_impl(x, y):
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    out = np.empty(x.shape, np.result_type(x.dtype, y.dtype, np.complex64))
    out.real, out.imag = x, y       # not x + 1j * y, which turns inf parts into nan
    return out


real_p = elementwise("real", lambda z: np.real(z).copy(), 1, kinds="c",
                     dtype_rule=_part_dtype)
imag_p = elementwise("imag", lambda z: np.imag(z).copy(), 1, kinds="c",
                     dtype_rule=_part_dtype)
conj_p = elementwise("conj", np.conjugate, 1, kinds="c")
complex_p = elementwise("complex", _complex_impl, 2, kinds="f", dtype_rule=_complex_dtype)


def real(x):
    return bind(real_p, x)


def imag(x):
    return bind(imag_p, x)


def conj(x):
    return bind(conj_p, x)


def complex_(x, y):
    return bind(complex_p, x, y)


defjvp(real_p, lambda g, ans, z: real(g),
       vjp=(lambda ct, ans, z: _complex_impl(ct, np.zeros_like(ct)),))
defjvp(imag_p, lambda g, ans, z: imag(g),
       vjp=(lambda ct, ans, z: _complex_impl(np.zeros_like(ct), -ct),))
defjvp(conj_p, lambda g, ans, z: conj(g), vjp=(lambda ct, ans, z: np.conjugate(ct),))
defjvp(complex_p, lambda g, ans, x, y: complex_(g, _c(g, 0)),
       lambda g, ans, x, y: complex_(_c(g, 0), g),
       vjp=(lambda ct, ans, x, y: np.real(ct).copy(), lambda ct, ans, x, y: -np.imag(ct)))


def _complex_transpose(ct, x, y):
    return [unbroadcast(real(ct), x.aval) if is_undefined(x) else None,
            unbroadcast(neg(imag(ct)), y.aval) if is_undefined(y) else None]


for _p in (real_p, imag_p, conj_p, complex_p):
    _p.unsupported.pop("transpose", None)
transpose_rules[real_p] = lambda ct, z: [complex_(ct, _c(ct, 0))]
transpose_rules[imag_p] = lambda ct, z: [complex_(_c(ct, 0), neg(ct))]
transpose_rules[conj_p] = lambda ct, z: [conj(ct)]
transpose_rules[complex_p] = _complex_transpose

# --------------------------------------------------------------------------- dtype conversion

def _convert_impl(x, *, new_dtype):
    if np.dtype(x.dtype).kind == "c" and np.dtype(new_dtype).kind != "c":
        x = np.real(x)      # as JAX and NumPy do, without NumPy's ComplexWarning
    return x.astype(new_dtype)


convert_element_type_p = elementwise(
    "convert_element_type", _convert_impl, 1,
    dtype_rule=lambda a, *, new_dtype: np.dtype(new_dtype))


def convert_element_type(x, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if np.dtype(x.dtype) == new_dtype:
        return x
    return bind(convert_element_type_p, x, new_dtype=new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    ans = bind(convert_element_type_p, x, new_dtype=new_dtype)
    if type(t) is Zero or dtype_kind(new_dtype) not in "fc" or dtype_kind(np.dtype(x.dtype)) not in "fc":
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    return ans, bind(convert_element_type_p, t, new_dtype=new_dtype)


def _convert_transpose(ct, x, *, new_dtype):
    return [convert_element_type(ct, x.aval.dtype)]


jvp_rules[convert_element_type_p] = _convert_jvp
vjp_rules[convert_element_type_p] = (lambda ct, ans, x, *, new_dtype: _convert_impl(ct, new_dtype=x.dtype),)
transpose_rules[convert_element_type_p] = _convert_transpose

for _p in (eq_p, ne_p, and_p, or_p, xor_p):
    _p.commutative = True
