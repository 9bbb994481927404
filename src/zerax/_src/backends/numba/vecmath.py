"""Vectorisable float64 exp, expm1, log, log1p and tanh for generated Numba loops.

Numba lowers ``np.tanh``/``np.log1p``/... to one scalar libm call per element, and a
loop that calls a function cannot be vectorised, so a fused elementwise chain spends
almost all its time in those calls.  The functions here are Numba intrinsics: each call
emits, inline in the caller, branch-free LLVM arithmetic on float64 values and their
int64 bit patterns (range reduction, a polynomial, selects for special values), which
LLVM vectorises with the rest of the loop.  Intrinsics cost almost nothing to compile,
unlike ``njit(inline="always")`` functions, which Numba re-types at every use.

The algorithms are written once, below, as ordinary arithmetic on ``_F`` values whose
operators emit the instructions.  Accuracy: within 1-3 ulp of NumPy on the whole
float64 range with the same special values (nan, +-inf, +-0, subnormals);
``tests/test_vecmath.py`` checks this against NumPy.  The range reductions are the
textbook ones (exp: x = k ln2 + r with |r| <= ln2/2; log: x = 2^e m with m in
[sqrt(1/2), sqrt(2)) and log(m) = 2 atanh(f / (2 + f)), f = m - 1), and the polynomials
are truncated Taylor series with enough terms for double precision on those ranges.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)


class _F:
    """A float64 value being emitted: Python arithmetic on it emits LLVM instructions
    (IEEE semantics, no fast-math flags, so results are those of the written order)."""

    __slots__ = ("b", "v")

    def __init__(self, builder, value):
        self.b, self.v = builder, value

    def _of(self, other):
        return other.v if isinstance(other, _F) else ir.Constant(_F64, float(other))

    def __add__(self, o): return _F(self.b, self.b.fadd(self.v, self._of(o)))
    def __radd__(self, o): return _F(self.b, self.b.fadd(self._of(o), self.v))
    def __sub__(self, o): return _F(self.b, self.b.fsub(self.v, self._of(o)))
    def __rsub__(self, o): return _F(self.b, self.b.fsub(self._of(o), self.v))
    def __mul__(self, o): return _F(self.b, self.b.fmul(self.v, self._of(o)))
    def __rmul__(self, o): return _F(self.b, self.b.fmul(self._of(o), self.v))
    def __truediv__(self, o): return _F(self.b, self.b.fdiv(self.v, self._of(o)))
    def __rtruediv__(self, o): return _F(self.b, self.b.fdiv(self._of(o), self.v))
    def __neg__(self): return _F(self.b, self.b.fneg(self.v))

    # Comparisons as in Python: false when a nan is involved, except ``!=``.
    def __lt__(self, o): return _B(self.b, self.b.fcmp_ordered("<", self.v, self._of(o)))
    def __le__(self, o): return _B(self.b, self.b.fcmp_ordered("<=", self.v, self._of(o)))
    def __gt__(self, o): return _B(self.b, self.b.fcmp_ordered(">", self.v, self._of(o)))
    def __ge__(self, o): return _B(self.b, self.b.fcmp_ordered(">=", self.v, self._of(o)))
    def __eq__(self, o): return _B(self.b, self.b.fcmp_ordered("==", self.v, self._of(o)))
    def __ne__(self, o): return _B(self.b, self.b.fcmp_unordered("!=", self.v, self._of(o)))

    __hash__ = None

    def _call(self, name):
        fn = self.b.module.declare_intrinsic(name, [_F64])
        return _F(self.b, self.b.call(fn, [self.v]))

    def isnan(self): return _B(self.b, self.b.fcmp_unordered("uno", self.v, self.v))
    def floor(self): return self._call("llvm.floor")
    def abs(self): return self._call("llvm.fabs")
    def bits(self): return _I(self.b, self.b.bitcast(self.v, _I64))


class _I:
    """An int64 value (a bit pattern) being emitted."""

    __slots__ = ("b", "v")

    def __init__(self, builder, value):
        self.b, self.v = builder, value

    def _of(self, other):
        return other.v if isinstance(other, _I) else ir.Constant(_I64, int(other))

    def __add__(self, o): return _I(self.b, self.b.add(self.v, self._of(o)))
    def __sub__(self, o): return _I(self.b, self.b.sub(self.v, self._of(o)))
    def __and__(self, o): return _I(self.b, self.b.and_(self.v, self._of(o)))
    def __or__(self, o): return _I(self.b, self.b.or_(self.v, self._of(o)))
    def __lshift__(self, o): return _I(self.b, self.b.shl(self.v, self._of(o)))
    def __rshift__(self, o): return _I(self.b, self.b.ashr(self.v, self._of(o)))
    def as_float(self): return _F(self.b, self.b.bitcast(self.v, _F64))


class _B:
    """A boolean (i1) value being emitted."""

    __slots__ = ("b", "v")

    def __init__(self, builder, value):
        self.b, self.v = builder, value

    def __or__(self, o): return _B(self.b, self.b.or_(self.v, o.v))
    def __and__(self, o): return _B(self.b, self.b.and_(self.v, o.v))


def where(cond, a, b):
    """``a if cond else b`` as one select instruction (no branch)."""
    bld = cond.b
    av = a.v if isinstance(a, _F) else ir.Constant(_F64, float(a))
    bv = b.v if isinstance(b, _F) else ir.Constant(_F64, float(b))
    return _F(bld, bld.select(cond.v, av, bv))


def clamp(x, lo, hi):
    """x limited to [lo, hi] (a nan stays nan)."""
    return where(x < lo, lo, where(x > hi, hi, x))


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # ln 2 rounded to 32 bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10   # ln 2 - _LN2_HI
_SQRT2 = 1.4142135623730951
_TWO52 = 4503599627370496.0
_SHIFT = 6755399441055744.0           # 1.5 * 2^52: k + _SHIFT holds integer k in its low bits
_SHIFT_BITS = 0x4338000000000000      # bit pattern of _SHIFT
_TWO54 = 18014398509481984.0
_EXP_BITS = 0x4330000000000000        # bit pattern of 2^52
_MANTISSA = 0x000FFFFFFFFFFFFF
_ONE_BITS = 0x3FF0000000000000        # bit pattern of 1.0
_INF = float("inf")
_NAN = float("nan")


# ------------------------------------------------------------------ the algorithms
# Each takes and returns ``_F`` values; written like the scalar code they emit.

def _expm1_reduced(r):
    """expm1(r) for |r| <= ln2/2: Taylor series to degree 13 (truncation < 1e-17)."""
    p = r * (1.0 / 6227020800.0) + 1.0 / 479001600.0
    for c in (39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0,
              2.0):
        p = p * r + 1.0 / c
    return r + (r * r) * p


def _pow2(k):
    """2.0 ** k for an integer-valued k in [-1022, 1023], by building its bits.

    Converting k to an integer through its bits (k + 1.5 * 2^52 holds k in the low
    mantissa bits) keeps the loop vectorisable on CPUs without packed float->int64."""
    n = (k + _SHIFT).bits() - _SHIFT_BITS
    return ((n + 1023) << 52).as_float()


def _reduce_ln2(x):
    """(k, r) with x = k ln2 + r, k integer-valued, |r| <= ln2/2 (Cody-Waite)."""
    k = (x * _LOG2E + 0.5).floor()
    return k, (x - k * _LN2_HI) - k * _LN2_LO


def _exp(x):
    k, r = _reduce_ln2(clamp(x, -746.0, 710.0))   # beyond: 0 and inf, from the scaling
    half = (k * 0.5).floor()              # 2^k as two factors: subnormal and huge results
    y = (_expm1_reduced(r) + 1.0) * _pow2(half) * _pow2(k - half)
    return where(x.isnan(), x, y)


def _expm1(x):
    k, r = _reduce_ln2(clamp(x, -40.0, 710.0))    # expm1(x) rounds to -1 below -40
    p = _expm1_reduced(r)
    t = _pow2(clamp(k, -60.0, 56.0))
    moderate = p * t + (t - 1.0)          # 2^k p + (2^k - 1): both terms exact
    half = (k * 0.5).floor()              # large k: the -1 no longer matters
    large = ((p + 1.0) * _pow2(half)) * _pow2(k - half)
    y = where(k > 56.0, large, moderate)
    y = where(k == 0.0, p, y)
    return where(x.isnan() | (x == 0.0), x, y)     # nan, and the sign of -0.0


def _log_finite_positive(x):
    """log(x) for finite x > 0 (subnormals included)."""
    tiny = x < 2.2250738585072014e-308
    bits = where(tiny, x * _TWO54, x).bits()
    m = ((bits & _MANTISSA) | _ONE_BITS).as_float()                    # in [1, 2)
    e = ((bits >> 52) | _EXP_BITS).as_float() - (_TWO52 + 1023.0)     # exponent, as float
    e = where(tiny, e - 54.0, e)
    big = m > _SQRT2
    m = where(big, m * 0.5, m)
    e = where(big, e + 1.0, e)
    f = m - 1.0                                                        # exact
    s = f / (2.0 + f)
    z = s * s
    R = z * (2.0 / 23.0) + 2.0 / 21.0
    for k in (19, 17, 15, 13, 11, 9, 7, 5, 3):
        R = R * z + 2.0 / k
    R = R * z
    hfsq = 0.5 * f * f
    # log(1 + f) = 2s + sR = f - hfsq + s (hfsq + R), ordered for small rounding error
    return e * _LN2_HI + ((e * _LN2_LO + s * (hfsq + R)) - hfsq + f)


def _log(x):
    y = _log_finite_positive(where(x > 0.0, x, 1.0))
    y = where(x == 0.0, -_INF, y)
    y = where(x < 0.0, _NAN, y)
    y = where(x == _INF, x, y)
    return where(x.isnan(), x, y)


def _log1p(x):
    u = 1.0 + x
    v = where((u > 0.0) & (u < _INF), u, 1.0)
    # log(u) plus the part of x that rounding 1 + x lost, to first order (Goldberg).
    y = _log_finite_positive(v) + (x - (u - 1.0)) / v
    y = where(u == 1.0, x, y)
    y = where(u == 0.0, -_INF, y)
    y = where(u < 0.0, _NAN, y)
    y = where(x == _INF, x, y)
    return where(x.isnan(), x, y)


def _tanh(x):
    a = x.abs()
    t = _expm1(2.0 * where(a > 22.0, 22.0, a))
    y = t / (t + 2.0)                     # tanh(a) = expm1(2a) / (expm1(2a) + 2)
    y = where(a >= 22.0, 1.0, y)          # tanh(22) rounds to 1
    y = where(x < 0.0, -y, y)
    return where((a < 3.7e-9) | x.isnan(), x, y)   # tiny: tanh(x) = x to double precision


# ------------------------------------------------------------------ the intrinsics

def _float64_intrinsic(algorithm, name):
    @intrinsic
    def fn(typingctx, x):
        if x != types.float64:
            return None

        def codegen(context, builder, sig, args):
            return algorithm(_F(builder, args[0])).v
        return types.float64(types.float64), codegen
    fn.__doc__ = f"{name}(x) of a float64 inside njit code, emitted inline, vectorisable."
    return fn


exp = _float64_intrinsic(_exp, "exp")
expm1 = _float64_intrinsic(_expm1, "expm1")
log = _float64_intrinsic(_log, "log")
log1p = _float64_intrinsic(_log1p, "log1p")
tanh = _float64_intrinsic(_tanh, "tanh")
