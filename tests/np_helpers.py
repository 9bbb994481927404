"""Shared helpers of the zerax.numpy test modules: hypothesis strategies for arrays and
comparisons against NumPy (type, shape, dtype, values)."""

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
from zerax._src.interpreters import tape
from zerax.tree_util import tree_leaves

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


def small_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


@st.composite
def arrays(draw, shape=None, dtypes=DTYPES, min_dims=0, max_dims=4, min_side=0, max_side=4):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if shape is None:
        shape = draw(small_shapes(min_dims, max_dims, min_side, max_side))
    if dtype.kind == "f":
        elements = st.floats(-100, 100, width=dtype.itemsize * 8)
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        elements = st.integers(0 if dtype.kind == "u" else -100, 100)
    return draw(hnp.arrays(dtype, shape, elements=elements))


def assert_same(got, want, exact=True, rtol=1e-12):
    """``got`` (a zerax value, or a tuple/list of them) equals ``want`` in type, shape,
    dtype and values."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), (type(got), type(want))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, exact, rtol)
        return
    want = np.asarray(want)
    assert isinstance(got, zx.Array), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)


def assert_matches(got, want, rtol=1e-12):
    """``got`` (any array) has ``want``'s dtype and shape and its values to ``rtol``
    (NaNs equal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, equal_nan=True, rtol=rtol, atol=rtol)


def traced(f, *args):
    """``f(*args)`` computed by tracing to IR then evaluating it, as a list of leaves."""
    closed = zx.make_jaxpr(f)(*args)
    return closed(*args)


def assert_traced_matches(f, *args):
    want = tree_leaves(f(*args))
    got = traced(f, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.dtype(g.dtype) == np.dtype(w.dtype)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def rand(rng, shape, dtype):
    """Random values of ``dtype``: booleans, small integers in [-4, 4], or normals."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# Domains (lo, hi) of the operands of the elementwise math primitives where each is
# smooth, for gradient checks: name -> domain, or (domain of x, domain of y).
UNARY_DOMAINS = {
    "neg": (-3, 3), "exp": (-2, 2), "exp2": (-2, 2), "log": (0.2, 3), "log1p": (-0.5, 3),
    "expm1": (-2, 2), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "asin": (-0.8, 0.8), "acos": (-0.8, 0.8), "atan": (-3, 3), "sinh": (-2, 2),
    "cosh": (-2, 2), "tanh": (-2, 2), "asinh": (-3, 3), "acosh": (1.2, 3),
    "atanh": (-0.8, 0.8), "sqrt": (0.2, 3), "rsqrt": (0.2, 3), "cbrt": (0.2, 3),
    "logistic": (-3, 3), "erf": (-2, 2), "erfc": (-2, 2), "erf_inv": (-0.8, 0.8),
    "lgamma": (0.3, 4), "digamma": (0.3, 4), "abs": (0.1, 3),
}
BINARY_DOMAINS = {
    "add": ((-3, 3), (-3, 3)), "sub": ((-3, 3), (-3, 3)), "mul": ((-3, 3), (-3, 3)),
    "div": ((-3, 3), (0.5, 3)), "pow": ((0.3, 2), (-2, 2)), "atan2": ((0.5, 2), (0.5, 2)),
    "rem": ((0.1, 0.9), (1.0, 1.0)),
}


# --------------------------------------------------------------------------- eager tape
# (the eager tape's VJPs against the general path: test_eager_grad.py, test_fft.py)

def _tape_of(f, args):
    """Run ``f(*args)`` on a tape directly: its outputs and the Tape."""
    leaves = [zx.numpy.asarray(a) for a in args]
    outs, tp, _ = tape.vjp_flat(lambda *xs: ([f(*xs)], None), leaves, "f")
    return outs, tp


def _close(got, want, dtype, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    tol = 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def compare_with_general_path(f, args, seed=0, direct=True):
    """``vjp`` on the tape equals ``vjp`` by linearize + transpose (values, dtypes,
    shapes), for a random output cotangent; with ``direct`` the primitives of ``f`` must
    have been recorded with their VJP rules (no fallback linearization)."""
    if direct:
        _, tp = _tape_of(f, args)
        assert tp.entries, "nothing was recorded on the tape"
        assert all(e[0] is not None for e in tp.entries), "a primitive fell back"
    out, f_vjp = zx.vjp(f, *args)
    with tape.disabled():
        out2, f_vjp2 = zx.vjp(f, *args)
    dtype = np.asarray(out).dtype
    _close(out, out2, dtype, "primal output")
    rng = np.random.RandomState(seed)
    ct = rng.standard_normal(np.shape(out)).astype(dtype)
    if dtype.kind == "c":
        ct = ct + 1j * rng.standard_normal(np.shape(out)).astype(dtype)
    for i, (a, b) in enumerate(zip(f_vjp(ct), f_vjp2(ct))):
        _close(a, b, dtype, f"cotangent of input {i}")
