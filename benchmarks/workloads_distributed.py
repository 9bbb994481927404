"""Rows of issue 30 (zerax.distributed): collectives across processes over MPI, a
data-parallel training step, and a named-axis psum in one process against JAX.

The multi-process rows are self-timed (``registry.Seconds``): the contender's setup runs
one ``mpiexec -n 2`` job of ``mpi_probe.py`` (one thread per process), which times
``ROUNDS`` calls, each started together on every process (a barrier) and ended by the
last one; the timed callable hands those samples out in turn.  The psum row's two
contenders read one job, which alternates them.  Both processes of a job
share the machine with whatever else runs on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from registry import Case, Seconds, Target, shared_job, workload

ISSUE_DIST = "issue 30"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUNDS = 15
PSUM_N = 10 ** 7
DP_BATCH = 256          # the global batch of the data-parallel step
VMAP_SHAPE = (16, 100_000)


def _probe(n_processes: int, *args, script: str = "mpi_probe.py") -> dict:
    """Run ``script`` (default mpi_probe.py) on ``n_processes`` (0: one plain process)
    and read its JSON."""
    env = dict(os.environ, ZERAX_NUM_THREADS="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), HERE]))
    cmd = [sys.executable, os.path.join(HERE, script), *map(str, args)]
    if n_processes:
        mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
        cmd = [mpiexec if os.path.exists(mpiexec) else "mpiexec", "-n",
               str(n_processes)] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")


def _samples(times):
    """A callable returning the measured samples in turn (as Seconds)."""
    state = {"i": 0}

    def call():
        t = times[state["i"] % len(times)]
        state["i"] += 1
        return Seconds(t)
    return call


# --------------------------------------------------------------------------- psum over MPI

PSUM_MPI = workload(
    "psum_processes", "psum of 10^7 float64 across 2 processes",
    cases=[Case("main", "10^7 float64, mpiexec -n 2", compare=False)],
    description=f"`distributed.spmd(lambda v: lax.psum(v, 'data'))(x)` on {PSUM_N:,} "
                "float64 per process, eager, against mpi4py's `Allreduce` of the same "
                "buffer into a new array (`np.empty_like`: zerax's psum returns a new "
                "array too). Each sample is one call started by a barrier, timed to the "
                "last process; the two alternate in one `mpiexec -n 2` job (MPICH). "
                "The extras give mpi4py into a buffer allocated once.",
    targets=[Target("mpi4py", 1.1, "<= 1.1x a raw mpi4py Allreduce", ISSUE_DIST)],
    rounds=ROUNDS,
    labels={"mpi4py": "mpi4py Allreduce"},
    miss_note="zerax's psum is the same Allreduce plus one agreement check (an Allreduce "
              "of two integers that catches processes passing different shapes) and "
              "the Python of an eager primitive; on 80 MB both are small against the "
              "memory traffic, so a miss is noise of the shared machine: compare the "
              "samples side by side.",
)


def _psum_setup(name):
    def setup(case):
        times = shared_job("psum", lambda: _probe(2, "psum", PSUM_N, ROUNDS))
        extras = {}
        if name == "mpi4py":
            pre = sorted(times["mpi4py_preallocated"])
            extras["preallocated_ms"] = round(1e3 * pre[len(pre) // 2], 2)
        return _samples(times[name]), extras
    return setup


PSUM_MPI.contender("zerax")(_psum_setup("zerax"))
PSUM_MPI.contender("mpi4py", label="mpi4py Allreduce")(_psum_setup("mpi4py"))


# --------------------------------------------------------------------------- data parallel

DATA_PARALLEL = workload(
    "mlp_data_parallel", "Data-parallel MLP step, 2 processes vs 1",
    cases=[Case("main", f"784-512-512-10, global batch {DP_BATCH}", compare=False)],
    description="A training step of the `mlp_step` MLP (784-512-512-10, float64): "
                "`jit` of grad, `lax.pmean` of the gradients over the processes (in "
                "shared memory: the kernel computes the gradients into its slot of an "
                "MPI-3 window and the update adds both processes' slots as it reads), "
                f"an SGD update. zerax on 2 processes (`mpiexec -n 2`), each with "
                f"{DP_BATCH // 2} examples, against zerax on 1 process with the whole "
                f"global batch of {DP_BATCH}; one thread per process.",
    targets=[Target("zerax_1proc", 1 / 1.6, "speed-up >= 1.6x (<= 0.625x the time)",
                    ISSUE_DIST)],
    rounds=ROUNDS,
    labels={"zerax": "zerax, 2 processes", "zerax_1proc": "zerax, 1 process"},
    miss_note="Two processes of one thread each need two idle cores: on a machine "
              "whose other processes already take them, the two halves of the batch "
              "take turns with them and wait for each other at the sum, so the "
              "speed-up measures the machine's load more than the step.",
)


@DATA_PARALLEL.contender("zerax", label="zerax, 2 processes")
def _(case):
    return _samples(_probe(2, "mlp", DP_BATCH, ROUNDS)["zerax"])


@DATA_PARALLEL.contender("zerax_1proc", label="zerax, 1 process")
def _(case):
    return _samples(_probe(0, "mlp", DP_BATCH, ROUNDS)["zerax"])


# --------------------------------------------------------------------------- named axes

PSUM_VMAP = workload(
    "psum_vmap", "Named-axis psum under jit(vmap), one process",
    cases=[Case("main", f"{VMAP_SHAPE[0]} x {VMAP_SHAPE[1]:,} float64")],
    description=f"`jit(vmap(lambda v: v / lax.psum(v, 'i'), axis_name='i'))` of a "
                f"{VMAP_SHAPE} float64 array: the batching rule turns the psum into a "
                "reduction over the mapped axis, fused with the division.",
    targets=[Target("jax_jit", 1.0, "<= 1.0x jax.jit", ISSUE_DIST)],
    rounds=9,
)


def _vmap_data():
    import numpy as np
    return np.random.default_rng(30).standard_normal(VMAP_SHAPE)


@PSUM_VMAP.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.lax as lax
    import zerax.numpy as znp
    f = zx.jit(zx.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i"))
    x = znp.asarray(_vmap_data())
    return lambda: f(x)


@PSUM_VMAP.contender("jax_jit")
def _(case):
    from workloads import _jax, _ready
    jax = _jax()
    import jax.numpy as jnp
    f = _ready(jax, jax.jit(jax.vmap(lambda v: v / jax.lax.psum(v, "i"), axis_name="i")))
    x = jnp.asarray(_vmap_data())
    return lambda: f(x)
