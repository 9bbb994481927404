"""Indexing: ``x[idx]`` and the gather primitive (the ``x.at[idx]`` updates and the
scatter primitives live in `index_update`, re-exported here).

An index expression is first *normalized* statically (`_parse`): Ellipsis expanded,
slices resolved against the shape, static ints bound-checked, boolean masks (which
must be concrete) turned into integer arrays with ``np.nonzero``, a 0-d boolean turned
into an index over a new size-1 axis (what NumPy does).  Then:

* basic indexing (slices, ints, None) lowers to ``slice``/``rev``/``reshape``, and a
  traced scalar index to ``dynamic_slice``, so derivative programs stay simple (a scalar
  index that varies over a ``vmap`` batch is a gather instead, which batches without a
  loop);
* advanced (integer-array) indexing is the ``gather`` primitive.  Its static param
  ``indexer`` is the normalized index tuple, with ``("a", k)`` standing for the k-th
  index-array operand; its implementation runs NumPy's own indexing, so the result
  (including where the advanced dims go) is NumPy's;
* ``x.at[idx].op(v)`` is one of the ``scatter`` primitives (set, add, mul, min, max)
  with the same ``indexer``; updates are broadcast to the indexed shape first.

Traced index values follow JAX: negative indices wrap; out-of-bounds indices are
clamped in gathers (``mode="clip"``) or give ``fill_value`` (``mode="fill"``) and are
dropped in scatters (``mode="drop"``).  Concrete out-of-bounds indices raise IndexError
like NumPy unless a ``mode`` is given explicitly.

Batching (`batch_indexer`, shared with the scatters): the batch becomes one more entry of
the indexer.  A mapped operand with unmapped indices gets a leading full slice over its
batch axis; when an index array is mapped, every mapped index array gets its batch axis
in front (then the broadcast advanced shape is ``(B,) + per-example shape``) and a
mapped operand gets an ``iota`` index array over its batch axis, placed next to the
first advanced entry so NumPy's placement of the advanced dims does not change.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.array import Array
from ..core.core import Primitive, ShapedArray, Tracer, bind, concrete_value
from ._factory import vjp_from_transpose
from .elementwise import add, convert_element_type, lt, select_n
from .shape import dynamic_slice, iota, reshape, rev, slice_p_bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

_INTP = np.dtype(np.int64)

# --------------------------------------------------------------------------- parsing


class _Plan:
    """A normalized index: ``entries`` over an array of ``shape`` (the indexed array
    with ``expand`` size-1 axes inserted for 0-d boolean indices).

    Entries: ``None`` (new axis), ``("s", start, size, step)`` (a slice: elements
    ``start + i*step`` for ``i < size``), ``("i", v)`` (a static int), ``("a", k)``
    (advanced: ``arrays[k]``, an int ndarray or an int tracer)."""

    __slots__ = ("shape", "expand", "entries", "arrays")

    def __init__(self, shape, expand, entries, arrays):
        self.shape = tuple(shape)
        self.expand = tuple(expand)
        self.entries = tuple(entries)
        self.arrays = list(arrays)

    @property
    def advanced(self) -> bool:
        return any(e is not None and e[0] == "a" for e in self.entries)


_INVALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
            "integer or boolean arrays are valid indices")


def _flat_items(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _flat_items(e)
    else:
        yield x


def _list_to_array(items):
    """A (nested) list that holds tracers, as one traced array."""
    from .shape import concatenate
    if not isinstance(items, (list, tuple)):
        if isinstance(items, Tracer):
            return items
        return np.asarray(items)
    parts = [_list_to_array(e) for e in items]
    if not parts:
        return np.zeros((0,), _INTP)
    dts = {np.dtype(p.dtype) for p in parts}
    if any(d.kind not in "biu" for d in dts):
        raise errors.ZeraxIndexError(_INVALID)
    dtype = np.result_type(*dts)
    parts = [convert_element_type(p, dtype) if isinstance(p, Tracer) else np.asarray(p, dtype)
             for p in parts]
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) != 1:
        raise errors.ZeraxIndexError(f"an index list holds elements of different shapes {sorted(shapes)}")
    return concatenate([reshape(p, (1,) + tuple(p.shape)) for p in parts], 0)


def _classify(item):
    """One user index item -> (kind, value)."""
    if item is None:
        return ("none", None)
    if item is Ellipsis:
        return ("ellipsis", None)
    if isinstance(item, slice):
        return ("slice", item)
    if isinstance(item, (bool, np.bool_)):
        return ("bool0", bool(item))
    if isinstance(item, (int, np.integer)):
        return ("int", int(item))
    if isinstance(item, Tracer):
        kind = np.dtype(item.dtype).kind
        if kind == "b":
            try:
                value = concrete_value(item, "boolean indexing")
            except errors.ConcretizationError:
                raise errors.NonConcreteBooleanIndexError(
                    f"a traced boolean mask {item.aval.str_short()} was used as an index at "
                    f"{errors.user_frame()}. The result's shape would depend on the mask's "
                    "values, which are not known while tracing. Use "
                    "zerax.numpy.where(mask, x, other) to keep the shape, "
                    "x.at[mask].set(v) for an update, or build the mask from static (NumPy) "
                    "values.") from None
            return _classify(np.asarray(value))
        if kind in "iu":
            return ("arr", item)
        raise errors.ZeraxIndexError(f"{_INVALID}; got a traced array of dtype {np.dtype(item.dtype).name}")
    if type(item) is Array:
        return _classify(item._value)
    if isinstance(item, (list, tuple)):
        if any(isinstance(e, Tracer) for e in _flat_items(item)):
            return _classify(_list_to_array(item))
        try:
            arr = np.asarray(item)
        except (ValueError, TypeError):
            raise errors.ZeraxIndexError(f"{_INVALID}; got the list {item!r:.60}") from None
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(_INTP)
        return _classify(arr)
    if isinstance(item, np.ndarray):
        kind = item.dtype.kind
        if kind == "b":
            return ("bool0", bool(item)) if item.ndim == 0 else ("mask", item)
        if kind in "iu":
            return ("int", int(item)) if item.ndim == 0 else ("arr", item)
        raise errors.ZeraxIndexError("arrays used as indices must be of integer (or boolean) type, got "
                         f"dtype {item.dtype.name}")
    raise errors.ZeraxIndexError(f"{_INVALID}; got {type(item).__name__} {item!r:.60}")


def _slice_bound(v):
    if v is None:
        return None
    if isinstance(v, (Array, Tracer)):
        v = concrete_value(v, "using it as a slice bound (for a traced start, use "
                              "zerax.lax.dynamic_slice)")
    try:
        return int(np.asarray(v).__index__()) if not isinstance(v, int) else v
    except (TypeError, AttributeError):
        raise errors.ZeraxTypeError(
            f"slice indices must be integers or None, got {v!r:.40}") from None


def _oob(v, axis, n):
    return errors.ZeraxIndexError(f"index {v} is out of bounds for axis {axis} with size {n}")


def _parse(shape, idx, check: bool = True) -> _Plan:
    """Normalize ``idx`` for an array of ``shape`` (see `_Plan`).  With ``check``,
    concrete indices are bound-checked (IndexError) and their negatives wrapped."""
    shape = tuple(shape)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = [_classify(it) for it in idx]
    n_ell = sum(1 for k, _ in items if k == "ellipsis")
    if n_ell > 1:
        raise errors.ZeraxIndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else 1 for k, v in items
                   if k in ("slice", "int", "arr", "mask"))
    if consumed > len(shape):
        raise errors.ZeraxIndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [("slice", slice(None))] * (len(shape) - consumed)
    if n_ell:
        # An Ellipsis that stands for no axes still separates advanced indices (NumPy).
        i = [k for k, _ in items].index("ellipsis")
        items = items[:i] + (fill or [("empty_ellipsis", None)]) + items[i + 1:]
    else:
        items = items + fill

    entries, arrays, expand, new_shape, to_check = [], [], [], [], []
    axis = 0
    for kind, v in items:
        if kind == "none":
            entries.append(None)
            continue
        if kind == "empty_ellipsis":
            entries.append(("e",))
            continue
        if kind == "bool0":
            expand.append(len(new_shape))
            new_shape.append(1)
            entries.append(("a", len(arrays)))
            arrays.append(np.zeros(int(v), _INTP))
            continue
        if kind == "mask":
            want = shape[axis:axis + v.ndim]
            for d, (m, n) in enumerate(zip(v.shape, want)):
                if m != n:
                    raise errors.ZeraxIndexError(
                        f"boolean index did not match indexed array along axis {axis + d}; "
                        f"size of axis is {n} but size of corresponding boolean axis is {m}")
            for d, nz in enumerate(np.nonzero(v)):
                entries.append(("a", len(arrays)))
                arrays.append(nz.astype(_INTP))
                new_shape.append(shape[axis + d])
            axis += v.ndim
            continue
        n = shape[axis]
        if kind == "slice":
            s = v
            step = _slice_bound(s.step)
            if step == 0:
                raise errors.ShapeError("slice step cannot be zero")
            start, stop, step = slice(_slice_bound(s.start), _slice_bound(s.stop),
                                      step).indices(n)
            size = len(range(start, stop, step))
            entries.append(("s", start if size else 0, size, step))
        elif kind == "int":
            if check:
                if not -n <= v < n:
                    raise _oob(v, axis, n)
                v %= n
            entries.append(("i", v))
        else:  # "arr"
            if check and isinstance(v, np.ndarray):
                to_check.append((len(arrays), axis, n))
            entries.append(("a", len(arrays)))
            arrays.append(v)
        new_shape.append(n)
        axis += 1
    if arrays:
        shapes = [tuple(a.shape) for a in arrays]
        try:
            bshape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise errors.ZeraxIndexError("shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(str(s) for s in shapes)}") from None
        # Concrete index arrays are bound-checked (like NumPy, not when the broadcast index
        # is empty) and their negative entries wrapped.
        for k, ax, n in to_check:
            v = arrays[k].astype(_INTP)
            if v.size and 0 not in bshape and (v.min() < -n or v.max() >= n):
                raise _oob(int(v[(v < -n) | (v >= n)].flat[0]), ax, n)
            arrays[k] = np.where(v < 0, v + n, v)
    return _Plan(new_shape, expand, entries, arrays)


def _expand(x, plan):
    return reshape(x, plan.shape) if plan.expand else x


# --------------------------------------------------------------------------- shapes


def _gather_shape(shape, indexer, idx_shapes):
    """NumPy's result shape for ``indexer`` on ``shape``: (shape, position of the
    broadcast advanced dims, their shape)."""
    out, adv_shapes = [], []
    bpos, seen, gap, contiguous = 0, False, False, True
    axis = 0
    for e in indexer:
        if e is None:
            out.append(1)
            gap = gap or seen
            continue
        if e[0] == "e":
            gap = gap or seen
            continue
        if axis >= len(shape):
            raise errors.ShapeError(f"gather: index {indexer} has too many entries for {shape}")
        if e[0] == "s":
            out.append(e[2])
            gap = gap or seen
        else:
            adv_shapes.append(() if e[0] == "i" else tuple(idx_shapes[e[1]]))
            if not seen:
                bpos, seen = len(out), True
            elif gap:
                contiguous = False
        axis += 1
    if axis != len(shape):
        raise errors.ShapeError(f"gather: index {indexer} does not cover every axis of {shape}")
    try:
        bshape = tuple(np.broadcast_shapes(*adv_shapes)) if adv_shapes else ()
    except ValueError:
        raise errors.ShapeError(f"gather: index shapes {adv_shapes} do not broadcast") from None
    if not contiguous:
        bpos = 0
    return tuple(out[:bpos]) + bshape + tuple(out[bpos:]), bpos, bshape


def _numpy_index(shape, indexer, idx):
    """The NumPy index tuple with advanced indices wrapped (negative += n) and clipped,
    and the mask (over the broadcast advanced shape) of those that were in bounds.
    ``empty`` says an advanced index addresses an axis of size 0."""
    tup, valid, empty = [], None, False
    axis = 0
    for e in indexer:
        if e is None or e[0] == "e":
            tup.append(None if e is None else Ellipsis)
            continue
        n = shape[axis]
        if e[0] == "s":
            _, start, size, step = e
            stop = start + size * step
            tup.append(slice(start, None if stop < 0 else stop, step))
        else:
            a = np.asarray(e[1] if e[0] == "i" else idx[e[1]]).astype(_INTP)
            a = np.where(a < 0, a + n, a)
            ok = (a >= 0) & (a < n)
            valid = ok if valid is None else valid & ok
            empty = empty or n == 0
            tup.append(np.clip(a, 0, max(n - 1, 0)))
        axis += 1
    return tuple(tup), valid, empty


def _index_and_mask(x, indexer, idx):
    """``x[indexer]`` with clipped indices, and the in-bounds mask in the result's shape
    (None when every index was in bounds)."""
    shape, bpos, bshape = _gather_shape(x.shape, indexer, [np.shape(a) for a in idx])
    tup, valid, empty = _numpy_index(x.shape, indexer, idx)
    if empty:
        return np.zeros(shape, x.dtype), np.zeros(shape, bool)
    out = x[tup]
    if valid is None or valid.all():
        return out, None
    valid = np.broadcast_to(valid, bshape).reshape(
        (1,) * bpos + bshape + (1,) * (len(shape) - bpos - len(bshape)))
    return out, np.broadcast_to(valid, shape)


def default_fill_value(dtype):
    """JAX's fill value for out-of-bounds gathers: NaN, the minimum signed integer,
    the maximum unsigned integer, or True."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return float("nan")
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


