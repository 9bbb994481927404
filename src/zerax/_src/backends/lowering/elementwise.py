"""Kernel-IR rules of the elementwise primitives: one element of each, as an expression.

``scalar_rules[prim](args, in_dtypes, out_dtype, **params)`` builds the expression of
one element of ``prim`` from its operands' expressions; fused loop nests (`fused.py`)
and 0-d code use them alike.  Every rule follows its primitive's NumPy implementation
(``ops/elementwise.py``): the emitters implement the opcodes of ``kernel_ir.OPS`` with
NumPy's semantics, and these rules compose them where a primitive is not one opcode.
"""

from __future__ import annotations

import numpy as np

from .. import kernel_ir as K
from ...base import special
from ...ops import elementwise as ew
from ...ops import bitcast as bc
from ...ops import misc
from ...ops import random_bits as rb
from ...ops.sharding import sharding_constraint_p

scalar_rules: dict = {}


def _op(name):
    def rule(args, in_dtypes, out_dtype, **params):
        return K.op(name, *args)
    return rule


for _p, _name in {
        ew.add_p: "add", ew.sub_p: "sub", ew.mul_p: "mul", ew.div_p: "div",
        ew.neg_p: "neg", ew.floor_divide_p: "floordiv", ew.rem_p: "rem",
        ew.sign_p: "sign", ew.floor_p: "floor", ew.ceil_p: "ceil", ew.round_p: "rint",
        ew.max_p: "max", ew.min_p: "min", ew.atan2_p: "atan2",
        ew.eq_p: "eq", ew.ne_p: "ne", ew.and_p: "and", ew.or_p: "or", ew.xor_p: "xor", ew.not_p: "not",
        ew.shift_left_p: "shl", ew.shift_right_p: "shr", ew.is_finite_p: "isfinite",
        ew.isnan_p: "isnan", ew.exp_p: "exp", ew.exp2_p: "exp2", ew.log_p: "log",
        ew.log1p_p: "log1p", ew.expm1_p: "expm1", ew.sin_p: "sin", ew.cos_p: "cos",
        ew.tan_p: "tan", ew.asin_p: "asin", ew.acos_p: "acos", ew.atan_p: "atan",
        ew.sinh_p: "sinh", ew.cosh_p: "cosh", ew.tanh_p: "tanh", ew.asinh_p: "asinh",
        ew.acosh_p: "acosh", ew.atanh_p: "atanh", ew.sqrt_p: "sqrt", ew.cbrt_p: "cbrt",
        ew.real_p: "real", ew.imag_p: "imag", ew.conj_p: "conj", ew.fma_p: "fma"}.items():
    scalar_rules[_p] = _op(_name)


# The elementwise primitives whose complex forms the targets compute (the others
# are refused for complex operands: `Unlowerable`).
_COMPLEX_OK = frozenset({ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.neg_p, ew.sign_p,
                         ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p,
                         ew.pow_p, ew.max_p, ew.min_p, ew.exp_p, ew.exp2_p,
                         ew.log_p, ew.log1p_p, ew.expm1_p, ew.sin_p, ew.cos_p, ew.tan_p,
                         ew.asin_p, ew.acos_p, ew.atan_p, ew.sinh_p, ew.cosh_p, ew.tanh_p,
                         ew.asinh_p, ew.acosh_p, ew.atanh_p, ew.sqrt_p, ew.rsqrt_p,
                         ew.abs_p, ew.real_p, ew.imag_p, ew.conj_p, ew.complex_p,
                         ew.convert_element_type_p, ew.select_n_p, ew.isnan_p,
                         ew.is_finite_p, ew.integer_pow_p, ew.clamp_p, misc.stop_gradient_p,
                         sharding_constraint_p})


def complex_ok(eqn) -> bool:
    """Whether the targets compute ``eqn`` when some of its values are complex."""
    return eqn.primitive in _COMPLEX_OK


def _pow(args, in_dtypes, out_dtype, *, let):
    d = np.dtype(out_dtype)
    if d.kind != "c":
        return K.op("pow", *args)
    return _complex_pow(let(K.cast(args[0], d)), let(K.cast(args[1], d)), d, let)


_pow.needs_let = True


def _parts(z):
    return K.op("real", z), K.op("imag", z)


