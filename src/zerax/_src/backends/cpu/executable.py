"""A program compiled through the kernel IR for the CPU (`base.Executable`).

``run(*inputs)`` allocates the outputs (large ones on 64-byte boundaries: OpenBLAS
ran products reading 16-byte-aligned arrays ~30% slower), calls the kernel's machine
code on the inputs and outputs, and returns the outputs.  Inputs must be C-contiguous
arrays of the program's dtypes and shapes (``api/jit.py`` guarantees it).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...base.compile_log import compiling
from ...base.dtypes import float0
from ...base.gc_pause import gc_paused
from ...ir.ir import Jaxpr, dce
from .. import kernel_ir as K
from ..lowering import lower_program
from ..sizes import check_program
from . import compile as cpu_compile


def aligned_empty(shape, dtype):
    """A new C-contiguous array; 4 KiB or more start on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = math.prod(shape) * dtype.itemsize
    if n < 4096:
        return np.empty(shape, dtype)
    raw = np.empty(n + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + n].view(dtype).reshape(shape)


class CpuExecutable:
    """A program lowered to one kernel (`lowering.lower_program`) and compiled by the
    CPU emitter; raises `lowering.Unlowerable` when the lowering does not carry it."""

    def __init__(self, jaxpr, name, *, fast_math=False):
        self.jaxpr, self.name = jaxpr, name
        self.out_avals = jaxpr.out_avals
        self.float0_outs = [a.dtype == float0 for a in self.out_avals]
        if any(self.float0_outs):
            jaxpr = dce(Jaxpr(jaxpr.constvars, jaxpr.invars,
                              [v for v, z in zip(jaxpr.outvars, self.float0_outs) if not z],
                              jaxpr.eqns))
        check_program(jaxpr, f"jit of {name}")  # shapes int64 indexing or memory cannot hold
        start = time.perf_counter()
        with gc_paused():
            self.kernel_ir = lower_program(jaxpr, "kernel")
        self.source = K.format_kernel(self.kernel_ir)
        self._lowered_s = time.perf_counter() - start
        self._fast_math = fast_math
        self._loaded = None
        self.kernel = self._first_call

    def _first_call(self, *vals):
        """Compile (or load) at the first call, as the compile log reports it."""
        if self._loaded is None:
            fm = self._fast_math
            self._loaded = cpu_compile.find(self.kernel_ir, fast_math=fm)
            if self._loaded is None:     # LLVM compiles it: the compile log says so
                with compiling(f"jit({self.name})",
                               f"{len(self.jaxpr.eqns)} equations, 1 kernel",
                               elapsed=self._lowered_s), gc_paused():
                    self._loaded = cpu_compile.load_kernel(self.kernel_ir, fast_math=fm)
            self.kernel = self._make_call()
        return self.kernel(*vals)

    def _make_call(self):
        fn = self._loaded.fn
        outs = [(tuple(b.shape), b.dtype) for b in self.kernel_ir.outputs]
        if len(outs) == 1:
            (shape, dtype), = outs
            small = math.prod(shape) * dtype.itemsize < 4096

            def call1(*vals):
                o = np.empty(shape, dtype) if small else aligned_empty(shape, dtype)
                fn(*vals, o)
                return (o,)
            call = call1
        else:
            def call(*vals):
                os_ = [aligned_empty(s, d) for s, d in outs]
                fn(*vals, *os_)
                return os_
        return call

    def run(self, *vals):
        outs = self.kernel(*vals)
        if any(self.float0_outs):
            it = iter(outs)
            outs = [np.zeros(a.shape, a.dtype) if z else next(it)
                    for a, z in zip(self.out_avals, self.float0_outs)]
        return list(outs)
