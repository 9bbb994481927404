"""Benchmark rows of zerax.export (issue 34): loading an exported program in a fresh
process and its first call, against JAX's ``jax.export``; and a loaded program's
steady-state call against the original jitted function.

The program is the digits MLP of examples/train_digits.py (64 -> 1024 -> 1024 -> 10,
ReLU, float32, inference), exported once for any batch size, its weights constants of
the program (8.4 MB).  JAX exports the same function with the same weights
(``jax.export.export(jax.jit(f))`` with ``symbolic_shape("b")``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from registry import Case, Seconds, Target, workload

ISSUE_EXPORT = "issue 34"
SIZES = (64, 1024, 1024, 10)
PROBE_TIMEOUT_S = 600


def _weights():
    rng = np.random.default_rng(34)
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             (rng.standard_normal(n) * 0.1).astype(np.float32))
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def _digits(batch):
    return np.random.default_rng(35).random((batch, SIZES[0])).astype(np.float32)


def _mlp(np_, relu):
    weights = _weights()

    def predict(x):
        for k, (w, b) in enumerate(weights):
            x = x @ w + b
            if k < len(weights) - 1:
                x = relu(x)
        return x
    return predict


def _zerax_blob(path):
    import zerax as zx
    import zerax.numpy as znp
    from zerax import export
    b, = export.symbolic_shape("b")
    exp = export.export(zx.jit(_mlp(znp, lambda v: znp.maximum(v, 0.0))))(
        zx.ShapeDtypeStruct((b, SIZES[0]), "float32"))
    with open(path, "wb") as f:
        f.write(exp.serialize())


def _jax_blob(path):
    from workloads import _jax
    jax = _jax()
    import jax.numpy as jnp
    b, = jax.export.symbolic_shape("b")
    exp = jax.export.export(jax.jit(_mlp(jnp, jax.nn.relu)))(
        jax.ShapeDtypeStruct((b, SIZES[0]), jnp.float32))
    with open(path, "wb") as f:
        f.write(exp.serialize())


# A fresh process: imports, the blob's bytes and the backend's start-up are not timed
# (as in compile_probe.py); deserialize + the first call are.
_PROBE = {
    "zerax": r"""
import json, sys, time
import numpy as np
import zerax
from zerax import export
from zerax._src.backends import get_backend
from zerax._src.backends.cpu import engine, threads
get_backend("numba")
threads.ensure_loaded(engine.add_runtime_module, engine.address_of)
blob = open(sys.argv[1], "rb").read()
x = np.random.default_rng(35).random((360, 64)).astype(np.float32)
t0 = time.perf_counter()
exp = export.deserialize(blob)
y = exp.call(x)
t1 = time.perf_counter()
exp.call(x)
t2 = time.perf_counter()
print(json.dumps({"first_s": t1 - t0, "second_s": t2 - t1, "sum": float(np.sum(y))}))
""",
    "jax": r"""
