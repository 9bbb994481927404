"""`zerax.numpy` bit functions: ``bitwise_count`` (population count), ``packbits`` and
``unpackbits``.

All are compositions of shifts, masks, reshapes and sums (no primitive of their own), so
they work under ``jit`` and ``vmap``; they take and give integers, so they have no
derivatives.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..ops import elementwise as ew
from ..ops import reduce as _red
from ..ops import shape as _sh
from ..ops.slicing import pad as _pad
from ..ops.slicing import slice_p_bind
from ._util import ensure_array, normalize_axis
from ..lax.lax import _popcount_unsigned

__all__ = ["bitwise_count", "packbits", "unpackbits"]

_U8 = np.dtype(np.uint8)


def bitwise_count(x, /):
    """The number of 1 bits in ``|x|``, as uint8 (``numpy.bitwise_count``).

    >>> import zerax.numpy as znp
    >>> znp.bitwise_count([0, 7, -1, 255])
    Array([0, 3, 1, 8], dtype=uint8)
    """
    x = ensure_array(x, "bitwise_count")
    dt = np.dtype(x.dtype)
    if dt.kind == "b":
        return ew.convert_element_type(x, _U8)
    if dt.kind not in "iu":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.bitwise_count takes integer or boolean input, got {dt} (NumPy "
            "refuses it too).")
    if dt.kind == "i":
        x = ew.convert_element_type(ew.bind(ew.abs_p, x), np.dtype(f"uint{dt.itemsize * 8}"))
    return ew.convert_element_type(_popcount_unsigned(x), _U8)


def _bit_axis(a, axis, fname):
    if axis is None:
        return _sh.reshape(a, (int(np.prod(a.shape, dtype=np.int64)),)), 0
    return a, normalize_axis(axis, a.ndim, fname)


def _shifts(bitorder, fname):
    if bitorder not in ("big", "little"):
        raise errors.ZeraxValueError(
            f"zerax.numpy.{fname}: bitorder must be 'big' or 'little', got {bitorder!r}")
    s = np.arange(8, dtype=_U8)
    return s[::-1].copy() if bitorder == "big" else s


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of each element into the bits of uint8s along ``axis`` (flattened
    if None), padding the end with zeros to a multiple of 8 (``numpy.packbits``).

    >>> import zerax.numpy as znp
    >>> znp.packbits([1, 0, 1, 1, 0, 0, 0, 0, 1])
    Array([176, 128], dtype=uint8)
    >>> znp.packbits([1, 0, 1], bitorder="little")
    Array([5], dtype=uint8)
    """
    a = ensure_array(a, "packbits")
    if np.dtype(a.dtype).kind not in "biu":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.packbits: expected an input array of integer or boolean data type, "
            f"got {np.dtype(a.dtype)}")
    shifts = _shifts(bitorder, "packbits")
    a, axis = _bit_axis(a, axis, "packbits")
    bits = ew.convert_element_type(ew.ne(a, np.zeros((), np.dtype(a.dtype))), _U8)
    n = bits.shape[axis]
    extra = -n % 8
    if extra:
        bits = _pad(bits, np.zeros((), _U8),
                    [(0, extra if d == axis else 0, 0) for d in range(bits.ndim)])
    shape = tuple(bits.shape)
    split = shape[:axis] + ((n + extra) // 8, 8) + shape[axis + 1:]
    bits = _sh.reshape(bits, split)
    w = _sh.broadcast_in_dim(shifts, split, (axis + 1,))
    return _red.reduce_sum(ew.shift_left(bits, w), (axis + 1,))


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack each uint8 into 8 bits (uint8 zeros and ones) along ``axis`` (flattened
    if None); ``count`` keeps that many bits (negative: drops that many from the end,
    more than there are: pads with zeros), as ``numpy.unpackbits``.

    >>> import zerax.numpy as znp
    >>> znp.unpackbits(znp.array([176], dtype=znp.uint8))
    Array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    >>> znp.unpackbits(znp.array([5], dtype=znp.uint8), count=3, bitorder="little")
    Array([1, 0, 1], dtype=uint8)
    """
    a = ensure_array(a, "unpackbits")
    if np.dtype(a.dtype) != _U8:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.unpackbits: expected an input array of unsigned byte data type "
            f"(uint8), got {np.dtype(a.dtype)}")
    shifts = _shifts(bitorder, "unpackbits")
    a, axis = _bit_axis(a, axis, "unpackbits")
    shape = tuple(a.shape)
    n = shape[axis]
    big = shape[:axis] + (n, 8) + shape[axis + 1:]
    x = _sh.broadcast_in_dim(a, big, tuple(d if d <= axis else d + 1 for d in range(a.ndim)))
    w = _sh.broadcast_in_dim(shifts, big, (axis + 1,))
    bits = ew.bitwise_and(ew.shift_right(x, w), np.ones((), _U8))
    bits = _sh.reshape(bits, shape[:axis] + (8 * n,) + shape[axis + 1:])
    if count is None:
        return bits
    count = int(count)
    if count < 0 and -count > 8 * n:
        raise errors.ZeraxValueError(
            f"zerax.numpy.unpackbits: -count ({-count}) is larger than the number of bits "
            f"({8 * n}) along the axis")
    keep = 8 * n + count if count < 0 else count
    if keep <= 8 * n:
        limits = list(bits.shape)
        limits[axis] = keep
        return slice_p_bind(bits, [0] * bits.ndim, limits)
    return _pad(bits, np.zeros((), _U8),
                [(0, keep - 8 * n if d == axis else 0, 0) for d in range(bits.ndim)])