# --------------------------------------------------------------------------- gather

gather_p = Primitive("gather")


def gather(x, idx, indexer, mode="clip", fill_value=None):
    """NumPy's ``x[indexer]`` where ``("a", k)`` entries stand for ``idx[k]``.

    ``mode="clip"`` clamps out-of-bounds indices, ``"fill"`` gives ``fill_value``
    (default: NaN / extreme integer) there; negative indices wrap first."""
    if mode == "fill":
        fill_value = default_fill_value(x.dtype) if fill_value is None else fill_value
    else:
        mode, fill_value = "clip", None
    return bind(gather_p, x, *idx, indexer=tuple(indexer), mode=mode, fill_value=fill_value)


def _gather_impl(x, *idx, indexer, mode, fill_value):
    out, valid = _index_and_mask(x, indexer, idx)
    if valid is not None and mode == "fill":
        out = np.where(valid, out, np.asarray(fill_value).astype(x.dtype))
    return np.asarray(out)


def _check_index_avals(name, idx):
    for a in idx:
        if a.dtype.kind not in "iu":
            raise errors.ZeraxTypeError(f"{name}: index arrays must be integers, got {a.dtype}")


def _gather_abstract(x, *idx, indexer, mode, fill_value):
    _check_index_avals("gather", idx)
    shape, _, _ = _gather_shape(x.shape, indexer, [a.shape for a in idx])
    return ShapedArray(shape, x.dtype)


