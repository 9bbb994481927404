"""Tensor-parallel training of a wide MLP on several processes, and the plan the planner
chooses for it.

    mpiexec -n 2 python examples/tensor_parallel.py [--steps 20] [--hidden 1024]
    python examples/tensor_parallel.py                 # the same run on one process

The parameters are split over a mesh of the processes as Megatron-LM splits them: the
first weight by columns (each process computes its share of the hidden units), the
second by rows (each process's partial products meet in one all-reduce); ``device_put``
leaves each process its part, and the Adam state made from them is split the same way.
``jit`` then partitions the training step as its arguments are split: each process
holds and updates half of everything.  The script prints this process's program (with
its one ``psum`` of the forward pass), trains, and checks the result against the same
training on one process, whole (float64: equal to 1e-12).  Last, it asks the planner
(``in_shardings="auto"``) for a plan under a memory limit that one process cannot meet,
and prints what it chose and why.
"""

from __future__ import annotations

import argparse

import numpy as np

import zerax as zx
import zerax.numpy as znp
import zerax.optim as optim
from zerax import distributed
from zerax.sharding import Mesh, NamedSharding
from zerax.sharding import PartitionSpec as P


def loss(params, x, y):
    h = zx.nn.gelu(x @ params["w1"] + params["b1"])
    return znp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def make_step(opt):
    def step(params, state, x, y):
        value, grads = zx.value_and_grad(loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, value
    return step


def problem(hidden, batch=32, d=64, seed=0):
    rng = np.random.default_rng(seed)
    params = {"w1": rng.standard_normal((d, hidden)) / np.sqrt(d), "b1": np.zeros(hidden),
              "w2": rng.standard_normal((hidden, d)) / np.sqrt(hidden), "b2": np.zeros(d)}
    x = rng.standard_normal((batch, d))
    return params, x, np.sin(x @ rng.standard_normal((d, d)) / 4)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args(argv)

    distributed.initialize()
    rank = zx.process_index()
    say = print if rank == 0 else (lambda *a, **k: None)
    mesh = Mesh(np.array(zx.devices()), ("model",))
    params, x, y = problem(args.hidden)
    opt = optim.adam(1e-3)
    step = zx.jit(make_step(opt))

    # the Megatron plan: each process keeps its columns of w1 (and b1), its rows of w2
    shardings = {"w1": NamedSharding(mesh, P(None, "model")),
                 "b1": NamedSharding(mesh, P("model")),
                 "w2": NamedSharding(mesh, P("model", None)), "b2": None}
    split = {k: v if shardings[k] is None else zx.device_put(v, shardings[k])
             for k, v in params.items()}
    state = opt.init(split)
    text = step.lower(split, state, x, y).as_text()
    forward = zx.jit(lambda p, x: zx.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])
    say(forward.lower(split, x).as_text())
    say(f"the training step: {text.count('= psum[')} psum(s), "
        f"{text.count('= all_gather[')} all_gather(s)")
    for k in range(args.steps):
        split, state, value = step(split, state, x, y)
        if k % 5 == 0 or k == args.steps - 1:
            say(f"step {k}: loss {float(value):.6f}")

    # the same training on one process, whole
    whole, whole_state = params, opt.init(params)
    for _ in range(args.steps):
        whole, whole_state, _ = step(whole, whole_state, x, y)
    for k in params:   # (the split parameters gathered whole: a collective)
        got = split[k] if split[k].is_fully_addressable else \
            distributed.process_allgather(split[k])
        np.testing.assert_allclose(np.asarray(got), np.asarray(whole[k]),
                                   rtol=1e-12, atol=1e-12, err_msg=k)
    held = sum(sh.data.nbytes for v in split.values() for sh in v.addressable_shards)
    say(f"the parameters after {args.steps} steps: matches one process (1e-12); this "
        f"process holds {held / 1e6:.2f} MB of the {sum(v.nbytes for v in params.values()) / 1e6:.2f} MB")

    # the planner, under a memory limit one process cannot meet
    def sgd_step(p, x, y):
        return zx.tree_util.tree_map(lambda a, g: a - 1e-2 * g, p, zx.grad(loss)(p, x, y))
    if zx.process_count() > 1:
        limit = 1.6 * sum(v.nbytes for v in params.values())
        planned = zx.jit(sgd_step, in_shardings="auto", mesh=mesh, memory_limit=limit)
        say(planned.lower(params, x, y).sharding_plan())
    else:
        say("(the planner's part needs several processes to split over: mpiexec -n 2)")
    distributed.shutdown()


if __name__ == "__main__":
    main()
