"""Reduction primitives: sum, max, min, prod, argmax, argmin over axes, and the
cumulative sum, product, max and min along one axis.

Reductions keep the operand's dtype (``zerax.numpy`` converts first where NumPy
widens, e.g. ``sum`` of int32 gives int64).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from ._factory import deflinear, not_differentiable
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules


def _norm_axes(axes, ndim):
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:  # as NumPy: a 0-d array has no axis to reduce
            raise errors.ShapeError(f"axis {a} is out of bounds for an array of rank {ndim}")
        out.append(a % max(ndim, 1))
    return tuple(sorted(set(out)))


def _reduced_aval(x, axes, dtype=None):
    return ShapedArray([n for i, n in enumerate(x.shape) if i not in axes], dtype or x.dtype)


def _keep_dims(x_shape, axes):
    return tuple(i for i in range(len(x_shape)) if i not in axes)


def _reduction(name, impl):
    prim = Primitive(name)
    prim.impl = impl
    prim.abstract_eval = lambda x, *, axes: _reduced_aval(x, axes)
    return prim


def _expand_back(y, x_shape, axes):
    """Broadcast a reduced value back to the operand's shape."""
    from .shape import broadcast_in_dim
    return broadcast_in_dim(y, x_shape, _keep_dims(x_shape, axes))


# --------------------------------------------------------------------------- sum

reduce_sum_p = _reduction("reduce_sum",  # np.sum without its Python-level dispatch
                          lambda x, *, axes: np.add.reduce(x, axis=axes, dtype=x.dtype))


def reduce_sum(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_sum_p, x, axes=axes)


deflinear(reduce_sum_p, lambda ct, x, *, axes: [_expand_back(ct, x.aval.shape, axes)])


def _expand_back_np(y, x_shape, axes):
    """`_expand_back` on NumPy values (for the tape's VJP rules)."""
    out = np.empty(x_shape, y.dtype)
    out[...] = y.reshape([1 if i in axes else n for i, n in enumerate(x_shape)])
    return out


vjp_rules[reduce_sum_p] = (lambda ct, ans, x, *, axes: _expand_back_np(ct, x.shape, axes),)

# --------------------------------------------------------------------------- max / min


def _chooser_jvp(prim):
    """d max(x) = mean of the tangents at the positions that attain the max (JAX)."""

    def jvp(primals, tangents, *, axes):
        from .elementwise import convert_element_type, div, eq, mul
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axes=axes)
        if type(t) is Zero or ans.dtype.kind not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        location = convert_element_type(eq(x, _expand_back(ans, x.shape, axes)), x.dtype)
        counts = reduce_sum(location, axes)
        return ans, div(reduce_sum(mul(t, location), axes), counts)

    def vjp(ct, ans, x, *, axes):  # the transpose of the JVP above, on NumPy values
        location = np.equal(x, _expand_back_np(ans, x.shape, axes)).astype(x.dtype)
        counts = np.add.reduce(location, axis=axes, dtype=x.dtype)
        return _expand_back_np(ct / counts, x.shape, axes) * location

    jvp_rules[prim] = jvp
    vjp_rules[prim] = (vjp,)
    return prim


def _max_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.max(x, axis=axes)


def _min_impl(x, *, axes):
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        init = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max if x.dtype.kind in "iu" else True
        return np.full([n for i, n in enumerate(x.shape) if i not in axes], init, x.dtype)
    return np.min(x, axis=axes)


reduce_max_p = _chooser_jvp(_reduction("reduce_max", _max_impl))
reduce_min_p = _chooser_jvp(_reduction("reduce_min", _min_impl))


def reduce_max(x, axes):
    return bind(reduce_max_p, x, axes=_norm_axes(axes, x.ndim))


def reduce_min(x, axes):
    return bind(reduce_min_p, x, axes=_norm_axes(axes, x.ndim))


# --------------------------------------------------------------------------- prod

reduce_prod_p = _reduction("reduce_prod", lambda x, *, axes: np.prod(x, axis=axes, dtype=x.dtype))


def reduce_prod(x, axes):
    axes = _norm_axes(axes, x.ndim)
    if not axes:
        return x
    return bind(reduce_prod_p, x, axes=axes)


