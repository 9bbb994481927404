"""zerax.nn.initializers against jax.nn.initializers' values for the same key, shape and
dtype (recorded), and against their defining statistics."""

import numpy as np
import pytest

import zerax.nn.initializers as init
import zerax.random as zr
from zerax import errors

# Recorded with /tmp/anchors (jax 0.10, jax_enable_x64): for each entry,
#   np.asarray(jax.nn.initializers.<init>(key=jax.random.key(7), shape, dtype)).ravel()
JAX = {
    "glorot_uniform": (init.glorot_uniform(), (3, 4), np.float32,
         [0.32235187292099, 0.8788197040557861, -0.36506277322769165, -0.10376865416765213,
         0.4275188744068146, 0.24243448674678802, -0.09526625275611877, -0.1639050841331482,
         -0.7966422438621521, -0.7596684098243713, -0.23850280046463013, 0.6318743228912354]),
    "he_normal": (init.he_normal(), (2, 3), np.float64,
         [1.077796902504212, -1.7115355121874505, -0.8121343806091204, -1.5658060537965834,
         -2.0725602389173816, 1.036489977791994]),
    "lecun_normal32": (init.lecun_normal(), (2, 3), np.float32,
         [0.34514930844306946, 1.3463943004608154, -0.3944717347621918, -0.10811103135347366,
         0.469440758228302, 0.2560865581035614]),
    "vs_geo_normal": (init.variance_scaling(0.5, "fan_geo_avg", "normal"), (2, 2, 3), np.float64,
         [0.3231395122146442, -0.5402458532661063, -0.24134998824065695, -0.4852662278098693,
         -0.7217144589608974, 0.31023951108026876, 0.10233319934010757, 0.23524198985242717,
         0.33436127211184824, 0.1268498326874756, 0.23218225254454306, 0.12414990558946674]),
    "uniform": (init.uniform(0.5), (4,), np.float64,
         [0.4220534725411764, 0.022706292563328234, 0.11249231284642691, 0.03219280256683421]),
    "normal": (init.normal(2.0), (3,), np.float64,
         [2.022962671118173, -3.382121817581275, -1.5109325799852855]),
    "trunc": (init.truncated_normal(1.0), (3,), np.float64,
         [0.9480578128259236, -1.5055105562914621, -0.7143742413919303]),
    "orth": (init.orthogonal(2.0), (3, 2), np.float64,
         [0.7816959547459739, -1.1429715191147138, -0.5838416608130289, -1.6408078993148618,
         -1.7458752387936722, 0.03695326830677215]),
    "orth_c0": (init.orthogonal(column_axis=0), (2, 3), np.float64,
         [0.39084797737298693, -0.29192083040651445, -0.8729376193968361, -0.5714857595573569,
         -0.8204039496574309, 0.018476634153386073]),
    "delta": (init.delta_orthogonal(), (3, 2, 2), np.float64,
         [0.0, 0.0, 0.0, 0.0, 0.8011940556673438, -0.5984046165959227, -0.5984046165959227,
         -0.8011940556673438, 0.0, 0.0, 0.0, 0.0]),
    "vs_unif_c": (init.variance_scaling(1.0, "fan_in", "uniform"), (2, 2), np.complex128,
         [(-0.25289091518431916+0.7572837840751918j), (-0.24914384805789735+0.24927173683438042j),
         (0.06071676907904332-0.6912998556737449j),
         (-0.6379044247530078-0.5689842365436146j)]),
}


# Recorded with jax 0.10 in its default mode (jax_enable_x64 off), dtype left out, so the
# initializers draw float32:
#   np.asarray(<init>(key=jax.random.key(7), shape)).ravel()
JAX_DEFAULT_MODE = {
    "glorot_uniform": (init.glorot_uniform(), (3, 4),
        [0.32235187292099, 0.8788197040557861, -0.36506277322769165,
         -0.10376865416765213, 0.4275188744068146, 0.24243448674678802,
         -0.09526625275611877, -0.1639050841331482, -0.7966422438621521,
         -0.7596684098243713, -0.23850280046463013, 0.6318743228912354]),
    "he_normal": (init.he_normal(), (2, 3),
        [0.4881148636341095, 1.9040892124176025, -0.5578673481941223,
         -0.1528920978307724, 0.6638895273208618, 0.3621610999107361]),
    "lecun_normal": (init.lecun_normal(), (2, 3),
        [0.34514930844306946, 1.3463943004608154, -0.3944717347621918,
         -0.10811103135347366, 0.469440758228302, 0.2560865581035614]),
    "uniform": (init.uniform(0.5), (4,),
        [0.33704495429992676, 0.48730844259262085, 0.15142178535461426,
         0.2219792604446411]),
    "normal": (init.normal(2.0), (3,),
        [0.9024702906608582, 3.9069018363952637, -1.032478928565979]),
    "trunc": (init.truncated_normal(1.0), (3,),
        [0.4293583631515503, 1.6748857498168945, -0.4907144010066986]),
    "orth": (init.orthogonal(2.0), (3, 2),
        [0.9794702529907227, 1.739524006843567, -1.120571255683899, 0.7344347834587097,
         1.3360233306884766, -0.659288763999939]),
    "delta": (init.delta_orthogonal(), (3, 2, 2),
        [0.0, 0.0, 0.0, 0.0, 0.658112645149231, 0.7529194951057434, -0.7529194951057434,
         0.658112645149231, 0.0, 0.0, 0.0, 0.0]),
    "vs_geo": (init.variance_scaling(0.5, 'fan_geo_avg', 'normal'), (2, 2, 3),
        [0.1441567987203598, 0.6240720152854919, -0.16492383182048798,
         -0.04502641782164574, 0.1966336965560913, 0.10680461674928665,
         -0.041315555572509766, -0.07147745043039322, -0.47203540802001953,
         -0.428860604763031, -0.10500814765691757, 0.319348007440567]),
    "constant": (init.constant(-7), (2,), [-7.0, -7.0]),
}


