"""The workloads of the benchmark suite, each with its contenders and targets.

Every setup function runs in the contender's own process (see worker.py); it builds its
inputs from a fixed seed, so all contenders compute the same thing in float64, and returns
the callable to time (see registry.py). JAX runs on the CPU with ``jax_enable_x64``.

The compiled workloads (zerax.jit, control flow) also register *profilers*: when a target
is missed they time pieces of the zerax side in its own process (a kernel without its
transcendental functions, each kernel and BLAS call of a program, OpenBLAS limited to one
thread as an experiment, a warm first call taken apart), and their text goes into
docs/benchmarks.md beside the workload's ``miss_note``. The compile-time workload times
fresh processes through compile_probe.py.
"""

from __future__ import annotations

import itertools

import numpy as np
from registry import Case, Seconds, Target, workload

ISSUE_CORE = "issue 2"
ISSUE_VMAP = "issue 3"
ISSUE_JIT = "issue 4"
ISSUE_CF = "issue 5"
ISSUE_SPEED = "issue 19"


def _jax():
    """Import JAX on the CPU in float64."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _ready(jax, f):
    """Wrap f so that a call waits for JAX's asynchronous dispatch to finish."""
    block = jax.block_until_ready
    return lambda *a: block(f(*a))


# --------------------------------------------------------------------------------------
# Eager grad of a small function
# --------------------------------------------------------------------------------------

N_SMALL = 16

GRAD_SMALL = workload(
    "grad_small", "Eager grad of a small function",
    description=f"`grad(lambda x: sum(tanh(x) ** 2))(x)`, x: {N_SMALL} float64, no jit "
                "anywhere: the per-call overhead of an eager reverse pass.",
    targets=[Target("autograd", 0.5, "<= 0.5x autograd (2x faster)", ISSUE_CORE)],
    rounds=9,
    miss_note="zerax's eager `grad` runs on a tape (tape.py): each primitive computes "
              "its NumPy result at once and records its VJP rules, then a reverse loop "
              "applies them. On 16 numbers the arithmetic is negligible; what is left is "
              "Python bookkeeping per primitive (counts below: zerax's calls per `grad` "
              "against autograd's), most of it in the `zerax.numpy` wrappers "
              "(argument checks, dtype promotion) rather than in the tape.",
)


@GRAD_SMALL.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    g = zx.grad(lambda x: znp.sum(znp.tanh(x) ** 2))
    x = znp.asarray(np.linspace(-1.0, 1.0, N_SMALL))
    return lambda: g(x)


@GRAD_SMALL.contender("autograd")
def _(case):
    import autograd
    import autograd.numpy as anp
    g = autograd.grad(lambda x: anp.sum(anp.tanh(x) ** 2))
    x = np.linspace(-1.0, 1.0, N_SMALL)
    return lambda: g(x)


@GRAD_SMALL.contender("jax")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    g = _ready(jax, jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)))
    x = jnp.asarray(np.linspace(-1.0, 1.0, N_SMALL))
    return lambda: g(x)


# --------------------------------------------------------------------------------------
# Eager grad through a 1000-op chain
# --------------------------------------------------------------------------------------

CHAIN_OPS = 1000


def _chain(mod, x):
    for _ in range(CHAIN_OPS // 2):
        x = mod.sin(x) * 1.001
    return mod.sum(x)


GRAD_CHAIN = workload(
    "grad_chain", "Eager grad through a 1000-op chain",
    description=f"`grad` of `x -> sum(f(f(...f(x))))` with f = `sin(x) * 1.001`, "
                f"{CHAIN_OPS} elementwise ops on {N_SMALL} float64, no jit.",
    rounds=7,
)


@GRAD_CHAIN.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    g = zx.grad(lambda x: _chain(znp, x))
    x = znp.asarray(np.linspace(-1.0, 1.0, N_SMALL))
    return lambda: g(x)


@GRAD_CHAIN.contender("autograd")
def _(case):
    import autograd
    import autograd.numpy as anp
    g = autograd.grad(lambda x: _chain(anp, x))
    x = np.linspace(-1.0, 1.0, N_SMALL)
    return lambda: g(x)


@GRAD_CHAIN.contender("jax")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    g = _ready(jax, jax.grad(lambda x: _chain(jnp, x)))
    x = jnp.asarray(np.linspace(-1.0, 1.0, N_SMALL))
    return lambda: g(x)


# --------------------------------------------------------------------------------------
# Row-wise softmax / logsumexp
# --------------------------------------------------------------------------------------

SM_SHAPE = (256, 1000)


def _sm_input():
    return 3.0 * np.random.default_rng(1).standard_normal(SM_SHAPE)


SOFTMAX = workload(
    "softmax", "Row-wise softmax and logsumexp",
    cases=[Case("softmax", f"softmax(x, axis=-1), x: {SM_SHAPE[0]}x{SM_SHAPE[1]}"),
           Case("logsumexp", f"logsumexp(x, axis=-1), x: {SM_SHAPE[0]}x{SM_SHAPE[1]}")],
    description="Eager evaluation, float64. zerax: `zerax.nn.softmax`, "
                "`zerax.scipy.special.logsumexp`; JAX: `jax.nn.softmax` (which JAX "
                "itself wraps in `jit`) and `jax.scipy.special.logsumexp`; NumPy: the "
                "max-shifted formula written by hand.",
    rounds=7,
)


@SOFTMAX.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    x = znp.asarray(_sm_input())
    if case == "softmax":
        return lambda: zx.nn.softmax(x, axis=-1)
    return lambda: logsumexp(x, axis=-1)


@SOFTMAX.contender("numpy")
def _(case):
    x = _sm_input()

    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def logsumexp(x):
        m = x.max(axis=-1, keepdims=True)
        return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]

    f = softmax if case == "softmax" else logsumexp
    return lambda: f(x)


