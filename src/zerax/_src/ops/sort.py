"""Sorting primitives: ``sort`` (differentiable) and ``argsort`` (integer indices).

Both sort stably along one dimension with NumPy's order (NaNs last; complex numbers
lexicographically).  The derivative of ``sort`` moves the tangent the way the values
moved: a gather of the tangent by the sorting permutation (``argsort``), which
transposes to a scatter-add.  Batching sorts along the same dimension of the batched
operand (the batch dimension stays where it is).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from ._factory import not_differentiable
from .indexing import take_along_axis
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules


def _norm_dim(dimension, ndim, name):
    d = int(dimension)
    if ndim == 0 or not -ndim <= d < ndim:
        raise errors.ShapeError(
            f"{name}: dimension {dimension} is out of bounds for an array of rank {ndim}")
    return d % ndim


# --------------------------------------------------------------------------- sort

sort_p = Primitive("sort")


def sort(x, dimension=-1, is_stable=True):
    """``x`` sorted along ``dimension`` (ascending, stable, NaNs last)."""
    return bind(sort_p, x, dimension=_norm_dim(dimension, x.ndim, "sort"))


def _sort_impl(x, *, dimension):
    return np.sort(x, axis=dimension, kind="stable")


def _sort_abstract(x, *, dimension):
    _norm_dim(dimension, x.ndim, "sort")
    return ShapedArray(x.shape, x.dtype)


def _sort_jvp(primals, tangents, *, dimension):
    (x,), (t,) = primals, tangents
    out = bind(sort_p, x, dimension=dimension)
    if type(t) is Zero or out.dtype.kind not in "fc":
        return out, Zero(ShapedArray(out.shape, out.dtype))
    perm = bind(argsort_p, x, dimension=dimension)
    return out, take_along_axis(t, perm, dimension)


sort_p.impl = _sort_impl
sort_p.abstract_eval = _sort_abstract
jvp_rules[sort_p] = _sort_jvp
sort_p.unsupported["transpose"] = "sort is not linear (its derivative is a gather)"

# --------------------------------------------------------------------------- argsort

argsort_p = not_differentiable(Primitive("argsort"), "it returns integer indices")


def argsort(x, dimension=-1, is_stable=True):
    """The int64 permutation that sorts ``x`` along ``dimension`` (stable, NaNs last)."""
    return bind(argsort_p, x, dimension=_norm_dim(dimension, x.ndim, "argsort"))


def _argsort_impl(x, *, dimension):
    return np.argsort(x, axis=dimension, kind="stable").astype(np.int64)


def _argsort_abstract(x, *, dimension):
    _norm_dim(dimension, x.ndim, "argsort")
    return ShapedArray(x.shape, np.int64)


argsort_p.impl = _argsort_impl
argsort_p.abstract_eval = _argsort_abstract

# --------------------------------------------------------------------------- batching


def _sort_batch(prim):
    def rule(args, dims, *, dimension):
        (x,), (d,) = args, dims
        return bind(prim, x, dimension=dimension + (dimension >= d)), d
    batch_rules[prim] = rule
    return rule


_sort_batch(sort_p)
_sort_batch(argsort_p)

__all__ = ["sort", "argsort", "sort_p", "argsort_p"]


# --------------------------------------------------------------------------- Numba lowering
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


_nb_argsort_cache: dict = {}


def _nb_lane_dtype(dtype):
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
    fn = _nb_argsort_cache.get(name)
    if fn is None:
        import numba
        lt = numba.njit(_lt_complex if complex_ else _lt_real, cache=False)
        fn = _nb_argsort_cache[name] = numba.njit(_make_argsort(lt), cache=False)
    return ctx.helper(name, fn)


def _sort_lower_numba(kind):
    def rule(ctx, eqn):
        from ..backends.numba.codegen import dtype_name
        from .shape import _nb_array, _nb_empty, _nb_ix, _nb_serial
        (x,), (ov,) = eqn.invars, eqn.outvars
        dim = eqn.params["dimension"]
        shape = x.aval.shape
        ctx.emit(f"# {kind} {x.aval.str_short()} along axis {dim} (stable, NaNs last)")
        xn = _nb_array(ctx, x)
        out = _nb_empty(ctx, ov)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return
        n = shape[dim]
        lane = _nb_lane_dtype(x.aval.dtype)
        helper = _argsort_helper(ctx, lane)
        with ctx.nest(shape[:dim] + shape[dim + 1:]) as idx:
            pre, post = list(idx[:dim]), list(idx[dim:])
            buf, perm, j = ctx.fresh("buf"), ctx.fresh("perm"), ctx.fresh("j")
            ctx.emit(f"{buf} = np.empty({n}, {dtype_name(lane)})")
            with _nb_serial(ctx, j, n):
                ctx.emit(f"{buf}[{j}] = {xn}[{_nb_ix(pre + [j] + post)}]")
            ctx.emit(f"{perm} = {helper}({buf})")
            with _nb_serial(ctx, j, n):
                # Sorted values are read back from the operand (its dtype, exactly).
                val = (f"{xn}[{_nb_ix(pre + [f'{perm}[{j}]'] + post)}]" if kind == "sort"
                       else f"{perm}[{j}]")
                ctx.emit(f"{out}[{_nb_ix(pre + [j] + post)}] = {val}")
    return rule


sort_p.lower_numba = _sort_lower_numba("sort")
argsort_p.lower_numba = _sort_lower_numba("argsort")
