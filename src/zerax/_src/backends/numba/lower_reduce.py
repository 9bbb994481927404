"""The Numba lowering of the reductions and sorts (``ops/reduce.py``, ``ops/sort.py``).

Loops over static shapes (see lower_util.py).  Only loop nests opened with ``ctx.nest``
may run in parallel, and their iterations write distinct output elements; loops carrying
a dependence are serial.  Float sums round as NumPy's pairwise summation does; a sort is
a stable merge sort of each lane with NumPy's order.
"""

from __future__ import annotations

import numpy as np

from .... import errors
from ...ops.reduce import (argmax_p, argmin_p, cummax_p, cummin_p, cumprod_p, cumsum_p,
                           reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p)
from ...ops.sort import argsort_p, sort_p
from .codegen import dtype_name, literal_text
from .lower_util import Serial, array_of, empty_out, index_text, scalar_of, shape_text
from .rules import lowering_rules


# --------------------------------------------------------------------------- reductions


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


def combine(kind, dtype, a, b) -> str:
    """Source text combining accumulator ``a`` with element ``b`` as NumPy's reduction."""
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


def _identity(kind, dtype):
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
        (x,), (ov,) = eqn.invars, eqn.outvars
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        nd = len(shape)
        axes = tuple(a for a in eqn.params["axes"] if a < nd)  # a 0-d operand's axis 0
        out_shape = ov.aval.shape
        t = dtype_name(dtype)
        init = literal_text(_identity(kind, dtype), dtype)
        red = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        kept = int(np.prod(out_shape, dtype=np.int64))
        ctx.emit(f"# reduce_{kind} over axes {axes}")
        if out_shape == ():  # a single result: computed into a scalar local
            acc = ctx.fresh("acc")
            if red == 0:
                ctx.emit(f"{acc} = {init}")
            elif nd == 0:
                ctx.emit(f"{acc} = {combine(kind, dtype, init, scalar_of(ctx, x))}")
            else:
                flat = ctx.fresh("r")
                ctx.emit(f"{flat} = np.ascontiguousarray({ctx.name(x)}).reshape(({red},))")
                if kind == "sum" and dtype.kind == "f" and red >= 8:
                    psum = _pairwise_helper(ctx)
                    ctx.emit(f"{acc} = {t}({init} + {psum}({flat}))")
                else:
                    j = ctx.fresh("j")
                    ctx.emit(f"{acc} = {init}")
                    with Serial(ctx, j, red):
                        b = ctx.fresh("x")
                        ctx.emit(f"{b} = {flat}[{j}]")
                        ctx.emit(f"{acc} = {combine(kind, dtype, acc, b)}")
            ctx.bind_scalar(ov, acc)
            return
        out = ctx.out(ov)
        if red == 0 or kept == 0:
            ctx.emit(f"{out} = np.full({shape_text(out_shape)}, {init}, {t})")
            return
        xn = array_of(ctx, x)
        if axes == tuple(range(nd - len(axes), nd)):
            # The reduced axes are the last ones: one contiguous row per output element.
            rows, flat = ctx.fresh("r"), ctx.fresh("o")
            ctx.emit(f"{rows} = np.ascontiguousarray({xn}).reshape(({kept}, {red}))")
            ctx.emit(f"{out} = np.empty({shape_text(out_shape)}, {t})")
            ctx.emit(f"{flat} = {out}.reshape(({kept},))")
            with ctx.nest((kept,)) as (k,):
                if kind == "sum" and dtype.kind == "f" and red >= 8:
                    psum = _pairwise_helper(ctx)
                    ctx.emit(f"{flat}[{k}] = {t}({init} + {psum}({rows}[{k}]))")
                    return
                acc, j = ctx.fresh("acc"), ctx.fresh("j")
                ctx.emit(f"{acc} = {init}")
                with Serial(ctx, j, red):
                    b = ctx.fresh("x")
                    ctx.emit(f"{b} = {rows}[{k}, {j}]")
                    ctx.emit(f"{acc} = {combine(kind, dtype, acc, b)}")
                ctx.emit(f"{flat}[{k}] = {acc}")
            return
        # Otherwise: visit the operand in memory order, accumulating into the output.
        # Only the kept axes before the first reduced one may run in parallel.
        ctx.emit(f"{out} = np.full({shape_text(out_shape)}, {init}, {t})")
        lead = axes[0]
        with ctx.nest(shape[:lead]) as idx:
            idx = list(idx)
            opened = []
            for d in range(lead, nd):
                loop = Serial(ctx, ctx.fresh("j"), shape[d])
                idx.append(loop.__enter__())
                opened.append(loop)
            o_ix = index_text(i for d, i in enumerate(idx) if d not in axes)
            a, b = ctx.fresh("a"), ctx.fresh("x")
            ctx.emit(f"{a} = {out}[{o_ix}]")
            ctx.emit(f"{b} = {xn}[{index_text(idx)}]")
            ctx.emit(f"{out}[{o_ix}] = {combine(kind, dtype, a, b)}")
            for loop in reversed(opened):
                loop.__exit__()
    return rule


