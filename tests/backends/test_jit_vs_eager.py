"""One owner of semantics: every primitive the kernel-IR lowering carries gives under
``jit`` what its NumPy implementation gives eagerly, on hypothesis inputs of every
dtype it accepts (docs/compiler.md has the table).

- bit-equal where NumPy's result is exact or correctly rounded (arithmetic, division,
  sqrt, comparisons, casts, integer and bit operations, selects, rounding);
- within `ULPS` units in the last place for the transcendental functions (the
  compiled code uses its own math library: `backends/cpu/mathlib.py`, or libm);
- sums within the error bound of pairwise summation, log2(n) eps sum|x| (and NumPy's
  bits for a contiguous sum: the kernel sums pairwise in NumPy's blocks);
- bit-equal for the special functions, which the kernel runs by their NumPy
  implementations (host calls).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
from zerax._src.backends.lowering import covers, scalar_rules
from zerax._src.core.core import bind
from zerax._src.ops import elementwise as ew
from zerax._src.ops import bitcast as bc
from zerax._src.ops import misc
from zerax._src.ops import random_bits as rb
from zerax._src.ops.sharding import sharding_constraint_p

ULPS = 4
N = 37                    # elements per case (odd: loop remainders are exercised)
FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SIGNED = ("int8", "int16", "int32", "int64")

# primitive -> (dtypes, arity, "exact" or "ulps", params, value filter name)
EXACT, APPROX = "exact", "ulps"
CASES = {
    ew.add_p: (FLOATS + INTS, 2, EXACT), ew.sub_p: (FLOATS + INTS, 2, EXACT),
    ew.mul_p: (FLOATS + INTS, 2, EXACT), ew.div_p: (FLOATS, 2, EXACT),
    ew.neg_p: (FLOATS + SIGNED, 1, EXACT), ew.floor_divide_p: (FLOATS + INTS, 2, EXACT),
    ew.rem_p: (FLOATS + INTS, 2, EXACT), ew.sign_p: (FLOATS + INTS, 1, EXACT),
    ew.floor_p: (FLOATS, 1, EXACT), ew.ceil_p: (FLOATS, 1, EXACT),
    ew.round_p: (FLOATS, 1, EXACT), ew.max_p: (FLOATS + INTS, 2, EXACT),
    ew.min_p: (FLOATS + INTS, 2, EXACT), ew.abs_p: (FLOATS + INTS, 1, EXACT),
    ew.eq_p: (FLOATS + INTS, 2, EXACT), ew.ne_p: (FLOATS + INTS, 2, EXACT),
    ew.lt_p: (FLOATS + INTS, 2, EXACT), ew.le_p: (FLOATS + INTS, 2, EXACT),
    ew.gt_p: (FLOATS + INTS, 2, EXACT), ew.ge_p: (FLOATS + INTS, 2, EXACT),
    ew.and_p: (("bool",) + INTS, 2, EXACT), ew.or_p: (("bool",) + INTS, 2, EXACT),
    ew.xor_p: (("bool",) + INTS, 2, EXACT), ew.not_p: (("bool",) + INTS, 1, EXACT),
    ew.shift_left_p: (INTS, 2, EXACT), ew.shift_right_p: (INTS, 2, EXACT),
    ew.is_finite_p: (FLOATS, 1, EXACT), ew.isnan_p: (FLOATS, 1, EXACT),
    ew.sqrt_p: (FLOATS, 1, EXACT), ew.clamp_p: (FLOATS + INTS, 3, EXACT),
    ew.select_n_p: (FLOATS + INTS, 3, EXACT), misc.stop_gradient_p: (FLOATS, 1, EXACT),
    ew.exp_p: (FLOATS, 1, APPROX), ew.exp2_p: (FLOATS, 1, APPROX),
    ew.log_p: (FLOATS, 1, APPROX), ew.log1p_p: (FLOATS, 1, APPROX),
    ew.expm1_p: (FLOATS, 1, APPROX), ew.sin_p: (FLOATS, 1, APPROX),
    ew.cos_p: (FLOATS, 1, APPROX), ew.tan_p: (FLOATS, 1, APPROX),
    ew.asin_p: (FLOATS, 1, APPROX), ew.acos_p: (FLOATS, 1, APPROX),
    ew.atan_p: (FLOATS, 1, APPROX), ew.sinh_p: (FLOATS, 1, APPROX),
    ew.cosh_p: (FLOATS, 1, APPROX), ew.tanh_p: (FLOATS, 1, APPROX),
    ew.asinh_p: (FLOATS, 1, APPROX), ew.acosh_p: (FLOATS, 1, APPROX),
    ew.atanh_p: (FLOATS, 1, APPROX), ew.cbrt_p: (FLOATS, 1, APPROX),
    ew.atan2_p: (FLOATS, 2, APPROX), ew.pow_p: (FLOATS, 2, APPROX),
    ew.rsqrt_p: (FLOATS, 1, APPROX), ew.logistic_p: (FLOATS, 1, APPROX),
    ew.erf_p: (FLOATS, 1, EXACT), ew.erfc_p: (FLOATS, 1, EXACT),     # the same libm calls
    ew.lgamma_p: (FLOATS, 1, EXACT), ew.fma_p: (FLOATS, 3, EXACT),
}
# primitives with static parameters: (params, how they are checked)
PARAM_CASES = [
    (ew.integer_pow_p, FLOATS + INTS, {"y": 2}, EXACT),
    (ew.integer_pow_p, FLOATS, {"y": -1}, EXACT),
    (ew.integer_pow_p, FLOATS, {"y": 3}, EXACT),      # multiplications in JAX's order
    (ew.integer_pow_p, FLOATS, {"y": -5}, EXACT),
    (ew.integer_pow_p, INTS, {"y": 7}, EXACT),
    (ew.integer_pow_p, INTS, {"y": 3}, EXACT),
    (ew.integer_pow_p, INTS, {"y": 0}, EXACT),
]
CAST_PAIRS = [(s, t) for s in ("bool",) + FLOATS + INTS for t in ("bool",) + FLOATS + INTS
              if s != t]


# primitives the kernel IR runs by their NumPy implementation (host calls: the special
# functions of base/special*.py), so bit-equal: name -> (arity, params)
HOST_CASES = {
    "digamma": (1, {}), "erf_inv": (1, {}), "expi": (1, {}), "bessel_i0e": (1, {}),
    "bessel_i1e": (1, {}), "bessel_j0": (1, {}), "bessel_j1": (1, {}), "bessel_y0": (1, {}),
    "bessel_y1": (1, {}), "polygamma": (1, {"m": 2}), "igamma": (2, {}), "igammac": (2, {}),
    "igamma_grad_a": (2, {}), "zeta": (2, {}), "expn": (2, {}), "bessel_jv": (2, {}),
    "bessel_iv": (2, {}), "bessel_ive": (2, {}), "regularized_incomplete_beta": (3, {}),
    "sph_legendre": (3, {}),
}


def test_every_kernel_ir_primitive_has_a_case():
    covered = set(CASES) | {p for p, *_ in PARAM_CASES} | {ew.convert_element_type_p} | \
        set(COMPLEX_CASES) | {ew.complex_p, rb.threefry2x32_p, bc.bitcast_convert_type_p,
                              sharding_constraint_p}
    assert set(scalar_rules) <= covered, set(scalar_rules) - covered
    # and every elementwise primitive it host-calls
    from zerax._src.backends.lowering import HOST, rules
    from zerax._src.core.core import all_primitives
    hosted = {n for n, p in all_primitives().items() if p.elementwise and
              p not in rules and p not in scalar_rules and p not in HOST}
    assert hosted <= set(HOST_CASES), hosted - set(HOST_CASES)


def test_a_sharding_constraint_is_the_identity_in_one_process():
    from zerax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(zx.devices(), ("x",))
    x = np.linspace(-1.0, 1.0, N)
    f = zx.jit(lambda v: zx.lax.with_sharding_constraint(
        v * 2.0, NamedSharding(mesh, PartitionSpec("x"))) + 1.0)
    np.testing.assert_array_equal(np.asarray(f(x)), x * 2.0 + 1.0)


_jitted: dict = {}


def _compiled(prim, params, dtypes):
    key = (prim, tuple(sorted(params.items())), dtypes)
    f = _jitted.get(key)
    if f is None:
        f = _jitted[key] = zx.jit(lambda *xs: bind(prim, *xs, **params))
    return f


def _elements(dtype, finite=False):
    d = np.dtype(dtype)
    if d == np.bool_:
        return st.booleans()
    if d.kind in "iu":
        info = np.iinfo(d)
        return st.integers(int(info.min), int(info.max))
    return st.floats(width=d.itemsize * 8, allow_nan=not finite, allow_infinity=not finite)


def _ulps(a, b, dtype):
    """Units in the last place between float arrays (NaN matches NaN, inf inf)."""
    d = np.dtype(dtype)
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[d.itemsize]
    magnitude = (1 << (8 * d.itemsize - 1)) - 1
    a, b = np.asarray(a, d).ravel(), np.asarray(b, d).ravel()

    def line(bits):   # sign-magnitude bit patterns onto the integers, in order
        m = bits & magnitude
        return -m if bits < 0 else m
    out = []
    for x, y, ix, iy in zip(a, b, a.view(ints).tolist(), b.view(ints).tolist()):
        if np.isnan(x) or np.isnan(y):
            out.append(0.0 if np.isnan(x) and np.isnan(y) else math.inf)
        else:
            out.append(float(abs(line(ix) - line(iy))))
    return np.array(out)


def _check(got, want, how, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if how == EXACT or got.dtype.kind not in "f":
        same = (got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "f" \
            else got == want
        if got.dtype.kind == "f":   # the signs of zeros too
            same &= np.signbit(got) == np.signbit(want)
        bad = np.flatnonzero(~same)
        assert not bad.size, f"{what}: jit {got.ravel()[bad[:3]]} eager {want.ravel()[bad[:3]]}"
        return
    dist = _ulps(got, want, got.dtype)
    worst = np.argmax(dist)
    assert dist.max() <= ULPS, (f"{what}: {dist.max()} ulps at {worst}: jit "
                                f"{got.ravel()[worst]!r} eager {want.ravel()[worst]!r}")


def _case_args(draw, prim, dtype, arity):
    d = np.dtype(dtype)
    if prim is ew.select_n_p:
        pred = draw(hnp.arrays(np.bool_, (N,)))
        cases = [draw(hnp.arrays(d, (N,), elements=_elements(d))) for _ in range(2)]
        return [pred] + cases
    if prim in (ew.shift_left_p, ew.shift_right_p):
        x = draw(hnp.arrays(d, (N,), elements=_elements(d)))
        bits = 8 * d.itemsize
        lo = -3 if d.kind == "i" else 0
        n = draw(hnp.arrays(d, (N,), elements=st.integers(lo, bits + 3)))
        return [x, n]
    return [draw(hnp.arrays(d, (N,), elements=_elements(d))) for _ in range(arity)]


@pytest.mark.parametrize("prim", list(CASES), ids=lambda p: p.name)
@settings(max_examples=10)
@given(data=st.data())
def test_jit_equals_eager(prim, data):
    dtypes, arity, how = CASES[prim]
    dtype = data.draw(st.sampled_from(dtypes))
    args = _case_args(data.draw, prim, dtype, arity)
    with np.errstate(all="ignore"):
        want = bind(prim, *args)
    got = _compiled(prim, {}, (dtype,) * len(args))(*args)
    _check(got, want, how, f"{prim.name}[{dtype}]")


@pytest.mark.parametrize("case", range(len(PARAM_CASES)))
@settings(max_examples=10)
@given(data=st.data())
def test_jit_equals_eager_with_parameters(case, data):
    prim, dtypes, params, how = PARAM_CASES[case]
    dtype = np.dtype(data.draw(st.sampled_from(dtypes)))
    finite = dtype.kind == "f"
    x = data.draw(hnp.arrays(dtype, (N,), elements=_elements(dtype, finite=not finite)))
    with np.errstate(all="ignore"):
        want = bind(prim, x, **params)
    got = _compiled(prim, params, (dtype.name,))(x)
    _check(got, want, how, f"{prim.name}{params}[{dtype}]")


@pytest.mark.parametrize("name", sorted(HOST_CASES))
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_host_called_special_functions_equal_eager(name, data):
    from zerax._src.core.core import all_primitives
    prim = all_primitives()[name]
    arity, params = HOST_CASES[name]
    dtype = np.dtype(data.draw(st.sampled_from(("float32", "float64"))))
    # moderate values (the series of some functions take long far out), NaN and inf too
    values = st.one_of(st.floats(-20.0, 20.0, width=dtype.itemsize * 8),
                       st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    if name == "sph_legendre":   # integer degree and order (a huge degree runs long)
        ints = st.integers(0, 12).map(float)
        args = [data.draw(hnp.arrays(dtype, (N,), elements=ints)) for _ in range(2)] + \
            [data.draw(hnp.arrays(dtype, (N,), elements=values))]
    else:
        args = [data.draw(hnp.arrays(dtype, (N,), elements=values)) for _ in range(arity)]
    with np.errstate(all="ignore"):
        want = bind(prim, *args, **params)
        got = _compiled(prim, params, (dtype.name,) * arity)(*args)
    _check(got, want, EXACT, f"{name}[{dtype}]")


@pytest.mark.parametrize("pair", CAST_PAIRS, ids="->".join)
@settings(max_examples=5)
@given(data=st.data())
def test_casts_equal_numpys_within_range(pair, data):
    """Conversions of values the target type holds (NumPy leaves the others
    unspecified, with a warning; so does the compiled code)."""
    src, dst = (np.dtype(t) for t in pair)
    elements = _elements(src, finite=True)
    if src.kind == "f" and dst.kind in "iu":
        info = np.iinfo(dst)
        lo = src.type(info.min)                    # 0 or -2^n: exact in every width
        hi = src.type(info.max)
        if float(hi) > info.max:                   # rounded up: the float below it
            hi = np.nextafter(hi, src.type(0))
        elements = st.floats(float(lo), float(hi), width=src.itemsize * 8)
    x = data.draw(hnp.arrays(src, (N,), elements=elements))
    with np.errstate(all="ignore"):
        want = bind(ew.convert_element_type_p, x, new_dtype=dst)
    got = _compiled(ew.convert_element_type_p, {"new_dtype": dst}, (src.name,))(x)
    _check(got, want, EXACT, f"{src}->{dst}")


@settings(max_examples=20)
@given(x=hnp.arrays(np.float64, st.integers(1, 3000),
                    elements=st.floats(-1e6, 1e6)))
def test_sums_are_numpys_pairwise_sums(x):
    f = _compiled(ew.exp_p, {}, ("sum",))   # (a key of its own)
    del f
    g = zx.jit(lambda v: zx.numpy.sum(v))
    got = float(g(x))
    assert got == float(np.sum(x))
    bound = math.log2(max(len(x), 2)) * np.finfo(np.float64).eps * float(np.sum(np.abs(x)))
    assert abs(got - math.fsum(x)) <= bound + 1e-300


def test_a_structured_sum_of_a_million_values_is_within_the_pairwise_bound():
    """The issue's example: 10^6 structured values (a jitted sum was 79 eps sum|x| off,
    four times the bound)."""
    x = (np.arange(1_000_000) % 1000) * 0.1 + 1e-3
    got = float(zx.jit(lambda v: zx.numpy.sum(v * 1.0))(x))
    bound = math.log2(x.size) * np.finfo(np.float64).eps * float(np.sum(np.abs(x)))
    assert abs(got - math.fsum(x)) <= bound
    assert got == float(np.sum(x))


def test_no_contraction_into_fma():
    """a * b + c rounds twice, as eagerly (an FMA would round once: 224 ulps off on
    ordinary inputs before the kernel IR)."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(10_001) for _ in range(3))
    got = np.asarray(zx.jit(lambda a, b, c: a * b + c)(a, b, c))
    np.testing.assert_array_equal(got, a * b + c)


