"""Control flow: cond, switch, while_loop, fori_loop, scan, map.

Each construct is checked against the equivalent Python loop / ``if`` (values and
derivatives), under every pair of transforms among jit, grad, vmap and jvp, for vmap's
semantics (batched predicates select, batched while loops run each member its own number
of iterations), for reverse mode through ``while_loop`` (which JAX refuses), for the
errors of mismatched branch/body types, and for the structure of the jitted code.

Numba compiles cost about a second each, so the jitted functions are module-level
objects shared between tests (each compiles once per signature).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax.test_util import check_grads

RNG = np.random.default_rng(1234)


def allclose(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# =========================================================================== the constructs
# Every construct is a function f(x) of a float64 vector of shape (3,) with a NumPy
# reference written as the plain Python loop / if; POINTS[name] are inputs (one per row)
# whose members take different branches / trip counts, all at least 1e-3 away from a
# branch or trip-count boundary so that finite differences are valid there.


# ---- cond
def cond_f(x):
    return lax.cond(znp.sum(x) > 0.5,
                    lambda a: znp.sin(a) * a[0] + 1.0,
                    lambda a: znp.cos(a) - a[1] ** 2,
                    x)


def cond_ref(x):
    if x.sum() > 0.5:
        return np.sin(x) * x[0] + 1.0
    return np.cos(x) - x[1] ** 2


# ---- switch (the index is computed from x and clamped into range)
SWITCH_BRANCHES_NP = [
    lambda a: np.sin(a) * 2.0,
    lambda a: a ** 3 - a,
    lambda a: np.exp(-a * a) + a[2],
    lambda a: np.tanh(a) * a[0],
]
SWITCH_BRANCHES = [
    lambda a: znp.sin(a) * 2.0,
    lambda a: a ** 3 - a,
    lambda a: znp.exp(-a * a) + a[2],
    lambda a: znp.tanh(a) * a[0],
]


def switch_f(x):
    idx = znp.floor(znp.sum(x) * 1.5).astype(znp.int32)
    return lax.switch(idx, SWITCH_BRANCHES, x)


def switch_ref(x):
    k = int(np.floor(x.sum() * 1.5))
    return SWITCH_BRANCHES_NP[min(max(k, 0), 3)](x)


# ---- while_loop: the trip count depends on the value of x
def _while_cond(s):
    return znp.sum(s[1] * s[1]) < 40.0


def _while_body(s):
    i, v = s
    return i + 1, 1.2 * v + 0.3 * znp.sin(v[::-1]) + 0.1


def while_f(x):
    i, v = lax.while_loop(_while_cond, _while_body, (0, x))
    return v * (i + 1)


def while_ref(x, return_trips=False):
    i, v, margin = 0, x.copy(), abs((x * x).sum() - 40.0)
    while (v * v).sum() < 40.0:
        i, v = i + 1, 1.2 * v + 0.3 * np.sin(v[::-1]) + 0.1
        margin = min(margin, abs((v * v).sum() - 40.0))
    if return_trips:
        return i, margin
    return v * (i + 1)


# ---- fori_loop with concrete bounds (closes over x)
def fori_f(x):
    def body(i, v):
        return v * znp.cos(v) * 0.9 + x[::-1] * i / 4.0
    return lax.fori_loop(1, 6, body, x)


def fori_ref(x):
    v = x.copy()
    for i in range(1, 6):
        v = v * np.cos(v) * 0.9 + x[::-1] * i / 4.0
    return v


# ---- fori_loop with bounds computed from x (traced under every transform)
def fori_traced_f(x):
    n = znp.floor(znp.abs(x[0]) * 3.0).astype(znp.int64)
    lo = znp.floor(znp.abs(x[1])).astype(znp.int64)
    return lax.fori_loop(lo, n, lambda i, v: znp.sin(v) * 1.1 + x[0] * v + i * 0.01, x[2])


def fori_traced_ref(x):
    v = x[2]
    for i in range(int(np.floor(abs(x[1]))), int(np.floor(abs(x[0]) * 3.0))):
        v = np.sin(v) * 1.1 + x[0] * v + i * 0.01
    return np.asarray(v)


# ---- scan (reverse, pytree carry, pytree xs and ys) followed by map
SCAN_A = RNG.uniform(0.5, 1.5, (5, 3))
SCAN_B = RNG.uniform(-0.5, 0.5, (5,))


def scan_f(x):
    def step(carry, xs):
        h, s = carry
        h = znp.tanh(h * xs["a"] + xs["b"] * s) + 0.1 * x
        s = s + znp.sum(h)
        return (h, s), {"y": h * s, "z": znp.sum(h * xs["a"])}
    (h, s), ys = lax.scan(step, (x, 0.0), {"a": SCAN_A, "b": SCAN_B}, reverse=True)
    m = lax.map(lambda z: znp.sin(z) * z, ys["z"])
    return znp.concatenate([h * s, ys["y"][0], m])


def scan_ref(x):
    h, s = x.copy(), 0.0
    ys_y, ys_z = [None] * 5, [None] * 5
    for k in range(4, -1, -1):
        h = np.tanh(h * SCAN_A[k] + SCAN_B[k] * s) + 0.1 * x
        s = s + h.sum()
        ys_y[k], ys_z[k] = h * s, (h * SCAN_A[k]).sum()
    m = np.array([np.sin(z) * z for z in ys_z])
    return np.concatenate([h * s, ys_y[0], m])


CONSTRUCTS = {
    "cond": (cond_f, cond_ref),
    "switch": (switch_f, switch_ref),
    "while_loop": (while_f, while_ref),
    "fori_loop": (fori_f, fori_ref),
    "fori_loop_traced_bounds": (fori_traced_f, fori_traced_ref),
    "scan_map": (scan_f, scan_ref),
}

POINTS = {
    # sums 1.6 / -0.9 / 2.3 / 0.2: both branches
    "cond": np.array([[0.3, 0.6, 0.7], [-0.4, 0.2, -0.7], [0.8, 0.9, 0.6], [0.1, -0.3, 0.4]]),
    # 1.5 * sum = -2.25, 0.45, 1.95, 2.85, 4.65: indices -3 (clamped), 0, 1, 2, 4 (clamped)
    "switch": np.array([[-0.5, -0.7, -0.3], [0.1, 0.3, -0.1], [0.4, 0.5, 0.4],
                        [0.7, 0.6, 0.6], [1.2, 0.9, 1.0]]),
    "while_loop": np.array([[0.5, -0.2, 0.3], [2.0, 1.5, -1.0], [0.05, 0.1, 0.02],
                            [5.0, 4.0, 3.0]]),  # the last one never enters the loop
    "fori_loop": np.array([[0.3, -0.5, 0.9], [1.1, 0.2, -0.4], [-0.8, 0.6, 0.1]]),
    # (lower, upper) = (0, 1), (1, 4), (0, 5), (2, 0) (empty range)
    "fori_loop_traced_bounds": np.array([[0.4, 0.3, -0.2], [1.4, -1.2, 0.5],
                                         [-1.8, 0.6, 0.3], [0.2, 2.5, 0.1]]),
    "scan_map": np.array([[0.3, -0.5, 0.9], [1.1, 0.2, -0.4], [-0.8, 0.6, 0.1]]),
}

# Weights that turn each construct's vector output into a scalar for grad.
_WEIGHTS = {}


def scalar(name):
    f = CONSTRUCTS[name][0]

    def g(x):
        out = f(x)
        w = _WEIGHTS.setdefault(name, RNG.uniform(0.5, 1.5, tuple(out.shape)))
        return znp.sum(out * w)
    return g


def test_points_are_away_from_boundaries():
    for x in POINTS["cond"]:
        assert abs(x.sum() - 0.5) > 1e-3
    for x in POINTS["switch"]:
        t = x.sum() * 1.5
        assert abs(t - np.round(t)) > 1e-3
    trips = set()
    for x in POINTS["while_loop"]:
        n, margin = while_ref(x, return_trips=True)
        trips.add(n)
        assert margin > 1e-3
    assert len(trips) == len(POINTS["while_loop"])  # all different trip counts, 0 included
    assert 0 in trips


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_values_match_python_loop(name):
    f, ref = CONSTRUCTS[name]
    for x in POINTS[name]:
        out = f(znp.asarray(x))
        assert isinstance(out, zx.Array) and out.dtype == np.float64
        allclose(out, ref(x), rtol=1e-13)
        # traced once into the IR (the primitives' NumPy implementations): same values
        allclose(zx.make_jaxpr(f)(x)(x)[0], ref(x), rtol=1e-13)


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_grads_match_finite_differences(name):
    f = CONSTRUCTS[name][0]
    for x in POINTS[name]:
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))


# =========================================================================== more of each construct


def test_cond_operand_keyword():
    # JAX's older form: cond(pred, true_fun, false_fun, operand=x)
    assert float(lax.cond(True, lambda x: x * 2.0, lambda x: -x, operand=3.0)) == 6.0
    f = zx.jit(lambda y: lax.cond(y > 0, lambda x: x * 2.0, lambda x: -x, operand=y))
    assert float(f(2.0)) == 4.0 and float(f(-2.0)) == 2.0
    assert float(lax.cond(False, lambda _: 1.0, lambda _: 2.0, operand=None)) == 2.0
    with pytest.raises(errors.ZeraxTypeError, match="not both"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=2.0)


def test_cond_pytree_operands_closures_and_integer_outputs():
    y = znp.asarray([0.5, -1.5])

    def f(p, a, b):
        return lax.cond(p > 0.0,
                        lambda u, v: ({"s": u * v + y, "n": znp.sum(u > 0.0)}, u - v),
                        lambda u, v: ({"s": u - v * y, "n": znp.sum(v > 0.0)}, u * v),
                        a, b)

    def ref(p, a, b):
        if p > 0.0:
            return {"s": a * b + np.asarray(y), "n": (a > 0).sum()}, a - b
        return {"s": a - b * np.asarray(y), "n": (b > 0).sum()}, a * b

    a, b = np.array([0.3, -0.2]), np.array([1.1, 0.7])
    for p in (1.0, -1.0):
        traced = zx.make_jaxpr(f)(p, a, b)  # both branches traced into the program
        outs = traced(p, a, b)
        for out in (f(p, znp.asarray(a), znp.asarray(b)),
                    ({"n": outs[0], "s": outs[1]}, outs[2])):
            want = ref(p, a, b)
            allclose(out[0]["s"], want[0]["s"])
            assert int(out[0]["n"]) == want[0]["n"]
            allclose(out[1], want[1])
        check_grads(lambda a, b, p=p: f(p, a, b), (a, b), order=2, modes=("fwd", "rev"))
    # the predicate may be a traced float or int (nonzero is True)
    g = zx.grad(lambda p, a: lax.cond(p, lambda u: u * u, lambda u: -u, a), argnums=1)
    assert float(g(2, 3.0)) == 6.0 and float(g(0, 3.0)) == -1.0


def test_switch_clamps_index_eager_traced_and_jitted():
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    for i in range(-3, 6):
        want = [3.0, 20.0, -2.0][min(max(i, 0), 2)]
        assert float(lax.switch(i, branches, 2.0)) == want
        # index traced (under make_jaxpr) and a traced operand (under grad)
        assert float(zx.make_jaxpr(lambda k: lax.switch(k, branches, 2.0))(i)(i)[0]) == want
        dwant = [1.0, 10.0, -1.0][min(max(i, 0), 2)]
        assert float(zx.grad(lambda x, k=i: lax.switch(k, branches, x))(2.0)) == dwant
    # a single branch ignores the index
    assert float(lax.switch(7, [lambda x: x * 3.0], 2.0)) == 6.0


def test_while_loop_trip_count_depends_on_input():
    def count(x):  # how many doublings until x exceeds 100
        return lax.while_loop(lambda c: c[1] < 100.0, lambda c: (c[0] + 1, c[1] * 2.0),
                              (0, x))

    for x in (0.7, 3.0, 50.0, 150.0):
        n, v = count(x)
        n_ref, v_ref = 0, x
        while v_ref < 100.0:
            n_ref, v_ref = n_ref + 1, v_ref * 2.0
        assert int(n) == n_ref and float(v) == v_ref
        # d v / d x = 2 ** n, in both modes and in the traced program
        assert float(zx.grad(lambda x: count(x)[1])(x)) == 2.0 ** n_ref
        assert float(zx.jvp(lambda x: count(x)[1], (x,), (1.0,))[1]) == 2.0 ** n_ref


def fori_traced_n(x, n):
    return lax.fori_loop(0, n, lambda i, v: v * 0.5 + znp.sin(v + i), x)


def fori_traced_n_ref(x, n):
    v = x.copy()
    for i in range(n):
        v = v * 0.5 + np.sin(v + i)
    return v


def test_fori_loop_bounds_traced():
    # (traced bounds under jit: the fori_loop_traced_bounds rows of test_transform_pairs)
    x = np.array([0.3, -1.2])
    for n in (0, 1, 7):
        allclose(fori_traced_n(znp.asarray(x), n), fori_traced_n_ref(x, n), rtol=1e-13)
        traced = zx.make_jaxpr(fori_traced_n)(x, n)  # the bounds are traced here
        assert "while" in str(traced)
        allclose(traced(x, n)[0], fori_traced_n_ref(x, n), rtol=1e-13)
    # traced bounds under grad: reverse mode goes through the while_loop form
    check_grads(lambda x: fori_traced_n(x, znp.asarray(4)), (x,), order=2,
                modes=("fwd", "rev"))
    # bounds as int32 scalars and a lower bound above the upper one
    allclose(fori_traced_n(znp.asarray(x), np.int32(3)), fori_traced_n_ref(x, 3))
    allclose(lax.fori_loop(5, 2, lambda i, v: v + 1.0, znp.asarray(x)), x)


def test_fori_loop_index_and_accumulation():
    # sum of i**2 for i in [3, 10): the index is an integer Array
    out = lax.fori_loop(3, 10, lambda i, acc: acc + i * i, 0)
    assert int(out) == sum(i * i for i in range(3, 10))
    out = zx.make_jaxpr(lambda a: lax.fori_loop(3, 10, lambda i, acc: acc + i * a, 0.0))(2.0)
    assert float(out(2.0)[0]) == 2.0 * sum(range(3, 10))


def test_scan_with_xs_none_and_length():
    def f(c0):
        return lax.scan(lambda c, _: (c * 0.9 + znp.cos(c), c[0] * c[1]), c0, None, length=6)

    def ref(c0):
        c, ys = c0.copy(), []
        for _ in range(6):
            ys.append(c[0] * c[1])
            c = c * 0.9 + np.cos(c)
        return c, np.array(ys)

    c0 = np.array([0.4, -0.8])
    c, ys = f(znp.asarray(c0))
    c_ref, ys_ref = ref(c0)
    allclose(c, c_ref, rtol=1e-13)
    allclose(ys, ys_ref, rtol=1e-13)
    assert ys.shape == (6,)
    check_grads(f, (c0,), order=2, modes=("fwd", "rev"))


def test_scan_reverse_matches_reversed_python_loop():
    xs = RNG.standard_normal((7, 2))

    def f(c0, xs, reverse):
        return lax.scan(lambda c, x: (c * x + 1.0, znp.sum(c) * x), c0, xs, reverse=reverse)

    def ref(c0, xs, reverse):
        c, ys = c0.copy(), np.zeros_like(xs)
        for k in (range(6, -1, -1) if reverse else range(7)):
            ys[k] = c.sum() * xs[k]
            c = c * xs[k] + 1.0
        return c, ys

    c0 = np.array([0.5, 1.5])
    for reverse in (False, True):
        for fn in (f, lambda *a: zx.make_jaxpr(f, static_argnums=2)(*a)(*a[:2])):
            out = fn(znp.asarray(c0), znp.asarray(xs), reverse)
            want = ref(c0, xs, reverse)
            allclose(out[0], want[0], rtol=1e-13)
            allclose(out[1], want[1], rtol=1e-13)
        check_grads(lambda c, x, r=reverse: f(c, x, r), (c0, xs), order=2,
                    modes=("fwd", "rev"))


def test_scan_pytree_carry_ys_unroll_and_length_zero():
    xs = {"u": RNG.standard_normal((4, 3)), "v": RNG.standard_normal(4)}

    def step(c, x):
        a, (b, n) = c
        a = a * x["v"] + x["u"]
        b = b + znp.sum(a)
        return (a, (b, n + 1)), [a * b, {"n": n}]

    init = (znp.zeros(3), (znp.asarray(0.0), znp.asarray(0)))
    (a, (b, n)), (y0, y1) = lax.scan(step, init, xs, unroll=2)
    a_r, b_r, ys_r = np.zeros(3), 0.0, []
    for k in range(4):
        a_r = a_r * xs["v"][k] + xs["u"][k]
        b_r = b_r + a_r.sum()
        ys_r.append(a_r * b_r)
    allclose(a, a_r)
    allclose(b, b_r)
    assert int(n) == 4 and np.asarray(y1["n"]).tolist() == [0, 1, 2, 3]
    allclose(y0, np.stack(ys_r))
    # zero-length: the carry is returned and the ys are empty with the right types
    empty = {"u": np.zeros((0, 3)), "v": np.zeros(0)}
    c, (e0, e1) = lax.scan(step, init, empty)
    assert e0.shape == (0, 3) and e0.dtype == np.float64
    assert e1["n"].shape == (0,) and np.dtype(e1["n"].dtype).kind == "i"
    allclose(c[0], np.zeros(3))
    traced = zx.make_jaxpr(lambda i, x: lax.scan(step, i, x))(init, empty)
    outs = traced(*zx.tree_util.tree_leaves((init, empty)))
    assert [tuple(o.shape) for o in outs] == [(3,), (), (), (0, 3), (0,)]
    allclose(outs[0], np.zeros(3))


def test_map_matches_stacked_python_calls():
    xs = RNG.standard_normal((5, 3))

    def f(x):
        return {"a": znp.sin(x) * znp.sum(x), "b": znp.max(x)}

    out = lax.map(f, znp.asarray(xs))
    allclose(out["a"], np.stack([np.sin(r) * r.sum() for r in xs]))
    allclose(out["b"], xs.max(axis=1))
    # a pytree of xs
    out = lax.map(lambda t: t[0] * t[1], (znp.asarray(xs), znp.asarray(xs[::-1])))
    allclose(out, xs * xs[::-1])
    check_grads(lambda x: lax.map(lambda r: znp.sin(r) * znp.sum(r), x), (xs,), order=2,
                modes=("fwd", "rev"))


# =========================================================================== pairs of transforms
# For each construct: every ordered pair among (jit, grad, vmap, jvp) equals the eager
# reference (the Python loop for values; eager grad / jvp, themselves checked against
# finite differences above, for derivatives).  Compiled programs per construct: the
# primal, its jvp and transpose (for grad(jit f) / jvp(jit f)), vmap(jit f), jit(vmap f)
# and one jit(grad f, jvp f).

TANGENTS = {name: RNG.standard_normal(POINTS[name].shape) for name in CONSTRUCTS}
JITTED = {name: zx.jit(f) for name, (f, _) in CONSTRUCTS.items()}

PAIRS = ["jit_grad", "grad_jit", "vmap_grad", "grad_vmap", "jvp_vmap", "vmap_jvp", "vmap_jit",
         "jit_vmap", "jvp_jit", "jit_jvp", "jvp_grad", "grad_jvp"]

# One program each for jit(grad f), jit(jvp f) and jit(vmap f); jvp(jit f) and vmap(jit f)
# generate the same source as the latter two and reuse their compiled kernels.
JIT_GRAD = {name: zx.jit(zx.grad(scalar(name))) for name in CONSTRUCTS}
JIT_JVP = {name: zx.jit(lambda x, t, f=f: zx.jvp(f, (x,), (t,))[1])
           for name, (f, _) in CONSTRUCTS.items()}
JIT_VMAP = {name: zx.jit(zx.vmap(f)) for name, (f, _) in CONSTRUCTS.items()}


@pytest.fixture(scope="module")
def refs():
    """Eager references per construct: values (Python loop), grads and jvps per point."""
    out = {}
    for name, (f, ref) in CONSTRUCTS.items():
        g = scalar(name)
        pts, ts = POINTS[name], TANGENTS[name]
        out[name] = {
            "val": np.stack([ref(x) for x in pts]),
            "grad": np.stack([np.asarray(zx.grad(g)(x)) for x in pts]),
            "jvp": np.stack([np.asarray(zx.jvp(f, (x,), (t,))[1]) for x, t in zip(pts, ts)]),
        }
    return out


def _weights(name):
    scalar(name)(POINTS[name][0])  # creates the weights
    return _WEIGHTS[name]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_transform_pairs(name, pair, refs):
    f, g, jf = CONSTRUCTS[name][0], scalar(name), JITTED[name]
    pts, ts, r = POINTS[name], TANGENTS[name], refs[name]
    xs = znp.asarray(pts)
    tol = {"rtol": 1e-10, "atol": 1e-12}
    if pair == "jit_grad":
        for x, want in zip(pts, r["grad"]):
            allclose(JIT_GRAD[name](x), want, **tol)
    elif pair == "jit_jvp":
        for x, t, want in zip(pts, ts, r["jvp"]):
            allclose(JIT_JVP[name](x, t), want, **tol)
    elif pair == "grad_jit":
        w = _weights(name)
        for x, want in zip(pts, r["grad"]):
            allclose(zx.grad(lambda x: znp.sum(jf(x) * w))(x), want, **tol)
    elif pair == "vmap_grad":
        allclose(zx.vmap(zx.grad(g))(xs), r["grad"], **tol)
    elif pair == "grad_vmap":
        # the members of the batch take different branches / trip counts
        offsets = pts - pts[0]
        h = zx.grad(lambda x: znp.sum(zx.vmap(g)(x + offsets)))
        allclose(h(pts[0]), r["grad"].sum(0), **tol)
    elif pair == "jvp_vmap":
        out, t_out = zx.jvp(zx.vmap(f), (xs,), (ts,))
        allclose(out, r["val"], **tol)
        allclose(t_out, r["jvp"], **tol)
    elif pair == "vmap_jvp":
        allclose(zx.vmap(lambda x, t: zx.jvp(f, (x,), (t,))[1])(xs, ts), r["jvp"], **tol)
    elif pair == "vmap_jit":
        allclose(zx.vmap(jf)(xs), r["val"], **tol)
    elif pair == "jit_vmap":
        allclose(JIT_VMAP[name](pts), r["val"], **tol)
    elif pair == "jvp_jit":
        for x, t, want, val in zip(pts, ts, r["jvp"], r["val"]):
            out, t_out = zx.jvp(jf, (x,), (t,))
            allclose(out, val, **tol)
            allclose(t_out, want, **tol)
    elif pair in ("jvp_grad", "grad_jvp"):
        # Hessian-vector products: forward-over-reverse and reverse-over-forward both
        # match a central difference of the gradient
        eps = 1e-6
        for x, t in zip(pts, ts):
            if pair == "jvp_grad":
                hv = zx.jvp(zx.grad(g), (x,), (t,))[1]
            else:
                hv = zx.grad(lambda x, t=t: zx.jvp(g, (x,), (t,))[1])(x)
            fd = (np.asarray(zx.grad(g)(x + eps * t)) - np.asarray(zx.grad(g)(x - eps * t))) \
                / (2 * eps)
            allclose(hv, fd, rtol=1e-6, atol=1e-7)
    else:  # pragma: no cover
        raise AssertionError(pair)


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_jit_values_match_python_loop(name):
    for x in POINTS[name]:
        out = JITTED[name](x)
        assert isinstance(out, zx.Array) and out.dtype == np.float64
        allclose(out, CONSTRUCTS[name][1](x), rtol=1e-13)


# =========================================================================== vmap semantics


# both branches run on every member: log of the negative members warns, as in NumPy
@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_vmap_cond_batched_predicate_selects_per_member():
    preds = np.array([True, False, True, False])
    xs = np.array([[2.0, 3.0], [-1.0, -2.0], [0.5, 4.0], [-3.0, 1.0]])

    def f(p, x):  # the branch not taken would give NaN (log of a negative number)
        return lax.cond(p, lambda x: znp.log(x) * x[0], lambda x: -x * 2.0, x)

    out = zx.vmap(f)(preds, xs)
    want = np.stack([np.log(x) * x[0] if p else -x * 2.0 for p, x in zip(preds, xs)])
    allclose(out, want, rtol=1e-14)
    assert not np.isnan(np.asarray(out)).any()
    # as in JAX, a batched predicate evaluates both branches and selects
    text = str(zx.make_jaxpr(zx.vmap(f))(preds, xs))
    assert "select_n" in text and "cond" not in text
    # an unbatched predicate keeps one cond over the whole batch
    text = str(zx.make_jaxpr(zx.vmap(f, in_axes=(None, 0)))(True, xs))
    assert "cond" in text
    allclose(zx.vmap(f, in_axes=(None, 0))(False, xs), -xs * 2.0)
    # a batched predicate computed from the operand, and its derivative per member
    g = zx.vmap(zx.grad(lambda x: lax.cond(x > 0.0, lambda x: x ** 3, lambda x: znp.sin(x), x)))
    xv = np.array([-1.0, 0.5, 2.0, -0.1])
    allclose(g(xv), np.where(xv > 0, 3 * xv ** 2, np.cos(xv)), rtol=1e-14)


def test_vmap_switch_batched_index_clamps_per_member():
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    idx = np.array([-5, 0, 1, 2, 3, 100, 1], np.int32)
    xs = np.arange(7.0) + 0.5
    out = zx.vmap(lambda i, x: lax.switch(i, branches, x))(idx, xs)
    want = [[x + 1.0, x * 10.0, -x][min(max(i, 0), 2)] for i, x in zip(idx, xs)]
    allclose(out, want, rtol=1e-15)
    # index batched, operand not
    out = zx.vmap(lambda i: lax.switch(i, branches, 2.0))(idx)
    allclose(out, [[3.0, 20.0, -2.0][min(max(i, 0), 2)] for i in idx])
    # operand batched, index not
    allclose(zx.vmap(lambda x: lax.switch(7, branches, x))(xs), -xs)


def collatz_steps(n):
    """Steps of the Collatz map until 1 (a while_loop with a cond inside)."""
    def body(c):
        k, m = c
        return k + 1, lax.cond(m % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1, m)
    return lax.while_loop(lambda c: c[1] != 1, body, (0, n))[0]


def collatz_steps_ref(n):
    k = 0
    while n != 1:
        n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
    return k


def test_vmap_while_members_run_their_own_trip_counts():
    # the Collatz example: integer carries, a cond with a batched predicate in the body
    ns = np.arange(1, 40, dtype=np.int64)
    out = zx.vmap(collatz_steps)(ns)
    want = [collatz_steps_ref(int(n)) for n in ns]
    assert np.asarray(out).tolist() == want and len(set(want)) > 10
    assert np.dtype(out.dtype) == np.int64
    # float carries: members that finish early keep their carry (masked updates)
    xs = np.array([0.7, 3.0, 50.0, 150.0, 99.0])

    def doublings(x):
        return lax.while_loop(lambda c: c[1] < 100.0, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))

    n, v = zx.vmap(doublings)(xs)
    for x, nk, vk in zip(xs, np.asarray(n), np.asarray(v)):
        n_ref, v_ref = doublings(x)
        assert nk == int(n_ref) and vk == float(v_ref)
    # per-member derivative 2 ** (own trip count), in both modes
    allclose(zx.vmap(zx.grad(lambda x: doublings(x)[1]))(xs), 2.0 ** np.asarray(n))
    allclose(zx.jvp(zx.vmap(lambda x: doublings(x)[1]), (xs,), (np.ones(5),))[1],
             2.0 ** np.asarray(n))


def test_vmap_while_batched_bound_closed_over():
    def f(x, n):  # the trip count comes from a batched closed-over value
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0),
                              (0, x))[1]

    xs, ns = np.array([1.0, 2.0, -1.0]), np.array([0, 3, 5])
    want = []
    for x, n in zip(xs, ns):
        for _ in range(n):
            x = x * 1.5 + 1.0
        want.append(x)
    allclose(zx.vmap(f)(xs, ns), want)
    allclose(zx.vmap(f, in_axes=(None, 0))(1.0, ns), [f(1.0, n) for n in ns])
    allclose(zx.vmap(zx.grad(f))(xs, ns), 1.5 ** ns)


def test_vmap_fori_loop_and_scan():
    xs = RNG.standard_normal((4, 6))
    c0 = np.array([0.1, -0.2, 0.3, 0.5])

    def step(c, x):
        return c * 0.5 + x, c * x

    def check(out, cs, xss):
        for k, (c, x) in enumerate(zip(cs, xss)):
            c_ref, ys_ref = lax.scan(step, c, x)
            allclose(out[0][k], c_ref)
            allclose(out[1][k], ys_ref)

    check(zx.vmap(lambda x: lax.scan(step, 0.0, x))(xs), [0.0] * 4, xs)  # xs batched
    check(zx.vmap(lambda c: lax.scan(step, c, xs[0]))(c0), c0, [xs[0]] * 4)  # carry batched
    check(zx.vmap(lambda c, x: lax.scan(step, c, x))(c0, xs), c0, xs)  # both
    # a batched array carry meeting an unbatched array
    carries = RNG.standard_normal((2, 3))
    rows = RNG.standard_normal((2, 3))
    out = zx.vmap(lambda c: lax.scan(lambda c, x: (c * x, None), c, rows)[0])(carries)
    allclose(out, carries * rows[0] * rows[1])
    # fori_loop: batched scalar carry with the index used, batched closed-over value,
    # batched lower bound with an array carry
    out = zx.vmap(lambda c: lax.fori_loop(0, 5, lambda i, v: v * 0.5 + i, c))(c0)
    allclose(out, [fori_traced_n_ref_scalar(c, 5) for c in c0])
    out = zx.vmap(lambda a: lax.fori_loop(0, 5, lambda i, v: v * a + i, 1.0))(c0)
    allclose(out, [lax.fori_loop(0, 5, lambda i, v, a=a: v * a + i, 1.0) for a in c0])
    lo = np.array([1, 0])
    out = zx.vmap(lambda x, lo: lax.fori_loop(lo, 4, lambda i, v: v + i * 0.5, x))(carries[:, :2],
                                                                                  lo)
    allclose(out, carries[:, :2] + np.array([3.0, 3.0])[:, None])
    # in_axes=1 on the scanned array; map
    out = zx.vmap(lambda x: lax.scan(lambda c, x: (c + x, c), 0.0, x)[1], in_axes=1)(xs.T)
    allclose(out, np.stack([np.concatenate([[0.0], np.cumsum(r)[:-1]]) for r in xs]))
    allclose(zx.vmap(lambda x: lax.map(lambda r: r * r, x))(xs), xs * xs)
    # vmap of grad of a scan with an array carry (the cotangent is unbatched)
    g = zx.grad(lambda x: znp.sum(lax.scan(lambda c, _: (znp.sin(c), None), x, None,
                                           length=2)[0]))
    allclose(zx.vmap(g)(carries), np.cos(np.sin(carries)) * np.cos(carries))


def fori_traced_n_ref_scalar(c, n):
    for i in range(n):
        c = c * 0.5 + i
    return c


# =========================================================================== reverse mode through while_loop


def newton_cubic(a, b, checkpoint_every=1):
    """The real root of y**3 + a*y - b (a > 0) by Newton's method from y = 0; the trip
    count depends on (a, b).  Returns (root, iterations)."""
    def cond(s):
        y, it = s
        return (znp.abs(y ** 3 + a * y - b) > 1e-13) & (it < 60)

    def body(s):
        y, it = s
        return y - (y ** 3 + a * y - b) / (3.0 * y ** 2 + a), it + 1
    return lax.while_loop(cond, body, (znp.zeros_like(a), 0), checkpoint_every=checkpoint_every)


def fixed_point(p, q, checkpoint_every=1):
    """x = p cos(x) + q by fixed-point iteration until the step is below 1e-13."""
    def body(s):
        x, _ = s
        xn = p * znp.cos(x) + q
        return xn, xn - x
    return lax.while_loop(lambda s: znp.abs(s[1]) > 1e-13, body, (q, znp.ones_like(q)),
                          checkpoint_every=checkpoint_every)[0]


def newton_ift(a, b):
    """dy/da, dy/db of the root by the implicit function theorem."""
    y = float(newton_cubic(a, b)[0])
    d = 3.0 * y * y + a
    return np.array([-y / d, 1.0 / d])


def fixed_point_ift(p, q):
    x = float(fixed_point(p, q))
    d = 1.0 + p * np.sin(x)
    return np.array([np.cos(x) / d, 1.0 / d])


def central_diff(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    out = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = eps
        out.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(out, -1)


NEWTON_POINTS = [(1.0, 2.0), (0.5, -3.0), (2.0, 10.0), (0.3, 0.05)]


def test_newton_while_loop_reverse_mode_matches_ift_and_finite_differences():
    trips = set()
    for a, b in NEWTON_POINTS:
        y, it = newton_cubic(a, b)
        assert abs(float(y) ** 3 + a * float(y) - b) <= 1e-13
        trips.add(int(it))
        ga, gb = zx.grad(lambda a, b: newton_cubic(a, b)[0], argnums=(0, 1))(a, b)
        allclose([ga, gb], newton_ift(a, b), rtol=1e-9)
        fd = central_diff(lambda ab: newton_cubic(ab[0], ab[1])[0], [a, b])
        allclose([ga, gb], fd, rtol=1e-6, atol=1e-9)
        # forward mode agrees
        ta = zx.jvp(lambda a, b=b: newton_cubic(a, b)[0], (a,), (1.0,))[1]
        allclose(ta, ga, rtol=1e-12)
    assert len(trips) >= 3  # data-dependent trip counts


def test_fixed_point_reverse_mode_and_checkpointing():
    for p, q in [(0.6, 0.3), (0.9, -1.0), (0.2, 2.0)]:
        g1 = np.asarray(zx.grad(fixed_point, argnums=(0, 1))(p, q))
        allclose(g1, fixed_point_ift(p, q), rtol=1e-9)
        allclose(g1, central_diff(lambda th: fixed_point(th[0], th[1]), [p, q]), rtol=1e-6)
        # checkpointing every k-th carry (recomputing the rest) gives the same gradient,
        # also when k does not divide the trip count or exceeds it
        for k in (2, 3, 7, 10_000):
            gk = zx.grad(lambda p, q, k=k: fixed_point(p, q, checkpoint_every=k),
                         argnums=(0, 1))(p, q)
            allclose(gk, g1, rtol=1e-14, atol=0)
    check_grads(lambda p, q: fixed_point(p, q, checkpoint_every=3), (0.6, 0.3), order=2,
                modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_reverse_mode_while_loop_with_vector_carry_and_closure():
    w = np.array([0.5, -0.3, 0.8])

    def f(x, w, k):
        def body(s):
            i, v = s
            return i + 1, znp.tanh(v * w + x) * 1.5 + v[::-1] * 0.1
        return lax.while_loop(lambda s: (znp.sum(s[1] ** 2) < 30.0) & (s[0] < 40), body,
                              (0, x), checkpoint_every=k)[1]

    x = np.array([0.2, 0.1, -0.3])
    for k in (1, 3):
        check_grads(lambda x, w, k=k: f(x, w, k), (x, w), order=2, modes=("rev",))
    g1 = zx.grad(lambda x, w: znp.sum(f(x, w, 1) ** 2), argnums=(0, 1))(x, w)
    g3 = zx.grad(lambda x, w: znp.sum(f(x, w, 3) ** 2), argnums=(0, 1))(x, w)
    for a, b in zip(g1, g3):
        allclose(a, b, rtol=1e-14, atol=0)


def poly_while(x):
    """v <- v * x[0] + x[1] from v = 1 until v >= 50: the trip count depends on x."""
    return lax.while_loop(lambda v: v < 50.0, lambda v: v * x[0] + x[1], znp.ones_like(x[0]))


def poly_while_hessian(x):
    a, b = x
    n, v = 0, 1.0
    while v < 50.0:
        v, n = v * a + b, n + 1
    # v_n = a**n + b * (1 + a + ... + a**(n-1))
    s1 = sum(k * a ** (k - 1) for k in range(1, n))
    s2 = sum(k * (k - 1) * a ** (k - 2) for k in range(2, n))
    return np.array([[n * (n - 1) * a ** (n - 2) + b * s2, s1], [s1, 0.0]])


def test_second_derivatives_through_while_loop():
    # scalar hessian with zx.hessian; a vector one by forward-over-reverse columns
    # (zx.hessian of a vector function: test_bug_hessian_through_while_loop_vector_input)
    for p, q in [(0.6, 0.3), (0.9, -1.0)]:
        h = zx.hessian(fixed_point)(p, q)
        fd = (fixed_point_ift(p + 1e-5, q)[0] - fixed_point_ift(p - 1e-5, q)[0]) / 2e-5
        allclose(h, fd, rtol=1e-6)
        allclose(zx.grad(zx.grad(fixed_point))(p, q), h, rtol=1e-12)
    for x in (np.array([1.5, 0.7]), np.array([2.5, -0.4]), np.array([1.1, 2.0])):
        hess = np.stack([np.asarray(zx.jvp(zx.grad(poly_while), (x,), (e,))[1])
                         for e in np.eye(2)], -1)
        allclose(hess, poly_while_hessian(x), rtol=1e-10, atol=1e-10)
        # reverse over forward
        hess_rf = np.stack([np.asarray(zx.grad(lambda x, e=e: zx.jvp(poly_while, (x,), (e,))[1])(x))
                            for e in np.eye(2)])
        allclose(hess_rf, poly_while_hessian(x), rtol=1e-10, atol=1e-10)


def horner(x, coeffs):
    return lax.scan(lambda c, a: (c * x + a, None), 0.0, coeffs)[0]


def horner_fori(x, coeffs):
    return lax.fori_loop(0, coeffs.shape[0], lambda i, c: c * x + znp.asarray(coeffs)[i], 0.0)


def test_hessian_through_scan_and_fori_loop():
    coeffs = np.array([0.5, -2.0, 1.0, 3.0, -1.5])
    d2 = np.polyder(np.poly1d(coeffs), 2)
    for x in (0.7, -1.3, 2.0):
        allclose(zx.hessian(horner)(x, coeffs), d2(x), rtol=1e-12)
        allclose(zx.hessian(horner_fori)(x, coeffs), d2(x), rtol=1e-12)
        # second derivative with respect to the scanned coefficients: zero
        allclose(zx.hessian(horner, argnums=1)(x, coeffs)[0], np.zeros(5))

    def rnn(x):
        v = lax.fori_loop(0, 4, lambda i, v: znp.sin(v * x[::-1]) + v, x)
        _, ys = lax.scan(lambda c, a: (c * a, c), 1.0, v)
        return znp.sum(ys)

    x = np.array([0.3, -0.5, 0.9])
    check_grads(rnn, (x,), order=2, modes=("fwd", "rev"))
    hess = zx.hessian(rnn)(x)
    allclose(hess, central_diff(zx.grad(rnn), x), rtol=1e-6, atol=1e-8)
    allclose(hess, hess.T, rtol=1e-12, atol=1e-12)
    allclose(zx.jacrev(zx.jacrev(rnn))(x), hess, rtol=1e-12, atol=1e-12)
    # under jit (a scalar Horner scan)
    allclose(jit_hessian_horner(0.7, coeffs), d2(0.7), rtol=1e-12)


jit_hessian_horner = zx.jit(zx.hessian(horner))


# Under jit: one program for the gradients of the fixed-point solver with and without
# checkpointing.  (grad(jit(while_loop)) and jit(grad(while_loop)) with a vector carry
# are the while_loop rows of test_transform_pairs; Newton under jit is in the notebook.)
@zx.jit
def jit_solver_grads(p, q):
    return {
        "k1": zx.grad(fixed_point, argnums=(0, 1))(p, q),
        "k3": zx.grad(lambda p, q: fixed_point(p, q, checkpoint_every=3), argnums=(0, 1))(p, q),
    }


def test_reverse_mode_while_loop_under_jit():
    for p, q in [(0.6, 0.3), (0.9, -1.0), (0.2, 2.0)]:
        out = jit_solver_grads(p, q)
        allclose(out["k1"], fixed_point_ift(p, q), rtol=1e-9)
        allclose(out["k1"], zx.grad(fixed_point, argnums=(0, 1))(p, q), rtol=1e-13)
        allclose(out["k3"], out["k1"], rtol=1e-14, atol=0)


jit_hessian_while = zx.jit(lambda p, q, x: (zx.hessian(fixed_point)(p, q),
                                              zx.hessian(poly_while)(x)))


def test_hessian_through_while_loop_under_jit_and_vmap():
    """Forward over reverse through a while_loop whose trip count depends on the
    operands (JAX has no reverse mode here): compiled, and batched (each member runs
    its own number of iterations), against the closed form and the eager Hessian."""
    xs = np.array([[1.5, 0.7], [2.5, -0.4], [1.1, 2.0]])
    h_fixed, h_poly = jit_hessian_while(0.6, 0.3, xs[0])
    allclose(h_fixed, zx.hessian(fixed_point)(0.6, 0.3), rtol=1e-10)
    allclose(h_poly, poly_while_hessian(xs[0]), rtol=1e-10, atol=1e-10)
    batched = zx.vmap(zx.hessian(poly_while))(xs)
    for x, h in zip(xs, batched):
        allclose(h, poly_while_hessian(x), rtol=1e-10, atol=1e-10)
    # reverse over reverse of a function of one number: the inner derivative is a map of
    # one number to one number, evaluated forward (its own transpose), so it traces
    allclose(zx.jit(zx.grad(zx.grad(fixed_point)))(0.6, 0.3),
             zx.grad(zx.grad(fixed_point))(0.6, 0.3), rtol=1e-12)
    # of several numbers it needs the concrete loop (eagerly it works: see above)
    with pytest.raises(errors.NotSupportedError, match="forward over reverse"):
        zx.make_jaxpr(zx.grad(lambda x: zx.grad(poly_while)(x)[0]))(xs[0])


# =========================================================================== errors
# Under a transform the branches / bodies are traced, and types that differ get a
# ZeraxTypeError naming both sides (checked here under make_jaxpr, jit and grad, which
# fail while tracing: nothing is compiled).


def on_true(x):
    return x, x


def on_false(x):
    return x


def _raises_type_error(fn, *needles):
    with pytest.raises(errors.ZeraxTypeError) as info:
        fn()
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, f"{needle!r} not in: {msg}"
    return msg


def test_cond_branches_with_different_types_name_both_sides():
    # structure
    _raises_type_error(lambda: zx.make_jaxpr(lambda x: lax.cond(x > 0, on_true, on_false, x))(1.0),
                       "cond", "on_true", "on_false", "(f64[], f64[])", "(f64[])")
    # dtype (int vs float, float32 vs float64) and shape, under jit and grad
    _raises_type_error(lambda: zx.jit(lambda x: lax.cond(x > 0, lambda x: x,
                                                         lambda x: x.astype(np.float32), x))(1.0),
                       "f32[]", "f64[]")
    _raises_type_error(lambda: zx.make_jaxpr(lambda x: lax.cond(x > 0, lambda x: 1,
                                                                lambda x: x, x))(1.0),
                       "i64[]", "f64[]")
    _raises_type_error(lambda: zx.grad(lambda x: lax.cond(x > 0, lambda x: x,
                                                          lambda x: znp.stack([x, x]), x))(1.0),
                       "f64[2]", "f64[]")
    # switch: a third branch that differs
    _raises_type_error(lambda: zx.make_jaxpr(lambda i, x: lax.switch(
        i, [on_false, on_false, on_true], x))(1, 1.0), "switch", "on_true", "on_false")


def body_returns_float(v):
    return v + 0.5


def test_loop_carry_type_changes_name_both_sides():
    # while_loop: init an int64 but the body returns a float (a Python int init would
    # be weakly typed and take the float dtype, as in JAX)
    for transform in (zx.make_jaxpr, zx.jit):
        _raises_type_error(lambda transform=transform: transform(lambda x: lax.while_loop(
            lambda v: v < x, body_returns_float, np.int64(0)))(1.0),
            "while_loop", "init_val", "body_returns_float", "i64[]", "f64[]")
    # a carry whose structure changes
    _raises_type_error(lambda: zx.make_jaxpr(lambda x: lax.while_loop(
        lambda c: c[0] < 3.0, lambda c: (c[0] + 1.0, c[1], c[1]), (x, x)))(1.0), "while_loop")
    # scan: float32 init, float64 carry out; structure
    _raises_type_error(lambda: zx.make_jaxpr(lambda xs: lax.scan(
        lambda c, x: (c + x, None), np.float32(0), xs))(np.ones(3)), "scan", "f32[]", "f64[]")
    _raises_type_error(lambda: zx.make_jaxpr(lambda xs: lax.scan(
        lambda c, x: ((c, c), None), 0.0, xs))(np.ones(3)), "scan")
    # fori_loop (concrete and traced bounds)
    _raises_type_error(lambda: zx.jit(lambda x: lax.fori_loop(
        0, 3, lambda i, v: v + 0.5, np.int64(0)))(1.0), "i64[]", "f64[]")
    _raises_type_error(lambda: zx.jit(lambda n: lax.fori_loop(
        0, n, lambda i, v: v + 0.5, np.int64(0)))(3), "i64[]", "f64[]")


def cond_fun_vector(v):
    return v < 10.0


def test_while_cond_fun_must_return_a_scalar_bool():
    _raises_type_error(lambda: zx.jit(lambda x: lax.while_loop(
        cond_fun_vector, lambda v: v + 1.0, x))(np.zeros(3)),
        "cond_fun_vector", "scalar bool", "bool[3]")
    _raises_type_error(lambda: zx.make_jaxpr(lambda x: lax.while_loop(
        lambda v: v[0] - 10.0, lambda v: v + 1.0, x))(np.zeros(3)), "scalar bool", "f64[]")


def test_bad_predicates_indices_and_lengths():
    with pytest.raises(errors.ShapeError, match="scalar"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(errors.ShapeError, match="scalar"):
        zx.make_jaxpr(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(np.array([True, False]))
    with pytest.raises(errors.ZeraxTypeError, match="integer"):
        lax.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(errors.ShapeError, match="length"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(errors.ShapeError, match="length"):
        lax.scan(lambda c, x: (c, None), 0.0, np.ones(3), length=4)
    with pytest.raises(errors.ShapeError):
        lax.scan(lambda c, x: (c, None), 0.0)


# =========================================================================== compiled structure


def fori_body(i, v):
    return v * 0.999 + znp.sin(v) * 1e-3


jit_fori_1000 = zx.jit(lambda x: lax.fori_loop(0, 1000, fori_body, x))
jit_fori_unrolled = zx.jit(lambda x: lax.fori_loop(0, 10, fori_body, x, unroll=4))


def test_jitted_loops_are_real_loops_not_unrolled():
    # (the kernel IR of loops in detail: tests/backends/test_kernel_ir_control_flow.py)
    text = jit_fori_1000.lower(1.0).as_text()
    assert "for it0 in 0:i64..1000:i64" in text
    assert text.count("sin(") == 1 and len(text.splitlines()) < 40
    v = 1.0
    for _ in range(1000):
        v = v * 0.999 + np.sin(v) * 1e-3
    allclose(jit_fori_1000(1.0), v, rtol=1e-13)
    # a million iterations: still one loop (lowered, not run)
    text = zx.jit(lambda x: lax.fori_loop(0, 10 ** 6, fori_body, x)).lower(1.0).as_text()
    assert "1000000" in text and text.count("sin(") == 1
    # unroll is a hint: the values are the loop's
    allclose(jit_fori_unrolled(1.0), lax.fori_loop(0, 10, fori_body, 1.0), rtol=1e-14)
    # traced bounds: a while loop; cond: a branch
    text = zx.jit(fori_traced_n).lower(np.ones(2), 3).as_text()
    assert "loop:" in text and "break unless" in text and text.count("sin(") == 1
    text = zx.jit(lambda x: lax.cond(x > 0, znp.sin, znp.cos, x)).lower(1.0).as_text()
    assert "if " in text and "else:" in text
    # reverse mode through a while_loop: a forward loop and a backward loop (of a
    # function of several numbers: of one, grad runs forward, a joint loop)
    text = zx.jit(zx.grad(lambda x: lax.while_loop(lambda v: v[0] < 10.0, lambda v: v * 1.5,
                                                   x).sum())).lower(np.ones(2)).as_text()
    assert text.count("loop:") >= 1 and "for " in text
    # the loss uses the loop's value: the primal loop records the carries for the
    # reverse pass, which does not run the loop a second time
    def loss(x):
        y = lax.while_loop(lambda v: v[0] < 10.0, lambda v: v * 1.5 + 0.1, x)
        return znp.sum(y ** 2)
    x = np.array([1.0, 2.0])
    vg = zx.jit(zx.value_and_grad(loss))
    assert vg.lower(x).as_text().count("loop:") == 1
    (v, g), (v_eager, g_eager) = vg(x), zx.value_and_grad(loss)(x)
    allclose(v, v_eager, rtol=1e-13)
    allclose(g, g_eager, rtol=1e-13)


# =========================================================================== bugs found
# Minimal reproducers of bugs found while writing this file (all fixed): each is the
# test that the fixed behaviour passes.


def test_vmap_while_unbatched_predicate():
    """vmap of a while_loop whose predicate does not depend on the batch (a fixed trip
    count) while the carry is batched.  ``_while_batch`` vmaps cond_fun with out_axes=0,
    which broadcasts the unbatched predicate to the batch, and the loop then fails with
    ZeraxValueError "while failed on operands (), (3,) ...: The truth value of an array
    with more than one element is ambiguous".  Expected: 3 iterations for every member."""
    xs = np.array([0.5, 1.0, -2.0])
    out = zx.vmap(lambda x: lax.while_loop(lambda c: c[0] < 3,
                                           lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1])(xs)
    allclose(out, xs * 8.0)

    def sin3(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, znp.sin(c[1])), (0, x))[1]

    # forward mode under vmap (the joint primal-tangent loop), and vmap of grad
    want = np.cos(np.sin(np.sin(xs))) * np.cos(np.sin(xs)) * np.cos(xs)
    allclose(zx.vmap(lambda x, t: zx.jvp(sin3, (x,), (t,))[1])(xs, np.ones(3)), want)
    allclose(zx.vmap(zx.grad(sin3))(xs), want)
    # fori_loop with traced (unbatched) bounds over a batch
    out = zx.vmap(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x),
                  in_axes=(0, None))(xs, znp.asarray(3))
    allclose(out, xs * 8.0)


