"""zerax.image.resize / scale_and_translate: linear and nearest against their
definitions with NumPy, area against block means, the cubic and Lanczos kernels against
values recorded from jax.image (jax_enable_x64), gradients by check_grads."""

import numpy as np
import pytest

import zerax as zx
import zerax.image as zimage
from zerax import errors
from zerax.test_util import check_grads


def test_linear_upsampling_is_half_pixel_interpolation():
    x = np.random.RandomState(0).rand(6)
    got = zimage.resize(x, (15,), "linear")
    centres = (np.arange(15) + 0.5) * 6 / 15 - 0.5
    np.testing.assert_allclose(got, np.interp(centres, np.arange(6), x), rtol=1e-13)
    img = np.random.RandomState(1).rand(4, 5, 2)
    got = zimage.resize(img, (8, 5, 2), "bilinear")
    c = (np.arange(8) + 0.5) * 4 / 8 - 0.5
    want = np.stack([[np.interp(c, np.arange(4), img[:, j, k]) for k in range(2)]
                     for j in range(5)]).transpose(2, 0, 1)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_nearest_and_area():
    x = np.arange(12).reshape(3, 4)
    got = zimage.resize(x, (5, 7), "nearest")
    r = np.floor((np.arange(5) + 0.5) * 3 / 5).astype(int)
    c = np.floor((np.arange(7) + 0.5) * 4 / 7).astype(int)
    np.testing.assert_array_equal(got, x[np.ix_(r, c)])
    assert got.dtype == x.dtype
    img = np.random.RandomState(2).rand(6, 8)
    np.testing.assert_allclose(zimage.resize(img, (3, 4), "area"),
                               img.reshape(3, 2, 4, 2).mean(axis=(1, 3)), rtol=1e-13)


def test_cubic_and_lanczos_match_recorded_jax():
    x = np.arange(5.0) ** 2
    up_cubic = [-0.07195571955719557, 0.2437492864482247, 1.12890625, 2.84765625,
                5.34765625, 8.62890625, 13.488183582600755, 16.50369003690037]
    np.testing.assert_allclose(zimage.resize(x, (8,), "cubic"), up_cubic, rtol=1e-12)
    np.testing.assert_allclose(zimage.resize(x, (8,), "cubic-pytorch"), up_cubic, rtol=1e-12)
    np.testing.assert_allclose(
        zimage.resize(x, (8,), "lanczos3"),
        [-0.008546541283895273, 0.19520629319193528, 1.1101153974916882, 2.9285478570176213,
         5.041240038160224, 8.493006630761386, 13.74597157448692, 16.55912724465967],
        rtol=1e-12)
    np.testing.assert_allclose(zimage.resize(x, (3,), "cubic"),
                               [0.16923076923077024, 4.195348837209301, 13.338461538461534],
                               rtol=1e-12)
    np.testing.assert_allclose(zimage.resize(x, (3,), "cubic-pytorch", antialias=False),
                               [0.14814814814814556, 4.0, 14.074074074074062], rtol=1e-12)


def test_derivatives_and_errors():
    img = np.random.RandomState(3).rand(3, 4)
    check_grads(lambda v: zimage.resize(v, (5, 6), "cubic"), (img,), order=1)
    # the derivative in the scale (piecewise smooth: recorded from jax.image)
    def f(s):
        out = zimage.scale_and_translate(img, (5, 4), (0,), s, np.array([0.3]), "linear")
        return (out ** 2).sum()
    np.testing.assert_allclose(f(np.array([1.4])), 4.8400439458454425, rtol=1e-12)
    np.testing.assert_allclose(zx.grad(f)(np.array([1.4])), [3.2164915019825338], rtol=1e-10)
    np.testing.assert_allclose(zx.jit(lambda v: zimage.resize(v, (6, 8), "linear"))(img),
                               zimage.resize(img, (6, 8), "linear"), rtol=1e-14)
    with pytest.raises(errors.ZeraxValueError, match="Unknown"):
        zimage.resize(img, (5, 6), "spline")
    with pytest.raises(errors.ShapeError):
        zimage.resize(img, (5,), "linear")
    with pytest.raises(errors.ZeraxValueError, match="Nearest"):
        zimage.scale_and_translate(img, (5, 4), (0,), [2.0], [0.0], "nearest")
