"""zerax.nn's layers against references written independently in NumPy (loops and
formulas), Equinox's initial parameters (recorded values), finite-difference gradients."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.lax as lax
import zerax.nn as nn
import zerax.numpy as znp
import zerax.random as zr
from zerax import errors
from zerax.test_util import check_grads

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(0)


def rand(*shape, dtype=F64):
    return RNG.standard_normal(shape).astype(dtype)


def with_params(layer, **arrays):
    """The layer with the given fields replaced (explicit weights for reference checks)."""
    names = list(arrays)
    return nn.tree_at(lambda m: tuple(getattr(m, n) for n in names), layer,
                      tuple(znp.asarray(arrays[n]) for n in names),
                      is_leaf=lambda x: x is None)


# ------------------------------------------------------------------ initialisation
# Recorded with /tmp/anchors (equinox 0.13.8, jax 0.10, jax_enable_x64, dtype=float32):
#   eqx.nn.Linear(3, 2, key=jr.key(0), dtype=f32).weight / .bias
#   eqx.nn.Conv2d(2, 2, 2, key=jr.key(1), dtype=f32).bias
#   eqx.nn.Embedding(3, 2, key=jr.key(2), dtype=f32).weight
#   eqx.nn.GRUCell(2, 1, key=jr.key(3), dtype=f32).bias_n
#   eqx.nn.MLP(2, 1, 3, 2, key=jr.key(4), dtype=f32).layers[-1].weight
EQX_LINEAR_W = [0.39527028799057007, -0.3667575418949127, -0.3150275945663452,
                -0.4379483163356781, -0.35586315393447876, 0.25636085867881775]
EQX_LINEAR_B = [-0.568928062915802, -0.5532271862030029]
EQX_CONV_B = [-0.06813231855630875, 0.0345739871263504]
EQX_EMB = [0.3605741560459137, 1.2849894762039185, -0.7387343645095825, 1.1830744743347168,
           -0.20641915500164032, -0.8333566188812256]
EQX_GRU_BN = [-0.45284533500671387]
EQX_MLP_LAST_W = [-0.4240496754646301, 0.42709630727767944, 0.34424182772636414]


def test_initialisation_matches_equinox():
    lin = nn.Linear(3, 2, key=zr.key(0))
    assert lin.weight.dtype == F32 and lin.weight.shape == (2, 3)
    # within 1 ulp of float32 (zerax.random's float32 uniform rounds as NumPy does)
    np.testing.assert_allclose(np.ravel(lin.weight), EQX_LINEAR_W, rtol=1e-6)
    np.testing.assert_allclose(lin.bias, EQX_LINEAR_B, rtol=1e-6)
    conv = nn.Conv2d(2, 2, 2, key=zr.key(1))
    assert conv.weight.shape == (2, 2, 2, 2) and conv.bias.shape == (2, 1, 1)
    np.testing.assert_allclose(np.ravel(conv.bias), EQX_CONV_B, rtol=1e-6)
    emb = nn.Embedding(3, 2, key=zr.key(2))
    np.testing.assert_allclose(np.ravel(emb.weight), EQX_EMB, rtol=1e-6)
    np.testing.assert_allclose(nn.GRUCell(2, 1, key=zr.key(3)).bias_n, EQX_GRU_BN, rtol=1e-6)
    mlp = nn.MLP(2, 1, 3, 2, key=zr.key(4))
    np.testing.assert_allclose(np.ravel(mlp.layers[-1].weight), EQX_MLP_LAST_W, rtol=1e-6)
    # bounds: uniform on [-1/sqrt(fan_in), 1/sqrt(fan_in))
    big = nn.Linear(100, 50, key=zr.key(5), dtype=F64)
    assert big.weight.dtype == F64
    assert float(abs(big.weight).max()) < 0.1 and float(abs(big.weight).max()) > 0.09
    with pytest.raises(errors.ZeraxTypeError, match="key="):
        nn.Linear(2, 2, key=None)


# ------------------------------------------------------------------ dense
def test_linear_identity_lambda():
    w, b, x = rand(2, 3), rand(2), rand(3)
    lin = with_params(nn.Linear(3, 2, key=zr.key(0), dtype=F64), weight=w, bias=b)
    np.testing.assert_allclose(lin(x), w @ x + b)
    nobias = nn.Linear(3, 2, use_bias=False, key=zr.key(0))
    assert nobias.bias is None and nobias(x.astype(F32)).shape == (2,)
    sc = nn.Linear("scalar", "scalar", key=zr.key(1))
    assert sc.weight.shape == (1, 1) and sc(znp.asarray(2.0, F32)).shape == ()
    with pytest.raises(errors.ShapeError, match="vmap"):
        lin(znp.ones((4, 3)))
    xs = rand(5, 3)
    np.testing.assert_allclose(zx.vmap(lin)(xs), xs @ w.T + b)
    assert nn.Identity(1, 2, a=3)(x) is x
    np.testing.assert_allclose(nn.Lambda(znp.tanh)(x, key=None), np.tanh(x))


def test_mlp_and_sequential():
    mlp = nn.MLP(3, 2, width_size=4, depth=2, activation=znp.tanh, key=zr.key(0), dtype=F64)
    x = rand(3)
    h = x
    for layer in mlp.layers[:-1]:
        h = np.tanh(np.asarray(layer.weight) @ h + np.asarray(layer.bias))
    ref = np.asarray(mlp.layers[-1].weight) @ h + np.asarray(mlp.layers[-1].bias)
    np.testing.assert_allclose(mlp(x), ref, rtol=1e-12)
    assert nn.MLP(3, "scalar", 4, 0, key=zr.key(1))(x.astype(F32)).shape == ()
    # Equinox applies activations per neuron: a softmax final activation sees scalars
    sm = nn.MLP(3, 2, 4, 1, final_activation=zx.nn.softmax, key=zr.key(2))
    np.testing.assert_allclose(sm(x.astype(F32)), [1.0, 1.0])
    # scan=True: the same parameters stacked, the same function
    scanned = nn.MLP(3, 2, width_size=4, depth=3, activation=znp.tanh, key=zr.key(0),
                     dtype=F64, scan=True)
    plain = nn.MLP(3, 2, width_size=4, depth=3, activation=znp.tanh, key=zr.key(0), dtype=F64)
    assert scanned.scan and scanned.layers[1].weight.shape == (2, 4, 4)
    np.testing.assert_array_equal(scanned.layers[1].weight[1], plain.layers[2].weight)
    np.testing.assert_allclose(scanned(x), plain(x), rtol=1e-12)
    gs = nn.filter_grad(lambda m: m(x).sum())(scanned)
    gp = nn.filter_grad(lambda m: m(x).sum())(plain)
    np.testing.assert_allclose(gs.layers[1].weight[0], gp.layers[1].weight, rtol=1e-12)
    # Sequential: same as calling in order; slicing gives a Sequential
    seq = nn.Sequential([mlp.layers[0], nn.Lambda(znp.tanh), mlp.layers[1]])
    np.testing.assert_allclose(seq(x), mlp.layers[1](np.tanh(mlp.layers[0](x))))
    assert isinstance(seq[0:2], nn.Sequential) and len(seq[0:2]) == 2 and seq[2] is seq.layers[2]
    # a key is split among layers (Dropout gets its share)
    seq2 = nn.Sequential([nn.Dropout(0.5), nn.Dropout(0.5)])
    y = seq2(znp.ones(200), key=zr.key(3))
    k1, k2 = zr.split(zr.key(3), 2)
    ref = nn.Dropout(0.5)(nn.Dropout(0.5)(znp.ones(200), key=k1), key=k2)
    np.testing.assert_array_equal(y, ref)


def test_dense_gradients():
    lin = nn.Linear(3, 2, key=zr.key(0), dtype=F64)
    check_grads(lambda w, x: with_params(lin, weight=w)(x), (rand(2, 3), rand(3)), order=2,
                modes=("fwd", "rev"))
    mlp = nn.MLP(2, 1, 3, 1, activation=znp.tanh, key=zr.key(1), dtype=F64)
    check_grads(lambda x: mlp(x), (rand(2),), order=2, modes=("fwd", "rev"))


# ------------------------------------------------------------------ convolutions
def conv_ref(x, w, b, stride, pads, dil, groups):
    """Direct loops: out[o, p] = sum_{c, k} xpad[g*cin + c, p*s + k*d] w[o, c, k] + b[o]."""
    nd = x.ndim - 1
    xp = np.pad(x, [(0, 0)] + list(pads))
    cout, cin_g = w.shape[:2]
    ks = w.shape[2:]
    out_sp = [(xp.shape[1 + i] - dil[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((cout, *out_sp))
    per_group = cout // groups
    for o in range(cout):
        g = o // per_group
        for pos in np.ndindex(*out_sp):
            acc = 0.0
            for c in range(cin_g):
                for k in np.ndindex(*ks):
                    idx = tuple(pos[i] * stride[i] + k[i] * dil[i] for i in range(nd))
                    acc += xp[(g * cin_g + c,) + idx] * w[(o, c) + k]
            out[(o,) + pos] = acc + (0.0 if b is None else b[o])
    return out


@pytest.mark.parametrize("nd,cfg", [
    (1, dict(stride=2, padding=1, dilation=1, groups=1)),
    (1, dict(stride=1, padding=[(2, 0)], dilation=2, groups=2)),
    (2, dict(stride=(2, 1), padding=((1, 0), (0, 2)), dilation=(1, 2), groups=1)),
    (2, dict(stride=1, padding=0, dilation=1, groups=2)),
    (3, dict(stride=1, padding=1, dilation=1, groups=1)),
])
def test_conv_matches_loops(nd, cfg):
    cls = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[nd]
    cin, cout, k = 2, 4, 2 if nd == 3 else 3
    conv = cls(cin, cout, k, dtype=F64, key=zr.key(0), **cfg)
    spatial = (5,) * nd if nd == 3 else (7,) * nd
    x = rand(cin, *spatial)
    w = np.asarray(conv.weight)
    b = np.asarray(conv.bias).reshape(-1)
    pads = conv.padding
    ref = conv_ref(x, w, b, conv.stride, pads, conv.dilation, conv.groups)
    np.testing.assert_allclose(conv(x), ref, rtol=1e-10, atol=1e-12)


def test_conv_padding_strings_and_modes():
    x = rand(1, 6, 5)
    same = nn.Conv2d(1, 2, 3, padding="SAME", dtype=F64, key=zr.key(0))
    valid = nn.Conv2d(1, 2, 3, padding="valid", dtype=F64, key=zr.key(0))
    assert same(x).shape == (2, 6, 5) and valid(x).shape == (2, 4, 3)
    w, b = np.asarray(same.weight), np.asarray(same.bias).ravel()
    np.testing.assert_allclose(same(x), conv_ref(x, w, b, (1, 1), ((1, 1), (1, 1)), (1, 1), 1))
    for mode, np_mode in (("REFLECT", "reflect"), ("REPLICATE", "edge"),
                          ("circular", "wrap")):
        c = nn.Conv2d(1, 2, 3, padding=1, padding_mode=mode, dtype=F64, key=zr.key(0))
        xp = np.pad(x, [(0, 0), (1, 1), (1, 1)], mode=np_mode)
        np.testing.assert_allclose(c(x), conv_ref(xp, w, b, (1, 1), ((0, 0), (0, 0)),
                                                  (1, 1), 1), rtol=1e-12)
    with pytest.raises(errors.ZeraxValueError, match="divisible"):
        nn.Conv2d(3, 2, 3, groups=2, key=zr.key(0))
    with pytest.raises(errors.ZeraxValueError, match="padding_mode"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror", key=zr.key(0))
    with pytest.raises(errors.ShapeError, match="rank 3"):
        same(znp.ones((2, 1, 6, 5)))


def conv_transpose_ref(x, w, stride, pads, out_pad, dil):
    """Scatter form (PyTorch's definition with the kernel flipped, as Equinox's equals):
    full[o, i*s + k*d] += x[c, i] * w[o, c, K-1-k]; then crop (p_lo, p_hi - out_pad)."""
    nd = x.ndim - 1
    cout = w.shape[0]
    ks = w.shape[2:]
    wf = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    full_sp = [(x.shape[1 + i] - 1) * stride[i] + dil[i] * (ks[i] - 1) + 1 + out_pad[i]
               for i in range(nd)]
    full = np.zeros((cout, *full_sp))
    for c in range(x.shape[0]):
        for pos in np.ndindex(*x.shape[1:]):
            for k in np.ndindex(*ks):
                idx = tuple(pos[i] * stride[i] + k[i] * dil[i] for i in range(nd))
                full[(slice(None),) + idx] += x[(c,) + pos] * wf[(slice(None), c) + k]
    sl = tuple(slice(p[0], full_sp[i] - p[1]) for i, p in enumerate(pads))
    return full[(slice(None),) + sl]


@pytest.mark.parametrize("nd,cfg", [
    (1, dict(stride=2, padding=1, output_padding=1, dilation=1)),
    (2, dict(stride=(2, 3), padding=0, output_padding=(1, 0), dilation=(1, 2))),
])
def test_conv_transpose_matches_scatter(nd, cfg):
    cls = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d}[nd]
    ct = cls(2, 3, 3, use_bias=False, dtype=F64, key=zr.key(1), **cfg)
    x = rand(2, *(4,) * nd)
    ref = conv_transpose_ref(x, np.asarray(ct.weight), ct.stride, ct.padding,
                             ct.output_padding, ct.dilation)
    np.testing.assert_allclose(ct(x), ref, rtol=1e-10, atol=1e-12)
    same = cls(2, 3, 3, stride=2, padding="SAME", dtype=F64, key=zr.key(1))
    assert same(x).shape == (3,) + (8,) * nd
    with pytest.raises(errors.ZeraxValueError, match="output_padding"):
        cls(2, 3, 3, stride=1, output_padding=1, key=zr.key(0))


def test_conv_transpose_is_the_adjoint_of_conv():
    # <conv(x), y> == <x, convT(y)> when convT's weight is conv's, transposed and flipped
    conv = nn.Conv2d(2, 3, 3, stride=2, padding=1, use_bias=False, dtype=F64, key=zr.key(0))
    w = np.asarray(conv.weight)
    ct = with_params(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1,
                                        use_bias=False, dtype=F64, key=zr.key(0)),
                     weight=np.swapaxes(w, 0, 1)[:, :, ::-1, ::-1])
    x, y = rand(2, 8, 8), rand(3, 4, 4)
    lhs = float(np.sum(np.asarray(conv(x)) * y))
    rhs = float(np.sum(x * np.asarray(ct(y))))
    assert lhs == pytest.approx(rhs, rel=1e-10)


def test_conv_gradients():
    conv = nn.Conv2d(2, 2, 2, stride=1, padding=1, dtype=F64, key=zr.key(0))
    check_grads(lambda w, x: with_params(conv, weight=w)(x), (rand(2, 2, 2, 2), rand(2, 3, 3)),
                order=1, modes=("fwd", "rev"))


# ------------------------------------------------------------------ pooling
def pool_ref(x, k, s, pads, op, init):
    nd = x.ndim - 1
    xp = np.pad(x, [(0, 0)] + list(pads), constant_values=init)
    out_sp = [(xp.shape[1 + i] - k[i]) // s[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], *out_sp))
    for c in range(x.shape[0]):
        for pos in np.ndindex(*out_sp):
            win = xp[(c,) + tuple(slice(pos[i] * s[i], pos[i] * s[i] + k[i]) for i in range(nd))]
            out[(c,) + pos] = op(win)
    return out


def test_pools_match_loops():
    x = rand(2, 7, 6)
    mp = nn.MaxPool2d(3, stride=2, padding=1)
    np.testing.assert_allclose(mp(x), pool_ref(x, (3, 3), (2, 2), ((1, 1), (1, 1)), np.max,
                                                -np.inf))
    ap = nn.AvgPool2d((2, 3), stride=(2, 1))
    np.testing.assert_allclose(ap(x), pool_ref(x, (2, 3), (2, 1), ((0, 0), (0, 0)), np.sum, 0)
                               / 6)
    x1 = rand(3, 9)
    np.testing.assert_allclose(nn.MaxPool1d(2)(x1), pool_ref(x1, (2,), (1,), ((0, 0),),
                                                             np.max, -np.inf))
    np.testing.assert_allclose(nn.AvgPool1d(3, 3)(x1), x1.reshape(3, 3, 3).mean(-1))
    # use_ceil keeps the partial window at the end
    ceil = nn.MaxPool1d(2, 2, use_ceil=True)
    x2 = rand(1, 5)
    np.testing.assert_allclose(ceil(x2), [[max(x2[0, 0], x2[0, 1]), max(x2[0, 2], x2[0, 3]),
                                           x2[0, 4]]])
    with pytest.raises(errors.ShapeError, match="spatial"):
        mp(x1)


def test_max_pool_derivative_goes_to_the_first_maximum():
    # JAX (select_and_scatter_add) gives a window's cotangent to its first maximal element;
    # recorded: jax.grad(lambda x: eqx.nn.MaxPool1d(k, k)(x).sum())(x) for k = 2, 3
    x = znp.array([[1.0, 1.0, 0.0, 2.0, 2.0, 2.0]])
    g2 = zx.grad(lambda x: nn.MaxPool1d(2, 2)(x).sum())(x)
    g3 = zx.grad(lambda x: nn.MaxPool1d(3, 3)(x).sum())(x)
    np.testing.assert_array_equal(g2, [[1.0, 0.0, 0.0, 1.0, 1.0, 0.0]])
    np.testing.assert_array_equal(g3, [[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]])
    t = zx.jvp(nn.MaxPool1d(3, 3), (x,), (znp.arange(6.0)[None],))[1]
    np.testing.assert_array_equal(t, [[0.0, 3.0]])
    y = rand(2, 5, 5)
    check_grads(nn.MaxPool2d(2, 1, padding=1), (y,), order=2, modes=("fwd", "rev"))
    np.testing.assert_array_equal(nn.MaxPool1d(2, 2)(np.array([[1.0, np.nan, 3.0, 2.0]])),
                                  [[np.nan, 3.0]])


def test_adaptive_pool_equinox_split():
    x = rand(2, 7, 6)
    out = nn.AdaptiveAvgPool2d((3, 2))(x)
    # Equinox's split of 7 into 3: sizes 3, 2, 2 (the first 7 % 3 pieces one longer)
    rows = [slice(0, 3), slice(3, 5), slice(5, 7)]
    cols = [slice(0, 3), slice(3, 6)]
    ref = np.array([[[x[c, r, q].mean() for q in cols] for r in rows] for c in range(2)])
    np.testing.assert_allclose(out, ref)
    mx = nn.AdaptiveMaxPool1d(2)(x[:, 0])
    np.testing.assert_allclose(mx, [[x[c, 0, :3].max(), x[c, 0, 3:].max()] for c in range(2)])


# ------------------------------------------------------------------ dropout, embedding
def test_dropout(x64):
    x = np.ones(4000)
    d = nn.Dropout(0.3)
    y = np.asarray(d(x, key=zr.key(0)))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.7)
    assert abs(kept.mean() - 0.7) < 0.03
    # Equinox's draw: the uniforms in the dtype of the keep probability 1 - p, the mode's
    # default float (float64 with x64 on, float32 off)
    keep = np.float64(0.7) if x64 else np.float32(1) - np.float32(0.3)
    mask = np.asarray(zr.bernoulli(zr.key(0), keep, (4000,)))
    np.testing.assert_array_equal(kept, mask)
    # recorded: equinox.nn.Dropout(p)(jnp.ones(12), key=k) > 0, in each of JAX's modes
    for p, key, want64, want32 in (
            (0.3, zr.PRNGKey(5), [1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1],
             [1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1]),
            (0.5, zr.key(1), [1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1],
             [1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1])):
        want = np.array(want64 if x64 else want32, bool)
        y32 = nn.Dropout(p)(np.ones(12, np.float32), key=key)
        assert y32.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(y32) > 0, want)
        np.testing.assert_array_equal(np.asarray(nn.Dropout(p)(np.ones(12), key=key)) > 0,
                                      want)      # float64 x: the same mask
    assert d(x, inference=True) is x and nn.Dropout(0.3, inference=True)(x) is x
    assert nn.Dropout(0.0)(x) is x
    with pytest.raises(errors.ZeraxValueError, match="key"):
        d(x)
    with pytest.raises(errors.ZeraxValueError, match=r"\[0, 1\]"):
        nn.Dropout(1.5)


def test_embedding():
    emb = nn.Embedding(5, 3, key=zr.key(0))
    np.testing.assert_array_equal(emb.weight, zr.normal(zr.key(0), (5, 3), F32))
    np.testing.assert_array_equal(emb(2), np.asarray(emb.weight)[2])
    np.testing.assert_array_equal(zx.vmap(emb)(znp.array([4, 0])),
                                  np.asarray(emb.weight)[[4, 0]])
    with pytest.raises(errors.ShapeError, match="scalar"):
        emb(znp.array([1, 2]))
    with pytest.raises(errors.ZeraxValueError, match="key"):
        nn.Embedding(5, 3)
    g = zx.grad(lambda w: nn.Embedding(weight=w)(1).sum())(znp.ones((3, 2)))
    np.testing.assert_array_equal(g, [[0, 0], [1, 1], [0, 0]])


# ------------------------------------------------------------------ normalisation
def test_layer_rms_group_norm():
    x = rand(4, 3)
    ln = nn.LayerNorm((4, 3), dtype=F64)
    ref = (x - x.mean()) / np.sqrt(x.var() + 1e-5)
    np.testing.assert_allclose(ln(x), ref, rtol=1e-10)
    ln2 = with_params(ln, weight=rand(4, 3), bias=rand(4, 3))
    np.testing.assert_allclose(ln2(x), ref * np.asarray(ln2.weight) + np.asarray(ln2.bias),
                               rtol=1e-10)
    assert nn.LayerNorm(3)(x.astype(np.float16)[0]).dtype == np.float16
    with pytest.raises(errors.ShapeError, match="vmap"):
        nn.LayerNorm(3)(x)
    np.testing.assert_allclose(zx.vmap(nn.LayerNorm(3, dtype=F64))(x),
                               [(r - r.mean()) / np.sqrt(r.var() + 1e-5) for r in x], rtol=1e-10)
    rms = nn.RMSNorm(3, use_bias=False, dtype=F64)
    np.testing.assert_allclose(rms(x[0]), x[0] / np.sqrt((x[0] ** 2).mean() + 1e-5))
    assert rms.bias is None
    gn = nn.GroupNorm(2, 4, dtype=F64)
    xg = rand(4, 5)
    parts = [xg[:2], xg[2:]]
    ref = np.concatenate([(p - p.mean()) / np.sqrt(p.var() + 1e-5) for p in parts])
    np.testing.assert_allclose(gn(xg), ref, rtol=1e-10)
    gnw = with_params(gn, weight=np.arange(1.0, 5.0), bias=np.ones(4))
    np.testing.assert_allclose(gnw(xg), ref * np.arange(1.0, 5.0)[:, None] + 1, rtol=1e-10)
    with pytest.raises(errors.ZeraxValueError, match="divide"):
        nn.GroupNorm(3, 4)
    check_grads(lambda x: nn.LayerNorm(3, dtype=F64)(x), (rand(3),), order=2,
                modes=("fwd", "rev"))


def test_batchnorm_state_and_inference():
    bn, state = nn.make_with_state(nn.BatchNorm)(3, "batch", mode="batch", dtype=F64)
    assert bn.weight.shape == (3,) and bn.batch_state_index.init is not None
    x = rand(3, 4)
    # fresh 'batch' state: mean 0, variance 1, counter 0 -> (x - 0) / sqrt(1 + eps)
    y, state = bn(x, state, inference=True)
    np.testing.assert_allclose(y, x / np.sqrt(1 + 1e-5))
    # running averages debiased by 1 - momentum**counter
    mean, var = np.array([1.0, 2.0, 3.0]), np.array([4.0, 4.0, 1.0])
    state = state.set(bn.batch_counter, znp.array(2, np.int32))
    state = state.set(bn.batch_state_index, (znp.asarray(mean), znp.asarray(var)))
    y, state = nn.inference_mode(bn)(x, state)
    scale = 1 - 0.99 ** 2
    ref = (x - (mean / scale)[:, None]) / np.sqrt((var / scale)[:, None] + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    ema, st = nn.make_with_state(nn.BatchNorm)(3, "batch", mode="ema")
    assert ema.ema_state_index is not None and ema.batch_counter is None
    with pytest.raises(errors.ZeraxTypeError, match="State"):
        bn(x, None)
    with pytest.raises(errors.ZeraxValueError, match="mode"):
        nn.BatchNorm(3, "batch", mode="other")
    if not hasattr(lax, "pmean"):
        with pytest.raises(errors.NotSupportedError, match="pmean"):
            zx.vmap(bn, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
                rand(2, 3, 4), state)


@pytest.mark.skipif(not hasattr(lax, "pmean"), reason="BatchNorm training needs lax.pmean")
def test_batchnorm_training_matches_numpy():
    for mode in ("batch", "ema"):
        bn, state = nn.make_with_state(nn.BatchNorm)(3, "b", mode=mode, momentum=0.9,
                                                     dtype=F64)
        xs = rand(5, 3, 4)
        f = zx.vmap(bn, axis_name="b", in_axes=(0, None), out_axes=(0, None))
        ys, state = f(xs, state)
        mean = xs.mean(axis=(0, 2))
        var = xs.var(axis=(0, 2))
        ref = (xs - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
        np.testing.assert_allclose(ys, ref, rtol=1e-10)
        if mode == "batch":
            assert int(state.get(bn.batch_counter)) == 1
            hm, hv = state.get(bn.batch_state_index)
            np.testing.assert_allclose(hm, 0.1 * mean, rtol=1e-12)
            np.testing.assert_allclose(hv, 0.9 + 0.1 * var, rtol=1e-12)
        else:
            rm, rv = state.get(bn.ema_state_index)           # the first batch seeds the EMA
            np.testing.assert_allclose(rm, mean, rtol=1e-12)
            np.testing.assert_allclose(rv, var, rtol=1e-12)


# ------------------------------------------------------------------ attention, rnn
def test_multihead_attention_matches_numpy():
    mha = nn.MultiheadAttention(2, 4, use_query_bias=True, dtype=F64, key=zr.key(0))
    q, kv = rand(3, 4), rand(5, 4)
    mask = RNG.random((3, 5)) < 0.7
    mask[:, 0] = True

    def proj(lin, x):
        out = x @ np.asarray(lin.weight).T
        return out + np.asarray(lin.bias) if lin.bias is not None else out

    qh = proj(mha.query_proj, q).reshape(3, 2, 2)
    kh = proj(mha.key_proj, kv).reshape(5, 2, 2)
    vh = proj(mha.value_proj, kv).reshape(5, 2, 2)
    heads = []
    for h in range(2):
        logits = qh[:, h] @ kh[:, h].T / np.sqrt(2)
        logits = np.where(mask, logits, np.finfo(F64).min)
        wts = np.exp(logits - logits.max(-1, keepdims=True))
        wts /= wts.sum(-1, keepdims=True)
        heads.append(wts @ vh[:, h])
    ref = proj(mha.output_proj, np.stack(heads, 1).reshape(3, 4))
    np.testing.assert_allclose(mha(q, kv, kv, mask=mask), ref, rtol=1e-10)
    np.testing.assert_allclose(mha(q, kv, kv, mask=np.stack([mask, mask])), ref, rtol=1e-10)
    assert mha.query_proj.weight.shape == (4, 4) and mha.key_proj.bias is None
    drop = nn.MultiheadAttention(2, 4, dropout_p=0.5, key=zr.key(1))
    q32 = q.astype(F32)
    assert drop(q32, q32, q32, key=zr.key(2)).shape == (3, 4)
    np.testing.assert_allclose(drop(q32, q32, q32, inference=True),
                               nn.inference_mode(drop)(q32, q32, q32), rtol=1e-6)


def test_rotary_embedding():
    rope = nn.RotaryPositionalEmbedding(4, dtype=F64)
    x = rand(3, 4)
    freqs = 1.0 / 10000 ** (np.arange(0, 4, 2) / 4)
    ang = np.arange(3)[:, None] * freqs[None]
    cos, sin = np.tile(np.cos(ang), 2), np.tile(np.sin(ang), 2)
    rot = np.concatenate([-x[:, 2:], x[:, :2]], axis=1)
    np.testing.assert_allclose(rope(x), x * cos + rot * sin, rtol=1e-12)
    with pytest.raises(errors.ZeraxValueError, match="even"):
        nn.RotaryPositionalEmbedding(3)
    # Equinox's values (recorded: eqx.nn.RotaryPositionalEmbedding(4, dtype=float32) applied
    # to (arange(24).reshape(6, 4) / 7).astype(float32), jax_enable_x64): bit for bit
    x32 = (np.arange(24.0).reshape(6, 4) / 7).astype(F32)
    eqx = np.array([
            0.0, 0.1428571492433548, 0.2857142984867096, 0.4285714328289032, -0.41251668334007263,
            0.7042502164840698, 0.9439567923545837, 1.0070927143096924,
            -1.7745927572250366, 1.254030704498291, 0.44470155239105225,
            1.5968269109725952, -1.9793699979782104, 1.7920310497283936,
            -1.7380650043487549, 2.197598934173584, 0.45202088356018066,
            2.3180863857269287, -3.4106321334838867, 2.8092315196990967,
            3.824225425720215, 2.832033634185791, -1.8482739925384521, 3.4315457344055176], F32)
    np.testing.assert_array_equal(np.ravel(nn.RotaryPositionalEmbedding(4)(x32)), eqx)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_gru_lstm_cells_and_scan():
    gru = nn.GRUCell(3, 2, dtype=F64, key=zr.key(0))
    x, h = rand(3), rand(2)
    wi, wh = np.asarray(gru.weight_ih), np.asarray(gru.weight_hh)
    bi, bn_ = np.asarray(gru.bias), np.asarray(gru.bias_n)
    gi, gh = wi @ x + bi, wh @ h
    r = sigmoid(gi[:2] + gh[:2])
    z = sigmoid(gi[2:4] + gh[2:4])
    n = np.tanh(gi[4:] + r * (gh[4:] + bn_))
    np.testing.assert_allclose(gru(x, h), (1 - z) * n + z * h, rtol=1e-12)
    lstm = nn.LSTMCell(3, 2, dtype=F64, key=zr.key(1))
    c = rand(2)
    lin = np.asarray(lstm.weight_ih) @ x + np.asarray(lstm.weight_hh) @ h + np.asarray(lstm.bias)
    i, f, g, o = sigmoid(lin[:2]), sigmoid(lin[2:4]), np.tanh(lin[4:6]), sigmoid(lin[6:])
    c2 = f * c + i * g
    h2, cc = lstm(x, (h, c))
    np.testing.assert_allclose(cc, c2, rtol=1e-12)
    np.testing.assert_allclose(h2, o * np.tanh(c2), rtol=1e-12)
    # a sequence by lax.scan equals the Python loop
    xs = rand(4, 3)

    def step(hc, x):
        hc = lstm(x, hc)
        return hc, hc[0]
    _, hs = lax.scan(step, (znp.zeros(2), znp.zeros(2)), xs)
    hc, loop = (np.zeros(2), np.zeros(2)), []
    for t in range(4):
        hc = lstm(xs[t], hc)
        loop.append(np.asarray(hc[0]))
    np.testing.assert_allclose(hs, np.stack(loop), rtol=1e-12)
    check_grads(lambda x, h: gru(x, h), (x, h), order=1, modes=("fwd", "rev"))
    assert nn.GRUCell(3, 2, use_bias=False, key=zr.key(0)).bias_n is None


def test_prelu():
    p = nn.PReLU()
    assert p.negative_slope.dtype == F32
    x = rand(5)
    np.testing.assert_allclose(p(x), np.where(x >= 0, x, 0.25 * x), rtol=1e-6)
    per_channel = nn.PReLU(np.array([0.1, 0.2]))
    np.testing.assert_allclose(per_channel(np.array([-1.0, -1.0])), [-0.1, -0.2])
    g = nn.filter_grad(lambda m, x: m(x).sum())(p, np.array([-2.0, 3.0], F32))
    assert float(g.negative_slope) == -2.0


# ------------------------------------------------------------------ summary, training
class CNN(nn.Module):
    layers: list

    def __init__(self, key):
        k1, k2 = zr.split(key, 2)
        self.layers = [nn.Conv2d(1, 4, 3, key=k1), zx.nn.relu, nn.MaxPool2d(2, 2),
                       lambda x: x.reshape(-1), nn.Linear(4 * 3 * 3, 3, key=k2)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_summary_and_count():
    model = CNN(zr.key(0))
    text = nn.summary(model, znp.zeros((1, 8, 8), F32))
    lines = text.splitlines()
    assert lines[0].split() == ["Layer", "Output", "shape", "Params"]
    assert lines[2].split() == ["CNN", "(3,)", "151"]
    assert lines[3].split() == ["Conv2d", "(4,", "6,", "6)", "40"]
    assert lines[4].split() == ["MaxPool2d", "(4,", "3,", "3)", "0"]
    assert lines[5].split() == ["Linear", "(3,)", "111"]
    assert lines[-1] == "Total params: 151 (floating-point elements)"
    assert nn.count_params(model) == 4 * 9 + 4 + 36 * 3 + 3


def test_small_cnn_trains():
    images = np.random.default_rng(12).standard_normal((12, 1, 8, 8)).astype(F32)
    labels = np.arange(12) % 3
    images[np.arange(12), 0, labels, labels] += 3.0       # a learnable signal
    model = CNN(zr.key(1))

    def loss(model, x, y):
        logits = zx.vmap(model)(x)
        return -znp.mean(zx.nn.log_softmax(logits)[znp.arange(len(y)), y])

    value_and_grad = nn.filter_value_and_grad(loss)
    losses = []
    for _ in range(8):
        value, grads = value_and_grad(model, images, labels)
        losses.append(float(value))
        model = nn.apply_updates(model, zx.tree_util.tree_map(lambda g: -0.5 * g, grads))
    assert losses[-1] < 0.5 * losses[0]


# ------------------------------------------------------------------ property-based
@settings(max_examples=15, deadline=None)
@given(stride=st.integers(1, 3), dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]),
       lo=st.integers(0, 2), hi=st.integers(0, 2), length=st.integers(6, 10),
       kernel=st.integers(1, 3), use_bias=st.booleans())
def test_conv1d_hypothesis(stride, dilation, groups, lo, hi, length, kernel, use_bias):
    conv = nn.Conv1d(2, 4, kernel, stride=stride, padding=[(lo, hi)], dilation=dilation,
                     groups=groups, use_bias=use_bias, dtype=F64, key=zr.key(length))
    x = rand(2, length)
    b = np.asarray(conv.bias).ravel() if use_bias else None
    ref = conv_ref(x, np.asarray(conv.weight), b, conv.stride, conv.padding, conv.dilation,
                   groups)
    np.testing.assert_allclose(conv(x), ref, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(k=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 1), n=st.integers(4, 8),
       kind=st.sampled_from(["max", "avg"]))
def test_pool1d_hypothesis(k, s, p, n, kind):
    p = min(p, k)
    x = rand(2, n)
    if kind == "max":
        out = nn.MaxPool1d(k, s, p)(x)
        ref = pool_ref(x, (k,), (s,), ((p, p),), np.max, -np.inf)
    else:
        out = nn.AvgPool1d(k, s, p)(x)
        ref = pool_ref(x, (k,), (s,), ((p, p),), np.sum, 0.0) / k
    np.testing.assert_allclose(out, ref, rtol=1e-12)