def test_hessian_through_while_loop_vector_input():
    """zx.hessian (jacfwd of jacrev) of a function of a vector through a while_loop fails
    eagerly: the jacfwd's vmap batches the tangents but not the primal predicate, which
    is the case above (ZeraxValueError "while failed on operands (2,), (2, 2) ...").
    jacfwd, jacrev of vector functions through a while_loop whose predicate does not
    see the batched values fail the same way.  Expected: the Hessian, which
    forward-over-reverse columns (test_second_derivatives_through_while_loop) give."""
    x = np.array([1.5, 0.7])
    allclose(zx.hessian(poly_while)(x), poly_while_hessian(x), rtol=1e-10, atol=1e-10)


def test_eager_control_flow_checks_types_as_traced_does():
    """Eagerly the Python bodies run directly, but the types are checked as under a
    transform (and as JAX does): an int carry becoming a float, branches of different
    types and a non-scalar cond_fun output are ZeraxTypeErrors."""
    with pytest.raises(errors.ZeraxTypeError):
        lax.while_loop(lambda v: v < 10, body_returns_float, np.int64(0))
    with pytest.raises(errors.ZeraxTypeError):
        lax.cond(True, on_true, on_false, 1.0)
    with pytest.raises(errors.ZeraxTypeError):
        lax.while_loop(cond_fun_vector, lambda v: v + 1.0, znp.zeros(3))