def _gather_jvp(primals, tangents, *, indexer, mode, fill_value):
    x, *idx = primals
    out = bind(gather_p, x, *idx, indexer=indexer, mode=mode, fill_value=fill_value)
    t = tangents[0]
    if type(t) is Zero or out.dtype.kind not in "fc":
        return out, Zero(ShapedArray(out.shape, out.dtype))
    return out, bind(gather_p, t, *idx, indexer=indexer, mode=mode,
                     fill_value=0 if mode == "fill" else None)


def _gather_transpose(ct, x, *idx, indexer, mode, fill_value):
    if type(ct) is Zero:
        return [None] * (1 + len(idx))
    zeros = np.zeros(x.aval.shape, x.aval.dtype)
    smode = "drop" if mode == "fill" else "clip"
    ct_x = bind(scatter_add_p, zeros, ct, *idx, indexer=indexer, mode=smode)
    return [ct_x] + [None] * len(idx)


gather_p.impl = _gather_impl
gather_p.abstract_eval = _gather_abstract
jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose
vjp_rules[gather_p] = vjp_from_transpose(gather_p)  # linear in the operand (indices are integers)

# --------------------------------------------------------------------------- batching


def _example_shape(a, d):
    """The shape of one batch member of ``a`` (batch dimension ``d``, None: unmapped)."""
    s = list(np.shape(a))
    if d is not None:
        del s[d]
    return tuple(s)


