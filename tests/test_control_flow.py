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
    return lax.fori_loop(lo, n, lambda i, v: znp.sin(v) * 1.1 + v[0] * 0.2 + i * 0.01, x)


def fori_traced_ref(x):
    v = x.copy()
    for i in range(int(np.floor(abs(x[1]))), int(np.floor(abs(x[0]) * 3.0))):
        v = np.sin(v) * 1.1 + v[0] * 0.2 + i * 0.01
    return v


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
    m = lax.map(lambda r: znp.sin(r) * znp.sum(r), ys["y"])
    return znp.concatenate([h, s[None], ys["z"], m.reshape(-1)])


def scan_ref(x):
    h, s = x.copy(), 0.0
    ys_y, ys_z = [None] * 5, [None] * 5
    for k in range(4, -1, -1):
        h = np.tanh(h * SCAN_A[k] + SCAN_B[k] * s) + 0.1 * x
        s = s + h.sum()
        ys_y[k], ys_z[k] = h * s, (h * SCAN_A[k]).sum()
    m = np.stack([np.sin(r) * r.sum() for r in ys_y])
    return np.concatenate([h, [s], ys_z, m.reshape(-1)])


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


jit_fori_traced_n = zx.jit(fori_traced_n)


def test_fori_loop_bounds_traced_by_jit():
    x = np.array([0.3, -1.2])
    for n in (0, 1, 7):
        allclose(jit_fori_traced_n(x, n), fori_traced_n_ref(x, n), rtol=1e-13)
        # the same loop with the bounds concrete (a scan) and eagerly
        allclose(fori_traced_n(znp.asarray(x), n), fori_traced_n_ref(x, n), rtol=1e-13)
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
JIT_VMAP = {name: zx.jit(zx.vmap(f)) for name, (f, _) in CONSTRUCTS.items()}


def _jit_grad_jvp(name):
    f, g = CONSTRUCTS[name][0], scalar(name)
    return zx.jit(lambda x, v: (zx.grad(g)(x), zx.jvp(f, (x,), (v,))[1]))


JIT_GRAD_JVP = {name: _jit_grad_jvp(name) for name in CONSTRUCTS}

PAIRS = ["jit_grad", "grad_jit", "vmap_grad", "grad_vmap", "jvp_vmap", "vmap_jvp", "vmap_jit",
         "jit_vmap", "jvp_jit", "jit_jvp", "jvp_grad", "grad_jvp"]

# Cases that fail because of a zerax bug, each reproduced minimally by a test_bug_* below.
# Remove an entry once its bug is fixed (strict: an unexpected pass fails the run).
_VMAP_PAIRS = ("vmap_grad", "grad_vmap", "jvp_vmap", "vmap_jvp", "vmap_jit", "jit_vmap")
KNOWN_BUGS = {
    **{("scan_map", p): "test_bug_vmap_scan_batched_array_meets_unbatched" for p in _VMAP_PAIRS},
    **{("fori_loop", p): "test_bug_vmap_scan_batched_array_meets_unbatched"
       for p in ("vmap_grad", "vmap_jvp")},
    **{("fori_loop_traced_bounds", p): "test_bug_vmap_while_batched_scalar_meets_array"
       for p in _VMAP_PAIRS},
}


def _pair_params():
    out = []
    for name in CONSTRUCTS:
        for pair in PAIRS:
            bug = KNOWN_BUGS.get((name, pair))
            marks = [pytest.mark.xfail(strict=True, reason=f"zerax bug, see {bug}")] if bug else []
            out.append(pytest.param(name, pair, marks=marks, id=f"{name}-{pair}"))
    return out


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


@pytest.mark.parametrize("name,pair", _pair_params())
def test_transform_pairs(name, pair, refs):
    f, g, jf = CONSTRUCTS[name][0], scalar(name), JITTED[name]
    pts, ts, r = POINTS[name], TANGENTS[name], refs[name]
    xs = znp.asarray(pts)
    tol = dict(rtol=1e-10, atol=1e-12)
    if pair in ("jit_grad", "jit_jvp"):
        for x, t, want_g, want_t in zip(pts, ts, r["grad"], r["jvp"]):
            got_g, got_t = JIT_GRAD_JVP[name](x, t)
            allclose(got_g if pair == "jit_grad" else got_t,
                     want_g if pair == "jit_grad" else want_t, **tol)
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
                hv = zx.grad(lambda x: zx.jvp(g, (x,), (t,))[1])(x)
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
