"""The native cache: compiled kernels loaded without Numba's dispatcher.

Even a process that finds a program's kernels in Numba's own cache pays Numba's
per-process initialisation of its typing and target contexts (about half a second)
before the first call, and Numba's cache is pickles (which zerax does not load).  This
module keeps, beside the readable copy of the generated source ``k_<key>.py``, a file
``k_<key>.<fingerprint>.native`` with what a later process needs to call the kernels
directly:

* the machine code Numba produced for each kernel (the object code of its code
  library, as Numba's own cache stores it), the name of its CPython wrapper and of
  the environment globals it reads, and the constants of those environments;
* the argument types and shapes each kernel was compiled and first called with.

Loading one is: register the C helper symbols Numba's code refers to (NRT, helperlib,
math; the threading layer for ``prange`` kernels), add the object code to an MCJIT
engine of its own with llvmlite, point the environment globals at new environments,
and make a built-in function of each wrapper with ``numba._dynfunc.make_function``,
which is what Numba's dispatcher itself calls after its type dispatch.  Each kernel is
called through a guard that checks that the arguments are what it was compiled for
(class, dtype, shape, layout); any other arguments go to the Numba-compiled kernel
(compiled, on first need, from this process's own source), so the native path never
changes a result.

The fingerprint in the file name covers the zerax, Numba, llvmlite, NumPy and Python
versions, the target triple and the host CPU name and features (object code is
CPU-specific).  A file is machine code from an untrusted directory: it is used only
when its keyed MAC (`diskcache.py`: HMAC-SHA256 under the user's secret key, over the
whole file, its name and the program's source) verifies, before any byte of it is
parsed or reaches LLVM.  Its metadata is JSON and the Python glue between kernels is
compiled from the program's source in this process: nothing is unpickled or
unmarshalled.  A kernel whose object refers to a symbol that cannot be resolved in
this process is refused before it is loaded.  Any failure to load raises, and the
caller compiles the program again.

The file is written by the process that compiled the program, after the program's
first call (Numba compiles lazily), by `watch`.  ``ZERAX_NATIVE_CACHE=0`` turns
the native cache off.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import sys
import threading
import types

import numpy as np

from ...base.config import __version__
from . import direct, guard
from ..cpu import diskcache
from ..cpu.engine import elf_symbols
from .lower_util import PYTHON_CALL_PREFIX
from .machine import host_cpu, target_machine

FORMAT = 4
_MAGIC = b"ZERAX-NATIVE-4\n"

# Counters, for tests and diagnostics: programs loaded natively, native files written,
# kernel calls handed to Numba (arguments a native kernel was not compiled for).
stats = {"loaded": 0, "saved": 0, "fallbacks": 0}

_lock = threading.RLock()
_fingerprint: list = []


# --------------------------------------------------------------------------- keys

def fingerprint() -> str:
    """A short hash of everything the object code depends on besides the program."""
    if not _fingerprint:
        import llvmlite
        import llvmlite.binding as ll
        import numba
        from numba.core import config

        cpu, features = host_cpu()
        text = "\n".join([f"format {FORMAT}", f"zerax {__version__}",
                          f"numba {numba.__version__}", f"llvmlite {llvmlite.__version__}",
                          f"numpy {np.__version__}", f"python {sys.version}",
                          f"triple {ll.get_process_triple()}", f"cpu {cpu}",
                          f"features {features}", f"threading {config.THREADING_LAYER}"])
        _fingerprint.append(hashlib.sha256(text.encode()).hexdigest()[:16])
    return _fingerprint[0]


def supported() -> bool:
    """The native cache handles ELF objects (Linux on x86-64 or AArch64)."""
    import platform
    return sys.platform.startswith("linux") and \
        platform.machine().lower() in ("x86_64", "amd64", "aarch64", "arm64") and \
        sys.byteorder == "little"


def enabled() -> bool:
    """``ZERAX_NATIVE_CACHE=0`` turns the native cache off (Numba's cache only), and
    so does ``NUMBA_DISABLE_JIT``."""
    from numba.core import config
    return os.environ.get("ZERAX_NATIVE_CACHE", "1") != "0" and supported() and \
        not config.DISABLE_JIT


def path_for(directory: str, key: str) -> str | None:
    if not enabled():
        return None
    try:
        return os.path.join(directory, f"k_{key}.{fingerprint()}.native")
    except Exception:  # noqa: BLE001 - no fingerprint: no native cache
        return None


debug = diskcache.debug


# --------------------------------------------------------------------------- ELF

# --------------------------------------------------------------------------- saving

# Constants of a kernel's environments that the file can hold (as JSON): exactly these
# types, so that a loaded constant is the object the compiled code was made with.
_CONST_TAGS = {bool: "b", int: "i", float: "f", str: "s", bytes: "y", type(None): "n"}


def _encode_const(c):
    if isinstance(c, np.dtype):
        if c.fields is not None or c.subdtype is not None:
            return None
        return ["d", c.str]
    tag = _CONST_TAGS.get(type(c))
    if tag is None:
        return None
    if tag == "f":
        return [tag, c.hex()]      # exact, and nan/inf survive JSON
    if tag == "y":
        return [tag, c.hex()]
    return [tag, c]


def _decode_const(item):
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
        raise ValueError("malformed constant")
    tag, v = item
    if tag == "d" and isinstance(v, str):
        return np.dtype(v)
    if tag == "f" and isinstance(v, str):
        return float.fromhex(v)
    if tag == "y" and isinstance(v, str):
        return bytes.fromhex(v)
    if tag == "b" and type(v) is bool or tag == "i" and type(v) is int or \
            tag == "s" and type(v) is str or tag == "n" and v is None:
        return v
    raise ValueError("malformed constant")


def _describe(args):
    """[(dtype, shape)] of a kernel's arguments, or None when one is not an ndarray."""
    out = []
    for a in args:
        if type(a) is not np.ndarray:
            return None
        out.append((a.dtype, a.shape))
    return out


def _object_code(disp, cres):
    """The object code of a kernel's code library (Numba keeps it for every library it
    compiles, so that it can be serialised)."""
    return cres.library._get_compiled_object()


def harvest(module, program, seen) -> dict | None:
    """The native-cache record of a program whose kernels have run once (None: a
    kernel is not one this cache can hold)."""
    from numba.core import types as nbtypes
    from numba.core.typed_passes import _reload_parfors
    from numba.np.numpy_support import as_dtype
    kernels, directs = {}, {}
    if any(h.startswith(PYTHON_CALL_PREFIX) for h in program.helpers):
        return None  # a kernel calls back into Python objects of this process
    for name, _ in program.kernels:
        disp = module.__dict__[name]
        described = seen.get(name)
        if isinstance(described, direct.DirectKernel):
            directs[name] = described.record
            continue
        disp = getattr(disp, "numba", disp)      # a direct.Dispatcher that refused
        if described is None or len(disp.overloads) != 1:
            return None
        (cres,) = disp.overloads.values()
        if cres.objectmode or cres.lifted or cres.fndesc is None:
            return None
        # Addresses baked into the code (large frozen arrays, function pointers) belong
        # to this process: such a kernel stays on Numba's path, as Numba's cache does.
        if getattr(cres.library, "has_dynamic_globals", True):
            return None
        if any(f is not _reload_parfors for f in cres.reload_init or ()):
            return None
        argtypes = tuple(cres.signature.args)
        if len(argtypes) != len(described):
            return None
        specs = []
        for ty, (dtype, shape) in zip(argtypes, described):
            if not isinstance(ty, nbtypes.Array) or ty.layout not in "CFA" or \
                    as_dtype(ty.dtype) != dtype or ty.ndim != len(shape) or not ty.aligned:
                return None
            specs.append((dtype.str, tuple(shape), ty.layout))
        envs = cres.referenced_envs
        if envs is None:
            envs = cres._find_referenced_environments()
        env_consts = {e.env_name: list(e.consts) for e in envs}
        env_consts[cres.fndesc.env_name] = list(cres.environment.consts)
        for consts in env_consts.values():
            if any(_encode_const(c) is None for c in consts):
                return None
        obj = bytes(_object_code(disp, cres))
        defined, _ = elf_symbols(obj)
        wrapper = cres.fndesc.llvm_cpython_wrapper_name
        if wrapper not in defined or any(n not in defined for n in env_consts):
            return None
        kernels[name] = {"object": obj, "wrapper": wrapper, "env": cres.fndesc.env_name,
                         "envs": env_consts, "parallel": bool(cres.reload_init),
                         "args": specs, "module": cres.fndesc.modname}
    offsets = guard.layout()
    if offsets is not None:
        try:
            tm = target_machine(opt=0)  # straight-line loads and compares: fast to build
            for name, k in kernels.items():
                k["guard"] = guard.build_object(name, k["wrapper"], k["args"], offsets, tm)
        except Exception as e:  # noqa: BLE001 - no machine-code guard: the Python one
            debug(f"zerax native guard not built ({type(e).__name__}: {e})")
            offsets = None
            for k in kernels.values():
                k.pop("guard", None)
    return {"format": FORMAT, "kernels": kernels, "direct": directs, "layout": offsets}


def _glue_code(program):
    """The Python function between the kernels, compiled from this process's source;
    only its own text (the last function of the source; the kernels, natively loaded,
    need not be compiled again)."""
    at = program.source.rfind(f"\ndef {program.entry}(")
    text = program.source[at + 1:] if at >= 0 else program.source
    return compile(text, "<zerax program>", "exec")


def source_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def save(path: str, record: dict, source: str):
    """Write ``record`` (of the program whose generated source is ``source``) as a
    sealed entry: JSON metadata and the object code, under the cache's MAC."""
    blobs: list = []

    def blob(data):
        blobs.append(bytes(data))
        return len(blobs) - 1

    kernels = {}
    for name, k in record["kernels"].items():
        kernels[name] = {
            "object": blob(k["object"]), "wrapper": k["wrapper"], "env": k["env"],
            "envs": {e: [_encode_const(c) for c in consts] for e, consts in k["envs"].items()},
            "parallel": k["parallel"], "module": k["module"],
            "args": [[d, list(shape), lay] for d, shape, lay in k["args"]],
            "guard": blob(k["guard"]) if k.get("guard") is not None else None}
    directs = {}
    for name, k in record.get("direct", {}).items():
        directs[name] = {
            "object": blob(k["object"]), "symbol": k["symbol"],
            "args": [[np.dtype(d).str, list(shape)] for d, shape in k["args"]],
            "buffers": [[np.dtype(d).str, list(shape), _encode_const(fill)]
                        for d, shape, fill in k["buffers"]],
            "returns": [[list(shape), *(["dynamic", 0] if src == "dynamic" else list(src)),
                         off] for shape, (src, off) in k["returns"]],
            "as_tuple": k["as_tuple"], "writes_args": k["writes_args"]}
    header = {"format": FORMAT, "source": source_digest(source), "kernels": kernels,
              "direct": directs, "layout": record["layout"]}
    data = diskcache.seal(_MAGIC, os.path.basename(path), header, blobs)
    diskcache.write_atomic(path, data)
    stats["saved"] += 1
    debug(f"zerax native data saved to {path!r}")


def _check(cond, what):
    if not cond:
        raise diskcache.CacheRejected(f"malformed entry ({what})")


def read(path: str, source: str) -> dict:
    """The record in the entry at ``path``, for the program whose generated source is
    ``source``; `diskcache.CacheRejected` unless its MAC verifies and it is that
    program's."""
    data = diskcache.read_file(path)
    header, blobs = diskcache.unseal(_MAGIC, os.path.basename(path), data)
    _check(header.get("format") == FORMAT, "format")
    if header.get("source") != source_digest(source):
        raise diskcache.CacheRejected("stale: it was made for another program")
    layout = header.get("layout")
    _check(layout is None or isinstance(layout, dict) and
           all(isinstance(k, str) and type(v) is int for k, v in layout.items()), "layout")
    kernels_in = header.get("kernels")
    _check(isinstance(kernels_in, dict), "kernels")
    kernels = {}
    for name, k in kernels_in.items():
        _check(isinstance(k, dict), "kernel")
        for field in ("wrapper", "env", "module"):
            _check(isinstance(k.get(field), str), field)
        _check(type(k.get("parallel")) is bool, "parallel")
        for field in ("object", "guard"):
            v = k.get(field)
            _check(v is None and field == "guard" or type(v) is int and 0 <= v < len(blobs),
                   field)
        envs = k.get("envs")
        _check(isinstance(envs, dict) and all(isinstance(v, list) for v in envs.values()),
               "envs")
        args = k.get("args")
        _check(isinstance(args, list) and all(
            isinstance(a, list) and len(a) == 3 and isinstance(a[0], str) and
            isinstance(a[1], list) and all(type(n) is int and n >= 0 for n in a[1]) and
            a[2] in ("C", "F", "A") for a in args), "args")
        try:
            kernels[name] = {
                "object": blobs[k["object"]], "wrapper": k["wrapper"], "env": k["env"],
                "envs": {e: [_decode_const(c) for c in consts] for e, consts in envs.items()},
                "parallel": k["parallel"], "module": k["module"],
                "args": [(np.dtype(d).str, tuple(shape), lay) for d, shape, lay in args],
                "guard": blobs[k["guard"]] if k["guard"] is not None else None}
        except (TypeError, ValueError) as e:
            raise diskcache.CacheRejected(f"malformed entry ({e})") from None
    directs_in = header.get("direct")
    _check(isinstance(directs_in, dict), "direct kernels")
    directs = {name: _read_direct(k, blobs) for name, k in directs_in.items()}
    return {"format": FORMAT, "kernels": kernels, "direct": directs, "layout": layout}


def _shape_of(v):
    _check(isinstance(v, list) and all(type(n) is int and n >= 0 for n in v), "shape")
    return tuple(v)


def _read_direct(k, blobs) -> dict:
    """A direct kernel's record from its JSON, every field checked."""
    _check(isinstance(k, dict), "direct kernel")
    _check(isinstance(k.get("symbol"), str) and k["symbol"].startswith("zerax_direct_"),
           "symbol")
    _check(type(k.get("object")) is int and 0 <= k["object"] < len(blobs), "object")
    _check(type(k.get("as_tuple")) is bool and type(k.get("writes_args")) is bool, "flags")
    try:
        args = [(np.dtype(d), _shape_of(shape)) for d, shape in k["args"]]
        buffers = []
        for d, shape, fill in k["buffers"]:
            fill = _decode_const(fill)
            _check(fill is None or type(fill) in (bool, int, float), "fill")
            buffers.append((np.dtype(d), _shape_of(shape), fill))
        returns = []
        for shape, kind, index, off in k["returns"]:
            _check(type(index) is int and index >= 0 and (off is None or type(off) is int),
                   "return")
            if kind == "dynamic":
                origin = ("dynamic", None)
            else:
                _check(kind in ("arg", "buf") and
                       index < len(args if kind == "arg" else buffers), "return")
                origin = ((kind, index), off)
            returns.append((_shape_of(shape), origin))
        for d, _ in args:
            _check(d.kind in "biufc" and d.isnative, "dtype")
        for d, _, _ in buffers:
            _check(d.kind in "biufc" and d.isnative, "dtype")
    except (TypeError, ValueError, KeyError) as e:
        raise diskcache.CacheRejected(f"malformed entry ({e})") from None
    return {"object": blobs[k["object"]], "symbol": k["symbol"], "args": args,
            "buffers": buffers, "returns": returns, "as_tuple": k["as_tuple"],
            "writes_args": k["writes_args"]}


def watch(module, program, path, source):
    """Write the native cache file of ``program`` (imported as ``module``) once Numba
    has compiled, or loaded from its cache, each of its kernels.

    Each kernel dispatcher's ``_compile_for_args`` (what Numba's C dispatcher calls
    when no compiled overload matches the arguments) is wrapped for that first time,
    which also tells the arguments' shapes; nothing is added to later calls."""
    names = [name for name, _ in program.kernels]
    seen: dict = {}
    lock = threading.Lock()

    def hook(name, disp, compile_for_args):
        def first_compile(*args, **kws):
            entry = compile_for_args(*args, **kws)
            with lock:
                if name not in seen:
                    seen[name] = _describe(args) if not kws else None
                    try:
                        del disp._compile_for_args  # back to Numba's own method
                    except AttributeError:
                        pass
                    if len(seen) == len(names):
                        _save_program(module, program, path, seen, source)
            return entry
        return first_compile

    def direct_hook(name):
        def compiled(kernel):
            with lock:
                if name not in seen:
                    seen[name] = kernel
                    if len(seen) == len(names):
                        _save_program(module, program, path, seen, source)
        return compiled

    for name in names:
        disp = module.__dict__[name]
        if isinstance(disp, direct.Dispatcher):
            disp.on_compiled = direct_hook(name)
            disp = disp.numba
        disp._compile_for_args = hook(name, disp, disp._compile_for_args)


def _save_program(module, program, path, seen, source):
    try:
        record = harvest(module, program, seen)
        if record is not None:
            save(path, record, source)
    except OSError as e:  # full disk, a directory gone: the program's result stands
        diskcache.warn(f"the native cache entry {path!r} could not be written ({e}); "
                       "the next process compiles this program again.", stacklevel=5)
    except Exception as e:  # noqa: BLE001 - the native cache is optional
        debug(f"zerax native data not saved ({type(e).__name__}: {e})")


# --------------------------------------------------------------------------- loading

class Unavailable(RuntimeError):
    """A native entry this process cannot load (a symbol or the threading layer is
    missing here): not a corrupt file, so it is kept and Numba's path used quietly."""


_symbol_table: dict = {}
_registered: set = set()


def _register_symbols(names):
    """Register those of ``names`` that Numba's target context registers when it is
    built (``BaseContext.__init__``, ``rtsys.initialize``,
    ``c_math_functions.install``), at the same addresses, without building it."""
    import llvmlite.binding as ll
    if not _symbol_table:
        import builtins

        from numba import _dynfunc, _helperlib
        from numba.core import intrinsics
        from numba.core.runtime import _nrt_python as _nrt
        from numba.core.runtime import nrt  # noqa: F401  (sets NRT's allocator)
        table = {"_Py_NoneStruct": id(None)}
        for helpers in (_helperlib.c_helpers, _dynfunc.c_helpers):
            table.update(("numba_" + n, a) for n, a in helpers.items())
        table.update(("PyExc_" + obj.__name__, id(obj)) for obj in vars(builtins).values()
                     if isinstance(obj, type) and issubclass(obj, BaseException))
        table.update((n if n.startswith("_") else "NRT_" + n, a)
                     for n, a in _nrt.c_helpers.items())
        table.update((n, _helperlib.c_helpers[n]) for n in intrinsics.INTR_MATH)
        _symbol_table.update(table)
    for name in names:
        if name in _symbol_table and name not in _registered:
            ll.add_symbol(name, _symbol_table[name])
            _registered.add(name)


def _engine():
    import llvmlite.binding as ll
    module = ll.parse_assembly("")
    module.triple = ll.get_process_triple()
    return ll.create_mcjit_compiler(module, target_machine())


def _check_symbols(name, obj, provided, required=()):
    """Refuse an object that needs a symbol nothing provides (MCJIT would abort the
    process) or lacks one it must define."""
    import llvmlite.binding as ll
    defined, undefined = elf_symbols(obj)
    _register_symbols(undefined)
    missing = sorted(s for s in undefined - provided if not ll.address_of_symbol(s))
    if missing:
        raise Unavailable(f"kernel {name} needs symbols this process lacks: "
                           f"{', '.join(missing[:5])}")
    if any(n not in defined for n in required):
        raise RuntimeError(f"kernel {name}: its object lacks its entry points")
    return defined


def load_kernels(record: dict, fallbacks) -> dict:
    """{kernel name: callable} from a native cache record; ``fallbacks(name)`` is the
    Numba-compiled kernel, for arguments the native one was not compiled for.  Raises
    on any problem, before code is added to an engine where it can be seen before."""
    import llvmlite.binding as ll
    from numba import _dynfunc
    from numba.core.environment import Environment
    kernels = record["kernels"]
    with _lock:
        if any(k["parallel"] for k in kernels.values()):
            from numba.np.ufunc.parallel import _launch_threads
            try:
                _launch_threads()
            except Exception as e:  # noqa: BLE001
                raise Unavailable(f"no threading layer ({e})") from None
        # Created first: MCJIT makes the process's own symbols (the Python C API)
        # searchable, which the checks below rely on.
        engine = _engine()
        provided: set = set()
        for name, k in kernels.items():
            provided |= _check_symbols(name, k["object"], set(),
                                       [k["wrapper"], *k["envs"]])
        guarded = record.get("layout") is not None and \
            record["layout"] == guard.layout() and \
            all(k.get("guard") is not None for k in kernels.values())
        if guarded:
            for name, k in kernels.items():
                _check_symbols(name, k["guard"], provided, guard.guard_names(name))
        for k in kernels.values():
            engine.add_object_file(ll.ObjectFileRef.from_data(k["object"]))
            if guarded:
                engine.add_object_file(ll.ObjectFileRef.from_data(k["guard"]))
        engine.finalize_object()
        out = {}
        for name, k in kernels.items():
            module = types.ModuleType(k["module"])
            envs = []
            for env_name, consts in k["envs"].items():
                env = Environment(module.__dict__)
                env.consts[:] = consts
                env.env_name = env_name
                address = engine.get_global_value_address(env_name)
                if not address:
                    raise RuntimeError(f"kernel {name}: no environment {env_name}")
                ctypes.c_void_p.from_address(address).value = id(env)
                envs.append(env)
            fnptr = engine.get_function_address(k["wrapper"])
            if not fnptr:
                raise RuntimeError(f"kernel {name}: no wrapper {k['wrapper']}")
            main = next(e for e in envs if e.env_name == k["env"])
            keep = (engine, tuple(envs))
            doc = f"zerax native kernel {name}"
            raw = _dynfunc.make_function(module, name, doc, fnptr, main, keep)
            if guarded:
                checked = _lazy_python_guard(name, raw, k["args"], fallbacks(name))
                gptr, objects = guard.install(engine, name, k["args"], checked)
                out[name] = _dynfunc.make_function(module, name, doc, gptr, main,
                                                   keep + objects)
            else:
                out[name] = guard.python_guard(name, raw, k["args"], fallbacks(name))
        return out


def _lazy_python_guard(name, raw, specs, slow):
    """The Python check, built when the machine-code one first refuses arguments."""
    built: list = []

    def check(*args):
        if not built:
            built.append(guard.python_guard(name, raw, specs, slow))
        return built[0](*args)
    return check


def _load_direct(records, program, namespace, fallback) -> dict:
    """{kernel name: direct.Dispatcher} holding the kernels of ``records``' object code;
    other argument signatures are compiled by `direct` from the program's source."""
    import ast
    with _lock:
        direct.engine()        # makes the process's own symbols searchable
        for name, k in records.items():
            if elf_symbols(k["object"])[1] & direct.THREAD_POOL_SYMBOLS:
                try:
                    direct.start_threading_layer()
                except direct.Unsupported as e:
                    raise Unavailable(str(e)) from None
            _check_symbols(name, k["object"], set(), [k["symbol"]])
    trees: list = []

    def tree_of(name):
        if not trees:
            trees.append({n.name: n for n in ast.parse(program.source).body
                          if isinstance(n, ast.FunctionDef)})
        return trees[0][name]

    out = {}
    for name, k in records.items():
        d = direct.Dispatcher(lambda name=name: tree_of(name), namespace, fallback(name),
                              name=name)
        kernel = direct.DirectKernel.load(k)
        d.add(kernel)
        out[name] = d
    return out


class _Fallback:
    """The Numba-compiled kernels, imported on first need."""

    def __init__(self, load_module):
        self._load_module = load_module
        self._module = None
        self._lock = threading.Lock()

    def kernel(self, name):
        def slow(*args):
            stats["fallbacks"] += 1
            module = self._module
            if module is None:
                with self._lock:
                    if self._module is None:
                        self._module = self._load_module()
                    module = self._module
            return getattr(module, name)(*args)
        return slow


def load_program(path: str, program, namespace: dict, load_module, source: str):
    """The entry of ``program`` (generated source ``source``) with its kernels loaded
    from the native cache file at ``path``.  ``namespace`` holds the module globals the
    program refers to; ``load_module()`` compiles the program with Numba (for
    arguments the native kernels were not compiled for)."""
    record = read(path, source)
    names = [name for name, _ in program.kernels]
    if sorted([*record["kernels"], *record["direct"]]) != sorted(names):
        raise ValueError("the file does not match the program's kernels")
    fallback = _Fallback(load_module).kernel
    kernels = load_kernels(record, fallback) if record["kernels"] else {}
    if record["direct"]:
        kernels.update(_load_direct(record["direct"], program, namespace, fallback))
    if program.entry in kernels:
        entry = kernels[program.entry]
    else:
        ns = dict(namespace)
        ns.update({"np": np, "math": math, "__name__": "zerax_native_program"})
        exec(_glue_code(program), ns)  # noqa: S102 - this process's own source
        ns.update(kernels)
        entry = ns[program.entry]
    stats["loaded"] += 1
    debug(f"zerax native data loaded from {path!r}")
    return entry
