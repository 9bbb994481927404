"""zerax.experimental.ode.odeint against closed forms, values recorded from JAX 0.10.2's
jax.experimental.ode.odeint (x64; the anchor at /tmp/anchors, same systems and
tolerances as here), finite differences, jit and vmap."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.experimental.ode import odeint
from zerax.test_util import check_grads

# Recorded from jax.experimental.ode.odeint with jax_enable_x64 (see the systems below).
ODE_REF = {
    'vdp': [[2.0, 0.0], [1.7265538248840742, -0.496767940569931], [1.228772525053854, -0.7952063647646962], [0.23455333869961023, -2.012602387155929], [-1.8492548890388711, -1.3014524815140371], [-1.885954707733372, 0.4082621747162594]],
    'vdp_mxstep': [[2.0, 0.0], [1.575957547600178, -0.16147358959319405], [-0.16120190385552752, 5.889516273646502], [-1.742558604246438, 10.473044145421218], [-2.2740929001304173, 3.133726081180026], [-6.152998392146184, -12.366571125630674]],
    'vdp_hmax': [[2.0, 0.0], [1.7265538625053924, -0.4967679917631396], [1.2287723217527107, -0.7952069685479267], [0.2345541184760109, -2.012602921975138], [-1.8492542546112194, -1.3014579394488641], [-1.8859554038182178, 0.40826188737180485]],
    'lotka_prey': [10.0, 2.8810932492002372, 0.6830336438776959, 0.556697539297843],
    'lotka_pred': [5.0, 6.067427752997989, 4.099104837500515, 3.460203822340172],
    'grad_y0': [17.856711488474694, 4.233151168711402],
    'grad_t': [6.466302359736162, -1.8435177786188384, -2.1215056573653217, -2.5012789237520026],
    'grad_mu': 3.348963652420112,
    'grad_lotka_a': 3.648394790071729,
    'grad_lotka_b': -20.646503115975456,
    'grad_lotka_c': -6.762236667281822,
    'grad_lotka_d': 40.11520291562321,
}


def vdp(y, t, mu):
    return znp.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


def lotka(s, t, p):
    x, y = s["prey"], s["pred"]
    return {"prey": p["a"] * x - p["b"] * x * y, "pred": -p["c"] * y + p["d"] * x * y}


P = {"a": 1.1, "b": 0.4, "c": 0.4, "d": 0.1}
TS = znp.linspace(0.0, 4.0, 6)
VDP0 = znp.array([2.0, 0.0])


# --------------------------------------------------------------------------- closed forms

def test_exponential_decay_closed_form():
    ts = znp.linspace(0.0, 3.0, 7)
    ys = odeint(lambda y, t, k: -k * y, znp.array([1.0, -2.0]), ts, 0.8)
    ref = np.exp(-0.8 * np.asarray(ts))[:, None] * np.array([1.0, -2.0])
    np.testing.assert_allclose(np.asarray(ys), ref, rtol=1e-7, atol=1e-12)
    assert ys.shape == (7, 2) and ys.dtype == np.float64


def test_harmonic_oscillator_tuple_state_closed_form():
    ts = znp.linspace(0.0, 4.0, 5)
    x, v = odeint(lambda y, t, w: (y[1], -w ** 2 * y[0]), (znp.array(1.0), znp.array(0.0)),
                  ts, 2.0)
    t = np.asarray(ts)
    np.testing.assert_allclose(np.asarray(x), np.cos(2 * t), atol=1e-6)
    np.testing.assert_allclose(np.asarray(v), -2 * np.sin(2 * t), atol=1e-6)
    # tighter tolerances give a closer answer
    x2, _ = odeint(lambda y, t, w: (y[1], -w ** 2 * y[0]), (znp.array(1.0), znp.array(0.0)),
                   ts, 2.0, rtol=1e-10, atol=1e-10)
    assert np.max(np.abs(np.asarray(x2) - np.cos(2 * t))) < \
        np.max(np.abs(np.asarray(x) - np.cos(2 * t)))
    assert np.max(np.abs(np.asarray(x2) - np.cos(2 * t))) < 1e-8


@settings(max_examples=8, deadline=None)
@given(k=st.floats(-1.0, 2.0), t1=st.floats(0.1, 3.0), y0=st.floats(-5.0, 5.0))
def test_linear_time_dependent_closed_form(k, t1, y0):
    # dy/dt = k t y  ->  y = y0 exp(k t^2 / 2)
    ts = znp.array([0.0, t1 / 2, t1])
    ys = odeint(lambda y, t: k * t * y, znp.array(y0), ts)
    ref = y0 * np.exp(k * np.asarray(ts) ** 2 / 2)
    # the tolerances (1.4e-8) bound each step's error; the global error is a few times that,
    # and an output time between steps carries the dense output's error too (at k=-1,
    # t1=1, y0=1/64 the value at t1/2 is 9e-6 off, as JAX's own, which is the same number)
    np.testing.assert_allclose(np.asarray(ys), ref, rtol=2e-5, atol=1e-7)


# --------------------------------------------------------------------------- JAX's values

@pytest.mark.parametrize("name,kwargs", [
    ("vdp", {}), ("vdp_mxstep", {"mxstep": 3}), ("vdp_hmax", {"hmax": 0.05})])
def test_van_der_pol_matches_jax(name, kwargs):
    ys = odeint(vdp, VDP0, TS, 1.5, rtol=1e-6, atol=1e-8, **kwargs)
    # mxstep=3 stops early and extrapolates (as JAX does), which amplifies rounding
    rtol = 1e-6 if name == "vdp_mxstep" else 1e-11
    np.testing.assert_allclose(np.asarray(ys), ODE_REF[name], rtol=rtol, atol=1e-12)


def test_dict_state_and_dict_args_match_jax():
    lv = odeint(lotka, {"prey": znp.array(10.0), "pred": znp.array(5.0)},
                znp.array([0.0, 1.0, 2.5, 3.0]), P)
    assert set(lv) == {"prey", "pred"}
    np.testing.assert_allclose(np.asarray(lv["prey"]), ODE_REF["lotka_prey"], rtol=1e-11)
    np.testing.assert_allclose(np.asarray(lv["pred"]), ODE_REF["lotka_pred"], rtol=1e-11)


def _vdp_loss(y0, ts, mu):
    ys = odeint(vdp, y0, ts, mu, rtol=1e-8, atol=1e-10)
    return znp.sum(ys[:, 0] ** 2) + znp.sum(znp.sin(ys[:, 1]))


GRAD_TS = znp.array([0.0, 0.5, 1.2, 2.0])


def test_adjoint_gradients_match_jax():
    gy0, gt, gmu = zx.grad(_vdp_loss, argnums=(0, 1, 2))(VDP0, GRAD_TS, 1.5)
    np.testing.assert_allclose(np.asarray(gy0), ODE_REF["grad_y0"], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(gt), ODE_REF["grad_t"], rtol=1e-10)
    np.testing.assert_allclose(float(gmu), ODE_REF["grad_mu"], rtol=1e-10)


def test_gradient_through_dict_args_and_closure_match_jax():
    def loss_args(p):
        s = odeint(lotka, {"prey": znp.array(10.0), "pred": znp.array(5.0)},
                   znp.array([0.0, 1.0, 2.0]), p)
        return s["prey"][-1] + 2 * s["pred"][1]

    def loss_closure(p):   # the parameters reach func by closure, not *args
        s = odeint(lambda s, t: lotka(s, t, p), {"prey": znp.array(10.0),
                                                 "pred": znp.array(5.0)},
                   znp.array([0.0, 1.0, 2.0]))
        return s["prey"][-1] + 2 * s["pred"][1]

    for loss in (loss_args, loss_closure):
        g = zx.grad(loss)(P)
        for k in "abcd":
            np.testing.assert_allclose(float(g[k]), ODE_REF["grad_lotka_" + k], rtol=1e-9)


# --------------------------------------------------------------------------- finite differences

def test_gradients_against_finite_differences():
    ts = znp.array([0.0, 0.4, 1.0])

    def f(y0, ts, mu):
        ys = odeint(vdp, y0, ts, mu, rtol=1e-10, atol=1e-10)
        return znp.sum(ys ** 2, axis=1)

    check_grads(f, (znp.array([1.0, 0.3]), ts, 0.7), order=1, modes=("rev",),
                atol=1e-5, rtol=1e-5)


def test_gradient_of_exponential_decay_closed_form():
    def f(y0, k, t1):
        return odeint(lambda y, t, k: -k * y, y0, znp.stack([0.0, t1]), k,
                      rtol=1e-10, atol=1e-10)[-1]

    g = zx.grad(f, argnums=(0, 1, 2))(1.5, 0.6, 2.0)
    e = np.exp(-1.2)
    np.testing.assert_allclose([float(v) for v in g], [e, -1.5 * 2.0 * e, -1.5 * 0.6 * e],
                               rtol=1e-8)


# --------------------------------------------------------------------------- transforms

@pytest.fixture(scope="module")
def jitted_decay():
    ts = znp.linspace(0.0, 2.0, 4)
    return ts, zx.jit(lambda y0, k: odeint(lambda y, t, k: -k * y, y0, ts, k))


def test_jit_equals_eager(jitted_decay):
    ts, f = jitted_decay
    for y0, k in [(1.0, 0.5), (-2.0, 1.5)]:
        eager = odeint(lambda y, t, k: -k * y, znp.asarray(y0), ts, k)
        np.testing.assert_allclose(np.asarray(f(y0, k)), np.asarray(eager), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(f(y0, k)), y0 * np.exp(-k * np.asarray(ts)),
                                   rtol=1e-7)


def test_vmap_equals_stacked_solves():
    y0s = znp.array([[2.0, 0.0], [1.0, 0.5], [-0.5, 1.0]])
    mus = znp.array([1.5, 0.5, 1.0])
    out = zx.vmap(lambda y0, mu: odeint(vdp, y0, TS, mu, rtol=1e-6, atol=1e-8))(y0s, mus)
    ref = np.stack([np.asarray(odeint(vdp, y0s[i], TS, mus[i], rtol=1e-6, atol=1e-8))
                    for i in range(3)])
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(out[0]), ODE_REF["vdp"], rtol=1e-11)


def test_vmap_of_grad_equals_stacked_grads():
    ts = znp.array([0.0, 0.5, 1.0])
    ks = znp.array([0.3, 1.2])
    f = zx.grad(lambda k: odeint(lambda y, t, k: -k * y ** 2, znp.array(1.0), ts, k)[-1])
    out = zx.vmap(f)(ks)
    # y = 1 / (1 + k t): dy(1)/dk = -1 / (1 + k)^2
    np.testing.assert_allclose(np.asarray(out), -1 / (1 + np.asarray(ks)) ** 2, rtol=1e-6)


# --------------------------------------------------------------------------- edge cases

def test_single_time_returns_y0_and_integer_y0_is_promoted():
    ys = odeint(lambda y, t: -y, znp.array([1.0, 2.0]), znp.array([0.5]))
    np.testing.assert_array_equal(np.asarray(ys), [[1.0, 2.0]])
    ys = odeint(lambda y, t: -y, znp.array(3), znp.array([0.0, 1.0]))
    assert ys.dtype == np.float64
    np.testing.assert_allclose(float(ys[1]), 3 * np.exp(-1.0), rtol=1e-7)


def test_errors():
    with pytest.raises(errors.ZeraxTypeError, match="array of floats"):
        odeint(lambda y, t: -y, 1.0, znp.array([0, 1]))
    with pytest.raises(errors.ZeraxTypeError, match="arrays or scalars"):
        odeint(lambda y, t, s: -y, 1.0, znp.array([0.0, 1.0]), "fast")
    with pytest.raises(errors.ShapeError, match="1-D"):
        odeint(lambda y, t: -y, 1.0, znp.ones((2, 2)))
    with pytest.raises(errors.ZeraxValueError, match="rtol"):
        odeint(lambda y, t: -y, 1.0, znp.array([0.0, 1.0]), rtol=-1.0)
    with pytest.raises(errors.ZeraxTypeError, match="callable"):
        odeint(None, 1.0, znp.array([0.0, 1.0]))


def test_complex_state_matches_jax_and_closed_form():
    ts = znp.linspace(0., 2., 4)
    y0 = np.array([1.0 + 0.5j, -2j])
    ys = odeint(lambda y, t, w: w * y, znp.asarray(y0), ts, -0.3 + 2j, rtol=1e-7, atol=1e-9)
    jax_ys = [[(1 + 0.5j), -2j],   # jax.experimental.ode.odeint, x64
              [(-0.20528147425249804 + 0.892053528892355j),
               (1.5915108256297665 - 0.38519246430988724j)],
              [(-0.7493928700017952 + 0.008452310206147465j),
               (0.6130379923312722 + 1.1922667438379542j)],
              [(-0.15105624495928735 - 0.5947055547513411j),
               (-0.8306838916347153 + 0.7174544357359338j)]]
    np.testing.assert_allclose(np.asarray(ys), jax_ys, rtol=1e-12)
    ref = np.exp((-0.3 + 2j) * np.asarray(ts))[:, None] * y0
    np.testing.assert_allclose(np.asarray(ys), ref, rtol=1e-6)


def test_vmap_over_a_closed_over_batched_value():
    ts = znp.linspace(0.0, 1.0, 3)
    ks = znp.array([0.5, 1.0])
    out = zx.vmap(lambda k: odeint(lambda y, t: -k * y, znp.array(1.0), ts))(ks)
    np.testing.assert_allclose(np.asarray(out), np.exp(-np.outer(ks, ts)), rtol=1e-7)


# --------------------------------------------------------------------------- forward mode

def _decay(y, t, k):
    return -k * y + znp.sin(t)


def test_forward_mode_closed_form_and_against_reverse_mode():
    ts = np.array([0.0, 0.5, 1.0, 2.0])
    y0, k = np.array([1.0, 2.0]), 0.7
    # d y(t) / d y0 = exp(-k t) (linear in y0)
    _, t = zx.jvp(lambda y: odeint(_decay, y, ts, k), (y0,), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(t[:, 0], np.exp(-k * ts), rtol=1e-7)
    np.testing.assert_allclose(t[:, 1], 0.0, atol=1e-12)
    sol = lambda k, ts=ts: odeint(_decay, y0, ts, k)      # noqa: E731
    # forward (sensitivity equations) and reverse (adjoint) agree to the tolerances
    np.testing.assert_allclose(zx.jacfwd(sol)(k), zx.jacrev(sol)(k), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(zx.jacfwd(lambda ts: sol(k, ts))(ts),
                               zx.jacrev(lambda ts: sol(k, ts))(ts), rtol=1e-6, atol=1e-7)
    h = 1e-6
    fd = (np.asarray(sol(k + h)) - np.asarray(sol(k - h))) / (2 * h)
    for tk in (zx.jvp(sol, (k,), (1.0,))[1],
               zx.jit(lambda k: zx.jvp(sol, (k,), (1.0,))[1])(k),
               zx.linearize(sol, k)[1](1.0)):
        np.testing.assert_allclose(tk, fd, rtol=1e-5, atol=1e-6)
    ks = np.array([0.5, 0.7, 1.0])
    got = zx.jvp(zx.vmap(sol), (ks,), (np.ones(3),))[1]
    np.testing.assert_allclose(got[1], zx.jvp(sol, (0.7,), (1.0,))[1], rtol=1e-9)
    # the second derivative, reverse inside forward (the adjoint solve's own forward mode)
    g = lambda k: zx.grad(lambda k: sol(k)[-1, 0])(k)      # noqa: E731
    np.testing.assert_allclose(zx.hessian(lambda k: sol(k)[-1, 0])(k),
                               (float(g(k + h)) - float(g(k - h))) / (2 * h), rtol=1e-5)


def test_forward_mode_through_closures_and_pytrees():
    ts = np.linspace(0.0, 1.0, 4)

    def f(scale):
        def dyn(state, t):
            return {"a": -scale * state["a"], "b": state["a"] * scale}
        return odeint(dyn, {"a": np.array(1.0), "b": np.array(0.0)}, ts)

    y, t = zx.jvp(f, (2.0,), (1.0,))
    # a = exp(-s t), b = 1 - exp(-s t): d/ds = -t exp(-s t) and t exp(-s t)
    np.testing.assert_allclose(t["a"], -ts * np.exp(-2.0 * ts), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(t["b"], ts * np.exp(-2.0 * ts), rtol=1e-6, atol=1e-10)
