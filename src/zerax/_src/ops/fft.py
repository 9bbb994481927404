"""The discrete Fourier transform primitive ``fft`` (JAX's ``lax.fft``) with every rule.

One primitive, ``fft_p``, transforms the trailing ``len(fft_lengths)`` axes of its operand;
``fft_type`` (a string, one of ``"FFT"``, ``"IFFT"``, ``"RFFT"``, ``"IRFFT"``) says which
transform, with XLA's (and JAX's) conventions: ``IFFT`` and ``IRFFT`` include the ``1/n``
normalisation, ``RFFT`` keeps the ``n // 2 + 1`` non-negative frequencies of the last axis,
``IRFFT`` takes those and returns ``fft_lengths`` real values.  Dtypes are NumPy 2's:
float64 <-> complex128 and float32 <-> complex64.

The transform is linear, so its JVP is itself.  Its transposes are JAX's: FFT and IFFT
are symmetric matrices (their own transposes); RFFT transposes to the real part of an FFT
of the cotangent zero-padded to full length; IRFFT to the conjugate of a weighted RFFT.
Batching moves the batch axis to the front.  Under ``jit`` the transform is a call of
its NumPy implementation (pocketfft) between compiled kernels, as the LAPACK-backed
decompositions are (``backends/lowering/``'s host steps).

``fft`` here is ``zerax.lax.fft``: it converts its operand as JAX's does (RFFT to a
floating dtype, the others to complex) and accepts ``FftType`` or its name.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.api_util import as_input
from ..core.core import Primitive, ShapedArray, Tracer, bind
from ._factory import deflinear
from . import elementwise as ew
from .shape import broadcast_in_dim, transpose
from .slicing import pad
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """The kind of transform (JAX's ``lax.FftType``)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = Primitive("fft")


def _complex_of(dtype) -> np.dtype:
    return np.dtype(np.complex64) if np.dtype(dtype) == np.float32 else \
        np.dtype(np.complex128)


def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float32) if np.dtype(dtype) == np.complex64 else np.dtype(np.float64)