def test_fast_math_is_asked_for():
    """``jit(..., fast_math=True)`` may contract into FMA: its result is within an ulp
    of each rounding, and the default stays exact."""
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(10_001) for _ in range(3))
    fast = np.asarray(zx.jit(lambda a, b, c: a * b + c, fast_math=True)(a, b, c))
    np.testing.assert_allclose(fast, a * b + c, rtol=1e-12, atol=1e-15)
    exact = np.asarray(zx.jit(lambda a, b, c: a * b + c)(a, b, c))
    np.testing.assert_array_equal(exact, a * b + c)


DOT_CASES = [   # (lhs shape, rhs shape, dimension numbers)
    ((5, 7), (7, 3), (((1,), (0,)), ((), ()))),             # small: loops
    ((64, 96), (96, 80), (((1,), (0,)), ((), ()))),         # x @ w: gemm, no copies
    ((64, 96), (80, 96), (((1,), (1,)), ((), ()))),         # x @ w.T
    ((96, 64), (96, 80), (((0,), (0,)), ((), ()))),         # x.T @ g
    ((3, 4, 5, 6), (3, 6, 5, 7), (((3, 2), (1, 2)), ((0,), (0,)))),   # batched, copied
    ((6, 20, 30), (30, 6, 25), (((2,), (0,)), ((0,), (1,)))),          # batch not leading
    ((700,), (700,), (((0,), (0,)), ((), ()))),             # a dot of vectors: 0-d
]


