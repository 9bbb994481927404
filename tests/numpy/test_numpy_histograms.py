"""zerax.numpy's histograms (histogramdd, histogram2d, histogram_bin_edges) against NumPy."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from np_helpers import assert_matches


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
    assert_matches(got_h, want_h)
    for g, e in zip(got_e, want_e):
        assert_matches(g, e)


def test_histogram2d_and_bin_edges():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(50), rng.standard_normal(50)
    for bins in (5, [3, 4], np.linspace(-2, 2, 6)):
        for g, w in zip(znp.histogram2d(x, y, bins), np.histogram2d(x, y, bins)):
            assert_matches(g, w)
    kw = {"bins": 4, "range": [[-1, 1], [0, 2]], "density": True, "weights": np.abs(x)}
    for g, w in zip(znp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)):
        assert_matches(g, w)
    # JAX's positional order: (x, y, bins, range, weights, density)
    assert_matches(znp.histogram2d(x, y, 3, None, np.abs(x))[0],
          np.histogram2d(x, y, 3, None, weights=np.abs(x))[0])
    for a in (x, rng.integers(0, 9, 20), x.astype(np.float32)):
        for bins, r in ((10, None), (3, (0, 5)), (np.array([0.0, 1, 3]), None)):
            assert_matches(znp.histogram_bin_edges(a, bins, r), np.histogram_bin_edges(a, bins, r))
    # traced points, differentiable weights
    pts = np.stack([x, y], 1).reshape(5, 10, 2)
    h = zx.vmap(lambda p: znp.histogramdd(p, 3)[0])(pts)
    assert_matches(h, np.stack([np.histogramdd(p, 3)[0] for p in pts]))
    g = zx.grad(lambda w: znp.histogram2d(x, y, 2, range=[[-9, 0], [-9, 0]], weights=w)[0][1, 1])
    assert_matches(g(np.ones(50)), ((x <= 0) & (y <= 0)).astype(float))
