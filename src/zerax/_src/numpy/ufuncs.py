"""NumPy's elementwise functions (ufuncs) on zerax values.

Each function checks its arguments, finds NumPy 2's result dtype (Python scalars are
weak), converts and broadcasts the operands, and binds primitives.  Functions that are
not primitives (``log2``, ``hypot``, ``logaddexp``, ...) are compositions here.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from ..lax import lax as _lax
from ..ops import elementwise as ew
from ..ops.bitcast import bitcast_convert_type
from ..ops import reduce as _red
from ._util import as_dtype, check_arg, numpy_result_dtype, promote_and_broadcast, result_type
from ..base.dtypes import kind as dtype_kind

__all__: list[str] = []


def _export(fn, *names):
    for n in names:
        globals()[n] = fn
        __all__.append(n)
    return fn


def _result_dtype(np_fn, fname, *args):
    try:
        return numpy_result_dtype(np_fn, *args)
    except TypeError:
        kinds = ", ".join(type(a).__name__ if type(a) in (bool, int, float, complex)
                          else np.dtype(a.dtype).name for a in args)
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname} is not defined for arguments of type {kinds} "
            "(NumPy refuses the same call).") from None


# The float-math functions whose complex forms are supported: NumPy's values (and
# branch cuts), holomorphic derivatives.  The others still refuse complex inputs.
_COMPLEX_OK = frozenset({"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt",
                         "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                         "tanh", "arcsinh", "arccosh", "arctanh"})


def _no_complex(fname, dtype):
    if np.dtype(dtype).kind == "c" and fname not in _COMPLEX_OK:
        raise errors.NotSupportedError(
            f"zerax.numpy.{fname}: complex inputs are not supported yet; complex inputs "
            f"work for {', '.join(sorted(_COMPLEX_OK))}, power, abs and sign")


def _unary(fname, np_fn, prim_fn):
    """A float-math ufunc: integer inputs compute in NumPy's float dtype."""

    def f(x, /):
        if type(x) is Array and (dtype_kind(x._value.dtype) == "f" or x._value.dtype.kind == "c"
                                 and fname in _COMPLEX_OK):
            # Eager fast path: with only concrete values the primitive's implementation
            # is NumPy's own function, so call it directly.
            return Array._wrap(np_fn(x._value))
        if isinstance(x, Tracer) and dtype_kind(x.dtype) == "f":
            return prim_fn(x)
        x = check_arg(x, fname)
        dtype = _result_dtype(np_fn, fname, x)
        _no_complex(fname, dtype)
        return prim_fn(as_dtype(x, dtype))

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}``."
    return f


def _binary(fname, np_fn, prim_fn, operands="result", float_ops=True):
    """``operands``: "result" converts operands to the result dtype; "common" to their
    common dtype (comparisons, whose result is bool).  ``float_ops``: the function
    accepts float operands (False for bitwise operations)."""

    def f(x1, x2, /):
        if type(x1) is Array:
            if type(x2) is Array:
                fast = _eager(np_fn, x1._value, x2._value)
            elif type(x2) in _FAST_SCALARS:
                fast = _eager(np_fn, x1._value, x2)
            else:
                fast = None
            if fast is not None:
                return fast
        elif type(x2) is Array and type(x1) in _FAST_SCALARS:
            fast = _eager(np_fn, x1, x2._value)
            if fast is not None:
                return fast
        elif float_ops and isinstance(x1, Tracer):
            # Traced fast path for the common float cases, where NumPy 2's rules leave
            # the dtype and shape of ``x1`` unchanged.
            dt = x1.dtype
            # (a weak x1 promotes by its Python type, not its dtype: the general path)
            if dtype_kind(dt) == "f" and x1._weak_type is None:
                if type(x2) in _FAST_SCALARS:
                    return prim_fn(x1, np.array(x2, dt))
                if isinstance(x2, Tracer) and x2.dtype == dt and x2.shape == x1.shape:
                    return prim_fn(x1, x2)
        x1 = check_arg(x1, fname, 0)
        x2 = check_arg(x2, fname, 1)
        dtype = _result_dtype(np_fn, fname, x1, x2)
        op_dtype = dtype if operands == "result" else result_type(x1, x2)
        a, b = promote_and_broadcast(fname, (x1, x2), op_dtype)
        return prim_fn(a, b)

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}`` with NumPy 2 broadcasting and dtypes."
    return f