def test_eager_control_flow_returns_arrays():
    """Eagerly, Python or NumPy operands are converted on entry, so every result is a
    zerax Array, as under jit and in JAX."""
    outs = [lax.while_loop(lambda v: v < 10, lambda v: v + 1, 0),
            lax.fori_loop(0, 3, lambda i, v: v + 1.0, 0.0),
            lax.cond(True, lambda v: v * 2, lambda v: v, np.ones(2)),
            lax.switch(0, [lambda v: v * 2], np.ones(2)),
            lax.scan(lambda c, x: (c + 1.0, c), 0.0, None, length=3)[0]]
    assert [type(o).__name__ for o in outs] == ["Array"] * len(outs)


def test_fori_loop_type_error_names_the_users_loop():
    """A fori_loop body that changes the carry type is reported as fori_loop's, with
    only the user's carry types (not the internal scan/while carries of the index and
    bounds), for concrete and traced bounds."""
    for bounds in ((0, 3), (0, znp.asarray(3))):
        with pytest.raises(errors.ZeraxTypeError) as info:
            zx.make_jaxpr(lambda x, b=bounds: lax.fori_loop(
                b[0], b[1], lambda i, v: body_returns_float(v), np.int64(0)))(1.0)
        msg = str(info.value)
        assert "fori_loop" in msg and "(i64[], i64[]" not in msg


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 9), batch_size=st.integers(1, 10))
def test_map_with_batch_size_equals_the_python_loop(n, batch_size):
    xs = {"a": np.arange(2.0 * n).reshape(n, 2), "b": np.arange(float(n))}
    f = lambda d: (znp.sin(d["a"]).sum() * d["b"], d["a"] * 2)  # noqa: E731
    got = zx.lax.map(f, xs, batch_size=batch_size)
    want = [f({"a": xs["a"][i], "b": xs["b"][i]}) for i in range(n)]
    np.testing.assert_allclose(got[0], [w[0] for w in want])
    np.testing.assert_allclose(got[1], np.stack([w[1] for w in want]))