@pytest.mark.parametrize("case", range(len(DOT_CASES)))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_products_equal_numpys(case, dtype):
    """Products: the same BLAS as NumPy for float products of some size (so up to
    BLAS's own blocking, nearly its bits), loops otherwise; integers exact."""
    ls, rs, dn = DOT_CASES[case]
    rng = np.random.default_rng(case)
    if dtype.startswith("int"):
        a, b = (rng.integers(-50, 50, s).astype(dtype) for s in (ls, rs))
    else:
        a, b = (rng.standard_normal(s).astype(dtype) for s in (ls, rs))
    f = lambda x, y: zx.lax.dot_general(x, y, dn)          # noqa: E731
    with zx.disable_jit():
        want = np.asarray(f(a, b))
    got = np.asarray(zx.jit(f)(a, b))
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype.startswith("int"):
        np.testing.assert_array_equal(got, want)
    else:
        k = int(np.prod([ls[d] for d in dn[0][0]]))
        eps = np.finfo(dtype).eps
        scale = np.abs(a).max() * np.abs(b).max() * k
        np.testing.assert_allclose(got, want, rtol=0, atol=4 * k * eps * scale / max(k, 1))


COMPLEX = ("complex64", "complex128")
# complex primitive -> (arity, how): NumPy computes + - and the parts exactly; products,
# quotients, moduli and the functions within ulps of each part
COMPLEX_CASES = {
    ew.add_p: (2, EXACT), ew.sub_p: (2, EXACT), ew.neg_p: (1, EXACT), ew.conj_p: (1, EXACT),
    ew.real_p: (1, EXACT), ew.imag_p: (1, EXACT), ew.eq_p: (2, EXACT), ew.ne_p: (2, EXACT),
    ew.max_p: (2, EXACT), ew.min_p: (2, EXACT), ew.isnan_p: (1, EXACT),
    ew.is_finite_p: (1, EXACT), ew.mul_p: (2, APPROX), ew.div_p: (2, APPROX),
    ew.abs_p: (1, APPROX), ew.sign_p: (1, APPROX), ew.sqrt_p: (1, APPROX),
    ew.exp_p: (1, APPROX), ew.log_p: (1, APPROX), ew.expm1_p: (1, APPROX),
    ew.log1p_p: (1, APPROX), ew.sin_p: (1, APPROX), ew.cos_p: (1, APPROX),
    ew.tan_p: (1, APPROX), ew.sinh_p: (1, APPROX), ew.cosh_p: (1, APPROX),
    ew.tanh_p: (1, APPROX), ew.asin_p: (1, APPROX), ew.acos_p: (1, APPROX),
    ew.atan_p: (1, APPROX), ew.asinh_p: (1, APPROX), ew.acosh_p: (1, APPROX),
    ew.atanh_p: (1, APPROX), ew.exp2_p: (1, APPROX),
    ew.lt_p: (2, EXACT), ew.le_p: (2, EXACT), ew.gt_p: (2, EXACT), ew.ge_p: (2, EXACT),
    ew.pow_p: (2, EXACT),     # npy_cpow's multiplications, else the same C cpow/cpowf
}


