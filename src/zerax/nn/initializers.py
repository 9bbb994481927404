"""`zerax.nn.initializers`: JAX's initializers, ``init(key, shape, dtype=None) -> Array``
(``dtype=None``: the mode's default float, float64, or float32 with x64 off, as JAX's
``jnp.float_``), drawing from `zerax.random` so
that the same key, shape and dtype give JAX's values: ``zeros``, ``ones``, ``constant``,
``uniform``, ``normal``, ``truncated_normal``, ``variance_scaling`` and its named cases
(glorot/xavier, he/kaiming, lecun; normal and uniform), ``orthogonal``, ``delta_orthogonal``.
The deterministic ones ignore the key (so code written for ``jax.nn.initializers`` that passes
``None`` still runs).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import zerax.numpy as jnp
import zerax.random as _zr
from .. import dtypes, errors
from ..lax import complex as complex_
from ..numpy import linalg as _la

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
           "normal", "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
           "xavier_normal", "xavier_uniform", "zeros", "Initializer"]

Initializer = Callable[..., Any]


def _shape(shape):
    try:
        return tuple(int(d) for d in shape) if np.ndim(shape) else (int(shape),)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"initializer: shape must be a sequence of integers, got {shape!r}") from None


def _dtype(dtype):
    return dtypes.default_float() if dtype is None else dtypes.requested(dtype, "initializer")


def _float_dtype(dtype, name):
    dt = _dtype(dtype)
    if not np.issubdtype(dt, np.inexact):
        raise errors.ZeraxTypeError(
            f"initializers.{name}: dtype must be a floating or complex dtype, got {dt}")
    return dt


def _scalar(v, dtype):
    return jnp.asarray(np.asarray(v).astype(dtype))


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``key`` is ignored).

    >>> import zerax.nn.initializers as init
    >>> init.zeros(None, (2, 3)).shape
    (2, 3)
    """
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``key`` is ignored).

    >>> import zerax.nn.initializers as init
    >>> init.ones(None, (2,), np.float32)
    Array([1., 1.], dtype=float32)
    """
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None) -> Initializer:
    """An initializer filling arrays with ``value``.

    >>> import zerax.nn.initializers as init
    >>> init.constant(-7)(None, (2,))
    Array([-7., -7.], dtype=float64)
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(_shape(shape), value, _dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """Uniform on ``[0, scale)`` (JAX's ``initializers.uniform``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> float(init.uniform(2.0)(zr.key(0), (100,)).max()) < 2.0
    True
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _float_dtype(dtype, "uniform")
        return _zr.uniform(key, _shape(shape), dt) * _scalar(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """Normal with mean 0 and standard deviation ``stddev`` (JAX's ``initializers.normal``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.normal(1.0)(zr.key(0), (2, 2), np.float32).dtype
    dtype('float32')
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _float_dtype(dtype, "normal")
        return _zr.normal(key, _shape(shape), dt) * _scalar(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """``stddev`` times a standard normal truncated to ``[lower, upper]``.

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> float(abs(init.truncated_normal(1.0)(zr.key(0), (1000,))).max()) <= 2.0
    True
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _float_dtype(dtype, "truncated_normal")
        return (_zr.truncated_normal(key, lower, upper, _shape(shape), dt)
                * _scalar(stddev, dt))
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise errors.ZeraxValueError(
            f"variance_scaling: cannot compute the fans of a {len(shape)}-d weight with the "
            "default in_axis; the shape must be at least 2-d, or give in_axis explicitly")

    def size(axis):
        if isinstance(axis, int):
            return shape[axis]
        return math.prod(shape[i] for i in axis)
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _polar(r, theta, dtype):
    """``r * exp(1j * theta)`` for real ``r`` and ``theta`` (JAX's formula, in real
    arithmetic: equal values, and complex exp is not needed)."""
    return complex_(r * jnp.cos(theta), r * jnp.sin(theta)).astype(dtype)


def _complex_uniform(key, shape, dtype):
    key_r, key_theta = _zr.split(key)
    real = np.dtype(np.array(0, dtype).real.dtype)
    r = jnp.sqrt(2 * _zr.uniform(key_r, shape, real))
    theta = 2 * np.pi * _zr.uniform(key_theta, shape, real)
    return _polar(r, theta, dtype)


def _complex_truncated_normal(key, upper, shape, dtype):
    key_r, key_theta = _zr.split(key)
    real = np.dtype(np.array(0, dtype).real.dtype)
    t = (1 - jnp.exp(_scalar(-upper ** 2, real))) * _zr.uniform(key_r, shape, real)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * _zr.uniform(key_theta, shape, real)
    return _polar(r, theta, dtype)


def variance_scaling(scale, mode: str, distribution: str, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1, batch_axis: int | Sequence[int] = (),
                     dtype=None) -> Initializer:
    """Samples with variance ``scale / n``, ``n`` the fan in, fan out, their mean
    (``'fan_avg'``) or geometric mean (``'fan_geo_avg'``), from a ``'truncated_normal'``,
    ``'normal'`` or ``'uniform'`` distribution (JAX's ``variance_scaling``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> w = init.variance_scaling(2.0, "fan_in", "normal")(zr.key(0), (400, 300))
    >>> round(float(w.var()) * 400, 1)
    2.0
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise errors.ZeraxValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise errors.ZeraxValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dt = _float_dtype(dtype, "variance_scaling")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        is_real = np.issubdtype(dt, np.floating)
        # JAX holds the variance in ``dtype``; for complex dtypes its imaginary part is 0,
        # so it is kept real here (zerax's sqrt is real-only) and the product is the same.
        real_dt = dt if is_real else np.dtype(np.array(0, dt).real.dtype)
        variance = _scalar(scale / denominator, real_dt)
        if distribution == "truncated_normal":
            if is_real:
                stddev = jnp.sqrt(variance) / _scalar(0.8796256610342398, dt)
                return _zr.truncated_normal(key, -2, 2, shape, dt) * stddev
            stddev = jnp.sqrt(variance) / _scalar(0.9531116438049121, real_dt)
            return _complex_truncated_normal(key, 2, shape, dt) * stddev
        if distribution == "normal":
            return _zr.normal(key, shape, dt) * jnp.sqrt(variance)
        if is_real:
            return _zr.uniform(key, shape, dt, -1) * jnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dt) * jnp.sqrt(variance)
    return init


def _named(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    make.__doc__ = doc
    return make


glorot_uniform = _named(1.0, "fan_avg", "uniform", """\
``variance_scaling(1.0, 'fan_avg', 'uniform')`` (Glorot & Bengio; alias ``xavier_uniform``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.glorot_uniform()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
glorot_uniform.__name__ = "glorot_uniform"
glorot_normal = _named(1.0, "fan_avg", "truncated_normal", """\
``variance_scaling(1.0, 'fan_avg', 'truncated_normal')`` (alias ``xavier_normal``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.glorot_normal()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
glorot_normal.__name__ = "glorot_normal"
lecun_uniform = _named(1.0, "fan_in", "uniform", """\
``variance_scaling(1.0, 'fan_in', 'uniform')`` (LeCun).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.lecun_uniform()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
lecun_uniform.__name__ = "lecun_uniform"
lecun_normal = _named(1.0, "fan_in", "truncated_normal", """\
``variance_scaling(1.0, 'fan_in', 'truncated_normal')`` (LeCun).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.lecun_normal()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
lecun_normal.__name__ = "lecun_normal"
he_uniform = _named(2.0, "fan_in", "uniform", """\
``variance_scaling(2.0, 'fan_in', 'uniform')`` (He et al.; alias ``kaiming_uniform``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.he_uniform()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
he_uniform.__name__ = "he_uniform"
he_normal = _named(2.0, "fan_in", "truncated_normal", """\
``variance_scaling(2.0, 'fan_in', 'truncated_normal')`` (alias ``kaiming_normal``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> init.he_normal()(zr.key(0), (3, 4)).shape
    (3, 4)
    """)
he_normal.__name__ = "he_normal"
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _random_orthogonal(key, n, m, dtype):
    """JAX's ``random.orthogonal(key, n, (), dtype, m)``: QR of a normal matrix, columns
    signed by the diagonal of R."""
    z = _zr.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = _la.qr(z)
    d = jnp.diagonal(r)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return x.T if n < m else x


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None) -> Initializer:
    """A (semi-)orthogonal matrix along ``column_axis``, times ``scale`` (JAX's
    ``initializers.orthogonal``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> w = init.orthogonal()(zr.key(0), (3, 3))
    >>> bool(np.allclose(np.asarray(w) @ np.asarray(w).T, np.eye(3)))
    True
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dt = _float_dtype(dtype, "orthogonal")
        if len(shape) < 2:
            raise errors.ZeraxValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dt)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = _random_orthogonal(key, n_rows, n_cols, dt)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return _scalar(scale, dt) * q
    return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None) -> Initializer:
    """A convolution kernel (3-5 d) that is zero except an orthogonal matrix at the centre
    tap (JAX's ``initializers.delta_orthogonal``; needs ``shape[-1] >= shape[-2]``).

    >>> import zerax.nn.initializers as init, zerax.random as zr
    >>> w = init.delta_orthogonal()(zr.key(0), (3, 2, 2))
    >>> float(abs(w[0]).sum()), w.shape
    (0.0, (3, 2, 2))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        dt = _float_dtype(dtype, "delta_orthogonal")
        if len(shape) not in (3, 4, 5):
            raise errors.ZeraxValueError(
                "delta orthogonal initializer requires a 3D, 4D or 5D shape")
        if shape[-1] < shape[-2]:
            raise errors.ZeraxValueError("delta_orthogonal: fan_in (shape[-2]) must be less "
                                         "than or equal to fan_out (shape[-1])")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        w = jnp.zeros(shape, dt)
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return w.at[centre].set(ortho)
    return init
