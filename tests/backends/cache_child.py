"""Shared by the cache tests: run a small jitted program in a fresh process against a
given cache directory and key, and read back its values, warnings and counters."""

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
        from zerax._src.backends.numba import native
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
    print("REPORT " + json.dumps({"values": vals, "warnings": msgs,
                                  "stats": {k: native.stats[k] for k in ("loaded", "saved")}}))
"""


def expected():
    a = np.linspace(-1.0, 1.0, 7)
    return {"f": np.exp(a) * 2.5 + 1.0, "g": a * a - 3.0}


def run(cache_dir, key_file, *flags, timeout=240):
    """(report, stderr) of one child process; fails the test if the process died."""
    env = dict(os.environ, ZERAX_CACHE_DIR=str(cache_dir), ZERAX_CACHE_KEY=str(key_file),
               ZERAX_KERNEL_IR="0")    # the generated-source path's entries
    for name in ("ZERAX_NATIVE_CACHE", "NUMBA_DEBUG_CACHE", "NUMBA_CACHE_DIR"):
        env.pop(name, None)
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
    """{"f"/"g": (source path, native path or None)} of the two programs."""
    out = {}
    for name in os.listdir(cache_dir):
        if name.startswith("k_") and name.endswith(".py"):
            with open(os.path.join(cache_dir, name)) as fh:
                which = "f" if "2.5" in fh.read() else "g"
            stem = name[:-3]
            natives = [n for n in os.listdir(cache_dir)
                       if n.startswith(stem + ".") and n.endswith(".native")]
            out[which] = (os.path.join(cache_dir, name),
                          os.path.join(cache_dir, natives[0]) if natives else None)
    return out
