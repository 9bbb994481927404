"""Lowerings of the shape, reduction, misc and call primitives (ops/shape.py,
ops/reduce.py, ops/misc.py, custom.py): ``zerax.jit(f)`` must give eager ``f``'s values,
dtypes and shapes.

Compiles grow faster than linearly with a kernel's size, so the primitives are spread
over a few small programs, and hypothesis varies only the values
(and the dynamic start indices), never the shapes: every example after the first reuses
the compiled program.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax._src.backends.lowering import context as lowering_context

# every test runs once per backend (the backend fixture, tests/conftest.py)
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("backend")]

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def elements(dtype, special=True):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(-3, 3)  # small: many ties (first occurrence matters)
    finite = st.floats(-3.0, 3.0, width=dtype.itemsize * 8)
    if not special:
        return finite
    return st.one_of(finite, finite, finite, st.sampled_from([np.nan, np.inf, -np.inf]))


def assert_same(jitted, eager):
    jl, el = zx.tree_util.tree_leaves(jitted), zx.tree_util.tree_leaves(eager)
    assert len(jl) == len(el)
    for k, (j, e) in enumerate(zip(jl, el)):
        j, e = np.asarray(j), np.asarray(e)
        assert j.dtype == e.dtype, (k, j.dtype, e.dtype)
        assert j.shape == e.shape, (k, j.shape, e.shape)
        if e.dtype == np.float64:
            np.testing.assert_allclose(j, e, rtol=1e-12, atol=1e-12, err_msg=f"output {k}")
        elif e.dtype.kind == "f":
            np.testing.assert_allclose(j, e, rtol=1e-5, atol=1e-4, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(j, e, err_msg=f"output {k}")


def check_jit(f, *args):
    assert_same(zx.jit(f)(*args), f(*args))


def prims_of(f, *args):
    return str(zx.make_jaxpr(f)(*args))


# --------------------------------------------------------------------------- programs
# x: (3, 4, 5); s0, s1, s2: 0-d start indices (int32, int64, uint8); w: (2, 150).


def broadcast_reshape(x, s0, s1, s2):
    col = lax.slice(x, (0, 0, 0), (3, 1, 5))
    return [lax.broadcast_in_dim(x, (2, 3, 4, 5), (1, 2, 3)),
            lax.broadcast_in_dim(col, (3, 6, 5, 2), (0, 1, 2)),
            lax.reshape(x, (5, 12)), lax.squeeze(lax.reshape(x, (3, 1, 4, 5)), (1,))]


def transpose_concat(x, s0, s1, s2):
    col = lax.slice(x, (0, 0, 0), (3, 1, 5))
    return [lax.transpose(x, (2, 0, 1)), lax.rev(x, (0, 2)),
            lax.slice(x, (1, 0, 1), (3, 4, 5), (1, 3, 2)),
            lax.concatenate([x, col, lax.slice(x, (0, 0, 0), (3, 2, 5))], 1)]


def pads(x, s0, s1, s2):
    pv = np.ones((), x.dtype)
    return [lax.pad(x, pv, ((1, -1, 1), (-2, 3, 0), (0, 0, 2))),
            lax.pad(x, pv, ((-1, 0, 0), (0, -2, 0), (-1, -1, 0))),  # a pure crop
            lax.pad(x, pv, ((-3, -2, 2), (2, 2, 1), (-4, 1, 0)))]


def dynamic(x, s0, s1, s2):
    update = lax.rev(lax.slice(x, (0, 0, 0), (2, 2, 3)), (1,))
    return [lax.dynamic_slice(x, (s0, s1, s2), (2, 3, 2)),
            lax.dynamic_slice(x, (1, -5, 100), (2, 2, 2)),  # literal starts, clamped
            lax.dynamic_update_slice(x, update, (s2, s0, s1)),
            lax.iota(x.dtype if x.dtype != np.bool_ else np.int32, (3, 4), 1),
            lax.iota(x.dtype, (2, 5), 0), lax.stop_gradient(x)]


def sums(x, w):
    """w: (2, 150): rows long enough for NumPy's recursive pairwise summation."""
    return [lax.reduce_sum(x, (1, 2)), lax.reduce_sum(x, (0,)), lax.reduce_sum(x, (0, 1, 2)),
            lax.reduce_sum(w, (1,))]


