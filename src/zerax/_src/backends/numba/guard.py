"""Argument guards of natively loaded kernels (see `native.py`).

Numba's dispatcher checks, before it calls a compiled kernel, that each argument has
the type the kernel was compiled for; a kernel loaded from the native cache is called
without the dispatcher, so it gets the same check here, plus the shape (kernels are
compiled for static shapes).  Arguments that fail it go to a slower path that ends
in Numba's dispatcher, so a result never depends on which path ran.

The check is machine code, compiled with llvmlite when the native cache file is
written and stored in it: a replacement CPython wrapper that reads the argument
tuple and each array's header (type, number of dimensions, dimensions, dtype
descriptor, layout flags) and tail-calls Numba's wrapper, or calls the Python
fallback.  That costs a few nanoseconds per argument, where the same check written
in Python costs a few hundred (more than Numba's own dispatch).  The object layouts
it reads (``PyTupleObject``, NumPy's ``PyArrayObject_fields``) are measured in the
writing process and re-measured in the loading one; when they differ, or the machine
code cannot be built, the Python check (`python_guard`) is used instead.
"""

from __future__ import annotations

import ctypes

import numpy as np

_C_CONTIGUOUS, _F_CONTIGUOUS, _ALIGNED = 0x1, 0x2, 0x100


def _read_ptr(address):
    return ctypes.c_void_p.from_address(address).value or 0


def layout() -> dict | None:
    """Byte offsets of the fields the machine-code guard reads, measured on live
    objects (None when they are not where the C headers put them)."""
    try:
        head = object.__basicsize__
        t = (object(), object())
        if ctypes.c_ssize_t.from_address(id(t) + head).value != 2 or \
                _read_ptr(id(t) + tuple.__basicsize__) != id(t[0]) or \
                _read_ptr(id(t) + tuple.__basicsize__ + 8) != id(t[1]):
            return None
        out = {"type": head - 8, "tuple_size": head, "tuple_items": tuple.__basicsize__,
               "data": head, "nd": head + 8, "dims": head + 16, "descr": head + 40,
               "flags": head + 48}
        for a in (np.zeros((3, 5)), np.zeros((4, 2)).T, np.zeros(())):
            base = id(a)
            dims = _read_ptr(base + out["dims"])
            flags = ctypes.c_int.from_address(base + out["flags"]).value
            if _read_ptr(base + out["type"]) != id(np.ndarray) or \
                    _read_ptr(base + out["data"]) != a.ctypes.data or \
                    ctypes.c_int.from_address(base + out["nd"]).value != a.ndim or \
                    tuple(ctypes.c_ssize_t.from_address(dims + 8 * j).value
                          for j in range(a.ndim)) != a.shape or \
                    _read_ptr(base + out["descr"]) != id(a.dtype) or \
                    bool(flags & _C_CONTIGUOUS) != a.flags.c_contiguous or \
                    bool(flags & _F_CONTIGUOUS) != a.flags.f_contiguous or \
                    bool(flags & _ALIGNED) != a.flags.aligned:
                return None
        return out
    except Exception:  # noqa: BLE001 - no layout: the Python guard
        return None


def _names(kernel):
    return {"guard": f"zerax.guard.{kernel}", "fallback": f"zerax.guard.{kernel}.fallback",
            "ndarray": f"zerax.guard.{kernel}.ndarray",
            "descr": lambda i: f"zerax.guard.{kernel}.descr{i}"}


