"""The ``gather`` primitive with its rules, and the index machinery the scatters share.

``gather(x, idx, indexer)`` is NumPy's ``x[indexer]`` where the static ``indexer`` is a
normalized index tuple (see `indexing`): ``None`` (new axis), ``("s", start, size,
step)`` (a slice), ``("i", v)`` (a static int), ``("a", k)`` (the k-th index-array
operand), ``("e",)`` (an Ellipsis that stands for no axes).  Its implementation runs
NumPy's own indexing, so the result (including where the advanced dims go) is NumPy's.
Negative indices wrap; out-of-bounds ones are clamped (``mode="clip"``) or give
``fill_value`` (``mode="fill"``).  Its transpose is a scatter-add, declared in
`index_update` (a module above).

Batching (`batch_indexer`, shared with the scatters): the batch becomes one more entry of
the indexer.  A mapped operand with unmapped indices gets a leading full slice over its
batch axis; when an index array is mapped, every mapped index array gets its batch axis
in front (then the broadcast advanced shape is ``(B,) + per-example shape``) and a
mapped operand gets an ``iota`` index array over its batch axis, placed next to the
first advanced entry so NumPy's placement of the advanced dims does not change.
``dynamic_slice`` (declared in `slicing`) is batched here: start indices that vary over
the batch index each member's block with one gather, without a loop.

The lowering is in ``backends/lowering/indexing.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from .elementwise import add, clamp, convert_element_type, minimum
from .shape import broadcast_in_dim, dynamic_slice, dynamic_slice_p, iota, reshape
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules, batch_size_of, moveaxis
from ..base.dtypes import kind as dtype_kind

_INTP = np.dtype(np.int64)


def _zero(dtype):
    return np.zeros((), dtype)


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
    if dtype_kind(dtype) in "fc":
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
    if type(t) is Zero or dtype_kind(out.dtype) not in "fc":
        return out, Zero(ShapedArray(out.shape, out.dtype))
    return out, bind(gather_p, t, *idx, indexer=indexer, mode=mode,
                     fill_value=0 if mode == "fill" else None)


gather_p.impl = _gather_impl
gather_p.abstract_eval = _gather_abstract
jvp_rules[gather_p] = _gather_jvp
# Linear in the operand: its transpose (a scatter-add) and eager VJP are declared in
# `index_update`.


# --------------------------------------------------------------------------- batching


def _example_shape(a, d):
    """The shape of one batch member of ``a`` (batch dimension ``d``, None: unmapped)."""
    s = list(np.shape(a))
    if d is not None:
        del s[d]
    return tuple(s)


def _batch_at(x, d, size, pos):
    """``x`` with its batch dimension at ``pos``; an unmapped ``x`` is broadcast there."""
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
    (x, *idx), (dx, *didx) = args, dims
    size = batch_size_of(args, dims)
    x, idx, indexer, _, out_dim = batch_indexer(x, dx, idx, didx, indexer, size)
    return bind(gather_p, x, *idx, indexer=indexer, mode=mode, fill_value=fill_value), out_dim


batch_rules[gather_p] = _gather_batch


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


# --------------------------------------------------------------------------- dynamic_slice
# Batching of ``dynamic_slice`` (declared in `slicing`): with unmapped start indices the
# batch axis is sliced whole; start indices that vary over the batch become one gather.

def _start_zero(starts):
    """A zero start index (for an inserted batch axis), of the start indices' dtype."""
    dt = getattr(starts[0], "dtype", None) if starts else None
    return np.zeros((), _INTP if dt is None else np.dtype(dt))


def _clamped_start(s, n, k):
    """A traced start index (0-d or batched) as int64 clamped into ``[0, n - k]``."""
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


batch_rules[dynamic_slice_p] = _ds_batch
