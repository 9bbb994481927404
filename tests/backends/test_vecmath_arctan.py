"""vecmath.arctan (backends/numba/vecmath.py): branch-free inline float64 arctan, within
1 ulp of NumPy on the whole range, with NumPy's special values."""

import numba
import numpy as np

from zerax._src.backends.numba import vecmath
from zerax._src.backends.numba.compile import KERNEL_FASTMATH


@numba.njit(fastmath=set(KERNEL_FASTMATH))
def _arctan_loop(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = vecmath.arctan(x[i])
    return out


def test_arctan_matches_numpy():
    rng = np.random.default_rng(0)
    mags = 10.0 ** rng.uniform(-12, 12, 200_000)
    x = np.concatenate([rng.choice([-1.0, 1.0], mags.size) * mags,
                        np.linspace(-3, 3, 20_001),
                        [0.66, np.nextafter(0.66, 1), 2.414213562373095, 2.4142135623730954,
                         1.0, -1.0, 1e308, -1e308, 5e-324, 1e-300, 1e-310]])
    y, ref = _arctan_loop(x), np.arctan(x)
    ulp = np.abs(y - ref) / np.spacing(np.abs(ref))
    assert ulp.max() <= 1.0


def test_arctan_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310])
    y = _arctan_loop(x)
    np.testing.assert_array_equal(y[:4], [0.0, -0.0, np.pi / 2, -np.pi / 2])
    assert np.signbit(y[1]) and not np.signbit(y[0])
    assert np.isnan(y[4])
    np.testing.assert_array_equal(y[5:], x[5:])


def test_compiled_arctan_uses_it_and_matches_numpy(numba_path):
    import zerax as zx
    import zerax.numpy as znp
    f = zx.jit(lambda x: znp.arctan(x) * 2.0)
    assert "_vm_arctan" in f.lower(np.ones(4)).as_text()
    x = np.concatenate([np.random.default_rng(1).normal(size=4000) * 10.0 ** np.arange(
        -8, 8, 0.004), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    for dt in (np.float64, np.float32):
        xs = x.astype(dt)
        y, ref = np.asarray(f(xs)), np.arctan(xs) * dt(2.0)
        assert y.dtype == dt
        both_nan = np.isnan(y) & np.isnan(ref)
        ulp = np.abs(y - ref)[~both_nan] / np.spacing(np.abs(ref[~both_nan]))
        assert ulp.max() <= 2.0
        assert np.signbit(y[-4]) and not np.signbit(y[-5])
