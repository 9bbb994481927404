"""zerax.nn's layers and derivatives that ported Equinox programs use: SpectralNorm,
WeightNorm, Shared, learnt MLP activations, Conv/ConvTranspose dtype promotion, integer
pooling, filter_custom_jvp/vjp, filter_make_jaxpr and filter_closure_convert.

Values were recorded from Equinox 0.13.8 on JAX 0.10.2 (float32 parameters, JAX's
default mode; the float64 convolutions with ``jax_enable_x64``) for the same keys and
inputs; zerax's float32 random draws may differ from JAX's by an ulp, hence rtol 1e-5."""

import numpy as np
import pytest

import zerax as zx
import zerax.nn as eqx
import zerax.numpy as jnp
from zerax import errors
from zerax import tree_util as jtu

RTOL = 1e-5

SN_U0 = [-0.7139516472816467, 0.027130955830216408, 0.6098920106887817, -0.2657707631587982,
         0.20242184400558472, -0.07720133662223816]
SN_V0 = [-0.13952797651290894, 0.3095051646232605, 0.2808026373386383, -0.8151221871376038,
         0.37611737847328186]
SN_Y = [0.0803493857383728, -0.22497820854187012, -0.016069859266281128, -0.016069885343313217,
        0.0, -0.2892577648162842]
SN_U1 = [-0.7139526605606079, 0.027123525738716125, 0.6098926663398743, -0.26577135920524597,
         0.20241589844226837, -0.07720164209604263]
SN_GRAD_W = [[-0.06069392338395119, -0.005759797990322113, 0.01820354163646698,
              -0.02701774425804615, 0.07603034377098083],
             [0.14495854079723358, 0.0715453177690506, -0.0006914671394042671,
              -0.07030025124549866, -0.14554110169410706],
             [0.018056930974125862, -0.011975070461630821, -0.015550338663160801,
              0.03997521847486496, -0.03115803748369217],
             [0.006962339393794537, 0.012633830308914185, 0.006776334252208471,
              -0.024835389107465744, -0.001253301277756691],
             [0.002564553637057543, -0.00568842887878418, -0.00516088493168354,
              0.01498118694871664, -0.006912581622600555],
             [0.1849553883075714, 0.0951363742351532, 0.0019684010185301304,
              -0.09868070483207703, -0.1832970231771469]]
WN_G = [[2.423840045928955], [1.7888543605804443], [2.014944076538086], [1.1789826154708862],
        [1.658312439918518], [1.445683240890503]]
WN_GRAD_G = [[0.09993568062782288], [-0.2992918789386749], [-0.024783551692962646],
             [-0.0423564612865448], [0.0], [-0.3869789242744446]]
WN_GRAD_V = [[-0.9895275831222534, -0.4432259202003479, -0.010307574644684792,
              0.40199559926986694, 0.9998351335525513],
             [-0.513878345489502, -0.33222833275794983, -0.03346185013651848,
              0.3991520404815674, 0.9154205322265625],
             [-1.003670334815979, -0.48953527212142944, 0.01352985855191946,
              0.4833853244781494, 1.0061302185058594],
             [-0.9915649890899658, -0.492189884185791, -0.03233366087079048,
              0.5245235562324524, 0.9951576590538025],
             [-1.0, -0.5, 0.0, 0.5, 1.0],
             [-0.5413062572479248, 0.010409772396087646, -0.16060736775398254,
              0.41787654161453247, 0.568074107170105]]
WN_NONE_G = [[4.40056848526001]]
WN_NONE_GRAD_V = [[-0.944319486618042, -0.5336421132087708, 0.012296480126678944,
                   0.5828280448913574, 0.9320229887962341],
                  [-0.6910632252693176, -0.36766526103019714, -0.009837184101343155,
                   0.38733965158462524, 0.8091094493865967],
                  [-1.0184246301651, -0.4600263833999634, 0.0541045144200325,
                   0.43543344736099243, 1.0282617807388306],
                  [-0.9889130592346191, -0.48953795433044434, -0.04426732659339905,
                   0.533805251121521, 0.9938316941261292],
                  [-0.9508140683174133, -0.524592936038971, 0.024592960253357887,
                   0.47540703415870667, 1.049185872077942],
                  [-0.6068541407585144, -0.2517818510532379, -0.029511554166674614,
                   0.33047932386398315, 0.6117727160453796]]
