"""Shape primitives: broadcast, reshape, transpose, squeeze, concatenate, pad, slice,
dynamic slice/update, reverse, iota.

All but iota are linear in their array operands, so each has a transpose rule; the
JVP of a linear primitive applies the primitive to the tangents (`deflinear`).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..ad import Zero, is_undefined
from ..core import Primitive, ShapedArray, bind
from ._factory import deflinear, not_differentiable


def _zeros(aval):
    return np.zeros(aval.shape, aval.dtype)


# --------------------------------------------------------------------------- broadcast

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Place ``x``'s dims at ``broadcast_dimensions`` of a result of ``shape``."""
    shape = tuple(int(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if tuple(x.shape) == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=broadcast_dimensions)


def _bid_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


def _bid_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise errors.ShapeError(
            f"broadcast_in_dim: operand of rank {x.ndim} needs {x.ndim} broadcast dimensions, "
            f"got {broadcast_dimensions}")
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or x.shape[src] not in (1, shape[dst]):
            raise errors.ShapeError(
                f"broadcast_in_dim: cannot broadcast operand shape {x.shape} to {shape} "
                f"along dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype)


def _bid_transpose(ct, x, *, shape, broadcast_dimensions):
    from .reduce import reduce_sum
    in_shape = x.aval.shape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    expanded = [dst for src, dst in enumerate(broadcast_dimensions)
                if in_shape[src] == 1 and shape[dst] != 1]
    axes = tuple(sorted(summed + expanded))
    out = reduce_sum(ct, axes=axes) if axes else ct
    if tuple(out.shape) != in_shape:
        out = reshape(out, in_shape)
    return [out]


broadcast_in_dim_p.impl = _bid_impl
broadcast_in_dim_p.abstract_eval = _bid_abstract
deflinear(broadcast_in_dim_p, _bid_transpose)

# --------------------------------------------------------------------------- reshape

reshape_p = Primitive("reshape")


def reshape(x, new_sizes):
    new_sizes = tuple(int(d) for d in new_sizes)
    if tuple(x.shape) == new_sizes:
        return x
    return bind(reshape_p, x, new_sizes=new_sizes)


def _reshape_abstract(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise errors.ShapeError(f"cannot reshape an array of shape {x.shape} into {new_sizes}")
    return ShapedArray(new_sizes, x.dtype)


def _reshape_simplify(trace, args, atoms, params):
    eqn = trace.producer.get(atoms[0])
    if eqn is not None and eqn.primitive is reshape_p:  # reshape(reshape(x)) -> one reshape
        inner = eqn.invars[0]
        if inner.aval.shape == params["new_sizes"]:
            return trace.value_of(inner)
    return None


reshape_p.impl = lambda x, *, new_sizes: np.reshape(x, new_sizes)
reshape_p.abstract_eval = _reshape_abstract
reshape_p.simplify = _reshape_simplify
deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])

# --------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(transpose_p, x, permutation=permutation)


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise errors.ShapeError(f"transpose: {permutation} is not a permutation of {x.ndim} axes")
    return ShapedArray([x.shape[p] for p in permutation], x.dtype)


transpose_p.impl = lambda x, *, permutation: np.transpose(x, permutation)
transpose_p.abstract_eval = _transpose_abstract
deflinear(transpose_p, lambda ct, x, *, permutation: [
    transpose(ct, tuple(np.argsort(permutation)))])

# --------------------------------------------------------------------------- squeeze

squeeze_p = Primitive("squeeze")


def squeeze(x, dimensions):
    dimensions = tuple(sorted(int(d) % max(x.ndim, 1) for d in dimensions))
    if not dimensions:
        return x
    return bind(squeeze_p, x, dimensions=dimensions)


def _squeeze_abstract(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise errors.ShapeError(
                f"cannot squeeze axis {d} of shape {x.shape}: it has size {x.shape[d]}, not 1")
    return ShapedArray([n for i, n in enumerate(x.shape) if i not in dimensions], x.dtype)


squeeze_p.impl = lambda x, *, dimensions: np.squeeze(x, axis=dimensions)
squeeze_p.abstract_eval = _squeeze_abstract
deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


def expand_dims(x, dimensions):
    """Insert size-1 axes at ``dimensions`` (positions in the result)."""
    ndim = x.ndim + len(dimensions)
    dims = sorted(int(d) % ndim for d in dimensions)
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, shape)

# --------------------------------------------------------------------------- concatenate


concatenate_p = Primitive("concatenate")


def concatenate(xs, dimension):
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, dimension=int(dimension))


