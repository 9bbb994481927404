"""The window primitives (ops/windows.py): ``window_patches`` against the windows
read by a Python loop, ``window_patches_add`` as its adjoint, both eagerly, compiled
(top level, large enough for a parallel loop, and inside a scan body) and batched."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
from zerax import lax
from zerax._src.ops.windows import window_out_shape, window_patches, window_patches_add


def loop_patches(x, window, strides, dilation):
    """The definition, one element at a time."""
    nsp = len(window)
    lead = x.shape[:x.ndim - nsp]
    out_sp = window_out_shape(x.shape[x.ndim - nsp:], window, strides, dilation)
    out = np.zeros(lead + (int(np.prod(window)),) + out_sp, x.dtype)
    for li in np.ndindex(*lead):
        for k, offs in enumerate(np.ndindex(*window)):
            for o in np.ndindex(*out_sp):
                src = tuple(oo * s + kk * d for oo, kk, s, d in zip(o, offs, strides, dilation))
                out[li + (k,) + o] = x[li + src]
    return out


def loop_patches_add(p, spatial, window, strides, dilation):
    nsp = len(window)
    lead = p.shape[:p.ndim - nsp - 1]
    out = np.zeros(lead + tuple(spatial), p.dtype)
    for li in np.ndindex(*lead):
        for k, offs in enumerate(np.ndindex(*window)):
            for o in np.ndindex(*p.shape[p.ndim - nsp:]):
                dst = tuple(oo * s + kk * d for oo, kk, s, d in zip(o, offs, strides, dilation))
                out[li + dst] += p[li + (k,) + o]
    return out


@st.composite
def window_cases(draw):
    nsp = draw(st.integers(1, 2))
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    window = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    spatial = tuple(draw(st.integers(0, 7)) for _ in range(nsp))
    return lead + spatial, window, strides, dilation


@settings(max_examples=40, deadline=None)
@given(window_cases(), st.sampled_from([np.float64, np.float32, np.int32]))
def test_eager_patches_match_the_loop_and_patches_add_is_their_adjoint(case, dtype):
    shape, window, strides, dilation = case
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    p = np.asarray(window_patches(x, window, strides, dilation))
    ref = loop_patches(x, window, strides, dilation)
    assert p.dtype == x.dtype and p.shape == ref.shape
    np.testing.assert_array_equal(p, ref)
    spatial = shape[len(shape) - len(window):]
    c = (rng.standard_normal(p.shape) * 10).astype(dtype)
    back = np.asarray(window_patches_add(c, spatial, window, strides, dilation))
    np.testing.assert_allclose(back, loop_patches_add(c, spatial, window, strides, dilation),
                               rtol=1e-6)
    if dtype == np.float64:     # <c, P x> = <P^T c, x>
        np.testing.assert_allclose(np.vdot(c, p), np.vdot(back, x), rtol=1e-10, atol=1e-10)


# (shape, window, strides, dilation): no leading axes; a small case; one large enough
# for a parallel loop at the top level.
COMPILED = [((6, 7), (2, 3), (1, 2), (2, 1)),
            ((2, 3, 9, 8), (3, 3), (2, 1), (1, 2)),
            ((16, 32, 28, 28), (3, 3), (1, 1), (1, 1))]


@pytest.fixture(scope="module")
def compiled():
    def both(x, c, window, strides, dilation):
        spatial = x.shape[x.ndim - len(window):]
        return (window_patches(x, window, strides, dilation),
                window_patches_add(c, spatial, window, strides, dilation))
    return zx.jit(both, static_argnums=(2, 3, 4))


@pytest.mark.parametrize("shape, window, strides, dilation", COMPILED)
def test_compiled_matches_eager(compiled, shape, window, strides, dilation):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    p_ref = np.asarray(window_patches(x, window, strides, dilation))
    c = rng.standard_normal(p_ref.shape)
    p, back = compiled(x, c, window, strides, dilation)
    np.testing.assert_array_equal(np.asarray(p), p_ref)
    np.testing.assert_allclose(
        np.asarray(back),
        np.asarray(window_patches_add(c, shape[len(shape) - 2:], window, strides, dilation)),
        rtol=1e-12, atol=1e-12)


def test_inside_a_compiled_scan_body():
    window, strides, dilation = (2, 2), (1, 1), (1, 1)

    def body(carry, _):
        p = window_patches(carry, window, strides, dilation)
        back = window_patches_add(p * 0.5, carry.shape, window, strides, dilation)
        return back / 2.0, p.sum()

    x = np.random.default_rng(2).standard_normal((4, 5))
    ref_c, ref_ys = x, []
    for _ in range(3):
        p = loop_patches(ref_c, window, strides, dilation)
        ref_ys.append(p.sum())
        ref_c = loop_patches_add(p * 0.5, ref_c.shape, window, strides, dilation) / 2.0
    c, ys = zx.jit(lambda v: lax.scan(body, v, None, length=3))(x)
    np.testing.assert_allclose(np.asarray(c), ref_c, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), ref_ys, rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_over_a_leading_or_window_axis(axis):
    x = np.random.default_rng(3).standard_normal((3, 5, 6))
    window, strides, dilation = (2, 3), (1, 2), (2, 1)
    got = zx.vmap(lambda v: window_patches(v, window, strides, dilation),
                  in_axes=axis)(x)
    ref = np.stack([loop_patches(np.take(x, i, axis), window, strides, dilation)
                    for i in range(x.shape[axis])])
    np.testing.assert_array_equal(np.asarray(got), ref)
    p, spatial = ref[0], np.take(x, 0, axis).shape
    back = zx.vmap(lambda c: window_patches_add(c, spatial, window, strides, dilation),
                   in_axes=1)(np.stack([p, 2 * p], axis=1))
    np.testing.assert_allclose(np.asarray(back)[1],
                               2 * loop_patches_add(p, spatial, window, strides, dilation))


def test_shape_errors_are_clear():
    # (checked when traced: lax's functions check their arguments before binding these)
    with pytest.raises(zx.errors.ShapeError, match="window_patches_add"):
        zx.make_jaxpr(lambda p: window_patches_add(p, (5,), (2,), (1,), (1,)))(
            np.zeros((4, 3)))
    with pytest.raises(zx.errors.ZeraxValueError, match="positive"):
        zx.make_jaxpr(lambda x: window_patches(x, (0,), (1,), (1,)))(np.zeros((4, 3)))
