"""The native cache (backends/numba/native.py): a second process loads compiled kernels
without Numba's dispatcher, with the same results, and falls back to Numba on any
problem."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from zerax._src.backends.numba import native

# The generated-source path's cache entries (numba_path: conftest.py); the kernel-IR
# path's are tested in test_kernel_ir_cache.py.
pytestmark = [pytest.mark.skipif(not native.supported(),
                                reason="the native cache handles ELF objects only"),
              pytest.mark.usefixtures("numba_path")]

# Four programs: a prange kernel (>= 100k elements, its 4.8 MB output on huge pages:
# the kernel calls libc's madvise, which the native loader must resolve), a program split around a BLAS
# product (Python glue between kernels), a scalar fori_loop and complex arithmetic; then a
# small kernel
# called directly with arguments it was not compiled for (a serial kernel, compiled by
# backends/numba/direct/: a new signature is compiled there, a strided array copied).
PROGRAMS = """
    import json, sys
    import numpy as np, zerax as zx, zerax.numpy as znp
    from numba.core import registry
    from zerax._src.backends.numba import native

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(600_000), rng.standard_normal(600_000)
    x, w = rng.standard_normal((160, 160)), rng.standard_normal((160, 160))
    out = {}
    big = zx.jit(lambda a, b: znp.tanh(a) * b + znp.sqrt(a * a + 1.0))
    out["prange"] = big(a, b)
    assert big.lower(a, b).as_text().count("_hugepages(") == 1
    assert "_hugepages(" not in zx.jit(lambda a: a * 2.0).lower(a[:1000]).as_text()
    out["blas"] = zx.jit(lambda x, w: znp.tanh(x @ w) * 2.0 + x)(x, w)
    out["fori"] = zx.jit(lambda c: zx.lax.fori_loop(
        0, 1000, lambda i, c: c * 0.999 + 0.001 * i, c))(np.float64(1.0))
    small = zx.jit(lambda v: v * 2.0 + 1.0)
    v = np.arange(7.0)
    out["small"] = small(v)
    numba_context = "_toplevel_target_context" in registry.cpu_target.__dict__
    # complex arguments and arithmetic (last: generating complex code makes Numba
    # dispatchers of its complex helpers, which builds Numba's context)
    z = np.array([1 + 2j, -0.5 + 0.25j, 3.0 - 1j])
    out["complex"] = zx.jit(lambda z: znp.stack([znp.real(z * z + 1.0),
                                                znp.imag(znp.exp(z) / (z + 2.0))]))(z)
    report = {"stats": {k: native.stats[k] for k in ("loaded", "saved")},
              "numba_context": numba_context,
              "values": {k: np.asarray(r).ravel().tolist() for k, r in out.items()}}
    if "--guard" in sys.argv:
        kernel = small.lower(v).compile()._exe.kernel
        strided = np.arange(14.0)[::2]                       # not contiguous
        report["strided"] = kernel(strided)[0].tolist()
        report["float32"] = kernel(np.arange(7.0, dtype=np.float32))[0].tolist()
        report["again"] = kernel(np.arange(7.0))[0].tolist()
        report["fallbacks"] = native.stats["fallbacks"]
        from zerax._src.backends.numba import direct
        report["direct_compiled"] = direct.stats["compiled"]
    print("REPORT " + json.dumps(report))
"""


def _run(cache_dir, *flags):
    env = dict(os.environ, ZERAX_CACHE_DIR=str(cache_dir), ZERAX_KERNEL_IR="0")
    env.pop("ZERAX_NATIVE_CACHE", None)
    env.pop("NUMBA_DEBUG_CACHE", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAMS), *flags],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    return json.loads(line[len("REPORT "):]), done.stderr


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache directory filled by a first (cold) process, and that process's report."""
    d = tmp_path_factory.mktemp("native-cache")
    report, _ = _run(d)
    return d, report


