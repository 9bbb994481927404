"""JAX's call forms that ported programs use: ``config.config_with_absl()``, the
five-argument ``lax.cond``, ``ad_checkpoint.print_saved_residuals``, and the function
``vjp`` returns being a pytree of its residuals (JAX's ``Partial``); references are
JAX 0.10's behaviour (recorded) and the plain Python equivalents."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax.ad_checkpoint import print_saved_residuals, saved_residuals
from zerax.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten


def test_config_with_absl_is_a_no_op():
    assert zx.config.config_with_absl() is None
    assert zx.config.parse_flags_with_absl() is None


def test_five_argument_cond():
    def f(p, a, b):
        return lax.cond(p, a, lambda x: x * 2.0, b, lambda y: y[0] - y[1])

    for p in (True, False):
        want = 6.0 if p else -1.0
        assert float(f(p, 3.0, (1.0, 2.0))) == want
        assert float(zx.jit(f)(p, 3.0, (1.0, 2.0))) == want
    ga, (gb0, gb1) = zx.grad(f, argnums=(1, 2))(False, 3.0, (1.0, 2.0))
    assert (float(ga), float(gb0), float(gb1)) == (0.0, 1.0, -1.0)
    with pytest.raises(TypeError, match="callable"):
        lax.cond(True, 1.0, 2.0)


def _f(x, y):
    a = znp.sin(x)
    b = znp.cos(a) * y
    return znp.sum(b * x)


def test_print_saved_residuals(capsys):
    # JAX 0.10 prints (its order: arguments, then outputs in program order; it also
    # keeps a convert_element_type that zerax has no use for):
    #   f64[3] from the argument x
    #   f64[3] output of cos from ...   (twice: cos(x) and cos(sin(x)))
    #   f64[3] output of sin from ...
    #   f64[3] output of mul from ...
    print_saved_residuals(_f, znp.ones(3), 2.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["f64[3] from the argument x", "f64[] from the argument y"]
    kinds = sorted(line.split(" from ")[0] for line in lines[2:])
    assert kinds == ["f64[3] output of cos", "f64[3] output of cos", "f64[3] output of mul",
                     "f64[3] output of sin"]
    assert all("test_jax_call_forms.py" in line for line in lines[2:])
    # a checkpointed function saves only its arguments (as JAX's)
    print_saved_residuals(zx.checkpoint(_f), znp.ones(3), 2.0)
    assert capsys.readouterr().out.splitlines() == ["f64[3] from the argument x",
                                                    "f64[] from the argument y"]
    res = saved_residuals(lambda d: znp.sum(znp.exp(d["a"]) * d["b"]),
                          {"a": znp.ones(2), "b": znp.ones(2)})
    assert [(a.str_short(), w.split(" from ")[0] if "output" in w else w) for a, w in res] == \
        [("f64[2]", "from the argument d['b']"), ("f64[2]", "output of exp")]


def test_vjp_function_is_a_pytree_of_residuals():
    x = np.array([0.1, 0.2, 0.3])
    y, f_vjp = zx.vjp(_f, x, 2.0)
    want = f_vjp(1.0)
    leaves, treedef = tree_flatten(f_vjp)
    assert len(leaves) == 5 and all(isinstance(r, zx.Array) for r in leaves)
    again = tree_unflatten(treedef, leaves)
    for g, w in zip(again(1.0), want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(tree_map(lambda r: r + 0.0, f_vjp)(1.0), want):
        np.testing.assert_array_equal(g, w)
    # through jit, in and out, and traced by make_jaxpr (JAX's saved_residuals idiom)
    for g, w in zip(zx.jit(lambda fv, c: fv(c))(f_vjp, 1.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    out, f_jit = zx.jit(lambda x, y: zx.vjp(_f, x, y))(x, 2.0)
    for g, w in zip(f_jit(1.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    closed, shape = zx.make_jaxpr(lambda *a: zx.vjp(_f, *a), return_shape=True)(x, 2.0)
    assert len(closed.jaxpr.outvars) == 1 + len(tree_leaves(shape[1]))
    # an integer input: no residual of its own, a float0 cotangent, as before
    _, f_int = zx.vjp(lambda x, n: x * n, 2.0, 3)
    ct_x, ct_n = tree_unflatten(tree_flatten(f_int)[1], tree_leaves(f_int))(1.0)
    assert float(ct_x) == 3.0 and ct_n.dtype == zx.dtypes.float0
