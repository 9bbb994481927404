"""The safetensors format and zerax's integrity digests, shared by checkpoints
(``zerax.io``) and exported programs (``zerax.export``), which reach it through the face
``zerax._safetensors``.

A safetensors block is an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8
JSON, then the data section.  The JSON maps each tensor's name to ``{"dtype", "shape",
"data_offsets": [begin, end]}`` (offsets relative to the data section) and may hold
``"__metadata__"``, a str -> str map.  :func:`read_header` checks every number in the
header against the block's size before anything is allocated, so a lying header can
neither make a reader go outside the block nor allocate more than the block holds.

Integrity: zerax writes, in the metadata, a CRC-32 of each tensor's bytes
(``"zerax.tensor_crc32"``: a JSON map name -> 8 hex digits) and a CRC-32 of the header
itself (``"zerax.header_crc32"``: computed over the header bytes with these 8 digits
written as zeros).  Other safetensors readers ignore them; zerax verifies them on every
read, so a block with any changed byte is refused, naming the tensor (or the header).  A
CRC-32 catches every single-byte change and every burst of up to 32 bits, as the CRCs of
PyTorch's zip checkpoints do; it guards against damage, not against a forger, which the
readers need no guard against: nothing read is ever evaluated.  Blocks without these
entries (older zerax files, other writers) are read as they are.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zlib

import numpy as np

from ...errors import CheckpointError
from . import dtypes

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
# "BF16" is ml_dtypes' bfloat16, imported only when a file holds one (`tensor_dtype`)
BFLOAT16 = "BF16"


def tensor_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a safetensors dtype name (one of `DTYPES`, or ``"BF16"``:
    a `~zerax.errors.MissingDependencyError` when ml_dtypes is not installed)."""
    return dtypes.bfloat16_dtype() if name == BFLOAT16 else DTYPES[name]

# The reference implementation refuses headers above 100 MB; so do we (a header is JSON
# describing tensors, never the tensors themselves).
MAX_HEADER = 100_000_000

TENSOR_CRC = "zerax.tensor_crc32"
HEADER_CRC = "zerax.header_crc32"
_ZERO_CRC = "00000000"


def dtype_name(dtype: np.dtype, error=CheckpointError) -> str:
    """The safetensors name of a NumPy dtype, or ``error``."""
    if dtypes.is_bfloat16(dtype):
        return BFLOAT16
    key = np.dtype(dtype).str.lstrip("<>|=")
    if key not in NAMES:
        raise error(
            f"cannot store arrays of dtype {np.dtype(dtype)} in safetensors, which holds "
            f"{sorted(str(d) for d in DTYPES.values()) + ['bfloat16']} (complex values are "
            "stored as pairs of floats). Cast the array first.")
    return NAMES[key]


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError(f"the key {k!r} appears twice")
        obj[k] = v
    return obj


