"""`zerax.scipy.signal`: SciPy's (and JAX's) convolutions and ``detrend`` on zerax values.

``convolve``/``correlate`` (any number of dimensions) and ``convolve2d``/``correlate2d``
compute directly with ``lax.conv_general_dilated`` (exact for integers, as SciPy's direct
method); ``method="fft"`` and ``fftconvolve`` multiply FFTs (``zerax.numpy.fft``).
Modes ``"full"``, ``"same"`` and ``"valid"`` as SciPy.  Everything differentiates,
vectorises and compiles.

>>> from zerax.scipy import signal
>>> signal.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
Array([0. , 1. , 2.5, 4. , 1.5], dtype=float64)
"""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .... import errors
from ...lax import windowed as _win
from ...base.dtypes import kind as dtype_kind

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

_MODES = ("full", "same", "valid")


def _check_mode(fname, mode):
    if mode not in _MODES:
        raise errors.ZeraxValueError(f"zerax.scipy.signal.{fname}: mode must be one of "
                                     f"{_MODES}, got {mode!r}")


def _pair(fname, in1, in2):
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise errors.ShapeError(f"zerax.scipy.signal.{fname}: in1 and in2 must have the same "
                                f"number of dimensions, got {in1.ndim} and {in2.ndim}")
    if in1.size == 0 or in2.size == 0:
        raise errors.ShapeError(f"zerax.scipy.signal.{fname}: in1 and in2 must not be empty")
    dtype = np.result_type(in1, in2)
    return in1.astype(dtype), in2.astype(dtype)


def _convolve_nd(fname, in1, in2, mode, precision):
    _check_mode(fname, mode)
    if in1.ndim == 0:
        return in1 * in2
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise errors.ShapeError(f"zerax.scipy.signal.{fname}: one input must be smaller than "
                                f"the other in every dimension, got shapes {in1.shape} and "
                                f"{in2.shape}")
    shape_o = in2.shape
    if swap and not no_swap:
        in1, in2 = in2, in1
    shape = in2.shape
    kernel = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = _win.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * in1.ndim,
                                   padding, precision=precision)
    return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-dimensional convolution of ``in1`` and ``in2`` (``scipy.signal.convolve``).

    >>> from zerax.scipy import signal
    >>> signal.convolve([1, 2, 3], [1, 1], mode="same")
    Array([1, 3, 5], dtype=int64)
    """
    if method not in ("auto", "direct", "fft"):
        raise errors.ZeraxValueError("zerax.scipy.signal.convolve: method must be 'auto', "
                                     f"'direct' or 'fft', got {method!r}")
    in1, in2 = _pair("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-dimensional cross-correlation (``scipy.signal.correlate``):
    ``z[k] = sum_l in1[l] * conj(in2[l - k])``.

    >>> from zerax.scipy import signal
    >>> signal.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float64)
    """
    if method not in ("auto", "direct", "fft"):
        raise errors.ZeraxValueError("zerax.scipy.signal.correlate: method must be 'auto', "
                                     f"'direct' or 'fft', got {method!r}")
    in1, in2 = _pair("correlate", in1, in2)
    flipped = jnp.flip(jnp.conj(in2) if in2.dtype.kind == "c" else in2)
    if method == "fft":
        return fftconvolve(in1, flipped, mode=mode)
    _check_mode("correlate", mode)
    if mode == "valid" and all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape)) and \
            in1.shape != in2.shape:
        # SciPy swaps and conjugates: correlate(a, b, 'valid') = conj(flip(correlate(b, a)))
        out = _convolve_nd("correlate", in2, jnp.flip(jnp.conj(in1) if in1.dtype.kind == "c"
                                                      else in1), mode, precision)
        out = jnp.flip(out)
        return jnp.conj(out) if out.dtype.kind == "c" else out
    return _convolve_nd("correlate", in1, flipped, mode, precision)


