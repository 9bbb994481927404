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

PAIRS = ["jit_grad", "grad_jit", "vmap_grad", "grad_vmap", "jvp_vmap", "vmap_jvp", "vmap_jit",
         "jit_vmap", "jvp_jit", "jit_jvp", "jvp_grad", "grad_jvp"]

# Cases that fail because of a zerax bug, each reproduced minimally by a test_bug_* below.
# Remove an entry once its bug is fixed (strict: an unexpected pass fails the run).
_VMAP_PAIRS = ("vmap_grad", "grad_vmap", "jvp_vmap", "vmap_jvp", "vmap_jit", "jit_vmap")
KNOWN_BUGS = {
    **{("scan_map", p): "test_bug_vmap_scan_probe_extra_batch_axis" for p in _VMAP_PAIRS},
    **{("fori_loop", p): "test_bug_vmap_scan_probe_extra_batch_axis"
       for p in ("vmap_grad", "vmap_jvp")},
    **{("fori_loop_traced_bounds", p): "test_bug_vmap_while_probe_extra_batch_axis"
       for p in _VMAP_PAIRS},
}


def _jit_combo(name, with_vmap):
    """One program for jit(grad f), jit(jvp f) and (unless a known bug breaks it, then
    in a program of its own) jit(vmap f)."""
    f, g = CONSTRUCTS[name][0], scalar(name)

    def combo(x, v, xs):
        return {"grad": zx.grad(g)(x), "jvp": zx.jvp(f, (x,), (v,))[1],
                "vmap": zx.vmap(f)(xs) if with_vmap else None}
    return zx.jit(combo)


JIT_COMBO = {name: _jit_combo(name, (name, "jit_vmap") not in KNOWN_BUGS) for name in CONSTRUCTS}
JIT_VMAP = {name: (zx.jit(zx.vmap(CONSTRUCTS[name][0])) if (name, "jit_vmap") in KNOWN_BUGS
                   else (lambda xs, name=name: JIT_COMBO[name](POINTS[name][0],
                                                               TANGENTS[name][0], xs)["vmap"]))
            for name in CONSTRUCTS}


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
        key, want = ("grad", r["grad"]) if pair == "jit_grad" else ("jvp", r["jvp"])
        for x, t, w in zip(pts, ts, want):
            allclose(JIT_COMBO[name](x, t, pts)[key], w, **tol)
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


# =========================================================================== vmap semantics


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
    # (the Collatz example, with a cond inside the body: test_bug_vmap_while_probe_...)
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
    # batched xs, unbatched carry
    out = zx.vmap(lambda x: lax.scan(lambda c, x: (c * 0.5 + x, c * x), 0.0, x))(xs)
    for k in range(4):
        c, ys = lax.scan(lambda c, x: (c * 0.5 + x, c * x), 0.0, xs[k])
        allclose(out[0][k], c)
        allclose(out[1][k], ys)
    # batched scalar carry, index used in the body, batched closed-over value
    out = zx.vmap(lambda c: lax.fori_loop(0, 5, lambda i, v: v * 0.5 + i, c))(c0)
    allclose(out, [fori_traced_n_ref_scalar(c, 5) for c in c0])
    out = zx.vmap(lambda a: lax.fori_loop(0, 5, lambda i, v: v * a + i, 1.0))(c0)
    allclose(out, [lax.fori_loop(0, 5, lambda i, v: v * a + i, 1.0) for a in c0])
    # in_axes=1 on the scanned array; map
    out = zx.vmap(lambda x: lax.scan(lambda c, x: (c + x, c), 0.0, x)[1], in_axes=1)(xs.T)
    allclose(out, np.stack([np.concatenate([[0.0], np.cumsum(r)[:-1]]) for r in xs]))
    allclose(zx.vmap(lambda x: lax.map(lambda r: r * r, x))(xs), xs * xs)
    # (batched carry and batched xs together, or a batched array carry meeting an
    # unbatched array: test_bug_vmap_scan_probe_extra_batch_axis)


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
        ta = zx.jvp(lambda a: newton_cubic(a, b)[0], (a,), (1.0,))[1]
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
    # (zx.hessian of a vector function: test_bug_hessian_of_loops_with_vector_inputs)
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
    g = zx.grad(rnn)
    hess = np.stack([np.asarray(zx.jvp(g, (x,), (e,))[1]) for e in np.eye(3)], -1)
    allclose(hess, central_diff(g, x), rtol=1e-6, atol=1e-8)
    allclose(hess, hess.T, rtol=1e-12, atol=1e-12)


