"""The dispatch fast path of jit (jit.py, `JitFunction._fast_key`): every input kind users
pass (NumPy arrays, zerax Arrays, Python scalars, pytrees, keyword and static arguments)
reaches the compiled kernel on a repeat call without tracing or the full path again, and
without copying C-contiguous inputs; results match NumPy."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors


def _no_full_path(f):
    """Make the full (specialise/trace) path of ``f`` fail, so only the fast path works."""
    def fail(*a, **k):
        raise AssertionError("the full dispatch path was taken")
    f._entry = fail


def _counted(fun):
    calls = []

    def wrapped(*a, **k):
        calls.append(1)
        return fun(*a, **k)
    return wrapped, calls


rng = np.random.default_rng(0)
A, B = rng.standard_normal(16), rng.standard_normal(16)


CASES = [
    ("numpy", lambda a, b: a * b + znp.sin(a), lambda: ((A, B), {}),
     lambda a, b: a * b + np.sin(a)),
    ("arrays", lambda a, b: a * b + znp.sin(a), lambda: ((znp.asarray(A), znp.asarray(B)), {}),
     lambda a, b: a * b + np.sin(a)),
    ("mixed", lambda a, b, s: a * s - b, lambda: ((A, znp.asarray(B), 2.5), {}),
     lambda a, b, s: a * s - b),
    ("pytree", lambda ps, x: sum(znp.sum(w * x + c) for w, c in ps),
     lambda: (([(A[:8] + k, B[:8] - k) for k in range(3)], A[8:]), {}),
     lambda ps, x: sum(np.sum(w * x + c) for w, c in ps)),
    ("dict", lambda d: d["w"] @ d["x"] + d["b"],
     lambda: (({"x": A[:4], "w": np.outer(B[:3], A[:4]), "b": 1.5},), {}),
     lambda d: d["w"] @ d["x"] + d["b"]),
    ("none_in_tree", lambda t: t[0] * 2.0, lambda: (((A, None),), {}),
     lambda t: t[0] * 2.0),
    ("kwargs", lambda a, *, b, c=1.0: a * b + c, lambda: ((A,), {"b": B, "c": 3}),
     lambda a, b, c: a * b + c),
]


@pytest.mark.parametrize("name,fun,make,ref", CASES, ids=[c[0] for c in CASES])
def test_every_input_kind_takes_the_fast_path(name, fun, make, ref):
    traced, calls = _counted(fun)
    f = zx.jit(traced)
    args, kwargs = make()
    expected = ref(*[np.asarray(a) if not isinstance(a, (list, dict, tuple, float))
                     else a for a in args], **kwargs)
    np.testing.assert_allclose(np.asarray(f(*args, **kwargs)), expected, rtol=1e-13)
    _no_full_path(f)
    for _ in range(2):   # repeat calls: no trace, no full path, the same values
        np.testing.assert_allclose(np.asarray(f(*args, **kwargs)), expected, rtol=1e-13)
    assert len(calls) == 1


def test_new_values_of_a_seen_signature_are_not_retraced():
    traced, calls = _counted(lambda ps, s: [w * s + c for w, c in ps])
    f = zx.jit(traced)
    f([(A[:4], B[:4])], 1.0)
    _no_full_path(f)
    for k in range(3):
        w, c = rng.standard_normal(4), rng.standard_normal(4)
        out = f([(w, c)], float(k))
        np.testing.assert_allclose(np.asarray(out[0]), w * k + c, rtol=1e-15)
    assert len(calls) == 1


def test_static_arguments_by_number_and_name():
    traced, calls = _counted(lambda x, n, *, mode: x * n if mode == "mul" else x + n)
    f = zx.jit(traced, static_argnums=1, static_argnames="mode")
    np.testing.assert_allclose(np.asarray(f(A, 3, mode="mul")), A * 3)
    np.testing.assert_allclose(np.asarray(f(A, 3, mode="add")), A + 3)
    assert len(calls) == 2
    _no_full_path(f)
    np.testing.assert_allclose(np.asarray(f(B, 3, mode="mul")), B * 3)
    np.testing.assert_allclose(np.asarray(f(B, 3, mode="add")), B + 3)
    assert len(calls) == 2
    f2 = zx.jit(lambda x, n: x * len(n), static_argnums=1)
    with pytest.raises(errors.ZeraxTypeError, match="hashable"):
        f2(A, [1, 2])


def test_contiguous_inputs_reach_the_kernel_without_copies():
    f = zx.jit(lambda a, ps: a + ps[0] * ps[1])
    x, y, z = A.copy(), B.copy(), A * B
    f(x, (y, z))
    ((sig, entry),) = f._fast.items()
    seen = []

    def spy(*vals):
        seen.append(vals)
        return entry[0](*vals)
    f._fast[sig] = (spy, *entry[1:])
    out = f(x, (y, z))
    np.testing.assert_allclose(np.asarray(out), x + y * z, rtol=1e-15)
    assert [v is w for v, w in zip(seen[0][len(entry[1]):], (x, y, z))] == [True] * 3


def test_layouts_dtypes_and_weak_types():
    f = zx.jit(lambda a, s: a * s)
    m = rng.standard_normal((6, 6))
    np.testing.assert_allclose(np.asarray(f(m[:, ::2], 2.0)), m[:, ::2] * 2.0)  # strided
    np.testing.assert_allclose(np.asarray(f(m[:, 1::2], 2.0)), m[:, 1::2] * 2.0)
    x32 = np.ones(3, np.float32)
    assert f(x32, 2.0).dtype == np.float32              # a Python float stays weak
    assert f(x32, 2.0).dtype == np.float32              # (also on the fast path)
    assert f(x32, np.float64(2.0)).dtype == np.float64  # a NumPy scalar is not weak
    assert f(x32, 2).dtype == np.float32
    assert f(np.arange(3), 2).dtype == np.int64
    assert f(np.arange(3), True).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(f(np.arange(3), 2 ** 40)), np.arange(3) * 2 ** 40)


def test_byte_order_is_part_of_the_signature():
    f = zx.jit(lambda a: a * 2.0)
    little = np.arange(4.0)
    big = little.astype(">f8")
    for x in (little, big, little, big):   # both orders, alternating, on the fast path
        out = f(x)
        np.testing.assert_array_equal(np.asarray(out), np.arange(4.0) * 2.0)
        assert out.dtype == np.float64


def test_returned_inputs_are_not_the_callers_buffer():
    f = zx.jit(lambda x: (x, x * 2.0))
    x = A.copy()
    for _ in range(2):
        out, _ = f(x)
        assert not np.shares_memory(out._value, x)
    x[0] = 99.0
    assert float(out[0]) == A[0]


def test_tracers_and_grad_still_work():
    f = zx.jit(lambda ps, x: znp.sum(znp.tanh(ps[0] * x + ps[1])))
    ps = (A[:4], B[:4])
    f(ps, A[4:8])
    g = zx.grad(lambda w: f((w, ps[1]), A[4:8]))(ps[0])
    t = np.tanh(ps[0] * A[4:8] + ps[1])
    np.testing.assert_allclose(np.asarray(g), (1 - t * t) * A[4:8], rtol=1e-12)
    vm = zx.vmap(lambda x: f(ps, x))(np.stack([A[4:8], B[4:8]]))
    np.testing.assert_allclose(np.asarray(vm), [np.sum(np.tanh(ps[0] * v + ps[1]))
                                                for v in (A[4:8], B[4:8])], rtol=1e-12)


def test_bad_inputs_still_get_clear_errors():
    f = zx.jit(lambda x: x + 1)
    f(A)
    with pytest.raises(errors.ZeraxTypeError, match="not a valid zerax array"):
        f("text")
    with pytest.raises(errors.ZeraxTypeError, match="not a valid zerax array"):
        f(np.array(["a", "b"]))
