"""The Numba backend's executables, and the backend object (`base.Backend`).

`NumbaExecutable` is a compiled program: the generated kernels under the one
threading model (``threads.py``), with the programs Numba cannot compile (float16,
long double) run op by op on NumPy instead, and Numba's own errors turned into
zerax's.
"""

from __future__ import annotations

import os
import time

import numba
import numpy as np

from .... import errors
from ...base.compile_log import compiling
from ...base.dtypes import float0
from ...base.gc_pause import gc_paused
from ...core.core import run_impl
from ...ir.ir import ClosedJaxpr, Jaxpr, dce, eval_jaxpr
from ...ops.linalg import dot_general_p, product_work
from ..base import CPU
from ..cpu.executable import CpuExecutable, llvm_text
from ..lowering import Unlowerable, covers, format_steps, lower_steps
from . import native, threads
from .codegen import LoweringError
from .compile import compile_jaxpr, generate_source
from .compile import stats as compile_stats
from ..sizes import check_program


class NumbaExecutable:
    """A compiled program: ``run(*ndarrays) -> list of ndarrays``."""

    def __init__(self, jaxpr, name):
        self.jaxpr = jaxpr
        self.name = name
        self._compiled = True    # False until the first call has run Numba's compile
        self.out_avals = jaxpr.out_avals
        # float0 outputs (tangents of integer values) hold no data: they are made here,
        # and the kernel computes the others.
        self.float0_outs = [a.dtype == float0 for a in self.out_avals]
        if any(self.float0_outs):
            jaxpr = dce(Jaxpr(jaxpr.constvars, jaxpr.invars,
                              [v for v, z in zip(jaxpr.outvars, self.float0_outs) if not z],
                              jaxpr.eqns))
        check_program(jaxpr, f"jit of {name}")  # shapes int64 indexing or memory cannot hold
        if _uses_float16(jaxpr):
            # Numba has no float16 arithmetic on the CPU: such a program runs op by op
            # on NumPy's float16 (the eager implementations), not compiled.
            self.kernel = _op_by_op(jaxpr)
            self.source = ("# float16 values: run op by op with NumPy (Numba cannot "
                           "compile float16 arithmetic)\n")
            return
        start, loaded, built = time.perf_counter(), native.stats["loaded"], \
            compile_stats["compiled"]
        try:
            with gc_paused():
                kernel, self.source = compile_jaxpr(jaxpr)
        except LoweringError as e:
            where = f" (at {e.source})" if getattr(e, "source", None) else ""
            raise errors.NotSupportedError(
                f"jit of {name}: {e}{where}. Call the function without jit (or inside "
                "zerax.disable_jit()).") from None
        self.kernel = _threaded(kernel, jaxpr, self.source)
        # Numba compiles at the first call; a program loaded from the native cache does
        # not compile at all
        self._compiled = compile_stats["compiled"] == built or native.stats["loaded"] > loaded
        self._codegen_s = time.perf_counter() - start
        kernels = self.source.count("\ndef kernel")
        self._detail = (f"{len(jaxpr.eqns)} equations, {kernels} "
                        f"kernel{'s' if kernels != 1 else ''}")

    def run(self, *vals):
        if not self._compiled:
            with compiling(f"jit({self.name})", self._detail, elapsed=self._codegen_s):
                outs = self._run(vals)
            self._compiled = True
        else:
            outs = self._run(vals)
        if any(self.float0_outs):
            it = iter(outs)
            outs = [np.zeros(a.shape, a.dtype) if z else next(it)
                    for a, z in zip(self.out_avals, self.float0_outs)]
        return outs

    def _run(self, vals):
        try:
            return self.kernel(*vals)
        except Exception as e:  # numba typing errors must not reach the user raw
            if isinstance(e, (numba.core.errors.NumbaError,)):
                raise errors.ZeraxError(
                    f"the Numba backend failed to compile this program ({type(e).__name__}); "
                    "this is a zerax bug, please report it. First lines: "
                    f"{str(e).splitlines()[0] if str(e) else ''}") from None
            raise


