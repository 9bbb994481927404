"""The zerax.nn activations added for parity with jax.nn, dot_product_attention and
zerax.nn.initializers, against NumPy formulas (and JAX where it is installed)."""

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


def _np_attention(q, k, v, bias=None, mask=None, causal=False, scale=None):
    _, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    kk = np.repeat(k, N // K, axis=2)            # grouped heads share their key/value head
    vv = np.repeat(v, N // K, axis=2)
    scale = 1 / np.sqrt(H) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, kk) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    if causal:
        keep &= np.tril(np.ones((T, S), bool))
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, vv)


def test_dot_product_attention_values():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 4, 6, 3))
    k, v = rng.standard_normal((2, 5, 3, 3)), rng.standard_normal((2, 5, 3, 3))  # GQA: 6/3
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v), _np_attention(q, k, v),
                               rtol=1e-12)
    bias = rng.standard_normal((1, 6, 4, 5))
    mask = rng.random((2, 1, 4, 5)) < 0.7
    got = nn.dot_product_attention(q, k, v, bias, mask, scale=0.3, is_causal=True)
    want = _np_attention(q, k, v, bias, mask, True, 0.3)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # no batch axis
    got = nn.dot_product_attention(q[0], k[0], v[0], is_causal=True)
    np.testing.assert_allclose(got, _np_attention(q[:1], k[:1], v[:1], causal=True)[0],
                               rtol=1e-12)
    # key/value sequence lengths mask the padding keys
    lens = np.array([2, 5], np.int32)
    got = nn.dot_product_attention(q, k, v, key_value_seq_lengths=lens)
    pad = (np.arange(5)[None, :] < lens[:, None])[:, None, None, :]
    np.testing.assert_allclose(got, _np_attention(q, k, v, mask=pad), rtol=1e-12)
    f32 = nn.dot_product_attention(*(a.astype(np.float32) for a in (q, k, v)))
    assert f32.dtype == np.float32
    with pytest.raises(zx.errors.ShapeError):
        nn.dot_product_attention(q[:, :, :5], k, v)
    with pytest.raises(zx.errors.NotSupportedError):
        nn.dot_product_attention(q, k, v, implementation="cudnn")


def test_dot_product_attention_gradients_and_vmap():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 3, 2, 2)) for _ in range(3))
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True),
                (q, k, v), order=1)
    qs = rng.standard_normal((3, 3, 2, 2))
    got = zx.vmap(lambda a: nn.dot_product_attention(a, k[0], v[0]))(qs)
    np.testing.assert_allclose(got, np.stack([nn.dot_product_attention(a, k[0], v[0])
                                              for a in qs]), rtol=1e-12)


def test_dot_product_attention_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 5, 4, 3))
    k, v = rng.standard_normal((2, 6, 2, 3)), rng.standard_normal((2, 6, 2, 3))
    kw = {"query_seq_lengths": np.array([3, 5], np.int32),
          "key_value_seq_lengths": np.array([6, 2], np.int32), "local_window_size": (1, 2)}
    want, want_res = jax.nn.dot_product_attention(q, k, v, return_residual=True, **kw)
    got, got_res = nn.dot_product_attention(q, k, v, return_residual=True, **kw)
    # JAX computes the softmax in float32 even for float64 inputs
    np.testing.assert_allclose(got, np.asarray(want), atol=1e-5)
    np.testing.assert_allclose(got_res, np.asarray(want_res), atol=1e-5)


def test_initializers():
    import zerax.nn.initializers as init
    from zerax.nn import initializers
    assert initializers is init
    z = init.zeros(None, (2, 3))
    assert z.shape == (2, 3) and z.dtype == np.float64 and not np.asarray(z).any()
    o = init.ones(None, [4], np.float32)
    assert o.dtype == np.float32 and np.asarray(o).all()
    c = init.constant(0.5, np.float32)(None, (2,))
    np.testing.assert_array_equal(c, np.full(2, 0.5, np.float32))
    assert init.constant(3)(None, (1,), np.int32).dtype == np.int32
