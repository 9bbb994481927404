"""The trust boundary of the on-disk compilation cache: what is checked before any byte
from ``ZERAX_CACHE_DIR`` is used.

The cache directory is untrusted input.  zerax uses it only when it is a directory owned
by the user and not writable by group or others (`checked_dir`), and believes an entry
only when its keyed MAC verifies: an HMAC-SHA256, under a per-user secret key, over the
entry's whole content, its kind and its file name (`seal` / `unseal`).  The key is 32
random bytes in ``<XDG_CACHE_HOME or ~/.cache>/zerax.key`` (``ZERAX_CACHE_KEY`` names
another file), created once with mode 0600 and refused when anyone but the user could
read or replace it.  Someone who can write files into the cache but cannot read the key
cannot make an entry that verifies; a corrupt, truncated, renamed or stale entry fails
the same check.  Nothing from the cache is unpickled: metadata is JSON.

Every cache problem is reported once per process (`warn`), as one ``RuntimeWarning``
that says what was wrong and what to do; later ones go to the debug output
(``ZERAX_DEBUG_CACHE=1``).  Files are written to a temporary name and renamed into
place (`write_atomic`), so a reader sees a whole entry or none.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import struct
import tempfile
import threading
import warnings

KEY_BYTES = 32
_MAC_BYTES = 32
_DOMAIN = b"zerax-cache-mac-v1\0"
# Bounds checked before anything is read or parsed: a cache file, and an entry's
# JSON header.
MAX_FILE_BYTES = 1 << 30
MAX_HEADER_BYTES = 16 << 20

_lock = threading.Lock()
_key: dict = {}
_warned: list = []


class CacheRejected(ValueError):
    """A cache file that is not used: corrupt, truncated, planted, renamed or stale."""


# --------------------------------------------------------------------------- reporting

def debug(message: str):
    """Cache diagnostics, printed when ``ZERAX_DEBUG_CACHE`` is set to a true value."""
    flag = os.environ.get("ZERAX_DEBUG_CACHE") or ""
    if flag.strip().lower() not in ("", "0", "false", "off", "no"):
        print(f"[cache] {message}")


def warn(message: str, stacklevel: int = 3):
    """Report a cache problem: the first of the process as a ``RuntimeWarning``, the
    others as debug output only (a broken cache must not flood the user's log)."""
    with _lock:
        first = not _warned
        _warned.append(message)
    if first:
        warnings.warn(f"zerax: {message} (Further cache problems in this process are not "
                      "reported; ZERAX_DEBUG_CACHE=1 shows them.)", RuntimeWarning,
                      stacklevel=stacklevel)
    else:
        debug(f"zerax: {message}")


def _reset_for_tests():
    """Forget the warning already given (tests check each case's warning)."""
    with _lock:
        _warned.clear()
        _key.clear()


# --------------------------------------------------------------------------- directory

def _unsafe_reason(st, what: str, path: str) -> str | None:
    """Why a directory or file at ``path`` is not trusted (None: it is)."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and st.st_uid != uid:
        return (f"{what} {path!r} is owned by another user (uid {st.st_uid}, you are "
                f"{uid}); use a directory of your own (ZERAX_CACHE_DIR)")
    if uid is not None and st.st_mode & 0o022:
        return (f"{what} {path!r} is writable by group or others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}), so others could plant code in it; "
                f"run `chmod go-w {path}`")
    return None


def checked_dir(d: str) -> str | None:
    """``d`` when it is safe to use as the cache (created, mode 0700, when missing);
    None, with a warning saying why and how to fix it, when it is not."""
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.stat(d)
    except OSError as e:
        warn(f"the compilation cache at {d!r} could not be used ({e}); compiling without "
             "it. Set ZERAX_CACHE_DIR to a directory you can write.")
        return None
    if not stat.S_ISDIR(st.st_mode):
        warn(f"the compilation cache at {d!r} could not be used (it is not a directory); "
             "compiling without it. Set ZERAX_CACHE_DIR to a directory.")
        return None
    reason = _unsafe_reason(st, "the cache directory", d)
    if reason is not None:
        warn(f"the compilation cache at {d!r} is not used: {reason}.")
        return None
    try:
        secret_key()
    except (OSError, CacheRejected) as e:
        warn(f"the compilation cache at {d!r} is not used: no trustworthy key ({e}).")
        return None
    return d


# --------------------------------------------------------------------------- key

def key_path() -> str:
    """Where the per-user secret key lives: ``ZERAX_CACHE_KEY``, else beside the
    default cache directory."""
    p = os.environ.get("ZERAX_CACHE_KEY")
    if p:
        return p
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "zerax.key")


def _read_key(path: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheRejected(f"the cache key {path!r} is not a regular file")
        uid = os.geteuid() if hasattr(os, "geteuid") else None
        if uid is not None and st.st_uid != uid:
            raise CacheRejected(f"the cache key {path!r} is owned by another user; delete it")
        if uid is not None and st.st_mode & 0o077:
            raise CacheRejected(f"the cache key {path!r} can be read or written by others "
                                f"(mode {stat.S_IMODE(st.st_mode):04o}); delete it (a new "
                                "one is made) and the cache entries it signed")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise CacheRejected(f"the cache key {path!r} is not {KEY_BYTES} bytes; delete it")
    return data


def _create_key(path: str):
    """Write a new random key; atomically, and never over an existing one (two
    processes starting together agree on the first key written)."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o700, exist_ok=True)
    # The file's own owner and mode are what is checked when it is read: another user
    # who can write this directory can delete the key, but not plant one we accept.
    # mkstemp creates the file with mode 0600, readable by this user only.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".zerax-key-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails when another process made the key first
        except FileExistsError:
            pass
    finally:
        try:
            os.remove(tmp)
        except OSError:
            pass


def secret_key() -> bytes:
    """The per-user key of the cache's MACs (created on first use).  Raises
    `CacheRejected` or ``OSError`` when there is no trustworthy key."""
    path = key_path()
    with _lock:
        if path in _key:
            return _key[path]
    try:
        key = _read_key(path)
    except FileNotFoundError:
        _create_key(path)
        key = _read_key(path)
    with _lock:
        _key[path] = key
    return key


# --------------------------------------------------------------------------- entries

def mac(kind: str, name: str, body: bytes) -> bytes:
    """HMAC-SHA256 of an entry of ``kind`` stored under file name ``name``."""
    msg = _DOMAIN + kind.encode() + b"\0" + name.encode() + b"\0"
    return hmac.new(secret_key(), msg + body, hashlib.sha256).digest()


def seal(magic: bytes, name: str, header: dict, blobs: list[bytes]) -> bytes:
    """An entry file: ``magic``, its MAC, the JSON header's length and the header, then
    the blobs; ``header["blobs"]`` gets each blob's (offset, size)."""
    offsets, at = [], 0
    for b in blobs:
        offsets.append([at, len(b)])
        at += len(b)
    head = json.dumps(dict(header, blobs=offsets), separators=(",", ":")).encode()
    body = struct.pack("<Q", len(head)) + head + b"".join(blobs)
    return magic + mac(magic.decode().strip(), name, body) + body


def unseal(magic: bytes, name: str, data: bytes) -> tuple[dict, list[bytes]]:
    """(header, blobs) of an entry whose MAC verifies; `CacheRejected` otherwise."""
    head = len(magic)
    if data[:head] != magic:
        raise CacheRejected("not a zerax cache entry of this version")
    if len(data) < head + _MAC_BYTES + 8:
        raise CacheRejected("truncated entry")
    tag, body = data[head:head + _MAC_BYTES], data[head + _MAC_BYTES:]
    if not hmac.compare_digest(tag, mac(magic.decode().strip(), name, body)):
        raise CacheRejected("its MAC does not verify (corrupt, truncated, planted or "
                            "renamed; or signed with another key)")
    (n,) = struct.unpack_from("<Q", body, 0)
    if n > min(MAX_HEADER_BYTES, len(body) - 8):
        raise CacheRejected("header size out of range")
    try:
        header = json.loads(body[8:8 + n].decode())
    except (UnicodeDecodeError, ValueError):
        raise CacheRejected("unreadable header") from None
    if not isinstance(header, dict) or not isinstance(header.get("blobs"), list):
        raise CacheRejected("malformed header")
    area = body[8 + n:]
    blobs = []
    for item in header["blobs"]:
        if not (isinstance(item, list) and len(item) == 2 and
                all(type(v) is int and v >= 0 for v in item) and
                item[0] + item[1] <= len(area)):
            raise CacheRejected("blob offsets out of range")
        blobs.append(area[item[0]:item[0] + item[1]])
    return header, blobs


def seal_text(name: str, text: str) -> str:
    """A generated source file: a comment line with its MAC, then the source."""
    return f"# zerax-cache-mac {mac('source', name, text.encode()).hex()}\n{text}"


def unseal_text(name: str, data: str) -> str:
    first, sep, text = data.partition("\n")
    prefix = "# zerax-cache-mac "
    if not sep or not first.startswith(prefix):
        raise CacheRejected("not a zerax generated source file")
    try:
        tag = bytes.fromhex(first[len(prefix):])
    except ValueError:
        raise CacheRejected("malformed MAC line") from None
    if not hmac.compare_digest(tag, mac("source", name, text.encode())):
        raise CacheRejected("its MAC does not verify (edited, planted or renamed)")
    return text


def read_file(path: str) -> bytes:
    """The bytes of the cache file at ``path``: a regular file (not a link, a FIFO or a
    device, which could block or never end) of at most `MAX_FILE_BYTES`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise CacheRejected("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise CacheRejected(f"too large ({st.st_size} bytes)")
        return f.read(MAX_FILE_BYTES + 1)


def write_atomic(path: str, data: bytes):
    """Write ``data`` to ``path`` through a temporary file and a rename: readers see
    the whole file or none; a failed write (full disk) leaves nothing behind."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
