"""The kernel IR (backends/kernel_ir.py), its lowering from programs
(backends/lowering/) and the CPU emitter (backends/cpu/): kernels written by hand and
lowered from programs, checked against NumPy and Python loops; the structure of what
the lowering writes; the thread pool's loops; calls from several Python threads."""

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import ir

import zerax as zx
from zerax import errors
import zerax.numpy as znp
from zerax._src.backends import kernel_ir as K
from zerax._src.backends.cpu import compile as cpu_compile
from zerax._src.backends.cpu import emit, engine
from zerax._src.backends.lowering import Unlowerable, covers, lower_program


def _build(kernel):
    """A hand-written kernel compiled: fn(*inputs, *outputs)."""
    return cpu_compile.load_kernel(kernel).fn


def _f64(name, shape, kind):
    return K.Buffer(name, shape, np.float64, kind)


def test_the_printer_shows_the_data():
    x, y = _f64("x", (4,), "in"), _f64("y", (), "out")
    names = K.Namer()
    i, acc = names.var("i", K.I64), names.var("acc", np.float64)
    k = K.Kernel("k", [x], [y], [
        K.Declare(acc, K.Const(0.0, np.float64)),
        K.Reduce(acc, "add", i, 4, [], K.op("exp", K.Load(x, (i,)))),
        K.Store(y, (), acc)])
    assert str(k) == textwrap.dedent("""\
        kernel k(x:f64[4]) -> (y:f64[])
          var acc0:f64 = 0.0:f64
          acc0 <- add over i0 in 0..4:i64:
            yield exp(x[i0])
          y[] = acc0""")


def test_a_while_loop_with_branches_matches_python():
    """Collatz steps of each element: While, If, integer floordiv/rem, a mutable."""
    x, out = K.Buffer("x", (6,), np.int64, "in"), K.Buffer("o", (6,), np.int64, "out")
    names = K.Namer()
    i, v, n = names.var("i", K.I64), names.var("v", K.I64), names.var("n", K.I64)
    two, one = K.Const(2, K.I64), K.Const(1, K.I64)
    body = [
        K.Declare(v, K.Load(x, (i,))), K.Declare(n, K.Const(0, K.I64)),
        K.While([], K.op("ne", v, one), [
            K.If(K.op("eq", K.op("rem", v, two), K.Const(0, K.I64)),
                 [K.Assign(v, K.op("floordiv", v, two))],
                 [K.Assign(v, K.op("add", K.op("mul", v, K.Const(3, K.I64)), one))]),
            K.Assign(n, K.op("add", n, one))]),
        K.Store(out, (i,), n)]
    fn = _build(K.Kernel("collatz", [x], [out], [K.For(i, 0, 6, body)]))
    xs = np.array([1, 2, 3, 7, 27, 97], np.int64)
    got = np.empty(6, np.int64)
    fn(xs, got)

    def steps(v):
        n = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        return n
    assert got.tolist() == [steps(int(v)) for v in xs]


def test_parallel_loops_and_temporaries():
    """A parallel loop writing a temporary, read by a second parallel loop; the pool
    claims blocks (more than the threads), and the result is NumPy's."""
    n = 300_001
    x, out = _f64("x", (n,), "in"), _f64("o", (n,), "out")
    t = K.Buffer("t", (n,), np.float64, "temp")
    names = K.Namer()
    i, j = names.var("i", K.I64), names.var("j", K.I64)
    k = K.Kernel("twoloops", [x], [out], [
        K.For(i, 0, n, [K.Store(t, (i,), K.op("mul", K.Load(x, (i,)), K.Const(3.0, np.float64)))],
              parallel=True),
        K.For(j, 0, n, [K.Store(out, (j,), K.op("sqrt", K.Load(t, (j,))))], parallel=True)],
        temps=[t])
    fn = _build(k)
    xs = np.linspace(0.0, 5.0, n)
    got = np.empty(n)
    for threads in (1, 2):
        zx.config.update("num_threads", threads)
        fn(xs, got)
        np.testing.assert_array_equal(got, np.sqrt(xs * 3.0))


def test_kernels_run_from_several_python_threads_at_once():
    """The GIL is released inside kernels, and a parallel loop that finds the pool busy
    runs on its own thread: every call's result is right."""
    f = zx.jit(lambda a: znp.sin(a) * 2.0 + a)
    xs = [np.linspace(k, k + 1.0, 200_003) for k in range(6)]
    results = [None] * 6

    def work(k):
        for _ in range(5):
            results[k] = np.asarray(f(xs[k]))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(6):
        np.testing.assert_allclose(results[k], np.sin(xs[k]) * 2.0 + xs[k], rtol=1e-15)


