"""NumPy's ``numpy.fft`` on zerax values (the ``zerax.numpy.fft`` namespace, JAX's signatures).

Every transform is one ``fft`` primitive (``ops/fft.py``) over the trailing axes: the
requested axes are moved to the end and back, the input is cropped or zero-padded to
``n`` / ``s``, and ``norm`` (``"backward"``, the default, ``"ortho"`` or ``"forward"``)
scales the result.  Values and dtypes are NumPy 2's (float32 input gives complex64,
integers compute in float64); unlike NumPy, repeated ``axes`` are refused (as JAX does).
``hfft``/``ihfft`` are an IRFFT of the conjugate and a conjugated RFFT.  The frequency
helpers (``fftfreq``, ``rfftfreq``) and ``fftshift``/``ifftshift`` are compositions.
"""

from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..ops import elementwise as ew
from ..ops.fft import fft as _lax_fft
from ..ops.slicing import pad as _lax_pad
from ._util import check_arg, normalize_axis
from .creation import asarray
from .shape_ops import moveaxis, roll
from .ufuncs import conjugate, true_divide

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _norm_factor(func_name: str, lengths, norm) -> float:
    """The scale ``norm`` puts on the primitive's result (whose inverses carry 1/n)."""
    if norm is None or norm == "backward":
        return 1.0
    n = math.prod(lengths)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    if norm == "forward":
        return float(n) if inverse else 1.0 / n
    raise errors.ZeraxValueError(
        f"zerax.numpy.fft.{func_name}: invalid norm {norm!r}; use one of {_NORMS} (or None)")


def _scale(x, factor):
    if factor == 1.0:
        return x
    return ew.mul(x, np.asarray(factor, x.dtype))


def _resize_trailing(arr, sizes):
    """Crop or zero-pad the trailing ``len(sizes)`` axes of ``arr`` to ``sizes``."""
    k = len(sizes)
    lead = len(arr.shape) - k
    config = [(0, 0, 0)] * lead + [(0, int(n) - arr.shape[lead + i], 0)
                                   for i, n in enumerate(sizes)]
    if all(hi == 0 for _, hi, _ in config):
        return arr
    return _lax_pad(arr, np.zeros((), arr.dtype), config)


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full = f"zerax.numpy.fft.{func_name}"
    arr = asarray(check_arg(a, full))
    if fft_type == "RFFT" and arr.dtype.kind == "c":
        raise errors.ZeraxTypeError(f"{full}: the input must be real (got {arr.dtype.name}); "
                                    "use fft/fftn for complex input")
    if s is not None:
        try:
            s = tuple(operator.index(n) for n in s)
        except TypeError:
            raise errors.ZeraxTypeError(f"{full}: s (or n) must be integers, got {s!r}") \
                from None
    if s is not None and axes is not None and len(s) != len(axes):
        raise errors.ZeraxValueError(f"{full}: s {s} and axes {tuple(axes)} have different "
                                     "lengths")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
        if s is not None and len(s) > arr.ndim:
            raise errors.ShapeError(f"{full}: s {s} has more entries than the input has "
                                    f"axes ({arr.ndim})")
    axes = tuple(normalize_axis(ax, arr.ndim, full) for ax in axes)
    if len(axes) != len(set(axes)):
        raise errors.ZeraxValueError(f"{full}: repeated axes {axes} are not supported")
    if not axes:
        return arr.astype(_result_dtype(fft_type, arr.dtype))
    k = len(axes)
    trailing = tuple(range(arr.ndim - k, arr.ndim))
    if orig_axes is not None and axes != trailing:
        arr = moveaxis(arr, axes, trailing)
    shape = tuple(arr.shape)
    if s is None:
        if fft_type == "IRFFT":
            s = tuple(shape[-k:-1]) + (2 * (shape[-1] - 1),)
        else:
            s = tuple(shape[-k:])
    if any(n < 1 for n in s):
        raise errors.ZeraxValueError(
            f"{full}: invalid number of FFT data points {s} (each must be >= 1; for irfft "
            "the last axis needs at least 2 input points when n is not given)")
    in_sizes = list(s)
    if fft_type == "IRFFT":
        in_sizes[-1] = s[-1] // 2 + 1
    arr = _resize_trailing(arr, in_sizes)
    out = _lax_fft(arr, fft_type, s)
    out = _scale(out, _norm_factor(func_name, s, norm))
    if orig_axes is not None and axes != trailing:
        out = moveaxis(out, trailing, axes)
    return out


