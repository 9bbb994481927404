"""The bytes of a serialised exported program (format version 1).

::

    offset  size  content
    0       8     magic b"\\x89ZXEXP\\r\\n" (binary, and damaged by text-mode copies)
    8       4     format version, u32 little-endian
    12      8     total length of the blob in bytes, u64
    20      2     length V of the zerax version string, u16
    22      V     the version of zerax that wrote it (ASCII)
    ..      8     length M of the manifest, u64
    ..      M     the manifest: strict UTF-8 JSON (docs/export-format.md)
    ..      8     length C of the constants, u64
    ..      C     the constants: one safetensors block with zerax's CRCs
    end-32  32    SHA-256 of every byte before it

Every version keeps the first 20 bytes and the final SHA-256 as they are, so any zerax can
tell a damaged blob from one of a newer format.  Reading checks the length, then the
digest, then the version, then every length against what is left; the manifest is parsed
as data (strict JSON), the constants by the checked safetensors reader.  Nothing is
unpickled or evaluated.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

from ...base.safetensors import decode_block, encode_block, parse_json
from ....errors import ExportError
from ...base.dtypes import kind as dtype_kind

MAGIC = b"\x89ZXEXP\r\n"
FORMAT_VERSION = 1
_DIGEST = 32
_FIXED = 20
_COMPLEX_KEY = "zerax.complex"


def _table_name(i: int) -> str:
    return str(i)


def write_blob(manifest: dict, consts: list[np.ndarray], version: str) -> bytes:
    """The blob of ``manifest`` (JSON-able) and its constants table."""
    tensors, complex_names = [], []
    for i, c in enumerate(consts):
        c = np.asarray(c)
        c = c if c.flags.c_contiguous else c.copy()   # (0-d stays 0-d)
        if c.dtype.kind == "c":   # stored as (re, im) pairs, as zerax.io does
            complex_names.append(_table_name(i))
            c = c.view(c.real.dtype.newbyteorder("<")).reshape(c.shape + (2,))
        else:
            c = c.astype(c.dtype.newbyteorder("<"), copy=False)
        tensors.append((_table_name(i), c))
    meta = {"format": "zerax.export.constants",
            _COMPLEX_KEY: json.dumps(complex_names, separators=(",", ":"))}
    block = encode_block(tensors, meta, ExportError)
    text = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    ver = version.encode("ascii")
    body = b"".join([struct.pack("<H", len(ver)), ver, struct.pack("<Q", len(text)), text,
                     struct.pack("<Q", len(block)), block])
    total = _FIXED + len(body) + _DIGEST
    head = MAGIC + struct.pack("<IQ", FORMAT_VERSION, total)
    data = head + body
    return data + hashlib.sha256(data).digest()


def read_blob(blob) -> tuple[dict, list[np.ndarray], dict]:
    """``(manifest, constants, info)`` of a blob, or an ExportError saying what is
    wrong with it.  ``info`` holds the format and zerax versions that wrote it."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise ExportError(f"deserialize takes the bytes of serialize(), got "
                          f"{type(blob).__name__}")
    blob = memoryview(blob).cast("B")   # read in place: the weights may be large
    n = len(blob)
    if n < _FIXED + _DIGEST or bytes(blob[:8]) != MAGIC:
        if n >= 8 and bytes(blob[:8]) == MAGIC:
            raise ExportError(f"the exported program is truncated: {n} bytes")
        raise ExportError("these bytes are not a zerax exported program (they do not start "
                          "with its magic number)" + (f"; only {n} bytes" if n < 28 else ""))
    version, total = struct.unpack("<IQ", blob[8:_FIXED])
    if total != n:
        if total > n:
            raise ExportError(f"the exported program is truncated: it has {n} of its "
                              f"{total} bytes")
        raise ExportError(f"the exported program has {n - total} bytes after its end "
                          f"({total} bytes): damaged, or two blobs written into one")
    if hashlib.sha256(blob[:-_DIGEST]).digest() != bytes(blob[-_DIGEST:]):
        newer = " (or is written in a newer format)" if version > FORMAT_VERSION else ""
        raise ExportError("the exported program is damaged: its SHA-256 does not match its "
                          f"bytes (a changed byte or a bad copy){newer}")
    if version > FORMAT_VERSION:
        raise ExportError(
            f"the exported program was written in format version {version}, by a newer "
            f"zerax; this zerax reads format versions up to {FORMAT_VERSION}: upgrade zerax "
            "to load it")
    if version < 1:
        raise ExportError(f"the exported program has an invalid format version {version}")
    pos = _FIXED
    end = n - _DIGEST

    def take(size, what):
        nonlocal pos
        if size > end - pos:
            raise ExportError(f"the exported program's {what} ({size} bytes) runs past its "
                              "end: the blob is malformed")
        out = blob[pos:pos + size]
        pos += size
        return out

    (vlen,) = struct.unpack("<H", take(2, "version length"))
    try:
        zerax_version = bytes(take(vlen, "zerax version")).decode("ascii")
    except UnicodeDecodeError:
        raise ExportError("the exported program's zerax version is not ASCII") from None
    (mlen,) = struct.unpack("<Q", take(8, "manifest length"))
    manifest = parse_json(bytes(take(mlen, "manifest")), "the manifest of the exported program",
                          ExportError)
    (clen,) = struct.unpack("<Q", take(8, "constants length"))
    block = take(clen, "constants")
    if pos != end:
        raise ExportError(f"the exported program has {end - pos} unexplained bytes before its "
                          "digest: the blob is malformed")
    if not isinstance(manifest, dict):
        raise ExportError("the manifest of the exported program is not a JSON object")
    arrays, meta = decode_block(block, "the constants of the exported program", ExportError)
    complex_names = parse_json(meta.get(_COMPLEX_KEY, "[]"), "the complex constants list",
                               ExportError)
    if not isinstance(complex_names, list) or not set(complex_names) <= set(arrays):
        raise ExportError("the exported program's list of complex constants is malformed")
    consts = []
    for i in range(len(arrays)):
        name = _table_name(i)
        if name not in arrays:
            raise ExportError(f"the exported program's constants table lacks entry {i}")
        a = arrays[name]
        if name in complex_names:
            if a.ndim == 0 or a.shape[-1] != 2 or dtype_kind(a.dtype) != "f" or a.itemsize < 4:
                raise ExportError(f"complex constant {i} is not stored as float pairs")
            a = a.copy().view(np.dtype(f"c{2 * a.itemsize}"))[..., 0]
        consts.append(a.astype(a.dtype.newbyteorder("="), copy=False))
    return manifest, consts, {"format_version": version, "zerax_version": zerax_version}
