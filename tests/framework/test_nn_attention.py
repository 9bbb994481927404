"""zerax.nn.dot_product_attention against a NumPy reference (and JAX where it is
installed): masks, bias, causal, grouped heads, gradients and vmap."""

import numpy as np
import pytest

import zerax as zx
from zerax import nn
from zerax.test_util import check_grads


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
