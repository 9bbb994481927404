"""The programs test_distributed.py runs under ``mpiexec -n N``: each process checks its
results against NumPy (every process knows every process's input: a function of its
rank) and prints ``OK <rank>``; the fault programs fail on purpose.

    mpiexec -n 2 python tests/api/distributed_child.py collectives
    mpiexec -n 2 python tests/api/distributed_child.py fit DIR --stop-after 5
"""

import os
import signal
import sys
import time

import numpy as np


def _input(rank, shape=(2, 3)):
    """Process ``rank``'s operand: known to every process."""
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * (rank + 1) + rank


def collectives():
    import zerax as zx
    import zerax.lax as lax
    import zerax.numpy as znp
    from zerax import distributed, errors
    from zerax.sharding import Mesh, PartitionSpec as P

    distributed.initialize()
    r, n = zx.process_index(), zx.process_count()
    assert len(zx.devices()) == n and zx.local_devices()[0].process_index == r
    assert zx.local_devices()[0] is znp.ones(1).device
    xs = np.stack([_input(k) for k in range(n)])
    x = xs[r]
    ring = [(k, (k + 1) % n) for k in range(n)]

    def everything(v):
        return {
            "psum": lax.psum(v, "data"), "pmean": lax.pmean(v, "data"),
            "pmax": lax.pmax(v, "data"), "pmin": lax.pmin(v, "data"),
            "gather1": lax.all_gather(v, "data", axis=1),
            "gather_tiled": lax.all_gather(v, "data", tiled=True),
            "scatter": lax.psum_scatter(znp.tile(v[:1], (n, 1)), "data"),
            "ring": lax.ppermute(v, "data", ring),
            "first": lax.ppermute(v, "data", [(0, n - 1)]),
            "a2a": lax.all_to_all(znp.tile(v[:1], (n, 1)), "data", 0, 1),
            "index": lax.axis_index("data"), "size": lax.axis_size("data") + 0 * v[0, 0],
            "int": lax.psum(v.astype(np.int32), "data"),
            "bool": lax.psum(v > 3, "data"),
        }

    want = {
        "psum": xs.sum(0), "pmean": xs.mean(0), "pmax": xs.max(0), "pmin": xs.min(0),
        "gather1": np.stack(list(xs), axis=1), "gather_tiled": np.concatenate(list(xs)),
        "scatter": xs[:, 0].sum(0), "ring": xs[(r - 1) % n],
        "first": xs[0] if r == n - 1 else np.zeros_like(x),
        "a2a": np.stack([xs[k, 0] for k in range(n)], axis=1)[:, :],
        "index": r, "size": float(n), "int": xs.astype(np.int32).sum(0),
        "bool": (xs > 3).sum(0),
    }
    run = distributed.spmd(everything, axis_name="data")
    for name, got in [("eager", run(x)), ("jit", zx.jit(run)(x)),
                      ("spmd of jit", distributed.spmd(zx.jit(everything), "data")(x))]:
        for k, v in want.items():
            np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(v, np.float64),
                                       rtol=1e-12, err_msg=f"{name} {k}")
        assert got["int"].dtype == np.int32 and got["bool"].dtype == np.int32
        assert got["index"].dtype == np.int32
    # float16 and bfloat16 (which MPI has no arithmetic for) are reduced in float32 and
    # rounded once, eagerly and compiled
    for low in (np.float16, znp.bfloat16):
        want_low = xs.astype(low).astype(np.float32).sum(0).astype(low)
        for fn in (distributed.spmd(lambda v: lax.psum(v.astype(low), "data")),
                   zx.jit(distributed.spmd(lambda v: lax.psum(v.astype(low), "data")))):
            got_low = fn(x)
            assert got_low.dtype == np.dtype(low)
            np.testing.assert_array_equal(np.asarray(got_low).astype(np.float32),
                                          want_low.astype(np.float32))
    v = (np.array([1.0, 2.0]) if r else np.array([np.nan, 0.0])).astype(znp.bfloat16)
    out = zx.jit(distributed.spmd(lambda a: lax.pmax(a, "data")))(v)
    assert np.isnan(np.asarray(out, np.float32)[0]) and float(out[1]) == 2.0, out

    # NaN wins in pmax/pmin, as in the vmap reduction
    v = np.array([1.0, 2.0]) if r else np.array([np.nan, 0.0])
    out = distributed.spmd(lambda a: lax.pmax(a, "data"))(v)
    assert np.isnan(out[0]) and out[1] == 2.0, out

    # derivatives: the transpose of a cross-process psum is a cross-process psum
    def loss(v):
        return znp.sum(znp.sin(lax.psum(v, "data")) * (r + 1) + lax.all_gather(v, "data")[0])

    want_grad = np.cos(xs.sum(0)) * sum(k + 1 for k in range(n)) + (n if r == 0 else 0)
    for g in (distributed.spmd(zx.grad(loss)), zx.jit(distributed.spmd(zx.grad(loss))),
              distributed.spmd(zx.grad(zx.jit(loss)))):
        np.testing.assert_allclose(g(x), want_grad, rtol=1e-12)
    perm_loss = lambda v: znp.sum(lax.ppermute(v, "data", ring) * _input(r))  # noqa: E731
    np.testing.assert_allclose(distributed.spmd(zx.grad(perm_loss))(x), _input((r + 1) % n))

    # loops, branches and nested jit whose bodies call MPI (host calls in the kernel)
    def loops(v):
        c, ys = lax.scan(lambda c, t: (c + lax.psum(c * t, "data"), lax.psum(c * c, "data")),
                         v, np.arange(1.0, 4.0))
        w = lax.while_loop(lambda a: a[0, 0] < 100.0, lambda a: a + lax.psum(a, "data"),
                           v + 1.0)
        b = lax.cond(v[0, 0] > -1, lambda a: lax.all_gather(a, "data").sum(0), lambda a: a, v)
        return c, ys, w, b, zx.jit(lambda a: lax.pmean(a, "data"))(v)

    eager = distributed.spmd(loops)(x)
    # the kernel IR carries them: the MPI calls are host calls in the loops' kernel
    from zerax._src.backends.lowering import covers
    for prog in (run, distributed.spmd(loops)):
        assert covers(zx.make_jaxpr(prog)(x).jaxpr) is None
    assert "host#" in zx.jit(distributed.spmd(loops)).lower(x).as_text()
    for got, want in zip(zx.jit(distributed.spmd(loops))(x), eager):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(eager[3], xs.sum(0), rtol=1e-13)
    carry = distributed.spmd(zx.grad(lambda v: znp.sum(loops(v)[0])))
    np.testing.assert_allclose(zx.jit(carry)(x), carry(x), rtol=1e-12)

    # a vmap inside the processes: tuples of a process axis and a vmap axis
    batch = np.stack([x, 2 * x])       # each process: 2 members along "i"
    both = distributed.spmd(zx.vmap(lambda b: (lax.psum(b, ("data", "i")),
                                               lax.all_gather(b, ("data", "i")),
                                               lax.axis_index(("data", "i"))),
                                    axis_name="i"))
    s, g, idx = both(batch)
    np.testing.assert_allclose(s[0], 3 * xs.sum(0), rtol=1e-12)
    np.testing.assert_allclose(g[1], np.stack([m * xs[k] for k in range(n) for m in (1, 2)]))
    np.testing.assert_array_equal(idx, [2 * r, 2 * r + 1])

    # shard_map over a mesh of the processes, then processes x 2 local devices
    glob = np.arange(4.0 * n * 3).reshape(4 * n, 3)
    mesh = Mesh(np.array(zx.devices()), ("data",))
    f = zx.shard_map(lambda b: b - lax.pmean(b.mean(0), "data"), mesh=mesh,
                     in_specs=P("data"), out_specs=P("data"))
    np.testing.assert_allclose(f(glob), glob - glob.mean(0), rtol=1e-12)
    np.testing.assert_allclose(zx.jit(f)(glob), glob - glob.mean(0), rtol=1e-12)
    zx.config.update("num_cpu_devices", 2)
    mesh2 = zx.make_mesh((n, 2), ("data", "model"))
    mm = zx.shard_map(lambda a, w: lax.psum(a @ w, "model"), mesh=mesh2,
                      in_specs=(P("data", "model"), P("model", None)), out_specs=P("data"))
    a, w = glob.reshape(4 * n, 3)[:, :2], np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(mm(a, w), a @ w, rtol=1e-12)
    tot = zx.shard_map(lambda b: lax.psum(b, ("data", "model")), mesh=mesh2,
                       in_specs=P(("data", "model")), out_specs=P())
    np.testing.assert_allclose(tot(glob), glob.reshape(2 * n, -1, 3).sum(0), rtol=1e-12)
    zx.config.update("num_cpu_devices", 1)
    if n == 4:   # a 2 x 2 grid of processes: sub-communicators per axis, row-major
        grid = Mesh(np.array(zx.devices()).reshape(2, 2), ("a", "b"))
        g4 = np.arange(16.0).reshape(4, 4)
        per = zx.shard_map(lambda blk: (lax.psum(blk, "a"), lax.psum(blk, "b"),
                                        lax.all_gather(blk, ("b", "a"), tiled=True)),
                           mesh=grid, in_specs=P("a", "b"), out_specs=(P(None, "b"),
                                                                        P("a", None), P()))
        sa, sb, gathered = per(g4)
        blocks = g4.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3)   # [a, b] -> 2x2 block
        np.testing.assert_array_equal(sa, np.concatenate(list(blocks.sum(0)), axis=1))
        np.testing.assert_array_equal(sb, np.concatenate(list(blocks.sum(1)), axis=0))
        np.testing.assert_array_equal(
            gathered, np.concatenate([blocks[a, b] for b in range(2) for a in range(2)]))

    # utilities
    b = distributed.broadcast({"w": x, "f": np.tanh}, root=n - 1)
    np.testing.assert_array_equal(b["w"], xs[n - 1])
    assert b["f"] is np.tanh
    np.testing.assert_array_equal(distributed.process_allgather(x), xs)
    np.testing.assert_array_equal(distributed.process_allgather(x, tiled=True),
                                  np.concatenate(list(xs)))

    # a collective whose operands differ: every process raises, and the job goes on
    try:
        distributed.spmd(lambda v: lax.psum(v, "data"))(np.ones(2 + r))
    except errors.CollectiveMismatchError as e:
        assert "process 0: psum over 'data' of float64[2]" in str(e), str(e)
    else:
        raise AssertionError("no CollectiveMismatchError")
    np.testing.assert_allclose(run(x)["psum"], xs.sum(0))
    shared_sums(r, n)
    distributed.barrier()
    print(f"OK {r}", flush=True)


