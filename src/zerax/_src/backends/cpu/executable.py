"""A program compiled through the kernel IR for the CPU (`base.Executable`).

``run(*inputs)`` runs its steps: for a kernel, allocates the outputs (large ones on
64-byte boundaries: OpenBLAS ran products reading 16-byte-aligned arrays ~30% slower)
and calls the kernel's machine code on the inputs and outputs; for a host step, calls
the primitive's NumPy implementation.  A kernel's host calls (`kernel_ir.HostCall`) call
back `_host_function`, which runs their equations' implementations on the kernel's
buffers.  Inputs must be C-contiguous
arrays of the program's dtypes and shapes (``api/jit.py`` guarantees it).
"""

from __future__ import annotations

import ctypes
import math
import time

import numpy as np

from .... import errors
from ...base.compile_log import compiling
from ...base.dtypes import float0
from ...base.gc_pause import gc_paused
from ...core.core import run_impl
from ...ir.ir import Jaxpr, Var, dce, effectful_primitives
from ...ops.linalg import dot_general_p, product_work
from ..lowering import Unlowerable, format_steps, lower_steps
from ..lowering.host import WRITES_INTO
from ..sizes import check_program
from . import blas, engine, threads
from . import compile as cpu_compile
from .emit import Emitter


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
    """A program lowered to kernels and host steps (`lowering.lower_steps`) and
    compiled by the CPU emitter; raises `lowering.Unlowerable` when the lowering does
    not carry it."""

    def __init__(self, jaxpr, name, *, fast_math=False, fallback=None):
        self.jaxpr, self.name = jaxpr, name
        self._fallback = fallback   # () -> another executable of the program
        self.out_avals = jaxpr.out_avals
        self.float0_outs = [a.dtype == float0 for a in self.out_avals]
        if any(self.float0_outs):
            jaxpr = dce(Jaxpr(jaxpr.constvars, jaxpr.invars,
                              [v for v, z in zip(jaxpr.outvars, self.float0_outs) if not z],
                              jaxpr.eqns))
        check_program(jaxpr, f"jit of {name}")  # shapes int64 indexing or memory cannot hold
        start = time.perf_counter()
        try:
            with gc_paused():
                self.steps = lower_steps(jaxpr)
        except (Unlowerable, errors.ZeraxError):
            raise
        except Exception as e:  # noqa: BLE001 - a broken invariant of the lowering
            raise _internal(name, "lowering it", e) from e
        self._jaxpr = jaxpr
        self.source = format_steps(self.steps)
        self._lowered_s = time.perf_counter() - start
        self._fast_math = fast_math
        self._blas_work = max((product_work(e)[1] for e in jaxpr.eqns
                               if e.primitive is dot_general_p), default=0)
        self.kernel = self._first_call

    def _first_call(self, *vals):
        """Compile (or load) the kernels at the first call, as the compile log reports."""
        fm = self._fast_math
        kernels = [s.kernel for s in self.steps if s.kernel is not None]
        try:
            loaded = [cpu_compile.find(k, fast_math=fm) for k in kernels]
            if any(x is None for x in loaded):     # LLVM compiles: the compile log says so
                n = len(kernels)
                with compiling(f"jit({self.name})",
                               f"{len(self.jaxpr.eqns)} equations, {n} kernel{'s' * (n != 1)}",
                               elapsed=self._lowered_s), gc_paused():
                    loaded = [x or cpu_compile.load_kernel(k, fast_math=fm)
                              for x, k in zip(loaded, kernels)]
        except engine.MissingSymbols:
            if self._fallback is None:
                raise
            # machine code this process cannot link (a CPU without an instruction LLVM
            # then calls a runtime library for): the program compiled another way
            other = self._fallback()
            self.kernel, self.source = other.kernel, other.source
            return other.kernel(*vals)
        except errors.ZeraxError:
            raise
        except Exception as e:  # noqa: BLE001 - LLVM's or the emitter's: never raw
            raise _internal(self.name, "compiling it", e) from e
        calls = iter([_kernel_call(x, k) for x, k in zip(loaded, kernels)])
        call = self._program(calls)
        if any(x.blas for x in loaded):
            call = blas.limited(call, self._blas_work, threads.setting)
        self.kernel = call
        return call(*vals)

    def _program(self, calls):
        """The call of the whole program: its one kernel, or the steps in order."""
        jaxpr = self._jaxpr
        invars = list(jaxpr.constvars) + list(jaxpr.invars)
        if len(self.steps) == 1 and self.steps[0].kernel is not None and \
                self.steps[0].ins == invars and self.steps[0].outs == list(jaxpr.outvars):
            return next(calls)
        plan = []
        for s in self.steps:
            plan.append((next(calls) if s.kernel is not None else _host_call(s.eqn),
                         [v if type(v) is Var else np.asarray(v.val) for v in s.ins],
                         s.outs))
        outvars = [v if type(v) is Var else np.asarray(v.val) for v in jaxpr.outvars]
        inputs = set(invars)

        def run(*vals):
            env = dict(zip(invars, vals))
            for fn, ins, outs in plan:
                results = fn(*[env[v] if type(v) is Var else v for v in ins])
                env.update(zip(outs, results))
            # an input returned as it is: a copy (never the caller's own buffer)
            return [np.array(env[v]) if type(v) is Var and v in inputs else
                    env[v] if type(v) is Var else np.array(v) for v in outvars]
        return run

    def run(self, *vals):
        outs = self.kernel(*vals)
        if any(self.float0_outs):
            it = iter(outs)
            outs = [np.zeros(a.shape, a.dtype) if z else next(it)
                    for a, z in zip(self.out_avals, self.float0_outs)]
        return list(outs)


