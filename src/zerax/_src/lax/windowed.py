"""`zerax.lax` windowed operations: convolutions (``conv_general_dilated`` and its
wrappers) and ``reduce_window``, with JAX's signatures and semantics.

Neither is a primitive.  Both pad the operand (``lax.pad`` does the lhs/base dilation
with interior padding) and stack its windows with the ``window_patches`` primitive
(im2col, ``ops/windows.py``); a convolution then contracts the stacked windows with the
kernel in one ``dot_general``, and ``reduce_window`` reduces them with ``lax.reduce``.
Every step is a primitive with all its rules, so these functions work under ``grad``
(of any order), ``vmap`` and ``jit`` with nothing of their own.  The stacked windows take
``prod(window)`` times the output's memory, the price of the single BLAS contraction.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ... import errors
from ..core import tree
from ..core.api_util import as_input
from ..core.core import concrete_value, is_concrete
from ..core.array import Array
from ..ops import elementwise as ew
from ..ops import misc
from ..ops import reduce as red
from ..ops import shape as sh
from ..ops.linalg import dot_general
from ..ops.slicing import pad as _pad
from ..ops.windows import window_out_shape, window_patches
from .control_flow import scan
from .lax import _MONOIDS, _coerce, reduce_and, reduce_or
from ..base.dtypes import kind as dtype_kind

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers",
           "conv_general_dilated", "conv_general_dilated_patches", "conv_general_permutations", "conv_transpose",
           "conv_with_general_padding", "padtype_to_pads", "reduce_window",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple",
           "reduce_window_shape_tuple"]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch/feature/spatial axes are, as in JAX: ``lhs_spec`` is (batch,
    feature, spatial...), ``rhs_spec`` (out feature, in feature, spatial...) and
    ``out_spec`` (batch, feature, spatial...), each a tuple of axis indices."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _ints(seq, n, what, fname):
    try:
        out = tuple(int(v) for v in seq)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"lax.{fname}: {what} must be a sequence of {n} integers, got {seq!r}") from None
    if len(out) != n:
        raise errors.ShapeError(
            f"lax.{fname}: {what} must have {n} entries (one per spatial/window dimension), "
            f"got {len(out)}: {seq!r}")
    return out


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'`` as explicit ``(low, high)`` pairs
    (JAX's rule: 'SAME' gives ``ceil(n / stride)`` outputs, an odd pad's extra element
    goes at the end; 'SAME_LOWER' puts it at the start).

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    kind = str(padding).upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise errors.ZeraxValueError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
            f"got {padding!r}.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(k) - int(n), 0)
        lo = total // 2 if kind == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return pads


def conv_general_permutations(dimension_numbers):
    """Axis permutations for a ``(lhs, rhs, out)`` triple of layout strings such as
    ``('NHWC', 'HWIO', 'NHWC')``; spatial axes are ordered as in the rhs string.

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise errors.ZeraxTypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and "
                f"'{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise errors.ZeraxTypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, "
                f"got {spec}.")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise errors.ZeraxTypeError(
            "convolution dimension_numbers elements must each have the same set of spatial "
            f"characters, got {dimension_numbers}.")

    def perm(spec, pair):
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                         key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, a triple of layout strings, or already a
    `ConvDimensionNumbers`) in canonical form.

    >>> conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise errors.ZeraxTypeError(
            f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and "
            f"{len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)) and len(dimension_numbers) == 3:
        if all(isinstance(s, str) for s in dimension_numbers):
            for i, s in enumerate(dimension_numbers):
                if len(s) != len(lhs_shape):
                    raise errors.ZeraxTypeError(
                        f"convolution dimension_numbers[{i}] must have len equal to the ndim "
                        f"of lhs and rhs, got {len(s)} for lhs and rhs shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
            return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
        if all(isinstance(s, (list, tuple)) for s in dimension_numbers):
            return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    raise errors.ZeraxTypeError(
        "convolution dimension_numbers must be None, a ConvDimensionNumbers or a triple of "
        f"layout strings such as ('NHWC', 'HWIO', 'NHWC'), got {dimension_numbers!r}.")


def _transpose(x, perm):
    perm = tuple(int(p) for p in perm)
    return x if perm == tuple(range(len(perm))) else sh.transpose(x, perm)


def _windows(x, window, strides, dilation):
    """The windows of ``x``'s trailing axes stacked along a new axis before them (the
    ``window_patches`` primitive: at output position ``o`` and offset ``k`` it holds
    ``x[o * stride + k * dilation]``), and the output's spatial shape."""
    nsp = len(window)
    out = window_out_shape(tuple(x.shape)[len(x.shape) - nsp:], window, strides, dilation)
    return window_patches(x, window, strides, dilation), out


def _operands(lhs, rhs, fname):
    lhs, rhs = as_input(lhs, f"lax.{fname} lhs"), as_input(rhs, f"lax.{fname} rhs")
    if np.dtype(lhs.dtype) != np.dtype(rhs.dtype):
        raise errors.ZeraxTypeError(
            f"lax.{fname} requires arguments to have the same dtypes, got "
            f"{np.dtype(lhs.dtype)}, {np.dtype(rhs.dtype)} (lax does not promote; convert "
            "one with lax.convert_element_type, or use zerax.numpy functions).")
    if len(lhs.shape) != len(rhs.shape) or len(lhs.shape) < 2:
        raise errors.ShapeError(
            f"lax.{fname}: lhs and rhs must have the same rank (at least 2), got shapes "
            f"{tuple(lhs.shape)} and {tuple(rhs.shape)}.")
    return lhs, rhs


def _explicit_pads(padding, n, fname):
    """``padding`` given as ``n`` (low, high) integer pairs, checked."""
    try:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            f"lax.{fname}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
            f"(low, high) integer pairs, got {padding!r}.") from None
    if len(pads) != n:
        raise errors.ShapeError(f"lax.{fname}: padding needs {n} (low, high) pairs, got "
                                f"{len(pads)}.")
    return pads


def _checked_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers, fname):
    nd = len(lhs_shape)
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    for spec, what in zip(dn, ("lhs", "rhs", "out")):
        if sorted(spec) != list(range(nd)):
            raise errors.ShapeError(
                f"lax.{fname}: dimension_numbers' {what} spec {spec} is not a permutation "
                f"of the {nd} axes.")
    return dn


