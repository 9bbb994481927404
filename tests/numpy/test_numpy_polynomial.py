"""zerax.numpy's polynomial helpers (poly, polydiv) and unwrap against NumPy, with their
gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 99),
       kind=st.sampled_from(["float", "float32", "int"]), period=st.sampled_from([None, 4, 5]))
def test_unwrap_matches_numpy(n, seed, kind, period):
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.standard_normal((2, n)) * 3, axis=1)
    p = {"float": p, "float32": p.astype(np.float32), "int": np.round(p).astype(int)}[kind]
    kw = {} if period is None else {"period": period}
    assert_matches(znp.unwrap(p, **kw), np.unwrap(p, **kw))
    assert_matches(znp.unwrap(p, axis=0, discont=2.0, **kw), np.unwrap(p, axis=0, discont=2.0, **kw))


def test_unwrap_gradient_is_the_identity():
    p = np.array([0.0, 3.0, 6.5, 9.0, 2.0])
    np.testing.assert_allclose(zx.grad(lambda v: znp.unwrap(v).sum())(p), np.ones(5))


def test_poly_and_polydiv():
    rng = np.random.default_rng(1)
    for roots in ([1.0, 2.0], [], [3], np.array([1, 2, 3]), rng.standard_normal(5),
                  rng.standard_normal(3).astype(np.float32)):
        assert_matches(znp.poly(roots), np.asarray(np.poly(roots)))
    with pytest.raises(zx.errors.NotSupportedError):
        znp.poly(np.eye(2))
    g = zx.grad(lambda r: znp.poly(r).sum())(np.array([1.0, 2.0]))     # (1-r2)(1-r1)'
    assert_matches(g, np.array([1.0, 0.0]))
    for u, v in (([1.0, -3, 2], [1.0, -1]), (rng.standard_normal(6), rng.standard_normal(3)),
                 ([1, 2], [1, 2, 3]), ([1.0, 2, 3], [2.0])):
        q, r = znp.polydiv(u, v)
        qn, rn = np.polydiv(u, v)
        assert_matches(q, qn)
        assert r.shape == (len(u),)                  # JAX keeps u's length
        assert_matches(r[len(u) - len(rn):], rn)
        q, r = znp.polydiv(u, v, trim_leading_zeros=True)
        t = np.linspace(-1, 1, 5)                     # u == q * v + r as polynomials
        np.testing.assert_allclose(np.polyval(q, t) * np.polyval(v, t) + np.polyval(r, t),
                                   np.polyval(u, t), atol=1e-12)
