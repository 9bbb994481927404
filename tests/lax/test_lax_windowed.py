"""lax.conv_general_dilated (and wrappers) and lax.reduce_window against direct NumPy
loops; derivatives, jit and vmap."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax.test_util import check_grads

# --------------------------------------------------------------------------- references


def _dilate_pad(x, first, dil, pads, fill):
    """Insert ``d - 1`` ``fill`` values between elements and pad (negative: crop) the
    axes ``first, first + 1, ...`` of ``x``."""
    nsp = len(dil)
    lead = x.shape[:first]
    shape = lead + tuple((s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[first:], dil))
    xd = np.full(shape, fill, dtype=x.dtype)
    xd[(slice(None),) * first + tuple(slice(None, None, d) for d in dil)] = x
    for j, (lo, hi) in enumerate(pads):
        a = first + j
        width = [(0, 0)] * xd.ndim
        width[a] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, width, constant_values=fill)
        crop = [slice(None)] * xd.ndim
        crop[a] = slice(max(-lo, 0), xd.shape[a] - max(-hi, 0))
        xd = xd[tuple(crop)]
    assert xd.ndim == first + nsp
    return xd


def _out_sizes(in_sp, window, strides, dil):
    eff = [(k - 1) * d + 1 for k, d in zip(window, dil)]
    return [max(0, (n - e) // s + 1) if n >= e else 0 for n, e, s in zip(in_sp, eff, strides)]


def ref_conv(x, w, strides, pads, lhs_dil=None, rhs_dil=None, groups=1):
    """NCHW / OIHW convolution (cross-correlation) by a loop over output positions and
    kernel taps."""
    nsp = x.ndim - 2
    lhs_dil = lhs_dil or (1,) * nsp
    rhs_dil = rhs_dil or (1,) * nsp
    n, o, i = x.shape[0], w.shape[0], w.shape[1]
    window = w.shape[2:]
    xd = _dilate_pad(x, 2, lhs_dil, pads, 0)
    out_sp = _out_sizes(xd.shape[2:], window, strides, rhs_dil)
    out = np.zeros((n, o) + tuple(out_sp))
    og = o // groups
    for pos in itertools.product(*(range(m) for m in out_sp)):
        for k in itertools.product(*(range(m) for m in window)):
            idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, rhs_dil))
            xv = xd[(slice(None), slice(None)) + idx]                     # (N, C)
            for g in range(groups):
                wk = w[(slice(g * og, (g + 1) * og), slice(None)) + k]    # (O/G, I)
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += \
                    xv[:, g * i:(g + 1) * i] @ wk.T
    return out


_IDENTITY = {"add": 0.0, "max": -np.inf, "min": np.inf, "mul": 1.0}
_NP_OP = {"add": np.sum, "max": np.max, "min": np.min, "mul": np.prod}


def ref_reduce_window(x, init, op, window, strides, pads, base, wdil):
    """XLA's ReduceWindow by a loop: padding and base-dilation holes are skipped."""
    xd = _dilate_pad(x.astype(float), 0, base, pads, _IDENTITY[op])
    out_sp = _out_sizes(xd.shape, window, strides, wdil)
    out = np.empty(out_sp)
    for pos in itertools.product(*(range(m) for m in out_sp)):
        sl = tuple(slice(p * s, p * s + (k - 1) * d + 1, d)
                   for p, s, k, d in zip(pos, strides, window, wdil))
        red = _NP_OP[op](xd[sl])
        out[pos] = {"add": red + init, "mul": red * init, "max": max(red, init),
                    "min": min(red, init)}[op]
    return out


# --------------------------------------------------------------------------- conv values


@st.composite
def conv_cases(draw):
    nsp = draw(st.integers(1, 2))
    groups = draw(st.sampled_from([1, 2]))
    n = draw(st.integers(1, 2))
    i = draw(st.integers(1, 2))
    o = groups * draw(st.integers(1, 2))
    window = tuple(draw(st.lists(st.integers(1, 3), min_size=nsp, max_size=nsp)))
    spatial = tuple(draw(st.lists(st.integers(1, 6), min_size=nsp, max_size=nsp)))
    strides = tuple(draw(st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp)))
    lhs_dil = tuple(draw(st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp)))
    rhs_dil = tuple(draw(st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp)))
    pads = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp)]
    return n, groups * i, o, i, window, spatial, strides, lhs_dil, rhs_dil, pads, groups