def test_complex_from_parts():
    re, im = np.linspace(-2, 2, 11), np.linspace(3, -1, 11)
    for dt in (np.float32, np.float64):
        got = np.asarray(_compiled(ew.complex_p, {}, (np.dtype(dt).name,) * 2)(
            re.astype(dt), im.astype(dt)))
        want = np.asarray(bind(ew.complex_p, re.astype(dt), im.astype(dt)))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("prim", list(COMPLEX_CASES), ids=lambda p: p.name)
@settings(max_examples=8)
@given(data=st.data())
def test_complex_jit_equals_eager(prim, data):
    arity, how = COMPLEX_CASES[prim]
    dtype = np.dtype(data.draw(st.sampled_from(COMPLEX)))
    part = np.float32 if dtype == np.complex64 else np.float64
    # moderate values: the C library's and NumPy's edge handling of huge parts agree,
    # but the real-part formulas (expm1, log1p) are NumPy's own only for finite input
    parts = st.floats(-30.0, 30.0, width=np.dtype(part).itemsize * 8)
    args = []
    for _ in range(arity):
        re = data.draw(hnp.arrays(part, (N,), elements=parts))
        im = data.draw(hnp.arrays(part, (N,), elements=parts))
        args.append((re + 1j * im).astype(dtype))
    with np.errstate(all="ignore"):
        want = np.asarray(bind(prim, *args))
    got = np.asarray(_compiled(prim, {}, (dtype.name,) * arity)(*args))
    what = f"{prim.name}[{dtype}]"
    if want.dtype.kind != "c":
        _check(got, want, how, what)
        return
    assert got.dtype == want.dtype, what
    if how == EXACT:
        _check(got.real, want.real, EXACT, what)
        _check(got.imag, want.imag, EXACT, what)
        return
    # within ULPS of each part, or a tiny absolute error where a part cancels to ~0
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    scale = np.maximum(np.abs(want), np.finfo(part).tiny)
    with np.errstate(all="ignore"):
        err = np.where(same, 0.0, np.abs(got - want) / scale)
    assert not np.isnan(err).any() and err.max() <= ULPS * np.finfo(part).eps, \
        (what, got[np.argmax(err)], want[np.argmax(err)])


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("y", [-5, -2, 3, 4, 7, 12])
def test_complex_integer_pow_multiplies_as_eager(dtype, y):
    """x ** y by squaring, in the implementation's order of complex multiplications;
    each product within ULPS of NumPy's (which may fuse), so the power within
    ULPS per multiplication of |x ** y|."""
    rng = np.random.default_rng(abs(y))
    part = np.float32 if dtype == "complex64" else np.float64
    x = _from_parts(rng.uniform(-1.5, 1.5, 64), rng.uniform(-1.5, 1.5, 64), dtype)
    want = np.asarray(bind(ew.integer_pow_p, x, y=y))
    got = np.asarray(_compiled(ew.integer_pow_p, {"y": y}, (dtype,))(x))
    assert got.dtype == want.dtype
    products = abs(y).bit_length() + bin(abs(y)).count("1") + (y < 0)
    err = np.abs(got - want) / np.abs(want)
    assert err.max() <= ULPS * products * np.finfo(part).eps, (y, err.max())


