"""The Numba scalar rules of the elementwise primitives (``scalar_rules``).

Each rule ``rule(args, in_dtypes, out_dtype, ctx, **params)`` is the source text of one
element of its primitive, given its operands' texts; codegen fuses runs of such
equations into one loop nest.  The primitives come from ``ops/elementwise.py`` (arithmetic,
comparisons, logic, math functions, complex parts, conversion), ``ops/special_ops.py``
(iterative special functions), ``ops/bitcast.py``, ``ops/random_bits.py`` (threefry2x32).

NumPy's scalar functions are used inside njit code so that special values (inf, nan)
behave as in eager mode; where Numba's operators differ from NumPy's at the edges
(integer division, shifts, powers, complex division and ordering) the expression is
``scalarmath.py``'s; transcendental functions of floats are ``vecmath.py``'s inline
float64 code, so that fused loops vectorise.  Complex transcendental functions are Numba's
(cmath), which agree with NumPy's values and branch cuts, except where their formulas
overflow to nan (``exp``, ``sin``, ``cos``, ``sinh``, ``cosh``, ``tan``, ``tanh`` of large
parts) or lose small arguments (``expm1``): those are NumPy's algorithms, below.  (vecmath builds Numba intrinsics when it
is imported: this package is loaded when a program is first compiled, never by
``import zerax``; see ``backends/__init__.py``.)
"""

from __future__ import annotations

import math

import threading

import numba
import numpy as np
from numba import from_dtype
from numba.extending import intrinsic

from ...base import special, special_kernels
from ...ops import bitcast as bc
from ...ops import elementwise as ew
from ...ops import special_ops as so
from ...ops import random_bits as rb
from . import scalarmath, vecmath
from .rules import scalar_rules


def _dn(dtype):
    d = np.dtype(dtype)
    return "np.bool_" if d == np.bool_ else f"np.{d.name}"


# --------------------------------------------------------------------------- elementwise.py

def _scalar(template):
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        return f"{_dn(out_dtype)}({template.format(*args, **params)})"
    return rule


_SPECIAL_NJIT: dict = {}


def _special_helper(ctx, name):
    # one dispatcher per function and process: each program that uses erf does not
    # compile its own copy
    fn = _SPECIAL_NJIT.get(name)
    if fn is None:
        fn = _SPECIAL_NJIT.setdefault(name, numba.njit(getattr(special, f"{name}_scalar"),
                                                       cache=False))
    return ctx.helper(f"_{name}", fn)


_SCALAR = {
    ew.add_p: "{0} + {1}", ew.sub_p: "{0} - {1}", ew.mul_p: "{0} * {1}",
    ew.div_p: "{0} / {1}", ew.neg_p: "-{0}", ew.floor_divide_p: "{0} // {1}",
    ew.rem_p: "np.remainder({0}, {1})", ew.sign_p: "np.sign({0})",
    ew.floor_p: "np.floor({0})", ew.ceil_p: "np.ceil({0})", ew.round_p: "np.rint({0})",
    ew.pow_p: "np.power({0}, {1})", ew.atan2_p: "np.arctan2({0}, {1})",
    ew.max_p: "({0} if ({0} > {1} or {0} != {0}) else {1})",
    ew.min_p: "({0} if ({0} < {1} or {0} != {0}) else {1})",
    ew.eq_p: "{0} == {1}", ew.ne_p: "{0} != {1}", ew.lt_p: "{0} < {1}",
    ew.le_p: "{0} <= {1}", ew.gt_p: "{0} > {1}", ew.ge_p: "{0} >= {1}",
    ew.and_p: "{0} & {1}", ew.or_p: "{0} | {1}", ew.xor_p: "{0} ^ {1}",
    ew.shift_left_p: "{0} << {1}", ew.shift_right_p: "{0} >> {1}",
    ew.is_finite_p: "np.isfinite({0})", ew.isnan_p: "np.isnan({0})",
    ew.exp_p: "np.exp({0})", ew.exp2_p: "np.exp2({0})", ew.log_p: "np.log({0})",
    ew.log1p_p: "np.log1p({0})", ew.expm1_p: "np.expm1({0})", ew.sin_p: "np.sin({0})",
    ew.cos_p: "np.cos({0})", ew.tan_p: "np.tan({0})", ew.asin_p: "np.arcsin({0})",
    ew.acos_p: "np.arccos({0})", ew.atan_p: "np.arctan({0})", ew.sinh_p: "np.sinh({0})",
    ew.cosh_p: "np.cosh({0})", ew.tanh_p: "np.tanh({0})", ew.asinh_p: "np.arcsinh({0})",
    ew.acosh_p: "np.arccosh({0})", ew.atanh_p: "np.arctanh({0})", ew.sqrt_p: "np.sqrt({0})",
    ew.rsqrt_p: "1.0 / np.sqrt({0})", ew.cbrt_p: "np.cbrt({0})", ew.abs_p: "np.abs({0})",
    ew.real_p: "{0}.real", ew.imag_p: "{0}.imag", ew.conj_p: "np.conj({0})",
    ew.complex_p: "complex({0}, {1})",
    ew.fma_p: "{0} * {1} + {2}",     # contracted into one FMA (KERNEL_FASTMATH)
}
for _p, _t in _SCALAR.items():
    scalar_rules[_p] = _scalar(_t)