MLP_OUT = [-0.005748391151428223, -0.07217895239591599, 0.4959375858306885]
MLP_GRAD_ACT = [[0.0, 0.0, 0.0, 0.0], [0.08252773433923721, 0.0, 0.040136054158210754, 0.0]]
MLP_GRAD_FINAL = [0.00033044000156223774, 0.05209800973534584, 0.0]
MLP_SCAN_OUT = [-0.1894056349992752, 0.07470619678497314, -0.22973042726516724]
CONV_F64 = [[[0.3627450956652562, 0.14215685209880274, -0.03431374207139015,
              -0.210784336241583, -0.16666669274369872],
             [-0.19117648992687464, -0.9411765138308208, -1.3382353450482087,
              -1.7352941762655973, -1.3970588793357215],
             [-1.3676471027235189, -2.9264706699177623, -3.32352950113515, -3.7205883323525386,
              -2.8676471449434757],
             [-2.544117715520163, -4.9117648260047035, -5.308823657222092, -5.705882488439481,
              -4.33823541055123],
             [-3.225490279495716, -5.76960796614488, -6.122549148897329, -6.47549033164978,
              -4.696078538894653]],
            [[0.6715686321258545, 1.245098054409027, 1.598039237161477, 1.9509804199139276,
              1.2009804174304008],
             [1.9705882643659907, 3.0735294607778387, 3.4705882919952273, 3.867647123212615,
              2.3529412259037294],
             [3.4411765299737453, 5.058823616864781, 5.455882448082169, 5.852941279299556,
              3.529411838700374],
             [4.911764795581499, 7.044117772951721, 7.44117660416911, 7.838235435386499,
              4.705882451497018],
             [2.3774510857959585, 3.274509923843046, 3.450980518013239, 3.6274511121834316,
              1.9656863479564586]]]
CONVT_F64 = [[[0.20168067865511952, 0.470588240553351, 0.30252101403825427, 0.5042016874341404,
               0.403361349421389, 0.5378151343149298],
              [0.7394958155996659, 1.0084033617201973, 0.7058823687188766, 0.9075630263370625,
               0.6722689218380872, 0.8067226909539278],
              [0.5042016848045235, 0.571428581195719, 0.6050420201876583, 0.6050420280765084,
               0.705882355570793, 0.6386554749572978],
              [0.6386554749572978, 0.7058823555707932, 0.6050420280765084, 0.6050420201876584,
               0.571428581195719, 0.5042016848045237],
              [0.8067226909539278, 0.6722689218380872, 0.9075630263370625, 0.7058823687188766,
               1.0084033617201973, 0.7394958155996659],
              [0.5378151343149298, 0.403361349421389, 0.5042016874341404, 0.30252101403825427,
               0.470588240553351, 0.20168067865511952]]]

W = np.array([[0.5, -1.0, 0.25, 2.0, -0.75], [1.5, 0.3, -0.2, 0.1, 0.9],
              [-0.4, 0.8, 1.1, -1.3, 0.6], [0.2, 0.2, -0.9, 0.7, -0.1],
              [1.0, -0.5, 0.5, -0.5, 1.0], [0.3, 1.2, -0.6, 0.4, -0.2]], np.float32)


@pytest.fixture(scope="module")
def linear():
    lin = eqx.nn.Linear(5, 6, key=zx.random.PRNGKey(0))
    return eqx.tree_at(lambda m: (m.weight, m.bias), lin,
                       (jnp.asarray(W), jnp.zeros(6, jnp.float32)))


X = jnp.asarray(np.linspace(-1, 1, 5), jnp.float32)


