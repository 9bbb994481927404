"""Automatic model parallelism (issue 31): ``jit`` with shardings, sharded arrays,
``with_sharding_constraint``, checkpoints of split arrays, and the planner, in this
process (meshes of its CPU devices) and across processes (``mpiexec -n 2`` and ``-n 4``
on this machine, autoparallel_child.py, each launch with a timeout): data parallel, a
Megatron MLP, a transformer block with its heads split, a vocabulary-parallel embedding,
the planner's plans, and examples/tensor_parallel.py, each against one process's result
(float64, 1e-12)."""

import json
import os

import numpy as np
import pytest
from test_distributed import launch, needs_mpi
from transformer_block import block_params, block_step, megatron_shardings

import zerax as zx
import zerax.lax as lax
import zerax.numpy as znp
from zerax import distributed, errors, io
from zerax.io import _safetensors as _st
from zerax.sharding import CostModel, NamedSharding
from zerax.sharding import PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHILD = os.path.join(HERE, "autoparallel_child.py")
TOL = dict(rtol=1e-12, atol=1e-12)
RATES = CostModel({"model": 30e-6}, {"model": 1e9}, flops=2e9, elements=5e8)


@pytest.fixture(scope="module", autouse=True)
def two_devices():
    old = zx.config.num_cpu_devices
    zx.config.update("jax_num_cpu_devices", 2)
    yield
    zx.config.update("num_cpu_devices", old)


@pytest.fixture(scope="module")
def mesh():
    return zx.make_mesh((2,), ("model",))


def _mlp(rng, d=6, h=16, o=3, b=8):
    return ({"w1": rng.normal(size=(d, h)) / 3, "b1": rng.normal(size=h) / 10,
             "w2": rng.normal(size=(h, o)) / 5}, rng.normal(size=(b, d)), rng.normal(size=(b, o)))


def _loss(p, x, y):
    return znp.mean((zx.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)


def _step(p, x, y):
    lval, g = zx.value_and_grad(_loss)(p, x, y)
    return zx.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), lval


def _close(got, want):
    for a, b in zip(zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL)


@pytest.fixture(scope="module")
def megatron_step(mesh):
    shard = {"w1": NamedSharding(mesh, P(None, "model")), "b1": NamedSharding(mesh, P("model")),
             "w2": NamedSharding(mesh, P("model"))}
    return shard, zx.jit(_step, in_shardings=(shard, None, None), out_shardings=(shard, None))


def test_jit_with_shardings_gives_one_process_result(mesh, megatron_step):
    shard, step = megatron_step
    params, x, y = _mlp(np.random.default_rng(0))
    got = step(params, x, y)
    _close(got, zx.jit(_step)(params, x, y))
    assert got[0]["w1"].sharding == shard["w1"] and got[0]["w2"].sharding.spec == P("model")
    assert isinstance(got[1], zx.Array) and got[1].is_fully_replicated
    text = step.lower(params, x, y).as_text()
    assert text.startswith("# _step: the program of process 0 of 1 over Mesh('model': 2)")
    assert "P('model'), P(None, 'model'), P('model', None), P(None, None)" in text, text
    # the outputs come back split: the next step takes them as they are
    again = step(*got[:1], x, y)
    _close(again, zx.jit(_step)(zx.jit(_step)(params, x, y)[0], x, y))
    # the lowered program compiled ahead of the call runs partitioned too
    _close(step.lower(params, x, y).compile()(params, x, y), got)
    # a plain jit partitions arguments that are split, as they are split
    plain = zx.jit(_step)(got[0], x, y)
    assert plain[0]["w1"].sharding.spec == P(None, "model")
    _close(plain, again)


def test_gradients_of_partitioned_programs(mesh, megatron_step):
    shard, _ = megatron_step
    params, x, y = _mlp(np.random.default_rng(1))
    want = zx.grad(_loss)(params, x, y)
    # grad inside the partitioned program: the gradients split as the parameters
    g = zx.jit(zx.grad(_loss), in_shardings=(shard, None, None))(params, x, y)
    _close(g, want)
    assert g["w1"].sharding.spec == P(None, "model")
    # grad of a partitioned program: its inputs' cotangents split as the inputs
    outer = zx.grad(zx.jit(_loss, in_shardings=(shard, None, None)))(params, x, y)
    _close(outer, want)
    assert outer["w1"].sharding.spec == P(None, "model")
    # eager grad of split arrays (each operation partitioned as its operands are split)
    split = zx.device_put(params, shard)
    _close(zx.grad(_loss)(split, x, y), want)


