"""What the first-run programs share: the library argument, the report line, and
``--profile`` (where a run's time goes).

Each program is run as ``python PROGRAM.py jax|zerax [--profile]`` in a fresh process
(benchmarks/workloads_first_run.py starts it, with an empty ``ZERAX_CACHE_DIR`` and
JAX's persistent compilation cache off). Its last stdout line is ``FIRST_RUN {json}``:
``phases`` (seconds from the program's first line to the end of each phase: imports,
setup, the training loop, the evaluation) and ``results`` (the final loss and accuracy,
to check that both libraries computed the same thing).

``--profile`` runs the program under cProfile and, for zerax, also times the pieces of
its compiles (benchmarks/compile_probe.py's timers: the cache key, zerax's emission of
LLVM IR, LLVM's parse, O3 pipeline and code emission, the link, the disk cache) and
counts the traces of each jitted function; ``profile`` in the JSON is that text.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("jax", "zerax")


def library() -> str:
    """The library named by the first command-line argument."""
    if len(sys.argv) < 2 or sys.argv[1] not in LIBRARIES:
        sys.exit(f"usage: {os.path.basename(sys.argv[0])} {'|'.join(LIBRARIES)} [--profile]")
    return sys.argv[1]


_PROFILE: dict = {}


def report(t0: float, marks: dict, results: dict) -> None:
    """Print the ``FIRST_RUN`` line: each phase's seconds (``marks``: phase -> the
    perf_counter at its end, in order) and the results."""
    phases, last = {}, t0
    for name, t in marks.items():
        phases[name] = t - last
        last = t
    line = {"phases": phases, "total": last - t0, "results": results}
    if _PROFILE:
        line["profile"] = _PROFILE["finish"]()
    print("FIRST_RUN " + json.dumps(line), flush=True)


def run(main) -> None:
    """Run ``main``, under the profilers with ``--profile``."""
    if "--profile" in sys.argv:
        _start_profile()
    main()


def _start_profile() -> None:
    import cProfile
    prof = cProfile.Profile()
    pieces = _zerax_pieces() if sys.argv[1] == "zerax" else None

    def finish() -> str:
        prof.disable()
        return _profile_text(prof, pieces)
    _PROFILE["finish"] = finish
    prof.enable()


def _zerax_pieces():
    """Install compile_probe.py's timers of zerax's compile pieces; returns
    (timer, kernels list, stats before)."""
    sys.path.insert(0, os.path.dirname(HERE))
    import compile_probe

    from zerax._src.backends.cpu import compile as cpu_compile
    tm, kernels = compile_probe._Timer(), []
    compile_probe._install(tm, kernels)
    return tm, kernels, dict(cpu_compile.stats)


def _profile_text(prof, pieces) -> str:
    import io
    import pstats
    out = []
    if pieces is not None:
        from zerax._src.backends.cpu import compile as cpu_compile
        tm, kernels, before = pieces
        out.append(f"kernels compiled by LLVM: "
                   f"{cpu_compile.stats['compiled'] - before['compiled']}, loaded from "
                   f"the cache: {cpu_compile.stats['loaded'] - before['loaded']}")
        out.append("compile pieces (exclusive seconds): " + ", ".join(
            f"{k} {v:.2f}" for k, v in sorted(tm.excl.items(), key=lambda kv: -kv[1])))
        out.append("slowest kernels (emit + LLVM): " + ", ".join(
            f"{lines}-line kernel{', parallel' if par else ''} {dt:.2f} s"
            for dt, lines, par in sorted(kernels, reverse=True)[:8]))
    root = os.path.dirname(os.path.dirname(HERE))
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats(key).print_stats(25)
        text = buf.getvalue().replace(os.path.join(root, "src") + os.sep, "")
        for p in sys.path:
            if "site-packages" in p:
                text = text.replace(p + os.sep, "")
        lines = text.splitlines()
        start = next((i for i, ln in enumerate(lines) if "ncalls" in ln), 0)
        out.append(f"top 25 by {key}:\n" + "\n".join(ln.rstrip() for ln in lines[start:]
                                                      if ln.strip()))
    return "\n\n".join(out)
