"""Control flow through the kernel IR (backends/lowering/control_flow.py, calls.py,
inplace.py): scan, while, cond and the call primitives compiled by the CPU emitter give
what eager evaluation and the equivalent Python loops give; the kernels have the
structure that makes them fast (scalars in registers, carries updated in place or
moved by slot, no parallel loop inside a loop, no copy of a carry per step)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax._src.backends import kernel_ir as K
from zerax._src.backends.lowering import covers, lower_program
from zerax._src.ops.while_loop import while_from_fns   # (its checkpoint_every)


def _kernel(f, *args):
    closed = zx.make_jaxpr(f)(*args)
    assert covers(closed.jaxpr) is None, covers(closed.jaxpr)
    return lower_program(closed.jaxpr)


def _eager(f, *args):
    with zx.disable_jit():
        return f(*args)


def _leaves(x):
    return [np.asarray(v) for v in zx.tree_util.tree_leaves(x)]


def check(f, *args, rtol=0.0, ref=None):
    """jit(f) through the kernel IR equals eager f (and ``ref``, a Python loop, when
    given): bit for bit unless ``rtol``; returns the kernel."""
    kernel = _kernel(f, *args)
    jf = zx.jit(f)
    assert jf.lower(*args).as_text().startswith("kernel ")
    got = _leaves(jf(*args))
    for want in ([_leaves(_eager(f, *args))] + ([_leaves(ref(*args))] if ref else [])):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            if rtol:
                np.testing.assert_allclose(g, w, rtol=rtol)
            else:
                np.testing.assert_array_equal(g, w)
    return kernel


def _walk(stmts, depth=0):
    """(statement, number of loops around it) for every statement of a block."""
    for s in stmts:
        yield s, depth
        t = type(s)
        if t in (K.For, K.Reduce):
            yield from _walk(s.body, depth + 1)
        elif t is K.If:
            yield from _walk(s.then, depth)
            yield from _walk(s.orelse, depth)
        elif t is K.While:
            yield from _walk(s.before, depth + 1)
            yield from _walk(s.body, depth + 1)


def _loops(kernel):
    return [(s, d) for s, d in _walk(kernel.body) if type(s) in (K.For, K.While)]


# --------------------------------------------------------------------------- scan


def test_scalar_fori_loop_is_one_loop_of_registers():
    """A fori_loop of 0-d carries: one For, mutable scalars, no buffer of its own."""
    def f(x):
        return lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + znp.sin(c) * 1e-3, x)
    k = check(f, 1.0)
    assert not k.temps and len(_loops(k)) == 1
    v = 1.0
    for _ in range(1000):
        v = v * 0.999 + np.sin(v) * 1e-3
    np.testing.assert_allclose(float(zx.jit(f)(1.0)), v, rtol=1e-13)
    big = _kernel(lambda x: lax.fori_loop(0, 10 ** 6, lambda i, c: c * 0.5 + 1.0, x), 1.0)
    (loop, _), = _loops(big)
    assert loop.stop.value == 10 ** 6


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "uint8", "bool"])
def test_scan_carries_and_stacked_outputs_of_each_dtype(dtype):
    d = np.dtype(dtype)
    xs = (np.arange(12).reshape(6, 2) % 3).astype(d)

    def f(c0, v0, xs):
        def step(c, x):
            s, v = c
            if d == np.bool_:
                s2, v2 = s ^ x[0], v | x
            else:
                s2, v2 = s + x[0], v * x + x[1]
            return (s2, v2), (v2, s)
        return lax.scan(step, (c0, v0), xs)

    def loop(c0, v0, xs):
        s, v, ys, zs = c0, v0, [], []
        for x in xs:
            old = s
            if d == np.bool_:
                s, v = s ^ x[0], v | x
            else:
                s, v = (s + x[0]).astype(d), (v * x + x[1]).astype(d)
            ys.append(v)
            zs.append(old)
        return (np.asarray(s, d), v), (np.stack(ys), np.stack(zs))
    check(f, np.asarray(1, d), np.ones(2, d), xs, ref=loop)


def test_scan_reverse_and_zero_length():
    xs = np.arange(5.0)

    def f(xs):
        return lax.scan(lambda c, x: (c * 2.0 + x, c), 1.0, xs, reverse=True)

    def loop(xs):
        c, ys = 1.0, [0.0] * 5
        for i in range(4, -1, -1):
            ys[i] = c
            c = c * 2.0 + xs[i]
        return c, np.array(ys)
    check(f, xs, ref=loop)
    empty = np.zeros((0, 3))
    check(lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs), np.ones(3), empty)
    check(lambda x: lax.fori_loop(3, 3, lambda i, c: c * 2.0, x), np.ones(3))


def test_rnn_scan_forward_and_reverse_mode():
    rng = np.random.default_rng(0)
    w, u, xs = rng.standard_normal(8) * 0.5, rng.standard_normal(8) * 0.5, \
        rng.standard_normal((10, 4, 8))

    def loss(w, u, xs):
        def step(h, x):
            h = znp.tanh(h * w + x * u)
            return h, znp.sum(h * h)
        h, ys = lax.scan(step, znp.zeros((4, 8)), xs)
        return znp.sum(ys) + znp.sum(h)
    check(zx.value_and_grad(loss, argnums=(0, 1)), w, u, xs, rtol=1e-13)

    def loop(w, u, xs):
        h, total = np.zeros((4, 8)), 0.0
        for x in xs:
            h = np.tanh(h * w + x * u)
            total += np.sum(h * h)
        return total + np.sum(h)
    np.testing.assert_allclose(float(zx.jit(loss)(w, u, xs)), loop(w, u, xs), rtol=1e-13)


def test_permuted_and_repeated_carries_move_slots_not_data():
    """(a, b) -> (b + 1, a): the pool of slots rotates; returning one carry twice copies."""
    def swap(a, b):
        return lax.fori_loop(0, 5, lambda i, c: (c[1] + 1.0, c[0]), (a, b))

    def loop(a, b):
        for _ in range(5):
            a, b = b + 1.0, a
        return a, b
    k = check(swap, np.arange(3.0), np.zeros(3), ref=loop)
    (loop_stmt, _), = [(s, d) for s, d in _loops(k) if d == 0 and type(s) is K.For and
                       s.stop.value == 5]
    copies = [s for s, _ in _walk(loop_stmt.body) if type(s) is K.For]
    assert len(copies) == 1      # the one loop computing b + 1; a moves by its slot
    check(lambda a: lax.fori_loop(0, 4, lambda i, c: (c[0] * 2.0, c[0]), (a, a)),
          np.arange(3.0) + 1.0)


def test_leapfrog_carries_are_double_buffered():
    def solve(u0):
        def step(i, s):
            u, up = s
            return 2.0 * u - up + 0.1 * (znp.roll(u, 1) + znp.roll(u, -1) - 2.0 * u), u
        return lax.fori_loop(0, 20, step, (u0, u0))[0]
    u0 = np.exp(-np.linspace(-3, 3, 32) ** 2)
    u, up = u0.copy(), u0.copy()
    for _ in range(20):
        u, up = 2.0 * u - up + 0.1 * (np.roll(u, 1) + np.roll(u, -1) - 2.0 * u), u
    check(solve, u0)
    np.testing.assert_allclose(np.asarray(zx.jit(solve)(u0)), u, rtol=1e-13)


# --------------------------------------------------------------------------- while


def test_while_loops_scalars_arrays_and_zero_trips():
    def f(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0,
                                                            c[2] + c[1].sum()), (0, x, 0.0))

    def loop(x, n):
        i, v, s = 0, x, 0.0
        while i < n:
            i, v, s = i + 1, v * 1.5 + 1.0, s + v.sum()
        return np.int64(i), v, np.float64(s)
    for n in (0, 1, 7):
        check(f, np.arange(4.0), n, ref=loop)
    # traced fori bounds are a while loop
    check(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x), np.zeros(2, np.int64), 5)


@given(st.integers(0, 12), st.sampled_from(["float32", "float64", "int16", "uint32"]))
@settings(max_examples=15)
def test_while_matches_python_on_random_trip_counts(n, dtype):
    d = np.dtype(dtype)
    x = (np.arange(3) + 1).astype(d)
    f = _while_fn(dtype)
    got = _leaves(f(x, n))
    i, v = 0, x.copy()
    while i < n:
        i, v = i + 1, (v * np.asarray(3, d) + np.asarray(1, d)).astype(d)
    np.testing.assert_array_equal(got[1], v)
    assert int(got[0]) == n


_while_fns: dict = {}


def _while_fn(dtype):
    if dtype not in _while_fns:
        d = np.dtype(dtype)
        _while_fns[dtype] = zx.jit(lambda x, n: lax.while_loop(
            lambda c: c[0] < n,
            lambda c: (c[0] + 1, c[1] * np.asarray(3, d) + np.asarray(1, d)), (0, x)))
    return _while_fns[dtype]


def test_in_place_updates_of_a_while_carry():
    """``dynamic_update_slice`` of a carry nothing else reads writes into its buffer:
    the loop body has no loop over the carry's rows (a step costs its update)."""
    def fill(buf):
        def body(c):
            i, b = c
            return i + 1, lax.dynamic_update_slice(b, znp.full((1, 2), i * 1.5), (i, 0))
        return lax.while_loop(lambda c: c[0] < 50, body, (0, buf))[1]
    buf = np.zeros((50, 2))
    k = check(fill, buf)
    np.testing.assert_array_equal(buf, 0.0)                 # the caller's input is intact
    (w, _), = [(s, d) for s, d in _loops(k) if type(s) is K.While]
    assert not [s for s, _ in _walk(w.body) if type(s) is K.For and s.stop.value == 50]