# complex parts that reach every branch of NumPy's complex power and ordering: zeros
# of both signs, small integers (npy_cpow's multiplications), its limits of 100, huge,
# infinite and NaN parts
_SPECIAL_PARTS = (0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, 5.0, -7.0, 99.0, -99.0,
                  100.0, 1e300, np.inf, -np.inf, np.nan)


def _from_parts(re, im, dtype):
    """Complex numbers with these parts (``re + 1j * im`` would make inf * 0j a NaN)."""
    re, im = np.broadcast_arrays(np.ravel(re), np.ravel(im))
    z = np.empty(re.shape, dtype)
    with np.errstate(over="ignore"):
        z.real, z.imag = re, im
    return z


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_power_and_ordering_at_special_values(dtype):
    re, im = np.meshgrid(_SPECIAL_PARTS, (0.0, -0.0, 1.0, 2.5, np.inf, np.nan))
    rng = np.random.default_rng(0)
    z = np.concatenate([_from_parts(re, im, dtype),
                        _from_parts(rng.normal(size=8), rng.normal(size=8), dtype)])
    x, y = (a.ravel() for a in np.meshgrid(z, z))
    for prim in (ew.pow_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p):
        with np.errstate(all="ignore"):
            want = np.asarray(bind(prim, x, y))
        got = np.asarray(_compiled(prim, {}, (dtype,) * 2)(x, y))
        what = f"{prim.name}[{dtype}]"
        assert covers(zx.make_jaxpr(lambda a, b, p=prim: bind(p, a, b))(x, y).jaxpr) is None
        if want.dtype.kind == "c":
            _check(got.real, want.real, EXACT, what)
            _check(got.imag, want.imag, EXACT, what)
        else:
            _check(got, want, EXACT, what)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, -3, 5, -7, 99, 100, 2.5, 1j,
                                      -0.5 + 2j, np.nan])