def test_spectral_norm_matches_equinox(linear):
    sn, state = eqx.nn.make_with_state(eqx.nn.SpectralNorm)(linear, "weight",
                                                            key=zx.random.PRNGKey(1))
    u0, v0 = state.get(sn.uv_index)
    np.testing.assert_allclose(u0, SN_U0, rtol=RTOL, atol=1e-7)
    np.testing.assert_allclose(v0, SN_V0, rtol=RTOL, atol=1e-7)
    y, state2 = sn(X, state)
    np.testing.assert_allclose(y, SN_Y, rtol=RTOL, atol=1e-6)
    np.testing.assert_allclose(state2.get(sn.uv_index)[0], SN_U1, rtol=RTOL, atol=1e-7)

    def copy(st):          # (State.set retires the State it was called on)
        return jtu.tree_unflatten(*reversed(jtu.tree_flatten(st)))
    g = eqx.filter_grad(lambda s: jnp.sum(s(X, copy(state2))[0] ** 2))(sn)
    np.testing.assert_allclose(g.layer.weight, SN_GRAD_W, rtol=1e-4, atol=1e-6)
    # in inference mode the power iterations stop: the state comes back unchanged
    _, state3 = eqx.nn.inference_mode(sn)(X, copy(state2))
    np.testing.assert_array_equal(state3.get(sn.uv_index)[0], state2.get(sn.uv_index)[0])
    # after many calls the normalised weight has spectral norm 1 (Equinox's own check)
    for _ in range(50):
        _, state2 = sn(X, state2)
    u, v = state2.get(sn.uv_index)
    sigma = jnp.einsum("i,ij,j->", u, sn.layer.weight, v)
    np.testing.assert_allclose(np.linalg.svd(np.asarray(sn.layer.weight / sigma),
                                             compute_uv=False)[0], 1.0, rtol=1e-5)
    conv = eqx.nn.Conv3d(5, 4, 3, key=zx.random.key(0))
    sc, st = eqx.nn.make_with_state(eqx.nn.SpectralNorm)(conv, "weight", key=zx.random.key(1))
    assert sc(jnp.ones((5, 4, 4, 4), jnp.float32), st)[0].shape == (4, 2, 2, 2)
    with pytest.raises(ValueError, match="two-dimensional"):
        eqx.nn.SpectralNorm(eqx.nn.PReLU(), "negative_slope", key=zx.random.key(0))


def test_weight_norm_matches_equinox(linear):
    wn = eqx.nn.WeightNorm(linear)
    np.testing.assert_allclose(wn.g, WN_G, rtol=RTOL)
    np.testing.assert_allclose(wn(X), linear(X), rtol=1e-5, atol=1e-6)
    g = eqx.filter_grad(lambda m: jnp.sum(jnp.sin(m(X))))(wn)
    np.testing.assert_allclose(g.g, WN_GRAD_G, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g.layer.weight, WN_GRAD_V, rtol=1e-4, atol=1e-6)
    wn0 = eqx.nn.WeightNorm(linear, axis=None)
    np.testing.assert_allclose(wn0.g, WN_NONE_G, rtol=RTOL)
    g = eqx.filter_grad(lambda m: jnp.sum(jnp.sin(m(X))))(wn0)
    np.testing.assert_allclose(g.layer.weight, WN_NONE_GRAD_V, rtol=1e-4, atol=1e-6)
    conv = eqx.nn.Conv3d(2, 3, 3, key=zx.random.key(0))
    xc = jnp.ones((2, 3, 3, 3), jnp.float32)
    np.testing.assert_allclose(eqx.nn.WeightNorm(conv)(xc), conv(xc), rtol=1e-5, atol=1e-6)


def test_shared_ties_parameters_and_their_gradients():
    emb = eqx.nn.Embedding(5, 3, key=zx.random.key(0))
    lin = eqx.nn.Linear(3, 5, use_bias=False, key=zx.random.key(1))
    shared = eqx.nn.Shared((emb, lin), lambda p: p[1].weight, lambda p: p[0].weight)

    def loss(s, tok):
        e, o = s()
        return jnp.sum(o(e(tok)) ** 2)

    g = eqx.filter_grad(loss)(shared, jnp.asarray(2))
    # the reference: the same weight used twice, differentiated as one argument
    ref = zx.grad(lambda w: jnp.sum((w @ w[2]) ** 2))(emb.weight)
    np.testing.assert_allclose(g.pytree[0].weight, ref, rtol=1e-5)
    assert g.pytree[1].weight is None or not eqx.is_array(g.pytree[1].weight)
    with pytest.raises(ValueError, match="same structure"):
        eqx.nn.Shared((emb, lin), lambda p: p[1].weight, lambda p: p[0].weight[0])