def _not_scalar(args, in_dtypes, out_dtype, ctx):
    if np.dtype(out_dtype) == np.bool_:
        return f"not {args[0]}"
    return f"{_dn(out_dtype)}(~{args[0]})"


def _integer_pow_scalar(args, in_dtypes, out_dtype, ctx, *, y):
    (x,) = args
    if y == 0:
        return f"{_dn(out_dtype)}(1)"
    if 1 <= y <= 4:  # repeated multiplication, as NumPy does for small powers
        return f"{_dn(out_dtype)}({' * '.join([x] * y)})"
    return f"{_dn(out_dtype)}(np.power({x}, {_dn(in_dtypes[0])}({y})))"


def _select_scalar(args, in_dtypes, out_dtype, ctx):
    pred, *cases = args
    if len(cases) == 2:
        return f"({cases[1]} if {pred} else {cases[0]})"
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        expr = f"({cases[k]} if {pred} == {k} else {expr})"
    return expr


def _clamp_scalar(args, in_dtypes, out_dtype, ctx):
    lo, x, hi = args
    inner = f"({x} if ({x} > {lo} or {x} != {x}) else {lo})"
    return f"({inner} if ({inner} < {hi} or {inner} != {inner}) else {hi})"


def _convert_scalar(args, in_dtypes, out_dtype, ctx, *, new_dtype):
    if np.dtype(new_dtype) == np.bool_:
        return f"({args[0]} != 0)"
    if np.dtype(in_dtypes[0]).kind == "c" and np.dtype(new_dtype).kind != "c":
        return f"{_dn(new_dtype)}({args[0]}.real)"
    return f"{_dn(new_dtype)}({args[0]})"


def _special_scalar(name):
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        fn = _special_helper(ctx, name)
        return f"{_dn(out_dtype)}({fn}(np.float64({args[0]})))"
    return rule


def _vecmath_scalar(name, fallback):
    """Float inputs use zerax's inline float64 implementation in vecmath.py (computed in
    float64 and rounded, for float32 too); other dtypes keep NumPy's scalar function."""
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        if np.dtype(in_dtypes[0]).kind not in "fiub" or np.dtype(out_dtype).kind != "f":
            return fallback(args, in_dtypes, out_dtype, ctx, **params)
        # 0-d code has its own sin/cos, tuned for a loop-carried argument (vecmath.py)
        chosen = f"scalar_{name}" if ctx.scalar_code and hasattr(vecmath, f"scalar_{name}") \
            else name
        if ctx.throughput_trig is not None and name in ("sin", "cos"):
            # a parallel block loop checks the range and recomputes (codegen.py)
            chosen = f"throughput_{name}"
            ctx.throughput_trig.append(f"np.float64({args[0]})")
        fn = ctx.helper(f"_vm_{chosen}", getattr(vecmath, chosen))
        return f"{_dn(out_dtype)}({fn}(np.float64({args[0]})))"
    return rule


def _logistic_scalar(args, in_dtypes, out_dtype, ctx):
    # 1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) below: no overflow either side.
    (x,) = args
    if np.dtype(out_dtype).kind == "f":
        e = f"{ctx.helper('_vm_exp', vecmath.exp)}(-abs(np.float64({x})))"
        return (f"{_dn(out_dtype)}((1.0 / (1.0 + {e})) if {x} >= 0 "
                f"else ({e} / (1.0 + {e})))")
    return (f"(1.0 / (1.0 + np.exp(-{x})) if {x} >= 0 "
            f"else np.exp({x}) / (1.0 + np.exp({x})))")