def _kernel_call(loaded, kernel):
    """``call(*inputs) -> outputs``: the outputs allocated, the machine code called."""
    fn = loaded.bound(_host_function(kernel)) if kernel.host_calls else loaded.fn
    outs = [(tuple(b.shape), b.dtype) for b in kernel.outputs]
    if len(outs) == 1:
        (shape, dtype), = outs
        small = math.prod(shape) * dtype.itemsize < 4096

        def call1(*vals):
            o = np.empty(shape, dtype) if small else aligned_empty(shape, dtype)
            fn(*vals, o)
            return (o,)
        return call1

    def call(*vals):
        os_ = [aligned_empty(s, d) for s, d in outs]
        fn(*vals, *os_)
        return os_
    return call


def _internal(name, doing, e) -> errors.ZeraxInternalError:
    """A failure of zerax's own compiler, for the user: which jit, and that it is a
    bug to report (the original exception is the cause)."""
    return errors.ZeraxInternalError(
        f"jit of {name}: the CPU compiler failed {doing} ({type(e).__name__}: {e}); this is "
        "a zerax bug, please report it. Meanwhile the function runs without jit (or inside "
        "zerax.disable_jit()).")


def _host_call(eqn):
    """A host step: the primitive's NumPy implementation (a list of results)."""
    impl, params = _user_code_guard(eqn.primitive, eqn.primitive.impl), dict(eqn.params)
    multiple = eqn.primitive.multiple_results

    def call(*args):
        out = impl(*[_c_order(a) for a in args], **params)
        return [_c_order(o) for o in out] if multiple else [_c_order(out)]
    return call


def _user_code_guard(prim, run):
    """``run``, or for a primitive that calls the user's code (an effectful one: a
    debug callback) ``run`` whose exception becomes a `JaxRuntimeError` naming it, as
    JAX reports a callback that raised inside a compiled program."""
    if prim not in effectful_primitives:
        return run

    def guarded(*args, **params):
        try:
            return run(*args, **params)
        except Exception as e:  # noqa: BLE001 - the user's code: anything it raises
            cause = e.__cause__ if isinstance(e, errors.ZeraxError) and e.__cause__ else e
            fn = params.get("callback")
            name = getattr(fn, "__name__", None) or type(fn).__name__
            raise errors.JaxRuntimeError(
                f"the host callback {name} ({prim.name}) raised "
                f"{type(cause).__name__}: {cause} while a compiled program ran; the "
                "program stopped there (its exception is this one's __cause__)") from cause
    return guarded