def _ir(kernel, wrapper, specs, off) -> str:
    """LLVM IR of the guard: one branch on each argument's type, one on its header
    fields, one on its dimensions (fields are read only once the type is known)."""
    names = _names(kernel)
    lines = [f'@"{names["fallback"]}" = global ptr null',
             f'@"{names["ndarray"]}" = global ptr null']
    lines += [f'@"{names["descr"](i)}" = global ptr null' for i in range(len(specs))]
    lines += [f'declare ptr @"{wrapper}"(ptr, ptr, ptr)',
              "declare ptr @PyObject_Call(ptr, ptr, ptr)",
              f'define ptr @"{names["guard"]}"(ptr %self, ptr %args, ptr %kws) {{',
              "entry:",
              "  %kwnull = icmp eq ptr %kws, null",
              f"  %sizep = getelementptr i8, ptr %args, i64 {off['tuple_size']}",
              "  %size = load i64, ptr %sizep",
              f"  %sizeok = icmp eq i64 %size, {len(specs)}",
              "  %ok = and i1 %kwnull, %sizeok",
              "  br i1 %ok, label %arg0, label %slow"]

    def load(name, obj, offset, ty):
        return [f"  %{name}.p = getelementptr i8, ptr {obj}, i64 {offset}",
                f"  %{name} = load {ty}, ptr %{name}.p"]

    for i, (_, shape, lay) in enumerate(specs):
        nxt = f"arg{i + 1}" if i + 1 < len(specs) else "call"
        o = f"%o{i}"
        lines.append(f"arg{i}:")
        lines += load(f"o{i}", "%args", off["tuple_items"] + 8 * i, "ptr")
        lines += load(f"ty{i}", o, off["type"], "ptr")
        lines += [f'  %nd{i}.want = load ptr, ptr @"{names["ndarray"]}"',
                  f"  %isnd{i} = icmp eq ptr %ty{i}, %nd{i}.want",
                  f"  br i1 %isnd{i}, label %head{i}, label %slow",
                  f"head{i}:"]
        lines += load(f"ndim{i}", o, off["nd"], "i32")
        lines += load(f"descr{i}", o, off["descr"], "ptr")
        lines += load(f"flags{i}", o, off["flags"], "i32")
        mask = _ALIGNED | {"C": _C_CONTIGUOUS, "F": _F_CONTIGUOUS}.get(lay, 0)
        lines += [f'  %descr{i}.want = load ptr, ptr @"{names["descr"](i)}"',
                  f"  %c{i}.0 = icmp eq i32 %ndim{i}, {len(shape)}",
                  f"  %c{i}.1 = icmp eq ptr %descr{i}, %descr{i}.want",
                  f"  %m{i} = and i32 %flags{i}, {mask}",
                  f"  %c{i}.2 = icmp eq i32 %m{i}, {mask}",
                  f"  %c{i}.3 = and i1 %c{i}.0, %c{i}.1",
                  f"  %c{i}.4 = and i1 %c{i}.3, %c{i}.2",
                  f"  br i1 %c{i}.4, label %dims{i}, label %slow",
                  f"dims{i}:"]
        if not shape:
            lines.append(f"  br label %{nxt}")
            continue
        lines += load(f"dp{i}", o, off["dims"], "ptr")
        acc = "true"
        for j, n in enumerate(shape):
            lines += [f"  %d{i}.{j}.p = getelementptr i64, ptr %dp{i}, i64 {j}",
                      f"  %d{i}.{j} = load i64, ptr %d{i}.{j}.p",
                      f"  %e{i}.{j} = icmp eq i64 %d{i}.{j}, {int(n)}",
                      f"  %a{i}.{j} = and i1 {acc}, %e{i}.{j}"]
            acc = f"%a{i}.{j}"
        lines.append(f"  br i1 {acc}, label %{nxt}, label %slow")
    lines += ["call:",
              f'  %r = tail call ptr @"{wrapper}"(ptr %self, ptr %args, ptr %kws)',
              "  ret ptr %r",
              "slow:",
              f'  %fb = load ptr, ptr @"{names["fallback"]}"',
              "  %r2 = call ptr @PyObject_Call(ptr %fb, ptr %args, ptr %kws)",
              "  ret ptr %r2",
              "}"]
    return "\n".join(lines) + "\n"


def build_object(kernel, wrapper, specs, offsets, target_machine) -> bytes:
    """Object code of the guard of ``kernel`` (whose Numba wrapper is ``wrapper``)."""
    import llvmlite.binding as ll
    mod = ll.parse_assembly(_ir(kernel, wrapper, specs, offsets))
    mod.triple = ll.get_process_triple()
    mod.data_layout = str(target_machine.target_data)
    mod.verify()
    return target_machine.emit_object(mod)


def install(engine, kernel, specs, fallback) -> tuple[int, tuple]:
    """Point the guard's globals at this process's objects; (its address, the objects
    to keep alive)."""
    names = _names(kernel)
    keep = [fallback, np.ndarray]
    ctypes.c_void_p.from_address(_address(engine, names["fallback"])).value = id(fallback)
    ctypes.c_void_p.from_address(_address(engine, names["ndarray"])).value = id(np.ndarray)
    for i, (dtype, _, _) in enumerate(specs):
        d = np.dtype(dtype)
        keep.append(d)
        ctypes.c_void_p.from_address(_address(engine, names["descr"](i))).value = id(d)
    fnptr = engine.get_function_address(names["guard"])
    if not fnptr:
        raise RuntimeError(f"no guard for kernel {kernel}")
    return fnptr, tuple(keep)


def _address(engine, name):
    address = engine.get_global_value_address(name)
    if not address:
        raise RuntimeError(f"no global {name}")
    return address


def guard_names(kernel) -> list[str]:
    """The symbols a guard object defines besides its function."""
    n = _names(kernel)
    return [n["guard"], n["fallback"], n["ndarray"]]


def python_guard(name, native, specs, slow):
    """``native`` behind the same check written in Python (slower; the fallback of
    the machine-code guard, and the guard when there is none)."""
    args = ", ".join(f"a{i}" for i in range(len(specs)))
    ns = {"_nd": np.ndarray, "_f": native, "_slow": slow}
    conds = []
    for i, (dtype, shape, lay) in enumerate(specs):
        ns[f"_d{i}"] = np.dtype(dtype)
        c = f"a{i}.__class__ is _nd and a{i}.dtype == _d{i} and a{i}.shape == {shape!r}"
        c += f" and a{i}.flags.aligned"
        if lay == "C":
            c += f" and a{i}.flags.c_contiguous"
        elif lay == "F":
            c += f" and a{i}.flags.f_contiguous"
        conds.append(c)
    src = (f"def {name}({args}):\n"
           f"    if {' and '.join(conds) or 'True'}:\n"
           f"        return _f({args})\n"
           f"    return _slow({args})\n")
    exec(compile(src, f"<zerax native guard {name}>", "exec"), ns)  # noqa: S102
    return ns[name]