def _polygamma_scalar(args, in_dtypes, out_dtype, ctx, *, m):
    fn = _special_helper(ctx, "polygamma")
    return f"{_dn(out_dtype)}({fn}({int(m)}, np.float64({args[0]})))"


scalar_rules[ew.not_p] = _not_scalar
scalar_rules[ew.integer_pow_p] = _integer_pow_scalar
scalar_rules[ew.select_n_p] = _select_scalar
scalar_rules[ew.clamp_p] = _clamp_scalar
scalar_rules[ew.convert_element_type_p] = _convert_scalar
scalar_rules[ew.erf_p] = _special_scalar("erf")
scalar_rules[ew.erfc_p] = _special_scalar("erfc")
scalar_rules[ew.erf_inv_p] = _special_scalar("erf_inv")
scalar_rules[ew.lgamma_p] = _special_scalar("lgamma")
scalar_rules[ew.digamma_p] = _special_scalar("digamma")
scalar_rules[ew.polygamma_p] = _polygamma_scalar
scalar_rules[ew.logistic_p] = _logistic_scalar


def _edge_scalar(op, fallback):
    """NumPy's results where Numba's operators differ: integer division, remainder,
    shifts and powers at the edges; complex division by zero and complex ordering
    (scalarmath.py; ``op`` is its name for the operation)."""
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        expr = scalarmath.lower(op, args, in_dtypes, ctx, **params)
        if expr is None:
            return fallback(args, in_dtypes, out_dtype, ctx, **params)
        return f"{_dn(out_dtype)}({expr})"
    return rule


for _p, _op in ((ew.floor_divide_p, "floor_divide"), (ew.rem_p, "rem"),
                (ew.shift_left_p, "shift_left"), (ew.shift_right_p, "shift_right"),
                (ew.integer_pow_p, "integer_pow"), (ew.pow_p, "pow"), (ew.div_p, "div"),
                (ew.lt_p, "lt"), (ew.le_p, "le"), (ew.gt_p, "gt"), (ew.ge_p, "ge"),
                (ew.max_p, "max"), (ew.min_p, "min")):
    scalar_rules[_p] = _edge_scalar(_op, scalar_rules[_p])


# --------------------------------------------------------------------------- complex math
# NumPy's algorithms (FreeBSD's msun, which NumPy uses) where Numba's complex functions
# differ from them for finite inputs: ``tanh`` is Kahan's, finite for large real parts;
# ``tan``/``sin``/``cos`` go through ``tanh``/``sinh``/``cosh`` of iz, as in NumPy;
# ``exp``/``sinh``/``cosh`` keep a zero imaginary part on the real axis and scale large
# arguments, with C99's special values for infinite and nan parts; ``expm1`` is NumPy's
# nc_expm1, exact for small arguments.
# Computed in complex128 and rounded to the output dtype; compiled on first use.

def _ctanh(z):
    x, y = z.real, z.imag
    if not math.isfinite(x):
        if math.isnan(x):
            return complex(x, y if y == 0.0 else x * y)
        return complex(math.copysign(1.0, x),
                       math.copysign(0.0, y if math.isinf(y) else math.sin(y) * math.cos(y)))
    if not math.isfinite(y):
        return complex(x if x == 0.0 else y - y, y - y)
    if abs(x) >= 22.0:     # tanh(x) rounds to +-1; exp(-2|x|) keeps the imaginary part
        e = math.exp(-abs(x))
        return complex(math.copysign(1.0, x), 4.0 * math.sin(y) * math.cos(y) * e * e)
    t = math.tan(y)
    beta = 1.0 + t * t
    s = math.sinh(x)
    rho = math.sqrt(1.0 + s * s)
    denom = 1.0 + beta * s * s
    return complex((beta * rho * s) / denom, t / denom)


def _ctan(z):
    w = _ctanh(complex(-z.imag, z.real))
    return complex(w.imag, -w.real)


def _cexpm1(z):
    x, y = z.real, z.imag
    a = math.sin(y / 2.0)
    return complex(math.expm1(x) * math.cos(y) - 2.0 * a * a, math.exp(x) * math.sin(y))


