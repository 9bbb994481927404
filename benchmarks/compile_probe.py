"""Time zerax's first call of a benchmark program in this fresh process.

Usage: ``ZERAX_CACHE_DIR=DIR python benchmarks/compile_probe.py PROGRAM`` with PROGRAM
``mlp`` (the MLP training step ``jit(grad(loss))``) or ``elementwise`` (the fused chain
on 10^6 float64). The imports (zerax, NumPy, Numba) and the inputs come first and are not
timed, nor is the once-per-process start-up of zerax's jit backend (importing its
modules, starting Numba's thread pool): JAX's compile time is measured in a running
process whose backend is already up, so both sides leave that out (``--with-startup``
times it too). Then the first call (trace, code generation, Numba compilation or a load from
the disk cache in DIR, one execution) and a second call (one execution) are timed.
Prints one JSON line: ``first_s``, ``second_s`` and ``compile_s = first_s - second_s``
(the first call's cost beyond a steady-state call), plus a checksum of the result.
Used by the ``jit_compile`` workload (workloads.py), one process per measurement.

``--breakdown`` (for the note on a missed target) instead times the pieces of the first
call: trace (``lower``), code generation and module load (``compile``, Numba compiles
lazily), and the first call of the Numba kernels under cProfile, with the part spent in
Numba's per-process initialisation of its typing and target contexts. PROGRAM
``trivial`` times the first call of a trivial ``@njit(cache=True)`` function instead.

``--timeline`` (issue 20's compile-time rows, workloads_compile.py) times the same first
call as the plain mode, split in the same process at no extra compile: ``lower`` (tracing),
``compile`` (zerax's passes, fusion and code generation), then the first call; Numba's
share is taken apart by its own event hooks (``numba.core.event``: every compiler pass,
every hold of LLVM's lock) and by timing its typing and target contexts' ``refresh``,
attributing each nested piece once (exclusive time, per thread). Without cProfile, so the
total is the measurement (the hooks cost a few microseconds per LLVM call). PROGRAM may
be any program of workloads_compile.py (``cnn``, ``mixer12``, ``chain5000``, ...).

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
    import numba  # noqa: F401  (imported before the clock starts, like zerax)
    import numpy as np
    import workloads

    import zerax
    if sys.argv[1] == "trivial":
        print(json.dumps(trivial()))
        return
    fn, args = program(sys.argv[1])
    if "--with-startup" not in sys.argv:
        backend_startup()
    if "--breakdown" in sys.argv:
        print(json.dumps(breakdown(fn, args)))
        return
    if "--timeline" in sys.argv:
        print(json.dumps(timeline(fn, args)))
        return
    t = time.perf_counter()
    out = fn(*args)
    first = time.perf_counter() - t
    t = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - t
    leaves = zerax.tree_util.tree_leaves(out)
    checksum = float(sum(np.abs(np.asarray(v)).sum() for v in leaves))
    print(json.dumps({"first_s": first, "second_s": second,
                      "compile_s": max(first - second, 0.0), "checksum": checksum}))


def program(name):
    """(jitted zerax function, args) of PROGRAM: jit_compile's (workloads.py) or issue
    20's (workloads_compile.py)."""
    import workloads
    import workloads_compile
    if name in workloads_compile.PROGRAMS:
        return workloads_compile.zerax_program(name)
    return workloads.compile_program(name)


def backend_startup() -> None:
    """What any process that has run one jitted program has done once: import zerax's
    backend and start the thread pool its parallel loops run on."""
    from zerax._src.backends import get_backend
    from zerax._src.backends.cpu import engine, threads
    get_backend("numba")
    threads.ensure_loaded(engine.add_runtime_module, engine.address_of)


TRIVIAL = """import numba

@numba.njit(cache=True)
def f(a):
    return a + 1.0
"""


def trivial() -> dict:
    """The first call of a trivial ``@njit(cache=True)`` function in this process (from
    Numba's cache in ZERAX_CACHE_DIR when a previous probe compiled it): the floor of
    any first call that goes through Numba's dispatcher."""
    import importlib

    import numpy as np
    d = os.environ["ZERAX_CACHE_DIR"]
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "trivial_njit.py")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(TRIVIAL)
        os.replace(path + ".tmp", path)
    sys.path.insert(0, d)
    mod = importlib.import_module("trivial_njit")
    a = np.zeros(3)
    t = time.perf_counter()
    mod.f(a)
    return {"first_s": time.perf_counter() - t}


def breakdown(fn, args) -> dict:
    import cProfile
    import pstats
    t = time.perf_counter()
    lowered = fn.lower(*args)
    trace = time.perf_counter() - t
    t = time.perf_counter()
    lowered.compile()
    codegen = time.perf_counter() - t
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    fn(*args)
    prof.disable()
    first = time.perf_counter() - t
    t = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - t
    init = 0.0
    for (path, _, func), (_, _, _, ct, _) in pstats.Stats(prof).stats.items():
        if func == "refresh" and path.replace(os.sep, "/").endswith("numba/core/base.py"):
            init = max(init, ct)
    source = lowered.as_text()
    return {"trace_s": trace, "codegen_s": codegen, "first_call_s": first,
            "second_s": second, "numba_init_s": init,
            "kernels": source.count("\ndef kernel") + source.startswith("def kernel")}


# ---------------------------------------------------------------------- --timeline