def test_a_forked_child_computes_with_a_new_pool():
    code = textwrap.dedent("""
        import os, numpy as np, zerax as zx, zerax.numpy as znp
        f = zx.jit(lambda a: znp.exp(a) + 1.0)
        x = np.linspace(0, 1, 200_000)
        f(x)
        pid = os.fork()
        if pid == 0:
            ok = np.allclose(np.asarray(f(x)), np.exp(x) + 1.0)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "0"


# --------------------------------------------------------------------------- lowering


def _kernel_of(f, *args):
    closed = zx.make_jaxpr(f)(*args)
    return lower_program(closed.jaxpr)


def test_a_fused_chain_is_one_loop_and_large_ones_are_parallel():
    chain = lambda a, b: znp.tanh(a) * b + znp.sqrt(a * a + 1.0)   # noqa: E731
    small = str(_kernel_of(chain, np.ones(1000), np.ones(1000)))
    assert small.count("for ") == 1 and "parallel" not in small and "temp" not in small
    large = str(_kernel_of(chain, np.ones(200_000), np.ones(200_000)))
    assert large.count("parallel for ") == 1


def test_maps_over_arrays_of_several_shapes_fuse_per_array():
    """A tree_map chain over parameters of two shapes (scale, then a step) interleaves
    the shapes; each array's chain is still one loop, with no temporary, and a
    reduction joins the group of its operand even when another shape came between."""
    rng = np.random.default_rng(1)
    g = [rng.standard_normal((30, 20)), rng.standard_normal(7)]
    p = [rng.standard_normal((30, 20)), rng.standard_normal(7)]

    def step(g, p):
        g = [x * 1.5 for x in g]
        g = [x / 2.0 for x in g]
        new = [a - 0.01 * b for a, b in zip(p, g)]
        return new, [znp.sum(b * b) for b in g]

    text = str(_kernel_of(step, g, p))
    # one loop per array, accumulating its sum of squares as it goes
    assert text.count(" <- add over ") == 2 and "for " not in text and "temp" not in text
    (new, norms), want = zx.jit(step)(g, p), step(g, p)
    for got, ref in zip(new + norms, want[0] + want[1]):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-14)
    ref = [pi - 0.01 * (gi * 1.5 / 2.0) for gi, pi in zip(g, p)]
    np.testing.assert_array_equal(np.asarray(new[0]), ref[0])
    np.testing.assert_array_equal(np.asarray(new[1]), ref[1])


def test_a_map_that_continues_no_group_stays_with_its_consumer():
    """``z = b * 4`` reads only an input: it is not moved into the earlier loop over
    ``b``, which would cut it off from ``z * t``, whose ``t`` comes from a later
    reduction (the shape of clipping by a global norm before a step)."""
    def f(b, c):
        y = b * 3.0
        t = znp.sqrt(znp.sum(c * 2.0)) + 1.0
        return y, (b * 4.0) * t

    b, c = np.linspace(0, 1, 1000), np.linspace(1, 2, 700)
    text = str(_kernel_of(f, b, c))
    assert "temp" not in text and text.count("for each") == 2
    y, w = zx.jit(f)(b, c)
    np.testing.assert_array_equal(np.asarray(y), b * 3.0)
    np.testing.assert_allclose(np.asarray(w), (b * 4.0) * (np.sqrt(np.sum(c * 2.0)) + 1.0),
                               rtol=1e-15)


def test_a_value_used_after_a_product_is_computed_there():
    """An elementwise equation does not move before a product it comes after: the
    mask ``h > 0`` is computed in the loop that uses it, not stored as booleans."""
    def f(a, w):
        h = znp.tanh(a)
        y = h @ w
        return znp.where(h > 0, y, 0.0) + h

    a, w = np.linspace(-1, 1, 600).reshape(30, 20), np.eye(20) * 0.5
    text = str(_kernel_of(f, a, w))
    assert "bool[" not in text and text.count("temp ") == 2
    h = np.tanh(a)
    np.testing.assert_allclose(np.asarray(zx.jit(f)(a, w)), np.where(h > 0, h @ w, 0.0) + h,
                               rtol=1e-14)   # (tanh: within ulps of NumPy's)


def test_reductions_take_pairwise_or_memory_order():
    x = np.random.default_rng(0).standard_normal((300, 41))
    trailing = str(_kernel_of(lambda v: znp.sum(v * 2.0, axis=1), x))
    assert "<- add over" in trailing                     # a pairwise Reduce per row
    leading = str(_kernel_of(lambda v: znp.sum(v * 2.0, axis=0), x))
    assert "<- add over" not in leading                  # NumPy's order, into the output
    for f, ref in ((lambda v: znp.sum(v * 2.0, axis=1), np.sum(x * 2.0, axis=1)),
                   (lambda v: znp.sum(v * 2.0, axis=0), np.sum(x * 2.0, axis=0)),
                   (lambda v: znp.max(v, axis=0), np.max(x, axis=0)),
                   (lambda v: znp.prod(v[:5], axis=1), np.prod(x[:5], axis=1)),
                   (lambda v: znp.min(v), np.min(x)),
                   (lambda v: znp.sum(v), np.sum(x))):
        np.testing.assert_array_equal(np.asarray(zx.jit(f)(x)), ref)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 300), rows=st.integers(1, 3),
       dtype=st.sampled_from([np.float64, np.float32, np.float16, np.complex128]),
       seed=st.integers(0, 2 ** 31))
def test_row_sums_are_numpys_pairwise_sums_bit_for_bit(n, rows, dtype, seed):
    """Every run length (short runs, one block, blocks and a rest, split halves): the
    compiled pairwise sum of each row is NumPy's, bit for bit (float16 summed in float32
    and rounded once, as NumPy's half loops)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, n)) * 10.0 ** rng.integers(-3, 4, (rows, n)))
    if dtype == np.complex128:
        x = x + 1j * rng.standard_normal((rows, n))
    x = x.astype(dtype)
    got = np.asarray(_row_sum(x))
    np.testing.assert_array_equal(got, np.sum(x, axis=1))


_row_sum = zx.jit(lambda v: znp.sum(v, axis=1))


def test_shape_and_slicing_ops_match_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 6, 7))
    cases = [
        (lambda v: v.T * 1.0, lambda v: v.T),
        (lambda v: v.reshape(30, 7)[::2, 1:5] + 1.0, lambda v: v.reshape(30, 7)[::2, 1:5] + 1.0),
        (lambda v: znp.concatenate([v, v[:, :2] * 2.0], axis=1),
         lambda v: np.concatenate([v, v[:, :2] * 2.0], axis=1)),
        (lambda v: znp.flip(v, axis=(0, 2)), lambda v: np.flip(v, axis=(0, 2))),
        (lambda v: znp.pad(v, ((1, 2), (0, 1), (3, 0))), lambda v: np.pad(v, ((1, 2), (0, 1), (3, 0)))),
        (lambda v: zx.lax.pad(v, 0.5, ((-1, 2, 1), (0, 0, 0), (1, -2, 2))),
         None),
        (lambda v: znp.broadcast_to(v[:, :1, :], (5, 6, 7)) + znp.arange(7.0),
         lambda v: np.broadcast_to(v[:, :1, :], (5, 6, 7)) + np.arange(7.0)),
        (lambda v: zx.lax.dynamic_slice(v, (2, 4, -3), (3, 4, 5)),
         lambda v: v[2:5, 2:6, 0:5]),
        (lambda v: zx.lax.dynamic_update_slice(v, v[:2, :2, :2] * 0.0, (4, 1, 6)),
         None),
    ]
    for f, ref in cases:
        assert covers(zx.make_jaxpr(f)(x).jaxpr) is None
        with zx.disable_jit():
            eager = np.asarray(f(x))
        got = np.asarray(zx.jit(f)(x))
        np.testing.assert_array_equal(got, eager)
        if ref is not None:
            np.testing.assert_array_equal(got, ref(x))


