"""Kernel-IR rule of ``dot_general`` (``ops/linalg.py``): a `kernel_ir.Call` of the
target's ``gemm`` for float products of some size, loops for small and integer ones.

The operands are read as (batch, M, K) and (batch, K, N) matrices, or their
transposes, when their dimensions already lie in one of those orders (no copy: the
common cases ``x @ w``, ``x @ w.T``, ``x.T @ g`` of a layer and its gradient);
otherwise they are copied into that order first.  The result's dimensions (batch,
lhs free, rhs free) are the (batch, M, N) of the call.  ``gemm(A, B, C)`` computes,
for each batch element, C = op(A) op(B) with op a transpose where ``trans_a``/
``trans_b`` say so (C's previous contents are ignored).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel_ir as K
from ...ops.linalg import dot_general_p, free_dims
from .context import Ctx
from .reduce import _unflatten
from .shape import _operand
from ...base.dtypes import kind as dtype_kind

# Multiply-adds below which a float product is computed by loops in the kernel (a
# call and BLAS's set-up would cost more than the work).
SMALL_PRODUCT = 4096

rules: dict = {}


def _matrix(ctx: Ctx, x, batch, free, contract, dtype):
    """(buffer viewed as (B, rows, cols), transposed?) for operand ``x`` read as
    (batch, free, contract) [not transposed] or (batch, contract, free) [transposed]."""
    shape = x.aval.shape
    nd = len(shape)
    size = lambda dims: math.prod(shape[d] for d in dims)   # noqa: E731
    b, f, c = size(batch), size(free), size(contract)
    src = ctx.buffer(x) if np.dtype(x.aval.dtype) == dtype else None
    if src is not None:
        if tuple(batch) + tuple(free) + tuple(contract) == tuple(range(nd)):
            return src.reshaped((b, f, c)), False
        if tuple(batch) + tuple(contract) + tuple(free) == tuple(range(nd)):
            return src.reshaped((b, c, f)), True
    # copy into (batch, free, contract) order, converting the dtype on the way
    perm = tuple(batch) + tuple(free) + tuple(contract)
    read = _operand(ctx, x)
    out_shape = tuple(shape[d] for d in perm)
    tmp = ctx.temp(out_shape, dtype)
    inverse = np.argsort(perm)
    with ctx.nest(out_shape) as idx:
        ctx.emit(K.Store(tmp, idx, K.cast(read(tuple(idx[int(inverse[d])] for d in range(nd))),
                                          dtype)))
    return tmp.reshaped((b, f, c)), False


def _dot_general(ctx: Ctx, eqn):
    lhs, rhs = eqn.invars
    (out,) = eqn.outvars
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    dtype = np.dtype(out.aval.dtype)
    lf = free_dims(len(lhs.aval.shape), lc, lb)
    rf = free_dims(len(rhs.aval.shape), rc, rb)
    ls, rs = lhs.aval.shape, rhs.aval.shape
    b = math.prod(ls[d] for d in lb)
    m = math.prod(ls[d] for d in lf)
    n = math.prod(rs[d] for d in rf)
    k = math.prod(ls[d] for d in lc)
    buf = ctx.new_buffer(out) if out.aval.shape != () else None
    if b * m * n == 0:
        return
    # bfloat16 products are summed in float32 and rounded once (the NumPy impl's rule)
    out_dtype, dtype = dtype, (np.dtype(np.float32) if dtype.kind == "V" else dtype)
    if dtype_kind(dtype) == "f" and b * m * n * k >= SMALL_PRODUCT and k > 0 and buf is not None:
        a, ta = _matrix(ctx, lhs, lb, lf, lc, dtype)
        bm, tb_free = _matrix(ctx, rhs, rb, rf, rc, dtype)
        whole = buf.reshaped((b, m, n))
        c = whole if out_dtype == dtype else ctx.temp((b, m, n), dtype)
        # rhs read as (batch, free=N, contract=K) is B transposed; as (batch, K, N) not
        ctx.emit(K.Call("gemm", (a, bm, c),
                        {"batch": b, "m": m, "n": n, "k": k, "trans_a": ta,
                         "trans_b": not tb_free}))
        if c is not whole:   # (bfloat16: rounded from the float32 product)
            with ctx.nest((b, m, n)) as idx:
                ctx.emit(K.Store(whole, idx, K.cast(K.Load(c, idx), out_dtype)))
        return
    # loops: out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n]
    read_l, read_r = _operand(ctx, lhs), _operand(ctx, rhs)
    kdims = tuple(ls[d] for d in lc)

    def value(bi, mi, ni, ki):
        li, ri = [None] * len(ls), [None] * len(rs)
        for dims_l, dims_r, vals in ((lb, rb, bi), (lc, rc, ki)):
            for dl, dr, v in zip(dims_l, dims_r, vals):
                li[dl], ri[dr] = v, v
        for d, v in zip(lf, mi):
            li[d] = v
        for d, v in zip(rf, ni):
            ri[d] = v
        x = K.cast(read_l(tuple(li)), dtype)
        y = K.cast(read_r(tuple(ri)), dtype)
        return K.op("mul", x, y)

    bshape = tuple(ls[d] for d in lb)
    mshape = tuple(ls[d] for d in lf)
    nshape = tuple(rs[d] for d in rf)
    with ctx.nest(bshape + mshape + nshape,
                  parallel=ctx.large(b * m * n * max(k, 1))) as idx:
        bi, mi, ni = idx[:len(bshape)], idx[len(bshape):len(bshape) + len(mshape)], \
            idx[len(bshape) + len(mshape):]
        acc = ctx.names.var("acc", dtype)
        ctx.emit(K.Declare(acc, K.Const(0, dtype)))
        r = ctx.names.var("r", K.I64)
        with ctx.capture() as body:
            v = value(bi, mi, ni, tuple(_unflatten(r, kdims)) if kdims else ())
        ctx.emit(K.Reduce(acc, "add" if dtype != np.bool_ else "or", r, k, body, v))
        result = K.cast(acc, out_dtype)
        if buf is None:
            ctx.bind_scalar(out, result)
        else:
            ctx.emit(K.Store(buf, idx, result))


rules[dot_general_p] = _dot_general