@settings(max_examples=40, deadline=None)
@given(case=conv_cases(), seed=st.integers(0, 2 ** 16))
def test_conv_general_dilated_matches_a_direct_loop(case, seed):
    n, c, o, i, window, spatial, strides, lhs_dil, rhs_dil, pads, groups = case
    # negative padding may not remove more than the (dilated) input has
    for s, d, (lo, hi) in zip(spatial, lhs_dil, pads):
        if (s - 1) * d + 1 + min(lo, 0) + min(hi, 0) < 0:
            return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + spatial)
    w = rng.standard_normal((o, i) + window)
    got = lax.conv_general_dilated(x, w, strides, pads, lhs_dil, rhs_dil,
                                   feature_group_count=groups)
    want = ref_conv(x, w, strides, pads, lhs_dil, rhs_dil, groups)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_padding_strings():
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 1), "SAME") == [(1, 1), (1, 1)]
    assert lax.padtype_to_pads((4,), (4,), (1,), "SAME") == [(1, 2)]
    assert lax.padtype_to_pads((4,), (4,), (1,), "SAME_LOWER") == [(2, 1)]
    assert lax.padtype_to_pads((4,), (4,), (1,), "VALID") == [(0, 0)]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    for mode in ("SAME", "SAME_LOWER", "VALID"):
        pads = lax.padtype_to_pads((7, 6), (5, 2), (2, 3), mode)      # rhs dilation (2, 1)
        got = lax.conv_general_dilated(x, w, (2, 3), mode, rhs_dilation=(2, 1))
        np.testing.assert_allclose(got, ref_conv(x, w, (2, 3), pads, rhs_dil=(2, 1)),
                                   atol=1e-12)
    assert lax.conv_general_dilated(x, w, (2, 3), "SAME").shape == (2, 4, 4, 2)
    with pytest.raises(zx.errors.ZeraxError):
        lax.conv_general_dilated(x, w, (1, 1), "FULL")


def test_layout_strings_and_dimension_numbers():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 2))   # NCHW OIHW
    want = ref_conv(x, w, (1, 2), [(1, 1), (0, 1)])
    nhwc, hwio = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    got = lax.conv_general_dilated(nhwc, hwio, (1, 2), [(1, 1), (0, 1)],
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), atol=1e-12)
    dn = lax.conv_dimension_numbers(nhwc.shape, hwio.shape, ("NHWC", "HWIO", "NCHW"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 1, 2, 3))
    got = lax.conv_general_dilated(nhwc, hwio, (1, 2), [(1, 1), (0, 1)], dimension_numbers=dn)
    np.testing.assert_allclose(got, want, atol=1e-12)
    # the rhs string orders the spatial axes: with 'WH' kernels, strides and padding
    # are given for (W, H)
    got = lax.conv_general_dilated(x, w.transpose(0, 1, 3, 2), (2, 1), [(0, 1), (1, 1)],
                                   dimension_numbers=("NCHW", "OIWH", "NCHW"))
    np.testing.assert_allclose(got, want, atol=1e-12)
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                 dimension_numbers=("NCHW", "OIHW", "NCXW"))


def test_batch_group_count_and_depthwise():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((4, 3, 5)), rng.standard_normal((6, 3, 2))
    got = lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2)
    want = np.concatenate([ref_conv(x[g * 2:(g + 1) * 2], w[g * 3:(g + 1) * 3], (1,),
                                    [(0, 0)]) for g in range(2)], axis=1)
    np.testing.assert_allclose(got, want, atol=1e-12)
    # depthwise: one group per channel, channel multiplier 2
    x, w = rng.standard_normal((2, 3, 6)), rng.standard_normal((6, 1, 3))
    got = lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=3)
    np.testing.assert_allclose(got, ref_conv(x, w, (1,), [(1, 1)], groups=3), atol=1e-12)
    with pytest.raises(zx.errors.ShapeError):
        lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2)


