"""The CPU emitter's math library: float64 exp, expm1, log, log1p, tanh, arctan, sin
and cos emitted inline as LLVM arithmetic (llvmlite only), for generated loops.

A loop that calls libm once per element cannot be vectorised, so a fused elementwise
chain would spend almost all its time in those calls.  The functions here emit, inline
in the caller, LLVM arithmetic on float64 values and their int64 bit patterns.  exp,
expm1, log, log1p, tanh and arctan are branch-free (range reduction, a polynomial,
selects for special values), so LLVM vectorises them with the rest of the loop.  sin
and cos are written for latency instead (a loop-carried chain such as a scalar
``fori_loop``): predicted branches pick the quadrant (see their section below), and in
0-d code (``cells=True``) first a cell of width 1/16; parallel loops use
`sin_cos_selects` (branch-free, exact for |x| < `SIN_COS_RANGE`, the loop recomputing
a block with an argument beyond that).

The algorithms are written once, below, as ordinary arithmetic on ``_F`` values whose
operators emit the instructions.  Accuracy: within 1-3 ulp of NumPy on the whole
float64 range with the same special values (nan, +-inf, +-0, subnormals);
``tests/backends/test_mathlib.py`` checks this against NumPy.  The range reductions are the
textbook ones (exp: x = k ln2 + r with |r| <= ln2/2; log: x = 2^e m with m in
[sqrt(1/2), sqrt(2)) and log(m) = 2 atanh(f / (2 + f)), f = m - 1; sin and cos:
|x| = n pi/2 + r with |r| <= pi/4), and the polynomials are truncated Taylor series
with enough terms for double precision on those ranges.
"""

from __future__ import annotations

import functools
import math

from llvmlite import ir

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

    def fma(self, m, a):
        """self * m + a with one rounding (the FMA instruction)."""
        fn = self.b.module.declare_intrinsic("llvm.fma", [_F64],
                                             ir.FunctionType(_F64, [_F64] * 3))
        return _F(self.b, self.b.call(fn, [self.v, self._of(m), self._of(a)]))

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


# Cephes' atan: |x| reduced to [0, 0.66] by atan(x) = pi/2 - atan(1/x) (above tan(3pi/8))
# or pi/4 + atan((x-1)/(x+1)) (in between), then x + x z P(z)/Q(z), z = x^2.  All three
# reductions are computed and one is selected, so the code is branch-free.
_ATAN_P = (-8.750608600031904122785e-01, -1.615753718733365076637e01,
           -7.500855792314704667340e01, -1.228866684490136173410e02,
           -6.485021904942025371773e01)
_ATAN_Q = (1.0, 2.485846490142306297962e01, 1.650270098316988542046e02,
           4.328810604912902668951e02, 4.853903996359136964868e02,
           1.945506571482613964425e02)
_T3P8 = 2.41421356237309504880        # tan(3 pi / 8)
_PIO2 = 1.5707963267948966
_PIO4 = 0.7853981633974483
_MOREBITS = 6.123233995736765886130e-17   # pi/2 - _PIO2


def _horner(z, coefficients):
    acc = z * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        acc = acc * z + c
    return acc


def _arctan(x):
    a = x.abs()
    big, mid = a > _T3P8, a > 0.66
    r = where(big, -1.0 / a, where(mid, (a - 1.0) / (a + 1.0), a))
    base = where(big, _PIO2, where(mid, _PIO4, 0.0))
    extra = where(big, _MOREBITS, where(mid, 0.5 * _MOREBITS, 0.0))
    z = r * r
    y = base + (r * (z * _horner(z, _ATAN_P) / _horner(z, _ATAN_Q)) + r + extra)
    y = where(a == _INF, _PIO2, y)        # (r = -0 there: the sum is already pi/2)
    y = where(x < 0.0, -y, y)
    return where((a < 1e-300) | x.isnan(), x, y)   # keeps -0.0, subnormals and nan


