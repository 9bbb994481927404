"""Complex inputs to the inverse trigonometric and hyperbolic functions, log2, log10,
exp2 and sign (issue 14).

Values are NumPy's, branch cuts and signed zeros included, eagerly, under ``jit`` (to a
few ulp) and ``vmap``; ``grad(..., holomorphic=True)`` is the analytic derivative;
gradients of real losses of complex inputs are JAX's, recorded with jax 0.10.2 (x64) and
pasted below."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

FUNCS = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "log2",
         "log10"]
ALL = FUNCS + ["sign"]

Z = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.5j])

# jax.grad(f, holomorphic=True) at each point of Z (jax 0.10.2, x64)
JAX_DERIV = {
    "arcsin": [0.8183732727363346 + 0.12011169290141234j, 0.6000000000000001 - 0.7999999999999999j,
               0.2691345626318963 - 0.30487084694323036j],
    "arccos": [-0.8183732727363346 - 0.12011169290141234j, -0.6000000000000001 + 0.7999999999999999j,
               -0.2691345626318963 + 0.30487084694323036j],
    "arctan": [1.1185682326621924 - 0.7829977628635345j, 0.37254901960784315 + 0.15686274509803924j,
               0.06312769010043041 + 0.13773314203730272j],
    "arcsinh": [1.114440390254363 - 0.35129638593088913j, 0.6232074539569729 + 0.1258511464377232j,
                0.3275961644434688 + 0.21021787949087925j],
    # at -1.2+0.4j JAX gives 0.8+0.6j, the wrong sign: its rule is 1/sqrt((z-1)(z+1)),
    # which is not the derivative of the principal arccosh where re z < 0 (finite
    # differences of numpy.arccosh give -0.8-0.6j, as JAX's grad of the same function
    # written log(z + sqrt(z+1) sqrt(z-1)) does); the right value is here
    "arccosh": [0.12011169290141227 - 0.8183732727363346j, -0.8 - 0.6j,
                0.30487084694323036 + 0.2691345626318962j],
    "arctanh": [0.6553079947575361 + 0.19659239842726084j, -0.27999999999999986 - 0.9599999999999999j,
                -0.02051282051282051 - 0.16410256410256413j],
    "exp2": [0.7548692113631627 + 0.3979988270857411j, 0.2901873404442447 + 0.08258408759624686j,
             1.4042081841242815 - 2.3907002318002166j],
    "log2": [0.7462215728736018 - 1.7411836700384042j, -1.0820212806667227 - 0.3606737602222409j,
             0.46166241308446826 + 0.34624680981335115j],
    "log10": [0.2246350768465096 - 0.5241485126418557j, -0.3257208614274389 - 0.10857362047581297j,
              0.1389742342090406 + 0.10423067565678043j],
}

# the analytic derivatives, in NumPy (principal branches)
DERIV = {
    "arcsin": lambda z: 1 / np.sqrt(1 - z * z), "arccos": lambda z: -1 / np.sqrt(1 - z * z),
    "arctan": lambda z: 1 / (1 + z * z), "arcsinh": lambda z: 1 / np.sqrt(1 + z * z),
    "arccosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)),
    "arctanh": lambda z: 1 / (1 - z * z), "exp2": lambda z: np.exp2(z) * np.log(2),
    "log2": lambda z: 1 / (z * np.log(2)), "log10": lambda z: 1 / (z * np.log(10)),
}

_INF, _NAN = np.inf, np.nan
_GRID = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-10, -1e-10, 1e-300, 30.0, -30.0,
         1e10, -1e10, 1e300, -1e300, _INF, -_INF, _NAN]
# every pair of the parts above: the branch cuts (arcsin/arccos/arctanh: real axis beyond
# +-1; arcsinh/arctan: imaginary axis beyond +-i; arccosh: real axis below 1; log2/log10:
# negative real axis) with both signs of zero, points beside them (1e-300, 1e-10), huge
# and tiny magnitudes, and C99's special values for infinite and nan parts
EDGES = np.array([complex(a, b) for a in _GRID for b in _GRID])


def _same(got, want, rtol=4e-15):
    """Equal parts with equal signs, or both nan, or close (finite parts; subnormal
    results to a few of their ulp)."""
    def part(g, e):
        exact = (g == e) & (np.signbit(g) == np.signbit(e))
        return exact | (np.isnan(g) & np.isnan(e)) | (
            np.isfinite(e) & np.isclose(g, e, rtol=rtol, atol=1e-321))
    return part(got.real, want.real) & part(got.imag, want.imag)


def _np(name, z):
    with np.errstate(all="ignore"):
        return getattr(np, name)(z)


def test_eager_values_and_cuts_exactly_numpy():
    for name in ALL:
        got = getattr(znp, name)(EDGES)
        assert got.dtype == np.complex128, name
        want = _np(name, EDGES)
        ok = _same(np.asarray(got), want, rtol=0)
        assert ok.all(), (name, EDGES[~ok])


def test_jit_matches_numpy_on_cuts_and_edges():
    f = zx.jit(lambda z: [getattr(znp, name)(z) for name in ALL])
    for name, got in zip(ALL, f(EDGES)):
        want = _np(name, EDGES)
        assert got.dtype == want.dtype, name
        ok = _same(np.asarray(got), want)
        assert ok.all(), (name, EDGES[~ok], np.asarray(got)[~ok], want[~ok])


def test_cut_sides_follow_the_sign_of_zero():
    # on each cut, +0 and -0 imaginary (or real) parts give NumPy's two sides
    cases = {"arcsin": [2.0], "arccos": [-3.0, 1.5], "arctanh": [1.5, -4.0],
             "arccosh": [-2.0, 0.5], "log2": [-0.5], "log10": [-7.0]}
    jitted = {n: zx.jit(getattr(znp, n)) for n in cases}
    for name, xs in cases.items():
        z = np.array([complex(x, s) for x in xs for s in (0.0, -0.0, 1e-300, -1e-300)])
        want = _np(name, z)
        for got in (getattr(znp, name)(z), jitted[name](z)):
            got = np.asarray(got)
            np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=name)
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))
    for name in ["arcsinh", "arctan"]:      # cuts on the imaginary axis
        z = np.array([complex(s, y) for y in (2.0, -3.0) for s in (0.0, -0.0, 1e-300, -1e-300)])
        want = _np(name, z)
        got = np.asarray(zx.jit(getattr(znp, name))(z))
        np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=name)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


def test_logs_near_the_unit_circle_to_a_few_ulp_under_jit():
    # log|z| cancels there: log(1 + 1e-10j) has real part 5e-21, which the textbook
    # log(hypot(x, y)) rounds to 0
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, 300)
    z = np.concatenate([(1 + rng.normal(0, 1e-9, 300)) * np.exp(1j * t),
                        [1 + 1e-10j, -1 - 1e-10j, 1e-8j + 1, 0.6 + 0.8j]])
    f = zx.jit(lambda z: (znp.log(z), znp.log2(z), znp.log10(z)))
    for got, want in zip(f(z), (np.log(z), np.log2(z), np.log10(z))):
        got = np.asarray(got)
        np.testing.assert_allclose(got.real, want.real, rtol=8e-16, atol=0)
        np.testing.assert_allclose(got.imag, want.imag, rtol=4e-16, atol=0)


def _parts(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


_JIT_ALL = zx.jit(lambda z: [getattr(znp, name)(z) for name in ALL])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_parts(-3.0, 3.0), _parts(-3.0, 3.0)).map(lambda t: complex(*t)),
                min_size=1, max_size=6))
def test_values_match_numpy(zs):
    z = np.array(zs)
    jitted = _JIT_ALL(z)
    for name, j in zip(ALL, jitted):
        want = _np(name, z)
        np.testing.assert_array_equal(np.asarray(getattr(znp, name)(z)), want)
        assert _same(np.asarray(j), want).all(), name


def test_complex64_and_real_inputs_keep_numpy_dtypes():
    z = Z.astype(np.complex64)
    jitted = _JIT_ALL(z)
    for name, j in zip(ALL, jitted):
        want = _np(name, z)
        for got in (getattr(znp, name)(z), j):
            assert got.dtype == np.complex64, name
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-7,
                                       err_msg=name)
    # real inputs stay real (nan outside the real domain, as NumPy)
    x = np.array([0.5, 2.0, -3.0])
    for name in FUNCS:
        got = getattr(znp, name)(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(np.asarray(got), _np(name, x), rtol=4e-16)


def test_sign_is_z_over_abs_z():
    z = np.array([3 - 4j, 0j, -0.0 - 0j, 1e-300 + 1e-300j, 1e308 + 1e308j, complex(_INF, 2.0),
                  1e-320 + 1e-320j])
    got = znp.sign(z)
    np.testing.assert_allclose(np.asarray(got)[:6], [0.6 - 0.8j, 0, 0, np.sqrt(0.5) * (1 + 1j),
                                                     np.sqrt(0.5) * (1 + 1j), 1], rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(zx.jit(znp.sign)(z)), np.sign(z))
    # not differentiable: zero derivative, as JAX (jax.grad(real(sign(z) * z)) = 0.6-0.8j)
    g = zx.grad(lambda z: znp.real(znp.sign(z) * z))(3 - 4j)
    np.testing.assert_allclose(complex(g), 0.6 - 0.8j, rtol=1e-15)


def test_vmap_matches_stacking():
    zs = np.stack([Z, Z * 0.5 - 0.2j])
    f = lambda z: [getattr(znp, name)(z) for name in ALL]
    got = zx.vmap(f)(zs)
    for k, name in enumerate(ALL):
        want = np.stack([_np(name, z) for z in zs])
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-15, err_msg=name)


@pytest.mark.parametrize("name", FUNCS)
def test_holomorphic_derivatives_as_jax(name):
    f = getattr(znp, name)
    g = zx.grad(f, holomorphic=True)
    for z, want in zip(Z, JAX_DERIV[name]):
        np.testing.assert_allclose(complex(g(z)), want, rtol=1e-13)
        np.testing.assert_allclose(complex(g(z)), DERIV[name](z), rtol=1e-13)
    # forward mode, and under jit and vmap
    t = 0.3 - 0.8j
    _, tan = zx.jvp(f, (Z,), (np.full_like(Z, t),))
    np.testing.assert_allclose(np.asarray(tan), DERIV[name](Z) * t, rtol=1e-13)
    got = zx.jit(zx.vmap(g))(Z)
    np.testing.assert_allclose(np.asarray(got), JAX_DERIV[name], rtol=1e-13)


def test_second_derivatives():
    z = Z[1]
    d2 = zx.grad(zx.grad(znp.arcsin, holomorphic=True), holomorphic=True)
    np.testing.assert_allclose(complex(d2(z)), z * (1 - z * z) ** -1.5, rtol=1e-12)
    d2 = zx.grad(zx.grad(znp.arccosh, holomorphic=True), holomorphic=True)
    want = -z / (np.sqrt(z - 1) * np.sqrt(z + 1)) ** 3
    np.testing.assert_allclose(complex(d2(z)), want, rtol=1e-12)
    d2 = zx.grad(zx.grad(znp.log2, holomorphic=True), holomorphic=True)
    np.testing.assert_allclose(complex(d2(z)), -1 / (z * z * np.log(2)), rtol=1e-12)


def _loss1(z):
    return znp.abs(znp.arcsin(z) * znp.arccosh(z) + znp.arctanh(z)) ** 2


def _loss2(z):
    return (znp.real(znp.arccos(z) + znp.arcsinh(z) * znp.log2(z))
            + znp.imag(znp.arctan(z) * znp.exp2(z) + znp.log10(z)))


def _loss3(z):
    return znp.abs(znp.arccosh(z) - znp.sign(z) * znp.log10(z))


# jax.grad of each loss at the point beside it (jax 0.10.2, x64); at -1.2+0.4j, the
# losses with arccosh are JAX's grad with arccosh written log(z + sqrt(z+1) sqrt(z-1))
# (same values; jnp.arccosh's derivative has the wrong sign there, see JAX_DERIV)
JAX_GRADS = [
    (_loss1, 0.3 + 0.7j, 1.8113409998818237 - 5.891015152638419j),
    (_loss1, -1.2 + 0.4j, -28.657542579886947 + 8.80742294698397j),
    (_loss2, 0.3 + 0.7j, 0.8428178142485132 - 0.22541469295815464j),
    (_loss2, -1.2 + 0.4j, 0.29006825652645607 + 3.9438598873384016j),
    (_loss3, 0.3 + 0.7j, -0.9023704972610411 - 0.24102433414698904j),
    (_loss3, -1.2 + 0.4j, -0.9349063937920484 + 0.8906044243668607j),
]


@pytest.mark.parametrize("k", range(len(JAX_GRADS)))
def test_real_loss_gradients_as_jax(k):
    f, z, want = JAX_GRADS[k]
    np.testing.assert_allclose(complex(zx.grad(f)(z)), want, rtol=1e-12)
    np.testing.assert_allclose(complex(zx.jit(zx.grad(f))(z)), want, rtol=1e-12)


def test_real_losses_check_grads_order_2():
    # as functions of the real and imaginary parts: finite differences probe both
    # directions of each complex input
    x, y = np.array([0.3, -1.2]), np.array([0.7, 0.4])
    for loss in (_loss1, _loss2):
        check_grads(lambda a, b, f=loss: znp.sum(f(zx.lax.complex(a, b))), (x, y), order=2,
                    modes=("fwd", "rev"))


def test_functions_numpy_refuses_for_complex_still_refuse():
    with pytest.raises(errors.ZeraxTypeError, match="cbrt"):
        znp.cbrt(Z)
    with pytest.raises(errors.ZeraxTypeError, match="hypot"):
        znp.hypot(Z, Z)


# --------------------------------------------------------------------------- linalg.norm

V = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.5j])
A = np.array([[0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.5j], [0.5 - 0.1j, 1.1 + 0.9j, -0.4 - 0.6j]])
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, -1, 0.5, -2]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"]


def test_norm_of_complex_values_as_numpy():
    v = np.append(V, 0j)
    for o in VECTOR_ORDS:
        with np.errstate(divide="ignore"):
            want = np.linalg.norm(v, o)
        for got in (znp.linalg.norm(v, o), zx.jit(lambda v, o=o: znp.linalg.norm(v, o))(v)):
            assert got.dtype == np.float64
            np.testing.assert_allclose(float(got), want, rtol=1e-14, err_msg=str(o))
    stack = np.stack([A, 2j * A, A.conj()])
    for o in MATRIX_ORDS:
        want = np.linalg.norm(stack, o, axis=(1, 2))
        got = znp.linalg.norm(stack, o, axis=(1, 2))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, err_msg=str(o))
        np.testing.assert_allclose(float(znp.linalg.norm(A.T, o)), np.linalg.norm(A.T, o),
                                   rtol=1e-13, err_msg=str(o))
    c64 = A.astype(np.complex64)
    assert znp.linalg.norm(c64).dtype == np.float32
    assert znp.linalg.norm(c64, 2).dtype == np.float32
    np.testing.assert_allclose(np.asarray(znp.linalg.vector_norm(A, axis=1, ord=3)),
                               np.linalg.vector_norm(A, axis=1, ord=3), rtol=1e-14)
    np.testing.assert_allclose(float(znp.linalg.matrix_norm(A, ord="nuc")),
                               np.linalg.matrix_norm(A, ord="nuc"), rtol=1e-13)
    got = zx.vmap(lambda m: znp.linalg.norm(m, 2))(stack)
    np.testing.assert_allclose(np.asarray(got), np.linalg.norm(stack, 2, axis=(1, 2)), rtol=1e-13)


# jax.grad(lambda x: jnp.linalg.norm(x, ord)) at V and A (jax 0.10.2, x64)
JAX_NORM_GRADS = [
    (V, None, [0.10332548854774358 - 0.2410928066114017j, -0.4133019541909743 - 0.13776731806365813j,
               0.6888365903182906 + 0.516627442738718j]),
    (V, 1, [0.3939192985791677 - 0.9191450300180579j, -0.9486832980505138 - 0.31622776601683794j,
            0.8 + 0.6j]),
    (V, np.inf, [0j, 0j, 0.8 + 0.6j]),
    (V, 3, [0.0331538303031479 - 0.07735893737401175j, -0.22026205972115062 - 0.07342068657371688j,
            0.7255518654571542 + 0.5441638990928656j]),
    (A, None, [[0.08952232990266806 - 0.2088854364395588j, -0.35808931961067225 - 0.11936310653689075j,
                0.5968155326844538 + 0.4476116495133403j],
               [0.14920388317111344 + 0.029840776634222688j, 0.32824854297644956 - 0.2685669897080042j,
                -0.11936310653689075 + 0.17904465980533613j]]),
    (A, 1, [[0j, 0j, 0.8 + 0.6j], [0j, 0j, -0.5547001962252291 + 0.8320502943378437j]]),
    (A, np.inf, [[0.3939192985791677 - 0.9191450300180579j, -0.9486832980505138 - 0.31622776601683794j,
                  0.8 + 0.6j], [0j, 0j, 0j]]),
    (A, 2, [[0.07388263138383169 - 0.2375609176955567j, -0.43638341124608837 - 0.2105412426634777j,
             0.5805124249505723 + 0.4061114720340526j],
            [0.10908983276150647 + 0.06091883323227079j, 0.14867427093688446 - 0.19263906412812165j,
             -0.2597143447508804 + 0.2432072837319376j]]),
    (A, -2, [[0.06589943282428938 + 0.06689531915709854j, 0.21333324803200526 + 0.29147375635050965j,
              0.14148980593293997 + 0.2052358592915437j],
             [0.15739884075864394 - 0.10091662929653529j, 0.6555003657888993 - 0.2959228370929091j,
              0.45797496516036285 - 0.19136992353135068j]]),
    (A, "nuc", [[0.1397820642081211 - 0.1706655985384582j, -0.2230501632140831 + 0.08093251368703197j,
                 0.7220022308835123 + 0.6113473313255963j],
                [0.2664886735201504 - 0.039997796064264485j, 0.8041746367257837 - 0.48856190122103077j,
                 0.19826062040948245 + 0.051837360200586914j]]),
]


@pytest.mark.parametrize("k", range(len(JAX_NORM_GRADS)))
def test_norm_gradients_as_jax(k):
    x, o, want = JAX_NORM_GRADS[k]
    f = lambda x: znp.linalg.norm(x, o)
    np.testing.assert_allclose(np.asarray(zx.grad(f)(x)), want, rtol=1e-12, atol=1e-15)
    if k in (0, 7):
        np.testing.assert_allclose(np.asarray(zx.jit(zx.grad(f))(x)), want, rtol=1e-12,
                                   atol=1e-15)


def test_norm_check_grads():
    x, y = A.real.copy(), A.imag.copy()
    for o in (None, 1, np.inf, 2, -2, "nuc"):
        check_grads(lambda a, b, o=o: znp.linalg.norm(zx.lax.complex(a, b), o), (x, y),
                    order=2, modes=("fwd", "rev"))
    check_grads(lambda a, b: znp.linalg.norm(zx.lax.complex(a, b), 3), (V.real.copy(),
                V.imag.copy()), order=2, modes=("fwd", "rev"))