def test_conv_wrappers_and_dtypes():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 2, 2))
    np.testing.assert_allclose(lax.conv(x, w, (1, 1), "VALID"),
                               ref_conv(x, w, (1, 1), [(0, 0), (0, 0)]), atol=1e-12)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(x, w, (2, 1), [(1, 0), (0, 2)], (2, 1), (1, 2)),
        ref_conv(x, w, (2, 1), [(1, 0), (0, 2)], (2, 1), (1, 2)), atol=1e-12)
    out = lax.conv(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME")
    assert out.dtype == np.float32
    xi, wi = np.arange(10).reshape(1, 1, 10), np.array([1, -1]).reshape(1, 1, 2)
    got = lax.conv(xi, wi, (1,), "VALID")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, -np.ones((1, 1, 9)))
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.conv(x, w.astype(np.float32), (1, 1), "VALID")        # lax does not promote
    assert lax.conv(x, np.ones((3, 2, 9, 1)), (1, 1), "VALID").shape == (1, 3, 0, 5)


def test_conv_transpose_is_the_gradient_of_a_strided_conv():
    # With transpose_kernel, conv_transpose of a cotangent equals the vjp of conv in
    # 'SAME' mode when the sizes divide evenly (Keras' Conv2DTranspose convention).
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 8, 8, 2)), rng.standard_normal((3, 3, 2, 5))  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")

    def fwd(v):
        return lax.conv_general_dilated(v, w, (2, 2), "SAME", dimension_numbers=dn)

    ct = rng.standard_normal(fwd(x).shape)
    (want,) = zx.vjp(fwd, x)[1](ct)
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn,
                             transpose_kernel=True)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_conv_transpose_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 4, 3))
    for pad in ("SAME", "VALID", [(1, 2), (0, 1)]):
        for tk in (False, True):
            w = rng.standard_normal((3, 2, 4, 3) if tk else (3, 2, 3, 4))
            want = jax.lax.conv_transpose(x, w, (2, 3), pad, rhs_dilation=(1, 2),
                                          transpose_kernel=tk)
            got = lax.conv_transpose(x, w, (2, 3), pad, rhs_dilation=(1, 2),
                                     transpose_kernel=tk)
            np.testing.assert_allclose(got, np.asarray(want), atol=1e-10)


# --------------------------------------------------------------------------- conv transforms


def test_conv_gradients():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 4, 4, 3)), rng.standard_normal((2, 2, 3, 4))   # NHWC HWIO

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), [(1, 0), (0, 1)], (1, 2), (2, 1),
                                        ("NHWC", "HWIO", "NHWC"), feature_group_count=1)

    check_grads(f, (x, w), order=2)
    g = lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2)  # noqa
    check_grads(g, (rng.standard_normal((1, 4, 5)), rng.standard_normal((4, 2, 3))), order=2)


def test_conv_jit_and_vmap():
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 3, 6)), rng.standard_normal((4, 3, 2))

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2,), "SAME", rhs_dilation=(2,))

    np.testing.assert_allclose(zx.jit(f)(x, w), f(x, w), rtol=1e-12, atol=1e-12)
    xs, ws = rng.standard_normal((3,) + x.shape), rng.standard_normal((3,) + w.shape)
    got = zx.vmap(f)(xs, ws)
    np.testing.assert_allclose(got, np.stack([f(a, b) for a, b in zip(xs, ws)]), atol=1e-12)
    got = zx.vmap(f, (0, None))(xs, w)
    np.testing.assert_allclose(got, np.stack([f(a, w) for a in xs]), atol=1e-12)


def test_small_cnn_trains():
    # one conv layer + average pooling + linear head: the loss goes down under grad
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 1, 6, 6))
    y = (x[:, 0, :3].sum((1, 2)) > x[:, 0, 3:].sum((1, 2))).astype(float)
    params = {"w": 0.3 * rng.standard_normal((4, 1, 3, 3)), "v": 0.3 * rng.standard_normal(4)}

    def loss(p):
        h = zx.nn.relu(lax.conv(x, p["w"], (1, 1), "SAME"))
        h = lax.reduce_window(h, 0.0, lax.add, (1, 1, 6, 6), (1, 1, 6, 6), "VALID") / 36
        logits = znp.reshape(h, (8, 4)) @ p["v"]
        return znp.mean(zx.nn.softplus(logits) - y * logits)

    first = float(loss(params))
    step = zx.grad(loss)
    for _ in range(20):
        g = step(params)
        params = {k: params[k] - 0.5 * np.asarray(g[k]) for k in params}
    assert float(loss(params)) < first


