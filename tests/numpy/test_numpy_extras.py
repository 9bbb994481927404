"""Tests for zerax.numpy's extras (src/zerax/_src/lax_numpy/extras.py, polynomial.py,
nanstatistics.py): closeness/equality tests, type predicates, gcd/lcm, frexp/spacing/
nextafter, i0, rollaxis, vectorize/apply_along_axis/fromfunction/piecewise, polynomials,
vander, trim_zeros, convolve/correlate, interp, gradient, window functions and the
NaN-ignoring order statistics.

Values, dtypes and shapes against NumPy 2 (hypothesis picks shapes, dtypes and values),
derivatives with ``zerax.test_util.check_grads``, vmap against stacking, a few jit runs
(each compiles through Numba, so they are few), errors are zerax errors.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=15)
FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16]


def check(got, want, rtol=0.0, atol=0.0, exact_dtype=True):
    """Same shape, dtype and values (NaNs equal) as NumPy's result."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w, rtol, atol, exact_dtype)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if exact_dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def np_call(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def elements(dtype, lo=-4.0, hi=4.0, special=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(lo), int(info.min)), min(int(hi), int(info.max)))
    fl = st.floats(lo, hi, width=dtype.itemsize * 8)
    if special:
        return st.one_of(fl, st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    return fl


@st.composite
def arrays(draw, dtypes=FLOATS, min_dims=0, max_dims=3, min_side=0, max_side=4, **kw):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                  max_side=max_side))
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype, **kw)))


@st.composite
def broadcastable_pair(draw, dtypes, **kw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    out = []
    for shape in shapes.input_shapes:
        dtype = np.dtype(draw(st.sampled_from(dtypes)))
        out.append(draw(hnp.arrays(dtype, shape, elements=elements(dtype, **kw))))
    return out


# --------------------------------------------------------------------------- closeness


@SETTINGS
@given(broadcastable_pair([np.bool_, np.int32, np.int64, np.float32, np.float64],
                          special=True),
       st.sampled_from([1e-5, 0.1, 0.0]), st.sampled_from([1e-8, 0.5, 0.0]), st.booleans())
def test_isclose_allclose(pair, rtol, atol, equal_nan):
    a, b = pair
    check(znp.isclose(a, b, rtol, atol, equal_nan), np_call(np.isclose, a, b, rtol, atol,
                                                             equal_nan))
    assert bool(znp.allclose(a, b, rtol, atol, equal_nan)) == \
        np_call(np.allclose, a, b, rtol, atol, equal_nan)


def test_isclose_python_scalars_and_weak_types():
    x32 = np.array([1.0, 1.0001, np.inf], np.float32)
    check(znp.isclose(x32, 1.0), np.isclose(x32, 1.0))
    check(znp.isclose(3, 3.0000001), np.isclose(3, 3.0000001))
    check(znp.isclose(np.array([1, 2], np.int8), 2), np.isclose(np.array([1, 2], np.int8), 2))
    check(znp.isclose(x32, np.float64(1.0), atol=np.float32(1e-3)),
          np.isclose(x32, np.float64(1.0), atol=np.float32(1e-3)))


def test_isclose_complex():
    # by the modulus of the difference; infinities equal only when equal; NaN in either
    # part is NaN (equal_nan: to another NaN)
    a = np.array([1 + 1j, 1 + 1j, complex(np.inf, 0), complex(np.inf, 1), complex(np.nan, 0),
                  1 + 1e-9j, complex(1, np.nan), 0j, complex(-np.inf, 0)])
    b = np.array([1 + 1.000001j, 1 + 2j, complex(np.inf, 0), complex(np.inf, 1),
                  complex(np.nan, 0), 1 + 0j, complex(1, np.nan), 1e-9 + 0j, complex(np.inf, 0)])
    for equal_nan in (False, True):
        want = np.isclose(a, b, equal_nan=equal_nan)
        check(znp.isclose(a, b, equal_nan=equal_nan), want)
        check(zx.jit(lambda u, v: znp.isclose(u, v, equal_nan=equal_nan))(a, b), want)
    check(znp.isclose(1 + 1j, 1.0), np.isclose(1 + 1j, 1.0))
    check(znp.isclose(a.astype(np.complex64), 1.0), np.isclose(a.astype(np.complex64), 1.0))
    assert bool(znp.allclose(a[:2], a[:2])) and not bool(znp.allclose(a[:2], b[:2]))
    with pytest.raises(zx.errors.ZeraxTypeError, match="real"):
        znp.isclose(a, b, atol=1j)


@SETTINGS
@given(broadcastable_pair([np.int32, np.float64], lo=-2, hi=2, special=True), st.booleans())
def test_array_equal_equiv(pair, equal_nan):
    a, b = pair
    for x, y in ((a, b), (a, a), (a, a.copy())):
        assert bool(znp.array_equal(x, y, equal_nan=equal_nan)) == \
            np.array_equal(x, y, equal_nan=equal_nan)
        assert bool(znp.array_equiv(x, y)) == np.array_equiv(x, y)
    assert not bool(znp.array_equiv(np.ones(2), np.ones(3)))


# --------------------------------------------------------------------------- predicates


def test_type_predicates():
    for v in (1, 2.5, True, 1j, np.float32(1), np.array(1.0), znp.array(1.0), [1, 2],
              np.ones(2, np.complex128)):
        if not isinstance(v, znp.ndarray):
            assert znp.isscalar(v) == np.isscalar(v)
            assert znp.iscomplexobj(v) == np.iscomplexobj(v)
            assert znp.isrealobj(v) == np.isrealobj(v)
    assert znp.isscalar(znp.array(1.0)) is False
    assert znp.iscomplexobj(znp.array([1.0])) is False and znp.isrealobj(znp.array([1]))
    for v in (np.array([1.0, 2.0]), np.arange(6).reshape(2, 3), np.array([1 + 0j, 2j]), 3.0):
        check(znp.isreal(v), np.isreal(v))
        check(znp.iscomplex(v), np.iscomplex(v))
    f = zx.make_jaxpr(lambda x: znp.isreal(x))
    assert f(np.ones(3)) is not None
    # traced complex values: the imaginary part compared with 0 (nan is not 0, -0.0 is)
    z = np.array([[1 + 2j, 1 + 0j, complex(np.nan, 0)], [complex(0, np.nan), -0j,
                                                          complex(5, -0.0)]])
    for fn in (zx.jit, zx.vmap):
        check(fn(znp.isreal)(z), np.isreal(z))
        check(fn(znp.iscomplex)(z), np.iscomplex(z))
    check(zx.jit(znp.iscomplex)(z.astype(np.complex64)), np.iscomplex(z))


# --------------------------------------------------------------------------- integer math


@SETTINGS
@given(st.data())
def test_gcd_lcm(data):
    d1, d2 = (np.dtype(data.draw(st.sampled_from(INTS))) for _ in range(2))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=4))
    a = data.draw(hnp.arrays(d1, shapes.input_shapes[0], elements=elements(d1, -60, 60)))
    b = data.draw(hnp.arrays(d2, shapes.input_shapes[1], elements=elements(d2, -60, 60)))
    check(znp.gcd(a, b), np.gcd(a, b))
    want = np_call(np.lcm, a, b)
    check(znp.lcm(a, b), want)