lowering_rules[reduce_sum_p] = _reduce_lower("sum")
lowering_rules[reduce_prod_p] = _reduce_lower("prod")
lowering_rules[reduce_max_p] = _reduce_lower("max")
lowering_rules[reduce_min_p] = _reduce_lower("min")


def _arg_lower(kind):
    def rule(ctx, eqn):
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
        xn = array_of(ctx, x)
        it = dtype_name(index_dtype)
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        if not post:  # the axis is the last one: the running best lives in locals
            scalar_out = ov.aval.shape == ()
            out = None if scalar_out else empty_out(ctx, ov)
            if int(np.prod(ov.aval.shape, dtype=np.int64)) == 0:
                return
            with ctx.nest(pre) as idx:
                best, pos, v, j = ctx.fresh("b"), ctx.fresh("p"), ctx.fresh("x"), ctx.fresh("j")
                ctx.emit(f"{best} = {xn}[{index_text(list(idx) + ['0'])}]")
                ctx.emit(f"{pos} = 0")
                with Serial(ctx, j, n, start=1):
                    ctx.emit(f"{v} = {xn}[{index_text(list(idx) + [j])}]")
                    ctx.emit(f"if {better(v, best)}:")
                    ctx.emit(f"    {best} = {v}")
                    ctx.emit(f"    {pos} = {j}")
                if scalar_out:
                    res = ctx.fresh("s")
                    ctx.emit(f"{res} = {it}({pos})")
                    ctx.bind_scalar(ov, res)
                else:
                    ctx.emit(f"{out}[{index_text(idx)}] = {it}({pos})")
            return
        out = empty_out(ctx, ov)
        if int(np.prod(ov.aval.shape, dtype=np.int64)) == 0:
            return
        # Otherwise walk the operand in memory order with an array of running bests.
        best = ctx.fresh("b")
        ctx.emit(f"{best} = np.empty({tuple(ov.aval.shape)!r}, {dtype_name(dtype)})")
        with ctx.nest(pre) as pidx:
            with ctx.nest(post) as qidx:
                o = index_text(list(pidx) + list(qidx))
                ctx.emit(f"{best}[{o}] = {xn}[{index_text(list(pidx) + ['0'] + list(qidx))}]")
                ctx.emit(f"{out}[{o}] = 0")
            j = ctx.fresh("j")
            with Serial(ctx, j, n, start=1):
                with ctx.nest(post) as qidx:
                    o = index_text(list(pidx) + list(qidx))
                    v, b = ctx.fresh("x"), ctx.fresh("b")
                    ctx.emit(f"{v} = {xn}[{index_text(list(pidx) + [j] + list(qidx))}]")
                    ctx.emit(f"{b} = {best}[{o}]")
                    ctx.emit(f"if {better(v, b)}:")
                    ctx.emit(f"    {best}[{o}] = {v}")
                    ctx.emit(f"    {out}[{o}] = {j}")
    return rule


lowering_rules[argmax_p] = _arg_lower("argmax")
lowering_rules[argmin_p] = _arg_lower("argmin")