# --------------------------------------------------------------------------- reduce_window


@st.composite
def window_cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    ints = lambda lo, hi: tuple(draw(st.lists(st.integers(lo, hi), min_size=nd,  # noqa: E731
                                              max_size=nd)))
    window, strides, base, wdil = ints(1, 3), ints(1, 2), ints(1, 2), ints(1, 2)
    if draw(st.booleans()):
        padding = draw(st.sampled_from(["SAME", "VALID"]))
    else:
        padding = [tuple(p) for p in draw(st.lists(st.tuples(st.integers(0, 2),
                                                             st.integers(0, 2)),
                                                   min_size=nd, max_size=nd))]
    op = draw(st.sampled_from(["add", "max", "min", "mul"]))
    init = _IDENTITY[op] if draw(st.booleans()) else 0.5
    return shape, window, strides, padding, base, wdil, op, init


@settings(max_examples=40, deadline=None)
@given(case=window_cases(), seed=st.integers(0, 2 ** 16))
def test_reduce_window_matches_a_direct_loop(case, seed):
    shape, window, strides, padding, base, wdil, op, init = case
    x = np.random.default_rng(seed).standard_normal(shape)
    comp = {"add": lax.add, "max": lax.max, "min": lax.min, "mul": lax.mul}[op]
    got = lax.reduce_window(x, init, comp, window, strides, padding, base, wdil)
    if isinstance(padding, str):
        eff = [(k - 1) * d + 1 for k, d in zip(window, wdil)]
        padding = lax.padtype_to_pads(shape, eff, strides, padding)
    want = ref_reduce_window(x, init, op, window, strides, padding, base, wdil)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_reduce_window_general_computation_pytrees_and_ints():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 5))
    # not a known monoid: scanned over the window offsets, padding skipped
    got = lax.reduce_window(x, 1.0, lambda a, b: a * b + 0.0 * a, (2, 3), (1, 2), "SAME")
    want = ref_reduce_window(x, 1.0, "mul", (2, 3), (1, 2),
                             lax.padtype_to_pads((4, 5), (2, 3), (1, 2), "SAME"),
                             (1, 1), (1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    s, t = lax.reduce_window((x, 2 * x), (0.0, 0.0),
                             lambda a, b: (a[0] + b[0], a[1] + b[1]), (2, 2), (1, 1), "VALID")
    np.testing.assert_allclose(t, 2 * np.asarray(s))
    np.testing.assert_allclose(s, ref_reduce_window(x, 0.0, "add", (2, 2), (1, 1),
                                                    [(0, 0)] * 2, (1, 1), (1, 1)))
    xi = rng.integers(-9, 9, (5, 4))
    got = lax.reduce_window(xi, np.iinfo(np.int64).min, lax.max, (2, 2), (2, 2), "SAME")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[xi[r:r + 2, c:c + 2].max() for c in (0, 2)]
                                        for r in (0, 2, 4)])
    with pytest.raises(zx.errors.ZeraxTypeError):
        lax.reduce_window(x, np.float32(0), lax.add, (2, 2), (1, 1), "VALID")


def test_reduce_window_gradients_jit_and_vmap():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 5, 4))

    def max_pool(v):
        return lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2), (1, 2, 2), "SAME")

    def avg_pool(v):
        return lax.reduce_window(v, 0.0, lax.add, (1, 3, 2), (1, 1, 2), [(0, 0), (1, 1), (0, 1)],
                                 window_dilation=(1, 1, 2)) / 6

    check_grads(max_pool, (x,), order=2)
    check_grads(avg_pool, (x,), order=2)
    check_grads(lambda v: lax.reduce_window(v, 1.0, lambda a, b: a * b + 0.0 * a, (2, 2),
                                            (1, 1), "SAME"), (x[0, :3, :3],), order=1)
    np.testing.assert_allclose(zx.vmap(max_pool)(x[:, None]),
                               np.stack([max_pool(a[None]) for a in x]))


