"""zerax.example_libraries (stax, optimizers) against values recorded from JAX 0.10.2's
jax.example_libraries (the anchor at /tmp/anchors; scripts: a layer's init with
PRNGKey(0) and its apply on sin(arange) inputs in float32, JAX's default mode, which the
stax tests run in (the ``x32`` fixture), and a network recorded with jax_enable_x64 for
zerax's default mode; each optimiser 5 steps on a fixed loss with jax_enable_x64), NumPy
and finite differences."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
import zerax.random as zr
import zerax.tree_util as tu
from zerax import errors
from zerax.example_libraries import optimizers, stax

# --------------------------------------------------------------------------- anchors

# Recorded from jax.example_libraries.stax (JAX 0.10.2, float32): name -> (layer, input
# shape, output shape, [(param shape, float64 sum, first values)], (apply sum, first values)).
STAX_REF = {
    'dense': ('stax.Dense(4)', (-1, 3), (-1, 4),
        [((3, 4), -2.104013368487358, [0.5720340609550476, -0.5183408856391907, -0.42999786138534546]), ((4,), -0.04626142047345638, [-0.024424556642770767, -0.020356804132461548, 0.0020554421935230494])],
        (0.0, [])),
    'conv': ("stax.Conv(3, (2, 2), strides=(1, 2), padding='SAME')", (2, 5, 6, 2), (2, 5, 3, 3),
        [((2, 2, 2, 3), -0.24253589659929276, [0.33841991424560547, -0.30665460228919983, -0.2543901801109314]), ((1, 1, 1, 3), -4.272592121878915e-06, [-2.442455752316164e-06, -2.0356806089694146e-06, 2.055442394066631e-07])],
        (-0.13167637586593628, [0.2059226632118225, -0.29131507873535156, 0.31341347098350525, -0.6678363084793091])),
    'convT': ("stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding='SAME')", (1, 4, 4, 3), (1, 8, 8, 2),
        [((3, 3, 3, 2), 1.3464123280718923, [0.2256132811307907, -0.20443642139434814, -0.1695934683084488]), ((1, 1, 1, 2), -4.4781363612855785e-06, [-2.442455752316164e-06, -2.0356806089694146e-06])],
        (3.6108298301696777, [-0.1466183215379715, 0.6570503115653992, 0.1013270765542984, -0.1357184201478958])),
    'convTvalid': ("stax.ConvTranspose(2, (3, 2), strides=(2, 1), padding='VALID')", (1, 4, 4, 3), (1, 9, 5, 2),
        [((3, 2, 3, 2), 0.8286417350172997, [0.2763187289237976, -0.2503824532032013, -0.2077087163925171]), ((1, 1, 1, 2), -4.4781363612855785e-06, [-2.442455752316164e-06, -2.0356806089694146e-06])],
        (0.6511639356613159, [0.0640769824385643, 0.38822096586227417, -0.32476139068603516, 0.0894063338637352])),
    'conv1dT': ('stax.Conv1DTranspose(2, (3,), strides=(2,))', (1, 5, 3), (1, 11, 2),
        [((3, 3, 2), -0.9005935043096542, [0.3907737135887146, -0.3540942966938019, -0.2937445044517517]), ((1, 1, 2), -4.4781363612855785e-06, [-2.442455752316164e-06, -2.0356806089694146e-06])],
        (-0.33599236607551575, [0.7521777153015137, -0.002058229176327586, 0.06923828274011612, -0.5239927172660828])),
    'gconv': ("stax.GeneralConv(('NCHW', 'OIHW', 'NCHW'), 4, (3, 3), padding='SAME')", (2, 1, 6, 6), (2, 4, 6, 6),
        [((4, 1, 3, 3), 0.6765831485390663, [0.2256132811307907, -0.20443642139434814, -0.1695934683084488]), ((1, 4, 1, 1), -4.626142327879279e-06, [-2.442455752316164e-06, -2.0356806089694146e-06, 2.055442394066631e-07])],
        (7.508828639984131, [0.41080352663993835, 0.11108549684286118, -0.3530171811580658, -0.4925597608089447])),
    'bn': ('stax.BatchNorm()', (2, 3, 3, 4), (2, 3, 3, 4),
        [((4,), 0.0, [0.0, 0.0, 0.0]), ((4,), 4.0, [1.0, 1.0, 1.0])],
        (0.0, [0.04520018398761749, 1.1473338603973389, 1.2163912057876587, 0.14441345632076263])),
    'bn_axis': ('stax.BatchNorm(axis=(0,), center=False)', (5, 3), (5, 3),
        [((3,), 3.0, [1.0, 1.0, 1.0])],
        (5.960464477539063e-08, [0.159611776471138, 1.1054811477661133, 0.759534478187561, 0.5882401466369629])),
    'maxpool': ('stax.MaxPool((2, 2), strides=(2, 2))', (2, 5, 5, 3), (2, 2, 2, 3),
        [],
        (19.381359100341797, [0.6502878665924072, 0.8414709568023682, 0.9129452705383301, 0.8366556167602539])),
    'maxpool_same': ("stax.MaxPool((3, 2), strides=(2, 2), padding='SAME')", (2, 5, 5, 3), (2, 3, 3, 3),
        [],
        (45.200721740722656, [0.6502878665924072, 0.8414709568023682, 0.9129452705383301, 0.8366556167602539])),
    'avgpool': ("stax.AvgPool((3, 3), padding='SAME')", (2, 5, 5, 3), (2, 5, 5, 3),
        [],
        (0.4775039553642273, [0.010105162858963013, -0.013339411467313766, -0.024519771337509155, 0.09961013495922089])),
    'sumpoolspec': ("stax.SumPool((2,), spec='NCW')", (2, 3, 7), (2, 3, 6),
        [],
        (-1.228327989578247, [0.8414709568023682, 1.7507684230804443, 1.050417423248291, -0.6156824827194214])),
    'flatten': ('stax.Flatten', (2, 2, 3), (2, 6),
        [],
        (0.4111979007720947, [0.0, 0.8414709568023682, 0.9092974066734314, 0.14112000167369843])),
}
SHAPE_REF = {
    ('stax.MaxPool((2, 2), strides=(2, 2))', (-1, 5, 5, 3)): (0, 2, 2, 3),
    ("stax.Conv(3, (3, 3), padding='SAME')", (-1, 8, 8, 1)): (-1, 8, 8, 3),
    ('stax.Flatten', (-1, 2, 3)): (-1, 6),
    ('stax.Conv(3, (3, 3), strides=(2, 2))', (-1, 9, 8, 1)): (-1, 4, 3, 3),
    ("stax.AvgPool((2, 2), strides=(2, 2), padding='SAME')", (-1, 5, 5, 3)): (0, 3, 3, 3),
}
NET_OUT = [[-1.5306240320205688, -0.24385733902454376], [-0.7640997171401978, -0.6268971562385559], [-1.6177136898040771, -0.2210853099822998]]
DROPOUT_MASK = [1, 0, 0, 1, 0, 0, 1, 1, 1, 1]
ELEMENTWISE_REF = {
    'Tanh': [-0.9051482081413269, 0.24491865932941437, 0.9640275835990906],
    'Relu': [0.0, 0.25, 2.0],
    'Sigmoid': [0.18242552876472473, 0.562176525592804, 0.8807970285415649],
    'Elu': [-0.7768698334693909, 0.25, 2.0],
    'LeakyRelu': [-0.014999999664723873, 0.25, 2.0],
    'Selu': [-1.3658143281936646, 0.2626752555370331, 2.1014020442962646],
    'Gelu': [-0.10042843222618103, 0.14967535436153412, 1.9545977115631104],
    'Softplus': [0.20141328871250153, 0.825939416885376, 2.1269280910491943],
    'Exp': [0.22313016653060913, 1.2840254306793213, 7.389056205749512],
    'Softmax': [0.02508147992193699, 0.14433394372463226, 0.8305845260620117],
    'LogSoftmax': [-3.6856255531311035, -1.9356255531311035, -0.1856255680322647],
}

# Recorded from jax.example_libraries.optimizers (JAX 0.10.2, x64): params after 5 steps
# of each optimiser on `_loss` from `_P0`: (a.ravel(), b[0]).
OPT_REF = {
    'sgd': ([-1.180899516547243, -0.4866659746589956, 0.13476401527851156, 0.6677258948897065, 1.1906268623157312, 1.8269507055500234],
        [1.6923687858365346, 1.76875155830488]),
    'sgd_sched': ([-1.7064698577261714, -0.841267228263131, -0.14239058564423632, 0.3098859294502388, 0.7078189721655795, 1.3088257574600504],
        [3.3242085940976125, 2.8219702482876294]),
    'momentum': ([-1.510038366015271, -0.6618331222756368, -0.003775113929003829, 0.4229960905192237, 0.8233076821527291, 1.5114233830725095],
        [3.819346077063228, 5.8170093256803055]),
    'nesterov': ([-2.470870157675467, -1.4269511661654626, -0.5759375710977186, -0.2235707307465135, 0.012965622889654027, 0.5401331512219729],
        [4.346752344462952, 3.4673688299299052]),
    'adagrad': ([-1.095954349600765, -0.4973186180012451, 0.10516645212917612, 0.7059270031223708, 1.30514908956936, 1.9033931401817716],
        [0.5940032171891142, -0.15581802635225628]),
    'rmsprop': ([-1.1089879466325092, -0.5122085538998415, 0.09340402493006396, 0.6955913039944126, 1.293707747979467, 1.8896144381838778],
        [0.6042551896484417, -0.1453045871467048]),
    'rmsprop_momentum': ([-1.3179713762520446, -0.7301355903022027, -0.11155292725598226, 0.49987570268453174, 1.0926715758031598, 1.67763129214208],
        [0.7995480702626616, 0.05132036392979815]),
    'adam': ([-1.250938832959347, -0.6509709340852055, -0.050420147780704534, 0.5515089967348036, 1.1501762443769648, 1.748912079564819],
        [0.7483635126612642, -0.0012508559126505892]),
    'adam_sched': ([-1.3846265963781965, -0.7826361332849168, -0.18449815251344376, 0.4205560407449207, 1.0173108762981682, 1.6156164356650307],
        [0.8790382779456631, 0.1301209515633931]),
    'adamax': ([-1.2374221201498197, -0.6237386930983463, -0.04442723628735296, 0.5632817746874439, 1.1511383961346706, 1.7674379910684965],
        [0.735779975281264, -0.011441394387605122]),
    'sm3': ([-1.0959543449248774, -0.46589334418794615, 0.14213399543801036, 0.7150070015782257, 1.3051490933794583, 1.90339314511406],
        [0.5939959911492164, -0.15581802635225628]),
    'sgd_poly': ([-1.0586667674002648, -0.4244486955204378, 0.18239584025167963, 0.7550859654008709, 1.326300957463041, 1.94557641929425],
        [1.2945893621051547, 1.3366154173311593]),
    'sgd_pw': ([-1.1033161369735451, -0.44646754556712254, 0.16542001177037666, 0.7219816116056876, 1.2746209614313377, 1.9028115603521745],
        [1.4973088610089806, 1.5552362916767315]),
}
SCHED_REF = [
    (0.0, 0.1, 0.1, 0.1, 0.1, 0.1),
    (1.0, 0.08879040017426007, 0.08108108108108109, 0.1, 0.07196152422706632, 0.1),
    (2.0, 0.07883735163105243, 0.06818181818181819, 0.1, 0.0482842712474619, 0.05),
    (5.0, 0.0551861461417367, 0.04615384615384615, 0.05882352941176471, 0.02, 0.01),
    (7.0, 0.04350729608538743, 0.037974683544303806, 0.04166666666666667, 0.02, 0.01),
]
# SCHED_REF columns: i, exponential_decay(0.1, 3, 0.7), inverse_time_decay(0.1, 3, 0.7),
# the same with staircase=True, polynomial_decay(0.1, 4, 0.02, 1.5),
# piecewise_constant([1, 3], [0.1, 0.05, 0.01]).

KEY = zr.PRNGKey(0)


def _x(shape):
    n = math.prod(shape)
    return znp.asarray(np.sin(np.arange(n)).reshape(shape).astype(np.float32))


# --------------------------------------------------------------------------- stax

@pytest.mark.parametrize("name", sorted(STAX_REF))
def test_layer_params_and_outputs_match_jax(name, x32):
    expr, in_shape, out_shape, leaves, (y_sum, y_first) = STAX_REF[name]
    init_fun, apply_fun = eval(expr)
    got_shape, params = init_fun(KEY, in_shape)
    assert tuple(got_shape) == out_shape
    got = tu.tree_leaves(params)
    assert len(got) == len(leaves)
    for p, (shape, total, first) in zip(got, leaves):
        assert p.shape == shape and p.dtype == np.float32
        np.testing.assert_allclose(float(np.sum(np.asarray(p, np.float64))), total,
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(p).ravel()[:3], first, rtol=1e-5, atol=1e-9)
    if -1 in in_shape:
        return
    y = apply_fun(params, _x(in_shape))
    assert y.shape == out_shape
    np.testing.assert_allclose(float(znp.sum(y)), y_sum, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(y).ravel()[:4], y_first, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("expr,in_shape", sorted(SHAPE_REF))
def test_unknown_batch_dimension_shapes_match_jax(expr, in_shape):
    assert tuple(eval(expr)[0](KEY, in_shape)[0]) == SHAPE_REF[(expr, in_shape)]


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_REF))
def test_elementwise_layers_match_jax(name):
    init_fun, apply_fun = getattr(stax, name)
    assert init_fun(KEY, (3,)) == ((3,), ())
    y = apply_fun((), znp.asarray(np.array([-1.5, 0.25, 2.0], np.float32)))
    np.testing.assert_allclose(np.asarray(y), ELEMENTWISE_REF[name], rtol=2e-6, atol=1e-7)


def test_serial_fanout_parallel_dropout_network_matches_jax(x32):
    init_fun, apply_fun = stax.serial(
        stax.Dense(8), stax.Relu, stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
        stax.FanInConcat(), stax.Dropout(0.7), stax.Dense(2), stax.LogSoftmax)
    out_shape, params = init_fun(KEY, (-1, 5))
    assert out_shape == (-1, 2)
    x = znp.asarray(np.cos(np.arange(15.0)).reshape(3, 5).astype(np.float32))
    y = apply_fun(params, x, rng=zr.PRNGKey(3))
    np.testing.assert_allclose(np.asarray(y), NET_OUT, rtol=1e-5, atol=1e-6)


# Dropout(0.6) of ones(10) with PRNGKey(5), recorded with jax_enable_x64 (float64
# uniforms for the Python-float rate); DROPOUT_MASK above is JAX's default mode's.
DROPOUT_MASK_X64 = [0, 1, 0, 0, 1, 1, 1, 1, 1, 1]


def test_dropout_mask_matches_jax_and_modes(x64):
    init_fun, apply_fun = stax.Dropout(0.6)
    assert init_fun(KEY, (10,)) == ((10,), ())
    y = np.asarray(apply_fun((), znp.ones(10), rng=zr.PRNGKey(5)))
    assert (y > 0).astype(int).tolist() == (DROPOUT_MASK_X64 if x64 else DROPOUT_MASK)
    np.testing.assert_allclose(y[y > 0], 1 / 0.6)
    x = znp.arange(4.0)
    assert np.array_equal(np.asarray(stax.Dropout(0.6, mode="test")[1]((), x, rng=KEY)), x)
    with pytest.raises(errors.ZeraxValueError, match="PRNG key"):
        apply_fun((), x)
    with pytest.raises(ValueError):   # JAX raises ValueError: ported excepts still catch it
        apply_fun((), x)


# jax_enable_x64: the parameters of serial(Conv(2, (2, 2)), Relu, Flatten, Dense(3),
# Dropout(0.5)) from PRNGKey(0) for input (1, 3, 3, 1), and its output on arange(9) / 9 with
# rng=PRNGKey(1): float64 parameters, as JAX's initializers draw in that mode.
NET_X64_PARAMS = [
    [-0.020809420999449085, -0.6351416610091649, 0.346303541723495, -0.39670922581862283,
     -0.09963611749001287, -0.08262858657468594, 0.5894170468083931, -0.2366192761201707],
    [1.2683470355162594e-06, -7.036952476222595e-08],
    [0.5052938230550226, 0.3734152625901814, -0.8911948234023512, -0.005639117125497526,
     0.5566512308849728, -0.6315107965981017, 0.5886294038590281, 0.2406380472526774,
     -0.3680048396185711, 0.08712660329434184, -0.4084748087795292, -0.1579959333590101,
     0.38933505741885466, -0.39118435506861227, -0.10462582476008654, 0.3695198459987625,
     -0.022682241189022945, 0.18377855613071187, 0.21681697838019695, 0.1601071506226514,
     -0.3500278087699565, 0.1031326973197426, 0.03713037349710041, -0.24773638650909457],
    [0.004548754359279654, -0.005669476954866095, 0.021092918513245337]]
NET_X64_OUT = [1.393099817993308, 0.0, 0.0]


def test_network_matches_jax_with_x64():
    init_fun, apply_fun = stax.serial(stax.Conv(2, (2, 2)), stax.Relu, stax.Flatten,
                                      stax.Dense(3), stax.Dropout(0.5))
    _, params = init_fun(KEY, (1, 3, 3, 1))
    leaves = tu.tree_leaves(params)
    assert [p.dtype for p in leaves] == [np.float64] * 4
    for p, ref in zip(leaves, NET_X64_PARAMS):
        np.testing.assert_allclose(np.asarray(p).ravel(), ref, rtol=1e-14, atol=1e-17)
    y = apply_fun(params, znp.arange(9.0).reshape(1, 3, 3, 1) / 9, rng=zr.PRNGKey(1))
    assert y.dtype == np.float64
    np.testing.assert_allclose(np.asarray(y).ravel(), NET_X64_OUT, rtol=1e-14)
    # float32 inputs meet float64 parameters: promoted, as jnp.dot would
    y32 = apply_fun(params, znp.arange(9.0, dtype=np.float32).reshape(1, 3, 3, 1) / 9,
                    rng=zr.PRNGKey(1))
    assert y32.dtype == np.float64
    np.testing.assert_allclose(np.asarray(y32).ravel(), NET_X64_OUT, rtol=1e-6)


def test_dense_and_batchnorm_against_numpy():
    init_fun, apply_fun = stax.Dense(3)
    _, (W, b) = init_fun(KEY, (4, 5))
    x = np.random.default_rng(0).normal(size=(4, 5))
    np.testing.assert_allclose(np.asarray(apply_fun((W, b), x)),
                               x @ np.asarray(W, np.float64) + np.asarray(b), rtol=1e-6)
    init_fun, apply_fun = stax.BatchNorm(axis=(0, 1))
    _, (beta, gamma) = init_fun(KEY, (2, 3, 4))
    beta, gamma = beta + 0.5, gamma * 2.0
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    ref = 2.0 * (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-5) + 0.5
    np.testing.assert_allclose(np.asarray(apply_fun((beta, gamma), x)), ref, rtol=1e-6)


def test_maxpool_and_avgpool_against_numpy_loop():
    x = np.random.default_rng(2).normal(size=(2, 5, 4, 3))
    y = np.asarray(stax.MaxPool((2, 2), strides=(1, 2))[1]((), x))
    ref = np.stack([np.stack([x[:, i:i + 2, j:j + 2].max((1, 2)) for j in range(0, 3, 2)], 1)
                    for i in range(4)], 1)
    np.testing.assert_allclose(y, ref)
    y = np.asarray(stax.AvgPool((3, 3), padding="SAME")[1]((), x))
    ref = np.zeros_like(x)
    for i in range(5):
        for j in range(4):
            ref[:, i, j] = x[:, max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].mean((1, 2))
    np.testing.assert_allclose(y, ref, rtol=1e-12)


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(["Conv", "ConvTranspose", "MaxPool", "SumPool"]),
       k=st.integers(1, 3), s=st.integers(1, 2), padding=st.sampled_from(["SAME", "VALID"]),
       hw=st.tuples(st.integers(3, 6), st.integers(3, 6)))
def test_init_output_shape_is_apply_output_shape(kind, k, s, padding, hw):
    if kind in ("Conv", "ConvTranspose"):
        layer = getattr(stax, kind)(2, (k, k), strides=(s, s), padding=padding)
    else:
        layer = getattr(stax, kind)((k, k), strides=(s, s), padding=padding)
    shape = (1, *hw, 2)
    out_shape, params = layer[0](KEY, shape)
    assert tuple(layer[1](params, _x(shape)).shape) == tuple(out_shape)


def test_shape_dependent_and_fan_in_sum():
    init_fun, apply_fun = stax.serial(
        stax.FanOut(2), stax.parallel(stax.shape_dependent(lambda s: stax.Dense(s[-1])),
                                      stax.Identity), stax.FanInSum)
    out_shape, params = init_fun(KEY, (2, 6))
    assert out_shape == (2, 6)
    x = _x((2, 6))
    W, b = params[1][0]
    np.testing.assert_allclose(np.asarray(apply_fun(params, x)),
                               np.asarray(x) @ np.asarray(W) + np.asarray(b) + np.asarray(x),
                               rtol=1e-6)


@pytest.fixture(scope="module")
def mlp():
    init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Tanh, stax.Dense(1))
    _, params = init_fun(KEY, (-1, 2))
    x = np.random.default_rng(3).uniform(-1, 1, size=(32, 2)).astype(np.float32)
    y = (x[:, :1] * x[:, 1:]).astype(np.float32)

    def loss(p, x, y):
        return znp.mean((apply_fun(p, x) - y) ** 2)

    opt_init, opt_update, get_params = optimizers.adam(0.05)

    @zx.jit
    def step(i, state, x, y):
        value, g = zx.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, g, state)

    return params, x, y, loss, opt_init, opt_update, get_params, step


def test_training_a_stax_mlp_with_jitted_optimizer_step(mlp):
    params, x, y, loss, opt_init, opt_update, get_params, step = mlp
    state = opt_init(params)
    first, state1 = step(0, state, x, y)
    # the jitted step equals the eager one
    g = zx.grad(loss)(params, x, y)
    eager = get_params(opt_update(0, g, state))
    for a, b in zip(tu.tree_leaves(get_params(state1)), tu.tree_leaves(eager)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(float(first), float(loss(params, x, y)), rtol=1e-6)
    state = state1
    for i in range(1, 60):
        value, state = step(i, state, x, y)
    assert float(value) < 0.5 * float(first)


def test_stax_errors():
    with pytest.raises(errors.ZeraxValueError, match="out_dim"):
        stax.Dense(0)
    with pytest.raises(errors.ZeraxTypeError, match="must be called"):
        stax.serial(stax.Dense)
    with pytest.raises(errors.ZeraxValueError, match="padding"):
        stax.MaxPool((2, 2), padding="FULL")[0](KEY, (1, 4, 4, 1))
    with pytest.raises(errors.ShapeError, match="dimensions"):
        stax.Conv(2, (3, 3))[0](KEY, (4, 4, 1))
    with pytest.raises(errors.ZeraxValueError, match="dimension_numbers"):
        stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (3,))


# --------------------------------------------------------------------------- optimizers

def _loss(p):
    return (znp.sum(znp.sin(p["a"]) * p["a"] ** 2) + znp.sum((p["b"][0] - 3.0) ** 4)
            + znp.sum(p["a"]) * p["b"][0][0])


_P0 = {"a": np.linspace(-1.0, 2.0, 6).reshape(2, 3), "b": [np.array([0.5, -0.25])]}
O = optimizers
_OPTS = {
    "sgd": lambda: O.sgd(0.01), "sgd_sched": lambda: O.sgd(O.exponential_decay(0.05, 2, 0.5)),
    "momentum": lambda: O.momentum(0.01, 0.9), "nesterov": lambda: O.nesterov(0.02, 0.8),
    "adagrad": lambda: O.adagrad(0.1), "rmsprop": lambda: O.rmsprop(0.01),
    "rmsprop_momentum": lambda: O.rmsprop_momentum(0.01), "adam": lambda: O.adam(0.05),
    "adam_sched": lambda: O.adam(O.inverse_time_decay(0.1, 2, 0.5, staircase=True)),
    "adamax": lambda: O.adamax(0.05), "sm3": lambda: O.sm3(0.1),
    "sgd_poly": lambda: O.sgd(O.polynomial_decay(0.01, 3, 0.001, 2.0)),
    "sgd_pw": lambda: O.sgd(O.piecewise_constant([1, 3], [0.01, 0.005, 0.001])),
}


@pytest.mark.parametrize("name", sorted(OPT_REF))
def test_optimizer_matches_jax(name):
    init, update, get = _OPTS[name]()
    state = init(tu.tree_map(znp.asarray, _P0))
    for i in range(5):
        state = update(i, zx.grad(_loss)(get(state)), state)
    a_ref, b_ref = OPT_REF[name]
    p = get(state)
    np.testing.assert_allclose(np.asarray(p["a"]).ravel(), a_ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(np.asarray(p["b"][0]), b_ref, rtol=1e-13, atol=1e-14)
    assert p["a"].shape == (2, 3)


def test_schedules_match_jax():
    for i, *ref in SCHED_REF:
        got = [O.exponential_decay(0.1, 3, 0.7)(i), O.inverse_time_decay(0.1, 3, 0.7)(i),
               O.inverse_time_decay(0.1, 3, 0.7, staircase=True)(i),
               O.polynomial_decay(0.1, 4, 0.02, 1.5)(i),
               O.piecewise_constant([1, 3], [0.1, 0.05, 0.01])(i)]
        np.testing.assert_allclose([float(v) for v in got], ref, rtol=1e-14)
    assert O.constant(0.3)(7) == 0.3 and O.make_schedule(0.3)(7) == 0.3
    sched = O.exponential_decay(0.1, 3, 0.7)
    assert O.make_schedule(sched) is sched


def test_schedules_with_a_traced_step():
    sched = O.piecewise_constant([1, 3], [0.1, 0.05, 0.01])
    poly = O.polynomial_decay(0.1, 4, 0.02, 1.5)
    f = zx.jit(lambda i: (sched(i), poly(i)))
    for i, *ref in SCHED_REF:
        a, b = f(znp.asarray(int(i)))
        np.testing.assert_allclose([float(a), float(b)], [ref[4], ref[3]], rtol=1e-14)


def test_l2_norm_and_clip_grads():
    g = {"x": znp.asarray([3.0, -4.0]), "y": znp.asarray([[12.0]])}
    assert float(O.l2_norm(g)) == 13.0   # JAX: 13.0
    clipped = O.clip_grads(g, 6.5)
    np.testing.assert_allclose(np.asarray(clipped["x"]), [1.5, -2.0])
    np.testing.assert_allclose(float(O.l2_norm(clipped)), 6.5)
    np.testing.assert_allclose(np.asarray(O.clip_grads(g, 20.0)["x"]), [3.0, -4.0])


def test_pack_unpack_round_trip_continues_identically():
    init, update, get = O.adam(0.05)
    params = tu.tree_map(znp.asarray, _P0)
    state = update(0, zx.grad(_loss)(params), init(params))
    marked = O.unpack_optimizer_state(state)
    assert isinstance(marked["a"], O.JoinPoint) and isinstance(marked["b"][0], O.JoinPoint)
    # plain containers and arrays only: the leaves are the arrays of the state
    x, m, v = marked["a"].subtree
    np.testing.assert_array_equal(np.asarray(x), np.asarray(get(state)["a"]))
    rebuilt = O.pack_optimizer_state(marked)
    assert isinstance(rebuilt, O.OptimizerState)
    s1 = update(1, zx.grad(_loss)(get(state)), state)
    s2 = update(1, zx.grad(_loss)(get(rebuilt)), rebuilt)
    for p, q in zip(tu.tree_leaves(s1), tu.tree_leaves(s2)):
        np.testing.assert_array_equal(np.asarray(p), np.asarray(q))
    with pytest.raises(errors.ZeraxTypeError, match="JoinPoint"):
        O.pack_optimizer_state({"a": np.ones(2)})


def test_optimizer_state_is_a_pytree_and_vmaps():
    init, update, get = O.momentum(0.1, 0.9)
    state = init({"w": znp.ones(3), "b": znp.zeros(())})
    assert len(tu.tree_leaves(state)) == 4
    doubled = tu.tree_map(lambda l: 2 * l, state)
    np.testing.assert_allclose(np.asarray(get(doubled)["w"]), 2.0)
    ws = znp.stack([znp.ones(3), 2 * znp.ones(3)])
    out = zx.vmap(lambda w: get(update(0, {"w": w, "b": znp.zeros(())},
                                       init({"w": w, "b": znp.zeros(())})))["w"])(ws)
    np.testing.assert_allclose(np.asarray(out), [[0.9] * 3, [1.8] * 3])


def test_custom_optimizer_via_decorator():
    @O.optimizer
    def signsgd(step_size):
        def init(x0):
            return (x0,)

        def update(i, g, state):
            return (state[0] - step_size * znp.sign(g),)

        return init, update, lambda state: state[0]

    init, update, get = signsgd(0.5)
    assert signsgd.__name__ == "signsgd"
    out = get(update(0, [znp.asarray([-2.0, 3.0])], init([znp.zeros(2)])))
    np.testing.assert_allclose(np.asarray(out[0]), [0.5, -0.5])


def test_optimizer_errors():
    init, update, get = O.sgd(0.1)
    state = init({"w": znp.ones(2)})
    with pytest.raises(errors.ZeraxTypeError, match="gradient tree"):
        update(0, {"v": znp.ones(2)}, state)
    with pytest.raises(TypeError):   # JAX raises TypeError here too
        update(0, [znp.ones(2)], state)
    with pytest.raises(errors.OptimizerStateError, match="OptimizerState"):
        get({"w": znp.ones(2)})
    with pytest.raises(errors.ZeraxTypeError, match="step_size"):
        O.sgd([0.1, 0.2])
    with pytest.raises(errors.ZeraxValueError, match="one shorter"):
        O.piecewise_constant([1, 2], [0.1, 0.2])

    @O.optimizer
    def broken():
        return (lambda x: (x, x), lambda i, g, s: (s[0],), lambda s: s[0])

    i2, u2, g2 = broken()
    with pytest.raises(errors.ZeraxTypeError, match="output structure"):
        u2(0, znp.ones(2), i2(znp.ones(2)))


# --------------------------------------------------------------------------- a JAX example

def _conv_block(kernel_size, filters, strides=(2, 2)):   # JAX's examples/resnet50.py
    ks = kernel_size
    filters1, filters2, filters3 = filters
    main = stax.serial(stax.Conv(filters1, (1, 1), strides), stax.BatchNorm(), stax.Relu,
                       stax.Conv(filters2, (ks, ks), padding="SAME"), stax.BatchNorm(),
                       stax.Relu, stax.Conv(filters3, (1, 1)), stax.BatchNorm())
    shortcut = stax.serial(stax.Conv(filters3, (1, 1), strides), stax.BatchNorm())
    return stax.serial(stax.FanOut(2), stax.parallel(main, shortcut), stax.FanInSum,
                       stax.Relu)


def _identity_block(kernel_size, filters):
    ks = kernel_size
    filters1, filters2 = filters

    def make_main(input_shape):
        return stax.serial(
            stax.Conv(filters1, (1, 1)), stax.BatchNorm(), stax.Relu,
            stax.Conv(filters2, (ks, ks), padding="SAME"), stax.BatchNorm(), stax.Relu,
            stax.Conv(input_shape[3], (1, 1)), stax.BatchNorm())

    return stax.serial(stax.FanOut(2), stax.parallel(stax.shape_dependent(make_main),
                                                     stax.Identity),
                       stax.FanInSum, stax.Relu)


# Recorded from JAX 0.10.2 (float32) with the same network, keys and two momentum steps.
RESNET_OUT = [
    [-0.7934192419052124, -1.9303758144378662, -1.8528093099594116, -2.857476234436035,
     -1.6691818237304688],
    [-0.46327832341194153, -2.521435260772705, -2.1901819705963135, -3.5449066162109375,
     -1.8993184566497803],
    [-0.9449830055236816, -1.9828848838806152, -1.8258886337280273, -3.1886610984802246,
     -1.3043794631958008],
    [-0.9470663666725159, -2.296194553375244, -2.239248037338257, -2.8628945350646973,
     -1.0560132265090942]]
RESNET_LOSS_AFTER_2_STEPS = 5.645685195922852


def test_resnet_example_matches_jax(x32):
    init_fun, predict_fun = stax.serial(
        stax.GeneralConv(("HWCN", "OIHW", "NHWC"), 8, (3, 3), (2, 2), "SAME"),
        stax.BatchNorm(), stax.Relu, stax.MaxPool((3, 3), strides=(2, 2)),
        _conv_block(3, [4, 4, 8], strides=(1, 1)), _identity_block(3, [4, 4]),
        stax.AvgPool((3, 3)), stax.Flatten, stax.Dense(5), stax.LogSoftmax)
    out_shape, params = init_fun(zr.PRNGKey(0), (16, 16, 3, 4))
    assert out_shape == (4, 5)
    x = zr.normal(zr.PRNGKey(1), (16, 16, 3, 4), np.float32)
    np.testing.assert_allclose(np.asarray(predict_fun(params, x)), RESNET_OUT, rtol=1e-5,
                               atol=2e-6)
    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)
    state = opt_init(params)
    targets = znp.eye(5)[znp.array([0, 1, 2, 3])]

    def loss(p):
        return -znp.sum(predict_fun(p, x) * targets)

    for i in range(2):
        state = opt_update(i, zx.grad(loss)(get_params(state)), state)
    np.testing.assert_allclose(float(loss(get_params(state))), RESNET_LOSS_AFTER_2_STEPS,
                               rtol=1e-5)


def test_optimizer_state_round_trips_through_zerax_io(tmp_path):
    from zerax import io
    init, update, get = O.sm3(0.1)   # a state with lists and shape tuples inside
    params = tu.tree_map(znp.asarray, _P0)
    state = update(0, zx.grad(_loss)(params), init(params))
    path = str(tmp_path / "opt.safetensors")
    io.save(path, state)
    back = io.load(path, like=init(params))
    assert isinstance(back, O.OptimizerState)
    for p, q in zip(tu.tree_leaves(state), tu.tree_leaves(back)):
        np.testing.assert_array_equal(np.asarray(p), np.asarray(q))
    s1 = update(1, zx.grad(_loss)(get(state)), state)
    s2 = update(1, zx.grad(_loss)(get(back)), back)
    np.testing.assert_array_equal(np.asarray(get(s1)["a"]), np.asarray(get(s2)["a"]))