@SOFTMAX.contender("jax")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    x = jnp.asarray(_sm_input())
    f = (lambda x: jax.nn.softmax(x, axis=-1)) if case == "softmax" else \
        (lambda x: logsumexp(x, axis=-1))
    return lambda: _ready(jax, f)(x)


# --------------------------------------------------------------------------------------
# Per-example gradients of an MLP with vmap(grad)
# --------------------------------------------------------------------------------------

PE_SIZES = (32, 64, 64, 10)
PE_BATCH = 64


# issue 19's sizes for the compiled per-example workload (its MLP row's network)
PE_JIT_SIZES = (196, 128, 128, 10)


def _pe_data(sizes=PE_SIZES):
    rng = np.random.default_rng(2)
    params = [(rng.standard_normal((a, b)) / np.sqrt(a), 0.1 * rng.standard_normal(b))
              for a, b in itertools.pairwise(sizes)]
    x = rng.standard_normal((PE_BATCH, sizes[0]))
    y = rng.integers(0, sizes[-1], PE_BATCH)
    return params, x, y


def _pe_loss(mod, logsumexp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = mod.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return logsumexp(logits) - logits[y]
    return loss


PER_EXAMPLE = workload(
    "per_example", "Per-example gradients, eager vmap(grad)",
    description=f"Gradients of the cross-entropy loss of a tanh MLP "
                f"{'-'.join(map(str, PE_SIZES))} for each of {PE_BATCH} examples: "
                "`vmap(grad(loss), in_axes=(None, 0, 0))`, eager; against a Python loop "
                "of zerax `grad` calls and JAX's eager `vmap(grad)`.",
    targets=[Target("zerax_loop", 0.2,
                    "much faster than the loop (ratio reported; <= 0.2x taken as met)",
                    ISSUE_VMAP)],
    rounds=7,
)


@PER_EXAMPLE.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    params, x, y = _pe_data()
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    x, y = znp.asarray(x), znp.asarray(y)
    f = zx.vmap(zx.grad(_pe_loss(znp, logsumexp)), in_axes=(None, 0, 0))
    return lambda: f(params, x, y)


@PER_EXAMPLE.contender("zerax_loop")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    params, x, y = _pe_data()
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    g = zx.grad(_pe_loss(znp, logsumexp))
    return lambda: [g(params, x[i], y[i]) for i in range(PE_BATCH)]


@PER_EXAMPLE.contender("jax")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    params, x, y = _pe_data()
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    x, y = jnp.asarray(x), jnp.asarray(y)
    f = _ready(jax, jax.vmap(jax.grad(_pe_loss(jnp, logsumexp)), in_axes=(None, 0, 0)))
    return lambda: f(params, x, y)


# --------------------------------------------------------------------------------------
# Hessian of a 100-dimensional function
# --------------------------------------------------------------------------------------

H_DIM = 100


def _h_data():
    rng = np.random.default_rng(3)
    return rng.standard_normal((H_DIM, H_DIM)) / np.sqrt(H_DIM), rng.standard_normal(H_DIM)


HESSIAN = workload(
    "hessian", "Hessian of a 100-dimensional function",
    description=f"`hessian(f)(x)` (forward over reverse) for "
                f"`f(x) = sum(tanh(A @ x) ** 2) + 0.25 * sum(x ** 4)`, x: {H_DIM} float64, "
                "eager.",
    rounds=7,
)


@HESSIAN.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    a, x = _h_data()
    a, x = znp.asarray(a), znp.asarray(x)
    h = zx.hessian(lambda x: znp.sum(znp.tanh(a @ x) ** 2) + 0.25 * znp.sum(x ** 4))
    return lambda: h(x)


@HESSIAN.contender("jax")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    a, x = _h_data()
    a, x = jnp.asarray(a), jnp.asarray(x)
    h = _ready(jax, jax.hessian(
        lambda x: jnp.sum(jnp.tanh(a @ x) ** 2) + 0.25 * jnp.sum(x ** 4)))
    return lambda: h(x)


# --------------------------------------------------------------------------------------
# n-th derivative of tanh: trace time, IR size, evaluation time
# --------------------------------------------------------------------------------------

MAX_ORDER = 8
X0 = 0.3


def _nth(grad, f, n):
    for _ in range(n):
        f = grad(f)
    return f


def _deriv_cases():
    slow = lambda n: 3 if n >= 7 else None  # JAX takes seconds per call at n >= 7
    cases = []
    for n in range(1, MAX_ORDER + 1):
        cases.append(Case(f"trace{n}", f"trace d{n} tanh (make_jaxpr)", compare=False,
                          rounds=slow(n)))
    for n in range(1, MAX_ORDER + 1):
        cases.append(Case(f"eval{n}", f"evaluate d{n} tanh (eager)", rounds=slow(n)))
    cases.append(Case("trace_ts6", "trace d6 [tanh(x) sin(x)] (make_jaxpr)", compare=False))
    return cases


TANH_DERIVS = workload(
    "tanh_derivs", "n-th derivative of tanh: trace time, IR size, evaluation",
    cases=_deriv_cases(),
    description=f"`f = grad(grad(...grad(tanh)))` (n times) at x = {X0}. "
                "trace: `make_jaxpr(f)(x)` of a freshly built `f` each call (JAX caches "
                "the trace of a function it has seen: a fresh function measures tracing, "
                "not a cache hit); IR size: the number of equations of that program "
                "(`len(jaxpr.eqns)`, top level); evaluate: the same `f(x)` called "
                "repeatedly, eagerly (no jit). The last case is the core issue's IR "
                "target: the 6th derivative of `tanh(x) * sin(x)`.",
    targets=[Target("jax", 0.2, "IR size <= 0.2x JAX's equation count", ISSUE_CORE,
                    cases=("trace_ts6",), metric="eqns")],
    rounds=5,
)


def _deriv_setup(case, grad, make_jaxpr, mod, ready=lambda f: f):
    def build():   # fresh function objects on every call
        if case == "trace_ts6":
            return _nth(grad, lambda x: mod.tanh(x) * mod.sin(x), 6)
        return _nth(grad, lambda x: mod.tanh(x),
                    int(case.removeprefix("trace").removeprefix("eval")))
    if case.startswith("trace"):
        n_eqns = len(make_jaxpr(build())(X0).eqns)
        return (lambda: make_jaxpr(build())(X0)), {"eqns": n_eqns}
    f = ready(build())
    return lambda: f(X0)


@TANH_DERIVS.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    return _deriv_setup(case, zx.grad, zx.make_jaxpr, znp)


@TANH_DERIVS.contender("jax", label="JAX")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    return _deriv_setup(case, jax.grad, jax.make_jaxpr, jnp, lambda f: _ready(jax, f))


# ======================================================================================
# Compiled workloads: zerax.jit (issue 4) and control flow (issue 5).
# ======================================================================================


def _median_time(fn, min_s=0.05, repeats=5):
    """Median seconds per call of fn over `repeats` samples of at least min_s each (for
    the piece timers, which run in the zerax process when a target is missed)."""
    import statistics
    import time
    fn()
    t = time.perf_counter()
    fn()
    number = max(1, int(min_s / max(time.perf_counter() - t, 1e-9)))
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t) / number)
    return statistics.median(samples)


