"""zerax.scipy.ndimage.map_coordinates against a Python loop of SciPy's definition
(order 0 and 1, every boundary mode), its derivatives, and its errors."""

import itertools
import math

import numpy as np
import pytest

import zerax as zx
from zerax import errors
from zerax.scipy.ndimage import map_coordinates
from zerax.test_util import check_grads


def _fix(i, n, mode):
    if mode == "nearest":
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "mirror":
        s = n - 1
        return abs((i + s) % (2 * s) - s)
    if mode == "reflect":
        s = 2 * n
        return (abs((2 * i + 1 + s) % (2 * s) - s) - 1) // 2
    return i


def _ref(img, ys, xs, order, mode, cval):
    out = np.zeros(ys.shape)
    for k in np.ndindex(ys.shape):
        total = 0.0
        nodes = []
        for c in (ys[k], xs[k]):
            if order == 0:
                r = math.floor(abs(c) + 0.5) * (1 if c >= 0 else -1)
                nodes.append([(r, 1.0)])
            else:
                lo = math.floor(c)
                nodes.append([(lo, 1 - (c - lo)), (lo + 1, c - lo)])
        for (i, wi), (j, wj) in itertools.product(*nodes):
            if mode == "constant" and not (0 <= i < img.shape[0] and 0 <= j < img.shape[1]):
                v = cval
            else:
                v = img[_fix(i, img.shape[0], mode), _fix(j, img.shape[1], mode)]
            total += wi * wj * v
        out[k] = total
    return out


@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_matches_definition(mode, order):
    img = np.random.RandomState(0).rand(6, 7)
    ys, xs = np.meshgrid(np.linspace(-1.5, 7.5, 9), np.linspace(-2.0, 8.3, 8), indexing="ij")
    got = map_coordinates(img, [ys, xs], order=order, mode=mode, cval=-1.0)
    np.testing.assert_allclose(got, _ref(img, ys, xs, order, mode, -1.0), rtol=1e-13,
                               atol=1e-15)


def test_map_coordinates_integers_derivatives_errors():
    ints = np.arange(20).reshape(4, 5)
    got = map_coordinates(ints, [np.array([0.5, 1.5]), np.array([0.0, 1.0])], order=1)
    assert got.dtype == ints.dtype
    np.testing.assert_array_equal(got, [3, 9])        # 2.5 and 8.5 rounded away from zero
    img = np.random.RandomState(1).rand(4, 5)
    c = [np.array([0.3, 1.6, 2.2]), np.array([0.7, 3.1, 1.4])]
    check_grads(lambda im: map_coordinates(im, c, order=1, mode="reflect"), (img,), order=1)
    check_grads(lambda y: map_coordinates(img, [y, c[1]], order=1, mode="nearest"), (c[0],),
                order=1)
    np.testing.assert_allclose(zx.jit(lambda y: map_coordinates(img, [y, c[1]], order=1))(c[0]),
                               map_coordinates(img, c, order=1), rtol=1e-14)
    with pytest.raises(errors.NotSupportedError):
        map_coordinates(img, c, order=3)
    with pytest.raises(errors.ZeraxValueError):
        map_coordinates(img, c[:1], order=1)