def _fft_abstract(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    shape, dtype = tuple(x.shape), np.dtype(x.dtype)
    if fft_type not in _TYPES:
        raise errors.ZeraxValueError(f"fft: unknown fft_type {fft_type!r}; use one of {_TYPES}")
    if k == 0 or k > len(shape):
        raise errors.ShapeError(
            f"fft: fft_lengths {fft_lengths} must name between 1 and {len(shape)} trailing "
            f"axes of the operand of shape {shape}")
    lengths = tuple(fft_lengths)
    if fft_type == "RFFT":
        if dtype not in (np.float32, np.float64):
            raise errors.ZeraxTypeError(f"fft: RFFT input must be float32 or float64, got "
                                        f"{dtype.name}")
        if shape[-k:] != lengths:
            raise errors.ShapeError(f"fft: RFFT input shape {shape} must end in fft_lengths "
                                    f"{lengths}")
        return ShapedArray(shape[:-k] + lengths[:-1] + (lengths[-1] // 2 + 1,),
                           _complex_of(dtype))
    if dtype.kind != "c":
        raise errors.ZeraxTypeError(f"fft: {fft_type} input must be complex64 or complex128, "
                                    f"got {dtype.name}")
    if fft_type == "IRFFT":
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if shape[-k:] != want:
            raise errors.ShapeError(
                f"fft: IRFFT input shape {shape} must end in {want} (fft_lengths {lengths}, "
                "the last one halved plus one)")
        return ShapedArray(shape[:-k] + lengths, _real_of(dtype))
    if shape[-k:] != lengths:
        raise errors.ShapeError(f"fft: {fft_type} input shape {shape} must end in fft_lengths "
                                f"{lengths}")
    return ShapedArray(shape, dtype)


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    out_aval = _fft_abstract(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                             fft_lengths=fft_lengths)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if x.size == 0 or math.prod(out_aval.shape) == 0:
        return np.zeros(out_aval.shape, out_aval.dtype)   # pocketfft refuses length 0
    if fft_type == "FFT":
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == "IFFT":
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == "RFFT":
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=tuple(fft_lengths), axes=axes)
    return np.ascontiguousarray(out, dtype=out_aval.dtype)


def _bind_fft(x, fft_type, fft_lengths):
    return bind(fft_p, x, fft_type=fft_type, fft_lengths=tuple(fft_lengths))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type in ("FFT", "IFFT"):
        return [_bind_fft(ct, fft_type, fft_lengths)]
    if fft_type == "RFFT":
        # rfft(x) = fft(complex(x))[..., :n//2+1]: pad the cotangent back to n, FFT it
        # (symmetric), and take the real part (the transpose of the real-to-complex cast).
        n = fft_lengths[-1]
        config = [(0, 0, 0)] * (len(ct.shape) - 1) + [(0, n - ct.shape[-1], 0)]
        full = pad(ct, np.zeros((), ct.dtype), config)
        return [ew.real(_bind_fft(full, "FFT", fft_lengths))]
    # IRFFT (JAX's rule): a weighted RFFT of the cotangent, conjugated.
    y = _bind_fft(ct, "RFFT", fft_lengths)
    weights = _irfft_weights(fft_lengths, y.shape[-1], y.dtype)
    w = broadcast_in_dim(weights, tuple(y.shape), (len(y.shape) - 1,))
    return [ew.conj(ew.mul(y, w))]


def _fft_vjp(ct, ans, x, *, fft_type, fft_lengths):
    """The transpose above on NumPy values (the eager tape's rule)."""
    ct = np.asarray(ct)
    if fft_type in ("FFT", "IFFT"):
        return _fft_impl(ct, fft_type=fft_type, fft_lengths=fft_lengths)
    if fft_type == "RFFT":
        n = fft_lengths[-1]
        full = np.zeros(ct.shape[:-1] + (n,), ct.dtype)
        full[..., :ct.shape[-1]] = ct
        return np.real(_fft_impl(full, fft_type="FFT", fft_lengths=fft_lengths)).copy()
    y = _fft_impl(ct, fft_type="RFFT", fft_lengths=fft_lengths)
    return np.conj(y * _irfft_weights(fft_lengths, y.shape[-1], y.dtype))


def _irfft_weights(fft_lengths, m, dtype):
    """1 for the zero (and an even length's Nyquist) frequency, 2 for the others, over n."""
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if fft_lengths[-1] % 2 == 0:
        weights[-1] = 1.0
    return np.asarray(weights / math.prod(fft_lengths), dtype)


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d != 0:
        perm = (d,) + tuple(i for i in range(len(x.shape)) if i != d)
        x = transpose(x, perm)
    return _bind_fft(x, fft_type, fft_lengths), 0


fft_p.impl = _fft_impl
fft_p.abstract_eval = _fft_abstract
deflinear(fft_p, _fft_transpose)
vjp_rules[fft_p] = (_fft_vjp,)
batch_rules[fft_p] = _fft_batch


def _type_name(fft_type) -> str:
    if isinstance(fft_type, FftType):
        return fft_type.name
    if isinstance(fft_type, str) and fft_type.upper() in _TYPES:
        return fft_type.upper()
    raise errors.ZeraxValueError(
        f"lax.fft: unknown fft_type {fft_type!r}; use lax.FftType.FFT, IFFT, RFFT or IRFFT "
        "(or their names)")


def fft(x, fft_type, fft_lengths):
    """The FFT of ``x`` over its trailing ``len(fft_lengths)`` axes (JAX's ``lax.fft``).

    >>> import numpy as np
    >>> from zerax import lax
    >>> lax.fft(np.array([1.0, 2.0, 3.0, 4.0]), lax.FftType.RFFT, (4,))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
    """
    kind = _type_name(fft_type)
    if not isinstance(x, Tracer) and not hasattr(x, "_value"):
        x = as_input(x, "lax.fft operand")
    dtype = np.dtype(x.dtype)
    if kind == "RFFT":
        if dtype.kind == "c":
            raise errors.ZeraxTypeError("lax.fft: only real valued inputs are supported for "
                                        "RFFT; use FFT for complex input")
        if dtype not in (np.float32, np.float64):     # float16 computes in float32
            x = ew.convert_element_type(x, np.float32 if dtype == np.float16 else
                                        dtypes.default_float())
    elif dtype not in (np.complex64, np.complex128):
        single = dtype in (np.float16, np.float32) or not dtypes.x64_enabled()
        x = ew.convert_element_type(x, np.complex64 if single else np.complex128)
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:
        return x
    return _bind_fft(x, kind, fft_lengths)