def test_gcd_lcm_scalars_and_errors():
    check(znp.gcd(12, 18), np.gcd(12, 18))
    check(znp.lcm(np.int32(4), 6), np.lcm(np.int32(4), 6))
    big = np.array([2 ** 62, 7 * 2 ** 40, 0], np.int64)
    check(znp.gcd(big, np.array([3 * 2 ** 50, 2 ** 41, 0])), np.gcd(big, np.array([3 * 2 ** 50,
                                                                                   2 ** 41, 0])))
    fib = np.array([165580141])  # consecutive Fibonacci numbers: Euclid's worst case
    check(znp.gcd(fib, np.array([102334155])), np.gcd(fib, np.array([102334155])))
    with pytest.raises(errors.ZeraxTypeError):
        znp.gcd(1.5, 2)
    with pytest.raises(errors.ZeraxTypeError):
        znp.lcm(np.array([True]), np.array([True]))


def test_gcd_vmap_and_jit():
    a = np.array([[12, 7, 0], [100, 35, 9]])
    b = np.array([[18, 3, 5], [75, 14, 0]])
    want = np.gcd(a, b)
    check(zx.vmap(znp.gcd)(a, b), want)
    check(zx.vmap(znp.lcm, in_axes=(0, None))(a, b[0]), np.lcm(a, b[0]))
    check(zx.jit(znp.gcd)(a, b), want)


@SETTINGS
@given(arrays([np.int8, np.int64, np.bool_, np.float32, np.float64], special=True))
def test_fabs(x):
    check(znp.fabs(x), np.fabs(x))


# --------------------------------------------------------------------------- float bits

_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0 ** -20]


@st.composite
def float_bits(draw):
    dtype = np.dtype(draw(st.sampled_from(FLOATS)))
    info = np.finfo(dtype)
    el = st.one_of(st.floats(width=dtype.itemsize * 8, allow_nan=True, allow_infinity=True),
                   st.sampled_from(_SPECIAL + [float(info.max), float(info.smallest_subnormal),
                                               float(info.smallest_normal),
                                               -float(info.smallest_normal)]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5))
    return draw(hnp.arrays(dtype, shape, elements=el))


def check_bits(got, want):
    """Exact equality, signs of zeros included."""
    check(got, want)
    g, w = np.asarray(got), np.asarray(want)
    keep = ~np.isnan(w)  # the sign of a NaN means nothing
    np.testing.assert_array_equal(np.signbit(g)[keep], np.signbit(w)[keep])


@SETTINGS
@given(float_bits(), st.data())
def test_frexp_spacing_nextafter(x, data):
    m, e = znp.frexp(x)
    wm, we = np.frexp(x)
    check_bits(m, wm)
    check(e, we)
    check_bits(znp.spacing(x), np_call(np.spacing, x))
    y = data.draw(hnp.arrays(x.dtype, x.shape, elements=st.one_of(
        st.sampled_from([np.inf, -np.inf, 0.0, -0.0, np.nan]),
        st.floats(width=x.dtype.itemsize * 8))))
    check_bits(znp.nextafter(x, y), np.nextafter(x, y))


