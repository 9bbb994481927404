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
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    import numba  # noqa: F401  (imported before the clock starts, like zerax)
    import numpy as np
    import workloads

    import zerax
    if sys.argv[1] == "trivial":
        print(json.dumps(trivial()))
        return
    fn, args = workloads.compile_program(sys.argv[1])
    if "--with-startup" not in sys.argv:
        backend_startup()
    if "--breakdown" in sys.argv:
        print(json.dumps(breakdown(fn, args)))
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


def backend_startup() -> None:
    """What any process that has run one jitted program has done once: import zerax's
    Numba backend and start Numba's threading layer (the pool prange kernels run on)."""
    import zerax._src.backends.numba.compile  # noqa: F401
    from numba.np.ufunc.parallel import _launch_threads
    _launch_threads()


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


if __name__ == "__main__":
    main()
