"""Data-parallel training of the digits MLP on several processes, over MPI.

    mpiexec -n 4 python examples/data_parallel.py [--epochs 3] [--batch 64] [--out FILE]
    python examples/data_parallel.py                  # the same run on one process

Each of the 4 processes reads every 4th example of each global batch of 64 (a
``DataLoader.shard`` of the shared shuffled order), computes the gradient of the mean
loss on its 16 examples, and ``lax.pmean`` over the processes (inside the compiled
step: summed in shared memory when the processes share a machine, else an MPI
Allreduce) turns them into the gradient of the whole batch; every process
then takes the same Adam step.  So the run ends with the parameters of one process
trained on the global batches: in float64 they agree to 1e-12 (the sums are added in
another order), which ``tests/api/test_distributed.py`` checks by running this script
on 4 processes and on 1 and comparing the ``--out`` files.

The step is written by hand here (what ``train.fit(..., distributed=True)`` does for
you): ``distributed.spmd`` binds the axis ``"data"`` to the processes, and
``distributed.broadcast`` gives every process process 0's initial parameters.  On a
cluster, run it with the cluster's launcher (``srun``, or its ``mpiexec``) and an
mpi4py built against its MPI.
"""

from __future__ import annotations

import argparse

import numpy as np

import zerax as zx
import zerax.lax as lax
import zerax.nn as nn
import zerax.optim as optim
import zerax.random as zr
from zerax import data, distributed, io, train

N_TRAIN = 1408   # of the 1,437 training digits: 22 global batches of 64 (one step shape)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="global batch size")
    parser.add_argument("--out", default=None, help="save the final parameters here")
    args = parser.parse_args(argv)

    distributed.initialize()
    rank, count = zx.process_index(), zx.process_count()

    (x, y), (x_test, y_test) = data.datasets.digits()
    x, y = x[:N_TRAIN].astype(np.float64), y[:N_TRAIN]
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=args.batch, shuffle=True,
                             seed=0, prefetch=0)
    part = loader.shard(rank, count, split_batch=True)   # this process's examples

    model = nn.MLP(64, 10, width_size=64, depth=2, dtype=np.float64, key=zr.key(0))
    model = distributed.broadcast(model)                   # process 0's, everywhere
    opt = optim.adam(1e-2)
    opt_state = opt.init(nn.filter(model, nn.is_inexact_array))

    @nn.filter_jit          # jit of the model's arrays (its functions are static)
    def step(model, opt_state, xb, yb):
        def loss(m):
            return train.losses.cross_entropy(zx.vmap(m)(xb), yb)
        value, grads = nn.filter_value_and_grad(loss)(model)
        grads, value = lax.pmean((grads, value), "data")   # the global batch's gradient
        updates, opt_state = opt.update(grads, opt_state, nn.filter(model, nn.is_inexact_array))
        return nn.apply_updates(model, updates), opt_state, value

    step = distributed.spmd(step, axis_name="data")
    for epoch in range(args.epochs):
        part.set_epoch(epoch)
        losses = []
        for xb, yb in part:
            model, opt_state, value = step(model, opt_state, xb, yb)
            losses.append(float(value))
        if rank == 0:
            print(f"epoch {epoch + 1}: mean loss {np.mean(losses):.6f} "
                  f"({count} process{'es' if count > 1 else ''})", flush=True)
    accuracy = train.evaluate(model, None, (x_test, y_test), ["accuracy"],
                              jit=False)["accuracy"]
    if rank == 0:
        print(f"test accuracy {accuracy:.4f}")
        if args.out:
            io.save(args.out, nn.filter(model, nn.is_inexact_array))
    distributed.shutdown()


if __name__ == "__main__":
    main()