def test_old_value_read_after_an_update_keeps_its_copy():
    def body(i, c):
        a, b = c
        new = lax.dynamic_update_slice(a, znp.full((1,), i * 1.0), (i,))
        return new + a[::-1], lax.dynamic_update_slice(
            b, lax.dynamic_slice(b, (i,), (1,)) + 1.0, (i,))

    def loop(a, b):
        a, b = a.copy(), b.copy()
        for i in range(5):
            new = a.copy()
            new[i] = i
            b = b.copy()
            b[i] += 1.0
            a = new + a[::-1]
        return a, b
    f = lambda a, b: lax.fori_loop(0, 5, body, (a, b))   # noqa: E731
    check(f, np.arange(5.0), np.zeros(5), ref=loop)


def test_initial_carry_is_taken_only_when_nothing_else_reads_it():
    def taken(x):
        start = x * 2.0                       # nothing but the loop reads it: taken
        return lax.fori_loop(0, 3, lambda i, c: lax.dynamic_update_slice(
            c, znp.full((1,), 7.0), (i,)), start)

    def kept(x):
        start = x * 2.0                       # read again after the loop: copied
        out = lax.fori_loop(0, 3, lambda i, c: lax.dynamic_update_slice(
            c, znp.full((1,), 7.0), (i,)), start)
        return out + start
    x = np.arange(5.0)
    check(taken, x)
    check(kept, x, ref=lambda x: np.array([7, 7, 7, 6, 8.0]) + x * 2.0)