def test_sharded_arrays(mesh):
    x = np.arange(24.0).reshape(4, 6)
    s = zx.device_put(x, NamedSharding(mesh, P(None, "model")))
    assert s.shape == (4, 6) and s.dtype == np.float64 and s.is_fully_addressable
    assert not s.is_fully_replicated
    shards = s.addressable_shards
    assert [sh.index for sh in shards] == [(slice(0, 4), slice(0, 3)), (slice(0, 4), slice(3, 6))]
    assert [sh.device.id for sh in shards] == [0, 1] and {sh.replica_id for sh in shards} == {0}
    np.testing.assert_array_equal(shards[1].data, x[:, 3:])
    np.testing.assert_array_equal(np.asarray(s), x)   # (all of it is in this process)
    np.testing.assert_array_equal(distributed.process_allgather(s), x)
    np.testing.assert_allclose(znp.exp(s) @ np.ones(6), np.exp(x).sum(1), **TOL)
    c = zx.make_array_from_callback((4, 6), NamedSharding(mesh, P("model")), lambda i: x[i])
    assert c.sharding.spec == P("model")
    np.testing.assert_array_equal(np.asarray(c), x)
    # a plain array: one shard, all of it
    (one,) = znp.ones(3).addressable_shards
    assert one.index == (slice(None),) and one.replica_id == 0
    with pytest.raises(errors.ShapeError, match="does not split evenly"):
        zx.device_put(np.ones(3), NamedSharding(mesh, P("model")))
    with pytest.raises(errors.ShapeError, match="shape"):
        zx.make_array_from_callback((4, 6), NamedSharding(mesh, P("model")), lambda i: x)


def test_with_sharding_constraint(mesh):
    rows = P("model")

    def f(a):
        return lax.with_sharding_constraint(znp.sin(a) * 2, rows) + 1

    a = np.arange(12.0).reshape(4, 3)
    with mesh:
        out = zx.jit(f)(a)
        assert out.sharding.spec == rows
        np.testing.assert_allclose(out, np.sin(a) * 2 + 1, **TOL)
        # outside jit it places the value
        assert lax.with_sharding_constraint(a, rows).sharding.spec == rows
    with pytest.raises(errors.ZeraxValueError, match="needs a mesh"):
        lax.with_sharding_constraint(a, rows)
    np.testing.assert_array_equal(lax.with_sharding_constraint(a, None), a)


def test_errors(mesh):
    other = zx.make_mesh((2,), ("data",))
    x = np.ones((4, 4))
    with pytest.raises(errors.ZeraxValueError, match="several meshes"):
        zx.jit(lambda a, b: a + b, in_shardings=(NamedSharding(mesh, P("model")),
                                                 NamedSharding(other, P("data"))))(x, x)
    with pytest.raises(errors.ZeraxValueError, match="only string it takes is 'auto'"):
        zx.jit(lambda a: a, in_shardings="best")
    with pytest.raises(errors.ZeraxValueError, match="needs the mesh"):
        zx.jit(lambda a: a, in_shardings="auto")
    with pytest.raises(errors.ZeraxTypeError, match="NamedShardings"):
        zx.jit(lambda a: a, in_shardings=(3,))(x)
    with pytest.raises(errors.ShapeError, match="does not split evenly"):
        zx.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("model")))(np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="memory_limit"):
        zx.jit(lambda a: a, in_shardings="auto", mesh=mesh, memory_limit="lots").lower(x)


# --------------------------------------------------------------------------- checkpoints

def test_checkpoints_load_onto_a_mesh(tmp_path, mesh):
    x = np.arange(24.0).reshape(4, 6)
    path = tmp_path / "c.safetensors"
    io.save(path, {"w": zx.device_put(x, NamedSharding(mesh, P("model"))), "n": 2})
    back = io.load(path, shardings={"w": NamedSharding(mesh, P(None, "model")), "n": None})
    assert back["w"].sharding.spec == P(None, "model") and back["n"] == 2
    np.testing.assert_array_equal(np.asarray(back["w"]), x)
    mgr = io.CheckpointManager(tmp_path / "run", max_to_keep=1)
    mgr.save(0, {"w": x})
    back = mgr.restore(like={"w": x}, shardings=NamedSharding(mesh, P("model")))
    assert back["w"].sharding.spec == P("model")


def _split_checkpoint(path, blocks, shape=(4, 2), parts=2):
    """A checkpoint of one array split over ``parts`` processes, written by hand:
    ``blocks[p]`` is part p's list of (index bounds, data)."""
    leaf = {"kind": "sharded", "dtype": "float64", "shape": list(shape), "parts": parts,
            "name": "w"}
    _st.write_file(str(path), [], {"format": "zerax", "zerax.version": zx.__version__,
                                   "zerax.leaves": json.dumps([leaf]),
                                   "zerax.tree": json.dumps({"t": "dict", "k": [["str", "w"]],
                                                             "c": [{"t": "leaf", "i": 0}]})})
    for p in range(parts):
        tensors, desc = [], []
        for k, (bounds, data) in enumerate(blocks[p]):
            name = f"w@{p}.{k}"
            tensors.append((name, np.ascontiguousarray(data, np.float64)))
            desc.append({"leaf": "w", "tensor": name, "index": bounds})
        _st.write_file(f"{path}.part{p}", tensors, {
            "format": "zerax-part", "zerax.part": str(p), "zerax.parts": str(parts),
            "zerax.blocks": json.dumps(desc)})