def test_mlp_learnt_activation_has_per_neuron_parameters():
    mlp = eqx.nn.MLP(2, 3, 4, 2, activation=eqx.nn.PReLU(0.1),
                     final_activation=eqx.nn.PReLU(0.2), key=zx.random.PRNGKey(5678))
    assert mlp.activation.negative_slope.shape == (2, 4)
    assert mlp.final_activation.negative_slope.shape == (3,)
    xm = jnp.asarray([0.5, -0.7], jnp.float32)
    np.testing.assert_allclose(mlp(xm), MLP_OUT, rtol=RTOL, atol=1e-7)
    g = eqx.filter_grad(lambda m: jnp.sum(m(xm) ** 2))(mlp)
    np.testing.assert_allclose(g.activation.negative_slope, MLP_GRAD_ACT, rtol=RTOL, atol=1e-7)
    np.testing.assert_allclose(g.final_activation.negative_slope, MLP_GRAD_FINAL, rtol=RTOL,
                               atol=1e-7)
    scan = eqx.nn.MLP(2, 3, 4, 3, activation=eqx.nn.PReLU(0.1), scan=True,
                      key=zx.random.PRNGKey(5678))
    np.testing.assert_allclose(scan(xm), MLP_SCAN_OUT, rtol=RTOL, atol=1e-7)
    plain = eqx.nn.MLP(2, 3, 4, 2, key=zx.random.PRNGKey(5678))
    assert plain.activation is zx.nn.relu          # a function is stored as it is


def test_conv_promotes_float64_and_integer_inputs():
    conv = eqx.nn.Conv2d(1, 2, 3, padding=1, key=zx.random.key(0))
    w = np.linspace(-1, 1, 18).reshape(2, 1, 3, 3).astype(np.float32)
    b = np.array([0.5, -0.25], np.float32).reshape(2, 1, 1)
    conv = eqx.tree_at(lambda c: (c.weight, c.bias), conv, (jnp.asarray(w), jnp.asarray(b)))
    x = jnp.asarray(np.linspace(0, 2, 25).reshape(1, 5, 5))        # float64, as znp makes it
    y = conv(x)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, CONV_F64, rtol=1e-12)
    assert conv(x.astype(np.float32)).dtype == np.float32
    # integer data into integer weights stays integral (Equinox's test_conv1d)
    ci = eqx.tree_at(lambda c: (c.weight, c.bias), eqx.nn.Conv1d(1, 3, 3, padding=1,
                                                                 key=zx.random.key(0)),
                     (jnp.arange(9).reshape(3, 1, 3), jnp.asarray([1, 2, 3]).reshape(3, 1)))
    np.testing.assert_array_equal(ci(jnp.arange(-3, 3).reshape(1, -1)),
                                  np.array([-6, -3, 0, 3, 6, 3, -20, -20, -8, 4, 16, 13, -34,
                                            -37, -16, 5, 26, 23]).reshape(3, 6))
    ct = eqx.nn.ConvTranspose2d(2, 1, 2, stride=2, use_bias=False, key=zx.random.key(0))
    wt = np.linspace(-1, 1, 8).reshape(1, 2, 2, 2).astype(np.float32)
    ct = eqx.tree_at(lambda c: c.weight, ct, jnp.asarray(wt))
    yt = ct(jnp.asarray(np.linspace(-1, 1, 18).reshape(2, 3, 3)))
    assert yt.dtype == np.float64
    np.testing.assert_allclose(yt, CONVT_F64, rtol=1e-12)


def test_integer_pooling_and_rope_frequencies():
    x = jnp.arange(14).reshape(1, 14)                  # Equinox's test_maxpool1d
    np.testing.assert_array_equal(eqx.nn.MaxPool1d(2, 3)(x), [[1, 4, 7, 10, 13]])
    np.testing.assert_array_equal(eqx.nn.MaxPool1d(3, 3, 0, use_ceil=True)(x),
                                  [[2, 5, 8, 11, 13]])
    assert eqx.nn.MaxPool1d(2, 3)(x).dtype == x.dtype
    cos, sin = eqx.nn.RotaryPositionalEmbedding.precompute_freqs_cis(8, 16, 10_000.0,
                                                                      jnp.float32)
    # Meta's RoPE reference values (Equinox's test_rope_embeddings_freqs_cis), rows 1, 15
    np.testing.assert_allclose(cos[1], [0.5403, 0.9950, 0.9999, 1.0000], atol=1e-4)
    np.testing.assert_allclose(sin[15], [0.6503, 0.9975, 0.1494, 0.0150], atol=1e-4)
    assert cos.dtype == np.float32 and cos.shape == (16, 4)


def test_private_dot_product_attention_of_one_head():
    from zerax.nn._attention import dot_product_attention
    q = jnp.asarray([[0.0, 2 ** 0.5]])
    k = jnp.asarray([[1.0, 0.0], [0.0, 1.0]])
    v = jnp.asarray([[1.0], [0.0]])
    np.testing.assert_allclose(dot_product_attention(q, k, v), [[1 / (1 + np.e)]])
    np.testing.assert_allclose(dot_product_attention(q, k, v, jnp.asarray([[True, False]])),
                               [[1.0]])


