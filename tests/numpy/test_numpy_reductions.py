"""Tests for zerax.numpy's reductions and statistics (src/zerax/_src/lax_numpy/reductions.py,
statistics.py).

Values, dtypes and shapes against NumPy 2 (hypothesis picks shapes, axes, dtypes and
values; where NumPy raises, zerax must raise a zerax error), derivatives against finite
differences (``zerax.test_util.check_grads`` when it exists), tracing with make_jaxpr.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
import zerax.test_util
from zerax import errors

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
FLOATS = [np.float32, np.float64]


def _has_sort():
    try:
        from zerax._src.ops.sort import sort  # noqa: F401
    except ImportError:
        return hasattr(znp, "sort")
    return True


HAS_SORT = _has_sort()
needs_sort = pytest.mark.skipif(not HAS_SORT, reason="zerax has no sort yet")

# --------------------------------------------------------------------------- strategies


def elements(dtype, nan=False, positive=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(1, 4) if positive else st.integers(-5, 5)
    lo = 0.5 if positive else -3.0
    fl = st.floats(lo, 3.0, width=dtype.itemsize * 8)
    return st.one_of(fl, st.just(np.nan)) if nan else fl


@st.composite
def arrays(draw, dtypes=DTYPES, min_dims=0, max_dims=3, min_side=0, max_side=4, nan=False):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                  max_side=max_side))
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype, nan)))


@st.composite
def axes(draw, ndim, allow_none=True):
    """None, an int (maybe negative) or a tuple of distinct axes."""
    options = [st.just(None)] if allow_none else []
    # a 0-d array takes axis 0 / -1 in NumPy's ufunc reductions (and nowhere else)
    options.append(st.integers(-ndim, ndim - 1) if ndim else st.sampled_from([0, -1]))
    options.append(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim)
                   .map(lambda ax: tuple(a - ndim if i % 2 else a for i, a in enumerate(ax))))
    return draw(st.one_of(options))


@st.composite
def array_axis(draw, dtypes=DTYPES, nan=False, min_side=0, min_dims=0):
    x = draw(arrays(dtypes, nan=nan, min_side=min_side, min_dims=min_dims))
    return x, draw(axes(x.ndim))


@st.composite
def masks(draw, shape):
    return draw(st.one_of(st.just(True), hnp.arrays(np.bool_, shape)))


# --------------------------------------------------------------------------- comparisons

TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-10,
       np.dtype(np.complex128): 1e-10}


def assert_matches(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_matches(g, w)
        return
    assert isinstance(got, zx.Array), type(got)
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if w.dtype.kind in "fc":
        tol = TOL.get(w.dtype, 1e-10)
        np.testing.assert_allclose(g, w, rtol=tol, atol=10 * tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def numpy_call(name, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, name)(*args, **kw)


def check(name, *args, **kw):
    """zerax.numpy.<name> gives NumPy's value, dtype and shape, or a zerax error where
    NumPy raises."""
    try:
        want = numpy_call(name, *args, **kw)
    except (ValueError, TypeError, IndexError, ZeroDivisionError):
        with pytest.raises(errors.ZeraxError):
            getattr(znp, name)(*args, **kw)
        return None
    got = getattr(znp, name)(*args, **kw)
    assert_matches(got, want)
    return got


def kwargs(**kw):
    """Drop the arguments left at "not given" (None or where=True)."""
    return {k: v for k, v in kw.items() if v is not None and not (k == "where" and v is True)}


# --------------------------------------------------------------------------- values vs NumPy


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["sum", "prod", "nansum", "nanprod"]),
       keepdims=st.booleans(), dtype=st.sampled_from([None, np.int64, np.float32, np.float64]),
       initial=st.sampled_from([None, 2, -1.5]))
def test_sum_prod(data, name, keepdims, dtype, initial):
    x, axis = data.draw(array_axis(nan=name.startswith("nan")))
    where = data.draw(masks(x.shape))
    check(name, x, **kwargs(axis=axis, keepdims=keepdims, dtype=dtype, initial=initial,
                            where=where))


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["mean", "var", "std", "nanmean", "nanvar",
                                             "nanstd"]),
       keepdims=st.booleans(), ddof=st.sampled_from([0, 1, 2]),
       dtype=st.sampled_from([None, np.float64]))
def test_moments(data, name, keepdims, ddof, dtype):
    x, axis = data.draw(array_axis(nan=name.startswith("nan")))
    where = data.draw(masks(x.shape))
    kw = kwargs(axis=axis, keepdims=keepdims, dtype=dtype, where=where)
    if "var" in name or "std" in name:
        kw["ddof"] = ddof
    check(name, x, **kw)


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["max", "min", "amax", "amin", "nanmax", "nanmin",
                                             "ptp"]),
       keepdims=st.booleans(), initial=st.sampled_from([None, 1, -2.5]))
def test_extremes(data, name, keepdims, initial):
    x, axis = data.draw(array_axis(nan=name.startswith("nan")))
    kw = kwargs(axis=axis, keepdims=keepdims)
    if name != "ptp":
        kw.update(kwargs(initial=initial, where=data.draw(masks(x.shape))))
    check(name, x, **kw)


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["argmax", "argmin", "nanargmax", "nanargmin"]),
       keepdims=st.booleans())
def test_argextremes(data, name, keepdims):
    x = data.draw(arrays(nan=name.startswith("nan") or data.draw(st.booleans())))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim
                               else st.none()))
    check(name, x, **kwargs(axis=axis, keepdims=keepdims))


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["any", "all", "count_nonzero"]),
       keepdims=st.booleans())
def test_logical_and_count(data, name, keepdims):
    x, axis = data.draw(array_axis(nan=data.draw(st.booleans())))
    kw = kwargs(axis=axis, keepdims=keepdims)
    if name != "count_nonzero":
        kw.update(kwargs(where=data.draw(masks(x.shape))))
    check(name, x, **kw)


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["cumsum", "cumprod", "nancumsum", "nancumprod"]),
       dtype=st.sampled_from([None, np.int64, np.float64]))
def test_cumulative(data, name, dtype):
    x = data.draw(arrays(nan=name.startswith("nan")))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim
                               else st.sampled_from([0, -1])))
    check(name, x, **kwargs(axis=axis, dtype=dtype))


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["cumulative_sum", "cumulative_prod"]),
       include_initial=st.booleans(), dtype=st.sampled_from([None, np.float32]))
def test_cumulative_array_api(data, name, include_initial, dtype):
    x = data.draw(arrays())
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim
                               else st.none()))
    check(name, x, **kwargs(axis=axis, dtype=dtype), include_initial=include_initial)


@SETTINGS
@given(data=st.data(), returned=st.booleans(), keepdims=st.booleans(),
       wkind=st.sampled_from(["none", "full", "axis"]))
def test_average(data, returned, keepdims, wkind):
    x, axis = data.draw(array_axis(min_side=1))
    kw = {"returned": returned, "keepdims": keepdims}
    if axis is not None:
        kw["axis"] = axis
    if wkind == "full":
        wdt = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
        kw["weights"] = data.draw(hnp.arrays(wdt, x.shape, elements=elements(wdt, positive=True)))
    elif wkind == "axis" and axis is not None and x.ndim:
        ax = (axis,) if isinstance(axis, int) else axis
        shape = tuple(x.shape[a] for a in ax)
        kw["weights"] = data.draw(hnp.arrays(np.float64, shape,
                                             elements=elements(np.float64, positive=True)))
    check("average", x, **kw)


@SETTINGS
@given(data=st.data(), n=st.integers(0, 3),
       side=st.sampled_from(["none", "scalar", "array"]))
def test_diff(data, n, side):
    x = data.draw(arrays(min_dims=1))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    kw = {}
    if side == "scalar":
        kw = {"prepend": data.draw(st.sampled_from([0, 1.5, True])), "append": 2}
    elif side == "array":
        shape = list(x.shape)
        shape[axis] = 2
        kw = {"prepend": data.draw(hnp.arrays(np.float32, tuple(shape),
                                               elements=elements(np.float32)))}
    check("diff", x, n=n, axis=axis, **kw)


@SETTINGS
@given(x=arrays(), to_begin=st.sampled_from([None, 7, [1, 2], 1.5]),
       to_end=st.sampled_from([None, -3, [4]]))
def test_ediff1d(x, to_begin, to_end):
    check("ediff1d", x, to_end=to_end, to_begin=to_begin)


@SETTINGS
@given(data=st.data(), mode=st.sampled_from(["dx", "x1d", "xnd"]))
def test_trapezoid(data, mode):
    y = data.draw(arrays(min_dims=1))
    axis = data.draw(st.integers(-y.ndim, y.ndim - 1))
    if mode == "dx":
        kw = {"dx": data.draw(st.sampled_from([1.0, 2, 0.25]))}
    elif mode == "x1d":
        kw = {"x": data.draw(hnp.arrays(np.float64, (y.shape[axis],),
                                         elements=elements(np.float64)))}
    else:
        kw = {"x": data.draw(hnp.arrays(np.int32, y.shape, elements=elements(np.int32)))}
    check("trapezoid", y, axis=axis, **kw)


@SETTINGS
@given(data=st.data(), rowvar=st.booleans(), bias=st.booleans(),
       ddof=st.sampled_from([None, 0, 1]), weights=st.sampled_from(["none", "f", "a", "fa"]))
def test_cov_corrcoef(data, rowvar, bias, ddof, weights):
    # at least two observations, so that the normalisation is positive (no 0 * inf, whose
    # outcome hangs on the rounding of a zero covariance)
    x = data.draw(arrays([np.int32, np.float64], min_dims=1, max_dims=2, min_side=2))
    y = data.draw(st.one_of(st.none(), st.just(x[::-1] * 2 + 1)))
    check("corrcoef", x, y, rowvar=rowvar)
    nobs = x.shape[-1] if (rowvar or x.ndim == 1) else x.shape[0]
    kw = {"rowvar": rowvar, "bias": bias, "ddof": ddof}
    if "f" in weights:
        kw["fweights"] = data.draw(hnp.arrays(np.int64, (nobs,), elements=st.integers(1, 3)))
    if "a" in weights:
        kw["aweights"] = data.draw(hnp.arrays(np.float64, (nobs,),
                                              elements=elements(np.float64, positive=True)))
    check("cov", x, y, **kw)


@needs_sort
@SETTINGS
@given(data=st.data(), keepdims=st.booleans(),
       method=st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]),
       q=st.sampled_from([0.5, 0.0, 1, 0.37, [0.1, 0.9], np.array([[0.25], [1.0]]),
                          np.float32(0.7)]))
def test_median_quantile_percentile(data, keepdims, method, q):
    x, axis = data.draw(array_axis([np.int32, np.int64, np.float32, np.float64],
                                   nan=data.draw(st.booleans()), min_side=1))
    check("median", x, **kwargs(axis=axis, keepdims=keepdims))
    check("quantile", x, q, **kwargs(axis=axis, keepdims=keepdims, method=method))
    qp = q * 100 if isinstance(q, (int, float)) else np.asarray(q) * 100
    check("percentile", x, qp, **kwargs(axis=axis, keepdims=keepdims, method=method))


# --------------------------------------------------------------------------- specific values


def test_dtype_rules():
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert znp.sum(i32).dtype == np.int64
    assert znp.sum(np.ones(3, np.uint8)).dtype == np.uint64
    assert znp.sum(np.ones(3, np.bool_)).dtype == np.int64
    assert znp.prod(np.ones(3, np.int8)).dtype == np.int64
    assert znp.mean(i32).dtype == np.float64
    assert znp.var(i32).dtype == znp.std(i32).dtype == np.float64
    assert znp.max(i32).dtype == np.int32 and znp.min(np.ones(2, np.float32)).dtype == np.float32
    assert znp.argmax(i32).dtype == np.int64
    assert znp.any(i32).dtype == znp.all(i32).dtype == np.bool_
    assert znp.sum(3).dtype == np.int64 and znp.mean(2.0).dtype == np.float64


def test_empty_reductions():
    e = np.zeros((0, 3))
    assert_matches(znp.sum(e), np.sum(e))
    assert_matches(znp.prod(e, axis=0), np.prod(e, axis=0))
    assert np.isnan(float(znp.mean(e)))
    assert_matches(znp.max(e, axis=1), np.max(e, axis=1))  # nothing is reduced over length 0
    with pytest.raises(errors.ShapeError, match="zero-size array"):
        znp.max(e)
    with pytest.raises(errors.ShapeError, match="zero-size array"):
        znp.min(e, axis=0)
    assert_matches(znp.max(e, axis=0, initial=-1.0), np.max(e, axis=0, initial=-1.0))
    with pytest.raises(errors.ShapeError, match="empty sequence"):
        znp.argmax(e, axis=0)
    with pytest.raises(errors.ShapeError, match="initial"):
        znp.max(np.ones(3), where=np.array([True, False, True]))


def test_nanargmax_all_nan():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with pytest.raises(errors.ShapeError, match="All-NaN"):
        znp.nanargmax(x, axis=1)
    closed = zx.make_jaxpr(lambda v: znp.nanargmax(v, axis=1))(x)
    np.testing.assert_array_equal(np.asarray(closed(x)[0]), [-1, 0])  # JAX's convention
    assert_matches(znp.nanargmin(x[1:], axis=1), np.nanargmin(x[1:], axis=1))


def test_ties_nan_and_inf():
    x = np.array([np.nan, -np.inf, 2.0, 2.0])
    assert_matches(znp.nanargmin(x), np.nanargmin(x))
    assert_matches(znp.nanargmax(x), np.nanargmax(x))
    assert_matches(znp.argmax(x), np.argmax(x))
    assert_matches(znp.nanmax(np.array([np.nan]), initial=1.0),
                   np.nanmax(np.array([np.nan]), initial=1.0))


def test_var_mean_and_correction():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    m = np.mean(x, axis=1, keepdims=True)
    assert_matches(znp.var(x, axis=1, mean=m), np.var(x, axis=1, mean=m))
    assert_matches(znp.std(x, axis=1, correction=1), np.std(x, axis=1, correction=1))
    assert_matches(znp.nanstd(x, axis=0, mean=np.mean(x, axis=0, keepdims=True)),
                   np.nanstd(x, axis=0, mean=np.mean(x, axis=0, keepdims=True)))
    with pytest.raises(errors.ShapeError, match="ddof and correction"):
        znp.var(x, ddof=1, correction=1)


def test_average_multi_axis_weights():
    x = np.arange(24.0).reshape(2, 4, 3)
    w = np.arange(1.0, 7.0).reshape(3, 2)
    assert_matches(znp.average(x, axis=(2, 0), weights=w, returned=True),
                   np.average(x, axis=(2, 0), weights=w, returned=True))
    with pytest.raises(errors.ZeraxTypeError, match="axis must be specified"):
        znp.average(x, weights=w)
    with pytest.raises(errors.ShapeError, match="consistent"):
        znp.average(x, axis=1, weights=w)


def test_methods_and_inputs():
    x = np.arange(12.0).reshape(3, 4)
    a = zx.Array(x)
    assert_matches(a.sum(axis=0), x.sum(axis=0))
    assert_matches(a.mean(1, keepdims=True), x.mean(1, keepdims=True))
    assert_matches(a.var(ddof=1), x.var(ddof=1))
    assert_matches(a.max(), x.max())
    assert_matches(a.argmin(axis=1), x.argmin(axis=1))
    assert_matches(a.cumsum(), x.cumsum())
    assert_matches(a.prod(axis=1), x.prod(axis=1))
    assert_matches(znp.sum([[1, 2], [3, 4]], axis=1), np.sum([[1, 2], [3, 4]], axis=1))
    assert_matches(znp.mean(True), np.mean(True))


def test_bad_arguments():
    x = np.ones((2, 3))
    with pytest.raises(errors.NotSupportedError, match="out="):
        znp.sum(x, out=np.empty(()))
    with pytest.raises(errors.ShapeError, match="out of bounds"):
        znp.sum(x, axis=2)
    with pytest.raises(errors.ShapeError, match="repeated axis"):
        znp.mean(x, axis=(0, 0))
    with pytest.raises(errors.ZeraxTypeError):
        znp.sum(x, axis=1.0)
    with pytest.raises(errors.ZeraxTypeError, match="where"):
        znp.sum(x, where=np.ones((2, 3)))
    with pytest.raises(errors.ShapeError, match="where"):
        znp.sum(x, where=np.ones(2, bool))
    with pytest.raises(errors.ZeraxTypeError):
        znp.sum("abc")
    with pytest.raises(errors.ShapeError, match="Quantiles"):
        znp.quantile(x, 1.5)
    with pytest.raises(errors.NotSupportedError, match="method"):
        znp.quantile(x, 0.5, method="hazen")
    with pytest.raises(errors.ZeraxTypeError, match="boolean"):
        znp.ptp(np.ones(3, bool))


@pytest.mark.parametrize("axis", [1.0, np.float64(1.0), "a", "ab", (0, 1.0), [0, "a"], np.array(1),
                                  object()])
def test_non_integer_axis_is_a_zerax_type_error(axis):
    from zerax._src.numpy._util import normalize_axes, normalize_axis
    with pytest.raises(errors.ZeraxTypeError, match="axis"):
        normalize_axes(axis, 2, "f")
    with pytest.raises(errors.ZeraxTypeError, match="axis"):
        normalize_axis(axis, 2, "f")
    x = np.ones((2, 3))
    for call in (lambda: znp.sum(x, axis=axis), lambda: znp.flip(x, axis),
                 lambda: znp.diff(x, axis=axis), lambda: znp.median(x, axis=axis)):
        with pytest.raises(errors.ZeraxTypeError, match="axis"):
            call()


def test_integer_like_axes_still_work():
    from zerax._src.numpy._util import normalize_axes
    assert normalize_axes(np.array([1, 0]), 2) == (0, 1)
    assert normalize_axes(range(2), 2) == (0, 1)
    assert normalize_axes([np.int32(-1)], 2) == (1,)
    assert normalize_axes(np.int64(-2), 2) == (0,)

def test_quantile_needs_static_q():
    x = np.arange(5.0)
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda v, q: znp.quantile(v, q))(x, 0.5)


@pytest.mark.skipif(HAS_SORT, reason="only meaningful while zerax.numpy.sort is missing")
def test_median_without_sort_is_a_clear_error():
    with pytest.raises(errors.NotSupportedError, match="sort"):
        znp.median(np.arange(4.0))


def test_median_of_trivial_slices_needs_no_sort():
    x = np.arange(6.0).reshape(2, 3)
    assert_matches(znp.median(x, axis=()), np.median(x, axis=()))
    assert_matches(znp.median(np.float32(3.0)), np.median(np.float32(3.0)))
    assert_matches(znp.quantile(x[:, :1], 0.3, axis=1), np.quantile(x[:, :1], 0.3, axis=1))


# --------------------------------------------------------------------------- derivatives


def _fd_check_grads(f, args, order=2, eps=1e-5):
    """Fallback for zerax.test_util.check_grads: forward mode (jvp) and reverse mode
    (grad of a random projection) against central differences, recursively."""
    rng = np.random.default_rng(0)
    args = [np.asarray(a, np.float64) for a in args]
    ts = [rng.normal(size=a.shape) for a in args]

    def fd(fun):
        plus = fun(*[a + eps * t for a, t in zip(args, ts)])
        minus = fun(*[a - eps * t for a, t in zip(args, ts)])
        return (np.asarray(plus) - np.asarray(minus)) / (2 * eps)

    out, tan = zx.jvp(f, tuple(args), tuple(ts))
    np.testing.assert_allclose(np.asarray(tan), fd(f), rtol=1e-5, atol=1e-6)
    ct = rng.normal(size=np.shape(out))

    def proj(*xs):
        return znp.sum(znp.multiply(f(*xs), ct))

    grads = zx.grad(proj, argnums=tuple(range(len(args))))(*args)
    directional = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, ts))
    np.testing.assert_allclose(directional, float(np.sum(ct * fd(f))), rtol=1e-5, atol=1e-6)
    if order > 1:
        def g_dir(*xs):
            gs = zx.grad(proj, argnums=tuple(range(len(xs))))(*xs)
            return sum(znp.sum(znp.multiply(g, t)) for g, t in zip(gs, ts))
        _fd_check_grads(g_dir, args, order - 1, eps)


def check_grads(f, args):
    cg = getattr(zerax.test_util, "check_grads", None)
    if cg is not None:
        cg(f, args, order=2, modes=("fwd", "rev"))
    else:
        _fd_check_grads(f, args, order=2)


RNG = np.random.default_rng(42)
X = RNG.normal(size=(3, 4))
X_ZEROS = np.array([[1.5, 0.0, -2.0, 0.7], [0.0, 0.0, 1.1, 3.0], [0.4, -0.9, 2.0, 1.3]])
X_NAN = np.where(RNG.random((3, 4)) < 0.3, np.nan, X)
W = RNG.uniform(0.5, 2.0, size=4)

GRAD_CASES = [
    ("sum", lambda x: znp.sum(x, axis=1), [X]),
    ("sum_where_initial", lambda x: znp.sum(x, axis=0, where=X > 0, initial=1.0), [X]),
    ("prod", lambda x: znp.prod(x), [X_ZEROS]),
    ("prod_axis", lambda x: znp.prod(x, axis=(0,), keepdims=True), [X_ZEROS]),
    ("mean", lambda x: znp.mean(x, axis=0), [X]),
    ("mean_where", lambda x: znp.mean(x, axis=1, where=X > -0.5), [X]),
    ("var", lambda x: znp.var(x, axis=1, ddof=1), [X]),
    ("std", lambda x: znp.std(x, axis=(0, 1)), [X]),
    ("max", lambda x: znp.max(x, axis=1), [X]),
    ("min", lambda x: znp.min(x, axis=0, keepdims=True), [X]),
    ("cumsum", lambda x: znp.cumsum(x, axis=1), [X]),
    ("cumprod", lambda x: znp.cumprod(x, axis=1), [X_ZEROS]),
    ("cumulative_prod", lambda x: znp.cumulative_prod(x, axis=0, include_initial=True),
     [X_ZEROS]),
    ("average", lambda x, w: znp.average(x, axis=1, weights=w), [X, W]),
    ("nansum", lambda x: znp.nansum(x, axis=1), [X_NAN]),
    ("nanmean", lambda x: znp.nanmean(x, axis=0), [X_NAN]),
    ("nanvar", lambda x: znp.nanvar(x, axis=1), [X_NAN]),
    ("nanmax", lambda x: znp.nanmax(x, axis=1), [X_NAN]),
    ("ptp", lambda x: znp.ptp(x, axis=0), [X]),
    ("diff", lambda x: znp.diff(x, n=2, axis=1, prepend=0.0), [X]),
    ("trapezoid", lambda y, x: znp.trapezoid(y, x=x, axis=1), [X, np.cumsum(W)]),
    ("cov", lambda x: znp.cov(x), [X]),
    ("corrcoef", lambda x: znp.corrcoef(x), [X]),
]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads(name, f, args):
    # NaN entries (nan* cases) stay NaN under the finite-difference steps; the functions
    # ignore them, so their partial derivatives are zero.
    check_grads(f, args)


@needs_sort
@pytest.mark.parametrize("fn", [lambda x: znp.median(x, axis=1),
                                lambda x: znp.quantile(x, [0.3, 0.8], axis=0)])
def test_order_statistic_grads(fn):
    check_grads(fn, [X])


def test_known_gradients():
    # max with ties: the cotangent is shared equally between the tied maxima (JAX's rule)
    g = zx.grad(lambda x: znp.max(x))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.0, 0.5, 0.5])
    # prod with a zero: only the zero's partial (the product of the others) survives
    g = zx.grad(lambda x: znp.prod(x))(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.0, 6.0, 0.0])
    g = zx.grad(lambda x: znp.prod(x))(np.array([2.0, 0.0, 0.0]))
    np.testing.assert_allclose(np.asarray(g), [0.0, 0.0, 0.0])
    # d mean / dx = 1/n, d sum = 1
    g = zx.grad(lambda x: znp.mean(x))(np.arange(4.0))
    np.testing.assert_allclose(np.asarray(g), np.full(4, 0.25))
    # d cumsum summed: element i appears in n - i partial sums
    g = zx.grad(lambda x: znp.sum(znp.cumsum(x)))(np.arange(4.0))
    np.testing.assert_allclose(np.asarray(g), [4.0, 3.0, 2.0, 1.0])


# --------------------------------------------------------------------------- tracing

TRACE_CASES = [
    ("sum", lambda x, m: znp.sum(x, axis=(0, 2), where=m, initial=1.0)),
    ("prod", lambda x, m: znp.prod(x, axis=-1, keepdims=True)),
    ("mean", lambda x, m: znp.mean(x, axis=1, where=m)),
    ("var", lambda x, m: znp.var(x, axis=None, ddof=1)),
    ("std", lambda x, m: znp.std(x, axis=(1, 2), keepdims=True)),
    ("max", lambda x, m: znp.max(x, axis=0, where=m, initial=-10.0)),
    ("min", lambda x, m: znp.min(x)),
    ("argmax", lambda x, m: znp.argmax(x, axis=2, keepdims=True)),
    ("argmin", lambda x, m: znp.argmin(x)),
    ("any", lambda x, m: znp.any(x > 0, axis=1, where=m)),
    ("all", lambda x, m: znp.all(m, axis=(0, 1))),
    ("cumsum", lambda x, m: znp.cumsum(x, axis=1)),
    ("cumprod", lambda x, m: znp.cumprod(x)),
    ("cumulative_sum", lambda x, m: znp.cumulative_sum(x, axis=2, include_initial=True)),
    ("nansum", lambda x, m: znp.nansum(x, axis=0)),
    ("nanmean", lambda x, m: znp.nanmean(x, axis=2)),
    ("nanvar", lambda x, m: znp.nanvar(x, axis=(0, 1), ddof=1)),
    ("nanmin", lambda x, m: znp.nanmin(x, axis=1)),
    ("nanargmax", lambda x, m: znp.nanargmax(x, axis=1)),
    ("nancumprod", lambda x, m: znp.nancumprod(x, axis=0)),
    ("average", lambda x, m: znp.average(x, axis=1, weights=x * x, returned=True)),
    ("ptp", lambda x, m: znp.ptp(x, axis=1)),
    ("count_nonzero", lambda x, m: znp.count_nonzero(m, axis=2)),
    ("diff", lambda x, m: znp.diff(x, n=2, axis=1, append=x[:, :1])),
    ("ediff1d", lambda x, m: znp.ediff1d(x, to_begin=0.5)),
    ("trapezoid", lambda x, m: znp.trapezoid(x, axis=0)),
    ("cov", lambda x, m: znp.cov(x[0], rowvar=False)),
    ("corrcoef", lambda x, m: znp.corrcoef(x[1])),
]
XT = np.where(RNG.random((2, 3, 4)) < 0.1, np.nan, RNG.normal(size=(2, 3, 4)))
XT[0] = RNG.normal(size=(3, 4))  # keep one slice NaN-free
XT[:, 1, :] = RNG.normal(size=(2, 4))  # and no all-NaN slice along axis 1
MT = RNG.random((2, 3, 4)) < 0.7


@pytest.mark.parametrize("name,f", TRACE_CASES, ids=[c[0] for c in TRACE_CASES])
def test_make_jaxpr(name, f):
    eager = f(XT, MT)
    closed = zx.make_jaxpr(f)(XT, MT)
    traced = closed(XT, MT)
    eager = list(eager) if isinstance(eager, tuple) else [eager]
    assert len(traced) == len(eager)
    for t, e in zip(traced, eager):
        assert_matches(t, np.asarray(e))


@pytest.mark.parametrize("f", [
    lambda x: znp.sum(znp.var(x, axis=0)),
    lambda x: znp.sum(znp.cumprod(x, axis=1) * znp.max(x, axis=1, keepdims=True)),
    lambda x: znp.average(x, weights=x * x),
])
def test_grad_under_tracing(f):
    x = RNG.normal(size=(3, 4))
    closed = zx.make_jaxpr(zx.grad(f))(x)
    np.testing.assert_allclose(np.asarray(closed(x)[0]), np.asarray(zx.grad(f)(x)), rtol=1e-12)


def test_reduction_methods_work_on_traced_values():
    """``x.var()`` and the other reduction methods under jit, grad and vmap (a traced
    value's own attributes must not hide the array methods)."""
    x = np.random.default_rng(3).standard_normal((4, 6))
    for name in ("var", "std", "mean", "sum", "max", "min", "ptp", "prod"):
        def f(v, name=name):
            return getattr(v, name)(axis=-1)
        want = getattr(np, name)(x, axis=-1)
        np.testing.assert_allclose(np.asarray(zx.jit(f)(x)), want, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(zx.vmap(f)(x)), want, rtol=1e-12)
    g = zx.grad(lambda v: v.var())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * (x - x.mean()) / x.size, rtol=1e-12)