# Under jit: one program for the solvers' gradients (with and without checkpointing)
# and a Hessian by reverse-over-forward; one jitted primal differentiated from outside.
@zx.jit
def jit_solver_derivatives(a, b, p, q, x):
    return {
        "newton": zx.grad(lambda a, b: newton_cubic(a, b)[0], argnums=(0, 1))(a, b),
        "fixed_point": zx.grad(fixed_point, argnums=(0, 1))(p, q),
        "fixed_point_k3": zx.grad(lambda p, q: fixed_point(p, q, checkpoint_every=3),
                                  argnums=(0, 1))(p, q),
        "hessian_rf": [zx.grad(lambda x, e=e: zx.jvp(poly_while, (x,), (e,))[1])(x)
                       for e in np.eye(2)],
    }


jit_newton = zx.jit(lambda a, b: newton_cubic(a, b)[0])


def test_reverse_mode_while_loop_under_jit():
    for (a, b), (p, q), x in zip(NEWTON_POINTS[1:],
                                 [(0.6, 0.3), (0.9, -1.0), (0.2, 2.0)],
                                 [np.array([1.5, 0.7]), np.array([2.5, -0.4]),
                                  np.array([1.1, 2.0])]):
        out = jit_solver_derivatives(a, b, p, q, x)
        allclose(out["newton"], newton_ift(a, b), rtol=1e-9)
        eager = zx.grad(lambda a, b: newton_cubic(a, b)[0], argnums=(0, 1))(a, b)
        allclose(out["newton"], eager, rtol=1e-12)
        allclose(out["fixed_point"], fixed_point_ift(p, q), rtol=1e-9)
        allclose(out["fixed_point_k3"], out["fixed_point"], rtol=1e-14, atol=0)
        allclose(np.stack(out["hessian_rf"]), poly_while_hessian(x), rtol=1e-10, atol=1e-10)
        # grad of a jitted while loop
        allclose(zx.grad(jit_newton, argnums=(0, 1))(a, b), eager, rtol=1e-12)


def test_hessian_through_while_loop_under_jit_works_or_says_why():
    """Forward over reverse through while_loop needs the trip count while tracing: under
    jit it either works or raises NotSupportedError pointing at fori_loop/scan."""
    try:
        h = zx.jit(zx.hessian(fixed_point))(0.6, 0.3)
    except errors.NotSupportedError as e:
        assert "while_loop" in str(e) and "jit" in str(e)
    else:
        allclose(h, zx.hessian(fixed_point)(0.6, 0.3), rtol=1e-10)


# =========================================================================== bugs found
# Each test_bug_* is a minimal reproducer of a zerax bug, written as the test it should
# pass; KNOWN_BUGS above lists the cases of the transform matrix that it also breaks.


def _all_pass(cases):
    """Run every case (name -> thunk); fail listing all the ones that raise."""
    failed = []
    for name, case in cases.items():
        try:
            case()
        except Exception as e:  # noqa: BLE001 - collected and reported together
            failed.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    assert not failed, "\n".join(failed)


