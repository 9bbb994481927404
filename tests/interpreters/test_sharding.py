"""Sharding propagation and partitioning (interpreters/sharding.py, ops/sharding_rules.py,
api/partition.py) in one process, over meshes of the process's CPU devices (JAX's
``jax_num_cpu_devices``: each device a member of a vmap): every partitioned program
against the same program whole (float64, 1e-12), for hypothesis-chosen shardings of
its inputs; the collectives each resharding takes; the rules of every kind of
primitive, control flow and derivatives included.  The same rules across processes are
tests/api/test_autoparallel.py's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.lax as lax
import zerax.numpy as znp
import zerax.random as zr
from zerax._src.api.partition import assemble, partition, process_block, reshard_steps
from zerax._src.api.sharding import mesh_layout
from zerax._src.core import tree
from zerax._src.core.core import ShapedArray
from zerax._src.interpreters.sharding import Propagation, propagate
from zerax._src.ir.ir import eval_jaxpr
from zerax._src.ir.tracing import trace_closed
from zerax.sharding import NamedSharding
from zerax.sharding import PartitionSpec as P

TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module", autouse=True)
def four_devices():
    old = zx.config.num_cpu_devices
    zx.config.update("jax_num_cpu_devices", 4)
    yield
    zx.config.update("num_cpu_devices", old)


def _norm(spec, nd):
    spec = list(spec) + [None] * (nd - len(spec))
    return tuple(() if d is None else (d,) if isinstance(d, str) else tuple(d) for d in spec)


def run_partitioned(f, args, specs, mesh):
    """``f`` traced whole, partitioned with its inputs split by ``specs``, and run (op
    by op) on this process's blocks; the results reassembled, and the program."""
    args = [np.asarray(a) for a in args]
    jaxpr, consts = trace_closed(lambda *xs: tree.tree_leaves(f(*xs)),
                                 [ShapedArray(a.shape, a.dtype) for a in args])
    in_specs = [((),) * np.ndim(c) for c in consts] + \
        [_norm(s, a.ndim) for s, a in zip(specs, args)]
    pt = partition(jaxpr, mesh, in_specs)
    layout, sizes = mesh_layout(mesh), mesh.shape
    blocks = [process_block(np.asarray(v), s, layout, sizes)
              for v, s in zip(list(consts) + args, in_specs)]
    outs = eval_jaxpr(pt.jaxpr, [], *pt.consts, *blocks)
    return [assemble(np.asarray(o), v.aval.shape, s, layout, sizes)
            for o, v, s in zip(outs, jaxpr.outvars, pt.out_specs)], pt


def check(f, args, specs, mesh):
    got, pt = run_partitioned(f, args, specs, mesh)
    want = tree.tree_leaves(zx.jit(f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, equal_nan=True, **TOL)
    return pt


@pytest.fixture(scope="module")
def line():
    return zx.make_mesh((4,), ("a",))


@pytest.fixture(scope="module")
def grid():
    return zx.make_mesh((2, 2), ("a", "b"))


RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(8, 4)), RNG.normal(size=(8, 4))
SPECS = [(), ("a",), (None, "a"), ("b",), (None, "b"), ("a", "b"), ("b", "a"), (("a", "b"),),
         (None, ("b", "a"))]

PROGRAMS = {
    "elementwise": lambda x, y: znp.sin(x) * y + 1.0,
    "sums": lambda x, y: ((x * y).sum(0), (x * y).sum(1), x.sum()),
    "max_min": lambda x, y: x.max(0) + y.min(1).sum(),
    "broadcasts": lambda x, y: x - x.mean(0, keepdims=True) + y.mean(1, keepdims=True),
    "softmax": lambda x, y: zx.nn.softmax(x, axis=-1) * y,
    "products": lambda x, y: (x.T @ y, x @ y.T),
    "reshape": lambda x, y: (x.reshape(4, 2, 4) * y.reshape(4, 2, 4)).reshape(8, 4),
    "cumulative": lambda x, y: znp.cumsum(x, 0) + lax.cummax(y, 1),
    "cut": lambda x, y: (x[1:5] + y[:4, ::-1], znp.pad(x, ((1, 1), (0, 0)))[:8],
                         znp.concatenate([x, y], 0).sum(0)),
    "order": lambda x, y: (znp.sort(x, 0) + znp.sort(y, 1), znp.argmax(x, 0)),
    "where": lambda x, y: znp.where(x > 0, x, y),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=12)
