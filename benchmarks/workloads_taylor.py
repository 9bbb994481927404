"""Benchmark workloads of Taylor mode (issue 32): the first 10 derivatives of
``tanh(x) * sin(x)`` by ``zerax.jet`` under ``zerax.jit`` against
``jax.experimental.jet`` under ``jax.jit``, and (trace + compile + run) against zerax's
own nested ``grad`` of order 10; a 10-term jet through a 1,000-step ``scan`` (JAX's jet
has no rule for scan); and the size of the program of the n-th nested ``grad`` (n = 1 ..
10) of five functions beside JAX's. Imported at the end of workloads.py.
"""

from __future__ import annotations

import time

import numpy as np
from registry import Case, Seconds, Target, workload

ISSUE_TAYLOR = "issue 32"
X0 = 0.3
K = 10


def _jax():
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _unit(k):
    return (1.0,) + (0.0,) * (k - 1)


# ------------------------------------------------------------------ 10 derivatives by jet
JET_DERIVS = workload(
    "jet_derivs", "Taylor mode: the first 10 derivatives of tanh(x) sin(x)",
    cases=[Case("run", "jitted, per call"),
           Case("cold", "trace + compile + run of a fresh function", compare=False)],
    description="`jit(lambda x: jet(f, (x,), ((1.0, 0.0, ..., 0.0),)))(0.3)`, f = tanh(x) "
                "sin(x), 10 terms: the 10 derivatives in one pass. run: the jitted "
                "function called again (zerax.jit against jax.jit of "
                "jax.experimental.jet.jet). cold: a fresh function traced, compiled "
                "(zerax's disk cache off) and run once, against zerax's own "
                "`jit(grad(grad(...grad(f))))` of order 10 (the 10th derivative only) "
                "done the same way.",
    targets=[Target("jax_jit", 0.5, "<= 0.5x jax.experimental.jet under jax.jit",
                    ISSUE_TAYLOR, cases=("run",)),
             Target("zerax_nested", 0.1, ">= 10x faster than zerax's nested grad",
                    ISSUE_TAYLOR, cases=("cold",))],
    rounds=5,
)


def _tanh_sin(mod):
    return lambda x: mod.tanh(x) * mod.sin(x)


@JET_DERIVS.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    f = _tanh_sin(znp)

    def derivs(x):
        return znp.stack(zx.jet(f, (x,), (_unit(K),))[1])
    if case == "run":
        g = zx.jit(derivs)
        return lambda: g(X0).block_until_ready()
    zx.config.update("disk_cache", False)

    def cold():
        t = time.perf_counter()
        zx.jit(lambda x: derivs(x))(X0).block_until_ready()
        return Seconds(time.perf_counter() - t)
    return cold


@JET_DERIVS.contender("zerax_nested", label="zerax nested grad")
def _(case):
    if case != "cold":
        return None
    import zerax as zx
    import zerax.numpy as znp
    zx.config.update("disk_cache", False)

    def cold():
        g = _tanh_sin(znp)
        for _ in range(K):
            g = zx.grad(g)
        t = time.perf_counter()
        zx.jit(g)(X0).block_until_ready()
        return Seconds(time.perf_counter() - t)
    return cold


@JET_DERIVS.contender("jax_jit", label="jax.jit(jet)")
def _(case):
    if case != "run":
        return None
    jax = _jax()
    import jax.numpy as jnp
    from jax.experimental.jet import jet
    f = _tanh_sin(jnp)
    g = jax.jit(lambda x: jnp.stack(jet(f, (x,), (_unit(K),))[1]))
    return lambda: jax.block_until_ready(g(X0))


# ------------------------------------------------------------------ a jet through a scan
SCAN_STEPS = 1000
SCAN_ORDERS = (1, 5, 10)

JET_SCAN = workload(
    "jet_scan", "Taylor mode through a 1,000-step scan (ODE sensitivities)",
    cases=[Case(f"k{k}", f"{k} term{'s' if k > 1 else ''}") for k in SCAN_ORDERS],
    description=f"Van der Pol's oscillator integrated by {SCAN_STEPS} classical "
                "Runge-Kutta steps in a `lax.scan`; `jit` of the jet of the final state "
                "with respect to the initial position, K terms (the first K derivatives of "
                "the trajectory's end with respect to where it starts): the carry's series "
                "advances with the loop. JAX's jet has no rule for scan (nor while_loop or "
                "cond), so there is no anchor; the extras give the time per term.",
    rounds=5,
)


