"""The Numba lowering of ``dot_general`` (``ops/linalg.py``): BLAS calls or loop nests.

A large top-level floating-point product is a BLAS call from the Python glue between
the kernels (its ``host_rules`` entry); inside a kernel a product is a BLAS call when
large (`_lower_blas`), else a loop nest over the operands in place (`_ProductLoops`),
whose float64 form is made of register tiles (``microkernel.py``).
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ...ops.linalg import dot_general_p, free_dims, product_work
from .codegen import dtype_name
from .loops import is_invariant, output_buffer, prelude
from .microkernel import product_tile
from .rules import host_rules, lowering_rules


# Top-level floating-point products with at least this many multiply-adds are BLAS
# calls from Python, between the njit kernels (backends/numba/codegen.py).
BLAS_MIN_WORK = 64 ** 3

# Products inside kernels (loop bodies, mostly) with fewer multiply-adds than this are
# loop nests (see `_ProductLoops`); larger floating-point ones call BLAS.  The loop nest
# runs at about single-threaded BLAS speed on mid-size matrices, without a BLAS call's
# fixed cost and its thread pool, which dominate when a scan body makes hundreds of
# small products.  (Top-level products keep BLAS_MIN_WORK: in a kernel they would only
# add to Numba's compile time.)
KERNEL_BLAS_MIN_WORK = 128 ** 3

# Register blocking of the loop nest: one pass of the innermost loop updates _MU output
# rows with _KU contraction steps, so each output element is loaded and stored once per
# _KU multiply-adds and each operand row is read once for _MU output rows.  (2, 4)
# measured best on AVX2 for 32x128 @ 128x128 float64: ~12 GMAC/s, plain i-k-j ~3.5.
_MU, _KU = 2, 4
_BLOCK_MIN_WORK = 16 ** 3

# float64 products are tiles of _TILE_ROWS x _TILE_VECTORS vectors of _TILE_WIDTH held in
# vector registers over the whole contraction: 12 accumulators, 3 loads and 4 broadcasts
# per step fit AVX2's 16 registers; 22 GMAC/s on 96x128 @ 128x120 here, against ~11
# for the blocked loops above (which remain for other dtypes).
_TILE_ROWS, _TILE_VECTORS, _TILE_WIDTH = 4, 3, 4

# Top-level products with at least this many multiply-adds run their outer loop in
# parallel (prange); smaller ones are not worth waking the thread pool.
_PARALLEL_WORK = 1 << 20


def _dot_general_lower_numba(ctx, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    _, work = product_work(eqn)
    ctx.emit(f"# dot_general: {lhs.aval.str_short()} x {rhs.aval.str_short()} -> "
             f"{out.aval.str_short()}, {eqn.params['dimension_numbers']}")
    if np.dtype(out.aval.dtype).kind in "fc" and work >= KERNEL_BLAS_MIN_WORK:
        _lower_blas(ctx, eqn)
        return
    loops = _ProductLoops(ctx, eqn, work)
    acc = getattr(ctx, "accumulate", None)   # (c, v): the program's next use is v = c + out
    if acc is not None and loops.can_start_from():
        c, v = acc
        loops.start_from(ctx.name(c), v)
        ctx.accumulated = True
    loops.emit()


def _lower_blas(ctx, eqn):
    """Both operands as (batch, free, contract) / (batch, contract, free) C arrays, then
    one BLAS product (np.dot writing into the output) per batch element."""
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    lf, rf = free_dims(len(ls), lc, lb), free_dims(len(rs), rc, rb)
    size = lambda dims, shape: int(math.prod(shape[d] for d in dims))  # noqa: E731
    B, M, K, N = size(lb, ls), size(lf, ls), size(lc, ls), size(rf, rs)
    dt = dtype_name(out.aval.dtype)
    names = []
    for atom, perm, shape3 in ((lhs, tuple(lb) + lf + tuple(lc), (B, M, K)),
                               (rhs, tuple(rb) + tuple(rc) + rf, (B, K, N))):
        src = ctx.name(atom)
        if perm != tuple(range(len(perm))):
            src = f"np.transpose({src}, {perm!r})"
        # ascontiguousarray copies only what is not contiguous already, and astype
        # (which always copies in Numba) is used only when the dtype differs.
        src = f"np.ascontiguousarray({src}).reshape({shape3!r})"
        if np.dtype(atom.aval.dtype) != np.dtype(out.aval.dtype):
            src += f".astype({dt})"
        names.append(ctx.fresh("l" if not names else "r"))
        ctx.emit(f"{names[-1]} = {src}")
    acc, b = ctx.fresh("p"), ctx.fresh("b")
    ctx.emit(f"{acc} = np.empty(({B}, {M}, {N}), {dt})")
    with ctx.serial_loop(b, B):
        ctx.emit(f"np.dot({names[0]}[{b}], {names[1]}[{b}], {acc}[{b}])")
    name = ctx.out(out)
    ctx.emit(f"{name} = {acc}.reshape({tuple(out.aval.shape)!r})")


class _Operand:
    """An array in the generated code and the loop variable that indexes each axis."""

    def __init__(self, ctx, atom, axis_vars):
        self.axes = list(axis_vars)
        self.dtype = np.dtype(atom.aval.dtype)
        self.ref = ctx.ref(atom)
        self.text = ctx.scalar(atom) if not self.axes else ctx.name(atom)
        if self.axes and not self.text.isidentifier():   # e.g. a scan's xs[i]: once
            name = ctx.fresh("o")
            ctx.emit(f"{name} = {self.text}")
            self.text = name

    def at(self, subst=None):
        """Element text, with some loop variables replaced (``subst``: var -> text)."""
        if not self.axes:
            return self.text
        subst = subst or {}
        return f"{self.text}[{', '.join(subst.get(v, v) for v in self.axes)}]"


class _ProductLoops:
    """A dot_general as a loop nest over the operands in place (no transposed copies).

    Every batch, contracting and free axis gets a loop variable, so each operand is
    indexed through its own axes whatever the dimension numbers (the transposed
    layouts that the transpose rule produces included).  The innermost loop runs along
    the output's last axis, a free axis of one operand (the *streamed* one, ``S``):
    ``out[..., n] += t * S[..., n]`` with ``t`` a scalar of the other operand (``T``),
    which LLVM vectorises when ``n`` is also ``S``'s last (contiguous) axis.  When it
    is not, ``S`` is first copied into a (batch, contracting, free) buffer - once per
    kernel call when ``S`` is a kernel argument or a constant.  Unless tiny, the loops
    are register-blocked (`_MU`, `_KU`) in the order of the unblocked i-k-j loops, so
    each output element still sums its terms in order.  Products without a free axis
    to stream along are dot products (``s += l * r`` over the contracting axes)."""

    def __init__(self, ctx, eqn, work):
        self.ctx, self.eqn = ctx, eqn
        lhs, rhs = eqn.invars
        self.outvar = eqn.outvars[0]
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        ls, rs = lhs.aval.shape, rhs.aval.shape
        lf, rf = free_dims(len(ls), lc, lb), free_dims(len(rs), rc, rb)
        self.bv = [ctx.fresh("b") for _ in lb]
        self.kv = [ctx.fresh("k") for _ in lc]
        self.mv = [ctx.fresh("m") for _ in lf]
        self.nv = [ctx.fresh("n") for _ in rf]
        self.extent = {}
        for vs, dims in ((self.bv, lb), (self.kv, lc), (self.mv, lf)):
            self.extent.update((v, ls[d]) for v, d in zip(vs, dims))
        self.extent.update((v, rs[d]) for v, d in zip(self.nv, rf))

        def axis_vars(ndim, batch, contract, free, fv):
            role = {d: v for d, v in zip(batch, self.bv)}
            role.update(zip(contract, self.kv))
            role.update(zip(free, fv))
            return [role[d] for d in range(ndim)]

        self.lhs = _Operand(ctx, lhs, axis_vars(len(ls), lb, lc, lf, self.mv))
        self.rhs = _Operand(ctx, rhs, axis_vars(len(rs), rb, rc, rf, self.nv))
        self.dtype = np.dtype(self.outvar.aval.dtype)
        self.dt = dtype_name(self.dtype)
        self.work = work
        # Blocking only pays for products of some size; tiny ones stay one small loop
        # nest (Numba's compile time grows with the code).
        self.mu, self.ku = (_MU, _KU) if work >= _BLOCK_MIN_WORK else (1, 1)
        self._parallel = False
        self.init = None               # an array the sums start from (`start_from`)
        self.target = self.outvar      # the variable the result is bound to

    def _plan(self):
        """(S, T, sfree, tfree, pack, dots): the streamed operand and how the nest runs."""
        if self.nv:
            S, T, sfree, tfree = self.rhs, self.lhs, self.nv, self.mv
        elif self.mv:
            S, T, sfree, tfree = self.lhs, self.rhs, self.mv, []
        else:
            return None, None, None, None, False, True
        # Stream along the output's last axis unless it is too short, or unless S would
        # need a copy (as long as the product itself) and that copy is not hoisted.
        pack = S.axes[-1] != sfree[-1]
        dots = self.extent[sfree[-1]] < 4 or \
            (pack and math.prod(self.extent[v] for v in tfree) < 2
             and not self._invariant(S))
        return S, T, sfree, tfree, pack, dots

    def can_start_from(self) -> bool:
        """Whether the nest can compute ``c + product`` (`start_from`): it streams, with
        one contracting axis whose first pass starts the sums."""
        *_, dots = self._plan()
        return not dots and len(self.kv) == 1 and self.extent[self.kv[0]] > 0

    def start_from(self, init_text, var):
        """Compute ``var = init + product`` instead of the product: the first pass starts
        each sum from ``init``'s element (an array of the output's shape and dtype)
        instead of zero, so the product is never stored alone."""
        self.init, self.target = init_text, var

    # -- small pieces of text
    def _val(self, op, subst=None):
        """An operand's element, converted to the output dtype when it differs."""
        text = op.at(subst)
        return text if op.dtype == self.dtype else f"{self.dt}({text})"

    def _madd(self, acc, t, s):
        if self.dtype == np.bool_:
            return f"({acc} | ({t} & {s}))"
        return f"({acc} + {t} * {s})"

    def _mul(self, t, s):
        return f"({t} & {s})" if self.dtype == np.bool_ else f"{t} * {s}"

    def _loop(self, var, n, start=0):
        """``for var in range(start, n):`` - prange for the first loop of a large
        top-level product when its iterations write disjoint parts of the output."""
        ctx = self.ctx
        rng = "range"
        if self._parallel and n - start > 1:
            rng, ctx.uses_prange = "prange", True
        self._parallel = False
        ctx.emit(f"for {var} in {rng}({f'{start}, ' if start else ''}{n}):")
        ctx.level += 1

    def _close(self, count):
        self.ctx.level -= count

    # -- the nest
    def emit(self):
        ctx = self.ctx
        out_axes = self.bv + self.mv + self.nv
        S, T, sfree, tfree, pack, dots = self._plan()
        if dots:
            assert self.init is None
            self._emit_dots(out_axes)
            return
        if pack:
            S = self._pack(S, sfree)
        self.out = self._alloc_out()
        self.out_axes = out_axes
        if self._tiled(S, T, sfree, tfree):
            self._emit_tiles(S, T, sfree[0], tfree)
            ctx.bind_name(self.target, self.out)
            return
        # only a batch or row loop may run in parallel (not the zeroing or k loops)
        self._parallel = bool(self.bv or tfree) and ctx.level == 1 and \
            self.work >= _PARALLEL_WORK
        opened = 0
        for v in self.bv + tfree[:-1]:
            self._loop(v, self.extent[v])
            opened += 1
        if tfree:   # rows of the output in blocks
            m = tfree[-1]
            self._blocked(m, self.extent[m], self.mu,
                          lambda rows, first: self._rows(S, T, sfree, rows, m))
        else:
            self._rows(S, T, sfree, [None], None)
        self._close(opened)
        ctx.bind_name(self.target, self.out)

    # -- float64 products: register tiles (backends/numba/microkernel.py)
    def _tiled(self, S, T, sfree, tfree) -> bool:
        """Whether the nest is made of `product_tile` calls: float64 operands, one
        contracting and one streamed axis, at least one vector of output columns."""
        f64 = np.dtype(np.float64)
        return (self.dtype == f64 and T.dtype == f64 and S.dtype == f64
                and len(self.kv) == 1 and len(sfree) == 1 and bool(tfree)
                and self.extent[sfree[0]] >= _TILE_WIDTH and self.work >= _BLOCK_MIN_WORK)

    def _emit_tiles(self, S, T, n, tfree):
        """Column panels of _TILE_VECTORS vectors (a last narrower panel, then single
        columns), and in each the rows in blocks of _TILE_ROWS: a panel of S stays in
        the L1 cache while every block of rows uses it."""
        ctx = self.ctx
        (k,), m = self.kv, tfree[-1]
        M, K, N = self.extent[m], self.extent[k], self.extent[n]
        init = self.init
        if init is not None and not init.isidentifier():
            init = ctx.fresh("c")
            ctx.emit(f"{init} = {self.init}")
        opened = 0
        for v in self.bv + tfree[:-1]:
            self._loop(v, self.extent[v])
            opened += 1

        def index(axes, subst):
            items = [subst.get(v, v) for v in axes]
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"

        def call(rows, vectors):
            key = (rows, vectors, init is not None, (self.out_axes.index(m),
                   self.out_axes.index(n)), (S.axes.index(k), S.axes.index(n)),
                   (T.axes.index(m), T.axes.index(k)))
            name = ctx.helper("_tile_" + "_".join(
                str(x) for x in key).replace(" ", "").replace(",", "").replace("(", "")
                .replace(")", ""), product_tile(*key))
            args = [self.out, index(self.out_axes, {}), S.text, index(S.axes, {k: "0"}),
                    T.text, index(T.axes, {k: "0"}), str(K)]
            if init is not None:
                args += [init, index(self.out_axes, {})]
            ctx.emit(f"{name}({', '.join(args)})")

        def panel(vectors):
            """The rows of one panel of ``vectors`` vectors starting at column n."""
            self._blocked(m, M, _TILE_ROWS,
                          lambda rows, first: call(len(rows), vectors))

        width = _TILE_WIDTH * _TILE_VECTORS
        if N >= width:
            q = ctx.fresh("q")
            self._loop(q, N // width)
            ctx.emit(f"{n} = {width} * {q}")
            panel(_TILE_VECTORS)
            self._close(1)
        rest = (N % width) // _TILE_WIDTH
        if rest:
            ctx.emit(f"{n} = {N // width * width}")
            panel(rest)
        start = N - N % _TILE_WIDTH
        if start < N:   # the last columns, one by one
            self._loop(n, N, start)
            self._loop(m, M)
            s = ctx.fresh("s")
            ctx.emit(f"{s} = " + (f"{init}[{', '.join(self.out_axes)}]" if init is not None
                                  else "0.0"))
            self._loop(k, K)
            ctx.emit(f"{s} += {T.at()} * {S.at()}")
            self._close(1)
            ctx.emit(f"{self._out_at({})} = {s}")
            self._close(2)
        self._close(opened)

    def _blocked(self, var, n, size, body, peel=False):
        """``var`` over range(n): in blocks of ``size`` (``body(texts of the block's
        values, first)``), then one by one for the remainder.  With ``peel``, the first
        block (or value) is written out before the loops, with ``first`` true."""
        ctx = self.ctx
        main = n - n % size if size > 1 else 0
        start = 0
        if peel and n:
            ctx.emit(f"{var} = 0")
            width = size if main else 1
            body([var] + [f"{var} + {i}" for i in range(1, width)], True)
            start = width
        if main > start:
            q = ctx.fresh("q")
            self._loop(q, main // size, start // size)
            ctx.emit(f"{var} = {size} * {q}")
            body([var] + [f"{var} + {i}" for i in range(1, size)], False)
            self._close(1)
        if max(main, start) < n:
            self._loop(var, n, max(main, start))
            body([var], False)
            self._close(1)

    def _rows(self, S, T, sfree, rows, mvar):
        """The output rows ``rows`` (texts for the loop variable ``mvar``)."""
        ctx = self.ctx
        subs = [{mvar: r} if mvar is not None else {} for r in rows]
        if not self.kv:
            self._step(S, T, sfree, subs, None, [None], True)
            return
        k = self.kv[-1]
        if len(self.kv) == 1 and self.extent[k]:
            # the first contraction step starts the sums (no pass zeroing the rows)
            self._blocked(k, self.extent[k], self.ku,
                          lambda ks, first: self._step(S, T, sfree, subs, k, ks, first),
                          peel=True)
            return
        opened = 0   # zero the rows, then accumulate over all contracting axes
        for v in sfree:
            self._loop(v, self.extent[v])
            opened += 1
        for s in subs:
            ctx.emit(f"{self._out_at(s)} = {self.dt}(0)")
        self._close(opened)
        opened = 0
        for v in self.kv[:-1]:
            self._loop(v, self.extent[v])
            opened += 1
        self._blocked(k, self.extent[k], self.ku,
                      lambda ks, first: self._step(S, T, sfree, subs, k, ks, False))
        self._close(opened)

    def _step(self, S, T, sfree, subs, kvar, ks, first):
        """One pass: scalars of T for every (row, k), then the streamed loop adding
        their products to the output rows (``first``: starting them from zero)."""
        ctx = self.ctx
        ksubs = [{kvar: k} if kvar is not None else {} for k in ks]
        scal = []
        for s in subs:
            row = []
            for ksub in ksubs:
                t = ctx.fresh("t")
                ctx.emit(f"{t} = {self._val(T, {**s, **ksub})}")
                row.append(t)
            scal.append(row)
        opened = 0
        for v in sfree:
            self._loop(v, self.extent[v])
            opened += 1
        srow = []
        for ksub in ksubs:
            x = ctx.fresh("x")
            ctx.emit(f"{x} = {self._val(S, ksub)}")
            srow.append(x)
        for s, row in zip(subs, scal):
            target = self._out_at(s)
            if kvar is None:   # no contraction: one product per output element
                ctx.emit(f"{target} = {self._mul(row[0], srow[0])}")
                continue
            # 0 + t * x, not t * x: the same sum (and sign of zero) as zeroing first
            expr = target if not first else f"{self.dt}(0)" if self.init is None else \
                f"{self.init}[{', '.join(s.get(v, v) for v in self.out_axes)}]"
            for t, x in zip(row, srow):
                expr = self._madd(expr, t, x)
            ctx.emit(f"{target} = {expr}")
        self._close(opened)

    def _out_at(self, subst):
        if not self.out_axes:
            return f"{self.out}[()]"
        return f"{self.out}[{', '.join(subst.get(v, v) for v in self.out_axes)}]"

    def _alloc_out(self):
        return output_buffer(self.ctx, self.target)   # allocated once in loop bodies

    def _invariant(self, op):
        """Whether ``op`` is a kernel argument or a constant: it does not change during
        a kernel call, so what is computed from it alone can be hoisted."""
        kind, text = op.ref
        return kind == "array" and is_invariant(self.ctx, text)

    def _pack(self, S, sfree):
        """A C-contiguous copy of ``S`` with axes (batch, contracting, free), in the
        output dtype.  The copy of an invariant operand is made once, before the
        kernel's first line, and shared by the products that need it; in a loop body,
        another operand is copied into a buffer allocated once."""
        ctx = self.ctx
        order = [v for v in self.bv + self.kv + sfree if v in S.axes]
        shape = tuple(self.extent[v] for v in order)
        hoist = self._invariant(S)
        key = ("pack", S.ref[1], tuple(S.axes.index(v) for v in order), self.dt)
        name = ctx.hoisted.get(key) if hoist else None
        if name is None:
            name = ctx.fresh("s")
            with prelude(ctx) if hoist or ctx.level > 1 else contextlib.nullcontext():
                ctx.emit(f"{name} = np.empty({shape!r}, {self.dt})")
            with prelude(ctx) if hoist else contextlib.nullcontext(), \
                    ctx.nest(shape, parallel=False) as idx:
                subst = dict(zip(order, idx))
                ctx.emit(f"{name}[{', '.join(idx)}] = {self._val(S, subst)}")
            if hoist:
                ctx.hoisted[key] = name
        packed = _Operand.__new__(_Operand)
        packed.axes, packed.dtype, packed.ref, packed.text = \
            order, self.dtype, ("array", name), name
        return packed

    def _emit_dots(self, out_axes):
        """``out[i] = sum over k of l[i, k] * r[i, k]``, a scalar accumulator per
        output element (0-d outputs stay scalars)."""
        ctx = self.ctx
        scalar_out = not out_axes
        if not scalar_out:
            self.out, self.out_axes = self._alloc_out(), out_axes
        self._parallel = not scalar_out and ctx.level == 1 and self.work >= _PARALLEL_WORK
        opened = 0
        for v in out_axes:
            self._loop(v, self.extent[v])
            opened += 1
        s = ctx.fresh("s")
        ctx.emit(f"{s} = {self.dt}(0)")
        for v in self.kv:
            self._loop(v, self.extent[v])
        # converted back: integer products of narrow types come out as int64
        ctx.emit(f"{s} = {self.dt}({self._madd(s, self._val(self.lhs), self._val(self.rhs))})")
        self._close(len(self.kv))
        if scalar_out:
            ctx.bind_scalar(self.outvar, s)
            return
        ctx.emit(f"{self._out_at({})} = {s}")
        self._close(opened)
        ctx.bind_name(self.outvar, self.out)


def _dot_general_on_host(eqn) -> bool:
    """Large top-level floating-point products call BLAS from Python (np.matmul), between
    the kernels (codegen.py): the same library Numba's np.dot would call, without
    Numba's long compile of np.dot.  Small or batched-small ones are loops in kernels."""
    if np.dtype(eqn.outvars[0].aval.dtype).kind not in "fc":
        return False
    batch, work = product_work(eqn)
    return work >= BLAS_MIN_WORK and work // max(batch, 1) >= 16 ** 3


lowering_rules[dot_general_p] = _dot_general_lower_numba
host_rules[dot_general_p] = _dot_general_on_host