# --------------------------------------------------------------------------- cond


def test_cond_and_switch_of_scalars_and_arrays():
    def f(i, x):
        return lax.switch(i, [lambda v: (v * 2.0, v.sum()), lambda v: (v - 1.0, v.max()),
                              lambda v: (v, -v.min())], x)
    x = np.arange(4.0)
    for i in (-3, 0, 1, 2, 9):                  # out of range indices clamp
        check(f, i, x, ref=lambda i, x: [(x * 2.0, x.sum()), (x - 1.0, x.max()),
                                         (x, -x.min())][min(max(i, 0), 2)])
    check(lambda p, x: lax.cond(p, lambda v: v + 1, lambda v: v * 3, x), True,
          np.arange(3, dtype=np.int32))
    # an index known when lowering: only that branch
    k = check(lambda x: lax.cond(True, znp.sin, znp.cos, x), x)
    assert not [s for s, _ in _walk(k.body) if type(s) is K.If]


# --------------------------------------------------------------------------- nesting


def test_nested_loops_and_loops_inside_branches():
    def f(x, xs):
        def outer(c, row):
            inner = lax.fori_loop(0, 3, lambda j, a: a * 0.5 + row, c)
            picked = lax.cond(row.sum() > 0, lambda v: lax.fori_loop(
                0, 2, lambda j, a: a + 1.0, v), lambda v: v * -1.0, inner)
            n = lax.while_loop(lambda k: k < 4, lambda k: k + 1, 0)
            return picked + n, inner.sum()
        return lax.scan(outer, x, xs)

    def loop(x, xs):
        c, ys = x, []
        for row in xs:
            a = c
            for _ in range(3):
                a = a * 0.5 + row
            inner = a
            p = inner + 2.0 if row.sum() > 0 else inner * -1.0
            c = p + 4
            ys.append(inner.sum())
        return c, np.array(ys)
    xs = np.random.default_rng(2).standard_normal((6, 3))
    check(f, np.ones(3), xs, ref=loop, rtol=1e-14)


