"""The discrete cosine transform (JAX's ``jax.scipy.fft``): ``dct``, ``idct``, ``dctn``,
``idctn``, type 2 only (as JAX), norms ``None``/``"backward"`` and ``"ortho"``.

Computed as JAX does, through one complex FFT of the even/odd-interleaved sequence
(Makhoul's algorithm) with a quarter-wave twiddle; the n-dimensional transforms apply
the 1-D one along each axis in turn.  Complex inputs transform their real and imaginary
parts; ``n``/``s`` zero-pad or truncate.  Differentiable, batched and compiled as the
FFT is.
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from ... import numpy as jnp
from ...base.dtypes import kind as dtype_kind

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(fname, type, norm):
    if type != 2:
        raise errors.NotSupportedError(f"zerax.scipy.fft.{fname}: only DCT type 2 is "
                                       "implemented (as in JAX).")
    if norm is not None and norm not in ("backward", "ortho"):
        raise errors.ZeraxValueError(f"zerax.scipy.fft.{fname}: norm={norm!r} is not "
                                     "implemented; use None, 'backward' or 'ortho'.")


def _take(x, axis, sl):
    idx = [slice(None)] * x.ndim
    idx[axis] = sl
    return x[tuple(idx)]


def _resize(x, n, axis):
    m = x.shape[axis]
    if n is None or n == m:
        return x
    if n < m:
        return _take(x, axis, slice(0, n))
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - m)
    return jnp.pad(x, pad)


def _along(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _ortho(out, axis):
    n = out.shape[axis]
    factor = np.full((n,), 2.0)
    factor[0] = 4.0
    return out / _along(jnp.asarray(np.sqrt(factor * n), dtype=out.dtype), axis, out.ndim)


def _w4(n, k, dtype):
    return jnp.exp(-0.5j * np.pi * k / n).astype(dtype)


def _real(x, fname):
    x = jnp.asarray(x)
    if dtype_kind(x.dtype) not in "fc":
        x = x.astype(float)
    return x


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 DCT along ``axis``: ``2 sum_j x_j cos(pi k (2j + 1) / 2N)``
    (``norm="ortho"``: the orthonormal scaling), SciPy's ``scipy.fft.dct``.

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.fft import dct
    >>> dct(znp.array([1.0, 2.0, 3.0])).round(6)
    Array([12.      , -3.464102, -0.      ], dtype=float64)
    """
    _check("dct", type, norm)
    x = _real(x, "dct")
    if x.dtype.kind == "c":
        return dct(x.real, type, n, axis, norm) + 1j * dct(x.imag, type, n, axis, norm)
    axis = axis % x.ndim
    x = _resize(x, n, axis)
    big_n = x.shape[axis]
    v = jnp.concatenate([_take(x, axis, slice(None, None, 2)),
                         jnp.flip(_take(x, axis, slice(1, None, 2)), axis=axis)], axis=axis)
    spec = jnp.fft.fft(v, axis=axis)
    k = _along(jnp.arange(big_n, dtype=spec.real.dtype), axis, x.ndim)
    out = 2 * (spec * _w4(big_n, k, spec.dtype)).real
    return _ortho(out, axis) if norm == "ortho" else out


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of `dct` (SciPy's ``scipy.fft.idct`` of type 2: a type-3 DCT with
    the matching scaling).

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.fft import dct, idct
    >>> idct(dct(znp.array([1.0, 2.0, 3.0]))).round(6)
    Array([1., 2., 3.], dtype=float64)
    """
    _check("idct", type, norm)
    x = _real(x, "idct")
    if x.dtype.kind == "c":
        return idct(x.real, type, n, axis, norm) + 1j * idct(x.imag, type, n, axis, norm)
    axis = axis % x.ndim
    x = _resize(x, n, axis)
    big_n = x.shape[axis]
    if norm is None or norm == "backward":
        x = _ortho(x, axis)
    x = _ortho(x, axis)
    k = _along(jnp.arange(big_n, dtype=x.dtype), axis, x.ndim)
    cdt = np.result_type(x.dtype, np.complex64)
    z = x.astype(cdt) / _w4(big_n, k, cdt) * (2 * big_n)
    y = jnp.fft.ifft(z, axis=axis).real
    half = math.ceil(big_n / 2)
    v0 = _take(y, axis, slice(None, half))
    v1 = jnp.flip(_take(y, axis, slice(half, None)), axis=axis)
    out = jnp.zeros(y.shape, dtype=y.dtype)
    idx0 = [slice(None)] * y.ndim
    idx1 = [slice(None)] * y.ndim
    idx0[axis], idx1[axis] = slice(None, None, 2), slice(1, None, 2)
    return out.at[tuple(idx0)].set(v0).at[tuple(idx1)].set(v1)


def _nd(fn, fname, x, type, s, axes, norm):
    _check(fname, type, norm)
    x = _real(x, fname)
    if s is not None:
        s = [int(s)] if np.ndim(s) == 0 else [int(v) for v in s]
        if len(s) > x.ndim:
            raise errors.ZeraxValueError(
                f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(a % x.ndim for a in (axes if np.ndim(axes) else [axes]))
    ns = list(s) if s is not None else [None] * len(axes)
    for a, n in zip(axes, ns):
        x = fn(x, type=2, n=n, axis=a, norm=norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT over several axes (default all), SciPy's ``scipy.fft.dctn``.

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.fft import dctn
    >>> dctn(znp.ones((2, 2)))
    Array([[16.,  0.],
           [ 0.,  0.]], dtype=float64)
    """
    return _nd(dct, "dctn", x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of `dctn` (SciPy's ``scipy.fft.idctn``).

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.fft import dctn, idctn
    >>> idctn(dctn(znp.ones((2, 2)), norm="ortho"), norm="ortho").round(6)
    Array([[1., 1.],
           [1., 1.]], dtype=float64)
    """
    return _nd(idct, "idctn", x, type, s, axes, norm)
