"""The `zerax.lax` functions that are not a bare primitive: JAX's lax conveniences.

Like JAX's lax, these functions do not promote dtypes or broadcast arrays; a Python
scalar operand takes the dtype of the array operand (it is weakly typed).
"""

from __future__ import annotations

import builtins
import enum

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core import tree
from ..core.api_util import as_input
from ..core.array import Array
from ..core.core import Tracer, bind
from ..ops import elementwise as ew
from ..ops import reduce as red
from ..ops import shape as sh
from ..ops import sort as _sort
from ..ops.gather import take_along_axis as _take_along_axis
from ..ops.linalg import dot_general
from ..ops.misc import stop_gradient
from . import fp as _fp
from ._util import broadcast_shapes, broadcast_to_shape, normalize_axes, normalize_axis
from .control_flow import scan

_PY = (bool, int, float, complex)
builtins_min = builtins.min   # max/min are lax's below


def _coerce(*args):
    """Python scalars take the dtype of the first array operand."""
    dtype = next((np.dtype(a.dtype) for a in args if type(a) not in _PY), None)
    out = []
    for a in args:
        if type(a) in _PY:
            out.append(np.asarray(a, dtype=dtype) if dtype is not None else
                       dtypes.scalar_array(a))
        elif isinstance(a, (Tracer,)) or hasattr(a, "_value"):
            out.append(a)
        else:
            out.append(as_input(a, "lax operand"))
    return out


def _wrap(prim, doc):
    def f(*args):
        return bind(prim, *_coerce(*args))
    f.__name__ = prim.name
    f.__doc__ = doc
    return f


abs = _wrap(ew.abs_p, "Elementwise absolute value.")  # noqa: A001
acos = _wrap(ew.acos_p, "Elementwise arc cosine.")
acosh = _wrap(ew.acosh_p, "Elementwise inverse hyperbolic cosine.")
asin = _wrap(ew.asin_p, "Elementwise arc sine.")
asinh = _wrap(ew.asinh_p, "Elementwise inverse hyperbolic sine.")
atan = _wrap(ew.atan_p, "Elementwise arc tangent.")
atan2 = _wrap(ew.atan2_p, "Elementwise arc tangent of y / x.")
atanh = _wrap(ew.atanh_p, "Elementwise inverse hyperbolic tangent.")
bitwise_and = _wrap(ew.and_p, "Elementwise bitwise and.")
bitwise_or = _wrap(ew.or_p, "Elementwise bitwise or.")
bitwise_xor = _wrap(ew.xor_p, "Elementwise bitwise xor.")
bitwise_not = _wrap(ew.not_p, "Elementwise bitwise not.")
cbrt = _wrap(ew.cbrt_p, "Elementwise cube root.")
ceil = _wrap(ew.ceil_p, "Elementwise ceiling.")
erf = _wrap(ew.erf_p, "The error function.")
erfc = _wrap(ew.erfc_p, "The complementary error function.")
erf_inv = _wrap(ew.erf_inv_p, "The inverse error function.")
exp2 = _wrap(ew.exp2_p, "Elementwise 2 ** x.")
expm1 = _wrap(ew.expm1_p, "Elementwise exp(x) - 1.")
is_finite = _wrap(ew.is_finite_p, "Elementwise finiteness test.")
lgamma = _wrap(ew.lgamma_p, "log |Gamma(x)|.")
log1p = _wrap(ew.log1p_p, "Elementwise log(1 + x).")
logistic = _wrap(ew.logistic_p, "The logistic sigmoid.")
tan = _wrap(ew.tan_p, "Elementwise tangent.")
shift_left = _wrap(ew.shift_left_p, "Elementwise left shift.")
shift_right_arithmetic = _wrap(ew.shift_right_p, "Elementwise arithmetic right shift.")


