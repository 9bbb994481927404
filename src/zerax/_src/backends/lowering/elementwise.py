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
from ...ops import elementwise as ew
from ...ops import misc

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
        ew.eq_p: "eq", ew.ne_p: "ne", ew.lt_p: "lt", ew.le_p: "le", ew.gt_p: "gt",
        ew.ge_p: "ge", ew.and_p: "and", ew.or_p: "or", ew.xor_p: "xor", ew.not_p: "not",
        ew.shift_left_p: "shl", ew.shift_right_p: "shr", ew.is_finite_p: "isfinite",
        ew.isnan_p: "isnan", ew.exp_p: "exp", ew.exp2_p: "exp2", ew.log_p: "log",
        ew.log1p_p: "log1p", ew.expm1_p: "expm1", ew.sin_p: "sin", ew.cos_p: "cos",
        ew.tan_p: "tan", ew.asin_p: "asin", ew.acos_p: "acos", ew.atan_p: "atan",
        ew.sinh_p: "sinh", ew.cosh_p: "cosh", ew.tanh_p: "tanh", ew.asinh_p: "asinh",
        ew.acosh_p: "acosh", ew.atanh_p: "atanh", ew.sqrt_p: "sqrt", ew.cbrt_p: "cbrt",
        ew.abs_p: "abs"}.items():
    scalar_rules[_p] = _op(_name)


def _pow(args, in_dtypes, out_dtype):
    return K.op("pow", *args)


def _integer_pow(args, in_dtypes, out_dtype, *, y):
    """``x ** y`` for a static integer ``y``: NumPy's fast paths (x*x, 1/x) where it has
    them, else its power (floats: libm's pow; integers: by squaring)."""
    (x,) = args
    d = np.dtype(out_dtype)
    if y == 0:
        return K.Const(1, d)
    if y == 1:
        return x
    if y == 2:
        return K.op("mul", x, x)
    if y == -1 and d.kind == "f":
        return K.op("div", K.Const(1.0, d), x)
    return K.op("pow", x, K.Const(y, d))


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


def _identity(args, in_dtypes, out_dtype, **params):
    return args[0]


scalar_rules.update({
    ew.pow_p: _pow, ew.integer_pow_p: _integer_pow, ew.rsqrt_p: _rsqrt,
    ew.logistic_p: _logistic, ew.select_n_p: _select_n, ew.clamp_p: _clamp,
    ew.convert_element_type_p: _convert, misc.stop_gradient_p: _identity,
})
