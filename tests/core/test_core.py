"""The immutable Array, conversions, and the errors users see."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors


def test_array_is_immutable_and_points_to_at():
    x = zx.Array(np.array([1.0, 2.0]))
    with pytest.raises(errors.ImmutableArrayError, match=r"\.at\[idx\]\.set"):
        x[0] = 3.0
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 3.0  # the wrapped buffer is read-only


def test_array_copies_its_input():
    src = np.array([1.0, 2.0])
    x = zx.Array(src)
    src[0] = 100.0
    assert float(x._value[0]) == 1.0


def test_array_protocol_and_attributes():
    x = zx.Array(np.arange(6.0).reshape(2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3))
    assert float(zx.Array(np.array(2.5))) == 2.5
    assert int(zx.Array(np.array(3))) == 3
    assert bool(zx.Array(np.array(True)))
    assert zx.Array(np.array(1.5)).item() == 1.5
    assert repr(zx.Array(np.array([1.0, 2.0]))) == "Array([1., 2.], dtype=float64)"


def test_operators_follow_numpy2_dtypes():
    x32 = zx.Array(np.ones(3, np.float32))
    assert (x32 * 2.0).dtype == np.float32            # Python scalars are weak
    assert (x32 + np.ones(3)).dtype == np.float64
    i32 = zx.Array(np.ones(3, np.int32))
    assert (i32 + 1).dtype == np.int32
    assert (i32 / 2).dtype == np.float64
    assert (i32 * 2.5).dtype == np.float64
    assert (1 - i32).dtype == np.int32
    assert (i32 ** 2).dtype == np.int32
    assert (i32 < 2).dtype == np.bool_
    np.testing.assert_array_equal(-i32, -np.ones(3, np.int32))
    np.testing.assert_array_equal(np.ones(3) + x32, np.full(3, 2.0))  # reflected: ndarray op Array


def test_non_array_input_names_the_argument():
    with pytest.raises(TypeError, match="argument 0"):
        zx.grad(lambda x: x)("not an array")
    with pytest.raises(errors.ZeraxTypeError, match="object"):
        znp.sin(object())
    with pytest.raises(errors.ZeraxTypeError, match="argument 1"):
        zx.make_jaxpr(lambda a, b: a)(1.0, {"x": "str"})


def test_grad_non_scalar_output_suggests_vjp():
    with pytest.raises(errors.NonScalarOutputError, match=r"shape \(2,\).*vjp.*jacrev"):
        zx.grad(lambda x: x * 2.0)(np.array([1.0, 2.0]))


def test_grad_integer_input_says_pass_floats():
    with pytest.raises(errors.IntegerInputError, match="int64.*floats"):
        zx.grad(lambda x: x * 2)(3)


def test_python_control_flow_on_traced_value_names_function_and_line():
    def branchy(x):
        if x > 0:  # the line the message must name
            return x
        return -x

    with pytest.raises(errors.ConcretizationError) as info:
        zx.make_jaxpr(branchy)(1.0)
    msg = str(info.value)
    assert "branchy" in msg and "test_core.py" in msg and "lax.cond" in msg
    assert "where" in msg and "static" in msg
    for convert in (float, int, bool, lambda t: t.item()):
        with pytest.raises(errors.ConcretizationError):
            zx.make_jaxpr(lambda x: convert(x))(1.0)

    def looping(x):
        while x < 3:
            x = x + 1
        return x
    with pytest.raises(errors.ConcretizationError, match="looping"):
        zx.make_jaxpr(looping)(1.0)


def test_escaped_tracer_is_an_error_not_a_wrong_answer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    zx.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="ended"):
        znp.sin(leaked[0])
    zx.grad(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        leaked[-1] + 1.0


def test_shape_mismatch_names_both_shapes():
    a, b = zx.Array(np.ones(3)), zx.Array(np.ones(4))
    with pytest.raises(errors.ShapeError, match=r"\(3,\).*\(4,\)"):
        a + b
    with pytest.raises(errors.ShapeError, match=r"\(3,\).*\(4,\)"):
        zx.make_jaxpr(lambda x, y: x * y)(np.ones(3), np.ones(4))
    # caught by ported code either way: NumPy raises ValueError here, JAX TypeError
    for caught in (ValueError, TypeError):
        with pytest.raises(caught):
            a + b


def test_numpy_ufuncs_and_operators_on_zerax_arrays():
    # As with JAX's arrays: a NumPy ufunc converts (NumPy result), an ndarray operator
    # defers to zerax's (zerax result)
    a = zx.Array(np.arange(3.0))
    for got in (np.sin(a), np.add(a, 1), np.abs(a - np.ones(3)), np.maximum(a, 1.0)):
        assert type(got) is np.ndarray
    np.testing.assert_array_equal(np.sin(a), np.sin(np.arange(3.0)))
    for got in (np.ones(3) + a, np.ones(3) * a, np.float64(2.0) * a, np.ones(3) == a,
                np.ones((2, 3)) @ a):
        assert type(got) is zx.Array
    np.testing.assert_array_equal(np.ones(3) - a, 1.0 - np.arange(3.0))
    with pytest.raises(errors.TracerArrayConversionError):
        zx.grad(lambda x: np.sin(x))(1.0)


def test_numpy_conversion_of_a_tracer_is_a_clear_error():
    with pytest.raises(errors.TracerArrayConversionError, match="zerax.numpy"):
        zx.make_jaxpr(lambda x: np.sin(np.asarray(x)))(1.0)
