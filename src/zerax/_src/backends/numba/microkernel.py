"""Register-tiled float64 product kernels for generated loops.

A product written as Numba loops (``lower_linalg.py``, `_ProductLoops`) streams each output
row through memory once per few contraction steps; LLVM does not keep a tile of the
output in vector registers across the whole contraction, which is what makes BLAS fast.
`product_tile` emits exactly that, as a Numba intrinsic written in LLVM IR:

    for k in range(K):                      # the whole contraction, in registers
        s_j = S[k, n0 + 4j : n0 + 4j + 4]   # `vectors` loads of 4 float64
        for i in range(rows):
            acc[i][j] = fma(broadcast(T[m0 + i, k]), s_j, acc[i][j])
    out[m0 + i, n0 + 4j : ...] = acc[i][j]

Each output element sums its terms in order of k (one rounding per term, by FMA), from
zero or from an ``init`` array (``c + a @ b``).  Arrays are passed whole with the index
of the tile's first element; which axis of each array is m, k or n is fixed per kernel.
Rows along n are loaded as vectors when Numba knows the array is C-contiguous (its last
axis is n), and element by element otherwise.
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)
_VEC = ir.VectorType(_F64, 4)
_WIDTH = 4                       # float64 lanes of one AVX2 register


class Strided:
    """An array argument: its data pointer at the tile's origin (i8*) and its byte
    strides (i64 values); ``contiguous_last``: its last axis has unit stride, so rows
    along it load as vectors."""

    def __init__(self, builder, origin, strides, contiguous_last):
        self.b, self.origin, self.strides = builder, origin, strides
        self.contiguous_last = contiguous_last

    @classmethod
    def of_numba(cls, context, builder, arr_ty, arr, idx_ty, idx):
        """From a Numba array value and the index tuple of the tile's first element."""
        ary = context.make_array(arr_ty)(context, builder, arr)
        strides = cgutils.unpack_tuple(builder, ary.strides, arr_ty.ndim)
        index = [context.cast(builder, v, t, types.intp)
                 for v, t in zip(cgutils.unpack_tuple(builder, idx, len(idx_ty)), idx_ty)]
        return cls(builder, offset_pointer(builder, ary.data, index, strides), strides,
                   arr_ty.layout == "C")

    def address(self, steps):
        """i8* of the element ``origin + sum(count * stride[axis])``; steps:
        [(axis, count)], count an int or an i64 value."""
        offset = ir.Constant(_I64, 0)
        for axis, count in steps:
            c = count if isinstance(count, ir.Value) else ir.Constant(_I64, count)
            offset = self.b.add(offset, self.b.mul(c, self.strides[axis]))
        return self.b.gep(self.origin, [offset])

    def load(self, steps):
        ptr = self.b.bitcast(self.address(steps), _F64.as_pointer())
        return self.b.load(ptr, align=8)

    def load_row(self, steps, n_axis):
        """4 consecutive elements along ``n_axis`` from ``steps``, as a vector."""
        if self.contiguous_last:
            ptr = self.b.bitcast(self.address(steps), _VEC.as_pointer())
            return self.b.load(ptr, align=8)
        vec = ir.Constant(_VEC, None)
        for lane in range(_WIDTH):
            vec = self.b.insert_element(vec, self.load(steps + [(n_axis, lane)]),
                                        ir.Constant(ir.IntType(32), lane))
        return vec

    def store_row(self, vec, steps, n_axis):
        if self.contiguous_last:
            ptr = self.b.bitcast(self.address(steps), _VEC.as_pointer())
            self.b.store(vec, ptr, align=8)
            return
        for lane in range(_WIDTH):
            ptr = self.b.bitcast(self.address(steps + [(n_axis, lane)]), _F64.as_pointer())
            self.b.store(self.b.extract_element(vec, ir.Constant(ir.IntType(32), lane)),
                         ptr, align=8)


def offset_pointer(builder, data, index, strides):
    """i8* of ``data`` advanced by ``sum(index[i] * strides[i])`` bytes (i64 values)."""
    offset = ir.Constant(_I64, 0)
    for i, st in zip(index, strides):
        offset = builder.add(offset, builder.mul(i, st))
    return builder.gep(builder.bitcast(data, ir.IntType(8).as_pointer()), [offset])


def keep_rolled(latch):
    """Mark the loop whose back edge is the branch ``latch`` not to be unrolled.  A tile
    is already unrolled by hand (rows x vectors accumulators); unrolling its k loop, or
    the loops over tiles, multiplied a Newton-CG kernel's code by three and its LLVM
    time by two and a half (issue 20), for no measured speed."""
    module = latch.parent.parent.module
    option = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    # A loop's ID is a node whose first operand is itself, one per loop (the unique
    # string keeps llvmlite from sharing one node between loops).
    loop_id = module.add_metadata([option, ir.MetaDataString(
        module, f"zerax.loop.{len(module.metadata)}")])
    loop_id.operands = (loop_id, option)
    latch.set_metadata("llvm.loop", loop_id)


