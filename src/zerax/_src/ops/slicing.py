"""The slicing primitives: ``slice`` (static bounds and strides), ``pad`` (low, high and
interior padding; negative low/high crop), ``dynamic_slice`` and ``dynamic_update_slice``
(traced start indices, clamped into range as in JAX), each with all its rules: NumPy
implementation, shape rule, JVP (they are linear in their array operands), transpose,
batching and Numba lowering.

Batching ``dynamic_slice``/``dynamic_update_slice`` over start indices that vary over the
batch needs no loop: the clamped starts plus an ``iota`` per axis index the block of each
batch member, so the primitive becomes one ``gather`` (one ``scatter`` for the update),
with an ``iota`` index over the operand's batch axis when the operand is mapped.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.core import Primitive, ShapedArray, bind
from ._factory import deflinear, vjp_from_transpose
from .shape import (_nb_affine, _nb_array, _nb_copy_loop, _nb_empty, _nb_scalar, _nb_shape, broadcast_in_dim, iota)
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

_INTP = np.dtype(np.int64)


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


def _slice_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    starts, limits = eqn.params["start_indices"], eqn.params["limit_indices"]
    strides = eqn.params["strides"] or (1,) * len(starts)
    ctx.emit(f"# slice {starts}:{limits}:{strides}")
    xn = _nb_array(ctx, x)
    out = _nb_empty(ctx, ov)
    _nb_copy_loop(ctx, out, lambda idx: idx, xn,
                  lambda idx: [_nb_affine(i, a, s) for i, a, s in zip(idx, starts, strides)],
                  ov.aval.shape)


batch_rules[slice_p] = _slice_batch
slice_p.lower_numba = _slice_lower

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


def _pad_transpose(ct, x, pv, *, padding_config):
    from .reduce import reduce_sum
    res = [None, None]
    if is_undefined(x):
        uncrop = tuple((max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config)
        full = pad(ct, np.zeros((), ct.dtype), uncrop)
        in_shape = x.aval.shape
        starts = [max(lo, 0) for lo, _, _ in padding_config]
        limits = [s + ((n - 1) * (i + 1) + 1 if n > 0 else 0)
                  for s, n, (_, _, i) in zip(starts, in_shape, padding_config)]
        strides = [i + 1 for _, _, i in padding_config]
        res[0] = slice_p_bind(full, starts, limits, strides)
    if is_undefined(pv):
        from .elementwise import sub
        total = reduce_sum(ct, axes=tuple(range(len(ct.shape))))
        inner = res[0] if res[0] is not None else None
        if inner is not None:
            total = sub(total, reduce_sum(inner, axes=tuple(range(len(inner.shape)))))
        else:
            # The operand is a constant: its positions carry no padding value.
            mask = pad(np.zeros(x.shape, ct.dtype), np.ones((), ct.dtype), padding_config)
            from .elementwise import mul
            total = reduce_sum(mul(ct, mask), axes=tuple(range(len(ct.shape))))
        res[1] = total
    return res


pad_p.impl = _pad_impl
pad_p.abstract_eval = _pad_abstract
deflinear(pad_p, _pad_transpose)


def _pad_batch(args, dims, *, padding_config):
    from ..interpreters.batching import moveaxis
    from .elementwise import add, mul
    (x, pv), (dx, dpv) = args, dims
    if dpv is None:
        x = moveaxis(x, dx, 0)
        return pad(x, pv, ((0, 0, 0),) + tuple(padding_config)), 0
    # A batched padding value: pad with zeros, then add the value where padding went.
    size = pv.shape[dpv]
    dtype = np.dtype(x.dtype)
    if dx is None:
        example_shape = tuple(x.shape)
        x = broadcast_in_dim(x, (size,) + example_shape, tuple(range(1, len(example_shape) + 1)))
    else:
        x = moveaxis(x, dx, 0)
        example_shape = tuple(x.shape[1:])
    padded = pad(x, np.zeros((), dtype), ((0, 0, 0),) + tuple(padding_config))
    mask = _pad_impl(np.zeros(example_shape, dtype), np.ones((), dtype),
                     padding_config=tuple(padding_config))
    out_shape = tuple(padded.shape)
    pv_b = broadcast_in_dim(moveaxis(pv, dpv, 0) if pv.ndim else pv, out_shape, (0,))
    return add(padded, mul(pv_b, mask)), 0


def _pad_lower(ctx, eqn):
    from ..backends.numba.codegen import dtype_name
    (x, pv), (ov,) = eqn.invars, eqn.outvars
    config = eqn.params["padding_config"]
    out_shape = ov.aval.shape
    ctx.emit(f"# pad {config}")
    # Operand element i of an axis lands at lo + i * (interior + 1); keep those inside.
    first, count, base, step = [], [], [], []
    for n, d, (lo, _, interior) in zip(x.aval.shape, out_shape, config):
        s = interior + 1
        i_min = max(0, (-lo + s - 1) // s)
        i_max = min(n, max(0, (d - lo + s - 1) // s))
        first.append(i_min)
        count.append(max(0, i_max - i_min))
        base.append(lo + i_min * s)
        step.append(s)
    covers = all(s == 1 and c == d for s, c, d in zip(step, count, out_shape))
    dt = dtype_name(ov.aval.dtype)
    out = ctx.out(ov)
    if covers:  # a pure crop: every output element comes from the operand
        ctx.emit(f"{out} = np.empty({_nb_shape(out_shape)}, {dt})")
    else:
        fill = _nb_scalar(ctx, pv)
        if np.dtype(pv.aval.dtype) != np.dtype(ov.aval.dtype):
            fill = f"{dt}({fill})"
        ctx.emit(f"{out} = np.full({_nb_shape(out_shape)}, {fill}, {dt})")
    xn = _nb_array(ctx, x)
    _nb_copy_loop(ctx, out, lambda idx: [_nb_affine(i, b, s) for i, b, s in zip(idx, base, step)],
                  xn, lambda idx: [_nb_affine(i, f) for i, f in zip(idx, first)], count)


batch_rules[pad_p] = _pad_batch
pad_p.lower_numba = _pad_lower

# --------------------------------------------------------------------------- dynamic slices
# Start indices are clamped into ``[0, n - k]`` (JAX's semantics) by the implementation,
# by the Numba lowering (`_nb_clamped_starts`) and by the vectorised batching rules
# (`_clamped_start`).


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


def _start_zero(starts):
    """A zero start index (for an inserted batch axis), of the start indices' dtype."""
    dt = getattr(starts[0], "dtype", None) if starts else None
    return np.zeros((), _INTP if dt is None else np.dtype(dt))


