"""The ONNX rule table, and the rules of elementwise math, comparisons, selection,
reductions and shapes.

A rule is ``rule(ctx, eqn, ins) -> output names``: ``ins`` are the names of the
equation's operands in the graph being written (``onnx_export.Context``).  Each rule
writes what the primitive computes, in ONNX operators of the context's opset: the same
values as zerax's NumPy implementation up to the rounding of the operators (a float32
model matches to about 1e-6 relative).  Where ONNX has no operator, the rule composes
several, keeping the accuracy (``expm1`` and ``log1p`` by Kahan's formulas, not
``exp(x) - 1``).  The primitives with no counterpart are declared at the end, with why.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.core import all_primitives, rule_table
from ...ops import elementwise as ew, misc, reduce, shape, sort
from ...ops.sharding import sharding_constraint_p
from ....errors import ExportError
from ...base.dtypes import kind as dtype_kind

# primitive -> rule(ctx, eqn, ins: list of value names) -> output name(s)
onnx_rules = rule_table("onnx", "ONNX export (zerax.export.to_onnx)")


def _in_aval(eqn, k=0):
    return eqn.invars[k].aval


def _out_aval(eqn, k=0):
    return eqn.outvars[k].aval


def scalar(ctx, value, dtype) -> str:
    return ctx.const(np.asarray(value, dtype))


# --------------------------------------------------------------------------- elementwise

_UNARY = {
    ew.abs_p: "Abs", ew.acos_p: "Acos", ew.acosh_p: "Acosh", ew.asin_p: "Asin",
    ew.asinh_p: "Asinh", ew.atan_p: "Atan", ew.atanh_p: "Atanh", ew.ceil_p: "Ceil",
    ew.cos_p: "Cos", ew.cosh_p: "Cosh", ew.erf_p: "Erf", ew.exp_p: "Exp", ew.floor_p: "Floor",
    ew.isnan_p: "IsNaN", ew.log_p: "Log", ew.logistic_p: "Sigmoid", ew.neg_p: "Neg",
    ew.round_p: "Round", ew.sign_p: "Sign", ew.sin_p: "Sin", ew.sinh_p: "Sinh",
    ew.sqrt_p: "Sqrt", ew.tan_p: "Tan", ew.tanh_p: "Tanh", misc.stop_gradient_p: "Identity",
    sharding_constraint_p: "Identity",   # (an ONNX model runs whole, on one device)
}
_BINARY = {
    ew.add_p: "Add", ew.sub_p: "Sub", ew.mul_p: "Mul", ew.div_p: "Div", ew.pow_p: "Pow",
    ew.max_p: "Max", ew.min_p: "Min", ew.eq_p: "Equal", ew.lt_p: "Less",
    ew.le_p: "LessOrEqual", ew.gt_p: "Greater", ew.ge_p: "GreaterOrEqual",
}


def _simple(op):
    return lambda ctx, eqn, ins: ctx.node(op, ins)


for _p, _op in {**_UNARY, **_BINARY}.items():
    onnx_rules[_p] = _simple(_op)


def _ne(ctx, eqn, ins):
    return ctx.node("Not", [ctx.node("Equal", ins)])


def _rem(ctx, eqn, ins):
    """NumPy's remainder (the sign of the divisor; ``lax.rem``, C's fmod, is a
    composition of it): ONNX's integer Mod is that; for floats, fmod fixed up."""
    if dtype_kind(_in_aval(eqn).dtype) != "f":
        return ctx.node("Mod", ins, fmod=0)
    x, y = ins
    r = ctx.node("Mod", ins, fmod=1)
    zero = scalar(ctx, 0.0, _in_aval(eqn).dtype)
    fix = ctx.node("And", [ctx.node("Not", [ctx.node("Equal", [r, zero])]),
                           ctx.node("Xor", [ctx.node("Less", [r, zero]),
                                            ctx.node("Less", [y, zero])])])
    return ctx.node("Where", [fix, ctx.node("Add", [r, y]), r])


