"""Complex numbers in the CPU emitter: complex64/complex128 scalars as LLVM structs
``{re, im}`` (NumPy's memory layout), with NumPy's arithmetic and functions.

- ``+ - *`` and conjugation as NumPy's loops write them (the plain formulas: no FMA);
  division is NumPy's scaled algorithm (`_div`); ``abs`` is ``hypot``;
- the functions NumPy takes from the C library (``cexp``, ``clog``, ``csqrt``, the
  trigonometric and hyperbolic ones and their inverses) are those same C functions,
  so compiled results are NumPy's bits; complex64 is computed in complex128 and
  rounded per part (within an ulp of NumPy's ``cexpf``...);
- ``expm1``/``log1p``/``exp2`` are NumPy's own formulas (``nc_expm1``, ...) on libm's
  real functions;
- ``pow`` is the C library's ``cpow`` (NumPy's special cases are the lowering's);
- comparisons: ``==``/``!=`` of both parts; ``max``/``min`` lexicographic with NaN
  propagating, as NumPy's ``maximum``/``minimum``.
"""

from __future__ import annotations

import math
import platform

import numpy as np
from llvmlite import ir

_F32, _F64 = ir.FloatType(), ir.DoubleType()
_I32 = ir.IntType(32)
_X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# kernel-IR opcode -> the C library's complex function (complex128)
_LIBC = {"exp": "cexp", "log": "clog", "sqrt": "csqrt", "sin": "csin", "cos": "ccos",
         "tan": "ctan", "sinh": "csinh", "cosh": "ccosh", "tanh": "ctanh", "asin": "casin",
         "acos": "cacos", "atan": "catan", "asinh": "casinh", "acosh": "cacosh",
         "atanh": "catanh"}


def part_type(dtype):
    return _F32 if np.dtype(dtype) == np.complex64 else _F64


def complex_type(dtype):
    t = part_type(dtype)
    return ir.LiteralStructType([t, t])


