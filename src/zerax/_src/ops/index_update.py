"""The scatter primitives (``scatter``, ``scatter_add``, ``scatter_mul``, ``scatter_min``,
``scatter_max``) with all their rules, and ``x.at[idx]`` (`IndexUpdateHelper`), which
lowers an update to one of them.

A scatter takes the operand, the updates (already of the indexed shape and the operand's
dtype) and the index arrays, with the same static ``indexer`` as `indexing.gather`:
``scatter(x, u, *idx)`` is ``x`` with ``x[indexer] (op)= u``, repeated indices
accumulating (for ``set`` the last one wins).  ``mode="drop"`` skips out-of-bounds
indices, ``"clip"`` clamps them.  Parsing, shapes and the gather primitive are in
`indexing`; this module imports them (and `indexing` re-exports this one's names).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero, is_undefined
from ..core.array import Array
from ..core.core import Primitive, ShapedArray, Tracer, bind, concrete_value
from ._factory import vjp_from_transpose
from .elementwise import add, convert_element_type, div, eq, mul, select_n
from .indexing import (_INTP, _apply_plan, _as_value, _check_index_avals, _expand, _batch_at, _gather_shape, _index_and_mask, _parse, _zero, batch_indexer, gather_p)
from .shape import broadcast_in_dim, iota, reshape, rev, slice_p_bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

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


def _linear_scatter_jvp(prim):
    def jvp(primals, tangents, *, indexer, mode):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = bind(prim, x, u, *idx, indexer=indexer, mode=mode)
        if out.dtype.kind not in "fc" or (type(tx) is Zero and type(tu) is Zero):
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
        from ..interpreters.batching import batch_size_of
        (x, u, *idx), (dx, du, *didx) = args, dims
        size = batch_size_of(args, dims)
        x, idx, indexer, x_dim, u_dim = batch_indexer(x, dx, idx, didx, indexer, size,
                                                      batch_operand=True)
        u = _batch_at(u, du, size, u_dim)
        return bind(prim, x, u, *idx, indexer=indexer, mode=mode), x_dim

    batch_rules[prim] = rule
    return rule


for _p in _SCATTERS.values():
    _scatter_batch(_p)


# --------------------------------------------------------------------------- .at[]


def _updates_to(values, shape, dtype, what):
    """Cast ``values`` to ``dtype`` and broadcast them to ``shape`` (NumPy assignment)."""
    if isinstance(values, (Array, Tracer)):
        v = convert_element_type(values, dtype)
    else:
        from ..numpy._util import check_arg
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


_COMBINE = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


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
        x, fname = _as_value(self.array), f"x.at[idx].{name}"
        if op != "set":
            # As JAX: combine in the promoted dtype, then cast back to x's (an int array
            # multiplied by 2.5 at an index holds int(x * 2.5) there, not x * 2).
            from ..numpy._util import check_arg, numpy_result_dtype
            values = check_arg(values, fname)       # (converted once, used below too)
            dtype = numpy_result_dtype(_COMBINE[op], x, values)
            if dtype != np.dtype(x.dtype):
                out = _scatter_update(convert_element_type(x, dtype), self.index, values,
                                      op, mode, fname)
                return convert_element_type(out, x.dtype)
        return _scatter_update(x, self.index, values, op, mode, fname)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = values`` (for repeated indices the last value wins)."""
        return self._update(values, "set", mode, "set")

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] += values``, accumulating over repeated indices (``np.add.at``)."""
        return self._update(values, "add", mode, "add")

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] -= values``, accumulating over repeated indices."""
        from ..numpy.ufuncs import negative
        return self._update(negative(values), "add", mode, "subtract")

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] *= values``, accumulating over repeated indices (``np.multiply.at``)."""
        return self._update(values, "mul", mode, "multiply")

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values`` (as JAX: ``x`` divided by the scattered product)."""
        from ..numpy.ufuncs import true_divide
        x = _as_value(self.array)
        ones = Array._wrap(np.ones(x.shape, x.dtype))
        return true_divide(x, _IndexUpdateRef(ones, self.index).multiply(values, mode=mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values`` (as JAX: ``x`` to the scattered product)."""
        from ..numpy.ufuncs import power
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


__all__ = ["IndexUpdateHelper", "scatter", "scatter_p", "scatter_add_p", "scatter_mul_p",
           "scatter_min_p", "scatter_max_p"]


# --------------------------------------------------------------------------- Numba lowering


def _nb_complex_pick(kind, a, b) -> str:
    """``np.maximum``/``np.minimum`` of complex scalars: lexicographic, NaN propagates."""
    cmp, eq_cmp = (">", ">=") if kind == "max" else ("<", "<=")
    return (f"({a} if ({a}.real != {a}.real or {a}.imag != {a}.imag or "
            f"({a}.real {cmp} {b}.real and {a}.imag == {a}.imag and {b}.imag == {b}.imag) or "
            f"({a}.real == {b}.real and {a}.imag {eq_cmp} {b}.imag)) else {b})")


def _scatter_lower_numba(op):
    """``out = x.copy()``, then one serial loop over the updates in C order (repeated
    indices accumulate in that order, and for ``set`` the last one wins, as the impl)."""
    kind = {"add": "sum", "mul": "prod", "min": "min", "max": "max"}.get(op)

    def rule(ctx, eqn):
        from .indexing import _nb_index_nest, _nb_index_status
        from .reduce import _nb_combine
        from .shape import _nb_array, _nb_ix, _nb_scalar
        x, u, *idx = eqn.invars
        (ov,) = eqn.outvars
        indexer, mode = eqn.params["indexer"], eqn.params["mode"]
        dtype = np.dtype(ov.aval.dtype)
        ctx.emit(f"# {eqn.primitive.name} of {u.aval.str_short()} into "
                 f"{x.aval.str_short()} (mode {mode})")
        xn = _nb_array(ctx, x)
        out = ctx.out(ov)
        ctx.emit(f"{out} = np.copy({xn})")
        checked = mode == "drop"
        _, static_oob = _nb_index_status(x.aval.shape, indexer, checked)
        if (int(np.prod(x.aval.shape, dtype=np.int64)) == 0 or
                int(np.prod(u.aval.shape, dtype=np.int64)) == 0 or static_oob):
            return
        uval = _nb_scalar(ctx, u) if u.aval.shape == () else None
        un = None if uval is not None else _nb_array(ctx, u)

        def body(positions, oks, names):
            dst = f"{out}[{_nb_ix(positions)}]"
            val = uval if uval is not None else f"{un}[{_nb_ix(names)}]"
            if op == "set":
                new = val
            elif dtype.kind == "c" and kind in ("min", "max"):
                new = _nb_complex_pick(kind, dst, val)
            else:
                new = _nb_combine(kind, dtype, dst, val)
            if oks:
                ctx.emit(f"if {' and '.join(oks)}:")
                ctx.emit(f"    {dst} = {new}")
            else:
                ctx.emit(f"{dst} = {new}")

        _nb_index_nest(ctx, x.aval.shape, indexer, idx, checked=checked, parallel=False,
                       body=body)

    return rule


for _op, _p in _SCATTERS.items():
    _p.lower_numba = _scatter_lower_numba(_op)
