"""Taylor mode, primitive by primitive: ``zerax.jet`` against nested ``jvp`` (the
independent reference of ``jet_helpers.py``) for orders 1..8 on hypothesis-chosen
points and series, for every primitive with a Taylor rule; the registry's coverage
(every primitive is here, or has zero series, or declares why it has no rule)."""

import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax._src.core.core import all_primitives, bind
from zerax._src.interpreters.jet import jet_rules
from zerax._src.ops import elementwise as ew
from zerax._src.ops import windows
import zerax.scipy.special as sps

from jet_helpers import assert_jet_matches_nested_jvp
from np_helpers import BINARY_DOMAINS, UNARY_DOMAINS

P = all_primitives()


def _b(name, **params):
    return lambda *a: bind(P[name], *a, **params)


def F(shape, lo, hi):
    return (tuple(shape), float(lo), float(hi))


S3, S23 = (3,), (2, 3)
_IDX = np.array([2, 0, 2])
_SPD = np.array([[3.0, 0.5, 0.2], [0.5, 2.5, 0.3], [0.2, 0.3, 2.0]])
_PRED = np.array([True, False, True])
_ARANGE23 = np.arange(6.0).reshape(2, 3)


def _spd(a):
    return znp.matmul(a, a.T) + _SPD


def _while(c):
    return lax.while_loop(lambda v: v[1] < 3, lambda v: (znp.sin(v[0]) * v[0] + 0.5, v[1] + 1),
                          (c, 0))[0]