def _scaled_exp(ax, c):
    """exp(ax) * c without overflowing early (ax up to ~1455 stays finite where the
    product is)."""
    if ax < 709.0:
        return math.exp(ax) * c
    e = math.exp(ax / 2.0)
    return (e * c) * e


def _cexp(z):
    x, y = z.real, z.imag
    if y == 0.0:
        return complex(math.exp(x), y)
    if x == 0.0:
        return complex(math.cos(y), math.sin(y)) if math.isfinite(y) \
            else complex(y - y, y - y)
    if not math.isfinite(y):
        if math.isinf(x):
            return complex(0.0, 0.0) if x < 0 else complex(x, y - y)
        return complex(y - y, y - y)
    if math.isinf(x) or math.isnan(x):
        e = math.exp(x)
        return complex(e * math.cos(y), e * math.sin(y))
    return complex(_scaled_exp(x, math.cos(y)), _scaled_exp(x, math.sin(y)))


def _csinh(z):
    x, y = z.real, z.imag
    if math.isfinite(x) and math.isfinite(y):
        if y == 0.0:
            return complex(math.sinh(x), y)
        if abs(x) < 22.0:
            return complex(math.sinh(x) * math.cos(y), math.cosh(x) * math.sin(y))
        return complex(math.copysign(1.0, x) * _scaled_exp(abs(x), 0.5 * math.cos(y)),
                       _scaled_exp(abs(x), 0.5 * math.sin(y)))
    if x == 0.0:
        return complex(x, y - y)
    if y == 0.0:
        return complex(x, y)
    if math.isfinite(x):
        return complex(y - y, y - y)
    if math.isinf(x):
        if not math.isfinite(y):
            return complex(x * x, x * (y - y))
        return complex(x * math.cos(y), math.inf * math.sin(y))
    return complex((x * x) * (y - y), (x + x) * (y - y))


def _ccosh(z):
    x, y = z.real, z.imag
    if math.isfinite(x) and math.isfinite(y):
        if y == 0.0:
            return complex(math.cosh(x), x * y)
        if abs(x) < 22.0:
            return complex(math.cosh(x) * math.cos(y), math.sinh(x) * math.sin(y))
        return complex(_scaled_exp(abs(x), 0.5 * math.cos(y)),
                       math.copysign(1.0, x) * _scaled_exp(abs(x), 0.5 * math.sin(y)))
    if x == 0.0:
        return complex(y - y, x * math.copysign(0.0, y))
    if y == 0.0:
        return complex(x * x, math.copysign(0.0, x) * y)
    if math.isfinite(x):
        return complex(y - y, x * (y - y))
    if math.isinf(x):
        if not math.isfinite(y):
            return complex(x * x, x * (y - y))
        return complex((x * x) * math.cos(y), x * math.sin(y))
    return complex((x * x) * (y - y), (x + x) * (y - y))


def _csin(z):      # -i sinh(iz), as NumPy
    if math.isinf(z.imag) and not math.isfinite(z.real):
        return complex(math.nan, math.inf)      # NumPy's (glibc's) special value
    w = _csinh(complex(-z.imag, z.real))
    return complex(w.imag, -w.real)


def _ccos(z):      # cosh(iz), as NumPy
    return _ccosh(complex(-z.imag, z.real))


# The inverse functions: Numba's complex arcsin, arccos, arctan, arcsinh and arctanh are
# CPython's cmath algorithms, which agree with NumPy's (C99's) for finite and infinite
# parts but not where a part is nan; those cases are C99's special values here (as
# FreeBSD's msun and glibc, which NumPy uses).  ``arcsin``/``arctan`` are ``arcsinh``/
# ``arctanh`` with the parts swapped, and ``arccosh`` comes from ``arccos``, as in msun
# (Numba's arccosh is the textbook log(z + sqrt(z+1) sqrt(z-1)), which loses small
# imaginary parts and overflows).  ``exp2`` is NumPy's exp(z ln 2) with the parts scaled
# separately; ``sign`` is NumPy 2's z/|z|.

def _casinh(z):
    x, y = z.real, z.imag
    if math.isnan(x) or math.isnan(y):
        if math.isinf(x):
            return complex(x, y + y)
        if math.isinf(y):
            return complex(abs(y), x + x)
        if y == 0.0:
            return complex(x + x, y)
        return complex(x + y, x + y)
    return np.arcsinh(z)