def test_bug_vmap_scan_probe_extra_batch_axis():
    """vmap of scan (hence fori_loop with concrete bounds, map) fails when a batched
    carry meets batched xs, or a batched array carry meets an unbatched array.

    ``_scan_batch`` finds which carries become batched by vmapping the body over dummies
    built (``_batched_outs``) from the operands' *batched* avals (consts and init keep
    their batch axis, xs lose axis 0, which is the batch axis, not the scanned one) plus
    a new batch axis, so per-member shapes are wrong and elementwise batching fails:
    ShapeError "broadcast_in_dim: operand of rank 1 needs 1 broadcast dimensions, got
    (1, 2)"."""
    xs = RNG.standard_normal((4, 6))
    c0 = np.array([0.1, -0.2, 0.3, 0.5])
    carries = np.array([[0.3, -0.5, 0.9], [1.1, 0.2, -0.4]])
    rows = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])

    def carry_and_xs_batched():
        out = zx.vmap(lambda c, x: lax.scan(lambda c, x: (c * 0.5 + x, c * x), c, x))(c0, xs)
        want = [lax.scan(lambda c, x: (c * 0.5 + x, c * x), c, x) for c, x in zip(c0, xs)]
        allclose(out[0], [w[0] for w in want])
        allclose(out[1], np.stack([w[1] for w in want]))

    def array_carry_unbatched_xs():
        out = zx.vmap(lambda c: lax.scan(lambda c, x: (c * x, None), c, rows)[0])(carries)
        allclose(out, carries * rows[0] * rows[1])

    def vmap_of_grad():  # the transposed scan: batched carries, unbatched cotangent
        g = zx.grad(lambda x: znp.sum(lax.scan(lambda c, _: (znp.sin(c), None), x, None,
                                               length=2)[0]))
        allclose(zx.vmap(g)(carries), np.cos(np.sin(carries)) * np.cos(carries))

    _all_pass({"carry_and_xs_batched": carry_and_xs_batched,
               "array_carry_unbatched_xs": array_carry_unbatched_xs,
               "vmap_of_grad": vmap_of_grad})


def test_bug_vmap_while_probe_extra_batch_axis():
    """vmap of while_loop: ``_while_batch.probe_batched`` builds its dummies from the
    batched init's avals plus a new batch axis (the scan bug again), so a body mixing
    batched and unbatched values fails: ShapeError "broadcast_in_dim: operand of rank 2
    needs 2 broadcast dimensions, got (0,)".  The Collatz example (a cond in the body)
    and a fori_loop with a batched lower bound and an array carry hit it."""
    def collatz():
        ns = np.arange(1, 40, dtype=np.int64)
        out = zx.vmap(collatz_steps)(ns)
        want = [collatz_steps_ref(int(n)) for n in ns]
        assert np.asarray(out).tolist() == want and len(set(want)) > 10

    def fori_batched_lower_bound():
        xs, lo = np.array([[1.4, -1.2], [-1.8, 0.6]]), np.array([1, 0])
        out = zx.vmap(lambda x, lo: lax.fori_loop(lo, 4, lambda i, v: v + i * 0.5, x))(xs, lo)
        allclose(out, xs + np.array([3.0, 3.0])[:, None])

    _all_pass({"collatz": collatz, "fori_batched_lower_bound": fori_batched_lower_bound})


def test_bug_vmap_while_unbatched_predicate():
    """vmap of a while_loop whose predicate does not depend on the batch (a fixed trip
    count, e.g. fori_loop with traced but unbatched bounds) while the carry is batched.
    ``_while_batch`` vmaps cond_fun with out_axes=0, which broadcasts the unbatched
    predicate to the batch, and the loop then fails with ZeraxValueError "while failed
    on operands ...: The truth value of an array with more than one element is
    ambiguous".  Expected: the loop runs 3 times for every member."""
    xs = np.array([0.5, 1.0, -2.0])
    out = zx.vmap(lambda x: lax.while_loop(lambda c: c[0] < 3,
                                           lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1])(xs)
    allclose(out, xs * 8.0)
    # the same through jvp of the loop (while_lin under vmap)
    f = zx.vmap(lambda x, t: zx.jvp(lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, znp.sin(c[1])), (0, x))[1], (x,), (t,))[1])
    want = [zx.jvp(lambda x: lax.while_loop(lambda c: c[0] < 3,
                                            lambda c: (c[0] + 1, znp.sin(c[1])), (0, x))[1],
                   (x,), (1.0,))[1] for x in xs]
    allclose(f(xs, np.ones(3)), want)
