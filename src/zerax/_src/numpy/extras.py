"""NumPy's odds and ends on zerax values: closeness and equality tests, type predicates,
number theory and floating-point decomposition (``gcd``, ``lcm``, ``frexp``, ``spacing``,
``nextafter``), the Bessel function ``i0``, ``rollaxis`` and the functional helpers
(``vectorize``, ``apply_along_axis``, ``apply_over_axes``, ``fromfunction``,
``piecewise``).

Everything is composed from primitives and other ``zerax.numpy`` functions (no rules of
its own), so it works under every transform; ``vectorize`` and ``apply_along_axis``
are nested `zerax.vmap`s.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer, concrete_value
from ..lax import fp as _fp
from ..lax.fp import _frexp, _k, _ulp
from ..ops import elementwise as ew
from . import creation as _cr
from . import reductions as _rd
from . import shape_ops as _so
from . import ufuncs as _uf
from ._util import (as_dtype, broadcast_shapes, check_arg, ensure_array, normalize_axis, promote_and_broadcast, shape_of)
from ..lax.control_flow import while_loop
from ..interpreters.batching import vmap
from ..base.dtypes import kind as dtype_kind

__all__ = [
    "allclose",
    "apply_along_axis",
    "apply_over_axes",
    "array_equal",
    "array_equiv",
    "fabs",
    "frexp",
    "fromfunction",
    "gcd",
    "i0",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isreal",
    "isrealobj",
    "isscalar",
    "lcm",
    "nextafter",
    "piecewise",
    "real_if_close",
    "rollaxis",
    "spacing",
    "vectorize",
]

_PY = (bool, int, float, complex)


def _is_zx(x):
    return isinstance(x, (Array, Tracer))


# --------------------------------------------------------------------------- closeness


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (``numpy.isclose``), exact for
    infinities; complex values by their modulus (a NaN in either part is NaN).

    >>> import zerax.numpy as znp
    >>> znp.isclose([1.0, 2.0], [1.0 + 1e-9, 2.1])
    Array([ True, False], dtype=bool)
    """
    x, y, atol, rtol = (v if type(v) in _PY else check_arg(v, "isclose", i)
                        for i, v in enumerate((a, b, atol, rtol)))
    for v in (atol, rtol):
        if np.dtype(v.dtype if _is_zx(v) else type(v)).kind == "c":
            raise errors.ZeraxTypeError("zerax.numpy.isclose: rtol and atol must be real")
    if _is_zx(y):
        y = as_dtype(y, dtypes.result_type(y.dtype, 1.0))
    elif isinstance(y, int):
        y = float(y)
    with np.errstate(invalid="ignore"):   # eagerly: inf - inf is a NaN that is not close
        close = _uf.less_equal(_uf.absolute(_uf.subtract(x, y)),
                               _uf.add(atol, _uf.multiply(rtol, _uf.absolute(y))))
    result = _uf.logical_or(_uf.logical_and(close, _uf.isfinite(y)), _uf.equal(x, y))
    if equal_nan:
        result = _uf.logical_or(result, _uf.logical_and(_uf.isnan(x), _uf.isnan(y)))
    return ensure_array(result)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` and ``b`` is close (``numpy.allclose``); a 0-d bool
    array (``bool()`` of it is NumPy's answer).

    >>> import zerax.numpy as znp
    >>> bool(znp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9]))
    True
    """
    return _rd.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _false():
    return Array._wrap(np.array(False))


def array_equal(a1, a2, equal_nan=False):
    """Whether two arrays have the same shape and elements (``numpy.array_equal``); a 0-d
    bool array.

    >>> import zerax.numpy as znp
    >>> bool(znp.array_equal([1, 2], [1, 2])), bool(znp.array_equal([1, 2], [1, 2, 3]))
    (True, False)
    """
    a1, a2 = ensure_array(a1, "array_equal"), ensure_array(a2, "array_equal")
    if tuple(a1.shape) != tuple(a2.shape):
        return _false()
    eq = _uf.equal(a1, a2)
    if equal_nan:
        eq = _uf.logical_or(eq, _uf.logical_and(_uf.isnan(a1), _uf.isnan(a2)))
    return _rd.all(eq)


def array_equiv(a1, a2):
    """Whether two arrays broadcast to one shape with equal elements
    (``numpy.array_equiv``); a 0-d bool array."""
    a1, a2 = ensure_array(a1, "array_equiv"), ensure_array(a2, "array_equiv")
    try:
        np.broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    except ValueError:
        return _false()
    return _rd.all(_uf.equal(a1, a2))


# --------------------------------------------------------------------------- type predicates


def isscalar(element):
    """NumPy's ``isscalar``: True for Python and NumPy scalars, False for arrays (zerax
    arrays and tracers included, even 0-d ones)."""
    if _is_zx(element):
        return False
    return bool(np.isscalar(element))


def _dtype_of(x, fname):
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return np.dtype(dt)
    if type(x) in _PY:
        return np.asarray(x).dtype
    return np.dtype(ensure_array(x, fname).dtype)


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (``numpy.iscomplexobj``); a Python bool."""
    return _dtype_of(x, "iscomplexobj").kind == "c"


def isrealobj(x):
    """Whether ``x`` does not have a complex dtype (``numpy.isrealobj``); a Python bool."""
    return not iscomplexobj(x)


def isreal(x):
    """Elementwise: whether the imaginary part is zero (all True for real dtypes); under
    every transform.

    >>> import zerax.numpy as znp
    >>> znp.isreal(znp.array([1 + 0j, 1j])).tolist()
    [True, False]
    """
    x = ensure_array(x, "isreal")
    if np.dtype(x.dtype).kind != "c":
        return _cr.ones(tuple(x.shape), np.bool_)
    return ew.eq(ew.imag(x), np.zeros((), np.finfo(x.dtype).dtype))


def iscomplex(x):
    """Elementwise: whether the imaginary part is non-zero (all False for real dtypes);
    under every transform."""
    x = ensure_array(x, "iscomplex")
    if np.dtype(x.dtype).kind != "c":
        return _cr.zeros(tuple(x.shape), np.bool_)
    return ew.ne(ew.imag(x), np.zeros((), np.finfo(x.dtype).dtype))


def real_if_close(a, tol=100):
    """``a``'s real part if every imaginary part is below ``tol`` (in machine epsilons of
    ``a``'s dtype when ``tol > 1``, else absolute), else ``a`` (``numpy.real_if_close``).

    Real inputs come back unchanged under every transform.  For a complex input the
    result's dtype depends on its values, so a value traced by ``jit``/``vmap`` raises a
    ConcretizationError (JAX has no ``real_if_close``); under ``grad``/``jvp`` the
    decision is taken on the concrete value and the real part stays differentiable.

    >>> import zerax.numpy as znp
    >>> znp.real_if_close(znp.array([2.1 + 4e-14j, 5.2 + 3e-15j]), tol=1000).tolist()
    [2.1, 5.2]
    >>> znp.real_if_close(znp.array([2.1 + 4e-13j])).dtype
    dtype('complex128')
    """
    a = ensure_array(a, "real_if_close")
    dt = np.dtype(a.dtype)
    if dt.kind != "c":
        return a
    tol = float(tol)
    if tol > 1:
        tol = float(np.finfo(dt).eps) * tol
    try:
        value = concrete_value(a, "zerax.numpy.real_if_close")
    except errors.ConcretizationError:
        raise errors.ConcretizationError(
            f"zerax.numpy.real_if_close was called on a traced complex value at "
            f"{errors.user_frame()}: whether the result is real (and so its dtype) depends "
            "on the values, which are not known while tracing. Call it outside jit/vmap, "
            "or take zerax.numpy.real(x) explicitly.") from None
    if np.all(np.abs(np.imag(value)) < tol):
        return _uf.real(a)
    return a


# --------------------------------------------------------------------------- integer math


fabs = _uf._unary("fabs", np.fabs, lambda x: ew.bind(ew.abs_p, x))
fabs.__doc__ = "Elementwise absolute value as a float (``numpy.fabs``)."


def _int_pair(fname, np_fn, x1, x2):
    x1, x2 = check_arg(x1, fname, 0), check_arg(x2, fname, 1)
    dtype = _uf._result_dtype(np_fn, fname, x1, x2)
    a, b = promote_and_broadcast(fname, (x1, x2), dtype)
    a, b = ensure_array(a), ensure_array(b)
    if dtype.kind == "i":
        a, b = ew.bind(ew.abs_p, a), ew.bind(ew.abs_p, b)
    return a, b, dtype


def _gcd_abs(a, b):
    """Euclid's algorithm on non-negative integer arrays, all elements in one loop."""
    zero, one = _k(0, a.dtype), _k(1, a.dtype)
    shape = broadcast_shapes("gcd", tuple(a.shape), tuple(b.shape))
    # Both carries depend on both inputs, so under vmap they are batched alike (the
    # while_loop batching rule mishandles a mix of batched and unbatched carries).
    couple = ew.mul(ew.add(a, b), zero)
    a, b = (_so.broadcast_to(ew.add(v, couple), shape) for v in (a, b))

    def body(carry):
        x, y = carry
        nz = ew.ne(y, zero)
        return ew.select_n(nz, x, y), ew.select_n(nz, zero, ew.rem(x, ew.select_n(nz, one, y)))

    return while_loop(lambda c: _rd.any(ew.ne(c[1], zero)), body, (a, b))[0]


def gcd(x1, x2, /):
    """Elementwise greatest common divisor of integers (``numpy.gcd``); always >= 0.

    >>> import zerax.numpy as znp
    >>> znp.gcd([12, -20, 0], 8)
    Array([4, 4, 8], dtype=int64)
    """
    a, b, _ = _int_pair("gcd", np.gcd, x1, x2)
    return _gcd_abs(a, b)


def lcm(x1, x2, /):
    """Elementwise least common multiple of integers (``numpy.lcm``); always >= 0.

    >>> import zerax.numpy as znp
    >>> znp.lcm([4, 6, 0], 10)
    Array([20, 30,  0], dtype=int64)
    """
    a, b, dtype = _int_pair("lcm", np.lcm, x1, x2)
    g = _gcd_abs(a, b)
    zero = _k(0, dtype)
    is0 = ew.eq(g, zero)
    out = ew.mul(ew.floor_divide(a, ew.select_n(is0, g, _k(1, dtype))), b)
    return ew.select_n(is0, out, zero)


# --------------------------------------------------------------------------- float bits


def _float_arg(fname, np_fn, *xs):
    xs = [check_arg(x, fname, i) for i, x in enumerate(xs)]
    dtype = _uf._result_dtype(np_fn, fname, *xs)
    if dtype_kind(dtype) != "f":
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: complex inputs are not supported")
    return [ensure_array(x) for x in promote_and_broadcast(fname, xs, dtype)], dtype



def frexp(x, /):
    """Mantissa and exponent, ``x == m * 2**e`` with ``0.5 <= |m| < 1`` (``numpy.frexp``);
    the exponent is int32.

    >>> import zerax.numpy as znp
    >>> znp.frexp([8.0, -3.0])
    (Array([ 0.5 , -0.75], dtype=float64), Array([4, 2], dtype=int32))
    """
    (x,), _ = _float_arg("frexp", lambda v: np.frexp(v)[0], x)
    m, e = _frexp(x)
    return m, ew.convert_element_type(e, np.dtype(np.int32))


def spacing(x, /):
    """Distance to the next representable number away from zero (``numpy.spacing``);
    nan for inf and nan."""
    (x,), dt = _float_arg("spacing", np.spacing, x)
    zero = _k(0, dt)
    u = _ulp(ew.bind(ew.abs_p, x), dt)
    u = ew.select_n(ew.eq(ew.bind(ew.abs_p, x), _k(np.finfo(dt).max, dt)), u, _k(np.inf, dt))
    u = ew.select_n(ew.lt(x, zero), u, ew.neg(u))
    return ew.select_n(ew.is_finite(x), _k(np.nan, dt), u)


def nextafter(x1, x2, /):
    """The next representable number after ``x1`` towards ``x2`` (``numpy.nextafter``)."""
    (a, b), dt = _float_arg("nextafter", np.nextafter, x1, x2)
    return _fp.nextafter(a, b)


# --------------------------------------------------------------------------- Bessel i0

# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on
# (8, inf) in 32/x (Cephes, as in NumPy's i0).
_I0A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


def _chbevl(t, coeffs):
    dt = t.dtype
    b0, b1, b2 = _k(coeffs[0], dt), _k(0.0, dt), _k(0.0, dt)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = ew.add(ew.sub(ew.mul(t, b1), b2), _k(c, dt))
    return ew.mul(_k(0.5, dt), ew.sub(b0, b2))


def i0(x):
    """Modified Bessel function of the first kind, order 0 (``numpy.i0``): NumPy's
    Chebyshev expansions (relative error ~1e-16), differentiable to any order.

    >>> import zerax.numpy as znp
    >>> round(float(znp.i0(1.0)), 12)
    1.266065877752
    """
    x = ensure_array(x, "i0")
    kind = np.dtype(x.dtype).kind
    if kind == "c":
        raise errors.ZeraxTypeError("zerax.numpy.i0: complex inputs are not supported "
                                    "(NumPy refuses them too)")
    dt = np.dtype(x.dtype) if kind == "f" else dtypes.default_float()
    ax = ew.bind(ew.abs_p, as_dtype(x, dt))
    small = ew.le(ax, _k(8.0, dt))
    xs = ew.select_n(small, _k(0.0, dt), ax)           # each branch sees safe values
    xb = ew.select_n(small, ax, _k(16.0, dt))
    lo = ew.mul(ew.exp(xs), _chbevl(ew.sub(ew.div(xs, _k(2.0, dt)), _k(2.0, dt)), _I0A))
    hi = ew.div(ew.mul(ew.exp(xb), _chbevl(ew.sub(ew.div(_k(32.0, dt), xb), _k(2.0, dt)), _I0B)),
                ew.sqrt(xb))
    return ew.select_n(small, hi, lo)


# --------------------------------------------------------------------------- rollaxis


def rollaxis(a, axis, start=0):
    """Move ``axis`` to come before position ``start`` (``numpy.rollaxis``; prefer
    ``moveaxis``)."""
    a = ensure_array(a, "rollaxis")
    n = a.ndim
    axis = normalize_axis(axis, n, "rollaxis")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise errors.ShapeError(
            f"zerax.numpy.rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but "
            f"{start - n if start < 0 else start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _so.transpose(a, axes)


# --------------------------------------------------------------------------- functional


def _vmap_leading(f, nlead, in_axes_per_level):
    """``f`` vmapped over ``nlead`` leading axes; ``in_axes_per_level[d]`` says, per
    argument, whether it is mapped (axis 0) or not (None) at level ``d``."""
    for d in reversed(range(nlead)):
        f = vmap(f, in_axes=tuple(in_axes_per_level[d]))
    return f


def _broadcast_apply(f, arrays, core_ndims, fname):
    """Call ``f`` on the core (trailing) parts of ``arrays``, broadcasting their loop
    (leading) dimensions with nested vmaps; size-1 loop dimensions are not mapped."""
    loops = [tuple(a.shape[:a.ndim - k]) for a, k in zip(arrays, core_ndims)]
    shape = broadcast_shapes(fname, *loops)
    nd = len(shape)
    keep = [d for d in range(nd) if shape[d] != 1]
    args, per_level = [], [[] for _ in keep]
    for a, loop, k in zip(arrays, loops, core_ndims):
        full = (1,) * (nd - len(loop)) + loop
        mapped = [full[d] != 1 for d in keep]
        new_shape = [full[d] for d, m in zip(keep, mapped) if m] + list(a.shape[a.ndim - k:])
        if list(a.shape) != new_shape:
            a = _so.reshape(a, new_shape)
        args.append(a)
        for lvl, m in enumerate(mapped):
            per_level[lvl].append(0 if m else None)
    out = _vmap_leading(f, len(keep), per_level)(*args)

    def fix(o):
        o = ensure_array(o, fname)
        lead = [shape[d] for d in keep]
        core = tuple(o.shape[len(lead):])
        if o.ndim < len(lead) or list(o.shape[:len(lead)]) != lead:  # unmapped output
            o = _so.broadcast_to(o, tuple(lead) + tuple(o.shape))
            core = tuple(o.shape[len(lead):])
        return _so.reshape(o, shape + core) if len(keep) != nd else o

    if isinstance(out, tuple):
        return tuple(fix(o) for o in out)
    return fix(out)


_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature):
    sig = signature.replace(" ", "")
    if not re.match(_SIGNATURE, sig):
        raise errors.ZeraxValueError(f"zerax.numpy.vectorize: not a valid gufunc signature: "
                                     f"{signature!r} (expected e.g. '(n),(n)->()')")
    ins, outs = sig.split("->")

    def dims(part):
        return [tuple(re.findall(_DIM, group)) for group in re.findall(rf"\(({_CORE})\)", part)]

    return dims(ins), dims(outs)


def vectorize(pyfunc=None, otypes=None, doc=None, excluded=None, cache=False, signature=None):
    """Make ``pyfunc`` (written for scalars, or for core shapes given by a gufunc
    ``signature`` like ``'(n),(n)->()'``) broadcast over its array arguments
    (``numpy.vectorize``, implemented like ``jax.numpy.vectorize``: nested `zerax.vmap`
    over the broadcast loop dimensions). ``excluded``: positions or keyword names passed
    through unchanged; ``otypes``: output dtypes.

    >>> import zerax.numpy as znp
    >>> f = znp.vectorize(lambda a, b: a + 2 * b)
    >>> f(znp.arange(3.0), [[10.0], [20.0]])
    Array([[20., 21., 22.],
           [40., 41., 42.]], dtype=float64)
    """
    if pyfunc is None:
        return functools.partial(vectorize, otypes=otypes, doc=doc, excluded=excluded,
                                 cache=cache, signature=signature)
    excluded = frozenset(excluded or ())
    if isinstance(otypes, str):
        otypes = list(otypes)
    out_dtypes = None if otypes is None else [np.dtype(t) for t in otypes]
    parsed = None if signature is None else _parse_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        pos = [i for i in range(len(args)) if i not in excluded]
        kws = [k for k in kwargs if k not in excluded]
        vals = [ensure_array(args[i], "vectorize") for i in pos] + \
               [ensure_array(kwargs[k], "vectorize") for k in kws]
        if parsed is None:
            in_core, out_core = [()] * len(vals), None
        else:
            in_core, out_core = parsed
            if len(in_core) != len(vals):
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.vectorize: wrong number of positional arguments: the signature "
                    f"{signature!r} has {len(in_core)} inputs but {len(vals)} were given")
        sizes = {}
        for i, (v, core) in enumerate(zip(vals, in_core)):
            if v.ndim < len(core):
                raise errors.ShapeError(
                    f"zerax.numpy.vectorize: input {i} has {v.ndim} dimensions but the "
                    f"signature {signature!r} needs at least {len(core)}")
            for name, n in zip(core, v.shape[v.ndim - len(core):]):
                if sizes.setdefault(name, n) != n:
                    raise errors.ShapeError(
                        f"zerax.numpy.vectorize: inconsistent size for core dimension {name!r}: "
                        f"{sizes[name]} and {n}")

        def inner(*vs):
            a, kw = list(args), dict(kwargs)
            for i, v in zip(pos, vs):
                a[i] = v
            for k, v in zip(kws, vs[len(pos):]):
                kw[k] = v
            out = pyfunc(*a, **kw)
            if out_core is not None:
                outs = out if len(out_core) != 1 else (out,)
                if not isinstance(outs, tuple) or len(outs) != len(out_core):
                    raise errors.ZeraxValueError(
                        f"zerax.numpy.vectorize: the function must return {len(out_core)} "
                        f"outputs for signature {signature!r}")
                for o, core in zip(outs, out_core):
                    oshape = shape_of(o) if type(o) in _PY else tuple(ensure_array(o).shape)
                    bad = len(oshape) != len(core) or any(
                        sizes.setdefault(name, n) != n for name, n in zip(core, oshape))
                    if bad:
                        raise errors.ShapeError(
                            f"zerax.numpy.vectorize: an output has shape {oshape}, which does "
                            f"not match {core} of the signature {signature!r}")
            if isinstance(out, list):
                out = tuple(out)
            if isinstance(out, tuple):
                return tuple(ensure_array(o, "vectorize") for o in out)
            return ensure_array(out, "vectorize")

        out = _broadcast_apply(inner, vals, [len(c) for c in in_core], "vectorize")
        if out_dtypes is not None:
            if isinstance(out, tuple):
                out = tuple(as_dtype(o, d) for o, d in zip(out, out_dtypes))
            else:
                out = as_dtype(out, out_dtypes[0])
        return out

    if doc is not None:
        wrapped.__doc__ = doc
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Apply ``func1d`` to the 1-d slices of ``arr`` along ``axis``
    (``numpy.apply_along_axis``), as nested `zerax.vmap`s; the dimensions of
    ``func1d``'s result replace ``axis``.

    >>> import zerax.numpy as znp
    >>> znp.apply_along_axis(lambda v: v[0] + v[-1], 1, znp.arange(6.0).reshape(2, 3))
    Array([2., 8.], dtype=float64)
    """
    arr = ensure_array(arr, "apply_along_axis")
    nd = arr.ndim
    if nd == 0:
        raise errors.AxisError("zerax.numpy.apply_along_axis: axis 0 is out of bounds for an "
                                "array of rank 0")
    axis = normalize_axis(axis, nd, "apply_along_axis")
    x = _so.moveaxis(arr, axis, -1)
    if any(n == 0 for n in x.shape[:-1]):
        raise errors.ZeraxValueError(
            "zerax.numpy.apply_along_axis: cannot apply along an axis when an iteration "
            "dimension has size 0 (as NumPy)")

    def f(v):
        return ensure_array(func1d(v, *args, **kwargs), "apply_along_axis")

    for _ in range(nd - 1):
        f = vmap(f)
    res = f(x)
    lead = nd - 1
    perm = list(range(axis)) + list(range(lead, res.ndim)) + list(range(axis, lead))
    return _so.transpose(res, perm) if perm != list(range(res.ndim)) else res


def apply_over_axes(func, a, axes):
    """Apply ``func(a, axis)`` repeatedly, once per axis in ``axes``; a result that
    lost the axis gets it back with size 1 (``numpy.apply_over_axes``).

    >>> import zerax.numpy as znp
    >>> znp.apply_over_axes(znp.sum, znp.arange(6.0).reshape(2, 3), [0, 1])
    Array([[15.]], dtype=float64)
    """
    val = ensure_array(a, "apply_over_axes")
    n = val.ndim
    for axis in ([axes] if np.ndim(axes) == 0 else list(axes)):
        axis = int(axis)
        if axis < 0:
            axis += n
        res = ensure_array(func(val, axis), "apply_over_axes")
        if res.ndim != val.ndim:
            res = _so.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise errors.ZeraxValueError(
                    "zerax.numpy.apply_over_axes: function is not returning an array of the "
                    "correct shape")
        val = res
    return val


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices(shape, dtype), **kwargs)`` (``numpy.fromfunction``).

    >>> import zerax.numpy as znp
    >>> znp.fromfunction(lambda i, j: i + 10 * j, (2, 3), dtype=int)
    Array([[ 0, 10, 20],
           [ 1, 11, 21]], dtype=int64)
    """
    idx = _cr.indices(tuple(shape), dtype=dtype)
    return function(*[idx[i] for i in range(len(tuple(shape)))], **kwargs)


def _is_arraylike(c):
    return _is_zx(c) or isinstance(c, np.ndarray)


def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: where ``condlist[i]`` holds, the value (or the result of
    calling) ``funclist[i]``; an extra last entry of ``funclist`` is the default. Unlike
    NumPy each function is called on all of ``x`` (the results are selected), so the
    functions must be elementwise; later conditions win, as in NumPy. A single boolean
    array shaped like ``x`` is one condition (NumPy reads a 2-d one as a list of rows).

    >>> import zerax.numpy as znp
    >>> x = znp.array([-2.0, 0.5, 3.0])
    >>> znp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 10, 0.0])
    Array([ 2.,  0., 30.], dtype=float64)
    """
    x = ensure_array(x, "piecewise")
    n2 = len(funclist)
    if isinstance(condlist, (bool, np.bool_)) or (_is_arraylike(condlist) and (
            condlist.ndim == 0 or (condlist.ndim == x.ndim))):
        condlist = [condlist]  # one condition (NumPy: for 1-d x; zerax: any x)
    elif isinstance(condlist, (list, tuple)) and x.ndim != 0 and len(condlist) and \
            not isinstance(condlist[0], (list, tuple)) and not _is_arraylike(condlist[0]):
        condlist = [condlist]
    elif _is_arraylike(condlist):
        condlist = [condlist[i] for i in range(condlist.shape[0])]
    shape = tuple(x.shape)
    conds = []
    for c in condlist:
        c = ensure_array(c, "piecewise")
        c = _uf.not_equal(c, 0) if np.dtype(c.dtype) != np.bool_ else c
        conds.append(_so.broadcast_to(c, shape) if tuple(c.shape) != shape else c)
    n = len(conds)
    if n == n2 - 1:
        other = _cr.ones(shape, np.bool_)
        for c in conds:
            other = _uf.logical_and(other, _uf.logical_not(c))
        conds.append(other)
    elif n != n2:
        raise errors.ZeraxValueError(
            f"zerax.numpy.piecewise: with {n} condition(s), either {n} or {n + 1} functions "
            f"are expected, got {n2}")
    y = _cr.zeros_like(x)
    dt = np.dtype(x.dtype)
    for c, func in zip(conds, funclist):
        val = func(x, *args, **kw) if callable(func) else func
        val = check_arg(val, "piecewise")
        val = as_dtype(val, dt) if type(val) not in _PY else np.asarray(val).astype(dt)
        val = ensure_array(val)
        if tuple(val.shape) != shape:
            val = _so.broadcast_to(val, shape)
        y = ew.select_n(c, y, val)
    return y
