"""Fused multiply-add on NumPy arrays: ``a * b + c`` rounded once, as the CPU's FMA
instruction (IEEE 754's fusedMultiplyAdd).

NumPy has no fma, and Python's ``math.fma`` arrived in 3.13; an exact one cannot be
built from NumPy's twice-rounded operations.  This module compiles the loop once per
process and dtype with llvmlite (a run-time dependency already): LLVM's ``llvm.fma``
intrinsic, which is the hardware instruction where the CPU has one and a correctly
rounded libm ``fma`` otherwise.  It is the implementation of ``ops``' ``fma_p``, which
the random samplers use where JAX's compiled code (XLA) fuses a multiply and an add.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

_lock = threading.Lock()
_fns: dict = {}
_engine: list = []


def _compiled(dtype):
    fn = _fns.get(dtype)
    if fn is not None:
        return fn
    with _lock:
        fn = _fns.get(dtype)
        if fn is None:
            fn = _fns[dtype] = _build(dtype)
    return fn


def _build(dtype):
    import llvmlite.binding as ll
    from llvmlite import ir
    ty = ir.DoubleType() if dtype == np.float64 else ir.FloatType()
    i64 = ir.IntType(64)
    name = f"zerax_fma_{dtype.name}"
    m = ir.Module(name=name)
    m.triple = ll.get_process_triple()
    p = ty.as_pointer()
    f = ir.Function(m, ir.FunctionType(ir.VoidType(), [p, p, p, p, i64]), name)
    a, b, c, out, n = f.args
    entry, head, body, done = (f.append_basic_block(s) for s in ("e", "h", "b", "d"))
    bld = ir.IRBuilder(entry)
    bld.branch(head)
    bld.position_at_end(head)
    i = bld.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    bld.cbranch(bld.icmp_signed("<", i, n), body, done)
    bld.position_at_end(body)
    fma = m.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
    vals = [bld.load(bld.gep(x, [i])) for x in (a, b, c)]
    bld.store(bld.call(fma, vals), bld.gep(out, [i]))
    i.add_incoming(bld.add(i, ir.Constant(i64, 1)), body)
    bld.branch(head)
    bld.position_at_end(done)
    bld.ret_void()
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    target = ll.Target.from_triple(ll.get_process_triple())
    tm = target.create_target_machine(cpu=ll.get_host_cpu_name(),
                                      features=ll.get_host_cpu_features().flatten(), opt=2)
    mod = ll.parse_assembly(str(m))
    mod.verify()
    engine = ll.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _engine.append(engine)        # keeps the machine code alive
    ptr = ctypes.POINTER(ctypes.c_double if dtype == np.float64 else ctypes.c_float)
    return ctypes.CFUNCTYPE(None, ptr, ptr, ptr, ptr, ctypes.c_int64)(
        engine.get_function_address(name))


def fma(a, b, c):
    """``a * b + c`` with one rounding, elementwise (broadcasting), for float32 and
    float64 arrays of one dtype (float16: the exact result is a float64, rounded once).

    >>> import numpy as np
    >>> x = np.array([1.0 + 2.0 ** -30])
    >>> float(fma(x, x, -np.ones(1))[0]) == 2.0 ** -29 + 2.0 ** -60
    True
    """
    a, b, c = np.broadcast_arrays(*(np.asarray(v) for v in (a, b, c)))
    dtype = np.dtype(a.dtype)
    if dtype == np.float16:       # a*b + c of halves is exact in float64
        return (a.astype(np.float64) * b + c.astype(np.float64)).astype(np.float16)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"fma of {dtype.name} values")
    shape = a.shape
    a, b, c = (np.ascontiguousarray(v, dtype).reshape(-1) for v in (a, b, c))
    out = np.empty(a.size, dtype)
    ptr = ctypes.POINTER(ctypes.c_double if dtype == np.float64 else ctypes.c_float)
    _compiled(dtype)(a.ctypes.data_as(ptr), b.ctypes.data_as(ptr), c.ctypes.data_as(ptr),
                     out.ctypes.data_as(ptr), a.size)
    return out.reshape(shape)