def _host_function(kernel):
    """``host(k, address)``, what the kernel's host call ``k`` calls (the GIL held):
    ``address`` holds the data pointers of the call's input and output buffers (int64
    each), which it wraps as NumPy arrays of their shapes and dtypes (the inputs
    read-only), runs the equation's implementation as eager evaluation does
    (`core.run_impl`: jit equals eager bit for bit) and writes the results into the
    outputs.  An exception propagates: the kernel stops, and the jitted call raises it."""
    calls = [_one_host_call(s) for s in kernel.host_calls]

    def host(k, address):
        calls[k](address)
    return host


def _one_host_call(stmt):
    if stmt.role != "eqn":      # a half of the sums in shared memory: "bind", "exchange"
        return getattr(stmt.layout, stmt.role)
    prim, params = stmt.eqn.primitive, dict(stmt.eqn.params)
    multiple = prim.multiple_results
    into = WRITES_INTO.get(prim)
    run = _user_code_guard(prim, lambda *a, **p: run_impl(prim, a, p))
    specs = [(b.shape, b.dtype.str, True) for b in stmt.ins] + \
        [(b.shape, b.dtype.str, False) for b in stmt.outs]
    dtypes = [b.dtype for b in stmt.ins] + [b.dtype for b in stmt.outs]
    n_in, n = len(stmt.ins), len(specs)
    pointers = ctypes.c_int64 * max(n, 1)
    # the pointers and arrays of the previous call: a loop's steps mostly call with the
    # same buffers (one tuple, read and replaced whole: threads may share the kernel)
    last = [((), ())]

    def call(address):
        ptrs = pointers.from_address(address)[:n]
        seen, arrays = last[0]
        if seen != ptrs:
            arrays = [_typed(np.asarray(_Memory(p, spec)), d)
                      for p, spec, d in zip(ptrs, specs, dtypes)]
            last[0] = ptrs, arrays
        outs = arrays[n_in:]
        if into is not None:
            results = into(outs, arrays[:n_in], **params)
        else:
            results = run(*arrays[:n_in], **params)
            results = results if multiple else (results,)
        if len(results) != len(outs):
            raise errors.ZeraxError(f"{prim.name}'s implementation gave {len(results)} "
                                    f"results for {len(outs)} outputs")
        for out, r in zip(outs, results):
            if r is not out:
                np.copyto(out, r, casting="unsafe")
    return call


def _typed(a, dtype):
    """``a`` as ``dtype``: the array interface gives bfloat16 (ml_dtypes') as raw
    2-byte voids."""
    return a if a.dtype == dtype else a.view(dtype)


class _Memory:
    """A kernel's buffer for ``np.asarray`` (NumPy's array interface, no copy)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, pointer, spec):
        shape, typestr, readonly = spec
        self.__array_interface__ = {"shape": shape, "typestr": typestr, "version": 3,
                                    "data": (pointer, readonly)}


def _c_order(a):
    """``a`` as a C-contiguous array (0-d stays 0-d, unlike np.ascontiguousarray)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C")


def llvm_text(steps) -> str:
    """The LLVM IR of the kernels of ``steps``, as the emitter writes it (before
    LLVM's optimisations)."""
    from llvmlite import ir
    texts = []
    for s in steps:
        if s.kernel is None:
            continue
        module = ir.Module(name="kernel")
        Emitter(s.kernel, module, data_offset=engine.array_layout() or 16).build()
        texts.append(str(module))
    return "\n".join(texts)
