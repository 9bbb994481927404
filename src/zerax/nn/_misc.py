"""Small layers of `zerax.nn`: `Dropout`, `Embedding`, `PReLU`,
`RotaryPositionalEmbedding` (Equinox's semantics and initialisation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import zerax.lax as lax
import zerax.numpy as znp
from .. import dtypes, errors

from ._linear import param_dtype, random_module
from ._module import Module, field

__all__ = ["Dropout", "Embedding", "PReLU", "RotaryPositionalEmbedding"]


class Dropout(Module):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``
    (Equinox's ``Dropout``); a key is needed unless ``inference`` is set (then it is the
    identity). Use `inference_mode` to switch a whole model.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> y = nn.Dropout(0.5)(znp.ones(1000), key=zr.key(0))
    >>> set(np.unique(np.asarray(y)).tolist()) <= {0.0, 2.0}, nn.Dropout(0.5, True)(1.0)
    (True, 1.0)
    """

    p: float
    inference: bool

    def __init__(self, p: float = 0.5, inference: bool = False, *,
                 deterministic: bool | None = None):
        if deterministic is not None:
            inference = deterministic
        if isinstance(p, (int, float)) and not 0 <= p <= 1:
            raise errors.ZeraxValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p
        self.inference = inference

    @property
    def deterministic(self) -> bool:
        return self.inference

    def __call__(self, x, *, key=None, inference: bool | None = None,
                 deterministic: bool | None = None):
        if deterministic is not None:
            inference = deterministic
        if inference is None:
            inference = self.inference
        if isinstance(self.p, (int, float)) and self.p == 0:
            inference = True
        if inference:
            return x
        if key is None:
            raise errors.ZeraxValueError(
                "Dropout needs key= in training mode (or inference=True / "
                "nn.inference_mode(model) to turn it off)")
        x = znp.asarray(x)
        if isinstance(self.p, (int, float)):
            q = 1.0 - self.p
            # JAX draws the uniforms behind the mask in the dtype of the keep probability,
            # 1 - p in the mode's default float (float64 with x64 on, float32 off), so
            # the same key drops the same elements as Equinox in either mode
            dt = dtypes.canonicalize_dtype(np.float64)
            mask = random_module().bernoulli(key, np.asarray(1, dt) - np.asarray(self.p, dt),
                                             x.shape)
            return znp.where(mask, x / q, 0)     # (a Python float: x keeps its dtype)
        q = 1 - lax.stop_gradient(self.p)
        mask = random_module().bernoulli(key, q, x.shape)
        return znp.where(mask, x / q, 0)


class Embedding(Module):
    """A lookup table: ``Embedding(n, size)(i)`` is row ``i`` of ``weight`` (Equinox's
    ``Embedding``; weights drawn standard normal, or given as ``weight=``).

    >>> import zerax.nn as nn
    >>> emb = nn.Embedding(weight=znp.arange(6.0).reshape(3, 2))
    >>> emb(2)
    Array([4., 5.], dtype=float64)
    """

    num_embeddings: int = field(static=True)
    embedding_size: int = field(static=True)
    weight: Any

    def __init__(self, num_embeddings: int | None = None, embedding_size: int | None = None,
                 weight=None, dtype=None, *, key=None):
        if weight is None:
            if num_embeddings is None or embedding_size is None or key is None:
                raise errors.ZeraxValueError(
                    "Embedding needs num_embeddings=, embedding_size= and key= when weight= "
                    "is not given")
            if num_embeddings < 0 or embedding_size < 0:
                raise errors.ZeraxValueError("Embedding sizes must not be negative")
            self.weight = random_module().normal(key, (num_embeddings, embedding_size),
                                                 param_dtype(dtype))
        else:
            weight = znp.asarray(weight)
            if weight.ndim != 2:
                raise errors.ShapeError(
                    f"Embedding: weight must have shape (num_embeddings, embedding_size), "
                    f"got {weight.shape}")
            if num_embeddings is None:
                num_embeddings = weight.shape[0]
            if embedding_size is None:
                embedding_size = weight.shape[1]
            if weight.shape != (num_embeddings, embedding_size):
                raise errors.ShapeError(
                    f"Embedding: weight has shape {weight.shape}, not "
                    f"({num_embeddings}, {embedding_size})")
            self.weight = weight
        self.num_embeddings = num_embeddings
        self.embedding_size = embedding_size

    def __call__(self, x, *, key=None):
        if znp.shape(x) != ():
            raise errors.ShapeError(
                "Embedding()(x) takes one scalar index; use zerax.vmap(embedding)(indices) "
                f"for several (got shape {znp.shape(x)})")
        if not np.issubdtype(np.dtype(znp.asarray(x).dtype), np.integer):
            raise errors.ZeraxTypeError(
                f"Embedding: the index must be an integer, got dtype {znp.asarray(x).dtype}")
        return self.weight[x]


