"""Every fault of the on-disk cache is survived (issue 13): corrupt, truncated or foreign
files of any kind, a disk that fills up mid-write, a directory that vanishes while in
use.  Each process gives the right result with at most one warning, and writes stay
atomic (no partial entry is ever left under an entry's name)."""

import os
import shutil

import pytest

from cache_child import assert_right, entries, run  # noqa: E402 - shared test helpers
from zerax._src.backends.numba import native

# The generated-source path's cache entries (numba_path: conftest.py); the kernel-IR
# path's are tested in test_kernel_ir_cache.py.
pytestmark = [pytest.mark.skipif(not native.supported(),
                                reason="the native cache handles ELF objects only"),
              pytest.mark.usefixtures("numba_path")]


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    base = tmp_path_factory.mktemp("cache-faults")
    d, key = base / "cache", base / "zerax.key"
    report, _ = run(d, key)
    assert report["stats"] == {"loaded": 0, "saved": 2}
    return d, key


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def test_corrupt_truncated_and_foreign_files(warm, tmp_path):
    d0, key = warm
    d = _copy(d0, tmp_path / "cache")
    files = entries(d)
    with open(files["f"][1], "r+b") as fh:          # random bytes inside the entry
        fh.seek(100)
        fh.write(os.urandom(64))
    with open(files["g"][1], "r+b") as fh:          # truncated
        fh.truncate(50)
    with open(files["g"][0], "wb") as fh:           # not even text
        fh.write(b"\xff\xfe\x00" * 30)
    # Numba's files, as an older zerax left them: random bytes and a truncated one.
    (d / "__pycache__").mkdir()
    (d / "__pycache__" / f"{os.path.basename(files['f'][0])[:-3]}.ENTRY-9.py311.nbi"
     ).write_bytes(os.urandom(300))
    (d / "__pycache__" / f"{os.path.basename(files['f'][0])[:-3]}.ENTRY-9.py311.1.nbc"
     ).write_bytes(b"\x80\x04")
    report, _ = run(d, key)
    assert_right(report)
    assert report["stats"]["loaded"] == 0 and len(report["warnings"]) == 1
    again, _ = run(d, key)                          # replaced by good entries
    assert_right(again)
    assert again["stats"] == {"loaded": 2, "saved": 0} and not again["warnings"]


def test_directories_pipes_links_and_empty_files_under_entry_names(warm, tmp_path):
    d0, key = warm
    d = _copy(d0, tmp_path / "cache")
    files = entries(d)
    os.remove(files["f"][1])
    os.mkdir(files["f"][1])                         # a directory where an entry goes
    os.remove(files["g"][1])
    os.mkfifo(files["g"][1])                        # a pipe: reading it would block
    os.remove(files["f"][0])
    os.symlink("/dev/zero", files["f"][0])          # a link to an endless file
    open(files["g"][0], "wb").close()               # an empty source copy
    report, _ = run(d, key, timeout=120)
    assert_right(report)
    assert len(report["warnings"]) == 1


def test_concurrent_cold_processes_write_whole_entries(warm, tmp_path):
    import subprocess
    import sys
    import textwrap

    from cache_child import CHILD
    d, key = tmp_path / "cache", warm[1]
    env = dict(os.environ, ZERAX_CACHE_DIR=str(d), ZERAX_CACHE_KEY=str(key), ZERAX_KERNEL_IR="0")
    env.pop("ZERAX_NATIVE_CACHE", None)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
        assert '"warnings": []' in out
    report, _ = run(d, key)
    assert_right(report)
    assert report["stats"] == {"loaded": 2, "saved": 0} and not report["warnings"]
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")]


def test_disk_full_mid_write(warm, tmp_path):
    # Writes beyond 1000 bytes fail (EFBIG, as a full disk's ENOSPC): the small source
    # copies fit, the native entries (1-2 kB for direct kernels, tens of kB for Numba's)
    # fail midway.
    d, key = tmp_path / "cache", warm[1]
    report, _ = run(d, key, "--limit", 1000)
    assert_right(report)
    assert len(report["warnings"]) <= 1 and report["stats"]["saved"] == 0
    names = os.listdir(d)
    assert not [n for n in names if n.endswith((".native", ".tmp"))], names
    again, _ = run(d, key)
    assert_right(again)
    assert again["stats"]["saved"] == 2 and not again["warnings"]


def test_directory_vanishing_while_in_use(warm, tmp_path):
    d, key = tmp_path / "cache", warm[1]
    report, _ = run(d, key, "--vanish", d)
    assert_right(report)
    assert len(report["warnings"]) <= 1
