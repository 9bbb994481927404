"""Shape primitives: broadcast, reshape, transpose, squeeze, concatenate, reverse, iota,
with their rules (implementation, shape rule, JVP, transpose, batching, eager VJP).

All but iota are linear in their array operands; the JVP of a linear primitive applies
the primitive to the tangents (`deflinear`).  The transpose of ``broadcast_in_dim`` is a
sum, so it is declared with ``reduce_sum`` in `reduce` (a module above this one).  The
slicing family (slice, pad, dynamic_slice, dynamic_update_slice) lives in `slicing`, a
module below, and is re-exported here; pad's batching rule, which broadcasts, is
declared here.  The lowerings are in ``backends/lowering/shape.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import is_undefined
from ..core.core import Primitive, ShapedArray, bind
from . import _factory
from ._factory import deflinear, not_differentiable
from .elementwise import add, mul
from .slicing import (_pad_impl, dynamic_slice, dynamic_slice_p, dynamic_update_slice,
                      dynamic_update_slice_p, pad, pad_p, slice_p, slice_p_bind)
from ..interpreters.batching import batch_rules, batch_size_of, bdim_at_front, moveaxis
from ..interpreters.tape import vjp_rules
from ..ir.tracing import simplify_rules

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims",
           "concatenate", "rev", "iota", "broadcast_in_dim_p", "reshape_p", "transpose_p",
           "squeeze_p", "concatenate_p", "rev_p", "iota_p",
           # re-exported from `slicing`
           "slice_p_bind", "pad", "dynamic_slice", "dynamic_update_slice", "slice_p",
           "pad_p", "dynamic_slice_p", "dynamic_update_slice_p"]

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


def _bid_summed_axes(in_shape, shape, broadcast_dimensions):
    """The result's axes that a broadcast created or stretched (summed by its transpose)."""
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    expanded = [dst for src, dst in enumerate(broadcast_dimensions)
                if in_shape[src] == 1 and shape[dst] != 1]
    return tuple(sorted(summed + expanded))

def _bid_vjp(ct, ans, x, *, shape, broadcast_dimensions):  # the transpose on NumPy values
    in_shape = x.shape
    axes = _bid_summed_axes(in_shape, shape, broadcast_dimensions)
    out = np.add.reduce(ct, axis=axes, dtype=ct.dtype) if axes else ct
    return out.reshape(in_shape)


broadcast_in_dim_p.impl = _bid_impl
broadcast_in_dim_p.abstract_eval = _bid_abstract
vjp_rules[broadcast_in_dim_p] = (_bid_vjp,)
# Linear: its JVP and transpose (a reduce_sum) are declared in `reduce`.

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
simplify_rules[reshape_p] = _reshape_simplify
deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])
vjp_rules[reshape_p] = (lambda ct, ans, x, *, new_sizes: ct.reshape(x.shape),)

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
vjp_rules[transpose_p] = (lambda ct, ans, x, *, permutation: ct.transpose(np.argsort(permutation)),)

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
vjp_rules[squeeze_p] = (lambda ct, ans, x, *, dimensions: ct.reshape(x.shape),)


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
    if not -first.ndim <= dimension < first.ndim:
        raise errors.ShapeError(
            f"concatenate: dimension {dimension} is out of bounds for operands of shapes "
            f"{', '.join(str(a.shape) for a in xs)}")
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
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    size = x.shape[0]
    return broadcast_in_dim(x, (size,) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


def _reshape_batch(args, dims, *, new_sizes):
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
    size = batch_size_of(args, dims)
    return concatenate([bdim_at_front(a, d, size) for a, d in zip(args, dims)],
                       dimension + 1), 0


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    ex = _example_axes(len(x.shape), d)
    return rev(x, tuple(ex[i] for i in dimensions)), d


batch_rules[broadcast_in_dim_p] = _bid_batch
batch_rules[reshape_p] = _reshape_batch
batch_rules[transpose_p] = _transpose_batch
batch_rules[squeeze_p] = _squeeze_batch
batch_rules[concatenate_p] = _concat_batch
batch_rules[rev_p] = _rev_batch
iota_p.unsupported["batch"] = "it has no operands, so it is never mapped"


# pad is declared in `slicing` (below); its batching rule broadcasts a batched padding
# value over the padded example, so it is declared here.
def _pad_batch(args, dims, *, padding_config):
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


batch_rules[pad_p] = _pad_batch


_factory.install(broadcast_in_dim=broadcast_in_dim)  # for the elementwise rules' broadcasting