_FAST_SCALARS = (float, int)


def _eager(np_fn, a, b):
    """Concrete operands only: NumPy's function is the primitive's implementation, with
    NumPy 2's promotion and broadcasting.  None sends the call down the general path
    (which raises zerax's errors for bad input)."""
    if a.dtype.kind == "c" if type(a) is np.ndarray else False:
        return None
    if (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype != b.dtype
            and "V" in (a.dtype.kind, b.dtype.kind)):
        return None     # bfloat16 promotes by JAX's lattice (ml_dtypes' NumPy one differs)
    try:
        out = np_fn(a, b)
    except (ValueError, TypeError, OverflowError):
        return None
    if dtypes.not_canonical(out.dtype):   # x64 off: computed in the canonical dtype instead
        return None
    return Array._wrap(out)


# --------------------------------------------------------------------------- arithmetic

_export(_binary("add", np.add, ew.add), "add")
_export(_binary("subtract", np.subtract, ew.sub), "subtract")
_export(_binary("multiply", np.multiply, ew.mul), "multiply")
_export(_binary("true_divide", np.true_divide, ew.div), "true_divide", "divide")
_export(_binary("floor_divide", np.floor_divide, ew.floor_divide), "floor_divide")
_export(_binary("remainder", np.remainder, ew.rem), "remainder", "mod")
_export(_binary("maximum", np.maximum, ew.maximum), "maximum")
_export(_binary("minimum", np.minimum, ew.minimum), "minimum")
_export(_binary("arctan2", np.arctan2, lambda a, b: ew.bind(ew.atan2_p, a, b)), "arctan2", "atan2")
_export(_binary("equal", np.equal, ew.eq, "common"), "equal")
_export(_binary("not_equal", np.not_equal, ew.ne, "common"), "not_equal")
_export(_binary("less", np.less, ew.lt, "common"), "less")
_export(_binary("less_equal", np.less_equal, ew.le, "common"), "less_equal")
_export(_binary("greater", np.greater, ew.gt, "common"), "greater")
_export(_binary("greater_equal", np.greater_equal, ew.ge, "common"), "greater_equal")
_export(_binary("bitwise_and", np.bitwise_and, ew.bitwise_and, float_ops=False), "bitwise_and")
_export(_binary("bitwise_or", np.bitwise_or, ew.bitwise_or, float_ops=False), "bitwise_or")
_export(_binary("bitwise_xor", np.bitwise_xor, ew.bitwise_xor, float_ops=False), "bitwise_xor")
_export(_binary("left_shift", np.left_shift, ew.shift_left, float_ops=False),
        "left_shift", "bitwise_left_shift")
_export(_binary("right_shift", np.right_shift, ew.shift_right, float_ops=False),
        "right_shift",
        "bitwise_right_shift")


def power(x1, x2, /):
    """Elementwise ``numpy.power``; a Python-int exponent becomes ``integer_pow``, whose
    derivatives stay compact."""
    if type(x2) is int:
        if type(x1) is Array and x2 >= 0:
            return Array._wrap(np.power(x1._value, x2))
        if isinstance(x1, Tracer) and dtype_kind(x1.dtype) == "f":
            return ew.integer_pow(x1, x2)
    x1 = check_arg(x1, "power", 0)
    x2 = check_arg(x2, "power", 1)
    dtype = _result_dtype(np.power, "power", x1, x2)
    if type(x2) is int and type(x1) is not int:
        return ew.integer_pow(as_dtype(x1, dtype), x2)
    a, b = promote_and_broadcast("power", (x1, x2), dtype)
    return ew.pow(a, b)