# ------------------------------------------------------------------ sin and cos
# A different trade-off: these are for latency, not for vectorising.  A loop that
# carries x through ``x = f(cos(x))`` (a jitted ``fori_loop``, an ODE step) waits for
# each cos in turn, and libm's cos is a call with a long dependency chain.  Here the
# quadrant is chosen by *branches* (a predicted branch is not on the dependency chain,
# where a select would be), the reduction x - n pi/2 uses constants, and the
# polynomials are evaluated by Estrin's scheme (independent halves, fewer steps deep).
# Arguments beyond 7 (n > 4), infinities and nans call libm, so results there are
# NumPy's exactly.

_SINCOS_FAST_LIMIT = 7.0               # below 9 pi / 4: n = round(|x| / (pi/2)) <= 4
_TWO_OVER_PI = 0.6366197723675814


@functools.cache      # at first use: a process that loads cached kernels never needs it
def _multiples_of_half_pi():
    """[(hi, lo)] with hi + lo = n pi / 2 to ~106 bits, for n = 1..4.

    |x| - hi is exact for |x| in quadrant n (both are multiples of ulp(|x|) and the
    difference is small), and hi + lo is close enough to n pi/2 that (|x| - hi) - lo is
    |x| - n pi/2 within 1e-32 even next to a zero of sin or cos."""
    from decimal import Decimal, localcontext
    with localcontext() as dctx:
        dctx.prec = 80
        pi = Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078")
        parts = []
        for n in range(1, 5):
            v = pi * n / 2
            hi = float(v)
            parts.append((hi, float(v - Decimal(hi))))
    return parts



def _estrin(z, coefficients):
    """c0 + c1 z + c2 z^2 + ... in about log2(len) dependent fused multiply-adds."""
    terms = list(coefficients)
    power = z
    while len(terms) > 1:
        pairs = [power.fma(terms[k + 1], terms[k]) for k in range(0, len(terms) - 1, 2)]
        terms = pairs + terms[len(pairs) * 2:]       # an odd last term moves up unchanged
        power = power * power
    return terms[0]


# Taylor coefficients: with |r| <= pi/4 the first omitted terms are below 1e-17 relative.
_COS_TAIL = [(-1.0) ** k / float(math.factorial(2 * k + 4)) for k in range(7)]
_SIN_TAIL = [(-1.0) ** (k + 1) / float(math.factorial(2 * k + 3)) for k in range(8)]


def _cos_kernel(r, rlo):
    """cos(r + rlo) for |r| <= pi/4 (and a little beyond) and |rlo| < 1e-15 (or None)."""
    z = r * r
    hz = 0.5 * z
    w = 1.0 - hz                           # the leading part; its rounding error is added back
    small = (1.0 - w) - hz
    if rlo is not None:
        small = small - r * rlo            # cos(r + rlo) ~ cos(r) - rlo sin(r)
    return w + (z * z).fma(_estrin(z, _COS_TAIL), small)


def _sin_kernel(r, rlo):
    """sin(r + rlo) for |r| <= pi/4 (and a little beyond) and |rlo| < 1e-15 (or None)."""
    z = r * r
    p = _estrin(z, _SIN_TAIL)
    if rlo is None:
        return r + (z * r) * p
    return r + (z * r).fma(p, (z * rlo).fma(-0.5, rlo))   # + rlo cos(r)


# sin(n pi/2 + r) and cos(n pi/2 + r) by n mod 4: (kernel of r, negated?)
_SIN_QUADRANTS = [(_sin_kernel, False), (_cos_kernel, False), (_sin_kernel, True),
                  (_cos_kernel, True)]
_COS_QUADRANTS = [(_cos_kernel, False), (_sin_kernel, True), (_cos_kernel, True),
                  (_sin_kernel, False)]