def _ms(s):
    return f"{s * 1e3:.3g} ms"


class _blas_threads:
    """Context manager: every OpenBLAS loaded in this process (NumPy's, and SciPy's that
    Numba's np.dot calls) uses n threads inside the block (a piece timer's experiment;
    the measured samples never change the thread count)."""

    PAIRS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
             ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
             ("openblas_get_num_threads", "openblas_set_num_threads"))

    def __init__(self, n):
        self.n, self.saved = n, []

    def __enter__(self):
        import ctypes
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower()
                            and ln.split()[-1].startswith("/")})
        for path in paths:
            lib = ctypes.CDLL(path)
            for get, set_ in self.PAIRS:
                if hasattr(lib, get) and hasattr(lib, set_):
                    self.saved.append((getattr(lib, set_), getattr(lib, get)()))
                    getattr(lib, set_)(self.n)
                    break
        return self

    def __exit__(self, *exc):
        for set_, n in self.saved:
            set_(n)


def _blas_names():
    import os
    with open("/proc/self/maps") as f:
        return ", ".join(sorted({os.path.basename(ln.split()[-1]) for ln in f
                                 if "openblas" in ln.lower()}))


def _program_pieces(jitted, args, min_s=0.3):
    """What a compiled zerax program is made of (its kernels, the BLAS products their
    machine code calls, the host steps between them), the BLAS threads its products get
    (cpu/blas.py's policy) and its time per call. Returns text lines."""
    import time

    from zerax._src.api.jit import executable_for
    from zerax._src.backends import kernel_ir as K
    from zerax._src.backends.cpu import blas, threads
    lowered = jitted.lower(*args)
    exe = executable_for(lowered.jaxpr, lowered.name)
    jitted(*args)
    texts = [K.format_kernel(s.kernel) for s in exe.steps if s.kernel is not None]
    products = sum(t.count("call gemm(") for t in texts)
    calls, t0 = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - t0 < min_s:
        jitted(*args)
        calls += 1
    total = (time.perf_counter() - t0) / calls
    n_blas = blas.threads_for(exe._blas_work, threads.setting()) if products else 0
    return [(f"per call {_ms(total)}: {len(texts)} kernel(s) "
            f"({sum(t.count(chr(10)) for t in texts)} lines of kernel IR), "
            f"{len(exe.steps) - len(texts)} host step(s); {products} BLAS product(s) "
            f"called from the machine code, on {n_blas} BLAS thread(s) (largest product "
            f"{exe._blas_work:.2e} multiply-adds; num_threads {threads.setting()})")]


DISPATCH_N = 16


def _dispatch_inputs(case):
    """The arguments of the dispatch case, as NumPy arrays: two 16-vectors, or (for
    ``pytree6``) a list of 3 (w, b) pairs of 8-vectors and an 8-vector."""
    a = np.linspace(0.1, 1.0, DISPATCH_N)
    b = np.linspace(1.0, 2.0, DISPATCH_N)
    if case == "pytree6":
        return ([(a[:8] + k, b[:8] - k) for k in range(3)], a[8:])
    return (a, b)


def _dispatch_fun(mod, case):
    if case == "pytree6":
        return lambda ps, x: sum(mod.sum(w * x + c) for w, c in ps)
    return lambda a, b: a * b + mod.sin(a)


JIT_DISPATCH = workload(
    "jit_dispatch", "jit dispatch of a small function",
    cases=[Case("zerax_arrays", "zerax Arrays (JAX: device arrays)"),
           Case("numpy", "NumPy arrays (JAX: device arrays)"),
           Case("pytree6", "a list of 3 (w, b) pairs and x: 7 arrays of 8 elements")],
    description=f"A compiled call of a small function, `a * b + sin(a)` on two {DISPATCH_N}-"
                "element float64 arrays, or `sum(sum(w * x + b) for w, b in params)` on a "
                "pytree of 6 arrays and one more: the cost of a cache hit in the "
                "dispatcher. zerax is called with the input kind of the case (its Arrays, "
                "NumPy arrays as users pass them, a pytree of NumPy arrays); jax.jit is "
                "given device arrays (its fastest path). *Numba by hand* is the floor of a "
                "call through Numba's own dispatcher.",
    targets=[Target("jax_jit", 0.5, "<= 0.5x jax.jit", ISSUE_SPEED)],
    rounds=7,
)


@JIT_DISPATCH.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    f = zx.jit(_dispatch_fun(znp, case))
    args = _dispatch_inputs(case)
    if case == "zerax_arrays":
        args = tuple(znp.asarray(x) for x in args)
    return lambda: f(*args)


