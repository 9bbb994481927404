"""The safetensors file format, written and read without trusting the file.

A safetensors file is an 8-byte little-endian unsigned header length ``N``, ``N`` bytes of
UTF-8 JSON, then the data section.  The JSON maps each tensor's name to
``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets relative to the data
section) and may hold ``"__metadata__"``, a str -> str map.  This module owns the raw
format: :func:`write_file` (atomic: temporary file, rename; fsync on request) and
:func:`read_file`, which checks every number in the header against the file's size before
it allocates anything, so a lying header can neither make it read outside the file nor
allocate more memory than the file holds.  Nothing in the file is ever evaluated or unpickled.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import re
import secrets
import stat
import struct
import sys
import time
from collections.abc import Callable

try:  # POSIX: a writer holds a lock on its temporary file (see remove_stale_temporaries)
    import fcntl
except ImportError:  # Windows
    fcntl = None

import numpy as np

from ..errors import CheckpointError

# safetensors' dtype names <-> NumPy dtypes (little-endian, as the format stores them).
DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "U8": np.dtype("<u1"), "I8": np.dtype("<i1"),
    "U16": np.dtype("<u2"), "I16": np.dtype("<i2"),
    "U32": np.dtype("<u4"), "I32": np.dtype("<i4"),
    "U64": np.dtype("<u8"), "I64": np.dtype("<i8"),
    "F16": np.dtype("<f2"), "F32": np.dtype("<f4"), "F64": np.dtype("<f8"),
}
NAMES: dict[str, str] = {dt.str.lstrip("<>|="): name for name, dt in DTYPES.items()}

# The reference implementation refuses headers above 100 MB; so do we (a header is JSON
# describing tensors, never the tensors themselves).
MAX_HEADER = 100_000_000


def dtype_name(dtype: np.dtype) -> str:
    """The safetensors name of a NumPy dtype, or a CheckpointError."""
    key = np.dtype(dtype).str.lstrip("<>|=")
    if key not in NAMES:
        raise CheckpointError(
            f"zerax.io cannot store arrays of dtype {np.dtype(dtype)}; the safetensors format "
            f"holds {sorted(str(d) for d in DTYPES.values())} (complex values are stored as "
            "pairs of floats). Cast the array first.")
    return NAMES[key]


def _write_all(fd: int, buf) -> None:
    # os.write may write less than asked (Linux caps one call near 2 GiB; signals): loop.
    view = memoryview(buf).cast("B")
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
    array buffers are written as they are, one large write each (no copy)."""
    header: dict = {"__metadata__": metadata}
    offset = 0
    for name, arr in tensors:
        header[name] = {"dtype": dtype_name(arr.dtype), "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # pad to 8 bytes as the reference writer does
    fd, tmp = _temporary(path)
    try:
        try:
            _write_all(fd, struct.pack("<Q", len(raw)) + raw)
            for _, arr in tensors:
                if arr.nbytes:
                    _write_all(fd, arr)
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
    if durable:
        _fsync_dir(os.path.dirname(os.path.abspath(path)))


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


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError(f"the key {k!r} appears twice")
        obj[k] = v
    return obj


def parse_json(raw: bytes | str, what: str):
    """Strict JSON (no NaN/Infinity, no duplicate keys) or a CheckpointError."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, object_pairs_hook=_unique_object,
                          parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(f"{what} is not valid UTF-8 JSON ({e})") from None


def _is_int(x) -> bool:
    return type(x) is int


def read_header(f, path: str, size: int) -> tuple[dict, dict[str, str], int]:
    """Parse and validate the header of an open file of ``size`` bytes.

    Returns ``(tensors, metadata, data_start)`` where ``tensors`` maps each name to
    ``(dtype, shape, begin, end)`` with absolute, checked offsets."""
    where = f"checkpoint {path!r}"
    if size < 8:
        raise CheckpointError(f"{where} is {size} bytes long, shorter than the 8-byte header "
                              "length of a safetensors file (truncated or not a checkpoint)")
    (n,) = struct.unpack("<Q", f.read(8))
    if n > MAX_HEADER:
        raise CheckpointError(f"{where} declares a {n}-byte header, above the limit of "
                              f"{MAX_HEADER} bytes (corrupt or not a safetensors file)")
    if n > size - 8:
        raise CheckpointError(f"{where} declares a {n}-byte header but only {size - 8} bytes "
                              "follow the length (the file is truncated or corrupt)")
    raw = f.read(n)
    if len(raw) != n:
        raise CheckpointError(f"{where} ended while reading its header (truncated)")
    header = parse_json(raw, f"the header of {where}")
    if not isinstance(header, dict):
        raise CheckpointError(f"the header of {where} is a JSON {type(header).__name__}, "
                              "not an object mapping tensor names to their descriptions")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise CheckpointError(f"the __metadata__ of {where} is not a map of strings to "
                              "strings")
    data_start = 8 + n
    data_size = size - data_start
    tensors: dict[str, tuple[np.dtype, tuple[int, ...], int, int]] = {}
    for name, info in header.items():
        what = f"tensor {name!r} in {where}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise CheckpointError(f"{what} must be described by exactly 'dtype', 'shape' and "
                                  f"'data_offsets', got {info!r:.200}")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dt, str) or dt not in DTYPES:
            raise CheckpointError(f"{what} has dtype {dt!r:.50}, not one of {sorted(DTYPES)}")
        if (not isinstance(shape, list) or len(shape) > 32
                or not all(_is_int(d) and 0 <= d < 2**62 for d in shape)):
            raise CheckpointError(f"{what} has shape {shape!r:.200}, not a list of at most 32 "
                                  "non-negative integers")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(map(_is_int, offs))
                or not 0 <= offs[0] <= offs[1]):
            raise CheckpointError(f"{what} has data_offsets {offs!r:.200}, not [begin, end] "
                                  "with 0 <= begin <= end")
        nbytes = math.prod(shape) * DTYPES[dt].itemsize  # Python ints: no overflow
        if math.prod(max(d, 1) for d in shape) * DTYPES[dt].itemsize >= 2**62:
            raise CheckpointError(f"{what} has shape {shape}, too large for an array")
        if offs[1] - offs[0] != nbytes:
            raise CheckpointError(
                f"{what} claims {offs[1] - offs[0]} bytes ({offs}) but its dtype {dt} and "
                f"shape {shape} need {nbytes} (the header lies about its sizes)")
        if offs[1] > data_size:
            raise CheckpointError(
                f"{what} ends at byte {offs[1]} of the data section, which holds only "
                f"{data_size} bytes (the file is truncated or its header lies)")
        tensors[name] = (DTYPES[dt], tuple(shape), data_start + offs[0], data_start + offs[1])
    # The tensors must tile the data section exactly: no overlap, no hole, nothing beyond.
    pos = data_start
    for name, (_, _, begin, end) in sorted(tensors.items(), key=lambda kv: kv[1][2:]):
        if begin != pos:
            kind = "overlaps the previous tensor" if begin < pos else "leaves a gap before it"
            raise CheckpointError(f"tensor {name!r} in {where} starts at byte "
                                  f"{begin - data_start} of the data section and {kind}")
        pos = end
    if pos != size:
        raise CheckpointError(f"{where} has {size - pos} bytes beyond the tensors its header "
                              "describes (corrupt, or not written as one safetensors file)")
    return tensors, metadata, data_start


def read_file(path: str, names=None):
    """Read a safetensors file: ``(arrays, metadata)`` with ``arrays`` a dict of fresh,
    writable NumPy arrays in file order (only ``names`` if given)."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint file at {path!r}") from None
    except OSError as e:
        raise CheckpointError(f"cannot open checkpoint {path!r}: {e}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        tensors, metadata, _ = read_header(f, path, size)
        arrays: dict[str, np.ndarray] = {}
        for name, (dt, shape, begin, end) in sorted(tensors.items(), key=lambda kv: kv[1][2]):
            if names is not None and name not in names:
                continue
            arr = np.empty(shape, dt)
            if end > begin:
                f.seek(begin)
                got = f.readinto(memoryview(arr).cast("B"))
                if got != end - begin:
                    raise CheckpointError(f"checkpoint {path!r} ended inside tensor {name!r} "
                                          "(it changed while being read?)")
            arrays[name] = arr
    return arrays, metadata