def test_split_checkpoints_are_checked(tmp_path):
    x = np.arange(8.0).reshape(4, 2)
    good = tmp_path / "good.safetensors"
    _split_checkpoint(good, [[([[0, 2], [0, 2]], x[:2])], [([[2, 4], [0, 2]], x[2:])]])
    np.testing.assert_array_equal(io.load(good)["w"], x)
    cases = {
        "cover": [[([[0, 2], [0, 2]], x[:2])], []],
        "overlap": [[([[0, 3], [0, 2]], x[:3])], [([[2, 4], [0, 2]], x[2:])]],
        "outside": [[([[0, 2], [0, 2]], x[:2])], [([[2, 5], [0, 2]], np.ones((3, 2)))]],
        "stored": [[([[0, 2], [0, 2]], x[:2])], [([[2, 4], [0, 2]], x[2:, :1])]],
    }
    for what, blocks in cases.items():
        bad = tmp_path / f"{what}.safetensors"
        _split_checkpoint(bad, blocks)
        with pytest.raises(errors.CheckpointError, match=what if what != "outside" else
                           "outside"):
            io.load(bad)
    os.remove(f"{good}.part1")
    with pytest.raises(errors.CheckpointError, match="part1"):
        io.load(good)


# --------------------------------------------------------------------------- the planner

def test_the_planner_finds_the_megatron_plan(mesh):
    params, x, y = _mlp(np.random.default_rng(2), d=16, h=256, o=16, b=8)
    full = sum(a.nbytes for a in params.values())
    auto = zx.jit(_step, in_shardings="auto", mesh=mesh, memory_limit=1.6 * full,
                  cost_model=RATES)
    low = auto.lower(params, x, y)
    chosen = dict(zip(low.plan.names, low.plan.specs))
    assert chosen["args[0]['w1']"] == ((), ("model",))
    assert chosen["args[0]['w2']"] == (("model",), ())
    text = low.sharding_plan()
    assert "exact search" in text and "beat P(None, None): over the memory limit" in text
    _close(auto(params, x, y), zx.jit(_step)(params, x, y))
    with pytest.raises(errors.ZeraxValueError, match="no plan over"):
        zx.jit(_step, in_shardings="auto", mesh=mesh, memory_limit=full / 10,
               cost_model=RATES).lower(params, x, y)


def test_the_planner_on_a_transformer_block_matches_megatron(mesh):
    rng = np.random.default_rng(3)
    params, x = block_params(rng, heads=4, width=64)
    step = block_step(zx, heads=4)
    full = sum(a.nbytes for a in params.values())
    auto = zx.jit(step, in_shardings="auto", mesh=mesh, memory_limit=1.6 * full,
                  cost_model=RATES)
    low = auto.lower(params, x)
    assert "heuristic" in low.sharding_plan()
    hand = zx.jit(step, in_shardings=(megatron_shardings(mesh), None)).lower(params, x)
    assert low.plan.cost.time <= 1.1 * hand.cost(RATES).time, low.sharding_plan()


def test_memory_limits_read():
    from zerax._src.api.planner import parse_bytes
    assert parse_bytes("2GB") == 2e9 and parse_bytes("512 MiB") == 512 * 2 ** 20
    assert parse_bytes(1000) == 1000 and parse_bytes(None) == float("inf")


# --------------------------------------------------------------------------- processes

@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_models_across_processes(n):
    rc, out, _ = launch(n, "models", script=CHILD)
    assert rc == 0 and sorted(out.count(f"OK {k}") for k in range(n)) == [1] * n, out[-4000:]


@needs_mpi
def test_arrays_and_checkpoints_across_processes(tmp_path):
    for n, m in ((2, 4), (4, 2)):
        d = tmp_path / f"saved{n}"
        d.mkdir()
        rc, out, _ = launch(n, "arrays", str(d), script=CHILD)
        assert rc == 0 and out.count("OK") == n, out[-4000:]
        rc, out, _ = launch(m, "load", str(d), str(n), script=CHILD)   # another mesh
        assert rc == 0 and out.count("OK") == m, out[-4000:]


@needs_mpi
def test_the_planner_across_processes():
    rc, out, _ = launch(2, "planner", script=CHILD)
    assert rc == 0 and out.count("OK") == 2, out[-4000:]
    assert "args[0]['wq']  f64[64,64]  P(None, 'model')" in out, out[-4000:]


@needs_mpi
def test_the_tensor_parallel_example():
    example = os.path.join(ROOT, "examples", "tensor_parallel.py")
    rc, out, _ = launch(2, "--steps", "3", script=example)
    assert rc == 0, out[-4000:]
    assert "matches one process" in out and "psum" in out, out[-4000:]