@JIT_DISPATCH.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    f = _ready(jax, jax.jit(_dispatch_fun(jnp, case)))
    args = jax.tree_util.tree_map(jnp.asarray, _dispatch_inputs(case))
    return lambda: f(*args)


@JIT_DISPATCH.contender("numba")
def _(case):
    import numba
    if case == "pytree6":
        @numba.njit
        def g(ps, x):
            s = 0.0
            for w, c in ps:
                s += np.sum(w * x + c)
            return s
        ps, x = _dispatch_inputs(case)
        ps = tuple(ps)
        return lambda: g(ps, x)
    f = numba.njit(lambda a, b: a * b + np.sin(a))
    a, b = _dispatch_inputs(case)
    return lambda: f(a, b)


# --------------------------------------------------------------------------------------

def _ew_chain(mod):
    return lambda a, b: (mod.exp(-a * a) * mod.cos(b) + a / (1 + b * b)
                         - mod.arctan(a * b))


def _ew_data(n):
    rng = np.random.default_rng(4)
    return rng.standard_normal(n), rng.standard_normal(n)


def _ew_numba(parallel=True):
    import numba
    loop_range = numba.prange if parallel else range

    def loop(a, b):
        out = np.empty_like(a)
        for i in loop_range(a.shape[0]):
            x, y = a[i], b[i]
            out[i] = np.exp(-x * x) * np.cos(y) + x / (1 + y * y) - np.arctan(x * y)
        return out
    return numba.njit(parallel=parallel)(loop)


ELEMENTWISE = workload(
    "elementwise", "Fused elementwise chain",
    cases=[Case("2e6", "n = 2 * 10^6")],
    description="`exp(-a * a) * cos(b) + a / (1 + b * b) - arctan(a * b)` over n float64 "
                "(the chain of issue 19: functions chosen without knowing which zerax "
                "inlines): NumPy evaluates it op by op, jax.jit fuses it, the hand-written "
                "Numba loop uses `prange` and libm.",
    targets=[Target("numpy", 0.4, "<= 0.4x NumPy", ISSUE_SPEED),
             Target("jax_jit", 1.0, "<= 1.0x jax.jit", ISSUE_SPEED),
             Target("numba", 1.2, "<= 1.2x Numba by hand", ISSUE_JIT)],
    rounds=7,
    miss_note="zerax's kernel is one parallel loop over the elements with no intermediate "
              "arrays (excerpt below): the threads claim blocks of it as they go "
              "(loops.parallel_blocks), and `exp`, `arctan`, `sin` and `cos` are emitted "
              "inline as branch-free polynomial code that LLVM vectorises "
              "(backends/cpu/mathlib.py; a block holding a `sin`/`cos` argument past 7, "
              "inf or nan is computed again with the exact code). The pieces below time "
              "each function alone, jitted and in NumPy.",
)


@ELEMENTWISE.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    f = zx.jit(_ew_chain(znp))
    a, b = map(znp.asarray, _ew_data(int(float(case))))
    return lambda: f(a, b)


@ELEMENTWISE.profiler
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    a, b = map(znp.asarray, _ew_data(int(float(case))))
    na, nb = np.asarray(a), np.asarray(b)
    full = zx.jit(_ew_chain(znp))
    plain = zx.jit(lambda a, b: a * a * b + a / (1 + b * b) - a * b)
    lines = [f"the chain, jitted: {_ms(_median_time(lambda: full(a, b)))} "
             f"(zerax threads: {zx.config.num_threads})",
             "the same chain without its transcendental functions: "
             f"{_ms(_median_time(lambda: plain(a, b)))}"]
    for name, zf, nf in (("exp(-a*a)", lambda a, b: znp.exp(-a * a),
                          lambda a, b: np.exp(-a * a)),
                         ("cos(b)", lambda a, b: znp.cos(b), lambda a, b: np.cos(b)),
                         ("arctan(a*b)", lambda a, b: znp.arctan(a * b),
                          lambda a, b: np.arctan(a * b))):
        jf = zx.jit(zf)
        lines.append(f"{name}: jitted {_ms(_median_time(lambda: jf(a, b)))}, NumPy "
                     f"{_ms(_median_time(lambda: nf(na, nb)))}")
    src = full.lower(a, b).as_text()
    lines.append("generated loop (excerpt of `jit(f).lower(a, b).as_text()`):")
    lines += [ln for ln in src.splitlines() if "prange" in ln or "arctan" in ln
              or "_vm_" in ln]
    return "\n".join(lines)


@ELEMENTWISE.contender("numpy")
def _(case):
    a, b = _ew_data(int(float(case)))
    return lambda: _ew_chain(np)(a, b)


@ELEMENTWISE.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    f = _ready(jax, jax.jit(_ew_chain(jnp)))
    a, b = map(jnp.asarray, _ew_data(int(float(case))))
    return lambda: f(a, b)


@ELEMENTWISE.contender("numba")
def _(case):
    f = _ew_numba(parallel=True)
    a, b = _ew_data(int(float(case)))
    return lambda: f(a, b)


# --------------------------------------------------------------------------------------

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128
# issue 19's MLP row: 196-128-128-10, batch 256
MLP_ISSUE_SIZES, MLP_ISSUE_BATCH = (196, 128, 128, 10), 256


def _mlp_data(case=None):
    sizes, batch = (MLP_ISSUE_SIZES, MLP_ISSUE_BATCH) if case == "issue19" else \
        (MLP_SIZES, MLP_BATCH)
    rng = np.random.default_rng(5)
    params = [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a), np.zeros(b))
              for a, b in itertools.pairwise(sizes)]
    x = rng.standard_normal((batch, sizes[0]))
    y = rng.integers(0, sizes[-1], batch)
    return params, x, y


