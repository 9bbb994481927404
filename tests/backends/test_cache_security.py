"""The on-disk compilation cache is untrusted input (issue 13): nothing from it runs or
is believed unless the directory is the user's own and the entry's keyed MAC verifies.

Planted and tampered files are checked in fresh processes (a marker file tells whether
planted code ran); the directory, key and MAC rules are also checked in this process.
"""

import hashlib
import os
import pickle
import stat
import types
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cache_child import assert_right, entries, run  # noqa: E402 - shared test helpers
from zerax._src.backends.cpu import compile as cpu_compile
from zerax._src.backends.cpu import diskcache


class _Plant:
    """A pickle that, when loaded, writes a marker file (code from the cache ran)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache filled by one cold process, its key, and that process's report."""
    base = tmp_path_factory.mktemp("cache-security")
    d, key = base / "cache", base / "zerax.key"
    report, _ = run(d, key)
    assert report["stats"] == {"compiled": 2, "loaded": 0}
    assert_right(report)
    return d, key


def test_key_is_private_and_entries_are_json_not_pickle(warm):
    d, key = warm
    st_key = os.stat(key)
    assert stat.S_IMODE(st_key.st_mode) == 0o600 and st_key.st_size == diskcache.KEY_BYTES
    assert stat.S_IMODE(os.stat(d).st_mode) & 0o077 == 0
    with open(entries(d)["f"], "rb") as fh:
        blob = fh.read()
    assert blob.startswith(b"ZXCPUO1 ") and b'"symbol"' in blob
    assert b"\x80\x04\x95" not in blob[:64]          # no pickle header
    assert sorted(os.listdir(d)) == sorted(os.path.basename(p) for p in entries(d).values())
    for mod in (cpu_compile, diskcache):
        with open(mod.__file__) as fh:
            text = fh.read()
        assert "pickle.load" not in text and "marshal.load" not in text


def test_planted_entries_never_run(warm, tmp_path):
    d, key = warm
    marker = tmp_path / "ran"
    payload = pickle.dumps(_Plant(marker), protocol=4)
    files = entries(d)
    # An unkeyed SHA-256 the planter computes himself, after the magic.
    with open(files["f"], "wb") as fh:
        fh.write(b"ZXCPUO1 " + hashlib.sha256(payload).digest() + payload)
    # The magic with a made-up MAC and a length.
    with open(files["g"], "wb") as fh:
        fh.write(b"ZXCPUO1 " + hashlib.sha256(payload).digest() +
                 len(payload).to_bytes(8, "little") + payload)
    report, _ = run(d, key)
    assert not marker.exists()
    assert_right(report)
    assert report["stats"]["loaded"] == 0 and len(report["warnings"]) == 1
    assert "could not be used" in report["warnings"][0]
    # Both were replaced by good entries: the next process loads them.
    again, _ = run(d, key)
    assert again["stats"] == {"compiled": 0, "loaded": 2} and not again["warnings"]
    assert_right(again)