def _fma(ctx, eqn, ins):
    """a * b + c: ONNX has no fused multiply-add, so this rounds twice (an ulp from
    zerax's one rounding at most)."""
    a, b, c = ins
    return ctx.node("Add", [ctx.node("Mul", [a, b]), c])


def _logical(bool_op, int_op):
    def rule(ctx, eqn, ins):
        if _in_aval(eqn).dtype.kind == "b":
            return ctx.node(bool_op, ins)
        if ctx.opset < 18:
            raise ExportError(f"to_onnx: '{eqn.primitive.name}' of integers needs opset >= 18 "
                              f"({int_op}); this export uses opset {ctx.opset}")
        return ctx.node(int_op, ins)
    return rule


onnx_rules[ew.ne_p] = _ne
onnx_rules[ew.rem_p] = _rem
onnx_rules[ew.fma_p] = _fma
onnx_rules[ew.and_p] = _logical("And", "BitwiseAnd")
onnx_rules[ew.or_p] = _logical("Or", "BitwiseOr")
onnx_rules[ew.xor_p] = _logical("Xor", "BitwiseXor")
onnx_rules[ew.not_p] = _logical("Not", "BitwiseNot")


def _shift(direction):
    def rule(ctx, eqn, ins):
        if _in_aval(eqn).dtype.kind != "u":
            raise ExportError(f"to_onnx: '{eqn.primitive.name}' of {_in_aval(eqn).dtype} has no "
                              "ONNX counterpart (ONNX's BitShift shifts unsigned integers "
                              "only); shift unsigned values")
        return ctx.node("BitShift", ins, direction=direction)
    return rule


onnx_rules[ew.shift_left_p] = _shift("LEFT")
onnx_rules[ew.shift_right_p] = _shift("RIGHT")


def _rsqrt(ctx, eqn, ins):
    return ctx.node("Reciprocal", [ctx.node("Sqrt", ins)])


def _expm1(ctx, eqn, ins):
    # Kahan: u = exp(x); u == 1 -> x; else (u - 1) * x / log(u): accurate near 0
    (x,), dt = ins, _in_aval(eqn).dtype
    u = ctx.node("Exp", [x])
    one = scalar(ctx, 1, dt)
    um1 = ctx.node("Sub", [u, one])
    ratio = ctx.node("Mul", [um1, ctx.node("Div", [x, ctx.node("Log", [u])])])
    # where u == 1 (tiny x) x itself; where u is inf or 0 (exp overflowed / underflowed) u - 1
    big = ctx.node("Or", [ctx.node("IsInf", [u]), ctx.node("Equal", [u, scalar(ctx, 0, dt)])])
    out = ctx.node("Where", [big, um1, ratio])
    return ctx.node("Where", [ctx.node("Equal", [u, one]), x, out])


def _log1p(ctx, eqn, ins):
    # Kahan: u = 1 + x; u == 1 -> x; else log(u) * x / (u - 1)
    (x,), dt = ins, _in_aval(eqn).dtype
    one = scalar(ctx, 1, dt)
    u = ctx.node("Add", [x, one])
    ratio = ctx.node("Mul", [ctx.node("Log", [u]), ctx.node("Div", [x, ctx.node("Sub", [u, one])])])
    out = ctx.node("Where", [ctx.node("IsInf", [u]), ctx.node("Log", [u]), ratio])
    return ctx.node("Where", [ctx.node("Equal", [u, one]), x, out])


def _exp2(ctx, eqn, ins):
    return ctx.node("Pow", [scalar(ctx, 2, _in_aval(eqn).dtype), ins[0]])


def _cbrt(ctx, eqn, ins):
    dt = _in_aval(eqn).dtype
    mag = ctx.node("Pow", [ctx.node("Abs", ins), scalar(ctx, 1.0 / 3.0, dt)])
    return ctx.node("Mul", [ctx.node("Sign", ins), mag])


def _is_finite(ctx, eqn, ins):
    bad = ctx.node("Or", [ctx.node("IsInf", ins), ctx.node("IsNaN", ins)])
    return ctx.node("Not", [bad])