def _mlp_loss(mod, logsumexp, relu):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = relu(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return mod.mean(logsumexp(logits, axis=-1) - logits[mod.arange(x.shape[0]), y])
    return loss


def _mlp_numpy_grad(params, x, y):
    """Hand-written backward pass of _mlp_loss (ReLU MLP, mean cross-entropy)."""
    (w1, b1), (w2, b2), (w3, b3) = params
    h1 = x @ w1 + b1
    a1 = np.maximum(h1, 0.0)
    h2 = a1 @ w2 + b2
    a2 = np.maximum(h2, 0.0)
    logits = a2 @ w3 + b3
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    p[np.arange(x.shape[0]), y] -= 1.0
    d3 = p / x.shape[0]
    g3 = (a2.T @ d3, d3.sum(axis=0))
    d2 = (d3 @ w3.T) * (h2 > 0)
    g2 = (a1.T @ d2, d2.sum(axis=0))
    d1 = (d2 @ w2.T) * (h1 > 0)
    g1 = (x.T @ d1, d1.sum(axis=0))
    return [g1, g2, g3]


MLP_STEP = workload(
    "mlp_step", "MLP training step jit(grad(loss))",
    cases=[Case("main", f"{'-'.join(map(str, MLP_SIZES))}, batch {MLP_BATCH}"),
           Case("issue19", f"{'-'.join(map(str, MLP_ISSUE_SIZES))}, batch "
                           f"{MLP_ISSUE_BATCH} (issue 19's row)")],
    description="Gradient of the mean cross-entropy of a ReLU MLP, float64 (sizes per "
                "case).",
    targets=[Target("jax_jit", 1.1, "<= 1.1x jax.jit", ISSUE_JIT)],
    rounds=7,
    miss_note="zerax compiles this step into one kernel whose machine code calls "
              "OpenBLAS's `cblas_dgemm` for its 8 matrix products (backends/cpu/blas.py) and "
              "runs the elementwise work between them as loops (parallel ones on the thread "
              "pool of cpu/threads.py). A product runs on one BLAS thread unless it is large "
              "(cpu/blas.py `threads_for`: from 2^21 multiply-adds it gets the threads "
              "other processes leave idle, never more), so BLAS never "
              "competes with the parallel loops (issue 19: 14x jax.jit quiet, 29x loaded "
              "before). The pieces below show the program and the step with OpenBLAS "
              "limited to one thread by hand, and NumPy by hand. What is left is the "
              "products themselves against XLA's own.",
)


def _zx_mlp(case=None):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    params, x, y = _mlp_data(case)
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    g = zx.jit(zx.grad(_mlp_loss(znp, logsumexp, zx.nn.relu)))
    return g, (params, znp.asarray(x), znp.asarray(y))


@MLP_STEP.contender("zerax")
def _(case):
    g, args = _zx_mlp(case)
    return lambda: g(*args)


@MLP_STEP.profiler
def _(case):
    g, args = _zx_mlp(case)
    lines = _program_pieces(g, args)
    with _blas_threads(1):
        lines += ["with OpenBLAS limited to 1 thread (experiment):"] + _program_pieces(g, args)
    params, x, y = _mlp_data(case)
    t_np = _median_time(lambda: _mlp_numpy_grad(params, x, y))
    with _blas_threads(1):
        t_np1 = _median_time(lambda: _mlp_numpy_grad(params, x, y))
    lines.append(f"NumPy by hand: {_ms(t_np)}; with 1 BLAS thread {_ms(t_np1)} "
                 f"(BLAS: {_blas_names()})")
    return "\n".join(lines)


@MLP_STEP.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    params, x, y = _mlp_data(case)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    x, y = jnp.asarray(x), jnp.asarray(y)
    g = _ready(jax, jax.jit(jax.grad(_mlp_loss(jnp, logsumexp, jax.nn.relu))))
    return lambda: g(params, x, y)


@MLP_STEP.contender("numpy")
def _(case):
    params, x, y = _mlp_data(case)
    return lambda: _mlp_numpy_grad(params, x, y)


# --------------------------------------------------------------------------------------

PER_EXAMPLE_JIT = workload(
    "per_example_jit", "Per-example gradients, jit(vmap(grad))",
    description="The per-example workload above, compiled, at issue 19's sizes (a tanh MLP "
                f"{'-'.join(map(str, PE_JIT_SIZES))}, {PE_BATCH} examples): "
                "`jit(vmap(grad(loss), in_axes=(None, 0, 0)))`.",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_VMAP)],
    rounds=7,
    miss_note="As for the MLP step, the products are BLAS calls from the compiled "
              "kernel's machine code (pieces below: the kernels, products and threads). "
              "The per-example weight gradients are outer products: `vmap` "
              "turns them into `dot_general`s with a batch dimension and no contraction. "
              "When this suite was written, zerax computed them with `np.matmul` on "
              "(64, m, 1) x (64, 1, n) stacks and copied the result into the wanted "
              "layout with (0, 2, 1) transpose kernels, which took most of the time; the "
              "pieces show whether such kernels are still there. Small BLAS calls also "
              "depend on OpenBLAS's threading (the single-thread experiment below). What "
              "would close it: lower a `dot_general` without contracting dimensions as a "
              "fused broadcast-multiply loop inside the surrounding kernel, writing the "
              "wanted layout directly (no BLAS call, no transpose copy), and the BLAS "
              "thread threshold described for the MLP step.",
)


@PER_EXAMPLE_JIT.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    params, x, y = _pe_data(PE_JIT_SIZES)
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    x, y = znp.asarray(x), znp.asarray(y)
    f = zx.jit(zx.vmap(zx.grad(_pe_loss(znp, logsumexp)), in_axes=(None, 0, 0)))
    return lambda: f(params, x, y)


@PER_EXAMPLE_JIT.profiler
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy.special import logsumexp
    params, x, y = _pe_data(PE_JIT_SIZES)
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    args = (params, znp.asarray(x), znp.asarray(y))
    f = zx.jit(zx.vmap(zx.grad(_pe_loss(znp, logsumexp)), in_axes=(None, 0, 0)))
    lines = _program_pieces(f, args)
    with _blas_threads(1):
        lines += ["with OpenBLAS limited to 1 thread (experiment):"] + _program_pieces(f, args)
    return "\n".join(lines)