def _conv_patches(x, window, window_strides, padding, lhs_dilation, rhs_dilation, fname):
    """The windows a convolution reads: ``x`` (N, C, spatial...) padded and dilated as
    ``padding`` and ``lhs_dilation`` say, then stacked (N, C, P, out spatial...)."""
    nsp = len(window)
    strides = _ints(window_strides, nsp, "window_strides", fname)
    lhs_dil = _ints((1,) * nsp if lhs_dilation is None else lhs_dilation, nsp,
                    "lhs_dilation", fname)
    rhs_dil = _ints((1,) * nsp if rhs_dilation is None else rhs_dilation, nsp,
                    "rhs_dilation", fname)
    if min(strides + lhs_dil + rhs_dil, default=1) < 1:
        raise errors.ZeraxValueError(
            f"lax.{fname}: strides and dilations must be positive, got window_strides="
            f"{strides}, lhs_dilation={lhs_dil}, rhs_dilation={rhs_dil}.")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            raise errors.NotSupportedError(
                f"lax.{fname}: string padding is not implemented for transposed convolution "
                "(lhs_dilation); give explicit (low, high) pairs or use lax.conv_transpose.")
        eff = [(k - 1) * d + 1 for k, d in zip(window, rhs_dil)]
        pads = padtype_to_pads(x.shape[2:], eff, strides, padding)
    else:
        pads = _explicit_pads(padding, nsp, fname)
    x = _pad(x, np.zeros((), np.dtype(x.dtype)),
             [(0, 0, 0), (0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, lhs_dil)])
    return _windows(x, window, strides, rhs_dil)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-d convolution with dilations and groups (JAX's
    ``lax.conv_general_dilated``; like XLA it is a cross-correlation: the kernel is not
    flipped).

    ``padding`` is 'VALID', 'SAME', 'SAME_LOWER' or ``n`` ``(low, high)`` pairs (may be
    negative); ``lhs_dilation`` inserts ``d - 1`` zeros between input elements
    (transposed convolution), ``rhs_dilation`` between kernel taps (atrous).
    ``dimension_numbers`` defaults to NCHW / OIHW / NCHW, or give layout strings such
    as ``('NHWC', 'HWIO', 'NHWC')``.  ``precision`` and ``out_sharding`` are accepted
    and ignored.

    >>> import numpy as np, zerax.lax as lax
    >>> x = np.arange(5.0).reshape(1, 1, 5)      # N C W
    >>> w = np.array([1.0, 0.0, -1.0]).reshape(1, 1, 3)
    >>> lax.conv_general_dilated(x, w, (1,), "VALID")
    Array([[[-2., -2., -2.]]], dtype=float64)
    >>> img = np.ones((2, 8, 8, 3))              # N H W C
    >>> ker = np.ones((3, 3, 3, 16))             # H W I O
    >>> lax.conv_general_dilated(img, ker, (2, 2), "SAME",
    ...                          dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (2, 4, 4, 16)
    """
    fname = "conv_general_dilated"
    lhs, rhs = _operands(lhs, rhs, fname)
    dn = _checked_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers, fname)
    x = _transpose(lhs, dn.lhs_spec)            # N C spatial...
    w = _transpose(rhs, dn.rhs_spec)            # O I spatial...
    n, c = x.shape[0], x.shape[1]
    o, i = w.shape[0], w.shape[1]
    window = tuple(w.shape[2:])
    g, bg = int(feature_group_count), int(batch_group_count)
    if g < 1 or bg < 1:
        raise errors.ZeraxValueError(
            f"lax.{fname}: feature_group_count and batch_group_count must be positive, got "
            f"{g} and {bg}.")
    if g > 1 and bg > 1:
        raise errors.ZeraxValueError(
            f"lax.{fname}: at most one of feature_group_count ({g}) and batch_group_count "
            f"({bg}) may exceed 1.")
    if c % g or c // g != i:
        raise errors.ShapeError(
            f"lax.{fname}: the lhs feature size ({c}) divided by feature_group_count ({g}) "
            f"must equal the rhs input feature size ({i}).")
    if o % g or o % bg or n % bg:
        raise errors.ShapeError(
            f"lax.{fname}: the rhs output feature size ({o}) must be a multiple of "
            f"feature_group_count ({g}) and batch_group_count ({bg}), and the lhs batch "
            f"size ({n}) a multiple of batch_group_count.")
    patches, out_sp = _conv_patches(x, window, window_strides, padding, lhs_dilation,
                                    rhs_dilation, fname)        # N C P spatial...
    nsp = len(window)
    p = math.prod(window)
    w = sh.reshape(w, (o, i, p))
    pet = preferred_element_type
    if g == 1 and bg == 1:
        out = dot_general(patches, w, (((1, 2), (1, 2)), ((), ())),
                          preferred_element_type=pet)   # N sp... O
        out = _transpose(out, (0, nsp + 1) + tuple(range(1, nsp + 1)))
    else:
        k = max(g, bg)
        if g > 1:     # channels split in groups; group j makes outputs j*O/G...
            patches = sh.reshape(patches, (n, g, i, p) + tuple(out_sp))
            lhs_batch = 1
        else:         # batch split in groups; group j makes outputs j*O/B...
            patches = sh.reshape(patches, (bg, n // bg, c, p) + tuple(out_sp))
            lhs_batch = 0
        w = sh.reshape(w, (k, o // k, i, p))
        out = dot_general(patches, w, (((2, 3), (2, 3)), ((lhs_batch,), (0,))),
                          preferred_element_type=pet)
        # (K, N', spatial..., O/K) -> (N', K, O/K, spatial...) -> (N', O, spatial...)
        out = _transpose(out, (1, 0, nsp + 2) + tuple(range(2, nsp + 2)))
        out = sh.reshape(out, (out.shape[0], o) + tuple(out_sp))
    return _transpose(out, np.argsort(dn.out_spec))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                  lhs_dilation=None, rhs_dilation=None,
                                  dimension_numbers=None, precision=None,
                                  preferred_element_type=None):
    """The patches ``conv_general_dilated`` would contract with a kernel of spatial
    shape ``filter_shape`` (JAX's ``lax.conv_general_dilated_patches``): the output's
    feature axis holds each receptive field flattened, input channel first, then the
    filter's spatial axes (in the order of ``dimension_numbers[1]``), so it has
    ``C * prod(filter_shape)`` entries.  The arguments are as in
    `conv_general_dilated`; ``precision`` is accepted and ignored.

    >>> import numpy as np, zerax.lax as lax
    >>> x = np.arange(10.0).reshape(1, 2, 5)       # N C W
    >>> lax.conv_general_dilated_patches(x, (2,), (2,), "VALID")
    Array([[[0., 2.],
            [1., 3.],
            [5., 7.],
            [6., 8.]]], dtype=float64)
    """
    fname = "conv_general_dilated_patches"
    lhs = as_input(lhs, f"lax.{fname} lhs")
    nd = len(lhs.shape)
    if nd < 2:
        raise errors.ShapeError(f"lax.{fname}: lhs must have rank at least 2, got shape "
                                f"{tuple(lhs.shape)}.")
    window = _ints(filter_shape, nd - 2, "filter_shape", fname)
    dn = _checked_dimension_numbers(lhs.shape, (1, 1) + window, dimension_numbers, fname)
    x = _transpose(lhs, dn.lhs_spec)            # N C spatial...
    patches, out_sp = _conv_patches(x, window, window_strides, padding, lhs_dilation,
                                    rhs_dilation, fname)        # N C P spatial...
    out = sh.reshape(patches, (x.shape[0], x.shape[1] * math.prod(window)) + tuple(out_sp))
    if preferred_element_type is not None and \
            np.dtype(preferred_element_type) != np.dtype(out.dtype):
        out = ew.convert_element_type(out, np.dtype(preferred_element_type))
    return _transpose(out, np.argsort(dn.out_spec))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` without dilation, in NCHW / OIHW layout.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.conv(np.ones((1, 2, 4, 4)), np.ones((3, 2, 2, 2)), (1, 1), "VALID").shape
    (1, 3, 3, 3)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in NCHW / OIHW layout with explicit dilations.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.conv_with_general_padding(np.ones((1, 1, 5)), np.ones((1, 1, 2)), (1,),
    ...                               [(1, 1)], None, (2,)).shape
    (1, 1, 5)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The "transpose" of a convolution (a fractionally strided convolution), as JAX's
    ``lax.conv_transpose``: layouts default to NHWC / HWIO / NHWC (by rank), the
    kernel is not flipped unless ``transpose_kernel``.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.conv_transpose(np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 5)), (2, 2),
    ...                    "SAME").shape
    (1, 8, 8, 5)
    """
    lhs, rhs = _operands(lhs, rhs, "conv_transpose")
    nd = len(lhs.shape)
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if nd not in defaults:
            raise errors.ZeraxValueError("lax.conv_transpose: no default dimension_numbers "
                                         f"for rank {nd}; pass dimension_numbers.")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    k_sdims = [rhs.shape[a] for a in dn.rhs_spec[2:]]
    strides = _ints(strides, nd - 2, "strides", "conv_transpose")
    rhs_dilation = _ints((1,) * (nd - 2) if rhs_dilation is None else rhs_dilation, nd - 2,
                         "rhs_dilation", "conv_transpose")
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        eff = [(k - 1) * d + 1 for k, d in zip(k_sdims, rhs_dilation)]
        rep = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = [_conv_transpose_padding(k, s, tuple(p) if not isinstance(p, str) else p)
                for k, s, p in zip(eff, strides, rep)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = sh.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = sh.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# --------------------------------------------------------------------------- shape arithmetic
# JAX's integer shape helpers (stax-style code calls them to size layers); plain ints, so
# a -1 batch dimension passes through as it does in JAX.

def _stride_dim(d, window, stride):
    return max(0, (d - window) // stride + 1)


def _dilate_dim(d, dilation):
    return 0 if d == 0 else 1 + dilation * (d - 1)


def _shape_ints(shape, what, fname):
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"lax.{fname}: {what} must be a sequence of integers, got {shape!r}.") from None


def _pad_pairs(padding, n, fname):
    try:
        pads = [tuple(int(q) for q in p) for p in padding]
    except TypeError:
        pads = None
    if pads is None or len(pads) != n or any(len(p) != 2 for p in pads):
        raise errors.ZeraxTypeError(
            f"lax.{fname}: padding must be one (low, high) pair of integers per spatial "
            f"dimension ({n}), got {padding!r}.")
    return pads


def _unpermute(out_trans, out_perm):
    return tuple(int(out_trans[j]) for j in np.argsort(out_perm))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of ``conv_general_dilated`` (no dilation) as a tuple of ints, as
    JAX's ``lax.conv_general_shape_tuple``: ``dimension_numbers`` is a triple of layout
    strings, ``padding`` ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or (low, high) pairs.

    >>> conv_general_shape_tuple((8, 28, 28, 1), (3, 3, 1, 32), (2, 2), "SAME",
    ...                          ("NHWC", "HWIO", "NHWC"))
    (8, 14, 14, 32)
    """
    fname = "conv_general_shape_tuple"
    lhs_shape = _shape_ints(lhs_shape, "lhs_shape", fname)
    rhs_shape = _shape_ints(rhs_shape, "rhs_shape", fname)
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs = [lhs_shape[i] for i in lhs_perm]
    rhs = [rhs_shape[i] for i in rhs_perm]
    n = len(lhs) - 2
    strides = _ints(window_strides, n, "window_strides", fname)
    if isinstance(padding, str):
        pads = padtype_to_pads(lhs[2:], rhs[2:], strides, padding)
    else:
        pads = _pad_pairs(padding, n, fname)
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs[2:], pads)]
    if any(d < 0 for d in padded):
        raise errors.ZeraxValueError(
            f"lax.{fname}: negative padding is larger than the size of the corresponding "
            f"dimension: got padding={padding!r} for spatial shape {tuple(lhs[2:])}.")
    space = [_stride_dim(d, w, s) for d, w, s in zip(padded, rhs[2:], strides)]
    return _unpermute([lhs[0], rhs[0], *space], out_perm)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of ``conv_transpose`` (no dilation) as a tuple of ints, as JAX's
    ``lax.conv_transpose_shape_tuple``: ``'SAME'``/``'VALID'`` use ``conv_transpose``'s
    padding rule; explicit (low, high) pairs add their sum to ``(i - 1) * s - k + 2``.

    >>> conv_transpose_shape_tuple((8, 14, 14, 32), (3, 3, 32, 1), (2, 2), "SAME",
    ...                            ("NHWC", "HWIO", "NHWC"))
    (8, 28, 28, 1)
    """
    fname = "conv_transpose_shape_tuple"
    lhs_shape = _shape_ints(lhs_shape, "lhs_shape", fname)
    rhs_shape = _shape_ints(rhs_shape, "rhs_shape", fname)
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs = [lhs_shape[i] for i in lhs_perm]
    rhs = [rhs_shape[i] for i in rhs_perm]
    n = len(lhs) - 2
    strides = _ints(window_strides, n, "window_strides", fname)
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise errors.ZeraxValueError(
                f"lax.{fname}: padding must be 'SAME', 'VALID' or (low, high) pairs, "
                f"got {padding!r}.")
        pads = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs[2:], strides)]
    else:
        pads = _pad_pairs(padding, n, fname)
    space = [(i - 1) * s - k + 2 + lo + hi
             for i, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, pads)]
    return _unpermute([lhs[0], rhs[0], *space], out_perm)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of ``reduce_window`` as a tuple of ints, as JAX's
    ``lax.reduce_window_shape_tuple``: ``padding`` is explicit (low, high) pairs (turn
    a padding string into pairs with `padtype_to_pads`).

    >>> reduce_window_shape_tuple((1, 6, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1),
    ...                           [(0, 0)] * 4)
    (1, 3, 3, 3)
    """
    fname = "reduce_window_shape_tuple"
    shape = _shape_ints(operand_shape, "operand_shape", fname)
    n = len(shape)
    window = _ints(window_dimensions, n, "window_dimensions", fname)
    strides = _ints(window_strides, n, "window_strides", fname)
    if base_dilation is not None:
        base = _ints(base_dilation, n, "base_dilation", fname)
        shape = tuple(_dilate_dim(d, b) for d, b in zip(shape, base))
    if window_dilation is not None:
        wdil = _ints(window_dilation, n, "window_dilation", fname)
        window = tuple(_dilate_dim(w, r) for w, r in zip(window, wdil))
    if isinstance(padding, str):
        raise errors.ZeraxTypeError(
            f"lax.{fname}: padding must be (low, high) pairs, got the string {padding!r}; "
            "convert it with lax.padtype_to_pads(operand_shape, window_dimensions, "
            "window_strides, padding) first (as in JAX).")
    pads = _pad_pairs(padding, n, fname)
    padded = [d + lo + hi for d, (lo, hi) in zip(shape, pads)]
    return tuple(_stride_dim(d, w, s) for d, w, s in zip(padded, window, strides))


# --------------------------------------------------------------------------- reduce_window


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation`` starting from
    ``init_value`` (JAX's ``lax.reduce_window``; XLA's ReduceWindow).

    Padded positions and base-dilation holes are skipped (as XLA does, so a
    ``init_value`` that is not the identity counts once per window).
    ``lax.add``/``mul``/``max``/``min`` (or the matching ``zerax.numpy`` ufuncs) reduce
    each window with one primitive; any other associative ``computation`` (and pytrees
    of operands) is applied over the window offsets by a ``scan``.

    >>> import numpy as np, zerax.lax as lax
    >>> x = np.arange(1.0, 7.0).reshape(2, 3)
    >>> lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID")
    Array([[5., 6.]], dtype=float64)
    >>> lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "SAME")    # running pair sums
    Array([[ 3.,  5.,  3.],
           [ 9., 11.,  6.]], dtype=float64)
    """
    fname = "reduce_window"
    leaves, treedef = tree.tree_flatten(operand)
    inits, init_tree = tree.tree_flatten(init_value)
    if not leaves or len(inits) != len(leaves):
        raise errors.ZeraxTypeError(
            f"lax.{fname}: {len(leaves)} operands but {len(inits)} init values; give one "
            "scalar init value per operand, in the same tree structure.")
    leaves = [as_input(x, f"lax.{fname} operand") for x in leaves]
    shape = tuple(leaves[0].shape)
    if any(tuple(x.shape) != shape for x in leaves):
        raise errors.ShapeError(f"lax.{fname}: all operands must have the same shape, got "
                                f"{[tuple(x.shape) for x in leaves]}.")
    nd = len(shape)
    window = _ints(window_dimensions, nd, "window_dimensions", fname)
    strides = _ints((1,) * nd if window_strides is None else window_strides, nd,
                    "window_strides", fname)
    base = _ints((1,) * nd if base_dilation is None else base_dilation, nd,
                 "base_dilation", fname)
    wdil = _ints((1,) * nd if window_dilation is None else window_dilation, nd,
                 "window_dilation", fname)
    if min(window + strides + base + wdil, default=1) < 1:
        raise errors.ZeraxValueError(
            f"lax.{fname}: window sizes, strides and dilations must be positive.")
    if isinstance(padding, str):
        eff = [(k - 1) * d + 1 for k, d in zip(window, wdil)]
        pads = padtype_to_pads(shape, eff, strides, padding)
    else:
        pads = _explicit_pads(padding, nd, fname)
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)]
    monoid = _MONOIDS.get(computation) if len(leaves) == 1 else None
    vals = []
    for x, v in zip(leaves, inits):
        _, v = _coerce(x, v)
        if np.dtype(v.dtype) != np.dtype(x.dtype) or tuple(v.shape) != ():
            raise errors.ZeraxTypeError(
                f"lax.{fname}: init_value must be a scalar of the operand's dtype "
                f"{np.dtype(x.dtype)}, got {np.dtype(v.dtype)} of shape {tuple(v.shape)}.")
        vals.append(v)
    identity = _identity(monoid, np.dtype(leaves[0].dtype)) if monoid is not None else None
    if identity is not None:
        # Padding and dilation holes are skipped (as XLA does): pad with the identity,
        # reduce the stacked windows with one primitive, combine init once.
        win, _ = _windows(_pad(leaves[0], identity, config), window, strides, wdil)
        extreme = monoid in (red.reduce_max, red.reduce_min)
        if extreme and dtype_kind(np.dtype(win.dtype)) == "f":
            out = _first_extreme(win, monoid is red.reduce_max)
        else:
            out = monoid(win, (0,))
        # max(m, -inf) is m exactly (NaN and -0.0 too): an init that is the identity of
        # max/min (max pooling's) needs no combining, and no derivative of the combine.
        if extreme and is_concrete(vals[0]) and \
                np.array_equal(np.asarray(concrete_value(vals[0])), identity):
            return out
        return computation(out, vals[0])
    # Any other computation: a scan over the window offsets that skips the padding.
    wins = [_windows(_pad(x, np.zeros((), np.dtype(x.dtype)), config), window, strides,
                     wdil)[0] for x in leaves]
    valid = None
    if any(c != (0, 0, 0) for c in config):
        inside = np.asarray(_pad(np.ones(shape, np.bool_), np.zeros((), np.bool_), config))
        valid = np.asarray(_windows(Array(inside), window, strides, wdil)[0])
    out_shape = tuple(wins[0].shape[1:])
    carry0 = tree.tree_unflatten(init_tree, [sh.broadcast_in_dim(v, out_shape, ())
                                             for v in vals])

    def step(carry, xs):
        leaves_k, ok = xs
        new = computation(carry, tree.tree_unflatten(treedef, list(leaves_k)))
        if ok is None:
            return new, None
        return tree.tree_map(lambda a, b: ew.select_n(ok, b, a), new, carry), None

    out, _ = scan(step, carry0, (tuple(wins), valid))
    return out