_export(power, "power", "pow")


def float_power(x1, x2, /):
    """``numpy.float_power``: power computed in float64."""
    dtype = _result_dtype(np.float_power, "float_power", check_arg(x1, "float_power"),
                          check_arg(x2, "float_power", 1))
    return power(as_dtype(check_arg(x1, "float_power"), dtype),
                 as_dtype(check_arg(x2, "float_power", 1), dtype))


_export(float_power, "float_power")


def negative(x, /):
    """Elementwise ``-x``."""
    x = check_arg(x, "negative")
    dtype = _result_dtype(np.negative, "negative", x)
    return ew.neg(as_dtype(x, dtype))


def positive(x, /):
    """Elementwise ``+x``."""
    x = check_arg(x, "positive")
    return as_dtype(x, _result_dtype(np.positive, "positive", x))


def absolute(x, /):
    """Elementwise ``|x|``; of a complex ``z``, the real magnitude (``grad`` of it is
    JAX's ``conj(z) / |z|``, 0 at 0).

    >>> import zerax.numpy as znp
    >>> float(znp.abs(3.0 - 4.0j))
    5.0
    """
    x = check_arg(x, "absolute")
    dtype = _result_dtype(np.absolute, "absolute", x)
    if dtype == np.bool_:
        return as_dtype(x, dtype)
    if result_type(x).kind == "c":     # |z| is real: the primitive takes z itself
        return ew.bind(ew.abs_p, as_dtype(x, result_type(x)))
    return ew.bind(ew.abs_p, as_dtype(x, dtype))