def _cum_lower(kind):
    def rule(ctx, eqn):
        (x,), (ov,) = eqn.invars, eqn.outvars
        axis, reverse = eqn.params["axis"], eqn.params["reverse"]
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        ctx.emit(f"# cum{kind} along axis {axis}{' (reversed)' if reverse else ''}")
        if shape == ():  # a 0-d operand: its own running total
            res = ctx.fresh("s")
            ctx.emit(f"{res} = {scalar_of(ctx, x)}")
            ctx.bind_scalar(ov, res)
            return
        xn = array_of(ctx, x)
        out = empty_out(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return
        n, pre, post = shape[axis], shape[:axis], shape[axis + 1:]
        first = str(n - 1) if reverse else "0"
        # Memory order: the (parallel) leading axes, then the scanned axis, then the rest.
        with ctx.nest(pre) as pidx:
            with ctx.nest(post) as qidx:
                ix = index_text(list(pidx) + [first] + list(qidx))
                ctx.emit(f"{out}[{ix}] = {xn}[{ix}]")
            if n > 1:
                j = ctx.fresh("j")
                with Serial(ctx, j, n, start=1):
                    cur, prev = (f"{n - 1} - {j}", f"{n} - {j}") if reverse else \
                        (j, f"{j} - 1")
                    with ctx.nest(post) as qidx:
                        c = index_text(list(pidx) + [cur] + list(qidx))
                        p = index_text(list(pidx) + [prev] + list(qidx))
                        a, b = ctx.fresh("a"), ctx.fresh("x")
                        ctx.emit(f"{a} = {out}[{p}]")
                        ctx.emit(f"{b} = {xn}[{c}]")
                        ctx.emit(f"{out}[{c}] = {combine(kind, dtype, a, b)}")
    return rule


lowering_rules[cumsum_p] = _cum_lower("sum")
lowering_rules[cumprod_p] = _cum_lower("prod")
lowering_rules[cummax_p] = _cum_lower("max")
lowering_rules[cummin_p] = _cum_lower("min")


# --------------------------------------------------------------------------- sort
# Each 1-d lane along the sorted dimension is copied into a buffer and sorted by a stable
# merge sort (insertion-sorted runs, then bottom-up merges) on an index permutation, with
# NumPy's order: NaNs last; complex numbers lexicographically with NumPy's NaN rules.


def _lt_real(a, b):
    return a < b or (b != b and a == a)


def _lt_complex(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if ar < br:
        return ai == ai or bi != bi
    if ar > br:
        return bi != bi and ai == ai
    if ar == br or (ar != ar and br != br):
        return ai < bi or (bi != bi and ai == ai)
    return br != br


def _make_argsort(lt):
    def argsort_lane(a):
        n = a.shape[0]
        p = np.arange(n).astype(np.int64)
        q = np.empty(n, np.int64)
        run = 16
        for s in range(0, n, run):
            e = min(s + run, n)
            for i in range(s + 1, e):
                v = p[i]
                k = i
                while k > s and lt(a[v], a[p[k - 1]]):
                    p[k] = p[k - 1]
                    k -= 1
                p[k] = v
        w = run
        while w < n:
            for s in range(0, n, 2 * w):
                m = min(s + w, n)
                e = min(s + 2 * w, n)
                i, j, k = s, m, s
                while i < m and j < e:
                    if lt(a[p[j]], a[p[i]]):  # strictly smaller: stable
                        q[k] = p[j]
                        j += 1
                    else:
                        q[k] = p[i]
                        i += 1
                    k += 1
                while i < m:
                    q[k] = p[i]
                    i += 1
                    k += 1
                while j < e:
                    q[k] = p[j]
                    j += 1
                    k += 1
            p, q = q, p
            w *= 2
        return p
    return argsort_lane


_argsort_cache: dict = {}


def _lane_dtype(dtype):
    """The dtype lanes are sorted in: float64 for every real dtype it holds exactly (the
    order, NaNs included, is unchanged), so that one compiled sort serves them all."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    if dtype.kind in "iu" and dtype.itemsize == 8:
        return dtype
    return np.dtype(np.float64)


def _argsort_helper(ctx, lane_dtype):
    """The njit-compiled stable argsort of a 1-d lane, registered with the generated module."""
    complex_ = np.dtype(lane_dtype).kind == "c"
    name = "_zx_argsort_complex" if complex_ else "_zx_argsort_real"
    fn = _argsort_cache.get(name)
    if fn is None:
        import numba
        lt = numba.njit(_lt_complex if complex_ else _lt_real, cache=False)
        fn = _argsort_cache[name] = numba.njit(_make_argsort(lt), cache=False)
    return ctx.helper(name, fn)


def _sort_lower_numba(kind):
    def rule(ctx, eqn):
        (x,), (ov,) = eqn.invars, eqn.outvars
        dim = eqn.params["dimension"]
        shape = x.aval.shape
        ctx.emit(f"# {kind} {x.aval.str_short()} along axis {dim} (stable, NaNs last)")
        xn = array_of(ctx, x)
        out = empty_out(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return
        n = shape[dim]
        lane = _lane_dtype(x.aval.dtype)
        helper = _argsort_helper(ctx, lane)
        with ctx.nest(shape[:dim] + shape[dim + 1:]) as idx:
            pre, post = list(idx[:dim]), list(idx[dim:])
            buf, perm, j = ctx.fresh("buf"), ctx.fresh("perm"), ctx.fresh("j")
            ctx.emit(f"{buf} = np.empty({n}, {dtype_name(lane)})")
            with Serial(ctx, j, n):
                ctx.emit(f"{buf}[{j}] = {xn}[{index_text(pre + [j] + post)}]")
            ctx.emit(f"{perm} = {helper}({buf})")
            with Serial(ctx, j, n):
                # Sorted values are read back from the operand (its dtype, exactly).
                val = (f"{xn}[{index_text(pre + [f'{perm}[{j}]'] + post)}]" if kind == "sort"
                       else f"{perm}[{j}]")
                ctx.emit(f"{out}[{index_text(pre + [j] + post)}] = {val}")
    return rule


lowering_rules[sort_p] = _sort_lower_numba("sort")
lowering_rules[argsort_p] = _sort_lower_numba("argsort")
