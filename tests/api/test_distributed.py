"""zerax.distributed, zerax.sharding and shard_map: in this process (a world of one
process, meshes over its local CPU devices), and on several processes launched with
``mpiexec -n 2`` and ``-n 4`` on this machine (distributed_child.py), each launch with
a timeout: collectives against NumPy, faults, resuming training on another number of
processes, and examples/data_parallel.py against one process."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import zerax as zx
import zerax.lax as lax
import zerax.nn as nn
import zerax.numpy as znp
import zerax.optim as optim
import zerax.random as zr
from zerax import data, distributed, errors, io, train
from zerax.sharding import Mesh, NamedSharding
from zerax.sharding import PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(ROOT, "src")
CHILD = os.path.join(HERE, "distributed_child.py")
LAUNCH_TIMEOUT_S = 240   # one mpiexec job (compiles included, on a busy 2-core machine)


@pytest.fixture
def local_devices():
    """Four CPU devices in this process (JAX's jax_num_cpu_devices), restored after."""
    old = zx.config.num_cpu_devices
    zx.config.update("jax_num_cpu_devices", 4)
    try:
        yield
    finally:
        zx.config.update("num_cpu_devices", old)


# --------------------------------------------------------------------------- one process

def test_a_world_of_one_process():
    distributed.initialize()
    assert distributed.is_initialized()
    assert zx.process_index() == 0 and zx.process_count() == 1
    assert zx.devices() == zx.local_devices() == [znp.ones(1).device]
    with pytest.raises(errors.DistributedError, match="num_processes=2"):
        distributed.initialize(num_processes=2)
    f = distributed.spmd(lambda v: (lax.psum(v, "data"), lax.all_gather(v, "data"),
                                    lax.axis_index("data"), lax.ppermute(v, "data", [])),
                         axis_name="data")
    s, g, i, p = f(np.arange(3.0))
    np.testing.assert_array_equal(s, np.arange(3.0))
    np.testing.assert_array_equal(g, [np.arange(3.0)])
    assert int(i) == 0
    np.testing.assert_array_equal(p, np.zeros(3))
    np.testing.assert_array_equal(zx.jit(f)(np.arange(3.0))[0], np.arange(3.0))
    tree = {"w": np.ones(2), "act": znp.tanh}
    assert distributed.broadcast(tree)["act"] is znp.tanh
    np.testing.assert_array_equal(distributed.process_allgather(np.ones((2, 3)), tiled=True),
                                  np.ones((2, 3)))
    with pytest.raises(errors.UnboundAxisError, match="spmd"):
        lax.psum(1.0, "data")


def test_allreduce_receives_into_the_buffers_it_is_given():
    """The transport's Allreduce writes into the caller's buffers (a compiled program's
    own, sparing a copy) where no conversion is needed, and into new arrays otherwise
    (float16 and booleans are reduced in another dtype; a buffer that overlaps its
    operand, or is read-only, is not used)."""
    from mpi4py import MPI

    from zerax._src.backends.mpi.transport import Communicator
    comm = Communicator(MPI.COMM_SELF, ("data",))
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((3, 4)), rng.standard_normal(5).astype(np.float16)
    b = np.array([True, False])
    outs = [np.empty_like(x), np.empty_like(h), np.empty_like(b)]
    got = comm.allreduce([x, h, b], "sum", "psum", outs=outs)
    assert got[0] is outs[0] and got[1] is not outs[1] and got[2] is not outs[2]
    for g, want in zip(got, [x, h, b]):
        np.testing.assert_array_equal(g, want)
        assert g.dtype == want.dtype
    frozen = np.empty_like(x)
    frozen.flags.writeable = False
    for out in (frozen, x):
        (r,) = comm.allreduce([x], "max", "pmax", outs=[out])
        assert r is not out
        np.testing.assert_array_equal(r, x)


def test_slots_that_cannot_be_allocated_are_a_clear_error(monkeypatch):
    """Shared-memory slots MPI cannot allocate are a DistributedError saying how many
    bytes and where (never mpi4py's own exception), and none are kept; where the
    machine's shared memory has no room, the slots are the process's own (gathered)."""
    from mpi4py import MPI

    from zerax._src.backends.mpi import transport
    comm = transport.Communicator(MPI.COMM_SELF, ("data",), one_machine=True)

    def refuse(self, *args):
        raise MPI.Exception(MPI.ERR_NO_MEM)
    with monkeypatch.context() as m:
        m.setattr(transport.SharedSlots, "__init__", refuse)
        with pytest.raises(errors.DistributedError,
                           match=r"'data': 65536 bytes .* could not be allocated in the "
                                 r"machine's shared memory"):
            comm.eager_slots(1 << 16)
    assert comm._slots is None
    monkeypatch.setattr(transport, "_shared_memory_free", lambda: 0)
    slots = comm.eager_slots(1 << 16)
    assert type(slots) is transport.GatheredSlots and slots.nbytes == 1 << 16
    slots.free()


def test_devices_and_meshes(local_devices):
    devs = zx.devices()
    assert [d.id for d in devs] == [0, 1, 2, 3] and zx.local_device_count() == 4
    assert devs[0] is znp.ones(1).device
    mesh = zx.make_mesh((2, 2), ("a", "b"))
    assert mesh.shape == {"a": 2, "b": 2} and mesh.size == 4 and not mesh.is_multi_process
    assert repr(mesh) == "Mesh('a': 2, 'b': 2)"
    assert mesh == Mesh(np.array(devs).reshape(2, 2), ("a", "b"))
    s = NamedSharding(mesh, P("a", None))
    assert s.shard_shape((4, 6)) == (2, 6) and not s.is_fully_replicated
    assert NamedSharding(mesh, P()).is_fully_replicated
    with pytest.raises(errors.ZeraxValueError, match="not an axis"):
        NamedSharding(mesh, P("c"))
    with pytest.raises(errors.ZeraxValueError, match="holds 6 devices"):
        zx.make_mesh((3, 2), ("a", "b"))
    with pytest.raises(errors.ZeraxValueError, match="appears twice"):
        Mesh(np.array([devs[0], devs[0]]), ("a",))
    with pytest.raises(errors.ZeraxTypeError):
        P(3)
    assert P("a", ("b", "c")).axes_of(3) == [("a",), ("b", "c"), ()]
    # the parameters a partitioning pass binds a collective with (issue 31)
    from zerax._src.api.sharding import mesh_layout
    layout = mesh_layout(zx.make_mesh((1, 4), ("p", "local")))
    assert layout.process_axes == ["p"] and layout.local_axes == ["local"]
    params = layout.collective_params(("p", "local"))
    assert params["axis_size"] == (1, 4) and params["groups"][0] >= 0 and \
        params["groups"][1] == -1


def test_shard_map_over_local_devices(local_devices):
    mesh = zx.make_mesh((2, 2), ("x", "y"))
    a = np.arange(24.0).reshape(4, 6)
    w = np.arange(18.0).reshape(6, 3)
    # a row-split, column-split product: partial products summed over "y"
    mm = zx.shard_map(lambda a, w: lax.psum(a @ w, "y"), mesh=mesh,
                      in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    np.testing.assert_allclose(mm(a, w), a @ w, rtol=1e-13)
    np.testing.assert_allclose(zx.jit(mm)(a, w), a @ w, rtol=1e-13)
    # blocks over the product of both axes, in row-major order, and back
    blocks = zx.shard_map(lambda b: b * (1 + lax.axis_index(("x", "y"))), mesh=mesh,
                          in_specs=P(("x", "y")), out_specs=P(("x", "y")))
    np.testing.assert_array_equal(blocks(np.ones(8)), np.repeat([1.0, 2.0, 3.0, 4.0], 2))
    swapped = zx.shard_map(lambda b: b * (1 + lax.axis_index(("x", "y"))), mesh=mesh,
                           in_specs=P(("y", "x")), out_specs=P(("y", "x")))
    np.testing.assert_array_equal(swapped(np.ones(4)), [1.0, 3.0, 2.0, 4.0])
    # an output replicated over an axis; gradients through the map
    with mesh:
        total = zx.shard_map(lambda b: lax.psum(znp.sum(b ** 2), ("x", "y")),
                             in_specs=P("x", "y"), out_specs=P())
        np.testing.assert_allclose(total(a), np.sum(a ** 2))
        np.testing.assert_allclose(zx.grad(total)(a), 2 * a)
    # an output that varies over an axis its spec does not name
    bad = zx.shard_map(lambda b: b, mesh=mesh, in_specs=P("x"), out_specs=P())
    with pytest.raises(errors.ZeraxValueError, match="varies over the batch"):
        bad(a)
    with pytest.raises(errors.ShapeError, match="cannot be split"):
        zx.shard_map(lambda b: b, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="twice"):
        zx.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "x"), out_specs=P())(a)


