"""zerax.nn activations and zerax.scipy.special, against NumPy formulas."""

import math

import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.nn as nn
import zerax.scipy.special as zsp
from zerax.test_util import check_grads

arrays = hnp.arrays(np.float64, st.sampled_from([(3,), (2, 4)]),
                    elements=st.floats(-5, 5, allow_subnormal=False))


def _np_logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m, axis=axis)


@given(arrays)
def test_softmax_logsumexp_match_numpy(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(nn.softmax(x), e / e.sum(-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(nn.log_softmax(x), np.log(e / e.sum(-1, keepdims=True)),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(zsp.logsumexp(x, axis=-1), _np_logsumexp(x, -1), rtol=1e-12)
    np.testing.assert_allclose(zsp.logsumexp(x), _np_logsumexp(x.ravel(), 0), rtol=1e-12)


def test_logsumexp_handles_infinities_and_weights():
    assert float(zsp.logsumexp(np.array([-np.inf, -np.inf]))) == -np.inf
    assert float(zsp.logsumexp(np.array([1000.0, 1000.0]))) == 1000.0 + math.log(2)
    val, sign = zsp.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), return_sign=True)
    assert float(sign) == -1.0 and abs(float(val) - math.log(math.e ** 2 - math.e)) < 1e-12


@given(arrays)
def test_activations_match_numpy(x):
    sig = 1 / (1 + np.exp(-x))
    cases = {
        "relu": (nn.relu, np.maximum(x, 0)), "sigmoid": (nn.sigmoid, sig),
        "softplus": (nn.softplus, np.log1p(np.exp(x))), "silu": (nn.silu, x * sig),
        "log_sigmoid": (nn.log_sigmoid, np.log(sig)),
        "elu": (nn.elu, np.where(x > 0, x, np.expm1(x))),
        "leaky_relu": (nn.leaky_relu, np.where(x >= 0, x, 0.01 * x)),
        "gelu": (nn.gelu, 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
        "gelu_exact": (lambda v: nn.gelu(v, approximate=False),
                       0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))),
        "relu6": (nn.relu6, np.clip(x, 0, 6)), "hard_tanh": (nn.hard_tanh, np.clip(x, -1, 1)),
    }
    for name, (fn, want) in cases.items():
        np.testing.assert_allclose(fn(x), want, rtol=1e-10, atol=1e-12, err_msg=name)


def test_activation_grads():
    x = np.array([-1.3, -0.2, 0.4, 2.1])
    for fn in (nn.softplus, nn.silu, nn.gelu, nn.log_sigmoid, nn.elu, nn.celu, nn.selu):
        check_grads(fn, (x,), order=2)
    check_grads(lambda v: nn.softmax(v.reshape(2, 2)), (x,), order=2)
    check_grads(lambda v: zsp.logsumexp(v), (x,), order=2)
    assert float(zx.grad(nn.relu)(0.0)) == 0.0


def test_special_functions():
    xs = np.array([0.1, 0.7, 1.9])
    np.testing.assert_allclose(zsp.erf(xs), [math.erf(v) for v in xs], rtol=1e-14)
    np.testing.assert_allclose(zsp.gammaln(xs), [math.lgamma(v) for v in xs], rtol=1e-13)
    np.testing.assert_allclose(zsp.erfinv(zsp.erf(xs)), xs, rtol=1e-12)
    np.testing.assert_allclose(zsp.expit(xs), 1 / (1 + np.exp(-xs)), rtol=1e-14)
    np.testing.assert_allclose(zsp.logit(zsp.expit(xs)), xs, rtol=1e-12)
    np.testing.assert_allclose(zsp.ndtr(xs), 0.5 * (1 + np.vectorize(math.erf)(xs / np.sqrt(2))),
                               rtol=1e-14)
    assert float(zsp.xlogy(0.0, 0.0)) == 0.0
    np.testing.assert_allclose(nn.one_hot(np.array([0, 2]), 3), np.eye(3)[[0, 2]])
    check_grads(lambda v: zsp.xlogy(v, v + 1.0), (xs,), order=2)


def test_xlogy_xlog1py_derivatives_at_x_zero():
    # As JAX's custom JVPs: d/dx is log(y) (log1p(y)) even where x == 0 and the value is 0.
    for fn, log in ((zsp.xlogy, np.log), (zsp.xlog1py, np.log1p)):
        y = np.array([0.5, 2.0, 3.0])
        dx = zx.vmap(zx.grad(fn))(np.zeros(3), y)
        np.testing.assert_allclose(dx, log(y), rtol=1e-15)
        np.testing.assert_allclose(zx.jit(zx.grad(fn))(0.0, 2.0), log(2.0), rtol=1e-15)
        x = np.array([0.3, 1.2, 2.5])
        check_grads(fn, (x, y), order=2)
        np.testing.assert_allclose(fn(x, y), x * log(y), rtol=1e-15)
        assert fn(np.float32(0.5), 2.0).dtype == np.float32
        assert fn(1, 2).dtype == np.float64
    with np.errstate(divide="ignore", invalid="ignore"):
        assert float(zx.grad(zsp.xlogy)(0.0, 0.0)) == -np.inf


def test_softmax_log_softmax_logsumexp_where_mask():
    # jax.nn's `where=`: masked-out elements do not count; softmax gives them 0,
    # log_softmax -inf; gradients reach only the kept elements.
    x = np.array([[1.0, 2.0, 3.0, 0.5], [4.0, -1.0, 0.0, 2.0]])
    m = np.array([[True, False, True, True], [False, True, True, False]])
    e = np.where(m, np.exp(x), 0.0)
    ref = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(nn.softmax(x, where=m), ref, rtol=1e-14)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(nn.log_softmax(x, where=m), np.log(ref), rtol=1e-13)
    np.testing.assert_allclose(nn.logsumexp(x, axis=-1, where=m),
                               np.log(e.sum(-1)), rtol=1e-14)
    np.testing.assert_allclose(nn.softmax(x, axis=0, where=m),
                               e / e.sum(0, keepdims=True), rtol=1e-14)
    w = np.array([0.3, -1.0, 2.0, 0.7])
    g = zx.grad(lambda v: zx.numpy.sum(nn.softmax(v, where=m[0]) * w))(x[0])
    p = ref[0]
    np.testing.assert_allclose(g, p * (w - np.sum(p * w)), rtol=1e-13, atol=1e-15)
    g = zx.grad(lambda v: nn.log_softmax(v, where=m[0])[0])(x[0])
    np.testing.assert_allclose(g, np.eye(4)[0] - p, rtol=1e-13, atol=1e-15)
