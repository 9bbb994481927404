"""The zerax.numpy functions added for parity with jax.numpy, against NumPy: unique_*,
unwrap, histograms, apply_over_axes, mask_indices, poly/polydiv, the index objects, the
dtype aliases and the bit functions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, equal_nan=True, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- unique_*


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=2), seed=st.integers(0, 99),
       floats=st.booleans())
def test_unique_functions_match_numpy(shape, seed, floats):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape)
    if floats:
        x = x.astype(float)
        if x.size:
            x.flat[rng.integers(0, x.size)] = np.nan         # NaNs are distinct
    # NumPy 2.3+ leaves the order of unique_values unspecified; JAX (and zerax) sort
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    want = (values, index, inverse.reshape(x.shape), counts)
    got = znp.unique_all(x)
    for g, w in zip(got, want):
        _same(g, w)
    assert got._fields == ("values", "indices", "inverse_indices", "counts")
    _same(znp.unique_values(x), values)
    for g, w in zip(znp.unique_counts(x), (values, counts)):
        _same(g, w)
    for g, w in zip(znp.unique_inverse(x), (values, inverse.reshape(x.shape))):
        _same(g, w)
    # with size=, the first `size` entries, padded (counts with 0, values with fill)
    size = int(rng.integers(1, 8))
    sized = znp.unique_all(x, size=size, fill_value=-1)
    k = min(size, values.shape[0])
    _same(sized.values[:k], values[:k])
    _same(sized.counts[:k], counts[:k])
    _same(sized.indices[:k], index[:k])
    _same(sized.inverse_indices, inverse.reshape(x.shape))
    np.testing.assert_array_equal(np.asarray(sized.values[k:]), -1)
    np.testing.assert_array_equal(np.asarray(sized.counts[k:]), 0)


def test_unique_with_size_under_transforms():
    x = np.array([[3.0, 1.0, 3.0], [2.0, 1.0, 5.0]])
    r = zx.jit(lambda a: znp.unique_all(a, size=5))(x)
    _same(r.values, [1.0, 2.0, 3.0, 5.0, 1.0])      # padded with the smallest value
    _same(r.counts, np.array([2, 1, 2, 1, 0]))
    _same(r.inverse_indices, np.array([[2, 0, 2], [1, 0, 3]]))
    rows = zx.vmap(lambda a: znp.unique_counts(a, size=3).counts)(x.astype(int))
    _same(rows, np.array([[1, 2, 0], [1, 1, 1]]))
    def f(a):
        return (znp.unique_values(a, size=3, fill_value=0.0) ** 2).sum()
    _same(zx.grad(f)(np.array([2.0, 1.0, 2.0])), np.array([4.0, 2.0, 0.0]))  # first occurrence
    with pytest.raises(zx.errors.ConcretizationError):
        zx.jit(znp.unique_values)(x)


# --------------------------------------------------------------------------- unwrap


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 99),
       kind=st.sampled_from(["float", "float32", "int"]), period=st.sampled_from([None, 4, 5]))
def test_unwrap_matches_numpy(n, seed, kind, period):
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.standard_normal((2, n)) * 3, axis=1)
    p = {"float": p, "float32": p.astype(np.float32), "int": np.round(p).astype(int)}[kind]
    kw = {} if period is None else {"period": period}
    _same(znp.unwrap(p, **kw), np.unwrap(p, **kw))
    _same(znp.unwrap(p, axis=0, discont=2.0, **kw), np.unwrap(p, axis=0, discont=2.0, **kw))


def test_unwrap_gradient_is_the_identity():
    p = np.array([0.0, 3.0, 6.5, 9.0, 2.0])
    np.testing.assert_allclose(zx.grad(lambda v: znp.unwrap(v).sum())(p), np.ones(5))


# --------------------------------------------------------------------------- histograms


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 20), d=st.integers(1, 3), seed=st.integers(0, 99),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]), data=st.data())
def test_histogramdd_matches_numpy(n, d, seed, dtype, data):
    rng = np.random.default_rng(seed)
    s = (rng.standard_normal((n, d)) * 3).astype(dtype)
    if data.draw(st.booleans()):
        bins = data.draw(st.integers(1, 4))
    else:
        bins = [data.draw(st.integers(1, 3)) if data.draw(st.booleans())
                else np.sort(rng.standard_normal(data.draw(st.integers(2, 4))) * 2)
                for _ in range(d)]
    rng_ = None if data.draw(st.booleans()) else [(-2, 2.5)] * d
    density = data.draw(st.booleans()) and n > 0
    w = rng.random(n) if data.draw(st.booleans()) else None
    with np.errstate(invalid="ignore", divide="ignore"):     # 0/0 when nothing is inside
        want_h, want_e = np.histogramdd(s, bins, rng_, density=density, weights=w)
        got_h, got_e = znp.histogramdd(s, bins, rng_, density=density, weights=w)
    _same(got_h, want_h)
    for g, e in zip(got_e, want_e):
        _same(g, e)


def test_histogram2d_and_bin_edges():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(50), rng.standard_normal(50)
    for bins in (5, [3, 4], np.linspace(-2, 2, 6)):
        for g, w in zip(znp.histogram2d(x, y, bins), np.histogram2d(x, y, bins)):
            _same(g, w)
    kw = {"bins": 4, "range": [[-1, 1], [0, 2]], "density": True, "weights": np.abs(x)}
    for g, w in zip(znp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)):
        _same(g, w)
    # JAX's positional order: (x, y, bins, range, weights, density)
    _same(znp.histogram2d(x, y, 3, None, np.abs(x))[0],
          np.histogram2d(x, y, 3, None, weights=np.abs(x))[0])
    for a in (x, rng.integers(0, 9, 20), x.astype(np.float32)):
        for bins, r in ((10, None), (3, (0, 5)), (np.array([0.0, 1, 3]), None)):
            _same(znp.histogram_bin_edges(a, bins, r), np.histogram_bin_edges(a, bins, r))
    # traced points, differentiable weights
    pts = np.stack([x, y], 1).reshape(5, 10, 2)
    h = zx.vmap(lambda p: znp.histogramdd(p, 3)[0])(pts)
    _same(h, np.stack([np.histogramdd(p, 3)[0] for p in pts]))
    g = zx.grad(lambda w: znp.histogram2d(x, y, 2, range=[[-9, 0], [-9, 0]], weights=w)[0][1, 1])
    _same(g(np.ones(50)), ((x <= 0) & (y <= 0)).astype(float))


# --------------------------------------------------------------------------- small helpers


def test_apply_over_axes_and_mask_indices():
    a = np.arange(24.0).reshape(2, 3, 4)
    _same(znp.apply_over_axes(znp.sum, a, [0, 2]), np.apply_over_axes(np.sum, a, [0, 2]))
    _same(znp.apply_over_axes(znp.max, a, -1), np.apply_over_axes(np.max, a, -1))
    _same(znp.apply_over_axes(lambda v, ax: znp.cumsum(v, axis=ax), a, (1,)),
          np.cumsum(a, axis=1))
    with pytest.raises(zx.errors.ZeraxValueError):
        znp.apply_over_axes(lambda v, ax: znp.ravel(v), a, [0])
    for k in (-1, 0, 2):
        for got, want in zip(znp.mask_indices(4, znp.triu, k), np.mask_indices(4, np.triu, k)):
            _same(got, want)
    for got, want in zip(znp.mask_indices(3, znp.tril), np.mask_indices(3, np.tril)):
        _same(got, want)


def test_poly_and_polydiv():
    rng = np.random.default_rng(1)
    for roots in ([1.0, 2.0], [], [3], np.array([1, 2, 3]), rng.standard_normal(5),
                  rng.standard_normal(3).astype(np.float32)):
        _same(znp.poly(roots), np.asarray(np.poly(roots)))
    with pytest.raises(zx.errors.NotSupportedError):
        znp.poly(np.eye(2))
    g = zx.grad(lambda r: znp.poly(r).sum())(np.array([1.0, 2.0]))     # (1-r2)(1-r1)'
    _same(g, np.array([1.0, 0.0]))
    for u, v in (([1.0, -3, 2], [1.0, -1]), (rng.standard_normal(6), rng.standard_normal(3)),
                 ([1, 2], [1, 2, 3]), ([1.0, 2, 3], [2.0])):
        q, r = znp.polydiv(u, v)
        qn, rn = np.polydiv(u, v)
        _same(q, qn)
        assert r.shape == (len(u),)                  # JAX keeps u's length
        _same(r[len(u) - len(rn):], rn)
        q, r = znp.polydiv(u, v, trim_leading_zeros=True)
        t = np.linspace(-1, 1, 5)                     # u == q * v + r as polynomials
        np.testing.assert_allclose(np.polyval(q, t) * np.polyval(v, t) + np.polyval(r, t),
                                   np.polyval(u, t), atol=1e-12)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # NumPy's 'r'/'c' matrices
def test_index_objects():
    for key in (np.s_[0:5], np.s_[0:5, 0:3], np.s_[0:1:5j, 0:3], np.s_[-1:1:0.5],
                np.s_[2:10:3, 0:1:3j, 1:3]):
        _same(znp.mgrid[key], np.mgrid[key])
        got, want = znp.ogrid[key], np.ogrid[key]
        if isinstance(want, np.ndarray):
            _same(got, want)
        else:
            assert isinstance(got, list) and len(got) == len(want)
            for g, w in zip(got, want):
                _same(g, w)
    a = np.arange(6).reshape(2, 3)
    a32 = np.arange(3, dtype=np.int32)
    cases = [
        lambda m: m.r_[-1:5:1, 0, 0, np.array([1, 2, 3])],
        lambda m: m.r_[-1:1:6j, 0, np.array([1, 2, 3])],
        lambda m: m.r_["0,2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["1,3,1", a, a],
        lambda m: m.r_["r", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["c", [1, 2, 3], [4, 5, 6]],
        lambda m: m.r_["-1", a, a],
        lambda m: m.r_[a32, 5],                      # Python scalars stay weak
        lambda m: m.r_[a32, 5.5],
        lambda m: m.c_[a, a],
        lambda m: m.c_["0,2", [1, 2, 3], [4, 5, 6]],
        lambda m: m.c_["r", [1, 2, 3], [4, 5, 6]],
        lambda m: m.c_[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])],
        lambda m: m.c_[1:4, 4:7],
    ]
    for case in cases:
        _same(case(znp), case(np))
    assert znp.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))
    assert znp.index_exp[1:2] == (slice(1, 2),)
    x = np.array([0.5, -1.0, 2.0])
    g = zx.grad(lambda v: (znp.r_[v, 2 * v, 1.0] ** 2).sum())(x)
    _same(g, 10 * x)
    _same(zx.jit(lambda v: znp.c_[v, v])(x), np.c_[x, x])


def test_dtype_aliases():
    # JAX's scalar types (callable casts) that equal NumPy's (tests/test_jax_names.py)
    assert znp.single is znp.float32 == np.float32 and znp.double is znp.float64 == np.float64
    assert znp.csingle == np.complex64 and znp.cdouble == np.complex128
    assert znp.int_ == np.int64 and znp.uint == np.uint64
    assert znp.zeros(2, znp.single).dtype == np.float32
    assert znp.isdtype(znp.float32, "real floating") and not znp.isdtype(znp.int_, "bool")
    assert znp.iterable([1]) and not znp.iterable(1)


# --------------------------------------------------------------------------- bits


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64])
def test_bitwise_count(dtype):
    if dtype is np.bool_:
        x = np.array([True, False, True])
    else:
        info = np.iinfo(dtype)
        x = np.random.default_rng(0).integers(info.min, info.max, 40, dtype=dtype,
                                              endpoint=True)
        x = np.concatenate([x, np.array([info.min, info.max, 0], dtype)])
    _same(znp.bitwise_count(x), np.bitwise_count(x))
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.bitwise_count(np.ones(2))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 11), min_size=0, max_size=3), seed=st.integers(0, 99),
       data=st.data())
def test_packbits_unpackbits(shape, seed, data):
    rng = np.random.default_rng(seed)
    nd = len(shape)
    axis = None if nd == 0 or data.draw(st.booleans()) else data.draw(st.integers(-nd, nd - 1))
    order = data.draw(st.sampled_from(["big", "little"]))
    x = rng.integers(0, 3, shape)
    if data.draw(st.booleans()):
        x = x > 0
    _same(znp.packbits(x, axis=axis, bitorder=order), np.packbits(x, axis=axis, bitorder=order))
    u = rng.integers(0, 256, shape, dtype=np.uint8)
    n_bits = 8 * (u.size if axis is None else u.shape[axis])
    count = data.draw(st.one_of(st.none(), st.integers(-n_bits, 3 * n_bits + 2)))
    if count is not None and count > 0 and u.size == 0:
        count = None                  # NumPy leaves such padding uninitialised
    _same(znp.unpackbits(u, axis=axis, count=count, bitorder=order),
          np.unpackbits(u, axis=axis, count=count, bitorder=order))


def test_bits_errors_and_vmap():
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.unpackbits(np.array([1, 2]))             # uint8 only
    with pytest.raises(zx.errors.ZeraxTypeError):
        znp.packbits(np.ones(3))
    with pytest.raises(zx.errors.ZeraxValueError):
        znp.unpackbits(np.array([1], np.uint8), count=-9)
    x = np.random.default_rng(1).integers(0, 2, (3, 10))
    _same(zx.vmap(znp.packbits)(x), np.packbits(x, axis=1))


def test_unique_with_size_pads_and_works_under_jit():
    a = np.array([3, 1, 3, 2, 1, 3])
    values, index, inverse, counts = znp.unique(a, size=4, fill_value=-1, return_index=True,
                                                return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values, [1, 2, 3, -1])
    np.testing.assert_array_equal(index[:3], [1, 3, 0])
    np.testing.assert_array_equal(np.asarray(values)[np.asarray(inverse)], a)
    np.testing.assert_array_equal(counts[:3], [2, 1, 3])
    np.testing.assert_array_equal(zx.jit(lambda x: znp.unique(x, size=2))(a), [1, 2])


def test_unique_with_size_merges_nans_unless_asked_not_to():
    a = np.array([np.nan, np.nan, 1.0])
    np.testing.assert_array_equal(znp.unique(a, size=3), [1.0, np.nan, 1.0])   # as JAX
    np.testing.assert_array_equal(znp.unique(a, size=3, equal_nan=False), [1.0, np.nan, np.nan])
    np.testing.assert_array_equal(znp.unique(np.zeros(0), size=2, fill_value=3.0), [3.0, 3.0])