def _complex_pow(a, b, d, let):
    """NumPy's complex power (``npy_cpow``): 1 for a zero exponent; for a zero base, 0
    when the exponent's real part is positive, else NaN; a real integer exponent in
    (-100, 100) by multiplications (1, 2 and 3 written out; others by squaring from
    1, then 1/r for a negative one); the C library's ``cpow`` (the "pow" opcode on
    complex numbers) otherwise.  All cases are computed and one selected, unless the
    exponent is a constant."""
    part = np.dtype(d.char.lower())
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    zero, one = K.Const(0, part), K.Const(1, d)
    b_zero = K.op("and", K.op("eq", br, zero), K.op("eq", bi, zero))
    a_zero = K.op("and", K.op("eq", ar, zero), K.op("eq", ai, zero))
    nan = K.Const(complex(np.nan, np.nan), d)
    if type(b) is K.Const:
        v = complex(b.value)
        if v == 0:
            return one
        at_zero = K.Const(0, d) if v.real > 0 else nan
        n = int(v.real) if v.imag == 0 and -100 < v.real < 100 and v.real == int(v.real) \
            else None
        general = K.op("pow", a, b) if n is None else _small_power(a, n, d, let)
        return K.select(a_zero, at_zero, general)
    # the exponent's real part as an integer where it is a small one (0 elsewhere)
    small = K.op("and", K.op("and", K.op("eq", bi, zero),
                             K.op("eq", K.op("trunc", br), br)),
                 K.op("lt", K.op("abs", br), K.Const(100, part)))
    n = let(K.cast(K.select(small, br, zero), K.I64))
    at_zero = K.select(K.op("gt", br, zero), K.Const(0, d), nan)
    integral = _small_power(a, n, d, let)
    return K.select(b_zero, one, K.select(a_zero, at_zero,
                                          K.select(small, integral, K.op("pow", a, b))))


def _small_power(a, n, d, let):
    """``a ** n`` for an integer 0 < |n| < 100 (an int or an int64 expression) with
    npy_cpow's multiplications."""
    one = K.Const(1, d)
    if isinstance(n, int) and n in (1, 2):
        return a if n == 1 else K.op("mul", a, a)
    cube = let(K.op("mul", a, let(K.op("mul", a, a))))
    if isinstance(n, int):
        if n == 3:
            return cube
        m, aa, p = abs(n), one, a
        while True:
            if m & 1:
                aa = let(K.op("mul", aa, p))
            m >>= 1
            if not m:
                break
            p = let(K.op("mul", p, p))
        return K.op("div", one, aa) if n < 0 else aa
    i64 = K.I64
    m = let(K.op("abs", n))
    aa, p = one, a
    for k in range(7):          # |n| < 128: seven bits
        bit = K.op("ne", K.op("and", K.op("shr", m, K.Const(k, i64)), K.Const(1, i64)),
                   K.Const(0, i64))
        aa = let(K.select(bit, K.op("mul", aa, p), aa))
        if k < 6:
            p = let(K.op("mul", p, p))
    looped = K.select(K.op("lt", n, K.Const(0, i64)), K.op("div", one, aa), aa)

    def is_(k):
        return K.op("eq", n, K.Const(k, i64))
    return K.select(is_(1), a, K.select(is_(2), K.op("mul", a, a),
                                        K.select(is_(3), cube, looped)))


def _order(name):
    """``<``, ``<=``, ``>``, ``>=``; of complex numbers NumPy's (``CLT``...): by the real
    parts, then the imaginary parts, and a NaN imaginary part makes the comparison of
    the real parts false."""
    real_cmp = "lt" if name in ("lt", "le") else "gt"

    def rule(args, in_dtypes, out_dtype):
        x, y = args
        if np.dtype(in_dtypes[0]).kind != "c":
            return K.op(name, x, y)
        (xr, xi), (yr, yi) = _parts(x), _parts(y)
        no_nan = K.op("not", K.op("or", K.op("isnan", xi), K.op("isnan", yi)))
        return K.op("or", K.op("and", K.op(real_cmp, xr, yr), no_nan),
                    K.op("and", K.op("eq", xr, yr), K.op(name, xi, yi)))
    return rule


def _integer_pow(args, in_dtypes, out_dtype, *, y, let):
    """``x ** y`` by squaring, as the implementation (JAX's order of multiplications)."""
    (x,) = args
    d = np.dtype(out_dtype)
    if y == 0:
        return K.Const(1, d)
    acc, n = None, abs(y)
    while n:
        if n & 1:
            acc = x if acc is None else let(K.op("mul", acc, x))
        n >>= 1
        if n:
            x = let(K.op("mul", x, x))
    return K.op("div", K.Const(1, d), acc) if y < 0 else acc


_integer_pow.needs_let = True


def _rsqrt(args, in_dtypes, out_dtype):
    return K.op("div", K.Const(1.0, out_dtype), K.op("sqrt", args[0]))


def _logistic(args, in_dtypes, out_dtype):
    """NumPy's: e = exp(-|x|); 1/(1+e) for x >= 0, e/(1+e) below (no overflow)."""
    (x,) = args
    d = np.dtype(out_dtype)
    e = K.op("exp", K.op("neg", K.op("abs", x)))
    one = K.Const(1.0, d)
    denom = K.op("add", one, e)
    return K.select(K.op("ge", x, K.Const(0.0, d)), K.op("div", one, denom),
                    K.op("div", e, denom))