def _batch_at(x, d, size, pos):
    """``x`` with its batch dimension at ``pos``; an unmapped ``x`` is broadcast there."""
    from ..interpreters.batching import moveaxis
    from .shape import broadcast_in_dim
    if d is not None:
        return moveaxis(x, d, pos)
    shape = list(np.shape(x))
    nd = len(shape) + 1
    shape.insert(pos, size)
    return broadcast_in_dim(x, tuple(shape), tuple(i for i in range(nd) if i != pos))


def _first_advanced(indexer):
    return next(i for i, e in enumerate(indexer) if e is not None and e[0] in ("i", "a"))


def batch_indexer(x, dx, idx, didx, indexer, size, batch_operand=False):
    """Rewrite an indexing of ``x`` (batch dim ``dx``) by ``idx`` (batch dims ``didx``) as
    one unbatched indexing (see the module docstring).

    Returns ``(x, idx, indexer, x_dim, out_dim)``: the new operands and indexer, where the
    operand's batch axis now is (None when ``x`` stays unmapped) and where the batch axis
    is in the result of gathering with them.  With ``batch_operand`` an unmapped ``x`` is
    broadcast (the scatters, whose result always varies over the batch)."""
    from ..interpreters.batching import moveaxis
    if all(d is None for d in didx):
        x = _batch_at(x, dx, size, 0)
        indexer = (("s", 0, size, 1),) + tuple(indexer)
        _, bpos, bshape = _gather_shape(x.shape, indexer, [np.shape(a) for a in idx])
        # The slice's dim comes first, unless NumPy puts non-contiguous advanced dims there.
        return x, list(idx), indexer, 0, (0 if bpos else len(bshape))
    ex_shapes = [_example_shape(a, d) for a, d in zip(idx, didx)]
    x_ex = _example_shape(x, dx)
    _, _, bshape = _gather_shape(x_ex, indexer, ex_shapes)
    r = len(bshape)
    new_idx = []
    for a, d, s in zip(idx, didx, ex_shapes):
        if d is not None:
            a = reshape(moveaxis(a, d, 0), (size,) + (1,) * (r - len(s)) + s)
        new_idx.append(a)
    indexer = tuple(indexer)
    x_dim = None
    if dx is not None or batch_operand:
        # An iota index over the operand's batch axis, next to the first advanced entry.
        first = _first_advanced(indexer)
        x_dim = sum(1 for e in indexer[:first] if e is not None and e[0] == "s")
        x = _batch_at(x, dx, size, x_dim)
        new_idx.append(iota(_INTP, (size,) + (1,) * r, 0))
        indexer = indexer[:first] + (("a", len(new_idx) - 1),) + indexer[first:]
    _, bpos, _ = _gather_shape(x.shape, indexer, [np.shape(a) for a in new_idx])
    return x, new_idx, indexer, x_dim, bpos