def test_float_bits_dtypes():
    check(znp.frexp(np.arange(4, dtype=np.int8)), np.frexp(np.arange(4, dtype=np.int8)))
    check(znp.spacing(3), np.spacing(3))
    check(znp.nextafter(1, 2), np.nextafter(1, 2))
    check(znp.nextafter(np.float32(1), 2.0), np.nextafter(np.float32(1), 2.0))
    m, e = znp.frexp(np.array([5e-324, 1e308]))
    check(np.ldexp(np.asarray(m), np.asarray(e)), np.array([5e-324, 1e308]))
    check_grads(lambda x: znp.frexp(x)[0], (np.array([0.3, -5.0, 1e3]),), order=2,
                modes=("fwd", "rev"))
    with pytest.raises(errors.ZeraxTypeError):
        znp.frexp(np.array([1j]))


# --------------------------------------------------------------------------- i0


@SETTINGS
@given(arrays([np.float32, np.float64, np.int32], lo=-40, hi=40, special=True, max_dims=2))
def test_i0_values(x):
    want = np.i0(x)
    rtol = 1e-14 if want.dtype == np.float64 else 2e-6
    check(znp.i0(x), want, rtol=rtol)


def test_i0_known_values_and_grads():
    # I0(0) = 1, I0(1) = 1.2660658777520083..., I0(10) = 2815.716628466254...; I0' = I1
    check(znp.i0(np.array([0.0, 1.0, 10.0])),
          np.array([1.0, 1.2660658777520083, 2815.716628466254]), rtol=1e-14)
    check(zx.grad(znp.i0)(1.0), np.float64(0.5651591039924851), rtol=1e-13)
    check(zx.grad(znp.i0)(12.0), np.float64(18141.348781638833), rtol=1e-13)
    check_grads(znp.i0, (np.array([-9.0, -3.0, 0.4, 5.0, 7.9, 8.1, 20.0]),), order=2,
                modes=("fwd", "rev"))
    xs = np.array([[0.5, 3.0], [8.5, -30.0]])
    check(zx.vmap(znp.i0)(xs), np.i0(xs), rtol=1e-14)
    with pytest.raises(errors.ZeraxTypeError):
        znp.i0(np.array([1j]))


# --------------------------------------------------------------------------- rollaxis


@SETTINGS
@given(st.data())
def test_rollaxis(data):
    x = data.draw(arrays([np.int64], min_dims=1, max_dims=4))
    n = x.ndim
    axis = data.draw(st.integers(-n, n - 1))
    start = data.draw(st.integers(-n, n))
    check(znp.rollaxis(x, axis, start), np.rollaxis(x, axis, start))


def test_rollaxis_errors():
    with pytest.raises(errors.ShapeError):
        znp.rollaxis(np.ones((2, 3)), 2)
    with pytest.raises(errors.ShapeError):
        znp.rollaxis(np.ones((2, 3)), 0, 3)


# --------------------------------------------------------------------------- polynomials

POLY_DTYPES = [np.int64, np.float32, np.float64]


@st.composite
def poly(draw, min_size=0, max_size=5):
    dtype = np.dtype(draw(st.sampled_from(POLY_DTYPES)))
    n = draw(st.integers(min_size, max_size))
    return draw(hnp.arrays(dtype, (n,), elements=elements(dtype, -3, 3)))


@SETTINGS
@given(poly(), arrays([np.int64, np.float32, np.float64], max_dims=2, lo=-2, hi=2))
def test_polyval(p, x):
    check(znp.polyval(p, x), np.polyval(p, x), rtol=1e-5)
    check(znp.polyval(p, 1.5), np.polyval(p, 1.5), rtol=1e-5)


@SETTINGS
@given(poly(min_size=1), poly(min_size=1))
def test_polyadd_sub_mul(p, q):
    check(znp.polyadd(p, q), np.polyadd(p, q), rtol=1e-6)
    check(znp.polysub(p, q), np.polysub(p, q), rtol=1e-6, atol=1e-6)
    check(znp.polymul(p, q), np.polymul(p, q), rtol=1e-5, atol=1e-5)
    check(znp.polyadd(p, 2), np.polyadd(p, 2), rtol=1e-6)


@SETTINGS
@given(poly(), st.integers(0, 3), st.one_of(st.none(), st.floats(-2, 2), st.just([1.0, 2.0,
                                                                                   3.0])))
def test_polyder_polyint(p, m, k):
    check(znp.polyder(p, m), np.polyder(p, m), rtol=1e-6)
    check(znp.polyint(p, m, k), np.polyint(p, m, k), rtol=1e-6)


def test_polymul_leading_zeros():
    a, b = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0])
    check(znp.polymul(a, b), np.polymul(a, b))
    check(znp.polymul(np.zeros(3), b), np.polymul(np.zeros(3), b))
    check(znp.polymul(a, b, trim_leading_zeros=False), np.convolve(a, b))
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(znp.polymul)(a, b)
    f = zx.jit(lambda x, y: znp.polymul(x, y, trim_leading_zeros=False))
    check(zx.make_jaxpr(f)(a, b) is not None, True)
    check_grads(lambda x: znp.polymul(x, b), (a + 0.5,), order=1, modes=("fwd", "rev"))


def test_polynomial_errors():
    with pytest.raises(errors.ZeraxValueError):
        znp.polyder([1.0, 2.0], -1)
    with pytest.raises(errors.ZeraxValueError):
        znp.polyint([1.0, 2.0], 3, k=[1.0, 2.0])
    with pytest.raises(errors.ZeraxTypeError):
        znp.polyval(3.0, 2.0)


