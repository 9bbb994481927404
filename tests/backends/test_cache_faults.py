"""Every fault of the on-disk cache is survived (issue 13): a disk that fills up
mid-write, a directory that vanishes while in use, two cold processes writing the same
entries.  Each process gives the right result with at most one warning, and writes stay
atomic (no partial entry is ever left under an entry's name).  Corrupt, truncated,
foreign and unreadable entries: test_kernel_ir_cache.py."""

import os

import pytest

from cache_child import assert_right, run  # noqa: E402 - shared test helpers


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    base = tmp_path_factory.mktemp("cache-faults")
    d, key = base / "cache", base / "zerax.key"
    report, _ = run(d, key)
    assert report["stats"] == {"compiled": 2, "loaded": 0}
    return d, key


def _entries(d):
    return [n for n in os.listdir(d) if n.startswith("c_") and n.endswith(".o")]


def test_concurrent_cold_processes_write_whole_entries(warm, tmp_path):
    import subprocess
    import sys
    import textwrap

    from cache_child import CHILD
    d, key = tmp_path / "cache", warm[1]
    env = dict(os.environ, ZERAX_CACHE_DIR=str(d), ZERAX_CACHE_KEY=str(key))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
        assert '"warnings": []' in out
    report, _ = run(d, key)
    assert_right(report)
    assert report["stats"] == {"compiled": 0, "loaded": 2} and not report["warnings"]
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")]


def test_disk_full_mid_write(warm, tmp_path):
    # Writes beyond 500 bytes fail (EFBIG, as a full disk's ENOSPC): the entries (an
    # object file of a kilobyte or more, sealed) fail midway.
    d, key = tmp_path / "cache", warm[1]
    report, _ = run(d, key, "--limit", 500)
    assert_right(report)
    assert len(report["warnings"]) <= 1 and report["stats"]["compiled"] == 2
    names = os.listdir(d)
    assert not _entries(d) and not [n for n in names if n.endswith(".tmp")], names
    again, _ = run(d, key)
    assert_right(again)
    assert again["stats"]["compiled"] == 2 and not again["warnings"]
    assert len(_entries(d)) == 2


def test_directory_vanishing_while_in_use(warm, tmp_path):
    d, key = tmp_path / "cache", warm[1]
    report, _ = run(d, key, "--vanish", d)
    assert_right(report)
    assert len(report["warnings"]) <= 1