def _concat_abstract(*xs, dimension):
    first = xs[0]
    for x in xs[1:]:
        if x.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape))
                                       if i != dimension):
            raise errors.ShapeError(
                "concatenate: all inputs must have the same shape except along axis "
                f"{dimension}; got {', '.join(str(a.shape) for a in xs)}")
        if x.dtype != first.dtype:
            raise errors.ZeraxTypeError("concatenate: inputs must share a dtype")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype)


def _concat_transpose(ct, *xs, dimension):
    res, start = [], 0
    for x in xs:
        aval = x.aval if is_undefined(x) else ShapedArray(x.shape, x.dtype)
        size = aval.shape[dimension]
        if is_undefined(x):
            starts = [0] * len(aval.shape)
            limits = list(ct.shape)
            starts[dimension], limits[dimension] = start, start + size
            res.append(slice_p_bind(ct, starts, limits, None))
        else:
            res.append(None)
        start += size
    return res


concatenate_p.impl = lambda *xs, dimension: np.concatenate(xs, axis=dimension)
concatenate_p.abstract_eval = _concat_abstract
deflinear(concatenate_p, _concat_transpose)

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

# --------------------------------------------------------------------------- dynamic slices


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
dynamic_slice_p.jvp = _ds_jvp
dynamic_slice_p.transpose = _ds_transpose

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
dynamic_update_slice_p.jvp = _dus_jvp
dynamic_update_slice_p.transpose = _dus_transpose

# --------------------------------------------------------------------------- rev, iota

rev_p = Primitive("rev")


def rev(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return bind(rev_p, x, dimensions=dimensions)


rev_p.impl = lambda x, *, dimensions: np.flip(x, axis=dimensions)
rev_p.abstract_eval = lambda x, *, dimensions: ShapedArray(x.shape, x.dtype)
deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])

iota_p = not_differentiable(Primitive("iota"), "it has no operands")


def iota(dtype, shape, dimension=0):
    """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
    return bind(iota_p, dtype=np.dtype(dtype), shape=tuple(int(d) for d in shape),
                dimension=int(dimension))


def _iota_impl(*, dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.ascontiguousarray(np.broadcast_to(r.reshape(expanded), shape))


iota_p.impl = _iota_impl
iota_p.abstract_eval = lambda *, dtype, shape, dimension: ShapedArray(shape, dtype)


# --------------------------------------------------------------------------- batching
# Each rule receives the operands and their batch dimensions (None: not mapped).


def _bid_batch(args, dims, *, shape, broadcast_dimensions):
    from ..batching import moveaxis
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    size = x.shape[0]
    return broadcast_in_dim(x, (size,) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


def _reshape_batch(args, dims, *, new_sizes):
    from ..batching import moveaxis
    x = moveaxis(args[0], dims[0], 0)
    return reshape(x, (x.shape[0],) + tuple(new_sizes)), 0


def _example_axes(nd, d):
    """The actual axes of an operand's per-example axes, batch dimension ``d`` skipped."""
    return [i for i in range(nd) if i != d]


def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    ex = _example_axes(len(x.shape), d)
    return transpose(x, [d] + [ex[p] for p in permutation]), 0


def _squeeze_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    ex = _example_axes(len(x.shape), d)
    actual = tuple(ex[i] for i in dimensions)
    return squeeze(x, actual), d - sum(1 for a in actual if a < d)


def _concat_batch(args, dims, *, dimension):
    from ..batching import bdim_at_front, batch_size_of
    size = batch_size_of(args, dims)
    return concatenate([bdim_at_front(a, d, size) for a, d in zip(args, dims)],
                       dimension + 1), 0


def _pad_batch(args, dims, *, padding_config):
    from ..batching import moveaxis
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


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(d, 0)
    limits.insert(d, x.shape[d])
    st = None if strides is None else tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return slice_p_bind(x, starts, limits, st), d