def round(x, rounding_method=0):  # noqa: A001 - JAX's name
    """Round to the nearest integer: ``rounding_method`` 0 rounds half away from zero
    (JAX's default), 1 rounds half to even."""
    (x,) = _coerce(x)
    if int(rounding_method) == 1:
        return ew.round(x)
    half = np.asarray(0.5, np.dtype(x.dtype))
    ax = bind(ew.abs_p, x)
    return ew.mul(ew.sign(x), ew.floor(ew.add(ax, half)))


def square(x):
    """``x * x``."""
    (x,) = _coerce(x)
    return ew.integer_pow(x, 2)


def reciprocal(x):
    """``1 / x``."""
    (x,) = _coerce(x)
    return ew.div(np.ones((), np.dtype(x.dtype)), x)


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (``dtype``, else the fill value's;
    a Python number takes the mode's default dtype)."""
    shape = tuple(int(d) for d in np.atleast_1d(shape)) if np.ndim(shape) else \
        ((int(shape),) if shape != () else ())
    if dtype is not None:
        dtype = dtypes.requested(dtype, "lax.full")
    if isinstance(fill_value, Tracer):
        v = fill_value if dtype is None else ew.convert_element_type(fill_value, dtype)
        return sh.broadcast_in_dim(v, shape, ())
    if dtype is None:
        dtype = dtypes.dtype_of(fill_value)
    return Array(np.full(shape, fill_value, dtype=dtype))


def full_like(x, fill_value, dtype=None, shape=None):
    """``full`` with ``x``'s shape and dtype unless given."""
    return full(tuple(x.shape) if shape is None else shape, fill_value,
                np.dtype(x.dtype) if dtype is None else dtype)


def broadcast(operand, sizes):
    """Add leading dimensions of the given ``sizes``."""
    (operand,) = _coerce(operand)
    sizes = tuple(int(s) for s in sizes)
    nd = len(operand.shape)
    return sh.broadcast_in_dim(operand, sizes + tuple(operand.shape),
                               tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank):
    """Add leading size-1 dimensions up to ``rank``."""
    (x,) = _coerce(x)
    return sh.reshape(x, (1,) * (rank - len(x.shape)) + tuple(x.shape))


def broadcasted_iota(dtype, shape, dimension):
    """An iota along ``dimension`` of ``shape``."""
    return sh.iota(dtypes.requested(dtype, "lax.broadcasted_iota"), shape, dimension)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions ``start_dimension:stop_dimension`` into one."""
    shape = list(operand.shape)
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = int(np.prod(shape[start_dimension:stop], dtype=np.int64))
    return sh.reshape(operand, shape[:start_dimension] + [size] + shape[stop:])


def _in_dim(x, start, size, axis, dynamic):
    nd = len(x.shape)
    axis = axis % nd
    if dynamic:
        zero = np.zeros((), np.asarray(start).dtype if not isinstance(start, Tracer)
                        else np.dtype(start.dtype))
        starts = [zero] * nd
        starts[axis] = start
        sizes = list(x.shape)
        sizes[axis] = size
        return sh.dynamic_slice(x, starts, sizes)
    starts = [0] * nd
    limits = list(x.shape)
    starts[axis], limits[axis] = start, start + size
    return sh.slice_p_bind(x, starts, limits)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[..., start:limit:stride, ...]`` along ``axis``."""
    nd = len(operand.shape)
    axis = axis % nd
    n = operand.shape[axis]
    start = 0 if start_index is None else int(start_index) % (n + 1) if start_index < 0 \
        else int(start_index)
    limit = n if limit_index is None else int(limit_index) % (n + 1) if limit_index < 0 \
        else int(limit_index)
    starts, limits, strides = [0] * nd, list(operand.shape), [1] * nd
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return sh.slice_p_bind(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The ``index``-th slice along ``axis``."""
    n = operand.shape[axis % len(operand.shape)]
    index = int(index) % n
    out = _in_dim(operand, index, 1, axis, False)
    return out if keepdims else sh.squeeze(out, (axis % len(operand.shape),))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """``dynamic_slice`` along one axis."""
    return _in_dim(operand, start_index, int(slice_size), axis, True)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """The ``index``-th slice along ``axis`` (``index`` may be traced)."""
    out = _in_dim(operand, index, 1, axis, True)
    return out if keepdims else sh.squeeze(out, (axis % len(operand.shape),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``dynamic_update_slice`` along one axis."""
    nd = len(operand.shape)
    axis = axis % nd
    dt = np.asarray(start_index).dtype if not isinstance(start_index, Tracer) \
        else np.dtype(start_index.dtype)
    starts = [np.zeros((), dt)] * nd
    starts[axis] = start_index
    return sh.dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """Write ``update`` (without the axis) at ``index`` along ``axis``."""
    axis = axis % len(operand.shape)
    if len(update.shape) == len(operand.shape) - 1:
        update = sh.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


class Precision(enum.Enum):
    """JAX's ``lax.Precision`` (the passes an accelerator's matrix unit makes): accepted
    by the ``precision=`` arguments and ignored, as every product here is computed in
    its operands' own dtype."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading batch dimensions."""
    nb = len(lhs.shape) - 2
    batch = tuple(range(nb))
    return dot_general(lhs, rhs, (((nb + 1,), (nb,)), (batch, batch)))


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along ``dimension`` (a tuple of operands is sorted by the first)."""
    if isinstance(operand, (tuple, list)):
        keys, axis = _sort_axis(operand[0], dimension, "argsort")
        perm = _sort.argsort(keys, axis)
        return tuple(_gather_along(o, perm, dimension) for o in operand)
    operand, axis = _sort_axis(operand, dimension, "sort")
    return _sort.sort(operand, axis)


def _sort_operand(x, fname):
    """``x`` as a zerax value, as ``zerax.numpy``'s sorting functions take it."""
    if type(x) in (bool, int, float, complex):
        return Array._wrap(dtypes.scalar_array(x))
    return as_input(x, f"zerax.numpy.{fname}: argument 0")


def _sort_axis(x, axis, fname):
    x = _sort_operand(x, fname)
    if len(x.shape) == 0:
        raise errors.AxisError(f"zerax.numpy.{fname}: axis {axis} is out of bounds for array "
                                "of dimension 0")
    return x, normalize_axis(axis, len(x.shape), fname)


def _gather_along(x, idx, axis):
    """``x`` gathered by the permutation ``idx`` (of ``x``'s shape) along ``axis``."""
    x = _sort_operand(x, "take_along_axis")
    if len(x.shape) != len(idx.shape):
        raise errors.ShapeError(
            "zerax.numpy.take_along_axis: `indices` and `arr` must have the same number of "
            f"dimensions, got {len(idx.shape)} and {len(x.shape)}")
    axis = normalize_axis(axis, len(x.shape), "take_along_axis")
    return _take_along_axis(x, idx, axis, mode="fill", fill_value=None)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort ``keys`` and permute ``values`` alike."""
    return sort((keys, values), dimension)


def top_k(operand, k):
    """The ``k`` largest entries of the last axis and their indices, largest first."""
    operand, axis = _sort_axis(operand, -1, "argsort")
    n = operand.shape[axis]        # stable descending: equal entries keep their order
    perm = sh.rev(_sort.argsort(sh.rev(operand, (axis,)), axis), (axis,))
    idx = ew.sub(np.array(n - 1, np.int64), perm)
    idx = idx[..., :int(k)]
    return _gather_along(operand, idx, axis), idx.astype(np.int32)


def reduce_and(operand, axes):
    """Logical and over ``axes``."""
    return red.reduce_min(ew.convert_element_type(operand, np.bool_), axes)


def reduce_or(operand, axes):
    """Logical or over ``axes``."""
    return red.reduce_max(ew.convert_element_type(operand, np.bool_), axes)


def cumlogsumexp(operand, axis=0, reverse=False):
    """``log(cumsum(exp(operand)))`` along ``axis``, computed stably."""
    shift = stop_gradient(red.reduce_max(operand, tuple(range(len(operand.shape)))))
    shifted = ew.exp(ew.sub(operand, shift))
    return ew.add(ew.log(red.cumsum(shifted, axis, reverse)), shift)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of an associative ``fn`` along ``axis`` (log-depth; ``elems`` may
    be a pytree of arrays sharing the axis length)."""
    leaves, treedef = tree.tree_flatten(elems)
    leaves = [as_input(x, "associative_scan element") for x in leaves]
    if not leaves:
        raise errors.ZeraxValueError("associative_scan needs at least one array")
    n = leaves[0].shape[axis]
    if reverse:
        leaves = [_flip(x, axis) for x in leaves]
    shift = 1
    while shift < n:
        head = [slice_in_dim(x, 0, shift, axis=axis) for x in leaves]
        prev = tree.tree_unflatten(treedef, [slice_in_dim(x, 0, n - shift, axis=axis)
                                             for x in leaves])
        cur = tree.tree_unflatten(treedef, [slice_in_dim(x, shift, n, axis=axis)
                                            for x in leaves])
        combined = tree.tree_leaves(fn(prev, cur))
        leaves = [_concatenate([h, c], axis) for h, c in zip(head, combined)]
        shift *= 2
    if reverse:
        leaves = [_flip(x, axis) for x in leaves]
    return tree.tree_unflatten(treedef, leaves)

add = _wrap(ew.add_p, "Elementwise x + y.")
sub = _wrap(ew.sub_p, "Elementwise x - y.")
mul = _wrap(ew.mul_p, "Elementwise x * y.")
div = _wrap(ew.div_p, "Elementwise x / y (floats).")
def rem(x, y):
    """Elementwise remainder with the sign of ``x`` (C's ``fmod``; JAX's ``lax.rem``:
    ``rem(-7, 3)`` is -1, where ``numpy.remainder`` gives 2).

    >>> import numpy as np
    >>> from zerax import lax
    >>> lax.rem(np.array([-7, 7]), np.array([3, -3]))
    Array([-1,  1], dtype=int64)
    """
    return ew.truncated_rem(*_coerce(x, y))

pow = _wrap(ew.pow_p, "Elementwise x ** y.")  # noqa: A001
max = _wrap(ew.max_p, "Elementwise maximum.")  # noqa: A001
min = _wrap(ew.min_p, "Elementwise minimum.")  # noqa: A001
eq = _wrap(ew.eq_p, "Elementwise x == y.")
ne = _wrap(ew.ne_p, "Elementwise x != y.")
lt = _wrap(ew.lt_p, "Elementwise x < y.")
le = _wrap(ew.le_p, "Elementwise x <= y.")
gt = _wrap(ew.gt_p, "Elementwise x > y.")
ge = _wrap(ew.ge_p, "Elementwise x >= y.")
neg = _wrap(ew.neg_p, "Elementwise -x.")
sign = _wrap(ew.sign_p, "Elementwise sign.")
floor = _wrap(ew.floor_p, "Elementwise floor.")
exp = _wrap(ew.exp_p, "Elementwise exp.")
log = _wrap(ew.log_p, "Elementwise natural logarithm.")
sin = _wrap(ew.sin_p, "Elementwise sine.")
cos = _wrap(ew.cos_p, "Elementwise cosine.")
sinh = _wrap(ew.sinh_p, "Elementwise hyperbolic sine.")
cosh = _wrap(ew.cosh_p, "Elementwise hyperbolic cosine.")
tanh = _wrap(ew.tanh_p, "Elementwise hyperbolic tangent.")
sqrt = _wrap(ew.sqrt_p, "Elementwise square root.")
rsqrt = _wrap(ew.rsqrt_p, "Elementwise 1 / sqrt(x).")
digamma = _wrap(ew.digamma_p, "The digamma function.")


def select(pred, on_true, on_false):
    """``where(pred, on_true, on_false)`` on equal shapes (JAX's lax.select)."""
    return ew.select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002 - JAX's names
    """``min(max(x, min), max)`` elementwise (the bounds take x's dtype if Python
    scalars)."""
    x2, lo, hi = _coerce(x, min, max)
    return bind(ew.clamp_p, lo, x2, hi)


# Cumulative reductions with JAX's defaults (``axis=0``).
def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum along ``axis`` (first axis by default); ``reverse`` runs from the end."""
    (operand,) = _coerce(operand)
    return red.cumsum(operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product along ``axis`` (first axis by default)."""
    (operand,) = _coerce(operand)
    return red.cumprod(operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum along ``axis`` (first axis by default)."""
    (operand,) = _coerce(operand)
    return red.cummax(operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum along ``axis`` (first axis by default)."""
    (operand,) = _coerce(operand)
    return red.cummin(operand, axis, reverse)


def reduce(operands, init_values, computation, dimensions):
    """Reduce ``operands`` over ``dimensions`` with the binary ``computation``, starting
    from ``init_values`` (JAX's ``lax.reduce``; pytrees of operands are reduced together).

    The usual monoids (``lax.add``, ``mul``, ``max``, ``min``, ``bitwise_and``/``or``, or
    the matching ``zerax.numpy`` ufuncs) become one reduction primitive; any other
    associative ``computation`` is applied along the flattened reduced axes with ``scan``,
    so it differentiates and compiles like any other program.

    >>> import zerax.numpy as znp
    >>> reduce(znp.arange(6.0).reshape(2, 3), 0.0, add, (0,))
    Array([3., 5., 7.], dtype=float64)
    """
    leaves, treedef = tree.tree_flatten(operands)
    inits = tree.tree_leaves(init_values)
    if len(inits) != len(leaves):
        raise errors.ZeraxTypeError(
            f"lax.reduce: {len(leaves)} operands but {len(inits)} init values; give one "
            "init value per operand, in the same tree structure.")
    arrays = [as_input(x, "lax.reduce operand") for x in leaves]
    shapes = {tuple(a.shape) for a in arrays}
    if len(shapes) != 1:
        raise errors.ShapeError(f"lax.reduce: operands must have equal shapes, got "
                                f"{[tuple(a.shape) for a in arrays]}.")
    if any(int(d) < 0 for d in dimensions):   # as JAX: no negative dimensions here
        raise errors.ShapeError(f"lax.reduce: dimensions {tuple(dimensions)} must be "
                                "non-negative axes of the operands.")
    dims = normalize_axes(tuple(dimensions), len(arrays[0].shape), "lax.reduce")
    monoid = _MONOIDS.get(computation) if len(leaves) == 1 else None
    if monoid in (reduce_and, reduce_or) and arrays[0].dtype != np.bool_:
        monoid = None                # bitwise on integers: the general path below
    if monoid is not None:
        x = arrays[0]
        init = _as_dtype(inits[0], x.dtype)
        return computation(monoid(x, dims), init)
    keep = [d for d in range(len(arrays[0].shape)) if d not in dims]
    kept_shape = tuple(arrays[0].shape[d] for d in keep)
    # reduced axes first, flattened into one axis that scan walks
    m = int(np.prod([arrays[0].shape[d] for d in dims], dtype=np.int64))
    moved = [sh.reshape(sh.transpose(a, dims + tuple(keep)), (m,) + kept_shape)
             for a in arrays]
    carry0 = tree.tree_unflatten(
        treedef, [_broadcast_to(_as_dtype(i, a.dtype), kept_shape)
                  for i, a in zip(inits, arrays)])

    def step(carry, xs):
        return computation(carry, tree.tree_unflatten(treedef, list(xs))), None
    out, _ = scan(step, carry0, tuple(moved))
    return out


class _MonoidTable(dict):
    """computation -> reduction; the NumPy layer adds its ufuncs (``zerax.numpy.add``
    and the others) with `register_monoid` when it is imported."""

    def get(self, key, default=None):
        try:
            return super().get(key, default)
        except TypeError:            # an unhashable computation is not a known monoid
            return default


_MONOIDS = _MonoidTable()
for _fns, _reduction in (((add,), red.reduce_sum), ((mul,), red.reduce_prod),
                         ((max,), red.reduce_max), ((min,), red.reduce_min),
                         ((bitwise_and,), reduce_and), ((bitwise_or,), reduce_or)):
    for _f in _fns:
        _MONOIDS[_f] = _reduction


def register_monoid(computation, reduction):
    """Let `reduce` (and `reduce_window`) turn ``computation`` into ``reduction``, one of
    ``reduce_sum``/``reduce_prod``/``reduce_max``/``reduce_min``/`reduce_and`/`reduce_or`."""
    _MONOIDS[computation] = reduction


def _as_dtype(v, dtype):
    """``v`` (an init value) as a zerax value of ``dtype``."""
    dtype = np.dtype(dtype)
    if isinstance(v, (Array, Tracer)):
        return v if np.dtype(v.dtype) == dtype else ew.convert_element_type(v, dtype)
    return Array._wrap(np.array(v, dtype=dtype))


def _broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (NumPy's rules, as ``zerax.numpy.broadcast_to``)."""
    xs = tuple(x.shape)
    nlead = len(shape) - len(xs)
    if nlead < 0 or any(n not in (1, shape[nlead + i]) for i, n in enumerate(xs)):
        raise errors.ShapeError(
            f"zerax.numpy.broadcast_to: cannot broadcast an array of shape {xs} to "
            f"shape {shape}")
    return sh.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def _flip(x, axis):
    return sh.rev(x, normalize_axes(axis, len(x.shape), "flip"))


def _concatenate(xs, axis):
    """``xs`` joined along ``axis`` in their common dtype."""
    dt = np.result_type(*[np.dtype(x.dtype) for x in xs])
    return sh.concatenate([x if np.dtype(x.dtype) == dt else ew.convert_element_type(x, dt)
                           for x in xs], normalize_axis(axis, len(xs[0].shape), "concatenate"))


# --------------------------------------------------------------------------- shapes


def split(operand, sizes, axis=0):
    """Split ``operand`` along ``axis`` into pieces of the given ``sizes`` (which must
    add up to the axis length).

    >>> import numpy as np
    >>> [p.shape for p in split(np.zeros((5, 2)), (2, 3))]
    [(2, 2), (3, 2)]
    """
    (operand,) = _coerce(operand)
    axis = normalize_axis(axis, len(operand.shape), "lax.split")
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != operand.shape[axis]:
        raise errors.ShapeError(
            f"lax.split: sizes {sizes} must be non-negative and add up to the size "
            f"{operand.shape[axis]} of axis {axis}.")
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(operand, start, start + s, axis=axis))
        start += s
    return out


def tile(operand, reps):
    """Repeat ``operand`` ``reps[i]`` times along each axis ``i`` (one rep per axis).

    >>> tile(np.array([[1, 2]]), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int64)
    """
    (operand,) = _coerce(operand)
    shape = tuple(operand.shape)
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape) or builtins_min(reps, default=0) < 0:
        raise errors.ShapeError(
            f"lax.tile: reps {reps} must give one non-negative count per axis of the "
            f"operand of shape {shape}.")
    big = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    out = sh.broadcast_in_dim(operand, big, tuple(range(1, 2 * len(shape), 2)))
    return sh.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose contents do not matter (zeros here).

    >>> empty((2,), np.float32).shape
    (2,)
    """
    return full(shape, 0, dtype)


def stack(operands, axis=0):
    """Stack equal-shaped, equal-dtype arrays along a new ``axis`` (no promotion).

    >>> stack([np.zeros(3), np.ones(3)], axis=1).shape
    (3, 2)
    """
    ops = [as_input(x, "lax.stack operand") for x in operands]
    if not ops:
        raise errors.ZeraxValueError("lax.stack needs at least one operand")
    shape, dt = tuple(ops[0].shape), np.dtype(ops[0].dtype)
    if any(tuple(x.shape) != shape or np.dtype(x.dtype) != dt for x in ops):
        raise errors.ZeraxTypeError(
            "lax.stack: operands must have equal shapes and dtypes, got "
            f"{[(tuple(x.shape), np.dtype(x.dtype).name) for x in ops]}.")
    axis = normalize_axis(axis, len(shape) + 1, "lax.stack")
    return sh.concatenate([sh.expand_dims(x, (axis,)) for x in ops], axis)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> [a.shape for a in unstack(np.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    (x,) = _coerce(x)
    axis = normalize_axis(axis, len(x.shape), "lax.unstack")
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


# --------------------------------------------------------------------------- bits


def _int_operands(fname, *args):
    args = _coerce(*args)
    dts = {np.dtype(a.dtype) for a in args}
    if len(dts) != 1 or next(iter(dts)).kind not in "iu":
        raise errors.ZeraxTypeError(
            f"lax.{fname} takes integer operands of one dtype, got "
            f"{', '.join(sorted(d.name for d in dts))}.")
    return args, next(iter(dts))


def _unsigned(x, dt):
    if dt.kind == "u":
        return x
    return ew.convert_element_type(x, np.dtype(f"uint{dt.itemsize * 8}"))


def _from_unsigned(x, dt):
    return x if np.dtype(x.dtype) == dt else ew.convert_element_type(x, dt)


def shift_right_logical(x, y):
    """Elementwise logical right shift: zeros come in from the left, also for signed
    integers; shifts of the bit width or more (or negative) give 0, as in XLA.

    >>> shift_right_logical(np.array([-8, 8], np.int8), np.array([1, 1], np.int8))
    Array([124,   4], dtype=int8)
    """
    (x, y), dt = _int_operands("shift_right_logical", x, y)
    bits = dt.itemsize * 8
    ux, uy = _unsigned(x, dt), _unsigned(y, dt)
    u = np.dtype(ux.dtype)
    big = ew.ge(uy, np.array(bits, u))
    safe = ew.select_n(big, uy, np.zeros((), u))
    out = ew.select_n(big, bind(ew.shift_right_p, ux, safe), np.zeros((), u))
    return _from_unsigned(out, dt)


def _popcount_unsigned(x):
    u = np.dtype(x.dtype)
    bits = u.itemsize * 8

    def k(pattern):
        return np.array(int(pattern, 16) & ((1 << bits) - 1), u)

    def shr(v, n):
        return bind(ew.shift_right_p, v, np.array(n, u))

    x = ew.sub(x, ew.bitwise_and(shr(x, 1), k("5" * 16)))
    x = ew.add(ew.bitwise_and(x, k("3" * 16)), ew.bitwise_and(shr(x, 2), k("3" * 16)))
    x = ew.bitwise_and(ew.add(x, shr(x, 4)), k("0f" * 8))
    n = 8
    while n < bits:                  # add up the byte counts into the lowest byte
        x = ew.add(x, shr(x, n))
        n *= 2
    return ew.bitwise_and(x, np.array(0xFF, u)) if bits > 8 else x


def population_count(x):
    """Elementwise number of set bits (of the two's complement for signed integers).

    >>> population_count(np.array([0, 7, -1], np.int8))
    Array([0, 3, 8], dtype=int8)
    """
    (x,), dt = _int_operands("population_count", x)
    return _from_unsigned(_popcount_unsigned(_unsigned(x, dt)), dt)


def clz(x):
    """Elementwise number of leading zero bits.

    >>> clz(np.array([0, 1, -1], np.int32))
    Array([32, 31,  0], dtype=int32)
    """
    (x,), dt = _int_operands("clz", x)
    bits = dt.itemsize * 8
    ux = _unsigned(x, dt)
    u = np.dtype(ux.dtype)
    n = 1
    while n < bits:                  # smear the highest set bit to the right
        ux = ew.bitwise_or(ux, bind(ew.shift_right_p, ux, np.array(n, u)))
        n *= 2
    return _from_unsigned(ew.sub(np.array(bits, u), _popcount_unsigned(ux)), dt)


def _tree_reduce(x, axes, op, fname):
    """Reduce ``axes`` of ``x`` with the associative elementwise ``op`` by halving."""
    nd = len(x.shape)
    axes = normalize_axes(tuple(axes), nd, fname)
    keep = [d for d in range(nd) if d not in axes]
    kept = tuple(x.shape[d] for d in keep)
    m = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if m == 0:
        return full(kept, 0, np.dtype(x.dtype))
    if axes + tuple(keep) != tuple(range(nd)):
        x = sh.transpose(x, axes + tuple(keep))
    x = sh.reshape(x, (m,) + kept)
    while m > 1:
        h = m // 2
        pair = op(slice_in_dim(x, 0, h), slice_in_dim(x, h, 2 * h))
        x = pair if m % 2 == 0 else sh.concatenate([pair, slice_in_dim(x, 2 * h, m)], 0)
        m = x.shape[0]
    return sh.reshape(x, kept)


def reduce_xor(operand, axes):
    """Bitwise xor (for booleans: parity) over ``axes``.

    >>> reduce_xor(np.array([3, 5, 6]), (0,))
    Array(0, dtype=int64)
    """
    (operand,) = _coerce(operand)
    if np.dtype(operand.dtype).kind not in "biu":
        raise errors.ZeraxTypeError(
            f"lax.reduce_xor takes boolean or integer operands, got {np.dtype(operand.dtype)}")
    return _tree_reduce(operand, axes, ew.bitwise_xor, "lax.reduce_xor")


def nextafter(x1, x2):
    """The next representable float after ``x1`` towards ``x2`` (same dtypes, exact).

    >>> nextafter(np.float32(1.0), np.float32(2.0))
    Array(1.0000001, dtype=float32)
    """
    a, b = _coerce(x1, x2)
    if np.dtype(a.dtype) != np.dtype(b.dtype) or dtype_kind(np.dtype(a.dtype)) != "f":
        raise errors.ZeraxTypeError(
            "lax.nextafter takes float operands of one dtype, got "
            f"{np.dtype(a.dtype)} and {np.dtype(b.dtype)}.")
    sa, sb = tuple(a.shape), tuple(b.shape)
    if sa != sb:                     # broadcast as zerax.numpy.nextafter does
        shape = broadcast_shapes("nextafter", sa, sb)
        a = broadcast_to_shape(a, shape) if sa != () else a
        b = broadcast_to_shape(b, shape) if sb != () else b
    return _fp.nextafter(a, b)


def optimization_barrier(operand):
    """``operand`` (a pytree of arrays) unchanged: JAX's ``lax.optimization_barrier``
    stops XLA from moving computations across it (e.g. to keep a rematerialisation);
    zerax's compiler does not reorder across function results that way, so the values
    pass through as they are.

    >>> import zerax.lax as lax, zerax.numpy as znp
    >>> lax.optimization_barrier((znp.ones(2), 3.0))
    (Array([1., 1.], dtype=float64), Array(3., dtype=float64))
    """
    return tree.tree_map(lambda x: as_input(x, "optimization_barrier operand"), operand)