@zx.custom_jvp
def _softplus(x):
    return znp.log1p(znp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * zx.nn.sigmoid(x)


@zx.custom_vjp
def _sin_vjp(x):
    return znp.sin(x) * x


_sin_vjp.defvjp(lambda x: (_sin_vjp(x), x), lambda x, g: (g * (znp.cos(x) * x + znp.sin(x)),))


def _debug(x):
    zx.debug.callback(lambda v: None, x)
    return znp.exp(x)


# name -> (function, argument specs, highest order tested)
CASES = {name: (_b(name), [F(S3, lo, hi)], 8) for name, (lo, hi) in UNARY_DOMAINS.items()}
CASES.update({name: (_b(name), [F(S3, *d1), F(S3, *d2)], 8)
              for name, (d1, d2) in BINARY_DOMAINS.items()})
CASES.update({
    "abs": (lambda x: znp.abs(x - 1.0), [F(S3, -1, 3)], 8),
    "integer_pow": (lambda x: bind(P["integer_pow"], x, y=3) + bind(P["integer_pow"], x, y=-2),
                    [F(S3, 0.5, 2)], 8),
    "polygamma": (_b("polygamma", m=2), [F(S3, 0.5, 3)], 8),
    "max": (znp.maximum, [F(S3, -1, 1), F(S3, 0, 2)], 8),
    "min": (znp.minimum, [F(S3, -1, 1), F(S3, 0, 2)], 8),
    "clamp": (lambda x: lax.clamp(-0.5, znp.sin(x), 0.5), [F(S3, -2, 2)], 8),
    "select_n": (lambda a, b: znp.where(_PRED, a * a, znp.exp(b)), [F(S3, -1, 1)] * 2, 8),
    "convert_element_type": (lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.complex128) * (1 + 2j), np.float64), [F(S3, -1, 1)], 8),
    "real": (lambda x: znp.real(znp.exp(x * (1 + 1j))), [F(S3, -1, 1)], 8),
    "imag": (lambda x: znp.imag(znp.exp(x * (1 + 1j))), [F(S3, -1, 1)], 8),
    "conj": (lambda x: znp.real(znp.conj(x * (2 - 1j)) * (x + 1j)), [F(S3, -1, 1)], 8),
    "complex": (lambda a, b: znp.abs(lax.complex(a, b)), [F(S3, 0.5, 1), F(S3, 0.5, 1)], 8),
    # special functions
    "igamma": (sps.gammainc, [F(S3, 1, 3), F(S3, 0.5, 3)], 1),
    "igammac": (lambda x: sps.gammaincc(2.5, x), [F(S3, 0.5, 3)], 8),
    "igamma_grad_a": (lambda x: lax.igamma_grad_a(2.5, x), [F(S3, 0.5, 3)], 6),
    "regularized_incomplete_beta": (lambda x: sps.betainc(2.0, 3.0, x), [F(S3, 0.1, 0.9)], 8),
    "zeta": (lambda q: sps.zeta(3.0, q), [F(S3, 1, 3)], 8),
    "expn": (lambda x: sps.expn(2, x) + sps.expn(0, x), [F(S3, 0.5, 2)], 6),
    "expi": (sps.expi, [F(S3, 0.5, 2)], 8),
    "bessel_j0": (sps.j0, [F(S3, 0.5, 3)], 8), "bessel_j1": (sps.j1, [F(S3, 0.5, 3)], 8),
    "bessel_y0": (sps.y0, [F(S3, 0.5, 3)], 8), "bessel_y1": (sps.y1, [F(S3, 0.5, 3)], 8),
    # (|x| is not smooth at 0, and i1e(x)/x cancels for tiny x: both sides, away from 0)
    "bessel_i0e": (lambda x: sps.i0e(x) + sps.i0e(-x), [F(S3, 0.2, 2)], 8),
    "bessel_i1e": (lambda x: sps.i1e(x) + 2 * sps.i1e(-x), [F(S3, 0.2, 2)], 8),
    "bessel_jv": (lambda x: sps.jv(1.5, x), [F(S3, 0.5, 3)], 6),
    "bessel_iv": (lambda x: sps.iv(0.5, x), [F(S3, 0.5, 3)], 6),
    "bessel_ive": (lambda x: sps.ive(0.5, x), [F(S3, 0.5, 3)], 6),
    "sph_legendre": (lambda t: sps.sph_harm_y(np.array(3), np.array(1), t,
                                              np.array(0.2)).real, [F(S3, 0.3, 1.2)], 6),
    # shapes and indexing
    "broadcast_in_dim": (lambda x: znp.sin(znp.broadcast_to(x, (2, 3))) * _ARANGE23,
                         [F(S3, -1, 1)], 8),
    "reshape": (lambda x: znp.sin(x.reshape(3, 2))[1:], [F(S23, -1, 1)], 8),
    "transpose": (lambda x: znp.exp(x.T) @ np.ones(2), [F(S23, -1, 1)], 8),
    "squeeze": (lambda x: znp.squeeze(znp.sin(x[:1]), 0), [F(S23, -1, 1)], 8),
    "concatenate": (lambda a, b: znp.sin(znp.concatenate([a, b * b])), [F(S3, -1, 1)] * 2, 8),
    "pad": (lambda x, v: lax.pad(znp.exp(x), v, ((1, 2, 1),)), [F(S3, -1, 1), F((), -1, 1)], 8),
    "slice": (lambda x: znp.exp(x[::2, 1:]), [F(S23, -1, 1)], 8),
    "rev": (lambda x: znp.flip(x) * znp.sin(x), [F(S3, -1, 1)], 8),
    "dynamic_slice": (lambda x: lax.dynamic_slice(znp.exp(x), (1,), (2,)), [F(S3, -1, 1)], 8),
    "dynamic_update_slice": (lambda a, b: znp.sin(lax.dynamic_update_slice(a, b[:2] * b[1:], (1,))),
                             [F(S3, -1, 1)] * 2, 8),
    "gather": (lambda x: znp.exp(x)[_IDX] * x[_IDX[::-1]], [F(S3, -1, 1)], 8),
    "scatter": (lambda a, b: znp.sin(a.at[np.array([0, 2])].set(b[:2] * b[1:])),
                [F(S3, -1, 1)] * 2, 8),
    "scatter_add": (lambda a, b: znp.sin(a.at[_IDX].add(b * b)), [F(S3, -1, 1)] * 2, 8),
    "scatter_mul": (lambda a, b: a.at[_IDX].multiply(znp.exp(b)), [F(S3, -1, 1)] * 2, 8),
    "scatter_min": (lambda a, b: a.at[_IDX].min(b), [F(S3, -1, 0), F(S3, 0, 1)], 8),
    "scatter_max": (lambda a, b: a.at[_IDX].max(b), [F(S3, -1, 0), F(S3, 0, 1)], 8),
    "window_patches": (lambda x: znp.sin(windows.window_patches(x, (2, 2), (1, 2), (1, 1))),
                       [F((2, 3, 4), -1, 1)], 6),
    "window_patches_add": (lambda x: znp.sin(windows.window_patches_add(
        x, (3, 3), (1, 2), (2, 1), (1, 2))), [F((2, 2, 1), -1, 1)], 6),
    "sort": (lambda x: znp.sort(znp.sin(x) + np.array([0.0, 3.0, -3.0])), [F(S3, -1, 1)], 8),
    # reductions
    "reduce_sum": (lambda x: znp.sum(znp.exp(x), axis=1), [F(S23, -1, 1)], 8),
    "reduce_max": (lambda x: znp.max(x + np.array([0.0, 3.0, -3.0]), axis=1), [F(S23, -1, 1)], 8),
    "reduce_min": (lambda x: znp.min(x + np.array([0.0, 3.0, -3.0]), axis=1), [F(S23, -1, 1)], 8),
    "reduce_prod": (lambda x: znp.prod(x, axis=1), [F(S23, 0.5, 1.5)], 8),
    "cumsum": (lambda x: znp.cumsum(znp.exp(x), axis=1), [F(S23, -1, 1)], 8),
    "cumprod": (lambda x: lax.cumprod(x, axis=1, reverse=True), [F(S23, 0.5, 1.5)], 8),
    "cummax": (lambda x: lax.cummax(x + np.array([0.0, 3.0, -3.0]), axis=1), [F(S23, -1, 1)], 8),
    "cummin": (lambda x: lax.cummin(x - np.array([0.0, 3.0, -3.0]), axis=1), [F(S23, -1, 1)], 8),
    "dot_general": (lambda a, b: znp.tanh(a @ b), [F(S23, -1, 1), F((3, 2), -1, 1)], 8),
    "fft": (lambda x: znp.sum(znp.abs(znp.fft.rfft(x * x))) + znp.real(znp.fft.fft(znp.exp(x))),
            [F((4,), 0.2, 1)], 8),
    # linear algebra
    "triangular_solve": (lambda a, b: lax.linalg.triangular_solve(
        a + _SPD, b, left_side=True, lower=True), [F((3, 3), -1, 1), F((3, 2), -1, 1)], 8),
    "cholesky": (lambda a: lax.linalg.cholesky(_spd(a)), [F((3, 3), -1, 1)], 5),
    "lu": (lambda a: lax.linalg.lu(a + _SPD)[0], [F((3, 3), -1, 1)], 5),
    "qr": (lambda a: znp.linalg.qr(a + _SPD)[1], [F((3, 3), -1, 1)], 4),
    "eigh": (lambda a: znp.linalg.eigh(_spd(a) + np.diag([0.0, 3.0, 6.0]))[0],
             [F((3, 3), -1, 1)], 4),
    "svd": (lambda a: znp.linalg.svd(a + np.diag([1.0, 3.0, 6.0]), compute_uv=False),
            [F((3, 3), -0.5, 0.5)], 4),
    "eig": (lambda a: znp.real(znp.linalg.eigvals(a + np.diag([1.0, 3.0, 6.0]))),
            [F((3, 3), -0.3, 0.3)], 4),
    # control flow and calls
    "cond": (lambda x: lax.cond(x[0] > 0, znp.sin, znp.exp, x), [F(S3, -1, 1)], 5),
    "scan": (lambda c, xs: lax.scan(lambda k, x: (k * znp.sin(x) + x * x, k * x), c, xs)[1],
             [F((), -1, 1), F(S3, -1, 1)], 6),
    "while": (_while, [F((), -1, 1)], 6),
    "jit": (zx.jit(lambda x: znp.sin(x) * x), [F(S3, -1, 1)], 5),
    "checkpoint": (zx.checkpoint(lambda x: znp.sin(x) * x), [F(S3, -1, 1)], 8),
    "checkpoint_jvp": (lambda x: zx.jvp(zx.checkpoint(lambda v: znp.sin(v) * v), (x,), (x * x,))[1],
                       [F(S3, -1, 1)], 6),
    "custom_jvp_call": (zx.jit(_softplus), [F(S3, -1, 1)], 5),
    "debug_callback": (_debug, [F(S3, -1, 1)], 6),
    "while_lin": (lambda x: zx.jvp(_while, (x,), (x * x,))[1], [F((), -1, 1)], 4),
    "while_transpose": (zx.grad(_while), [F((), -1, 1)], 4),
    "psum": (lambda x: zx.vmap(lambda v: lax.psum(znp.sin(v), "i"), axis_name="i")(x),
             [F(S3, -1, 1)], 8),
    "all_gather": (lambda x: zx.vmap(lambda v: lax.all_gather(znp.sin(v), "i"), axis_name="i")(x),
                   [F(S3, -1, 1)], 8),
    "psum_scatter": (lambda x: zx.vmap(lambda v: lax.psum_scatter(znp.sin(v), "i"),
                                       axis_name="i")(x), [F((3, 3), -1, 1)], 8),
    "ppermute": (lambda x: zx.vmap(lambda v: lax.ppermute(znp.sin(v), "i",
                                                          [(0, 1), (1, 2), (2, 0)]),
                                   axis_name="i")(x), [F(S3, -1, 1)], 8),
    "all_to_all": (lambda x: zx.vmap(lambda v: lax.all_to_all(znp.sin(v), "i", 0, 0),
                                     axis_name="i")(x), [F((3, 3), -1, 1)], 8),
    "fma": (lambda x: ew.fma(znp.sin(x), x, znp.cos(x)), [F(S3, -2, 2)], 8),
})
# Zero series (piecewise-constant or integer outputs): each times a smooth function, so
# the result's series is the function's times the constant.
ZERO = {"floor_divide", "sign", "floor", "ceil", "round", "eq", "ne", "lt", "le", "gt", "ge",
        "and", "or", "xor", "not", "shift_left", "shift_right", "is_finite", "isnan",
        "argmax", "argmin", "iota", "stop_gradient", "argsort", "bitcast_convert_type",
        "threefry2x32", "axis_index"}
