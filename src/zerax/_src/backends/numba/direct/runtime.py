"""The runtime of direct kernels: this process's LLVM engine, `compile_kernel`
(translate, optimise, emit, load; once per content), `DirectKernel` (one signature's
machine code and the Python call around it), `Dispatcher` (one kernel: compiled here
per signature, or Numba's), buffers aligned as Numba's, the counters, and the start of
Numba's threading layer for parallel kernels."""

from __future__ import annotations

import ast
import hashlib
import math
import os
import threading

import numpy as np
from llvmlite import ir

from .. import guard
from ..machine import target_machine
from .translate import _Kernel
from .values import Unsupported, _TypeChange, _unify

# Counters for tests and diagnostics: kernels compiled here, and refused (with why).
stats = {"compiled": 0, "refused": 0}
refusals: dict = {}

_lock = threading.RLock()
_engine_holder: list = []
# Kernels compiled in this process, by content (source, argument signature): the same
# kernel in two programs is compiled once, and its symbol is defined once in the engine.
_by_key: dict = {}


def engine():
    import llvmlite.binding as ll
    if not _engine_holder:
        tm = target_machine(opt=3)
        module = ll.parse_assembly("")
        module.triple = ll.get_process_triple()
        engine = ll.create_mcjit_compiler(module, tm)
        _engine_holder.append((engine, tm))
    return _engine_holder[0]


def enabled() -> bool:
    """Whether serial kernels are compiled here (``ZERAX_DIRECT_KERNELS=0``: all by
    Numba, as before; also when the array header's layout could not be verified)."""
    return os.environ.get("ZERAX_DIRECT_KERNELS", "1").strip().lower() not in \
        ("0", "false", "off") and guard.layout() is not None


def _optimise(llmod, tm, unroll=True):
    """LLVM's O3 pipeline with both vectorisers (as Numba's).  ``unroll=False`` for
    kernels with parallel loops: their loops run over large arrays, already vectorised
    and interleaved, and unrolling them made most of a convolution step's compile
    (2.9 s against 0.9 s, issue 20) for no measured speed; serial kernels keep it (a
    small fixed-size loop in a fori_loop body: RK4's step 1.25 ms with it, 2.8 without)."""
    import llvmlite.binding as ll
    pto = ll.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = unroll
    pb = ll.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(llmod, pb)


def content_key(fn_ast: ast.FunctionDef, specs) -> str:
    text = ast.unparse(fn_ast) + repr([(np.dtype(d).str, tuple(s)) for d, s in specs])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def compile_kernel(fn_ast: ast.FunctionDef, helpers: dict, specs) -> DirectKernel:
    """The kernel ``fn_ast`` compiled for argument ``specs`` ((dtype, shape) each);
    `Unsupported` when the translator does not accept it."""
    import llvmlite.binding as ll
    key = content_key(fn_ast, specs)
    with _lock:
        kernel = _by_key.get(key)
        if kernel is not None:
            return kernel
        symbol = f"zerax_direct_{key}"
        forced: dict = {}
        for _ in range(8):      # again with each variable of two types unified (Numba's)
            module = ir.Module(name=symbol)
            module.triple = ll.get_process_triple()
            k = _Kernel(fn_ast, helpers, specs, module, symbol, guard.layout())
            k.forced = forced
            try:
                k.build()
                break
            except _TypeChange as e:
                where = (e.owner, e.name)
                unified = _unify(_unify(e.old, e.new), forced.get(where, e.old))
                if where in forced and forced[where] == unified:
                    raise Unsupported(str(e)) from None
                forced[where] = unified
        else:
            raise Unsupported("variables of too many types")
        if k.returns is None:
            raise Unsupported("no return")
        if k.parallel:
            start_threading_layer()
        _, tm = engine()
        module.data_layout = str(tm.target_data)   # the optimiser's cost models need it
        llmod = ll.parse_assembly(str(module))
        llmod.verify()
        _optimise(llmod, tm, unroll=not k.parallel)
        if os.environ.get("ZERAX_DIRECT_DUMP"):     # diagnostics: the optimised IR
            with open(os.path.join(os.environ["ZERAX_DIRECT_DUMP"], symbol + ".ll"), "w") as f:
                f.write(str(llmod))
        obj = tm.emit_object(llmod)
        returns, as_tuple = k.returns
        kernel = DirectKernel.load({
            "symbol": symbol, "object": obj, "args": [(np.dtype(d), tuple(sh))
                                                      for d, sh in specs],
            "buffers": k.buffers, "as_tuple": as_tuple, "writes_args": k.writes_args,
            "returns": [(r.shape, r.origin) for r in returns]})
        _by_key[key] = kernel
        stats["compiled"] += 1
        return kernel