def _check_2d(fname, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise errors.NotSupportedError(
            f"zerax.scipy.signal.{fname}: only boundary='fill' with fillvalue=0 is supported "
            "(as in JAX)")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise errors.ShapeError(f"zerax.scipy.signal.{fname}: in1 and in2 must be 2-D, got "
                                f"{jnp.ndim(in1)} and {jnp.ndim(in2)} dimensions")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """The 2-D convolution (``scipy.signal.convolve2d``; zero fill only).

    >>> import zerax.numpy as znp
    >>> from zerax.scipy import signal
    >>> signal.convolve2d(znp.ones((2, 2)), znp.ones((2, 2)))[1, 1]
    Array(4., dtype=float64)
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode=mode, method="direct", precision=precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """The 2-D cross-correlation (``scipy.signal.correlate2d``; zero fill only).

    >>> import zerax.numpy as znp
    >>> from zerax.scipy import signal
    >>> signal.correlate2d(znp.ones((2, 2)), znp.ones((2, 2)), mode="valid")
    Array([[4.]], dtype=float64)
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    if mode == "same":
        # SciPy centres correlate2d's 'same' output as a convolution's (for an even kernel
        # size it is one step off correlate's): flip, convolve with conj(in2), flip back.
        in1, in2 = _pair("correlate2d", in1, in2)
        conj2 = jnp.conj(in2) if in2.dtype.kind == "c" else in2
        return jnp.flip(_convolve_nd("correlate2d", jnp.flip(in1), conj2, mode, precision))
    return correlate(in1, in2, mode=mode, method="direct", precision=precision)


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """The N-dimensional convolution by FFTs over ``axes`` (``scipy.signal.fftconvolve``);
    the other axes must match and are treated elementwise.

    >>> from zerax.scipy import signal
    >>> signal.fftconvolve([1.0, 2.0, 3.0], [1.0, 1.0]).round(12)
    Array([1., 3., 5., 3.], dtype=float64)
    """
    _check_mode("fftconvolve", mode)
    in1, in2 = _pair("fftconvolve", in1, in2)
    if dtype_kind(in1.dtype) not in "fc":
        in1, in2 = in1.astype(float), in2.astype(float)
    ndim = in1.ndim
    if ndim == 0:
        return in1 * in2
    axes = tuple(range(ndim)) if axes is None else tuple(
        int(a) % ndim for a in (axes if isinstance(axes, (list, tuple)) else (axes,)))
    for i in range(ndim):
        if i not in axes and in1.shape[i] != in2.shape[i]:
            raise errors.ShapeError("zerax.scipy.signal.fftconvolve: in1 and in2 must match "
                                    f"along the axes not convolved, got {in1.shape} and "
                                    f"{in2.shape} with axes={axes}")
    if mode == "valid":
        no_swap = all(in1.shape[i] >= in2.shape[i] for i in axes)
        swap = all(in1.shape[i] <= in2.shape[i] for i in axes)
        if not (no_swap or swap):
            raise errors.ShapeError("zerax.scipy.signal.fftconvolve: for mode 'valid' one "
                                    "input must be at least as large as the other along "
                                    "every convolved axis")
        if swap and not no_swap:
            in1, in2 = in2, in1
    full = [in1.shape[i] + in2.shape[i] - 1 if i in axes else in1.shape[i]
            for i in range(ndim)]
    s = [full[i] for i in axes]
    if in1.dtype.kind == "c":
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, s, axes) * jnp.fft.fftn(in2, s, axes), s, axes)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, s, axes) * jnp.fft.rfftn(in2, s, axes), s,
                              axes)
    conv = conv.astype(in1.dtype)
    index = []
    for i in range(ndim):
        if i not in axes:
            index.append(slice(None))
        elif mode == "full":
            index.append(slice(0, full[i]))
        elif mode == "same":
            start = (full[i] - in1.shape[i]) // 2
            index.append(slice(start, start + in1.shape[i]))
        else:
            start = in2.shape[i] - 1
            index.append(slice(start, start + in1.shape[i] - in2.shape[i] + 1))
    return conv[tuple(index)]


def detrend(data, axis: int = -1, type: str = "linear", bp=0,  # noqa: A002 - SciPy's name
            overwrite_data=None):
    """``data`` less its least-squares line along ``axis`` (piecewise between the
    breakpoints ``bp``), or less its mean (``type="constant"``), as ``scipy.signal``.

    >>> from zerax.scipy import signal
    >>> signal.detrend([1.0, 2.0, 4.0]).round(6)
    Array([ 0.166667, -0.333333,  0.166667], dtype=float64)
    """
    if type not in ("linear", "l", "constant", "c"):
        raise errors.ZeraxValueError("zerax.scipy.signal.detrend: type must be 'linear' or "
                                     f"'constant', got {type!r}")
    x = jnp.asarray(data)
    if dtype_kind(x.dtype) not in "fc":
        x = x.astype(float)
    if type in ("constant", "c"):
        return x - jnp.mean(x, axis=axis, keepdims=True)
    moved = jnp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    cuts = sorted({0, n, *(int(b) for b in np.atleast_1d(np.asarray(bp)))})
    if cuts[0] < 0 or cuts[-1] > n:
        raise errors.ZeraxValueError(f"zerax.scipy.signal.detrend: breakpoints must lie in "
                                     f"[0, {n}], got {bp!r}")
    pieces = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        seg = moved[..., lo:hi]
        t = np.arange(hi - lo, dtype=np.float64)
        t = t - t.mean()
        denom = float(np.sum(t * t))
        mean = jnp.mean(seg, axis=-1, keepdims=True)
        if denom == 0.0:                         # one point: its line is itself
            pieces.append(seg - mean)
            continue
        slope = jnp.sum((seg - mean) * t, axis=-1, keepdims=True) / denom
        pieces.append(seg - mean - slope * t)
    out = jnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return jnp.moveaxis(out, -1, axis)
