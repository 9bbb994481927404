"""Products compiled as loop nests (backends/lowering/linalg.py) under jit.

Each operand is indexed through its own axes, so every layout of the dimension numbers
(transposed operands from the transpose rule, batch axes anywhere, several contracting
or free axes) is checked against np.einsum, in several dtypes; products in scan and
fori_loop bodies (buffers reused across iterations, operands copied once per call)
are checked against eager evaluation.  Each test compiles few programs, putting many
products in one.
"""

import functools
import itertools
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zerax as zx
from np_helpers import rand  # noqa: E402 - shared test helpers
import zerax.numpy as znp
from zerax.lax import dot_general
from zerax.scipy.special import logsumexp

# every test runs once per backend (the backend fixture, tests/conftest.py)
pytestmark = pytest.mark.usefixtures("backend")


def assert_close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind in "fc":
        rtol = 2e-5 if want.dtype.itemsize == 4 else 1e-11
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
    else:
        np.testing.assert_array_equal(got, want)


def assert_trees_close(got, want):
    for g, w in zip(zx.tree_util.tree_leaves(got), zx.tree_util.tree_leaves(want),
                    strict=True):
        assert_close(g, w)


# (lhs shape, rhs shape, dimension numbers, einsum spec): the layouts the transpose and
# batching rules produce, and the special cases of the loop nest.
LAYOUTS = [
    ((5, 7), (7, 6), (((1,), (0,)), ((), ())), "ik,kj->ij"),       # x @ W
    ((7, 5), (7, 6), (((0,), (0,)), ((), ())), "ki,kj->ij"),       # x.T @ ct
    ((5, 3, 7), (6, 3, 7), (((2,), (2,)), ((1,), (1,))), "ibk,jbk->bij"),  # rhs copied
    ((3, 5), (3, 6), (((), ()), ((0,), (0,))), "bi,bj->bij"),     # per-example outer
    ((4, 3, 2), (5, 4, 6), (((0,), (1,)), ((), ())), "kij,lkm->ijlm"),
    ((2, 3, 4), (3, 4, 5), (((1, 2), (0, 1)), ((), ())), "ikl,klj->ij"),
    ((7,), (7, 6), (((0,), (0,)), ((), ())), "k,kj->j"),
    ((5, 7), (7,), (((1,), (0,)), ((), ())), "ik,k->i"),           # dot products
    ((7,), (7,), (((0,), (0,)), ((), ())), "k,k->"),
    ((), (3, 4), (((), ()), ((), ())), ",ij->ij"),
    ((2, 0), (0, 5), (((1,), (0,)), ((), ())), "ik,kj->ij"),       # empty contraction
]

# Products with at least 16**3 multiply-adds are register-blocked: odd sizes leave
# remainder rows and contraction steps.
BLOCKED = [
    ((17, 9), (9, 30), (((1,), (0,)), ((), ())), "ik,kj->ij"),
    ((3, 2, 25), (30, 2, 3), (((0,), (2,)), ((1,), (1,))), "kbi,jbk->bij"),
    ((3, 37), (3, 40), (((), ()), ((0,), (0,))), "bi,bj->bij"),
    # float64 register tiles (4 rows x 12 columns): remainder rows, a narrower panel
    # and single columns; and a transposed streamed operand, copied first
    ((23, 20), (20, 31), (((1,), (0,)), ((), ())), "ik,kj->ij"),
    ((20, 23), (31, 20), (((0,), (1,)), ((), ())), "ki,jk->ij"),
]


