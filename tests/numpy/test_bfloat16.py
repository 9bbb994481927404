"""bfloat16 (ml_dtypes'): dtype functions, JAX's promotion lattice, values against
ml_dtypes/NumPy references (float32 compute, then one rounding), compiled results equal
to eager ones bit for bit, LayerNorm/GroupNorm against recorded Equinox values,
checkpoints and exports, and the error without ml_dtypes."""

import builtins
import os
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

ml_dtypes = pytest.importorskip("ml_dtypes")

import zerax as zx
import zerax.export
import zerax.io
import zerax.numpy as znp
from zerax import errors, nn

BF16 = np.dtype(ml_dtypes.bfloat16)


def bits(x):
    return np.asarray(x).view(np.uint16)


def ref(fn, *xs):
    """ml_dtypes' bfloat16 reference: computed in float32, rounded once."""
    return fn(*[np.asarray(x).astype(np.float32) for x in xs]).astype(BF16)


# --------------------------------------------------------------------------- dtypes


def test_dtype_functions():
    assert np.dtype(znp.bfloat16) == BF16 and zx.dtypes.bfloat16 is ml_dtypes.bfloat16
    assert znp.dtype("bfloat16") == BF16 and isinstance(znp.dtype("bfloat16"), znp.dtype)
    assert znp.issubdtype(znp.bfloat16, znp.floating)
    assert znp.issubdtype(BF16, np.inexact) and not znp.issubdtype(BF16, np.integer)
    assert not znp.issubdtype(np.float32, znp.bfloat16)
    assert znp.isdtype(BF16, "real floating") and not znp.isdtype(BF16, "integral")
    fi = znp.finfo(znp.bfloat16)
    assert float(fi.eps) == 2.0 ** -7 and fi.bits == 16 and float(fi.max) == 3.3895313892515355e38
    assert zx.dtypes.is_inexact(BF16) and zx.dtypes.to_inexact(BF16) == BF16


# JAX's lattice (recorded from jax.numpy.promote_types, x64 on)
@pytest.mark.parametrize("other, want", [
    (np.bool_, BF16), (np.int8, BF16), (np.int32, BF16), (np.uint64, BF16),
    (np.float16, np.float32), (np.float32, np.float32), (np.float64, np.float64),
    (np.complex64, np.complex64), (np.complex128, np.complex128)])
def test_promotion_lattice(other, want):
    assert znp.promote_types(BF16, other) == want
    x = znp.ones(3, BF16)
    assert (x + znp.ones(3, other)).dtype == want
    assert zx.jit(lambda a, b: a * b)(x, znp.ones(3, other)).dtype == want


def test_weak_scalars():
    x = znp.ones(2, znp.bfloat16)
    assert (x + 1).dtype == BF16 and (x + 1.5).dtype == BF16 and (2.0 * x).dtype == BF16
    assert (x + 1j).dtype == np.complex64
    assert zx.jit(lambda a: a + 1.5)(x).dtype == BF16


def test_creation_and_casts():
    x = znp.asarray([1.3, -2.7], dtype=znp.bfloat16)
    assert x.dtype == BF16 and bits(x).tolist() == bits(np.array([1.3, -2.7], BF16)).tolist()
    assert znp.zeros(2, "bfloat16").dtype == BF16 and znp.arange(3, dtype=BF16).dtype == BF16
    assert znp.ones(3).astype(znp.bfloat16).dtype == BF16
    assert znp.bfloat16(1.3).dtype == BF16
    assert zx.jit(lambda v: znp.bfloat16(v))(1.3).dtype == BF16


# --------------------------------------------------------------------------- values

finite = st.floats(-1e4, 1e4, width=32, allow_subnormal=False)
arrays = hnp.arrays(np.float32, st.integers(1, 40), elements=finite)

UNARY = {"sin": np.sin, "exp": lambda v: np.exp(np.clip(v, -80, 80)), "tanh": np.tanh,
         "sqrt": lambda v: np.sqrt(np.abs(v)), "log1p": lambda v: np.log1p(np.abs(v)),
         "floor": np.floor, "neg": np.negative}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
          "div": lambda a, b: np.divide(a, np.where(b == 0, 1, b))}


@settings(max_examples=30, deadline=None)
@given(arrays, st.sampled_from(sorted(UNARY)))
def test_unary_values_and_jit(v, name):
    fn = UNARY[name]
    zfn = {"sin": znp.sin, "tanh": znp.tanh, "floor": znp.floor, "neg": znp.negative,
           "exp": lambda a: znp.exp(znp.clip(a, -80, 80)),
           "sqrt": lambda a: znp.sqrt(znp.abs(a)),
           "log1p": lambda a: znp.log1p(znp.abs(a))}[name]
    x = v.astype(BF16)
    eager = zfn(znp.asarray(x))
    want = ref(fn, x)
    if name in ("floor", "neg", "sqrt"):     # correctly rounded: NumPy's bits
        assert bits(eager).tolist() == bits(want).tolist()
    else:                                    # libm's float32, rounded: within one ulp
        np.testing.assert_allclose(np.asarray(eager, np.float32), want.astype(np.float32),
                                   rtol=2 ** -7, atol=1e-30)
    assert bits(zx.jit(zfn)(x)).tolist() == bits(eager).tolist()