def _rank_order_sum(values):
    """The sum of ``values`` added in rank order (the order of a sum in shared memory)."""
    total = values[0].copy()
    for v in values[1:]:
        total = total + v
    return total


def shared_sums(r, n):
    """psum of messages from 64 KiB over the processes of this machine goes through a
    shared-memory window: in a compiled program the operands are computed into this
    process's slot and the result is summed where it is read (process_sums.py)."""
    import zerax as zx
    import zerax.lax as lax
    import zerax.numpy as znp
    from zerax import distributed, errors
    from zerax._src.api.distributed import world_mesh
    from zerax._src.backends.mpi import transport

    shape = (96, 128)                   # 96 KiB of float64 per process
    xs = np.stack([_input(k, shape) for k in range(n)])
    x = xs[r]
    m = np.linspace(-1.0, 1.0, 128 * 4).reshape(128, 4)

    def prog(v):
        a = lax.psum(v * 2.0, "data")                   # computed into the slot, read fused
        b = lax.psum(v, "data")                          # an input: copied into the slot
        c, d = lax.psum(((v * 0.5).astype(np.float32), v.astype(np.int64)), "data")
        return a - 1.0, b @ m, c, d, a                   # b read by a product, a an output

    want = (_rank_order_sum(2.0 * xs) - 1.0, _rank_order_sum(xs) @ m,
            _rank_order_sum((0.5 * xs).astype(np.float32)),
            _rank_order_sum(xs.astype(np.int64)), _rank_order_sum(2.0 * xs))
    step = distributed.spmd(prog)
    jitted = zx.jit(step)
    text = jitted.lower(x).as_text()
    assert "exchange psum" in text and "bind psum" in text and "= sum(" in text, text
    eager = step(x)
    for k, (w, e, got) in enumerate(zip(want, eager, jitted(x))):
        assert got.dtype == w.dtype, (k, got.dtype)
        np.testing.assert_array_equal(e, w, err_msg=f"eager {k}")
        np.testing.assert_array_equal(got, e, err_msg=f"jit {k}")   # jit equals eager
    # a larger program grows the window; the first one runs in the new one after
    big = np.tile(x, (4, 1))
    wide = zx.jit(distributed.spmd(lambda v: lax.psum(v * 3.0, "data") + 1.0))
    np.testing.assert_array_equal(wide(big), _rank_order_sum(3.0 * np.tile(xs, (1, 4, 1))) + 1)
    np.testing.assert_array_equal(jitted(x)[0], want[0])
    # beside a shared sum: an eager one in a loop body (a host call, through the eager
    # slots), a large pmax, a sum read twice and by a fused reduction, and an update in
    # place of an operand after its sum (never into the slot the others read)
    def mixed(v):
        t = lax.psum(v * 2.0, "data")
        c, _ = lax.scan(lambda c, k: (c + lax.psum(c * k, "data"), None), v, np.arange(2.0))
        g = v * 5.0
        s = lax.psum(g, "data")
        return (t * t + t, znp.sum(t * 3.0, axis=1), c, lax.pmax(v, "data"),
                g.at[0, 0].set(7.0), s)

    tot = _rank_order_sum(2.0 * xs)
    c = xs.copy()
    for k in range(2):
        c = c + (k * c).sum(0)
    want_mixed = (tot * tot + tot, (tot * 3.0).sum(1), c[r], xs.max(0),
                  np.where(np.arange(x.size).reshape(shape) == 0, 7.0, 5.0 * x),
                  _rank_order_sum(5.0 * xs))
    mixed_jit = zx.jit(distributed.spmd(mixed))
    assert mixed_jit.lower(x).as_text().count("exchange psum") == 2
    for k, (got, w) in enumerate(zip(mixed_jit(x), want_mixed)):
        np.testing.assert_allclose(got, w, rtol=1e-13, err_msg=f"mixed {k}")
    # without room in the machine's shared memory, the slots are gathered (Allgather)
    comm = world_mesh().communicator((0,))
    kinds = ("_slots", "_program_slots")
    assert all(type(getattr(comm, a)) is transport.SharedSlots for a in kinds)
    free, transport._shared_memory_free = transport._shared_memory_free, lambda: 0
    try:
        for a in kinds:
            getattr(comm, a).free()
            setattr(comm, a, None)
        for got, w in zip(jitted(x), want):
            np.testing.assert_array_equal(got, w)
        np.testing.assert_array_equal(step(x)[1], want[1])
        assert all(type(getattr(comm, a)) is transport.GatheredSlots for a in kinds)
    finally:
        transport._shared_memory_free = free
        for a in kinds:
            getattr(comm, a).free()
            setattr(comm, a, None)
    # a compiled sum whose shapes differ between processes: every process raises
    try:
        zx.jit(distributed.spmd(lambda v: lax.psum(v * 2.0, "data")))(np.ones(9000 + r))
    except errors.CollectiveMismatchError as e:
        assert "process 0: the sums in shared memory of a compiled program: psum over " \
               "'data' of f64[9000]" in str(e), str(e)
    else:
        raise AssertionError("no CollectiveMismatchError")
    np.testing.assert_array_equal(jitted(x)[3], want[3])