def _gather_batch(args, dims, *, indexer, mode, fill_value):
    from ..interpreters.batching import batch_size_of
    (x, *idx), (dx, *didx) = args, dims
    size = batch_size_of(args, dims)
    x, idx, indexer, _, out_dim = batch_indexer(x, dx, idx, didx, indexer, size)
    return bind(gather_p, x, *idx, indexer=indexer, mode=mode, fill_value=fill_value), out_dim


batch_rules[gather_p] = _gather_batch


# --------------------------------------------------------------------------- getitem


def _zero(dtype):
    return np.zeros((), dtype)


def _varies_over_vmap(t):
    """Whether the tracer ``t`` varies over a vmap batch: then a gather (batched without a
    loop) is better than a dynamic_slice."""
    from ..interpreters.ad import JVPTracer
    from ..interpreters.batching import BatchTracer
    while isinstance(t, JVPTracer):
        t = t.primal
    return isinstance(t, BatchTracer)


def _normalize_scalar_index(t, n):
    """A traced scalar index as int64 with negative values wrapped."""
    t = convert_element_type(t, _INTP)
    if n == 0:
        raise errors.ZeraxIndexError("a traced index cannot address an axis of size 0")
    return select_n(lt(t, _zero(_INTP)), t, add(t, np.array(n, _INTP)))


