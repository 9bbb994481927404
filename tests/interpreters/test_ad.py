"""Automatic differentiation: jvp, vjp, linearize, grad, value_and_grad, nesting,
custom rules, checkpoint, zerax.Function, symbolic zeros."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

floats = st.floats(-2.0, 2.0, allow_nan=False)


def test_grad_accepts_numpy_lists_scalars_and_arrays():
    f = lambda x: znp.sum(znp.tanh(x) ** 2)
    x = np.array([0.1, 0.2])
    want = 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
    for arg in (x, zx.numpy.asarray(x)):
        g = zx.grad(f)(arg)
        assert isinstance(g, zx.Array)
        np.testing.assert_allclose(g, want, rtol=1e-12)
    g = zx.grad(f)([0.1, 0.2])  # a list is a pytree (as in JAX): one gradient per element
    assert isinstance(g, list) and len(g) == 2
    np.testing.assert_allclose([float(v) for v in g], want, rtol=1e-12)
    assert float(zx.grad(lambda s: s * s)(3.0)) == 6.0


@given(floats)
def test_third_derivative_of_tanh_matches_closed_form(x):
    t = math.tanh(x)
    want = (1 - t * t) * (6 * t * t - 2)
    got = zx.grad(zx.grad(zx.grad(znp.tanh)))(x)
    assert abs(float(got) - want) < 1e-10


def test_sixth_derivative_of_tanh_matches_series_coefficients():
    # tanh(x) = x - x^3/3 + 2x^5/15 - 17x^7/315 ...: the 5th derivative at 0 is 16.
    f = znp.tanh
    for _ in range(5):
        f = zx.grad(f)
    assert abs(float(f(0.0)) - 16.0) < 1e-9


def test_perturbation_confusion_classic():
    # d/dx [x * d/dy (x + y)] = 1, not 2.
    f = lambda x: x * zx.grad(lambda y: x + y)(1.0)
    assert float(zx.grad(f)(1.0)) == 1.0


def test_nested_jvp_of_grad_and_grad_of_jvp():
    f = lambda x: znp.sin(x) * x
    d2 = lambda x: -x * math.sin(x) + 2 * math.cos(x)
    _, t = zx.jvp(zx.grad(f), (0.7,), (1.0,))
    assert abs(float(t) - d2(0.7)) < 1e-12
    g = zx.grad(lambda x: zx.jvp(f, (x,), (1.0,))[1])
    assert abs(float(g(0.7)) - d2(0.7)) < 1e-12


def test_value_and_grad_argnums_aux_and_pytrees():
    def loss(params, batch):
        x, y = batch
        pred = znp.sum(x * params["w"]) + params["b"]
        return (pred - y) ** 2, {"pred": pred}

    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    batch = (np.array([3.0, -1.0]), 2.0)
    (value, aux), grads = zx.value_and_grad(loss, argnums=(0, 1), has_aux=True)(params, batch)
    pred = 3.0 - 2.0 + 0.5
    assert float(value) == (pred - 2.0) ** 2
    assert float(aux["pred"]) == pred
    gp, gb = grads
    np.testing.assert_allclose(gp["w"], 2 * (pred - 2.0) * batch[0])
    assert float(gp["b"]) == 2 * (pred - 2.0)
    np.testing.assert_allclose(gb[0], 2 * (pred - 2.0) * params["w"])
    assert float(gb[1]) == -2 * (pred - 2.0)


def test_jvp_vjp_linearize_agree():
    f = lambda x, y: (znp.sin(x) * y, znp.exp(x) + y)
    x, y = np.array([0.3, -0.4]), np.array([1.5, 2.0])
    tx, ty = np.array([1.0, 0.5]), np.array([-2.0, 0.1])
    out, tan = zx.jvp(f, (x, y), (tx, ty))
    out2, f_lin = zx.linearize(f, x, y)
    tan2 = f_lin(tx, ty)
    for a, b in zip(tan, tan2):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    _, f_vjp = zx.vjp(f, x, y)
    ct = (np.array([0.7, -1.1]), np.array([2.0, 0.3]))
    cx, cy = f_vjp(ct)
    lhs = np.dot(cx, tx) + np.dot(cy, ty)
    rhs = sum(np.dot(c, t) for c, t in zip(ct, tan))
    assert abs(lhs - rhs) < 1e-12


def test_check_grads_catches_a_wrong_rule():
    wrong = zx.custom_jvp(lambda x: znp.sin(x))
    wrong.defjvp(lambda p, t: (znp.sin(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError):
        check_grads(wrong, (0.3,), order=1, modes=("fwd",))


def test_stop_gradient():
    f = lambda x: x * zx.stop_gradient(x)
    assert float(zx.grad(f)(3.0)) == 3.0
    assert "stop_gradient" in str(zx.make_jaxpr(f)(3.0))


def test_custom_jvp_used_under_grad_and_inside_make_jaxpr():
    @zx.custom_jvp
    def safe_log1pexp(x):
        return znp.log1p(znp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t * (1 - 1 / (1 + znp.exp(x)))

    assert abs(float(zx.grad(safe_log1pexp)(100.0)) - 1.0) < 1e-12
    check_grads(safe_log1pexp, (0.3,), order=2)
    jaxpr = zx.make_jaxpr(safe_log1pexp)(1.0)
    assert "custom_jvp_call" in str(jaxpr)
    np.testing.assert_allclose(zx.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, 1.0)[0], np.log1p(np.e))


def test_custom_vjp_and_its_errors():
    @zx.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (znp.clip(g, -1.0, 1.0),))
    assert float(zx.grad(lambda x: 5.0 * clip_gradient(x))(2.0)) == 1.0
    with pytest.raises(errors.NotSupportedError, match="forward-mode"):
        zx.jvp(clip_gradient, (1.0,), (1.0,))
    # JAX raises a TypeError here, and programs catch TypeError
    for fwd in (lambda: zx.jvp(clip_gradient, (1.0,), (1.0,)),
                lambda: zx.jacfwd(clip_gradient)(1.0),
                lambda: zx.jit(lambda x: zx.jvp(clip_gradient, (x,), (1.0,)))(1.0)):
        with pytest.raises(TypeError, match="forward-mode"):
            fwd()


def test_custom_vjp_forward_rule():
    # zerax's extension: defjvp_forward gives forward mode; reverse mode keeps bwd
    calls = []

    @zx.custom_vjp
    def f(x, y):
        return znp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, g):
        calls.append("bwd")
        x, y = res
        return znp.cos(x) * y * g, znp.sin(x) * g

    def forward(primals, tangents):
        calls.append("forward")
        (x, y), (tx, ty) = primals, tangents
        return znp.cos(x) * y * tx + znp.sin(x) * ty

    f.defvjp(fwd, bwd)
    f.defjvp_forward(forward)
    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    tx, ty = np.array([1.0, 0.5]), np.array([0.25, 2.0])
    want = np.cos(x) * y * tx + np.sin(x) * ty
    for jvp in (zx.jvp, lambda *a: zx.jit(lambda *p: zx.jvp(f, *p))(*a[1:])):
        calls.clear()
        np.testing.assert_allclose(jvp(f, (x, y), (tx, ty))[1], want, rtol=1e-14)
        assert calls == ["forward"]
    calls.clear()
    np.testing.assert_allclose(zx.grad(lambda x: f(x, y).sum())(x), np.cos(x) * y)
    assert calls == ["bwd"]
    # a linearization evaluated forward calls the rule; transposed, bwd
    _, f_jvp = zx.linearize(f, x, y)
    np.testing.assert_allclose(f_jvp(tx, ty), want, rtol=1e-14)
    np.testing.assert_allclose(zx.vmap(f_jvp)(np.stack([tx, 2 * tx]), np.stack([ty, 2 * ty])),
                               [want, 2 * want], rtol=1e-14)
    np.testing.assert_allclose(zx.jacfwd(f)(x, y), np.diag(np.cos(x) * y), rtol=1e-14)
    np.testing.assert_allclose(zx.jvp(zx.vmap(f), (x[:, None], y[:, None]),
                                      (tx[:, None], ty[:, None]))[1][:, 0], want, rtol=1e-14)
    np.testing.assert_allclose(zx.jvp(zx.jit(f), (x, y), (tx, ty))[1], want, rtol=1e-14)


def test_custom_vjp_second_order_through_bwd():
    @zx.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (cube(x), x), lambda x, g: (3 * x ** 2 * g,))
    assert float(zx.grad(zx.grad(cube))(2.0)) == 12.0


@zx.custom_vjp
def _scaled_square(x):
    return x * x


# bwd deliberately 3x the true derivative: the results show that bwd was used
_scaled_square.defvjp(lambda x: (x * x, x), lambda x, g: (6.0 * x * g,))

_IN_SUB_PROGRAMS = {   # name -> (function, its gradient with bwd's 6x in place of 2x)
    "scan": (lambda x: zx.lax.scan(lambda c, _: (_scaled_square(c), None), x, None,
                                   length=2)[0], lambda x: 6.0 * x * x * 6.0 * x),
    "cond": (lambda x: zx.lax.cond(x > 0, _scaled_square, lambda v: -v, x),
             lambda x: 6.0 * x if x > 0 else -1.0),
    "switch": (lambda x: zx.lax.switch(1, [lambda v: v, _scaled_square], x), lambda x: 6.0 * x),
    "fori_loop": (lambda x: zx.lax.fori_loop(0, 2, lambda i, c: _scaled_square(c), x),
                  lambda x: 6.0 * x * x * 6.0 * x),
    "while_loop": (lambda x: zx.lax.while_loop(lambda c: c < 3.0, _scaled_square, x),
                   lambda x: 6.0 * x * x * 6.0 * x),     # two steps from 1.5
    "map": (lambda x: zx.lax.map(_scaled_square, x * np.ones(3)).sum(), lambda x: 18.0 * x),
    "jit": (zx.jit(_scaled_square), lambda x: 6.0 * x),
}


@pytest.mark.parametrize("outer", ["grad", "jit_grad", "vmap_grad"])
@pytest.mark.parametrize("name", sorted(_IN_SUB_PROGRAMS))
def test_custom_vjp_inside_sub_programs(name, outer):
    # Reverse mode transposes the sub-program's linear part; the custom_vjp's bwd rule
    # must be what runs there, whatever the sub-program (JAX's semantics).
    fn, want = _IN_SUB_PROGRAMS[name]
    xs = [1.5, -0.5] if name == "cond" else [1.5]
    g = {"grad": zx.grad(fn), "jit_grad": zx.jit(zx.grad(fn)),
         "vmap_grad": zx.vmap(zx.grad(fn))}[outer]
    if outer == "vmap_grad":
        np.testing.assert_allclose(g(np.array(xs)), [want(x) for x in xs], rtol=1e-14)
    else:
        for x in xs:
            np.testing.assert_allclose(g(x), want(x), rtol=1e-14)


class Square(zx.Function):
    def forward(self, x):
        return x ** 2

    def backward(self, gy):
        (x,) = self.inputs
        return 2 * x * gy


class Mul(zx.Function):
    def forward(self, a, b):
        return a * b

    def backward(self, gy):
        a, b = self.inputs
        return gy * b, gy * a


def test_function_seed_style_any_order():
    sq = Square()
    assert float(sq(3.0)) == 9.0
    assert float(zx.grad(sq)(3.0)) == 6.0
    assert float(zx.grad(zx.grad(sq))(3.0)) == 2.0
    g = zx.grad(lambda a, b: Mul()(a, Square()(b)), argnums=(0, 1))(2.0, 3.0)
    assert (float(g[0]), float(g[1])) == (9.0, 12.0)
    jaxpr = zx.make_jaxpr(sq)(3.0)
    assert "function_call" in str(jaxpr)


def test_checkpoint_matches_plain_and_recomputes():
    f = lambda x: znp.sin(znp.sin(x)) * x
    cf = zx.checkpoint(f)
    for k in range(1, 4):
        a, b = f, cf
        for _ in range(k):
            a, b = zx.grad(a), zx.grad(b)
        assert abs(float(a(0.8)) - float(b(0.8))) < 1e-12
    jaxpr = str(zx.make_jaxpr(zx.value_and_grad(cf))(0.8))
    assert "checkpoint" in jaxpr and jaxpr.count("sin") >= 2  # forward, then recomputation
    _, t = zx.jvp(cf, (0.8,), (1.0,))
    assert abs(float(t) - float(zx.grad(f)(0.8))) < 1e-12


def test_long_chain_backprop_is_a_loop():
    def chain(x):
        for _ in range(100_000):
            x = x * 1.000001 + 0.0
        return x

    g = zx.grad(chain)(1.0)
    assert abs(float(g) - 1.000001 ** 100_000) < 1e-9


def test_symbolic_zeros_leave_no_zero_arithmetic():
    f = lambda x, y: znp.sin(x) * 3.0 + y
    text = str(zx.make_jaxpr(zx.grad(f))(1.0, 2.0))
    assert "0.0" not in text
    # the derivative of a constant is an instantiated zero, not a program
    g = zx.grad(lambda x, y: x * 2.0, argnums=1)(1.0, 2.0)
    assert float(g) == 0.0


def test_python_control_flow_on_concrete_primal_under_grad():
    def relu_ish(x):
        return x * x if x > 0 else -x
    assert float(zx.grad(relu_ish)(3.0)) == 6.0
    assert float(zx.grad(relu_ish)(-3.0)) == -1.0


@given(st.sampled_from([znp.sin, znp.cos, znp.exp, znp.tanh, znp.arctan, znp.sinh, znp.log1p]),
       st.floats(0.1, 1.5))
def test_grad_of_grad_composition(fn, x):
    check_grads(lambda v: fn(fn(v)), (x,), order=2)


def test_linearize_keeps_only_the_equations_its_tangents_need():
    from zerax._src.interpreters.ad import linearize_flat

    def f(x):
        _ = znp.exp(znp.sin(x) * 3.0)        # dead: nothing returned depends on it
        return x * 2.0

    _, lin, _ = linearize_flat(lambda x: ([f(x)], None), [np.float64(1.0)], prune=True)
    assert [e.primitive.name for e in lin.closed.jaxpr.eqns] == ["mul"]
    y, f_jvp = zx.linearize(f, 1.0)
    assert float(f_jvp(1.0)) == 2.0


def test_elementwise_grad_is_autograds():
    # autograd's README: derivatives of tanh written out, to third order, elementwise
    def tanh(x):
        return (1.0 - znp.exp(-2 * x)) / (1.0 + znp.exp(-2 * x))

    x = np.linspace(-3.0, 3.0, 9)
    t = np.tanh(x)
    d1 = 1 - t ** 2
    d2 = -2 * t * d1
    d3 = -2 * d1 ** 2 + 4 * t ** 2 * d1
    eg = zx.elementwise_grad
    np.testing.assert_allclose(eg(tanh)(x), d1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(eg(eg(tanh))(x), d2, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(eg(eg(eg(tanh)))(x), d3, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(zx.jit(eg(tanh))(x), d1, rtol=1e-12, atol=1e-15)
    # argnum, and a non-elementwise function: the gradient of the sum of its outputs
    np.testing.assert_allclose(eg(lambda a, b: a * b, 1)(x, x + 1.0), x, rtol=1e-15)
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(eg(lambda v: m @ v)(np.ones(3)), m.sum(0), rtol=1e-15)
    with pytest.raises(errors.ZeraxValueError, match="argnum"):
        eg(tanh, 2)(x)


def test_custom_gradient_uses_the_returned_rule():
    @zx.custom_gradient
    def prod(x, y):
        return x * y, lambda ct: (ct * 2.0, ct * 3.0)

    assert float(prod(2.0, 5.0)) == 10.0
    gx, gy = zx.grad(prod, (0, 1))(1.0, 2.0)
    assert (float(gx), float(gy)) == (2.0, 3.0)
    assert float(zx.jit(zx.grad(lambda x: prod(x, 2.0)))(1.0)) == 2.0
    np.testing.assert_allclose(zx.vmap(zx.grad(lambda x: prod(x, x)))(np.arange(3.0)), [5.0] * 3)

    @zx.custom_gradient
    def clip_gradient(x):          # one argument: the rule may return the bare cotangent
        return x, lambda g: znp.clip(g, -1.0, 1.0)

    np.testing.assert_allclose(zx.grad(lambda x: znp.sum(5.0 * clip_gradient(x)))(
        np.array([1.0, 2.0])), [1.0, 1.0])
    # the rule may use forward values; second derivatives differentiate the rule
    @zx.custom_gradient
    def cube(x):
        return x ** 3, lambda g: (g * 3.0 * x ** 2,)

    assert float(zx.grad(zx.grad(cube))(2.0)) == 12.0
    with pytest.raises(errors.ZeraxTypeError, match="pair"):
        zx.grad(zx.custom_gradient(lambda x: x))(1.0)
