"""Timings of zerax.distributed on several processes, run under mpiexec by
workloads_distributed.py (and by hand):

    mpiexec -n 2 python benchmarks/mpi_probe.py psum N ROUNDS
    mpiexec -n 2 python benchmarks/mpi_probe.py mlp GLOBAL_BATCH ROUNDS
    python benchmarks/mpi_probe.py mlp GLOBAL_BATCH ROUNDS        # the one-process baseline

Each sample is one call, started together on every process (a barrier) and timed to
the last process's end (the maximum over processes).  ``psum`` alternates zerax's psum
of N float64 (eager: the Array it returns is a new array) with mpi4py's Allreduce of
the same buffer into a new array (``np.empty_like``, as zerax must) and into a buffer
allocated once.  ``mlp`` times a data-parallel training step of the MLP of the
``mlp_step`` workload: each process takes GLOBAL_BATCH / processes examples, computes
its gradient, and ``lax.pmean`` (in shared memory, inside the compiled kernel) averages
them before the SGD update.  Process 0 prints one line ``PROBE {json}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _timer(comm):
    def timed(fn):
        comm.Barrier()
        t = time.perf_counter()
        fn()
        dt = np.array([time.perf_counter() - t])
        out = np.empty(1)
        comm.Allreduce(dt, out, op=_mpi().MAX)
        return float(out[0])
    return timed


def _mpi():
    from mpi4py import MPI
    return MPI


def psum(n: int, rounds: int) -> dict:
    import zerax.lax as lax
    import zerax.numpy as znp
    from zerax import distributed
    distributed.initialize()
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    x_np = np.random.default_rng(comm.Get_rank()).standard_normal(n)
    x = znp.asarray(x_np)
    f = distributed.spmd(lambda v: lax.psum(v, "data"), axis_name="data")
    fixed = np.empty_like(x_np)

    def raw_new():
        out = np.empty_like(x_np)
        comm.Allreduce(x_np, out, op=MPI.SUM)

    def raw_fixed():
        comm.Allreduce(x_np, fixed, op=MPI.SUM)

    timed = _timer(comm)
    check = np.asarray(f(x))
    raw_fixed()
    assert np.allclose(check, fixed)
    times = {"zerax": [], "mpi4py": [], "mpi4py_preallocated": []}
    for _ in range(rounds):
        times["zerax"].append(timed(lambda: f(x)))
        times["mpi4py"].append(timed(raw_new))
        times["mpi4py_preallocated"].append(timed(raw_fixed))
    return times


def mlp(batch: int, rounds: int) -> dict:
    import zerax as zx
    import zerax.lax as lax
    import zerax.numpy as znp
    from zerax import distributed
    import workloads
    from zerax.scipy.special import logsumexp
    distributed.initialize()
    rank, count = zx.process_index(), zx.process_count()
    params, x, y = workloads._mlp_data(None)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((batch, x.shape[1]))
    y = rng.integers(0, params[-1][0].shape[1], batch)
    part = slice(rank * batch // count, (rank + 1) * batch // count)
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    loss = workloads._mlp_loss(znp, logsumexp, zx.nn.relu)

    @zx.jit
    def step(params, x, y):
        grads = lax.pmean(zx.grad(loss)(params, x, y), "data")
        return zx.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    step = distributed.spmd(step, axis_name="data")
    xs, ys = znp.asarray(x[part]), znp.asarray(y[part])
    state = [step(params, xs, ys)]      # compiled here

    def one():
        state[0] = step(state[0], xs, ys)

    comm = _mpi().COMM_WORLD if count > 1 else None
    times = []
    for _ in range(rounds):
        if comm is None:
            t = time.perf_counter()
            one()
            times.append(time.perf_counter() - t)
        else:
            times.append(_timer(comm)(one))
    return {"zerax": times}


def main():
    what, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = {"psum": psum, "mlp": mlp}[what](size, rounds)
    import zerax as zx
    if zx.process_index() == 0:
        print("PROBE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