def test_outputs_that_are_inputs_literals_or_repeated():
    f = zx.jit(lambda a, b: (a, a * 2.0, a * 2.0, 3.0 + 0.0 * b.sum(), b))
    a, b = np.arange(4.0), np.ones(3)
    outs = [np.asarray(o) for o in f(a, b)]
    for got, want in zip(outs, (a, a * 2, a * 2, 3.0, b)):
        np.testing.assert_array_equal(got, want)
    assert outs[0] is not a                    # never the caller's own buffer


def test_programs_it_does_not_carry_say_why():
    """A program the lowering refuses is a clear NotSupportedError naming the user's
    function and the reason (a zerax.Function's forward is NumPy code)."""
    class Square(zx.Function):
        def forward(self, x):
            return x ** 2

        def backward(self, gy):
            return 2 * self.inputs[0] * gy

    def uses_function(a):
        return Square()(a) + 1.0
    closed = zx.make_jaxpr(uses_function)(np.ones(3))
    assert "function_call" in covers(closed.jaxpr)
    with pytest.raises(Unlowerable):
        lower_program(closed.jaxpr)
    for run in (lambda: zx.jit(uses_function)(np.ones(3)),
                lambda: zx.jit(uses_function).lower(np.ones(3)).as_text()):
        with pytest.raises(zx.errors.NotSupportedError, match="uses_function") as info:
            run()
        assert "function_call" in str(info.value) and "NumPy code" in str(info.value)


