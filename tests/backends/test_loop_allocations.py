"""Loop bodies that allocate nothing per step (issue 19: the RK4 trajectory).

Small fixed-size intermediates of a loop body (slices, reshapes, concatenations,
elementwise results) live in buffers allocated once, before the loop, when nothing keeps
them past their step; one-element values that only reshapes and concatenations read are
plain scalars; and a loop carry that is a fresh array of the program (nothing else holds
it) is updated in place without a first copy.  Every case is checked against a NumPy
loop, including the cases where a buffer must *not* be shared between steps (a value
that a loop, a branch or the caller keeps).
"""

from __future__ import annotations

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax._src.backends import kernel_ir as K
from zerax._src.backends.lowering import lower_program
from zerax.test_util import check_grads

STEPS = 200
DT = 0.001


def lorenz(xp, y):
    sigma, rho, beta = 10.0, 28.0, 8.0 / 3.0
    return xp.array([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1],
                     y[0] * y[1] - beta * y[2]])


def rk4_trajectory(y0, dt):
    """The benchmark's program (``benchmarks/workloads_programs.py``), shorter."""
    ys = znp.zeros((STEPS, 3)).at[0].set(y0)

    def step(i, ys):
        y = ys[i - 1]
        k1 = lorenz(znp, y)
        k2 = lorenz(znp, y + dt / 2 * k1)
        k3 = lorenz(znp, y + dt / 2 * k2)
        k4 = lorenz(znp, y + dt * k3)
        return ys.at[i].set(y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return lax.fori_loop(1, STEPS, step, ys)


def rk4_reference(y0, dt):
    ys = np.zeros((STEPS, 3))
    ys[0] = y0
    for i in range(1, STEPS):
        y = ys[i - 1]
        k1 = lorenz(np, y)
        k2 = lorenz(np, y + dt / 2 * k1)
        k3 = lorenz(np, y + dt / 2 * k2)
        k4 = lorenz(np, y + dt * k3)
        ys[i] = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return ys


def _statements(stmts):
    for s in stmts:
        yield s
        for block in ("body", "then", "orelse", "before"):
            yield from _statements(getattr(s, block, ()))


@pytest.fixture(scope="module")
def rk4():
    return zx.jit(rk4_trajectory)


def test_rk4_values(rk4):
    y0 = np.array([1.0, 1.0, 1.0])
    out = np.asarray(rk4(znp.asarray(y0), DT))
    np.testing.assert_allclose(out, rk4_reference(y0, DT), rtol=1e-11, atol=1e-12)
    # a second call reuses the buffers: the same values
    np.testing.assert_allclose(np.asarray(rk4(znp.asarray(y0), DT)), out, rtol=0, atol=0)


def test_rk4_step_allocates_nothing():
    # A kernel's scratch buffers are allocated once, before its first statement;
    # the step neither copies the trajectory nor loops over its rows, and the one
    # full copy is the zeros constant's, into the output the loop then updates.
    kernel = lower_program(zx.make_jaxpr(rk4_trajectory)(znp.ones(3), DT).jaxpr)
    loops = [s for s in _statements(kernel.body) if type(s) is K.For and
             type(s.stop) is K.Const and s.stop.value == STEPS]
    steps = [s for s in _statements(kernel.body) if type(s) is K.For and
             s.var.name.startswith("it")]
    assert len(steps) == 1 and len(loops) == 1 and loops[0] in kernel.body
    assert not [s for s in _statements(steps[0].body) if type(s) is K.Call]


def test_one_element_values_built_into_a_vector():
    """``y[1]`` of a vector, ``jnp.array([a, b])`` of scalars: NumPy's values (the
    kernel IR keeps one-element values in one-element buffers, allocated once per
    call, on the stack)."""
    def f(c):
        def step(i, c):
            return znp.array([c[1] * 0.5, c[2] + 1.0, c[0] - c[1]])
        return lax.fori_loop(0, 7, step, c)
    jf = zx.jit(f)
    c = np.array([0.3, -1.2, 2.5])
    expect = c.copy()
    for _ in range(7):
        expect = np.array([expect[1] * 0.5, expect[2] + 1.0, expect[0] - expect[1]])
    np.testing.assert_allclose(np.asarray(jf(znp.asarray(c))), expect, rtol=1e-14)


def test_one_element_value_read_also_as_array():
    """A one-element slice that a fused loop reads too stays an array."""
    def f(c):
        def step(i, c):
            a = c[1:2]
            return c * a + znp.concatenate([a, a.reshape(()).reshape(1), a]) * 0.5
        return lax.fori_loop(0, 4, step, c)
    c = np.array([0.5, 0.9, -0.3])
    expect = c.copy()
    for _ in range(4):
        a = expect[1:2]
        expect = expect * a + np.concatenate([a, a, a]) * 0.5
    np.testing.assert_allclose(np.asarray(zx.jit(f)(znp.asarray(c))), expect, rtol=1e-14)


def test_private_buffers_feeding_carries_and_stacked_outputs():
    """Values reused from one step to the next flow into a carry (through a copying
    reshape/concatenate) and into the stacked ys of a scan: each step's values are its
    own."""
    def f(c):
        def step(c, x):
            y = (c * 2.0 + x).reshape(2, 2)
            z = znp.concatenate([c[1:], c[:1] * 1.5])
            return z + y.reshape(4) * 0.25, y.T
        return lax.scan(step, c, znp.arange(5.0))
    c = np.array([1.0, -2.0, 0.5, 3.0])
    carry, ys = zx.jit(f)(znp.asarray(c))
    e_c, e_ys = c.copy(), []
    for x in np.arange(5.0):
        y = (e_c * 2.0 + x).reshape(2, 2)
        z = np.concatenate([e_c[1:], e_c[:1] * 1.5])
        e_c, _ = z + y.reshape(4) * 0.25, e_ys.append(y.T)
    np.testing.assert_allclose(np.asarray(carry), e_c, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ys), np.stack(e_ys), rtol=1e-14)