class ComplexOps:
    """The emitter's complex scalars (a mixin of `emit.Emitter`: its builder ``b``,
    ``module`` and ``_extern``)."""

    def _c_parts(self, z):
        return self.b.extract_value(z, 0), self.b.extract_value(z, 1)

    def _c_make(self, re, im, b=None):
        b = b or self.b
        ty = ir.LiteralStructType([re.type, re.type])
        return b.insert_value(b.insert_value(ir.Constant(ty, ir.Undefined), re, 0), im, 1)

    def _c_const(self, value, dtype):
        t = part_type(dtype)
        v = complex(value)
        return ir.Constant(ir.LiteralStructType([t, t]),
                           [ir.Constant(t, v.real), ir.Constant(t, v.imag)])

    def _c_binary(self, name, dtype, x, y):
        b = self.b
        (a, c), (d, e) = self._c_parts(x), self._c_parts(y)
        if name == "add":
            return self._c_make(b.fadd(a, d), b.fadd(c, e))
        if name == "sub":
            return self._c_make(b.fsub(a, d), b.fsub(c, e))
        if name == "mul":
            return self._c_make(b.fsub(b.fmul(a, d), b.fmul(c, e)),
                                b.fadd(b.fmul(a, e), b.fmul(c, d)))
        if name == "div":
            return self._c_div(a, c, d, e)
        if name in ("max", "min"):
            keep = self._c_order(name, a, c, d, e)
            return b.select(keep, x, y)
        if name == "pow":
            return self._c_pow(dtype, a, c, d, e)
        raise NotImplementedError(f"{name} of complex numbers")

    def _c_pow(self, dtype, a, c, d, e):
        """The C library's ``cpow``/``cpowf`` (what NumPy's ``npy_cpow`` calls after its
        special cases, which the lowering writes out).  A ``float complex`` is one
        ``<2 x float>`` register in the x86-64 ABI; elsewhere complex64 is computed
        in complex128 and rounded per part."""
        b = self.b
        if np.dtype(dtype) == np.complex64 and _X86_64:
            vec = ir.VectorType(_F32, 2)

            def pack(re, im):
                v = b.insert_element(ir.Constant(vec, ir.Undefined), re, ir.Constant(_I32, 0))
                return b.insert_element(v, im, ir.Constant(_I32, 1))
            z = b.call(self._extern("cpowf", vec, [vec, vec]), [pack(a, c), pack(d, e)])
            return self._c_make(b.extract_element(z, ir.Constant(_I32, 0)),
                                b.extract_element(z, ir.Constant(_I32, 1)))
        narrow = a.type is _F32
        if narrow:
            a, c, d, e = (b.fpext(v, _F64) for v in (a, c, d, e))
        z = b.call(self._extern("cpow", ir.LiteralStructType([_F64, _F64]), [_F64] * 4),
                   [a, c, d, e])
        re, im = self._c_parts(z)
        if narrow:
            re, im = b.fptrunc(re, _F32), b.fptrunc(im, _F32)
        return self._c_make(re, im)

    def _c_div(self, ar, ai, br, bi):
        """NumPy's complex division: scaled by the larger part of the divisor."""
        b = self.b
        t = ar.type
        one = ir.Constant(t, 1.0)
        abr = self._intrinsic("llvm.fabs", t, [br])
        abi = self._intrinsic("llvm.fabs", t, [bi])
        # |br| >= |bi|: rat = bi/br, scl = 1/(br + bi*rat)
        rat1 = b.fdiv(bi, br)
        scl1 = b.fdiv(one, b.fadd(br, b.fmul(bi, rat1)))
        re1 = b.fmul(b.fadd(ar, b.fmul(ai, rat1)), scl1)
        im1 = b.fmul(b.fsub(ai, b.fmul(ar, rat1)), scl1)
        # both zero: a complex inf or nan
        zero = ir.Constant(t, 0.0)
        both_zero = b.and_(b.fcmp_ordered("==", abr, zero), b.fcmp_ordered("==", abi, zero))
        re1 = b.select(both_zero, b.fdiv(ar, abr), re1)
        im1 = b.select(both_zero, b.fdiv(ai, abr), im1)
        # otherwise: rat = br/bi, scl = 1/(bi + br*rat)
        rat2 = b.fdiv(br, bi)
        scl2 = b.fdiv(one, b.fadd(bi, b.fmul(br, rat2)))
        re2 = b.fmul(b.fadd(b.fmul(ar, rat2), ai), scl2)
        im2 = b.fmul(b.fsub(b.fmul(ai, rat2), ar), scl2)
        first = b.fcmp_ordered(">=", abr, abi)
        return self._c_make(b.select(first, re1, re2), b.select(first, im1, im2))

    def _c_order(self, name, a, c, d, e):
        """NumPy's complex maximum/minimum: keep x when x is NaN in a part, or x is
        larger (smaller) lexicographically and y has no NaN."""
        b = self.b
        cmp, cmp_eq = (">", ">=") if name == "max" else ("<", "<=")
        x_nan = b.or_(b.fcmp_unordered("uno", a, a), b.fcmp_unordered("uno", c, c))
        y_ok = b.and_(b.fcmp_ordered("ord", d, d), b.fcmp_ordered("ord", e, e))
        bigger = b.or_(b.and_(b.fcmp_ordered(cmp, a, d), b.fcmp_ordered("ord", c, c)),
                       b.and_(b.fcmp_ordered("==", a, d), b.fcmp_ordered(cmp_eq, c, e)))
        return b.or_(x_nan, b.and_(bigger, y_ok))

    def _c_compare(self, name, x, y=None):
        b = self.b
        a, c = self._c_parts(x)
        if name == "isnan":
            return b.or_(b.fcmp_unordered("uno", a, a), b.fcmp_unordered("uno", c, c))
        if name == "isfinite":
            inf = ir.Constant(a.type, math.inf)
            return b.and_(b.fcmp_ordered("<", self._intrinsic("llvm.fabs", a.type, [a]), inf),
                          b.fcmp_ordered("<", self._intrinsic("llvm.fabs", c.type, [c]), inf))
        d, e = self._c_parts(y)
        if name == "eq":
            return b.and_(b.fcmp_ordered("==", a, d), b.fcmp_ordered("==", c, e))
        if name == "ne":
            return b.or_(b.fcmp_unordered("!=", a, d), b.fcmp_unordered("!=", c, e))
        raise NotImplementedError(f"{name} of complex numbers")

    def _c_unary(self, name, dtype, z):
        b = self.b
        a, c = self._c_parts(z)
        if name == "neg":
            return self._c_make(b.fneg(a), b.fneg(c))
        if name == "conj":
            return self._c_make(a, b.fneg(c))
        if name == "sign":
            return self._c_sign(a, c)
        return self._c_math(name, dtype, a, c)

    def _c_sign(self, a, c):
        """NumPy 2's complex sign: z / |z|; 0 for 0; NaN for NaN; for an infinite |z|,
        the unit along the infinite part (NaN when both parts are infinite)."""
        b = self.b
        t = a.type
        zero, one, nan = ir.Constant(t, 0.0), ir.Constant(t, 1.0), ir.Constant(t, math.nan)
        r = self._c_abs(a, c)
        inf = ir.Constant(t, math.inf)

        def isinf(v):
            return b.fcmp_ordered("==", self._intrinsic("llvm.fabs", t, [v]), inf)
        unit_re = self._c_make(self._copysign(one, a), zero)
        unit_im = self._c_make(zero, self._copysign(one, c))
        nans = self._c_make(nan, nan)
        infinite = b.select(isinf(a), b.select(isinf(c), nans, unit_re), unit_im)
        finite = b.select(b.fcmp_ordered("==", r, zero), self._c_make(zero, zero),
                          self._c_make(b.fdiv(a, r), b.fdiv(c, r)))
        out = b.select(isinf(r), infinite, finite)
        return b.select(b.fcmp_unordered("uno", r, r), nans, out)

    def _c_abs(self, a, c):
        t = a.type
        wide = t is not _F64
        x, y = (self.b.fpext(a, _F64), self.b.fpext(c, _F64)) if wide else (a, c)
        r = self.b.call(self._extern("hypot", _F64, [_F64, _F64]), [x, y])
        return self.b.fptrunc(r, t) if wide else r

    def _c_real_part(self, name, z):
        a, c = self._c_parts(z)
        if name == "real":
            return a
        if name == "imag":
            return c
        return self._c_abs(a, c)

    def _c_math(self, name, dtype, a, c):
        b = self.b
        narrow = np.dtype(dtype) == np.complex64
        if name == "exp2":        # NumPy's nc_exp2: exp(z ln 2), the product in z's type
            ln2 = ir.Constant(a.type, math.log(2.0))
            a, c, name = b.fmul(a, ln2), b.fmul(c, ln2), "exp"
        if name in ("expm1", "log1p"):
            # NumPy's own formulas in the parts' precision (libm's float functions for
            # complex64, as NumPy's nc_expm1f/nc_log1pf call them)
            t = a.type
            suffix = "f" if narrow else ""

            def real(fn, *args):
                return b.call(self._extern(fn + suffix, t, [t] * len(args)), list(args))
            if name == "expm1":
                s = real("sin", b.fmul(c, ir.Constant(t, 0.5)))
                re = b.fsub(b.fmul(real("expm1", a), real("cos", c)),
                            b.fmul(b.fmul(ir.Constant(t, 2.0), s), s))
                im = b.fmul(real("exp", a), real("sin", c))
            else:
                a1 = b.fadd(a, ir.Constant(t, 1.0))
                re = real("log", real("hypot", a1, c))
                im = real("atan2", c, a1)
            return self._c_make(re, im)
        if narrow:
            a, c = b.fpext(a, _F64), b.fpext(c, _F64)
        if name in _LIBC:
            z = b.call(self._extern(_LIBC[name], ir.LiteralStructType([_F64, _F64]),
                                    [_F64, _F64]), [a, c])
            re, im = self._c_parts(z)
        else:
            raise NotImplementedError(f"{name} of complex numbers")
        if narrow:
            re, im = b.fptrunc(re, _F32), b.fptrunc(im, _F32)
        return self._c_make(re, im)

    def _c_cast(self, x, src, dst):
        """Conversions to, from and between complex types (NumPy's: a real becomes
        (x, 0); a complex becomes its real part converted)."""
        b = self.b
        s, t = np.dtype(src), np.dtype(dst)
        if s.kind == "c" and t.kind == "c":
            a, c = self._c_parts(x)
            pt = part_type(t)
            conv = (lambda v: b.fptrunc(v, pt)) if pt is _F32 and a.type is _F64 else \
                (lambda v: b.fpext(v, pt)) if pt is _F64 and a.type is _F32 else (lambda v: v)
            return self._c_make(conv(a), conv(c))
        if t.kind == "c":
            pt = np.float32 if t == np.complex64 else np.float64
            re = self._cast(x, s, pt)
            return self._c_make(re, ir.Constant(re.type, 0.0))
        a, c = self._c_parts(x)
        if t.kind == "b":       # nonzero in either part
            zero = ir.Constant(a.type, 0.0)
            return b.or_(b.fcmp_unordered("!=", a, zero), b.fcmp_unordered("!=", c, zero))
        return self._cast(a, np.float32 if s == np.complex64 else np.float64, t)