def test_fast_math_is_opt_in():
    """fast_math=True lets LLVM contract and reassociate (the kernel differs)."""
    k = _kernel_of(lambda a, b, c: a * b + c, np.ones(8), np.ones(8), np.ones(8))
    m1, m2 = ir.Module("a"), ir.Module("b")
    emit.Emitter(k, m1, data_offset=engine.array_layout()).build()
    emit.Emitter(k, m2, data_offset=engine.array_layout(), fast_math=True).build()
    assert " fast " not in str(m1) and "fmul fast" in str(m2)


def test_the_array_layout_is_numpys():
    assert engine.array_layout() == object.__basicsize__


@pytest.fixture(autouse=True, scope="module")
def _threads_back():
    before = zx.config.num_threads
    yield
    zx.config.update("num_threads", before)


def test_as_text_shows_the_kernel_ir_or_the_llvm_ir():
    low = zx.jit(lambda a: znp.tanh(a) * 2.0).lower(np.ones(5))
    assert low.as_text().startswith("kernel ") and "tanh(in0[i0])" in low.as_text()
    llvm = low.as_text("llvm")
    assert 'define internal i32 @"kernel.impl"' in llvm and "PyEval_SaveThread" in llvm
    with pytest.raises(zx.errors.ZeraxValueError, match="dialect"):
        low.as_text("hlo")


def test_views_are_made_contiguous_on_every_path():
    """A zerax Array holding a view (an eager transpose) gives the same result on the
    dispatch fast path as on the first call (the kernel reads C arrays)."""
    a = znp.asarray(np.arange(12.0).reshape(3, 4))
    f = zx.jit(lambda x: x * 2.0)
    want = np.arange(12.0).reshape(3, 4).T * 2.0
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(a.T)), want)


def test_long_double_equations_are_host_steps_between_kernels():
    """The kernels have no long double scalars: its equations run by their NumPy
    implementations (as eagerly), the rest in kernels, under the kernel IR."""
    x, y = np.linspace(0.5, 2.0, 5).astype(np.longdouble), np.linspace(-1.0, 1.0, 5)

    def f(x, y):
        return x, znp.sin(y) * 2.0, (y + 1.0).astype(np.longdouble) * x / 3

    assert covers(zx.make_jaxpr(f)(x, y).jaxpr) is None
    text = zx.jit(f).lower(x, y).as_text()
    assert f"host mul({np.dtype(np.longdouble).name}" in text and "kernel kernel" in text
    got = zx.jit(f)(x, y)
    with zx.disable_jit():
        want = f(znp.asarray(x), znp.asarray(y))
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert np.asarray(got[0]) is not x


def test_float0_outputs_are_made_by_the_executable():
    def f(h):   # the tangent of the integer argmax is float0 (JAX's symbolic zero)
        return zx.jvp(lambda v: (v * 2.0, znp.argmax(v)), (h,), (h,))

    y = np.linspace(-1.0, 1.0, 5)
    assert covers(zx.make_jaxpr(f)(y).jaxpr) is None
    assert "void" not in zx.jit(f).lower(y).as_text()
    (_, i), (ta, ti) = zx.jit(f)(y)
    np.testing.assert_array_equal(np.asarray(ta), 2.0 * y)
    assert int(i) == 4 and ti.dtype == zx.dtypes.float0 and ti.shape == ()