def _clamped_start(s, n, k):
    """A traced start index (0-d or batched) as int64 clamped into ``[0, n - k]``."""
    from .elementwise import clamp, convert_element_type, minimum
    if not hasattr(s, "dtype"):      # a Python int start beside batched ones
        s = np.asarray(s, _INTP)
    dt = np.dtype(s.dtype)
    if dt == np.uint64:  # clamp before the cast, which would wrap large values
        s = minimum(s, np.array(n - k, dt))
    s = convert_element_type(s, _INTP)
    return clamp(np.zeros((), _INTP), s, np.array(n - k, _INTP))


def _block_indices(starts, dstarts, size, operand_shape, sizes):
    """Index arrays, one per axis, addressing the block ``start + iota(k)`` of every batch
    member: axis ``d``'s array has shape ``(B or 1, 1, .., k_d, .., 1)`` (B where its start
    is mapped), so that together they broadcast to ``(B,) + sizes``."""
    from ..interpreters.batching import moveaxis
    from .elementwise import add
    r = len(sizes)
    idx = []
    for d, (s, ds, n, k) in enumerate(zip(starts, dstarts, operand_shape, sizes)):
        lead = 1 if ds is None else size
        shape = (lead,) + (1,) * d + (k,) + (1,) * (r - d - 1)
        block = iota(_INTP, shape, d + 1)
        if ds is None and n == k:  # the start clamps to 0 whatever its value
            idx.append(block)
            continue
        s = _clamped_start(s if ds is None else moveaxis(s, ds, 0), n, k)
        idx.append(add(broadcast_in_dim(s, shape, () if ds is None else (0,)), block))
    return idx