class _Timeline:
    """Exclusive time of nested pieces of Numba's work, from its event hooks.

    Every Numba compiler pass (``numba:run_pass``), every hold of LLVM's lock
    (``numba:llvm_lock``: parsing, optimising and emitting machine code, also for IR that
    zerax builds with llvmlite itself), every dispatcher compile (``numba:compile``) and
    every ``refresh`` of Numba's typing and target contexts (their first use in a process
    builds them: Numba's per-process initialisation; later ones re-check its registries)
    opens a frame; a frame's time minus
    its children's is added to its name, so nested compiles (an intrinsic typed inside a
    kernel's type inference) are counted once, where they happen.
    """

    def __init__(self):
        import threading
        self.tls = threading.local()
        self.excl: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self.outer = 0.0            # inclusive time of outermost frames (all threads)
        self.top_compiles: list[str] = []

    def _stack(self) -> list:
        st = getattr(self.tls, "stack", None)
        if st is None:
            st = self.tls.stack = []
        return st

    def push(self, name: str) -> None:
        self._stack().append([name, time.perf_counter(), 0.0])

    def pop(self) -> None:
        st = self._stack()
        name, t0, child = st.pop()
        dt = time.perf_counter() - t0
        self.excl[name] = self.excl.get(name, 0.0) + dt - child
        self.count[name] = self.count.get(name, 0) + 1
        if st:
            st[-1][2] += dt
        else:
            self.outer += dt

    def listener(self):
        from numba.core import event
        tl = self

        class Listener(event.Listener):
            def on_start(self, ev):
                if ev.kind == "numba:run_pass":
                    tl.push("pass " + ev.data["name"].split(" [", 1)[0])
                elif ev.kind == "numba:llvm_lock":
                    tl.push("LLVM")
                else:   # numba:compile
                    if not tl._stack():
                        d = ev.data["dispatcher"]
                        tl.top_compiles.append(getattr(d, "__name__", str(d)))
                    tl.push("dispatcher")

            def on_end(self, ev):
                tl.pop()
        return Listener()

    def install(self) -> None:
        from numba.core import base, event
        from numba.core.typing import context
        listener = self.listener()
        for kind in ("numba:run_pass", "numba:llvm_lock", "numba:compile"):
            event.register(kind, listener)
        for cls, kind in ((context.BaseContext, "typing"), (base.BaseContext, "target")):
            orig, first = cls.refresh, []

            def refresh(ctx, _orig=orig, _kind=kind, _first=first):
                # the first refresh builds the context (registries, imports); later
                # ones re-check the registries, once per function resolution or so
                self.push(f"{_kind} context " + ("refresh" if _first else "init"))
                _first.append(True)
                try:
                    return _orig(ctx)
                finally:
                    self.pop()
            cls.refresh = refresh


# Numba's pass names (numba 0.5x-0.6x) grouped into the pieces the report shows.
_TYPING = ("nopython_type_inference", "partial_type_inference", "nopython_rewrites",
           "annotate_types")
_LOWERING = ("native_lowering", "native_parfor_lowering", "nopython_backend",
             "object_mode_backend")


def _bucket(name: str) -> str:
    if name == "LLVM":
        return "llvm"
    if name.endswith("context init"):
        return "numba_init"
    if name.endswith("context refresh"):
        return "numba_refresh"
    if name == "dispatcher":
        return "numba_dispatch"
    p = name[5:]
    if p in _TYPING:
        return "numba_typing"
    if p in _LOWERING:
        return "numba_lowering"
    if "parfor" in p:
        return "numba_parfor"
    return "numba_other_passes"


def timeline(fn, args) -> dict:
    """The first call taken apart (see the module docstring, ``--timeline``)."""
    import gc
    tl = _Timeline()
    tl.install()
    gc.collect()
    marks = []

    def phase(run):
        before = tl.outer
        t = time.perf_counter()
        out = run()
        marks.append((time.perf_counter() - t, tl.outer - before))
        return out
    lowered = phase(lambda: fn.lower(*args))
    phase(lowered.compile)
    phase(lambda: fn(*args))
    t = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - t
    (lo, lo_nb), (co, co_nb), (fi, fi_nb) = marks
    pieces = {"trace_s": lo - lo_nb, "zerax_codegen_s": co - co_nb}
    for b in ("numba_init", "numba_refresh", "numba_dispatch", "numba_typing", "numba_parfor",
              "numba_other_passes", "numba_lowering", "llvm"):
        pieces[b + "_s"] = 0.0
    for name, v in tl.excl.items():
        pieces[_bucket(name) + "_s"] += v
    pieces["other_s"] = max(fi - fi_nb - second, 0.0)
    passes = sorted(((v, k[5:]) for k, v in tl.excl.items() if k.startswith("pass ")),
                    reverse=True)
    eqns = len(lowered.jaxpr.eqns)
    return {"compile_s": max(lo + co + fi - second, 0.0), "first_s": lo + co + fi,
            "second_s": second, "pieces": pieces, "eqns": eqns,
            "kernels": len(tl.top_compiles),
            "compiles": tl.count.get("dispatcher", 0),
            "llvm_calls": tl.count.get("LLVM", 0),
            "refreshes": sum(v for k, v in tl.count.items() if k.endswith("refresh")),
            "top_passes": [[k, v] for v, k in passes[:6]]}


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