def test_planted_files_under_other_names_are_never_loaded(warm, tmp_path):
    """Pickles where other tools keep their caches (Numba's index files, Python
    modules) are never read: only sealed ``c_<key>.o`` entries are."""
    d, key = warm
    marker = tmp_path / "ran"
    payload = pickle.dumps(_Plant(marker), protocol=4)
    cache = d / "__pycache__"
    cache.mkdir(exist_ok=True)
    for path in entries(d).values():
        stem = os.path.basename(path)[:-2]
        (d / f"{stem}.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
        (d / f"{stem}.native").write_bytes(payload)
        for ext in (".nbi", ".nbc", ".pkl"):
            (cache / f"{stem}.kernel-1.py311{ext}").write_bytes(payload)
    report, _ = run(d, key)
    assert not marker.exists()
    assert_right(report)
    assert report["stats"] == {"compiled": 0, "loaded": 2} and not report["warnings"]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """This process's cache state forgotten, with a key and a cache directory of its own
    (entries sealed with this key must not land where the suite's other tests read)."""
    monkeypatch.setenv("ZERAX_CACHE_KEY", str(tmp_path / "k" / "zerax.key"))
    monkeypatch.setenv("ZERAX_CACHE_DIR", str(tmp_path / "cache"))
    diskcache._reset_for_tests()
    yield tmp_path
    diskcache._reset_for_tests()


def _checked(d):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = diskcache.checked_dir(str(d))
    return out, [str(w.message) for w in caught]


def test_directory_writable_by_others_is_not_used(fresh):
    d = fresh / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    out, msgs = _checked(d)
    assert out is None and len(msgs) == 1
    assert "writable by group or others" in msgs[0] and f"chmod go-w {d}" in msgs[0]
    os.chmod(d, 0o755)
    diskcache._reset_for_tests()
    assert _checked(d) == (str(d), [])
    new = fresh / "new" / "cache"                 # made private when zerax creates it
    assert _checked(new)[0] == str(new)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o700


def test_directory_of_another_user_is_not_used(fresh, monkeypatch):
    d = fresh / "theirs"
    d.mkdir(mode=0o700)
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    out, msgs = _checked(d)
    assert out is None and len(msgs) == 1 and "owned by another user" in msgs[0]


def test_key_readable_by_others_is_refused(fresh):
    d = fresh / "cache"
    assert _checked(d) == (str(d), [])
    path = diskcache.key_path()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)
    diskcache._reset_for_tests()
    out, msgs = _checked(d)
    assert out is None and len(msgs) == 1 and "cache key" in msgs[0]


def test_one_warning_per_process(fresh):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            diskcache.warn(f"problem {i}")
    assert len(caught) == 1 and "problem 0" in str(caught[0].message)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_any_changed_byte_or_name_is_rejected(data):
    import tempfile
    previous = os.environ.get("ZERAX_CACHE_KEY")   # the suite's own key (conftest.py)
    with tempfile.TemporaryDirectory() as t:
        os.environ["ZERAX_CACHE_KEY"] = os.path.join(t, "zerax.key")
        diskcache._reset_for_tests()
        try:
            magic = b"ZXCPUO1 "
            blob = diskcache.seal(magic, "c_a.o", {"x": [1, 2]}, [b"\x7fELF" + b"1" * 40])
            header, blobs = diskcache.unseal(magic, "c_a.o", blob)
            assert header["x"] == [1, 2] and blobs == [b"\x7fELF" + b"1" * 40]
            i = data.draw(st.integers(len(magic), len(blob) - 1))
            bad = bytearray(blob)
            bad[i] ^= data.draw(st.integers(1, 255))
            with pytest.raises(diskcache.CacheRejected):
                diskcache.unseal(magic, "c_a.o", bytes(bad))
            cut = data.draw(st.integers(0, len(blob) - 1))
            with pytest.raises(diskcache.CacheRejected):
                diskcache.unseal(magic, "c_a.o", blob[:cut])
            with pytest.raises(diskcache.CacheRejected):
                diskcache.unseal(magic, "c_b.o", blob)
        finally:
            # restored, not deleted: later tests of this process would otherwise seal
            # and check entries with the default key (and write it to ~/.cache)
            if previous is None:
                del os.environ["ZERAX_CACHE_KEY"]
            else:
                os.environ["ZERAX_CACHE_KEY"] = previous
            diskcache._reset_for_tests()


def test_unsafe_reason_names_owner_and_mode():
    me = os.geteuid()
    ok = types.SimpleNamespace(st_uid=me, st_mode=stat.S_IFDIR | 0o755)
    assert diskcache._unsafe_reason(ok, "dir", "/x") is None
    other = types.SimpleNamespace(st_uid=me + 1, st_mode=stat.S_IFDIR | 0o700)
    assert "owned by another user" in diskcache._unsafe_reason(other, "dir", "/x")
    group = types.SimpleNamespace(st_uid=me, st_mode=stat.S_IFDIR | 0o775)
    assert "0775" in diskcache._unsafe_reason(group, "dir", "/x")