@SETTINGS
@given(arrays([np.bool_, np.int32, np.int64, np.float32, np.float64], min_dims=1, max_dims=1,
              lo=-3, hi=3),
       st.one_of(st.none(), st.integers(0, 5)), st.booleans())
def test_vander(x, N, increasing):
    check(znp.vander(x, N, increasing), np.vander(x, N, increasing))


@SETTINGS
@given(arrays([np.int64, np.float64], min_dims=1, max_dims=2, lo=0, hi=2),
       st.sampled_from(["fb", "f", "b", "BF"]), st.sampled_from([None, 0, -1]))
def test_trim_zeros(x, trim, axis):
    check(znp.trim_zeros(x, trim, axis), np.trim_zeros(x, trim, axis))


def test_trim_zeros_concrete_only():
    x = np.array([0.0, 1.0, 2.0, 0.0])
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(znp.trim_zeros)(x)
    # under grad the values are known, and the derivative flows through the kept elements
    check(zx.grad(lambda v: znp.sum(znp.trim_zeros(v) ** 2))(x), np.array([0.0, 2.0, 4.0,
                                                                            0.0]))
    with pytest.raises(errors.ZeraxValueError):
        znp.trim_zeros(x, "x")


# --------------------------------------------------------------------------- convolution


@SETTINGS
@given(st.sampled_from([np.bool_, np.int32, np.int64, np.float32, np.float64]),
       st.integers(1, 7), st.integers(1, 7), st.sampled_from(["full", "same", "valid"]),
       st.data())
def test_convolve_correlate(dtype, n, m, mode, data):
    a = data.draw(hnp.arrays(dtype, (n,), elements=elements(dtype, -3, 3)))
    v = data.draw(hnp.arrays(dtype, (m,), elements=elements(dtype, -3, 3)))
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    check(znp.convolve(a, v, mode), np.convolve(a, v, mode), rtol=tol, atol=tol)
    check(znp.correlate(a, v, mode), np.correlate(a, v, mode), rtol=tol, atol=tol)


def test_convolve_defaults_errors_grads_vmap():
    a, v = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])
    check(znp.convolve(a, v), np.convolve(a, v))
    check(znp.correlate(a, v), np.correlate(a, v))
    check(znp.convolve([1, 2], 3.0), np.convolve([1, 2], 3.0))
    with pytest.raises(errors.ZeraxValueError):
        znp.convolve(np.array([]), v)
    with pytest.raises(errors.ShapeError):
        znp.convolve(np.ones((2, 2)), v)
    with pytest.raises(errors.ZeraxValueError):
        znp.correlate(a, v, "bogus")
    rng = np.random.default_rng(0)
    for mode in ("full", "same", "valid"):
        check_grads(lambda x, y, mode=mode: znp.convolve(x, y, mode), (rng.normal(size=5),
                                                            rng.normal(size=3)),
                    order=2, modes=("fwd", "rev"))
    check_grads(lambda x, y: znp.correlate(x, y, "same"), (rng.normal(size=2),
                                                           rng.normal(size=4)),
                order=2, modes=("fwd", "rev"))
    xs, ys = rng.normal(size=(3, 5)), rng.normal(size=(3, 2))
    check(zx.vmap(znp.convolve)(xs, ys), np.stack([np.convolve(x, y) for x, y in zip(xs, ys)]),
          rtol=1e-12)
    check(zx.jit(lambda x, y: znp.convolve(x, y, "same"))(xs[0], ys[0]),
          np.convolve(xs[0], ys[0], "same"), rtol=1e-12)


# --------------------------------------------------------------------------- interp


@st.composite
def interp_args(draw):
    n = draw(st.integers(1, 6))
    xp = np.array(sorted(draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n,
                                       unique=True))))
    assume(n == 1 or np.min(np.diff(xp)) > 1e-3)
    fdt = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    fp = draw(hnp.arrays(fdt, (n,), elements=elements(fdt, -5, 5)))
    x = draw(hnp.arrays(np.float64, draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0)),
                        elements=st.one_of(st.floats(-7, 7), st.sampled_from(list(xp) +
                                                                             [np.nan]))))
    return x, xp, fp


@SETTINGS
@given(interp_args(), st.sampled_from([None, -10.0]), st.sampled_from([None, 10.0]))
def test_interp(args, left, right):
    x, xp, fp = args
    check(znp.interp(x, xp, fp, left, right), np.interp(x, xp, fp, left, right), rtol=1e-13,
          atol=1e-13)
    check(znp.interp(x, xp, fp, period=3.0), np.interp(x, xp, fp, period=3.0), rtol=1e-12,
          atol=1e-12)


def test_interp_grads_vmap_jit():
    xp, fp = np.array([0.0, 1.0, 2.5, 3.0]), np.array([1.0, -1.0, 4.0, 2.0])
    x = np.array([-0.5, 0.3, 1.2, 2.8, 3.5])
    check_grads(lambda x, xp, fp: znp.interp(x, xp, fp, left=0.5, right=fp[0]), (x, xp, fp),
                order=2, modes=("fwd", "rev"))
    xs = np.array([[0.5, 1.5], [2.9, -1.0]])
    check(zx.vmap(lambda v: znp.interp(v, xp, fp))(xs), np.interp(xs, xp, fp))
    fps = np.stack([fp, 2 * fp])
    check(zx.vmap(lambda f: znp.interp(x, xp, f))(fps),
          np.stack([np.interp(x, xp, f) for f in fps]))
    with pytest.raises(errors.ShapeError):
        znp.interp(x, xp, fp[:3])
    with pytest.raises(errors.ZeraxValueError):
        znp.interp(x, xp, fp, period=0)


