"""The transforms' APIs agree with JAX's (jax_enable_x64 semantics): argument handling,
result structures and dtypes, and clear zerax errors where JAX refuses.  The expected
values are JAX's documented behaviour, NumPy, or finite differences (check_grads)."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

float0 = zx.dtypes.float0
a3 = np.arange(1.0, 4.0)


# --------------------------------------------------------------------------- grad


def test_grad_allow_int_gives_float0_zeros():
    f = lambda x, n: x * n
    gx, gn = zx.grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert gn.dtype == float0 and gn.shape == ()
    v, (gx, gn) = zx.value_and_grad(lambda x, n: znp.sum(x * n), argnums=(0, 1),
                                    allow_int=True)(a3, np.arange(3))
    np.testing.assert_allclose(gx, [0.0, 1.0, 2.0])
    assert gn.dtype == float0 and gn.shape == (3,)
    g = zx.grad(lambda d: znp.sum(d["f"]) * 2, allow_int=True)({"f": a3, "i": np.arange(2)})
    np.testing.assert_allclose(g["f"], [2.0, 2.0, 2.0])
    assert g["i"].dtype == float0 and g["i"].shape == (2,)
    with pytest.raises(errors.IntegerInputError, match="allow_int"):
        zx.grad(lambda x, n: x * n, argnums=(0, 1))(2.0, 3)


def test_grad_allow_int_under_jit_and_vmap():
    g = zx.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)
    gx, gn = zx.jit(g)(2.0, 3)
    assert float(gx) == 3.0 and gn.dtype == float0
    gx, gn = zx.vmap(g)(np.ones(2), np.arange(2))
    np.testing.assert_allclose(gx, [0.0, 1.0])
    assert gn.dtype == float0 and gn.shape == (2,)


def test_grad_reduce_axes_only_default():
    np.testing.assert_allclose(zx.grad(lambda x: znp.sum(x ** 2), reduce_axes=())(a3), 2 * a3)
    with pytest.raises(errors.NotSupportedError, match="reduce_axes"):
        zx.grad(lambda x: znp.sum(x ** 2), reduce_axes=("i",))


def test_argnums_validation():
    f = lambda x, y: x * y
    with pytest.raises(errors.ZeraxTypeError, match="argnums"):
        zx.grad(f, argnums=0.0)(1.0, 2.0)
    with pytest.raises(errors.ZeraxValueError, match="more than once"):
        zx.grad(f, argnums=(0, 0))(1.0, 2.0)
    g = zx.grad(f, argnums=[1, 0])(2.0, 3.0)
    assert isinstance(g, tuple) and (float(g[0]), float(g[1])) == (2.0, 3.0)


# --------------------------------------------------------------------------- jvp / vjp


def test_jvp_tangent_dtypes_must_match_as_in_jax():
    with pytest.raises(errors.ZeraxTypeError, match="dtype"):
        zx.jvp(lambda x: x * 2, (a3,), (a3.astype(np.float32),))
    with pytest.raises(errors.ZeraxTypeError, match="float0"):
        zx.jvp(lambda x: x * 2, (np.arange(3),), (np.ones(3),))
    y, t = zx.jvp(lambda x: x * 2, (np.arange(3),), (np.zeros(3, float0),))
    np.testing.assert_array_equal(y, [0, 2, 4])
    assert t.dtype == float0


def test_jvp_has_aux_needs_a_pair():
    y, t, aux = zx.jvp(lambda x: (x * 2, znp.sum(x)), (a3,), (a3,), has_aux=True)
    np.testing.assert_allclose(t, 2 * a3)
    assert float(aux) == 6.0
    with pytest.raises(errors.ZeraxTypeError, match="pair"):
        zx.jvp(lambda x: x * 2, (a3,), (a3,), has_aux=True)


def test_vjp_cotangent_dtype_must_match():
    _, f_vjp = zx.vjp(lambda x: x * 2, a3)
    with pytest.raises(errors.ZeraxTypeError, match="dtype"):
        f_vjp(np.ones(3, np.float32))
    _, f_vjp = zx.vjp(lambda x: x * 2, np.ones(3, np.float32))
    with pytest.raises(errors.ZeraxTypeError, match="dtype"):
        f_vjp(np.ones(3))
    (g,) = f_vjp(np.ones(3, np.float32))
    assert g.dtype == np.float32


def test_linearize_has_aux_and_tangent_checks():
    f = lambda x: (znp.sin(x) * x, {"s": znp.sum(x)})
    y, f_jvp, aux = zx.linearize(f, a3, has_aux=True)
    np.testing.assert_allclose(y, np.sin(a3) * a3)
    np.testing.assert_allclose(f_jvp(np.ones(3)), np.cos(a3) * a3 + np.sin(a3))
    assert float(aux["s"]) == 6.0
    y, f_jvp = zx.linearize(lambda x: x ** 2, a3)
    with pytest.raises(errors.ZeraxTypeError, match="dtype"):
        f_jvp(np.ones(3, np.float32))


# --------------------------------------------------------------------------- vmap


def test_vmap_spmd_axis_name_accepted_and_out_axes_none_returns_value_as_is():
    np.testing.assert_allclose(zx.vmap(lambda x: x * 2, spmd_axis_name="i")(a3), 2 * a3)
    y, c = zx.vmap(lambda x: (x * 2, 3.0), out_axes=(0, None))(a3)
    np.testing.assert_allclose(y, 2 * a3)
    assert c == 3.0 and type(c) is float      # JAX hands an unbatched leaf back unchanged
    with pytest.raises(errors.ZeraxValueError, match="out_axes=None"):
        zx.vmap(lambda x: x * 2, out_axes=None)(a3)


# --------------------------------------------------------------------------- jacobians


def test_jacobians_holomorphic():
    z = a3 + 1j
    want = np.diag(2 * z)                       # d(z^2)/dz
    np.testing.assert_allclose(zx.jacfwd(lambda z: z ** 2, holomorphic=True)(z), want)
    np.testing.assert_allclose(zx.jacrev(lambda z: z ** 2, holomorphic=True)(z), want)
    np.testing.assert_allclose(
        zx.hessian(lambda z: znp.sum(z ** 3), holomorphic=True)(z), np.diag(6 * z))
    for jac in (zx.jacfwd, zx.jacrev, zx.hessian):
        with pytest.raises(errors.ZeraxTypeError, match="holomorphic=True requires complex"):
            jac(lambda z: znp.sum(z ** 2), holomorphic=True)(a3)
    with pytest.raises(errors.ZeraxTypeError, match="real-valued inputs"):
        zx.jacfwd(lambda z: z * 2)(z)


def test_jacrev_refuses_integer_and_complex_outputs():
    with pytest.raises(errors.ZeraxTypeError, match="real-valued"):
        zx.jacrev(lambda x: (x > 1).astype(int))(a3)
    with pytest.raises(errors.ZeraxTypeError, match="real-valued"):
        zx.jacrev(lambda x: x * (1 + 2j))(a3)
    # jacfwd accepts a complex output of real inputs (as JAX)
    np.testing.assert_allclose(zx.jacfwd(lambda x: x * (1 + 2j))(a3), np.eye(3) * (1 + 2j))


def test_jacrev_allow_int_and_kwargs():
    jx, jn = zx.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(a3, np.arange(3))
    np.testing.assert_allclose(jx, np.diag([0.0, 1.0, 2.0]))
    assert jn.dtype == np.int64 and jn.shape == (3, 3) and not np.any(np.asarray(jn))
    f = lambda x, c: znp.sum(x ** 3) * c
    np.testing.assert_allclose(zx.jacrev(f)(a3, c=2.0), 6 * a3 ** 2)
    np.testing.assert_allclose(zx.jacfwd(f)(a3, c=2.0), 6 * a3 ** 2)
    np.testing.assert_allclose(zx.hessian(f)(a3, c=2.0), np.diag(12 * a3))


# --------------------------------------------------------------------------- custom rules


def test_custom_rule_keywords_accepted():
    @zx.custom_jvp
    def f(x):
        return x * 2
    f.defjvp(lambda p, t: (f(*p), t[0] * 7.0), symbolic_zeros=False)
    assert float(zx.grad(f)(1.0)) == 7.0
    with pytest.raises(errors.NotSupportedError, match="symbolic_zeros"):
        f.defjvp(lambda p, t: (f(*p), t[0]), symbolic_zeros=True)

    @zx.custom_vjp
    def g(x):
        return x * 2
    g.defvjp(lambda x: (g(x), None), lambda r, ct: [ct * 5], optimize_remat=False,
             symbolic_zeros=False)      # bwd may return a list, as in JAX
    assert float(zx.grad(g)(2.0)) == 5.0
    assert float(zx.jit(zx.grad(g))(2.0)) == 5.0


def test_custom_vjp_bwd_cotangent_shapes_are_checked():
    @zx.custom_vjp
    def f(x, y):
        return znp.sin(x) * y
    # y is a scalar but the rule hands back a (3,) cotangent for it: JAX refuses.
    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda r, g: (znp.cos(r[0]) * r[1] * g,
                                                           znp.sin(r[0]) * g))
    with pytest.raises(errors.ShapeError, match="cotangent of shape"):
        zx.grad(lambda x, y: znp.sum(f(x, y)), argnums=(0, 1))(a3, 3.0)


def test_custom_jvp_tangent_shape_and_dtype_are_checked():
    # JAX refuses a tangent whose shape or dtype is not its primal's (silently wrong here
    # before); a Python scalar tangent takes the primal's dtype.
    for bad in (lambda p, t: (p * 2, znp.ones(3)),
                lambda p, t: (p * 2, t.astype(np.float64))):
        f = zx.custom_jvp(lambda x: x * 2)
        f.defjvp(lambda primals, tangents, bad=bad: bad(primals[0], tangents[0]))
        with pytest.raises(TypeError, match="tangent must have its primal's shape and dtype"):
            zx.jvp(f, (np.float32(1.0),), (np.float32(1.0),))
    g = zx.custom_jvp(lambda x: x * 2)
    g.defjvp(lambda primals, tangents: (primals[0] * 2, 2.0))
    out, tangent = zx.jvp(g, (np.float32(1.0),), (np.float32(1.0),))
    assert tangent.dtype == np.float32 and float(tangent) == 2.0


def test_checkpoint_kwargs_and_policies():
    f = zx.checkpoint(lambda x, y: znp.sin(x) * y)
    check_grads(lambda x: f(x, y=3.0), (1.0,), order=2, modes=("rev",))
    assert float(zx.grad(f)(0.0, y=3.0)) == 3.0
    g = zx.checkpoint(lambda x: znp.sin(znp.sin(x)),
                      policy=zx.checkpoint_policies.nothing_saveable)
    np.testing.assert_allclose(zx.grad(g)(1.0), np.cos(np.sin(1.0)) * np.cos(1.0))
    h = zx.remat(lambda x, n: x ** n, static_argnums=-1)
    assert float(zx.grad(h)(2.0, 3)) == 12.0


# --------------------------------------------------------------------------- jit / make_jaxpr


def _flag(x, flag):
    return x + 1 if flag else x - 1


_jit_num = zx.jit(_flag, static_argnums=1)
_jit_name = zx.jit(_flag, static_argnames="flag")
_jit_neg = zx.jit(_flag, static_argnums=-1)


def test_jit_static_args_resolved_against_the_signature():
    np.testing.assert_allclose(_jit_num(a3, flag=True), a3 + 1)   # by keyword too
    np.testing.assert_allclose(_jit_name(a3, False), a3 - 1)       # positionally too
    np.testing.assert_allclose(_jit_neg(a3, True), a3 + 1)
    with pytest.raises(errors.ZeraxValueError, match="static_argnums"):
        zx.jit(lambda x: x, static_argnums=3)


def test_jit_accepts_jax_options_and_eval_shape():
    f = zx.jit(lambda x, y: x * 2, donate_argnames="x", keep_unused=True, inline=True)
    np.testing.assert_allclose(f(a3, a3), 2 * a3)
    s = zx.jit(lambda x: (x.sum(), x[:2])).eval_shape(a3)
    assert s == (zx.ShapeDtypeStruct((), np.float64), zx.ShapeDtypeStruct((2,), np.float64))


def test_make_jaxpr_return_shape_kwargs_and_negative_static():
    closed, shape = zx.make_jaxpr(lambda x: (x.sum(), x), return_shape=True)(a3)
    assert shape == (zx.ShapeDtypeStruct((), np.float64), zx.ShapeDtypeStruct((3,), np.float64))
    assert len(zx.make_jaxpr(lambda x, y: x * y)(a3, y=a3).jaxpr.invars) == 2
    closed = zx.make_jaxpr(_flag, static_argnums=-1)(a3, True)
    assert len(closed.jaxpr.invars) == 1
    np.testing.assert_allclose(zx.eval_jaxpr(closed.jaxpr, closed.consts, a3)[0], a3 + 1)


# --------------------------------------------------------------------------- tree_util

tu = zx.tree_util


class _Box:
    def __init__(self, v, w):
        self.v, self.w = v, w


tu.register_pytree_with_keys(
    _Box, lambda b: (((tu.GetAttrKey("v"), b.v), (tu.GetAttrKey("w"), b.w)), "aux"),
    lambda aux, c: _Box(*c))


def test_tree_util_keyed_registration_and_paths():
    pairs = tu.tree_leaves_with_path({"b": _Box(1, [2]), "a": 0})
    assert [(tu.keystr(p), x) for p, x in pairs] == [("['a']", 0), ("['b'].v", 1),
                                                     ("['b'].w[0]", 2)]
    assert tu.keystr(pairs[2][0], simple=True, separator="/") == "b/w/0"
    b = tu.tree_map(lambda x: x * 10, _Box(1, (2,)))
    assert (b.v, b.w) == (10, (20,))
    g = zx.grad(lambda b: b.v * b.w)(_Box(2.0, 3.0))
    assert (float(g.v), float(g.w)) == (3.0, 2.0)


def test_tree_util_errors_are_zerax_errors():
    with pytest.raises(errors.ZeraxValueError):
        tu.tree_map(lambda x, y: x, [1, 2], [3])
    with pytest.raises(errors.ZeraxValueError):
        tu.tree_unflatten(tu.tree_structure([0, 0]), [1])
    with pytest.raises(errors.ZeraxTypeError, match="initializer"):
        tu.tree_reduce(lambda a, b: a + b, [])
    with pytest.raises(errors.ZeraxValueError):
        tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(1, 2), (3,)])