def _prod_jvp(primals, tangents, *, axes):
    # d prod = sum_i t_i * prod_{j != i} x_j, with the "product of the others" built from
    # exclusive cumulative products, so zeros in x are handled exactly.
    from .elementwise import mul
    from .shape import reshape, transpose
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if type(t) is Zero or ans.dtype.kind not in "fc":
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    keep = _keep_dims(x.shape, axes)
    perm = keep + axes
    kept_shape = [x.shape[i] for i in keep]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    xr = reshape(transpose(x, perm), kept_shape + [n])
    tr = reshape(transpose(t, perm), kept_shape + [n])
    others = _exclusive_products(xr)
    return ans, reduce_sum(mul(tr, others), (len(kept_shape),))


def _exclusive_products(x):
    """For each position along the last axis, the product of all other elements."""
    from .elementwise import mul
    from .shape import concatenate, slice_p_bind
    last = x.ndim - 1
    n = x.shape[last]
    ones = np.ones(tuple(x.shape[:-1]) + (1,), x.dtype)
    starts = [0] * x.ndim
    head = list(x.shape)
    head[last] = n - 1
    tail_start = list(starts)
    tail_start[last] = 1
    if n == 0:
        return x
    left = cumprod(concatenate([ones, slice_p_bind(x, starts, head)], last), last)
    right = cumprod(concatenate([slice_p_bind(x, tail_start, x.shape), ones], last), last,
                    reverse=True)
    return mul(left, right)


jvp_rules[reduce_prod_p] = _prod_jvp

# --------------------------------------------------------------------------- argmax / argmin


def _arg_abstract(x, *, axis, index_dtype):
    return ShapedArray([n for i, n in enumerate(x.shape) if i != axis], index_dtype)


def _arg_impl(fn):
    def impl(x, *, axis, index_dtype):
        if x.shape[axis] == 0:
            raise errors.ShapeError(f"attempt to get {fn.__name__} of an empty sequence")
        return fn(x, axis=axis).astype(index_dtype)
    return impl


argmax_p = not_differentiable(Primitive("argmax"), "it returns integer indices")
argmin_p = not_differentiable(Primitive("argmin"), "it returns integer indices")
argmax_p.impl, argmax_p.abstract_eval = _arg_impl(np.argmax), _arg_abstract
argmin_p.impl, argmin_p.abstract_eval = _arg_impl(np.argmin), _arg_abstract


def argmax(x, axis, index_dtype=np.int64):
    return bind(argmax_p, x, axis=_norm_axes((axis,), x.ndim)[0], index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype=np.int64):
    return bind(argmin_p, x, axis=_norm_axes((axis,), x.ndim)[0], index_dtype=np.dtype(index_dtype))


# --------------------------------------------------------------------------- cumulative


def _cumulative(name, ufunc):
    prim = Primitive(name)

    def impl(x, *, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype) if x.shape[axis] else x.copy()
        return np.flip(out, axis) if reverse else out

    prim.impl = impl
    prim.abstract_eval = lambda x, *, axis, reverse: ShapedArray(x.shape, x.dtype)
    return prim


cumsum_p = _cumulative("cumsum", np.add)
cumprod_p = _cumulative("cumprod", np.multiply)
cummax_p = _cumulative("cummax", np.maximum)
cummin_p = _cumulative("cummin", np.minimum)


def _cum_bind(prim, x, axis, reverse):
    return bind(prim, x, axis=_norm_axes((axis,), x.ndim)[0], reverse=bool(reverse))


def cumsum(x, axis, reverse=False):
    return _cum_bind(cumsum_p, x, axis, reverse)


def cumprod(x, axis, reverse=False):
    return _cum_bind(cumprod_p, x, axis, reverse)


def cummax(x, axis, reverse=False):
    return _cum_bind(cummax_p, x, axis, reverse)


def cummin(x, axis, reverse=False):
    return _cum_bind(cummin_p, x, axis, reverse)


deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def _prefix_scan(op, x, axis, reverse):
    """The cumulative ``op`` written as a log-depth (Hillis-Steele) scan of primitives.

    Its derivative is the derivative of this composition, which is exact where a
    formula like ``cumprod(x) * cumsum(t / x)`` would divide by zero."""
    from .shape import concatenate, rev, slice_p_bind
    if reverse:
        x = rev(x, (axis,))
    n = x.shape[axis]
    shift = 1
    while shift < n:
        limits = list(x.shape)
        limits[axis] = n - shift
        fill_shape = list(x.shape)
        fill_shape[axis] = shift
        shifted = concatenate([_identity_block(op, fill_shape, x.dtype),
                               slice_p_bind(x, [0] * x.ndim, limits)], axis)
        x = op(x, shifted)
        shift *= 2
    return rev(x, (axis,)) if reverse else x