def _casin(z):
    w = _casinh(complex(z.imag, z.real))
    return complex(w.imag, w.real)


def _cacos(z):
    x, y = z.real, z.imag
    if math.isnan(x) or math.isnan(y):
        if math.isinf(x):
            return complex(y + y, -math.inf)
        if math.isinf(y):
            return complex(x + x, -y)
        if x == 0.0:
            return complex(math.pi / 2.0, y + y)
        return complex(x + y, x + y)
    return np.arccos(z)


def _cacosh(z):
    if z.real == 0.0 and math.isnan(z.imag):
        return complex(z.imag, math.pi / 2.0)
    w = _cacos(z)
    rx, ry = w.real, w.imag
    if math.isnan(rx) and math.isnan(ry):
        return complex(ry, rx)
    if math.isnan(rx):
        return complex(abs(ry), rx)
    if math.isnan(ry):
        return complex(ry, ry)
    return complex(abs(ry), math.copysign(rx, z.imag))


def _catanh(z):
    x, y = z.real, z.imag
    if math.isnan(x) or math.isnan(y):
        if x == 0.0 or math.isinf(x):
            return complex(math.copysign(0.0, x), y + y)
        if math.isinf(y):
            return complex(math.copysign(0.0, x), math.copysign(math.pi / 2.0, y))
        return complex(x + y, x + y)
    return np.arctanh(z)


def _catan(z):
    w = _catanh(complex(z.imag, z.real))
    return complex(w.imag, w.real)


def _two_square(a):
    """a * a as hi + lo exactly (Dekker's product; |a| < 2**996)."""
    c = 134217729.0 * a
    hi = c - (c - a)
    lo = a - hi
    p = a * a
    return p, ((hi * hi - p) + 2.0 * hi * lo) + lo * lo


def _neumaier(tot, comp, v):
    t = tot + v
    if abs(tot) >= abs(v):
        return t, comp + ((tot - t) + v)
    return t, comp + ((v - t) + tot)


def _clog(z):
    """Numba's log, except near |z| = 1, where log|z| = log1p(x^2 + y^2 - 1) / 2 with
    x^2 + y^2 - 1 in double-double (as glibc, which NumPy uses; the textbook
    log(hypot(x, y)) loses the real part of log(1 + 1e-10j) entirely)."""
    x, y = z.real, z.imag
    ax, ay = abs(x), abs(y)
    if not (ax <= 1.5 and ay <= 1.5) or (ax < 0.5 and ay < 0.5):   # (nan: not <=)
        return np.log(z)
    px, ex = _two_square(ax)
    py, ey = _two_square(ay)
    if px < py:
        px, ex, py, ey = py, ey, px, ex
    # (px - 1) + py + ex + ey, Neumaier-compensated: the terms cancel to far below
    # each of them near the circle (px - 1 is exact for px in [0.5, 2.25])
    tot, comp = px - 1.0, 0.0
    tot, comp = _neumaier(tot, comp, py)
    tot, comp = _neumaier(tot, comp, ex)
    tot, comp = _neumaier(tot, comp, ey)
    return complex(0.5 * math.log1p(tot + comp), math.atan2(y, x))


def _cexp2(z):
    return _cexp(complex(z.real * 0.6931471805599453, z.imag * 0.6931471805599453))


def _csign(z):
    x, y = z.real, z.imag
    if math.isinf(x):     # an infinite part decides, even beside a nan (as NumPy)
        return complex(math.nan, math.nan) if math.isinf(y) \
            else complex(math.copysign(1.0, x), 0.0)
    if math.isinf(y):
        return complex(0.0, math.copysign(1.0, y))
    if math.isnan(x) or math.isnan(y):
        return complex(math.nan, math.nan)
    a = math.hypot(x, y)
    if a == 0.0:
        return complex(0.0, 0.0)
    return complex(x / a, y / a)


# The helpers above are compiled on first use (when a program with a complex operand is
# lowered), callees first, each rebinding its name here so that later ones call the
# compiled callee: loading the backend must not start Numba, which a process whose
# programs all come from the native cache never needs.
_COMPLEX_HELPERS = ("_scaled_exp", "_ctanh", "_ctan", "_cexpm1", "_cexp", "_csinh", "_ccosh",
                    "_csin", "_ccos", "_casinh", "_casin", "_cacos", "_cacosh", "_catanh",
                    "_catan", "_two_square", "_neumaier", "_clog", "_cexp2", "_csign")
