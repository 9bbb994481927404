"""The CPU emitter: a kernel-IR `Kernel` to an LLVM module (llvmlite's IR builder).

Each kernel becomes two functions: ``int <name>.impl(data pointers...)``, internal, whose
output and scratch pointers are ``noalias`` (LLVM vectorises without run-time overlap
checks), and the exported entry ``<name>`` that CPython calls (see `engine.builtin`):
``PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs)``, its
arguments the input arrays then the output arrays; it reads each array's data pointer
(`engine.array_layout`), releases the GIL around the work, calls the body and returns
its first argument (a new reference), which the caller ignores.

Host calls (`kernel_ir.HostCall`): a kernel that has them gets two more arguments of
its body, the entry's ``self`` (the built-in function's bound object: the caller's
Python function ``host(k, address)``, see ``executable.py``) and the thread state the
entry saved.  A host call takes the GIL back (``PyEval_RestoreThread``), calls
``host(k, address of an int64 array of the data pointers of its buffers)``, and
releases it again; when the function raised, the body frees its scratch and returns 1
at once, and the entry returns NULL with the exception set.  So the object code holds
no address of a Python object, and the disk cache keeps it.

Semantics are NumPy's, operation by operation (the primitives' NumPy implementations
own them; ``docs/compiler.md`` has the table):

- float arithmetic is IEEE without fast-math flags: no contraction into FMA, no
  reassociation, unless the kernel is emitted with ``fast_math=True``;
- integer arithmetic wraps; ``floordiv``/``rem`` floor, and give 0 for a zero divisor,
  as NumPy's loops do (the MIN // -1 overflow gives MIN);
- float ``floordiv``/``rem`` are NumPy's ``npy_divmod``; ``max``/``min`` propagate NaN;
- shifts by a count outside [0, width) give 0 (or -1: a negative number shifted right);
- float-to-integer casts of values outside the integer's range are unspecified, as in
  NumPy (which warns); this emitter gives x86's "integer indefinite" as NumPy's scalar
  loops do;
- transcendental functions come from the math library (`mathlib`: inline float64 code,
  vectorisable) or libm, float32 computed in float64 and rounded once;
- bfloat16 (ml_dtypes') is 16 bits in memory and a float32 in registers: each operation
  computes in float32 and rounds its result to bfloat16, to nearest even (`_round_bf16`,
  what ml_dtypes' NumPy loops and JAX's CPU backend do), so eager and compiled results
  agree to the bit where the float32 operation does.

Parallel loops are outlined into ``body(env, lo, hi)`` functions that the thread pool
(`threads.py`) runs in blocks; the values they read are passed in a struct.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir

from .... import errors
from .. import kernel_ir as K
from . import blas, mathlib
from .complexmath import ComplexOps, complex_type

_I1, _I8, _I16, _I32, _I64 = (ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32),
                              ir.IntType(64))
_F16, _F32, _F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
_PTR = _I8.as_pointer()
_VOID = ir.VoidType()

# Scratch buffers of at most this many bytes live on the stack (`_body_with_temps`),
# and innermost serial loops of at most this many iterations are written out (`_for`).
STACK_TEMP_BYTES = 256
STACK_BYTES = 32768           # (all of a kernel's: the rest are allocated)
UNROLLED_TRIPS = 4

# Rows of a parallel loop that one claim of the thread pool hands out (see threads.py):
# about 64 KiB of float64 work per block.
PARALLEL_BLOCK_ELEMENTS = 8192


class EmitError(errors.ZeraxInternalError):
    """A kernel this emitter cannot compile (a bug of the lowering that made it)."""


def _is_bf16(d) -> bool:
    return d.kind == "V" and d.name == "bfloat16"


_FLOAT32 = np.dtype(np.float32)


def _compute_dtype(d):
    """The dtype an operation on ``d`` computes in: float32 for bfloat16."""
    return _FLOAT32 if _is_bf16(d) else d


def reg_type(dtype):
    """The LLVM type of a scalar value of ``dtype`` in registers."""
    d = np.dtype(dtype)
    if _is_bf16(d):             # a float32 holding a bfloat16 value (see the docstring)
        return _F32
    if d.kind == "b":
        return _I1
    if d.kind in "iu":
        return ir.IntType(d.itemsize * 8)
    if d == np.float32:
        return _F32
    if d == np.float64:
        return _F64
    if d == np.float16:         # arithmetic promoted to float32, rounded per operation
        return _F16             # (LLVM's legalisation: what NumPy's half loops do)
    if d.kind == "c" and d.itemsize in (8, 16):
        return complex_type(d)
    raise EmitError(f"the CPU emitter has no {d.name} scalars")


def mem_type(dtype):
    """The LLVM type of an element of ``dtype`` in memory (bool: one byte)."""
    d = np.dtype(dtype)
    return _I8 if d.kind == "b" else _I16 if _is_bf16(d) else reg_type(d)


def supported_dtype(dtype) -> bool:
    d = np.dtype(dtype)
    return d.kind in "biu" or _is_bf16(d) or d in (np.dtype(np.float16), np.dtype(np.float32),
                                    np.dtype(np.float64),
                                    np.dtype(np.complex64), np.dtype(np.complex128))


# Math functions of float64 taken from libm (the inline ones are `mathlib`'s).
_LIBM = {"tan": "tan", "asin": "asin", "acos": "acos", "sinh": "sinh", "cosh": "cosh",
         "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "cbrt": "cbrt",
         "exp2": "exp2", "atan2": "atan2", "pow": "pow", "erf": "erf", "erfc": "erfc",
         "lgamma": "lgamma"}
_INLINE = {"exp": mathlib._exp, "expm1": mathlib._expm1, "log": mathlib._log,
           "log1p": mathlib._log1p, "tanh": mathlib._tanh, "atan": mathlib._arctan}


class _Scope:
    """What the statements being emitted see: SSA values of `Let`s and loop indices,
    stack slots of `Declare`d vars, and the data pointers of buffers."""

    def __init__(self, values=None, slots=None, pointers=None):
        self.values = dict(values or {})
        self.slots = dict(slots or {})
        self.pointers = dict(pointers or {})
        self.grown = {}     # id of a "grow" buffer -> (pointer slot, capacity slot)


class Emitter(ComplexOps):
    """Emits one kernel into ``module``."""

    def __init__(self, kernel: K.Kernel, module: ir.Module, *, data_offset: int,
                 fast_math: bool = False):
        self.k, self.module = kernel, module
        self.data_offset = data_offset
        self.flags = ("fast",) if fast_math else ()
        self.parallel = False          # whether the kernel runs a parallel loop
        self.blas_letters = set()      # the BLAS gemm it calls: "d", "s"
        self.outlined = 0
        self.trig_args = None          # [arguments of sin/cos] while emitting a block
        self.element_loops = 0         # the loops over array elements around the code
                                       # with the branch-free sin/cos (see _parallel_for)
        self.impl = None               # the body's function (host calls are in it only)
        self.host_args = None          # (self object, thread state) in the body
        self.host_fail = None          # the body's block that returns 1 (host.raised)

    # ------------------------------------------------------------------ functions

    def build(self) -> str:
        """Emit the kernel; returns the entry's symbol."""
        k = self.k
        bufs = list(k.inputs) + list(k.outputs)
        hidden = [_PTR, _PTR] if k.host_calls else []
        impl_ty = ir.FunctionType(_I32, [mem_type(b.dtype).as_pointer() for b in bufs] +
                                  hidden)
        impl = self.impl = ir.Function(self.module, impl_ty, f"{k.name}.impl")
        impl.linkage = "internal"
        for j, b in enumerate(bufs):
            if b.kind == "out" or not _writes_inputs(k):
                impl.args[j].add_attribute("noalias")
        if hidden:
            self.host_args = impl.args[len(bufs)], impl.args[len(bufs) + 1]
        scope = _Scope(pointers={id(b): impl.args[j] for j, b in enumerate(bufs)})
        self._function(impl, scope, lambda: self._body_with_temps(k.temps, k.body, scope),
                       ret=ir.Constant(_I32, 0))
        self._entry(impl, bufs)
        return k.name

    def _function(self, fn, scope, emit_body, ret=None):
        """Emit ``fn``'s body: an entry block for stack slots, then the code (ending
        with ``return ret``, or ``return`` when it is None)."""
        saved = getattr(self, "fn", None), getattr(self, "b", None), \
            getattr(self, "alloca_b", None), getattr(self, "scope", None)
        self.fn, self.scope = fn, scope
        entry = fn.append_basic_block("entry")
        body = fn.append_basic_block("body")
        self.alloca_b = ir.IRBuilder(entry)
        self.b = ir.IRBuilder(body)
        emit_body()
        if not self.b.block.is_terminated:
            self.b.ret_void() if ret is None else self.b.ret(ret)
        self.alloca_b.branch(body)
        self.fn, self.b, self.alloca_b, self.scope = saved

    def _body_with_temps(self, temps, body, scope):
        frees = []
        stack = 0
        for t in temps:
            if t.kind == "grow":     # malloc'd, its pointer and capacity in stack slots
                self._grow_buffer(t, scope)
                continue
            if t.kind in ("hosted", "sum"):   # (the bind host call's; no memory)
                continue
            nbytes = max(t.size, 1) * np.dtype(t.dtype).itemsize
            if nbytes <= STACK_TEMP_BYTES and stack + nbytes <= STACK_BYTES:
                stack += -(-nbytes // 64) * 64
                # On the stack: LLVM keeps its elements in registers where the code
                # indexes them by constants (a loop body's small vectors), instead of
                # storing and reloading them
                slot = self.alloca_b.alloca(ir.ArrayType(mem_type(t.dtype), max(t.size, 1)),
                                            name=t.name)
                slot.align = 64
                scope.pointers[id(t)] = self.alloca_b.bitcast(
                    slot, mem_type(t.dtype).as_pointer())
                if t.fill is not None:
                    self._fill(t, scope.pointers[id(t)])
                continue
            ptr = self.b.call(self._extern("aligned_alloc", _PTR, [_I64, _I64]),
                              [ir.Constant(_I64, 64), ir.Constant(_I64, -(-nbytes // 64) * 64)])
            scope.pointers[id(t)] = self.b.bitcast(ptr, mem_type(t.dtype).as_pointer())
            frees.append(ptr)
            if t.fill is not None:
                self._fill(t, scope.pointers[id(t)])
        self._block(body)

        def free_all():
            for p in frees + [self.b.load(slot) for slot, _, _ in scope.grown.values()]:
                self.b.call(self._extern("free", _VOID, [_PTR]), [p])
        free_all()
        if self.host_fail is not None:       # a host call raised: stop, freeing the same
            self.b.ret(ir.Constant(_I32, 0))
            self.b.position_at_end(self.host_fail)
            free_all()
            self.b.ret(ir.Constant(_I32, 1))

    def _grow_buffer(self, t, scope):
        """Allocate grow buffer ``t`` (``t.shape[0]`` rows to start with): its pointer
        and capacity live in stack slots, which `_reserve` moves."""
        row = max(t.size // max(t.shape[0], 1), 1) * np.dtype(t.dtype).itemsize
        ptr = self.b.call(self._extern("malloc", _PTR, [_I64]),
                          [ir.Constant(_I64, max(t.shape[0], 1) * row)])
        slot = self.alloca_b.alloca(_PTR, name=f"{t.name}.ptr")
        cap = self.alloca_b.alloca(_I64, name=f"{t.name}.cap")
        self.b.store(ptr, slot)
        self.b.store(ir.Constant(_I64, max(t.shape[0], 1)), cap)
        scope.grown[id(t)] = (slot, cap, row)

    def _reserve(self, s):
        """``reserve(buf, rows)``: realloc to max(rows, 2 * capacity) rows when short."""
        buf, rows = s.args
        slot, cap, row = self.scope.grown[id(buf.root)]
        b = self.b
        need, have = self._expr(rows), b.load(cap)
        with b.if_then(b.icmp_signed(">", need, have), likely=False):
            twice = b.mul(have, ir.Constant(_I64, 2))
            new = b.select(b.icmp_signed(">", need, twice), need, twice)
            ptr = b.call(self._extern("realloc", _PTR, [_PTR, _I64]),
                         [b.load(slot), b.mul(new, ir.Constant(_I64, row))])
            b.store(ptr, slot)
            b.store(new, cap)

    def _pointer(self, buf):
        """The data pointer of root buffer ``buf`` here (a grow buffer's, loaded now)."""
        grown = self.scope.grown.get(id(buf))
        if grown is not None:
            return self.b.bitcast(self.b.load(grown[0]), mem_type(buf.dtype).as_pointer())
        return self.scope.pointers.get(id(buf))

    def _fill(self, buf, ptr):
        i = K.Var(f"fill.{buf.name}", K.I64)
        if isinstance(buf.fill, np.ndarray):     # a constant array: copied from a global
            data = self._constant_array(buf)

            def value():
                return self.b.load(self.b.gep(data, [ir.Constant(_I64, 0),
                                                     self.scope.values[i]], inbounds=True))
        else:
            one = self._to_mem(self._const(K.Const(buf.fill, buf.dtype)), buf.dtype)

            def value():
                return one
        self._loop(i, ir.Constant(_I64, 0), ir.Constant(_I64, buf.size),
                   lambda: self.b.store(value(), self.b.gep(ptr, [self.scope.values[i]],
                                                            inbounds=True)))

    def _constant_array(self, buf):
        """A private constant global holding ``buf.fill``'s elements (in memory form)."""
        mt = mem_type(buf.dtype)
        flat = np.ascontiguousarray(buf.fill, buf.dtype).ravel()
        if buf.dtype.kind == "b":
            elems = [ir.Constant(_I8, int(v)) for v in flat.tolist()]
        elif _is_bf16(buf.dtype):
            elems = [ir.Constant(_I16, int(v)) for v in flat.view(np.uint16).tolist()]
        else:
            elems = [self._const(K.Const(v, buf.dtype)) for v in flat.tolist()]
        ty = ir.ArrayType(mt, len(elems))
        g = ir.GlobalVariable(self.module, ty, name=f"{self.k.name}.{buf.name}.init")
        g.global_constant, g.linkage, g.initializer = True, "private", ir.Constant(ty, elems)
        return g

    def _entry(self, impl, bufs):
        """The exported CPython entry point (METH_FASTCALL)."""
        obj = _PTR
        fnty = ir.FunctionType(obj, [obj, obj.as_pointer(), _I64])
        fn = ir.Function(self.module, fnty, self.k.name)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        args = []
        for j, buf in enumerate(bufs):
            a = b.load(b.gep(fn.args[1], [ir.Constant(_I64, j)]))
            field = b.bitcast(b.gep(a, [ir.Constant(_I64, self.data_offset)]),
                              _PTR.as_pointer())
            args.append(b.bitcast(b.load(field), mem_type(buf.dtype).as_pointer()))
        # The GIL is released while the kernel runs (other Python threads go on).
        save = self._extern("PyEval_SaveThread", _PTR, [], b.module)
        restore = self._extern("PyEval_RestoreThread", _VOID, [_PTR], b.module)
        state = b.call(save, [])
        if self.host_args is None:
            b.call(impl, args)
            b.call(restore, [state])
        else:
            status = b.call(impl, args + [fn.args[0], state])
            b.call(restore, [state])
            with b.if_then(b.icmp_signed("!=", status, ir.Constant(_I32, 0)), likely=False):
                b.ret(ir.Constant(obj, None))      # the host call's exception is set
        first = b.load(fn.args[1])
        b.call(self._extern("Py_IncRef", _VOID, [obj], b.module), [first])
        b.ret(first)

    def _extern(self, name, ret, args, module=None, var_arg=False):
        module = module or self.module
        try:
            return module.get_global(name)
        except KeyError:
            return ir.Function(module, ir.FunctionType(ret, args, var_arg=var_arg), name)

    # ------------------------------------------------------------------ statements

    def _block(self, stmts):
        for s in stmts:
            if self.b.block.is_terminated:
                raise EmitError("statements after the end of a block")
            self._STMT[type(s)](self, s)

    def _let(self, s):
        self.scope.values[s.var] = self._expr(s.expr)

    def _declare(self, s):
        slot = self.alloca_b.alloca(reg_type(s.var.dtype), name=s.var.name)
        self.scope.slots[s.var] = slot
        self.b.store(self._expr(s.init), slot)

    def _assign(self, s):
        self.b.store(self._expr(s.expr), self.scope.slots[s.var])

    def _store(self, s):
        value = self._expr(s.value)
        self.b.store(self._to_mem(value, s.buf.dtype), self._address(s.buf, s.index))

    def _if(self, s):
        cond = self._expr(s.cond)
        if s.orelse:
            with self.b.if_else(cond) as (then, orelse):
                with then:
                    self._block(s.then)
                with orelse:
                    self._block(s.orelse)
        else:
            with self.b.if_then(cond):
                self._block(s.then)

    def _while(self, s):
        head = self.fn.append_basic_block("while.head")
        body = self.fn.append_basic_block("while.body")
        done = self.fn.append_basic_block("while.done")
        self.b.branch(head)
        self.b.position_at_end(head)
        self._block(s.before)
        self.b.cbranch(self._expr(s.cond), body, done)
        self.b.position_at_end(body)
        self._block(s.body)
        self.b.branch(head)
        self.b.position_at_end(done)

    def _for(self, s):
        self.element_loops += s.elements
        try:
            self._for_loop(s)
        finally:
            self.element_loops -= s.elements

    def _for_loop(self, s):
        if s.parallel:
            self._parallel_for(s)
            return
        if type(s.start) is K.Const and type(s.stop) is K.Const and \
                0 <= s.stop.value - s.start.value <= UNROLLED_TRIPS and \
                not any(type(t) in (K.For, K.While, K.Reduce) for t in walk(s.body)):
            # A few iterations, written out: their indices are constants, so small
            # (stack) buffers indexed by them stay in registers (a 3-vector in a loop
            # body), whatever the kernel's unrolling
            for i in range(s.start.value, s.stop.value):
                self.scope.values[s.var] = ir.Constant(_I64, i)
                self._block(s.body)
            return
        self._loop(s.var, self._expr(s.start), self._expr(s.stop), lambda: self._block(s.body))

    def _loop(self, var, start, stop, emit_body, step=1):
        """``for var in range(start, stop, step)`` (a positive step)."""
        b = self.b
        pre = b.block
        head = self.fn.append_basic_block(f"for.{var.name}")
        body = self.fn.append_basic_block(f"for.{var.name}.body")
        done = self.fn.append_basic_block(f"for.{var.name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64, name=var.name)
        i.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", i, stop), body, done)
        b.position_at_end(body)
        self.scope.values[var] = i
        emit_body()
        nxt = b.add(i, ir.Constant(_I64, step), flags=("nsw",))
        i.add_incoming(nxt, b.block)
        b.branch(head)
        b.position_at_end(done)

    # -- parallel loops

    def _parallel_for(self, s):
        """The loop's body outlined into ``void body(env, lo, hi)``, run by the thread
        pool over blocks of iterations (``zerax_parallel_for(body, env, n, block)``)."""
        vars_, bufs = _free_names(s.body, {s.var})
        start = self._expr(s.start)
        stop = self._expr(s.stop)
        env, struct = self._capture(vars_, bufs)
        self.outlined += 1
        body_fn = ir.Function(self.module, ir.FunctionType(_VOID, [_PTR, _I64, _I64]),
                              f"{self.k.name}.par{self.outlined}")
        body_fn.linkage = "internal"

        def emit_body():
            self._unpack(body_fn.args[0], struct, vars_, bufs)
            lo, hi = body_fn.args[1], body_fn.args[2]
            if _uses_trig(s.body) and _rerunnable(s.body):
                self._rerun_if_out_of_range(s, lo, hi)
            else:
                self._loop(s.var, lo, hi, lambda: self._block(s.body))

        self._function(body_fn, _Scope(), emit_body)
        rows = _block_rows(s)
        count = self.b.sub(stop, start)
        pfor = self._extern("zerax_parallel_for", _VOID, [_PTR, _PTR, _I64, _I64, _I64])
        self.b.call(pfor, [self.b.bitcast(body_fn, _PTR), self.b.bitcast(env, _PTR), start,
                           count, ir.Constant(_I64, rows)])
        self.parallel = True

    def _rerun_if_out_of_range(self, s, lo, hi):
        """The block with sin/cos as `mathlib.sin_cos_selects` (exact below
        `mathlib.SIN_COS_RANGE`, vectorisable: the quadrant branches of the exact code
        are mispredicted on random arguments), then, if any argument was beyond that
        range, the block again with the exact code.  Only for a body that reads no
        buffer it writes, so running it twice stores the same values."""
        b = self.b
        ok = self.alloca_b.alloca(_I1, name="trig.ok")
        b.store(ir.Constant(_I1, 1), ok)

        def fast_body():
            self.trig_args = []
            self._block(s.body)
            args, self.trig_args = self.trig_args, None
            limit = ir.Constant(_F64, mathlib.SIN_COS_RANGE)
            inside = b.load(ok)
            for a in args:
                inside = b.and_(inside, b.fcmp_ordered(
                    "<", self._intrinsic("llvm.fabs", _F64, [a]), limit))
            b.store(inside, ok)
        self._loop(s.var, lo, hi, fast_body)
        with b.if_then(b.not_(b.load(ok)), likely=False):
            self._loop(s.var, lo, hi, lambda: self._block(s.body))

    def _capture(self, vars_, bufs):
        """(pointer to a stack struct holding the values of ``vars_`` and the data
        pointers of ``bufs``, the struct's type): what an outlined body reads."""
        values = [self._var_value(v) for v in vars_] + [self._pointer(buf) for buf in bufs]
        struct = ir.LiteralStructType([v.type for v in values])
        env = self.alloca_b.alloca(struct)
        for j, v in enumerate(values):
            self.b.store(v, self.b.gep(env, [ir.Constant(_I32, 0), ir.Constant(_I32, j)]))
        return env, struct

    def _unpack(self, arg, struct, vars_, bufs):
        """In an outlined body: bind ``vars_`` and ``bufs`` from the struct at ``arg``."""
        b = self.b
        envp = b.bitcast(arg, struct.as_pointer())

        def field(j):
            return b.load(b.gep(envp, [ir.Constant(_I32, 0), ir.Constant(_I32, j)]))
        for j, v in enumerate(vars_):
            self.scope.values[v] = field(j)
        for j, buf in enumerate(bufs):
            self.scope.pointers[id(buf)] = field(len(vars_) + j)

    def _var_value(self, v):
        if v in self.scope.values:
            return self.scope.values[v]
        if v in self.scope.slots:
            return self.b.load(self.scope.slots[v])
        raise EmitError(f"{v.name} is used before it is defined")

    # -- reductions

    def _reduce(self, s):
        self.element_loops += 1     # (a reduction runs over elements)
        try:
            self._reduce_loop(s)
        finally:
            self.element_loops -= 1

    def _reduce_loop(self, s):
        slot = self.scope.slots.get(s.acc)
        if slot is None:
            raise EmitError(f"reduction into {s.acc.name}, which is not declared")
        n = self._expr(s.n)
        bf16 = _is_bf16(s.acc.dtype)    # accumulated in float32, rounded at the end
        if s.combiner == "add" and (s.acc.dtype.kind in "fc" or bf16):
            total = self._pairwise(s, n)
            acc = self.b.load(slot)
            if s.acc.dtype == np.float16:   # NumPy's half sums: in float, rounded once
                acc = self.b.fpext(acc, _F32)
                self.b.store(self.b.fptrunc(self._sum2(acc, total), reg_type(s.acc.dtype)),
                             slot)
            else:
                self.b.store(self._sum2(acc, total), slot)
        else:
            def step():
                self._block(s.body)
                v = self._expr(s.value)
                self.b.store(self._combine(s.combiner, _compute_dtype(s.acc.dtype),
                                           self.b.load(slot), v), slot)
            self._loop(s.var, ir.Constant(_I64, 0), n, step)
        if bf16:
            self.b.store(self._round_bf16(self.b.load(slot)), slot)

    def _sum2(self, x, y, b=None):
        """x + y of floats or complex numbers (the pairwise sums' addition)."""
        b = b or self.b
        if isinstance(x.type, ir.LiteralStructType):
            return self._c_make(b.fadd(b.extract_value(x, 0), b.extract_value(y, 0)),
                                b.fadd(b.extract_value(x, 1), b.extract_value(y, 1)), b)
        return b.fadd(x, y, flags=self.flags)

    def _combine(self, combiner, dtype, a, v):
        if np.dtype(dtype).kind == "c":
            return self._c_binary({"add": "add", "mul": "mul"}.get(combiner, combiner),
                                  dtype, a, v)
        if combiner in ("max", "min"):
            return self._binary(combiner, dtype, a, v)
        opname = {"add": "add", "mul": "mul", "or": "or", "and": "and"}[combiner]
        if np.dtype(dtype).kind == "b":
            opname = {"add": "or", "mul": "and"}.get(opname, opname)
        return self._binary(opname, dtype, a, v)

    def _pairwise(self, s, n):
        """NumPy's pairwise summation of the reduction's values (blocks of at most 128
        summed with 8 accumulators, 64 with 4 for complex values; longer runs split in
        halves rounded down to a multiple of 8), the values computed by the body
        inlined into the blocks.  The body is outlined with what it reads, as a
        parallel loop's is."""
        vars_, bufs = _free_names(s.body + [K.Let(K.Var("_", s.value.dtype), s.value)],
                                  {s.var})
        env, struct = self._capture(vars_, bufs)
        half = s.acc.dtype == np.float16    # (summed in float32, as NumPy's HALF loops)
        ty = _F32 if half else reg_type(s.acc.dtype)
        self.outlined += 1
        tag = f"{self.k.name}.sum{self.outlined}"
        value_fn = ir.Function(self.module, ir.FunctionType(ty, [_PTR, _I64]), f"{tag}.value")
        value_fn.linkage = "internal"
        value_fn.attributes.add("alwaysinline")

        def emit_value():
            self._unpack(value_fn.args[0], struct, vars_, bufs)
            self.scope.values[s.var] = value_fn.args[1]
            self._block(s.body)
            value = self._expr(s.value)
            self.b.ret(self.b.fpext(value, _F32) if half else value)

        self._function(value_fn, _Scope(), emit_value)
        fn = _pairwise_function(self.module, tag, value_fn, ty,
                                lambda bb, x, y: self._sum2(x, y, bb),
                                n.constant if isinstance(n, ir.Constant) else None)
        return self.b.call(fn, [self.b.bitcast(env, _PTR), ir.Constant(_I64, 0), n])

    def _call(self, s):
        routine = self._CALLS.get(s.name)
        if routine is None:
            raise EmitError(f"the CPU emitter has no routine {s.name!r}")
        routine(self, s)

    def _gemm(self, s):
        """BLAS's ``cblas_?gemm`` (row major) per batch element: C = op(A) op(B)."""
        a, bm, c = s.args
        p = s.params
        found = blas.gemm(c.dtype)
        if found is None:
            self._gemm_loops(s)
            return
        symbol, ilp64 = found
        self.blas_letters.add("d" if c.dtype == np.float64 else "s")
        it = _I64 if ilp64 else _I32
        ty = reg_type(c.dtype)
        ptr = ty.as_pointer()
        fn = self._extern(symbol, _VOID, [_I32, _I32, _I32, it, it, it, ty, ptr, it, ptr, it,
                                          ty, ptr, it])
        m, n, k = p["m"], p["n"], p["k"]
        lda = m if p["trans_a"] else k
        ldb = k if p["trans_b"] else n
        # (a view's first element: a loop carry's buffer, a row of a stacked value)
        pa, pb, pc = (self._address(x, (K.Const(0, K.I64),) * len(x.shape))
                      for x in (a, bm, c))
        i32 = lambda v: ir.Constant(_I32, v)       # noqa: E731
        iv = lambda v: ir.Constant(it, v)          # noqa: E731

        def one(bi):
            off = lambda base, size: self.b.gep(base, [self.b.mul(bi, ir.Constant(_I64, size))])  # noqa: E731,E501
            self.b.call(fn, [i32(101), i32(112 if p["trans_a"] else 111),
                             i32(112 if p["trans_b"] else 111), iv(m), iv(n), iv(k),
                             ir.Constant(ty, 1.0), off(pa, m * k), iv(lda), off(pb, k * n),
                             iv(ldb), ir.Constant(ty, 0.0), off(pc, m * n), iv(n)])
        if p["batch"] == 1:
            one(ir.Constant(_I64, 0))
        else:
            bi = K.Var(f"gemm{self.outlined}.b", K.I64)
            self.outlined += 1
            self._loop(bi, ir.Constant(_I64, 0), ir.Constant(_I64, p["batch"]),
                       lambda: one(self.scope.values[bi]))

    def _gemm_loops(self, s):
        """``gemm`` as loops, where no BLAS library was found (the same products, in
        the kernel's own order)."""
        a, bm, c = s.args
        p = s.params
        names = K.Namer()
        bi, i, j, kk = (names.var(f"gemm.{v}", K.I64) for v in "bijk")
        acc = names.var("gemm.acc", c.dtype)
        ai = (bi, kk, i) if p["trans_a"] else (bi, i, kk)
        bj = (bi, j, kk) if p["trans_b"] else (bi, kk, j)
        prod = K.op("mul", K.Load(a, ai), K.Load(bm, bj))
        body = [K.Declare(acc, K.Const(0.0, c.dtype)),
                K.Reduce(acc, "add", kk, p["k"], [], prod),
                K.Store(c, (bi, i, j), acc)]
        self._block([K.For(bi, 0, p["batch"], [K.For(i, 0, p["m"], [
            K.For(j, 0, p["n"], body)])])])

    _CALLS = {"gemm": _gemm, "reserve": _reserve}

    def _host_call(self, s):
        """``host(k, address of [data pointers of ins and outs])`` with the GIL held;
        on an exception, to the body's exit that returns 1."""
        if self.fn is not self.impl or self.host_args is None:
            raise EmitError("a host call outside the kernel's body (in a parallel loop or "
                            "a reduction's values)")
        b = self.b
        bufs = list(s.ins) + list(s.outs)
        table = self.alloca_b.alloca(ir.ArrayType(_I64, max(len(bufs), 1)),
                                     name=f"host{s.index}.ptrs")
        for j, buf in enumerate(bufs if s.role != "bind" else ()):
            p = self._address(buf, (K.Const(0, K.I64),) * len(buf.shape))
            b.store(b.ptrtoint(p, _I64), b.gep(table, [ir.Constant(_I32, 0),
                                                      ir.Constant(_I32, j)]))
        host, tstate = self.host_args
        m = self.module
        b.call(self._extern("PyEval_RestoreThread", _VOID, [_PTR]), [tstate])
        call = self._extern("PyObject_CallFunction", _PTR, [_PTR, _PTR], var_arg=True)
        res = b.call(call, [host, self._cstring("zerax.host.fmt", b"LL\0"),
                            ir.Constant(_I64, s.index), b.ptrtoint(table, _I64)])
        raised = b.icmp_unsigned("==", res, ir.Constant(_PTR, None))
        with b.if_then(b.not_(raised), likely=True):
            b.call(self._extern("Py_DecRef", _VOID, [_PTR], m), [res])
        b.call(self._extern("PyEval_SaveThread", _PTR, []), [])
        if self.host_fail is None:
            self.host_fail = self.fn.append_basic_block("host.raised")
        go_on = self.fn.append_basic_block(f"host{s.index}.done")
        b.cbranch(raised, self.host_fail, go_on)
        b.position_at_end(go_on)
        if s.role == "bind":     # the host wrote the hosted buffers' addresses
            for j, buf in enumerate(s.outs):
                at = b.load(b.gep(table, [ir.Constant(_I32, 0), ir.Constant(_I32, j)]))
                self.scope.pointers[id(buf)] = b.inttoptr(at, mem_type(buf.dtype).as_pointer())

    def _cstring(self, name, data: bytes):
        """A pointer to the module's constant C string ``data`` (made once)."""
        try:
            g = self.module.get_global(name)
        except KeyError:
            ty = ir.ArrayType(_I8, len(data))
            g = ir.GlobalVariable(self.module, ty, name)
            g.linkage, g.global_constant = "internal", True
            g.initializer = ir.Constant(ty, bytearray(data))
        return self.b.bitcast(g, _PTR)

    _STMT = {}

    # ------------------------------------------------------------------ expressions

    def _expr(self, e):
        t = type(e)
        if t is K.Var:
            return self._var_value(e)
        if t is K.Const:
            return self._const(e)
        if t is K.Load:
            root = e.buf.root
            if root.kind == "sum":     # each part's element, added in order
                return self._expr(functools.reduce(
                    lambda x, y: K.op("add", x, y),
                    [K.Load(e.buf.rebased(p), e.index) for p in root.parts]))
            v = self.b.load(self._address(e.buf, e.index))
            if e.dtype.kind == "V":       # bfloat16: its bits are a float32's upper half
                return self._bf16_widen(v)
            return self.b.trunc(v, _I1) if e.dtype.kind == "b" else v
        if t is K.Op:
            return self._op(e)
        raise EmitError(f"not a kernel-IR expression: {e!r}")

    def _const(self, e):
        if e.dtype.kind == "c":
            return self._c_const(e.value, e.dtype)
        ty = reg_type(e.dtype)
        if e.dtype.kind == "b":
            return ir.Constant(_I1, int(bool(e.value)))
        if e.dtype.kind in "iu":
            return ir.Constant(ty, int(e.value) & ((1 << ty.width) - 1))
        return ir.Constant(ty, float(e.value))

    def _to_mem(self, value, dtype):
        d = np.dtype(dtype)
        if d.kind == "V":                 # bfloat16 (a value already rounded to it)
            return self._bf16_narrow(value)
        return self.b.zext(value, _I8) if d.kind == "b" else value

    # -- bfloat16 (a float32 in registers, its upper 16 bits in memory)

    def _bf16_widen(self, bits16):
        b = self.b
        return b.bitcast(b.shl(b.zext(bits16, _I32), ir.Constant(_I32, 16)), _F32)

    def _bf16_narrow(self, x):
        b = self.b
        return b.trunc(b.lshr(b.bitcast(x, _I32), ir.Constant(_I32, 16)), _I16)

    def _round_bf16(self, x):
        """A float32 rounded to bfloat16's precision, to nearest even, as ml_dtypes
        rounds (a NaN becomes the quiet NaN of its sign; overflow gives infinity)."""
        b = self.b
        bits = b.bitcast(x, _I32)
        lsb = b.and_(b.lshr(bits, ir.Constant(_I32, 16)), ir.Constant(_I32, 1))
        up = b.add(b.add(bits, ir.Constant(_I32, 0x7FFF)), lsb)
        rounded = b.and_(up, ir.Constant(_I32, -0x10000))
        nan = b.or_(b.and_(bits, ir.Constant(_I32, -0x80000000)), ir.Constant(_I32, 0x7FC00000))
        out = b.select(b.fcmp_unordered("uno", x, x), nan, rounded)
        return b.bitcast(out, _F32)

    def _f64_to_bf16(self, x):
        """A float64 rounded to bfloat16 once (as ml_dtypes does): first to float32
        rounding to odd (truncate, then set the last bit when inexact: 24 bits are
        enough for a second rounding to 8 to be exact), then to nearest even."""
        b = self.b
        t = b.fptrunc(x, _F32)
        back = b.fpext(t, _F64)
        fabs = lambda v: self._intrinsic("llvm.fabs", v.type, [v])      # noqa: E731
        bits = b.bitcast(t, _I32)
        away = b.fcmp_ordered(">", fabs(back), fabs(x))    # rounded up in magnitude
        bits = b.select(away, b.sub(bits, ir.Constant(_I32, 1)), bits)
        inexact = b.fcmp_ordered("!=", back, x)
        bits = b.select(inexact, b.or_(bits, ir.Constant(_I32, 1)), bits)
        odd = b.select(b.fcmp_unordered("uno", x, x), t, b.bitcast(bits, _F32))
        return self._round_bf16(odd)

    def _address(self, buf, index):
        ptr = self._pointer(buf.root)
        if ptr is None:
            raise EmitError(f"buffer {buf.name} is not visible here")
        flat = None
        stride = 1
        for n, ix in zip(reversed(buf.shape), reversed(index)):
            term = self._expr(ix)
            if stride != 1:
                term = self.b.mul(term, ir.Constant(_I64, stride), flags=("nsw",))
            flat = term if flat is None else self.b.add(flat, term, flags=("nsw",))
            stride *= n
        if flat is None:
            flat = ir.Constant(_I64, 0)
        if buf.offset is not None:       # a view from a (run-time) element offset on
            flat = self.b.add(flat, self._expr(buf.offset), flags=("nsw",))
        return self.b.gep(ptr, [flat], inbounds=True)

    def _op(self, e):
        name = e.op
        arity, kind = K.OPS[name]
        if kind == "cast":
            if name == "cast":
                return self._cast(self._expr(e.args[0]), e.args[0].dtype, e.dtype)
            if name == "bitcast":
                x, src = self._expr(e.args[0]), e.args[0].dtype
                if _is_bf16(src):           # (the 16 bits in memory, as an int16)
                    return self.b.bitcast(self._bf16_narrow(x), reg_type(e.dtype))
                if _is_bf16(e.dtype):
                    return self._bf16_widen(self.b.bitcast(x, _I16))
                return self.b.bitcast(x, reg_type(e.dtype))
            if name == "complex":
                re, im = (self._cast(self._expr(x), x.dtype, reg_dtype_of_part(e.dtype))
                          for x in e.args)
                return self._c_make(re, im)
            raise EmitError(f"the CPU emitter has no {name}")
        if kind == "real":
            x = self._expr(e.args[0])
            if e.args[0].dtype.kind == "c":
                return self._c_real_part(name, x)
            if name == "imag":
                return ir.Constant(x.type, 0.0)
            return self._unary("abs", _compute_dtype(e.args[0].dtype), x) \
                if name == "cabs" else x
        if kind == "select":
            c, a, b = (self._expr(x) for x in e.args)
            return self.b.select(c, a, b)
        if e.args[0].dtype.kind == "V":      # bfloat16: computed in float32, rounded
            out = self._op_values(name, arity, kind, [self._expr(x) for x in e.args],
                                  _FLOAT32)
            return out if kind == "cmp" else self._round_bf16(out)
        return self._op_values(name, arity, kind, [self._expr(x) for x in e.args],
                               e.args[0].dtype)

    def _op_values(self, name, arity, kind, args, dtype):
        try:
            if dtype.kind == "c":
                if kind == "cmp":
                    return self._c_compare(name, *args)
                if arity == 2:
                    return self._c_binary(name, dtype, *args)
                return self._c_unary(name, dtype, args[0])
        except NotImplementedError as err:
            raise EmitError(str(err)) from None
        if kind == "cmp":
            return self._compare(name, dtype, *args)
        if name == "fma":
            fn = self.module.declare_intrinsic("llvm.fma", [args[0].type],
                                               ir.FunctionType(args[0].type, [args[0].type] * 3))
            return self.b.call(fn, args)
        if arity == 2:
            return self._binary(name, dtype, *args)
        return self._unary(name, dtype, args[0])

    # -- arithmetic

    def _binary(self, name, dtype, a, b_):
        b, d = self.b, np.dtype(dtype)
        if d.kind == "f":
            if name == "add":
                return b.fadd(a, b_, flags=self.flags)
            if name == "sub":
                return b.fsub(a, b_, flags=self.flags)
            if name == "mul":
                return b.fmul(a, b_, flags=self.flags)
            if name == "div":
                return b.fdiv(a, b_, flags=self.flags)
            if name == "fmod":
                return b.frem(a, b_)
            if name in ("floordiv", "rem"):
                return self._float_divmod(name, a, b_)
            if name in ("max", "min"):
                # np.maximum: a if (a > b or a is NaN) else b; NumPy's half loops compare
                # with >= (<=), so a tie of zeros keeps a's sign there
                op = (">" if name == "max" else "<") + ("=" if d == np.float16 else "")
                keep = b.or_(b.fcmp_ordered(op, a, b_), b.fcmp_unordered("uno", a, a))
                return b.select(keep, a, b_)
            if name in ("atan2", "pow"):
                return self._math2(name, d, a, b_)
            raise EmitError(f"{name} of {d.name}")
        signed = d.kind == "i"
        if d.kind == "b":
            name = {"add": "or", "mul": "and", "max": "or", "min": "and"}.get(name, name)
        if name == "add":
            return b.add(a, b_)
        if name == "sub":
            return b.sub(a, b_)
        if name == "mul":
            return b.mul(a, b_)
        if name == "and":
            return b.and_(a, b_)
        if name == "or":
            return b.or_(a, b_)
        if name == "xor":
            return b.xor(a, b_)
        if name in ("max", "min"):
            op = (">" if name == "max" else "<")
            cmp = b.icmp_signed(op, a, b_) if signed else b.icmp_unsigned(op, a, b_)
            return b.select(cmp, a, b_)
        if name in ("floordiv", "rem"):
            return self._int_divmod(name, signed, a, b_)
        if name in ("shl", "shr"):
            return self._shift(name, signed, a, b_)
        if name == "pow":
            return self._int_pow(signed, a, b_)
        raise EmitError(f"{name} of {d.name}")

    def _int_divmod(self, name, signed, a, d):
        """NumPy's integer floor division and remainder: 0 for a zero divisor, and
        MIN // -1 == MIN (the quotient wraps) with remainder 0."""
        b = self.b
        ty = a.type
        zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
        is_zero = b.icmp_unsigned("==", d, zero)
        if not signed:
            safe = b.select(is_zero, one, d)
            r = b.udiv(a, safe) if name == "floordiv" else b.urem(a, safe)
            return b.select(is_zero, zero, r)
        minus_one = ir.Constant(ty, -1)
        smallest = ir.Constant(ty, -(1 << (ty.width - 1)))
        overflow = b.and_(b.icmp_signed("==", a, smallest), b.icmp_signed("==", d, minus_one))
        safe = b.select(b.or_(is_zero, overflow), one, d)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        # floor: when the remainder is not 0 and its sign differs from the divisor's
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                      b.icmp_signed("<", d, zero)))
        if name == "floordiv":
            q = b.select(adjust, b.sub(q, one), q)
            return b.select(is_zero, zero, b.select(overflow, smallest, q))
        r = b.select(adjust, b.add(r, d), r)
        return b.select(is_zero, zero, r)

    def _float_divmod(self, name, a, d):
        """NumPy's ``npy_divmod`` (floor_divide, remainder) of floats."""
        b = self.b
        ty = a.type
        zero = ir.Constant(ty, 0.0)
        mod = b.frem(a, d)
        is_zero = b.fcmp_ordered("==", d, zero)
        mod_nonzero = b.fcmp_unordered("!=", mod, zero)
        signs_differ = b.icmp_unsigned("!=", b.fcmp_ordered("<", d, zero),
                                       b.fcmp_ordered("<", mod, zero))
        fix = b.and_(mod_nonzero, signs_differ)
        if name == "rem":
            fixed = b.select(fix, b.fadd(mod, d), mod)
            zero_signed = self._copysign(zero, d)
            out = b.select(mod_nonzero, fixed, zero_signed)
            return b.select(is_zero, mod, out)       # x % 0: fmod's NaN
        div = b.fdiv(b.fsub(a, mod), d)
        div = b.select(fix, b.fsub(div, ir.Constant(ty, 1.0)), div)
        floor = self._intrinsic("llvm.floor", ty, [div])
        floor = b.select(b.fcmp_ordered(">", b.fsub(div, floor), ir.Constant(ty, 0.5)),
                         b.fadd(floor, ir.Constant(ty, 1.0)), floor)
        div_nonzero = b.fcmp_unordered("!=", div, zero)
        out = b.select(div_nonzero, floor, self._copysign(zero, b.fdiv(a, d)))
        return b.select(is_zero, b.fdiv(a, d), out)

    def _shift(self, name, signed, a, n):
        b = self.b
        ty = a.type
        width = ir.Constant(ty, ty.width)
        in_range = b.icmp_unsigned("<", n, width)      # (a negative count is huge unsigned)
        safe = b.select(in_range, n, ir.Constant(ty, 0))
        if name == "shl":
            return b.select(in_range, b.shl(a, safe), ir.Constant(ty, 0))
        if signed:
            beyond = b.select(b.icmp_signed("<", a, ir.Constant(ty, 0)), ir.Constant(ty, -1),
                              ir.Constant(ty, 0))
            return b.select(in_range, b.ashr(a, safe), beyond)
        return b.select(in_range, b.lshr(a, safe), ir.Constant(ty, 0))

    def _int_pow(self, signed, a, n):
        """Integer power by squaring (a negative exponent gives 0, or +-1 for a base of
        +-1, as NumPy's scalar power would if it did not raise)."""
        b = self.b
        ty = a.type
        fn_name = f"zerax.ipow.{'i' if signed else 'u'}{ty.width}"
        try:
            fn = self.module.get_global(fn_name)
        except KeyError:
            fn = ir.Function(self.module, ir.FunctionType(ty, [ty, ty]), fn_name)
            fn.linkage = "internal"
            fb = ir.IRBuilder(fn.append_basic_block("entry"))
            x, e = fn.args
            head = fn.append_basic_block("loop")
            body = fn.append_basic_block("body")
            done = fn.append_basic_block("done")
            pre = fb.block
            if signed:
                neg = fb.icmp_signed("<", e, ir.Constant(ty, 0))
                negb = fn.append_basic_block("negative")
                fb.cbranch(neg, negb, head)
                fb.position_at_end(negb)
                one = ir.Constant(ty, 1)
                is_one = fb.icmp_signed("==", x, one)
                is_m1 = fb.icmp_signed("==", x, ir.Constant(ty, -1))
                odd = fb.trunc(e, _I1)
                m1 = fb.select(odd, ir.Constant(ty, -1), one)
                fb.ret(fb.select(is_one, one, fb.select(is_m1, m1, ir.Constant(ty, 0))))
            else:
                fb.branch(head)
            fb.position_at_end(head)
            acc = fb.phi(ty)
            base = fb.phi(ty)
            exp_ = fb.phi(ty)
            acc.add_incoming(ir.Constant(ty, 1), pre)
            base.add_incoming(x, pre)
            exp_.add_incoming(e, pre)
            fb.cbranch(fb.icmp_unsigned("!=", exp_, ir.Constant(ty, 0)), body, done)
            fb.position_at_end(body)
            odd = fb.trunc(exp_, _I1)
            acc.add_incoming(fb.select(odd, fb.mul(acc, base), acc), body)
            base.add_incoming(fb.mul(base, base), body)
            exp_.add_incoming(fb.lshr(exp_, ir.Constant(ty, 1)), body)
            fb.branch(head)
            fb.position_at_end(done)
            fb.ret(acc)
        return b.call(fn, [a, n])

    def _unary(self, name, dtype, x):
        b, d = self.b, np.dtype(dtype)
        ty = x.type
        if name == "neg":
            return b.fneg(x, flags=self.flags) if d.kind == "f" else b.neg(x)
        if name == "not":
            return b.not_(x)
        if name == "abs":
            if d.kind == "f":
                return self._intrinsic("llvm.fabs", ty, [x])
            if d.kind == "u" or d.kind == "b":
                return x
            return b.select(b.icmp_signed("<", x, ir.Constant(ty, 0)), b.neg(x), x)
        if name == "sign":
            if d.kind == "f":   # NumPy: +-1 for nonzero, +0.0 for +-0.0, NaN for NaN
                one, zero = ir.Constant(ty, 1.0), ir.Constant(ty, 0.0)
                s = b.select(b.fcmp_ordered(">", x, zero), one,
                             b.select(b.fcmp_ordered("<", x, zero), ir.Constant(ty, -1.0),
                                      zero))
                return b.select(b.fcmp_unordered("uno", x, x), x, s)
            zero = ir.Constant(ty, 0)
            if d.kind in "ub":
                return b.zext(b.icmp_unsigned("!=", x, zero), ty) if d.kind == "u" else x
            pos = b.zext(b.icmp_signed(">", x, zero), ty)
            neg = b.zext(b.icmp_signed("<", x, zero), ty)
            return b.sub(pos, neg)
        if d.kind != "f":
            raise EmitError(f"{name} of {d.name}")
        if name in ("floor", "ceil", "rint", "trunc", "sqrt"):
            return self._intrinsic(f"llvm.{name}", ty, [x])
        return self._math1(name, d, x)

    def _compare(self, name, dtype, a, b_=None):
        b, d = self.b, np.dtype(dtype)
        if name == "isnan":
            return b.fcmp_unordered("uno", a, a) if d.kind == "f" else ir.Constant(_I1, 0)
        if name == "isfinite":
            if d.kind != "f":
                return ir.Constant(_I1, 1)
            inf = ir.Constant(a.type, float("inf"))
            return b.fcmp_ordered("<", self._intrinsic("llvm.fabs", a.type, [a]), inf)
        op = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[name]
        if d.kind == "f":
            return b.fcmp_unordered(op, a, b_) if name == "ne" else b.fcmp_ordered(op, a, b_)
        if d.kind == "i":
            return b.icmp_signed(op, a, b_)
        return b.icmp_unsigned(op, a, b_)

    # -- casts

    def _cast(self, x, src, dst):
        b = self.b
        s, t = np.dtype(src), np.dtype(dst)
        if s == t:
            return x
        if _is_bf16(s):                 # its float32 value, exactly
            return self._cast(x, _FLOAT32, t)
        if _is_bf16(t):                 # rounded once, from float32 or float64
            if s == _FLOAT32:
                return self._round_bf16(x)
            if s == np.float16:         # (exact in float32)
                return self._round_bf16(b.fpext(x, _F32))
            return self._f64_to_bf16(self._cast(x, s, np.dtype(np.float64)))
        if s.kind == "c" or t.kind == "c":
            return self._c_cast(x, s, t)
        tt = reg_type(t)
        if t.kind == "b":
            if s.kind == "f":
                return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
            return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))
        if s.kind == "b":
            return b.uitofp(x, tt) if t.kind == "f" else b.zext(x, tt)
        if s.kind in "iu" and t.kind in "iu":
            if tt.width < x.type.width:
                return b.trunc(x, tt)
            if tt.width > x.type.width:
                return b.sext(x, tt) if s.kind == "i" else b.zext(x, tt)
            return x
        if s.kind in "iu" and t.kind == "f":
            return b.sitofp(x, tt) if s.kind == "i" else b.uitofp(x, tt)
        if s.kind == "f" and t.kind == "f":
            return self._fp_convert(x, tt)
        if s == np.float16:         # through float32 (every half is a float32 exactly)
            x = b.fpext(x, _F32)
        return self._float_to_int(x, t)

    def _fp_convert(self, x, tt):
        """A float to another float type; double to half goes through float (a direct
        truncation is a runtime-library call the process may not have)."""
        b = self.b
        if tt is _F16 and x.type is _F64:
            x = b.fptrunc(x, _F32)
        if x.type is tt:
            return x
        rank = {_F16: 0, _F32: 1, _F64: 2}
        return b.fptrunc(x, tt) if rank[tt] < rank[x.type] else b.fpext(x, tt)

    def _float_to_int(self, x, t):
        """x86's conversion (what NumPy's loops do): truncation toward zero; values
        outside the target's range, NaN and infinities give the "integer indefinite"
        (MIN of int32/int64; narrower types convert through int32, unsigned 64-bit
        through the split at 2^63)."""
        b = self.b
        tt = reg_type(t)

        def convert(v, width):
            ty = ir.IntType(width)
            limit = float(2 ** (width - 1))
            ok = b.and_(b.fcmp_ordered(">=", v, ir.Constant(v.type, -limit)),
                        b.fcmp_ordered("<", v, ir.Constant(v.type, limit)))
            safe = b.select(ok, v, ir.Constant(v.type, 0.0))
            return b.select(ok, b.fptosi(safe, ty), ir.Constant(ty, -(1 << (width - 1))))
        if t.kind == "i" and tt.width == 64:
            return convert(x, 64)
        if t == np.dtype(np.uint64):
            two63 = ir.Constant(x.type, float(2 ** 63))
            high = b.fcmp_ordered(">=", x, two63)
            lowpart = convert(x, 64)
            highpart = b.xor(convert(b.fsub(x, two63), 64), ir.Constant(_I64, -(1 << 63)))
            return b.select(high, highpart, lowpart)
        if t == np.dtype(np.uint32):
            return b.trunc(convert(x, 64), tt)
        v = convert(x, 32)
        return v if tt.width == 32 else b.trunc(v, tt)

    # -- math functions

    def _intrinsic(self, name, ty, args):
        fn = self.module.declare_intrinsic(name, [ty])
        return self.b.call(fn, args)

    def _copysign(self, mag, sign):
        fn = self.module.declare_intrinsic("llvm.copysign", [mag.type],
                                           ir.FunctionType(mag.type, [mag.type] * 2))
        return self.b.call(fn, [mag, sign])

    def _math1(self, name, d, x):
        """A float function of one argument, computed in float64 (float32 and float16
        round once)."""
        b = self.b
        wide = b.fpext(x, _F64) if d != np.float64 else x
        if name in _INLINE:        # branch-free: inline, so the loop vectorises
            y = _INLINE[name](mathlib._F(b, wide)).v
        elif name in ("sin", "cos") and self.trig_args is not None:
            # in a block that is run again with the exact code when an argument is
            # out of range (`_rerun_if_out_of_range`): branch-free, vectorisable
            self.trig_args.append(wide)
            y = mathlib.sin_cos_selects(mathlib._F(b, wide), name == "sin").v
        elif name in ("sin", "cos"):
            # Outside loops over elements (a scalar loop carry: cos(x) fed back into
            # x) the latency of one call is what counts: first a cell of width 1/16
            # and a short polynomial (a scalar fori_loop: 8.0 -> 6.7 ms); in element
            # loops the quadrant code alone, which compiles faster (25 ms a kernel).
            want_sin, cells = name == "sin", self.element_loops == 0
            fn = mathlib.module_function(
                self.module, f"zerax.{name}{'.scalar' if cells else ''}",
                lambda bb, v: mathlib._emit_sin_cos(bb, v, want_sin, cells=cells))
            y = b.call(fn, [wide])
        elif name == "cbrt" or name in _LIBM:
            y = b.call(self._extern(_LIBM[name], _F64, [_F64]), [wide])
        else:
            raise EmitError(f"the CPU math library has no {name}")
        return self._fp_convert(y, reg_type(d))

    def _math2(self, name, d, a, c):
        b = self.b
        if d != np.float64:
            a, c = b.fpext(a, _F64), b.fpext(c, _F64)
        y = b.call(self._extern(_LIBM[name], _F64, [_F64, _F64]), [a, c])
        return self._fp_convert(y, reg_type(d))


Emitter._STMT = {K.Let: Emitter._let, K.Declare: Emitter._declare, K.Assign: Emitter._assign,
                 K.Store: Emitter._store, K.For: Emitter._for, K.If: Emitter._if,
                 K.While: Emitter._while, K.Reduce: Emitter._reduce, K.Call: Emitter._call,
                 K.HostCall: Emitter._host_call}


def _uses_trig(stmts) -> bool:
    def trig(e):
        t = type(e)
        if t is K.Op:
            return (e.op in ("sin", "cos") and e.dtype.kind == "f") or any(map(trig, e.args))
        if t is K.Load:
            return any(map(trig, e.index))
        return False
    for s in walk(stmts):
        t = type(s)
        if (t is K.Let and trig(s.expr)) or (t is K.Store and trig(s.value)):
            return True
    return False


def _rerunnable(stmts) -> bool:
    """Whether running ``stmts`` twice stores what running them once does: plain
    `Let`s and `Store`s (and loops of them) that read no buffer they write."""
    written, loaded = set(), set()
    for s in walk(stmts):
        t = type(s)
        if t is K.Let:
            _loads(s.expr, loaded)
        elif t is K.Store:
            written.add(id(s.buf.root))
            for e in (s.value, *s.index):
                _loads(e, loaded)
        elif t is not K.For:
            return False
    return not (loaded & written)


def _loads(e, out):
    t = type(e)
    if t is K.Load:
        out.add(id(e.buf.root))
        for i in e.index:
            _loads(i, out)
    elif t is K.Op:
        for a in e.args:
            _loads(a, out)


def reg_dtype_of_part(dtype):
    """The real dtype of a complex dtype's parts."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.complex64 else np.dtype(np.float64)


def _writes_inputs(kernel) -> bool:
    """Whether any statement stores into an input buffer (an update in place)."""
    inputs = {id(b) for b in kernel.inputs}
    return any(type(s) is K.Store and id(s.buf.root) in inputs for s in walk(kernel.body))


def walk(stmts):
    """Every statement of ``stmts``, nested ones too (in order)."""
    for s in stmts:
        yield s
        t = type(s)
        if t is K.For or t is K.Reduce:
            yield from walk(s.body)
        elif t is K.If:
            yield from walk(s.then)
            yield from walk(s.orelse)
        elif t is K.While:
            yield from walk(s.before)
            yield from walk(s.body)


def _expr_names(e, vars_, bufs):
    t = type(e)
    if t is K.Var:
        vars_.append(e)
    elif t is K.Load:
        _buffer_names(e.buf, vars_, bufs)
        for i in e.index:
            _expr_names(i, vars_, bufs)
    elif t is K.Op:
        for a in e.args:
            _expr_names(a, vars_, bufs)


def _buffer_names(buf, vars_, bufs):
    root = buf.root
    bufs.extend(root.parts if root.kind == "sum" else (buf,))
    if buf.offset is not None:           # a view's offset reads vars too
        _expr_names(buf.offset, vars_, bufs)


def _free_names(stmts, bound):
    """The vars ``stmts`` read that they do not define (beyond ``bound``), and the
    buffers they touch, each once, in order of first use."""
    used, bufs, defined = [], [], set(bound)
    for s in walk(stmts):
        t = type(s)
        if t is K.Let or t is K.Declare:
            _expr_names(s.expr if t is K.Let else s.init, used, bufs)
            defined.add(s.var)
        elif t is K.Assign:
            _expr_names(s.expr, used, bufs)
            used.append(s.var)
        elif t is K.Store:
            _buffer_names(s.buf, used, bufs)
            for i in s.index:
                _expr_names(i, used, bufs)
            _expr_names(s.value, used, bufs)
        elif t is K.For:
            _expr_names(s.start, used, bufs)
            _expr_names(s.stop, used, bufs)
            defined.add(s.var)
        elif t is K.If:
            _expr_names(s.cond, used, bufs)
        elif t is K.While:
            _expr_names(s.cond, used, bufs)
        elif t is K.Reduce:
            _expr_names(s.n, used, bufs)
            _expr_names(s.value, used, bufs)
            used.append(s.acc)
            defined.add(s.var)
        elif t is K.Call:
            for a in s.args:
                if isinstance(a, K.Buffer):
                    _buffer_names(a, used, bufs)
                else:
                    _expr_names(a, used, bufs)
    vars_ = list(dict.fromkeys(v for v in used if v not in defined))
    seen, out_bufs = set(), []
    for b in bufs:
        b = b.root
        if id(b) not in seen:
            seen.add(id(b))
            out_bufs.append(b)
    return vars_, out_bufs


def _block_rows(loop) -> int:
    """Iterations of a parallel loop per block: ~`PARALLEL_BLOCK_ELEMENTS` elements of
    work, counting the innermost loops' trip counts of its body (a body whose loops'
    bounds are not constants is already a block: one iteration per claim)."""
    if any(type(s) is K.For and not (type(s.start) is K.Const and type(s.stop) is K.Const)
           for s in walk(loop.body)):
        return 1
    work = 1
    for s in loop.body:
        if type(s) is K.For and type(s.stop) is K.Const and type(s.start) is K.Const:
            work = max(work, s.stop.value - s.start.value) * \
                max(1, _inner_work(s.body))
    return max(1, PARALLEL_BLOCK_ELEMENTS // max(work, 1))


def _inner_work(stmts) -> int:
    work = 1
    for s in stmts:
        if type(s) is K.For and type(s.stop) is K.Const and type(s.start) is K.Const:
            work = max(work, (s.stop.value - s.start.value) * _inner_work(s.body))
    return work


def _pairwise_function(module, tag, value_fn, ty, add, count=None):
    """``T sum(env, lo, n)``: NumPy's pairwise summation of ``value(env, lo + i)`` for i
    in [0, n) (see `Emitter._pairwise`).  NumPy sums a complex array as its interleaved
    real and imaginary parts: blocks of 64 values with 4 accumulators each, split at
    half the parts rounded down to a multiple of 8 (`_pairwise_shape`).  ``count``: n,
    when it is known here (a loop of a static length, the usual case): a run of one
    block is then that block alone, made for its length, with no split and no branch
    LLVM would have to remove."""
    lanes, most = _pairwise_shape(ty)
    fnty = ir.FunctionType(ty, [_PTR, _I64, _I64])
    block = ir.Function(module, fnty, f"{tag}.block")
    block.linkage = "internal"
    one_block = count is not None and count <= most
    _emit_pairwise_block(block, value_fn, ty, add, lanes, count if one_block else None)
    if one_block:
        return block
    fn = ir.Function(module, fnty, f"{tag}.pairwise")
    fn.linkage = "internal"
    env, lo, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    leaf, split = fn.append_basic_block("leaf"), fn.append_basic_block("split")
    b.cbranch(b.icmp_signed("<=", n, ir.Constant(_I64, most)), leaf, split)
    b.position_at_end(leaf)
    b.ret(b.call(block, [env, lo, n]))
    b.position_at_end(split)
    if lanes == 8:   # n // 2 rounded down to a multiple of 8
        half = b.sdiv(n, ir.Constant(_I64, 2))
        half = b.sub(half, b.srem(half, ir.Constant(_I64, 8)))
    else:            # (2n parts // 2, rounded down to a multiple of 8) / 2 values
        half = b.sdiv(b.sub(n, b.srem(n, ir.Constant(_I64, 8))), ir.Constant(_I64, 2))
    left = b.call(fn, [env, lo, half])
    right = b.call(fn, [env, b.add(lo, half), b.sub(n, half)])
    b.ret(add(b, left, right))
    return fn


def _pairwise_shape(ty):
    """(accumulators, values per block) of NumPy's pairwise sum of values of ``ty``:
    8 and 128 for real numbers; 4 and 64 for complex ones (8 and 128 of their parts)."""
    return (4, 64) if isinstance(ty, ir.LiteralStructType) else (8, 128)


def _keep_rolled(latch):
    """Mark the loop whose back edge is the branch ``latch`` not to be unrolled: its
    body is unrolled by hand already (a pairwise block's 8 accumulators), and LLVM's
    unrolling of a static 64-value run wrote the value's code 64 times, most of a
    LayerNorm gradient kernel's compile, for no measured speed."""
    module = latch.parent.parent.module
    option = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    # a loop's ID is a node whose first operand is itself, one per loop (the unique
    # string keeps llvmlite from sharing one node between loops)
    loop_id = module.add_metadata([option, ir.MetaDataString(
        module, f"zerax.loop.{len(module.metadata)}")])
    loop_id.operands = (loop_id, option)
    latch.set_metadata("llvm.loop", loop_id)


def _emit_pairwise_block(fn, value_fn, ty, add, lanes, count=None):
    """The body of a block (`_pairwise_shape`): fewer than ``lanes`` values summed in
    order, else ``lanes`` accumulators over the multiple of ``lanes``, their tree, then
    the rest in order (NumPy's ``pairwise_sum``).  The accumulators start at -0.0 and
    take the first values in the loop: -0.0 + v is v exactly, so this is NumPy's result
    with the value's code inlined ``lanes`` times fewer.  ``count``: the block's length
    when static (else the n argument)."""
    env, lo, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one, step = (ir.Constant(_I64, v) for v in (0, 1, lanes))
    neg_zero = (ir.Constant(ty, [ir.Constant(t, -0.0) for t in ty.elements])
                if isinstance(ty, ir.LiteralStructType) else ir.Constant(ty, -0.0))
    if count is not None:
        n = ir.Constant(_I64, count)

    def value(i):
        return b.call(value_fn, [env, b.add(lo, i)])

    def loop(start, stop, width, inits, rolled):
        """``for i in range(start, stop, width)``: accumulator k (from ``inits[k]``)
        adds value(i + k); the accumulators after the loop."""
        pre = b.block
        head = fn.append_basic_block("sum.head")
        body = fn.append_basic_block("sum.body")
        done = fn.append_basic_block("sum.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64)
        i.add_incoming(start, pre)
        accs = []
        for init in inits:
            phi = b.phi(ty)
            phi.add_incoming(init, pre)
            accs.append(phi)
        b.cbranch(b.icmp_signed("<", i, stop), body, done)
        b.position_at_end(body)
        for k, phi in enumerate(accs):
            phi.add_incoming(add(b, phi, value(b.add(i, ir.Constant(_I64, k)))), body)
        i.add_incoming(b.add(i, ir.Constant(_I64, width)), body)
        latch = b.branch(head)
        if rolled:
            _keep_rolled(latch)
        b.position_at_end(done)
        return accs

    def sequential(res, start):
        return loop(start, n, 1, [res], rolled=False)[0]

    def short():   # n < 8: in order (an empty sum is -0.0, as NumPy's)
        if count == 0:
            b.ret(neg_zero)
            return
        if count is None:
            empty, some = fn.append_basic_block("empty"), fn.append_basic_block("some")
            b.cbranch(b.icmp_signed("<=", n, zero), empty, some)
            b.position_at_end(empty)
            b.ret(neg_zero)
            b.position_at_end(some)
        b.ret(sequential(value(zero), one))

    def long():
        stop = b.sub(n, b.srem(n, step)) if count is None else \
            ir.Constant(_I64, count - count % lanes)
        r = loop(zero, stop, lanes, [neg_zero] * lanes, rolled=True)
        res = add(b, add(b, r[0], r[1]), add(b, r[2], r[3]))
        if lanes == 8:
            res = add(b, res, add(b, add(b, r[4], r[5]), add(b, r[6], r[7])))
        b.ret(res if count is not None and count % lanes == 0 else sequential(res, stop))

    if count is not None:
        (short if count < lanes else long)()
        return
    short_bb, long_bb = fn.append_basic_block("short"), fn.append_basic_block("long")
    b.cbranch(b.icmp_signed("<", n, step), short_bb, long_bb)
    b.position_at_end(short_bb)
    short()
    b.position_at_end(long_bb)
    long()