def _atan2(ctx, eqn, ins):
    y, x = ins
    dt = _in_aval(eqn).dtype
    zero, pi = scalar(ctx, 0, dt), scalar(ctx, math.pi, dt)
    a = ctx.node("Atan", [ctx.node("Div", [y, x])])
    y_neg = ctx.node("Less", [y, zero])
    left = ctx.node("Where", [y_neg, ctx.node("Sub", [a, pi]), ctx.node("Add", [a, pi])])
    axis = ctx.node("Where", [ctx.node("Greater", [y, zero]), scalar(ctx, math.pi / 2, dt),
                              ctx.node("Where", [y_neg, scalar(ctx, -math.pi / 2, dt), zero])])
    return ctx.node("Where", [ctx.node("Greater", [x, zero]), a,
                              ctx.node("Where", [ctx.node("Less", [x, zero]), left, axis])])


def _floor_divide(ctx, eqn, ins):
    a, b = ins
    dt = _in_aval(eqn).dtype
    if dtype_kind(dt) == "f":
        return ctx.node("Floor", [ctx.node("Div", [a, b])])
    q = ctx.node("Div", [a, b])   # truncates toward zero
    if dt.kind == "u":
        return q
    zero = scalar(ctx, 0, dt)
    inexact = ctx.node("Not", [ctx.node("Equal", [ctx.node("Mod", [a, b], fmod=1), zero])])
    signs = ctx.node("Xor", [ctx.node("Less", [a, zero]), ctx.node("Less", [b, zero])])
    fix = ctx.node("And", [inexact, signs])
    return ctx.node("Sub", [q, ctx.node("Cast", [fix], to=ctx.onnx_type(dt))])


def _integer_pow(ctx, eqn, ins, *, _mul=None):
    (x,), y = ins, eqn.params["y"]
    dt = _in_aval(eqn).dtype
    if y == 0:
        return ctx.node("Expand", [scalar(ctx, 1, dt), ctx.ints(_in_aval(eqn).shape)])
    acc, base, n = None, x, abs(y)
    while n:   # binary powering, as the implementation multiplies
        if n & 1:
            acc = base if acc is None else ctx.node("Mul", [acc, base])
        n >>= 1
        if n:
            base = ctx.node("Mul", [base, base])
    return ctx.node("Reciprocal", [acc]) if y < 0 else acc


def _convert(ctx, eqn, ins):
    return ctx.node("Cast", ins, to=ctx.onnx_type(eqn.params["new_dtype"]))


def _clamp(ctx, eqn, ins):
    lo, x, hi = ins
    return ctx.node("Min", [ctx.node("Max", [x, lo]), hi])


def _select_n(ctx, eqn, ins):
    pred, *cases = ins
    if _in_aval(eqn).dtype.kind == "b":
        return ctx.node("Where", [pred, cases[1], cases[0]])
    out = cases[0]
    dt = _in_aval(eqn).dtype
    for i in range(1, len(cases)):
        out = ctx.node("Where", [ctx.node("Equal", [pred, scalar(ctx, i, dt)]), cases[i], out])
    return out


onnx_rules[ew.rsqrt_p] = _rsqrt
onnx_rules[ew.expm1_p] = _expm1
onnx_rules[ew.log1p_p] = _log1p
onnx_rules[ew.exp2_p] = _exp2
onnx_rules[ew.cbrt_p] = _cbrt
onnx_rules[ew.is_finite_p] = _is_finite
onnx_rules[ew.atan2_p] = _atan2
onnx_rules[ew.floor_divide_p] = _floor_divide
onnx_rules[ew.integer_pow_p] = _integer_pow
onnx_rules[ew.convert_element_type_p] = _convert
onnx_rules[ew.clamp_p] = _clamp
onnx_rules[ew.select_n_p] = _select_n


# --------------------------------------------------------------------------- reductions

def _reduce(op):
    def rule(ctx, eqn, ins):
        axes = eqn.params["axes"]
        dt = _in_aval(eqn).dtype
        if not axes:
            return ctx.node("Identity", ins)
        x = ins[0]
        if dt.kind == "b":   # any / all: on integers (no boolean reductions in ONNX)
            x = ctx.node("Cast", [x], to=ctx.onnx_type(np.int32))
        if op == "ReduceSum" or ctx.opset >= 18:
            out = ctx.node(op, [x, ctx.ints(axes)], keepdims=0)
        else:
            out = ctx.node(op, [x], axes=list(axes), keepdims=0)
        return ctx.node("Cast", [out], to=ctx.onnx_type(dt)) if dt.kind == "b" else out
    return rule