_complex_compiled: dict = {}
_complex_lock = threading.Lock()


def _complex_fn(name):
    """The compiled helper ``_c<name>`` (``name``: exp, tanh, ...)."""
    if not _complex_compiled:
        with _complex_lock:
            if not _complex_compiled:
                g = globals()
                for helper in _COMPLEX_HELPERS:
                    g[helper] = numba.njit(g[helper], cache=False)
                _complex_compiled.update({h: g[h] for h in _COMPLEX_HELPERS})
    return _complex_compiled[f"_c{name}"]


def _complex_scalar(name, fallback):
    """Complex operands use ``_COMPLEX_FNS[name]``; others keep ``fallback``."""
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        if np.dtype(in_dtypes[0]).kind != "c":
            return fallback(args, in_dtypes, out_dtype, ctx, **params)
        fn = ctx.helper(f"_c{name}", _complex_fn(name))
        return f"{_dn(out_dtype)}({fn}(np.complex128({args[0]})))"
    return rule


# Transcendental functions that would otherwise be one libm call per element, which
# stops LLVM from vectorising a fused loop, and sin/cos, whose libm calls are slow in
# loop-carried chains (see vecmath.py).
for _p, _name in ((ew.exp_p, "exp"), (ew.expm1_p, "expm1"), (ew.log_p, "log"),
                  (ew.log1p_p, "log1p"), (ew.tanh_p, "tanh"), (ew.sin_p, "sin"),
                  (ew.cos_p, "cos"), (ew.atan_p, "arctan")):
    scalar_rules[_p] = _vecmath_scalar(_name, scalar_rules[_p])
for _p, _name in ((ew.tanh_p, "tanh"), (ew.tan_p, "tan"), (ew.expm1_p, "expm1"),
                  (ew.exp_p, "exp"), (ew.sinh_p, "sinh"), (ew.cosh_p, "cosh"),
                  (ew.sin_p, "sin"), (ew.cos_p, "cos"), (ew.log_p, "log"), (ew.asinh_p, "asinh"),
                  (ew.asin_p, "asin"), (ew.acos_p, "acos"), (ew.acosh_p, "acosh"),
                  (ew.atanh_p, "atanh"), (ew.atan_p, "atan"), (ew.exp2_p, "exp2"),
                  (ew.sign_p, "sign")):
    scalar_rules[_p] = _complex_scalar(_name, scalar_rules[_p])


# --------------------------------------------------------------------------- special_ops.py
# The kernels of base/special_kernels.py, compiled once per process.

_NJIT: dict = {}


def _kernel_helper(ctx, name):
    fn = _NJIT.get(name)
    if fn is None:
        kernel = getattr(special_kernels, f"{name}_scalar")
        try:    # cached on disk: the kernels are long and compile in seconds
            fn = numba.njit(kernel, cache=True)
        except RuntimeError:  # pragma: no cover - no usable cache directory
            fn = numba.njit(kernel, cache=False)
        _NJIT[name] = fn
    return ctx.helper(f"_sk_{name}", fn)


def _kernel_rule(name, extra=(), prefix=()):
    def rule(args, in_dtypes, out_dtype, ctx, **params):
        fn = _kernel_helper(ctx, name)
        ops = list(prefix) + [f"np.float64({a})" for a in args] + list(extra)
        return f"{_dn(out_dtype)}({fn}({', '.join(ops)}))"
    return rule


def _igamma_grad_a_scalar(args, in_dtypes, out_dtype, ctx):
    fn = _kernel_helper(ctx, "igamma_grad_a")
    psi = _special_helper(ctx, "digamma")
    a, x = (f"np.float64({v})" for v in args)
    return f"{_dn(out_dtype)}({fn}({a}, {x}, {psi}({a})))"


