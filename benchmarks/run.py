"""Run the benchmark suite: zerax side by side with JAX, autograd, NumPy and Numba.

    python benchmarks/run.py                 # everything; writes docs/benchmarks.{md,png}
    python benchmarks/run.py --only grad_small,softmax --rounds 3 --no-docs
    python benchmarks/run.py --load 1        # the same with 1 busy process beside it;
                                             # writes docs/benchmarks_load1.{md,png}

Method. Every contender of a workload runs in its own process (worker.py), so the thread
pools of JAX, Numba and BLAS never compete, and only one process computes at a time: the
others wait on their pipe. For each case, each contender first builds the case and times
its first call (compile, trace and first-use costs: reported apart), then warms up
(excluded) and picks how many calls make one sample. Then the samples alternate between
contenders, A B C A B C ..., for a number of rounds. Reported: median, min and max of the
per-call time of each contender, and for each anchor the median over rounds of the
per-round ratio zerax / anchor. No other statistics.

``--load N`` keeps N busy processes (each spinning on one core, as a test run, a second
training process or a notebook kernel would) running from before the first workload to
the end, so every contender, JAX included, is measured under the same load. They are
stopped at the end, also on an error, Ctrl-C or SIGTERM, and each exits by itself if
this process dies.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import workloads  # noqa: F401  (fills the registry)
from registry import REGISTRY, TIMED_OUT, Workload

OP_TIMEOUT_S = 300.0
SCRUBBED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# --------------------------------------------------------------------------------------
# Background load (--load N)
# --------------------------------------------------------------------------------------

# A busy process: pure Python arithmetic on one core; it checks every ~0.1 s that its
# parent is alive, so it never outlives an interrupted run.
_BUSY = """
import os, time
parent = os.getppid()
x = 0
while True:
    t = time.monotonic() + 0.1
    while time.monotonic() < t:
        for i in range(10000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    if os.getppid() != parent:
        break
"""


class BackgroundLoad:
    """Context manager: ``n`` busy processes while the block runs."""

    def __init__(self, n: int):
        self.n, self.procs = n, []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, "-c", _BUSY],
                                               stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        if self.n:
            time.sleep(0.5)   # let them start spinning before anything is measured
        return self

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.procs)

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        return False


# --------------------------------------------------------------------------------------
# Workers
# --------------------------------------------------------------------------------------

def _child_env() -> dict:
    env = dict(os.environ)
    for k in SCRUBBED_ENV:          # they slow a current NumPy's OpenBLAS down
        env.pop(k, None)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "src")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["JAX_ENABLE_X64"] = "1"
    env["PYTHONHASHSEED"] = "0"
    # zerax's on-disk compilation cache: one fresh directory per run, so that every
    # "first call" of a jitted zerax program is a cold compile, whatever ran before.
    if RUN_CACHE_DIR:
        env["ZERAX_CACHE_DIR"] = RUN_CACHE_DIR
    return env


RUN_CACHE_DIR: str | None = None


class Worker:
    def __init__(self, wl_key: str, name: str):
        self.name = name
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115  (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "worker.py"), wl_key, name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            text=True, bufsize=1, env=_child_env(), cwd=ROOT)
        self.error: str | None = None

    def recv(self, timeout=OP_TIMEOUT_S) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.kill()
            why = "timed out" if not ready else "exited"
            raise RuntimeError(f"worker {self.name} {why}; stderr tail:\n{self.stderr_tail()}")
        msg = json.loads(line)
        if "error" in msg:
            raise RuntimeError(msg["error"])
        return msg

    def ask(self, timeout=OP_TIMEOUT_S, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.recv(timeout)

    def stderr_tail(self, n=1500) -> str:
        self.log.seek(0)
        return self.log.read()[-n:]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self.log.close()


def _short_error(e: Exception) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else type(e).__name__


# --------------------------------------------------------------------------------------
# Running one workload
# --------------------------------------------------------------------------------------

def run_workload(wl: Workload, opts) -> dict:
    names = wl.order()
    workers = {n: Worker(wl.key, n) for n in names}   # start in parallel (imports only)
    errors: dict[str, str] = {}
    for n, w in workers.items():
        try:
            w.recv()
        except Exception as e:  # noqa: BLE001
            errors[n] = _short_error(e)
    results = {"workload": wl.key, "cases": {}, "errors": dict(errors)}
    try:
        for case in wl.cases:
            rounds = opts.rounds or case.rounds or wl.rounds
            if opts.budget and time.monotonic() - opts.t0 > opts.budget:
                rounds = min(rounds, 3)
            res = {"contenders": {}, "rounds": rounds}
            active = []
            for n in names:
                if n in errors:
                    res["contenders"][n] = {"error": errors[n]}
                    continue
                try:
                    info = workers[n].ask(op="setup", case=case.id, compare=case.compare,
                                          timeout=wl.op_timeout_s or OP_TIMEOUT_S,
                                          min_sample_s=opts.min_sample,
                                          warmup_s=opts.warmup)
                except Exception as e:  # noqa: BLE001
                    res["contenders"][n] = {"error": _short_error(e)}
                    print(f"  {wl.key}/{case.id}: {wl.label(n)} failed:\n{e}",
                          file=sys.stderr, flush=True)
                    if workers[n].proc.poll() is not None:
                        errors[n] = res["contenders"][n]["error"]
                    continue
                if info.get("skip"):
                    continue
                info["samples"] = []
                res["contenders"][n] = info
                active.append(n)
            for _ in range(rounds):
                for n in list(active):
                    try:
                        t = workers[n].ask(op="sample", case=case.id,
                                           timeout=wl.op_timeout_s or OP_TIMEOUT_S)["t"]
                        res["contenders"][n]["samples"].append(t)
                    except Exception as e:  # noqa: BLE001
                        res["contenders"][n] = {"error": _short_error(e)}
                        active.remove(n)
            _summarise(wl, case, res)
            missed = [t for t, _, met in res["targets"] if t.metric == "time" and met is False]
            if opts.profile and missed and "zerax" in active:
                res["profile"], res["calls_per_call"], res["pieces"] = _profile(
                    workers, ["zerax"] + [t.anchor for t in missed if t.anchor in active],
                    case.id)
            results["cases"][case.id] = res
            _progress(wl, case, res)
    except BaseException:   # Ctrl-C, SIGTERM: stop the workers now, not politely
        for w in workers.values():
            w.kill()
        raise
    finally:
        for w in workers.values():
            w.close()
    return results


def _profile(workers, names, case_id):
    """Profile zerax (cProfile text, and its workload's piece timer) and the missed
    targets' anchors (function calls per call). A zerax side that measures itself in a
    subprocess has no cProfile text; its anchors are then not profiled either."""
    text, per_call, pieces = None, {}, None
    for n in dict.fromkeys(names):
        try:
            p = workers[n].ask(op="profile", case=case_id, seconds=1.0)
        except Exception as e:  # noqa: BLE001
            text = text or f"(profiling failed: {_short_error(e)})"
            continue
        if n == "zerax":
            text, pieces = p["text"], p.get("pieces")
            if p["calls_per_call"] is None:
                break
        per_call[n] = p["calls_per_call"]
    return text, per_call, pieces


def _summarise(wl: Workload, case, res: dict) -> None:
    cs = res["contenders"]
    for info in cs.values():
        s = info.get("samples")
        if s:
            info["median"], info["min"], info["max"] = statistics.median(s), min(s), max(s)
    z = cs.get("zerax", {})
    res["ratios"], res["extra_ratios"] = {}, {}
    for n, info in cs.items():
        if n == "zerax":
            continue
        if z.get("samples") and info.get("samples") and \
                TIMED_OUT not in (info.get("extras") or {}):   # no ratio to a lower bound
            pairs = [a / b for a, b in zip(z["samples"], info["samples"])]
            res["ratios"][n] = statistics.median(pairs)
        for k, v in (info.get("extras") or {}).items():
            if k == TIMED_OUT:
                continue
            zv = (z.get("extras") or {}).get(k)
            if zv is not None and v:
                res["extra_ratios"].setdefault(k, {})[n] = zv / v
    res["targets"] = []
    for t in wl.targets:
        if not t.applies(case.id):
            continue
        ratio = (res["ratios"].get(t.anchor) if t.metric == "time"
                 else res["extra_ratios"].get(t.metric, {}).get(t.anchor))
        met = None if ratio is None else bool(ratio <= t.limit)
        if met and TIMED_OUT in (z.get("extras") or {}):
            met = None    # zerax's time is a lower bound: only a miss is certain
        res["targets"].append((t, ratio, met))
    # Cross-check results: every contender computed the same thing.
    sums = {n: i["checksum"] for n, i in cs.items() if i.get("checksum") is not None}
    ref = sums.get("zerax", next(iter(sums.values()), None))
    res["mismatch"] = [n for n, v in sums.items()
                       if abs(v - ref) > 1e-6 * max(1.0, abs(ref))] if sums else []


def _progress(wl: Workload, case, res: dict) -> None:
    parts = []
    for n, info in res["contenders"].items():
        parts.append(f"{wl.label(n)} " + (fmt_median(info) if "median" in info
                                           else "error"))
    label = f"{wl.key}/{case.id}"
    warn = f"  [results differ: {', '.join(res['mismatch'])}]" if res.get("mismatch") else ""
    print(f"  {label:<32} " + " | ".join(parts) + warn, flush=True)


# --------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------

def fmt_t(s: float | None) -> str:
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return str(s)


def fmt_median(info: dict) -> str:
    """A contender's median; ">600 s" for a call stopped by its time limit."""
    return (">" if TIMED_OUT in (info.get("extras") or {}) else "") + fmt_t(info["median"])


def fmt_r(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.3g}x" if r < 100 else f"{r:.0f}x"


def _met(met, pending) -> str:
    if pending:
        return "pending"
    return {True: "yes", False: "**no**", None: "—"}[met]


def workload_table(wl: Workload, res: dict) -> list[str]:
    """case | zerax | each anchor | zerax/anchor ... | target | met?"""
    anchors = [n for n in wl.order() if n != "zerax"]
    extras = sorted({k for c in res["cases"].values() for i in c["contenders"].values()
                     for k in (i.get("extras") or {}) if k != TIMED_OUT})
    head = ["case", wl.label("zerax")] + [wl.label(a) for a in anchors]
    if not wl.pending:
        head += [f"zerax / {wl.label(a)}" for a in anchors]
    for k in extras:
        head += [f"{k}: {wl.label(n)}" for n in wl.order()]
        head += [f"{k}: zerax / {wl.label(a)}" for a in anchors]
    head += ["target", "met?"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in wl.cases:
        c = res["cases"].get(case.id, {"contenders": {}, "ratios": {}, "extra_ratios": {},
                                       "targets": []})
        cs = c["contenders"]

        def cell(n, cs=cs):
            i = cs.get(n)
            if i is None:
                return "—"
            return fmt_median(i) if "median" in i else f"error: {i.get('error', '?')}"
        row = [case.label or wl.title,
               f"pending: {wl.pending}" if wl.pending else cell("zerax")]
        row += [cell(a) for a in anchors]
        if not wl.pending:
            row += [fmt_r(c["ratios"].get(a)) for a in anchors]
        for k in extras:
            row += [str((cs.get(n, {}).get("extras") or {}).get(k, "—")) for n in wl.order()]
            row += [fmt_r(c["extra_ratios"].get(k, {}).get(a)) for a in anchors]
        targets = c["targets"] or [(t, None, None) for t in wl.targets if t.applies(case.id)]
        row += ["; ".join(t.text + f" ({t.source})" for t, _, _ in targets) or "—",
                "; ".join(_met(m, wl.pending) for _, _, m in targets) or "—"]
        rows.append("| " + " | ".join(str(x).replace("|", "/") for x in row) + " |")
    return rows


def detail_table(wl: Workload, res: dict) -> list[str]:
    head = ["case", "contender", "median", "min", "max", "first call", "calls/sample",
            "rounds"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in wl.cases:
        c = res["cases"].get(case.id)
        if not c:
            continue
        for n, i in c["contenders"].items():
            if "median" not in i:
                rows.append(f"| {case.label or '—'} | {wl.label(n)} | error: "
                            f"{i.get('error', '?')} | | | | | |")
                continue
            rows.append("| " + " | ".join([
                case.label or "—", wl.label(n), fmt_median(i), fmt_t(i["min"]),
                fmt_t(i["max"]), fmt_t(i["first_s"]), str(i["number"]),
                str(len(i["samples"]))]) + " |")
    return rows


def _loadavg() -> str:
    try:
        return "/".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "?"


def _versions() -> str:
    vs = []
    for pkg in ("zerax", "numpy", "jax", "jaxlib", "autograd", "numba"):
        try:
            vs.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            vs.append(f"{pkg} (not installed)")
    return ", ".join(vs)


def _machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    blas = "?"
    try:
        import numpy as np
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{cfg.get('name')} {cfg.get('version')}"
    except (ImportError, KeyError, TypeError):
        pass  # an older NumPy: leave "?"
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; "
            f"NumPy's BLAS: {blas}")


def headline_rows(all_res: dict) -> list[str]:
    rows = ["| workload | case | target | zerax / anchor | met? |", "|---|---|---|---|---|"]
    for key, res in all_res.items():
        wl = REGISTRY[key]
        for case in wl.cases:
            c = res["cases"].get(case.id)
            targets = (c["targets"] if c else []) or [
                (t, None, None) for t in wl.targets if t.applies(case.id)]
            for t, ratio, met in targets:
                rows.append(f"| {wl.title} | {case.label or '—'} | {t.text} ({t.source}) | "
                            f"{'pending: ' + wl.pending if wl.pending else fmt_r(ratio)} | "
                            f"{_met(met, wl.pending)} |")
    return rows


def target_counts(all_res: dict) -> str:
    met = [m for res in all_res.values() for c in res["cases"].values()
           for _, _, m in c["targets"]]
    plural = "" if len(met) == 1 else "s"
    return (f"{len(met)} target{plural} measured: {met.count(True)} met, "
            f"{met.count(False)} missed, {met.count(None)} without a result.")


def _rounds_text(all_res: dict) -> str:
    used = {c["rounds"] for r in all_res.values() for c in r["cases"].values()
            if any(i.get("samples") for i in c["contenders"].values())}
    return "?" if not used else (f"{min(used)}" if len(used) == 1
                                 else f"{min(used)} to {max(used)}")


def write_markdown(path: str, all_res: dict, total_s: float, chart: str | None,
                   opts) -> str:
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    scrubbed = [k for k in SCRUBBED_ENV if k in os.environ]
    out = [
        "# Benchmarks",
        "",
        (f"Generated by `make bench` (`benchmarks/run.py`) on {now}; the whole run took "
        f"{total_s / 60:.1f} min. Do not edit by hand: rerun `make bench`."),
        "",
        f"- Machine: {_machine()}.",
        (f"- Load average (1/5/15 min) at the start of the run {opts.load_start}, at the end "
        f"{_loadavg()} ({os.cpu_count()} cores: a load above that means other work "
        "shared the CPUs and inflated the absolute times, multi-threaded anchors most; "
        "ratios of alternated samples suffer less)."),
        f"- Versions: {_versions()}.",
        "- JAX runs on the CPU with `jax_enable_x64`; everything computes in float64.",
        (f"- **Under load**: {opts.load} other busy process(es) (one core each) ran during "
         "the whole run, `--load` option; every contender was measured under the same "
         "load." if opts.load else "- No background load (`--load 0`)."),
        "- OpenBLAS settings " + (f"{', '.join(scrubbed)} were set here and are removed "
                                  "for the benchmark processes." if scrubbed else
                                  "OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE were not set."),
        "",
        ("**Method.** Each contender runs in its own process (JAX's, Numba's and BLAS's "
        "thread pools never compete; only one process computes at a time). For each case "
        "a contender builds its inputs, its first call is timed separately (*first call*: "
        "compile, trace and first-use costs), then it warms up (excluded) and calibrates "
        f"how many calls make one sample (at least {opts.min_sample * 1e3:.0f} ms). "
        "Samples then alternate between the contenders, A B C A B C ..., for "
        f"{_rounds_text(all_res)} rounds. Tables give the median per-call time; "
        "*zerax / X* is the median over rounds of the per-round ratio (below 1: zerax "
        "is faster). Min and max are in the detail tables. A target is met when that "
        "ratio is at most the limit. Treat differences of a few percent as noise."),
        "",
        ("zerax's on-disk compilation cache (`ZERAX_CACHE_DIR`) is a fresh, empty "
         "directory for each run, so a jitted zerax program's *first call* in the detail "
         "tables is a cold compile (LLVM included); the compile-time workload at the end "
         "measures cold and warm first calls in fresh processes."),
        "",
        *([("Rows marked *pending* need a part of zerax that does not exist yet; their "
            "anchors are measured anyway, so the table shows what zerax will be compared "
            "with. Adding the zerax side is one function in `benchmarks/workloads.py`."), ""]
          if any(REGISTRY[k].pending for k in all_res) else []),
        "## Targets",
        "",
        *headline_rows(all_res),
        "",
        target_counts(all_res),
        "",
    ]
    if chart:
        out += [f"![zerax / anchor, median of per-round ratios]({chart})", ""]
    for key, res in all_res.items():
        wl = REGISTRY[key]
        out += [f"## {wl.title}", ""]
        if wl.description:
            out += [wl.description, ""]
        out += workload_table(wl, res) + [""]
        if any(c["contenders"] for c in res["cases"].values()):
            out += [("<details><summary>Median, min, max and first call (compile / trace / "
                     "first use, not in the samples) per contender</summary>"),
                    "", *detail_table(wl, res), "", "</details>", ""]
        any_missed = False
        for case in wl.cases:
            c = res["cases"].get(case.id)
            if not c:
                continue
            if c.get("mismatch"):
                out += [(f"Warning ({case.label or wl.title}): results differ from "
                        f"zerax's for {', '.join(map(wl.label, c['mismatch']))}."), ""]
            missed = [(t, r) for t, r, m in c["targets"] if m is False]
            for t, r in missed:
                out += [(f"**Target missed** ({case.label or wl.title}): {t.text} "
                        f"({t.source}); measured {fmt_r(r)}."), ""]
            any_missed = any_missed or bool(missed)
        if any_missed and wl.miss_note:
            out += ["**What dominates, and what would close it.** " + wl.miss_note, ""]
        for case in wl.cases:
            c = res["cases"].get(case.id)
            if not c or not any(m is False for _, _, m in c["targets"]):
                continue
            where = f" ({case.label})" if case.label else ""
            if c.get("pieces"):
                out += [f"Pieces of the zerax side{where}, timed in its process:", "",
                        "```", c["pieces"].rstrip(), "```", ""]
            if c.get("profile"):
                counts = "; ".join(f"{wl.label(n)} {v:.0f}"
                                   for n, v in c.get("calls_per_call", {}).items())
                out += [(f"Python function calls per call (cProfile){where}: {counts}. "
                         "Profile of the zerax side, steady state:"), "",
                        "<details><summary>cProfile</summary>", "",
                        "```", c["profile"], "```", "", "</details>", ""]
    text = "\n".join(out).rstrip() + "\n"
    with open(path, "w") as f:
        f.write(text)
    return text


def write_chart(path: str, all_res: dict) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return False
    bars = []   # (label, ratio, limit or None, met)
    for key, res in all_res.items():
        wl = REGISTRY[key]
        for case in wl.cases:
            c = res["cases"].get(case.id)
            if not c:
                continue
            lims = {(t.anchor, t.metric): (t.limit, m) for t, _, m in c["targets"]}
            name = wl.key if len(wl.cases) == 1 else f"{wl.key}/{case.id}"
            for a, r in c["ratios"].items():
                lim, met = lims.get((a, "time"), (None, None))
                bars.append((f"{name}: time vs {wl.label(a)}", r, lim, met))
            for k, per in c["extra_ratios"].items():
                for a, r in per.items():
                    lim, met = lims.get((a, k), (None, None))
                    bars.append((f"{name}: {k} vs {wl.label(a)}", r, lim, met))
    if not bars:
        return False
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(bars) + 1.5))
    ys = list(range(len(bars)))[::-1]
    colors = ["#999999" if lim is None else ("#2a9d4b" if met else "#d0453a")
              for _, _, lim, met in bars]
    ax.barh(ys, [b[1] for b in bars], color=colors, height=0.7)
    for y, (_, r, lim, _) in zip(ys, bars):
        if lim is not None:
            ax.plot([lim, lim], [y - 0.45, y + 0.45], color="black", lw=2)
        ax.text(r * 1.05, y, fmt_r(r), va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1.0, color="#444444", lw=0.8, ls="--")
    ax.set_xlabel("zerax / anchor, median of per-round ratios (< 1: zerax faster or smaller)\n"
                  "black tick: target; green: met, red: missed, grey: no target")
    ax.set_title("zerax against its anchors")
    lo = min(b[1] for b in bars)
    hi = max(max(b[1] for b in bars), max((b[2] or 0) for b in bars))
    ax.set_xlim(lo / 2, hi * 3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


# --------------------------------------------------------------------------------------

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated workload keys: " + ", ".join(REGISTRY))
    p.add_argument("--rounds", type=int, help="rounds per case (default: per workload)")
    p.add_argument("--min-sample", type=float, default=0.1,
                   help="minimum seconds per sample (default 0.1)")
    p.add_argument("--warmup", type=float, default=0.2,
                   help="warm-up seconds per contender and case (default 0.2)")
    p.add_argument("--budget", type=float, default=8 * 60,
                   help="after this many seconds remaining cases run 3 rounds")
    p.add_argument("--no-profile", dest="profile", action="store_false")
    p.add_argument("--no-docs", dest="docs", action="store_false",
                   help="print the tables, write nothing")
    p.add_argument("--out", default=os.path.join(ROOT, "docs"))
    p.add_argument("--load", type=int, default=0, metavar="N",
                   help="keep N busy processes running while measuring (default 0); "
                        "the results go to benchmarks_loadN.{md,png}")
    opts = p.parse_args(argv)
    if opts.load < 0:
        p.error("--load takes a number of busy processes, 0 or more")
    global RUN_CACHE_DIR
    RUN_CACHE_DIR = tempfile.mkdtemp(prefix="zerax-bench-cache-")
    import signal

    def _terminate(signum, frame):   # SIGTERM: stop like Ctrl-C, through the finally
        raise SystemExit(128 + signum)
    old = signal.signal(signal.SIGTERM, _terminate)
    try:
        with BackgroundLoad(opts.load):
            return _run(p, opts)
    finally:
        signal.signal(signal.SIGTERM, old)
        shutil.rmtree(RUN_CACHE_DIR, ignore_errors=True)


def _run(p, opts) -> int:
    opts.t0 = time.monotonic()
    opts.load_start = _loadavg()
    keys = opts.only.split(",") if opts.only else list(REGISTRY)
    unknown = [k for k in keys if k not in REGISTRY]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {list(REGISTRY)}")
    all_res = {}
    for key in keys:
        wl = REGISTRY[key]
        print(f"{wl.title}" + (f"  [zerax pending: {wl.pending}]" if wl.pending else ""),
              flush=True)
        t = time.monotonic()
        all_res[key] = run_workload(wl, opts)
        print(f"  ({time.monotonic() - t:.0f} s; {(time.monotonic() - opts.t0) / 60:.1f} min "
              "so far)", flush=True)
    total = time.monotonic() - opts.t0
    chart = None
    stem = f"benchmarks_load{opts.load}" if opts.load else "benchmarks"
    if opts.docs:
        os.makedirs(opts.out, exist_ok=True)
        if write_chart(os.path.join(opts.out, f"{stem}.png"), all_res):
            chart = f"{stem}.png"
        write_markdown(os.path.join(opts.out, f"{stem}.md"), all_res, total, chart, opts)
    print()
    print("\n".join(headline_rows(all_res)))
    print(target_counts(all_res))
    for key, res in all_res.items():
        print(f"\n{REGISTRY[key].title}")
        print("\n".join(workload_table(REGISTRY[key], res)))
    print(f"\nTotal: {total / 60:.1f} min" +
          (f"; wrote {os.path.join(opts.out, stem + '.md')}" if opts.docs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
