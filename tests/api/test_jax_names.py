"""JAX's small top-level names that ported programs call: ``numpy.ndarray`` as the type of
every zerax value (tracers included), ``row_stack``, ``real_if_close``, the scalar types as
casts, lax's shape helpers and ``ad_checkpoint.checkpoint_name``."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax.ad_checkpoint import checkpoint, checkpoint_name, checkpoint_policies

# --------------------------------------------------------------------------- ndarray


def test_ndarray_isinstance_concrete_and_foreign():
    assert isinstance(znp.ones(3), znp.ndarray)
    assert isinstance(znp.array(1.0), znp.ndarray)
    for v in (np.ones(3), np.float64(1.0), 1.0, 2, True, 1j, [1.0]):
        assert not isinstance(v, znp.ndarray), v
    assert issubclass(zx.Array, znp.ndarray) and not issubclass(np.ndarray, znp.ndarray)
    with pytest.raises(errors.ZeraxTypeError, match="cannot be instantiated"):
        znp.ndarray((2,))


def test_ndarray_isinstance_under_every_transform():
    seen = []

    def f(x):
        seen.append(isinstance(x, znp.ndarray))
        return znp.sin(x).sum()

    x = znp.array([0.5, 1.0])
    zx.jit(f)(x)
    zx.grad(f)(x)
    zx.vmap(f)(x)
    zx.jvp(f, (x,), (x,))
    zx.grad(lambda y: zx.grad(f)(y).sum())(x)
    zx.jit(zx.vmap(zx.grad(f)))(znp.ones((2, 2)))
    assert len(seen) >= 6 and all(seen), seen


# --------------------------------------------------------------------------- row_stack


def test_row_stack_is_vstack():
    a, b = np.arange(3.0), np.arange(3.0, 6.0)
    np.testing.assert_array_equal(znp.row_stack([a, b]), np.vstack([a, b]))
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(znp.row_stack((m, a.astype(int))),
                                  np.vstack((m, a.astype(int))))
    out = zx.jit(lambda x, y: znp.row_stack([x, y]))(a, b)
    np.testing.assert_array_equal(out, np.vstack([a, b]))
    assert znp.row_stack([a, b], dtype=np.float32).dtype == np.float32


# --------------------------------------------------------------------------- real_if_close


@pytest.mark.parametrize("value, tol", [
    ([2.1 + 4e-14j, 5.2 + 3e-15j], 100),
    ([2.1 + 4e-14j, 5.2 + 3e-15j], 1000),
    ([2.1 + 4e-13j, 5.2 + 3e-15j], 1000),
    ([1.0 + 1e-3j], 1e-2),            # tol <= 1 is absolute
    ([1.0 + 1e-3j], 1e-4),
    (np.array([1 + 1e-6j], np.complex64), 100),
    (np.array([1 + 1e-8j], np.complex64), 100),
    ([1.5, 2.5], 100),
    ([1, 2], 100),
])
def test_real_if_close_matches_numpy(value, tol):
    a = np.asarray(value)
    want = np.real_if_close(a, tol=tol)
    got = znp.real_if_close(znp.asarray(a), tol=tol)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_real_if_close_under_transforms():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(zx.jit(znp.real_if_close)(x), x)   # real: unchanged
    with pytest.raises(errors.ConcretizationError, match="real_if_close"):
        zx.jit(znp.real_if_close)(x + 1e-20j)
    # under grad the decision uses the concrete value; the real part stays differentiable
    g = zx.grad(lambda t: znp.real_if_close(t * (1 + 0j)) ** 2)(3.0)
    assert float(g) == 6.0


# --------------------------------------------------------------------------- scalar types


def test_scalar_types_cast_like_jax():
    out = znp.int64(2.7)
    assert isinstance(out, znp.ndarray) and out.dtype == np.int64 and int(out) == 2
    assert znp.float32(np.arange(3)).dtype == np.float32
    f = zx.jit(lambda x: znp.int32(x))
    np.testing.assert_array_equal(f(np.array([1.7, -2.5])), np.array([1, -2], np.int32))
    assert f(np.array([1.7])).dtype == np.int32
    np.testing.assert_array_equal(zx.vmap(znp.int64)(np.array([0.5, 3.9])), [0, 3])
    assert float(zx.grad(lambda x: znp.float32(x) * 2.0)(1.0)) == 2.0
    assert znp.complex64(1.0).dtype == np.complex64 and znp.bool_(2).dtype == np.bool_


def test_scalar_types_still_behave_as_dtypes():
    assert np.dtype(znp.float32) == np.float32 and znp.dtype(znp.int8) == np.int8
    assert znp.float32 == np.float32 and np.float32 == znp.float32
    assert znp.float32 != np.float64 and hash(znp.float32) == hash(np.float32)
    assert {np.float32: "F32"}[znp.float32] == "F32"
    assert znp.float32 in (np.float16, np.float32)
    assert isinstance(np.float32(1.0), znp.float32)
    assert not isinstance(np.float64(1.0), znp.float32)
    assert np.issubdtype(znp.float32, np.floating) and znp.issubdtype(znp.int64, znp.integer)
    assert znp.finfo(znp.float32).eps == np.finfo(np.float32).eps
    assert znp.zeros(2, znp.float32).dtype == np.float32
    assert znp.ones(2).astype(znp.int16).dtype == np.int16
    assert znp.promote_types(znp.float32, znp.int8) == np.float32
    assert znp.double is znp.float64 and znp.single is znp.float32 and znp.int_ is znp.int64
    assert np.array([1.5], znp.float32).dtype == np.float32


# --------------------------------------------------------------------------- lax shape helpers
# Reference values recorded with jax 0.10.2 (jax.lax.*_shape_tuple).

NHWC = ("NHWC", "HWIO", "NHWC")


@pytest.mark.parametrize("args, want", [
    (((8, 28, 28, 1), (3, 3, 1, 32), (2, 2), "SAME", NHWC), (8, 14, 14, 32)),
    (((-1, 28, 28, 1), (5, 3, 1, 32), (2, 1), "VALID", NHWC), (-1, 12, 26, 32)),
    (((4, 3, 10, 9), (6, 3, 3, 2), (3, 2), [(1, 2), (0, 1)], ("NCHW", "OIHW", "NCHW")),
     (4, 6, 4, 5)),
    (((4, 10, 3), (3, 3, 6), (2,), "SAME_LOWER", ("NWC", "WIO", "NWC")), (4, 5, 6)),
])
def test_conv_general_shape_tuple(args, want):
    got = lax.conv_general_shape_tuple(*args)
    assert got == want and all(type(d) is int for d in got)


def test_conv_general_shape_tuple_matches_the_convolution():
    lhs, rhs = np.ones((2, 9, 7, 3)), np.ones((3, 2, 3, 4))
    out = lax.conv_general_dilated(lhs, rhs, (2, 3), "SAME", dimension_numbers=NHWC)
    assert lax.conv_general_shape_tuple(lhs.shape, rhs.shape, (2, 3), "SAME", NHWC) == out.shape


@pytest.mark.parametrize("args, want", [
    (((8, 14, 14, 32), (3, 3, 32, 1), (2, 2), "SAME", NHWC), (8, 28, 28, 1)),
    (((-1, 7, 5, 32), (4, 3, 32, 2), (3, 2), "VALID", NHWC), (-1, 22, 11, 2)),
    (((2, 7, 5, 3), (4, 3, 3, 2), (3, 2), [(1, 2), (0, 3)], NHWC), (2, 19, 10, 2)),
])
def test_conv_transpose_shape_tuple(args, want):
    assert lax.conv_transpose_shape_tuple(*args) == want


def test_conv_transpose_shape_tuple_matches_the_convolution():
    lhs, rhs = np.ones((1, 5, 4, 2)), np.ones((3, 2, 2, 3))
    for pad in ("SAME", "VALID"):
        out = lax.conv_transpose(lhs, rhs, (2, 3), pad, dimension_numbers=NHWC)
        assert lax.conv_transpose_shape_tuple(lhs.shape, rhs.shape, (2, 3), pad,
                                              NHWC) == out.shape


@pytest.mark.parametrize("args, kw, want", [
    (((1, 6, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1), [(0, 0)] * 4), {}, (1, 3, 3, 3)),
    (((2, 7, 9), (1, 3, 2), (1, 2, 3), [(0, 0), (1, 1), (2, 0)]),
     {"base_dilation": (1, 2, 1), "window_dilation": (1, 1, 2)}, (2, 7, 3)),
    (((-1, 5), (1, 3), (1, 1), [(0, 0), (0, 0)]), {}, (0, 3)),
])
def test_reduce_window_shape_tuple(args, kw, want):
    assert lax.reduce_window_shape_tuple(*args, **kw) == want


def test_shape_tuple_errors():
    with pytest.raises(errors.ZeraxTypeError, match="padtype_to_pads"):
        lax.reduce_window_shape_tuple((4, 4), (2, 2), (1, 1), "SAME")
    with pytest.raises(errors.ZeraxTypeError, match="one \\(low, high\\) pair"):
        lax.conv_general_shape_tuple((1, 5, 5, 1), (3, 3, 1, 1), (1, 1), [(1, 1)], NHWC)
    with pytest.raises(errors.ZeraxValueError, match="negative padding"):
        lax.conv_general_shape_tuple((1, 2, 5, 1), (1, 1, 1, 1), (1, 1),
                                     [(-2, -1), (0, 0)], NHWC)
    with pytest.raises(errors.ZeraxValueError, match="padding"):
        lax.conv_transpose_shape_tuple((1, 5, 5, 1), (3, 3, 1, 1), (1, 1), "FULL", NHWC)


# --------------------------------------------------------------------------- checkpoint_name


def test_checkpoint_name_is_identity_on_pytrees():
    x = znp.arange(3.0)
    assert checkpoint_name(x, "h") is x
    out = checkpoint_name({"a": x, "b": (1.0, np.ones(2))}, "h")
    assert isinstance(out["b"][0], znp.ndarray) and isinstance(out["b"][1], znp.ndarray)
    np.testing.assert_array_equal(out["b"][1], np.ones(2))
    with pytest.raises(errors.ZeraxTypeError, match="string"):
        checkpoint_name(x, 3)


@pytest.mark.parametrize("policy", [
    checkpoint_policies.save_only_these_names("h"),
    checkpoint_policies.save_any_names_but_these("h"),
    checkpoint_policies.save_anything_except_these_names("h", "g"),
])
def test_named_policies_give_the_plain_derivatives(policy):
    def body(x):
        h = checkpoint_name(znp.sin(x) * x, "h")
        return znp.cos(h).sum()

    x = np.array([0.3, 1.2, -0.7])
    want = zx.grad(body)(x)
    np.testing.assert_allclose(zx.grad(checkpoint(body, policy=policy))(x), want, rtol=1e-14)
    np.testing.assert_allclose(zx.jit(zx.grad(zx.checkpoint(body, policy=policy)))(x), want,
                               rtol=1e-12)
    # the derivative itself, by hand: d/dx cos(x sin x) = -sin(x sin x) (sin x + x cos x)
    np.testing.assert_allclose(want, -np.sin(x * np.sin(x)) * (np.sin(x) + x * np.cos(x)),
                               rtol=1e-12)