@pytest.mark.parametrize("name", sorted(JAX_DEFAULT_MODE))
def test_default_dtype_follows_the_mode(name, x64):
    initializer, shape, expected = JAX_DEFAULT_MODE[name]
    got = initializer(zr.key(7), shape)
    assert got.shape == shape and got.dtype == (np.float64 if x64 else np.float32)
    if not x64:   # JAX's default mode: its values, within 2 float32 ulp
        np.testing.assert_allclose(np.ravel(got), expected, rtol=5e-7, atol=5e-7)


@pytest.mark.parametrize("name", sorted(JAX))
def test_same_values_as_jax(name):
    initializer, shape, dtype, expected = JAX[name]
    got = initializer(zr.key(7), shape, dtype)
    assert got.shape == shape and got.dtype == dtype
    # float32 within 2 ulp (zerax.random's float32 normal may round differently in the last
    # bit); float64 within a few ulp
    rtol = 5e-7 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(np.ravel(got), expected, rtol=rtol, atol=rtol)


def test_statistics_and_aliases():
    k = zr.key(0)
    w = np.asarray(init.he_uniform()(k, (500, 400)))
    lim = np.sqrt(6 / 500)
    assert w.min() >= -lim and w.max() < lim and abs(w.var() - 2 / 500) < 2e-4
    g = np.asarray(init.glorot_normal(in_axis=0, out_axis=1)(k, (300, 200)))
    assert abs(g.var() - 2 / 500) < 3e-4 and np.abs(g).max() <= 2 * np.sqrt(2 / 500) / 0.8796
    conv = np.asarray(init.lecun_normal(in_axis=1, out_axis=0)(k, (64, 8, 3, 3)))
    assert abs(conv.var() - 1 / 72) < 1e-3                      # fan_in = 8 * 3 * 3
    assert init.xavier_uniform is init.glorot_uniform
    assert init.kaiming_normal is init.he_normal
    q = np.asarray(init.orthogonal()(k, (4, 6)))
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-12)
    d = np.asarray(init.delta_orthogonal()(k, (3, 3, 4, 4)))
    assert np.count_nonzero(d[1, 1]) == 16 and np.count_nonzero(d) == np.count_nonzero(d[1, 1])
    assert init.zeros(k, (2,)).dtype == np.float64
    assert init.constant(2.0, np.float32)(k, (3,)).dtype == np.float32


def test_errors():
    k = zr.key(0)
    with pytest.raises(errors.ZeraxValueError, match="at least 2-d"):
        init.glorot_uniform()(k, (3,))
    with pytest.raises(errors.ZeraxValueError, match="mode"):
        init.variance_scaling(1.0, "fan_max", "normal")
    with pytest.raises(errors.ZeraxValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(errors.ZeraxValueError, match="2D"):
        init.orthogonal()(k, (3,))
    with pytest.raises(errors.ZeraxValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(k, (3, 3))
    with pytest.raises(errors.ZeraxTypeError, match="floating"):
        init.normal()(k, (2,), np.int32)


def test_initializers_constant_and_namespace():
    from zerax.nn import initializers
    assert initializers is init
    z = init.zeros(None, (2, 3))
    assert z.shape == (2, 3) and z.dtype == np.float64 and not np.asarray(z).any()
    o = init.ones(None, [4], np.float32)
    assert o.dtype == np.float32 and np.asarray(o).all()
    c = init.constant(0.5, np.float32)(None, (2,))
    np.testing.assert_array_equal(c, np.full(2, 0.5, np.float32))
    assert init.constant(3)(None, (1,), np.int32).dtype == np.int32