@PER_EXAMPLE_JIT.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    params, x, y = _pe_data(PE_JIT_SIZES)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    x, y = jnp.asarray(x), jnp.asarray(y)
    f = _ready(jax, jax.jit(jax.vmap(jax.grad(_pe_loss(jnp, logsumexp)),
                                     in_axes=(None, 0, 0))))
    return lambda: f(params, x, y)


# --------------------------------------------------------------------------------------

FORI_N = 10 ** 6

FORI = workload(
    "fori_loop", "Scalar fori_loop of 10^6 iterations",
    description=f"`fori_loop(0, {FORI_N}, lambda i, x: x + 1e-6 * cos(x), 0.5)` on a "
                "float64 scalar, compiled.",
    targets=[Target("jax_jit", 0.5, "<= 0.5x jax.jit", ISSUE_CF)],
    rounds=7,
    miss_note="The generated loop (below) has scalar carries and no allocation; each "
              "iteration waits for the previous `cos`. Outside loops over elements "
              "zerax's `cos` (backends/cpu/mathlib.py, `_emit_cells`) is written for "
              "that latency: for |x| < 7 a "
              "predicted branch picks a cell of width 1/16 and a degree-7 polynomial "
              "in r = x - centre (exact) takes three dependent fused multiply-adds "
              "(within 1 ulp of NumPy). What is left is the chain itself: r (4 "
              "cycles), the polynomial (~12), the leading term (4) and the user's "
              "`x + 1e-6 * c`, a multiply and an add (8: zerax does not contract it "
              "into one fused multiply-add unless asked, `jit(..., fast_math=True)`). "
              "Narrower cells would not shorten it (three steps "
              "is the least for the degree 1-ulp accuracy needs at width 1/16); only "
              "giving up accuracy would.",
)


@FORI.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    f = zx.jit(lambda x: zx.lax.fori_loop(0, FORI_N, lambda i, x: x + 1e-6 * znp.cos(x), x))
    x = znp.asarray(0.5)
    return lambda: f(x)


@FORI.profiler
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    f = zx.jit(lambda x: zx.lax.fori_loop(0, FORI_N, lambda i, x: x + 1e-6 * znp.cos(x), x))
    x = znp.asarray(0.5)
    t = _median_time(lambda: f(x), repeats=3)
    src = f.lower(x).as_text()
    head = f"per call {_ms(t)} = {t / FORI_N * 1e9:.1f} ns per iteration; the generated loop:"
    return "\n".join([head, *src.splitlines()])


@FORI.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    f = _ready(jax, jax.jit(lambda x: jax.lax.fori_loop(
        0, FORI_N, lambda i, x: x + 1e-6 * jnp.cos(x), x)))
    x = jnp.asarray(0.5)
    return lambda: f(x)


@FORI.contender("numba")
def _(case):
    import numba

    @numba.njit
    def f(x):
        for _ in range(FORI_N):
            x = x + 1e-6 * np.cos(x)
        return x
    return lambda: f(0.5)


# --------------------------------------------------------------------------------------

RNN_T, RNN_BATCH, RNN_IN, RNN_HIDDEN = 100, 32, 32, 128


def _rnn_data():
    rng = np.random.default_rng(6)
    w = rng.standard_normal((RNN_HIDDEN, RNN_HIDDEN)) / np.sqrt(RNN_HIDDEN)
    u = rng.standard_normal((RNN_IN, RNN_HIDDEN)) / np.sqrt(RNN_IN)
    b = np.zeros(RNN_HIDDEN)
    xs = rng.standard_normal((RNN_T, RNN_BATCH, RNN_IN))
    return (w, u, b), xs


def _rnn_numpy_grad(params, xs):
    """Hand-written backpropagation through time of loss = sum(h_T ** 2)."""
    w, u, b = params
    hs = [np.zeros((xs.shape[1], w.shape[0]))]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ w + x @ u + b))
    dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    dh = 2.0 * hs[-1]
    for t in range(xs.shape[0] - 1, -1, -1):
        dz = dh * (1.0 - hs[t + 1] ** 2)
        dw += hs[t].T @ dz
        du += xs[t].T @ dz
        db += dz.sum(axis=0)
        dh = dz @ w.T
    return dw, du, db


RNN = workload(
    "rnn_scan", "RNN with scan, forward and backward",
    description=f"`jit(grad(loss))` of a tanh RNN written with `scan`: {RNN_T} steps, "
                f"batch {RNN_BATCH}, input {RNN_IN}, hidden {RNN_HIDDEN}, "
                "loss = sum(h_T ** 2).",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_CF)],
    rounds=5,
    miss_note="The whole program is one kernel: the forward scan also stores each "
              "step's residuals (the tanh outputs), and the transposed scan runs backwards "
              "over them without recomputing the step. The products are calls of OpenBLAS's "
              "`cblas_dgemm` from the machine code (on one BLAS thread: cpu/blas.py); no "
              "step allocates (the kernel's scratch buffers are allocated once per call, "
              "carries updated in place: lowering/inplace.py). What is left is the "
              "products and the elementwise work between them; XLA's runtime can also "
              "spread one step's products over both cores.",
)


def _rnn_loss(mod, scan):
    def loss(params, xs):
        w, u, b = params
        step = lambda h, x: (mod.tanh(h @ w + x @ u + b), None)
        h, _ = scan(step, mod.zeros((xs.shape[1], w.shape[0])), xs)
        return mod.sum(h ** 2)
    return loss


def _zx_rnn():
    import zerax as zx
    import zerax.numpy as znp
    params, xs = _rnn_data()
    g = zx.jit(zx.grad(_rnn_loss(znp, zx.lax.scan)))
    return g, (tuple(map(znp.asarray, params)), znp.asarray(xs))