class DirectKernel:
    """A kernel's machine code for one argument signature, callable like the
    Numba-compiled kernel: ``kernel.call(*arrays) -> tuple of arrays``.  ``record``
    (also what the native disk cache keeps) holds the object code, its symbol and what
    the Python side needs: the argument specs, the buffers to allocate (dtype, shape,
    constant fill or None) and the returns (shape, origin)."""

    def __init__(self, record, address):
        self.record = record
        self.specs = record["args"]
        self.buffers = record["buffers"]
        self.returns = record["returns"]
        self.as_tuple = record["as_tuple"]
        self.writes_args = record["writes_args"]
        nargs = len(self.specs)
        self._cfn = _builtin(record["symbol"], address)
        spec = [1]
        for dt, shape in self.specs:    # what the machine code compares (see translate's _export)
            spec += [id(np.ndarray), id(np.dtype(dt)), len(shape), *shape]
        self.spec = np.array(spec, np.int64)
        self.call = self._make_call(nargs)

    @classmethod
    def load(cls, record):
        """Add ``record``'s object code to this process's engine (once per symbol)."""
        import llvmlite.binding as ll
        jit, _ = engine()
        with _lock:
            address = jit.get_function_address(record["symbol"])
            if not address:
                jit.add_object_file(ll.ObjectFileRef.from_data(record["object"]))
                jit.finalize_object()
                address = jit.get_function_address(record["symbol"])
        if not address:
            raise RuntimeError(f"no machine code for {record['symbol']}")
        return cls(record, address)

    def _make_call(self, nargs):
        """The Python function that allocates the buffers, calls the machine code and
        assembles the results (generated once, so a call is straight-line code)."""
        ns = {"_cfn": self._cfn, "_np": np, "_empty": _aligned_empty, "_full": np.full,
              "_locate": _locate}
        lines = []
        params = [f"x{i}" for i in range(nargs)]
        bufs = []
        for k, (dt, shape, fill) in enumerate(self.buffers):
            ns[f"_d{k}"] = dt
            if fill is None:
                lines.append(f"    b{k} = _empty({tuple(shape)!r}, _d{k})")
            else:
                ns[f"_f{k}"] = fill
                lines.append(f"    b{k} = _full({tuple(shape)!r}, _f{k}, _d{k})")
            bufs.append(f"b{k}")
        lines.append(f"    bt = ({', '.join(bufs)}{',' if len(bufs) == 1 else ''})")
        needs_ret = any(src == "dynamic" or off != 0 for _, (src, off) in self.returns)
        lines.append(f"    rs = _empty({max(1, len(self.returns))}, _np.int64)" if needs_ret
                     else "    rs = None")
        call_line = len(lines)
        lines.append(f"    _cfn({', '.join(params + ['bt', 'rs', '_unchecked'])})")
        everything = params + bufs
        outs = []
        for j, (shape, (src, off)) in enumerate(self.returns):
            ns[f"_s{j}"] = tuple(shape)
            if src != "dynamic" and off == 0:
                base = f"x{src[1]}" if src[0] == "arg" else f"b{src[1]}"
                full = self.specs[src[1]][1] if src[0] == "arg" else self.buffers[src[1]][1]
                outs.append(base if tuple(full) == tuple(shape) else f"{base}.reshape(_s{j})")
            else:
                outs.append(f"_locate(int(rs[{j}]), ({', '.join(everything)},), _s{j})")
        if self.as_tuple:
            lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        else:
            lines.append(f"    return {outs[0]}")
        # checked(slow): the same, the machine code checking that the arguments are the
        # C-contiguous arrays of this signature (it returns ``spec`` without running
        # when they are not, and slow(...) takes them)
        ns["_unchecked"] = np.zeros(1, np.int64)
        ns["_spec"] = self.spec
        checked_lines = list(lines)
        checked_lines[call_line] = (
            f"    if _cfn({', '.join(params + ['bt', 'rs', '_spec'])}) is _spec:\n"
            f"        return _slow({', '.join(params)})")
        body = "\n".join(lines)
        args = ", ".join(params)
        text = (f"def call({args}):\n{body}\n"
                f"def checked(_slow):\n"
                f"    def call_checked({args}):\n"
                + "\n".join("    " + line for line in "\n".join(checked_lines).split("\n"))
                + "\n    return call_checked\n")
        exec(compile(text, "<zerax direct kernel>", "exec"), ns)  # noqa: S102 - our text
        self.checked = ns["checked"]
        return ns["call"]


def _builtin(name, address):
    """A built-in function calling the machine code at ``address`` as CPython calls a
    C function (what Numba's dispatcher does with its compiled wrappers)."""
    import types

    from numba import _dynfunc
    from numba.core.environment import Environment
    module = types.ModuleType("zerax_direct")
    env = Environment(module.__dict__)
    return _dynfunc.make_function(module, name, f"zerax direct kernel {name}", address,
                                  env, (env,))