def test_sharded_loader_batches_are_the_global_batches():
    ds = data.ArrayDataset(np.arange(24))
    whole = data.DataLoader(ds, batch_size=8, shuffle=True, seed=3)
    for count in (1, 2, 4):
        parts = [whole.shard(k, count, split_batch=True) for k in range(count)]
        for epoch in (0, 1):
            for p in parts:
                p.set_epoch(epoch)
            whole.set_epoch(epoch)
            got = [sorted(np.concatenate([np.asarray(b) for b in bs]).tolist())
                   for bs in zip(*parts)]
            assert got == [sorted(np.asarray(b).tolist()) for b in whole]
    with pytest.raises(errors.DatasetError, match="does not split among 3"):
        whole.shard(0, 3, split_batch=True)


def test_fit_distributed_on_one_process_is_fit():
    x = np.random.default_rng(0).normal(size=(32, 3))
    y = (x[:, 0] > 0).astype(np.int32)

    def run(**kw):
        model = nn.MLP(3, 2, width_size=8, depth=1, dtype=np.float64, key=zr.key(0))
        loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8, shuffle=True,
                                 prefetch=0)
        m, _, h = train.fit(model, optim.sgd(0.1), train.losses.cross_entropy, loader,
                            epochs=2, progress=False, jit=False, val_data=(x, y), **kw)
        return m, h

    (m1, h1), (m2, h2) = run(), run(distributed=True)
    for a, b in zip(zx.tree_util.tree_leaves(nn.filter(m1, nn.is_inexact_array)),
                    zx.tree_util.tree_leaves(nn.filter(m2, nn.is_inexact_array))):
        np.testing.assert_array_equal(a, b)
    assert h1.history == h2.history
    with pytest.raises(errors.ZeraxTypeError, match="distributed"):
        run(distributed=3)


