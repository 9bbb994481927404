"""The kernel-IR path's disk cache (backends/cpu/compile.py): a second process loads
the object code instead of compiling; a tampered, truncated, foreign or unreadable
entry (a directory, a pipe, a link) gives one warning, the right result and a fresh
entry; entries are sealed binary with a JSON header, never pickles."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, warnings
    import numpy as np, zerax as zx, zerax.numpy as znp
    from zerax._src.backends.cpu import compile as cc
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = zx.jit(lambda a: znp.sum(znp.exp(a) * 2.0 + 1.0))
        g = zx.jit(lambda a: znp.tanh(a) - a * a)
        x = np.linspace(-1.0, 1.0, 101)
        out = [float(f(x)), float(np.asarray(g(x))[7])]
    print(json.dumps({"out": out, "stats": cc.stats,
                      "warnings": [str(w.message) for w in caught]}))
""")


def _run(d, key, timeout=120):
    env = dict(os.environ, ZERAX_CACHE_DIR=str(d), ZERAX_CACHE_KEY=str(key))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _entries(d):
    return sorted(p for p in os.listdir(d) if p.startswith("c_") and p.endswith(".o"))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    import numpy as np
    base = tmp_path_factory.mktemp("kir-cache")
    d, key = base / "cache", base / "zerax.key"
    d.mkdir(mode=0o700)
    first = _run(d, key)
    x = np.linspace(-1.0, 1.0, 101)
    assert first["out"] == [float(np.sum(np.exp(x) * 2.0 + 1.0)),
                            pytest.approx(float(np.tanh(x[7]) - x[7] * x[7]), rel=1e-15)]
    assert first["stats"] == {"compiled": 2, "loaded": 0} and not first["warnings"]
    assert len(_entries(d)) == 2
    return d, key, first["out"]


def _copy(src, dst):
    import shutil
    shutil.copytree(src, dst)
    os.chmod(dst, 0o700)
    return dst


def test_a_second_process_loads_instead_of_compiling(warm):
    d, key, out = warm
    again = _run(d, key)
    assert again["out"] == out
    assert again["stats"] == {"compiled": 0, "loaded": 2} and not again["warnings"]


def test_entries_are_sealed_binaries_with_json_headers(warm):
    d, _, _ = warm
    for name in _entries(d):
        data = (d / name).read_bytes()
        assert data.startswith(b"ZXCPUO1 ")
        assert b"\x80\x04" not in data[:16]           # not a pickle
        n = int.from_bytes(data[40:48], "little")
        header = json.loads(data[48:48 + n])
        assert header["symbol"].startswith("zerax_k_") and "blobs" in header


@pytest.mark.parametrize("fault", ["bytes", "truncate", "swap", "directory", "pipe", "link"])
def test_faulty_entries_warn_once_and_are_replaced(warm, tmp_path, fault):
    d0, key, out = warm
    d = _copy(d0, tmp_path / "cache")
    a, b = _entries(d)
    pa = d / a
    if fault == "bytes":                   # bytes changed inside an entry
        data = bytearray(pa.read_bytes())
        data[200:216] = os.urandom(16)
        pa.write_bytes(bytes(data))
    elif fault == "truncate":
        pa.write_bytes(pa.read_bytes()[:60])
    elif fault == "swap":                  # a valid entry under another's name
        pa.write_bytes((d / b).read_bytes())
    elif fault == "directory":
        pa.unlink()
        pa.mkdir()
    elif fault == "pipe":                  # reading it would block
        pa.unlink()
        os.mkfifo(pa)
    else:                                  # a link to an endless file
        pa.unlink()
        os.symlink("/dev/zero", pa)
    report = _run(d, key)
    assert report["out"] == out
    assert len(report["warnings"]) == 1 and "could not be used" in report["warnings"][0]
    assert report["stats"]["compiled"] == 1
    if fault not in ("directory",):
        again = _run(d, key)               # replaced by a good entry
        assert again["stats"] == {"compiled": 0, "loaded": 2} and not again["warnings"]


def test_another_key_is_not_trusted(warm, tmp_path):
    d0, _, out = warm
    d = _copy(d0, tmp_path / "cache")
    report = _run(d, tmp_path / "other.key")
    assert report["out"] == out and report["stats"]["compiled"] == 2
    assert len(report["warnings"]) == 1


HOST_CHILD = textwrap.dedent("""
    import json
    import numpy as np, zerax as zx
    from zerax import lax
    from zerax.scipy.special import digamma
    from zerax._src.backends.cpu import compile as cc
    seen = []

    def body(i, c):
        zx.debug.callback(lambda i, c: seen.append([int(i), float(c[0])]), i, c)
        return c + digamma(c) * 0.01
    f = zx.jit(lambda x: lax.fori_loop(0, 3, body, x))
    out = np.asarray(f(np.linspace(0.5, 2.0, 4))).tolist()
    print(json.dumps({"out": out, "seen": seen, "stats": cc.stats}))
""")


def test_a_kernel_with_host_calls_round_trips_through_the_disk_cache(tmp_path):
    """The object code holds no Python object's address: a second process loads it
    and gives its host calls this process's functions (rebuilt from the program)."""
    import numpy as np
    d, key = tmp_path / "cache", tmp_path / "zerax.key"
    d.mkdir(mode=0o700)
    env = dict(os.environ, ZERAX_CACHE_DIR=str(d), ZERAX_CACHE_KEY=str(key))
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", HOST_CHILD], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    cold, warm = runs
    assert cold["stats"] == {"compiled": 1, "loaded": 0}
    assert warm["stats"] == {"compiled": 0, "loaded": 1}
    assert warm["out"] == cold["out"] and warm["seen"] == cold["seen"]
    from zerax._src.core.core import all_primitives
    digamma = all_primitives()["digamma"].impl
    c, seen = np.linspace(0.5, 2.0, 4), []
    for i in range(3):
        seen.append([i, float(c[0])])
        c = c + digamma(c) * 0.01
    assert warm["out"] == c.tolist() and warm["seen"] == seen
