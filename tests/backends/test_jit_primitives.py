"""Every elementwise primitive under jit equals its eager (NumPy) result, on every backend
(the ``backend`` fixture of conftest.py).

Each family is one jitted program returning many results, so the suite compiles few
programs; the registry test checks that every primitive can be compiled (or says why
not)."""

import numpy as np
import pytest

import zerax as zx
from zerax._src.core.core import all_primitives, bind

PRIMS = all_primitives()

FLOAT_UNARY = ["neg", "exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan", "asin",
               "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt",
               "rsqrt", "cbrt", "logistic", "erf", "erfc", "erf_inv", "lgamma", "digamma",
               "abs", "sign", "floor", "ceil", "round", "is_finite", "isnan"]
FLOAT_BINARY = ["add", "sub", "mul", "div", "rem", "pow", "atan2", "max", "min", "eq", "ne",
                "lt", "le", "gt", "ge", "floor_divide"]
INT_BINARY = ["add", "sub", "mul", "rem", "max", "min", "eq", "ne", "lt", "le", "gt", "ge",
              "floor_divide", "and", "or", "xor", "shift_left", "shift_right"]


def _unary_program(x):
    return tuple(bind(PRIMS[n], x) for n in FLOAT_UNARY) + tuple(
        bind(PRIMS["integer_pow"], x, y=k) for k in (0, 1, 2, 3, 5, -2)) + tuple(
        bind(PRIMS["polygamma"], x, m=m) for m in (0, 1, 2))


def _float_binary_program(x, y):
    return tuple(bind(PRIMS[n], x, y) for n in FLOAT_BINARY)


def _int_binary_program(x, y):
    return tuple(bind(PRIMS[n], x, y) for n in INT_BINARY) + (bind(PRIMS["not"], x),)


def _select_convert_program(p, x, y, i):
    out = (bind(PRIMS["select_n"], p, x, y), bind(PRIMS["select_n"], i, x, y, x),
           bind(PRIMS["clamp"], np.float64(-0.5), x, np.float64(0.5)))
    for dt in (np.float32, np.int32, np.int64, np.bool_, np.uint8):
        out += (bind(PRIMS["convert_element_type"], x * 10.0, new_dtype=np.dtype(dt)),)
    out += (bind(PRIMS["convert_element_type"], p, new_dtype=np.dtype(np.float64)),)
    return out


def _compare(got, want):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        assert g.shape == w.shape, (k, g.shape, w.shape)
        if w.dtype.kind == "f":
            tol = 1e-5 if w.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=str(k))
        else:
            np.testing.assert_array_equal(g, w, err_msg=str(k))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_float_primitives_under_jit(dtype, backend):
    rng = np.random.default_rng(0)
    # values inside every function's domain, plus a 0-d case in the same program
    x = rng.uniform(0.15, 0.85, size=(3, 4)).astype(dtype)
    with np.errstate(all="ignore"):
        _compare(zx.jit(_unary_program)(x), _unary_program(x))


def test_unary_on_scalars_and_special_values_under_jit(backend):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5])
    with np.errstate(all="ignore"):
        _compare(zx.jit(_unary_program)(x), _unary_program(x))
        _compare(zx.jit(_unary_program)(np.float64(0.3)), _unary_program(np.float64(0.3)))


def test_float_binary_primitives_under_jit(backend):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 3.0, size=(5,))
    y = np.concatenate([rng.uniform(0.5, 2.0, size=(3,)), [np.nan, np.inf]])
    with np.errstate(all="ignore"):
        _compare(zx.jit(_float_binary_program)(x, y), _float_binary_program(x, y))
        _compare(zx.jit(_float_binary_program)(-x, y), _float_binary_program(-x, y))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_binary_primitives_under_jit(dtype, backend):
    x = np.array([-7, -1, 0, 3, 12], dtype)
    y = np.array([2, 3, 5, 1, 4], dtype)
    _compare(zx.jit(_int_binary_program)(x, y), _int_binary_program(x, y))


def test_bool_logic_under_jit(backend):
    p = np.array([True, False, True, False])
    q = np.array([True, True, False, False])
    f = lambda a, b: (bind(PRIMS["and"], a, b), bind(PRIMS["or"], a, b),  # noqa: E731
                      bind(PRIMS["xor"], a, b), bind(PRIMS["not"], a))
    _compare(zx.jit(f)(p, q), f(p, q))


def test_select_clamp_convert_under_jit(backend):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(6), rng.standard_normal(6)
    p, i = x > 0, np.array([0, 1, 2, 2, 1, 0], np.int32)
    _compare(zx.jit(_select_convert_program)(p, x, y, i), _select_convert_program(p, x, y, i))


def test_dot_general_variants_under_jit(backend):
    from zerax.lax import dot_general
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    ia, ib = (a * 3).astype(np.int64), (b * 3).astype(np.int64)

    def f(a, b, ia, ib):
        return (dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                dot_general(a, b, (((2,), (1,)), ((), ()))),
                dot_general(a, b, (((0, 2), (0, 1)), ((), ()))),
                dot_general(ia, ib, (((2,), (1,)), ((0,), (0,)))))
    _compare(zx.jit(f)(a, b, ia, ib), f(a, b, ia, ib))

    def in_loop(a, b):  # a product inside a loop body: loops in the kernel
        return zx.lax.fori_loop(0, 2, lambda i, acc: acc + dot_general(
            a, b, (((2,), (1,)), ((0,), (0,)))), np.zeros((2, 3, 5)))
    _compare(zx.jit(in_loop)(a, b), in_loop(a, b))


def test_every_primitive_can_be_compiled_or_says_why():
    """The kernel IR's lowering (backends/lowering/, shared by every target) has a
    statement rule, a scalar rule, a host step or a host call (`HOST_CALLED`) for every
    primitive, or the primitive
    says why not (``unsupported["lower"]``)."""
    from zerax._src.backends import lowering
    missing = [name for name, prim in sorted(PRIMS.items())
               if prim not in lowering.rules and prim not in lowering.scalar_rules
               and prim not in lowering.HOST and prim not in lowering.HOST_CALLED
               and "lower" not in prim.unsupported]
    assert not missing, f"no kernel-IR lowering (and no stated reason): {missing}"