def test_reduce_window_max_min_derivative_goes_to_the_first_extreme():
    # XLA's select-and-scatter gives a window's cotangent to its first extreme element
    # (row-major); a tie is not split.
    import zerax as zx
    x = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 3.0, 1.0, 1.0]])
    for op, init, want in (
            (lax.max, -np.inf, [[0, 2, 1, 0], [0, 2, 1, 0]]),
            (lax.min, np.inf, [[1, 1, 0, 1], [1, 0, 2, 0]])):
        def f(v, op=op, init=init):
            return lax.reduce_window(v, init, op, (1, 2), (1, 1), "VALID").sum()
        np.testing.assert_array_equal(np.asarray(zx.grad(f)(x)), want)
        np.testing.assert_array_equal(np.asarray(zx.jit(zx.grad(f))(x)), want)


def _max_pool_grad_reference(x, ct, k):
    """d(sum(ct * max_pool(x)))/dx for a (k, k) stride-1 max-pool over the last two axes
    of ``x`` (C, H, W): each window's cotangent goes to its first maximum (row-major),
    a NaN counting as the maximum, as XLA's select-and-scatter does."""
    out = np.zeros_like(x)
    c_, h, w = x.shape
    for c in range(c_):
        for i in range(h - k + 1):
            for j in range(w - k + 1):
                win = x[c, i:i + k, j:j + k].ravel()
                nan = np.flatnonzero(np.isnan(win))
                p = nan[0] if nan.size else int(np.argmax(win))
                out[c, i + p // k, j + p % k] += ct[c, i, j]
    return out


def test_vmapped_max_pool_gradient_has_no_batch_sized_constant():
    """The CNN tutorials' max-pool: vmapped over a batch inside jit(grad).  The window
    index that picks the first maximum stays a broadcast of P integers (read in place
    by the fused loop), never a program constant of the batched windows' shape; the
    values equal the per-example gradients and a NumPy reference."""
    rng = np.random.default_rng(11)
    # few distinct values: windows with ties; one NaN
    x = rng.integers(-3, 4, (16, 3, 9, 9)).astype(np.float32)
    x[5, 1, 4, 4] = np.nan
    ct = rng.standard_normal((16, 3, 8, 8)).astype(np.float32)

    def pool(v):
        return lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2), (1, 1, 1), "VALID")

    def loss(v, c):
        return znp.sum(pool(v) * c)

    batched = zx.jit(zx.grad(lambda v, c: znp.sum(zx.vmap(pool)(v) * c)))
    closed = zx.make_jaxpr(zx.grad(lambda v, c: znp.sum(zx.vmap(pool)(v) * c)))(x, ct)
    assert all(np.asarray(k).nbytes <= 4096 for k in closed.consts), \
        [np.asarray(k).shape for k in closed.consts]
    got = np.asarray(batched(x, ct))
    each = np.stack([np.asarray(zx.grad(loss)(a, c)) for a, c in zip(x, ct)])
    np.testing.assert_array_equal(got, each)
    want = np.stack([_max_pool_grad_reference(a, c, 2) for a, c in zip(x, ct)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_conv_general_dilated_patches_layout_and_contraction():
    """The patches' feature axis is (channel, filter offsets), and contracting it with a
    kernel is the convolution; layouts and dilations recorded from JAX 0.10.2."""
    x = np.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    p = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "VALID"))
    assert p.shape == (2, 18, 3, 2)
    np.testing.assert_array_equal(p[0, :8, 0, 0], [0, 1, 2, 5, 6, 7, 20, 21])
    w = np.random.default_rng(0).standard_normal((4, 3, 2, 3))
    conv = np.asarray(lax.conv_general_dilated(x, w, (1, 2), "VALID"))
    np.testing.assert_allclose(np.einsum("nfhw,of->nohw", p, w.reshape(4, -1)), conv,
                               rtol=1e-12)

    def weighted(a):
        a = np.asarray(a)
        return float((a * np.sin(np.arange(a.size)).reshape(a.shape)).sum())

    p2 = lax.conv_general_dilated_patches(x.astype(np.float32), (2, 2), (1, 1), "SAME",
                                          dimension_numbers=("NHWC", "OIHW", "NHWC"))
    assert p2.shape == (2, 3, 4, 20) and p2.dtype == np.float32
    np.testing.assert_allclose(weighted(p2.astype(np.float64)), 47.570559123374416,
                               rtol=1e-6)
    p3 = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), [(1, 0), (0, 1)],
                                          lhs_dilation=(2, 1), rhs_dilation=(1, 2))
    assert p3.shape == (2, 12, 7, 4)
    np.testing.assert_allclose(weighted(p3), -116.9113848655926, rtol=1e-12)