def _identity_block(op, shape, dtype):
    from .elementwise import maximum, minimum, mul
    if op is mul:
        return np.ones(shape, dtype)
    if op is maximum:
        return np.full(shape, -np.inf, dtype)
    if op is minimum:
        return np.full(shape, np.inf, dtype)
    raise AssertionError(op)


def _scan_jvp(prim, op_name):
    def jvp(primals, tangents, *, axis, reverse):
        from ..interpreters import ad
        from . import elementwise
        op = getattr(elementwise, op_name)
        (x,), (t,) = primals, tangents
        ans = bind(prim, x, axis=axis, reverse=reverse)
        if type(t) is Zero or ans.dtype.kind not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        _, t_out = ad.jvp(lambda v: _prefix_scan(op, v, axis, reverse), (x,), (t,))
        return ans, t_out
    jvp_rules[prim] = jvp


_scan_jvp(cumprod_p, "mul")
_scan_jvp(cummax_p, "maximum")
_scan_jvp(cummin_p, "minimum")

for _p in (reduce_max_p, reduce_min_p, reduce_prod_p, cumprod_p, cummax_p, cummin_p):
    _p.unsupported["transpose"] = f"{_p.name} is not linear"


# --------------------------------------------------------------------------- batching


def _actual_axes(nd, d, axes):
    ex = [i for i in range(nd) if i != d]
    return tuple(ex[a] for a in axes)


def _reduction_batch(bind_fn):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        actual = _actual_axes(len(x.shape), d, axes)
        return bind_fn(x, actual), d - sum(1 for a in actual if a < d)
    return rule


def _arg_batch(prim):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        (actual,) = _actual_axes(len(x.shape), d, (axis,))
        return bind(prim, x, axis=actual, index_dtype=index_dtype), d - (actual < d)
    return rule


def _cum_batch(prim):
    def rule(args, dims, *, axis, reverse):
        (x,), (d,) = args, dims
        (actual,) = _actual_axes(len(x.shape), d, (axis,))
        return bind(prim, x, axis=actual, reverse=reverse), d
    return rule


batch_rules[reduce_sum_p] = _reduction_batch(reduce_sum)
batch_rules[reduce_max_p] = _reduction_batch(reduce_max)
batch_rules[reduce_min_p] = _reduction_batch(reduce_min)
batch_rules[reduce_prod_p] = _reduction_batch(reduce_prod)
batch_rules[argmax_p] = _arg_batch(argmax_p)
batch_rules[argmin_p] = _arg_batch(argmin_p)
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    batch_rules[_p] = _cum_batch(_p)


# --------------------------------------------------------------------------- Numba lowering
# Loops over static shapes (see backends/numba/codegen.py and the helpers in shape.py).
# Only loop nests opened with ``ctx.nest`` may run in parallel, and their iterations
# write distinct output elements; loops carrying a dependence are serial.


