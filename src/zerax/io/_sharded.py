"""Checkpoints of arrays split over the processes of a mesh (``zx.device_put(x,
NamedSharding(...))``, the results of a partitioned ``jit``).

:func:`zerax.io.save` of a tree holding such arrays is called by every process of the
job.  Each process writes *its part*, ``<path>.part<p>``: the blocks of those arrays its
devices hold (each block once over the job: the copy with ``replica_id`` 0), one tensor
per block named ``<leaf>@<start>-<stop>,...`` and the list of its blocks in the part's
metadata.  Then process 0 writes the main file ``<path>`` (the tree, the other leaves,
and for each split array its dtype, shape and number of parts), after every part is
written: a main file under its name means a complete set.

:func:`zerax.io.load` reads the part files' headers, checks that the blocks of each
array tile it exactly (inside its shape, no overlaps, nothing missing; the files are
untrusted), and builds each array: with a ``NamedSharding`` for it (``shardings=``, a
mesh that may differ from the one it was saved from, of any number of processes), each
process reads only the blocks that overlap its own (``zerax.make_array_from_callback``);
without one, the whole array.
"""

from __future__ import annotations

import json
import os

import numpy as np

import zerax

from .. import distributed
from ..errors import CheckpointError
from . import _safetensors as _st
from ._tree import stored_dtype

__all__ = ["Parts", "is_split", "part_path", "save_parts", "sync"]

_MAX_PARTS = 1 << 20


def is_split(leaf) -> bool:
    """Whether ``leaf`` is an array this process does not hold all of."""
    return isinstance(leaf, zerax.Array) and not leaf.is_fully_addressable


def part_path(path: str, p: int) -> str:
    return f"{path}.part{p}"


def _stored(arr: np.ndarray) -> np.ndarray:
    """C order, little-endian; complex as pairs of reals (as the main file stores it)."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        arr = np.ascontiguousarray(arr).reshape(-1).view(arr.real.dtype).reshape(
            arr.shape + (2,))
    return np.asarray(arr, dtype=arr.dtype.newbyteorder("<"), order="C")


def _bounds(index, shape) -> list:
    return [[0 if s.start is None else int(s.start), n if s.stop is None else int(s.stop)]
            for s, n in zip(index, shape)]


def save_parts(path: str, split: list, durable: bool) -> list:
    """Write this process's part of the split leaves ``[(name, array), ...]``;
    returns their descriptions for the main file."""
    p, n = zerax.process_index(), zerax.process_count()
    tensors, blocks, descs = [], [], []
    for name, leaf in split:
        dt = np.dtype(leaf.dtype)
        for shard in leaf.addressable_shards:
            if shard.replica_id != 0:
                continue
            bounds = _bounds(shard.index, leaf.shape)
            tname = f"{name}@" + ",".join(f"{a}-{b}" for a, b in bounds)
            tensors.append((tname, _stored(np.asarray(shard.data))))
            blocks.append({"leaf": name, "tensor": tname, "index": bounds})
        descs.append({"kind": "sharded", "dtype": dt.name, "shape": list(leaf.shape),
                      "parts": n, "name": name})
    meta = {"format": "zerax-part", "zerax.version": zerax.__version__,
            "zerax.part": str(p), "zerax.parts": str(n),
            "zerax.blocks": json.dumps(blocks, separators=(",", ":"))}
    try:
        _st.write_file(part_path(path, p), tensors, meta, durable=durable)
    except OSError as e:
        raise CheckpointError(f"cannot write checkpoint part {part_path(path, p)!r}: {e}") \
            from None
    return descs


def sync() -> None:
    """Wait for every process (between writing the parts and the main file)."""
    distributed.barrier()


def check_description(d: dict, path: str) -> None:
    """Validate the main file's description of a split leaf."""
    name = d["name"]
    shape, parts = d.get("shape"), d.get("parts")
    dt = stored_dtype(d.get("dtype"))
    if dt is None or not isinstance(shape, list) \
            or not all(type(k) is int and 0 <= k < 1 << 62 for k in shape) \
            or type(parts) is not int or not 1 <= parts <= _MAX_PARTS:
        raise CheckpointError(f"the description of split array {name!r} in {path!r} is "
                              "malformed")