@settings(max_examples=30, deadline=None)
@given(arrays, st.sampled_from(sorted(BINARY)), st.integers(0, 2 ** 32 - 1))
def test_binary_values_and_jit(v, name, seed):
    w = np.random.default_rng(seed).normal(size=v.shape).astype(np.float32) * 100
    x, y = v.astype(BF16), w.astype(BF16)
    zfn = {"add": znp.add, "sub": znp.subtract, "mul": znp.multiply, "max": znp.maximum,
           "div": lambda a, b: znp.divide(a, znp.where(b == 0, 1, b))}[name]
    eager = zfn(znp.asarray(x), znp.asarray(y))
    assert eager.dtype == BF16
    # one float32 operation, rounded once: correctly rounded (24 >= 2 * 8 + 2 bits)
    assert bits(eager).tolist() == bits(ref(BINARY[name], x, y)).tolist()
    assert bits(zx.jit(zfn)(x, y)).tolist() == bits(eager).tolist()


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 30),
                  elements=st.one_of(st.floats(-3.5e38, 3.5e38),
                                     st.floats(allow_nan=True, allow_infinity=True))))
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_conversions_round_once(v):
    """float64 -> bfloat16 is rounded once (not through float32's rounding), NaN keeps
    its sign, as ml_dtypes converts."""
    want = bits(v.astype(BF16))
    assert bits(znp.asarray(v).astype(BF16)).tolist() == want.tolist()
    assert bits(zx.jit(lambda a: a.astype(BF16))(v)).tolist() == want.tolist()
    f32 = v.astype(np.float32)
    assert bits(zx.jit(lambda a: a.astype(BF16))(f32)).tolist() == bits(f32.astype(BF16)).tolist()


def test_conversion_edges():
    v = np.array([1.0 + 2.0 ** -8 + 2.0 ** -30, -(1.0 + 2.0 ** -8), 1e-40, 3.4e38, np.nan,
                  -np.nan, np.inf, -0.0])
    want = bits(v.astype(BF16)).tolist()
    assert bits(zx.jit(lambda a: a.astype(BF16))(v)).tolist() == want
    ints = np.array([2 ** 24 + 2 ** 16 + 1, -7, 255, 2 ** 31 - 1], np.int32)
    assert bits(zx.jit(lambda a: a.astype(BF16))(ints)).tolist() == bits(ints.astype(BF16)).tolist()
    b = np.array([1.5, -2.25, 300.0], BF16)
    assert zx.jit(lambda a: a.astype(np.int32))(b).tolist() == [1, -2, 300]
    assert bits(zx.lax.bitcast_convert_type(b, np.uint16)).tolist() == bits(b).tolist()
    assert bits(zx.jit(lambda a: zx.lax.bitcast_convert_type(a, np.uint16))(b)).tolist() == \
        bits(b).tolist()


def test_reductions_accumulate_in_float32():
    ones = znp.ones(1000, znp.bfloat16)
    assert float(ones.sum()) == 1000.0           # bfloat16 partial sums would stop at 256
    assert float(zx.jit(znp.sum)(ones)) == 1000.0
    v = np.random.default_rng(1).normal(size=(37, 41)).astype(BF16)
    for f in (lambda a: a.sum(), lambda a: a.sum(0), lambda a: a.sum(1), lambda a: a.mean(),
              lambda a: a.max(0), lambda a: znp.var(a, 1), lambda a: (a / 4).prod(1)):
        eager = f(znp.asarray(v))
        assert eager.dtype == BF16
        assert bits(zx.jit(f)(v)).tolist() == bits(eager).tolist()
    want = np.add.reduce(v.astype(np.float32), axis=1).astype(BF16)
    assert bits(znp.sum(v, 1)).tolist() == bits(want).tolist()


@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (4, 2)), ((40, 50), (50, 30))])
def test_matmul_float32_accumulation(shape_a, shape_b):
    rng = np.random.default_rng(2)
    a = rng.normal(size=shape_a).astype(BF16)
    b = rng.normal(size=shape_b).astype(BF16)
    eager = znp.asarray(a) @ b
    assert eager.dtype == BF16
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(np.asarray(eager, np.float32), want.astype(np.float32))
    assert bits(zx.jit(lambda x, y: x @ y)(a, b)).tolist() == bits(eager).tolist()


