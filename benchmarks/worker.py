"""One contender of one workload, in a process of its own, driven by run.py.

Usage: ``python benchmarks/worker.py WORKLOAD CONTENDER``. The worker reads one JSON
command per line on stdin and answers one JSON line on the protocol channel (the original
stdout; anything a library prints goes to stderr instead):

- ``{"op": "setup", "case": ID, "min_sample_s": S, "warmup_s": W}``: builds the case,
  times its first call (compile / trace / first-use costs), warms up, and chooses how
  many calls make one sample (at least S seconds). Answers setup_s, first_s, number,
  extras, checksum, or ``{"skip": true}`` when the contender has nothing for this case.
- ``{"op": "sample", "case": ID}``: one sample; answers the seconds per call.
- ``{"op": "profile", "case": ID, "seconds": S}``: cProfile over calls for about S
  seconds; answers the Python function calls per call and the top functions, as text,
  and (zerax only) the text of the workload's piece timer, if it registered one.

A callable that returns a ``registry.Seconds`` measures itself: that value is its time.
- ``{"op": "quit"}``.
"""

from __future__ import annotations

import cProfile
import gc
import io
import json
import math
import os
import pstats
import sys
import time
import traceback

MAX_NUMBER = 100_000


def _checksum(out):
    """Sum of |leaves| of a result (lists, tuples, dicts, arrays), for cross-checking."""
    import numpy as np
    total, stack = 0.0, [out]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif v is not None:
            total += float(np.abs(np.asarray(v, dtype=np.float64)).sum())
    return total


def _profile(fn, seconds: float, top: int = 12) -> dict:
    """cProfile over calls of fn for about `seconds`: Python function calls per call, and
    the top functions by own time and by cumulative time, as text."""
    prof = cProfile.Profile()
    calls, t0 = 0, time.perf_counter()
    prof.enable()
    while calls < 3 or time.perf_counter() - t0 < seconds:
        fn()
        calls += 1
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prefixes = sorted({os.path.join(root, "src") + os.sep, root + os.sep,
                       *[p + os.sep for p in sys.path if "site-packages" in p]},
                      key=len, reverse=True)
    sections = []
    for key, title in (("tottime", "own time (tottime)"), ("cumulative", "cumulative time")):
        buf = io.StringIO()
        stats.stream = buf
        stats.sort_stats(key).print_stats(top)
        text = buf.getvalue()
        for prefix in prefixes:         # shorten absolute paths
            text = text.replace(prefix, "")
        lines = [ln.rstrip() for ln in text.splitlines()]
        start = next((i for i, ln in enumerate(lines) if "ncalls" in ln), len(lines))
        sections.append(f"top {top} by {title}:\n" + "\n".join(ln for ln in lines[start:] if ln))
    per_call = stats.total_calls / calls
    text = (f"{calls} calls profiled, {per_call:.0f} Python function calls per call\n\n"
            + "\n\n".join(sections))
    return {"text": text, "calls_per_call": per_call}


def _timed(fn):
    """(result, seconds) of one call: the call's own measurement if it returns a
    Seconds, else the wall time around it."""
    from registry import Seconds
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    return out, (float(out) if isinstance(out, Seconds) else dt)


def main() -> None:
    wl_key, name = sys.argv[1], sys.argv[2]
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                       # stray prints from libraries go to stderr
    sys.stdout = sys.stderr

    def send(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    t0 = time.perf_counter()
    try:
        import workloads  # noqa: F401  (fills the registry)
        from registry import REGISTRY
        wl = REGISTRY[wl_key]
        setup = wl.contenders[name]
    except Exception:  # noqa: BLE001  (reported to run.py, which carries on)
        send({"error": traceback.format_exc(limit=4)})
        return
    send({"ready": True, "import_s": time.perf_counter() - t0})

    from registry import Seconds
    fns: dict[str, object] = {}
    numbers: dict[str, int] = {}
    self_timed: dict[str, bool] = {}
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "quit":
                break
            case = cmd.get("case")
            if op == "setup":
                t = time.perf_counter()
                made = setup(case)
                setup_s = time.perf_counter() - t
                if made is None:
                    send({"skip": True})
                    continue
                fn, extras = made if isinstance(made, tuple) else (made, {})
                out, first_s = _timed(fn)
                self_timed[case] = isinstance(out, Seconds)
                checksum = _checksum(out) if cmd.get("compare") else None
                del out
                # Warm-up (excluded from the samples): at least one more call, unless
                # the first call alone took longer than 5x the warm-up time.
                per_call, warm = first_s, 0.0
                calls = 1 if first_s > 5 * cmd["warmup_s"] else 0
                while calls < 1 or warm < cmd["warmup_s"]:
                    _, dt = _timed(fn)
                    per_call, warm, calls = min(per_call, dt), warm + dt, calls + 1
                number = max(1, min(MAX_NUMBER, math.ceil(cmd["min_sample_s"] / per_call)))
                fns[case], numbers[case] = fn, number
                send({"setup_s": setup_s, "first_s": first_s, "number": number,
                      "extras": extras, "checksum": checksum})
            elif op == "sample":
                fn, number = fns[case], numbers[case]
                gc.collect()
                t, total = time.perf_counter(), 0.0
                for _ in range(number):
                    out = fn()
                    if isinstance(out, Seconds):
                        total += float(out)
                wall = time.perf_counter() - t
                send({"t": (total if self_timed[case] else wall) / number})
            elif op == "profile":
                # A self-timed call runs elsewhere (a subprocess): cProfile sees nothing.
                prof = ({"text": None, "calls_per_call": None} if self_timed[case]
                        else _profile(fns[case], cmd.get("seconds", 1.0)))
                if name == "zerax" and wl.profile_zerax is not None:
                    try:
                        prof["pieces"] = wl.profile_zerax(case)
                    except Exception:  # noqa: BLE001  (the note says so instead)
                        prof["pieces"] = ("(the piece timer failed: "
                                          f"{traceback.format_exc(limit=2)})")
                send(prof)
            else:
                send({"error": f"unknown op {op!r}"})
        except Exception:  # noqa: BLE001  (reported to run.py, which carries on)
            send({"error": traceback.format_exc(limit=6)})


if __name__ == "__main__":
    main()