def _pairwise_block_py(a, lo, n):
    """NumPy's ``pairwise_sum`` leaf: 8 accumulators for blocks of at most 128."""
    b = a[lo:lo + n]  # (indices from 0 up: no negative-index checks, so it vectorizes)
    if n < 8:
        res = b[0]
        for i in range(1, n):
            res += b[i]
        return res
    r0, r1, r2, r3 = b[0], b[1], b[2], b[3]
    r4, r5, r6, r7 = b[4], b[5], b[6], b[7]
    stop = n - n % 8
    for i in range(8, stop, 8):
        r0 += b[i]
        r1 += b[i + 1]
        r2 += b[i + 2]
        r3 += b[i + 3]
        r4 += b[i + 4]
        r5 += b[i + 5]
        r6 += b[i + 6]
        r7 += b[i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(stop, n):
        res += b[i]
    return res


def _pairwise_sum_py(a):
    """NumPy's pairwise summation of the 1-d ``a`` (its add loop's ``pairwise_sum``:
    halves rounded down to a multiple of 8 until blocks of 128), so that float sums under
    jit round exactly as eager ones.  The recursion runs on an explicit stack (a
    recursive njit function cannot be loaded back from Numba's on-disk cache)."""
    n = a.shape[0]
    if n <= 128:
        return _pairwise_block_nb(a, 0, n)
    los = np.empty(130, np.int64)
    sizes = np.empty(130, np.int64)
    split = np.zeros(130, np.bool_)
    vals = np.empty(130, a.dtype)
    top, nv = 0, 0
    los[0], sizes[0] = 0, n
    while top >= 0:
        lo, m = los[top], sizes[top]
        if m <= 128:
            vals[nv] = _pairwise_block_nb(a, lo, m)
            nv += 1
            top -= 1
        elif not split[top]:  # visit the left half, then the right half, then add
            split[top] = True
            m2 = m // 2
            m2 -= m2 % 8
            los[top + 1], sizes[top + 1], split[top + 1] = lo + m2, m - m2, False
            los[top + 2], sizes[top + 2], split[top + 2] = lo, m2, False
            top += 2
        else:
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
    return vals[0]


_pairwise_block_nb = None
_pairwise_sum_nb = None


def _pairwise_helper(ctx):
    global _pairwise_block_nb, _pairwise_sum_nb
    if _pairwise_sum_nb is None:
        import numba
        try:  # Numba's on-disk cache, as for the special functions' kernels
            block = numba.njit(_pairwise_block_py, cache=True)
            total = numba.njit(_pairwise_sum_py, cache=True)
        except RuntimeError:  # pragma: no cover - no usable cache directory
            block = numba.njit(_pairwise_block_py)
            total = numba.njit(_pairwise_sum_py)
        _pairwise_block_nb, _pairwise_sum_nb = block, total
    return ctx.helper("_zx_pairwise_sum", _pairwise_sum_nb)


def _nb_combine(kind, dtype, a, b) -> str:
    """Source text combining accumulator ``a`` with element ``b`` as NumPy's reduction."""
    from ..backends.numba.codegen import dtype_name
    dtype = np.dtype(dtype)
    t = dtype_name(dtype)
    if dtype == np.bool_:
        return f"({a} | {b})" if kind in ("sum", "max") else f"({a} & {b})"
    if kind == "sum":
        return f"{t}({a} + {b})"
    if kind == "prod":
        return f"{t}({a} * {b})"
    cmp = ">" if kind == "max" else "<"
    if dtype.kind == "f":  # NaN propagates, as np.maximum / np.minimum
        return f"({a} if ({a} {cmp} {b} or {a} != {a}) else {b})"
    return f"({a} if {a} {cmp} {b} else {b})"


def _nb_identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtype.kind == "f":
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


def _reduce_lower(kind):
    def rule(ctx, eqn):
        from ..backends.numba.codegen import dtype_name, literal_text
        from .shape import _nb_array, _nb_ix, _nb_scalar, _nb_serial, _nb_shape
        (x,), (ov,) = eqn.invars, eqn.outvars
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        nd = len(shape)
        axes = tuple(a for a in eqn.params["axes"] if a < nd)  # a 0-d operand's axis 0
        out_shape = ov.aval.shape
        t = dtype_name(dtype)
        init = literal_text(_nb_identity(kind, dtype), dtype)
        red = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        kept = int(np.prod(out_shape, dtype=np.int64))
        ctx.emit(f"# reduce_{kind} over axes {axes}")
        if out_shape == ():  # a single result: computed into a scalar local
            acc = ctx.fresh("acc")
            if red == 0:
                ctx.emit(f"{acc} = {init}")
            elif nd == 0:
                ctx.emit(f"{acc} = {_nb_combine(kind, dtype, init, _nb_scalar(ctx, x))}")
            else:
                flat = ctx.fresh("r")
                ctx.emit(f"{flat} = np.ascontiguousarray({ctx.name(x)}).reshape(({red},))")
                if kind == "sum" and dtype.kind == "f" and red >= 8:
                    psum = _pairwise_helper(ctx)
                    ctx.emit(f"{acc} = {t}({init} + {psum}({flat}))")
                else:
                    j = ctx.fresh("j")
                    ctx.emit(f"{acc} = {init}")
                    with _nb_serial(ctx, j, red):
                        b = ctx.fresh("x")
                        ctx.emit(f"{b} = {flat}[{j}]")
                        ctx.emit(f"{acc} = {_nb_combine(kind, dtype, acc, b)}")
            ctx.bind_scalar(ov, acc)
            return
        out = ctx.out(ov)
        if red == 0 or kept == 0:
            ctx.emit(f"{out} = np.full({_nb_shape(out_shape)}, {init}, {t})")
            return
        xn = _nb_array(ctx, x)
        if axes == tuple(range(nd - len(axes), nd)):
            # The reduced axes are the last ones: one contiguous row per output element.
            rows, flat = ctx.fresh("r"), ctx.fresh("o")
            ctx.emit(f"{rows} = np.ascontiguousarray({xn}).reshape(({kept}, {red}))")
            ctx.emit(f"{out} = np.empty({_nb_shape(out_shape)}, {t})")
            ctx.emit(f"{flat} = {out}.reshape(({kept},))")
            with ctx.nest((kept,)) as (k,):
                if kind == "sum" and dtype.kind == "f" and red >= 8:
                    psum = _pairwise_helper(ctx)
                    ctx.emit(f"{flat}[{k}] = {t}({init} + {psum}({rows}[{k}]))")
                    return
                acc, j = ctx.fresh("acc"), ctx.fresh("j")
                ctx.emit(f"{acc} = {init}")
                with _nb_serial(ctx, j, red):
                    b = ctx.fresh("x")
                    ctx.emit(f"{b} = {rows}[{k}, {j}]")
                    ctx.emit(f"{acc} = {_nb_combine(kind, dtype, acc, b)}")
                ctx.emit(f"{flat}[{k}] = {acc}")
            return
        # Otherwise: visit the operand in memory order, accumulating into the output.
        # Only the kept axes before the first reduced one may run in parallel.
        ctx.emit(f"{out} = np.full({_nb_shape(out_shape)}, {init}, {t})")
        lead = axes[0]
        with ctx.nest(shape[:lead]) as idx:
            idx = list(idx)
            opened = []
            for d in range(lead, nd):
                loop = _nb_serial(ctx, ctx.fresh("j"), shape[d])
                idx.append(loop.__enter__())
                opened.append(loop)
            o_ix = _nb_ix(i for d, i in enumerate(idx) if d not in axes)
            a, b = ctx.fresh("a"), ctx.fresh("x")
            ctx.emit(f"{a} = {out}[{o_ix}]")
            ctx.emit(f"{b} = {xn}[{_nb_ix(idx)}]")
            ctx.emit(f"{out}[{o_ix}] = {_nb_combine(kind, dtype, a, b)}")
            for loop in reversed(opened):
                loop.__exit__()
    return rule


reduce_sum_p.lower_numba = _reduce_lower("sum")
reduce_prod_p.lower_numba = _reduce_lower("prod")
reduce_max_p.lower_numba = _reduce_lower("max")
reduce_min_p.lower_numba = _reduce_lower("min")


def _arg_lower(kind):
    def rule(ctx, eqn):
        from ..backends.numba.codegen import dtype_name
        from .shape import _nb_array, _nb_empty, _nb_ix, _nb_serial
        (x,), (ov,) = eqn.invars, eqn.outvars
        axis, index_dtype = eqn.params["axis"], eqn.params["index_dtype"]
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        if shape == ():  # a 0-d operand (axis 0 names the array itself): index 0
            ctx.bind_scalar(ov, f"{dtype_name(index_dtype)}(0)")
            return
        if shape[axis] == 0:
            raise errors.ShapeError(f"attempt to get {kind} of an empty sequence")
        ctx.emit(f"# {kind} along axis {axis} (first occurrence; the first NaN wins)")
        cmp = ">" if kind == "argmax" else "<"

        def better(v, b):  # replace the best b by v: strictly better, or the first NaN
            if dtype.kind == "f":
                return f"{b} == {b} and ({v} {cmp} {b} or {v} != {v})"
            return f"{v} {cmp} {b}"
        xn = _nb_array(ctx, x)
        it = dtype_name(index_dtype)
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        if not post:  # the axis is the last one: the running best lives in locals
            scalar_out = ov.aval.shape == ()
            out = None if scalar_out else _nb_empty(ctx, ov)
            if int(np.prod(ov.aval.shape, dtype=np.int64)) == 0:
                return
            with ctx.nest(pre) as idx:
                best, pos, v, j = ctx.fresh("b"), ctx.fresh("p"), ctx.fresh("x"), ctx.fresh("j")
                ctx.emit(f"{best} = {xn}[{_nb_ix(list(idx) + ['0'])}]")
                ctx.emit(f"{pos} = 0")
                with _nb_serial(ctx, j, n, start=1):
                    ctx.emit(f"{v} = {xn}[{_nb_ix(list(idx) + [j])}]")
                    ctx.emit(f"if {better(v, best)}:")
                    ctx.emit(f"    {best} = {v}")
                    ctx.emit(f"    {pos} = {j}")
                if scalar_out:
                    res = ctx.fresh("s")
                    ctx.emit(f"{res} = {it}({pos})")
                    ctx.bind_scalar(ov, res)
                else:
                    ctx.emit(f"{out}[{_nb_ix(idx)}] = {it}({pos})")
            return
        out = _nb_empty(ctx, ov)
        if int(np.prod(ov.aval.shape, dtype=np.int64)) == 0:
            return
        # Otherwise walk the operand in memory order with an array of running bests.
        best = ctx.fresh("b")
        ctx.emit(f"{best} = np.empty({tuple(ov.aval.shape)!r}, {dtype_name(dtype)})")
        with ctx.nest(pre) as pidx:
            with ctx.nest(post) as qidx:
                o = _nb_ix(list(pidx) + list(qidx))
                ctx.emit(f"{best}[{o}] = {xn}[{_nb_ix(list(pidx) + ['0'] + list(qidx))}]")
                ctx.emit(f"{out}[{o}] = 0")
            j = ctx.fresh("j")
            with _nb_serial(ctx, j, n, start=1):
                with ctx.nest(post) as qidx:
                    o = _nb_ix(list(pidx) + list(qidx))
                    v, b = ctx.fresh("x"), ctx.fresh("b")
                    ctx.emit(f"{v} = {xn}[{_nb_ix(list(pidx) + [j] + list(qidx))}]")
                    ctx.emit(f"{b} = {best}[{o}]")
                    ctx.emit(f"if {better(v, b)}:")
                    ctx.emit(f"    {best}[{o}] = {v}")
                    ctx.emit(f"    {out}[{o}] = {j}")
    return rule


argmax_p.lower_numba = _arg_lower("argmax")
argmin_p.lower_numba = _arg_lower("argmin")


def _cum_lower(kind):
    def rule(ctx, eqn):
        from .shape import _nb_array, _nb_empty, _nb_ix, _nb_scalar, _nb_serial
        (x,), (ov,) = eqn.invars, eqn.outvars
        axis, reverse = eqn.params["axis"], eqn.params["reverse"]
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        ctx.emit(f"# cum{kind} along axis {axis}{' (reversed)' if reverse else ''}")
        if shape == ():  # a 0-d operand: its own running total
            res = ctx.fresh("s")
            ctx.emit(f"{res} = {_nb_scalar(ctx, x)}")
            ctx.bind_scalar(ov, res)
            return
        xn = _nb_array(ctx, x)
        out = _nb_empty(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        first = str(n - 1) if reverse else "0"
        # Memory order: the (parallel) leading axes, then the scanned axis, then the rest.
        with ctx.nest(pre) as pidx:
            with ctx.nest(post) as qidx:
                ix = _nb_ix(list(pidx) + [first] + list(qidx))
                ctx.emit(f"{out}[{ix}] = {xn}[{ix}]")
            if n > 1:
                j = ctx.fresh("j")
                with _nb_serial(ctx, j, n, start=1):
                    cur, prev = (f"{n - 1} - {j}", f"{n} - {j}") if reverse else \
                        (j, f"{j} - 1")
                    with ctx.nest(post) as qidx:
                        c = _nb_ix(list(pidx) + [cur] + list(qidx))
                        p = _nb_ix(list(pidx) + [prev] + list(qidx))
                        a, b = ctx.fresh("a"), ctx.fresh("x")
                        ctx.emit(f"{a} = {out}[{p}]")
                        ctx.emit(f"{b} = {xn}[{c}]")
                        ctx.emit(f"{out}[{c}] = {_nb_combine(kind, dtype, a, b)}")
    return rule


cumsum_p.lower_numba = _cum_lower("sum")
cumprod_p.lower_numba = _cum_lower("prod")
cummax_p.lower_numba = _cum_lower("max")
cummin_p.lower_numba = _cum_lower("min")