def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (nan for nan)."""
    x = check_arg(x, "sign")
    return ew.sign(as_dtype(x, _result_dtype(np.sign, "sign", x)))


_export(negative, "negative")
_export(positive, "positive")
_export(absolute, "absolute", "abs")
_export(sign, "sign")


def _rounding(fname, np_fn, prim_fn):
    def f(x, /):
        x = check_arg(x, fname)
        dtype = _result_dtype(np_fn, fname, x)
        x = as_dtype(x, dtype)
        if dtype.kind in "biu":
            return x
        return prim_fn(x)
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}``."
    return f


def _trunc(x):
    return ew.select_n(ew.lt(x, np.zeros((), x.dtype)), ew.floor(x), ew.ceil(x))


_export(_rounding("floor", np.floor, ew.floor), "floor")
_export(_rounding("ceil", np.ceil, ew.ceil), "ceil")
_export(_rounding("rint", np.rint, ew.round), "rint")
_export(_rounding("trunc", np.trunc, _trunc), "trunc", "fix")


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """``numpy.round``: round half to even, to ``decimals`` places."""
    a = check_arg(a, "round")
    try:
        dtype = dtypes.canonicalize(np.asarray(np.round(np.ones((), np.dtype(a.dtype) if hasattr(
            a, "dtype") else np.asarray(a).dtype), decimals)).dtype)
    except TypeError as e:       # NumPy refuses bool with decimals < 0, for one
        raise errors.ZeraxTypeError(f"zerax.numpy.round: {e} (NumPy refuses the same "
                                    "call)") from None
    a = as_dtype(a, dtype)
    if dtype.kind in "biu":
        if decimals >= 0:
            return a
        # As NumPy: in float64, rint(a / 10^-d) * 10^-d (half to even), then cast back
        scale = np.asarray(10.0 ** (-decimals))
        f = ew.mul(ew.round(ew.div(ew.convert_element_type(a, np.float64), scale)), scale)
        return ew.convert_element_type(f, dtype)
    if decimals == 0:
        return ew.round(a)
    scale = np.asarray(10.0 ** decimals, dtype)
    return ew.div(ew.round(ew.mul(a, scale)), scale)


_export(round, "round", "around")

# --------------------------------------------------------------------------- float math

for _name, _np_fn, _prim in [
    ("exp", np.exp, ew.exp_p), ("exp2", np.exp2, ew.exp2_p), ("expm1", np.expm1, ew.expm1_p),
    ("log", np.log, ew.log_p), ("log1p", np.log1p, ew.log1p_p),
    ("sqrt", np.sqrt, ew.sqrt_p), ("cbrt", np.cbrt, ew.cbrt_p),
    ("sin", np.sin, ew.sin_p), ("cos", np.cos, ew.cos_p), ("tan", np.tan, ew.tan_p),
    ("arcsin", np.arcsin, ew.asin_p), ("arccos", np.arccos, ew.acos_p),
    ("arctan", np.arctan, ew.atan_p), ("sinh", np.sinh, ew.sinh_p),
    ("cosh", np.cosh, ew.cosh_p), ("tanh", np.tanh, ew.tanh_p),
    ("arcsinh", np.arcsinh, ew.asinh_p), ("arccosh", np.arccosh, ew.acosh_p),
    ("arctanh", np.arctanh, ew.atanh_p),
]:
    _f = _unary(_name, _np_fn, lambda x, _p=_prim: ew.bind(_p, x))
    _export(_f, _name)
    if _name.startswith("arc"):
        _export(_f, "a" + _name[3:])  # NumPy 2's array-API aliases: asin, acos, ...


def _log_base(fname, np_fn, base):
    inv = 1.0 / math.log(base)

    def f(x, /):
        x = check_arg(x, fname)
        dtype = _result_dtype(np_fn, fname, x)
        if dtype.kind == "c":
            # NumPy scales both parts of log(z) by a real 1/log(base); a complex
            # product would turn log(0) = -inf + 0j into -inf + nan j.
            if type(x) is Array:
                return Array._wrap(np_fn(as_dtype(x, dtype)._value))
            lg = ew.log(as_dtype(x, dtype))
            c = np.asarray(inv, np.finfo(dtype).dtype)
            return ew.complex_(ew.mul(ew.real(lg), c), ew.mul(ew.imag(lg), c))
        return ew.mul(ew.log(as_dtype(x, dtype)), np.asarray(inv, dtype))
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"Elementwise ``numpy.{fname}`` (as log(x) / log({base}); of a complex " \
        "``z``, both parts of ``log(z)`` divided by it, as NumPy)."
    return f


_export(_log_base("log2", np.log2, 2.0), "log2")
_export(_log_base("log10", np.log10, 10.0), "log10")


def square(x, /):
    """Elementwise ``x * x`` (keeps integer dtypes)."""
    x = check_arg(x, "square")
    return ew.integer_pow(as_dtype(x, _result_dtype(np.square, "square", x)), 2)


def reciprocal(x, /):
    """Elementwise ``1 / x`` (integer inputs stay integer, as in NumPy)."""
    x = check_arg(x, "reciprocal")
    dtype = _result_dtype(np.reciprocal, "reciprocal", x)
    x = as_dtype(x, dtype)
    if dtype.kind in "iu":
        one = np.ones((), dtype)
        return ew.select_n(ew.eq(ew.bind(ew.abs_p, x), one), np.zeros((), dtype), x)
    return ew.div(np.ones((), dtype), x)


def deg2rad(x, /):
    """Degrees to radians."""
    x = check_arg(x, "deg2rad")
    dtype = _result_dtype(np.deg2rad, "deg2rad", x)
    return ew.mul(as_dtype(x, dtype), np.asarray(math.pi / 180.0, dtype))


def rad2deg(x, /):
    """Radians to degrees."""
    x = check_arg(x, "rad2deg")
    dtype = _result_dtype(np.rad2deg, "rad2deg", x)
    return ew.mul(as_dtype(x, dtype), np.asarray(180.0 / math.pi, dtype))


_export(square, "square")
_export(reciprocal, "reciprocal")
_export(deg2rad, "deg2rad", "radians")
_export(rad2deg, "rad2deg", "degrees")


def _float_binary(fname, np_fn):
    def prep(x1, x2):
        x1, x2 = check_arg(x1, fname, 0), check_arg(x2, fname, 1)
        dtype = _result_dtype(np_fn, fname, x1, x2)
        _no_complex(fname, dtype)
        return promote_and_broadcast(fname, (x1, x2), dtype), dtype
    return prep


def hypot(x1, x2, /):
    """``sqrt(x1**2 + x2**2)`` without intermediate overflow."""
    (a, b), dtype = _float_binary("hypot", np.hypot)(x1, x2)
    a, b = ew.bind(ew.abs_p, a), ew.bind(ew.abs_p, b)
    # A select, not maximum/minimum: on a tie |x1| == |x2| one smooth branch is taken
    # whole, so second derivatives there are right (balanced max/min would give 0).
    swap = ew.lt(a, b)
    big, small = ew.select_n(swap, a, b), ew.select_n(swap, b, a)
    zero = np.zeros((), dtype)
    safe_big = ew.select_n(ew.eq(big, zero), big, np.ones((), dtype))
    ratio = ew.div(small, safe_big)
    out = ew.mul(big, ew.sqrt(ew.add(np.ones((), dtype), ew.mul(ratio, ratio))))
    # an infinite side makes it inf, even beside a nan (C99, NumPy)
    inf = np.asarray(np.inf, dtype)
    return ew.select_n(ew.bitwise_or(ew.eq(a, inf), ew.eq(b, inf)), out, inf)


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` computed stably."""
    (a, b), dtype = _float_binary("logaddexp", np.logaddexp)(x1, x2)
    return _logaddexp(a, b, 1.0)


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` computed stably."""
    (a, b), dtype = _float_binary("logaddexp2", np.logaddexp2)(x1, x2)
    ln2 = np.asarray(math.log(2.0), dtype)
    return ew.div(_logaddexp(ew.mul(a, ln2), ew.mul(b, ln2), 1.0), ln2)


def _logaddexp(a, b, _):
    # The larger plus log1p(e^-|b - a|): b + log1p(e^(a-b)) where b > a, else
    # a + log1p(e^(b-a)), the branch chosen before the exp (one exp and one log1p per
    # element, and the exponent is never positive).  On a tie the second is taken, so
    # the partial derivatives are (0.5, 0.5) and higher ones are right too (a max/abs
    # form gives the kink's one-sided values).
    dtype = a.dtype
    zero = np.zeros((), dtype)
    delta = ew.sub(b, a)
    b_wins = ew.gt(delta, zero)
    top = ew.select_n(b_wins, a, b)
    down = ew.select_n(b_wins, delta, ew.neg(delta))
    soft = ew.add(top, ew.bind(ew.log1p_p, ew.exp(down)))
    # Equal infinities (delta nan) give a; nan inputs propagate through a + b.
    nan_delta = ew.isnan(delta)
    return ew.select_n(nan_delta, soft, ew.select_n(ew.isnan(ew.add(a, b)), a, ew.add(a, b)))


def copysign(x1, x2, /):
    """``|x1|`` with the sign bit of ``x2`` (a NaN's too).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.copysign(1.0, np.array([-np.nan, -0.0, 2.0])).tolist()
    [-1.0, -1.0, 1.0]
    """
    (a, b), dtype = _float_binary("copysign", np.copysign)(x1, x2)
    mag = ew.bind(ew.abs_p, a)
    return ew.select_n(_signbit(b), mag, ew.neg(mag))


def _signbit(x):
    # the sign bit itself, read as the sign of the same bits as a signed integer: set
    # for -0.0 and for a NaN with its sign bit set (NumPy's and the array API's rule)
    idt = np.dtype(f"int{np.dtype(x.dtype).itemsize * 8}")
    return ew.lt(bitcast_convert_type(x, idt), np.zeros((), idt))


def signbit(x, /):
    """Whether the sign bit is set (true for -0.0, and for a NaN whose sign bit is set).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.signbit(np.array([-0.0, 0.0, -np.nan, np.nan])).tolist()
    [True, False, True, False]
    """
    x = check_arg(x, "signbit")
    dtype = result_type(x)
    if dtype.kind in "iu":
        return ew.lt(x, np.zeros((), dtype))
    if dtype == np.bool_:
        return ew.ne(x, x)
    return _signbit(as_dtype(x, dtype))


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    (a, b), dtype = _float_binary("heaviside", np.heaviside)(x1, x2)
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    out = ew.select_n(ew.lt(a, zero), ew.select_n(ew.gt(a, zero), b, one), zero)
    return ew.select_n(ew.isnan(a), out, a)          # nan stays nan


def fmax(x1, x2, /):
    """Elementwise maximum that ignores nan."""
    a, b = _promote2("fmax", np.fmax, x1, x2)
    if dtype_kind(a.dtype) not in "fc":
        return ew.maximum(a, b)
    return ew.select_n(ew.isnan(a), ew.select_n(ew.isnan(b), ew.maximum(a, b), a), b)


def fmin(x1, x2, /):
    """Elementwise minimum that ignores nan."""
    a, b = _promote2("fmin", np.fmin, x1, x2)
    if dtype_kind(a.dtype) not in "fc":
        return ew.minimum(a, b)
    return ew.select_n(ew.isnan(a), ew.select_n(ew.isnan(b), ew.minimum(a, b), a), b)


def fmod(x1, x2, /):
    """Remainder with the sign of the dividend (C's fmod)."""
    a, b = _promote2("fmod", np.fmod, x1, x2)
    return ew.truncated_rem(a, b)


def _promote2(fname, np_fn, x1, x2):
    x1, x2 = check_arg(x1, fname, 0), check_arg(x2, fname, 1)
    dtype = _result_dtype(np_fn, fname, x1, x2)
    return promote_and_broadcast(fname, (x1, x2), dtype)


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return floor_divide(x1, x2), remainder(x1, x2)  # noqa: F821 - exported above


def ldexp(x1, x2, /):
    """``x1 * 2**x2``."""
    x1, x2 = check_arg(x1, "ldexp", 0), check_arg(x2, "ldexp", 1)
    dtype = _result_dtype(np.ldexp, "ldexp", x1, x2)
    a = as_dtype(x1, dtype)
    scale = ew.bind(ew.exp2_p, as_dtype(x2, dtype))
    a, scale = promote_and_broadcast("ldexp", (a, scale), dtype)
    return ew.mul(a, scale)


def modf(x, /):
    """``(fractional part, integral part)``, both with the sign of x."""
    x = check_arg(x, "modf")
    dtype = _result_dtype(lambda v: np.modf(v)[0], "modf", x)
    x = as_dtype(x, dtype)
    whole = _trunc(x)
    return ew.sub(x, whole), whole


for _f in (hypot, logaddexp, logaddexp2, copysign, signbit, heaviside, fmax, fmin, fmod,
           divmod, ldexp, modf):
    _export(_f, _f.__name__)

# --------------------------------------------------------------------------- predicates


def isnan(x, /):
    """Elementwise nan test."""
    x = check_arg(x, "isnan")
    if dtype_kind(result_type(x)) not in "fc":
        return ew.ne(x, x)
    return ew.isnan(x)


def isfinite(x, /):
    """Elementwise finiteness test."""
    x = check_arg(x, "isfinite")
    if dtype_kind(result_type(x)) not in "fc":
        return ew.eq(x, x)
    return ew.is_finite(x)


def isinf(x, /):
    """Elementwise infinity test."""
    x = check_arg(x, "isinf")
    kind = result_type(x).kind
    if kind not in "fc":
        return ew.ne(x, x)
    if kind == "c":    # either part infinite (NumPy: isinf(complex(nan, inf)) is True)
        return ew.bitwise_or(isinf(ew.bind(ew.real_p, x)), isinf(ew.bind(ew.imag_p, x)))
    return ew.bitwise_not(ew.bitwise_or(ew.is_finite(x), ew.isnan(x)))


def isposinf(x, /):
    """Elementwise +inf test."""
    x = check_arg(x, "isposinf")
    return ew.bitwise_and(isinf(x), ew.gt(x, np.zeros((), result_type(x))))


def isneginf(x, /):
    """Elementwise -inf test."""
    x = check_arg(x, "isneginf")
    return ew.bitwise_and(isinf(x), ew.lt(x, np.zeros((), result_type(x))))


for _f in (isnan, isfinite, isinf, isposinf, isneginf):
    _export(_f, _f.__name__)

# --------------------------------------------------------------------------- logic


def _to_bool(x):
    if result_type(x) == np.bool_:
        return as_dtype(x, np.bool_)
    return ew.ne(x, np.zeros((), result_type(x))) if type(x) not in (bool, int, float, complex) \
        else np.asarray(bool(x))


def _logical(fname, prim_fn):
    def f(x1, x2, /):
        a, b = _to_bool(check_arg(x1, fname, 0)), _to_bool(check_arg(x2, fname, 1))
        a, b = promote_and_broadcast(fname, (a, b), np.bool_)
        return prim_fn(a, b)
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"Elementwise ``numpy.{fname}``."
    return f


_export(_logical("logical_and", ew.bitwise_and), "logical_and")
_export(_logical("logical_or", ew.bitwise_or), "logical_or")
_export(_logical("logical_xor", ew.bitwise_xor), "logical_xor")


def logical_not(x, /):
    """Elementwise ``not x``."""
    return ew.bitwise_not(_to_bool(check_arg(x, "logical_not")))


def invert(x, /):
    """Bitwise not (logical not for booleans)."""
    x = check_arg(x, "invert")
    dtype = _result_dtype(np.invert, "invert", x)
    return ew.bitwise_not(as_dtype(x, dtype))


_export(logical_not, "logical_not")
_export(invert, "invert", "bitwise_not", "bitwise_invert")

# --------------------------------------------------------------------------- misc


def clip(x, /, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002 - the standard's
    """``minimum(maximum(x, min), max)``; either bound may be None.  The bounds are
    given by position, as ``min=``/``max=`` (the array API standard's names, NumPy 2's,
    JAX's) or as ``a_min=``/``a_max=`` (NumPy, and the JAX programs written before its
    rename), not both.

    >>> import zerax.numpy as znp
    >>> znp.clip(znp.arange(4.0), a_min=1.0, a_max=2.0)
    Array([1., 1., 2., 2.], dtype=float64)
    """
    for old, new, name in ((a_min, min, "min"), (a_max, max, "max")):
        if old is not None and new is not None:
            raise errors.ZeraxValueError(
                f"zerax.numpy.clip: the {name} bound was given twice (as a_{name} and as "
                f"{name}); pass it once.")
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    out = check_arg(x, "clip")
    if lo is not None:
        out = maximum(out, lo)  # noqa: F821 - exported above
    if hi is not None:
        out = minimum(out, hi)  # noqa: F821
    if lo is None and hi is None:
        out = positive(out)
    return out


def _bool_array(x):
    """A bool value as a zerax array (positive() refuses bool, as NumPy does)."""
    return x if isinstance(x, (Array, Tracer)) else Array._wrap(np.array(x, np.bool_))


def _zeros_like(x):
    """Zeros with the shape and dtype of ``x`` (as ``zerax.numpy.zeros_like``)."""
    if type(x) in (bool, int, float, complex):
        return Array._wrap(np.zeros(np.shape(x), np.asarray(x).dtype))
    return Array._wrap(np.zeros(tuple(x.shape), np.dtype(x.dtype)))


def real(x, /):
    """The real part (the array itself for real dtypes).

    >>> import zerax.numpy as znp
    >>> znp.real(znp.asarray([1 + 2j, 3 - 4j]))
    Array([1., 3.], dtype=float64)
    """
    x = check_arg(x, "real")
    if result_type(x).kind == "c":
        return ew.real(as_dtype(x, result_type(x)))
    return _bool_array(x) if result_type(x) == np.bool_ else positive(x)


def imag(x, /):
    """The imaginary part (zeros for real dtypes)."""
    x = check_arg(x, "imag")
    if result_type(x).kind == "c":
        return ew.imag(as_dtype(x, result_type(x)))
    return _zeros_like(x)


def conjugate(x, /):
    """The complex conjugate (the array itself for real dtypes)."""
    x = check_arg(x, "conjugate")
    if result_type(x).kind == "c":
        return ew.conj(as_dtype(x, result_type(x)))
    return _bool_array(x) if result_type(x) == np.bool_ else positive(x)


def angle(z, deg=False):
    """The counterclockwise angle of ``z`` from the positive real axis, in radians (or
    degrees): ``arctan2(imag(z), real(z))``; 0 or pi for real values.

    >>> import zerax.numpy as znp
    >>> znp.angle(znp.asarray([1j, -1.0]), deg=True)
    Array([ 90., 180.], dtype=float64)
    """
    z = check_arg(z, "angle")
    dtype = _result_dtype(np.angle, "angle", z)
    if result_type(z).kind == "c":
        re, im = real(z), imag(z)
    else:
        re = as_dtype(z, dtype)
        im = _zeros_like(re)                 # +0: angle(-1.0) is +pi, as in NumPy
    out = ew.bind(ew.atan2_p, im, re)
    return ew.mul(out, np.asarray(180.0 / math.pi, dtype)) if deg else out


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace nan, +inf and -inf by finite numbers (NumPy's defaults)."""
    x = check_arg(x, "nan_to_num")
    dtype = result_type(x)
    x = as_dtype(x, dtype)
    if dtype_kind(dtype) not in "fc":
        return x
    if dtype.kind == "c":     # each part on its own, as NumPy
        parts = [nan_to_num(part(x), nan=nan, posinf=posinf, neginf=neginf)
                 for part in (ew.real, ew.imag)]
        return ew.complex_(*parts)
    info = np.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = ew.select_n(ew.isnan(x), x, np.asarray(nan, dtype))
    out = ew.select_n(isposinf(out), out, np.asarray(posinf, dtype))
    return ew.select_n(isneginf(out), out, np.asarray(neginf, dtype))


def sinc(x, /):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = check_arg(x, "sinc")
    dtype = _result_dtype(np.sinc, "sinc", x)
    x = as_dtype(x, dtype)
    zero = ew.eq(x, np.zeros((), dtype))
    safe = ew.select_n(zero, x, np.ones((), dtype))
    pix = ew.mul(safe, np.asarray(math.pi, dtype))
    return ew.select_n(zero, ew.div(ew.sin(pix), pix), np.ones((), dtype))


for _f in (clip, real, imag, conjugate, angle, nan_to_num, sinc):
    _export(_f, _f.__name__)
_export(conjugate, "conj")

# lax.reduce and lax.reduce_window turn these ufuncs, as the matching lax functions,
# into one reduction primitive.
for _names, _reduction in ((("add",), _red.reduce_sum), (("multiply",), _red.reduce_prod),
                           (("maximum",), _red.reduce_max), (("minimum",), _red.reduce_min),
                           (("bitwise_and", "logical_and"), _lax.reduce_and),
                           (("bitwise_or", "logical_or"), _lax.reduce_or)):
    for _n in _names:
        _lax.register_monoid(globals()[_n], _reduction)