def _vdp_end(lax, mod, mu=1.0, h=0.005):
    def rhs(s):
        x, v = s[0], s[1]
        return mod.stack([v, mu * (1.0 - x * x) * v - x])

    def step(s, _):
        k1 = rhs(s)
        k2 = rhs(s + 0.5 * h * k1)
        k3 = rhs(s + 0.5 * h * k2)
        k4 = rhs(s + h * k3)
        return s + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None

    def end(x0):
        return lax.scan(step, mod.stack([x0, 0.0 * x0]), None, length=SCAN_STEPS)[0]
    return end


@JET_SCAN.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    k = int(case[1:])
    end = _vdp_end(zx.lax, znp)
    g = zx.jit(lambda x: znp.stack(zx.jet(end, (x,), (_unit(k),))[1]))
    g(2.0).block_until_ready()
    t, n = time.perf_counter(), 0
    while time.perf_counter() - t < 0.3 or n < 3:
        g(2.0).block_until_ready()
        n += 1
    per = (time.perf_counter() - t) / n
    return (lambda: g(2.0).block_until_ready()), {"per_term_ms": round(per / k * 1e3, 4)}


# ------------------------------------------------------------------ nested grad IR size
ORDERS = range(1, 11)
IR_FUNCS = ("tanh", "tanh_sin", "exp_sin", "runge", "mlp")
TRACE_ORDER = 6

NESTED_IR = workload(
    "nested_grad_ir", "Nested grad stays compact: equations of the n-th derivative",
    cases=[Case(name, {"tanh": "tanh(x)", "tanh_sin": "tanh(x) sin(x)",
                       "exp_sin": "exp(sin(x))", "runge": "1 / (1 + x^2)",
                       "mlp": "MLP 1-8-8-1 (tanh) w.r.t. its input"}[name], compare=False)
           for name in IR_FUNCS],
    description="Top-level equations of `make_jaxpr(grad(grad(...grad(f))))(0.3)` for n = 1 "
                "to 10 nested grads (extras n01 .. n10; JAX's until one order takes more "
                "than 90 s to trace), and the time to trace n = 6. zerax's grad of a function of "
                "one number evaluates its linear map forward (a map of one number to one "
                "number is its own transpose), and the recording trace merges equal "
                "expressions (equal constants by value, negations pulled out), so the "
                "program grows polynomially with n where reverse over reverse doubles it.",
    targets=[Target("jax", 0.1, "IR of the 10th derivative <= 0.1x JAX's", ISSUE_TAYLOR,
                    metric="n10")],
    rounds=3,
    op_timeout_s=600,
)


def _ir_function(name, mod):
    rng = np.random.default_rng(32)
    w1, b1 = rng.normal(size=8), rng.normal(size=8)
    w2, b2, w3 = rng.normal(size=(8, 8)) / 3, rng.normal(size=8), rng.normal(size=8)

    def mlp(x):
        h = mod.tanh(w1 * x + b1)
        return mod.dot(w3, mod.tanh(mod.dot(w2, h) + b2))
    return {"tanh": mod.tanh, "tanh_sin": lambda x: mod.tanh(x) * mod.sin(x),
            "exp_sin": lambda x: mod.exp(mod.sin(x)), "runge": lambda x: 1.0 / (1.0 + x ** 2),
            "mlp": mlp}[name]


def _ir_setup(case, grad, make_jaxpr, mod, limit_s=90.0):
    f = _ir_function(case, mod)
    counts, g = {}, f
    for n in ORDERS:
        g = grad(g)
        t = time.perf_counter()
        counts[f"n{n:02d}"] = len(make_jaxpr(g)(X0).jaxpr.eqns)
        if time.perf_counter() - t > limit_s:
            break

    def trace():
        h = _ir_function(case, mod)
        for _ in range(TRACE_ORDER):
            h = grad(h)
        return make_jaxpr(h)(X0)
    return trace, counts


@NESTED_IR.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    return _ir_setup(case, zx.grad, zx.make_jaxpr, znp)


@NESTED_IR.contender("jax", label="JAX")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    return _ir_setup(case, jax.grad, jax.make_jaxpr, jnp)
