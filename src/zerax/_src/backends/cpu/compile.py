"""Kernels to loaded machine code, once per content: in memory, then on disk.

A kernel's key hashes its printed kernel IR with everything its machine code depends
on (`_versions`: zerax's version, the emitter's own source, llvmlite's version, the
host CPU and its features).  A kernel compiled in this process is kept in memory; on
disk, ``<cache dir>/c_<key>.o`` holds its object code and JSON metadata, sealed by
`diskcache` (a keyed MAC over the whole entry; a tampered, truncated, stale or foreign
entry gives one warning and a fresh compile; an entry whose machine code calls a
function this process lacks is compiled again here).  Nothing is pickled.
"""

from __future__ import annotations

import hashlib
import os
import threading

import numpy as np

from ...base.config import __version__, config
from .. import kernel_ir as K
from ..lowering.context import PARALLEL_THRESHOLD
from . import blas, diskcache, engine, threads
from .emit import Emitter, walk

_MAGIC = b"ZXCPUO1 "
_lock = threading.Lock()
_memory: dict = {}
_unlinkable: set = set()   # keys whose disk entry this process cannot link
_digest: list = []
# Counters for tests and the compile log: kernels compiled by LLVM here, loaded from disk.
stats = {"compiled": 0, "loaded": 0}


def cache_dir() -> str | None:
    """The on-disk cache directory (None: the disk cache is off or not trusted):
    ``ZERAX_CACHE_DIR``, else the user's cache directory (platformdirs)."""
    if not config.disk_cache:
        return None
    d = os.environ.get("ZERAX_CACHE_DIR")
    if not d:
        import platformdirs
        d = platformdirs.user_cache_dir("zerax", appauthor=False)
    return diskcache.checked_dir(d)


def _versions() -> str:
    if not _digest:
        import llvmlite
        import llvmlite.binding as ll
        h = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                with open(os.path.join(here, name), "rb") as f:
                    h.update(name.encode() + f.read())
        _digest.append(f"zerax {__version__} cpu {h.hexdigest()[:16]} llvmlite "
                       f"{llvmlite.__version__} {ll.get_host_cpu_name()} "
                       f"{ll.get_host_cpu_features().flatten()}")
    return _digest[0]


class Loaded:
    """A kernel's machine code in this process: ``fn(*inputs, *outputs)`` (a built-in
    function), whether it runs parallel loops, and whether it calls BLAS.  A kernel
    with host calls is called through `bound` (its ``fn`` has no host function)."""

    def __init__(self, fn, parallel, symbol, blas, address):
        self.fn, self.parallel, self.symbol, self.blas = fn, parallel, symbol, bool(blas)
        self.address = address

    def bound(self, host):
        """The entry point with ``host(k, address)`` as the function its host calls
        call (one program's equations: the same machine code serves every program
        whose kernel prints the same, whatever its callbacks)."""
        return engine.builtin(self.symbol, self.address, host)


def kernel_key(kernel: K.Kernel, fast_math: bool) -> str:
    text = f"{_versions()}\nfast_math={fast_math}\n{K.format_kernel(kernel)}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def find(kernel: K.Kernel, *, fast_math: bool = False) -> Loaded | None:
    """``kernel``'s machine code if this process has it or the disk cache holds it."""
    key = kernel_key(kernel, fast_math)
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            return hit
        d = cache_dir() if key not in _unlinkable else None
        record = _read(os.path.join(d, f"c_{key}.o")) if d else None
        if record is None:
            return None
        try:
            loaded = _load(record)
        except engine.MissingSymbols:
            # object code calling a function this process lacks (another process
            # wrote it, with other libraries loaded): compiled again here instead
            _unlinkable.add(key)
            return None
        stats["loaded"] += 1
        _memory[key] = loaded
        return loaded


def load_kernel(kernel: K.Kernel, *, fast_math: bool = False) -> Loaded:
    """``kernel``'s machine code, found (`find`) or compiled now (its symbol is named
    by content, so two programs with the same kernel share one copy)."""
    hit = find(kernel, fast_math=fast_math)
    if hit is not None:
        return hit
    key = kernel_key(kernel, fast_math)
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            return hit
        record = _compile(kernel, f"zerax_k_{key}", fast_math)
        stats["compiled"] += 1
        loaded = _load(record)     # engine.MissingSymbols: nothing is cached
        d = cache_dir()
        if d:
            _write(os.path.join(d, f"c_{key}.o"), record)
        _memory[key] = loaded
        return loaded