def max_min_prod(x, w):
    """Over trailing axes (a row per output), other axes (memory order), everything."""
    return [lax.reduce_max(x, (0, 2)), lax.reduce_max(x, (2,)),
            lax.reduce_min(x, (0, 1, 2)), lax.reduce_min(x, (1,)),
            lax.reduce_prod(x, (1, 2)), lax.reduce_prod(x, (0,))]


def arg(x, w):
    return [lax.argmax(x, 2), lax.argmin(x, 1, np.int32), lax.argmax(w, 0)]


def cumulative(x, w):
    return [lax.cumsum(x, 1, reverse=True), lax.cumprod(x, 0), lax.cummax(x, 2, reverse=True),
            lax.cummin(x, 0, reverse=True)]


def dtype_dependent(x, s0, s1, s2):
    """The shape rules whose code depends on the dtype (fill values, casts)."""
    return [lax.pad(x, np.ones((), x.dtype), ((1, -1, 1), (-2, 3, 0), (0, 0, 2))),
            lax.iota(x.dtype, (2, 5), 0),
            lax.dynamic_update_slice(x, lax.slice(x, (0, 0, 0), (2, 2, 3)), (s2, s0, s1))]


def arg_cumulative(x, w):
    return [lax.argmax(x, 2), lax.argmin(x, 0), lax.cumsum(x, 1, reverse=True),
            lax.cumprod(x, 0), lax.cummax(x, 2), lax.cummin(x, 1, reverse=True)]


def max_min_prod_small(x, w):
    return [lax.reduce_max(x, (0, 2)), lax.reduce_min(x, (0, 1, 2)), lax.reduce_prod(x, (1, 2))]


SHAPE_CASES = [(f, np.float64) for f in (broadcast_reshape, transpose_concat, pads, dynamic)] + \
    [(dtype_dependent, d) for d in (np.float32, np.int32, np.bool_)]
REDUCE_CASES = [(f, np.float64) for f in (sums, max_min_prod, arg, cumulative)] + \
    [(sums, np.float32)] + \
    [(f, d) for d in (np.int32, np.bool_) for f in (max_min_prod_small, arg_cumulative)]


def case_id(case):
    return f"{case[0].__name__}-{np.dtype(case[1]).name}"


starts = st.tuples(st.integers(-6, 6).map(np.int32), st.integers(-6, 6).map(np.int64),
                   st.integers(0, 255).map(np.uint8))


@pytest.mark.parametrize("case", SHAPE_CASES, ids=case_id)
@SETTINGS
@given(data=st.data())
def test_shape_ops(case, data):
    program, dtype = case
    x = data.draw(hnp.arrays(dtype, (3, 4, 5), elements=elements(dtype)))
    check_jit(program, x, *data.draw(starts))