@given(data=st.data())
def test_programs_partitioned_as_their_inputs_are_split(name, data, line, grid):
    sx, sy = data.draw(st.sampled_from(SPECS)), data.draw(st.sampled_from(SPECS))
    mesh = grid if "b" in str((sx, sy)) else line
    check(PROGRAMS[name], (X, Y), (sx, sy), mesh)


def test_reshard_steps():
    sizes = {"a": 4, "b": 2}
    # an axis moving between dimensions: one all_to_all
    assert reshard_steps([("a",), ()], [(), ("a",)], (2, 8), sizes) == [("all_to_all", "a", 1, 0)]
    # split -> whole: an all_gather; whole -> split: a local slice, no communication
    assert reshard_steps([("a",), ()], [(), ()], (2, 8), sizes) == [("all_gather", "a", 0)]
    assert reshard_steps([(), ()], [("a",), ("b",)], (8, 8), sizes) == [
        ("slice", {0: ("a",), 1: ("b",)})]
    # minor axes gathered first
    assert reshard_steps([("a", "b")], [()], (1,), sizes) == [("all_gather", "b", 0),
                                                            ("all_gather", "a", 0)]
    assert reshard_steps([("a",)], [("a",)], (2,), sizes) == []


def test_megatron_mlp_is_one_all_reduce(line):
    rng = np.random.default_rng(1)
    x, w1, w2 = rng.normal(size=(8, 6)), rng.normal(size=(6, 16)), rng.normal(size=(16, 5))
    pt = check(lambda x, w1, w2: znp.tanh(x @ w1) @ w2, (x, w1, w2),
               [(), (None, "a"), ("a",)], line)
    text = pt.text()
    # over a mesh of devices within one process the all-reduce is a sum over the batch
    # of devices: the only reduction of the program
    assert text.count("reduce_sum") == 1 and "all_gather" not in text, text
    assert pt.out_specs == (((), ()),)


def test_propagation_follows_the_inputs_and_the_users(line):
    def f(x, w):
        h = x @ w                 # split along its columns, as w
        z = znp.zeros(h.shape)    # made by the program: takes its user's split
        return (h + z).sum(0)
    args = (np.ones((8, 6)), np.ones((6, 16)))
    jaxpr, consts = trace_closed(lambda *a: [f(*a)],
                                 [ShapedArray(a.shape, a.dtype) for a in args])
    prop = Propagation({"a": 4})
    for v, s in zip(jaxpr.invars, [((),) * np.ndim(c) for c in consts] +
                    [((), ()), ((), ("a",))]):
        prop.fix(v, s)
    propagate(jaxpr, prop)
    assert prop.final(jaxpr.outvars[0]) == (("a",),)
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if len(v.aval.shape) == 2:
                assert prop.final(v) == ((), ("a",)), eqn


V, E = 16, 4
TABLE = RNG.normal(size=(V, E))
IDS = np.array([[0, 3, 15, -1], [7, 8, 20, -17]])   # (out of bounds: clipped or filled)


@pytest.mark.parametrize("name,f,specs", [
    ("lookup", lambda t, i: t[i], [("a",), ()]),
    ("lookup split ids", lambda t, i: t[i], [("a",), ("b",)]),
    ("lookup columns", lambda t, i: t[i], [(None, "a"), ()]),
    ("lookup filled", lambda t, i: t.at[i].get(mode="fill", fill_value=-3.0), [("a",), ()]),
    ("take", lambda t, i: znp.take(t, i, axis=0), [("a",), ()]),
    ("one hot", lambda t, i: zx.nn.one_hot(i, V) @ t, [("a",), ()]),
    ("scatter add", lambda t, i: znp.zeros_like(t).at[i].add(1.0) + t, [("a",), ()]),
    ("scatter set", lambda t, i: t.at[i].set(5.0), [("a",), ()]),
    ("embedding step", lambda t, i: t - 0.1 * zx.grad(lambda t: (t[i] ** 2).sum())(t),
     [("a",), ()]),
])
def test_gather_and_scatter(name, f, specs, line, grid):
    mesh = grid if "b" in str(specs) else line
    pt = check(f, (TABLE, IDS), specs, mesh)
    if name == "embedding step":   # the gradient of a split table stays split
        assert pt.out_specs == ((("a",), ()),)


