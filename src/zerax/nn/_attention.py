"""Attention and recurrent cells of `zerax.nn` (Equinox's ``MultiheadAttention``,
``GRUCell``, ``LSTMCell``). A cell maps one input and one hidden state to the next state;
run a sequence with `zerax.lax.scan`.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import zerax as zx
import zerax.numpy as znp
from .. import errors

from ._linear import Linear, check_key, default_init, param_dtype, random_module
from ._misc import Dropout
from ._module import Module, field

__all__ = ["MultiheadAttention", "GRUCell", "LSTMCell", "dot_product_attention_weights"]


def dot_product_attention_weights(query, key, mask=None):
    """Softmax of ``query @ key.T / sqrt(qk_size)`` with ``mask`` (True keeps) for one head
    (Equinox's ``nn._attention.dot_product_attention_weights``).

    >>> import zerax.nn as nn
    >>> nn.dot_product_attention_weights(znp.zeros((1, 2)), znp.zeros((3, 2))).round(3)
    Array([[0.333, 0.333, 0.333]], dtype=float64)
    """
    query = query / math.sqrt(query.shape[-1])
    logits = znp.einsum("sd,Sd->sS", query, key)
    if mask is not None:
        if tuple(mask.shape) != tuple(logits.shape):
            raise errors.ShapeError(
                f"mask must have shape (query_seq_length, kv_seq_length)="
                f"{tuple(logits.shape)}, got {tuple(mask.shape)}")
        logits = znp.where(mask, logits, np.finfo(np.dtype(logits.dtype)).min)
    dtype = np.result_type(np.dtype(logits.dtype), np.float32)
    return zx.nn.softmax(logits.astype(dtype)).astype(logits.dtype)


def dot_product_attention(query, key_, value, mask=None, dropout=None, *, key=None,
                          inference=None):
    """One head of attention: `dot_product_attention_weights` (with ``dropout`` applied
    to them) times ``value`` (Equinox's ``nn._attention.dot_product_attention``; the
    public ``zerax.nn.dot_product_attention`` is JAX's, on batched multi-head arrays).

    >>> from zerax.nn._attention import dot_product_attention
    >>> dot_product_attention(znp.zeros((1, 2)), znp.zeros((2, 2)), znp.eye(2))
    Array([[0.5, 0.5]], dtype=float64)
    """
    weights = dot_product_attention_weights(query, key_, mask)
    if dropout is not None:
        weights = dropout(weights, key=key, inference=inference)
    return znp.einsum("sS,Sd->sd", weights, value)


class MultiheadAttention(Module):
    """Multi-head attention on one example (Equinox's ``MultiheadAttention``): projections
    ``query_proj``/``key_proj``/``value_proj``/``output_proj`` (`Linear`, no biases by
    default), ``num_heads`` heads, dropout on the attention weights.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> mha = nn.MultiheadAttention(2, 8, key=zr.key(0))
    >>> q = znp.ones((5, 8), np.float32)
    >>> mha(q, q, q).shape
    (5, 8)
    """

    query_proj: Linear
    key_proj: Linear
    value_proj: Linear
    output_proj: Linear
    dropout: Dropout
    num_heads: int = field(static=True)
    query_size: int = field(static=True)
    key_size: int = field(static=True)
    value_size: int = field(static=True)
    output_size: int = field(static=True)
    qk_size: int = field(static=True)
    vo_size: int = field(static=True)
    use_query_bias: bool = field(static=True)
    use_key_bias: bool = field(static=True)
    use_value_bias: bool = field(static=True)
    use_output_bias: bool = field(static=True)

    def __init__(self, num_heads: int, query_size: int, key_size: int | None = None,
                 value_size: int | None = None, output_size: int | None = None,
                 qk_size: int | None = None, vo_size: int | None = None,
                 use_query_bias: bool = False, use_key_bias: bool = False,
                 use_value_bias: bool = False, use_output_bias: bool = False,
                 dropout_p: float = 0.0, inference: bool = False, dtype=None, *, key):
        check_key(key, "MultiheadAttention")
        dtype = param_dtype(dtype)
        qkey, kkey, vkey, okey = random_module().split(key, 4)
        key_size = query_size if key_size is None else key_size
        value_size = query_size if value_size is None else value_size
        qk_size = query_size // num_heads if qk_size is None else qk_size
        vo_size = query_size // num_heads if vo_size is None else vo_size
        output_size = query_size if output_size is None else output_size
        self.query_proj = Linear(query_size, num_heads * qk_size, use_query_bias, dtype,
                                 key=qkey)
        self.key_proj = Linear(key_size, num_heads * qk_size, use_key_bias, dtype, key=kkey)
        self.value_proj = Linear(value_size, num_heads * vo_size, use_value_bias, dtype,
                                 key=vkey)
        self.output_proj = Linear(num_heads * vo_size, output_size, use_output_bias, dtype,
                                  key=okey)
        self.dropout = Dropout(dropout_p, inference=inference)
        self.num_heads = num_heads
        self.query_size = query_size
        self.key_size = key_size
        self.value_size = value_size
        self.output_size = output_size
        self.qk_size = qk_size
        self.vo_size = vo_size
        self.use_query_bias = use_query_bias
        self.use_key_bias = use_key_bias
        self.use_value_bias = use_value_bias
        self.use_output_bias = use_output_bias

    def _project(self, proj, x):
        return zx.vmap(proj)(x).reshape(x.shape[0], self.num_heads, -1)

    def __call__(self, query, key_, value, mask=None, *, key=None,
                 inference: bool | None = None, deterministic: bool | None = None,
                 process_heads: Callable | None = None):
        if deterministic is not None:
            inference = deterministic
        for name, v in (("query", query), ("key_", key_), ("value", value)):
            if znp.ndim(v) != 2:
                raise errors.ShapeError(
                    f"MultiheadAttention: {name} must be (seq_length, size) for one example, "
                    f"got shape {znp.shape(v)}; vmap over a batch")
        q_len = query.shape[0]
        if key_.shape[0] != value.shape[0]:
            raise errors.ShapeError("MultiheadAttention: key and value must both be "
                                    "sequences of equal length")
        qh = self._project(self.query_proj, query)
        kh = self._project(self.key_proj, key_)
        vh = self._project(self.value_proj, value)
        if process_heads is not None:
            shapes = (qh.shape, kh.shape, vh.shape)
            qh, kh, vh = process_heads(qh, kh, vh)
            if (qh.shape, kh.shape, vh.shape) != shapes:
                raise errors.ShapeError("process_heads must not change the heads' shapes")
        keys = None if key is None else random_module().split(key, self.num_heads)
        drop = self.dropout

        def one_head(q, k, v, m, kk):
            return dot_product_attention(q, k, v, m, drop, key=kk, inference=inference)

        if mask is not None and znp.ndim(mask) == 3:
            if keys is None:
                attn = zx.vmap(lambda q, k, v, m: one_head(q, k, v, m, None),
                               in_axes=(1, 1, 1, 0), out_axes=1)(qh, kh, vh, mask)
            else:
                attn = zx.vmap(one_head, in_axes=(1, 1, 1, 0, 0), out_axes=1)(
                    qh, kh, vh, mask, keys)
        elif keys is None:
            attn = zx.vmap(lambda q, k, v: one_head(q, k, v, mask, None),
                           in_axes=(1, 1, 1), out_axes=1)(qh, kh, vh)
        else:
            attn = zx.vmap(lambda q, k, v, kk: one_head(q, k, v, mask, kk),
                           in_axes=(1, 1, 1, 0), out_axes=1)(qh, kh, vh, keys)
        attn = attn.reshape(q_len, -1)
        return zx.vmap(self.output_proj)(attn)


class GRUCell(Module):
    """A gated recurrent unit (Equinox's ``GRUCell``): ``new_hidden = cell(input, hidden)``;
    parameters uniform on ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> cell = nn.GRUCell(3, 4, key=zr.key(0))
    >>> cell(znp.ones(3, np.float32), znp.zeros(4, np.float32)).shape
    (4,)
    """

    weight_ih: Any
    weight_hh: Any
    bias: Any
    bias_n: Any
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, input_size: int, hidden_size: int, use_bias: bool = True, dtype=None,
                 *, key):
        check_key(key, "GRUCell")
        dtype = param_dtype(dtype)
        ihkey, hhkey, bkey, bkey2 = random_module().split(key, 4)
        lim = math.sqrt(1 / hidden_size)
        self.weight_ih = default_init(ihkey, (3 * hidden_size, input_size), dtype, lim)
        self.weight_hh = default_init(hhkey, (3 * hidden_size, hidden_size), dtype, lim)
        if use_bias:
            self.bias = default_init(bkey, (3 * hidden_size,), dtype, lim)
            self.bias_n = default_init(bkey2, (hidden_size,), dtype, lim)
        else:
            self.bias = None
            self.bias_n = None
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.use_bias = use_bias

    def __call__(self, input, hidden, *, key=None):
        bias = self.bias if self.use_bias else 0
        bias_n = self.bias_n if self.use_bias else 0
        ig = znp.split(self.weight_ih @ input + bias, 3)
        hg = znp.split(self.weight_hh @ hidden, 3)
        reset = zx.nn.sigmoid(ig[0] + hg[0])
        inp = zx.nn.sigmoid(ig[1] + hg[1])
        new = znp.tanh(ig[2] + reset * (hg[2] + bias_n))
        return new + inp * (hidden - new)


class LSTMCell(Module):
    """A long short-term memory cell (Equinox's ``LSTMCell``):
    ``(h, c) = cell(input, (h, c))``; gates in the order input, forget, cell, output.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> cell = nn.LSTMCell(3, 4, key=zr.key(0))
    >>> h, c = cell(znp.ones(3, np.float32), (znp.zeros(4, np.float32),) * 2)
    >>> h.shape, c.shape
    ((4,), (4,))
    """

    weight_ih: Any
    weight_hh: Any
    bias: Any
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    use_bias: bool = field(static=True)

    def __init__(self, input_size: int, hidden_size: int, use_bias: bool = True, dtype=None,
                 *, key):
        check_key(key, "LSTMCell")
        dtype = param_dtype(dtype)
        ihkey, hhkey, bkey = random_module().split(key, 3)
        lim = math.sqrt(1 / hidden_size)
        self.weight_ih = default_init(ihkey, (4 * hidden_size, input_size), dtype, lim)
        self.weight_hh = default_init(hhkey, (4 * hidden_size, hidden_size), dtype, lim)
        self.bias = default_init(bkey, (4 * hidden_size,), dtype, lim) if use_bias else None
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.use_bias = use_bias

    def __call__(self, input, hidden, *, key=None):
        h, c = hidden
        lin = self.weight_ih @ input + self.weight_hh @ h
        if self.use_bias:
            lin = lin + self.bias
        i, f, g, o = znp.split(lin, 4)
        i = zx.nn.sigmoid(i)
        f = zx.nn.sigmoid(f)
        g = znp.tanh(g)
        o = zx.nn.sigmoid(o)
        c = f * c + i * g
        h = o * znp.tanh(c)
        return h, c