def _sin_cos_block(x, n, negative, want_sin):
    """sin(x) or cos(x) for x of the given sign and |x| in quadrant n, i.e.
    |x| = n pi/2 + r with |r| <~ pi/4.  Knowing the sign here spares the abs."""
    if n == 0:
        if want_sin:
            return where(x == 0.0, x, _sin_kernel(x, None))   # keeps the sign of -0.0
        return _cos_kernel(x, None)
    hi, lo = _multiples_of_half_pi()[n - 1]
    r = (-hi) - x if negative else x - hi          # |x| - hi, exact
    kernel, negate = (_SIN_QUADRANTS if want_sin else _COS_QUADRANTS)[n % 4]
    y = kernel(r, -lo)
    return -y if negate != (negative and want_sin) else y   # sin is odd, cos even


# Cells: most of the fast range is cut into cells of width 1/16 centred on k/16, and
# in each one sin or cos is a degree-7 polynomial in r = |x| - k/16 (exact): with
# |r| <= 1/32 that is three Estrin steps after r, against five for the quadrant
# kernels above, whose |r| reaches pi/4 (a loop waiting on cos runs ~25% faster).  The
# coefficients are the Taylor series at k/16, computed to 40 digits, with the r^8 term
# folded into the lower ones by a Chebyshev step (its error is below 2e-19); the
# leading one is split hi + lo.  A cell where the function comes within 1/16 of zero
# keeps the quadrant code, which stays accurate relative to a tiny result; in every
# other cell the rounding errors of the polynomial (~|r| ulp(1/32)) are small beside
# ulp of the result, so it stays within 1 ulp of NumPy.
#
# Each cell's coefficients are one row of a constant table.  A switch on the cell
# number jumps to a block per cell that only names its row; the polynomial is written
# once and reads that row.  The jump is predicted, so the row, and with it the loads
# of the coefficients, do not wait for x: only r and the polynomial are on x's
# dependency chain, as with one block of code per cell, at a tenth of the compile
# time.  The row number passes through an empty inline-assembly copy, which LLVM
# cannot see through; otherwise it would turn the switch back into a load indexed by
# the cell number, which waits for x.

_CELLS_PER_UNIT = 16
_CELL_HALF_WIDTH = 0.5 / _CELLS_PER_UNIT
_CELL_COUNT = int(_SINCOS_FAST_LIMIT * _CELLS_PER_UNIT) + 1
_CELL_MIN_MAGNITUDE = 1.0 / 16
_CELL_ROW = 10                         # centre, c0 hi, c0 lo, c1 .. c7


def _decimal_sin_cos(b):
    """(sin b, cos b) to 40 digits, by their Taylor series (b is at most 7)."""
    from decimal import Decimal, localcontext
    with localcontext() as dctx:
        dctx.prec = 45
        x, term, n = Decimal(b), Decimal(1), 0
        sums = [Decimal(0), Decimal(0)]            # sin, cos
        while n < 12 or abs(term) > Decimal(10) ** -42:
            sign = 1 if n % 4 < 2 else -1
            sums[1 - n % 2] += sign * term
            n += 1
            term = term * x / n
        return sums[0], sums[1]


@functools.cache
def _cell_table(want_sin):
    """(rows, {cell number: row number}) for the cells that use a polynomial."""
    from decimal import Decimal, localcontext
    f = math.sin if want_sin else math.cos
    rows, row_of = [], {}
    with localcontext() as dctx:
        dctx.prec = 45
        h = Decimal(_CELL_HALF_WIDTH)
        for k in range(_CELL_COUNT):
            b = k / _CELLS_PER_UNIT
            ends = [f(max(b - _CELL_HALF_WIDTH, 0.0)), f(b + _CELL_HALF_WIDTH)]
            # |sin| and |cos| are smallest at an end of a cell without a zero
            if ends[0] * ends[1] <= 0.0 or min(map(abs, ends)) < _CELL_MIN_MAGNITUDE:
                continue
            s, c = _decimal_sin_cos(b)
            derivatives = [s, c, -s, -c] if want_sin else [c, -s, -c, s]
            coef = [derivatives[j % 4] / math.factorial(j) for j in range(9)]
            # r^8 = h^8 t^8 with t = r/h, and t^8 = (T8(t) + 256 t^6 - 160 t^4 + 32 t^2
            # - 1) / 128; dropping T8 / 128 leaves an error of at most |c8| h^8 / 128.
            c8 = coef[8]
            coef[6] += 2 * c8 * h ** 2
            coef[4] -= Decimal("1.25") * c8 * h ** 4
            coef[2] += Decimal("0.25") * c8 * h ** 6
            coef[0] -= c8 * h ** 8 / 128
            hi = float(coef[0])
            row_of[k] = len(rows)
            rows.append([b, hi, float(coef[0] - Decimal(hi))] + [float(v) for v in coef[1:8]])
    return rows, row_of


