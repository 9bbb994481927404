"""In-place updates of loop carries and private intermediates (the kernel IR's
backends/lowering/inplace.py): ``c.at[i].set(v)`` / ``.add`` / ``dynamic_update_slice``
on a carry write into the carry's buffer, copied once when the loop starts.  Values are
checked against NumPy loops; that a step's cost does not grow with the carry is checked
on the kernel IR (no copy and no loop over the carry inside the loop body), never by
timing."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax._src.backends import kernel_ir as K
from zerax._src.backends.lowering import lower_program

# every test runs once per backend (the backend fixture, tests/conftest.py)
pytestmark = pytest.mark.usefixtures("backend")


def _statements(stmts):
    for s in stmts:
        yield s
        for block in ("body", "then", "orelse", "before"):
            yield from _statements(getattr(s, block, ()))


def _step_loops(f, *args):
    """The kernel IR of ``f``: its loops over steps (scans' ``For``s, ``While``s)."""
    k = lower_program(zx.make_jaxpr(f)(*args).jaxpr)
    return [s for s in _statements(k.body) if type(s) is K.While or
            (type(s) is K.For and s.var.name.startswith("it"))], k


def _loops_over(stmts, n) -> int:
    """How many ``For`` loops of ``n`` iterations ``stmts`` hold (a copy of a carry)."""
    return sum(1 for s in _statements(stmts) if type(s) is K.For and
               type(s.stop) is K.Const and s.stop.value == n)


def _trajectory(n):
    def traj(y0, w):
        ys = znp.zeros((n, 3)).at[0].set(y0)

        def body(i, ys):
            y = ys[i - 1]
            return ys.at[i].set(y + 0.01 * znp.sin(w * y))
        return lax.fori_loop(1, n, body, ys)
    return traj


def _trajectory_numpy(n, y0, w):
    ys = np.zeros((n, 3))
    ys[0] = y0
    for i in range(1, n):
        ys[i] = ys[i - 1] + 0.01 * np.sin(w * ys[i - 1])
    return ys


Y0, W = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("n", [64, 3000])
def test_fori_row_updates_are_in_place(n):
    f = zx.jit(_trajectory(n))
    y0 = Y0.copy()
    np.testing.assert_allclose(np.asarray(f(y0, W)), _trajectory_numpy(n, Y0, W), rtol=1e-13)
    np.testing.assert_array_equal(y0, Y0)          # the caller's input is never written
    (loop,), kernel = _step_loops(f, Y0, W)
    # A step neither copies the (n, 3) carry nor loops over its n rows; the zeros
    # the first row is written into are copied once, into the output itself.
    assert _loops_over(loop.body, n) == 0 and _loops_over(kernel.body, n) == 1


def test_scan_scatter_add_and_while_dynamic_update_slice():

    def hist(xs):
        def body(h, x):
            k = znp.clip(znp.floor(x * 4).astype(znp.int32), 0, 3)
            return h.at[k].add(1.0), x * 2
        return lax.scan(body, znp.zeros(4), xs)

    xs = np.random.default_rng(1).random(200)
    f = zx.jit(hist)
    h, ys = f(xs)
    np.testing.assert_array_equal(np.asarray(h), np.bincount(np.clip(
        np.floor(xs * 4).astype(int), 0, 3), minlength=4).astype(float))
    np.testing.assert_allclose(np.asarray(ys), xs * 2)
    (loop,), _ = _step_loops(f, xs)
    assert _loops_over(loop.body, 4) == 0     # h.at[k].add(1): one element per step

    def fill(buf):
        def cond(c):
            return c[0] < 10

        def body(c):
            i, b = c
            return i + 1, lax.dynamic_update_slice(b, znp.full((1, 2), i * 1.5), (i, 0))
        return lax.while_loop(cond, body, (0, buf))[1]

    buf = np.zeros((10, 2))
    g = zx.jit(fill)
    np.testing.assert_allclose(np.asarray(g(buf)), np.repeat(np.arange(10.0)[:, None] * 1.5,
                                                             2, axis=1))
    np.testing.assert_array_equal(buf, 0.0)
    (loop,), kernel = _step_loops(g, buf)
    assert _loops_over(loop.body, 10) == 0 and _loops_over(kernel.body, 10) == 1


def test_vmap_and_grad_of_in_place_loops():
    n = 40
    traj = _trajectory(n)
    ys0 = np.stack([Y0, 2 * Y0, -Y0])
    v = zx.jit(zx.vmap(traj, in_axes=(0, None)))
    np.testing.assert_allclose(np.asarray(v(ys0, W)),
                               np.stack([_trajectory_numpy(n, y, W) for y in ys0]), rtol=1e-13)
    (loop,), _ = _step_loops(v, ys0, W)
    assert _loops_over(loop.body, n) == 0
    loss = zx.jit(lambda y0, w: znp.sum(traj(y0, w) ** 2))
    g = zx.jit(zx.grad(lambda y0, w: znp.sum(traj(y0, w) ** 2), argnums=(0, 1)))
    for arg, got in enumerate(g(Y0, W)):     # against central differences of the loss
        fd = []
        for k in range(3):
            e = np.eye(3)[k] * 1e-6
            hi = [Y0, W]
            lo = [Y0, W]
            hi[arg], lo[arg] = hi[arg] + e, lo[arg] - e
            fd.append((float(loss(*hi)) - float(loss(*lo))) / 2e-6)
        np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-6)
    loops, _ = _step_loops(g, Y0, W)                   # the forward loop
    assert _loops_over(loops[0].body, n) == 0


def test_old_value_read_after_update_is_copied():
    """A body that still reads the old carry after updating it, and carries that swap,
    keep copies where they need them (values as NumPy's)."""
    def body(i, c):
        a, b = c
        new = a.at[i].set(i * 1.0)
        return new + a[::-1], b.at[i].add(1.0)    # a read after its update
    f = zx.jit(lambda a, b: lax.fori_loop(0, 5, body, (a, b)))
    a0, b0 = np.arange(5.0), np.zeros(5)
    ra, rb = f(a0, b0)
    a, b = a0.copy(), b0.copy()
    for i in range(5):
        new = a.copy()
        new[i] = i
        a, b = new + a[::-1], b + np.eye(5)[i]
    np.testing.assert_allclose(np.asarray(ra), a)
    np.testing.assert_allclose(np.asarray(rb), b)
    np.testing.assert_array_equal(a0, np.arange(5.0))

    def swap(i, c):
        a, b = c
        return b.at[0].set(i * 1.0), a.at[1].set(-i * 1.0)
    s = zx.jit(lambda a, b: lax.fori_loop(0, 3, swap, (a, b)))
    a, b = np.zeros(3), np.ones(3)
    ra, rb = s(a, b)
    for i in range(3):
        a, b = b.copy(), a.copy()
        a[0], b[1] = i, -i
    np.testing.assert_allclose(np.asarray(ra), a)
    np.testing.assert_allclose(np.asarray(rb), b)


def test_chained_updates_of_an_intermediate():
    f = zx.jit(lambda x: x.at[0].set(1.0).at[2].add(5.0).at[-1].set(-1.0))
    x = np.zeros(6)
    np.testing.assert_allclose(np.asarray(f(x)), [1.0, 0.0, 5.0, 0.0, 0.0, -1.0])
    np.testing.assert_array_equal(x, 0.0)
    _, kernel = _step_loops(f, x)       # one copy of x, into the output; then in place
    assert _loops_over(kernel.body, 6) == 1
