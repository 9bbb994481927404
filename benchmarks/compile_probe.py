"""Time zerax's first call of a benchmark program in this fresh process.

Usage: ``ZERAX_CACHE_DIR=DIR python benchmarks/compile_probe.py PROGRAM`` with PROGRAM
``mlp`` (the MLP training step ``jit(grad(loss))``), ``elementwise`` (the fused chain
on 10^6 float64), ``trivial`` (``jit(lambda x: x + 1.0)`` on a 3-vector: the floor of
any first call) or any program of workloads_compile.py (``cnn``, ``mixer12``,
``chain5000``, ...). The imports (zerax, NumPy) and the inputs come first and are not
timed, nor is the once-per-process start-up of zerax's jit backend (importing its
modules, making LLVM's target machine and engine, compiling the thread pool's runtime
module): JAX's compile time is measured in a running process whose backend is already
up, so both sides leave that out (``--with-startup`` times it too). Then the first call
(trace, lowering to the kernel IR, LLVM's compile of each kernel or a load of its object
code from the disk cache in DIR, one execution) and a second call (one execution) are
timed. Prints one JSON line: ``first_s``, ``second_s`` and ``compile_s = first_s -
second_s`` (the first call's cost beyond a steady-state call), plus a checksum of the
result. Used by the ``jit_compile`` workload (workloads.py), one process per
measurement.

``--timeline`` (issue 20's compile-time rows, workloads_compile.py, and jit_compile's
note; ``--breakdown`` is the same) times the same first call split in the same process
at no extra compile: ``lower`` (tracing), ``compile`` (zerax's lowering to the kernel
IR), then the first call, whose pieces are timed by wrapping the functions of
``backends/cpu/compile.py`` and ``engine.py`` in this process: the cache key (the kernel
IR printed and hashed), the disk cache's read (with its MAC check) and write, zerax's
emission of LLVM IR (``Emitter.build``), LLVM (the IR printed and parsed; the O3
pipeline; machine-code emission) and the link of the object code into the engine. Each
nested piece is counted once (exclusive time, per thread); what is left of the first
call beyond the second is ``other_s``. It also reports the kernels of the program and
how many were compiled or loaded (``cpu.compile.stats``).

``--jax`` times JAX's cold compile of PROGRAM instead, in this fresh process: JAX's
persistent compilation cache off, its CPU backend started by a trivial jitted call
first (as zerax's jit backend is), then the first call of ``jax.jit(f)`` minus the
second; then, after ``jax.clear_caches()``, ``lower`` and ``compile`` apart.
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    if "--jax" in sys.argv:
        print(json.dumps(jax_probe(sys.argv[1])))
        return
    import numpy as np
    import workloads  # noqa: F401

    import zerax
    fn, args = program(sys.argv[1])
    if "--with-startup" not in sys.argv:
        backend_startup()
    if "--timeline" in sys.argv or "--breakdown" in sys.argv:
        print(json.dumps(timeline(fn, args)))
        return
    t = time.perf_counter()
    out = fn(*args)
    first = time.perf_counter() - t
    # a steady call, the least of three: on a busy machine one call can take longer
    # than the warm first call (a cache load), which left nothing to measure
    second = []
    for _ in range(3):
        t = time.perf_counter()
        fn(*args)
        second.append(time.perf_counter() - t)
    second = min(second)
    leaves = zerax.tree_util.tree_leaves(out)
    checksum = float(sum(np.abs(np.asarray(v)).sum() for v in leaves))
    print(json.dumps({"first_s": first, "second_s": second,
                      "compile_s": max(first - second, 1e-6), "checksum": checksum}))


def program(name):
    """(jitted zerax function, args) of PROGRAM: jit_compile's (workloads.py), issue
    20's (workloads_compile.py) or ``trivial``."""
    import workloads
    import workloads_compile
    if name == "trivial":
        import numpy as np

        import zerax
        return zerax.jit(lambda x: x + 1.0), (np.zeros(3),)
    if name in workloads_compile.PROGRAMS:
        return workloads_compile.zerax_program(name)
    return workloads.compile_program(name)


def backend_startup() -> None:
    """What any process that has run one jitted program has done once: import zerax's
    CPU backend, make LLVM's target machine and engine, and compile and link the
    runtime module of the thread pool its parallel loops run on."""
    from zerax._src.backends import get_backend
    from zerax._src.backends.cpu import engine, threads
    get_backend()
    engine.target_machine()
    threads.ensure_loaded(engine.add_runtime_module, engine.address_of)


# ---------------------------------------------------------------------- --timeline