def test_fori_loop_bounds_must_be_integers():
    with pytest.raises(errors.ZeraxTypeError, match="upper bound must be an integer"):
        lax.fori_loop(0, 3.0, lambda i, c: c + 1, 0)
    assert int(lax.fori_loop(np.int32(0), np.int64(3), lambda i, c: c + 1, 0)) == 3


def test_jit_while_array_carries_that_swap_repeat_and_pass_through():
    """Array carries live in reused buffers under jit: swapped, duplicated and
    passed-through carries must still equal the eager loop."""
    def f(a, b, c, n):
        def body(s):
            i, x, y, z, w = s
            return i + 1, y, x + y * 0.5, z, x * 1.0   # swap, compute, pass, copy of old x
        return lax.while_loop(lambda s: s[0] < n, body, (0, a, b, c, a))

    a, b, c = np.arange(3.0), np.ones(3), np.full(3, 7.0)
    for n in (0, 1, 2, 5):
        want = f(a, b, c, n)
        got = zx.jit(f)(a, b, c, n)
        for g_, w_ in zip(got, want):
            np.testing.assert_allclose(g_, w_)
    g = zx.jit(zx.grad(lambda a: f(a, b, c, 4)[2].sum()))(a)
    np.testing.assert_allclose(g, zx.grad(lambda a: f(a, b, c, 4)[2].sum())(a))