def _cell_rows_global(module, want_sin):
    """The module's constant table of cell rows (one per module and function)."""
    name = f"zerax.{'sin' if want_sin else 'cos'}.cells"
    try:
        return module.get_global(name)
    except KeyError:
        pass
    rows, _ = _cell_table(want_sin)
    ty = ir.ArrayType(_F64, len(rows) * _CELL_ROW)
    table = ir.GlobalVariable(module, ty, name)
    table.initializer = ir.Constant(ty, [v for row in rows for v in row])
    table.global_constant = True
    table.linkage = "private"
    return table


def _emit_cells(builder, x, ax, want_sin, done, incoming):
    """Dispatch |x| < 7 to its cell's polynomial; cells without one go on to the
    quadrant code, whose block this returns."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    _, row_of = _cell_table(want_sin)
    table = _cell_rows_global(builder.module, want_sin)
    quadrants = builder.append_basic_block("sincos.quadrants")
    polynomial = builder.append_basic_block("sincos.cell")
    cell = builder.fptosi((ax * float(_CELLS_PER_UNIT) + 0.5).v, i32)
    switch = builder.switch(cell, quadrants)
    opaque_copy = ir.FunctionType(i64, [i64])
    offsets = []
    for k, row in row_of.items():
        block = builder.append_basic_block(f"sincos.cell{k}")
        switch.add_case(k, block)
        builder.position_at_end(block)
        offsets.append((builder.asm(opaque_copy, "", "=r,0",
                                    [ir.Constant(i64, row * _CELL_ROW)], False), block))
        builder.branch(polynomial)
    builder.position_at_end(polynomial)
    offset = builder.phi(i64)
    for value, block in offsets:
        offset.add_incoming(value, block)
    zero = ir.Constant(i64, 0)

    def entry(j):
        where_ = builder.gep(table, [zero, builder.add(offset, ir.Constant(i64, j))])
        return _F(builder, builder.load(where_))

    centre, c0_hi = entry(0), entry(1)
    coefficients = [entry(j) for j in range(2, _CELL_ROW)]           # c0 lo, c1 .. c7
    # x < 0: cos(x) = P(|x| - b) = P(-(x + b)), sin(x) = -P(-(x + b)).  Negating the
    # coefficients (off the chain: they are loaded early) spares |x| on the chain.
    positive = builder.append_basic_block("sincos.cell.positive")
    negative = builder.append_basic_block("sincos.cell.negative")
    builder.cbranch((x < 0.0).v, negative, positive)
    for block, sign in ((positive, 1.0), (negative, -1.0)):
        builder.position_at_end(block)
        if sign > 0:
            r, lead, terms = x - centre, c0_hi, coefficients
        else:   # cos: the odd powers change sign; sin: the even ones
            r, lead = x + centre, (-c0_hi if want_sin else c0_hi)
            terms = [-c if (j % 2 == 0) == want_sin else c
                     for j, c in enumerate(coefficients)]
        incoming.append(((lead + _estrin(r, terms)).v, builder.block))
        builder.branch(done)
    return quadrants


def _emit_sin_cos(builder, xv, want_sin, cells):
    """Branch to the quadrant code (first to the cell code if ``cells``) for |x| < 7,
    to libm beyond, and merge with a phi.  The branch conditions are off the
    dependency chain of the result."""
    x = _F(builder, xv)
    fast = builder.append_basic_block("sincos.fast")
    libm = builder.append_basic_block("sincos.libm")
    done = builder.append_basic_block("sincos.done")
    ax = x.abs()
    builder.cbranch((ax < _SINCOS_FAST_LIMIT).v, fast, libm)
    builder.position_at_end(fast)
    incoming = []
    if cells:
        builder.position_at_end(_emit_cells(builder, x, ax, want_sin, done, incoming))
    i32 = ir.IntType(32)
    n = builder.fptosi((ax * _TWO_OVER_PI + 0.5).v, i32)
    case = builder.add(n, builder.select((x < 0.0).v, ir.Constant(i32, 5),
                                         ir.Constant(i32, 0)))
    blocks = [builder.append_basic_block(f"sincos.case{k}") for k in range(10)]
    switch = builder.switch(case, blocks[0])
    for k in range(1, 10):
        switch.add_case(k, blocks[k])
    for k, block in enumerate(blocks):
        builder.position_at_end(block)
        y = _sin_cos_block(x, k % 5, k >= 5, want_sin)
        incoming.append((y.v, builder.block))
        builder.branch(done)
    builder.position_at_end(libm)
    incoming.append((x._call("llvm.sin" if want_sin else "llvm.cos").v, builder.block))
    builder.branch(done)
    builder.position_at_end(done)
    phi = builder.phi(_F64)
    for value, block in incoming:
        phi.add_incoming(value, block)
    return phi


def module_function(module, name, emit):
    """The LLVM function ``double name(double)`` of ``module``, defined on first use by
    ``emit(builder, x)``.  LLVM still inlines it into its callers, but optimising one
    definition instead of one copy per call site keeps compiles as fast as with libm
    (a kernel with three inline copies of sin/cos compiled 0.36 s instead of 0.22 s)."""
    try:
        return module.get_global(name)
    except KeyError:
        pass
    fn = ir.Function(module, ir.FunctionType(_F64, [_F64]), name)
    fn.linkage = "internal"
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    builder.ret(emit(builder, fn.args[0]))
    return fn


def sin_cos_selects(x, want_sin):
    """sin(x) or cos(x) for |x| < 7 without a branch, for throughput: the quadrant n is
    picked by selects, both kernels are evaluated and one is selected, so LLVM
    vectorises the loop (on random arguments the quadrant branches of `_emit_sin_cos`
    are mispredicted about every other element).  Results for |x| >= 7, infinities and
    nans are finite garbage: the caller checks |x| < `SIN_COS_RANGE` and recomputes those
    with `sin`/`cos` (parallel loops do so per block, codegen.py)."""
    b = x.b
    i32 = ir.IntType(32)
    ax = x.abs()
    ax = where(ax < _SINCOS_FAST_LIMIT, ax, 0.0)          # (no overflow in the fptosi)
    n = b.fptosi((ax * _TWO_OVER_PI + 0.5).v, i32)
    hi = lo = _F(b, ir.Constant(_F64, 0.0))
    for k, (h, l) in enumerate(_multiples_of_half_pi(), start=1):
        is_k = _B(b, b.icmp_signed("==", n, ir.Constant(i32, k)))
        hi, lo = where(is_k, h, hi), where(is_k, l, lo)
    r = ax - hi                                           # exact (see _multiples_of_half_pi)
    c, s = _cos_kernel(r, -lo), _sin_kernel(r, -lo)
    odd = _B(b, b.trunc(n, ir.IntType(1)))
    second_half = _B(b, b.icmp_signed("!=", b.and_(n, ir.Constant(i32, 2)),
                                      ir.Constant(i32, 0)))
    if want_sin:      # quadrants 0..3: s, c, -s, -c; sin is odd
        y = where(odd, c, s)
        negate = _B(b, b.xor(second_half.v, (x < 0.0).v))
        return where(x == 0.0, x, where(negate, -y, y))   # keeps -0.0
    y = where(odd, s, c)                                  # c, -s, -c, s; cos is even
    return where(_B(b, b.xor(second_half.v, odd.v)), -y, y)


SIN_COS_RANGE = _SINCOS_FAST_LIMIT    # sin_cos_selects is exact for |x| below it
