"""Concatenations of slices read in place by fused code (backends/fusion.py
``index_reads``): ``roll``, shifted stencils and strided pieces give NumPy's values, also
when the sliced value is updated in place later in the same program; a grid of many
transposed pieces (hundreds of small loops in one kernel) is compiled without LLVM's
loop unrolling (backends/cpu/compile.py)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import lax

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture(scope="module")
def rolled():
    def f(x, s0, s1):
        return znp.roll(x, s0, 0) * 2.0 + znp.roll(x, s1, 1) - znp.roll(x, -s1, 1)
    return zx.jit(f, static_argnums=(1, 2))


@given(st.integers(-5, 5), st.integers(-7, 7), st.integers(1, 6), st.integers(1, 9))
def test_roll_in_fused_code_matches_numpy(rolled, s0, s1, n0, n1):
    x = np.arange(n0 * n1, dtype=np.float64).reshape(n0, n1) ** 1.5
    ref = np.roll(x, s0, 0) * 2.0 + np.roll(x, s1, 1) - np.roll(x, -s1, 1)
    np.testing.assert_array_equal(np.asarray(rolled(x, s0, s1)), ref)


def test_the_kernel_has_no_materialised_slices():
    f = zx.jit(lambda x: znp.roll(x, 1, 0) + znp.roll(x, -1, 1) - x)
    text = f.lower(np.ones((8, 8))).as_text()
    assert "temp" not in text and text.count("for ") == 2   # one loop nest, no buffer


def test_strided_pieces_and_whole_operands():
    x = np.arange(24.0).reshape(4, 6)
    y = np.arange(8.0).reshape(4, 2) * -1.0

    def f(x, y):
        return znp.concatenate([x[:, ::2], y, x[:, 5:0:-2][:, ::-1]], axis=1) * 3.0 + 1.0
    ref = np.concatenate([x[:, ::2], y, x[:, 5:0:-2][:, ::-1]], axis=1) * 3.0 + 1.0
    np.testing.assert_array_equal(np.asarray(zx.jit(f)(x, y)), ref)


def test_wave_stencil_in_a_loop_matches_a_numpy_loop():
    n, steps, c2 = 16, 20, 0.2
    xs = np.linspace(-1.0, 1.0, n)
    u0 = np.exp(-40.0 * (xs[:, None] ** 2 + xs[None, :] ** 2))

    def lap(u, roll):
        return roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0 * u

    @zx.jit
    def solve(u0):
        def step(i, s):
            u, up = s
            return 2.0 * u - up + c2 * lap(u, znp.roll), u
        return lax.fori_loop(0, steps, step, (u0, u0))[0]
    u, up = u0, u0
    for _ in range(steps):
        u, up = 2.0 * u - up + c2 * lap(u, np.roll), u
    np.testing.assert_allclose(np.asarray(solve(u0)), u, rtol=1e-13, atol=1e-13)


def test_a_value_updated_in_place_after_it_was_sliced():
    # the slices of x must see x before the update, even though they are read later
    def body(i, x):
        shifted = znp.concatenate([x[1:], x[:1]])
        x2 = x.at[0].set(100.0 + i)
        return shifted * 2.0 + x2
    x0 = np.arange(6.0)
    got = np.asarray(zx.jit(lambda x: lax.fori_loop(0, 3, body, x))(x0))
    x = x0.copy()
    for i in range(3):
        shifted = np.concatenate([x[1:], x[:1]])
        x2 = x.copy()
        x2[0] = 100.0 + i
        x = shifted * 2.0 + x2
    np.testing.assert_array_equal(got, x)


def test_grad_and_vmap_through_roll():
    x = np.linspace(0.0, 1.0, 10)
    f = zx.jit(lambda x: znp.sum(znp.sin(znp.roll(x, 3) * x)))
    g = np.asarray(zx.jit(zx.grad(f))(x))
    eps = 1e-6
    fd = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(10)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    xb = np.arange(12.0).reshape(3, 4)
    got = np.asarray(zx.jit(zx.vmap(lambda r: znp.roll(r, 1) + r))(xb))
    np.testing.assert_array_equal(got, np.roll(xb, 1, axis=1) + xb)


def _image_grid(xx, images, nrow, ncol, shape):
    # JAX's VAE example's image_grid: rows of transposed images, the rows stacked
    it = iter(images.reshape((-1,) + shape))
    return xx.vstack([xx.hstack([next(it).T for _ in range(ncol)][::-1])
                      for _ in range(nrow)]).T


def test_an_image_grid_matches_numpy_and_is_not_unrolled(monkeypatch):
    from zerax._src.backends.cpu import compile as cc
    from zerax._src.backends.cpu import engine
    x = np.arange(100 * 15, dtype=np.float32).reshape(100, 15)
    f = zx.jit(lambda v: _image_grid(znp, v > 700.0, 10, 10, (5, 3)))
    np.testing.assert_array_equal(np.asarray(f(x)), _image_grid(np, x > 700.0, 10, 10, (5, 3)))
    kernels = [s.kernel for s in f.lower(x).compile()._exe.steps if s.kernel is not None]
    big = [k for k in kernels if cc.loop_count(k.body) > cc.UNROLL_MAX_LOOPS]
    assert big                       # (100 pieces, each copied and transposed: 600+ loops)
    asked = []
    monkeypatch.setattr(engine, "compile_module",
                        lambda module, *, unroll=True: asked.append(unroll) or b"")
    cc._compile(big[0], "zerax_k_grid_probe", False)
    assert asked == [False]