# ------------------------------------------------------------------ custom derivatives
@eqx.filter_custom_vjp
def _scaled_sin(vjp_arg, y, *, k):
    w, n, name = vjp_arg
    return {"o": jnp.sin(w) * y * n, "tag": name}


@_scaled_sin.def_fwd
def _scaled_sin_fwd(perturbed, vjp_arg, y, *, k):
    assert perturbed[0] is True and perturbed[1] is False and perturbed[2] is False
    w, n, name = vjp_arg
    return _scaled_sin(vjp_arg, y, k=k), jnp.cos(w)


@_scaled_sin.def_bwd
def _scaled_sin_bwd(res, g, perturbed, vjp_arg, y, *, k):
    w, n, name = vjp_arg
    return (k * res * y * n * g["o"], None, None)


def _scaled_loss(w):
    out = _scaled_sin((w, jnp.asarray(3), "t"), jnp.asarray(2.0), k=5.0)
    assert out["tag"] == "t"
    return out["o"].sum()


def test_filter_custom_vjp_matches_equinox():
    w = jnp.asarray([0.1, 0.2])
    # Equinox 0.13.8 (x64): [29.85012496, 29.40199734] = 5 * 2 * 3 * cos(w)
    for f in (zx.grad(_scaled_loss), zx.jit(zx.grad(_scaled_loss))):
        np.testing.assert_allclose(f(w), [29.85012496, 29.40199734], rtol=1e-9)
    np.testing.assert_allclose(zx.vmap(zx.grad(_scaled_loss))(w[None]),
                               [[29.85012496, 29.40199734]], rtol=1e-9)
    with pytest.raises(errors.NonDifferentiableError, match="first argument"):
        zx.grad(lambda y: _scaled_sin((w, jnp.asarray(3), "t"), y, k=5.0)["o"].sum())(2.0)


def test_filter_custom_jvp_matches_equinox():
    @eqx.filter_custom_jvp
    def g(x, n, *, fn):
        return fn(x) * n

    @g.def_jvp
    def g_jvp(primals, tangents, *, fn):
        x, n = primals
        tx, tn = tangents
        assert tn is None                     # an integer array: no tangent
        return g(x, n, fn=fn), 7.0 * tx * n

    n = jnp.asarray(2)
    assert float(zx.grad(lambda x: g(x, n, fn=jnp.sin))(1.0)) == 14.0
    out, t = zx.jvp(lambda x: g(x, n, fn=jnp.sin), (1.0,), (1.0,))
    np.testing.assert_allclose([out, t], [1.68294197, 14.0], rtol=1e-8)

    @eqx.filter_custom_jvp
    def h(x, *, scale):
        return x * scale

    @h.def_jvp
    def h_jvp(primals, tangents, *, scale):
        return h(*primals, scale=scale), tangents[0] * scale

    np.testing.assert_allclose(zx.grad(lambda x: h(x, scale=3.0))(1.0), 3.0)
    with pytest.raises(errors.NonDifferentiableError, match="keyword arguments"):
        zx.grad(lambda s: h(jnp.asarray(1.0), scale=s))(2.0)


def test_filter_make_jaxpr_and_closure_convert():
    jaxpr, out, static = eqx.filter_make_jaxpr(lambda x, s: (x * 2, s))(jnp.ones(2), "s")
    assert out == (zx.ShapeDtypeStruct((2,), np.float64), None) and static == (None, "s")
    assert zx.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, jnp.ones(2))[0].tolist() == [2.0, 2.0]

    def f(x):
        g = eqx.filter_closure_convert(lambda a: jnp.sin(x) * a, jnp.asarray(1.0))
        assert len(g.consts) == 1 and isinstance(g.consts[0], zx.core.Tracer)
        assert len(jtu.tree_leaves(eqx.filter(g, eqx.is_array))) >= 1
        return g(jnp.asarray(2.0))

    np.testing.assert_allclose(zx.grad(f)(0.5), 2 * np.cos(0.5), rtol=1e-12)
    g = eqx.filter_closure_convert(lambda a, b: a + b, jnp.ones(2), 1.0)
    assert g(jnp.zeros(2), 1.0).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="like the example"):
        g(jnp.zeros(3), 1.0)
    with pytest.raises(ValueError, match="like the example"):
        g(jnp.zeros(2), 2.0)                 # a Python float is static, as in Equinox