# --------------------------------------------------------------------------- gradient


@SETTINGS
@given(st.data())
def test_gradient(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int64]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=5))
    f = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype, -5, 5)))
    edge_order = data.draw(st.sampled_from([1, 2]))
    axis = data.draw(st.sampled_from([None, 0, -1, (0, -1)]))
    axes = list(range(f.ndim)) if axis is None else (
        [axis % f.ndim] if isinstance(axis, int) else sorted({a % f.ndim for a in axis}))
    if isinstance(axis, tuple) and len(axes) < 2:
        axis = axes[0]
    kind = data.draw(st.sampled_from(["none", "scalar", "per-axis"]))
    if kind == "none":
        spacing = ()
    elif kind == "scalar":
        spacing = (data.draw(st.sampled_from([0.5, 2, 1.5])),)
    else:
        spacing = []
        for ax in axes:
            if data.draw(st.booleans()):
                spacing.append(data.draw(st.sampled_from([0.25, 3.0])))
            else:
                steps = data.draw(st.lists(st.floats(0.1, 2.0), min_size=f.shape[ax] - 1,
                                           max_size=f.shape[ax] - 1))
                spacing.append(np.concatenate([[0.0], np.cumsum(steps)]))
        spacing = tuple(spacing)
    want = np.gradient(f, *spacing, axis=axis, edge_order=edge_order)
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-9
    check(znp.gradient(f, *spacing, axis=axis, edge_order=edge_order), want, rtol=tol, atol=tol)


def test_gradient_grads_and_errors():
    rng = np.random.default_rng(1)
    coords = np.array([0.0, 0.5, 1.2, 2.0, 2.1])
    check_grads(lambda f: znp.gradient(f, 0.5, edge_order=2), (rng.normal(size=(3, 4)),),
                order=2, modes=("fwd", "rev"))
    check_grads(lambda f, c: znp.gradient(f, c), (rng.normal(size=5), coords), order=2,
                modes=("fwd", "rev"))
    check(znp.gradient(np.arange(5.0) ** 2, np.arange(5)),
          np.gradient(np.arange(5.0) ** 2, np.arange(5)))
    with pytest.raises(errors.ShapeError):
        znp.gradient(np.ones(2), edge_order=2)
    with pytest.raises(errors.ShapeError):
        znp.gradient(np.ones(4), np.ones(3))
    with pytest.raises(errors.ZeraxTypeError):
        znp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0)


# --------------------------------------------------------------------------- windows


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman", "bartlett"])
def test_windows(name):
    for M in (-1, 0, 1, 2, 5, 8):
        check(getattr(znp, name)(M), getattr(np, name)(M), rtol=1e-15, atol=1e-15)


def test_kaiser():
    for M in (0, 1, 2, 7, 10):
        for beta in (0.0, 3.5, 14.0):
            check(znp.kaiser(M, beta), np.kaiser(M, beta), rtol=1e-13, atol=1e-15)
    check_grads(lambda b: znp.kaiser(6, b), (np.array(3.0),), order=2, modes=("fwd", "rev"))


# --------------------------------------------------------------------------- nan statistics

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@st.composite
def nan_array_axis(draw):
    x = draw(arrays([np.float32, np.float64, np.int64], min_dims=0, max_dims=3, min_side=0,
                    special=False))
    if x.dtype.kind == "f" and x.size:
        mask = draw(hnp.arrays(np.bool_, x.shape))
        x = np.where(mask, np.nan, x).astype(x.dtype)
    n = x.ndim
    axis = draw(st.one_of(st.none(), st.integers(-n, n - 1) if n else st.none(),
                          st.lists(st.integers(0, max(n - 1, 0)), unique=True, min_size=1,
                                   max_size=max(n, 1)).map(tuple) if n else st.none()))
    return x, axis


@SETTINGS
@given(nan_array_axis(), st.booleans())
def test_nanmedian(xa, keepdims):
    x, axis = xa
    want = np_call(np.nanmedian, x, axis=axis, keepdims=keepdims)
    check(znp.nanmedian(x, axis=axis, keepdims=keepdims), want, rtol=1e-6)


@SETTINGS
@given(nan_array_axis(), st.sampled_from(METHODS), st.booleans(),
       st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.1, 0.9], np.array([[0.25], [0.7]]),
                        np.float32(0.6), 1]))
def test_nanquantile_nanpercentile(xa, method, keepdims, q):
    x, axis = xa
    # NumPy gives an all-NaN slice a's dtype, even where other slices (or a Python-number
    # q) give a wider one: a value-dependent dtype zerax does not copy.
    exact = x.size == 0 or not np.any(np.all(np.isnan(x), axis=axis))
    want = np_call(np.nanquantile, x, q, axis=axis, method=method, keepdims=keepdims)
    got = znp.nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)
    check(got, want, rtol=1e-6, exact_dtype=exact)
    qp = (np.asarray(q) * 100).astype(np.asarray(q).dtype) if not isinstance(q, (int, float)) \
        else q * 100
    want = np_call(np.nanpercentile, x, qp, axis=axis, method=method, keepdims=keepdims)
    check(znp.nanpercentile(x, qp, axis=axis, method=method, keepdims=keepdims), want,
          rtol=1e-6, exact_dtype=exact)