import json, os, sys, time
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
jax.jit(lambda v: v + 1)(np.ones(2))   # the backend up, as zerax's
blob = open(sys.argv[1], "rb").read()
x = np.random.default_rng(35).random((360, 64)).astype(np.float32)
t0 = time.perf_counter()
exp = jax.export.deserialize(bytearray(blob))
y = exp.call(x).block_until_ready()
t1 = time.perf_counter()
exp.call(x).block_until_ready()
t2 = time.perf_counter()
print(json.dumps({"first_s": t1 - t0, "second_s": t2 - t1, "sum": float(np.sum(y))}))
""",
}


def _load_s(res):
    """deserialize + first call, less one steady-state call (the execution itself, as
    the jit_compile row takes it out): what loading costs."""
    return res["first_s"] - res["second_s"]


def _probe(which, blob, cache_dir=None):
    env = dict(os.environ)
    if cache_dir is not None:
        env["ZERAX_CACHE_DIR"] = cache_dir
    done = subprocess.run([sys.executable, "-c", _PROBE[which], blob], env=env,
                          capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    if done.returncode:
        raise RuntimeError(f"the {which} export probe failed:\n{done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


EXPORT_LOAD = workload(
    "export_load", "zerax.export: deserialize + first call in a fresh process",
    cases=[Case("mlp", "digits MLP (64-1024-1024-10, weights as constants), batch 360",
                compare=False)],
    description="Each sample is a fresh Python process that imports the library and "
                "starts its backend (not timed), reads the serialised program's bytes, then "
                "times `deserialize(blob)` and the first `call` on 360 digits, less a second "
                "call (one execution taken out, as in the jit_compile row: what remains is "
                "the cost of loading) (zerax: "
                "checks of every byte, the program decoded and type-checked, traced "
                "under jit and compiled, the kernels loaded from the warm disk cache "
                "filled by an earlier process; JAX: `jax.export.deserialize` and the first "
                "`Exported.call`, which compiles the StableHLO with XLA, JAX's persistent "
                "cache off as in the jit_compile row).",
    targets=[Target("jax", 0.2, "<= 0.2x JAX's deserialize + first call", ISSUE_EXPORT)],
    rounds=5,
    miss_note="zerax's part: reading the blob (SHA-256 and CRCs of the 8.4 MB of weights), "
              "decoding and type-checking the program, tracing it under jit, the cache "
              "lookup (lowering to the kernel IR, whose hash is the key) and linking the "
              "cached object code.",
)


@EXPORT_LOAD.contender("zerax", label="zerax, warm disk cache")
def _(case):
    d = tempfile.mkdtemp(prefix="zerax-export-bench-")
    blob = os.path.join(d, "mlp.zx")
    _zerax_blob(blob)
    cache = os.path.join(d, "cache")
    _probe("zerax", blob, cache)    # fills the disk cache (not measured)
    return lambda: Seconds(_load_s(_probe("zerax", blob, cache)))


@EXPORT_LOAD.contender("jax", label="jax.export")
def _(case):
    d = tempfile.mkdtemp(prefix="jax-export-bench-")
    blob = os.path.join(d, "mlp.jax")
    _jax_blob(blob)
    return lambda: Seconds(_load_s(_probe("jax", blob)))


EXPORT_CALL = workload(
    "export_call", "zerax.export: a loaded program's steady-state call",
    cases=[Case("b360", "digits MLP, batch 360"), Case("b1", "digits MLP, batch 1")],
    description="`exp.call(x)` of the deserialised digits MLP (symbolic batch), against the "
                "original `zerax.jit` function it was exported from, on the same inputs, "
                "after both have compiled (`jax.export`'s `Exported.call` for reference).",
    targets=[Target("zerax_jit", 1.05, "<= 1.05x the original jitted function",
                    ISSUE_EXPORT)],
    rounds=7,
    miss_note="The loaded program runs under a jit of its own (`Exported.call`), whose "
              "dispatch takes the fast path of any jitted function; its kernels are those "
              "of the original program.",
)


def _zerax_call(case, loaded):
    """The steady-state call of the original jitted MLP, or of its exported and
    deserialised program, on the case's batch (compiled first)."""
    import zerax as zx
    import zerax.numpy as znp
    from zerax import export
    f = zx.jit(_mlp(znp, lambda v: znp.maximum(v, 0.0)))
    if loaded:
        b, = export.symbolic_shape("b")
        f = export.deserialize(export.export(f)(
            zx.ShapeDtypeStruct((b, SIZES[0]), "float32")).serialize()).call
    x = _digits(int(case[1:]))
    f(x)
    return lambda: np.asarray(f(x))


EXPORT_CALL.contender("zerax", label="zerax, loaded")(lambda case: _zerax_call(case, True))
EXPORT_CALL.contender("zerax_jit", label="zerax, original jit")(
    lambda case: _zerax_call(case, False))


@EXPORT_CALL.contender("jax", label="jax.export, loaded")
def _(case):
    from workloads import _jax
    jax = _jax()
    import jax.numpy as jnp
    b, = jax.export.symbolic_shape("b")
    exp = jax.export.export(jax.jit(_mlp(jnp, jax.nn.relu)))(
        jax.ShapeDtypeStruct((b, SIZES[0]), jnp.float32))
    exp = jax.export.deserialize(exp.serialize())
    x = _digits(int(case[1:]))
    exp.call(x).block_until_ready()
    return lambda: np.asarray(exp.call(x).block_until_ready())
