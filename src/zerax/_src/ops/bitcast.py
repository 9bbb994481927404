"""The bitcast primitive: ``bitcast_convert_type_p`` reinterprets each element's bits.

Declared once with its semantics: the NumPy implementation (``ndarray.view``), the
shape/dtype rule, JVP (not differentiable: a bit pattern has no derivative) and batching
(elementwise); its compiled form (one machine ``bitcast`` per element, so it fuses into
the surrounding elementwise loop) is in each backend's ``lower_elementwise.py``.
``zerax.random`` uses it to turn random bits into floats in [1, 2), as JAX's
``_uniform`` does.  As in JAX's ``lax.bitcast_convert_type``, an input of a wider dtype
gains a trailing axis (its bits split into ``itemsize_in // itemsize_out`` pieces, least
significant first on a little-endian machine) and an input of a narrower dtype loses
its trailing axis, which must be of length ``itemsize_out // itemsize_in``; those
width-changing forms are compositions (reshape, then the same-width primitive on
NumPy's side) so the primitive itself stays elementwise.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core.api_util import as_input
from ..core.core import Tracer, bind
from ._factory import elementwise, not_differentiable
from . import elementwise as ew
from . import shape as sh
from . import slicing

_KINDS = "biuf"


def _check(x_dtype, new_dtype):
    a, b = np.dtype(x_dtype), np.dtype(new_dtype)
    for d, what in ((a, "operand"), (b, "new_dtype")):
        if dtype_kind(d) not in _KINDS or d == np.bool_:
            raise errors.ZeraxTypeError(
                f"bitcast_convert_type: the {what} dtype {d.name} is not supported "
                "(use an integer or floating dtype; complex values: bitcast their "
                "real and imaginary parts).")
    return a, b


def _impl(x, *, new_dtype):
    x = np.asarray(x)
    if not x.flags.c_contiguous:  # (ascontiguousarray would make a 0-d array 1-d)
        x = x.copy()
    return x.view(new_dtype)


def _dtype_rule(a, *, new_dtype):
    src, dst = _check(a.dtype, new_dtype)
    if src.itemsize != dst.itemsize:
        raise errors.ZeraxTypeError(
            f"bitcast_convert_type_p: operand {src.name} and new_dtype {dst.name} differ "
            "in width (lax.bitcast_convert_type reshapes those first).")
    return dst


bitcast_convert_type_p = not_differentiable(
    elementwise("bitcast_convert_type", _impl, 1, dtype_rule=_dtype_rule),
    "a reinterpretation of bits has no derivative")


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (JAX's
    ``lax.bitcast_convert_type``).

    Same widths keep the shape; a wider operand gains a trailing axis of
    ``itemsize_in // itemsize_out`` elements; a narrower one loses its trailing axis,
    whose length must be ``itemsize_out // itemsize_in``.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.bitcast_convert_type(np.float32(1.0), np.uint32)
    Array(1065353216, dtype=uint32)
    >>> lax.bitcast_convert_type(np.uint64(2**32 + 3), np.uint32)
    Array([3, 1], dtype=uint32)
    """
    if not isinstance(operand, Tracer):
        operand = as_input(operand, "bitcast_convert_type operand")
    src, dst = _check(operand.dtype, new_dtype)
    if src == dst:
        return operand
    if src.itemsize == dst.itemsize:
        return bind(bitcast_convert_type_p, operand, new_dtype=dst)
    shape = tuple(operand.shape)
    if src.itemsize > dst.itemsize:
        # Split each wide element: view as unsigned pieces through an integer of the
        # source width, then shift out each piece (little-endian order, as XLA).
        n = src.itemsize // dst.itemsize
        wide_u = np.dtype(f"u{src.itemsize}")
        narrow_u = np.dtype(f"u{dst.itemsize}")
        u = bind(bitcast_convert_type_p, operand, new_dtype=wide_u) \
            if src != wide_u else operand
        pieces = []
        for k in range(n):
            shifted = u if k == 0 else ew.shift_right(
                u, np.full(shape, dst.itemsize * 8 * k, wide_u) if shape else
                np.array(dst.itemsize * 8 * k, wide_u))
            piece = ew.convert_element_type(shifted, narrow_u)
            if narrow_u != dst:
                piece = bind(bitcast_convert_type_p, piece, new_dtype=dst)
            pieces.append(sh.reshape(piece, shape + (1,)))
        return sh.concatenate(pieces, len(shape))
    n = dst.itemsize // src.itemsize
    if not shape or shape[-1] != n:
        raise errors.ShapeError(
            f"bitcast_convert_type: an operand of {src.name} becomes {dst.name} by "
            f"merging its last axis, which must have length {n}; got shape {shape}.")
    narrow_u = np.dtype(f"u{src.itemsize}")
    wide_u = np.dtype(f"u{dst.itemsize}")
    u = bind(bitcast_convert_type_p, operand, new_dtype=narrow_u) \
        if src != narrow_u else operand
    out = None
    for k in range(n):
        piece = sh.reshape(slicing.slice_p_bind(u, (0,) * (len(shape) - 1) + (k,),
                                           shape[:-1] + (k + 1,)), shape[:-1])
        piece = ew.convert_element_type(piece, wide_u)
        if k:
            piece = ew.shift_left(piece, np.full(shape[:-1], src.itemsize * 8 * k, wide_u))
        out = piece if out is None else ew.bitwise_or(out, piece)
    if wide_u != dst:
        out = bind(bitcast_convert_type_p, out, new_dtype=dst)
    return out
