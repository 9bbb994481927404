"""Timings of automatic model parallelism (issue 31), run under mpiexec by
workloads_parallelism.py (and by hand):

    mpiexec -n 2 python benchmarks/parallel_probe.py tp HIDDEN ROUNDS   # tensor parallel
    python benchmarks/parallel_probe.py tp HIDDEN ROUNDS                # one process
    mpiexec -n 2 python benchmarks/parallel_probe.py plan BLOCKS ROUNDS # the planner

``tp`` trains a wide MLP (512 -> HIDDEN -> 512, float64, batch 64) with Adam: on several
processes, the Megatron plan (first weight split by columns, second by rows, the Adam
state split as its parameter), by placing the parameters with ``device_put`` and
calling the jitted step on them (partitioned as they are split); on one process, the
same jitted step whole.  Each sample is one step, started together on every process (a
barrier) and timed to the last process's end; it also reports the bytes of parameters
and optimiser state one process holds.  ``plan`` times the planner
(``jit(in_shardings="auto")``) on a BLOCKS-block transformer's training step, with
rates measured on the mesh: the search's seconds (``Plan.seconds``) per sample.
Process 0 prints one line ``PROBE {json}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "api"))

from mpi_probe import _timer  # noqa: E402  (a barrier, the call, the slowest process)

D_IN = D_OUT = 512
BATCH = 64


def _time(fn, comm):
    if comm is None:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    return _timer(comm)(fn)


def _held_bytes(tree) -> int:
    """The bytes of the arrays of ``tree`` this process holds."""
    import zerax as zx
    total = 0
    for leaf in zx.tree_util.tree_leaves(tree):
        if hasattr(leaf, "addressable_shards"):
            total += sum(np.asarray(s.data).nbytes for s in leaf.addressable_shards
                         if s.replica_id == 0 or leaf.is_fully_replicated)
    return total


def tp(hidden: int, rounds: int) -> dict:
    import zerax as zx
    import zerax.numpy as znp
    import zerax.optim as optim
    from zerax import distributed
    from zerax.sharding import Mesh, NamedSharding
    from zerax.sharding import PartitionSpec as P
    distributed.initialize()
    count = zx.process_count()
    rng = np.random.default_rng(31)
    params = {"w1": rng.standard_normal((D_IN, hidden)) / np.sqrt(D_IN),
              "b1": np.zeros(hidden),
              "w2": rng.standard_normal((hidden, D_OUT)) / np.sqrt(hidden),
              "b2": np.zeros(D_OUT)}
    x = rng.standard_normal((BATCH, D_IN))
    y = rng.standard_normal((BATCH, D_OUT))
    opt = optim.adam(1e-3)

    def loss(p, x, y):
        h = zx.nn.gelu(x @ p["w1"] + p["b1"])
        return znp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    @zx.jit
    def step(p, s, x, y):
        lval, g = zx.value_and_grad(loss)(p, x, y)
        updates, s = opt.update(g, s, p)
        return optim.apply_updates(p, updates), s, lval

    if count > 1:
        mesh = Mesh(np.array(zx.devices()), ("model",))
        shard = {"w1": NamedSharding(mesh, P(None, "model")),
                 "b1": NamedSharding(mesh, P("model")),
                 "w2": NamedSharding(mesh, P("model", None)), "b2": None}
        params = {k: v if shard[k] is None else zx.device_put(v, shard[k])
                  for k, v in params.items()}
    else:
        params = {k: znp.asarray(v) for k, v in params.items()}
    state = [params, opt.init(params)]
    if count > 1:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    else:
        comm = None
    out = step(state[0], state[1], x, y)          # compiled here
    state[:] = out[:2]

    def one():
        p, s, lval = step(state[0], state[1], x, y)
        float(lval)
        state[:] = [p, s]

    times = [_time(one, comm) for _ in range(rounds)]
    return {"zerax": times, "memory_bytes": _held_bytes(state)}


def plan(blocks: int, rounds: int) -> dict:
    from transformer_block import block_apply, block_params

    import zerax as zx
    import zerax.numpy as znp
    from zerax import distributed
    from zerax.sharding import Mesh
    distributed.initialize()
    mesh = Mesh(np.array(zx.devices()), ("model",))
    rng = np.random.default_rng(32)
    layers = [block_params(rng, heads=4, width=64)[0] for _ in range(blocks)]
    x = rng.standard_normal((2, 8, 64))

    def loss(ps, x):
        for p in ps:
            x = block_apply(zx, p, x, 4)
        return znp.mean(x ** 2)

    def step(ps, x):
        lval, g = zx.value_and_grad(loss)(ps, x)
        return zx.tree_util.tree_map(lambda a, b: a - 0.05 * b, ps, g), lval

    full = sum(a.nbytes for p in layers for a in p.values())
    times, last = [], None
    for _ in range(rounds):
        auto = zx.jit(step, in_shardings="auto", mesh=mesh, memory_limit=1.6 * full)
        last = auto.lower(layers, x).plan
        times.append(last.seconds)
    return {"zerax": times, "plans": last.n_plans, "method": last.method,
            "chosen": sorted({f"{n.split(']')[-2]}]: {s}" for n, s in
                              zip(last.names, map(str, last.specs))})}


def main():
    what, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = {"tp": tp, "plan": plan}[what](size, rounds)
    import zerax as zx
    if zx.process_index() == 0:
        print("PROBE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