def _expected():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(600_000), rng.standard_normal(600_000)
    x, w = rng.standard_normal((160, 160)), rng.standard_normal((160, 160))
    c = 1.0
    for i in range(1000):
        c = c * 0.999 + 0.001 * i
    z = np.array([1 + 2j, -0.5 + 0.25j, 3.0 - 1j])
    return {"prange": np.tanh(a) * b + np.sqrt(a * a + 1.0),
            "blas": np.tanh(x @ w) * 2.0 + x, "fori": np.array([c]),
            "small": np.arange(7.0) * 2.0 + 1.0,
            "complex": np.stack([(z * z + 1.0).real, (np.exp(z) / (z + 2.0)).imag])}


def test_cold_process_writes_native_entries(warm_cache):
    d, cold = warm_cache
    assert cold["stats"] == {"loaded": 0, "saved": 5}
    assert len([n for n in os.listdir(d) if n.endswith(".native")]) == 5
    for name, ref in _expected().items():
        np.testing.assert_allclose(cold["values"][name], ref.ravel(), rtol=1e-12, atol=1e-12)


def test_second_process_loads_natively_without_numba(warm_cache):
    d, cold = warm_cache
    warm, stderr = _run(d, "--guard")
    assert warm["stats"] == {"loaded": 5, "saved": 0}
    # Nothing went through Numba's dispatcher: its target context was never built
    # (the report is taken before the guard checks below, which do use Numba).
    assert warm["numba_context"] is False and cold["numba_context"] is True
    assert warm["values"] == cold["values"]        # the same machine code, bit for bit
    assert "Warning" not in stderr
    # Arguments the kernel was not compiled for: a strided array is copied, a new dtype
    # is compiled by backends/numba/direct/ from the source (not by Numba): right answers.
    np.testing.assert_array_equal(warm["strided"], np.arange(14.0)[::2] * 2.0 + 1.0)
    np.testing.assert_allclose(warm["float32"], np.arange(7.0) * 2.0 + 1.0)
    np.testing.assert_array_equal(warm["again"], np.arange(7.0) * 2.0 + 1.0)
    assert warm["fallbacks"] == 0 and warm["direct_compiled"] == 1


def test_corrupt_native_file_warns_and_falls_back(warm_cache, tmp_path):
    d, cold = warm_cache
    for name in os.listdir(d):
        if name.endswith((".py", ".native")) or name == "__pycache__":
            src, dst = os.path.join(d, name), os.path.join(tmp_path, name)
            if os.path.isdir(src):
                shutil.copytree(src, dst)
            else:
                with open(src, "rb") as f, open(dst, "wb") as g:
                    g.write(f.read())
    natives = sorted(n for n in os.listdir(tmp_path) if n.endswith(".native"))
    with open(tmp_path / natives[0], "r+b") as f:      # flip bytes inside the payload
        f.seek(200)
        f.write(b"\xff" * 64)
    with open(tmp_path / natives[1], "wb") as f:       # truncated to nothing useful
        f.write(b"ZERAX")
    report, stderr = _run(tmp_path)
    assert "native cache entry" in stderr and "could not be used" in stderr
    assert report["stats"]["loaded"] == 3              # the three intact entries
    assert report["values"] == cold["values"]          # Numba's cache: the same code
    # The broken entries were replaced (from Numba's cache) for the next process.
    again, stderr = _run(tmp_path)
    assert again["stats"] == {"loaded": 5, "saved": 0} and "could not be used" not in stderr
    assert again["values"] == cold["values"]


def test_object_needing_an_unknown_symbol_is_refused_before_loading():
    # MCJIT would abort the process on an unresolved symbol: such an entry is refused
    # (quietly: it is not corrupt, this process just lacks the symbol).
    specs = [("<f8", (3,), "C")]
    native._engine()  # as load_kernels does: makes the process's own symbols searchable
    obj = native.guard.build_object("k", "zerax_test_no_such_symbol", specs,
                                    native.guard.layout(), native.target_machine(opt=0))
    defined, undefined = native.elf_symbols(obj)
    assert "zerax_test_no_such_symbol" in undefined and "zerax.guard.k" in defined
    with pytest.raises(native.Unavailable, match="zerax_test_no_such_symbol"):
        native._check_symbols("k", obj, set())
    assert native._check_symbols("k", obj, {"zerax_test_no_such_symbol"}) == defined
