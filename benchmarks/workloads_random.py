"""Benchmark workloads of `zerax.random` (issue 15): jitted samplers over 10^7 numbers,
`split` into 10^5 keys, `vmap` of `normal` over 10^4 keys, and one eager `normal` call,
against `jax.random` (jax.jit and JAX eager) with NumPy's `Generator(PCG64)` beside the
large samplers for reference.

zerax and JAX draw bit-identical uniforms from the same key (normals agree to an ulp),
so their results are compared; NumPy's generator draws other numbers and returns
nothing to compare. Imported at the end of workloads.py.
"""

from __future__ import annotations

import numpy as np
from registry import Case, Target, workload

ISSUE_RANDOM = "issue 15"
N_LARGE = 10 ** 7
N_SPLIT = 10 ** 5
N_VMAP = 10 ** 4

SAMPLERS = {"uniform64": ("uniform", "float64"), "uniform32": ("uniform", "float32"),
            "normal64": ("normal", "float64"), "normal32": ("normal", "float32")}


def _jax():
    """Import JAX on the CPU in float64 mode."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


# ------------------------------------------------------------------ 10^7 samples, jitted
SAMPLE = workload(
    "random_sample", "Random numbers: jit of uniform/normal, 10^7 draws",
    cases=[Case(k, f"{s} {d}") for k, (s, d) in SAMPLERS.items()],
    description="`jit(lambda k: random.uniform(k, (10**7,), dtype))` and the same for "
                "`normal`: threefry2x32 bits (uint32 adds, rotations, xors), the float "
                "bit trick and, for normal, erf_inv, fused by zerax into one loop. "
                "NumPy's `Generator(PCG64).random` / `.standard_normal` for reference.",
    targets=[Target("jax_jit", 1.0, "<= 1.0x jax.jit", ISSUE_RANDOM)],
    rounds=5,
)


@SAMPLE.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.random as zr
    sampler, dtype = SAMPLERS[case]
    f = zx.jit(lambda k: getattr(zr, sampler)(k, (N_LARGE,), dtype))
    key = zr.key(0)
    return lambda: f(key).block_until_ready()


@SAMPLE.contender("jax_jit")
def _(case):
    jax = _jax()
    sampler, dtype = SAMPLERS[case]
    f = jax.jit(lambda k: getattr(jax.random, sampler)(k, (N_LARGE,), dtype))
    key = jax.random.key(0)
    return lambda: jax.block_until_ready(f(key))


@SAMPLE.contender("numpy", label="NumPy PCG64")
def _(case):
    sampler, dtype = SAMPLERS[case]
    gen = np.random.Generator(np.random.PCG64(0))
    draw = gen.random if sampler == "uniform" else gen.standard_normal

    def call():
        draw(N_LARGE, dtype=dtype)
        return None   # other numbers than threefry's: nothing to compare

    return call


# ------------------------------------------------------------------ split, jitted
SPLIT = workload(
    "random_split", "Random keys: jit of split(key, 10^5)",
    description="`jit(lambda k: random.split(k, 10**5))`: one threefry2x32 hash per new "
                "key (JAX's partitionable scheme: the counters are the key indices).",
    targets=[Target("jax_jit", 1.0, "<= 1.0x jax.jit", ISSUE_RANDOM)],
    rounds=7,
)


@SPLIT.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.random as zr
    f = zx.jit(lambda k: zr.split(k, N_SPLIT))
    key = zr.PRNGKey(0)
    return lambda: f(key).block_until_ready()


@SPLIT.contender("jax_jit")
def _(case):
    jax = _jax()
    f = jax.jit(lambda k: jax.random.split(k, N_SPLIT))
    key = jax.random.PRNGKey(0)
    return lambda: jax.block_until_ready(f(key))


# ------------------------------------------------------------------ vmap over keys, jitted
VMAP = workload(
    "random_vmap", "Random numbers: jit of vmap(normal) over 10^4 keys",
    description="`jit(vmap(lambda k: random.normal(k, (3,))))(keys)` with 10^4 keys from "
                "`split`: the batching rule of the threefry primitive broadcasts the "
                "counters against the keys, batch axis innermost.",
    targets=[Target("jax_jit", 1.0, "<= 1.0x jax.jit", ISSUE_RANDOM)],
    rounds=7,
    miss_note="The threefry primitive's batching rule puts the batch axis last, so the "
              "fused loop nest runs along the 10^4 keys (an inner extent of 3 does not "
              "vectorise: erf_inv on a (10000, 3) array takes about 10 ms, on (3, 10000) "
              "0.5 ms); what is left is the final transpose and the hash per element.",
)


@VMAP.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.random as zr
    f = zx.jit(zx.vmap(lambda k: zr.normal(k, (3,))))
    keys = zr.split(zr.key(0), N_VMAP)
    return lambda: f(keys).block_until_ready()


@VMAP.contender("jax_jit")
def _(case):
    jax = _jax()
    f = jax.jit(jax.vmap(lambda k: jax.random.normal(k, (3,))))
    keys = jax.random.split(jax.random.key(0), N_VMAP)
    return lambda: jax.block_until_ready(f(keys))


# ------------------------------------------------------------------ eager normal
EAGER = workload(
    "random_eager", "Random numbers: eager normal(key, (3,))",
    description="`random.normal(key, (3,))` without jit: the per-call cost of a small "
                "draw (JAX dispatches its jitted sampler; zerax calls one compiled "
                "kernel for the concrete key).",
    targets=[Target("jax", 0.2, "<= 0.2x JAX eager", ISSUE_RANDOM)],
    rounds=9,
    miss_note="On a concrete key zerax's eager `normal` is one call of the sampler's "
              "compiled kernel, kept per key and shape (random/eager.py); what is left is argument checking and wrapping "
              "the result, a few microseconds of Python.",
)


@EAGER.contender("zerax")
def _(case):
    import zerax.random as zr
    key = zr.key(0)
    return lambda: zr.normal(key, (3,)).block_until_ready()


@EAGER.contender("jax")
def _(case):
    jax = _jax()
    key = jax.random.key(0)
    return lambda: jax.block_until_ready(jax.random.normal(key, (3,)))