def _basic_index(x, plan):
    """Slices, static ints, None and traced scalar ints: slice/rev/dynamic_slice/reshape."""
    starts, limits, strides, revs, dyn = [], [], [], [], {}
    out_shape = []
    axis = 0
    for e in plan.entries:
        if e is None:
            out_shape.append(1)
            continue
        if e[0] == "e":
            continue
        n = plan.shape[axis]
        if e[0] == "s":
            _, start, size, step = e
            if size == 0:
                s, lim, st = 0, 0, 1
            elif step > 0:
                s, lim, st = start, start + (size - 1) * step + 1, step
            else:
                s, lim, st = start + (size - 1) * step, start + 1, -step
                if size > 1:
                    revs.append(axis)
            out_shape.append(size)
        elif e[0] == "i":
            s, lim, st = e[1], e[1] + 1, 1
        else:
            s, lim, st = 0, n, 1
            dyn[axis] = _normalize_scalar_index(plan.arrays[e[1]], n)
        starts.append(s)
        limits.append(lim)
        strides.append(st)
        axis += 1
    y = slice_p_bind(x, starts, limits, strides)
    y = rev(y, revs)
    if dyn:
        zero = _zero(_INTP)
        y = dynamic_slice(y, [dyn.get(d, zero) for d in range(y.ndim)],
                          [1 if d in dyn else n for d, n in enumerate(y.shape)])
    return reshape(y, out_shape)


def _as_value(x):
    if isinstance(x, (Array, Tracer)):
        return x
    return Array._wrap(np.array(x))


def getitem(x, idx):
    """``x[idx]`` with NumPy's indexing rules (see the module docstring).

    >>> import numpy as np, zerax as zx
    >>> x = zx.Array(np.array([[1, 2, 3], [4, 5, 6]]))
    >>> x[1, ::-1]
    Array([6, 5, 4], dtype=int64)
    >>> x[:, [0, 0, 2]]
    Array([[1, 1, 3],
           [4, 4, 6]], dtype=int64)
    """
    x = _as_value(x)
    plan = _parse(x.shape, idx, check=True)
    return _apply_plan(x, plan, "clip", None, checked=True)


def _apply_plan(x, plan, mode, fill_value, checked):
    x = _expand(x, plan)
    adv = [e for e in plan.entries if e is not None and e[0] == "a"]
    if checked and all(isinstance(plan.arrays[e[1]], Tracer) and plan.arrays[e[1]].ndim == 0
                       and not _varies_over_vmap(plan.arrays[e[1]]) for e in adv):
        return _basic_index(x, plan)
    return gather(x, plan.arrays, plan.entries, mode=mode, fill_value=fill_value)