def test_nan_statistics_transforms():
    x = np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 5.0, np.nan, 2.0], [np.nan] * 4])
    check(znp.nanmedian(x, axis=1), np_call(np.nanmedian, x, axis=1))
    check_grads(lambda a: znp.nanquantile(a[:2], 0.3, axis=1), (x,), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda a: znp.nanmedian(a[:2], axis=1), (x,), order=1, modes=("fwd", "rev"))
    check(zx.vmap(lambda r: znp.nanpercentile(r, [10.0, 60.0]))(x),
          np.stack([np_call(np.nanpercentile, r, [10.0, 60.0]) for r in x]))
    assert "sort" in str(zx.make_jaxpr(lambda a: znp.nanmedian(a, axis=0))(x))
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda q: znp.nanquantile(x, q))(0.5)
    with pytest.raises(errors.ZeraxValueError):
        znp.nanquantile(x, 1.5)
    with pytest.raises(errors.ZeraxTypeError):
        znp.nanmedian(np.array([1j]))


# --------------------------------------------------------------------------- functional


@SETTINGS
@given(st.data())
def test_vectorize_elementwise(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a = data.draw(hnp.arrays(np.float64, shapes.input_shapes[0], elements=elements(np.float64)))
    b = data.draw(hnp.arrays(np.float64, shapes.input_shapes[1], elements=elements(np.float64)))

    def f(x, y):
        return znp.sin(x) * y + 1.0

    want = np.sin(a) * b + 1.0
    check(znp.vectorize(f)(a, b), want, rtol=1e-14)
    check(znp.vectorize(f, otypes="f")(a, b), want.astype(np.float32), rtol=1e-6)


def test_vectorize_signature_excluded_kwargs():
    rng = np.random.default_rng(2)
    dot = znp.vectorize(lambda u, v: znp.sum(u * v), signature="(n),(n)->()")
    A, v = rng.normal(size=(2, 4, 3)), rng.normal(size=3)
    check(dot(A, v), A @ v, rtol=1e-14)
    matvec = znp.vectorize(lambda M, u: M @ u, signature="(m, n),(n)->(m)")
    M, U = rng.normal(size=(5, 1, 2, 3)), rng.normal(size=(4, 3))
    check(matvec(M, U), np.einsum("abmn,bn->abm", M, U), rtol=1e-13)
    check(matvec(M, v), M @ v, rtol=1e-13)
    split = znp.vectorize(lambda x: (x * 2, x - 1), signature="()->(),()")
    check(split(np.arange(3.0)), (np.arange(3.0) * 2, np.arange(3.0) - 1))
    power = znp.vectorize(lambda x, p: x ** p, excluded={1})
    check(power(np.arange(4.0), 3), np.arange(4.0) ** 3)
    scaled = znp.vectorize(lambda x, *, s: x * s, excluded={"s"})
    check(scaled(np.arange(3.0), s=2.0), np.arange(3.0) * 2)
    kwvec = znp.vectorize(lambda x, y: x - y)
    check(kwvec(np.arange(3.0), y=np.ones((2, 1))), np.arange(3.0) - np.ones((2, 1)))

    @znp.vectorize
    def clipped(x):
        return znp.where(x > 1.0, 1.0, x)

    check(clipped(np.array([0.5, 2.0])), np.array([0.5, 1.0]))
    check(znp.vectorize(lambda x: x + 1)(np.zeros((0, 2))), np.zeros((0, 2)) + 1)
    with pytest.raises(errors.ShapeError):
        dot(np.ones((2, 3)), np.ones(4))
    with pytest.raises(errors.ZeraxValueError):
        znp.vectorize(lambda x: x, signature="(n)->(n")
    with pytest.raises(errors.ShapeError):
        znp.vectorize(lambda x: x, signature="(n)->()")(np.ones((2, 3)))
    # transforms: grad and jit of a vectorized function
    f = znp.vectorize(lambda a, b: znp.sin(a) * b)
    check_grads(f, (rng.normal(size=(2, 3)), rng.normal(size=3)), order=2, modes=("fwd", "rev"))
    check_grads(dot, (A, v), order=1, modes=("fwd", "rev"))
    check(zx.jit(f)(A[0], v), np.sin(A[0]) * v, rtol=1e-14)


@SETTINGS
@given(arrays([np.float64, np.int64], min_dims=1, max_dims=3, min_side=1), st.data())
def test_apply_along_axis(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    for fn, np_fn in ((lambda v: znp.sum(v * v), lambda v: np.sum(v * v)),
                      (lambda v: v[::-1] - v[0], lambda v: v[::-1] - v[0]),
                      (lambda v: znp.outer(v, v[:2]), lambda v: np.outer(v, v[:2]))):
        check(znp.apply_along_axis(fn, axis, x), np.apply_along_axis(np_fn, axis, x))


def test_apply_along_axis_args_grads():
    x = np.arange(12.0).reshape(3, 4)
    check(znp.apply_along_axis(lambda v, p, q=0.0: v ** p + q, 0, x, 2, q=1.0), x ** 2 + 1.0)
    rng = np.random.default_rng(3)
    check_grads(lambda a: znp.apply_along_axis(lambda v: znp.sum(v ** 2) * v, 1, a),
                (rng.normal(size=(2, 3)),), order=2, modes=("fwd", "rev"))
    with pytest.raises(errors.ShapeError):
        znp.apply_along_axis(znp.sum, 2, x)


def test_fromfunction():
    for shape, dtype in (((2, 3), float), ((4,), int), ((2, 1, 3), np.float32)):
        fn = (lambda *ix: sum(i * (k + 1) for k, i in enumerate(ix)))
        check(znp.fromfunction(fn, shape, dtype=dtype), np.fromfunction(fn, shape, dtype=dtype))
    check(znp.fromfunction(lambda i, j, s: (i - j) * s, (3, 3), s=2.0),
          np.fromfunction(lambda i, j, s: (i - j) * s, (3, 3), s=2.0))


@SETTINGS
@given(arrays([np.float64, np.int64], max_dims=2, min_side=1, lo=-3, hi=3))
def test_piecewise(x):
    conds = [x < 0, x > 1]
    funcs = [lambda v: -v * 2, lambda v: v * v, 7]
    check(znp.piecewise(x, conds, funcs), np.piecewise(x, conds, funcs))
    check(znp.piecewise(x, conds, funcs[:2]), np.piecewise(x, conds, funcs[:2]))
    r = x.ravel()  # NumPy reads a single condition array of rank >= 2 as rows
    check(znp.piecewise(r, r > 0, [1.5, lambda v: v + 1]),
          np.piecewise(r, r > 0, [1.5, lambda v: v + 1]))
    check(znp.piecewise(x, x > 0, [1.5, lambda v: v + 1]),
          np.piecewise(x, [x > 0], [1.5, lambda v: v + 1]))


def test_piecewise_grads_and_errors():
    x = np.array([-2.0, -0.5, 0.5, 3.0])

    def f(v):
        return znp.piecewise(v, [v < 0, v >= 0], [lambda t: t ** 2, lambda t: znp.sin(t)])

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check(zx.vmap(f)(x), np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, np.sin]))
    with pytest.raises(errors.ZeraxValueError):
        znp.piecewise(x, [x < 0], [1, 2, 3])