class PReLU(Module):
    """``x if x >= 0 else negative_slope * x`` with a learnable slope (Equinox's ``PReLU``;
    ``init_alpha`` may be an array, e.g. one slope per channel).

    >>> import zerax.nn as nn
    >>> nn.PReLU()(znp.array([-2.0, 3.0], np.float32))
    Array([-0.5,  3. ], dtype=float32)
    """

    negative_slope: Any

    def __init__(self, init_alpha: Any = 0.25):
        if isinstance(init_alpha, (int, float)):
            self.negative_slope = znp.asarray(init_alpha, np.float32)
        else:
            self.negative_slope = znp.asarray(init_alpha)

    def __call__(self, x):
        return znp.where(x >= 0, x, self.negative_slope * x)


def _rope_freqs(size: int, end: int, theta: float, dtype):
    freqs = 1.0 / theta ** (np.arange(0.0, size, 2)[None, :] / size)
    t = np.arange(float(end))
    outer = np.outer(t, freqs)
    # Computed in float64 NumPy and rounded once: Equinox's values under jax_enable_x64
    # (in JAX's default mode it computes in float32, which may differ in the last bit).
    return np.cos(outer).astype(dtype), np.sin(outer).astype(dtype)


class RotaryPositionalEmbedding(Module):
    """Rotary positional embedding of a sequence ``(seq_length, embedding_size)``
    (Equinox's ``RotaryPositionalEmbedding``; rotates the two halves of each vector).

    >>> import zerax.nn as nn
    >>> rope = nn.RotaryPositionalEmbedding(4)
    >>> rope(znp.ones((3, 4), np.float32)).shape
    (3, 4)
    """

    embedding_size: int = field(static=True)
    theta: float = field(static=True, default=10000.0)
    dtype: Any = field(static=True, default=np.dtype(np.float32))

    def __check_init__(self):
        if self.embedding_size < 0:
            raise errors.ZeraxValueError("RotaryPositionalEmbedding: embedding_size must not "
                                         "be negative")
        if self.embedding_size % 2 != 0:
            raise errors.ZeraxValueError("RotaryPositionalEmbedding: embedding_size must be "
                                         "even")

    @staticmethod
    def precompute_freqs_cis(embedding_size: int, end: int, theta: float, dtype: Any):
        """``(cos, sin)`` of the rotation angles, each ``(end, embedding_size // 2)``
        (Equinox's ``precompute_freqs_cis``; computed in float64, rounded once to
        ``dtype``).

        >>> import zerax.nn as nn
        >>> cos, sin = nn.RotaryPositionalEmbedding.precompute_freqs_cis(4, 2, 1e4, "float32")
        >>> sin
        Array([[0.        , 0.        ],
               [0.84147096, 0.00999983]], dtype=float32)
        """
        cos, sin = _rope_freqs(embedding_size, end, theta, np.dtype(dtype))
        return znp.asarray(cos), znp.asarray(sin)

    @staticmethod
    def rotate_half(x):
        d = x.shape[-1] // 2
        return znp.concatenate([-x[..., d:], x[..., :d]], axis=-1)

    def __call__(self, x, *, key=None):
        if znp.ndim(x) != 2:
            raise errors.ShapeError(
                "RotaryPositionalEmbedding takes (seq_length, embedding_size), got shape "
                f"{znp.shape(x)}")
        seq_len, size = znp.shape(x)
        if size != self.embedding_size:
            raise errors.ShapeError(
                f"x.shape[-1] must be embedding_size={self.embedding_size}, got {size}")
        cos, sin = _rope_freqs(size, seq_len, self.theta, np.dtype(self.dtype))
        cos = np.tile(cos, (1, 2))
        sin = np.tile(sin, (1, 2))
        out = x * cos + self.rotate_half(x) * sin
        return out.astype(x.dtype)