# --------------------------------------------------------------------------- processes

def _mpiexec():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="needs mpi4py and mpiexec "
                                                       "(pip install 'zerax[mpi]')")


def launch(n, *args, script=CHILD, timeout=LAUNCH_TIMEOUT_S):
    """Run ``script args`` on ``n`` processes (no mpiexec for n == 0: one plain
    process); returns (exit code, output, seconds).  The job is killed at ``timeout``
    and the test fails: nothing here may hang."""
    env = dict(os.environ, ZERAX_NUM_THREADS="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(p for p in (SRC, HERE, os.environ.get("PYTHONPATH"))
                                          if p))
    cmd = [sys.executable, script, *args]
    if n:
        cmd = [MPIEXEC, "-n", str(n)] + cmd
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=ROOT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} ran past {timeout} s:\n{out[-3000:]}")
    return proc.returncode, out, time.monotonic() - start


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_collectives_across_processes(n):
    rc, out, _ = launch(n, "collectives")
    assert rc == 0, out[-4000:]
    # (the processes' lines may interleave)
    assert sorted(re.findall(r"OK (\d+)", out)) == [str(k) for k in range(n)], out[-4000:]


@needs_mpi
@pytest.mark.parametrize("kind,once,also", [
    # an exception in process 1: its traceback, once, and the job ends
    ("raise", "ZeroDivisionError: process 1 divides by zero",
     ["zerax.distributed: process 1 of 2 raised an exception"]),
    # a collective whose operands differ: every process raises it, process 0 reports it
    ("mismatch", "CollectiveMismatchError: the processes of psum over 'data'",
     ["process 0: psum over 'data' of float64[3]", "process 1: psum over 'data' of float64[4]"]),
])
def test_a_failure_ends_the_job_and_is_reported_once(kind, once, also):
    rc, out, _ = launch(2, kind)
    assert rc != 0 and "not reached" not in out
    assert out.count(once) == 1, out
    for line in also:
        assert line in out, out


@needs_mpi
def test_a_killed_process_ends_the_job():
    rc, out, _ = launch(2, "kill", timeout=120)
    assert rc != 0 and "not reached" not in out
    assert "signal 9" in out.lower() or "killed" in out.lower(), out


@needs_mpi
def test_training_resumes_on_the_same_or_another_number_of_processes(tmp_path):
    import distributed_child as child
    # the uninterrupted run, in this process
    model, loader = child.fit_problem()
    model, _, history = train.fit(
        model, optim.adam(1e-2), train.losses.cross_entropy, loader, epochs=2,
        metrics=["accuracy"], key=zr.key(7), progress=False, jit=False)
    want = nn.filter(model, nn.is_inexact_array)
    # 2 processes, stopped after step 5 (process 0 saved steps 2 and 4)
    first = tmp_path / "run"
    rc, out, _ = launch(2, "fit", str(first), "5", "2")
    assert rc == 0 and out.count("STOPPED") == 2, out[-3000:]
    assert io.CheckpointManager(first).latest_step() == 4
    for n in (2, 4):
        again = tmp_path / f"resumed{n}"
        shutil.copytree(first, again)
        result = tmp_path / f"params{n}.safetensors"
        # (the resumed run on 2 processes compiles its steps: jit's pmean over MPI)
        rc, out, _ = launch(n, "fit", str(again), "0", "2", str(result),
                            *(["--jit"] if n == 2 else []))
        assert rc == 0, out[-3000:]
        got = io.load(str(result), like={"params": want, "loss": np.zeros(2)})
        for a, b in zip(zx.tree_util.tree_leaves(got["params"]),
                        zx.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got["loss"], history.history["loss"], rtol=1e-12)


@needs_mpi
def test_the_data_parallel_example_matches_one_process(tmp_path):
    pytest.importorskip("sklearn")
    example = os.path.join(ROOT, "examples", "data_parallel.py")
    outs = {}
    for n in (4, 0):
        path = tmp_path / f"params{n}.safetensors"
        rc, out, _ = launch(n, "--epochs", "2", "--out", str(path), script=example)
        assert rc == 0, out[-3000:]
        assert "epoch 2: mean loss" in out
        outs[n] = path
    a, b = _read(outs[4]), _read(outs[0])
    assert a.keys() == b.keys() and a
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=0, atol=1e-12, err_msg=k)


def _read(path):
    from safetensors.numpy import load_file
    return load_file(str(path))
