"""Integer and edge-dtype semantics in compiled code are NumPy's, as eagerly (issue 13).

For every integer dtype, jit is compared with eager zerax and with NumPy over the full
ranges (hypothesis, with the edges forced in): ``//`` and ``%`` by 0 and by -1 at the
minimum, shifts by the bit width or more (and negative counts), exact integer powers.
Then complex division by zero and complex ordering, big-endian and long double inputs,
and shapes beyond int64 indexing or memory (a clear error, not a hang).
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors

# every test runs once per backend (the backend fixture, tests/conftest.py)
pytestmark = pytest.mark.usefixtures("backend")

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
N = 16


def _edges(a, b, s, e):
    return a // b, a % b, a << s, a >> s, a ** 39, a ** 5, a ** e


def _numpy_edges(a, b, s, e):
    with np.errstate(all="ignore"):
        return (np.floor_divide(a, b), np.remainder(a, b), np.left_shift(a, s),
                np.right_shift(a, s), a ** a.dtype.type(39), a ** a.dtype.type(5),
                np.power(a, e))


_JITTED = {np.dtype(d): zx.jit(_edges) for d in INT_DTYPES}


@st.composite
def _operands(draw, dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    full = hnp.from_dtype(np.dtype(dtype))
    edge = st.sampled_from(sorted({info.min, info.max, 0, 1} | ({-1} if info.min else set())))
    values = st.one_of(edge, full)
    a = draw(hnp.arrays(dtype, N, elements=values))
    b = draw(hnp.arrays(dtype, N, elements=values))
    shift_lo = -3 if info.min else 0
    s = draw(hnp.arrays(dtype, N, elements=st.one_of(
        st.integers(shift_lo, min(bits + 10, info.max)), full)))
    e = draw(hnp.arrays(dtype, N, elements=st.integers(0, min(70, info.max))))
    # The cases of the issue, always present: INT_MIN // -1, x // 0, shifts by >= width.
    a[:4] = [info.min, info.min, 7, 3]
    b[:4] = [-1 if info.min else 1, 0, 0, 5]
    s[:3] = [bits, bits + 6 if bits + 6 <= info.max else bits, 1]
    return a, b, s, e


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_jit_equals_eager_and_numpy_over_full_ranges(dtype, data):
    a, b, s, e = data.draw(_operands(dtype))
    ref = _numpy_edges(a, b, s, e)
    got = _JITTED[np.dtype(dtype)](a, b, s, e)
    with np.errstate(all="ignore"), zx.disable_jit():
        eager = _edges(*(znp.asarray(x) for x in (a, b, s, e)))
    for name, r, g, q in zip(["//", "%", "<<", ">>", "**39", "**5", "**e"], ref, got, eager):
        assert np.asarray(g).dtype == r.dtype, name
        np.testing.assert_array_equal(np.asarray(g), r, err_msg=name)
        np.testing.assert_array_equal(np.asarray(q), r, err_msg=name)


def test_issue_cases_exact():
    m = np.array([-2 ** 63])
    out = _JITTED[np.dtype(np.int64)](np.array([3, m[0], 5, 1]), np.array([1, -1, 0, 1]),
                                      np.array([64, 70, 63, 1]), np.array([39, 0, 1, 2]))
    assert out[4][0] == 4052555153018976267          # 3 ** 39, exact (floats give ...256)
    assert out[0].tolist()[1:3] == [-2 ** 63, 0] and out[1].tolist()[1:3] == [0, 0]
    assert out[2].tolist()[:2] == [0, 0] and out[3].tolist()[:2] == [0, -1]


# A process, because before the fix the remainder killed it (SIGFPE) and the sum of a
# 2**40 x 2**40 broadcast ran with no end.
_CHILD = """
    import json, numpy as np, zerax as zx, zerax.numpy as znp
    rem = zx.jit(lambda a, b: a % b)(np.array([-2**63]), np.array([-1])).tolist()
    try:
        zx.jit(lambda x: znp.sum(znp.broadcast_to(x, (2**40, 2**40))))(1.0)
        big = "no error"
    except zx.errors.ZeraxValueError as e:
        big = str(e)
    print("REPORT " + json.dumps({"rem": rem, "big": big}))
