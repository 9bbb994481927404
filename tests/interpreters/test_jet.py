"""Taylor mode as a user sees it: ``zerax.jet`` with ``jax.experimental.jet``'s
conventions (values recorded from JAX 0.10.2, held here as literals), closed forms to
high order, control flow against the same Python loop unrolled, composition with jit,
vmap and grad, ``zerax.taylor.derivatives``, and clear errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax

from jet_helpers import assert_jet_matches_nested_jvp, jet_series


def _close(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol)


def _unit(K):
    return (1.0,) + (0.0,) * (K - 1)


# --------------------------------------------------------------------------- JAX's values
# Recorded with jax.experimental.jet.jet (jax 0.10.2, x64) on the same calls.

def test_tanh_sin_ten_derivatives_as_jax():
    y, ys = zx.jet(lambda x: znp.tanh(x) * znp.sin(x), (0.3,), (_unit(10),))
    _close(y, 0.08608876343474883)
    _close(ys, [0.5487430324999469, 1.5048726820921259, -3.0209102938482735,
                -6.578985896443813, 30.343845852691885, 31.9870982912633, -542.5723509956252,
                341.49878161841474, 14514.877446880615, -46180.632157806256])
    assert isinstance(ys, list) and all(isinstance(t, zx.Array) for t in ys)


def test_jax_docstring_example_sin_of_a_cube():
    h0, h1, h2 = 0.5 ** 3.0, 3.0 * 0.5 ** 2.0, 6.0 * 0.5
    y, (f1, f2) = zx.jet(znp.sin, (h0,), ((h1, h2),))
    _close([y, f1, f2], [0.12467473338522769, 0.7441482504219967, 2.9064634641587963])


def test_jet2_plain_taylor_coefficients():
    from zerax.experimental.jet import jet, jet2
    assert jet is zx.jet
    y, ys = jet2(znp.exp, (0.2,), ((1.0, 0.5, 0.25),))
    _close([y] + ys, [1.2214027581601699, 1.2214027581601699, 1.2214027581601699,
                      1.1196191949801557])


@pytest.mark.parametrize("name, fun, primals, series, want", [
    ("two_args", lambda x, y: x * znp.log(y) + znp.sqrt(x * y), (1.5, 2.0),
     ((0.5, -0.25, 0.125), (1.0, 0.3, -0.2)),
     (2.771771578408795, [1.818261426767005, 0.15025131752215573, -0.61881554036587])),
    ("vector", lambda x: znp.sum(znp.exp(x) * x), (np.array([0.1, 0.2, -0.3]),),
     ((np.array([1.0, 0.5, 0.25]), np.array([0.0, 0.1, 0.2])),),
     (0.1325521772350834, [2.0781728533986152, 3.3216252627690435])),
    ("logistic", zx.nn.sigmoid, (0.4,), (_unit(5),),
     (0.5986876601124521, [0.24026074574152914, -0.047421541628208566, -0.10609060992412518,
                           0.08930087784146787, 0.1727966674296516])),
    ("div_pow", lambda x: x ** 2.5 / (1 + x), (1.3,), ((1.0, 0.2, 0.0, 0.0),),
     (0.8377810732250189, [1.2468648079770346, 1.0241243651465792, 0.16929848367294822,
                           -0.022685848719824066])),
    ("erf_inv", zx.scipy.special.erfinv, (0.3,), (_unit(4),),
     (0.2724627147267544, [0.9545203588405493, 0.4964865260107424, 2.25583180238885,
                           7.138888610824466])),
    ("matmul", lambda w: znp.tanh(w @ np.array([1.0, -2.0])),
     (np.array([[0.1, 0.2], [0.3, -0.4]]),), ((np.ones((2, 2)), np.zeros((2, 2)),
                                               np.zeros((2, 2))),),
     ([-0.2913126124515909, 0.8004990217606296],
      [[-0.9151369618266292, -0.35920131616027506], [0.5331818782014536, -0.5750806044028609],
       [1.3643061061011246, -0.6626517514534573]])),
    ("max_reduce", lambda x: znp.max(znp.sin(x)), (np.array([0.1, 1.2, 0.5]),),
     ((np.ones(3), np.zeros(3)),), (0.9320390859672263, [0.3623577544766736,
                                                          -0.9320390859672252])),
    ("atan2", znp.arctan2, (0.5, 1.5), ((1.0, 0.1, 0.0), (0.0, 0.2, -0.1)),
     (0.3217505543966422, [0.5999999999999999, -0.21999999999999964, -0.5320000000000005])),
])
def test_values_recorded_from_jax(name, fun, primals, series, want):
    y, ys = zx.jet(fun, primals, series)
    _close(y, want[0])
    _close(ys, want[1])


def test_tuple_output_structure_as_jax():
    y, ys = zx.jet(lambda x: (znp.sin(x), znp.cos(x) * 2), (0.7,), (_unit(3),))
    assert isinstance(y, tuple) and isinstance(ys, tuple) and isinstance(ys[0], list)
    _close(y, [0.644217687237691, 1.529684374568977])
    _close(ys[0], [0.7648421872844885, -0.6442176872376902, -0.7648421872844889])
    _close(ys[1], [-1.288435374475382, -1.5296843745689752, 1.2884353744753827])


def test_pytree_inputs_and_outputs():
    def f(p):
        return {"a": znp.sin(p["w"]) * p["b"], "b": p["b"] ** 2}
    p = {"w": np.array([0.3, 0.4]), "b": 2.0}
    t1 = {"w": np.array([1.0, 0.0]), "b": 0.5}
    t0 = {"w": np.zeros(2), "b": 0.0}
    y, ys = zx.jet(f, (p,), ((t1, t0),))
    assert set(y) == {"a", "b"} and len(ys["a"]) == 2
    want = jet_series(lambda w, b: znp.sin(w) * b, [p["w"], np.float64(2.0)],
                      [[t1["w"], t0["w"]], [np.float64(0.5), np.float64(0.0)]])
    _close([y["a"]] + ys["a"], want)
    _close([y["b"]] + ys["b"], [4.0, 2.0, 0.5])


# --------------------------------------------------------------------------- closed forms

@settings(max_examples=10)
@given(st.floats(-1.5, 1.5), st.integers(1, 20))
def test_closed_forms(x, K):
    fact = [math.factorial(k) for k in range(K + 1)]
    _close(jet_series(znp.exp, [x], [_unit(K)]), [math.exp(x)] * (K + 1), rtol=1e-9)
    sin_d = [math.sin(x), math.cos(x), -math.sin(x), -math.cos(x)]
    _close(jet_series(znp.sin, [x], [_unit(K)]), [sin_d[k % 4] for k in range(K + 1)],
           rtol=1e-9, atol=1e-9)
    y = 0.5 * x   # 1/(1-y): k! / (1-y)^(k+1)
    _close(jet_series(lambda v: 1.0 / (1.0 - v), [y], [_unit(K)]),
           [fact[k] / (1.0 - y) ** (k + 1) for k in range(K + 1)], rtol=1e-9)
    # log(1 + v): (-1)^(k-1) (k-1)! / (1+v)^k
    want = [math.log1p(y)] + [(-1) ** (k - 1) * fact[k - 1] / (1 + y) ** k
                              for k in range(1, K + 1)]
    _close(jet_series(znp.log1p, [y], [_unit(K)]), want, rtol=1e-9)


def test_a_general_input_path_is_composition():
    # the input path x(t) = x0 + x1 t + x2 t^2 / 2: jet(f)(path) == Faa di Bruno by hand
    x0, x1, x2 = 0.4, 1.5, -0.7
    y, (f1, f2) = zx.jet(znp.exp, (x0,), ((x1, x2),))
    e = math.exp(x0)
    _close([y, f1, f2], [e, e * x1, e * (x1 * x1 + x2)])


@settings(max_examples=6, deadline=None)
@given(st.floats(-1.0, 1.0), st.integers(1, 8))
def test_mlp_against_nested_jvp(x, K):
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(1, 8)), rng.normal(size=(8, 1))

    def mlp(v):
        return znp.sum(znp.tanh(znp.tanh(v * w1) @ w2) * zx.nn.softplus(v))
    assert_jet_matches_nested_jvp(mlp, [np.float64(x)], [list(_unit(K))], rtol=1e-6)


# --------------------------------------------------------------------------- control flow
# Each against the same computation as a Python loop (unrolled into plain operations).

def _step(c, x):
    return c * znp.cos(x) + znp.sin(c) * x, c * x


@settings(max_examples=5, deadline=None)
@given(st.floats(-1, 1), st.integers(1, 6), st.booleans())
def test_scan_equals_unrolled_loop(c0, K, reverse):
    xs = np.linspace(-0.5, 0.8, 4)

    def scanned(c, v):
        carry, ys = lax.scan(_step, c, v, reverse=reverse)
        return carry + znp.sum(ys)

    def unrolled(c, v):
        ys = []
        for i in (range(3, -1, -1) if reverse else range(4)):
            c, y = _step(c, v[i])
            ys.append(y)
        return c + sum(ys)
    series = ([0.5] + [0.1] * (K - 1), [np.full(4, 0.3)] + [np.full(4, -0.2)] * (K - 1))
    _close(jet_series(scanned, [c0, xs], series), jet_series(unrolled, [c0, xs], series),
           rtol=1e-9)


@settings(max_examples=5, deadline=None)
@given(st.floats(-1, 1), st.integers(1, 6))
def test_fori_and_while_equal_unrolled_loop(c0, K):
    body = lambda i, v: v * znp.tanh(v) + 0.1 * i  # noqa: E731

    def unrolled(v):
        for i in range(5):
            v = body(i, v)
        return v
    series = [_unit(K)]
    want = jet_series(unrolled, [c0], series)
    _close(jet_series(lambda v: lax.fori_loop(0, 5, body, v), [c0], series), want, rtol=1e-9)

    def w(v):
        return lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, body(s[0], s[1])),
                              (0, v))[1]
    _close(jet_series(w, [c0], series), want, rtol=1e-9)


@pytest.mark.parametrize("x", [-0.4, 0.6])
def test_cond_and_switch_equal_python_branches(x):
    def py(v):
        return znp.sin(v) * v if x > 0 else znp.exp(v)
    want = jet_series(py, [x], [_unit(5)])
    got = jet_series(lambda v: lax.cond(v > 0, lambda u: znp.sin(u) * u, znp.exp, v), [x],
                     [_unit(5)])
    _close(got, want)
    sw = jet_series(lambda v: lax.switch((v > 0).astype(int), [znp.exp, lambda u: znp.sin(u) * u],
                                         v), [x], [_unit(5)])
    _close(sw, want)


def test_ode_sensitivities_through_a_long_scan():
    # 10 derivatives of the end state of 1,000 explicit Euler steps of y' = -y^3, with
    # respect to the initial state: the carry's series advances with the loop
    h = 1e-3

    def solve(y0):
        return lax.scan(lambda y, _: (y - h * y ** 3, None), y0, None, length=1000)[0]

    def unrolled(y0):   # the same 1,000 steps written out, on plain values
        y = y0
        for _ in range(1000):
            y = y - h * y ** 3
        return y
    K = 10
    got = jet_series(zx.jit(solve), [0.8], [_unit(K)])
    _close(got, jet_series(unrolled, [0.8], [_unit(K)]), rtol=1e-8)
    # and the closed form of the exact flow is close (Euler's error is O(h))
    exact = lambda y0: y0 / np.sqrt(1 + 2 * y0 ** 2 * 1.0)  # noqa: E731
    assert abs(float(got[0]) - exact(0.8)) < 1e-3


def test_custom_jvp_follows_its_rule():
    # a custom rule that is not the function's derivative: jet follows the rule (as nested
    # jvp does), where JAX's jet ignores it
    @zx.custom_jvp
    def f(x):
        return znp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * znp.cos(x) * t
    assert_jet_matches_nested_jvp(f, [np.array([0.3, 1.0])], [[np.ones(2)] * 4])
    y, (d1, d2) = zx.jet(f, (0.3,), ((1.0, 0.0),))
    _close([d1, d2], [2 * math.cos(0.3), -2 * math.sin(0.3)])


def test_custom_vjp_goes_through_primal():
    @zx.custom_vjp
    def f(x):
        return znp.sin(x) * x

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * 0.0,))   # a bwd that ignores x
    series = [np.array([1.0, 0.5]), np.array([0.2, 0.1]), np.zeros(2)]
    plain = jet_series(lambda v: znp.sin(v) * v, [np.array([0.3, 0.9])], [series])
    _close(jet_series(f, [np.array([0.3, 0.9])], [series]), plain)
    _close(jet_series(zx.jit(f), [np.array([0.3, 0.9])], [series]), plain)


# --------------------------------------------------------------------------- composition

def _tanh_sin(x):
    return znp.tanh(x) * znp.sin(x)


@pytest.fixture(scope="module")
def jitted_vmapped():
    return zx.jit(zx.vmap(lambda x: znp.stack(zx.jet(_tanh_sin, (x,), (_unit(8),))[1])))


@settings(max_examples=4, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3))
def test_under_jit_and_vmap(jitted_vmapped, xs):
    xs = np.array(xs)
    eager = np.stack([np.asarray(znp.stack(zx.jet(_tanh_sin, (x,), (_unit(8),))[1]))
                      for x in xs])
    _close(zx.vmap(lambda x: znp.stack(zx.jet(_tanh_sin, (x,), (_unit(8),))[1]))(xs), eager)
    _close(jitted_vmapped(xs), eager, rtol=1e-9)


def test_grad_of_jet_and_jet_of_grad():
    d = zx.taylor.derivatives(_tanh_sin, order=5)
    higher = d(0.3)
    _close(zx.grad(lambda x: d(x)[4])(0.3), higher[5])
    _close(zx.jit(zx.grad(lambda x: d(x)[4]))(0.3), higher[5])
    # jet of grad: the series of f' is the shifted series of f
    y, ys = zx.jet(zx.grad(_tanh_sin), (0.3,), (_unit(4),))
    _close([y] + ys, higher[1:])
    # jvp inside jet, and jet inside jvp
    _, t = zx.jvp(lambda x: zx.jet(_tanh_sin, (x,), (_unit(3),))[1][2], (0.3,), (1.0,))
    _close(t, higher[4])


def test_jet_of_jet():
    inner = lambda x: zx.jet(_tanh_sin, (x,), (_unit(2),))[1][1]  # noqa: E731  (f'')
    y, ys = zx.jet(inner, (0.3,), (_unit(3),))
    higher = zx.taylor.derivatives(_tanh_sin, order=5)(0.3)
    _close([y] + ys, higher[2:])


def test_derivatives():
    d = zx.taylor.derivatives(znp.exp, 20)(0.5)
    assert len(d) == 21
    _close(d, [math.exp(0.5)] * 21)
    # directional, and through other arguments
    f = lambda x, a: znp.sum(znp.sin(x) * a)  # noqa: E731
    x, v = np.array([0.1, 0.2]), np.array([1.0, -1.0])
    got = zx.taylor.derivatives(f, 3, direction=v)(x, 2.0)
    want = jet_series(lambda u: f(u, 2.0), [x], [[v, np.zeros(2), np.zeros(2)]])
    _close(got, want)
    got_a = zx.taylor.derivatives(f, 2, argnums=1)(x, 2.0)
    _close(got_a, [float(f(x, 2.0)), float(np.sum(np.sin(x))), 0.0])
    assert [float(v) for v in zx.taylor.derivatives(znp.sin, 0)(0.5)] == [math.sin(0.5)]


# --------------------------------------------------------------------------- errors

def test_errors():
    with pytest.raises(errors.ZeraxValueError, match="inconsistent lengths"):
        zx.jet(lambda a, b: a * b, (1.0, 2.0), ((1.0, 0.0), (1.0,)))
    with pytest.raises(errors.ShapeError, match="shape"):
        zx.jet(znp.sin, (np.zeros(3),), ((np.zeros(2),),))
    with pytest.raises(errors.ZeraxTypeError, match="tuples or lists"):
        zx.jet(znp.sin, 1.0, ((1.0,),))
    with pytest.raises(errors.ZeraxValueError, match="one series"):
        zx.jet(znp.sin, (1.0,), ())
    with pytest.raises(errors.ZeraxTypeError, match="integer"):
        zx.jet(lambda i: i * 2, (3,), ((1,),))
    # a zero series for an integer input is accepted (it does not move)
    y, ys = zx.jet(lambda x, i: x * i, (2.0, 3), ((1.0,), (0,)))
    _close([y, ys[0]], [6.0, 3.0])
    with pytest.raises(errors.ZeraxValueError, match="direction"):
        zx.taylor.derivatives(znp.sin, 2)(np.zeros(3))
    with pytest.raises(errors.ZeraxValueError, match="order"):
        zx.taylor.derivatives(znp.sin, -1)