def _batch_iota(size, r):
    """The index over a batch axis moved to the front, for gathers of rank-``r`` blocks."""
    return iota(_INTP, (size,) + (1,) * r, 0)


def _ds_batch(args, dims, *, slice_sizes):
    from ..interpreters.batching import batch_size_of, moveaxis
    from .indexing import gather
    x, *starts = args
    dx, *dstarts = dims
    if all(d is None for d in dstarts):
        sizes = list(slice_sizes)
        sizes.insert(dx, x.shape[dx])
        st = list(starts)
        st.insert(dx, _start_zero(starts))
        return dynamic_slice(x, st, sizes), dx
    # Batched starts: one gather of every member's block (no loop over the batch).
    size = batch_size_of(args, dims)
    ex_shape = [n for i, n in enumerate(x.shape) if i != dx]
    idx = _block_indices(starts, dstarts, size, ex_shape, slice_sizes)
    if dx is not None:
        x = moveaxis(x, dx, 0)
        idx = [_batch_iota(size, len(slice_sizes))] + idx
    out = gather(x, idx, tuple(("a", i) for i in range(len(idx))), mode="clip")
    return out, 0


def _nb_clamped_starts(ctx, atoms, shape, sizes):
    """Locals holding the start indices clamped into ``[0, n - k]`` (as ``_clamp_starts``)."""
    from ..backends.numba.codegen import dtype_name
    names = []
    for a, n, k in zip(atoms, shape, sizes):
        s = _nb_scalar(ctx, a)
        name = ctx.fresh("st")
        hi = n - k
        if np.dtype(a.aval.dtype).kind == "u":
            ctx.emit(f"{name} = {hi} if {s} > {dtype_name(a.aval.dtype)}({hi}) "
                     f"else np.int64({s})")
        else:
            ctx.emit(f"{name} = min(max(np.int64({s}), 0), {hi})")
        names.append(name)
    return names


def _ds_lower(ctx, eqn):
    (x, *starts), (ov,) = eqn.invars, eqn.outvars
    sizes = eqn.params["slice_sizes"]
    ctx.emit(f"# dynamic_slice sizes {tuple(sizes)}")
    xn = _nb_array(ctx, x)
    st = _nb_clamped_starts(ctx, starts, x.aval.shape, sizes)
    out = _nb_empty(ctx, ov)
    _nb_copy_loop(ctx, out, lambda idx: idx, xn,
                  lambda idx: [f"{i} + {s}" for i, s in zip(idx, st)], sizes)


batch_rules[dynamic_slice_p] = _ds_batch
dynamic_slice_p.lower_numba = _ds_lower

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


def _dus_batch(args, dims):
    from ..interpreters.batching import batch_size_of, bdim_at_front
    from .index_update import scatter
    x, update, *starts = args
    dx, du, *dstarts = dims
    size = batch_size_of(args, dims)
    x, update = bdim_at_front(x, dx, size), bdim_at_front(update, du, size)
    if all(d is None for d in dstarts):
        return dynamic_update_slice(x, update, [_start_zero(starts)] + list(starts)), 0
    # Batched starts: one scatter of every member's block (no loop over the batch).
    sizes = tuple(update.shape[1:])
    idx = [_batch_iota(size, len(sizes))] + _block_indices(
        starts, dstarts, size, tuple(x.shape[1:]), sizes)
    return scatter(x, update, idx, tuple(("a", i) for i in range(len(idx))),
                   op="set", mode="clip"), 0


def _dus_lower(ctx, eqn):
    (x, update, *starts), (ov,) = eqn.invars, eqn.outvars
    ctx.emit("# dynamic_update_slice")
    xn = _nb_array(ctx, x)
    un = _nb_array(ctx, update)
    st = _nb_clamped_starts(ctx, starts, x.aval.shape, update.aval.shape)
    out = ctx.out(ov)
    ctx.emit(f"{out} = np.copy({xn})")
    _nb_copy_loop(ctx, out, lambda idx: [f"{i} + {s}" for i, s in zip(idx, st)], un,
                  lambda idx: idx, update.aval.shape)


batch_rules[dynamic_update_slice_p] = _dus_batch
dynamic_update_slice_p.lower_numba = _dus_lower
