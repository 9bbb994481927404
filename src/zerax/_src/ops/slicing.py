"""The slicing primitives: ``slice`` (static bounds and strides), ``pad`` (low, high and
interior padding; negative low/high crop), ``dynamic_slice`` and ``dynamic_update_slice``
(traced start indices, clamped into range as in JAX): NumPy implementation, shape rule,
JVP (they are linear in their array operands), transpose and batching.

This module sits below `shape` (which re-exports it), so three rules that bind higher
primitives are declared beside those: pad's JVP and transpose (its padding value's
cotangent is a sum) in `reduce`; pad's batching for a batched padding value (a
broadcast) in `shape`; the batching of ``dynamic_slice``/``dynamic_update_slice`` (one
``gather``/``scatter`` when the start indices vary over the batch) in `gather` and
`index_update`.  The lowerings are in ``backends/lowering/shape.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.core import Primitive, ShapedArray, bind
from ._factory import deflinear, vjp_from_transpose
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules


def _zeros(aval):
    return np.zeros(aval.shape, aval.dtype)


# --------------------------------------------------------------------------- slice

slice_p = Primitive("slice")


def slice_p_bind(x, start_indices, limit_indices, strides=None):
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else \
        tuple(int(s) for s in strides)
    if start_indices == (0,) * x.ndim and limit_indices == tuple(x.shape) and strides is None:
        return x
    return bind(slice_p, x, start_indices=start_indices, limit_indices=limit_indices,
                strides=strides)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    st = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, st))]


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    st = strides or (1,) * x.ndim
    shape = []
    for n, a, b, s in zip(x.shape, start_indices, limit_indices, st):
        if not (0 <= a <= b <= n) or s < 1:
            raise errors.ShapeError(
                f"slice: start {start_indices}, limit {limit_indices} out of range for {x.shape}")
        shape.append(max(0, -(-(b - a) // s)))
    return ShapedArray(shape, x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    in_shape = x.aval.shape
    st = strides or (1,) * len(in_shape)
    if any(n == 0 for n in ct.shape):
        return [_zeros(x.aval)]
    config = []
    for n, a, out, s in zip(in_shape, start_indices, ct.shape, st):
        real_limit = a + (out - 1) * s + 1
        config.append((a, n - real_limit, s - 1))
    return [pad(ct, np.zeros((), ct.dtype), tuple(config))]


slice_p.impl = _slice_impl
slice_p.abstract_eval = _slice_abstract
deflinear(slice_p, _slice_transpose)


# Batching: the batch axis is sliced whole.
def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(d, 0)
    limits.insert(d, x.shape[d])
    st = None if strides is None else tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return slice_p_bind(x, starts, limits, st), d



batch_rules[slice_p] = _slice_batch

# --------------------------------------------------------------------------- pad

pad_p = Primitive("pad")


def pad(x, padding_value, padding_config):
    """lax.pad: ``padding_config`` is one (low, high, interior) per axis; low/high may
    be negative (cropping)."""
    padding_config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    if all(c == (0, 0, 0) for c in padding_config):
        return x
    return bind(pad_p, x, padding_value, padding_config=padding_config)


def _pad_impl(x, pv, *, padding_config):
    inner = [(n - 1) * (i + 1) + 1 if n > 0 else 0 for n, (_, _, i) in zip(x.shape, padding_config)]
    full = [max(lo, 0) + m + max(hi, 0) for m, (lo, hi, _) in zip(inner, padding_config)]
    out = np.full(full, pv, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + m, i + 1)
              for m, (lo, _, i) in zip(inner, padding_config))] = x
    crop = tuple(slice(max(-lo, 0), f - max(-hi, 0)) for f, (lo, hi, _) in zip(full, padding_config))
    return out[crop]


def _pad_abstract(x, pv, *, padding_config):
    if pv.shape != ():
        raise errors.ShapeError("pad: the padding value must be a scalar")
    if len(padding_config) != x.ndim:
        raise errors.ShapeError(f"pad: need {x.ndim} (low, high, interior) triples")
    shape = []
    for n, (lo, hi, i) in zip(x.shape, padding_config):
        if i < 0:
            raise errors.ShapeError("pad: interior padding must be non-negative")
        d = lo + hi + n + max(n - 1, 0) * i
        if d < 0:
            raise errors.ShapeError(f"pad: negative padding removes more than axis size {n}")
        shape.append(d)
    return ShapedArray(shape, x.dtype)


pad_p.impl = _pad_impl
pad_p.abstract_eval = _pad_abstract
# pad is linear in (operand, padding value): its JVP and transpose are declared in
# `reduce` (the padding value's cotangent is a sum), its batching rule in `shape`.


# --------------------------------------------------------------------------- dynamic slices
# Start indices are clamped into ``[0, n - k]`` (JAX's semantics) by the implementation,
# by the lowering (backends/lowering/shape.py) and by the vectorised batching
# rules (`gather._clamped_start`).


def _clamp_starts(starts, shape, sizes):
    return tuple(int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes))


dynamic_slice_p = Primitive("dynamic_slice")


def dynamic_slice(x, start_indices, slice_sizes):
    """``x[s0:s0+k0, ...]`` with traced starts, clamped into range (as in JAX)."""
    return bind(dynamic_slice_p, x, *start_indices,
                slice_sizes=tuple(int(k) for k in slice_sizes))


def _ds_impl(x, *starts, slice_sizes):
    st = _clamp_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))]


def _ds_abstract(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise errors.ShapeError(f"dynamic_slice: need {x.ndim} start indices and sizes")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise errors.ZeraxTypeError("dynamic_slice: start indices must be integer scalars")
    for n, k in zip(x.shape, slice_sizes):
        if not 0 <= k <= n:
            raise errors.ShapeError(f"dynamic_slice: slice sizes {slice_sizes} exceed {x.shape}")
    return ShapedArray(slice_sizes, x.dtype)


def _ds_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    ans = dynamic_slice(x, starts, slice_sizes)
    t = tangents[0]
    if type(t) is Zero:
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    return ans, dynamic_slice(t, starts, slice_sizes)


def _ds_transpose(ct, x, *starts, slice_sizes):
    zeros = _zeros(x.aval)
    return [dynamic_update_slice(zeros, ct, starts)] + [None] * len(starts)


dynamic_slice_p.impl = _ds_impl
dynamic_slice_p.abstract_eval = _ds_abstract
jvp_rules[dynamic_slice_p] = _ds_jvp
transpose_rules[dynamic_slice_p] = _ds_transpose
vjp_rules[dynamic_slice_p] = vjp_from_transpose(dynamic_slice_p)  # linear in the operand
# (batching: `gather`)


dynamic_update_slice_p = Primitive("dynamic_update_slice")


def dynamic_update_slice(x, update, start_indices):
    return bind(dynamic_update_slice_p, x, update, *start_indices)


def _dus_impl(x, update, *starts):
    st = _clamp_starts(starts, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + k) for s, k in zip(st, update.shape))] = update
    return out


def _dus_abstract(x, update, *starts):
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise errors.ShapeError(
            f"dynamic_update_slice: update shape {update.shape} does not fit in {x.shape}")
    if update.dtype != x.dtype:
        raise errors.ZeraxTypeError("dynamic_update_slice: update dtype differs from operand's")
    if len(starts) != x.ndim:
        raise errors.ShapeError(f"dynamic_update_slice: need {x.ndim} start indices")
    return ShapedArray(x.shape, x.dtype)


def _dus_jvp(primals, tangents):
    x, update, *starts = primals
    ans = dynamic_update_slice(x, update, starts)
    tx, tu = tangents[0], tangents[1]
    if type(tx) is Zero and type(tu) is Zero:
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    tx = _zeros(tx.aval) if type(tx) is Zero else tx
    tu = _zeros(tu.aval) if type(tu) is Zero else tu
    return ans, dynamic_update_slice(tx, tu, starts)


def _dus_transpose(ct, x, update, *starts):
    u_aval = update.aval if is_undefined(update) else ShapedArray(update.shape, update.dtype)
    ct_x = dynamic_update_slice(ct, _zeros(u_aval), starts) if is_undefined(x) else None
    ct_u = dynamic_slice(ct, starts, u_aval.shape) if is_undefined(update) else None
    return [ct_x, ct_u] + [None] * len(starts)


dynamic_update_slice_p.impl = _dus_impl
dynamic_update_slice_p.abstract_eval = _dus_abstract
jvp_rules[dynamic_update_slice_p] = _dus_jvp
transpose_rules[dynamic_update_slice_p] = _dus_transpose
vjp_rules[dynamic_update_slice_p] = vjp_from_transpose(dynamic_update_slice_p)  # linear in both
# (batching: `index_update`)