def _ds_batch(args, dims, *, slice_sizes):
    from ..batching import batch_by_loop
    x, *starts = args
    dx, *dstarts = dims
    if all(d is None for d in dstarts):
        sizes = list(slice_sizes)
        sizes.insert(dx, x.shape[dx])
        st = list(starts)
        st.insert(dx, np.zeros((), np.asarray(starts[0]).dtype if starts else np.int64))
        return dynamic_slice(x, st, sizes), dx
    return batch_by_loop(dynamic_slice_p, args, dims, {"slice_sizes": slice_sizes})


def _dus_batch(args, dims):
    from ..batching import batch_by_loop, bdim_at_front, batch_size_of
    x, update, *starts = args
    dx, du, *dstarts = dims
    if all(d is None for d in dstarts):
        size = batch_size_of(args, dims)
        x, update = bdim_at_front(x, dx, size), bdim_at_front(update, du, size)
        zero = np.zeros((), np.asarray(starts[0]).dtype if starts else np.int64)
        return dynamic_update_slice(x, update, [zero] + list(starts)), 0
    return batch_by_loop(dynamic_update_slice_p, args, dims, {})


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    ex = _example_axes(len(x.shape), d)
    return rev(x, tuple(ex[i] for i in dimensions)), d


broadcast_in_dim_p.batch = _bid_batch
reshape_p.batch = _reshape_batch
transpose_p.batch = _transpose_batch
squeeze_p.batch = _squeeze_batch
concatenate_p.batch = _concat_batch
pad_p.batch = _pad_batch
slice_p.batch = _slice_batch
dynamic_slice_p.batch = _ds_batch
dynamic_update_slice_p.batch = _dus_batch
rev_p.batch = _rev_batch
iota_p.unsupported["batch"] = "it has no operands, so it is never mapped"


# --------------------------------------------------------------------------- Numba lowering
# Each rule writes explicit loops over static shapes into a fresh C-contiguous array
# (see backends/numba/codegen.py).  Loop nests opened with ``ctx.nest`` may become
# ``prange`` loops: their bodies only write distinct output elements.  Loops that
# carry a dependence are opened with ``_nb_serial`` and are never parallel.


def _nb_array(ctx, atom) -> str:
    """Source name of an operand as an array; a literal or a 0-d value held as a scalar
    is wrapped once (never inside loops)."""
    if ctx.is_scalar(atom):
        name = ctx.fresh("c")
        ctx.emit(f"{name} = {ctx.name(atom)}")
        return name
    return ctx.name(atom)


def _nb_scalar(ctx, atom) -> str:
    """Source text of a 0-d operand's value, read once before any loop."""
    if ctx.is_scalar(atom):
        return ctx.scalar(atom)
    name = ctx.fresh("s")
    ctx.emit(f"{name} = {ctx.scalar(atom)}")
    return name


class _nb_serial:
    """``for index in range(start, stop):`` that is never turned into ``prange``."""

    def __init__(self, ctx, index, stop, start=0):
        self.ctx, self.index, self.stop, self.start = ctx, index, stop, start

    def __enter__(self):
        rng = f"{self.start}, {self.stop}" if self.start else f"{self.stop}"
        self.ctx.emit(f"for {self.index} in range({rng}):")
        self.ctx.level += 1
        return self.index

    def __exit__(self, *exc):
        self.ctx.level -= 1


def _nb_shape(shape) -> str:
    return repr(tuple(int(d) for d in shape))


def _nb_ix(items) -> str:
    items = list(items)
    return ", ".join(items) if items else "()"


def _nb_affine(index: str, base: int, step: int = 1) -> str:
    """Source text of ``base + index * step`` with trivial terms left out."""
    term = index if step == 1 else f"{index} * {step}"
    if base == 0:
        return term
    return f"{term} + {base}" if base > 0 else f"{term} - {-base}"


def _nb_empty(ctx, var, shape=None) -> str:
    from ..backends.numba.codegen import dtype_name
    name = ctx.out(var)
    shape = var.aval.shape if shape is None else shape
    ctx.emit(f"{name} = np.empty({_nb_shape(shape)}, {dtype_name(var.aval.dtype)})")
    return name


def _nb_copy_loop(ctx, out, out_ix_fn, src, src_ix_fn, shape):
    """``out[out_ix(i)] = src[src_ix(i)]`` for every index ``i`` of ``shape``."""
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    with ctx.nest(shape) as idx:
        ctx.emit(f"{out}[{_nb_ix(out_ix_fn(idx))}] = {src}[{_nb_ix(src_ix_fn(idx))}]")