@RNN.contender("zerax")
def _(case):
    g, args = _zx_rnn()
    return lambda: g(*args)


@RNN.profiler
def _(case):
    g, args = _zx_rnn()
    src = g.lower(*args).as_text()
    t = _median_time(lambda: g(*args), repeats=3)
    with _blas_threads(1):
        t1 = _median_time(lambda: g(*args), repeats=3)
    return "\n".join([
        (f"{src.count(chr(10) + 'kernel ') + src.startswith('kernel ')} kernel(s); "
         f"{src.count('call gemm(')} BLAS calls in the kernel IR; "
         f"{src.count(chr(10) + '  temp ')} scratch buffers (allocated once per call)"),
        (f"per call {_ms(t)}; with OpenBLAS limited to 1 thread (experiment): {_ms(t1)} "
         f"(BLAS: {_blas_names()})")])


@RNN.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    params, xs = _rnn_data()
    params, xs = tuple(map(jnp.asarray, params)), jnp.asarray(xs)
    g = _ready(jax, jax.jit(jax.grad(_rnn_loss(jnp, jax.lax.scan))))
    return lambda: g(params, xs)


@RNN.contender("numpy")
def _(case):
    params, xs = _rnn_data()
    return lambda: _rnn_numpy_grad(params, xs)


# --------------------------------------------------------------------------------------

WS_STEPS, WS_DIM = 1000, 32


def _ws_data():
    rng = np.random.default_rng(7)
    return rng.standard_normal(WS_DIM), rng.standard_normal(WS_DIM)


def _ws_step(mod, theta, x):
    return x + 0.01 * mod.tanh(theta * x + 0.5)


def _ws_loss(kind):
    """loss(theta, x0, n) = sum(x_n ** 2) after n steps; `n` is an array argument, so
    the while_loop's trip count is known only at run time (the scan has length 1000)."""
    import zerax as zx
    import zerax.numpy as znp

    def loss_while(theta, x0, n):
        def body(c):
            i, x = c
            return i + 1, _ws_step(znp, theta, x)
        _, x = zx.lax.while_loop(lambda c: c[0] < n, body, (znp.asarray(0), x0))
        return znp.sum(x ** 2)

    def loss_scan(theta, x0, n):
        x, _ = zx.lax.scan(lambda x, _: (_ws_step(znp, theta, x), None), x0, None,
                           length=WS_STEPS)
        return znp.sum(x ** 2)
    return loss_while if kind == "while" else loss_scan


def _ws_numpy_grad(theta, x0, n):
    """Hand-written reverse mode of the same loss (d loss / d theta)."""
    xs = [x0]
    for _ in range(n):
        xs.append(_ws_step(np, theta, xs[-1]))
    dx, dtheta = 2.0 * xs[-1], np.zeros_like(theta)
    for x in reversed(xs[:-1]):
        s = 0.01 * (1.0 - np.tanh(theta * x + 0.5) ** 2)
        dtheta += dx * s * x
        dx = dx * (1.0 + s * theta)
    return dtheta


WHILE_VS_SCAN = workload(
    "while_vs_scan", "Reverse mode through a 1000-step while_loop vs scan",
    cases=[Case("jit", "jit(grad(loss))"), Case("eager", "grad(loss), eager")],
    description=f"zerax against itself: `grad` with respect to `theta` of `sum(x_n ** 2)` "
                f"where `x <- x + 0.01 * tanh(theta * x + 0.5)` runs n = {WS_STEPS} times "
                f"on {WS_DIM} float64, written with a `while_loop` whose trip count is an "
                "array argument (known only at run time: reverse mode records the carries "
                "in a growable buffer, `checkpoint_every=1`) and with a `scan` of length "
                f"{WS_STEPS}, compiled and eager. JAX has no anchor here: it refuses "
                "reverse-mode differentiation of `while_loop`. The hand-written NumPy "
                "backward pass is there to cross-check the result.",
    targets=[Target("zerax_scan", 3.0, "<= 3x zerax scan", ISSUE_CF)],
    rounds=7,
)


def _ws_setup(kind, case):
    import zerax as zx
    import zerax.numpy as znp
    g = zx.grad(_ws_loss(kind))
    if case == "jit":
        g = zx.jit(g)
    theta, x0 = map(znp.asarray, _ws_data())
    n = znp.asarray(WS_STEPS)
    return lambda: g(theta, x0, n)


@WHILE_VS_SCAN.contender("zerax", label="zerax while_loop")
def _(case):
    return _ws_setup("while", case)


@WHILE_VS_SCAN.contender("zerax_scan")
def _(case):
    return _ws_setup("scan", case)


@WHILE_VS_SCAN.contender("numpy")
def _(case):
    theta, x0 = _ws_data()
    return lambda: _ws_numpy_grad(theta, x0, WS_STEPS)


# --------------------------------------------------------------------------------------

COMPILE_PROBE_TIMEOUT_S = 280


def compile_program(name):
    """(jitted zerax function, args) of a program of the compile-time workload, not yet
    called (compile_probe.py times its first call in a fresh process)."""
    if name == "mlp":
        return _zx_mlp()
    import zerax as zx
    import zerax.numpy as znp
    return zx.jit(_ew_chain(znp)), tuple(map(znp.asarray, _ew_data(10 ** 6)))


_WARM_DIRS: dict[str, str] = {}   # case -> the filled cache directory (for the profiler)