# --------------------------------------------------------------------------- helpers


def along_axis_indexer(shape, indices, axis):
    """Index arrays and entries selecting ``indices`` along ``axis`` of an array of
    ``shape`` (the other axes broadcast): the indexer of take/put_along_axis."""
    nd = len(shape)
    arrays, entries = [], []
    for d in range(nd):
        entries.append(("a", d))
        if d == axis:
            arrays.append(indices)
        else:
            shp = [1] * nd
            shp[d] = shape[d]
            arrays.append(np.arange(shape[d], dtype=_INTP).reshape(shp))
    return arrays, entries


def take_along_axis(x, indices, axis, mode="clip", fill_value=None):
    """NumPy's ``take_along_axis`` as one gather (``x`` and ``indices`` of equal rank;
    other axes broadcast)."""
    arrays, entries = along_axis_indexer(tuple(x.shape), indices, axis)
    return gather(x, arrays, entries, mode=mode, fill_value=fill_value)


# The scatter family and ``x.at[...]`` (their module imports this one, so this import comes
# last); re-exported so that ``ops.indexing`` stays the one place to import indexing from.
from .index_update import (IndexUpdateHelper, scatter, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p)

__all__ = ["getitem", "IndexUpdateHelper", "gather", "scatter", "take_along_axis",
           "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p", "default_fill_value", "batch_indexer"]


# --------------------------------------------------------------------------- Numba lowering
# A gather (and a scatter, in `index_update`) is a loop nest over the indexed shape (the
# gather's result shape).  The indexer is static, so each operand axis's position is
# written out: ``start + i * step`` for a slice, a constant for a static int, and for an
# index array its element (broadcast against the others) read as int64, wrapped when
# negative and then clamped (``clip``) or checked (``fill``/``drop``).  An index array's
# value is computed once, in the innermost loop it depends on.


def _nb_static_int(v, n):
    """A static int index: (clamped position, whether it was in bounds after wrapping)."""
    w = v + n if v < 0 else v
    return min(max(w, 0), max(n - 1, 0)), 0 <= w < n


def _nb_index_nest(ctx, x_shape, indexer, idx_atoms, *, checked, parallel, body):
    """Emit loops over the indexed shape of ``x_shape`` by ``indexer``, then call
    ``body(positions, oks, out_index)``: ``positions`` the source text of the operand's
    index per axis, ``oks`` names of booleans that are all true where every index is in
    bounds (only with ``checked``; clamped positions otherwise), ``out_index`` the loop
    variables (one per axis of the indexed shape)."""
    from ..backends.numba.codegen import PARALLEL_THRESHOLD
    from .shape import _nb_affine, _nb_ix
    shape, bpos, bshape = _gather_shape(x_shape, indexer, [a.aval.shape for a in idx_atoms])
    nb = len(bshape)
    names = [ctx.fresh("i") for _ in shape]
    positions, pending = [], {}  # pending: loop depth -> [(axis, atom, n)]
    nonadv, axis = 0, 0
    for e in indexer:
        if e is None:
            nonadv += 1
            continue
        if e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] == "s":
            d = nonadv if nonadv < bpos else nonadv + nb
            positions.append(_nb_affine(names[d], e[1], e[3]))
            nonadv += 1
        elif e[0] == "i":
            positions.append(str(_nb_static_int(e[1], n)[0]))
        else:
            atom = idx_atoms[e[1]]
            s = atom.aval.shape
            off = bpos + nb - len(s)
            deps = [off + k for k, m in enumerate(s) if m != 1]
            pending.setdefault(max(deps) + 1 if deps else 0, []).append((axis, atom, n))
            positions.append(None)
        axis += 1
    oks = []

    def compute(depth):
        for ax, atom, n in pending.get(depth, ()):
            s = atom.aval.shape
            off = bpos + nb - len(s)
            if s == ():
                read = ctx.scalar(atom)
            else:
                ix = [names[off + k] if m != 1 else "0" for k, m in enumerate(s)]
                read = f"{ctx.name(atom)}[{_nb_ix(ix)}]"
            t = ctx.fresh("t")
            ctx.emit(f"{t} = np.int64({read})")
            ctx.emit(f"if {t} < 0:")
            ctx.emit(f"    {t} += {n}")
            if checked:
                ok = ctx.fresh("ok")
                ctx.emit(f"{ok} = {t} >= 0 and {t} < {n}")
                oks.append(ok)
            else:
                ctx.emit(f"{t} = min(max({t}, 0), {n - 1})")
            positions[ax] = t

    compute(0)
    total = int(np.prod(shape, dtype=np.int64))
    outer = ctx.level
    for d, n in enumerate(shape):
        rng = "range"
        if parallel and d == 0 and total >= PARALLEL_THRESHOLD and ctx.level == 1:
            rng, ctx.uses_prange = "prange", True
        ctx.emit(f"for {names[d]} in {rng}({n}):")
        ctx.level += 1
        compute(d + 1)
    body(positions, oks, names)
    ctx.level = outer