@pytest.mark.parametrize("name,f,specs", [
    ("scan", lambda t: lax.scan(lambda c, r: (c * 0.5 + r, c.sum()), t[0], t)[0],
     [(None, "a")]),
    ("scan carry", lambda t: lax.scan(lambda c, r: (znp.tanh(c @ t.T @ t) + r, (c ** 2).sum()),
                                      t, znp.arange(3.0)), [("a",)]),
    ("cond", lambda t: lax.cond(t[0, 0] > 0, lambda a: a * 2, lambda a: a.T @ a @ a.T @ a,
                                t[:4]), [("a",)]),
    ("while", lambda t: lax.while_loop(lambda a: a.sum() < 1e3, lambda a: a * 2 + 1,
                                       znp.abs(t)), [("a",)]),
    ("fori", lambda t: lax.fori_loop(0, 3, lambda k, a: a @ t.T @ t * 0.1, t), [("a",)]),
    ("grad of scan", lambda t: zx.grad(lambda t: lax.scan(
        lambda c, r: (znp.sin(c) * r, c.sum()), t[0], t)[1].sum())(t), [(None, "a")]),
])
def test_control_flow(name, f, specs, line):
    check(f, (TABLE,), specs, line)


@pytest.mark.parametrize("name,f,specs", [
    ("iota rows", lambda t: t * lax.broadcasted_iota(np.float64, (V, E), 0), [("a",)]),
    ("iota columns", lambda t: t * lax.broadcasted_iota(np.float64, (V, E), 1), [(None, "a")]),
    ("random", lambda t: t + zr.normal(zr.key(3), (V, E)), [("a",)]),
    ("dynamic slice", lambda t: lax.dynamic_slice(t, (3, 0), (2, E)), [(None, "a")]),
    ("dynamic update", lambda t: lax.dynamic_update_slice(t, t[:2] * 2, (5, 0)),
     [(None, "a")]),
    ("convolution", lambda t: lax.conv_general_dilated(
        t.reshape(4, 1, 4, 4), np.ones((2, 1, 3, 3)), (1, 1), "SAME"), [("a",)]),
    ("convolution grad", lambda t: zx.grad(lambda t: (lax.conv_general_dilated(
        t.reshape(4, 1, 4, 4), np.ones((2, 1, 3, 3)), (1, 1), "SAME") ** 2).sum())(t),
     [("a",)]),
    ("decomposition", lambda t: znp.linalg.inv(t.reshape(V, 2, 2) + 3 * znp.eye(2)), [("a",)]),
    ("fft", lambda t: znp.fft.fft(t, axis=1).real, [("a",)]),
    ("custom derivatives", lambda t: zx.nn.relu(t) + zx.nn.gelu(t) + zx.nn.softplus(t),
     [("a",)]),
    ("nested jit", lambda t: zx.jit(lambda a: a @ a.T)(t), [(None, "a")]),
    ("checkpoint", lambda t: zx.grad(lambda t: zx.checkpoint(
        lambda a: znp.sin(a @ a.T).sum())(t))(t), [(None, "a")]),
    ("second derivative", lambda t: zx.grad(lambda t: zx.grad(
        lambda s: znp.sum(znp.tanh(s @ s.T) ** 2))(t).sum())(t), [("a",)]),
])
def test_more_rules(name, f, specs, line):
    check(f, (TABLE,), specs, line)


def test_with_sharding_constraint_reshards(line):
    cols = NamedSharding(line, P(None, "a"))
    pt = check(lambda t: lax.with_sharding_constraint(t * 2, cols) + 1, (TABLE,), [("a",)],
               line)
    assert pt.out_specs == (((), ("a",)),)
    # the rows-to-columns change is one exchange
    assert pt.text().count("all_to_all") + pt.text().count("transpose") >= 1


def test_a_collective_in_a_partitioned_program_is_refused(line):
    from zerax import distributed
    per_process = distributed.spmd(lambda v: lax.psum(v, "data") * 2, axis_name="data")
    with pytest.raises(zx.errors.NotSupportedError, match="collective over named axes"):
        zx.jit(per_process, in_shardings=NamedSharding(line, P(None, "a")))(np.ones((2, 4)))