def _result_dtype(fft_type, dtype):
    dtype = np.dtype(dtype)
    # (with x64 off, integers transform in float32/complex64, as every default)
    single = dtype in (np.float16, np.float32, np.complex64) or not dtypes.x64_enabled()
    if fft_type == "IRFFT":
        return np.dtype(np.float32 if single else np.float64)
    if fft_type == "RFFT":
        return np.dtype(np.complex64 if single else np.complex128)
    return np.dtype(np.complex64 if single else np.complex128)


def _axis_1d(func_name, axis):
    if isinstance(axis, (list, tuple)):
        raise errors.ZeraxTypeError(f"zerax.numpy.fft.{func_name}: axis must be an integer, "
                                    f"got {axis!r} (use the n-dimensional functions)")
    return [axis]


def _core_1d(func_name, fft_type, a, n, axis, norm):
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     _axis_1d(func_name, axis), norm)


def _core_2d(func_name, fft_type, a, s, axes, norm):
    if s is not None and len(s) != 2:
        raise errors.ZeraxValueError(f"zerax.numpy.fft.{func_name}: s must have 2 entries, "
                                     f"got {s!r}")
    if len(axes) != 2:
        raise errors.ZeraxValueError(f"zerax.numpy.fft.{func_name}: axes must have 2 entries, "
                                     f"got {axes!r}")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The one-dimensional discrete Fourier transform along ``axis`` (``numpy.fft.fft``).

    >>> import zerax.numpy as znp
    >>> znp.fft.fft(znp.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex128)
    """
    return _core_1d("fft", "FFT", a, n, axis, norm)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``fft`` (``numpy.fft.ifft``).

    >>> import zerax.numpy as znp
    >>> znp.fft.ifft(znp.array([4.0, 0.0, 0.0, 0.0]))
    Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex128)
    """
    return _core_1d("ifft", "IFFT", a, n, axis, norm)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The FFT of real input: the ``n // 2 + 1`` non-negative frequencies.

    >>> import zerax.numpy as znp
    >>> znp.fft.rfft(znp.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
    """
    return _core_1d("rfft", "RFFT", a, n, axis, norm)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``rfft``: ``n`` (default ``2 * (m - 1)``) real values.

    >>> import zerax.numpy as znp
    >>> znp.fft.irfft(znp.array([10.0, -2 + 2j, -2.0]))
    Array([1., 2., 3., 4.], dtype=float64)
    """
    return _core_1d("irfft", "IRFFT", a, n, axis, norm)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The FFT of a signal with Hermitian symmetry (given by its first half): real output.

    >>> import zerax.numpy as znp
    >>> znp.fft.hfft(znp.array([1.0, 2.0, 3.0]))
    Array([ 8., -2.,  0., -2.], dtype=float64)
    """
    arr = asarray(check_arg(a, "zerax.numpy.fft.hfft"))
    conj_a = conjugate(arr) if arr.dtype.kind == "c" else arr
    _axis_1d("hfft", axis)
    nn = 2 * (arr.shape[normalize_axis(axis, arr.ndim, "hfft")] - 1) if n is None else n
    out = _core_1d("hfft", "IRFFT", conj_a, n, axis, norm)
    return _scale(out, float(nn))


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``hfft``: the Hermitian half-spectrum of a real signal.

    >>> import zerax.numpy as znp
    >>> znp.fft.ihfft(znp.array([8.0, -2.0, 0.0, -2.0])).real
    Array([1., 2., 3.], dtype=float64)
    """
    arr = asarray(check_arg(a, "zerax.numpy.fft.ihfft"))
    _axis_1d("ihfft", axis)
    nn = arr.shape[normalize_axis(axis, arr.ndim, "ihfft")] if n is None else n
    out = _core_1d("ihfft", "RFFT", arr, n, axis, norm)
    return _scale(conjugate(out), 1.0 / nn)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
    """The two-dimensional FFT over ``axes`` (``numpy.fft.fft2``).

    >>> import zerax.numpy as znp
    >>> znp.fft.fft2(znp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex128)
    """
    return _core_2d("fft2", "FFT", a, s, axes, norm)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """The inverse of ``fft2``.

    >>> import zerax.numpy as znp
    >>> znp.fft.ifft2(znp.array([[4.0, 0.0], [0.0, 0.0]])).real
    Array([[1., 1.],
           [1., 1.]], dtype=float64)
    """
    return _core_2d("ifft2", "IFFT", a, s, axes, norm)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """The two-dimensional FFT of real input (the last axis halved).

    >>> import zerax.numpy as znp
    >>> znp.fft.rfft2(znp.ones((2, 2))).shape
    (2, 2)
    """
    return _core_2d("rfft2", "RFFT", a, s, axes, norm)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
    """The inverse of ``rfft2``.

    >>> import zerax.numpy as znp
    >>> znp.fft.irfft2(znp.fft.rfft2(znp.ones((2, 4))))
    Array([[1., 1., 1., 1.],
           [1., 1., 1., 1.]], dtype=float64)
    """
    return _core_2d("irfft2", "IRFFT", a, s, axes, norm)


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """The n-dimensional FFT over ``axes`` (default: all, or the last ``len(s)``).

    >>> import zerax.numpy as znp
    >>> znp.fft.fftn(znp.ones((2, 2, 2)))[0, 0, 0]
    Array(8.+0.j, dtype=complex128)
    """
    return _fft_core("fftn", "FFT", a, s, axes, norm)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of ``fftn``.

    >>> import zerax.numpy as znp
    >>> znp.fft.ifftn(znp.fft.fftn(znp.ones((2, 3)))).real
    Array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float64)
    """
    return _fft_core("ifftn", "IFFT", a, s, axes, norm)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The n-dimensional FFT of real input (the last transformed axis halved).

    >>> import zerax.numpy as znp
    >>> znp.fft.rfftn(znp.ones((2, 3, 4))).shape
    (2, 3, 3)
    """
    return _fft_core("rfftn", "RFFT", a, s, axes, norm)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
    """The inverse of ``rfftn`` (``s`` gives the real output's sizes).

    >>> import zerax.numpy as znp
    >>> znp.fft.irfftn(znp.fft.rfftn(znp.ones((2, 3))), s=(2, 3))
    Array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float64)
    """
    return _fft_core("irfftn", "IRFFT", a, s, axes, norm)