def _compile_probe(program, cache_dir, *flags):
    """Run compile_probe.py in a fresh process with ZERAX_CACHE_DIR=cache_dir."""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, ZERAX_CACHE_DIR=cache_dir)
    probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile_probe.py")
    done = subprocess.run([sys.executable, probe, program, *flags], env=env, check=False,
                          capture_output=True, text=True, timeout=COMPILE_PROBE_TIMEOUT_S)
    if done.returncode:
        raise RuntimeError(f"compile_probe.py {program} failed:\n{done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


JIT_COMPILE = workload(
    "jit_compile", "jit compile time, cold and with a warm disk cache",
    cases=[Case("cold_mlp", "MLP jit(grad): first call, cold", compare=False, rounds=3),
           Case("warm_mlp", "MLP jit(grad): zerax warm disk cache vs JAX cold",
                compare=False),
           Case("cold_elementwise", "elementwise chain: first call, cold", compare=False,
                rounds=3),
           Case("warm_elementwise", "elementwise chain: zerax warm disk cache vs JAX cold",
                compare=False)],
    description="Trace + lower + compile time of a program seen for the first time. "
                "zerax: every sample is a fresh Python process (`benchmarks/"
                "compile_probe.py`) that imports zerax and NumPy, builds the inputs and "
                "starts zerax's jit backend (its modules, LLVM's target machine and engine, "
                "the thread pool's runtime module, once per process: JAX's side is measured "
                "in a running process whose backend is up; not timed), then times its first "
                "call of the jitted function minus its second call (trace, lowering to the "
                "kernel IR, LLVM's compile of each kernel; one execution taken out). *cold*: "
                "a new, empty `ZERAX_CACHE_DIR` for every sample; *warm*: a second process "
                "with the same directory, filled beforehand by a first one (each kernel's "
                "object code is loaded and linked, not compiled). JAX: `jax.clear_caches()` "
                "then `jit(f).lower(*args).compile()` in a running process, its persistent "
                "cache off. Numba: a "
                "fresh `njit(parallel=True)` dispatcher compiled by its first call on small "
                "arrays in a running process. The programs are the MLP training step and "
                "the elementwise chain (10^6) above.",
    targets=[Target("jax_jit", 0.2, "warm disk cache <= 0.2x JAX's cold compile",
                    ISSUE_JIT, cases=("warm_mlp", "warm_elementwise"))],
    rounds=5,
    miss_note="Cold, the time is LLVM's O3 pipeline and code emission for each kernel "
              "(one for the MLP step; the breakdown below); zerax's trace and lowering take "
              "milliseconds. Warm, nothing is compiled: backends/cpu/compile.py finds each "
              "kernel's object code in the sealed disk cache (keyed by a hash of its kernel "
              "IR and the versions it depends on, checked by a MAC) and links it into this "
              "process's LLVM engine. What is left warm is tracing, the lowering to kernel "
              "IR (which the cache key needs), the cache read and the link.",
)


@JIT_COMPILE.contender("zerax")
def _(case):
    import atexit
    import os
    import shutil
    import tempfile
    kind, program = case.split("_", 1)
    base = tempfile.mkdtemp(prefix="zerax-compile-probe-")
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    if kind == "warm":
        d = os.path.join(base, "warm")
        _compile_probe(program, d)          # fills the cache (not measured)
        _WARM_DIRS[case] = d
        return lambda: Seconds(_compile_probe(program, d)["compile_s"])

    def cold():
        d = tempfile.mkdtemp(dir=base)
        try:
            return Seconds(_compile_probe(program, d)["compile_s"])
        finally:
            shutil.rmtree(d, ignore_errors=True)
    return cold


@JIT_COMPILE.profiler
def _(case):
    kind, program = case.split("_", 1)
    if kind != "warm":
        return None
    b = _compile_probe(program, _WARM_DIRS[case], "--breakdown")
    _compile_probe("trivial", _WARM_DIRS[case])          # compiles it into the cache
    t = _compile_probe("trivial", _WARM_DIRS[case], "--breakdown")
    p = b["pieces"]
    return "\n".join([
        (f"a fresh process with the filled cache, its first call taken apart: trace "
         f"{_ms(p['trace_s'])}; lowering to kernel IR {_ms(p['zerax_lowering_s'])}; "
         f"{b['kernels']} kernel(s), {b['loaded']} loaded from the cache and {b['compiled']} "
         f"compiled (LLVM {_ms(b['llvm_s'])}): cache key {_ms(p['cache_key_s'])}, cache "
         f"read {_ms(p['cache_read_s'])}, link {_ms(p['link_s'])}; rest of the first call "
         f"{_ms(p['other_s'])}; a steady-state call {_ms(b['second_s'])}"),
        (f"for comparison, the same for `jit(lambda x: x + 1.0)` on a 3-vector, its kernel "
         f"in the cache: first call {_ms(t['first_s'])}")])


@JIT_COMPILE.contender("jax_jit", label="JAX compile")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    if case.endswith("elementwise"):
        f = _ew_chain(jnp)
        args = tuple(map(jnp.asarray, _ew_data(10 ** 6)))
    else:
        f = jax.grad(_mlp_loss(jnp, logsumexp, jax.nn.relu))
        params, x, y = _mlp_data()
        args = ([(jnp.asarray(w), jnp.asarray(b)) for w, b in params],
                jnp.asarray(x), jnp.asarray(y))

    def compile_cold():
        jax.clear_caches()
        return jax.jit(f).lower(*args).compile()
    return compile_cold


@JIT_COMPILE.contender("numba", label="Numba compile")
def _(case):
    if case != "cold_elementwise":
        return None   # no hand-written Numba MLP, nothing cached: nothing to compare
    a, b = _ew_data(16)
    return lambda: _ew_numba(parallel=True)(a, b)


import workloads_nn  # noqa: E402,F401
import workloads_train  # noqa: E402,F401
import workloads_programs  # noqa: E402,F401
import workloads_random  # noqa: E402,F401
import workloads_scipy  # noqa: E402,F401
import workloads_optim  # noqa: E402,F401
import workloads_compile  # noqa: E402,F401
import workloads_export  # noqa: E402,F401
import workloads_distributed  # noqa: E402,F401
import workloads_taylor  # noqa: E402,F401
import workloads_parallelism  # noqa: E402,F401
import workloads_first_run  # noqa: E402,F401