def test_complex_power_by_a_constant(dtype, exponent):
    """A constant exponent picks its case of npy_cpow when the kernel is lowered."""
    rng = np.random.default_rng(1)
    parts = np.array(_SPECIAL_PARTS)
    z = np.concatenate([_from_parts(parts, 0.0, dtype), _from_parts(-0.0, parts, dtype),
                        _from_parts(rng.normal(size=16), rng.normal(size=16), dtype)])
    c = np.dtype(dtype).type(exponent)
    with np.errstate(all="ignore"):
        want = np.asarray(bind(ew.pow_p, z, c))
    got = np.asarray(zx.jit(lambda v: bind(ew.pow_p, v, c))(z))
    _check(got.real, want.real, EXACT, f"pow(z, {exponent})")
    _check(got.imag, want.imag, EXACT, f"pow(z, {exponent})")


@settings(max_examples=10)
@given(data=st.data())
def test_threefry_and_bitcasts_are_the_references_bits(data):
    u32 = np.dtype(np.uint32)
    words = [data.draw(hnp.arrays(u32, (N,), elements=_elements(u32))) for _ in range(4)]
    for out in ("pair", "xor"):
        want = np.asarray(bind(rb.threefry2x32_p, *words, out=out))
        got = np.asarray(_compiled(rb.threefry2x32_p, {"out": out}, ("uint32",) * 4)(*words))
        _check(got, want, EXACT, f"threefry2x32 {out}")
    for src, dst in (("uint32", "float32"), ("float64", "int64"), ("int16", "uint16")):
        x = data.draw(hnp.arrays(np.dtype(src), (N,), elements=_elements(src)))
        want = np.asarray(bind(bc.bitcast_convert_type_p, x, new_dtype=np.dtype(dst)))
        got = np.asarray(_compiled(bc.bitcast_convert_type_p, {"new_dtype": np.dtype(dst)},
                                   (src,))(x))
        assert got.tobytes() == want.tobytes() and got.dtype == want.dtype
