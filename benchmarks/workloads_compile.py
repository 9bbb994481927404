"""Compile-time rows of issue 20: zerax's cold compile of whole programs against JAX's.

Every number here is one fresh Python process (``compile_probe.py``): zerax with a new,
empty ``ZERAX_CACHE_DIR``, JAX with its persistent compilation cache off. Each process
imports its library, builds the inputs and starts its backend untimed (zerax's jit
modules, LLVM's engine and the thread pool's runtime; JAX's CPU client by a trivial
jitted call), then times the first call of the jitted program minus its second call:
trace, lowering, compilation (LLVM for zerax, XLA for JAX), one execution taken out. A probe that runs past ``PROBE_TIMEOUT_S`` (600 s; the environment variable
``ZERAX_COMPILE_PROBE_TIMEOUT_S`` changes it) is stopped and its row reads ``>600 s`` (a
lower bound: the ratio against JAX is then a lower bound too).

A cold compile of the bigger programs takes minutes on a small machine, so each
contender compiles each case once: its setup runs the probe, and the timed callable
returns that one measurement (the detail table shows 1 round). The zerax probe also
takes its first call apart (``--timeline``: tracing, zerax's lowering to the kernel
IR, the cache key, zerax's emission of LLVM IR, LLVM's parse, O3 pipeline and code
emission, the link, the cache write), at no extra compile; that text goes beside a missed
target (the workload's profiler) and, when ``ZERAX_COMPILE_LOG`` names a file, every
probe's JSON line is appended to it. ``python benchmarks/workloads_compile.py report
FILE`` prints the tables of docs/compile_time.md from such a file; ``python
benchmarks/workloads_compile.py probe PROGRAM [--jax]`` runs one probe by hand.

The programs (both sides build the same inputs from a fixed seed):

- ``mlp``: jit_compile's MLP training step, ``jit(grad(loss))`` of a 784-512-512-10 ReLU
  network, batch 128, float64 (workloads.py).
- ``cnn``: issue 16's CNN step (workloads_nn.py): Conv2d(1,32,3)-relu-maxpool-
  Conv2d(32,64,3)-relu-maxpool-Linear(1600,10) over a vmapped batch of 64 1x28x28
  float32 images, ``jit(grad(loss))`` of the arrays of the model (zerax.nn against
  Equinox, whose convolution is ``lax.conv_general_dilated``).
- ``mixerN``: N identical blocks (LayerNorm, Linear 64->256, gelu, Linear 256->64,
  residual) on a 32x64 float32 batch, ``jit(grad(loss))`` of the mean square output.
- ``newtoncg``: issue 20's Newton-CG direction: 20 conjugate-gradient iterations in a
  ``fori_loop`` whose body is a Hessian-vector product (``jvp`` of ``grad``) of the loss
  of a tanh MLP 50-100-50-1 (10,201 parameters) on 64 examples, float64, ``jit``.
- ``chainN``: N elementwise equations, ``x = sin(x) * c + cos(x)`` N/4 times on 16-vectors
  (float64), ``jit(f)``.
- ``scanN``: ``lax.scan`` over 100 steps whose body is N equations of the same chain
  (16-vectors, float64), ``jit(f)``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from registry import TIMED_OUT, Case, Seconds, Target, workload

ISSUE_COMPILE = "issue 20"
PROBE_TIMEOUT_S = int(os.environ.get("ZERAX_COMPILE_PROBE_TIMEOUT_S", "600"))  # per probe
HERE = os.path.dirname(os.path.abspath(__file__))

MIX_WIDTH, MIX_HIDDEN, MIX_BATCH = 64, 256, 32
VEC = 16
SCAN_LEN = 100
PROGRAMS = ("mlp", "cnn", "newtoncg", "mixer1", "mixer2", "mixer12", "chain1000",
            "chain2000", "chain5000", "scan200")


def _kind(name):
    m = re.fullmatch(r"([a-z]+)(\d*)", name)
    if not m or name not in PROGRAMS:
        raise ValueError(f"unknown compile-time program {name!r}; known: {PROGRAMS}")
    return m.group(1), int(m.group(2) or 0)


# ------------------------------------------------------------------ the programs

def _mixer_data(n_blocks):
    rng = np.random.default_rng(20)
    w, h = MIX_WIDTH, MIX_HIDDEN

    def mat(*s):
        return (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
    blocks = [{"g": (1 + 0.1 * rng.standard_normal(w)).astype(np.float32),
               "b": mat(1, w)[0] * 0.1, "w1": mat(w, h), "b1": np.zeros(h, np.float32),
               "w2": mat(h, w), "b2": np.zeros(w, np.float32)} for _ in range(n_blocks)]
    x = rng.standard_normal((MIX_BATCH, w)).astype(np.float32)
    return blocks, x


def _mixer_loss(xx, gelu):
    def block(p, x):
        mu = xx.mean(x, axis=-1, keepdims=True)
        var = xx.mean((x - mu) ** 2, axis=-1, keepdims=True)
        h = (x - mu) / xx.sqrt(var + 1e-5) * p["g"] + p["b"]
        h = gelu(h @ p["w1"] + p["b1"])
        return x + h @ p["w2"] + p["b2"]

    def loss(params, x):
        for p in params:
            x = block(p, x)
        return xx.mean(x * x)
    return loss


def _newton_data():
    rng = np.random.default_rng(23)
    sizes = ((50, 100), (100, 50), (50, 1))
    params = [(rng.standard_normal(s) / np.sqrt(s[0]), np.zeros(s[1])) for s in sizes]
    return params, rng.standard_normal((64, 50)), rng.standard_normal((64, 1))


def _newton_direction(xx, lib, x, y, iters=20):
    """``p -> d`` with ``H d = -g`` solved by ``iters`` CG steps (lib: zerax or jax)."""
    tmap, leaves = lib.tree_util.tree_map, lib.tree_util.tree_leaves

    def loss(p):
        h = x
        for w, b in p[:-1]:
            h = xx.tanh(h @ w + b)
        w, b = p[-1]
        return xx.mean((h @ w + b - y) ** 2)

    def dot(a, c):
        return sum(xx.vdot(u, v) for u, v in zip(leaves(a), leaves(c)))

    def direction(p):
        g = lib.grad(loss)
        b = tmap(lambda t: -t, g(p))

        def body(i, st):
            d_k, r, d, rr = st
            hd = lib.jvp(g, (p,), (d,))[1]
            alpha = rr / dot(d, hd)
            d_k = tmap(lambda u, v: u + alpha * v, d_k, d)
            r = tmap(lambda u, v: u - alpha * v, r, hd)
            rr_new = dot(r, r)
            d = tmap(lambda u, v: u + (rr_new / rr) * v, r, d)
            return d_k, r, d, rr_new
        return lib.lax.fori_loop(0, iters, body, (tmap(xx.zeros_like, b), b, b, dot(b, b)))[0]
    return direction


def _chain(xx, n):
    def f(x, c):
        for _ in range(n // 4):
            x = xx.sin(x) * c + xx.cos(x)
        return x
    return f


def _chain_data():
    rng = np.random.default_rng(21)
    return rng.standard_normal(VEC), rng.standard_normal(VEC)


def _scan(xx, lax, n):
    body_chain = _chain(xx, n)

    def body(x, xt):
        x = body_chain(x, xt)
        return x, x
    return lambda x0, xs: lax.scan(body, x0, xs)


def _scan_data():
    rng = np.random.default_rng(22)
    return rng.standard_normal(VEC), 0.5 * rng.standard_normal((SCAN_LEN, VEC))


def zerax_program(name):
    """(jitted zerax function, args) of PROGRAM, not yet called."""
    import zerax as zx
    import zerax.numpy as znp
    kind, n = _kind(name)
    if kind == "mlp":
        import workloads
        return workloads._zx_mlp()
    if kind == "cnn":
        import workloads_nn as wn
        import zerax.nn as nn
        import zerax.random as zr
        arrays, images, labels = wn._cnn_data()
        model = wn._cnn_class(nn.Module, nn, zx.nn.relu, zr.split)(zr.key(0), np.float32)
        model = wn._set_params(nn, model, arrays, znp.asarray)
        params, static = nn.partition(model, nn.is_inexact_array)
        loss = wn._xent(znp, zx.nn.log_softmax)

        def f(p, x, y):
            return loss(nn.combine(p, static), x, y, zx.vmap)
        return zx.jit(zx.grad(f)), (params, znp.asarray(images), znp.asarray(labels))
    if kind == "mixer":
        blocks, x = _mixer_data(n)
        params = [{k: znp.asarray(v) for k, v in b.items()} for b in blocks]
        return zx.jit(zx.grad(_mixer_loss(znp, zx.nn.gelu))), (params, znp.asarray(x))
    if kind == "newtoncg":
        params, x, y = _newton_data()
        f = _newton_direction(znp, zx, znp.asarray(x), znp.asarray(y))
        return zx.jit(f), ([tuple(map(znp.asarray, wb)) for wb in params],)
    if kind == "chain":
        return zx.jit(_chain(znp, n)), tuple(map(znp.asarray, _chain_data()))
    import zerax.lax as lax
    return zx.jit(_scan(znp, lax, n)), tuple(map(znp.asarray, _scan_data()))


def jax_program(name):
    """(function, args) of PROGRAM in JAX (not jitted: the probe jits it)."""
    import jax
    import jax.numpy as jnp
    kind, n = _kind(name)
    if kind == "mlp":
        import workloads
        from jax.scipy.special import logsumexp
        params, x, y = workloads._mlp_data()
        return (jax.grad(workloads._mlp_loss(jnp, logsumexp, jax.nn.relu)),
                ([(jnp.asarray(w), jnp.asarray(b)) for w, b in params], jnp.asarray(x),
                 jnp.asarray(y)))
    if kind == "cnn":
        import equinox as eqx
        import jax.random as jr
        import workloads_nn as wn
        arrays, images, labels = wn._cnn_data()
        model = wn._cnn_class(eqx.Module, eqx.nn, jax.nn.relu, jr.split)(jr.key(0),
                                                                         jnp.float32)
        model = wn._set_params(eqx, model, arrays, jnp.asarray)
        params, static = eqx.partition(model, eqx.is_inexact_array)
        loss = wn._xent(jnp, jax.nn.log_softmax)

        def f(p, x, y):
            return loss(eqx.combine(p, static), x, y, jax.vmap)
        return jax.grad(f), (params, jnp.asarray(images), jnp.asarray(labels))
    if kind == "mixer":
        blocks, x = _mixer_data(n)
        params = [{k: jnp.asarray(v) for k, v in b.items()} for b in blocks]
        return jax.grad(_mixer_loss(jnp, jax.nn.gelu)), (params, jnp.asarray(x))
    if kind == "newtoncg":
        params, x, y = _newton_data()
        f = _newton_direction(jnp, jax, jnp.asarray(x), jnp.asarray(y))
        return f, ([tuple(map(jnp.asarray, wb)) for wb in params],)
    if kind == "chain":
        return _chain(jnp, n), tuple(map(jnp.asarray, _chain_data()))
    return _scan(jnp, jax.lax, n), tuple(map(jnp.asarray, _scan_data()))


# ------------------------------------------------------------------ running the probes

def probe(name, jax=False, timeout=PROBE_TIMEOUT_S) -> dict:
    """One cold compile of PROGRAM in a fresh process (zerax with a new, empty cache
    directory and ``--timeline``; JAX with ``--jax``). A probe past ``timeout`` seconds
    is killed and gives ``{"compile_s": timeout, TIMED_OUT: timeout}``."""
    d = tempfile.mkdtemp(prefix="zerax-compile-cold-")
    env = dict(os.environ, ZERAX_CACHE_DIR=d, JAX_ENABLE_COMPILATION_CACHE="false")
    cmd = [sys.executable, os.path.join(HERE, "compile_probe.py"), name,
           "--jax" if jax else "--timeline"]
    try:
        done = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        res = {"compile_s": float(timeout), TIMED_OUT: float(timeout)}
    else:
        if done.returncode:
            raise RuntimeError(f"compile_probe.py {name} {cmd[-1]} failed:\n"
                               f"{done.stderr[-1500:]}")
        res = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    res.update(program=name, side="jax" if jax else "zerax")
    log = os.environ.get("ZERAX_COMPILE_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(res) + "\n")
    return res


_MEASURED: dict[str, dict] = {}   # case -> this worker's zerax probe (for the profiler)


def _measured(res):
    """The setup result of a probe: a callable returning its one measurement, and the
    timeout marker (run.py shows the row as a lower bound)."""
    extras = {TIMED_OUT: res[TIMED_OUT]} if TIMED_OUT in res else {}
    return (lambda: Seconds(res["compile_s"])), extras


def _zerax(program):
    def setup(case):
        res = probe(program(case))
        _MEASURED[case] = res
        return _measured(res)
    return setup


def _jax(program):
    return lambda case: _measured(probe(program(case), jax=True))


def _ms(s):
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


PIECES = (("trace_s", "trace"), ("zerax_lowering_s", "lowering to kernel IR"),
          ("cache_key_s", "cache key (kernel IR hashed)"), ("cache_read_s", "cache read"),
          ("emit_s", "emitting LLVM IR"), ("llvm_parse_s", "LLVM: IR printed and parsed"),
          ("llvm_optimise_s", "LLVM: O3 pipeline"), ("llvm_codegen_s", "LLVM: code emission"),
          ("link_s", "link"), ("cache_write_s", "cache write"),
          ("other_s", "rest of the first call"))


def pieces_text(res) -> str:
    """One probe's timeline as text (the profiler's note beside a missed target)."""
    if TIMED_OUT in res:
        return (f"the cold compile of {res['program']} did not finish in "
                f"{res[TIMED_OUT]:.0f} s: no breakdown (run `python benchmarks/"
                f"compile_probe.py {res['program']} --timeline` by hand, without a limit)")
    p, total = res["pieces"], res["first_s"]
    lines = [f"cold first call of {res['program']}: {_ms(total)} ({res['eqns']} top-level "
             f"equations; {res['kernels']} kernel(s) and {res['host_steps']} host step(s); "
             f"{res['compiled']} kernel(s) compiled by LLVM, {res['loaded']} loaded from "
             "the cache)"]
    lines += [f"  {label:<32} {_ms(p[k]):>9}  {100 * p[k] / total:5.1f}%"
              for k, label in PIECES]
    lines.append("  slowest kernels (emit + LLVM): " + ", ".join(
        f"{k} {_ms(v)}" for k, v in res["slowest_kernels"]))
    return "\n".join(lines)


def _profiler(case):
    res = _MEASURED.get(case)
    return None if res is None else pieces_text(res)


_DESC = ("Cold compile of the whole program (the first call minus the second), each in a "
         "fresh process: zerax with a new, empty `ZERAX_CACHE_DIR`, JAX (`jax.jit`) with "
         "its persistent compilation cache off; imports, inputs and each backend's "
         "start-up untimed; one process per contender and case (a cold compile takes "
         f"minutes), stopped after {PROBE_TIMEOUT_S} s (`>{PROBE_TIMEOUT_S} s`). See "
         "`benchmarks/workloads_compile.py` and docs/compile_time.md. ")

COMPILE_COLD = workload(
    "compile_cold", "cold compile: training steps and a scan",
    cases=[Case("mlp", "MLP step jit(grad), 784-512-512-10, batch 128, float64",
                compare=False, rounds=1),
           Case("cnn", "CNN step jit(grad), conv32-pool-conv64-pool-linear10, batch 64, "
                       "float32", compare=False, rounds=1),
           Case("scan200", f"lax.scan, 200-equation body, {SCAN_LEN} steps", compare=False,
                rounds=1),
           Case("newtoncg", "Newton-CG direction: 20 CG steps in fori_loop, each a "
                            "Hessian-vector product of a 10k-parameter MLP, float64",
                compare=False, rounds=1)],
    description=_DESC + "Programs: the MLP training step of jit_compile, issue 16's CNN "
                        "step (zerax.nn against Equinox), a `lax.scan` whose body is "
                        "200 sin/cos/mul/add equations on 16-vectors, and the Newton-CG "
                        "direction of issue 20's table (measured, no target: the issue's "
                        "targets are the first three).",
    targets=[Target("jax_jit", 2.0, "cold <= 2x JAX's cold compile", ISSUE_COMPILE,
                    cases=("mlp", "cnn", "scan200"))],
    rounds=1,
    op_timeout_s=PROBE_TIMEOUT_S + 120,
    miss_note="Every kernel is lowered to the kernel IR and emitted as LLVM IR by zerax "
              "(backends/lowering/, cpu/emit.py), then optimised and compiled by LLVM "
              "(cpu/engine.py), once per unique kernel (cpu/compile.py; identical kernels "
              "share one compile). What a cold compile spends is zerax's tracing and "
              "lowering (per equation), the emission of LLVM IR (per kernel statement), "
              "and LLVM's O3 pipeline and code emission (per unique kernel, most of the "
              "time): the breakdown below.",
)
COMPILE_COLD.contender("zerax", label="zerax cold")(_zerax(lambda case: case))
COMPILE_COLD.contender("jax_jit", label="JAX cold")(_jax(lambda case: case))
COMPILE_COLD.profiler(_profiler)


COMPILE_BLOCKS = workload(
    "compile_blocks", "cold compile: 12 identical blocks",
    cases=[Case("mixer12", f"12 blocks (LayerNorm, Linear {MIX_WIDTH}-{MIX_HIDDEN}, gelu, "
                           f"Linear {MIX_HIDDEN}-{MIX_WIDTH}, residual), batch {MIX_BATCH}, "
                           "jit(grad), float32", compare=False, rounds=1)],
    description=_DESC + "A stack of 12 identical MLP-mixer-like blocks; beside it zerax's "
                        "cold compile of the same program with one block (issue 20's "
                        "reference) and with two. Identical blocks compile once: the "
                        "kernels of 12 blocks are those of 2. One block has fewer: its "
                        "input takes no gradient and no block follows it, so the kernels "
                        "of a block boundary (the residual fused with the next LayerNorm, "
                        "and the LayerNorm's input gradient) are not in it; they are about "
                        "half of the 12-block program's LLVM time.",
    targets=[Target("zerax_one", 1.5, "<= 1.5x zerax's cold compile of 1 block",
                    ISSUE_COMPILE),
             Target("jax_jit", 2.0, "cold <= 2x JAX's cold compile", ISSUE_COMPILE)],
    rounds=1,
    op_timeout_s=PROBE_TIMEOUT_S + 120,
    miss_note=COMPILE_COLD.miss_note,
)
COMPILE_BLOCKS.contender("zerax", label="zerax cold")(_zerax(lambda case: "mixer12"))
COMPILE_BLOCKS.contender("jax_jit", label="JAX cold")(_jax(lambda case: "mixer12"))
COMPILE_BLOCKS.contender("zerax_one", label="zerax cold, 1 block")(
    _zerax(lambda case: "mixer1"))
COMPILE_BLOCKS.contender("zerax_two", label="zerax cold, 2 blocks")(
    _zerax(lambda case: "mixer2"))
COMPILE_BLOCKS.profiler(_profiler)


CHAIN_SIZES = (1000, 2000, 5000)
COMPILE_CHAIN = workload(
    "compile_chain", "cold compile: a long elementwise program",
    cases=[Case(f"n{n}", f"{n:,} equations (sin/cos/mul/add on {VEC}-vectors)",
                compare=False, rounds=1) for n in CHAIN_SIZES],
    description=_DESC + "`jit` of N elementwise equations; beside it zerax's cold compile "
                        "of 1,000 equations (linear growth: N/1000 times it at most) and "
                        "issue 20's absolute limit of 10 s for 5,000.",
    targets=[Target("zerax_n1000", n / 1000, f"<= {n // 1000}x zerax's 1,000 equations "
                    "(linear)", ISSUE_COMPILE, cases=(f"n{n}",)) for n in CHAIN_SIZES[1:]]
    + [Target("limit", 1.0, "<= 10 s", ISSUE_COMPILE, cases=("n5000",)),
       Target("jax_jit", 2.0, "cold <= 2x JAX's cold compile", ISSUE_COMPILE)],
    rounds=1,
    op_timeout_s=PROBE_TIMEOUT_S + 120,
    miss_note=COMPILE_COLD.miss_note,
)
COMPILE_CHAIN.contender("zerax", label="zerax cold")(_zerax(lambda case: f"chain{case[1:]}"))
COMPILE_CHAIN.contender("jax_jit", label="JAX cold")(_jax(lambda case: f"chain{case[1:]}"))
_N1000: list = []


@COMPILE_CHAIN.contender("zerax_n1000", label="zerax cold, 1,000 equations")
def _(case):
    if case == "n1000":
        return None          # the zerax column of that case already is it
    if not _N1000:           # one probe for both cases (this worker lives across them)
        _N1000.append(probe("chain1000"))
    return _measured(_N1000[0])


@COMPILE_CHAIN.contender("limit", label="issue 20's limit")
def _(case):
    return (lambda: Seconds(10.0)) if case == "n5000" else None


COMPILE_CHAIN.profiler(_profiler)


# ------------------------------------------------------------------ the report

def report(path) -> str:
    """Markdown tables (cold compiles, then where zerax's time goes) from a
    ZERAX_COMPILE_LOG file; the last probe of each (program, side) counts."""
    last: dict = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            last[(r["program"], r["side"])] = r
    progs = [p for p in PROGRAMS if (p, "zerax") in last or (p, "jax") in last]

    def cell(r):
        if r is None:
            return "—"
        return (">" if TIMED_OUT in r else "") + _ms(r["compile_s"])
    out = ["| program | zerax cold | JAX cold | zerax / JAX | JAX: trace+lower / XLA compile |",
           "|---|---|---|---|---|"]
    for p in progs:
        z, j = last.get((p, "zerax")), last.get((p, "jax"))
        ratio = ((">" if TIMED_OUT in z else "") + f"{z['compile_s'] / j['compile_s']:.1f}x"
                 if z and j and TIMED_OUT not in j else "—")
        split = (f"{_ms(j['pieces']['lower_s'])} / {_ms(j['pieces']['xla_compile_s'])}"
                 if j and TIMED_OUT not in j else "—")
        out.append(f"| {p} | {cell(z)} | {cell(j)} | {ratio} | {split} |")
    done = [p for p in progs if (p, "zerax") in last and TIMED_OUT not in last[(p, "zerax")]]
    if not done:
        return "\n".join(out)
    zs = [last[(p, "zerax")] for p in done]
    out += ["", "| zerax's first call | " + " | ".join(done) + " |",
            "|---|" + "---|" * len(done)]
    def share(z, k):
        v = z["pieces"].get(k)      # (a log of an older probe may lack a piece)
        return "—" if v is None else f"{_ms(v)} ({100 * v / z['first_s']:.0f}%)"
    for k, label in PIECES:
        out.append(f"| {label} | " + " | ".join(share(z, k) for z in zs) + " |")
    out.append("| **total** | " + " | ".join(f"**{_ms(z['first_s'])}**" for z in zs) + " |")
    for key, label in (("eqns", "top-level equations"), ("kernels", "kernels"),
                       ("host_steps", "host steps"), ("compiled", "kernels compiled by LLVM"),
                       ("loaded", "kernels loaded from the cache")):
        out.append(f"| {label} | " + " | ".join(str(z.get(key, "—")) for z in zs) + " |")
    out += ["", "Slowest kernels (emitting LLVM IR + LLVM):", ""]
    for p, z in zip(done, zs):
        out.append(f"- {p}: " + ", ".join(f"{k} {_ms(v)}"
                                          for k, v in z.get("slowest_kernels", [])))
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "report":
        print(report(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "probe":
        print(json.dumps(probe(sys.argv[2], jax="--jax" in sys.argv)))
    else:
        sys.exit(__doc__)