def _first_extreme(win, is_max):
    """The maximum (minimum) of the stacked windows ``win`` (P, out...) over axis 0, with
    its derivative going to the *first* extreme element of each window in row-major
    order, as XLA's select-and-scatter gives it (a tie is not split; a window holding a
    NaN gives the first NaN).  The chosen element is picked by a one-hot select whose
    other entries are -0.0, so the sum over the window is the element exactly."""
    pick = (red.argmax if is_max else red.argmin)(misc.stop_gradient(win), 0, np.int64)
    shape = tuple(win.shape)
    # (the window index is a small constant read in place by the fused loop, not an
    # iota of the windows' shape; under vmap too: the recording trace keeps the batched
    # broadcast of this view a broadcast, never a constant of the batch's size)
    offsets = sh.broadcast_in_dim(np.arange(shape[0], dtype=np.int64), shape, (0,))
    onehot = ew.eq(offsets, sh.broadcast_in_dim(pick, shape, tuple(range(1, len(shape)))))
    return red.reduce_sum(ew.select_n(onehot, np.array(-0.0, win.dtype), win), (0,))


def _identity(monoid, dt):
    """The identity element of a known monoid reduction for dtype ``dt`` (None if the
    reduction is not one of them)."""
    if monoid is red.reduce_sum:
        return np.zeros((), dt)
    if monoid is red.reduce_prod:
        return np.ones((), dt)
    if monoid in (red.reduce_max, red.reduce_min):
        big = monoid is red.reduce_min
        if dtype_kind(dt) == "f":
            return np.array(np.inf if big else -np.inf, dt)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return np.array(info.max if big else info.min, dt)
        if dt.kind == "b":
            return np.array(big, dt)
        return None
    if monoid in (reduce_and, reduce_or) and dt.kind == "b":
        return np.array(monoid is reduce_and, dt)
    return None