"""


def test_minimum_remainder_and_huge_broadcast_in_a_process():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_CHILD)], capture_output=True,
                          text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    report = json.loads(line[len("REPORT "):])
    assert report["rem"] == [0]
    assert "int64 indexing" in report["big"] and "1099511627776" in report["big"]


def test_sizes_beyond_memory_or_indexing_are_clear_errors():
    big = lambda x: znp.sum(znp.broadcast_to(x, (2 ** 40, 2 ** 40)))  # noqa: E731
    with pytest.raises(errors.ZeraxValueError):
        big(1.0)                                         # eagerly, NumPy's refusal
    with pytest.raises(errors.ZeraxValueError, match="int64 indexing"):
        zx.jit(big)(1.0)
    with pytest.raises(errors.ZeraxValueError, match="int64 indexing"):   # inside a loop
        zx.jit(lambda x: zx.lax.fori_loop(0, 3, lambda i, c: c + big(x), 0.0))(1.0)
    with pytest.raises(errors.ZeraxValueError, match="memory"):
        zx.jit(lambda x: znp.broadcast_to(x, (2 ** 22, 2 ** 22)) + 1.0)(1.0)


_COMPLEX = np.array([1 + 1j, -2 + 0j, 0j, np.nan + 1j, 1 + np.nan * 1j, 3 - 4j, 1 + 2j, 1 + 2j])
_OTHER = np.array([0j, 0j, 0j, 1 + 1j, 1 + 1j, -0.0 + 0j, 1 + 3j, 1 + 2j])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_division_by_zero_and_ordering(dtype):
    a, b = _COMPLEX.astype(dtype), _OTHER.astype(dtype)

    def f(a, b):
        return a / b, a < b, a <= b, a > b, a >= b, znp.maximum(a, b), znp.minimum(a, b)

    with np.errstate(all="ignore"):
        ref = (a / b, a < b, a <= b, a > b, a >= b, np.maximum(a, b), np.minimum(a, b))
        eager = f(znp.asarray(a), znp.asarray(b))
    got = zx.jit(f)(a, b)
    for r, g, q in zip(ref, got, eager):
        assert np.asarray(g).dtype == r.dtype
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-6)   # nan == nan here
        np.testing.assert_allclose(np.asarray(q), r, rtol=1e-6)
    # NumPy's complex inf/nan at b == 0, exactly.
    np.testing.assert_array_equal(np.asarray(got[0])[:3], ref[0][:3])


def test_big_endian_inputs_are_converted_on_entry():
    x = np.linspace(-2.0, 2.0, 9).astype(">f8")
    n = np.arange(9, dtype=">i4")
    f = zx.jit(lambda x, n: (znp.sin(x) * n, n // 2))
    f(x.astype("<f8"), n.astype("<i4"))       # the same signature seen in native order first
    for out in (f(x, n), f(zx.numpy.asarray(x), n), f.__wrapped__(znp.asarray(x), n)):
        np.testing.assert_allclose(np.asarray(out[0]), np.sin(x.astype("<f8")) * n,
                                   rtol=1e-14)
        np.testing.assert_array_equal(np.asarray(out[1]), n.astype("<i4") // 2)
    assert zx.Array(x).dtype == np.float64 and zx.Array(x).dtype.isnative


def test_long_double_runs_as_eagerly():
    x = np.linspace(0.5, 2.0, 5).astype(np.longdouble)
    f = lambda x: x * x + x / 3  # noqa: E731
    got = zx.jit(f)(x)
    with zx.disable_jit():
        eager = f(znp.asarray(x))
    assert np.asarray(got).dtype == np.longdouble
    np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))
    np.testing.assert_array_equal(np.asarray(got), x * x + x / 3)