def test_parallel_loops_only_at_the_top_level():
    n = 200_000
    f = lambda x: lax.fori_loop(0, 2, lambda i, c: znp.sin(c) * 2.0, x) + x * 3.0  # noqa: E731
    k = _kernel(f, np.ones(n))
    depths = [d for s, d in _walk(k.body) if type(s) is K.For and s.parallel]
    assert depths and all(d == 0 for d in depths)
    x = np.linspace(0.0, 1.0, n)
    np.testing.assert_allclose(np.asarray(zx.jit(f)(x)), np.sin(np.sin(x) * 2.0) * 2.0 + x * 3.0,
                               rtol=1e-14)


# --------------------------------------------------------------------------- calls


def test_calls_are_inlined():
    @zx.custom_jvp
    def softplus(x):
        return znp.log1p(znp.exp(x))
    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1.0 + znp.exp(-p[0]))))

    @zx.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, ct: (znp.clip(ct, -0.1, 0.1),))
    inner = zx.jit(lambda v: (v, v * 2.0))
    x = np.linspace(-2.0, 2.0, 5)

    def f(x):
        a, b = inner(x)                       # an output that is the operand: copied
        return softplus(a) + zx.checkpoint(lambda v: znp.sin(v) ** 2)(b) + clip_grad(x)
    check(f, x)
    check(zx.grad(lambda x: f(x).sum()), x, rtol=1e-14)
    check(lambda x, t: zx.jvp(zx.checkpoint(lambda v: znp.sin(v) * v), (x,), (t,)), x,
          np.ones(5))
    out, = _leaves(zx.jit(lambda x: inner(x)[0])(x))
    assert not np.shares_memory(out, x)


def test_forward_mode_through_while():
    wl = lambda x: lax.while_loop(lambda c: c[1] < 5, lambda c: (znp.sin(c[0]) * 1.1,   # noqa: E731
                                                               c[1] + 1), (x, 0))[0]
    x = np.linspace(0.1, 0.9, 4)
    check(lambda x, t: zx.jvp(wl, (x,), (t,)), x, np.ones(4), rtol=1e-14)


# --------------------------------------------------------------------------- reverse mode


def _walk_while_loops(k):
    return [s for s, _ in _walk(k.body) if type(s) is K.While]


def test_reverse_mode_through_while_records_in_the_primal_loop():
    """value_and_grad: the primal loop keeps the carries (in buffers that grow), and
    the reverse pass runs the body's backward program over them: one While."""
    def loss(x, w):
        y = lax.while_loop(lambda c: c[0][0] < 10.0,
                           lambda c: (c[0] * 1.5 + znp.sin(c[1] * w), c[1] + 1.0), (x, 0.0))
        return znp.sum(y[0] ** 2) + y[1]
    x = np.array([1.0, 2.0, 0.5])
    vg = zx.value_and_grad(loss, argnums=(0, 1))
    k = check(vg, x, 0.3, rtol=1e-13)
    assert len(_walk_while_loops(k)) == 1
    assert [t for t in k.temps if t.kind == "grow"]
    # grad alone: the loop runs forward once (recording), then backwards
    k = check(zx.grad(loss, argnums=(0, 1)), x, 0.3, rtol=1e-13)
    assert len(_walk_while_loops(k)) == 1

    def loop_grad(x, w, eps=1e-6):                 # central differences of the loss
        f = lambda x, w: float(_eager(loss, x, w))  # noqa: E731
        gx = [(f(x + e, w) - f(x - e, w)) / (2 * eps) for e in np.eye(3) * eps]
        return np.array(gx), (f(x, w + eps) - f(x, w - eps)) / (2 * eps)
    gx, gw = zx.jit(zx.grad(loss, argnums=(0, 1)))(x, 0.3)
    rx, rw = loop_grad(x, 0.3)
    np.testing.assert_allclose(np.asarray(gx), rx, rtol=1e-6)
    np.testing.assert_allclose(float(gw), rw, rtol=1e-6)