# a custom_vjp function is seen through its primal function: checked against jvp of that
COVERED_ELSEWHERE = {"custom_vjp_call": "test_jet.py::test_custom_vjp_goes_through_primal"}


def _draw_args(data, specs):
    return [data.draw(hnp.arrays(np.float64, shape, elements=st.floats(lo, hi)))
            for shape, lo, hi in specs]


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(data=st.data())
def test_jet_matches_nested_jvp(name, data):
    fn, specs, max_order = CASES[name]
    K = data.draw(st.integers(1, max_order))
    primals = _draw_args(data, specs)
    series = [[data.draw(hnp.arrays(np.float64, np.shape(p), elements=st.floats(-0.5, 0.5)))
               for _ in range(K)] for p in primals]
    assert_jet_matches_nested_jvp(fn, primals, series, rtol=1e-6, atol=1e-8)


def test_igamma_in_a_to_first_order_and_its_refusal_beyond():
    # d2/da2 of P(a, x) is not implemented (JAX has none): jet says so, as nested jvp does
    a, x = np.array([2.0, 3.0]), np.array([1.5, 0.5])
    assert_jet_matches_nested_jvp(sps.gammainc, [a, x], [[np.ones(2)], [np.ones(2)]])
    with pytest.raises(errors.NotSupportedError, match="with respect to a"):
        zx.jet(sps.gammainc, (a, x), ((np.ones(2), np.zeros(2)), (np.zeros(2), np.zeros(2))))