SPECIAL_FLOATS = [0.0, -0.0, 1.5, -1.5, 2.879, -0.004555, 1e-300, -1e300, np.inf, -np.inf,
                  np.nan]


@pytest.mark.parametrize("name", ["fmod", "hypot", "heaviside"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_fmod_hypot_heaviside_edges_match_numpy(name, dtype):
    """Every pair of signed zeros, tiny, huge, infinite and nan operands: fmod keeps its
    digits when |x| < |y| (no cancellation), hypot is inf beside a nan, heaviside keeps
    nan; as NumPy, bit for bit (and the sign of zero)."""
    v = np.array(SPECIAL_FLOATS, dtype)
    a, b = np.meshgrid(v, v)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
        for f in (getattr(znp, name), zx.jit(getattr(znp, name))):
            got = np.asarray(f(a, b))
            assert got.dtype == want.dtype
            finite = np.isfinite(want)
            np.testing.assert_array_equal(got[~finite], want[~finite])
            if name == "hypot":      # scaled formula: within 2 ulp of libm's
                np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=2)
            else:
                np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]),
                                          np.signbit(want[~np.isnan(want)]))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, 6, elements=st.floats(-1e6, 1e6)),
       hnp.arrays(np.float64, 6, elements=st.floats(-1e3, 1e3).filter(lambda y: y != 0)))
def test_fmod_matches_numpy(x, y):
    np.testing.assert_array_equal(znp.fmod(x, y), np.fmod(x, y))


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_round_integers_to_tens_half_to_even(wrap):
    # NumPy: in float64, rint(x / 10^k) * 10^k (half to even), cast back
    for dt in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16):
        x = np.array([5, 15, 25, 45, 0, 95, 105, 115], dtype=dt)
        if np.dtype(dt).kind == "i":
            x = np.concatenate([x, -x])
        for d in (-1, -2, 0, 2):
            got = wrap(lambda v, d=d: znp.round(v, d))(x)
            want = np.round(x, d)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    with pytest.raises(errors.ZeraxTypeError, match="NumPy refuses"):
        znp.round(np.array([True]), -1)


def test_array_methods_forward_to_numpy_functions():
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    a = zx.Array(x)
    np.testing.assert_array_equal(a.ptp(), np.ptp(x))
    np.testing.assert_array_equal(zx.Array(np.sort(x)).searchsorted([2.5, 9.0], side="right"),
                                  np.sort(x).searchsorted([2.5, 9.0], side="right"))
    np.testing.assert_array_equal(a.compress([True, False, True]), x.compress([True, False, True]))
    np.testing.assert_array_equal(a.partition(2)[2], np.partition(x, 2)[2])
    np.testing.assert_array_equal(x[np.asarray(a.argpartition(2))][2], np.partition(x, 2)[2])
    idx = np.array([0, 1, 0])
    np.testing.assert_array_equal(zx.Array(idx).choose([[1, 2, 3], [4, 5, 6]]),
                                  idx.choose([[1, 2, 3], [4, 5, 6]]))


# --------------------------------------------------------------------------- polyfit, roots


@pytest.mark.parametrize("kw", [{}, {"w": "w"}, {"cov": True}, {"cov": "unscaled"},
                                {"full": True}, {"rcond": 1e-3}])