def _aligned_empty(shape, dtype):
    """A new C-contiguous array whose data starts on a 64-byte boundary (NumPy's own
    start on 16), as Numba's allocator gives: OpenBLAS ran this program's products
    ~30% slower on the 16-byte aligned outputs of the kernels before them (the MLP step:
    10.5 ms against 6.8 ms).  Small arrays gain nothing and stay plain."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape) * dtype.itemsize
    if n < 4096:
        return np.empty(shape, dtype)
    raw = np.empty(n + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + n].view(dtype).reshape(shape)


def _locate(pointer, candidates, shape):
    """The array among ``candidates`` (or a contiguous view into one) whose data starts
    at ``pointer``, with ``shape``."""
    size = math.prod(shape)
    for c in candidates:
        base = c.ctypes.data
        if base <= pointer < base + max(c.nbytes, 1):
            start = (pointer - base) // c.itemsize
            if start == 0 and c.shape == tuple(shape):
                return c
            return c.reshape(-1)[start:start + size].reshape(shape)
    raise RuntimeError("zerax: a direct kernel returned memory it does not own")


class Dispatcher:
    """Stands for one generated kernel: compiles it here for each new argument
    signature, or hands it to ``numba`` (the njit dispatcher) when the translator
    refuses it or the arguments are not plain arrays.  ``on_compiled(kernel)`` is
    told of each signature compiled here (the native cache's writer listens)."""

    def __init__(self, fn_ast, helpers, numba, name=None):
        # fn_ast: the kernel's FunctionDef, or a function giving it (parsed when needed)
        self._ast, self.helpers, self.numba = fn_ast, helpers, numba
        self.compiled: dict = {}
        self.refused = False
        self.on_compiled = None
        self._fast = None          # the latest signature's checked call
        self.__name__ = name or fn_ast.name

    @property
    def ast(self):
        if not isinstance(self._ast, ast.FunctionDef):
            self._ast = self._ast()
        return self._ast

    def __call__(self, *args):
        fast = self._fast
        if fast is not None:
            return fast(*args)
        return self.general(*args)

    def add(self, kernel):
        """Use ``kernel`` (compiled elsewhere: the native cache) for its signature."""
        self.compiled[tuple(kernel.specs)] = kernel
        self._fast = kernel.checked(self.general)

    def general(self, *args):
        """Any arguments: the kernel for their signature (compiled if new), arrays
        made contiguous, or Numba's kernel."""
        if self.refused:
            return self.numba(*args)
        key = []
        fixed = None
        for i, a in enumerate(args):
            if type(a) is not np.ndarray:
                return self.numba(*args)
            flags = a.flags
            if not a.dtype.isnative:                   # another byte order: a native copy
                fixed = list(args) if fixed is None else fixed
                fixed[i] = a = a.astype(a.dtype.newbyteorder("="))
            elif not (flags.c_contiguous and flags.aligned):
                fixed = list(args) if fixed is None else fixed
                fixed[i] = np.array(a, order="C")      # a new, aligned, contiguous copy
            key.append((a.dtype, a.shape))
        key = tuple(key)
        kernel = self.compiled.get(key)
        if kernel is None:
            try:
                kernel = compile_kernel(self.ast, self.helpers, key)
            except Unsupported as e:
                self._refuse(str(e))
                return self.numba(*args)
            self.compiled[key] = kernel
            if self.on_compiled is not None and _native_cacheable(kernel.record):
                self.on_compiled(kernel)
        if fixed is not None:
            if kernel.writes_args:     # it must write the caller's own arrays
                return self.numba(*args)
            args = fixed
        else:
            self._fast = kernel.checked(self.general)
        return kernel.call(*args)

    def _refuse(self, why):
        self.refused = True
        stats["refused"] += 1
        refusals[why] = refusals.get(why, 0) + 1
        log = os.environ.get("ZERAX_DIRECT_LOG")      # diagnostics: which and why
        if log:
            with open(log, "a") as f:
                f.write(f"{self.__name__}: {why}\n")


def _native_cacheable(record) -> bool:
    """Whether the native cache's reader (native._read_direct) accepts ``record``: arrays
    of bool, integer, float and complex dtypes, and buffers whose constant fill is a
    bool, int or float (a complex fill has no encoding there: such a kernel's program
    is not written to the native cache, rather than written without its fill)."""
    return all(np.dtype(d).kind in "biufc" for d, _ in record["args"]) and \
        all(np.dtype(d).kind in "biufc" and (fill is None or type(fill) in (bool, int, float))
            for d, _, fill in record["buffers"])


THREAD_POOL_SYMBOLS = frozenset({"numba_parallel_for", "get_num_threads"})


def start_threading_layer():
    """Start Numba's thread pool, which defines the `THREAD_POOL_SYMBOLS` that parallel
    kernels call."""
    from numba.np.ufunc.parallel import _launch_threads
    try:
        _launch_threads()
    except Exception as e:  # noqa: BLE001 - no threading layer: Numba's kernel
        raise Unsupported(f"no threading layer ({e})") from None