@settings(max_examples=5, deadline=None)
@given(hnp.arrays(np.float64, S3, elements=st.floats(-3, 3)), st.integers(1, 6))
def test_zero_series_primitives(x, K):
    """floor, comparisons, argmax, iota, stop_gradient, random bits ...: constants."""
    def f(v):
        k = zx.random.key_data(zx.random.PRNGKey(3))   # threefry, bitcasts
        c = (znp.floor(v) + znp.sign(v) + znp.round(v) + znp.ceil(v) + (v // 2.0)
             + znp.argmax(v) + znp.argmin(v) + znp.argsort(v) + znp.arange(3)
             + (v > 0) + (v >= 0) + (v < 0) + (v <= 0) + (v == 0) + (v != 0)
             + (~(v > 0)) + ((v > 0) & (v < 1)) + ((v > 0) | (v < 1)) + ((v > 0) ^ (v < 1))
             + znp.isfinite(v) + znp.isnan(v) + (k[0] >> 31) * 0 + (k[1] << 1) * 0
             + lax.stop_gradient(v) + zx.random.uniform(zx.random.PRNGKey(0), (3,)))
        return c * znp.sin(v)
    series = [np.full(3, 0.25)] * K
    assert_jet_matches_nested_jvp(f, [x], [series])
    idx = zx.vmap(lambda v: lax.axis_index("i") * v, axis_name="i")
    y, ys = zx.jet(idx, (x,), (series,))
    np.testing.assert_allclose(np.asarray(ys[0]), np.arange(3) * 0.25)


def test_every_primitive_is_covered():
    covered = set(CASES) | ZERO | set(COVERED_ELSEWHERE)
    missing = [n for n, p in all_primitives().items()
               if p in jet_rules and n not in covered]
    assert not missing, f"primitives with a Taylor rule but no test: {sorted(missing)}"
    for n, p in all_primitives().items():
        assert p in jet_rules or p.unsupported.get("jet"), n


@pytest.mark.parametrize("name", ["pmax", "function_call", "custom_lin"])
def test_primitives_without_a_rule_say_why(name):
    assert all_primitives()[name].unsupported["jet"]


def test_an_unsupported_primitive_is_a_clear_error():
    x = np.array([1.0, 2.0])
    with pytest.raises(errors.NotSupportedError, match="Taylor mode"):
        zx.vmap(lambda v: zx.jet(lambda w: lax.pmax(w, "i"), (v,), ((1.0,),))[1],
                axis_name="i")(x)

    class Square(zx.Function):
        def forward(self, v):
            return v * v

        def backward(self, gy):
            return 2.0 * gy

    with pytest.raises(errors.NotSupportedError, match="Function"):
        zx.jet(lambda v: Square()(v), (x,), ((np.ones(2),),))
