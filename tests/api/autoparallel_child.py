"""The programs test_autoparallel.py runs under ``mpiexec -n N``: each process runs a
partitioned program and checks its result (gathered) against the single-process result
(float64, 1e-12), computed in the same process without partitioning; it prints
``OK <rank>`` at the end.

    mpiexec -n 2 python tests/api/autoparallel_child.py arrays DIR
    mpiexec -n 2 python tests/api/autoparallel_child.py models
"""

import os
import sys

import numpy as np

TOL = dict(rtol=1e-12, atol=1e-12)


def _setup():
    import zerax as zx
    from zerax import distributed
    distributed.initialize()
    return zx


def _whole(x):
    """The whole value of a (possibly split) array."""
    from zerax import distributed
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    return np.asarray(distributed.process_allgather(x))


def _close(got, want, what):
    import zerax as zx
    g, w = zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(want)
    assert len(g) == len(w), what
    for k, (a, b) in enumerate(zip(g, w)):
        np.testing.assert_allclose(_whole(a), np.asarray(b), err_msg=f"{what} leaf {k}", **TOL)


def arrays(directory):
    """Sharded arrays: placing, shards, eager operations and their gradient, gathering,
    checkpoints saved by every process (loaded in ``load`` on another mesh)."""
    zx = _setup()
    import zerax.numpy as znp
    from zerax import io
    from zerax.sharding import Mesh, NamedSharding
    from zerax.sharding import PartitionSpec as P
    r, n = zx.process_index(), zx.process_count()
    mesh = Mesh(np.array(zx.devices()), ("model",))
    x = np.arange(8.0 * n * 3).reshape(4 * n, 6) / 7
    s = zx.device_put(x, NamedSharding(mesh, P("model")))
    assert s.shape == x.shape and not s.is_fully_addressable
    (shard,) = s.addressable_shards
    assert shard.index == (slice(4 * r, 4 * r + 4), slice(0, 6)) and shard.replica_id == 0
    np.testing.assert_array_equal(shard.data, x[4 * r:4 * r + 4])
    np.testing.assert_array_equal(_whole(s), x)
    # eager operations run partitioned; a reduction over the split dimension is whole
    y = znp.tanh(s) * 2 + 1
    assert y.sharding.spec == P("model")
    np.testing.assert_allclose(_whole(y), np.tanh(x) * 2 + 1, **TOL)
    total = (s ** 2).sum()
    assert total.is_fully_addressable
    np.testing.assert_allclose(float(total), (x ** 2).sum(), **TOL)
    g = zx.grad(lambda a: (znp.sin(a) * a).sum())(s)
    np.testing.assert_allclose(_whole(g), np.cos(x) * x + np.sin(x), **TOL)
    # a replicated array is whole in every process
    rep = zx.device_put(x, NamedSharding(mesh, P()))
    np.testing.assert_array_equal(np.asarray(rep), x)
    # blocks from a callback
    c = zx.make_array_from_callback(x.shape, NamedSharding(mesh, P(None, "model")) if
                                    6 % n == 0 else NamedSharding(mesh, P("model")),
                                    lambda idx: x[idx])
    np.testing.assert_array_equal(_whole(c), x)
    # a checkpoint of split arrays, written by every process
    tree = {"w": s, "b": zx.device_put(np.arange(2.0 * n), NamedSharding(mesh, P("model"))),
            "step": 3, "whole": znp.ones(2)}
    io.save(os.path.join(directory, "ckpt.safetensors"), tree)
    back = io.load(os.path.join(directory, "ckpt.safetensors"),
                   shardings={"w": NamedSharding(mesh, P(None, "model")) if 6 % n == 0
                              else NamedSharding(mesh, P()), "b": None, "step": None,
                              "whole": None})
    np.testing.assert_array_equal(_whole(back["w"]), x)
    np.testing.assert_array_equal(np.asarray(back["b"]), np.arange(2.0 * n))
    assert back["step"] == 3
    print(f"OK {r}", flush=True)


def load(directory, n_saved):
    """The checkpoint ``arrays`` saved on ``n_saved`` processes, onto this job's mesh of
    another number of processes (and a 2-D mesh when it has four)."""
    zx = _setup()
    from zerax import io
    from zerax.sharding import Mesh, NamedSharding
    from zerax.sharding import PartitionSpec as P
    r, n = zx.process_index(), zx.process_count()
    m = int(n_saved)
    x = np.arange(8.0 * m * 3).reshape(4 * m, 6) / 7
    mesh = Mesh(np.array(zx.devices()), ("data",))
    back = io.load(os.path.join(directory, "ckpt.safetensors"),
                   shardings={"w": NamedSharding(mesh, P("data")), "b": None, "step": None,
                              "whole": None})
    (shard,) = back["w"].addressable_shards
    rows = 4 * m // n
    np.testing.assert_array_equal(np.asarray(shard.data), x[r * rows:(r + 1) * rows])
    np.testing.assert_array_equal(_whole(back["w"]), x)
    if n == 4:
        grid = Mesh(np.array(zx.devices()).reshape(2, 2), ("a", "b"))
        back = io.load(os.path.join(directory, "ckpt.safetensors"),
                       shardings={"w": NamedSharding(grid, P("b", "a")), "b": None,
                                  "step": None, "whole": None})
        np.testing.assert_array_equal(_whole(back["w"]), x)
    print(f"OK {r}", flush=True)


# --------------------------------------------------------------------------- models

def _mlp_problem(rng, d=8, h=32, o=4, b=8):
    params = {"w1": rng.normal(size=(d, h)) / 3, "b1": rng.normal(size=h) / 10,
              "w2": rng.normal(size=(h, o)) / 5, "b2": np.zeros(o)}
    return params, rng.normal(size=(b, d)), rng.normal(size=(b, o))