onnx_rules[reduce.reduce_sum_p] = _reduce("ReduceSum")
onnx_rules[reduce.reduce_max_p] = _reduce("ReduceMax")
onnx_rules[reduce.reduce_min_p] = _reduce("ReduceMin")
onnx_rules[reduce.reduce_prod_p] = _reduce("ReduceProd")


def _arg(op):
    def rule(ctx, eqn, ins):
        out = ctx.node(op, ins, axis=eqn.params["axis"], keepdims=0)
        want = eqn.params["index_dtype"]
        return out if np.dtype(want) == np.int64 else ctx.node("Cast", [out],
                                                                to=ctx.onnx_type(want))
    return rule


onnx_rules[reduce.argmax_p] = _arg("ArgMax")
onnx_rules[reduce.argmin_p] = _arg("ArgMin")


def _cumsum(ctx, eqn, ins):
    return ctx.node("CumSum", [ins[0], ctx.const(np.int64(eqn.params["axis"]))],
                    reverse=int(eqn.params["reverse"]))


onnx_rules[reduce.cumsum_p] = _cumsum


def _sort(ctx, eqn, ins):
    # ascending TopK of every element: the sorted values (which elements tie does not
    # change them); NaNs have no defined place in TopK (NumPy puts them last)
    d = eqn.params["dimension"]
    n = _in_aval(eqn).shape[d]
    values, _ = ctx.node("TopK", [ins[0], ctx.ints([n])], n_out=2, axis=d, largest=0,
                         sorted=1)
    return values


onnx_rules[sort.sort_p] = _sort


# --------------------------------------------------------------------------- shapes

def _broadcast_in_dim(ctx, eqn, ins):
    out_shape = eqn.params["shape"]
    dims = eqn.params["broadcast_dimensions"]
    in_shape = _in_aval(eqn).shape
    x = ins[0]
    if len(in_shape) != len(out_shape):
        full = [1] * len(out_shape)
        for d, n in zip(dims, in_shape):
            full[d] = n
        x = ctx.node("Reshape", [x, ctx.ints(full)])
    if tuple(in_shape) == tuple(out_shape) and tuple(dims) == tuple(range(len(dims))):
        return x
    return ctx.node("Expand", [x, ctx.ints(out_shape)])


def _reshape(ctx, eqn, ins):
    return ctx.node("Reshape", [ins[0], ctx.ints(eqn.params["new_sizes"])])


def _transpose(ctx, eqn, ins):
    return ctx.node("Transpose", ins, perm=list(eqn.params["permutation"]))


def _squeeze(ctx, eqn, ins):
    dims = eqn.params["dimensions"]
    return ctx.node("Squeeze", [ins[0], ctx.ints(dims)]) if dims else ctx.node("Identity", ins)


def _concatenate(ctx, eqn, ins):
    return ctx.node("Concat", ins, axis=eqn.params["dimension"])


def _rev(ctx, eqn, ins):
    dims = eqn.params["dimensions"]
    if not dims:
        return ctx.node("Identity", ins)
    shape_ = _in_aval(eqn).shape
    return ctx.node("Slice", [ins[0], ctx.ints([-1] * len(dims)),
                              ctx.ints([-shape_[d] - 1 for d in dims]), ctx.ints(dims),
                              ctx.ints([-1] * len(dims))])


def _iota(ctx, eqn, ins):
    p = eqn.params
    return ctx.node("Identity", [ctx.const(shape._iota_impl(
        dtype=p["dtype"], shape=p["shape"], dimension=p["dimension"]))])


