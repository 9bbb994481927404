"""zerax.numpy's extremes and moments of complex arrays against NumPy 2: max/min/ptp and
argmax/argmin in NumPy's lexicographic order (real part, then imaginary part), NaNs
propagated as NumPy propagates them (the nan* variants skip them), var/std as the mean
of |a - mean|^2; derivatives against JAX's (recorded) and finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches
from zerax.test_util import check_grads

Z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, 0.5 + 5j])
Z_NAN = np.array([1 + 2j, complex(3, np.nan), complex(np.nan, 1), 2 + 0j])


def _numpy(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, f)(*args, **kw)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 999),
       data=st.data())
def test_extremes_match_numpy(shape, seed, data):
    rng = np.random.default_rng(seed)
    # small integer parts: many ties in the real part, some full ties
    a = rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)
    if data.draw(st.booleans()):
        a = a.astype(np.complex64)
    if data.draw(st.booleans()):   # a few NaNs in either part
        flat = a.reshape(-1)
        for i in rng.choice(flat.size, rng.integers(1, 3), replace=True):
            flat[i] = complex(np.nan, flat[i].imag) if rng.random() < 0.5 else \
                complex(flat[i].real, np.nan)
    nd = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
    for f in ("max", "min", "nanmax", "nanmin", "ptp"):
        assert_matches(getattr(znp, f)(a, axis=axis), _numpy(f, a, axis=axis), rtol=0)
    for f in ("argmax", "argmin"):
        assert_matches(getattr(znp, f)(a, axis=axis), _numpy(f, a, axis=axis), rtol=0)
    axes = tuple(sorted(set(data.draw(st.lists(st.integers(0, nd - 1), max_size=nd)))))
    assert_matches(znp.max(a, axis=axes, keepdims=True), _numpy("max", a, axis=axes,
                                                                keepdims=True), rtol=0)
    assert_matches(zx.jit(lambda v: znp.min(v, axis=axes))(a), _numpy("min", a, axis=axes),
                   rtol=0)


def test_extremes_nan_initial_where_and_errors():
    for f in ("max", "min", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin"):
        assert_matches(getattr(znp, f)(Z_NAN), _numpy(f, Z_NAN), rtol=0)
        assert_matches(zx.jit(getattr(znp, f))(Z), _numpy(f, Z), rtol=0)
    all_nan = np.array([complex(np.nan, 0), complex(1, np.nan)])
    assert_matches(znp.nanmax(all_nan), _numpy("nanmax", all_nan), rtol=0)
    with pytest.raises(zx.errors.ShapeError, match="All-NaN"):
        znp.nanargmax(all_nan)
    assert int(zx.jit(znp.nanargmax)(all_nan)) == -1
    a = np.array([1 + 1j, 5 + 0j])
    assert_matches(znp.max(a, initial=5 + 1j), np.max(a, initial=5 + 1j), rtol=0)
    assert_matches(znp.max(a, where=np.array([True, False]), initial=0j),
                   np.max(a, where=[True, False], initial=0j), rtol=0)
    with pytest.raises(zx.errors.ShapeError):
        znp.max(np.zeros((0, 2), complex), axis=0)


def test_extreme_derivatives_are_shared_among_ties():
    # JAX's values (recorded): the tangent of the max is the mean of the tangents at the
    # elements that attain it (here the two full ties 1+2j).
    g = zx.grad(lambda x: znp.real(znp.max(x)))(Z)
    np.testing.assert_allclose(g, [0.5, 0, 0, 0.5, 0])
    y, t = zx.jvp(znp.max, (Z,), (np.arange(5.0) * (1 + 1j),))
    assert complex(y) == 1 + 2j and complex(t) == 1.5 + 1.5j
    # (check_grads perturbs real inputs: the complex array is built from its parts)
    check_grads(lambda u, v: znp.abs(znp.min((u + 1j * v) ** 2)), (Z.real * 1.1, Z.imag),
                order=2, modes=("fwd", "rev"))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # an all-NaN slice: 0/0, as NumPy
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 999),
       ddof=st.integers(0, 1), data=st.data())
def test_var_std_match_numpy(shape, seed, ddof, data):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    single = data.draw(st.booleans())
    if single:
        a = a.astype(np.complex64)
    axis = data.draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)))
    rtol = 1e-5 if single else 1e-13
    for f in ("var", "std", "nanvar", "nanstd"):
        assert_matches(getattr(znp, f)(a, axis=axis, ddof=ddof),
                       _numpy(f, a, axis=axis, ddof=ddof), rtol=rtol)
    a[(0,) * len(shape)] = complex(np.nan, 1)
    assert_matches(znp.nanvar(a, axis=axis), _numpy("nanvar", a, axis=axis), rtol=rtol)


def test_var_std_derivatives():
    # JAX's gradients (recorded): grad of a real function of complex input is
    # conj(d f / d z) * 2 in JAX's convention, here 2 (z - mean) / n
    np.testing.assert_allclose(zx.grad(znp.var)(Z),
                               [0.36 - 0.16j, 0.36 + 1.04j, -1.24 + 0.64j, 0.36 - 0.16j,
                                0.16 - 1.36j], rtol=1e-12)
    np.testing.assert_allclose(zx.grad(znp.std)(Z),
                               [0.06964409 - 0.03095293j, 0.06964409 + 0.20119404j,
                                -0.2398852 + 0.12381172j, 0.06964409 - 0.03095293j,
                                0.03095293 - 0.2630999j], rtol=1e-6)
    check_grads(lambda u, v: znp.std(u + 1j * v, ddof=1), (Z.real, Z.imag), order=2,
                modes=("fwd", "rev"))
