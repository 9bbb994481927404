"""The workload registry: what is measured, against whom, and with which target.

A workload has one or more *cases* (sizes, orders, ...) and one *setup function per
contender*. A setup function takes the case id and returns a zero-argument callable that
runs one call of the workload (blocking until the result is ready), or a pair
``(callable, extras)`` where ``extras`` is a dict of static numbers to report (for example
the IR size). Every import happens inside the setup function, so each contender's process
loads only its own library.

A workload whose ``zerax`` contender is not registered yet is *pending*: the anchors are
still measured and the table shows the reason (``needs``). Adding the zerax side later is one
function::

    @MLP_STEP.contender("zerax")
    def _(case):
        import zerax as zx
        ...
        return lambda: step(params, batch)

A callable may measure itself: if it returns a `Seconds`, that number is used as the
call's time instead of the wall time around it (for example a compile timed inside a
fresh process, without the process start and the imports).

A workload may also register a *profiler* (``@WL.profiler``): a function ``(case) ->
str`` run in the zerax contender's process when a target is missed; it times pieces of
the zerax side (the compiled kernels, a kernel without its transcendental functions,
the BLAS calls alone, ...) and its text goes into docs/benchmarks.md beside the miss.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

REGISTRY: dict[str, Workload] = {}

# Display names of contender ids (a workload may override one with `label=`).
LABELS = {
    "zerax": "zerax",
    "zerax_loop": "zerax, Python loop",
    "zerax_scan": "zerax scan",
    "autograd": "autograd",
    "jax": "JAX eager",
    "jax_jit": "jax.jit",
    "numpy": "NumPy by hand",
    "numba": "Numba by hand",
}


class Seconds(float):
    """The time of one call, measured by the call itself (see the module docstring)."""


# An ``extras`` entry (seconds) that marks a self-timed call stopped by its time limit:
# its time is a lower bound, shown as ">600 s" (and left out of the extras columns).
TIMED_OUT = "timed_out_s"


@dataclass(frozen=True)
class Case:
    id: str
    label: str
    compare: bool = True   # compare the contenders' results (checksum) for this case
    rounds: int | None = None  # overrides the workload's rounds


@dataclass(frozen=True)
class Target:
    """zerax / anchor must be at most ``limit`` (median of per-pair ratios)."""

    anchor: str
    limit: float
    text: str
    source: str
    cases: tuple[str, ...] | None = None   # None: every case of the workload
    metric: str = "time"                   # "time", or the name of an extras entry

    def applies(self, case_id: str) -> bool:
        return self.cases is None or case_id in self.cases


@dataclass
class Workload:
    key: str
    title: str
    cases: list[Case]
    needs: str | None = None        # why the zerax side is pending, until it is registered
    targets: list[Target] = field(default_factory=list)
    rounds: int = 7
    description: str = ""
    miss_note: str = ""             # what would close a missed target (shown when missed)
    contenders: dict[str, Callable] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    profile_zerax: Callable | None = None   # (case) -> text; see the module docstring
    op_timeout_s: float | None = None       # run.py's wait for one setup or sample

    def contender(self, name: str, label: str | None = None):
        """Register the setup function of contender ``name`` (a decorator)."""
        def register(setup):
            self.contenders[name] = setup
            if label:
                self.labels[name] = label
            return setup
        return register

    def profiler(self, fn):
        """Register the piece timer of the zerax side (a decorator)."""
        self.profile_zerax = fn
        return fn

    def label(self, name: str) -> str:
        return self.labels.get(name, LABELS.get(name, name))

    @property
    def pending(self) -> str | None:
        return None if "zerax" in self.contenders else (self.needs or "pending")

    def order(self) -> list[str]:
        """Contender ids, zerax first."""
        names = list(self.contenders)
        return sorted(names, key=lambda n: (n != "zerax", names.index(n)))


def workload(key, title, cases=None, **kw) -> Workload:
    w = Workload(key, title, cases or [Case("main", "")], **kw)
    REGISTRY[key] = w
    return w


def shared_job(key: str, run: Callable[[], object]):
    """``run()``'s JSON result, computed once per benchmark run for all the contenders
    of a workload (their workers are children of the same run.py): the first contender
    set up runs it, the next reads it. Contenders then report the interleaved samples of
    one job, not two jobs at different moments."""
    path = os.path.join(tempfile.gettempdir(), f"zerax-bench-{key}-{os.getppid()}.json")
    try:
        with open(path) as f:
            got = json.load(f)
        os.remove(path)       # (the second of the two contenders reads it)
        return got
    except (OSError, ValueError):
        got = run()
        with open(path, "w") as f:
            json.dump(got, f)
        return got