def kernel_ir_enabled() -> bool:
    """Whether programs the kernel-IR lowering carries are compiled through it
    (``ZERAX_KERNEL_IR=0``: every program through the generated-source path, as
    before; for comparisons while the kernel IR grows)."""
    return os.environ.get("ZERAX_KERNEL_IR", "1").strip().lower() not in ("0", "false", "off")


def _threaded(kernel, jaxpr, source):
    """The kernel under the one threading model (backends/numba/threads.py): Numba's
    thread count where it has parallel loops, BLAS's around its matrix products."""
    work = max((product_work(e)[1] for e in _all_eqns(jaxpr)
                if e.primitive is dot_general_p), default=0)
    return threads.wrap_program(kernel, parallel="prange(" in source,
                                blas="_dot_general(" in source or "np.dot(" in source,
                                blas_work=work)


def _all_eqns(jaxpr):
    """The equations of ``jaxpr`` and of every sub-program, depth first."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.eqns:
            yield eqn
            for p in eqn.params.values():
                for sub in (p if isinstance(p, (list, tuple)) else [p]):
                    if isinstance(sub, ClosedJaxpr):
                        sub = sub.jaxpr
                    if isinstance(sub, Jaxpr):
                        stack.append(sub)


def _uses_float16(jaxpr) -> bool:
    """Whether any value of ``jaxpr`` or of its sub-programs is float16."""
    # float16, and long double (which Numba does not type either), run as eagerly.
    f16 = (np.dtype(np.float16), np.dtype(np.longdouble), np.dtype(np.clongdouble))
    for v in list(jaxpr.invars) + list(jaxpr.constvars) + list(jaxpr.outvars):
        if getattr(getattr(v, "aval", None), "dtype", None) in f16:
            return True
    for eqn in jaxpr.eqns:
        if any(getattr(v.aval, "dtype", None) in f16 for v in eqn.outvars):
            return True
        for p in eqn.params.values():
            for sub in (p if isinstance(p, (list, tuple)) else [p]):
                if isinstance(sub, ClosedJaxpr):
                    sub = sub.jaxpr
                if isinstance(sub, Jaxpr) and _uses_float16(sub):
                    return True
    return False


def _op_by_op(jaxpr):

    def run(*vals):
        return tuple(np.asarray(o) for o in eval_jaxpr(jaxpr, [], *vals))
    return run


class NumbaBackend:
    """The CPU backend: programs compiled by Numba; eager primitives run on NumPy."""

    name = "numba"
    platform = "cpu"

    buffer_types = ()    # its buffers are NumPy's, the host's

    def devices(self):
        return [CPU]

    def device_of(self, buffer):
        return CPU

    def put(self, value, device):
        return value

    def to_host(self, buffer):
        return buffer

    def compile(self, jaxpr, name: str, *, fast_math: bool = False):
        if kernel_ir_enabled() and covers(jaxpr) is None:
            try:
                return CpuExecutable(jaxpr, name, fast_math=fast_math,
                                     fallback=lambda: NumbaExecutable(jaxpr, name))
            except Unlowerable:      # a case the quick check could not see
                pass
        return NumbaExecutable(jaxpr, name)

    def source(self, jaxpr, dialect=None) -> str:
        if kernel_ir_enabled() and covers(jaxpr) is None:
            steps = lower_steps(jaxpr)
            return llvm_text(steps) if dialect == "llvm" else format_steps(steps)
        if dialect == "llvm":
            raise errors.NotSupportedError(
                "as_text(dialect='llvm'): this program is compiled by the older path "
                "(its generated source: as_text()), not by the kernel IR's LLVM emitter.")
        return generate_source(jaxpr)

    def apply(self, prim, buffers, params):
        # What the eager path (core.eval_primitive) does itself for NumPy buffers,
        # without asking: this backend's buffers are NumPy's.
        return run_impl(prim, buffers, params)

    def num_threads(self) -> int:
        return threads.num_threads()

    def set_num_threads(self, n) -> int:
        return threads.set_num_threads(n)


backend = NumbaBackend()