def _nb_index_status(x_shape, indexer, checked):
    """Static facts about an indexing: whether an index addresses an axis of size 0, and
    (with ``checked``) whether a static int index is out of bounds (so every index is)."""
    empty, static_oob, axis = False, False, 0
    for e in indexer:
        if e is None or e[0] == "e":
            continue
        n = x_shape[axis]
        if e[0] in ("i", "a"):
            empty = empty or n == 0
        if e[0] == "i" and n and checked and not _nb_static_int(e[1], n)[1]:
            static_oob = True
        axis += 1
    return empty, static_oob


def _gather_lower_numba(ctx, eqn):
    from ..backends.numba.codegen import dtype_name, literal_text
    from .shape import _nb_array, _nb_ix, _nb_shape
    x, *idx = eqn.invars
    (ov,) = eqn.outvars
    indexer, mode = eqn.params["indexer"], eqn.params["mode"]
    shape, dtype = ov.aval.shape, np.dtype(ov.aval.dtype)
    dt = dtype_name(dtype)
    ctx.emit(f"# gather {x.aval.str_short()} -> {ov.aval.str_short()} (mode {mode})")
    fill = None
    if mode == "fill":
        fv = eqn.params["fill_value"]
        fv = default_fill_value(dtype) if fv is None else fv
        with np.errstate(all="ignore"):
            fill = literal_text(np.asarray(fv).astype(dtype), dtype)
    empty, static_oob = _nb_index_status(x.aval.shape, indexer, mode == "fill")
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0 or empty or static_oob:  # nothing, or nothing but fill values / zeros
        const = fill if (mode == "fill" and size) else literal_text(np.zeros((), dtype))
        if shape == ():
            ctx.bind_scalar(ov, const)
        else:
            out = ctx.out(ov)
            ctx.emit(f"{out} = np.full({_nb_shape(shape)}, {const}, {dt})")
        return
    xn = _nb_array(ctx, x)
    if shape == ():  # one element: held as a scalar
        target = ctx.fresh("s")
    else:
        out = ctx.out(ov)
        ctx.emit(f"{out} = np.empty({_nb_shape(shape)}, {dt})")

    def body(positions, oks, names):
        dst = target if shape == () else f"{out}[{_nb_ix(names)}]"
        read = f"{xn}[{_nb_ix(positions)}]"
        if oks:
            ctx.emit(f"if {' and '.join(oks)}:")
            ctx.emit(f"    {dst} = {read}")
            ctx.emit("else:")
            ctx.emit(f"    {dst} = {fill}")
        else:
            ctx.emit(f"{dst} = {read}")

    _nb_index_nest(ctx, x.aval.shape, indexer, idx, checked=mode == "fill", parallel=True,
                   body=body)
    if shape == ():
        ctx.bind_scalar(ov, target)


gather_p.lower_numba = _gather_lower_numba