def test_value_kept_by_an_inner_loop_is_not_reused():
    """``v`` becomes the result of a loop that runs 0 times (the loop returns the very
    array it started from): ``v`` must not live in a buffer the next step overwrites
    while reading the carry."""
    def f(c, n):
        def step(i, c):
            v = c[::-1] + 0.0
            return lax.fori_loop(0, n * i, lambda j, w: w + 1.0, v)
        return lax.fori_loop(0, 3, step, c)
    c = np.array([1.0, 2.0, 3.0, 4.0])
    expect = c.copy()
    for i in range(3):
        expect = expect[::-1] + 0.0
    np.testing.assert_allclose(np.asarray(zx.jit(f)(znp.asarray(c), 0)), expect)


def test_value_kept_by_a_branch_is_not_reused():
    def f(c):
        def step(i, c):
            v = znp.concatenate([c[2:], c[:2]])
            return lax.cond(i % 2 == 0, lambda v: v, lambda v: v * 2.0, v)
        return lax.fori_loop(0, 5, step, c)
    c = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    expect = c.copy()
    for i in range(5):
        v = np.concatenate([expect[2:], expect[:2]])
        expect = v if i % 2 == 0 else v * 2.0
    np.testing.assert_allclose(np.asarray(zx.jit(f)(znp.asarray(c))), expect)


def test_while_loop_with_small_vectors():
    def f(y):
        def body(s):
            k, y = s
            return k + 1, znp.array([y[1], -y[0]]) * 0.9 + y[::-1] * 0.1
        return lax.while_loop(lambda s: s[0] < 6, body, (0, y))[1]
    y = np.array([1.0, 0.25])
    expect = y.copy()
    for _ in range(6):
        expect = np.array([expect[1], -expect[0]]) * 0.9 + expect[::-1] * 0.1
    np.testing.assert_allclose(np.asarray(zx.jit(f)(znp.asarray(y))), expect, rtol=1e-14)


def test_taken_carry_leaves_inputs_and_other_uses_alone():
    """A carry updated in place takes its initial array only when nothing else holds
    it: not the caller's input, not a value used after the loop."""
    def g(x):   # the input itself is the initial carry: copied, x is unchanged
        return lax.fori_loop(0, 3, lambda i, c: c.at[i].set(-1.0), x)
    x = znp.asarray(np.arange(5.0))
    out = zx.jit(g)(x)
    np.testing.assert_array_equal(np.asarray(out), [-1.0, -1.0, -1.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(x), np.arange(5.0))

    def h(x):   # ys is used again after the loop: the loop copies it
        ys = znp.zeros(4).at[0].set(x)
        out = lax.fori_loop(1, 4, lambda i, c: c.at[i].set(c[i - 1] + 1.0), ys)
        return out, ys
    out, ys = zx.jit(h)(2.0)
    np.testing.assert_array_equal(np.asarray(out), [2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(np.asarray(ys), [2.0, 0.0, 0.0, 0.0])

    def chained(x):   # the second loop starts from the first one's result
        ys = znp.zeros(4).at[0].set(x)
        a = lax.fori_loop(1, 4, lambda i, c: c.at[i].set(c[i - 1] * 2.0), ys)
        return lax.fori_loop(0, 3, lambda i, c: c.at[i + 1].add(c[i]), a), a[0]
    out, first = zx.jit(chained)(1.5)
    np.testing.assert_array_equal(np.asarray(out), [1.5, 4.5, 10.5, 22.5])
    assert float(first) == 1.5


def test_vmap_of_the_rk4_step():
    def step(y):
        k1 = lorenz(znp, y)
        k2 = lorenz(znp, y + DT / 2 * k1)
        return y + DT * k2
    f = zx.jit(zx.vmap(lambda y: lax.fori_loop(0, 5, lambda i, y: step(y), y)))
    y = np.array([[1.0, 1.0, 1.0], [0.5, -2.0, 20.0]])
    expect = y.copy()
    for _ in range(5):
        expect = np.stack([e + DT * lorenz(np, e + DT / 2 * lorenz(np, e)) for e in expect])
    np.testing.assert_allclose(np.asarray(f(znp.asarray(y))), expect, rtol=1e-12)


def test_grad_through_a_loop_of_slices_and_concatenations():
    def f(x):
        def step(i, c):
            return znp.concatenate([c[1:], znp.sin(c[:1])]) * 1.1 + c[1:2] * 0.5
        return znp.sum(lax.fori_loop(0, 4, step, x) ** 2)
    check_grads(zx.jit(f), (np.array([0.3, -0.7, 1.1]),), order=1, modes=("rev",))
