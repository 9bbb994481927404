"""The primitive registry: every primitive has every rule (or a stated reason why
not), and every differentiable primitive passes check_grads to second order in both
modes on hypothesis-chosen inputs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import zerax  # noqa: F401  (registers every primitive)
from zerax._src.core.core import all_primitives, bind, rule_tables
from zerax._src.interpreters.ad import jvp_rules
from zerax.test_util import check_grads

from np_helpers import BINARY_DOMAINS, UNARY_DOMAINS  # noqa: E402 - shared test helpers

def test_every_primitive_has_every_rule_or_a_reason():
    """Each primitive against every registered rule table (one per transform,
    ``core.rule_tables``) and the kernel IR's lowering (``backends/lowering/``, shared
    by every target): defined, or declared unsupported with a reason."""
    from zerax._src.backends import lowering
    kinds = set(rule_tables)
    assert {"jvp", "transpose", "batch", "vjp"} <= kinds, kinds
    missing = []
    for name, prim in sorted(all_primitives().items()):
        for rule in ("impl", "abstract_eval"):
            if getattr(prim, rule) is None and rule not in prim.unsupported:
                missing.append(f"{name}.{rule}")
        for kind, (_, tables) in rule_tables.items():
            if kind == "vjp":
                continue  # optional: without one, the tape linearizes the primitive
            defined = any(prim in t for t in tables)
            if not defined and kind not in prim.unsupported:
                missing.append(f"{name}.{kind}")
        lowered = (prim in lowering.rules or prim in lowering.scalar_rules
                   or prim in lowering.HOST or prim in lowering.HOST_CALLED)
        if not lowered and "lower" not in prim.unsupported:
            missing.append(f"{name}.lower")
    assert not missing, f"rules neither defined nor declared unsupported: {missing}"


UNARY, BINARY = UNARY_DOMAINS, BINARY_DOMAINS


def _arrays(shape, lo, hi):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


shapes = st.sampled_from([(), (3,), (2, 3)])


def _check(f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=8)
@given(data=st.data())
def test_unary_elementwise_grads(name, data):
    lo, hi = UNARY[name]
    x = data.draw(_arrays(data.draw(shapes), lo, hi))
    prim = all_primitives()[name]
    _check(lambda v: bind(prim, v), (x,))


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=8)
@given(data=st.data())
def test_binary_elementwise_grads(name, data):
    (lo1, hi1), (lo2, hi2) = BINARY[name]
    shape = data.draw(shapes)
    x = data.draw(_arrays(shape, lo1, hi1))
    y = data.draw(_arrays(shape, lo2, hi2))
    if name == "rem":
        y = y + 0.0
    prim = all_primitives()[name]
    _check(lambda a, b: bind(prim, a, b), (x, y))
    # a 0-d operand broadcasts against an array one
    _check(lambda a, b: bind(prim, a, b), (x, np.asarray(y).reshape(-1)[:1].reshape(()) if
                                           np.ndim(y) else y))


@settings(max_examples=8)
@given(st.floats(0.5, 3.0), st.integers(-3, 4))
def test_integer_pow_and_polygamma(x, k):
    prims = all_primitives()
    _check(lambda v: bind(prims["integer_pow"], v, y=k), (x,))
    _check(lambda v: bind(prims["polygamma"], v, m=abs(k) % 3), (x,))


@settings(max_examples=8)
@given(st.lists(st.integers(-30, 30), min_size=6, max_size=6, unique=True))
def test_max_min_clamp_select(vals):
    v = np.array(vals) / 10 + 0.05  # well apart from each other and from the clamp bounds
    a, b = v[:3], v[3:]
    prims = all_primitives()
    _check(lambda x, y: bind(prims["max"], x, y), (a, b))
    _check(lambda x, y: bind(prims["min"], x, y), (a, b))
    _check(lambda x: bind(prims["clamp"], np.float64(-1.0), x, np.float64(1.0)), (a,))
    _check(lambda lo, x, hi: bind(prims["clamp"], lo, x, hi),
           (np.float64(-5.0), a, np.float64(5.0)))
    pred = a > b
    _check(lambda x, y: bind(prims["select_n"], pred, x, y), (a, b))
    _check(lambda x, y, z: bind(prims["fma"], x, y, z), (a, b, a * b))
    _check(lambda x: bind(prims["convert_element_type"], x, new_dtype=np.dtype(np.float64)),
           (a.astype(np.float32),))


@settings(max_examples=6)
@given(hnp.arrays(np.float64, (2, 3, 4), elements=st.floats(-2, 2)))
def test_shape_primitive_grads(x):
    from zerax._src.ops import shape as s
    _check(lambda v: s.broadcast_in_dim(v, (5, 2, 3, 4), (1, 2, 3)), (x,))
    _check(lambda v: s.broadcast_in_dim(v[:, :1, :], (2, 3, 4), (0, 1, 2)), (x,))
    _check(lambda v: s.reshape(v, (6, 4)), (x,))
    _check(lambda v: s.transpose(v, (2, 0, 1)), (x,))
    _check(lambda v: s.squeeze(s.reshape(v, (2, 1, 12)), (1,)), (x,))
    _check(lambda v: s.concatenate([v, v * 2.0], 1), (x,))
    _check(lambda v: s.pad(v, np.float64(0.5), ((1, 2, 0), (-1, 0, 1), (0, 0, 2))), (x,))
    _check(lambda v, p: s.pad(v, p, ((1, 0, 1), (0, 1, 0), (0, 0, 0))), (x, np.float64(0.3)))
    _check(lambda v: s.slice_p_bind(v, (0, 1, 0), (2, 3, 4), (1, 1, 2)), (x,))
    i, j = np.int64(1), np.int64(5)
    _check(lambda v: s.dynamic_slice(v, (i, j, np.int64(0)), (1, 2, 3)), (x,))
    _check(lambda v, u: s.dynamic_update_slice(v, u, (i, np.int64(0), np.int64(2))),
           (x, x[:1, :2, :2] * 3.0))
    _check(lambda v: s.rev(v, (0, 2)), (x,))
    from zerax._src.ops import windows as w
    _check(lambda v: w.window_patches(v, (2, 2), (1, 2), (1, 1)), (x,))
    _check(lambda v: w.window_patches_add(v[:, :2, :1], (3, 3), (1, 2), (2, 1), (1, 2)), (x,))


@settings(max_examples=6)
@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-2, 2, allow_subnormal=False)),
       st.sampled_from([(0,), (1,), (0, 1)]))
def test_reduction_grads(x, axes):
    from zerax._src.ops import reduce as r
    x = x + np.arange(12).reshape(3, 4) * 1e-3  # distinct values: max/min are smooth
    _check(lambda v: r.reduce_sum(v, axes), (x,))
    _check(lambda v: r.reduce_max(v, axes), (x,))
    _check(lambda v: r.reduce_min(v, axes), (x,))
    _check(lambda v: r.reduce_prod(v, axes), (x,))
    for op in (r.cumsum, r.cumprod, r.cummax, r.cummin):
        for reverse in (False, True):
            _check(lambda v: op(v, axes[-1], reverse), (x,))


def test_reduce_prod_grad_with_zeros_is_exact():
    from zerax._src.ops import reduce as r
    import zerax as zx
    x = np.array([2.0, 0.0, 3.0])
    np.testing.assert_allclose(zx.grad(lambda v: r.reduce_prod(v, (0,)))(x), [0.0, 6.0, 0.0])
    _check(lambda v: r.cumprod(v, 0), (x,))


def test_sharding_constraint_grads():
    # (the identity outside a partitioned program; tests/interpreters/test_sharding.py
    # checks it partitioned)
    import zerax as zx
    from zerax._src.ops.sharding import sharding_constraint_p
    from zerax.sharding import NamedSharding, PartitionSpec
    s = NamedSharding(zx.make_mesh((1,), ("a",)), PartitionSpec("a"))
    _check(lambda v: bind(sharding_constraint_p, v * v, sharding=s), (np.arange(1.0, 4.0),))


def test_every_differentiable_primitive_is_covered_here():
    covered = set(UNARY) | set(BINARY) | {
        "integer_pow", "polygamma", "max", "min", "clamp", "select_n", "convert_element_type",
        "broadcast_in_dim", "reshape", "transpose", "squeeze", "concatenate", "pad", "slice",
        "dynamic_slice", "dynamic_update_slice", "rev", "reduce_sum", "reduce_max",
        "reduce_min", "reduce_prod", "cumsum", "cumprod", "cummax", "cummin",
        "window_patches", "window_patches_add", "fma", "sharding_constraint",
    } | COVERED_ELSEWHERE
    differentiable = {n for n, p in all_primitives().items()
                      if p in jvp_rules and "jvp" not in p.unsupported
                      and n not in NOT_SMOOTH}
    assert differentiable <= covered, sorted(differentiable - covered)


# Primitives whose derivative is zero everywhere it exists (integer or piecewise-constant
# outputs), and call-like primitives checked in test_ad.py / the indexing and linalg tests.
NOT_SMOOTH = {"floor_divide", "sign", "floor", "ceil", "round", "eq", "ne", "lt", "le", "gt",
              "ge", "and", "or", "xor", "not", "shift_left", "shift_right", "is_finite",
              "isnan", "argmax", "argmin", "iota", "stop_gradient", "argsort"}
# bit-level primitives of zerax.random (issue 15): zero tangents, tested in test_bitcast.py
NOT_SMOOTH |= {"bitcast_convert_type", "threefry2x32"}
NOT_SMOOTH |= {"axis_index"}  # an integer position along a named vmap axis
COVERED_ELSEWHERE = {"custom_jvp_call", "custom_vjp_call", "checkpoint", "checkpoint_jvp",
                     "dot_general", "gather", "scatter", "sort", "scatter_add", "scatter_mul",
                     "scatter_min", "scatter_max", "checkpoint_jvp", "custom_lin",
                     # control flow and jit: check_grads in test_control_flow.py, test_jit.py
                     "cond", "scan", "while", "while_lin", "while_transpose", "jit",
                     # decompositions: check_grads in test_linalg_decompositions.py
                     "cholesky", "triangular_solve", "lu", "qr", "eigh", "svd",
                     # complex parts: against finite differences in test_complex_ad.py
                     "real", "imag", "conj", "complex",
                     # the discrete Fourier transform: check_grads in test_fft.py
                     "fft",
                     # iterative special functions: check_grads in test_scipy_special.py
                     "igamma", "igammac", "igamma_grad_a", "regularized_incomplete_beta",
                     "bessel_i0e", "bessel_i1e", "zeta", "expn", "expi", "bessel_j0",
                     "bessel_j1", "bessel_y0", "bessel_y1",
                     # real-order Bessel functions and the spherical harmonics' Legendre
                     # part: check_grads in tests/api/test_special_bessel_order.py
                     "bessel_jv", "bessel_iv", "bessel_ive", "sph_legendre",
                     # collectives over named axes: check_grads in test_collectives.py
                     "psum", "all_gather", "psum_scatter", "ppermute", "all_to_all",
                     # general eigendecomposition: check_grads in test_linalg_eig.py
                     "eig",
                     # no outputs (its JVP passes primals through): test_debug.py
                     "debug_callback"}


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float32, 8, elements=st.floats(1 / 1024, 1024, width=32)),
       hnp.arrays(np.float32, 8, elements=st.floats(-4, 4, width=32)))
def test_float32_pow_is_rounded_once_from_float64(x, y):
    # NumPy's SIMD float32 power (AVX-512 builds) can be an ulp off; zerax's eager pow
    # is the float64 power rounded to float32 (libm's powf and XLA's agree with it but
    # for rare cases): the value optax's float32 schedules are recorded with.
    import zerax.numpy as znp
    want = (x.astype(np.float64) ** y.astype(np.float64)).astype(np.float32)
    got = np.asarray(znp.power(x, y))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