def _operands(layouts, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [(rand(rng, ls, dtype), rand(rng, rs, dtype)) for ls, rs, _, _ in layouts]


def _check(layouts, got, operands):
    for (_, _, _, spec), g, (a, b) in zip(layouts, got, operands, strict=True):
        want = np.einsum(spec, a, b)
        if a.dtype == np.int8:   # einsum keeps int8 and wraps around, as matmul does
            want = want.astype(np.int8)
        assert_close(g, want)


@functools.partial(zx.jit, static_argnums=1)
def _products(operands, dns):
    return [dot_general(a, b, dn) for (a, b), dn in zip(operands, dns)]


def test_layouts_match_einsum():
    layouts = LAYOUTS + BLOCKED
    operands = _operands(layouts, np.float64)
    got = _products(operands, tuple(dn for _, _, dn, _ in layouts))
    _check(layouts, got, operands)


def test_dtypes_and_operands_computed_in_the_kernel():
    """float32, integers and bools; an int32 product computed in float64
    (preferred_element_type); operands that are intermediate values, copied where the
    layout needs it and never hoisted (only kernel arguments and constants are).  One
    kernel."""
    layouts = [LAYOUTS[i] for i in (0, 2, 7)]
    dtypes = (np.float32, np.int8, np.bool_)
    operands = [op for dt in dtypes for op in _operands(layouts, dt)]
    rng = np.random.default_rng(1)
    i, j = rand(rng, (5, 7), np.int32), rand(rng, (7, 6), np.int32)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((6, 7))

    def f(operands, i, j, a, b):
        dns = [dn for _, _, dn, _ in layouts] * len(dtypes)
        c, d = znp.sin(a), b * 2.0
        return ([dot_general(x, y, dn) for (x, y), dn in zip(operands, dns)],
                dot_general(i, j, LAYOUTS[0][2], preferred_element_type=np.float64),
                dot_general(c, d, (((1,), (1,)), ((), ()))),
                dot_general(d, c, (((1,), (1,)), ((), ()))))
    got, pet, cd, dc = zx.jit(f)(operands, i, j, a, b)
    _check(layouts * len(dtypes), got, operands)
    assert_close(pet, i.astype(np.float64) @ j.astype(np.float64))
    assert_close(cd, np.sin(a) @ (2 * b).T)
    assert_close(dc, (2 * b) @ np.sin(a).T)


@st.composite
def layouts(draw):
    """Random shapes and dimension numbers: batch, contracting and free axes of both
    operands in random positions; the equivalent einsum subscripts."""
    counts = [draw(st.integers(0, 2)) for _ in range(4)]   # batch, contract, lhs/rhs free
    letters = iter(string.ascii_letters)
    groups = [[(next(letters), draw(st.integers(1, 6))) for _ in range(n)] for n in counts]
    b, c, lf, rf = groups
    lhs = draw(st.permutations(b + c + lf))
    rhs = draw(st.permutations(b + c + rf))
    lpos = {lab: i for i, (lab, _) in enumerate(lhs)}
    rpos = {lab: i for i, (lab, _) in enumerate(rhs)}
    dn = ((tuple(lpos[x] for x, _ in c), tuple(rpos[x] for x, _ in c)),
          (tuple(lpos[x] for x, _ in b), tuple(rpos[x] for x, _ in b)))
    out = [x for x, _ in b] + [x for x, _ in lhs if x in dict(lf)] + \
        [x for x, _ in rhs if x in dict(rf)]
    spec = "".join(x for x, _ in lhs) + "," + "".join(x for x, _ in rhs) + "->" + "".join(out)
    return tuple(n for _, n in lhs), tuple(n for _, n in rhs), dn, spec


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(layouts(), min_size=3, max_size=3), st.sampled_from([np.float64, np.int32]))
def test_random_layouts_match_einsum(cases, dtype):
    operands = _operands(cases, dtype, seed=2)
    got = _products(operands, tuple(dn for _, _, dn, _ in cases))   # one compile each
    _check(cases, got, operands)


# --------------------------------------------------------------------------- programs


def _pe_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = znp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return logsumexp(logits) - logits[y]


def test_per_example_gradients_jit_vmap_grad():
    """The per-example benchmark program, smaller: a kernel of a dozen arguments, whose
    loop temporaries must not shadow them."""
    rng = np.random.default_rng(3)
    sizes, batch = (3, 5, 3), 4
    params = [(znp.asarray(rng.standard_normal((m, n))), znp.asarray(rng.standard_normal(n)))
              for m, n in itertools.pairwise(sizes)]
    x = znp.asarray(rng.standard_normal((batch, sizes[0])))
    y = znp.asarray(rng.integers(0, sizes[-1], batch))
    f = zx.vmap(zx.grad(_pe_loss), in_axes=(None, 0, 0))
    assert_trees_close(zx.jit(f)(params, x, y), f(params, x, y))


def _rnn_loss(params, xs):
    w, u, b = params
    step = lambda h, x: (znp.tanh(h @ w + x @ u + b), None)  # noqa: E731
    h, _ = zx.lax.scan(step, znp.zeros((xs.shape[1], w.shape[0])), xs)
    return znp.sum(h ** 2)


def _rnn_numpy_grad(params, xs):
    w, u, b = params
    hs = [np.zeros((xs.shape[1], w.shape[0]))]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ w + x @ u + b))
    dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in range(xs.shape[0] - 1, -1, -1):
        dz = dh * (1.0 - hs[t + 1] ** 2)
        dw += hs[t].T @ dz
        du += xs[t].T @ dz
        db += dz.sum(axis=0)
        dh = dz @ w.T
    return dw, du, db


def test_scan_rnn_grad_under_jit():
    """Forward and transposed products in both scan bodies (x.T @ dz, h.T @ dz,
    dz @ W.T with W's copy made once per call)."""
    rng = np.random.default_rng(4)
    T, B, I, H = 4, 3, 5, 7
    params = (rng.standard_normal((H, H)) / 3, rng.standard_normal((I, H)) / 2,
              rng.standard_normal(H))
    xs = rng.standard_normal((T, B, I))
    g = zx.grad(_rnn_loss)
    got = zx.jit(g)(params, xs)
    assert_trees_close(got, g(params, xs))
    want = _rnn_numpy_grad(params, xs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-10, atol=1e-12)