def test_grad_and_vmap():
    x = znp.asarray([1.5, 2.0, -0.75], znp.bfloat16)
    g = zx.grad(lambda v: (v * v).sum())(x)
    assert g.dtype == BF16 and np.asarray(g, np.float32).tolist() == [3.0, 4.0, -1.5]
    gj = zx.jit(zx.grad(lambda v: znp.sin(v).sum()))(x)
    assert bits(gj).tolist() == bits(ref(np.cos, x)).tolist()
    assert bits(zx.vmap(lambda v: v * 2 + 1)(x)).tolist() == bits(x * 2 + 1).tolist()


# --------------------------------------------------------------------------- networks

# The layers' inputs, and Equinox 0.13's outputs on them (eqx.nn.LayerNorm((4, 6)),
# GroupNorm(2, 4), vmap(LayerNorm(6, use_weight=False, use_bias=False)) on this bfloat16
# array), recorded as bfloat16 bits
_X = (np.arange(24, dtype=np.float32).reshape(4, 6) * 0.37 - 3.1) ** 2 / 7.0
_EQX = {
    "layer": [15957, 48480, 48782, 48882, 48930, 48963, 48987, 49003, 49010, 49009, 49000,
              48982, 48956, 48921, 48860, 48743, 15252, 16012, 16148, 16232, 16291, 16341,
              16390, 16421],
    "group": [16398, 16322, 16234, 16071, 48445, 48840, 48933, 48976, 48996, 48994, 48968,
              48920, 49060, 49044, 49023, 48973, 48917, 48807, 48410, 16013, 16160, 16256,
              16309, 16367],
    "rows": [16336, 16213, 15909, 48856, 49000, 49061, 16266, 48849, 49037, 49024, 48628,
             16327, 49062, 48999, 48854, 15918, 16214, 16334, 49072, 48997, 48822, 15971,
             16219, 16326],
}


@pytest.mark.parametrize("name", sorted(_EQX))
@pytest.mark.parametrize("jit", [False, True])
def test_norm_layers_match_equinox(name, jit):
    layer = {"layer": nn.LayerNorm((4, 6)), "group": nn.GroupNorm(2, 4),
             "rows": zx.vmap(nn.LayerNorm(6, use_weight=False, use_bias=False))}[name]
    out = (zx.jit(layer) if jit else layer)(znp.asarray(_X, znp.bfloat16))
    assert out.dtype == BF16
    assert bits(out).ravel().tolist() == _EQX[name]


# --------------------------------------------------------------------------- files


def test_checkpoint_round_trip():
    from safetensors.numpy import load_file

    tree = {"w": znp.asarray([1.3, -2.7, 1e-3], znp.bfloat16), "b": znp.ones(2)}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.safetensors")
        zx.io.save(path, tree)
        back = zx.io.load(path, tree)
        assert back["w"].dtype == BF16 and bits(back["w"]).tolist() == bits(tree["w"]).tolist()
        raw = load_file(path)           # safetensors' own reader sees a BF16 tensor
        assert [np.dtype(a.dtype) for k, a in sorted(raw.items()) if a.size == 3] == [BF16]


def test_export_round_trip():
    x = znp.asarray([1.3, -2.7], znp.bfloat16)
    exp = zx.export.export(zx.jit(lambda v: v * 2 + 0.5))(x)
    back = zx.export.deserialize(exp.serialize())
    assert bits(back.call(x)).tolist() == bits(x * 2 + 0.5).tolist()


# --------------------------------------------------------------------------- no ml_dtypes


def test_missing_ml_dtypes_is_a_clear_error(monkeypatch):
    """Without ml_dtypes, bfloat16 raises MissingDependencyError naming the extra, and
    the rest of zerax keeps working.  (Simulated: the import fails, in a fresh state.)"""
    from zerax._src.base import dtypes
    from zerax._src.numpy import types

    real_import = builtins.__import__

    def no_ml_dtypes(name, *args, **kwargs):
        if name == "ml_dtypes" or name.startswith("ml_dtypes."):
            raise ImportError("No module named 'ml_dtypes'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ml_dtypes)
    monkeypatch.delitem(sys.modules, "ml_dtypes", raising=False)
    monkeypatch.setattr(dtypes, "_bf16", [])
    monkeypatch.setattr(types, "_bfloat16", [])
    for get in (lambda: znp.bfloat16, lambda: znp.dtype("bfloat16"),
                lambda: zx.dtypes.bfloat16, lambda: znp.zeros(2, "bfloat16")):
        with pytest.raises(errors.MissingDependencyError, match=r"zerax\[bfloat16\]"):
            get()
    assert float(zx.jit(lambda v: (v * 2).sum())(znp.ones(3, np.float16))) == 6.0
    assert znp.issubdtype(np.float32, znp.floating)
