"""This process's LLVM engine for the CPU backend: the target machine, the optimiser,
object code in and out, and the CPython functions that call the machine code.

Only public interfaces are used: llvmlite's binding (MCJIT, the pass builder), and
CPython's C API called through ctypes (``PyCFunction_NewEx`` makes a built-in function
of a kernel's entry point, which CPython then calls as it calls any C function: ~0.1
us, against ~1 us for a ctypes call).  The one fact read from memory is where an
ndarray keeps its data pointer: NumPy's ``PyArrayObject_fields`` (its documented C
struct: the object header, then ``char *data``), checked on live arrays by
`array_layout` before any kernel runs.
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

_lock = threading.RLock()
_state: dict = {}


def target_machine():
    """The host's LLVM target machine (its CPU and features), made once."""
    tm = _state.get("tm")
    if tm is None:
        import llvmlite.binding as ll
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        target = ll.Target.from_triple(ll.get_process_triple())
        features = ll.get_host_cpu_features().flatten()
        tm = target.create_target_machine(cpu=ll.get_host_cpu_name(), features=features,
                                          opt=3, codemodel="jitdefault", jit=True)
        _state["tm"] = tm
    return tm


def triple() -> str:
    import llvmlite.binding as ll
    return ll.get_process_triple()


def _engine():
    eng = _state.get("engine")
    if eng is None:
        import llvmlite.binding as ll
        eng = ll.create_mcjit_compiler(ll.parse_assembly(""), target_machine())
        _state["engine"] = eng
    return eng


def optimise(llmod, *, unroll: bool = True):
    """LLVM's O3 pipeline with both vectorisers.  ``unroll=False`` for kernels with
    parallel loops: their loops run over large arrays, already vectorised and
    interleaved, and unrolling them made most of a convolution step's compile for no
    measured speed; serial kernels keep it (a small fixed-size loop in a loop body)."""
    import llvmlite.binding as ll
    pto = ll.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = unroll
    pb = ll.create_pass_builder(target_machine(), pto)
    pb.getModulePassManager().run(llmod, pb)


def compile_module(module, *, unroll: bool = True) -> bytes:
    """Object code of an llvmlite ``ir.Module``, optimised."""
    import llvmlite.binding as ll
    tm = target_machine()
    module.triple = triple()
    module.data_layout = str(tm.target_data)
    llmod = ll.parse_assembly(str(module))
    llmod.verify()
    optimise(llmod, unroll=unroll)
    return tm.emit_object(llmod)


class MissingSymbols(RuntimeError):
    """Object code that calls a function this process does not have (MCJIT would
    abort the process when linking it)."""


def _runtime_library_symbol(name: str) -> bool:
    """Make a compiler runtime function (``__truncdfhf2``: LLVM calls one for an
    operation the CPU has no instruction for) known to LLVM's linker, from the C
    compiler's runtime library the process has loaded but not made global (libgcc_s);
    whether it was found."""
    import ctypes.util

    import llvmlite.binding as ll
    if not name.startswith("__"):
        return False
    libs = _state.get("runtime_libs")
    if libs is None:
        libs = []
        path = ctypes.util.find_library("gcc_s")
        if path:
            try:
                libs.append(ctypes.CDLL(path))
            except OSError:
                pass
        _state["runtime_libs"] = libs
    for lib in libs:
        fn = getattr(lib, name, None)
        if fn is not None:
            ll.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
            return True
    return False


def check_symbols(obj: bytes) -> None:
    """Raise `MissingSymbols` unless every function ``obj`` calls is in this process
    or this engine (ELF objects; other formats are trusted as LLVM made them)."""
    import llvmlite.binding as ll
    if obj[:4] != b"\x7fELF":
        return
    _, undefined = elf_symbols(obj)
    eng = _engine()
    missing = sorted(s for s in undefined if not ll.address_of_symbol(s)
                     and not eng.get_function_address(s) and not _runtime_library_symbol(s))
    if missing:
        raise MissingSymbols(f"the machine code needs {', '.join(missing[:5])}, which this "
                             "process lacks")


def load_object(obj: bytes, symbols) -> dict:
    """Add object code to the engine (once per first symbol) and return the addresses
    of ``symbols``; `MissingSymbols` (nothing added) when it calls a function the
    process lacks."""
    import llvmlite.binding as ll
    eng = _engine()
    with _lock:
        first = symbols[0]
        if not eng.get_function_address(first):
            check_symbols(obj)
            eng.add_object_file(ll.ObjectFileRef.from_data(obj))
            eng.finalize_object()
        out = {}
        for s in symbols:
            a = eng.get_function_address(s) or eng.get_global_value_address(s)
            if not a:
                raise RuntimeError(f"no machine code for {s}")
            out[s] = a
        return out


def add_runtime_module(module) -> None:
    """Compile a runtime module (the thread pool) into the engine."""
    obj = compile_module(module, unroll=False)
    import llvmlite.binding as ll
    eng = _engine()
    with _lock:
        eng.add_object_file(ll.ObjectFileRef.from_data(obj))
        eng.finalize_object()


def address_of(symbol: str) -> int:
    eng = _engine()
    a = eng.get_function_address(symbol) or eng.get_global_value_address(symbol)
    if not a:
        raise RuntimeError(f"no symbol {symbol}")
    return a


def elf_symbols(data: bytes):
    """(defined, undefined) global symbol names of an ELF64 little-endian object."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("the object code is not ELF64 little-endian")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    defined, undefined = set(), set()
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for k in range(1, size // 24):
            name, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, offset + k * 24)
            if not name or info >> 4 == 0:  # unnamed or local
                continue
            end = data.index(b"\0", strings + name)
            text = data[strings + name:end].decode()
            (undefined if shndx == 0 else defined).add(text)
    return defined, undefined


# --------------------------------------------------------------------------- CPython


class _MethodDef(ctypes.Structure):
    """CPython's ``PyMethodDef``."""
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x0080
_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
# The method definitions (and their names) live as long as the process: a built-in
# function keeps a pointer to its definition, not a reference.  One per entry point.
_definitions: dict = {}


def builtin(symbol: str, address: int, bound=None):
    """A built-in function calling the entry point at ``address`` (METH_FASTCALL), its
    ``self`` argument ``bound`` (a kernel's host-call function, or None)."""
    with _lock:
        md = _definitions.get((symbol, address))
        if md is None:
            name = symbol.encode()
            md = _definitions[symbol, address] = (_MethodDef(name, address, _METH_FASTCALL,
                                                             None), name)
    return _new_function(ctypes.addressof(md[0]), bound, None)


def array_layout() -> int | None:
    """The byte offset of an ndarray's data pointer in its object (NumPy's
    ``PyArrayObject_fields``: right after the object header), checked on live arrays;
    None if it is not there."""
    off = _state.get("data_offset", False)
    if off is not False:
        return off
    off = object.__basicsize__
    try:
        for a in (np.zeros((3, 5)), np.zeros((4, 2)).T, np.zeros(()), np.arange(7)[2:]):
            if ctypes.c_void_p.from_address(id(a) + off).value != a.ctypes.data:
                off = None
                break
    except Exception:  # noqa: BLE001 - an unreadable layout: no compiled kernels
        off = None
    _state["data_offset"] = off
    return off