scalar_rules[so.igamma_p] = _kernel_rule("igamma", ("0.0",))
scalar_rules[so.igammac_p] = _kernel_rule("igamma", ("1.0",))
scalar_rules[so.igamma_grad_a_p] = _igamma_grad_a_scalar
scalar_rules[so.regularized_incomplete_beta_p] = _kernel_rule("betainc")
scalar_rules[so.bessel_i0e_p] = _kernel_rule("i0e")
scalar_rules[so.bessel_i1e_p] = _kernel_rule("i1e")
scalar_rules[so.zeta_p] = _kernel_rule("zeta")
scalar_rules[so.expn_p] = _kernel_rule("expint")
scalar_rules[so.expi_p] = _kernel_rule("expint", prefix=("-1.0",))
for _k, _p in enumerate((so.bessel_j0_p, so.bessel_j1_p, so.bessel_y0_p, so.bessel_y1_p)):
    scalar_rules[_p] = _kernel_rule("bessel_jy", extra=(f"{float(_k)!r}",))
scalar_rules[so.bessel_jv_p] = _kernel_rule("jv")
scalar_rules[so.bessel_iv_p] = _kernel_rule("iv", ("0.0",))
scalar_rules[so.bessel_ive_p] = _kernel_rule("iv", ("1.0",))
scalar_rules[so.sph_legendre_p] = _kernel_rule("sph_legendre")


# --------------------------------------------------------------------------- bitcast.py
# One LLVM ``bitcast`` per element, so it fuses into the surrounding elementwise loop.

_INTRINSICS: dict = {}


def _bitcast_intrinsic(src, dst):
    """An njit-callable function reinterpreting a ``src`` scalar as ``dst`` (LLVM bitcast)."""
    key = (np.dtype(src), np.dtype(dst))
    fn = _INTRINSICS.get(key)
    if fn is None:
        to = from_dtype(key[1])

        @intrinsic
        def _bitcast(typingctx, x):
            def codegen(context, builder, signature, args):
                return builder.bitcast(args[0], context.get_value_type(to))
            return to(x), codegen

        fn = _INTRINSICS[key] = _bitcast
    return fn


def _bitcast_scalar(args, in_dtypes, out_dtype, ctx, *, new_dtype):
    src, dst = np.dtype(in_dtypes[0]), np.dtype(new_dtype)
    fn = ctx.helper(f"_bitcast_{src.name}_{dst.name}", _bitcast_intrinsic(src, dst))
    # the cast pins the operand's Numba type (a literal or a widened sum otherwise)
    return f"{fn}(np.{src.name}({args[0]}))"


scalar_rules[bc.bitcast_convert_type_p] = _bitcast_scalar


# --------------------------------------------------------------------------- random_bits.py

def _threefry_scalar_source():
    """Source of an njit function: threefry2x32 on one element, each sum truncated to
    32 bits (Numba widens uint32 arithmetic to 64 bits)."""
    lines = ["def _threefry_scalar(k0, k1, x0, x1, pair):",
             f"    k2 = np.uint32(k0 ^ k1 ^ np.uint32({rb.PARITY}))",
             "    x0 = np.uint32(x0 + k0)", "    x1 = np.uint32(x1 + k1)"]
    ks = ("k0", "k1", "k2")
    for block in range(5):
        for r in rb.ROTATIONS[block % 2]:
            lines += ["    x0 = np.uint32(x0 + x1)",
                      f"    x1 = np.uint32((x1 << np.uint32({r})) | (x1 >> np.uint32({32 - r})))",
                      "    x1 = np.uint32(x0 ^ x1)"]
        lines += [f"    x0 = np.uint32(x0 + {ks[(block + 1) % 3]})",
                  f"    x1 = np.uint32(x1 + {ks[(block + 2) % 3]} + np.uint32({block + 1}))"]
    lines += ["    if pair:",
              "        return (np.uint64(x0) << np.uint64(32)) | np.uint64(x1)",
              "    return np.uint64(x0 ^ x1)"]
    return "\n".join(lines)


_THREEFRY_FN: list = []


def _threefry_fn():
    if not _THREEFRY_FN:
        namespace = {"np": np}
        exec(compile(_threefry_scalar_source(), "<threefry2x32>", "exec"), namespace)  # noqa: S102
        _THREEFRY_FN.append(numba.njit(namespace["_threefry_scalar"], cache=False))
    return _THREEFRY_FN[0]


def _threefry_scalar(args, in_dtypes, out_dtype, ctx, *, out):
    fn = ctx.helper("_threefry2x32", _threefry_fn())
    a = ", ".join(f"np.uint32({x})" for x in args)
    if out == "xor":
        return f"np.uint32({fn}({a}, False))"
    return f"np.uint64({fn}({a}, True))"


scalar_rules[rb.threefry2x32_p] = _threefry_scalar