def test_polyfit_matches_numpy(kw):
    rs = np.random.RandomState(0)
    x, y, w = rs.randn(12), rs.randn(12), rs.rand(12) + 0.5
    kw = {k: (w if v == "w" else v) for k, v in kw.items()}
    for yy in (y, rs.randn(12, 3)):
        want = np.polyfit(x, yy, 3, **kw)
        got = znp.polyfit(x, yy, 3, **kw)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        for g, v in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), v, rtol=1e-9, atol=1e-12)


def test_polyfit_recovers_exact_polynomial_and_differentiates():
    x = np.linspace(-2.0, 3.0, 9)
    np.testing.assert_allclose(znp.polyfit(x, 2 * x ** 3 - x + 4, 3), [2, 0, -1, 4],
                               atol=1e-10)
    # the fit is linear in y: its gradient is the row of the pseudo-inverse
    a = np.vander(x, 3)
    pinv = np.linalg.pinv(a)
    g = zx.grad(lambda y: znp.polyfit(x, y, 2)[0])(np.sin(x))
    np.testing.assert_allclose(g, pinv[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(zx.jit(lambda y: znp.polyfit(x, y, 2))(np.sin(x)),
                               np.polyfit(x, np.sin(x), 2), rtol=1e-10)
    with pytest.raises(zx.errors.ZeraxValueError):
        znp.polyfit(x, x, -1)
    with pytest.raises(zx.errors.ShapeError):
        znp.polyfit(x, x[:3], 1)


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0.0, 0.0, 1.0, -6.0, 11.0, -6.0, 0.0, 0.0],
                               [2.0, 0.0, 1.0], [0.0, 5.0], [3.0], [0.0, 0.0],
                               [1.0, 2.0, 3.0, 4.0, 5.0], [1, 0, -1]])
def test_roots_match_numpy(p):
    got = znp.roots(znp.asarray(p))
    want = np.roots(p)
    assert got.shape == want.shape and got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(znp.sort_complex(got), np.sort_complex(want), rtol=1e-10,
                               atol=1e-12)


def test_roots_traced_without_stripping():
    r = zx.jit(lambda p: znp.roots(p, strip_zeros=False))(znp.array([1.0, -3.0, 2.0]))
    np.testing.assert_allclose(np.sort_complex(np.asarray(r)), [1.0, 2.0], atol=1e-12)
    with pytest.raises(zx.errors.ConcretizationError):
        zx.jit(znp.roots)(znp.array([1.0, -3.0, 2.0]))


def test_sort_complex_and_print_helpers():
    a = np.array([1 + 2j, 1 - 1j, 0.5 + 3j, -2.0 + 0j])
    np.testing.assert_array_equal(znp.sort_complex(a), np.sort_complex(a))
    assert znp.sort_complex(np.array([3, 1, 2])).dtype == np.complex128
    x = znp.array([1.23456, 2.0])
    assert znp.array_str(x, precision=2) == np.array_str(np.asarray(x), precision=2)
    assert znp.array_repr(x, precision=2) == "Array([1.23, 2.  ], dtype=float64)"
    with znp.printoptions(precision=1):
        assert repr(x) == "Array([1.2, 2. ], dtype=float64)"
    assert znp.get_printoptions() == np.get_printoptions()


def test_save_load_npy_and_npz(tmp_path):
    x = znp.arange(6.0, dtype=znp.float32).reshape(2, 3)
    znp.save(tmp_path / "x.npy", x)
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), np.asarray(x))
    y = znp.load(tmp_path / "x.npy")
    assert type(y) is zx.Array and y.dtype == np.float32
    np.testing.assert_array_equal(y, x)
    znp.savez(tmp_path / "z.npz", x, b=znp.ones(2))
    with znp.load(tmp_path / "z.npz") as z:
        np.testing.assert_array_equal(z["arr_0"], np.asarray(x))
        np.testing.assert_array_equal(z["b"], [1.0, 1.0])


def test_numpy_random_is_numpys_generator_for_autograd_programs():
    # autograd's examples: `import autograd.numpy.random as npr`, `np.random.randn`
    import zerax.numpy.random as npr
    rs = znp.random.RandomState(0)
    want = np.random.RandomState(0).randn(3, 2)
    np.testing.assert_array_equal(rs.randn(3, 2), want)
    assert npr is np.random
    w = npr.RandomState(1).randn(3)
    np.testing.assert_allclose(zx.grad(lambda v: znp.sum(znp.tanh(v)))(w), 1 - np.tanh(w) ** 2)


def test_signbit_fmod_copysign_at_zero_without_warnings():
    v = np.array([-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf, 1e-300, -1e-300, -5e-324])
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # the sign of zero is read without 1/0
        for dt in (np.float64, np.float32, np.float16):
            a = v.astype(dt)
            np.testing.assert_array_equal(znp.signbit(a), np.signbit(a))
            np.testing.assert_array_equal(zx.jit(znp.signbit)(a), np.signbit(a))
            np.testing.assert_array_equal(znp.copysign(1.0, a), np.copysign(1.0, a))
        x = np.arange(-3.0, 4.0)
        got = np.asarray(znp.fmod(x, 3.0))
        np.testing.assert_array_equal(got, np.fmod(x, 3.0))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.fmod(x, 3.0)))
        assert float(zx.grad(lambda t: znp.fmod(t, 3.0))(-4.0)) == 1.0