class _Timer:
    """Exclusive time of nested, named pieces (a frame's time minus its children's),
    per thread; ``outer`` is the inclusive time of outermost frames."""

    def __init__(self):
        import threading
        self.tls = threading.local()
        self.excl: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self.outer = 0.0

    def _stack(self) -> list:
        st = getattr(self.tls, "stack", None)
        if st is None:
            st = self.tls.stack = []
        return st

    def push(self, name: str) -> None:
        self._stack().append([name, time.perf_counter(), 0.0])

    def pop(self) -> float:
        st = self._stack()
        name, t0, child = st.pop()
        dt = time.perf_counter() - t0
        self.excl[name] = self.excl.get(name, 0.0) + dt - child
        self.count[name] = self.count.get(name, 0) + 1
        if st:
            st[-1][2] += dt
        else:
            self.outer += dt
        return dt

    def wrap(self, owner, attr: str, name: str, after=None) -> None:
        """Replace ``owner.attr`` by a timed call of it (``after(dt, args, result)``
        sees each call)."""
        orig = getattr(owner, attr)

        def timed(*a, **kw):
            self.push(name)
            out = None
            try:
                out = orig(*a, **kw)
                return out
            finally:
                dt = self.pop()
                if after is not None:
                    after(dt, a, out)
        setattr(owner, attr, timed)


# The pieces of the first call, in the order they happen (PIECES in workloads_compile.py
# labels them).
_PIECES = ("cache_key", "cache_read", "emit", "llvm_parse", "llvm_optimise", "llvm_codegen",
           "link", "cache_write", "runtime")


def _install(tm: _Timer, kernels: list) -> None:
    """Time the pieces of compiling or loading kernels (module docstring)."""
    import llvmlite.binding as ll

    from zerax._src.backends import kernel_ir as K
    from zerax._src.backends.cpu import compile as cpu_compile
    from zerax._src.backends.cpu import emit, engine

    def compiled(dt, a, out):      # _compile(kernel, symbol, fast_math): emit + LLVM
        k = a[0]
        kernels.append((dt, len(K.format_kernel(k).splitlines()), bool(out["parallel"])))
    tm.wrap(cpu_compile, "kernel_key", "cache_key")
    tm.wrap(cpu_compile, "_read", "cache_read")
    tm.wrap(cpu_compile, "_write", "cache_write")
    tm.wrap(cpu_compile, "_compile", "emit", compiled)   # its own time: the emitter's set-up
    tm.wrap(emit.Emitter, "build", "emit")
    tm.wrap(engine, "compile_module", "llvm_parse")    # its own time: IR printed, parsed
    tm.wrap(engine, "optimise", "llvm_optimise")
    tm.wrap(ll.TargetMachine, "emit_object", "llvm_codegen")
    tm.wrap(engine, "load_object", "link")
    tm.wrap(engine, "add_runtime_module", "runtime")


def timeline(fn, args) -> dict:
    """The first call taken apart (see the module docstring, ``--timeline``)."""
    import gc

    from zerax._src.backends.cpu import compile as cpu_compile
    tm, kernels = _Timer(), []
    _install(tm, kernels)
    gc.collect()
    before = dict(cpu_compile.stats)
    marks = []

    def phase(run):
        wrapped = tm.outer
        t = time.perf_counter()
        out = run()
        marks.append((time.perf_counter() - t, tm.outer - wrapped))
        return out
    lowered = phase(lambda: fn.lower(*args))
    compiled = phase(lowered.compile)
    phase(lambda: fn(*args))
    t = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - t
    (lo, lo_w), (co, co_w), (fi, fi_w) = marks
    pieces = {"trace_s": lo - lo_w, "zerax_lowering_s": co - co_w}
    for name in _PIECES:
        pieces[name + "_s"] = tm.excl.get(name, 0.0)
    pieces["other_s"] = max(fi - fi_w - second, 0.0)
    steps = getattr(compiled._exe, "steps", [])
    n_kernels = sum(s.kernel is not None for s in steps)
    slowest = sorted(kernels, reverse=True)[:6]
    return {"compile_s": max(lo + co + fi - second, 0.0), "first_s": lo + co + fi,
            "second_s": second, "pieces": pieces,
            "llvm_s": sum(pieces[k] for k in ("llvm_parse_s", "llvm_optimise_s",
                                              "llvm_codegen_s")),
            "eqns": len(lowered.jaxpr.eqns), "kernels": n_kernels,
            "host_steps": len(steps) - n_kernels,
            "compiled": cpu_compile.stats["compiled"] - before["compiled"],
            "loaded": cpu_compile.stats["loaded"] - before["loaded"],
            "slowest_kernels": [[f"{lines}-line kernel" + (", parallel" if par else ""), dt]
                                for dt, lines, par in slowest]}


# ---------------------------------------------------------------------- --jax

def jax_probe(name) -> dict:
    """JAX's cold compile of PROGRAM in this fresh process (module docstring, --jax)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    import jax.numpy as jnp
    import workloads_compile
    fn, args = workloads_compile.jax_program(name)
    jax.block_until_ready(jax.jit(lambda x: x + 1.0)(jnp.zeros(3)))   # backend up
    jf = jax.jit(fn)
    t = time.perf_counter()
    jax.block_until_ready(jf(*args))
    first = time.perf_counter() - t
    t = time.perf_counter()
    jax.block_until_ready(jf(*args))
    second = time.perf_counter() - t
    jax.clear_caches()
    t = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    lower = time.perf_counter() - t
    t = time.perf_counter()
    lowered.compile()
    comp = time.perf_counter() - t
    return {"compile_s": max(first - second, 0.0), "first_s": first, "second_s": second,
            "pieces": {"lower_s": lower, "xla_compile_s": comp}}


if __name__ == "__main__":
    main()
