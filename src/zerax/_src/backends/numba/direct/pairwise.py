"""The LLVM function of NumPy's pairwise summation (``_zx_pairwise_sum`` of a kernel),
so that a direct kernel's sums round as NumPy's and Numba's kernels'."""

from __future__ import annotations

from llvmlite import ir

from .values import _I64, _reg_type


def _pairwise_function(module, dt):
    """``T pairwise(T *p, i64 n)``: NumPy's pairwise summation of ``p[0:n]``, as
    ``lower_reduce._pairwise_sum_py`` computes it (blocks of at most 128 summed with 8
    accumulators, longer runs split in halves rounded down to a multiple of 8, left plus
    right), so that sums round as NumPy's; n >= 1."""
    name = f"zerax.pairwise.{dt.name}"
    try:
        return module.get_global(name)
    except KeyError:
        pass
    ty = _reg_type(dt)
    fnty = ir.FunctionType(ty, [ty.as_pointer(), _I64])
    block = ir.Function(module, fnty, f"zerax.pairwise_block.{dt.name}")
    block.linkage = "internal"
    _emit_pairwise_block(block, ty)
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    p, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    leaf, split = fn.append_basic_block("leaf"), fn.append_basic_block("split")
    b.cbranch(b.icmp_signed("<=", n, ir.Constant(_I64, 128)), leaf, split)
    b.position_at_end(leaf)
    b.ret(b.call(block, [p, n]))
    b.position_at_end(split)
    half = b.sdiv(n, ir.Constant(_I64, 2))
    half = b.sub(half, b.srem(half, ir.Constant(_I64, 8)))
    left = b.call(fn, [p, half])
    right = b.call(fn, [b.gep(p, [half]), b.sub(n, half)])
    b.ret(b.fadd(left, right))
    return fn


def _emit_pairwise_block(fn, ty):
    p, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one, eight = (ir.Constant(_I64, v) for v in (0, 1, 8))

    def load(i):
        return b.load(b.gep(p, [i], inbounds=True))

    def sequential(res, start):
        """res + p[start] + ... + p[n-1], in order (a loop)."""
        pre = b.block
        head = fn.append_basic_block("seq.head")
        body = fn.append_basic_block("seq.body")
        done = fn.append_basic_block("seq.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64)
        acc = b.phi(ty)
        i.add_incoming(start, pre)
        acc.add_incoming(res, pre)
        b.cbranch(b.icmp_signed("<", i, n), body, done)
        b.position_at_end(body)
        acc.add_incoming(b.fadd(acc, load(i)), body)
        i.add_incoming(b.add(i, one), body)
        b.branch(head)
        b.position_at_end(done)
        return acc

    short, long_ = fn.append_basic_block("short"), fn.append_basic_block("long")
    b.cbranch(b.icmp_signed("<", n, eight), short, long_)
    b.position_at_end(short)
    b.ret(sequential(load(zero), one))
    b.position_at_end(long_)
    first = [load(ir.Constant(_I64, k)) for k in range(8)]
    stop = b.sub(n, b.srem(n, eight))
    pre = b.block
    head = fn.append_basic_block("acc.head")
    body = fn.append_basic_block("acc.body")
    done = fn.append_basic_block("acc.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64)
    i.add_incoming(eight, pre)
    accs = []
    for r in first:
        phi = b.phi(ty)
        phi.add_incoming(r, pre)
        accs.append(phi)
    b.cbranch(b.icmp_signed("<", i, stop), body, done)
    b.position_at_end(body)
    for k, phi in enumerate(accs):
        phi.add_incoming(b.fadd(phi, load(b.add(i, ir.Constant(_I64, k)))), body)
    i.add_incoming(b.add(i, eight), body)
    b.branch(head)
    b.position_at_end(done)
    r = accs
    res = b.fadd(b.fadd(b.fadd(r[0], r[1]), b.fadd(r[2], r[3])),
                 b.fadd(b.fadd(r[4], r[5]), b.fadd(r[6], r[7])))
    b.ret(sequential(res, stop))