class Parts:
    """The part files of a checkpoint: where each block of each split array is, read
    from their headers (validated), and the blocks read on demand."""

    def __init__(self, path: str, n: int):
        self.path, self.n = path, n
        self.blocks: dict = {}   # leaf -> [(part, tensor, bounds)]
        self._headers: dict = {}
        for p in range(n):
            self._read_header(p)

    def _read_header(self, p: int) -> None:
        fname = part_path(self.path, p)
        try:
            f = open(fname, "rb")
        except OSError as e:
            raise CheckpointError(f"the checkpoint {self.path!r} was saved by {self.n} "
                                  f"processes, but its part {fname!r} cannot be read ({e}); "
                                  "keep every <path>.part<k> file beside it") from None
        with f:
            tensors, meta, _ = _st.read_header(f, fname, os.fstat(f.fileno()).st_size)
        if meta.get("format") != "zerax-part" or meta.get("zerax.part") != str(p) or \
                meta.get("zerax.parts") != str(self.n):
            raise CheckpointError(f"{fname!r} is not part {p} of the {self.n} parts of "
                                  f"{self.path!r}")
        blocks = _st.parse_json(meta.get("zerax.blocks", ""), f"the blocks of {fname!r}")
        if not isinstance(blocks, list):
            raise CheckpointError(f"the block list of {fname!r} is malformed")
        for b in blocks:
            if not isinstance(b, dict) or not isinstance(b.get("leaf"), str) or \
                    b.get("tensor") not in tensors or not isinstance(b.get("index"), list):
                raise CheckpointError(f"a block of {fname!r} is malformed")
            self.blocks.setdefault(b["leaf"], []).append((p, b["tensor"], b["index"]))
        self._headers[p] = tensors

    def check(self, d: dict) -> None:
        """That the blocks of the split leaf ``d`` tile its shape exactly, each stored
        with its extent and dtype."""
        name, shape = d["name"], d["shape"]
        dt = zerax.numpy.dtype(d["dtype"])
        stored = dt if dt.kind != "c" else np.dtype(dt.char.lower())
        total, seen = 0, []
        for p, tname, bounds in self.blocks.get(name, []):
            if len(bounds) != len(shape) or not all(
                    isinstance(ab, list) and len(ab) == 2 and all(type(v) is int for v in ab)
                    and 0 <= ab[0] <= ab[1] <= n for ab, n in zip(bounds, shape)):
                raise CheckpointError(f"block {tname!r} of {self.path!r} lies outside its "
                                      f"array's shape {shape}")
            extent = [b - a for a, b in bounds]
            sdt, sshape, _, _ = self._headers[p][tname]
            want = extent + [2] if dt.kind == "c" else extent
            if list(sshape) != want or np.dtype(sdt) != stored.newbyteorder("<"):
                raise CheckpointError(f"block {tname!r} of {self.path!r} is stored as "
                                      f"{sdt}{list(sshape)}, its index says {dt}{extent}")
            for q in seen:
                if all(a < d2 and c < b for (a, b), (c, d2) in zip(bounds, q)):
                    raise CheckpointError(f"blocks of {name!r} in {self.path!r} overlap")
            seen.append(bounds)
            total += int(np.prod(extent, dtype=np.int64))
        if total != int(np.prod(shape, dtype=np.int64)):
            raise CheckpointError(f"the blocks of {name!r} in {self.path!r} cover "
                                  f"{total} of its {int(np.prod(shape))} entries")

    def reader(self, d: dict):
        """``read(index) -> ndarray``: the part of the split leaf ``d`` at ``index`` (a
        tuple of slices), from the saved blocks overlapping it."""
        name, shape, dt = d["name"], d["shape"], zerax.numpy.dtype(d["dtype"])
        blocks = self.blocks.get(name, [])
        cache: dict = {}

        def block(p, tname):
            arr = cache.get((p, tname))
            if arr is None:
                arrays, _ = _st.read_file(part_path(self.path, p), names={tname})
                arr = arrays[tname]
                if dt.kind == "c":
                    arr = arr.reshape(-1).view(dt).reshape(arr.shape[:-1])
                arr = cache[(p, tname)] = arr.astype(dt.newbyteorder("="), copy=False)
            return arr

        def read(index):
            want = _bounds(index, shape)
            out = np.empty([b - a for a, b in want], dt)
            for p, tname, bounds in blocks:
                lo = [max(a, c) for (a, _), (c, _) in zip(bounds, want)]
                hi = [min(b, e) for (_, b), (_, e) in zip(bounds, want)]
                if any(h <= lo_ for lo_, h in zip(lo, hi)) and out.size:
                    continue
                src = tuple(slice(lo_ - a, h - a) for lo_, h, (a, _) in zip(lo, hi, bounds))
                dst = tuple(slice(lo_ - c, h - c) for lo_, h, (c, _) in zip(lo, hi, want))
                out[dst] = block(p, tname)[src]
            return out
        return read