# =========================================================================== weak types
# A carry initialised with a Python scalar is weakly typed, as in JAX: it takes the dtype
# the body gives it (JAX promotes such an init to the body's output type).

X32 = np.arange(1.0, 5.0, dtype=np.float32)


def test_python_scalar_carry_takes_the_bodys_dtype():
    def body(c, x):
        return c * 2.0 + x, c

    for run in (lambda: lax.scan(body, 1.0, X32),
                lambda: zx.jit(lambda xs: lax.scan(body, 1.0, xs))(X32)):
        carry, ys = run()
        assert carry.dtype == np.float32 and ys.dtype == np.float32
        want, expect_ys = np.float32(1.0), []
        for x in X32:
            expect_ys.append(want)
            want = want * np.float32(2.0) + x
        allclose(carry, want, rtol=0)
        allclose(ys, np.array(expect_ys), rtol=0)
    out = lax.fori_loop(0, 4, lambda i, c: c + znp.asarray(X32)[i], 0.0)
    assert out.dtype == np.float32 and float(out) == 10.0
    out = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + X32[0]), (0, 0.0))
    assert (out[0].dtype, out[1].dtype) == (np.int64, np.float32)
    i32 = znp.arange(4, dtype=np.int32)
    assert lax.fori_loop(0, 4, lambda i, c: c + 1000 + i32[i], 0).dtype == np.int32
    # weak-preserving bodies keep NumPy's defaults; strong inits are never changed
    assert lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1.0, 0.0).dtype == np.float64
    assert lax.fori_loop(0, 3, lambda i, c: c + 1, 0).dtype == np.int64
    with pytest.raises(errors.ZeraxTypeError, match="f32"):
        lax.fori_loop(0, 3, lambda i, c: c + znp.ones((), np.float64), np.float32(0.0))
    # a Python int carry that the body makes a float becomes a float (JAX: 1.5)
    out = lax.fori_loop(0, 3, lambda i, v: v + 0.5, 0)
    assert out.dtype == np.float64 and float(out) == 1.5
    g = zx.grad(lambda w: lax.scan(lambda c, x: (c + w * x, None), 0.0, X32)[0])(np.float32(2))
    assert g.dtype == np.float32 and float(g) == 10.0


def test_scan_body_must_return_a_pair():
    for body, got in ((lambda c, x: c + x, "one array of shape ()"),
                      (lambda c, x: (c, x, x), "a tuple of length 3")):
        for run in (lambda b=body: lax.scan(b, 0.0, np.ones(3)),
                    lambda b=body: zx.make_jaxpr(lambda xs: lax.scan(b, 0.0, xs))(np.ones(3))):
            with pytest.raises(errors.ZeraxTypeError, match=f"pair.*got {got}"):
                run()