def test_machine_code_calling_a_missing_function_is_compiled_again_or_refused(monkeypatch):
    """An entry of the disk cache whose object code calls a function this process lacks
    is compiled again here; when the fresh machine code needs one too, the call is a
    NotSupportedError naming the function (never a crash of the linker)."""
    import uuid

    from zerax._src.backends.cpu import compile as cc
    c = float(uuid.uuid4().int % 10**9) + 0.25          # a kernel no other test made

    def make():
        def fresh_program(a):
            return a * c - 1.0
        return zx.jit(fresh_program)
    x = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(make()(x)), x * c - 1.0)   # on disk now
    if cc.cache_dir() is None:
        pytest.skip("the disk cache is off here")
    cc._memory.clear()                                  # as a new process
    real, calls = cc._load, []

    def lacking_once(record):          # what the linker's check finds in a new process
        calls.append(1)
        if len(calls) == 1:
            raise engine.MissingSymbols("the machine code needs __zx_probe, which this "
                                        "process lacks")
        return real(record)
    monkeypatch.setattr(cc, "_load", lacking_once)
    before = dict(cc.stats)
    np.testing.assert_array_equal(np.asarray(make()(x)), x * c - 1.0)
    assert cc.stats["compiled"] == before["compiled"] + 1 and len(calls) == 2

    cc._memory.clear()

    def lacking(record):
        raise engine.MissingSymbols("the machine code needs __zx_probe, which this "
                                    "process lacks")
    monkeypatch.setattr(cc, "_load", lacking)
    with pytest.raises(zx.errors.NotSupportedError, match="fresh_program.*__zx_probe"):
        make()(x)


def test_long_programs_split_per_layer_only_when_layers_repeat(monkeypatch):
    """A long program with several large products is one kernel per layer when layers
    repeat (identical kernels, compiled once); with no repeated layer it stays one
    kernel.  Either way the values are eager's."""
    from zerax._src.backends import lowering
    monkeypatch.setattr(lowering, "SPLIT_ABOVE", 10)
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((64, 64)) / 8 for _ in range(4)]
    x = rng.standard_normal((64, 64))

    def same_layers(x, *ws):
        for w in ws:
            x = znp.tanh(x @ w) + x
        return x.sum()

    def different_layers(x, *ws):
        x = znp.tanh(x @ ws[0])
        x = znp.exp(-(x @ ws[1]) ** 2)
        x = znp.sin(x @ ws[2]) * 2.0
        return (x @ ws[3]).max()

    for f, split in ((same_layers, True), (different_layers, False)):
        g = zx.grad(f)
        steps = lowering.lower_steps(zx.make_jaxpr(g)(x, *ws).jaxpr)
        kernels = [K.format_kernel(s.kernel) for s in steps if s.kernel is not None]
        assert (len(kernels) > 1 and len(set(kernels)) < len(kernels)) if split \
            else len(kernels) == 1, (f.__name__, len(kernels))
        with zx.disable_jit():
            want = np.asarray(g(x, *ws))
        np.testing.assert_allclose(np.asarray(zx.jit(g)(x, *ws)), want, rtol=1e-12, atol=1e-12)


def test_a_failure_of_the_compiler_itself_is_a_zerax_error_naming_the_jit(monkeypatch):
    """A broken invariant in the lowering or LLVM's emitter never reaches the user as a
    raw ValueError/RuntimeError: it is a ZeraxInternalError naming the function, with
    the original as its cause."""
    from zerax._src.backends import lowering
    from zerax._src.backends.cpu import executable

    def broken_lowering(jaxpr):
        raise ValueError("load of in0(3,) with 2 indices")
    monkeypatch.setattr(executable, "lower_steps", broken_lowering)

    def lowered_badly(a):
        return a * 3.0 + 1.0
    with pytest.raises(errors.ZeraxInternalError, match="lowered_badly.*lowering it") as info:
        zx.jit(lowered_badly)(np.arange(3.0))
    assert type(info.value.__cause__) is ValueError
    monkeypatch.setattr(executable, "lower_steps", lowering.lower_steps)

    def broken_llvm(kernel, symbol, fast_math):
        raise RuntimeError("LLVM ERROR: invalid module")
    monkeypatch.setattr(cpu_compile, "_compile", broken_llvm)
    monkeypatch.setattr(cpu_compile, "find", lambda kernel, fast_math=False: None)

    def compiled_badly(a):
        return a * 5.0 - 7.0
    with pytest.raises(errors.ZeraxInternalError, match="compiled_badly.*compiling it"):
        zx.jit(compiled_badly)(np.arange(3.0))
