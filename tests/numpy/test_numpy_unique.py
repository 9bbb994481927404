"""zerax.numpy's unique family (unique_all, unique_counts, unique_inverse, unique_values,
unique with size=) against NumPy, under jit and vmap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches


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
        assert_matches(g, w)
    assert got._fields == ("values", "indices", "inverse_indices", "counts")
    assert_matches(znp.unique_values(x), values)
    for g, w in zip(znp.unique_counts(x), (values, counts)):
        assert_matches(g, w)
    for g, w in zip(znp.unique_inverse(x), (values, inverse.reshape(x.shape))):
        assert_matches(g, w)
    # with size=, the first `size` entries, padded (counts with 0, values with fill)
    size = int(rng.integers(1, 8))
    sized = znp.unique_all(x, size=size, fill_value=-1)
    k = min(size, values.shape[0])
    assert_matches(sized.values[:k], values[:k])
    assert_matches(sized.counts[:k], counts[:k])
    assert_matches(sized.indices[:k], index[:k])
    assert_matches(sized.inverse_indices, inverse.reshape(x.shape))
    np.testing.assert_array_equal(np.asarray(sized.values[k:]), -1)
    np.testing.assert_array_equal(np.asarray(sized.counts[k:]), 0)


def test_unique_with_size_under_transforms():
    x = np.array([[3.0, 1.0, 3.0], [2.0, 1.0, 5.0]])
    r = zx.jit(lambda a: znp.unique_all(a, size=5))(x)
    assert_matches(r.values, [1.0, 2.0, 3.0, 5.0, 1.0])      # padded with the smallest value
    assert_matches(r.counts, np.array([2, 1, 2, 1, 0]))
    assert_matches(r.inverse_indices, np.array([[2, 0, 2], [1, 0, 3]]))
    rows = zx.vmap(lambda a: znp.unique_counts(a, size=3).counts)(x.astype(int))
    assert_matches(rows, np.array([[1, 2, 0], [1, 1, 1]]))
    def f(a):
        return (znp.unique_values(a, size=3, fill_value=0.0) ** 2).sum()
    assert_matches(zx.grad(f)(np.array([2.0, 1.0, 2.0])), np.array([4.0, 2.0, 0.0]))  # first occurrence
    with pytest.raises(zx.errors.ConcretizationError):
        zx.jit(znp.unique_values)(x)


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
