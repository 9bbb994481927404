"""Indexing: ``x[idx]`` and ``x.at[idx].set/add/...``, the gather and scatter primitives.

An index expression is first *normalized* statically (`_parse`): Ellipsis expanded,
slices resolved against the shape, static ints bound-checked, boolean masks (which
must be concrete) turned into integer arrays with ``np.nonzero``, a 0-d boolean turned
into an index over a new size-1 axis (what NumPy does).  Then:

* basic indexing (slices, ints, None) lowers to ``slice``/``rev``/``reshape``, and a
  traced scalar index to ``dynamic_slice``, so derivative programs stay simple;
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
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..ad import Zero, is_undefined
from ..array import Array
from ..core import Primitive, ShapedArray, Tracer, bind, concrete_value
from .elementwise import add, convert_element_type, div, eq, lt, mul, select_n
from .shape import broadcast_in_dim, dynamic_slice, iota, reshape, rev, slice_p_bind

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
        raise IndexError(_INVALID)
    dtype = np.result_type(*dts)
    parts = [convert_element_type(p, dtype) if isinstance(p, Tracer) else np.asarray(p, dtype)
             for p in parts]
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) != 1:
        raise IndexError(f"an index list holds elements of different shapes {sorted(shapes)}")
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
        raise IndexError(f"{_INVALID}; got a traced array of dtype {np.dtype(item.dtype).name}")
    if type(item) is Array:
        return _classify(item._value)
    if isinstance(item, (list, tuple)):
        if any(isinstance(e, Tracer) for e in _flat_items(item)):
            return _classify(_list_to_array(item))
        try:
            arr = np.asarray(item)
        except (ValueError, TypeError):
            raise IndexError(f"{_INVALID}; got the list {item!r:.60}") from None
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(_INTP)
        return _classify(arr)
    if isinstance(item, np.ndarray):
        kind = item.dtype.kind
        if kind == "b":
            return ("bool0", bool(item)) if item.ndim == 0 else ("mask", item)
        if kind in "iu":
            return ("int", int(item)) if item.ndim == 0 else ("arr", item)
        raise IndexError("arrays used as indices must be of integer (or boolean) type, got "
                         f"dtype {item.dtype.name}")
    raise IndexError(f"{_INVALID}; got {type(item).__name__} {item!r:.60}")


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
    return IndexError(f"index {v} is out of bounds for axis {axis} with size {n}")


def _parse(shape, idx, check: bool = True) -> _Plan:
    """Normalize ``idx`` for an array of ``shape`` (see `_Plan`).  With ``check``,
    concrete indices are bound-checked (IndexError) and their negatives wrapped."""
    shape = tuple(shape)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = [_classify(it) for it in idx]
    n_ell = sum(1 for k, _ in items if k == "ellipsis")
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else 1 for k, v in items
                   if k in ("slice", "int", "arr", "mask"))
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
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
                    raise IndexError(
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
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
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
gather_p.jvp = _gather_jvp
gather_p.transpose = _gather_transpose

# --------------------------------------------------------------------------- scatter


def _scatter_impl_fn(op):
    ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}.get(op)

    def impl(x, updates, *idx, indexer, mode):
        out = np.array(x, copy=True, order="C")
        if out.size == 0:
            return out
        iota_ = np.arange(out.size, dtype=_INTP).reshape(out.shape)
        pos, valid = _index_and_mask(iota_, indexer, idx)
        pos = np.asarray(pos).ravel()
        upd = np.asarray(updates).ravel()
        if valid is not None and mode == "drop":
            keep = np.asarray(valid).ravel()
            pos, upd = pos[keep], upd[keep]
        flat = out.reshape(-1)
        if op == "set":
            # Repeated positions: the last update wins (deterministically).
            rev_pos = pos[::-1]
            _, first = np.unique(rev_pos, return_index=True)
            last = len(pos) - 1 - first
            flat[pos[last]] = upd[last]
        else:
            ufunc.at(flat, pos, upd)
        return out

    return impl


def _scatter_abstract(name):
    def abstract(x, updates, *idx, indexer, mode):
        _check_index_avals(name, idx)
        shape, _, _ = _gather_shape(x.shape, indexer, [a.shape for a in idx])
        if tuple(updates.shape) != shape:
            raise errors.ShapeError(
                f"{name}: updates of shape {updates.shape} do not match the indexed shape {shape}")
        if updates.dtype != x.dtype:
            raise errors.ZeraxTypeError(
                f"{name}: updates dtype {updates.dtype} differs from the operand's {x.dtype}")
        return ShapedArray(x.shape, x.dtype)
    return abstract


def _make_scatter(name, op):
    prim = Primitive(name)
    prim.impl = _scatter_impl_fn(op)
    prim.abstract_eval = _scatter_abstract(name)
    return prim


scatter_p = _make_scatter("scatter", "set")
scatter_add_p = _make_scatter("scatter_add", "add")
scatter_mul_p = _make_scatter("scatter_mul", "mul")
scatter_min_p = _make_scatter("scatter_min", "min")
scatter_max_p = _make_scatter("scatter_max", "max")

_SCATTERS = {"set": scatter_p, "add": scatter_add_p, "mul": scatter_mul_p,
             "min": scatter_min_p, "max": scatter_max_p}


def scatter(x, updates, idx, indexer, op="set", mode="drop"):
    """``x`` with ``x[indexer] (op)= updates`` (updates of the indexed shape and x's dtype).

    Repeated indices accumulate for add/mul/min/max; for set the last one wins.
    ``mode="drop"`` skips out-of-bounds indices, ``"clip"`` clamps them."""
    mode = "clip" if mode == "clip" else "drop"
    return bind(_SCATTERS[op], x, updates, *idx, indexer=tuple(indexer), mode=mode)


def _inst(t):
    return np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t


def _gmode(mode):
    return "fill" if mode == "drop" else "clip"


def _zero(dtype):
    return np.zeros((), dtype)


def _linear_scatter_jvp(prim):
    def jvp(primals, tangents, *, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = bind(prim, x, u, *idx, indexer=indexer, mode=mode)
        if out.dtype.kind not in "fc" or (type(tx) is Zero and type(tu) is Zero):
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, bind(prim, _inst(tx), _inst(tu), *idx, indexer=indexer, mode=mode)
    prim.jvp = jvp


def _aval_of(v):
    return v.aval if is_undefined(v) else ShapedArray(np.shape(v), v.dtype)


def _scatter_add_transpose(ct, x, u, *idx, indexer, mode):
    res = [None] * (2 + len(idx))
    if type(ct) is Zero:
        return res
    if is_undefined(x):
        res[0] = ct
    if is_undefined(u):
        res[1] = bind(gather_p, ct, *idx, indexer=indexer, mode=_gmode(mode),
                      fill_value=0 if mode == "drop" else None)
    return res


def _winners(x_shape, u_shape, idx, indexer, mode):
    """For scatter-set: which updates are the ones that end up in the output."""
    size = int(np.prod(u_shape, dtype=np.int64))
    ids = reshape(iota(_INTP, (size,)), u_shape)
    owner = bind(scatter_p, np.full(x_shape, -1, _INTP), ids, *idx, indexer=indexer, mode=mode)
    back = bind(gather_p, owner, *idx, indexer=indexer, mode=_gmode(mode),
                fill_value=-1 if mode == "drop" else None)
    return eq(back, ids)


def _scatter_set_transpose(ct, x, u, *idx, indexer, mode):
    res = [None] * (2 + len(idx))
    if type(ct) is Zero:
        return res
    u_aval = _aval_of(u)
    if is_undefined(x):
        res[0] = bind(scatter_p, ct, np.zeros(u_aval.shape, u_aval.dtype), *idx,
                      indexer=indexer, mode=mode)
    if is_undefined(u):
        g = bind(gather_p, ct, *idx, indexer=indexer, mode=_gmode(mode),
                 fill_value=0 if mode == "drop" else None)
        win = _winners(tuple(ct.shape), u_aval.shape, idx, indexer, mode)
        res[1] = select_n(win, _zero(ct.dtype), g)
    return res


_linear_scatter_jvp(scatter_p)
_linear_scatter_jvp(scatter_add_p)
scatter_p.transpose = _scatter_set_transpose
scatter_add_p.transpose = _scatter_add_transpose


def _sgather(v, idx, indexer, mode, fill):
    return bind(gather_p, v, *idx, indexer=indexer, mode=_gmode(mode),
                fill_value=fill if mode == "drop" else None)


def _scatter_mul_jvp(primals, tangents, *, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    kw = dict(indexer=indexer, mode=mode)
    out = bind(scatter_mul_p, x, u, *idx, **kw)
    dt = out.dtype
    if dt.kind not in "fc" or (type(tx) is Zero and type(tu) is Zero):
        return out, Zero(ShapedArray(out.shape, out.dtype))
    t = None
    if type(tx) is not Zero:
        t = bind(scatter_mul_p, tx, u, *idx, **kw)
    if type(tu) is not Zero:
        # d/du_j of x * prod_k u_k is x times the product of the *other* updates at the
        # same position: exclusive segmented products, exact also with zeros.
        pos = bind(gather_p, reshape(iota(_INTP, (int(np.prod(x.shape, dtype=np.int64)),)),
                                     x.shape),
                   *idx, indexer=indexer, mode=_gmode(mode),
                   fill_value=-1 if mode == "drop" else None)
        others = _others_product(u, pos)
        contrib = mul(x, bind(scatter_add_p, np.zeros(x.shape, dt), mul(tu, others), *idx, **kw))
        t = contrib if t is None else add(t, contrib)
    return out, t


def _segmented_exclusive_products(v, seg):
    """For a 1-d ``v`` grouped in contiguous segments (equal ``seg`` values), the product
    of the earlier elements of each element's segment (a log-depth scan of primitives, so
    it is differentiable to any order)."""
    from .shape import concatenate
    m = v.shape[0]
    one = np.ones((1,), v.dtype)
    sentinel = np.full((1,), -2, _INTP)

    def shifted(a, s, fill):
        return concatenate([np.broadcast_to(fill, (s,)).copy(),
                            slice_p_bind(a, (0,), (m - s,))], 0)

    inc, s = v, 1
    while s < m:
        same = eq(seg, shifted(seg, s, sentinel))
        inc = mul(inc, select_n(same, np.ones((), v.dtype), shifted(inc, s, one)))
        s *= 2
    return select_n(eq(seg, shifted(seg, 1, sentinel)), np.ones((), v.dtype), shifted(inc, 1, one))


def _others_product(u, pos):
    """For each update, the product of the other updates sent to the same position."""
    m = int(np.prod(u.shape, dtype=np.int64))
    if m <= 1:
        return np.ones(u.shape, u.dtype)
    from .sort import argsort
    uf, pf = reshape(u, (m,)), reshape(pos, (m,))
    perm = argsort(pf, 0)
    entry = (("a", 0),)
    us = bind(gather_p, uf, perm, indexer=entry, mode="clip", fill_value=None)
    ps = bind(gather_p, pf, perm, indexer=entry, mode="clip", fill_value=None)
    left = _segmented_exclusive_products(us, ps)
    right = rev(_segmented_exclusive_products(rev(us, (0,)), rev(ps, (0,))), (0,))
    others = bind(scatter_p, np.zeros((m,), u.dtype), mul(left, right), perm, indexer=entry,
                  mode="clip")
    return reshape(others, u.shape)


def _scatter_mul_transpose(ct, x, u, *idx, indexer, mode):
    if is_undefined(u):
        raise errors.NotSupportedError("scatter_mul is not linear in its updates")
    res = [None] * (2 + len(idx))
    if type(ct) is not Zero and is_undefined(x):
        res[0] = bind(scatter_mul_p, ct, u, *idx, indexer=indexer, mode=mode)
    return res


scatter_mul_p.jvp = _scatter_mul_jvp
scatter_mul_p.transpose = _scatter_mul_transpose


def _extremal_jvp(prim):
    """The tangent at each position is the mean of the tangents of the values (operand
    and updates) that attain the result there (as JAX does for ties)."""

    def jvp(primals, tangents, *, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        kw = dict(indexer=indexer, mode=mode)
        out = bind(prim, x, u, *idx, **kw)
        dt = out.dtype
        if dt.kind not in "fc" or (type(tx) is Zero and type(tu) is Zero):
            return out, Zero(ShapedArray(out.shape, out.dtype))
        tx, tu = _inst(tx), _inst(tu)
        one, zero = np.ones((), dt), _zero(dt)
        zeros = np.zeros(x.shape, dt)
        x_won = eq(x, out)
        u_won = eq(u, bind(gather_p, out, *idx, indexer=indexer, mode="clip", fill_value=None))
        count = add(convert_element_type(x_won, dt),
                    bind(scatter_add_p, zeros, convert_element_type(u_won, dt), *idx, **kw))
        total = add(select_n(x_won, zero, tx),
                    bind(scatter_add_p, zeros, select_n(u_won, zero, tu), *idx, **kw))
        return out, div(total, select_n(eq(count, zero), count, one))

    prim.jvp = jvp


_extremal_jvp(scatter_min_p)
_extremal_jvp(scatter_max_p)
for _p in (scatter_min_p, scatter_max_p):
    _p.unsupported["transpose"] = f"{_p.name} is not linear"

# --------------------------------------------------------------------------- getitem


def _normalize_scalar_index(t, n):
    """A traced scalar index as int64 with negative values wrapped."""
    t = convert_element_type(t, _INTP)
    if n == 0:
        raise IndexError("a traced index cannot address an axis of size 0")
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
    if checked and all(isinstance(plan.arrays[e[1]], Tracer)
                              and plan.arrays[e[1]].ndim == 0 for e in adv):
        return _basic_index(x, plan)
    return gather(x, plan.arrays, plan.entries, mode=mode, fill_value=fill_value)


# --------------------------------------------------------------------------- .at[]


def _updates_to(values, shape, dtype, what):
    """Cast ``values`` to ``dtype`` and broadcast them to ``shape`` (NumPy assignment)."""
    if isinstance(values, (Array, Tracer)):
        v = convert_element_type(values, dtype)
    else:
        from ..lax_numpy._util import check_arg
        v = check_arg(values, what)
        v = convert_element_type(v, dtype) if isinstance(v, (Array, Tracer)) else \
            Array._wrap(np.array(np.asarray(v).astype(dtype)))
    vshape = tuple(v.shape)
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    if vshape != tuple(v.shape):
        v = reshape(v, vshape)
    if vshape == tuple(shape):
        return v
    lead = len(shape) - len(vshape)
    if lead < 0 or any(a not in (1, b) for a, b in zip(vshape, shape[lead:])):
        raise errors.ShapeError(
            f"{what}: could not broadcast the values of shape {tuple(v.shape)} into the "
            f"indexed shape {tuple(shape)}")
    keep = [i for i, a in enumerate(vshape) if a == shape[lead + i]]
    if len(keep) != len(vshape):
        v = reshape(v, [vshape[i] for i in keep])
    return broadcast_in_dim(v, tuple(shape), tuple(lead + i for i in keep))


def _traced_mask(idx):
    """The traced boolean mask when ``idx`` is one (alone or as a 1-tuple)."""
    m = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if isinstance(m, Tracer) and np.dtype(m.dtype).kind == "b":
        try:
            concrete_value(m, "boolean indexing")
        except errors.ConcretizationError:
            return m
    return None


def _masked_update(x, mask, values, op):
    """``x.at[mask].op(values)`` for a traced mask, as a ``where`` (values must broadcast
    to the selected trailing dims)."""
    from . import elementwise as ew
    k = mask.ndim
    if tuple(mask.shape) != tuple(x.shape[:k]):
        raise IndexError(f"boolean index of shape {tuple(mask.shape)} does not match the "
                         f"indexed array's leading dims {tuple(x.shape[:k])}")
    v = _updates_to(values, x.shape[k:], x.dtype, f"x.at[mask].{op}")
    v = broadcast_in_dim(v, tuple(x.shape), tuple(range(k, x.ndim)))
    m = broadcast_in_dim(mask, tuple(x.shape), tuple(range(k)))
    new = {"set": lambda: v, "add": lambda: ew.add(x, v), "mul": lambda: ew.mul(x, v),
           "min": lambda: ew.minimum(x, v), "max": lambda: ew.maximum(x, v)}[op]()
    return select_n(m, x, new)


def _scatter_update(x, idx, values, op, mode, fname):
    mask = _traced_mask(idx)
    if mask is not None:
        return _masked_update(x, mask, values, op)
    plan = _parse(x.shape, idx, check=mode is None)
    xe = _expand(x, plan)
    shape, _, _ = _gather_shape(plan.shape, plan.entries, [a.shape for a in plan.arrays])
    v = _updates_to(values, shape, x.dtype, fname)
    smode = "clip" if mode == "clip" else "drop"
    out = bind(_SCATTERS[op], xe, v, *plan.arrays, indexer=plan.entries, mode=smode)
    return reshape(out, x.shape) if plan.expand else out


_GET_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip", "fill": "fill",
              "drop": "fill"}
_SET_MODES = (None, "clip", "drop", "fill", "promise_in_bounds")


def _check_mode(mode, modes):
    if mode not in modes:
        raise errors.ZeraxTypeError(
            f"unknown indexing mode {mode!r}; expected one of "
            f"{', '.join(repr(m) for m in modes if m is not None)}")


class _IndexUpdateRef:
    """``x.at[idx]``: functional update methods (JAX's API); each returns a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``; ``mode="fill"`` gives ``fill_value`` at out-of-bounds indices."""
        _check_mode(mode, tuple(_GET_MODES))
        x = _as_value(self.array)
        plan = _parse(x.shape, self.index, check=mode is None)
        return _apply_plan(x, plan, _GET_MODES[mode], fill_value, checked=mode is None)

    def _update(self, values, op, mode, name):
        _check_mode(mode, _SET_MODES)
        return _scatter_update(_as_value(self.array), self.index, values, op, mode,
                               f"x.at[idx].{name}")

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = values`` (for repeated indices the last value wins)."""
        return self._update(values, "set", mode, "set")

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] += values``, accumulating over repeated indices (``np.add.at``)."""
        return self._update(values, "add", mode, "add")

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] -= values``, accumulating over repeated indices."""
        from ..lax_numpy.ufuncs import negative
        return self._update(negative(values), "add", mode, "subtract")

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] *= values``, accumulating over repeated indices (``np.multiply.at``)."""
        return self._update(values, "mul", mode, "multiply")

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values`` (as JAX: ``x`` divided by the scattered product)."""
        from ..lax_numpy.ufuncs import true_divide
        x = _as_value(self.array)
        ones = Array._wrap(np.ones(x.shape, x.dtype))
        return true_divide(x, _IndexUpdateRef(ones, self.index).multiply(values, mode=mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values`` (as JAX: ``x`` to the scattered product)."""
        from ..lax_numpy.ufuncs import power
        x = _as_value(self.array)
        ones = Array._wrap(np.ones(x.shape, x.dtype))
        return power(x, _IndexUpdateRef(ones, self.index).multiply(values, mode=mode))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = minimum(x[idx], values)``, over repeated indices too."""
        return self._update(values, "min", mode, "min")

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = maximum(x[idx], values)``, over repeated indices too."""
        return self._update(values, "max", mode, "max")


class IndexUpdateHelper:
    """``x.at``: index it to get the update methods, e.g. ``x.at[0].set(1.0)``.

    >>> import numpy as np, zerax as zx
    >>> x = zx.Array(np.zeros(3))
    >>> x.at[[0, 0, 2]].add(1.0)
    Array([2., 0., 1.], dtype=float64)
    """

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"IndexUpdateHelper({self.array!r})"


# --------------------------------------------------------------------------- helpers


def take_along_axis(x, indices, axis, mode="clip", fill_value=None):
    """NumPy's ``take_along_axis`` as one gather (``x`` and ``indices`` of equal rank;
    other axes broadcast)."""
    nd = x.ndim
    arrays, entries = [], []
    for d in range(nd):
        entries.append(("a", d))
        if d == axis:
            arrays.append(indices)
        else:
            shp = [1] * nd
            shp[d] = x.shape[d]
            arrays.append(np.arange(x.shape[d], dtype=_INTP).reshape(shp))
    return gather(x, arrays, entries, mode=mode, fill_value=fill_value)


__all__ = ["getitem", "IndexUpdateHelper", "gather", "scatter", "take_along_axis",
           "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p", "default_fill_value"]