def parse_json(raw: bytes | str, what: str, error=CheckpointError):
    """Strict JSON (no NaN/Infinity, no duplicate keys) or ``error``."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, object_pairs_hook=_unique_object,
                          parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise error(f"{what} is not valid UTF-8 JSON ({e})") from None


def byte_view(buf) -> memoryview:
    """The bytes of a buffer (a C-contiguous array: bfloat16's too, which Python's buffer
    protocol cannot describe, through a uint8 view)."""
    if isinstance(buf, np.ndarray):
        return memoryview(buf.reshape(-1).view(np.uint8))
    return memoryview(buf).cast("B")


def crc32(buf) -> str:
    """The CRC-32 of a buffer, as the 8 hex digits stored in the metadata."""
    view = byte_view(buf)
    if view.nbytes == 0:
        return "00000000"
    return f"{zlib.crc32(view.cast('B')) & 0xFFFFFFFF:08x}"


# --------------------------------------------------------------------------- writing

def encode_header(tensors, metadata: dict[str, str], error=CheckpointError,
                  crcs: dict | None = None) -> bytes:
    """The 8-byte length and the JSON header of a block holding ``tensors`` (name,
    C-contiguous little-endian array) and ``metadata``, with the integrity entries
    (``crcs``: the tensors' CRCs if already known; every CRC has 8 digits, so a header
    written with placeholders has the length of the final one)."""
    header: dict = {"__metadata__": dict(metadata)}
    offset = 0
    if crcs is None:
        crcs = {name: crc32(arr) for name, arr in tensors}
    for name, arr in tensors:
        header[name] = {"dtype": dtype_name(arr.dtype, error), "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    meta = header["__metadata__"]
    for key in (TENSOR_CRC, HEADER_CRC):
        if key in meta:
            raise error(f"the metadata key {key!r} is zerax's own; choose another name")
    meta[TENSOR_CRC] = json.dumps(crcs, separators=(",", ":"), ensure_ascii=False)
    meta[HEADER_CRC] = _ZERO_CRC
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # pad to 8 bytes as the reference writer does
    if raw.count(_crc_field(_ZERO_CRC)) != 1:
        raise error(f"a metadata entry spells zerax's header CRC field {HEADER_CRC!r}")
    raw = raw.replace(_crc_field(_ZERO_CRC), _crc_field(_header_crc(raw)))
    return struct.pack("<Q", len(raw)) + raw


def _crc_field(value: str) -> bytes:
    return json.dumps(HEADER_CRC).encode() + b":" + json.dumps(value).encode()


def _header_crc(raw: bytes) -> str:
    return crc32(raw)


def encode_block(tensors, metadata: dict[str, str], error=CheckpointError) -> bytes:
    """A whole block in memory (header and data)."""
    parts = [encode_header(tensors, metadata, error)]
    parts += [np.asarray(a).tobytes() for _, a in tensors]
    return b"".join(parts)


# --------------------------------------------------------------------------- reading

def _is_int(x) -> bool:
    return type(x) is int


def read_header(f, size: int, where: str, error=CheckpointError):
    """Parse and validate the header of the block read from ``f`` (at its start), of
    ``size`` bytes; ``where`` names it in errors ("checkpoint 'a.safetensors'").

    Returns ``(tensors, metadata, data_start)`` where ``tensors`` maps each name to
    ``(dtype, shape, begin, end)`` with absolute, checked offsets.  The header's own
    CRC, when present, is verified here; the tensors' are verified by `check_tensor`."""
    if size < 8:
        raise error(f"{where} is {size} bytes long, shorter than the 8-byte header "
                    "length of a safetensors file (truncated or not safetensors)")
    (n,) = struct.unpack("<Q", f.read(8))
    if n > MAX_HEADER:
        raise error(f"{where} declares a {n}-byte header, above the limit of "
                    f"{MAX_HEADER} bytes (corrupt or not a safetensors file)")
    if n > size - 8:
        raise error(f"{where} declares a {n}-byte header but only {size - 8} bytes "
                    "follow the length (the file is truncated or corrupt)")
    raw = f.read(n)
    if len(raw) != n:
        raise error(f"{where} ended while reading its header (truncated)")
    header = parse_json(raw, f"the header of {where}", error)
    if not isinstance(header, dict):
        raise error(f"the header of {where} is a JSON {type(header).__name__}, "
                    "not an object mapping tensor names to their descriptions")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise error(f"the __metadata__ of {where} is not a map of strings to strings")
    _check_header_crc(raw, metadata, where, error)
    data_start = 8 + n
    data_size = size - data_start
    tensors: dict[str, tuple[np.dtype, tuple[int, ...], int, int]] = {}
    for name, info in header.items():
        what = f"tensor {name!r} in {where}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise error(f"{what} must be described by exactly 'dtype', 'shape' and "
                        f"'data_offsets', got {info!r:.200}")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dt, str) or (dt not in DTYPES and dt != BFLOAT16):
            raise error(f"{what} has dtype {dt!r:.50}, not one of "
                        f"{sorted(DTYPES) + [BFLOAT16]}")
        dtype = tensor_dtype(dt)
        if (not isinstance(shape, list) or len(shape) > 32
                or not all(_is_int(d) and 0 <= d < 2**62 for d in shape)):
            raise error(f"{what} has shape {shape!r:.200}, not a list of at most 32 "
                        "non-negative integers")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(map(_is_int, offs))
                or not 0 <= offs[0] <= offs[1]):
            raise error(f"{what} has data_offsets {offs!r:.200}, not [begin, end] "
                        "with 0 <= begin <= end")
        nbytes = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
        if math.prod(max(d, 1) for d in shape) * dtype.itemsize >= 2**62:
            raise error(f"{what} has shape {shape}, too large for an array")
        if offs[1] - offs[0] != nbytes:
            raise error(
                f"{what} claims {offs[1] - offs[0]} bytes ({offs}) but its dtype {dt} and "
                f"shape {shape} need {nbytes} (the header lies about its sizes)")
        if offs[1] > data_size:
            raise error(
                f"{what} ends at byte {offs[1]} of the data section, which holds only "
                f"{data_size} bytes (the file is truncated or its header lies)")
        tensors[name] = (dtype, tuple(shape), data_start + offs[0], data_start + offs[1])
    # The tensors must tile the data section exactly: no overlap, no hole, nothing beyond.
    pos = data_start
    for name, (_, _, begin, end) in sorted(tensors.items(), key=lambda kv: kv[1][2:]):
        if begin != pos:
            kind = "overlaps the previous tensor" if begin < pos else "leaves a gap before it"
            raise error(f"tensor {name!r} in {where} starts at byte "
                        f"{begin - data_start} of the data section and {kind}")
        pos = end
    if pos != size:
        raise error(f"{where} has {size - pos} bytes beyond the tensors its header "
                    "describes (corrupt, or not written as one safetensors file)")
    tensor_crcs(metadata, tensors, where, error)  # validated now: before any tensor is read
    return tensors, metadata, data_start


