"""Tracing into the IR: printing, evaluation, typechecking, CSE and folding."""

import numpy as np
from hypothesis import given, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax._src.ir.ir import typecheck


def test_make_jaxpr_prints_like_a_jaxpr():
    text = str(zx.make_jaxpr(lambda x, y: znp.sin(x) * y + 1.0)(1.0, np.ones(3)))
    assert text.splitlines()[0] == "{ lambda ; a:f64[] b:f64[3]. let"
    assert "c:f64[] = sin a" in text
    assert "mul" in text and "in (" in text


def test_sub_programs_are_indented():
    f = zx.checkpoint(lambda x: znp.sin(x) * 2.0)
    text = str(zx.make_jaxpr(f)(1.0))
    inner = [line for line in text.splitlines() if "sin" in line][0]
    assert inner.startswith(" " * 8)


def test_constants_become_constvars():
    c = np.arange(3.0)
    closed = zx.make_jaxpr(lambda x: x * c)(np.ones(3))
    assert len(closed.consts) == 1
    assert str(closed).startswith("{ lambda a:f64[3]; b:f64[3]. let")


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_a_broadcast_constant_is_recorded_as_a_broadcast_of_its_base(shape, data):
    """A value NumPy holds as a broadcast view (an eager broadcast, vmap's broadcast of
    an unmapped operand) stays a broadcast of its small base in the program: never a
    constant the size of the view; the values are the view's."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    keep = tuple(i for i in range(len(shape)) if data.draw(st.booleans()))
    base = znp.asarray(rng.standard_normal([shape[i] for i in keep]))
    big = (64,) + tuple(shape)
    c = zx.lax.broadcast_in_dim(base, big, tuple(i + 1 for i in keep))   # eager: a view
    x = rng.standard_normal(big)
    for f in (lambda v: v * c,                                          # closed over
              zx.vmap(lambda v: v * zx.lax.broadcast_in_dim(          # unmapped in vmap
                  base, tuple(shape), keep))):
        closed = zx.make_jaxpr(f)(x)
        assert all(np.asarray(k).size <= max(base.size, 1) for k in closed.consts)
        np.testing.assert_array_equal(zx.jit(f)(x), x * np.asarray(c))


@given(st.floats(-3, 3), st.floats(-3, 3))
def test_eval_jaxpr_matches_eager(x, y):
    f = lambda a, b: znp.tanh(a) * b - znp.exp(a / 3.0) + b ** 2
    closed = zx.make_jaxpr(f)(x, y)
    typecheck(closed.jaxpr)
    (out,) = zx.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    np.testing.assert_allclose(out, f(x, y), rtol=1e-14)


def test_cse_merges_identical_equations():
    closed = zx.make_jaxpr(lambda x: znp.sin(x) + znp.sin(x))(1.0)
    assert str(closed).count("sin") == 1


def test_trivial_algebra_is_folded():
    text = str(zx.make_jaxpr(lambda x: -(-(x * 1.0 + -0.0)) / 1.0 - 0.0)(1.0))
    assert "let\n  in" in text  # no equations at all
    text = str(zx.make_jaxpr(lambda x: x ** 1)(1.0))
    assert "integer_pow" not in text


def test_signed_zeros_are_not_folded_or_merged():
    # -0.0 + 0.0 is +0.0, so x + 0.0 is not x; x * 0.0 and x * -0.0 differ in sign.
    def f(x):
        return x + 0.0, 0.0 + x, x - -0.0, x * 0.0, x * -0.0, x + -0.0, x - 0.0

    for x in (-0.0, 0.0, -2.5, 3.0):
        want = [np.float64(x) + 0.0, 0.0 + np.float64(x), np.float64(x) - -0.0,
                np.float64(x) * 0.0, np.float64(x) * -0.0, np.float64(x) + -0.0,
                np.float64(x) - 0.0]
        for got in (f(znp.asarray(x)), zx.jit(f)(znp.asarray(x))):
            for g, w in zip(got, want):
                assert float(g) == w and np.signbit(float(g)) == np.signbit(w)


def test_derivative_programs_typecheck_for_every_order():
    f = lambda x: znp.tanh(x) * znp.sin(x)
    sizes = []
    for _ in range(5):
        f = zx.grad(f)
        closed = zx.make_jaxpr(f)(0.3)
        typecheck(closed.jaxpr)
        sizes.append(len(closed.eqns))
    assert sizes == sorted(sizes)
