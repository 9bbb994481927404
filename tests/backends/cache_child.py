"""Shared by the cache tests: run a small jitted program in a fresh process against a
given cache directory and key, and read back its values, warnings and counters
(``backends/cpu/compile.py``'s: kernels compiled by LLVM, loaded from disk)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

CHILD = """
    import json, sys, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import zerax as zx, zerax.numpy as znp
        from zerax._src.backends.cpu import compile as cc
        if "--limit" in sys.argv:      # a disk that fills up: writes beyond N bytes fail
            import resource
            n = int(sys.argv[sys.argv.index("--limit") + 1])
            resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        f = zx.jit(lambda a: znp.exp(a) * 2.5 + 1.0)
        g = zx.jit(lambda a: a * a - 3.0)
        a = np.linspace(-1.0, 1.0, 7)
        vals = {"f": np.asarray(f(a)).tolist()}
        if "--vanish" in sys.argv:     # the cache directory disappears while in use
            import shutil
            shutil.rmtree(sys.argv[sys.argv.index("--vanish") + 1])
        vals["g"] = np.asarray(g(a)).tolist()
    msgs = [str(w.message) for w in caught if "zerax" in str(w.message)]
    print("REPORT " + json.dumps({"values": vals, "warnings": msgs, "stats": cc.stats}))
"""


def expected():
    a = np.linspace(-1.0, 1.0, 7)
    return {"f": np.exp(a) * 2.5 + 1.0, "g": a * a - 3.0}


def run(cache_dir, key_file, *flags, timeout=240):
    """(report, stderr) of one child process; fails the test if the process died."""
    env = dict(os.environ, ZERAX_CACHE_DIR=str(cache_dir), ZERAX_CACHE_KEY=str(key_file))
    env.pop("ZERAX_DEBUG_CACHE", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), *map(str, flags)],
                          env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, f"the process died ({done.returncode}): {done.stderr[-3000:]}"
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    return json.loads(line[len("REPORT "):]), done.stderr


def assert_right(report):
    for name, ref in expected().items():
        np.testing.assert_allclose(report["values"][name], ref, rtol=1e-13, atol=1e-13)


def entries(cache_dir):
    """{"f"/"g": path of its entry ``c_<key>.o``} of the two programs (their kernels'
    keys computed here, as the child computes them)."""
    import zerax as zx
    import zerax.numpy as znp
    from zerax._src.backends.cpu import compile as cc
    from zerax._src.backends.lowering import lower_steps
    a = np.linspace(-1.0, 1.0, 7)
    out = {}
    for name, fn in (("f", lambda a: znp.exp(a) * 2.5 + 1.0), ("g", lambda a: a * a - 3.0)):
        (step,) = lower_steps(zx.jit(fn).lower(a).jaxpr)
        out[name] = os.path.join(cache_dir, f"c_{cc.kernel_key(step.kernel, False)}.o")
    assert all(os.path.exists(p) for p in out.values()), (out, os.listdir(cache_dir))
    return out
