"""Rows of issue 28 ("real programs, first run"): the whole run of a real program in a
fresh process, zerax against JAX, from the process's start to its end.

A new user's first contact with a library is running a program once: the imports, the
set-up, every trace and compile, the training steps and the evaluation, with nothing
cached. Each program (benchmarks/first_run/) is written once from JAX's or Equinox's
documentation and takes the library as its argument; the zerax run is the same code with
its imports renamed (``import zerax as jax``, ``import zerax.nn as eqx``, ``import
zerax.optim as optax``, ...). Every sample is one fresh ``python PROGRAM.py zerax|jax``:
zerax with a new, empty ``ZERAX_CACHE_DIR``, JAX with its persistent compilation cache
off, both in JAX's default mode (``JAX_ENABLE_X64=0``, which zerax reads too; the ODE
program turns x64 on itself, as scientific code does). The time is the wall time from
starting the process to its exit; the extras split it into the imports (the program's
import lines, NumPy's included) and the program after them (setup, training,
evaluation; the interpreter's own start, ~20 ms, is in neither). The samples alternate
between the two libraries (one job, ``ROUNDS`` runs of each, shared by both contenders),
so a noisy machine weighs on both alike.

The programs:

- ``cnn``: Equinox's "CNN on MNIST" tutorial: Conv2d(1, 3, 4) - MaxPool2d(2) - relu -
  Linear(1728, 512) - sigmoid - Linear(512, 64) - relu - Linear(64, 10) - log_softmax,
  ``vmap`` over batches of 64 28x28 float32 images, cross-entropy through
  ``take_along_axis``, AdamW (optax), ``filter_jit``/``filter_value_and_grad``;
  120 steps with an evaluation (loss and ``argmax`` accuracy over a 1,000-image test
  set, whose last batch is smaller) every 40 steps and at the end.
- ``vae``: JAX's stax VAE example (examples/mnist_vae.py): its encoder, decoder and
  ELBO with the reparameterised sample, one epoch of 300 batches of 32 binarised images
  as a Python loop over a jitted update step (Adam from ``example_libraries.
  optimizers``, keys split per step), then its jitted evaluation (the test ELBO and a
  10x10 grid of sampled images).
- ``ode``: fitting the four parameters of the Lotka-Volterra equations to noisy
  observations: ``jit(value_and_grad(loss))`` of the squared log-error of
  ``experimental.ode.odeint``'s trajectory (60 times), 40 Adam steps (optax), float64.

``python benchmarks/workloads_first_run.py PROGRAM [ROUNDS]`` runs one job by hand and
prints its samples; ``... PROGRAM --profile`` runs zerax's program once under cProfile
with zerax's compile pieces timed (the text beside a missed target).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from registry import Case, Seconds, Target, shared_job, workload

ISSUE = "issue 28"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAM_DIR = os.path.join(HERE, "first_run")
PROGRAMS = {"cnn": "mnist_cnn.py", "vae": "mnist_vae.py", "ode": "ode_fit.py"}
LIBRARIES = {"zerax": "zerax", "jax_jit": "jax"}   # contender -> the program's argument
ROUNDS = 3
RUN_TIMEOUT_S = 300


def run_program(name: str, lib: str, profile: bool = False) -> dict:
    """One whole run of PROGRAM on LIB ("zerax" or "jax") in a fresh process with an
    empty zerax cache: the program's ``FIRST_RUN`` report plus ``wall_s``, the wall
    time from starting the process to its exit."""
    cache = tempfile.mkdtemp(prefix="zerax-first-run-")
    env = dict(os.environ, ZERAX_CACHE_DIR=cache, JAX_ENABLE_COMPILATION_CACHE="false",
               JAX_PLATFORMS="cpu", JAX_ENABLE_X64="0", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src")]
                                          + ([os.environ["PYTHONPATH"]]
                                             if os.environ.get("PYTHONPATH") else [])))
    env.pop("ZERAX_ENABLE_X64", None)     # (it would win over JAX_ENABLE_X64)
    cmd = [sys.executable, os.path.join(PROGRAM_DIR, PROGRAMS[name]), lib]
    if profile:
        cmd.append("--profile")
    try:
        t = time.perf_counter()
        done = subprocess.run(cmd, env=env, cwd=PROGRAM_DIR, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S * (3 if profile else 1), check=False)
        wall = time.perf_counter() - t
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("FIRST_RUN ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{' '.join(cmd[1:])} failed (exit {done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    res = json.loads(lines[-1][len("FIRST_RUN "):])
    res["wall_s"] = wall
    return res


def job(name: str, rounds: int = ROUNDS) -> dict:
    """``rounds`` runs of each library, alternating (which goes first alternates too):
    contender -> list of run reports."""
    runs: dict[str, list] = {c: [] for c in LIBRARIES}
    for r in range(rounds):
        for c in (list(LIBRARIES) if r % 2 == 0 else list(LIBRARIES)[::-1]):
            runs[c].append(run_program(name, LIBRARIES[c]))
    return runs


def _samples(runs):
    """A callable handing out the runs' wall times in turn (as Seconds)."""
    state = {"i": 0}

    def call():
        t = runs[state["i"] % len(runs)]["wall_s"]
        state["i"] += 1
        return Seconds(t)
    return call