def fault(kind):
    import zerax as zx
    import zerax.lax as lax
    from zerax import distributed

    distributed.initialize()
    r = zx.process_index()
    total = distributed.spmd(lambda v: lax.psum(v, "data"))
    total(np.ones(3))
    if kind == "raise" and r == 1:
        time.sleep(0.5)
        raise ZeroDivisionError("process 1 divides by zero")
    if kind == "kill" and r == 1:
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "mismatch":
        total(np.ones(3 + r))
    total(np.ones(3))      # the others wait here
    print(f"not reached {r}", flush=True)


def fit(directory, stop_after, epochs, out, jit=False):
    """Data-parallel training of a small model with dropout, checkpointed by process 0
    every 2 steps; stops (as a crash would) after ``stop_after`` steps, or resumes from
    the directory's last checkpoint and saves the final parameters to ``out``."""
    import zerax as zx
    import zerax.nn as nn
    import zerax.optim as optim
    import zerax.random as zr
    from zerax import distributed, io, train

    distributed.initialize()
    model, loader = fit_problem()
    manager = io.CheckpointManager(directory, durable=False)

    class Stop(Exception):
        pass

    class StopAt(train.Callback):
        def on_batch_end(self, step, logs):
            if stop_after and step == stop_after:
                raise Stop

    try:
        model, _, history = train.fit(
            model, optim.adam(1e-2), train.losses.cross_entropy, loader, epochs=epochs,
            metrics=["accuracy"], key=zr.key(7), progress=False, jit=jit,
            distributed=True, resume=manager,
            callbacks=[train.Checkpoint(manager, every_n_steps=2), StopAt()])
    except Stop:
        print(f"STOPPED {zx.process_index()}", flush=True)
        return
    if zx.process_index() == 0 and out:
        io.save(out, {"params": nn.filter(model, nn.is_inexact_array),
                      "loss": np.asarray(history.history["loss"])})
    print(f"OK {zx.process_index()}", flush=True)


def fit_problem():
    """The model and the global-batch loader of the fit program (also used in-process
    for the reference run)."""
    import zerax.nn as nn
    import zerax.numpy as znp
    import zerax.random as zr
    from zerax import data

    rng = np.random.default_rng(3)
    x = rng.normal(size=(48, 6))
    y = (x[:, 0] > 0).astype(np.int32) + 2 * (x[:, 1] > 0).astype(np.int32)
    k1, k2 = zr.split(zr.key(0))
    model = nn.Sequential([nn.Linear(6, 16, dtype=np.float64, key=k1), nn.Lambda(znp.tanh),
                           nn.Dropout(0.25), nn.Linear(16, 4, dtype=np.float64, key=k2)])
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8, shuffle=True, seed=1,
                             prefetch=0)
    return model, loader


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    what = sys.argv[1]
    if what == "collectives":
        collectives()
    elif what in ("raise", "kill", "mismatch"):
        fault(what)
    elif what == "fit":
        args = sys.argv[2:]
        fit(args[0], int(args[1]), int(args[2]), args[3] if len(args) > 3 else None,
            jit="--jit" in args)
    else:
        raise SystemExit(f"unknown program {what!r}")
