"""zerax.nn's activation functions (those of jax.nn beyond relu/sigmoid/gelu: hard_*,
mish, soft_sign, sparse_*, squareplus, glu, log1mexp, logmeanexp) against NumPy formulas,
with their gradients."""

import numpy as np
import pytest

import zerax as zx
from zerax import nn
from zerax.test_util import check_grads


X = np.linspace(-5.0, 5.0, 42)


def _np_softplus(x):
    return np.logaddexp(x, 0)


REFERENCES = {
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "identity": lambda x: x,
    "mish": lambda x: x * np.tanh(_np_softplus(x)),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip(x + 1, 0, 2) / 2,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "tanh": np.tanh,
    "glu": lambda x: x[:21] / (1 + np.exp(-x[21:])),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values_and_dtypes(name):
    f = getattr(nn, name)
    np.testing.assert_allclose(f(X), REFERENCES[name](X), rtol=1e-13, atol=1e-15)
    assert f(X.astype(np.float32)).dtype == np.float32
    if name not in ("identity", "glu"):
        assert f(np.arange(-2, 3)).dtype == np.float64      # integers compute in float64


@pytest.mark.parametrize("name", ["mish", "soft_sign", "squareplus", "hard_silu", "glu"])
def test_activation_gradients(name):
    x = np.array([-2.3, -0.4, 0.7, 1.9, 2.6, -3.7])
    check_grads(getattr(nn, name), (x,), order=2)


def test_log1mexp_and_logmeanexp():
    x = np.array([1e-8, 0.1, 0.6931, 0.6932, 2.0, 40.0])
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    np.testing.assert_allclose(nn.log1mexp(x), want, rtol=1e-13)
    # finite gradient on both branches: d/dx log(1 - e^-x) = 1 / expm1(x)
    np.testing.assert_allclose(zx.vmap(zx.grad(nn.log1mexp))(x), 1 / np.expm1(x), rtol=1e-8)
    v = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(nn.logmeanexp(v, axis=1), np.log(np.exp(v).mean(1)))
    m = v > -0.5
    want = [np.log(np.exp(r[k]).mean()) for r, k in zip(v, m)]
    np.testing.assert_allclose(nn.logmeanexp(v, axis=1, where=m), want)
    assert nn.logmeanexp(v, axis=0, keepdims=True).shape == (1, 4)


def test_glu_odd_axis_is_an_error():
    with pytest.raises(zx.errors.ShapeError):
        nn.glu(np.ones(3))
    np.testing.assert_allclose(nn.glu(np.ones((4, 2)), axis=0), np.full((2, 2), 0.7310585786))
