"""Compiled code without the casts Numba does not need keeps NumPy's dtypes and values
(backends/numba/scalar_types.py drops ``np.<dtype>(...)`` where it proves the type).

A dropped cast that was needed would show as a value computed in a wider type (a float32
product carried in float64, an int8 sum that does not wrap), so each program is compared
with NumPy bit for bit.  Sums and products are kept in separate chains: a product
followed by a sum may become one fused multiply-add in compiled code.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax._src.backends.numba.scalar_types import ExactTypes, cast_free

DTYPES = ["float64", "float32", "complex128", "complex64", "int64", "uint64", "int32",
          "int8", "uint8", "int16"]


def _products(a, b, c):
    return (a * b) * c * b, -(a * c)


def _sums(a, b, c):
    return (a + b) - c + a, a - b - b


def _quotients(a, b, c):
    if znp.issubdtype(a.dtype, znp.floating):
        return (a / b) / c, znp.sqrt(znp.abs(a)) + znp.floor(b) - znp.ceil(c) + znp.sign(a)
    return a, b


def _compares(a, b, c):
    m = znp.where(a < b, a, c) if not znp.iscomplexobj(a) else znp.where(a == b, a, c)
    return m, a != c, (a * b) == c


@pytest.fixture(scope="module")
def compiled():
    return {f.__name__: zx.jit(f) for f in (_products, _sums, _quotients, _compares)}


def _values(dtype, data):
    d = np.dtype(dtype)
    n = 9
    if d.kind == "c":
        parts = data.draw(st.lists(st.floats(-1e3, 1e3, width=32), min_size=6 * n,
                                   max_size=6 * n))
        p = np.array(parts, np.float64).reshape(3, 2, n)
        return [(p[k, 0] + 1j * p[k, 1]).astype(d) for k in range(3)]
    if d.kind == "f":
        xs = data.draw(st.lists(st.floats(-1e4, 1e4, width=32), min_size=3 * n,
                                max_size=3 * n))
        return list(np.array(xs, np.float64).reshape(3, n).astype(d))
    info = np.iinfo(d)
    xs = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=3 * n,
                            max_size=3 * n))
    return list(np.array(xs, dtype=object).reshape(3, n).astype(d))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_compiled_chains_match_numpy_bit_for_bit(compiled, dtype, data):
    a, b, c = _values(dtype, data)
    with np.errstate(all="ignore"):
        for name, fn in compiled.items():
            if name == "_compares":
                ref = [np.where(a < b, a, c) if a.dtype.kind != "c" else np.where(a == b, a, c),
                       a != c, (a * b) == c]
            elif name == "_quotients" and a.dtype.kind == "f":
                ref = [(a / b) / c, np.sqrt(np.abs(a)) + np.floor(b) - np.ceil(c) + np.sign(a)]
            else:
                ref = [np.asarray(r) for r in globals()[name](a, b, c)]
            got = fn(znp.asarray(a), znp.asarray(b), znp.asarray(c))
            for g, r in zip(got, ref):
                g = np.asarray(g)
                assert g.dtype == r.dtype, (name, g.dtype, r.dtype)
                if name == "_products" and g.dtype.kind == "c":
                    # a complex product is itself products and sums (one FMA apart)
                    eps = np.finfo(g.dtype).eps
                    tiny = np.finfo(g.dtype).smallest_subnormal   # (subnormal results)
                    np.testing.assert_allclose(g, r, rtol=8 * eps, atol=8 * tiny)
                    continue
                np.testing.assert_array_equal(g.view(np.uint8), r.view(np.uint8),
                                              err_msg=f"{name} {dtype}")


def test_casts_are_dropped_only_when_proved():
    t = ExactTypes()
    t.add("x1", np.float32)
    t.add("x2", np.float32)
    t.add("i1", np.int8)
    t.add("d1", np.float64)
    # float32 * float32 is float32 in Numba: no cast needed
    assert cast_free("np.float32(x1 * x2)", np.float32, t) == ("x1 * x2", True)
    # int8 + int8 is int64 in Numba: the cast stays
    assert cast_free("np.int8(i1 + i1)", np.int8, t) == ("np.int8(i1 + i1)", True)
    # an unknown operand keeps the cast
    assert cast_free("np.float32(x1 * s9)", np.float32, t) == ("np.float32(x1 * s9)", True)
    # a cast that does not span the whole expression is not the output's cast
    assert cast_free("np.float64(d1) + x1", np.float64, t) == ("d1 + x1", False)
    # vecmath intrinsics: float64 -> float64; their float64 argument casts go too
    assert cast_free("np.float64(_vm_sin(np.float64(d1)))", np.float64, t) == \
        ("_vm_sin(d1)", True)
    assert cast_free("np.float32(_vm_sin(np.float64(x1)))", np.float32, t) == \
        ("np.float32(_vm_sin(np.float64(x1)))", True)
    # comparisons of one ordered dtype are booleans; literals are typed by their cast
    assert cast_free("np.bool_(d1 > np.float64(0.0))", np.bool_, t) == \
        ("d1 > np.float64(0.0)", True)
    assert cast_free("(x1 if b else x2)", np.float32, t) == ("(x1 if b else x2)", True)
    assert cast_free("np.float32(x1 / x2)", np.float32, t) == ("x1 / x2", True)
    assert cast_free("np.float32(np.sqrt(x1))", np.float32, t) == ("np.sqrt(x1)", True)
    t.add("k1", np.int64)
    # int64 / int64 is float64: the cast to the output dtype stays
    assert cast_free("np.int64(k1 / k1)", np.int64, t) == ("np.int64(k1 / k1)", True)
    assert cast_free("(x1 if b else d1)", np.float32, t) == ("(x1 if b else d1)", False)