def _bid_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    shape, bdims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    ctx.emit(f"# broadcast_in_dim {x.aval.shape} -> {tuple(shape)}")
    in_shape = x.aval.shape
    if in_shape == ():
        s = _nb_scalar(ctx, x)
        out = _nb_empty(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)):
            with ctx.nest(shape) as idx:
                ctx.emit(f"{out}[{_nb_ix(idx)}] = {s}")
        return
    xn = _nb_array(ctx, x)
    out = _nb_empty(ctx, ov)
    _nb_copy_loop(ctx, out, lambda idx: idx, xn,
                  lambda idx: [idx[dst] if in_shape[src] == shape[dst] else "0"
                               for src, dst in enumerate(bdims)], shape)


def _reshape_like_lower(prim_name):
    def rule(ctx, eqn):
        (x,), (ov,) = eqn.invars, eqn.outvars
        ctx.emit(f"# {prim_name} {x.aval.shape} -> {ov.aval.shape}")
        if ov.aval.shape == ():  # a single element: held as a scalar
            name = ctx.fresh("s")
            ctx.emit(f"{name} = {_nb_scalar(ctx, x)}" if x.aval.shape == () else
                     f"{name} = {ctx.name(x)}[{_nb_ix(['0'] * len(x.aval.shape))}]")
            ctx.bind_scalar(ov, name)
            return
        xn = _nb_array(ctx, x)
        out = ctx.out(ov)
        ctx.emit(f"{out} = np.ascontiguousarray({xn}).reshape({_nb_shape(ov.aval.shape)}).copy()")
    return rule


def _transpose_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    perm = eqn.params["permutation"]
    ctx.emit(f"# transpose {perm}")
    xn = _nb_array(ctx, x)
    out = _nb_empty(ctx, ov)

    def src_ix(idx):
        src = [None] * len(perm)
        for k, p in enumerate(perm):
            src[p] = idx[k]
        return src
    _nb_copy_loop(ctx, out, lambda idx: idx, xn, src_ix, ov.aval.shape)


def _concat_lower(ctx, eqn):
    (ov,) = eqn.outvars
    dim = eqn.params["dimension"]
    ctx.emit(f"# concatenate along axis {dim}")
    names = [_nb_array(ctx, x) for x in eqn.invars]
    out = _nb_empty(ctx, ov)
    offset = 0
    for x, xn in zip(eqn.invars, names):
        shape = x.aval.shape

        def out_ix(idx, offset=offset):
            return [_nb_affine(i, offset) if d == dim else i for d, i in enumerate(idx)]
        _nb_copy_loop(ctx, out, out_ix, xn, lambda idx: idx, shape)
        offset += shape[dim]


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


def _rev_lower(ctx, eqn):
    (x,), (ov,) = eqn.invars, eqn.outvars
    dims = eqn.params["dimensions"]
    shape = x.aval.shape
    ctx.emit(f"# rev {tuple(dims)}")
    xn = _nb_array(ctx, x)
    out = _nb_empty(ctx, ov)
    _nb_copy_loop(ctx, out, lambda idx: idx, xn,
                  lambda idx: [f"{shape[d] - 1} - {i}" if d in dims else i
                               for d, i in enumerate(idx)], shape)


def _iota_lower(ctx, eqn):
    from ..backends.numba.codegen import dtype_name
    (ov,) = eqn.outvars
    dim = eqn.params["dimension"]
    shape = ov.aval.shape
    ctx.emit(f"# iota along axis {dim}")
    out = _nb_empty(ctx, ov)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    dt = dtype_name(ov.aval.dtype)
    with ctx.nest(shape) as idx:
        ctx.emit(f"{out}[{_nb_ix(idx)}] = {dt}({idx[dim]})")


broadcast_in_dim_p.lower_numba = _bid_lower
reshape_p.lower_numba = _reshape_like_lower("reshape")
squeeze_p.lower_numba = _reshape_like_lower("squeeze")
transpose_p.lower_numba = _transpose_lower
concatenate_p.lower_numba = _concat_lower
slice_p.lower_numba = _slice_lower
pad_p.lower_numba = _pad_lower
dynamic_slice_p.lower_numba = _ds_lower
dynamic_update_slice_p.lower_numba = _dus_lower
rev_p.lower_numba = _rev_lower
iota_p.lower_numba = _iota_lower
