"""The scatter primitives (``scatter``, ``scatter_add``, ``scatter_mul``, ``scatter_min``,
``scatter_max``) with all their rules.

A scatter takes the operand, the updates (already of the indexed shape and the operand's
dtype) and the index arrays, with the same static ``indexer`` as `gather`:
``scatter(x, u, *idx)`` is ``x`` with ``x[indexer] (op)= u``, repeated indices
accumulating (for ``set`` the last one wins).  ``mode="drop"`` skips out-of-bounds
indices, ``"clip"`` clamps them.  The index machinery and the gather primitive are in
`gather`; the transpose of gather (a scatter-add) and the batching of
``dynamic_update_slice`` (one scatter when its start indices vary over the batch) are
declared here, beside the scatters they bind.  ``x.at[idx]`` is in `indexing`; the
lowering in ``backends/lowering/indexing.py``.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.array import Array
from ..core.core import Primitive, ShapedArray, Tracer, bind
from ._factory import vjp_from_transpose
from .elementwise import add, convert_element_type, div, eq, mul, select_n
from .gather import (_INTP, _batch_at, _batch_iota, _block_indices, _check_index_avals,
                     _gather_shape, _index_and_mask, _start_zero, _zero, batch_indexer,
                     gather_p)
from .shape import (broadcast_in_dim, concatenate, dynamic_update_slice,
                    dynamic_update_slice_p, iota, reshape, rev, slice_p_bind)
from .sort import argsort
from .values import check_arg
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, batch_size_of, bdim_at_front
from ..interpreters.tape import vjp_rules
from ..base.dtypes import kind as dtype_kind


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

# The scatter of each op of ``x.at[idx].<op>``.
SCATTERS = {"set": scatter_p, "add": scatter_add_p, "mul": scatter_mul_p,
            "min": scatter_min_p, "max": scatter_max_p}


def scatter(x, updates, idx, indexer, op="set", mode="drop"):
    """``x`` with ``x[indexer] (op)= updates`` (updates of the indexed shape and x's dtype).

    Repeated indices accumulate for add/mul/min/max; for set the last one wins.
    ``mode="drop"`` skips out-of-bounds indices, ``"clip"`` clamps them."""
    mode = "clip" if mode == "clip" else "drop"
    return bind(SCATTERS[op], x, updates, *idx, indexer=tuple(indexer), mode=mode)


def _inst(t):
    return np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t


def _gmode(mode):
    return "fill" if mode == "drop" else "clip"


def _linear_scatter_jvp(prim):
    def jvp(primals, tangents, *, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = bind(prim, x, u, *idx, indexer=indexer, mode=mode)
        if dtype_kind(out.dtype) not in "fc" or (type(tx) is Zero and type(tu) is Zero):
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, bind(prim, _inst(tx), _inst(tu), *idx, indexer=indexer, mode=mode)
    jvp_rules[prim] = jvp


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
transpose_rules[scatter_p] = _scatter_set_transpose
transpose_rules[scatter_add_p] = _scatter_add_transpose
for _p in (scatter_p, scatter_add_p):  # linear in operand and updates together
    vjp_rules[_p] = vjp_from_transpose(_p)


# gather (declared in `gather`, below) is linear in the operand: its transpose adds the
# cotangent into zeros at the gathered positions.
def _gather_transpose(ct, x, *idx, indexer, mode, fill_value):
    if type(ct) is Zero:
        return [None] * (1 + len(idx))
    zeros = np.zeros(x.aval.shape, x.aval.dtype)
    smode = "drop" if mode == "fill" else "clip"
    ct_x = bind(scatter_add_p, zeros, ct, *idx, indexer=indexer, mode=smode)
    return [ct_x] + [None] * len(idx)


transpose_rules[gather_p] = _gather_transpose
vjp_rules[gather_p] = vjp_from_transpose(gather_p)  # linear in the operand (indices are integers)


def _scatter_mul_jvp(primals, tangents, *, indexer, mode):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    kw = dict(indexer=indexer, mode=mode)
    out = bind(scatter_mul_p, x, u, *idx, **kw)
    dt = out.dtype
    if dtype_kind(dt) not in "fc" or (type(tx) is Zero and type(tu) is Zero):
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


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _extremal_jvp(prim):
    """The tangent at each position is the mean of the tangents of the values (operand
    and updates) that attain the result there (as JAX does for ties)."""

    def jvp(primals, tangents, *, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        kw = dict(indexer=indexer, mode=mode)
        out = bind(prim, x, u, *idx, **kw)
        dt = out.dtype
        if dtype_kind(dt) not in "fc" or (type(tx) is Zero and type(tu) is Zero):
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

    jvp_rules[prim] = jvp


_extremal_jvp(scatter_min_p)
_extremal_jvp(scatter_max_p)
for _p in (scatter_min_p, scatter_max_p):
    _p.unsupported["transpose"] = f"{_p.name} is not linear"


# --------------------------------------------------------------------------- batching


def _scatter_batch(prim):
    """The result always varies over the batch, so the operand is batched (broadcast when
    unmapped); the updates get their batch axis where gathering with the batched indexer
    puts it (see `indexing.batch_indexer`)."""

    def rule(args, dims, *, indexer, mode):
        (x, u, *idx), (dx, du, *didx) = args, dims
        size = batch_size_of(args, dims)
        x, idx, indexer, x_dim, u_dim = batch_indexer(x, dx, idx, didx, indexer, size,
                                                      batch_operand=True)
        u = _batch_at(u, du, size, u_dim)
        return bind(prim, x, u, *idx, indexer=indexer, mode=mode), x_dim

    batch_rules[prim] = rule
    return rule


for _p in SCATTERS.values():
    _scatter_batch(_p)


# --------------------------------------------------------------------------- dynamic_update_slice
# Batching of ``dynamic_update_slice`` (declared in `slicing`): with unmapped start
# indices the batch axis is updated whole; start indices that vary over the batch become
# one scatter.

def _dus_batch(args, dims):
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


batch_rules[dynamic_update_slice_p] = _dus_batch


# --------------------------------------------------------------------------- updates


def _updates_to(values, shape, dtype, what):
    """Cast ``values`` to ``dtype`` and broadcast them to ``shape`` (NumPy assignment)."""
    if isinstance(values, (Array, Tracer)):
        v = convert_element_type(values, dtype)
    else:
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


__all__ = ["scatter", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p", "SCATTERS"]