onnx_rules[shape.broadcast_in_dim_p] = _broadcast_in_dim
onnx_rules[shape.reshape_p] = _reshape
onnx_rules[shape.transpose_p] = _transpose
onnx_rules[shape.squeeze_p] = _squeeze
onnx_rules[shape.concatenate_p] = _concatenate
onnx_rules[shape.rev_p] = _rev
onnx_rules[shape.iota_p] = _iota


# --------------------------------------------------------------------------- none

_COMPLEX = "zerax's complex values have no ONNX type that onnxruntime computes with"
_SPECIAL = "ONNX has no operator for this special function"
_NONE = {
    "erfc": "ONNX has no erfc, and 1 - erf(x) loses every digit in the tails",
    "erf_inv": _SPECIAL, "lgamma": _SPECIAL, "digamma": _SPECIAL, "polygamma": _SPECIAL,
    "igamma": _SPECIAL, "igammac": _SPECIAL, "igamma_grad_a": _SPECIAL, "zeta": _SPECIAL,
    "bessel_i0e": _SPECIAL, "bessel_i1e": _SPECIAL, "bessel_iv": _SPECIAL, "bessel_ive": _SPECIAL,
    "bessel_j0": _SPECIAL, "bessel_j1": _SPECIAL, "bessel_jv": _SPECIAL,
    "bessel_y0": _SPECIAL, "bessel_y1": _SPECIAL, "expi": _SPECIAL, "expn": _SPECIAL,
    "sph_legendre": _SPECIAL, "regularized_incomplete_beta": _SPECIAL,
    "complex": _COMPLEX, "real": _COMPLEX, "imag": _COMPLEX, "conj": _COMPLEX,
    "fft": _COMPLEX + " (ONNX's DFT works on pairs of reals)",
    "bitcast_convert_type": "ONNX has no bitcast of one dtype's bits as another's",
    "cummax": "ONNX's cumulative operator is CumSum only",
    "cummin": "ONNX's cumulative operator is CumSum only",
    "cumprod": "ONNX's cumulative operator is CumSum only",
    "argsort": "ONNX's TopK does not define the order of equal elements, and zerax's argsort "
               "is stable",
    "threefry2x32": "random bits have no ONNX operator: draw them outside the model and pass "
                    "them as an input",
    "cholesky": "ONNX has no matrix decompositions", "lu": "ONNX has no matrix decompositions",
    "qr": "ONNX has no matrix decompositions", "eigh": "ONNX has no matrix decompositions",
    "eig": "ONNX has no matrix decompositions", "svd": "ONNX has no matrix decompositions",
    "triangular_solve": "ONNX has no triangular solve",
    "psum": "collectives run across devices; an ONNX model runs on one",
    "pmax": "collectives run across devices; an ONNX model runs on one",
    "pmin": "collectives run across devices; an ONNX model runs on one",
    "all_gather": "collectives run across devices; an ONNX model runs on one",
    "all_to_all": "collectives run across devices; an ONNX model runs on one",
    "ppermute": "collectives run across devices; an ONNX model runs on one",
    "psum_scatter": "collectives run across devices; an ONNX model runs on one",
    "axis_index": "collectives run across devices; an ONNX model runs on one",
    "debug_callback": "a host callback calls Python, which an ONNX model cannot",
    "function_call": "a zerax.Function's forward is Python (NumPy) code",
    "custom_lin": "it is internal to differentiating a custom_vjp function",
    "while_lin": "it is internal to reverse-mode differentiation of a while_loop: export "
                 "the forward program",
    "while_transpose": "it is internal to reverse-mode differentiation of a while_loop: "
                       "export the forward program",
    "scatter": "zerax's NumPy-style scatters are not mapped to ONNX's ScatterND",
    "scatter_add": "zerax's NumPy-style scatters are not mapped to ONNX's ScatterND",
    "scatter_mul": "zerax's NumPy-style scatters are not mapped to ONNX's ScatterND",
    "scatter_min": "zerax's NumPy-style scatters are not mapped to ONNX's ScatterND",
    "scatter_max": "zerax's NumPy-style scatters are not mapped to ONNX's ScatterND",
}
for _name, _why in _NONE.items():
    _prim = all_primitives().get(_name)
    if _prim is not None:
        _prim.unsupported["onnx"] = _why