def _compile(kernel, symbol, fast_math) -> dict:
    from llvmlite import ir
    module = ir.Module(name=symbol)
    renamed = K.Kernel(symbol, kernel.inputs, kernel.outputs, kernel.body, kernel.temps,
                       kernel.host_calls)
    offset = engine.array_layout()
    if offset is None:
        raise RuntimeError("NumPy's array layout could not be verified")
    em = Emitter(renamed, module, data_offset=offset, fast_math=fast_math)
    em.build()
    obj = engine.compile_module(module, unroll=_unrolls(kernel, em.parallel))
    return {"symbol": symbol, "parallel": em.parallel, "offset": offset,
            "blas": sorted(em.blas_letters), "object": obj}


# LLVM's loop unrolling serves a serial kernel's few small fixed-size loops.  A kernel
# of hundreds of loops is data movement (JAX's VAE example's 10x10 grid of transposed
# 28x28 images: 624 loops): LLVM fully unrolled each and SLP-vectorised the result, 13 s
# of O3 and code emission for that one kernel, 3.5 s without unrolling.  The serial
# kernels of the benchmark programs have at most ~50 loops.  A kernel with a large
# product is a layer's: its loops run over the layer's arrays, already vectorised (the
# MLP step's gradient compiled in 146 ms unrolled, 113 ms not, and ran as fast).
UNROLL_MAX_LOOPS = 256


def _unrolls(kernel, parallel: bool) -> bool:
    """Whether LLVM unrolls ``kernel``'s loops: a serial kernel of a few small loops
    (a loop body's 3-vectors), not one with parallel loops (over large arrays), a large
    product, or hundreds of loops."""
    return not parallel and loop_count(kernel.body) <= UNROLL_MAX_LOOPS and not any(
        type(s) is K.Call and s.name == "gemm" and
        s.params["batch"] * s.params["m"] * s.params["n"] >= PARALLEL_THRESHOLD
        for s in walk(kernel.body))


def loop_count(body) -> int:
    """The loops (``For``, ``Reduce``, ``While``) of a kernel body, nested ones too."""
    return sum(type(s) in (K.For, K.Reduce, K.While) for s in walk(body))


def _load(record) -> Loaded:
    if record["parallel"]:
        threads.ensure_loaded(engine.add_runtime_module, engine.address_of)
    for letter in record["blas"]:        # its symbols known before the object is linked
        if blas.gemm(np.float64 if letter == "d" else np.float32) is None:
            raise RuntimeError("the BLAS the kernel calls is not loaded")
    addr = engine.load_object(record["object"], [record["symbol"]])[record["symbol"]]
    return Loaded(engine.builtin(record["symbol"], addr), record["parallel"], record["symbol"],
                  record["blas"], addr)


def _write(path, record):
    header = {"symbol": record["symbol"], "parallel": record["parallel"],
              "offset": record["offset"], "blas": record["blas"]}
    try:
        diskcache.write_atomic(path, diskcache.seal(_MAGIC, os.path.basename(path), header,
                                                    [record["object"]]))
    except OSError as e:
        diskcache.warn(f"the compilation cache entry {path!r} could not be written ({e}); "
                       "the program runs without it.")


def _read(path) -> dict | None:
    try:
        data = diskcache.read_file(path)
    except FileNotFoundError:
        return None
    except (OSError, diskcache.CacheRejected) as e:
        return _reject(path, e)
    try:
        header, blobs = diskcache.unseal(_MAGIC, os.path.basename(path), data)
        symbol = header.get("symbol")
        letters = header.get("blas")
        if not (isinstance(symbol, str) and symbol.startswith("zerax_k_") and
                type(header.get("parallel")) is bool and len(blobs) == 1 and
                header.get("offset") == engine.array_layout() and
                isinstance(letters, list) and set(letters) <= {"d", "s"}):
            raise diskcache.CacheRejected("malformed or foreign metadata")
    except diskcache.CacheRejected as e:
        return _reject(path, e)
    return {"symbol": symbol, "parallel": header["parallel"], "offset": header["offset"],
            "blas": letters, "object": blobs[0]}


def _reject(path, why):
    diskcache.warn(f"the cache entry {path!r} could not be used ({why}); it is not run, "
                   "and is compiled again.")
    try:
        os.remove(path)
    except OSError:
        pass
    return None