def _mlp_step(zx):
    import zerax.numpy as znp

    def loss(p, x, y):
        h = zx.nn.gelu(x @ p["w1"] + p["b1"])
        return znp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def step(p, x, y):
        lval, g = zx.value_and_grad(loss)(p, x, y)
        return zx.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), lval
    return step


def _count(text, prim):
    return sum(1 for line in text.splitlines() if f"= {prim}[" in line)


def models():
    """Data parallel, Megatron MLP, a transformer block with its heads split, a
    vocabulary-parallel embedding, each a training step against one process."""
    zx = _setup()
    from transformer_block import block_params, block_step, megatron_shardings

    import zerax.numpy as znp
    from zerax.sharding import Mesh, NamedSharding
    from zerax.sharding import PartitionSpec as P
    r, n = zx.process_index(), zx.process_count()
    rng = np.random.default_rng(0)
    step = _mlp_step(zx)
    params, x, y = _mlp_problem(rng, b=4 * n)
    with zx.disable_jit():
        want = step(params, x, y)
    # data parallel: the batch split, the parameters whole
    data = Mesh(np.array(zx.devices()), ("data",))
    dp = zx.jit(step, in_shardings=(None, NamedSharding(data, P("data")),
                                    NamedSharding(data, P("data"))))
    _close(dp(params, x, y), want, "data parallel")
    text = dp.lower(params, x, y).as_text()
    assert _count(text, "psum") >= 1 and "f64[4," in text, text
    # Megatron: w1 split by columns, w2 by rows: one all-reduce in the forward pass
    mesh = Mesh(np.array(zx.devices()), ("model",))
    col, row = NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None))
    shard = {"w1": col, "b1": NamedSharding(mesh, P("model")), "w2": row, "b2": None}
    mp = zx.jit(step, in_shardings=(shard, None, None), out_shardings=(shard, None))
    got = mp(params, x, y)
    _close(got, want, "megatron")
    assert got[0]["w1"].sharding.spec == P(None, "model")
    fwd = zx.jit(lambda p, x: zx.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                 in_shardings=(shard, None))
    assert _count(fwd.lower(params, x).as_text(), "psum") == 1
    # a transformer block, its heads split over the processes
    bp, bx = block_params(rng, heads=2 * n)
    bstep = block_step(zx, heads=2 * n)
    with zx.disable_jit():
        bwant = bstep(bp, bx)
    tb = zx.jit(bstep, in_shardings=(megatron_shardings(mesh), None))
    _close(tb(bp, bx), bwant, "transformer block")
    # a vocabulary-parallel embedding and its gradient
    table = rng.normal(size=(8 * n, 4))
    ids = np.array([[0, 3, 8 * n - 1, -1], [5, 7, 2, -8 * n]])

    def emb_step(t, i):
        lval, g = zx.value_and_grad(lambda t: (znp.tanh(t[i]) ** 2).sum())(t)
        return t - 0.5 * g, lval
    with zx.disable_jit():
        ewant = emb_step(table, ids)
    vocab = NamedSharding(mesh, P("model"))
    emb = zx.jit(emb_step, in_shardings=(vocab, None), out_shardings=(vocab, None))
    egot = emb(table, ids)
    _close(egot, ewant, "embedding")
    assert egot[0].sharding.spec == P("model")
    print(f"OK {r}", flush=True)


def planner():
    """The planner, under a memory limit one process cannot meet, finds the Megatron
    plan of a two-layer MLP, and for a transformer block a plan within 10% of the
    hand-written one (modelled costs, fixed rates); both give one process's result."""
    zx = _setup()
    from transformer_block import block_params, block_step, megatron_shardings

    from zerax.sharding import CostModel, Mesh
    r, n = zx.process_index(), zx.process_count()
    rng = np.random.default_rng(1)
    mesh = Mesh(np.array(zx.devices()), ("model",))
    rates = CostModel({"model": 30e-6}, {"model": 1e9}, flops=2e9, elements=5e8)
    step = _mlp_step(zx)
    params, x, y = _mlp_problem(rng, d=16, h=256, o=16, b=8)
    with zx.disable_jit():
        want = step(params, x, y)
    full = sum(a.nbytes for a in params.values())
    auto = zx.jit(step, in_shardings="auto", mesh=mesh, memory_limit=1.6 * full,
                  cost_model=rates)
    plan = auto.lower(params, x, y).plan
    chosen = dict(zip(plan.names, plan.specs))
    assert chosen["args[0]['w1']"] == ((), ("model",)), plan.describe()
    assert chosen["args[0]['w2']"] == (("model",), ()), plan.describe()
    assert "exact search" in plan.describe()
    _close(auto(params, x, y), want, "planned MLP")
    bp, bx = block_params(rng, heads=2 * n, width=32 * n)
    bstep = block_step(zx, heads=2 * n)
    with zx.disable_jit():
        bwant = bstep(bp, bx)
    bfull = sum(a.nbytes for a in bp.values())
    bauto = zx.jit(bstep, in_shardings="auto", mesh=mesh, memory_limit=1.6 * bfull,
                   cost_model=rates)
    bplan = bauto.lower(bp, bx).plan
    hand = zx.jit(bstep, in_shardings=(megatron_shardings(mesh), None))
    hand_cost = hand.lower(bp, bx).cost(rates)
    assert bplan.cost.time <= 1.1 * hand_cost.time, (bplan.describe(), hand_cost.describe())
    assert bplan.cost.memory <= 1.6 * bfull
    _close(bauto(bp, bx), bwant, "planned transformer block")
    if r == 0:
        print(bplan.describe())
    print(f"OK {r}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    {"arrays": arrays, "load": load, "models": models, "planner": planner}[sys.argv[1]](
        *sys.argv[2:])