@pytest.mark.parametrize("case", REDUCE_CASES, ids=case_id)
@SETTINGS
@given(data=st.data())
def test_reductions(case, data):
    program, dtype = case
    x = data.draw(hnp.arrays(dtype, (3, 4, 5), elements=elements(dtype)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    w = (rng.standard_normal((2, 150)) * 2).astype(dtype)  # (too big for hypothesis)
    check_jit(program, x, w)


def scalar_program(x, s):
    """0-d operands and results (held as scalars by the backend)."""
    y = lax.reshape(x, (1, 1))
    v = lax.concatenate([lax.reshape(x, (1,)), lax.reshape(x * 2.0, (1,))], 0)
    return [
        lax.broadcast_in_dim(x, (2, 3), ()), lax.squeeze(y, (0, 1)),
        lax.reduce_sum(v, (0,)), lax.reduce_max(y, (0, 1)), lax.argmax(v, 0, np.int32),
        lax.cumsum(v, 0, reverse=True), lax.dynamic_slice(x, (), ()),
        lax.reshape(lax.dynamic_slice(v, (s,), (1,)), ()),
        lax.dynamic_update_slice(v, lax.reshape(x, (1,)), (s,)),
        lax.pad(lax.reshape(x, (1,)), x, ((1, 2, 0),)), lax.stop_gradient(x),
    ]


@SETTINGS
@given(data=st.data())
def test_zero_dimensional(data):
    x = data.draw(hnp.arrays(np.float64, (), elements=elements(np.float64)))
    s = np.int64(data.draw(st.integers(-2, 3)))
    check_jit(scalar_program, x, s)


def empty_program(x, y):  # x: float64 (0, 3); y: int32 (0, 3)
    pv = np.zeros((), x.dtype)
    return [
        lax.reduce_sum(x, (0,)), lax.reduce_max(x, (0,)), lax.reduce_min(y, (0, 1)),
        lax.reduce_max(y, (0,)), lax.reduce_prod(x, (0,)), lax.reduce_sum(x, (1,)),
        lax.argmax(x, 1), lax.cumsum(x, 0), lax.concatenate([x, x], 0),
        lax.pad(x, pv, ((1, 1, 2), (0, -1, 1))), lax.transpose(x, (1, 0)),
        lax.reshape(x, (3, 0)), lax.slice(x, (0, 1), (0, 3)),
        lax.broadcast_in_dim(x, (2, 0, 3), (1, 2)), lax.dynamic_slice(x, (0, 1), (0, 2)),
        lax.iota(np.int32, (0, 4), 1),
    ]


def test_empty_arrays():
    check_jit(empty_program, np.zeros((0, 3), np.float64), np.zeros((0, 3), np.int32))


def test_argmax_first_nan_and_ties():
    x = np.array([[1.0, 3.0, 3.0, np.nan, 5.0, np.nan],
                  [2.0, 2.0, -1.0, -1.0, 0.0, 0.0],
                  [np.nan, 1.0, 2.0, 3.0, 4.0, np.nan]])

    def f(x):
        return [lax.argmax(x, 1), lax.argmin(x, 0)]
    out = zx.jit(f)(x)
    assert_same(out, f(x))
    np.testing.assert_array_equal(out[0], [3, 0, 0])  # the first NaN, the first maximum
    np.testing.assert_array_equal(out[1], [2, 2, 1, 0, 1, 0])


def test_argmax_of_empty_axis_raises():
    with pytest.raises(errors.ShapeError):
        zx.jit(lambda x: lax.argmax(x, 1))(np.zeros((2, 0)))


def test_parallel_loops(monkeypatch):
    """Every top-level loop nest becomes a parallel loop: results must not change."""
    monkeypatch.setattr(lowering_context, "PARALLEL_THRESHOLD", 1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 9))
    x[2, 3] = np.nan

    def f(x):
        return [lax.reduce_sum(x, (1,)), lax.argmin(x, 0), lax.cumsum(x, 1)]
    text = zx.jit(f).lower(x).as_text()
    assert "parallel for" in text
    check_jit(f, x)


# --------------------------------------------------------------------------- derivatives


def loss(x, w, s):
    """Uses most shape and reduction primitives; x: (3, 4), w: (4,)."""
    y = lax.broadcast_in_dim(w, (3, 4), (1,)) * x
    y = lax.concatenate([y, lax.rev(x, (1,))], 1)  # (3, 8)
    y = lax.pad(y, 0.5, ((1, -1, 1), (0, 2, 0)))  # (5, 10)
    z = lax.reshape(lax.transpose(y, (1, 0)), (5, 10))
    u = lax.dynamic_update_slice(z, lax.dynamic_slice(z, (s, 1), (3, 2)) * 2.0, (1, s))
    v = lax.cumsum(lax.slice(u, (0, 0), (5, 10), (1, 3)), 1, reverse=True)
    return lax.reduce_sum(v * lax.stop_gradient(v), (0, 1))


def test_jit_of_grad():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    g = zx.grad(loss, argnums=(0, 1))
    for s in (np.int64(0), np.int64(2), np.int64(7)):
        assert_same(zx.jit(g)(x, w, s), g(x, w, s))


# --------------------------------------------------------------------------- call primitives


@zx.checkpoint
def block(x, w):
    return znp.tanh(lax.cumsum(x * w, 0)), lax.transpose(x, (1, 0))


def ckpt_loss(x, w):
    y, t = block(x, w)
    return lax.reduce_sum(y * y, (0, 1)) + lax.reduce_sum(t, (0, 1))


def test_checkpoint():
    rng = np.random.default_rng(2)
    x, w, t = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((3, 4))
    assert "checkpoint" in prims_of(zx.grad(ckpt_loss, argnums=(0, 1)), x, w)
    check_jit(zx.grad(ckpt_loss, argnums=(0, 1)), x, w)

    def fwd(x, t):
        return zx.jvp(lambda x: ckpt_loss(x, w), (x,), (t,))
    assert "checkpoint_jvp" in prims_of(fwd, x, t)
    check_jit(fwd, x, t)


def test_checkpoint_jvp_with_constants():
    """The JVP program traced at lowering time holds a non-uniform constant array."""
    weights = np.arange(12.0).reshape(3, 4) - 5.0

    @zx.custom_jvp
    def g(x):
        return znp.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return g(x), t * weights

    h = zx.checkpoint(lambda x: (g(x) * 2.0, lax.argmax(x, 1)))

    def fwd(x, t):
        out, t_out = zx.jvp(h, (x,), (t,))
        return out, t_out[0]  # (the integer output's tangent is float0)
    x, t = np.linspace(-1, 1, 12).reshape(3, 4), np.ones((3, 4))
    assert "checkpoint_jvp" in prims_of(fwd, x, t)
    out = zx.jit(fwd)(x, t)
    assert_same(out, fwd(x, t))
    np.testing.assert_allclose(out[1], 2.0 * weights, rtol=1e-12)  # the custom rule


def test_custom_jvp_and_vjp():
    @zx.custom_jvp
    def f(x):
        return lax.reduce_sum(znp.sin(x), (1,))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), lax.reduce_sum(2.0 * znp.cos(x) * t, (1,))

    @zx.custom_vjp
    def g(x):
        return lax.cumsum(znp.exp(x), 1)

    g.defvjp(lambda x: (g(x), znp.exp(x)),
             lambda ex, ct: (ex * lax.cumsum(ct, 1, reverse=True) * 3.0,))

    def both(x):
        return lax.reduce_sum(f(x), (0,)) + lax.reduce_sum(g(x), (0, 1))

    x = np.linspace(-1, 1, 12).reshape(3, 4)
    assert "custom_jvp_call" in prims_of(f, x)
    assert "custom_vjp_call" in prims_of(g, x)
    check_jit(f, x)
    check_jit(g, x)
    grad = zx.jit(zx.grad(both))(x)
    assert_same(grad, zx.grad(both)(x))
    ex = np.exp(x)
    expected = 2.0 * np.cos(x) + 3.0 * ex * np.cumsum(np.ones((3, 4)), 1)[:, ::-1]
    np.testing.assert_allclose(grad, expected, rtol=1e-12)  # the user's rules were used


def test_call_outputs_are_fresh():
    x = np.arange(6.0).reshape(2, 3)
    out = zx.jit(zx.checkpoint(lambda x: (x, 1.0)))(x)
    assert_same(out, (x, np.float64(1.0)))
    assert not np.shares_memory(np.asarray(out[0]), x)


def test_uncompilable_calls_raise():
    class Square(zx.Function):
        def forward(self, x):
            return x ** 2

        def backward(self, gy):
            (x,) = self.inputs
            return 2 * x * gy

    x = np.arange(3.0)
    with pytest.raises(errors.NotSupportedError):
        zx.jit(Square())(x)

    @zx.custom_vjp
    def g(x):
        return znp.sin(x)

    g.defvjp(lambda x: (g(x), znp.cos(x)), lambda c, ct: (c * ct,))
    with pytest.raises(errors.NotSupportedError):
        zx.jit(lambda x, t: zx.jvp(g, (x,), (t,)))(x, x)