def test_reverse_mode_through_while_with_checkpoints_and_zero_trips():
    def f(x, w, n, every):
        return while_from_fns(lambda c: c[1] < n,
                              lambda c: [znp.sin(c[0] * w) + c[0], c[1] + 1],
                              [x, 0], checkpoint_every=every)[0].sum()
    x = np.linspace(0.1, 0.4, 4)
    for every in (1, 3):
        for n in (0, 1, 7):
            check(zx.grad(lambda x, w, n=n, k=every: f(x, w, n, k), argnums=(0, 1)), x, 1.3,
                  rtol=1e-13)
    # inside a scan: the growing buffers are reused by every step of the outer loop
    g = zx.grad(lambda x, w: f(x, w, 4, 1), argnums=(0, 1))

    def outer(x, ws):
        return lax.scan(lambda c, w: (c + g(c, w)[0] * 0.1, g(c, w)[1]), x, ws)
    check(outer, x, np.array([0.5, 1.0, 1.5]), rtol=1e-13)


def test_second_order_through_loops():
    f = lambda x: lax.fori_loop(0, 4, lambda i, c: znp.sin(c) * c + 0.5, x).sum()  # noqa: E731
    x = np.linspace(0.2, 0.8, 3)
    check(zx.hessian(f), x, rtol=1e-12)

    def w(x):
        return lax.while_loop(lambda c: c[1] < 3, lambda c: (znp.sin(c[0]) * 1.2, c[1] + 1),
                              (x, 0))[0].sum()
    check(zx.hessian(w), x, rtol=1e-12)


@given(st.permutations(range(4)), st.lists(st.booleans(), min_size=4, max_size=4),
       st.integers(0, 6), st.booleans())
@settings(max_examples=25)
def test_any_permutation_of_carries_matches_python(perm, bump, length, reverse):
    """Each step returns the carries permuted (some changed, some passed through), as
    a Python loop does: the slots of the pool move, the values never mix."""
    f = _permuting(tuple(perm), tuple(bump), length, reverse)
    init = [np.arange(3.0) + 10 * k for k in range(4)]
    xs = np.arange(length, dtype=np.float64)
    got = _leaves(f(*init, xs))
    c = [a.copy() for a in init]
    order = range(length - 1, -1, -1) if reverse else range(length)
    ys = np.zeros(length)
    for t in order:
        c = [c[p] + xs[t] if b else c[p] for p, b in zip(perm, bump)]
        ys[t] = c[0][0]
    for g, w in zip(got, c + [ys]):
        np.testing.assert_array_equal(g, w)


_permuters: dict = {}


def _permuting(perm, bump, length, reverse):
    key = (perm, bump, length, reverse)
    if key not in _permuters:
        def f(a, b, c, d, xs):
            def step(carry, x):
                new = [carry[p] + x if bb else carry[p] for p, bb in zip(perm, bump)]
                return tuple(new), new[0][0]
            out, ys = lax.scan(step, (a, b, c, d), xs, reverse=reverse)
            return (*out, ys)
        _permuters[key] = zx.jit(f)
    return _permuters[key]


# --------------------------------------------------------------------------- the IR


def test_views_print_their_shape_and_offset():
    """A view's name shows its shape and run-time offset: the printed kernel is its
    cache key, and a load's address depends on both."""
    t = K.Buffer("t", (12,), np.float64, "temp")
    s = K.Var("s", K.I64)
    names = {t.reshaped((3, 4)).name, t.reshaped((4, 3)).name, t.at(4, (2, 4)).name,
             t.at(K.op("mul", s, K.Const(4, K.I64)), (2, 4)).name, t.at(0, (2, 4)).name}
    assert len(names) == 5
    assert t.at(0, (12,)) is t and t.at(4, (2, 4)).at(4, (4,)).offset.value == 8
    g = K.Buffer("g", (16, 3), np.float64, "grow")
    k = K.Kernel("k", [], [], [K.Call("reserve", (g, K.Const(20, K.I64)))], temps=[g])
    assert "temp g:f64[16,3] (grows)" in str(k)


def test_a_host_step_inside_a_loop():
    """A host step (a decomposition, a sort, a callback) inside a loop body compiles
    and gives the eager values."""
    def f(a):
        return lax.fori_loop(0, 2, lambda i, m: znp.linalg.cholesky(m @ m.T + 3.0 * znp.eye(3)),
                             a)
    a = np.eye(3) + 0.1
    np.testing.assert_allclose(np.asarray(zx.jit(f)(a)), np.asarray(_eager(f, a)), rtol=1e-13)