def _select_n(args, in_dtypes, out_dtype):
    """``cases[pred]`` (a bool predicate picks case 1 when true)."""
    pred, *cases = args
    if len(cases) == 1:
        return cases[0]
    if np.dtype(in_dtypes[0]) == np.bool_:
        return K.select(pred, cases[1], cases[0])
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        out = K.select(K.op("eq", pred, K.Const(k, in_dtypes[0])), cases[k], out)
    return out


def _clamp(args, in_dtypes, out_dtype):
    """np.minimum(np.maximum(x, lo), hi)."""
    lo, x, hi = args
    return K.op("min", K.op("max", x, lo), hi)


def _convert(args, in_dtypes, out_dtype, *, new_dtype):
    return K.cast(args[0], new_dtype)


def _abs(args, in_dtypes, out_dtype):
    """|x|; of a complex number, its modulus (a real)."""
    return K.op("cabs" if np.dtype(in_dtypes[0]).kind == "c" else "abs", args[0])


def _complex(args, in_dtypes, out_dtype):
    return K.make_complex(args[0], args[1], out_dtype)


def _identity(args, in_dtypes, out_dtype, **params):
    return args[0]


def _bitcast(args, in_dtypes, out_dtype, *, new_dtype):
    return K.bitcast(args[0], new_dtype)


def _threefry(args, in_dtypes, out_dtype, *, out, let):
    """Random123's threefry2x32 (20 rounds of uint32 adds, rotations and xors) on one
    element, as ``ops/random_bits.py``'s reference; ``let`` names each round's words."""
    u32 = np.dtype(np.uint32)

    def c(v):
        return K.Const(v, u32)
    k0, k1, x0, x1 = args
    ks = (k0, k1, let(K.op("xor", K.op("xor", k0, k1), c(rb.PARITY))))
    x0, x1 = let(K.op("add", x0, ks[0])), let(K.op("add", x1, ks[1]))
    for block in range(5):
        for r in rb.ROTATIONS[block % 2]:
            x0 = let(K.op("add", x0, x1))
            rot = K.op("or", K.op("shl", x1, c(r)), K.op("shr", x1, c(32 - r)))
            x1 = let(K.op("xor", x0, rot))
        x0 = let(K.op("add", x0, ks[(block + 1) % 3]))
        x1 = let(K.op("add", K.op("add", x1, ks[(block + 2) % 3]), c(block + 1)))
    if out == "xor":
        return K.op("xor", x0, x1)
    u64 = np.dtype(np.uint64)
    return K.op("or", K.op("shl", K.cast(x0, u64), K.Const(32, u64)), K.cast(x1, u64))


_threefry.needs_let = True


def _special(name):
    """A special function of the C library (what ``base/special.py``'s kernels call),
    computed in float64 and rounded to the operand's dtype, as the implementation."""
    def rule(args, in_dtypes, out_dtype):
        x = args[0]
        wide = K.cast(x, np.float64)
        return K.cast(K.op(name, wide), out_dtype)
    return rule


def _lgamma(args, in_dtypes, out_dtype):
    """``base.special.lgamma_scalar``: log|Gamma(x)|, +inf at non-positive integers and
    at +-inf (beyond its largest finite argument too)."""
    f64 = np.dtype(np.float64)
    x = K.cast(args[0], f64)
    inf = K.Const(np.inf, f64)
    at_pole = K.op("and", K.op("le", x, K.Const(0.0, f64)),
                   K.op("eq", x, K.op("trunc", x)))
    big = K.op("or", K.op("eq", K.op("abs", x), inf),
               K.op("gt", x, K.Const(special._LGAMMA_MAX_X, f64)))
    y = K.select(K.op("or", big, at_pole), inf, K.op("lgamma", x))
    return K.cast(K.select(K.op("isnan", x), x, y), out_dtype)


scalar_rules.update({
    ew.lt_p: _order("lt"), ew.le_p: _order("le"), ew.gt_p: _order("gt"),
    ew.ge_p: _order("ge"), ew.pow_p: _pow, ew.integer_pow_p: _integer_pow, ew.rsqrt_p: _rsqrt,
    ew.logistic_p: _logistic, ew.select_n_p: _select_n, ew.clamp_p: _clamp,
    ew.convert_element_type_p: _convert, misc.stop_gradient_p: _identity,
    sharding_constraint_p: _identity,
    ew.abs_p: _abs, ew.complex_p: _complex, bc.bitcast_convert_type_p: _bitcast,
    rb.threefry2x32_p: _threefry, ew.erf_p: _special("erf"), ew.erfc_p: _special("erfc"),
    ew.lgamma_p: _lgamma,
})
