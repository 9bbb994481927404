"""Tests for zerax._src.base.special: erf, erfc, lgamma, digamma, polygamma, erf_inv.

References are math.*, identities (recurrence, finite differences of lgamma / lower-order
polygamma, round trips) and a few high-precision values computed offline with mpmath.
"""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zerax._src.base import special

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

EULER_GAMMA = 0.5772156649015329
ZETA3 = 1.2020569031595942


def finite_lists(lo, hi, min_size=1, max_size=20):
    return st.lists(
        st.floats(lo, hi, allow_nan=False, allow_infinity=False),
        min_size=min_size,
        max_size=max_size,
    )


def away_from_nonpositive_integers(x, gap=1e-3):
    return x > gap or abs(x - round(x)) > gap


def ulp_diff(a, b):
    """Elementwise distance in units in the last place (float64)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return np.abs(a - b) / np.spacing(np.maximum(np.abs(a), np.abs(b)))


# ---------------------------------------------------------------------------------------------
# erf / erfc / lgamma: thin wrappers over math.*
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(finite_lists(-30.0, 30.0))
def test_erf_erfc_match_math(xs):
    x = np.array(xs)
    got_erf = special.erf(x)
    got_erfc = special.erfc(x)
    want_erf = np.array([math.erf(v) for v in xs])
    want_erfc = np.array([math.erfc(v) for v in xs])
    assert got_erf.dtype == np.float64 and got_erf.shape == x.shape
    assert np.all((ulp_diff(got_erf, want_erf) <= 1) | (got_erf == want_erf))
    assert np.all((ulp_diff(got_erfc, want_erfc) <= 1) | (got_erfc == want_erfc))


# (x, log|Gamma(x)|) from mpmath at 40 digits, including points near the zeros at 1 and 2.
LGAMMA_REFERENCE = [
    (0.9, 0.06637623973474295),
    (1.1, -0.049872441259839764),
    (2.2, 0.09694746679063887),
    (2.5, 0.2846828704729192),
    (-2.5, -0.056243716497674054),
    (-0.3, 1.4648400508576025),
    (150.7, 603.5162155733925),
    (1e-05, 11.512919692895826),
    (300000.0, 3483455.9392614355),
]


@SETTINGS
@given(finite_lists(-170.0, 1e6))
def test_lgamma_matches_math(xs):
    # Compiled code calls the C library's lgamma; CPython's math.lgamma is its own (less accurate
    # near the zeros of lgamma) implementation, so they agree to a few ulps of max(1, |lgamma|).
    x = np.array(xs)
    got = special.lgamma(x)
    want = np.array([math.inf if v <= 0 and v == int(v) else math.lgamma(v) for v in xs])
    assert got.shape == x.shape
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite])
    got, want = got[finite], want[finite]
    assert np.all(np.abs(got - want) <= 4e-15 * np.maximum(1.0, np.abs(want)))


def test_lgamma_reference_values():
    x = np.array([v for v, _ in LGAMMA_REFERENCE])
    want = np.array([w for _, w in LGAMMA_REFERENCE])
    assert np.all(ulp_diff(special.lgamma(x), want) <= 2)


def test_special_values_erf_lgamma():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    np.testing.assert_array_equal(special.erf(x), [1.0, -1.0, np.nan, 0.0, -0.0])
    np.testing.assert_array_equal(special.erfc(x), [0.0, 2.0, np.nan, 1.0, 1.0])
    lg = special.lgamma(np.array([0.0, -0.0, -1.0, -7.0, -1e300, np.inf, -np.inf, np.nan, 1e306]))
    np.testing.assert_array_equal(lg[:-1], [np.inf] * 7 + [np.nan])
    assert lg[-1] == np.inf
    np.testing.assert_allclose(
        special.lgamma(np.array([0.5, -0.5])),
        [0.5 * math.log(math.pi), math.log(2 * math.sqrt(math.pi))],
        rtol=1e-15,
    )


# ---------------------------------------------------------------------------------------------
# digamma
# ---------------------------------------------------------------------------------------------

# (x, digamma(x)) from mpmath at 40 digits.
DIGAMMA_REFERENCE = [
    (0.25, -4.2274535333762655),
    (1.5, 0.03648997397857652),
    (3.7, 1.1671535393615113),
    (25.0, 3.198742512851974),
    (100.0, 4.600161852738087),
    (-0.5, 0.03648997397857652),
    (-2.3, 3.3173231575618227),
    (-7.75, -1.0307688328309315),
    (-19.1, 12.644465969111419),
    (1e-08, -100000000.57721564),
    # the positive zero (rounded to double): full relative accuracy there
    (1.4616321449683622, -9.241265521729427e-17),
]


def test_digamma_known_values():
    assert float(special.digamma(np.array(1.0))) == pytest.approx(-EULER_GAMMA, rel=1e-15)
    assert float(special.digamma(np.array(0.5))) == pytest.approx(-1.9635100260214235, rel=1e-15)
    x = np.array([v for v, _ in DIGAMMA_REFERENCE])
    want = np.array([w for _, w in DIGAMMA_REFERENCE])
    np.testing.assert_allclose(special.digamma(x), want, rtol=1e-14, atol=0)


def test_digamma_special_values():
    x = np.array([0.0, -0.0, -1.0, -5.0, -1e300, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(
        special.digamma(x), [np.nan, np.nan, np.nan, np.nan, np.nan, np.inf, np.nan, np.nan]
    )


def fd_points(xs, min_gap=0.01):
    """x away from the poles, a central-difference step h and the distance d to the nearest pole."""
    x = np.array(xs)
    d = np.where(x < 0.5, np.abs(x - np.round(x)), 1.0)
    x = x[d >= min_gap]
    d = d[d >= min_gap]
    h = np.where(x < 0.5, 1e-4 * d, 1e-5 * np.maximum(1.0, x))
    return x, h, d


@SETTINGS
@given(finite_lists(-20.0, 100.0))
def test_digamma_matches_lgamma_finite_difference(xs):
    x, h, _ = fd_points(xs)
    fd = (special.lgamma(x + h) - special.lgamma(x - h)) / (2 * h)
    got = special.digamma(x)
    assert np.all(np.abs(got - fd) <= 1e-6 * (np.abs(got) + 1.0))


@SETTINGS
@given(finite_lists(-20.0, 100.0))
def test_digamma_recurrence(xs):
    xs = [
        v for v in xs if away_from_nonpositive_integers(v) and away_from_nonpositive_integers(v + 1)
    ]
    if not xs:
        return
    x = np.array(xs)
    xp1 = x + 1.0  # may round; the effect is psi'(x + 1) * (xp1 - x - 1)
    lhs = special.digamma(xp1)
    psi = special.digamma(x)
    rhs = psi + 1.0 / x
    rounding = np.abs(special.polygamma(1, xp1)) * np.abs((xp1 - x) - 1.0)
    scale = np.abs(lhs) + np.abs(psi) + np.abs(1.0 / x) + np.log(2.0 + np.abs(x))
    assert np.all(np.abs(lhs - rhs) <= 1e-14 * scale + 2 * rounding)


def test_digamma_near_positive_root_is_relatively_accurate():
    # psi(root + h) = psi'(root) h + psi''(root) h^2 / 2 + ...: relative accuracy near the root.
    root = 1.4616321449683622
    h = np.array([1e-3, -1e-5, 1e-9, -3e-13])
    got = special.digamma(root + h)
    h = (root + h) - root  # the representable offsets
    p1, p2, p3 = (float(special.polygamma(m, np.array(root))) for m in (1, 2, 3))
    np.testing.assert_allclose(
        got, -9.241265521729427e-17 + p1 * h + p2 / 2 * h**2 + p3 / 6 * h**3, rtol=1e-9
    )
    for h in (0.1, -0.12, 0.13, -0.2):  # both sides of the series' range
        assert np.sign(special.digamma(np.array(root + h))) == np.sign(h)


# ---------------------------------------------------------------------------------------------
# polygamma
# ---------------------------------------------------------------------------------------------

# (m, x, polygamma(m, x)) from mpmath at 40 digits.
POLYGAMMA_REFERENCE = [
    (1, 0.3, 12.245364546107732),
    (1, -2.5, 9.539246644989124),
    (1, 7.0, 0.15354517795933756),
    (2, 0.5, -16.82879664423432),
    (2, -3.25, 123.95521103942203),
    (2, 40.0, -0.0006408202718352986),
    (3, 1.7, 0.8895620066243164),
    (3, -11.6, 283.6011749640522),
    (5, 2.0, 2.081167438133897),
    (5, -0.4, 31876.50690776846),
    (8, 9.5, -0.00011290928874974375),
    (1, -150.3, 15.07278242736691),  # reflection branch
    (3, -99.9, 60014.25188892159),  # reflection branch
]


def test_polygamma_known_values():
    assert float(special.polygamma(1, np.array(1.0))) == pytest.approx(math.pi**2 / 6, rel=1e-15)
    assert float(special.polygamma(2, np.array(1.0))) == pytest.approx(
        -2.4041138063191885, rel=1e-15
    )
    assert float(special.polygamma(2, np.array(1.0))) == pytest.approx(-2 * ZETA3, rel=1e-15)
    assert float(special.polygamma(3, np.array(0.5))) == pytest.approx(math.pi**4, rel=1e-14)
    for m, x, want in POLYGAMMA_REFERENCE:
        assert float(special.polygamma(m, np.array(x))) == pytest.approx(want, rel=1e-13), (m, x)


def test_polygamma_zero_is_digamma():
    x = np.array(
        [
            -19.3,
            -2.5,
            -0.504,
            0.001,
            0.7,
            1.46,
            1.5,
            9.99,
            10.0,
            55.5,
            1e10,
            0.0,
            -3.0,
            np.inf,
            np.nan,
        ]
    )
    np.testing.assert_array_equal(special.polygamma(0, x), special.digamma(x))


def test_polygamma_special_values():
    x = np.array([0.0, -1.0, -4.0, -1e300, -np.inf, np.nan, np.inf])
    for m in (1, 2, 3):
        got = special.polygamma(m, x)
        assert np.all(np.isnan(got[:6]))
        assert got[6] == 0.0
    assert special.polygamma(1, np.array(1e-200)) == np.inf
    with pytest.raises(ValueError):
        special.polygamma(-1, np.array(1.0))
    with pytest.raises(TypeError):
        special.polygamma(1.0, np.array(1.0))


@SETTINGS
@given(st.integers(1, 5), finite_lists(-20.0, 100.0))
def test_polygamma_matches_finite_difference_of_lower_order(m, xs):
    x, h, d = fd_points(xs)
    fd = (special.polygamma(m - 1, x + h) - special.polygamma(m - 1, x - h)) / (2 * h)
    got = special.polygamma(m, x)
    lower = np.abs(special.polygamma(m - 1, x))
    assert np.all(np.abs(got - fd) <= 1e-6 * (np.abs(got) + lower / d))


@SETTINGS
@given(st.integers(1, 6), finite_lists(-20.0, 100.0))
def test_polygamma_recurrence(m, xs):
    # psi^(m)(x + 1) = psi^(m)(x) + (-1)^m m! / x^(m+1)
    xs = [
        v
        for v in xs
        if away_from_nonpositive_integers(v, 0.05) and away_from_nonpositive_integers(v + 1, 0.05)
    ]
    if not xs:
        return
    x = np.array(xs)
    xp1 = x + 1.0
    term = (-1) ** m * math.factorial(m) / x ** (m + 1)
    lhs = special.polygamma(m, xp1)
    at_x = special.polygamma(m, x)
    rhs = at_x + term
    rounding = np.abs(special.polygamma(m + 1, xp1)) * np.abs((xp1 - x) - 1.0)
    # for x < 0 the series for psi^(m) has terms up to m! / dist(x, Z)^(m+1) that may cancel
    dist = np.where(x < 0, np.abs(x - np.round(x)), 1.0)
    near = np.where(x < 0, math.factorial(m) / dist ** (m + 1), 0.0)
    scale = np.abs(lhs) + np.abs(at_x) + np.abs(term) + near
    assert np.all(np.abs(lhs - rhs) <= 1e-13 * scale + 2 * rounding)


# ---------------------------------------------------------------------------------------------
# erf_inv
# ---------------------------------------------------------------------------------------------

ERF_INV_REFERENCE = [
    (0.5, 0.4769362762044699),
    (-0.9, -1.1630871536766743),
    (0.999, 2.3267537655135246),
    (1e-10, 8.862269254527581e-11),
    (0.9999999999999999, 5.8635847487551676),
    (0.3, 0.2724627147267543),
]


def test_erf_inv_known_values():
    x = np.array([v for v, _ in ERF_INV_REFERENCE])
    want = np.array([w for _, w in ERF_INV_REFERENCE])
    np.testing.assert_allclose(special.erf_inv(x), want, rtol=1e-15)


def test_erf_inv_special_values():
    got = special.erf_inv(np.array([1.0, -1.0, 1.5, -1.0000001, np.nan, np.inf, 0.0, -0.0]))
    np.testing.assert_array_equal(got, [np.inf, -np.inf, np.nan, np.nan, np.nan, np.nan, 0.0, -0.0])
    assert math.copysign(1.0, got[-1]) == -1.0


@SETTINGS
@given(
    st.lists(
        st.floats(-1.0, 1.0, exclude_min=True, exclude_max=True, allow_subnormal=False),
        min_size=1,
        max_size=20,
    )
)
def test_erf_inv_round_trip(ys):
    y = np.array(ys)
    x = special.erf_inv(y)
    assert np.all(np.isfinite(x))
    assert np.array_equal(np.sign(x), np.sign(y))
    back = special.erf(x)
    assert np.all(np.abs(back - y) <= 1e-15 * np.abs(y) + 2.3e-16)


def test_erf_inv_tails_and_tiny():
    q = np.logspace(-16, -1, 40)
    y = np.concatenate([1.0 - q, -(1.0 - q), np.logspace(-300, -2, 30)])
    x = special.erf_inv(y)
    # in the tails compare complements (erfc keeps full relative accuracy)
    tail = np.abs(y) > 0.5
    np.testing.assert_allclose(special.erfc(np.abs(x[tail])), 1.0 - np.abs(y[tail]), rtol=1e-14)
    np.testing.assert_allclose(special.erf(x[~tail]), y[~tail], rtol=1e-15)


# ---------------------------------------------------------------------------------------------
# dtypes, shapes, scalar kernels
# ---------------------------------------------------------------------------------------------

UNARY = [special.erf, special.erfc, special.lgamma, special.digamma, special.erf_inv]


def _sample(fn):
    return (
        np.array([[0.1, 0.5], [-0.7, 0.9]])
        if fn is special.erf_inv
        else np.array([[0.3, 1.7], [-2.5, 6.0]])
    )


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_float32_preserved(fn):
    x64 = _sample(fn)
    x32 = x64.astype(np.float32)
    out = fn(x32)
    assert out.dtype == np.float32 and out.shape == x32.shape
    np.testing.assert_allclose(out, fn(x32.astype(np.float64)).astype(np.float32), rtol=0, atol=0)
    np.testing.assert_allclose(out, fn(x64), rtol=3e-6)


@pytest.mark.parametrize("m", [0, 1, 3])
def test_polygamma_float32_preserved(m):
    x = np.array([0.3, 1.7, -2.5, 6.0], dtype=np.float32)
    out = special.polygamma(m, x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(
        out, special.polygamma(m, x.astype(np.float64)).astype(np.float32)
    )


@pytest.mark.parametrize(
    "fn", UNARY + [lambda x: special.polygamma(2, x)], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shapes(fn, dtype):
    zero_d = fn(np.array(0.25, dtype=dtype))
    assert type(zero_d) is np.ndarray and zero_d.shape == () and zero_d.dtype == dtype
    empty = fn(np.zeros((0, 3), dtype=dtype))
    assert empty.shape == (0, 3) and empty.dtype == dtype
    x = np.linspace(0.05, 0.95, 24, dtype=dtype).reshape(2, 3, 4)
    out = fn(x)
    assert out.shape == (2, 3, 4) and out.dtype == dtype
    np.testing.assert_array_equal(out.ravel(), fn(x.ravel()))
    # non-contiguous input
    np.testing.assert_array_equal(fn(x[:, ::2, 1:]), out[:, ::2, 1:])


def test_scalar_kernels_run_in_plain_python_and_agree():
    xs = [-7.25, -0.3, 0.01, 0.75, 1.46, 2.5, 12.0, 150.0]
    x = np.array(xs)
    for name, fn in [
        ("erf", special.erf_scalar),
        ("erfc", special.erfc_scalar),
        ("digamma", special.digamma_scalar),
    ]:
        got = getattr(special, name)(x)
        want = np.array([fn(v) for v in xs])
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=0, err_msg=name)
    # plain Python uses CPython's math.lgamma, compiled code the C library's: a few ulps apart
    np.testing.assert_allclose(
        special.lgamma(x), [special.lgamma_scalar(v) for v in xs], rtol=4e-15, atol=4e-15
    )
    for m in (0, 1, 4):
        np.testing.assert_allclose(
            special.polygamma(m, x), [special.polygamma_scalar(m, v) for v in xs], rtol=4e-16
        )
    ys = [-0.999, -0.2, 1e-20, 0.6, 0.9999999]
    np.testing.assert_allclose(
        special.erf_inv(np.array(ys)), [special.erf_inv_scalar(v) for v in ys], rtol=4e-16
    )
    assert special.lgamma_scalar(-3.0) == math.inf
    assert math.isnan(special.digamma_scalar(-3.0))
    assert special.polygamma_scalar(1, 1e-300) == math.inf  # no OverflowError in plain Python


def test_scalar_kernels_compile_with_njit():
    numba = pytest.importorskip("numba")

    # The scalar kernels must be njit-compilable as-is (a Numba backend calls them).
    numba_poly = numba.njit(special.polygamma_scalar)
    numba_psi = numba.njit(special.digamma_scalar)

    @numba.njit
    def use_compiled(x):
        return numba_poly(2, x) + numba_psi(x)

    want = special.polygamma_scalar(2, 3.3) + special.digamma_scalar(3.3)
    assert use_compiled(3.3) == pytest.approx(want, rel=1e-15)


def test_import_is_lazy_and_does_not_use_scipy():
    # numba itself may import scipy when it is installed; zerax's module never does.
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from zerax._src.base import special\n"
        "assert not special._UFUNCS, 'kernels compiled at import time'\n"
        "special.digamma(np.array([1.0]))\n"
        "assert set(special._UFUNCS) == {'digamma'}\n"
        "import zerax._src.base.special as mod\n"
        "assert 'scipy' not in open(mod.__file__).read()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=None, timeout=120)