def _freq_dtype(dtype, fname):
    dtype = dtypes.default_float() if dtype is None else \
        dtypes.requested(dtype, f"zerax.numpy.fft.{fname}")
    if dtype_kind(dtype) not in "fc":
        raise errors.ZeraxTypeError(f"zerax.numpy.fft.{fname}: dtype must be inexact, got "
                                    f"{dtype.name}")
    return dtype


def _check_n(n, fname):
    if isinstance(n, (list, tuple)):
        raise errors.ZeraxTypeError(f"zerax.numpy.fft.{fname}: n must be an integer, got "
                                    f"{n!r}")
    n = operator.index(n)
    if n < 1:
        raise errors.ZeraxValueError(f"zerax.numpy.fft.{fname}: n must be positive, got {n}")
    return n


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``.

    >>> import zerax.numpy as znp
    >>> znp.fft.fftfreq(4, d=0.5)
    Array([ 0. ,  0.5, -1. , -0.5], dtype=float64)
    """
    n = _check_n(n, "fftfreq")
    dtype = _freq_dtype(dtype, "fftfreq")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return true_divide(asarray(k.astype(dtype)), asarray(asarray(d) * n, dtype=dtype))


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies of an ``n``-point ``rfft``.

    >>> import zerax.numpy as znp
    >>> znp.fft.rfftfreq(4, d=0.5)
    Array([0. , 0.5, 1. ], dtype=float64)
    """
    n = _check_n(n, "rfftfreq")
    dtype = _freq_dtype(dtype, "rfftfreq")
    k = np.arange(0, n // 2 + 1)
    return true_divide(asarray(k.astype(dtype)), asarray(asarray(d) * n, dtype=dtype))


def _shift(x, axes, sign, fname):
    x = asarray(check_arg(x, f"zerax.numpy.fft.{fname}"))
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(ax, x.ndim, fname) for ax in axes)
    if not axes:
        return x
    return roll(x, tuple(sign * (x.shape[ax] // 2) for ax in axes), axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre of the spectrum (all axes by default).

    >>> import zerax.numpy as znp
    >>> znp.fft.fftshift(znp.fft.fftfreq(5))
    Array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float64)
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``.

    >>> import zerax.numpy as znp
    >>> znp.fft.ifftshift(znp.array([-2, -1, 0, 1, 2]))
    Array([ 0,  1,  2, -2, -1], dtype=int64)
    """
    return _shift(x, axes, -1, "ifftshift")