def _check_header_crc(raw: bytes, metadata: dict, where: str, error) -> None:
    has_t, has_h = TENSOR_CRC in metadata, HEADER_CRC in metadata
    if not (has_t or has_h):
        return  # written before zerax kept digests, or by another writer
    if not (has_t and has_h):
        raise error(f"the header of {where} has one of zerax's integrity entries but not "
                    "the other: the header was damaged or edited")
    stored = metadata[HEADER_CRC]
    field = _crc_field(stored)
    if raw.count(field) != 1 or len(stored) != 8:
        raise error(f"the header CRC of {where} is malformed: the header was damaged or "
                    "rewritten by another program")
    if _header_crc(raw.replace(field, _crc_field(_ZERO_CRC))) != stored:
        raise error(f"the header of {where} does not match its CRC: the file is damaged "
                    "(a changed byte in the tensor names, shapes, dtypes or metadata)")


def tensor_crcs(metadata: dict, tensors, where: str, error=CheckpointError):
    """The per-tensor CRCs of a block (None when it has none), checked to name exactly
    the block's tensors."""
    raw = metadata.get(TENSOR_CRC)
    if raw is None:
        return None
    crcs = parse_json(raw, f"the tensor CRCs of {where}", error)
    if not isinstance(crcs, dict) or set(crcs) != set(tensors) or not all(
            isinstance(v, str) and len(v) == 8 for v in crcs.values()):
        raise error(f"the tensor CRCs of {where} do not list exactly its tensors: the "
                    "header was damaged or edited")
    return crcs


def check_tensor(name: str, buf, crcs, where: str, error=CheckpointError) -> None:
    """Verify tensor ``name``'s bytes against its CRC (no-op when ``crcs`` is None)."""
    if crcs is not None and crc32(buf) != crcs[name]:
        raise error(f"tensor {name!r} of {where} does not match its CRC: its bytes were "
                    "changed (a damaged file or a bad copy); restore it from a good copy")


def decode_block(blob, where: str, error=CheckpointError):
    """Read a whole in-memory block: ``(arrays, metadata)``, every number checked and
    every CRC verified; the arrays are fresh (they do not share ``blob``'s memory)."""
    blob = memoryview(blob).cast("B")
    n = len(blob)
    head = 8 + min(int.from_bytes(blob[:8], "little") if n >= 8 else 0, n)
    tensors, metadata, _ = read_header(io.BytesIO(blob[:head]), n, where, error)
    crcs = tensor_crcs(metadata, tensors, where, error)
    arrays = {}
    for name, (dt, shape, begin, end) in sorted(tensors.items(), key=lambda kv: kv[1][2]):
        buf = blob[begin:end]
        check_tensor(name, buf, crcs, where, error)
        arrays[name] = np.frombuffer(buf, dt).reshape(shape).copy()
    return arrays, metadata
