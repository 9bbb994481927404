"""zerax.jit: API, caching, composition with grad/vmap, errors, the on-disk cache."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors


def chain(a, b):
    return znp.tanh(a) * b + znp.sqrt(a * a + 1.0) - znp.log1p(b * b)


def chain_np(a, b):
    return np.tanh(a) * b + np.sqrt(a * a + 1.0) - np.log1p(b * b)


@pytest.fixture(scope="module")
def jchain():
    return zx.jit(chain)


def test_jit_matches_eager_and_numpy(jchain):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000), rng.standard_normal(1000)
    # tanh and log1p are zerax's own vectorised versions (within 3 ulp of NumPy's); the
    # result cancels to near zero at a few points, hence the absolute tolerance
    np.testing.assert_allclose(jchain(a, b), chain_np(a, b), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(jchain(a, b), chain(a, b), rtol=1e-13, atol=1e-15)
    assert isinstance(jchain(a, b), zx.Array)


def test_fused_chain_is_one_loop(jchain):
    text = jchain.lower(np.ones(1000), np.ones(1000)).as_text()
    assert text.count("kernel ") == 1 and text.count("for ") == 1 and "tanh(" in text


def test_retrace_only_when_signature_changes():
    traces = []

    @zx.jit
    def f(x):
        traces.append(1)
        return x * 2.0

    f(np.ones(3))
    f(np.zeros(3))
    assert len(traces) == 1
    f(np.ones(4))
    f(np.ones(3, np.float32))
    assert len(traces) == 3


def test_static_argnums_and_argnames():
    @zx.jit
    def plain(x, n):
        return x * n

    def power(x, n):
        out = x
        for _ in range(n - 1):  # Python control flow on a static argument
            out = out * x
        return out

    f = zx.jit(power, static_argnums=1)
    np.testing.assert_allclose(f(np.array([2.0]), 3), [8.0])
    g = zx.jit(power, static_argnames="n")
    np.testing.assert_allclose(g(np.array([2.0]), n=4), [16.0])
    with pytest.raises(errors.ConcretizationError, match="static"):
        zx.jit(power)(np.array([2.0]), 3)
    np.testing.assert_allclose(plain(np.array([2.0]), 3), [6.0])


def test_disable_jit_runs_eagerly():
    seen = []

    @zx.jit
    def f(x):
        seen.append(isinstance(x, zx._src.core.core.Tracer))
        return x + 1.0

    with zx.disable_jit():
        f(np.ones(2))
    f(np.ones(2))
    assert seen == [False, True]  # eager inside the block, traced outside


def test_grad_of_jit_and_jit_of_grad_and_vmap_of_jit():
    f = lambda x: znp.sum(znp.sin(x) * x)
    x = np.linspace(0.1, 1.0, 5)
    want = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(zx.grad(zx.jit(f))(x), want, rtol=1e-13)
    np.testing.assert_allclose(zx.jit(zx.grad(f))(x), want, rtol=1e-13)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(zx.vmap(zx.jit(f))(xs), [f(x), f(2 * x)], rtol=1e-13)
    np.testing.assert_allclose(zx.grad(zx.grad(zx.jit(lambda v: znp.sin(v) * v)))(0.3),
                               2 * np.cos(0.3) - 0.3 * np.sin(0.3), rtol=1e-12)


def test_nested_jit_is_inlined():
    inner = zx.jit(lambda x: x * 3.0)
    outer = zx.jit(lambda x: inner(x) + 1.0)
    np.testing.assert_allclose(outer(np.ones(3)), np.full(3, 4.0))
    assert "jit" in str(zx.make_jaxpr(outer)(np.ones(3)))


def test_matmul_mlp_gradient_under_jit():
    rng = np.random.default_rng(1)
    W, x, y = rng.standard_normal((6, 4)), rng.standard_normal((5, 6)), rng.standard_normal((5, 4))
    loss = lambda W: znp.sum((znp.tanh(x @ W) - y) ** 2)
    np.testing.assert_allclose(zx.jit(zx.grad(loss))(W), zx.grad(loss)(W), rtol=1e-12)


def test_threads_share_one_compiled_program(jchain):
    a = np.ones(1000)
    out = []

    def run():
        out.append(np.asarray(jchain(a, a)))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out:
        np.testing.assert_allclose(o, chain_np(a, a))


def test_unusable_cache_directory_warns_and_compiles(tmp_path):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    code = textwrap.dedent("""
        import numpy as np, zerax as zx, zerax.numpy as znp
        f = zx.jit(lambda a: znp.exp(a) * 2.0 + 1.0)
        print(float(f(np.ones(7))[0]))
    """)
    env = dict(os.environ, ZERAX_CACHE_DIR=str(blocked))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) == pytest.approx(np.exp(1.0) * 2.0 + 1.0, rel=1e-14)
    assert "could not be used" in done.stderr


class _NumpySquare(zx.Function):
    def forward(self, x):
        return x ** 2

    def backward(self, gy):
        (x,) = self.inputs
        return 2 * x * gy


def test_uncompilable_primitive_is_a_zerax_error_naming_the_line():
    def uses_function(x):
        return _NumpySquare()(x) + 1.0  # this line must be named

    with pytest.raises(errors.NotSupportedError) as info:
        zx.jit(uses_function)(np.ones(3))
    msg = str(info.value)
    assert "function_call" in msg and "test_jit.py" in msg and "uses_function" in msg
    with zx.disable_jit():
        np.testing.assert_allclose(zx.jit(uses_function)(np.ones(3)), np.full(3, 2.0))


def test_lower_compile_gives_a_callable_for_that_signature():
    f = zx.jit(lambda x, k=1: x * k, static_argnames="k")
    compiled = f.lower(np.ones(3), k=4).compile()
    np.testing.assert_array_equal(compiled(np.arange(3.0)), np.arange(3.0) * 4)
    assert "kernel" in compiled.as_text()
    np.testing.assert_array_equal(zx.grad(lambda x: compiled(x).sum())(np.ones(3)), [4.0] * 3)
    with pytest.raises(zx.errors.ZeraxTypeError, match="lowered for"):
        compiled(np.ones(4))


def test_config_understands_jax_option_names():
    zx.config.update("jax_enable_x64", True)
    assert zx.config.jax_enable_x64 and zx.config.x64_enabled
    zx.config.update("jax_enable_x64", False)     # JAX's default mode (the guard restores)
    assert not zx.config.jax_enable_x64 and not zx.config.x64_enabled
    zx.config.update("jax_enable_x64", True)
    zx.config.update("jax_platforms", "cpu")
    zx.config.update("jax_disable_jit", True)
    try:
        assert zx.config.jit_disabled
    finally:
        zx.config.update("jax_disable_jit", False)
    with pytest.raises(zx.errors.ZeraxValueError, match="unknown"):
        zx.config.update("no_such_option", 1)


def test_jit_of_jvp_with_integer_outputs_gives_float0_tangents():
    def f(h):
        return zx.jvp(lambda x: (x * 2.0, znp.argmax(x)), (h,), (h,))

    x = zx.numpy.asarray(np.ones(4))
    jf = zx.jit(f)
    for _ in range(2):   # the second call takes the dispatch fast path, if any
        (y, i), (ty, ti) = jf(x)
        want = f(x)
        np.testing.assert_array_equal(y, want[0][0])
        np.testing.assert_array_equal(ty, want[1][0])
        assert int(i) == 0 and ti.dtype == want[1][1].dtype and ti.shape == ()


def test_float16_programs_round_as_numpy():
    # float16 arithmetic rounds each operation to float16, as NumPy's float16 loops do,
    # so jit gives what eager (and NumPy) gives, rounding included.
    x = np.array([1.5, 2.25, -0.1], np.float16)
    f = zx.jit(lambda v: v * np.float16(2) + znp.sin(v))
    got = f(x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, x * np.float16(2) + np.sin(x))
    g = zx.jit(zx.grad(lambda v: znp.sum(znp.sin(v) * v)))
    np.testing.assert_array_equal(g(x), zx.grad(lambda v: znp.sum(znp.sin(v) * v))(x))
    h = zx.jit(lambda v: zx.lax.fori_loop(0, 3, lambda i, c: c * np.float16(1.5), v))
    np.testing.assert_array_equal(h(x), x * np.float16(1.5) * np.float16(1.5) * np.float16(1.5))
    # a float16 intermediate of a float64 program
    k = zx.jit(lambda v: (v.astype(np.float16) * 3).astype(np.float64))
    np.testing.assert_array_equal(k(np.array([0.1, 1.0])),
                                  (np.array([0.1, 1.0]).astype(np.float16) * 3).astype(float))


def test_python_number_arguments_are_weakly_typed():
    # As JAX: a Python number passed to a jitted function promotes as a Python scalar,
    # so an SGD step on float32 parameters stays float32 (eager zerax gives the same)
    p = np.ones(3, np.float32)
    steps = [lambda p, lr: p - lr * p, lambda p, lr: p * (1 - lr),
             lambda p, lr: p * abs(-lr) ** 2 / (2.0 * lr), lambda p, lr: p ** lr]
    for step in steps:
        eager = step(zx.Array(p), 0.1)
        got = zx.jit(step)(p, 0.1)
        assert got.dtype == eager.dtype == np.float32
        np.testing.assert_allclose(got, eager, rtol=1e-6)
    # a zerax.numpy function of a Python number is a strong float64, as NumPy's is
    # (NumPy 2; JAX would keep float32 here): jit agrees with eager
    step = lambda p, lr: p * znp.exp(-lr)
    assert zx.jit(step)(p, 0.1).dtype == step(zx.Array(p), 0.1).dtype == np.float64
    assert zx.jit(lambda x, n: x + n)(np.arange(3, dtype=np.int32), 1).dtype == np.int32
    assert zx.jit(lambda p, d: p * d["a"])(p, {"a": 2.0}).dtype == np.float32
    # NumPy scalars and arrays stay strong; each kind is its own trace
    f = zx.jit(lambda p, lr: p - lr * p)
    assert f(p, np.float64(0.1)).dtype == np.float64
    assert f(p, 0.1).dtype == np.float32
    assert f(p, np.asarray(0.1)).dtype == np.float64
    # weak values alone keep their own dtype
    out = zx.jit(lambda lr: lr * 2)(0.1)
    assert out.dtype == np.float64 and float(out) == 0.2


def test_scalar_arithmetic_between_array_steps_does_not_split_the_loop():
    # an optimiser's shape: array updates, a bias correction on a scalar step count, and
    # arrays divided by it; the scalar part runs first, so one loop does all the arrays
    def step(g, m, k):
        m = 0.1 * g + 0.9 * m
        bc = 1.0 - 0.9 ** (k + 1).astype(np.float64)
        return m, m / bc
    f = zx.jit(step)
    g, m = np.linspace(-1, 1, 50), np.linspace(0, 2, 50)
    k = np.int32(3)
    src = f.lower(g, m, k).as_text()
    assert src.count("for ") == 1, src
    m_ref = 0.1 * g + 0.9 * m
    out_m, out_u = f(g, m, k)
    np.testing.assert_allclose(out_m, m_ref, rtol=1e-15)
    np.testing.assert_allclose(out_u, m_ref / (1.0 - 0.9 ** 4), rtol=1e-15)


def test_jitted_function_in_a_class_body_is_a_method():
    # As JAX's: the instance becomes the first argument, static with static_argnums=0,
    # traced as a pytree otherwise; looked up on the class it stays the plain function.
    import functools

    class Scaler:
        def __init__(self, k):
            self.k = k

        @functools.partial(zx.jit, static_argnums=0)
        def apply(self, x):
            return x * self.k

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Scaler) and other.k == self.k

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(Scaler(3.0).apply(x), [3.0, 6.0])
    np.testing.assert_allclose(Scaler(-1.0).apply(x), [-1.0, -2.0])
    np.testing.assert_allclose(Scaler.apply(Scaler(2.0), x), [2.0, 4.0])
    np.testing.assert_allclose(zx.grad(lambda v: znp.sum(Scaler(5.0).apply(v)))(x), [5.0, 5.0])

    @zx.tree_util.register_pytree_node_class
    class Affine:
        def __init__(self, w, b):
            self.w, self.b = w, b

        def tree_flatten(self):
            return (self.w, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        @zx.jit
        def __call__(self, x):
            return self.w * x + self.b

    np.testing.assert_allclose(Affine(np.float64(2.0), np.float64(1.0))(x), [3.0, 5.0])
