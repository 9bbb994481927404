"""zerax.debug.print / zerax.debug.callback: JAX's semantics (the expected lines were
recorded from JAX 0.10.2 running the same programs): the runtime values under jit, one
call per batch element under vmap, the forward values under grad, every iteration of
a compiled loop; never removed as dead code."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax


def lines(capsys):
    return capsys.readouterr().out.splitlines()


def show(x):
    zx.debug.print("x={x} y={}", x * 2, x=x)
    return x * x


def test_eager_print_and_callback_values(capsys):
    show(3.0)
    assert lines(capsys) == ["x=3.0 y=6.0"]
    seen = []
    zx.debug.callback(lambda a, b, k, s: seen.append((type(a), a.tolist(), b, k, s)),
                      znp.ones(2), 5, k=3, s="static")
    (kind, a, b, k, s), = seen
    assert kind is zx.Array and a == [1.0, 1.0]
    assert isinstance(b, zx.Array) and int(b) == 5 and k == 3 and s == "static"


def test_jit_prints_runtime_values_each_call(capsys):
    f = zx.jit(show)
    assert float(f(3.0)) == 9.0
    f(4.0)
    assert lines(capsys) == ["x=3.0 y=6.0", "x=4.0 y=8.0"]
    seen = []

    @zx.jit
    def g(x, y):
        zx.debug.callback(lambda a, b: seen.append((a.tolist(), int(b))), x, y)
        return x + y

    g(znp.arange(3.0), 2)
    assert seen == [([0.0, 1.0, 2.0], 2)]


def test_vmap_calls_once_per_element_in_order(capsys):
    zx.vmap(show)(znp.arange(3.0))
    assert lines(capsys) == ["x=0.0 y=0.0", "x=1.0 y=2.0", "x=2.0 y=4.0"]
    zx.vmap(lambda x, c: zx.debug.print("{} {}", x, c), in_axes=(0, None))(
        znp.arange(2.0), 7.0)
    assert lines(capsys) == ["0.0 7.0", "1.0 7.0"]
    # jit of vmap: the unrolled calls are compiled, one per element
    zx.jit(zx.vmap(lambda x: zx.debug.print("r {}", x)))(znp.arange(4.0).reshape(2, 2))
    assert lines(capsys) == ["r [0. 1.]", "r [2. 3.]"]


def test_grad_and_jvp_print_the_forward_values_once(capsys):
    assert float(zx.grad(show)(3.0)) == 6.0
    assert lines(capsys) == ["x=3.0 y=6.0"]
    zx.jvp(show, (3.0,), (1.0,))
    assert lines(capsys) == ["x=3.0 y=6.0"]
    assert float(zx.jit(zx.grad(show))(2.0)) == 4.0
    assert lines(capsys) == ["x=2.0 y=4.0"]
    assert float(zx.hessian(lambda x: (zx.debug.print("h {}", x), x ** 3)[1])(2.0)) == 12.0
    assert lines(capsys) == ["h 2.0"]


def test_grad_of_jit_prints_once(capsys):
    """The tangent and transposed programs derived from a call recompute its primal
    values but must not repeat its effects."""
    assert float(zx.grad(zx.jit(show))(3.0)) == 6.0
    assert sorted(lines(capsys)) == ["x=3.0 y=6.0"]
    # a print of constants only is not run while the derived programs are traced
    assert float(zx.grad(zx.jit(lambda x: (zx.debug.print("c"), x * x)[1]))(3.0)) == 6.0
    assert lines(capsys) == ["c"]


def test_compiled_loops_call_back_every_iteration(capsys):
    def body(i, c):
        zx.debug.print("i={} c={}", i, c)
        return c + 1.0

    zx.jit(lambda x: lax.fori_loop(0, 3, body, x))(0.0)
    assert lines(capsys) == ["i=0 c=0.0", "i=1 c=1.0", "i=2 c=2.0"]
    zx.jit(lambda x: lax.while_loop(lambda c: c < 2,
                                    lambda c: (zx.debug.print("c={}", c), c + 1)[1], x))(0)
    assert lines(capsys) == ["c=0", "c=1"]
    # only the branch taken calls back
    zx.jit(lambda x: lax.cond(x > 0, lambda v: (zx.debug.print("pos {}", v), v)[1],
                              lambda v: (zx.debug.print("neg {}", v), -v)[1], x))(2.0)
    assert lines(capsys) == ["pos 2.0"]


def test_scan_under_grad_prints_the_forward_carries(capsys):
    def h(x):
        def body(c, t):
            zx.debug.print("c={}", c)
            return c * t, None
        return lax.scan(body, x, znp.arange(1.0, 4.0))[0]

    assert float(zx.grad(h)(2.0)) == 6.0
    assert lines(capsys) == ["c=2.0", "c=2.0", "c=4.0"]
    assert float(zx.jit(zx.grad(h))(2.0)) == 6.0
    assert lines(capsys) == ["c=2.0", "c=2.0", "c=4.0"]


def test_never_removed_as_dead_code(capsys):
    def inner(x):
        zx.debug.print("inner {}", x)
        return x * 3

    # the inner call's, the scan's and the branch's outputs are unused
    zx.jit(lambda x: (zx.jit(inner)(x), x + 1)[1])(2.0)
    assert lines(capsys) == ["inner 2.0"]
    zx.jit(lambda x: (lax.scan(lambda c, t: (zx.debug.print("t={}", t), (c, t))[1], x,
                               znp.arange(2.0)), x)[1])(1.0)
    assert lines(capsys) == ["t=0.0", "t=1.0"]
    jaxpr = zx.make_jaxpr(lambda x: (zx.debug.print("{}", x), x + 1)[1])(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["debug_callback", "add"]


def test_program_order_and_constants(capsys):
    def g(x):
        y = x * 2
        zx.debug.print("y={}", y)
        z = y + 1
        zx.debug.print("z={}", z)
        return z

    np.testing.assert_array_equal(zx.jit(g)(znp.arange(3.0)), [1.0, 3.0, 5.0])
    assert lines(capsys) == ["y=[0. 2. 4.]", "z=[1. 3. 5.]"]
    # only constants: still printed at each call of the compiled function, as in JAX
    h = zx.jit(lambda x: (zx.debug.print("hello {}", 2), x)[1])
    h(1.0)
    h(2.0)
    assert lines(capsys) == ["hello 2", "hello 2"]
    # a large program (parallel loops) around the call
    zx.jit(lambda x: (zx.debug.print("sum {}", x.sum()), znp.sin(x) * 2)[1])(
        znp.ones(200_000))
    assert lines(capsys) == ["sum 200000.0"]


def test_formats_dtypes_and_print_options(capsys):
    zx.jit(lambda x: zx.debug.print("{:.3f}", x))(1 / 3)
    zx.jit(lambda a, b, c: zx.debug.print("{} {} {}", a, b, c))(znp.int32(3), True, 1 + 2j)
    zx.debug.print("{}", {"a": znp.ones(2)})
    with np.printoptions(precision=2):
        zx.debug.print("{}", znp.asarray([1 / 3, 2 / 3]))
    zx.debug.print(ordered=True)("two-call {}", 1.5)
    assert lines(capsys) == ["0.333", "3 True (1+2j)", "{'a': Array([1., 1.], dtype=float64)}",
                             "[0.33 0.67]", "two-call 1.5"]
    with zx.disable_jit():
        zx.jit(show)(1.0)
    assert lines(capsys) == ["x=1.0 y=2.0"]


def test_errors():
    with pytest.raises(errors.ZeraxValueError, match="unused positional"):
        zx.debug.print("{}", 1.0, 2.0)
    with pytest.raises(errors.ZeraxValueError, match="f-string"):
        zx.debug.print("x", x=1.0)
    with pytest.raises(KeyError):
        zx.debug.print("{x}", 1.0)
    with pytest.raises(errors.ZeraxTypeError, match="must be callable"):
        zx.debug.callback(3)
    with pytest.raises(errors.ZeraxTypeError, match="two-call"):
        zx.debug.callback(None, 1.0)
    with pytest.raises(errors.ZeraxTypeError, match="format string"):
        zx.debug.print(3)


# --------------------------------------------------------------------------- debug_nans
# (NumPy's own RuntimeWarnings for log(-1) and the like are not what is tested here)
nan_warnings = pytest.mark.filterwarnings("ignore::RuntimeWarning")

@pytest.fixture
def debug_nans():
    zx.config.update("jax_debug_nans", True)
    try:
        yield
    finally:
        zx.config.update("jax_debug_nans", False)


@nan_warnings
def test_debug_nans_eager_names_the_primitive(debug_nans):
    assert zx.config.jax_debug_nans and zx.config.debug_nans
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
        znp.log(-1.0)
    with pytest.raises(FloatingPointError, match="in sqrt"):
        zx.grad(lambda x: znp.sqrt(x) * 0)(-1.0)
    with pytest.raises(FloatingPointError, match="in log"):
        zx.vmap(znp.log)(znp.array([1.0, -1.0]))
    # no nan: unchanged values; infinities and integers are not checked
    assert float(zx.grad(znp.sqrt)(0.0)) == np.inf
    np.testing.assert_array_equal(znp.arange(3) // 1, [0, 1, 2])


@nan_warnings
def test_debug_nans_under_jit_reruns_op_by_op(debug_nans):
    f = zx.jit(lambda x: znp.log(x) * 2)
    assert float(f(1.0)) == 0.0
    assert float(f(1.0)) == 0.0   # the dispatch fast path checks too
    with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
        f(-1.0)
    # a nan the op-by-op run does not reproduce names the jitted function
    from zerax._src.ops.debug_nans import check_jit_outputs
    with pytest.raises(FloatingPointError, match=r"in jit\(g\).*produced no nan"):
        check_jit_outputs("g", [np.array([np.nan])], lambda: None)


@nan_warnings
def test_debug_nans_off_and_infs():
    assert not zx.config.jax_debug_nans
    assert np.isnan(float(znp.log(-1.0)))
    zx.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log"):
            znp.log(0.0)
    finally:
        zx.config.update("jax_debug_infs", False)
    assert float(znp.log(0.0)) == -np.inf


def test_a_callback_raising_under_jit_is_a_jax_runtime_error_and_eagerly_itself():
    """As JAX: inside a compiled program (top level or a loop body) the callback's
    exception comes out as jax.errors.JaxRuntimeError with it as the cause; called
    eagerly it propagates as a ValueError."""
    import zerax.errors as zerrors

    def boom(x):
        raise ValueError("boom")

    top = zx.jit(lambda x: (zx.debug.callback(boom, x), x + 1.0)[1])
    loop = zx.jit(lambda x: zx.lax.fori_loop(
        0, 3, lambda i, c: (zx.debug.callback(boom, c), c + 1.0)[1], x))
    for f in (top, loop):
        with pytest.raises(zerrors.JaxRuntimeError, match="boom.*ValueError: boom") as info:
            f(np.ones(2))
        assert isinstance(info.value, RuntimeError)
        assert type(info.value.__cause__) is ValueError
    with pytest.raises(ValueError, match="boom"):
        zx.debug.callback(boom, np.ones(2))
