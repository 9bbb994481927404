"""Safetensors files, written and read without trusting the file.

The format itself (the header, its validation, the integrity CRCs zerax keeps in the
metadata) is ``zerax._safetensors``'s, shared with ``zerax.export``.  This module owns
the files: :func:`write_file` (atomic: temporary file, rename; fsync on request) and
:func:`read_file`, which validates the header before it allocates anything and verifies
each tensor's CRC as it reads it.  Nothing in the file is ever evaluated or unpickled.
"""

from __future__ import annotations

import ctypes
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

try:  # POSIX: a writer holds a lock on its temporary file (see remove_stale_temporaries)
    import fcntl
except ImportError:  # Windows
    fcntl = None

import numpy as np

from .._safetensors import DTYPES, MAX_HEADER, NAMES, dtype_name, parse_json  # noqa: F401
from .. import _safetensors as _fmt
from ..errors import CheckpointError


def _write_all(fd: int, buf) -> None:
    # os.write may write less than asked (Linux caps one call near 2 GiB; signals): loop.
    view = _fmt.byte_view(buf)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _temporary(path: str) -> tuple[int, str]:
    """A new file beside ``path`` (same directory: the rename stays atomic), created with
    the usual permissions (0o666 less the umask, as ``open(path, "w")`` would), and
    locked (``flock``, where the platform has it) until the caller closes it, which marks
    it as in use to :func:`remove_stale_temporaries`."""
    directory, base = os.path.split(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a file system without locks: the age check still guards it
                pass
        return fd, tmp
    raise FileExistsError(f"could not create a temporary file beside {path!r}")


# A temporary of write_file: '.' + the final name + '.' + 12 hex digits + '.tmp'.
_TEMPORARY = re.compile(r"^\.(?P<base>.+)\.[0-9a-f]{12}\.tmp$")

# How old (modification time) a temporary must be before it may be taken for a leftover:
# the lock guards a live writer from the first moment it holds it; the age covers the
# instant between creating the file and locking it, and file systems without locks.
STALE_AFTER_S = 60.0


def remove_stale_temporaries(directory: str, final_name: Callable[[str], bool]) -> list[str]:
    """Delete the temporaries :func:`write_file` left in ``directory`` for final names
    accepted by ``final_name``, when their writer is gone; returns the names removed.

    A save that fails deletes its own temporary; one whose process was killed (SIGKILL, a
    power loss, the machine going down) cannot, and leaves ``.<name>.<hex>.tmp`` behind.
    Such a file is removed only if no process holds its lock (a live writer keeps its
    temporary locked until it is renamed into place; the kernel drops the lock of a
    process that died) and it was last written more than ``STALE_AFTER_S`` seconds ago.
    Without ``flock`` (Windows) nothing is removed: a live writer could not be told apart."""
    if fcntl is None:
        return []
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    now = time.time()
    for name in names:
        m = _TEMPORARY.match(name)
        if m is None or not final_name(m.group("base")):
            continue
        full = os.path.join(directory, name)
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue  # gone already, a symlink, not ours to open
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_AFTER_S:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a writer holds it: in use
            try:
                os.unlink(full)
                removed.append(name)
            except OSError:
                pass
        finally:
            os.close(fd)
    return removed


def _load_renameat2():
    """libc's renameat2 (Linux >= 3.15, glibc >= 2.28 or musl), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _load_renameat2()
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _replace_fast(tmp: str, path: str) -> None:
    """``os.replace(tmp, path)``, atomic as well, without the write-back that renaming over
    an existing file starts.

    ext4 (``auto_da_alloc``, the default) starts writing the new file to disk inside
    ``rename()`` when it replaces an existing file, to protect programs that rename without
    fsync; for a large checkpoint that costs as much again as writing it.  A non-durable
    save has opted out of power-loss guarantees, so it swaps the two names atomically
    (``renameat2(RENAME_EXCHANGE)``: the final name holds the old file, then the new one,
    never neither) and deletes the old file from the temporary name."""
    if _RENAMEAT2 is not None:
        try:
            is_file = stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            is_file = False  # nothing there yet: a plain rename starts no write-back
        if is_file and _RENAMEAT2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path),
                                  _RENAME_EXCHANGE) == 0:
            try:
                os.unlink(tmp)  # the previous file, now under the temporary name
            except OSError:
                pass  # the save itself is complete; at worst a stray temporary remains
            return
        # Not supported here (old kernel, a file system without it: EINVAL, ENOSYS...).
    os.replace(tmp, path)


def write_file(path: str, tensors: list[tuple[str, np.ndarray]],
               metadata: dict[str, str], *, durable: bool = False) -> None:
    """Write ``tensors`` (name, C-contiguous little-endian array) and ``metadata`` to
    ``path`` atomically: the bytes go to a temporary file in the same directory, renamed
    over ``path`` once complete, so a crash (or an error mid-write) leaves either the old
    file or the new one, never half of one.

    ``durable=True`` also fsyncs the file before the rename and the directory after it, so
    the new file survives a power loss or OS crash, not only a crash of this process.  The
    array buffers are written as they are, one large write each (no copy); the header
    holds their CRCs (see ``zerax._safetensors``)."""
    # The tensors' CRCs are computed on another thread while the tensors are written (both
    # release the GIL), then the header is written again with them (the same length).
    placeholder = {name: "0" * 8 for name, _ in tensors}
    head = _fmt.encode_header(tensors, metadata, crcs=placeholder)
    total = sum(arr.nbytes for _, arr in tensors)
    fd, tmp = _temporary(path)
    pool = ThreadPoolExecutor(1) if total >= _OVERLAP_BYTES else None
    try:
        try:
            crcs = pool.submit(_crcs, tensors) if pool is not None else None
            _write_all(fd, head)
            for _, arr in tensors:
                if arr.nbytes:
                    _write_all(fd, arr)
            crcs = crcs.result() if crcs is not None else _crcs(tensors)
            _write_at(fd, _fmt.encode_header(tensors, metadata, crcs=crcs), 0)
            if durable:
                os.fsync(fd)
            if os.name == "nt":  # Windows renames no open file; it has no flock either
                os.close(fd)
                fd = -1
            if durable:
                os.replace(tmp, path)  # the data is on disk already: ext4 has nothing to flush
            else:
                _replace_fast(tmp, path)
        finally:
            if fd >= 0:
                os.close(fd)  # after the rename: the temporary stays locked while it exists
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        if pool is not None:
            pool.shutdown()
    if durable:
        _fsync_dir(os.path.dirname(os.path.abspath(path)))


_OVERLAP_BYTES = 1 << 22   # below this, the CRCs cost less than a thread


def _crcs(tensors) -> dict:
    return {name: _fmt.crc32(arr) for name, arr in tensors}


def _write_at(fd: int, buf: bytes, offset: int) -> None:
    if hasattr(os, "pwrite"):
        view = _fmt.byte_view(buf)
        while view:
            n = os.pwrite(fd, view, offset)
            view, offset = view[n:], offset + n
        return
    end = os.lseek(fd, 0, os.SEEK_CUR)   # Windows: no pwrite
    os.lseek(fd, offset, os.SEEK_SET)
    _write_all(fd, buf)
    os.lseek(fd, end, os.SEEK_SET)


def _fsync_dir(directory: str) -> None:
    # The rename is durable only once the directory entry is on disk (POSIX); platforms
    # that cannot open a directory (Windows) skip it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_header(f, path: str, size: int):
    """The validated header of an open checkpoint file (see ``zerax._safetensors``)."""
    return _fmt.read_header(f, size, f"checkpoint {path!r}")


def read_file(path: str, names=None):
    """Read a safetensors file: ``(arrays, metadata)`` with ``arrays`` a dict of fresh,
    writable NumPy arrays in file order (only ``names`` if given), each verified
    against its CRC when the file has them."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint file at {path!r}") from None
    except OSError as e:
        raise CheckpointError(f"cannot open checkpoint {path!r}: {e}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        tensors, metadata, _ = read_header(f, path, size)
        where = f"checkpoint {path!r}"
        crcs = _fmt.tensor_crcs(metadata, tensors, where)
        arrays: dict[str, np.ndarray] = {}
        for name, (dt, shape, begin, end) in sorted(tensors.items(), key=lambda kv: kv[1][2]):
            if names is not None and name not in names:
                continue
            arr = np.empty(shape, dt)
            if end > begin:
                f.seek(begin)
                got = f.readinto(_fmt.byte_view(arr))
                if got != end - begin:
                    raise CheckpointError(f"checkpoint {path!r} ended inside tensor {name!r} "
                                          "(it changed while being read?)")
            _fmt.check_tensor(name, arr, crcs, where)
            arrays[name] = arr
    return arrays, metadata