def _extras(runs) -> dict:
    imports = statistics.median(r["phases"]["imports"] for r in runs)
    program = statistics.median(r["total"] - r["phases"]["imports"] for r in runs)
    return {"imports_s": round(imports, 2), "program_s": round(program, 2)}


def _setup(contender):
    def setup(case):
        runs = shared_job(f"first-run-{case}", lambda: job(case))[contender]
        return _samples(runs), _extras(runs)
    return setup


def _ms(s):
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def profile_text(name: str) -> str:
    """One zerax run of PROGRAM under ``--profile``: its phases, zerax's compile pieces
    and cProfile's top functions (the text beside a missed target)."""
    res = run_program(name, "zerax", profile=True)
    phases = ", ".join(f"{k} {_ms(v)}" for k, v in res["phases"].items())
    return (f"one zerax run of {PROGRAMS[name]} under cProfile (slower than unprofiled): "
            f"{_ms(res['wall_s'])} ({phases})\n{res['profile']}")


FIRST_RUN = workload(
    "first_run", "Real programs, first run: the whole run in a fresh process",
    cases=[Case("cnn", "Equinox's CNN tutorial: 120 AdamW steps (batch 64) + 4 "
                       "evaluations, float32", compare=False),
           Case("vae", "JAX's stax VAE example: first epoch (300 Adam steps, batch 32) + "
                       "its evaluation, float32", compare=False),
           Case("ode", "Lotka-Volterra fit: 40 Adam steps of jit(value_and_grad) through "
                       "odeint, float64", compare=False)],
    description=__doc__.split("\n\n")[1] + " " + __doc__.split("\n\n")[2],
    targets=[Target("jax_jit", 1.5, "whole run <= 1.5x JAX's", ISSUE)],
    rounds=ROUNDS,
    labels={"zerax": "zerax", "jax_jit": "JAX"},
    op_timeout_s=2 * ROUNDS * RUN_TIMEOUT_S + 60,
    miss_note="A whole run is the imports, the eager set-up (initialising the model and "
              "the optimiser), each jitted function's trace, lowering and LLVM compile "
              "(once per distinct argument shape, dtype and static value: a retrace per "
              "step multiplies them), the steps themselves, and the evaluation. The "
              "profile below is one zerax run of the program taken apart.",
)
for _contender in LIBRARIES:
    FIRST_RUN.contender(_contender, label=FIRST_RUN.labels[_contender])(_setup(_contender))


@FIRST_RUN.profiler
def _(case):
    return profile_text(case)


def _print_job(name: str, rounds: int) -> None:
    runs = job(name, rounds)
    for c, rs in runs.items():
        for r in rs:
            ph = " ".join(f"{k}={v:.2f}" for k, v in r["phases"].items())
            print(f"{name} {LIBRARIES[c]:5s} wall={r['wall_s']:.2f} {ph}  {r['results']}")
    z = [r["wall_s"] for r in runs["zerax"]]
    j = [r["wall_s"] for r in runs["jax_jit"]]
    print(f"{name}: zerax {statistics.median(z):.2f} s, JAX {statistics.median(j):.2f} s, "
          f"ratio {statistics.median(a / b for a, b in zip(z, j)):.2f}x")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] in PROGRAMS:
        if "--profile" in sys.argv:
            print(profile_text(sys.argv[1]))
        else:
            _print_job(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else ROUNDS)
    else:
        sys.exit(__doc__)