def test_loop_bodies_whose_products_escape():
    """A product that is itself the carry, or a scanned output, must not be computed
    into a buffer that the next iteration overwrites (only values used within an
    iteration are).  With matrix-vector products (a batch-1 RNN and its gradient)."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 4)) / 2
    h0, xs = rng.standard_normal((3, 4)), rng.standard_normal((5, 3, 4))

    def rnn1(w, xs):   # one sequence: vector carry, h @ W and dz @ W.T
        h, _ = zx.lax.scan(lambda h, x: (znp.tanh(h @ w + x), None), xs[0, 0], xs[:, 0])
        return znp.sum(h ** 2)

    def f(w, h0, xs):
        a = zx.lax.fori_loop(0, 3, lambda i, h: h @ w, h0)   # carry = product of carry
        v = zx.lax.fori_loop(0, 2, lambda i, v: (w * 2.0) @ v, h0[0])   # dot products

        def step(c, x):
            p, q = c
            return (p @ w, znp.tanh(q @ w.T) + x), p @ w.T
        (p, q), ys = zx.lax.scan(step, (h0, h0), xs)
        return a, v, p, q, ys, zx.grad(rnn1)(w, xs)
    assert_trees_close(zx.jit(f)(w, h0, xs), f(w, h0, xs))


def test_scan_carries_in_two_buffers_and_ys_written_in_place():
    """Array carries computed by a scan body live in two buffers swapped each step,
    ys computed by the body are written straight into their row, and a product whose
    only use is ``c + product`` starts its sums from ``c``.  Carries that permute, pass
    through, repeat one value or are also ys must still see each step's values; the
    compiled step allocates nothing."""
    rng = np.random.default_rng(11)
    w = rng.standard_normal((4, 4)) / 2
    h0, xs = rng.standard_normal((3, 4)), rng.standard_normal((6, 3, 4))

    def step(carry, x):
        a, b, _, d, _, acc = carry
        h = znp.tanh(a @ w + x)
        acc = acc + a.T @ h                  # accumulated in place of the product
        new = (h, a, d, d, h, acc)           # new value, old carry, pass-through, repeat
        return new, (h * 2.0, a, b @ w, h)   # fused, a carry input, a product, a carry

    def f(w, h0, xs):
        init = (h0, h0 * 2.0, h0 * 3.0, h0 * 4.0, h0 * 5.0, znp.zeros((4, 4)))
        return zx.lax.scan(step, init, xs)

    assert_trees_close(zx.jit(f)(w, h0, xs), f(w, h0, xs))

    def loss(w, h0, xs):
        (a, b, _, _, e, acc), ys = f(w, h0, xs)
        return znp.sum(a * b) + znp.sum(acc ** 2) + znp.sum(ys[0] * ys[3]) + znp.sum(e)

    g = zx.grad(loss, argnums=(0, 1))
    assert_trees_close(zx.jit(g)(w, h0, xs), g(w, h0, xs))


def test_products_started_from_an_addend():
    """``c + a @ b`` (either order) is computed by the product's loops from ``c``;
    a product also used elsewhere, or an addend computed after it, is left alone."""
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((8, 16)), rng.standard_normal((16, 12))
    c = rng.standard_normal((8, 12))

    def f(a, b, c):
        p = (a * 2.0) @ b
        q = (a * 3.0) @ b      # used twice
        r = c * 2.0            # defined after the products
        return c + a @ b, (b.T @ a.T).T + c, p + r, q + c, q * 3.0, a @ (b * 4.0) + c

    assert_trees_close(zx.jit(f)(a, b, c), f(a, b, c))


def test_rnn_scan_steps_allocate_nothing():
    """In ``jit(grad)`` of a scanned RNN no buffer grows inside either loop (every
    scratch buffer of a kernel is allocated once, before its first statement)."""
    from zerax._src.backends import kernel_ir as K
    from zerax._src.backends.lowering import lower_program

    def statements(stmts):
        for st_ in stmts:
            yield st_
            for block in ("body", "then", "orelse", "before"):
                yield from statements(getattr(st_, block, ()))

    rng = np.random.default_rng(13)
    params = (rng.standard_normal((6, 6)) / 3, rng.standard_normal((5, 6)) / 2,
              rng.standard_normal(6))
    xs = rng.standard_normal((4, 3, 5))
    kernel = lower_program(zx.make_jaxpr(zx.grad(_rnn_loss))(params, xs).jaxpr)
    steps = [st_ for st_ in statements(kernel.body)
             if type(st_) is K.For and st_.var.name.startswith("it")]
    assert len(steps) == 2
    for loop in steps:
        assert not [c for c in statements(loop.body) if type(c) is K.Call and
                    c.name == "reserve"]
