"""Host calls in the kernel IR (backends/lowering/host.py, kernel_ir.HostCall): an
equation without a kernel-IR rule, or a decomposition, FFT or callback inside a loop
body, a branch or a call, runs inside the compiled kernel by its primitive's NumPy
implementation.  Compiled results equal the eager ones (the same implementation) bit
for bit; callbacks run in program order; an exception raised by one stops the kernel
and comes out of the jitted call."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax._src.backends.lowering import covers
from zerax._src.core.core import all_primitives, bind

PRIMS = all_primitives()


def _kernel_ir(f, *args):
    """Whether the kernel IR carries ``f``'s program (the older path is not used)."""
    return covers(zx.make_jaxpr(f)(*args).jaxpr) is None


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,args", [
    ("digamma", (np.linspace(0.3, 4.0, 9),)),
    ("bessel_jv", (np.full(9, 1.5), np.linspace(0.1, 8.0, 9))),
    ("igamma", (np.linspace(0.5, 3.0, 9), np.linspace(0.1, 5.0, 9))),
    ("regularized_incomplete_beta", (np.full(9, 2.0), np.full(9, 3.0),
                                     np.linspace(0.05, 0.95, 9))),
    ("erf_inv", (np.linspace(-0.9, 0.9, 9).astype(np.float32),)),
])
def test_a_special_function_in_a_fori_loop_equals_the_eager_loop(name, args):
    prim = PRIMS[name]

    def f(*xs):
        def body(i, c):
            return c + bind(prim, *xs[:-1], c) * 0.01
        return lax.fori_loop(0, 5, body, xs[-1])
    assert _kernel_ir(f, *args)
    want = args[-1]
    for _ in range(5):
        want = want + np.asarray(bind(prim, *args[:-1], want)) * want.dtype.type(0.01)
    _same(zx.jit(f)(*args), want)


def test_special_functions_in_a_scan_body_stack_their_values():
    x = np.linspace(0.2, 2.0, 6)

    def f(x):
        return lax.scan(lambda c, _: (c * 1.1, (znp.sin(c), zx.scipy.special.digamma(c))),
                        x, None, length=4)
    assert _kernel_ir(f, x)
    c, rows = x, []
    for _ in range(4):
        rows.append(np.asarray(zx.scipy.special.digamma(c)))
        c = c * 1.1
    carry, (_, ys) = zx.jit(f)(x)
    _same(carry, c)
    _same(ys, np.stack(rows))


def test_fft_and_eigh_inside_a_scan_body_equal_numpy_in_a_loop():
    def step(c, _):
        w = znp.linalg.eigh(znp.outer(c, c) + znp.eye(4))[0]
        return znp.fft.fft(c).real / 10.0, w

    x = np.array([1.0, -2.0, 0.5, 3.0])
    def f(c):
        return lax.scan(step, c, None, length=3)

    assert _kernel_ir(f, x)
    c, ws = x, []
    for _ in range(3):
        a = np.outer(c, c) + np.eye(4)
        ws.append(np.linalg.eigh((a + a.T) * 0.5)[0])
        c = np.fft.fft(c).real / 10.0
    carry, w = zx.jit(f)(x)
    _same(carry, c)
    np.testing.assert_allclose(np.asarray(w), np.stack(ws), rtol=1e-13, atol=1e-13)
    text = zx.jit(f).lower(x).as_text()
    assert text.startswith("kernel ") and {"host#0", "host#1"} <= set(text.split()) and \
        " eigh(" in text and " fft(" in text


def test_callbacks_in_a_while_loop_and_a_cond_run_in_order():
    seen = []

    def body(c):
        i, x = c
        zx.debug.callback(lambda i, x: seen.append(("body", int(i), float(x))), i, x)
        x = lax.cond(i % 2 == 0,
                     lambda x: (zx.debug.callback(lambda v: seen.append(("even", float(v))),
                                                  x), x * 2.0)[1],
                     lambda x: x + 1.0, x)
        return i + 1, x

    f = zx.jit(lambda x: lax.while_loop(lambda c: c[0] < 4, body, (0, x)))
    assert _kernel_ir(lambda x: lax.while_loop(lambda c: c[0] < 4, body, (0, x)), 1.5)
    i, x = f(1.5)
    assert (int(i), float(x)) == (4, 9.0)
    assert seen == [("body", 0, 1.5), ("even", 1.5), ("body", 1, 3.0), ("body", 2, 4.0),
                    ("even", 4.0), ("body", 3, 8.0)]
    seen.clear()
    f(0.5)           # every run calls them again
    assert [s[0] for s in seen] == ["body", "even", "body", "body", "even", "body"]


class _Stop(Exception):
    pass


def test_a_callback_raising_in_a_while_loop_stops_the_kernel():
    calls = []

    def check(i):
        calls.append(int(i))
        if int(i) == 2:
            raise _Stop("stopped at 2")

    def body(i):
        zx.debug.callback(check, i)
        return i + 1

    # the loop would run forever if the kernel went on after the exception
    # (JAX's report of it: a JaxRuntimeError, the callback's exception its cause)
    f = zx.jit(lambda n: lax.while_loop(lambda i: i >= 0, body, n))
    with pytest.raises(errors.JaxRuntimeError, match="check.*stopped at 2") as info:
        f(0)
    assert isinstance(info.value.__cause__, _Stop)
    assert calls == [0, 1, 2]
    calls.clear()
    with pytest.raises(errors.JaxRuntimeError):      # the kernel is whole after an exception
        f(1)
    assert calls == [1, 2]
    g = zx.jit(lambda n: lax.while_loop(lambda i: i < n, body, 0))
    assert int(g(2)) == 2


def test_a_function_inside_jit_still_says_why_it_cannot_be_compiled():
    class Square(zx.Function):
        def forward(self, x):
            return x * x

        def backward(self, gy):
            (x,) = self.inputs
            return 2 * x * gy

    sq = Square()
    with pytest.raises(errors.NotSupportedError, match="forward is NumPy code"):
        zx.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: sq(c), x))(np.ones(3))


def test_every_primitive_without_a_rule_is_a_host_call_or_says_why_not():
    from zerax._src.backends.lowering import HOST, rules, scalar_rules
    from zerax._src.backends.lowering.host import refusal
    from zerax._src.ir.ir import Eqn
    for name, p in sorted(PRIMS.items()):
        if p in rules or p in scalar_rules or p in HOST:
            continue
        why = refusal(Eqn(p, [], [], {}))
        assert why is None or p.unsupported.get("lower") or p.impl is None, name