def _declare(module, name, fnty):
    try:
        return module.get_global(name)
    except KeyError:
        return ir.Function(module, fnty, name)


@functools.cache
def product_tile(rows, vectors, from_init, out_axes, s_axes, t_axes):
    """An intrinsic ``tile(out, out_index, s, s_index, t, t_index, k_count[, init,
    init_index])`` computing ``rows`` x ``4 * vectors`` output elements (see the
    module docstring).  ``out_axes`` = (m axis, n axis) of out (and of init),
    ``s_axes`` = (k axis, n axis) of S, ``t_axes`` = (m axis, k axis) of T; the index
    tuples give each array's element at the tile's first m, n and k (k = 0)."""
    params = (rows, vectors, from_init, out_axes, s_axes, t_axes)

    def codegen(context, builder, sig, args):
        arrays = [Strided.of_numba(context, builder, sig.args[i], args[i], sig.args[i + 1],
                                    args[i + 1]) for i in (0, 2, 4)]
        if from_init:
            arrays.append(Strided.of_numba(context, builder, sig.args[7], args[7],
                                            sig.args[8], args[8]))
        emit_tile(builder, params, *arrays[:3], context.cast(builder, args[6], sig.args[6],
                                                             types.int64), *arrays[3:])
        return context.get_dummy_value()

    def float64_array(ty):
        return isinstance(ty, types.Array) and ty.dtype == types.float64

    def typed(out, out_index, s, s_index, t, t_index, k_count, *init):
        if not all(float64_array(a) for a in (out, s, t) + init[:1]):
            return None
        return types.void(out, out_index, s, s_index, t, t_index, k_count, *init), codegen

    if from_init:
        @intrinsic
        def tile(typingctx, out, out_index, s, s_index, t, t_index, k_count, init,
                 init_index):
            return typed(out, out_index, s, s_index, t, t_index, k_count, init, init_index)
    else:
        @intrinsic
        def tile(typingctx, out, out_index, s, s_index, t, t_index, k_count):
            return typed(out, out_index, s, s_index, t, t_index, k_count)
    tile.tile_params = params   # what `direct` needs to emit the same code without Numba
    return tile


def emit_tile(b, params, out, s, t, k_count, init=None):
    """The tile's code at ``b``'s position: ``params`` as `product_tile`'s arguments,
    the arrays as `Strided` (``init`` when ``from_init``), ``k_count`` an i64 value."""
    rows, vectors, from_init, (om, on), (sk, sn), (tm, tk) = params
    fma = _declare(b.module, "llvm.fma.v4f64", ir.FunctionType(_VEC, [_VEC] * 3))
    if from_init:
        start = [[init.load_row([(om, i), (on, _WIDTH * j)], on) for j in range(vectors)]
                 for i in range(rows)]
    else:
        zero = ir.Constant(_VEC, [0.0] * _WIDTH)
        start = [[zero] * vectors for _ in range(rows)]
    entry = b.block
    header = b.append_basic_block("tile.k")
    body = b.append_basic_block("tile.body")
    done = b.append_basic_block("tile.done")
    b.branch(header)
    b.position_at_end(header)
    k = b.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), entry)
    acc = [[b.phi(_VEC) for _ in range(vectors)] for _ in range(rows)]
    for i in range(rows):
        for j in range(vectors):
            acc[i][j].add_incoming(start[i][j], entry)
    b.cbranch(b.icmp_signed("<", k, k_count), body, done)
    b.position_at_end(body)
    srow = [s.load_row([(sk, k), (sn, _WIDTH * j)], sn) for j in range(vectors)]
    for i in range(rows):
        scalar = t.load([(tm, i), (tk, k)])
        splat = b.insert_element(ir.Constant(_VEC, None), scalar,
                                 ir.Constant(ir.IntType(32), 0))
        splat = b.shuffle_vector(splat, ir.Constant(_VEC, None),
                                 ir.Constant(ir.VectorType(ir.IntType(32), _WIDTH),
                                             [0] * _WIDTH))
        for j in range(vectors):
            acc[i][j].add_incoming(b.call(fma, [splat, srow[j], acc[i][j]]), b.block)
    k.add_incoming(b.add(k, ir.Constant(_I64, 1)), b.block)
    keep_rolled(b.branch(header))
    b.position_at_end(done)
    for i in range(rows):
        for j in range(vectors):
            out.store_row(acc[i][j], [(om, i), (on, _WIDTH * j)], on)
