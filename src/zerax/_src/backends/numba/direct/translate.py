"""Generated kernels compiled straight to machine code with llvmlite, without Numba.

Numba spends most of a cold compile on work zerax does not need: per kernel, half a
second of context set-up in a fresh process, then bytecode analysis, type inference,
its Python-side lowering and the LLVM of its runtime and CPython wrapper (issue 20:
a three-kernel MLP step took 3.9 s, of which LLVM proper was a third).  The generated
kernels are a small, regular subset of Python whose types zerax already knows, so
this module translates a serial kernel's source (its AST) directly to LLVM IR and
lets LLVM optimise and emit it: tens of milliseconds a kernel.

What the translator accepts is the subset the code generator writes: static shapes,
C-contiguous arrays, ``for ... in range``/``while``/``if`` statements, scalar arithmetic
with Numba's typing rules, element loads and stores, whole-array allocations
(``np.empty``/``np.full``/``np.zeros``/``np.copy``), reshapes and leading-axis views,
casts (``np.float32(x)``), the float math of ``np``/``math``/``vecmath``.  Anything
else raises `Unsupported`, and that kernel is compiled by Numba as before, so the
subset can grow one construct at a time without changing any result.  Where Numba's
semantics are subtle (mixed-sign integer promotion, float32 with int64, float ``//``)
the translator refuses rather than guesses.

Calling convention: the machine code is ``void kernel(PyObject *x0, ...)`` taking the
argument arrays, then one new array per allocation of the kernel, made by a small
Python wrapper with NumPy before the call (``ctypes``, which releases the GIL).  Each
array's data pointer is read from its ``PyArrayObject`` at the offset `guard.layout`
measured.  The wrapper checks that the arguments are the C-contiguous arrays of the
dtypes and shapes the code was made for (others: a copy, or a new specialisation).
Returned arrays are the wrapper's own buffers or the arguments, viewed with the
returned shape; a kernel whose result may be one of several buffers at run time has
the machine code report which (its data pointer).
"""

from __future__ import annotations

import ast
import hashlib
import math
import os
import threading

import numpy as np
from llvmlite import ir

from .. import guard, lower_reduce, memory, threads
from ..machine import target_machine


class Unsupported(Exception):
    """A construct this translator does not compile: Numba compiles the kernel."""


# Counters for tests and diagnostics: kernels compiled here, and refused (with why).
stats = {"compiled": 0, "refused": 0}
refusals: dict = {}

_I1, _I8, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_BYTE_PTR = _I8.as_pointer()
_FAST = ("contract",)          # as compile.KERNEL_FASTMATH: FMA contraction only

_INT_KINDS = "iu"


def _reg_type(dt: np.dtype):
    """The LLVM type of a scalar of ``dt`` in registers (bool: i1)."""
    if dt.kind == "b":
        return _I1
    if dt.kind in _INT_KINDS:
        return ir.IntType(8 * dt.itemsize)
    if dt == np.float64:
        return _F64
    if dt == np.float32:
        return _F32
    raise Unsupported(f"dtype {dt}")


def _mem_type(dt: np.dtype):
    """The LLVM type of an element of a ``dt`` array (bool: one byte)."""
    return _I8 if dt.kind == "b" else _reg_type(dt)


_B = np.dtype(np.bool_)
_I64D = np.dtype(np.int64)
_U64D = np.dtype(np.uint64)
_F64D = np.dtype(np.float64)
_F32D = np.dtype(np.float32)
_DTYPE_NAMES = {"bool_": _B, "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
                "int32": np.dtype(np.int32), "int64": _I64D, "uint8": np.dtype(np.uint8),
                "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32),
                "uint64": _U64D, "float32": _F32D, "float64": _F64D, "intp": _I64D}


# ------------------------------------------------------------------------- values

class _Scalar:
    """A scalar being computed: its LLVM value, dtype, and Python value when known."""

    __slots__ = ("const", "dt", "nonneg", "v")

    def __init__(self, v, dt, const=None, nonneg=False):
        self.v, self.dt, self.const, self.nonneg = v, dt, const, nonneg


class _Array:
    """A C-contiguous array: pointer to its first element, dtype, static shape, and
    where its memory comes from (``(source, static element offset or None)``)."""

    __slots__ = ("dt", "origin", "ptr", "shape")

    def __init__(self, ptr, dt, shape, origin):
        self.ptr, self.dt, self.shape, self.origin = ptr, dt, tuple(shape), origin

    @property
    def size(self):
        return math.prod(self.shape)


class _DType:
    __slots__ = ("dt",)

    def __init__(self, dt):
        self.dt = dt


class _Tuple:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = tuple(items)


def _const(dt, value):
    dt = np.dtype(dt)
    value = dt.type(value)
    if dt.kind == "b":
        return _Scalar(ir.Constant(_I1, int(bool(value))), dt, bool(value))
    if dt.kind in _INT_KINDS:
        return _Scalar(ir.Constant(_reg_type(dt), int(value)), dt, int(value),
                       nonneg=int(value) >= 0)
    return _Scalar(ir.Constant(_reg_type(dt), float(value)), dt, float(value))


def _literal(value):
    """A Python literal as Numba types it: bool, int64 or float64."""
    if isinstance(value, bool):
        return _const(_B, value)
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise Unsupported("an integer literal beyond int64")
        return _const(_I64D, value)
    if isinstance(value, float):
        return _const(_F64D, value)
    raise Unsupported(f"literal {value!r}")


# ------------------------------------------------------------------- type rules

def _arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """Numba's result type of ``+ - * // % & | ^`` on scalars of ``a`` and ``b``
    (refusing the mixes whose rules are subtle)."""
    if a.kind == "b" and b.kind == "b":
        return _I64D
    a = _I64D if a.kind == "b" else a
    b = _I64D if b.kind == "b" else b
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.itemsize >= b.itemsize else b
        if _F64D in (a, b):
            return _F64D
        raise Unsupported(f"{a} with {b} (Numba's float32-integer promotion)")
    if a.kind != b.kind:
        raise Unsupported(f"{a} with {b} (mixed-sign integers)")
    return _I64D if a.kind == "i" else _U64D


def _truediv_type(a, b):
    t = _arith_type(a, b)
    return t if t.kind == "f" else _F64D


# ---------------------------------------------------------------- the translator

_ALLOCATIONS = ("empty", "zeros", "full", "copy")


class _Kernel:
    """Translates one generated kernel function (AST) for given argument specs."""

    def __init__(self, fn: ast.FunctionDef, helpers: dict, specs, module, name,
                 layout: dict):
        self.fn, self.helpers, self.specs = fn, helpers, specs
        self.module, self.name = module, name
        self.layout = layout
        self.buffers: list = []            # (kind, dtype, shape, fill) per allocation
        self.slots: dict = {}              # name -> (alloca, kind)
        self.kinds: dict = {}              # name -> dtype (scalar) or (dtype, shape)
        self.origins: dict = {}            # name -> set of origins (arrays)
        self.loop_depth = 0
        self.branch_depth = 0
        self.in_parallel = False
        self.parallel = False              # whether the kernel calls the thread pool
        self.parallel_bodies: list = []
        self.nonneg_names: set = set()     # integer names known to be >= 0    # (function, [(param index, array origin)])
        self.needs_ret = False             # whether a return's array is known only at run time
        self.renamed: dict = {}            # parameter -> the name of its new value
        self.loops: list = []              # (continue block, break block)
        self.writes_args = False
        self.returns = None

    # -- module and function

    def build(self):
        params = [a.arg for a in self.fn.args.args]
        if len(params) != len(self.specs) or self.fn.args.vararg or self.fn.args.kwarg:
            raise Unsupported("the kernel's parameters")
        # The body is translated into an internal function of data pointers (arguments',
        # then one per allocation the source writes, then the slots of returns known only
        # at run time), so that the pointers of new arrays can be declared noalias (LLVM
        # then vectorises without run-time overlap checks); the exported function reads
        # the pointers from the array objects and calls it.
        self.n_alloc = sum(1 for n in ast.walk(self.fn) if isinstance(n, ast.Call)
                           and isinstance(n.func, ast.Attribute)
                           and isinstance(n.func.value, ast.Name) and n.func.value.id == "np"
                           and n.func.attr in _ALLOCATIONS)
        impl_ty = ir.FunctionType(ir.VoidType(),
                                  [_mem_type(dt).as_pointer() for dt, _ in self.specs] +
                                  [_BYTE_PTR] * self.n_alloc + [_I64.as_pointer()])
        self.impl = self.func = ir.Function(self.module, impl_ty, f"{self.name}.impl")
        self.impl.linkage = "internal"
        entry = self.func.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(entry)
        body = self.func.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.params = ()
        self.ret_slots = self.func.args[-1]
        for k, (p, (dt, shape)) in enumerate(zip(params, self.specs)):
            self._bind(p, _Array(self.func.args[k], dt, shape, (("arg", k), 0)))
        self.params = params
        self.assigned = _assignment_counts(self.fn)
        self.induction = frozenset(
            n.target.id for n in ast.walk(self.fn) if isinstance(n, ast.For)
            and isinstance(n.target, ast.Name) and self.assigned[n.target.id] == 1)
        self._block(self.fn.body)
        if not self.b.block.is_terminated:
            raise Unsupported("a kernel that does not end with a return")
        self.alloca_builder.branch(body)
        nargs = len(self.specs)
        for k in range(len(self.buffers)):       # new arrays: no other pointer reaches them
            self.impl.args[nargs + k].add_attribute("noalias")
        if not self.writes_args:                 # only read: overlapping arguments are fine
            for k in range(nargs):
                self.impl.args[k].add_attribute("noalias")
        for fn, captured in self.parallel_bodies:
            sources = [c[1][0] for c in captured if c[1] is not None]
            for index, origin in captured:
                if origin is None or origin[0] == "dynamic" or sources.count(origin[0]) != 1:
                    continue
                if origin[0][0] == "buf" or not self.writes_args:
                    fn.args[index].add_attribute("noalias")
        self._export()
        return self

    def _export(self):
        """The entry point, called as a CPython function (``PyObject *name(PyObject
        *closure, PyObject *args, PyObject *kws)``, made a built-in function by
        ``numba._dynfunc.make_function``): ``args`` is the tuple ``(x0, ..., buffers,
        returns, spec)``; it reads the data pointers, calls the body and returns
        ``buffers`` (a new reference).  ``spec`` is an int64 array: ``[0]`` (the caller
        has checked the arguments) or ``[1, then for each argument the addresses of
        ndarray and of its dtype, its ndim and its shape]``: arguments that are not those
        C-contiguous, aligned arrays (read from the array headers, `guard.layout`) make
        it return ``spec`` instead, having run nothing."""
        nargs = len(self.specs)
        fn = ir.Function(self.module, ir.FunctionType(_BYTE_PTR, [_BYTE_PTR] * 3), self.name)
        self.b = b = ir.IRBuilder(fn.append_basic_block("entry"))

        def item(tup, k):
            slot = b.gep(tup, [ir.Constant(_I64, self.layout["tuple_items"] + 8 * k)])
            return b.load(b.bitcast(slot, _BYTE_PTR.as_pointer()))

        def field(obj, offset, ty):
            return b.load(b.bitcast(b.gep(obj, [ir.Constant(_I64, offset)]), ty.as_pointer()))

        def incref(obj):
            refcnt = b.bitcast(obj, _I64.as_pointer())        # ob_refcnt: Py_INCREF
            b.store(b.add(b.load(refcnt), ir.Constant(_I64, 1)), refcnt)

        objs = [item(fn.args[1], k) for k in range(nargs + 3)]
        spec = self._data_pointer(objs[nargs + 2], _I64D)
        run = fn.append_basic_block("run")
        refuse = fn.append_basic_block("refuse")
        lay, i32 = self.layout, ir.IntType(32)
        first = fn.append_basic_block("check")
        b.cbranch(b.icmp_signed("!=", b.load(spec), ir.Constant(_I64, 0)), first, run)
        b.position_at_end(first)
        at = 1

        def expect(value, at):
            return b.icmp_signed("==", value, b.load(b.gep(spec, [ir.Constant(_I64, at)])))

        for k, (_, shape) in enumerate(self.specs):
            x = objs[k]
            header = fn.append_basic_block(f"header{k}")
            b.cbranch(expect(b.ptrtoint(field(x, lay["type"], _BYTE_PTR), _I64), at),
                      header, refuse)
            b.position_at_end(header)      # an ndarray: its header's fields can be read
            good = expect(b.ptrtoint(field(x, lay["descr"], _BYTE_PTR), _I64), at + 1)
            good = b.and_(good, expect(b.sext(field(x, lay["nd"], i32), _I64), at + 2))
            flags = b.and_(field(x, lay["flags"], i32), ir.Constant(i32, 0x101))
            good = b.and_(good, b.icmp_signed("==", flags, ir.Constant(i32, 0x101)))
            dims_block = fn.append_basic_block(f"dims{k}")
            b.cbranch(good, dims_block, refuse)
            b.position_at_end(dims_block)      # (read once the ndim is right)
            dims = field(x, lay["dims"], _I64.as_pointer())
            same = ir.Constant(_I1, 1)
            for j in range(len(shape)):
                same = b.and_(same, expect(b.load(b.gep(dims, [ir.Constant(_I64, j)])),
                                           at + 3 + j))
            after = fn.append_basic_block(f"check{k + 1}") if k + 1 < nargs else run
            b.cbranch(same, after, refuse)
            b.position_at_end(after)
            at += 3 + len(shape)
        if not nargs:
            b.branch(run)
        b.position_at_end(refuse)
        incref(objs[nargs + 2])
        b.ret(objs[nargs + 2])
        b.position_at_end(run)
        ptrs = [self._data_pointer(objs[k], dt) for k, (dt, _) in enumerate(self.specs)]
        for k in range(self.n_alloc):
            if k < len(self.buffers):
                obj = item(objs[nargs], k)
                ptrs.append(b.bitcast(self._data_pointer(obj, self.buffers[k][0]), _BYTE_PTR))
            else:
                ptrs.append(ir.Constant(_BYTE_PTR, None))
        ptrs.append(self._data_pointer(objs[nargs + 1], _I64D) if self.needs_ret
                    else ir.Constant(_I64.as_pointer(), None))
        b.call(self.impl, ptrs)
        incref(objs[nargs])
        b.ret(objs[nargs])

    def _data_pointer(self, obj, dt):
        b = self.b
        field = b.gep(obj, [ir.Constant(_I64, self.layout["data"])])
        data = b.load(b.bitcast(field, _BYTE_PTR.as_pointer()))
        return b.bitcast(data, _mem_type(dt).as_pointer())

    # -- variables

    def _slot(self, name, kind):
        if name in self.slots:
            slot, old = self.slots[name]
            if old != kind:
                raise Unsupported(f"{name!r} changes type ({old} -> {kind})")
            return slot
        if isinstance(kind, tuple):
            ty = _mem_type(kind[0]).as_pointer()
        else:
            ty = _reg_type(kind)
        slot = self.alloca_builder.alloca(ty, name=name)
        self.slots[name] = (slot, kind)
        return slot

    def _bind(self, name, val):
        name = self.renamed.get(name, name)
        if name in self.params and name in self.slots:
            # ``a0 = a0[()]`` (a 0-d argument read as a scalar) at the kernel's top: the
            # name stands for the new value from here on
            if self.loop_depth or self.branch_depth or name in self.renamed:
                raise Unsupported("an argument rebound inside a loop or branch")
            self.renamed[name] = f"{name}.value"
            name = self.renamed[name]
        if isinstance(val, _Scalar):
            self.b.store(val.v, self._slot(name, val.dt))
            self.kinds.setdefault(name, val.dt)
            if val.nonneg and self.assigned[name] == 1:
                # a non-negative index needs no wrap-around select (which would keep
                # LLVM from seeing consecutive loads: no vector loads)
                self.nonneg_names.add(name)
        elif isinstance(val, _Array):
            kind = (val.dt, val.shape)
            self.b.store(val.ptr, self._slot(name, kind))
            self.origins.setdefault(name, set()).add(val.origin)
        else:
            raise Unsupported(f"binding {type(val).__name__} to {name!r}")

    def _load_name(self, name):
        name = self.renamed.get(name, name)
        if name in self.slots:
            slot, kind = self.slots[name]
            v = self.b.load(slot)
            if isinstance(kind, tuple):
                # the origin of a name bound once is that binding's; of any other, known
                # only at run time (loops swap buffers)
                origins = self.origins.get(name, set())
                origin = next(iter(origins)) if len(origins) == 1 and \
                    self.assigned[name] <= 1 else ("dynamic", None)
                return _Array(v, kind[0], kind[1], origin)
            return _Scalar(v, kind,
                           nonneg=name in self.induction or name in self.nonneg_names)
        raise Unsupported(f"name {name!r}")

    # -- statements

    def _block(self, stmts):
        for s in stmts:
            if self.b.block.is_terminated:
                return
            self._stmt(s)

    def _stmt(self, s):
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and \
                    self.helpers.get(s.value.func.id) is memory.hugepages:
                return self._hugepages(s.value)
            raise Unsupported("an expression statement")
        if isinstance(s, ast.Pass):
            return
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise Unsupported("chained assignment")
            return self._assign(s.targets[0], self._expr(s.value))
        if isinstance(s, ast.AugAssign):
            return self._augassign(s)
        if isinstance(s, ast.For):
            return self._for(s)
        if isinstance(s, ast.While):
            return self._while(s)
        if isinstance(s, ast.If):
            return self._if(s)
        if isinstance(s, ast.Return):
            return self._return(s)
        if isinstance(s, ast.Break) and self.loops:
            self.b.branch(self.loops[-1][1])
            return
        if isinstance(s, ast.Continue) and self.loops:
            self.b.branch(self.loops[-1][0])
            return
        raise Unsupported(f"statement {type(s).__name__}")

    def _assign(self, target, val):
        if isinstance(target, ast.Name):
            return self._bind(target.id, val)
        if isinstance(target, ast.Tuple):
            if not isinstance(val, _Tuple) or len(val.items) != len(target.elts):
                raise Unsupported("tuple unpacking")
            for t, v in zip(target.elts, val.items):
                self._assign(t, v)
            return None
        if isinstance(target, ast.Subscript):
            arr = self._expr(target.value)
            if not isinstance(arr, _Array):
                raise Unsupported("a store into a non-array")
            ptr = self._element(arr, target.slice)
            if not isinstance(val, _Scalar):
                raise Unsupported("an array stored into an array")
            self._note_write(arr)
            self.b.store(self._to_mem(self._cast(val, arr.dt)), ptr)
            return None
        raise Unsupported(f"assignment to {type(target).__name__}")

    def _note_write(self, arr):
        # a store through a name that may hold an argument: the caller's array must be
        # written, so the wrapper may not pass a contiguous copy of it
        if arr.origin[0] == "dynamic" or arr.origin[0][0] == "arg":
            self.writes_args = True

    def _augassign(self, s):
        op = s.op
        if isinstance(s.target, ast.Name):
            cur = self._load_name(s.target.id)
            return self._bind(s.target.id, self._binop(op, cur, self._expr(s.value)))
        if isinstance(s.target, ast.Subscript):
            arr = self._expr(s.target.value)
            if not isinstance(arr, _Array):
                raise Unsupported("an augmented store into a non-array")
            ptr = self._element(arr, s.target.slice)
            cur = self._from_mem(self.b.load(ptr), arr.dt)
            new = self._binop(op, cur, self._expr(s.value))
            self._note_write(arr)
            self.b.store(self._to_mem(self._cast(new, arr.dt)), ptr)
            return None
        raise Unsupported("augmented assignment target")

    def _for(self, s):
        it = s.iter
        if s.orelse or not isinstance(s.target, ast.Name) or not isinstance(it, ast.Call) \
                or not isinstance(it.func, ast.Name) or \
                it.func.id not in ("range", "prange") or it.keywords:
            raise Unsupported("a for loop other than over range(...)")
        if it.func.id == "prange" and not self.in_parallel:
            if len(it.args) != 1:
                raise Unsupported("prange(start, stop)")
            return self._prange(s, self._int_scalar(self._expr(it.args[0])))
        args = [self._int_scalar(self._expr(a)) for a in it.args]
        args = [a if a.dt == _I64D else self._cast(a, _I64D) for a in args]
        if len(args) == 1:
            start, stop, step = _literal(0), args[0], 1
        elif len(args) in (2, 3):
            start, stop = args[0], args[1]
            step = 1
            if len(args) == 3:
                if args[2].const is None or args[2].const == 0:
                    raise Unsupported("a range with a run-time or zero step")
                step = args[2].const
        else:
            raise Unsupported("range arity")
        name = s.target.id
        slot = self._slot(name, _I64D)
        self.kinds.setdefault(name, _I64D)
        if not (start.nonneg and step > 0):
            self.induction = self.induction - {name}
        b = self.b
        counter = self.alloca_builder.alloca(_I64, name=f"{name}.next")
        b.store(start.v, counter)
        head = self.func.append_basic_block(f"{name}.head")
        body = self.func.append_basic_block(f"{name}.body")
        step_block = self.func.append_basic_block(f"{name}.step")
        done = self.func.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.load(counter)
        more = b.icmp_signed("<" if step > 0 else ">", i, stop.v)
        b.cbranch(more, body, done)
        b.position_at_end(body)
        b.store(i, slot)
        b.store(b.add(i, ir.Constant(_I64, step), flags=("nsw",)), counter)
        self.loop_depth += 1
        self.loops.append((step_block, done))
        self._block(s.body)
        self.loops.pop()
        self.loop_depth -= 1
        if not self.b.block.is_terminated:
            self.b.branch(step_block)
        self.b.position_at_end(step_block)
        self.b.branch(head)
        self.b.position_at_end(done)

    def _while(self, s):
        if s.orelse:
            raise Unsupported("while ... else")
        head = self.func.append_basic_block("while.head")
        body = self.func.append_basic_block("while.body")
        done = self.func.append_basic_block("while.done")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self._truth(self._expr(s.test)), body, done)
        self.b.position_at_end(body)
        self.loop_depth += 1
        self.loops.append((head, done))
        self._block(s.body)
        self.loops.pop()
        self.loop_depth -= 1
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

    def _if(self, s):
        cond = self._truth(self._expr(s.test))
        then = self.func.append_basic_block("if.then")
        other = self.func.append_basic_block("if.else")
        done = self.func.append_basic_block("if.done")
        self.b.cbranch(cond, then, other)
        self.b.position_at_end(then)
        self.branch_depth += 1
        self._block(s.body)
        if not self.b.block.is_terminated:
            self.b.branch(done)
        self.b.position_at_end(other)
        self._block(s.orelse)
        self.branch_depth -= 1
        if not self.b.block.is_terminated:
            self.b.branch(done)
        self.b.position_at_end(done)

    def _return(self, s):
        if self.loop_depth or self.returns is not None:
            raise Unsupported("a return inside a loop, or two returns")
        val = self._expr(s.value) if s.value is not None else _Tuple(())
        items = val.items if isinstance(val, _Tuple) else (val,)
        returns = []
        for k, item in enumerate(items):
            if not isinstance(item, _Array):
                raise Unsupported("a kernel returning a scalar")
            if item.origin[0] == "dynamic" or item.origin[1] != 0:
                slot = self.b.gep(self.ret_slots, [ir.Constant(_I64, k)])
                self.b.store(self.b.ptrtoint(item.ptr, _I64), slot)
                self.needs_ret = True
            returns.append(item)
        self.returns = (returns, isinstance(val, _Tuple))
        self.b.ret_void()

    # -- parallel loops

    def _prange(self, s, count):
        """``for w in prange(n): body`` on Numba's thread pool: the body becomes a
        function of the gufunc kind that the threading layer's ``parallel_for`` calls
        with a range of ``w`` (passed as the value of its one "array" pointer, stepped by
        1), the values it uses passed in a struct.  Names the body binds are its own;
        one bound before the loop and rebound in it (a reduction) is refused."""
        body_names = _bound_names(s.body) | {s.target.id}
        used = {n.id for n in ast.walk(ast.Module(body=s.body, type_ignores=[]))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if any(self.renamed.get(n, n) in self.slots for n in body_names):
            raise Unsupported("a prange loop that rebinds an outer name (a reduction)")
        captured = sorted(n for n in used - body_names if self.renamed.get(n, n) in self.slots)
        values = [self._load_name(n) for n in captured]
        types_ = [v.ptr.type if isinstance(v, _Array) else v.v.type for v in values]
        struct = ir.LiteralStructType(types_)
        b = self.b
        env = self.alloca_builder.alloca(struct)
        for k, v in enumerate(values):
            b.store(v.ptr if isinstance(v, _Array) else v.v,
                    b.gep(env, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), k)]))
        body_fn = self._parallel_body(s, captured, values, struct)
        # parallel_for(fn, args, dims, steps, data, inner_ndim, array_count, num_threads)
        i64p = _I64.as_pointer()
        args = self.alloca_builder.alloca(_BYTE_PTR)
        dims = self.alloca_builder.alloca(_I64)
        steps = self.alloca_builder.alloca(_I64)
        b.store(ir.Constant(_BYTE_PTR, None), args)
        b.store(self._as_int64(count), dims)
        b.store(ir.Constant(_I64, 1), steps)
        nthreads = b.call(self._extern("get_num_threads", _I64, []), [])
        pfor = self._extern("numba_parallel_for", ir.VoidType(),
                            [_BYTE_PTR, _BYTE_PTR.as_pointer(), i64p, i64p, _BYTE_PTR,
                             _I64, _I64, ir.IntType(32)])
        positive = b.icmp_signed(">", self._as_int64(count), ir.Constant(_I64, 0))
        with b.if_then(positive):
            b.call(pfor, [b.bitcast(body_fn, _BYTE_PTR), args, dims, steps,
                          b.bitcast(env, _BYTE_PTR), ir.Constant(_I64, 0),
                          ir.Constant(_I64, 1), b.trunc(nthreads, ir.IntType(32))])
        self.parallel = True

    def _parallel_body(self, s, captured, values, struct):
        """The gufunc-style function ``parallel_for`` calls (``args[0]`` is the first
        ``w`` of its range, ``dims[0]`` the count, ``data`` the struct of captured
        values), which calls the body's own function: ``body(start, count, captured
        values...)``, whose array pointers `build` may declare noalias."""
        i64p = _I64.as_pointer()
        types_ = [v.ptr.type if isinstance(v, _Array) else v.v.type for v in values]
        tag = len(self.module.globals)
        impl = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_I64, _I64] + types_),
                           f"{self.name}.prange{tag}.body")
        impl.linkage = "internal"
        self.parallel_bodies.append(
            (impl, [(2 + k, v.origin) for k, v in enumerate(values) if isinstance(v, _Array)]))
        saved = (self.func, self.b, self.alloca_builder, self.slots, self.kinds,
                 self.origins, self.renamed, self.loops, self.loop_depth, self.branch_depth)
        self.func = impl
        self.alloca_builder = ir.IRBuilder(impl.append_basic_block("entry"))
        body = impl.append_basic_block("body")
        self.b = b = ir.IRBuilder(body)
        self.slots, self.kinds, self.origins, self.renamed = {}, {}, {}, {}
        self.loops, self.loop_depth, self.branch_depth = [], 1, 0
        self.in_parallel = True
        for k, (name, v) in enumerate(zip(captured, values)):
            if isinstance(v, _Array):
                self._store_new(name, (v.dt, v.shape), impl.args[2 + k])
                self.origins[name] = {v.origin}
            else:
                self._store_new(name, v.dt, impl.args[2 + k])
        start, n = impl.args[0], impl.args[1]
        counter = self.alloca_builder.alloca(_I64)
        b.store(ir.Constant(_I64, 0), counter)
        head = impl.append_basic_block("prange.head")
        loop = impl.append_basic_block("prange.body")
        done = impl.append_basic_block("prange.done")
        b.branch(head)
        b.position_at_end(head)
        j = b.load(counter)
        b.cbranch(b.icmp_signed("<", j, n), loop, done)
        b.position_at_end(loop)
        self._store_new(s.target.id, _I64D, b.add(start, j))
        b.store(b.add(j, ir.Constant(_I64, 1)), counter)
        self.loops.append((head, done))
        self._block(s.body)
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)
        self.b.ret_void()
        self.alloca_builder.branch(body)
        (self.func, self.b, self.alloca_builder, self.slots, self.kinds, self.origins,
         self.renamed, self.loops, self.loop_depth, self.branch_depth) = saved
        self.in_parallel = False
        shim = ir.Function(self.module, ir.FunctionType(
            ir.VoidType(), [_BYTE_PTR.as_pointer(), i64p, i64p, _BYTE_PTR]),
            f"{self.name}.prange{tag}")
        shim.linkage = "internal"
        sb = ir.IRBuilder(shim.append_basic_block("entry"))
        env = sb.bitcast(shim.args[3], struct.as_pointer())
        fields = [sb.load(sb.gep(env, [ir.Constant(ir.IntType(32), 0),
                                       ir.Constant(ir.IntType(32), k)]))
                  for k in range(len(values))]
        sb.call(impl, [sb.ptrtoint(sb.load(shim.args[0]), _I64), sb.load(shim.args[1]),
                       *fields])
        sb.ret_void()
        return shim

    def _store_new(self, name, kind, value):
        self.b.store(value, self._slot(name, kind))
        self.kinds.setdefault(name, kind)

    def _extern(self, symbol, ret, params):
        try:
            return self.module.get_global(symbol)
        except KeyError:
            return ir.Function(self.module, ir.FunctionType(ret, params), symbol)

    def _hugepages(self, call):
        """``madvise(MADV_HUGEPAGE)`` on the whole 2 MiB pages inside an array (as
        memory.hugepages does in Numba-compiled kernels)."""
        arr = self._expr(call.args[0])
        if not isinstance(arr, _Array):
            raise Unsupported("_hugepages of a scalar")
        b, page = self.b, 1 << 21
        start = b.ptrtoint(arr.ptr, _I64)
        end = b.add(start, ir.Constant(_I64, arr.size * arr.dt.itemsize))
        mask = ir.Constant(_I64, ~(page - 1))
        lo = b.and_(b.add(start, ir.Constant(_I64, page - 1)), mask)
        hi = b.and_(end, mask)
        madvise = self._extern("madvise", ir.IntType(32),
                               [_BYTE_PTR, _I64, ir.IntType(32)])
        with b.if_then(b.icmp_unsigned(">", hi, lo)):
            b.call(madvise, [b.inttoptr(lo, _BYTE_PTR), b.sub(hi, lo),
                             ir.Constant(ir.IntType(32), 14)])    # MADV_HUGEPAGE

    # -- expressions

    def _expr(self, e):
        if isinstance(e, ast.Constant):
            return _literal(e.value)
        if isinstance(e, ast.Name):
            if e.id in ("True", "False"):
                return _literal(e.id == "True")
            return self._load_name(e.id)
        if isinstance(e, ast.Tuple):
            return _Tuple(self._expr(x) for x in e.elts)
        if isinstance(e, ast.BinOp):
            return self._binop(e.op, self._expr(e.left), self._expr(e.right))
        if isinstance(e, ast.UnaryOp):
            return self._unary(e.op, self._expr(e.operand))
        if isinstance(e, ast.Compare):
            return self._compare(e)
        if isinstance(e, ast.BoolOp):
            vals = [self._truth(self._expr(x)) for x in e.values]
            out = vals[0]
            for v in vals[1:]:
                out = self.b.and_(out, v) if isinstance(e.op, ast.And) else self.b.or_(out, v)
            return _Scalar(out, _B)
        if isinstance(e, ast.IfExp):
            return self._select(self._truth(self._expr(e.test)), self._expr(e.body),
                                self._expr(e.orelse))
        if isinstance(e, ast.Subscript):
            arr = self._expr(e.value)
            if not isinstance(arr, _Array):
                raise Unsupported("indexing a non-array")
            return self._subscript(arr, e.slice)
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.Attribute):
            return self._attribute(e)
        raise Unsupported(f"expression {type(e).__name__}")

    def _attribute(self, e):
        if isinstance(e.value, ast.Name) and e.value.id == "np" and e.attr in _DTYPE_NAMES:
            return _DType(_DTYPE_NAMES[e.attr])
        if isinstance(e.value, ast.Name) and e.value.id == "np" and e.attr == "inf":
            return _const(_F64D, math.inf)
        if isinstance(e.value, ast.Name) and e.value.id == "np" and e.attr == "nan":
            return _const(_F64D, math.nan)
        if isinstance(e.value, ast.Name) and e.value.id == "math" and e.attr in ("pi", "e"):
            return _const(_F64D, getattr(math, e.attr))
        raise Unsupported(f"attribute {ast.unparse(e)}")

    # indexing

    def _indices(self, arr, sl):
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if any(isinstance(x, ast.Slice) for x in items):
            raise Unsupported("slicing")
        if len(items) > len(arr.shape):
            raise Unsupported("too many indices")
        out = []
        for x, n in zip(items, arr.shape):
            i = self._int_scalar(self._expr(x))
            v = self._as_int64(i)
            if i.const is not None:
                c = i.const + n if i.const < 0 else i.const
                v = ir.Constant(_I64, c)
            elif not i.nonneg:      # Numba wraps negative indices
                neg = self.b.icmp_signed("<", v, ir.Constant(_I64, 0))
                v = self.b.select(neg, self.b.add(v, ir.Constant(_I64, n)), v)
            out.append(v)
        return out

    def _offset(self, arr, idx):
        off = None
        for k, i in enumerate(idx):
            stride = math.prod(arr.shape[k + 1:])
            term = i if stride == 1 else self.b.mul(i, ir.Constant(_I64, stride),
                                                    flags=("nsw",))
            off = term if off is None else self.b.add(off, term, flags=("nsw",))
        return off if off is not None else ir.Constant(_I64, 0)

    def _element(self, arr, sl):
        idx = self._indices(arr, sl)
        if len(idx) != len(arr.shape):
            raise Unsupported("a store into a view")
        return self.b.gep(arr.ptr, [self._offset(arr, idx)], inbounds=True)

    def _subscript(self, arr, sl):
        if isinstance(sl, ast.Tuple) and not sl.elts:
            if arr.shape:
                raise Unsupported("x[()] of an array with axes")
            return self._from_mem(self.b.load(arr.ptr), arr.dt)
        idx = self._indices(arr, sl)
        ptr = self.b.gep(arr.ptr, [self._offset(arr, idx)], inbounds=True)
        if len(idx) == len(arr.shape):
            return self._from_mem(self.b.load(ptr), arr.dt)
        static = all(isinstance(i, ir.Constant) for i in idx)
        src, off = arr.origin
        if static and off is not None and src != "dynamic":
            stride = [math.prod(arr.shape[k + 1:]) for k in range(len(idx))]
            off = off + sum(int(i.constant) * s for i, s in zip(idx, stride))
        else:
            off = None
        return _Array(ptr, arr.dt, arr.shape[len(idx):], (src, off))

    # scalars

    def _from_mem(self, v, dt):
        if dt.kind == "b":
            return _Scalar(self.b.icmp_unsigned("!=", v, ir.Constant(_I8, 0)), dt)
        return _Scalar(v, dt)

    def _to_mem(self, s):
        return self.b.zext(s.v, _I8) if s.dt.kind == "b" else s.v

    def _truth(self, s):
        if not isinstance(s, _Scalar):
            raise Unsupported("truth of a non-scalar")
        return self._cast(s, _B).v

    def _int_scalar(self, s):
        if not isinstance(s, _Scalar) or s.dt.kind not in "iub":
            raise Unsupported("a non-integer index or bound")
        return s

    def _as_int64(self, s):
        return self._cast(s, _I64D).v if s.dt != _I64D else s.v

    def _cast(self, s, dt):
        """Numba's conversion of scalar ``s`` to ``dt`` (as ``np.<dt>(s)`` or a store)."""
        if not isinstance(s, _Scalar):
            raise Unsupported("a cast of a non-scalar")
        dt = np.dtype(dt)
        src = s.dt
        if src == dt:
            return s
        if s.const is not None:
            with np.errstate(all="ignore"):
                try:
                    value = dt.type(s.const)
                except (OverflowError, ValueError):
                    value = None
            if dt.kind in "iu" and src.kind == "f":
                value = None          # float -> int of a constant: as the hardware does
            if value is not None:
                return _const(dt, value.item())
        b = self.b
        to = _reg_type(dt)
        v = s.v
        if dt.kind == "b":
            if src.kind == "f":
                return _Scalar(b.fcmp_unordered("!=", v, ir.Constant(v.type, 0.0)), dt)
            return _Scalar(b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)), dt)
        if src.kind == "b":
            if dt.kind == "f":
                return _Scalar(b.uitofp(v, to), dt)
            return _Scalar(b.zext(v, to), dt, nonneg=True)
        if src.kind == "f" and dt.kind == "f":
            return _Scalar(b.fpext(v, to) if dt.itemsize > src.itemsize else b.fptrunc(v, to), dt)
        if src.kind in _INT_KINDS and dt.kind == "f":
            return _Scalar((b.sitofp if src.kind == "i" else b.uitofp)(v, to), dt)
        if src.kind == "f":
            return _Scalar((b.fptosi if dt.kind == "i" else b.fptoui)(v, to), dt)
        # integer -> integer
        if dt.itemsize == src.itemsize:
            return _Scalar(v, dt, nonneg=s.nonneg and dt.kind == src.kind)
        if dt.itemsize < src.itemsize:
            return _Scalar(b.trunc(v, to), dt)
        ext = b.sext if src.kind == "i" else b.zext
        return _Scalar(ext(v, to), dt, nonneg=s.nonneg)

    def _binop(self, op, x, y):
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported("arithmetic on arrays")
        b = self.b
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and x.dt.kind == "b" \
                and y.dt.kind == "b":
            fn = {ast.BitAnd: b.and_, ast.BitOr: b.or_, ast.BitXor: b.xor}[type(op)]
            return _Scalar(fn(x.v, y.v), _B)
        if isinstance(op, ast.Div):
            t = _truediv_type(x.dt, y.dt)
            return _Scalar(b.fdiv(self._cast(x, t).v, self._cast(y, t).v, flags=_FAST), t)
        if isinstance(op, ast.Pow):
            t = _arith_type(x.dt, y.dt)
            if t.kind != "f":
                raise Unsupported("integer **")
            fn = b.module.declare_intrinsic("llvm.pow", [_reg_type(t)])
            return _Scalar(b.call(fn, [self._cast(x, t).v, self._cast(y, t).v]), t)
        t = _arith_type(x.dt, y.dt)
        xv, yv = self._cast(x, t).v, self._cast(y, t).v
        if t.kind == "f":
            fns = {ast.Add: b.fadd, ast.Sub: b.fsub, ast.Mult: b.fmul}
            if type(op) not in fns:
                raise Unsupported(f"float {type(op).__name__}")
            return _Scalar(fns[type(op)](xv, yv, flags=_FAST), t)
        signed = t.kind == "i"
        both = x.nonneg and y.nonneg     # (indices: in range, so no overflow)
        if isinstance(op, ast.Add):
            return _Scalar(b.add(xv, yv), t, nonneg=both)
        if isinstance(op, ast.Sub):
            return _Scalar(b.sub(xv, yv), t)
        if isinstance(op, ast.Mult):
            return _Scalar(b.mul(xv, yv), t, nonneg=both)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            return _Scalar(self._int_divmod(isinstance(op, ast.FloorDiv), xv, yv, signed), t)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            fn = {ast.BitAnd: b.and_, ast.BitOr: b.or_, ast.BitXor: b.xor}[type(op)]
            return _Scalar(fn(xv, yv), t)
        if isinstance(op, ast.LShift):
            return _Scalar(b.shl(xv, yv), t)
        if isinstance(op, ast.RShift):
            return _Scalar((b.ashr if signed else b.lshr)(xv, yv), t)
        raise Unsupported(f"operator {type(op).__name__}")

    def _int_divmod(self, floor_div, x, y, signed):
        """Python's floored ``//`` or ``%`` of integers, 0 for a zero divisor (Numba's
        'numpy' error model), with no undefined LLVM division."""
        b = self.b
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
        is_zero = b.icmp_unsigned("==", y, zero)
        safe_y = b.select(is_zero, one, y)
        if not signed:
            r = (b.udiv if floor_div else b.urem)(x, safe_y)
            return b.select(is_zero, zero, r)
        minus_one = b.icmp_signed("==", safe_y, ir.Constant(_I64, -1))
        safe_y = b.select(minus_one, one, safe_y)      # no INT_MIN / -1 trap
        q = b.sdiv(x, safe_y)
        r = b.srem(x, safe_y)
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                      b.icmp_signed("<", safe_y, zero)))
        if floor_div:
            out = b.select(adjust, b.sub(q, one), q)
            out = b.select(minus_one, b.sub(zero, x), out)
        else:
            out = b.select(adjust, b.add(r, safe_y), r)
            out = b.select(minus_one, zero, out)
        return b.select(is_zero, zero, out)

    def _unary(self, op, x):
        if not isinstance(x, _Scalar):
            raise Unsupported("a unary operator on an array")
        b = self.b
        if isinstance(op, ast.Not):
            return _Scalar(b.not_(self._truth(x)), _B)
        if isinstance(op, ast.USub):
            if x.const is not None and x.dt.kind in "if":
                return _const(x.dt, -x.const) if x.dt.kind == "f" or \
                    -x.const >= -(1 << 63) else _literal(-x.const)
            if x.dt.kind == "f":
                return _Scalar(b.fneg(x.v), x.dt)
            t = _arith_type(x.dt, x.dt)
            return _Scalar(b.neg(self._cast(x, t).v), t)
        if isinstance(op, ast.UAdd):
            return x
        if isinstance(op, ast.Invert) and x.dt.kind in _INT_KINDS:
            t = _arith_type(x.dt, x.dt)
            return _Scalar(b.not_(self._cast(x, t).v), t)
        raise Unsupported(f"unary {type(op).__name__}")

    def _compare(self, e):
        if len(e.ops) != 1:
            raise Unsupported("a chained comparison")
        x, y = self._expr(e.left), self._expr(e.comparators[0])
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported("a comparison of arrays")
        op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
              ast.NotEq: "!="}.get(type(e.ops[0]))
        if op is None:
            raise Unsupported(f"comparison {type(e.ops[0]).__name__}")
        if x.dt.kind == "b" and y.dt.kind == "b":
            return _Scalar(self.b.icmp_unsigned(op, x.v, y.v), _B)
        t = _arith_type(x.dt, y.dt)
        xv, yv = self._cast(x, t).v, self._cast(y, t).v
        if t.kind == "f":
            fn = self.b.fcmp_unordered if op == "!=" else self.b.fcmp_ordered
            return _Scalar(fn(op, xv, yv), _B)
        fn = self.b.icmp_signed if t.kind == "i" else self.b.icmp_unsigned
        return _Scalar(fn(op, xv, yv), _B)

    def _select(self, cond, x, y):
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported("a conditional expression of arrays")
        if x.dt != y.dt:
            if x.const is not None and y.const is None:
                x = self._cast(x, y.dt)
            elif y.const is not None and x.const is None:
                y = self._cast(y, x.dt)
            else:
                raise Unsupported("a conditional expression of two types")
        return _Scalar(self.b.select(cond, x.v, y.v), x.dt)

    # calls

    def _call(self, e):
        f = e.func
        if isinstance(f, ast.Attribute) and f.attr == "reshape" and not e.keywords:
            arr = self._expr(f.value)
            if isinstance(arr, _Array):
                shape = self._shape(e.args[0] if len(e.args) == 1 else ast.Tuple(e.args))
                if math.prod(shape) != arr.size:
                    raise Unsupported("a reshape that changes the size")
                return _Array(arr.ptr, arr.dt, shape, arr.origin)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            mod, name = f.value.id, f.attr
            if mod == "np":
                return self._np_call(name, e)
            if mod == "math":
                return self._math_call(name, e)
            raise Unsupported(f"call {ast.unparse(f)}")
        if isinstance(f, ast.Name):
            if e.keywords:
                raise Unsupported("keyword arguments")
            if f.id in ("min", "max") and len(e.args) == 2:
                x, y = (self._expr(a) for a in e.args)
                if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)) or \
                        x.dt.kind == "f" or y.dt.kind == "f":
                    raise Unsupported("min/max of floats")
                t = _arith_type(x.dt, y.dt)
                xv, yv = self._cast(x, t).v, self._cast(y, t).v
                cmp = self.b.icmp_signed if t.kind == "i" else self.b.icmp_unsigned
                pick_y = cmp("<" if f.id == "min" else ">", yv, xv)
                nonneg = x.nonneg and y.nonneg if f.id == "min" else x.nonneg or y.nonneg
                return _Scalar(self.b.select(pick_y, yv, xv), t, nonneg=nonneg)
            if f.id == "abs" and len(e.args) == 1:
                return self._abs(self._expr(e.args[0]))
            if f.id in ("int", "float", "bool") and len(e.args) == 1:
                x = self._expr(e.args[0])
                if not isinstance(x, _Scalar) or f.id == "int" and x.dt.kind == "u":
                    raise Unsupported(f"{f.id}() of {getattr(x, 'dt', x)}")
                return self._cast(x, {"int": _I64D, "float": _F64D, "bool": _B}[f.id])
            helper = self.helpers.get(f.id)
            if helper is threads.task_count and not e.args:
                return _Scalar(self.b.call(self._extern("get_num_threads", _I64, []), []),
                               _I64D)
            if helper is threads.claim_block and len(e.args) == 1:
                ctr = self._expr(e.args[0])
                if not isinstance(ctr, _Array) or ctr.dt != _I64D:
                    raise Unsupported("_claim_block of a non-int64 array")
                # the blocks need only be handed out once each: "monotonic", as threads.py
                return _Scalar(self.b.atomic_rmw("add", ctr.ptr, ir.Constant(_I64, 1),
                                                 "monotonic"), _I64D, nonneg=True)
            if helper is not None and helper is lower_reduce._pairwise_sum_nb and \
                    len(e.args) == 1:
                arr = self._expr(e.args[0])
                if not isinstance(arr, _Array) or len(arr.shape) != 1 or \
                        arr.dt not in (_F32D, _F64D) or arr.shape[0] == 0:
                    raise Unsupported("_zx_pairwise_sum of this array")
                fn = _pairwise_function(self.module, arr.dt)
                return _Scalar(self.b.call(fn, [arr.ptr, ir.Constant(_I64, arr.shape[0])]),
                               arr.dt)
            emit = getattr(helper, "emit", None)
            if emit is not None and len(e.args) == 1:
                x = self._expr(e.args[0])
                if not isinstance(x, _Scalar) or x.dt != _F64D:
                    raise Unsupported(f"{f.id} of {getattr(x, 'dt', x)}")
                return _Scalar(emit(self.b, x.v), _F64D)
            raise Unsupported(f"call {f.id}")
        raise Unsupported(f"call {ast.unparse(f)}")

    def _shape(self, node):
        val = self._expr(node)
        items = val.items if isinstance(val, _Tuple) else (val,)
        if not all(isinstance(x, _Scalar) and x.const is not None and x.dt.kind in "iu"
                   for x in items):
            raise Unsupported("a shape that is not constant")
        return tuple(int(x.const) for x in items)

    def _dtype_arg(self, node):
        val = self._expr(node)
        if not isinstance(val, _DType):
            raise Unsupported("a dtype argument")
        return val.dt

    def _allocate(self, dt, shape, fill=None):
        if self.loop_depth:
            raise Unsupported("an allocation inside a loop")
        if dt.kind not in "biuf" or dt == np.float16:
            raise Unsupported(f"an array of {dt}")
        k = len(self.buffers)
        if k >= self.n_alloc:
            raise Unsupported("more allocations than the source writes")
        self.buffers.append((dt, shape, fill))
        ptr = self.b.bitcast(self.impl.args[len(self.specs) + k], _mem_type(dt).as_pointer())
        return _Array(ptr, dt, shape, (("buf", k), 0))

    def _fill_loop(self, arr, value):
        """Set every element of ``arr`` to scalar ``value`` (a run-time fill)."""
        b = self.b
        v = self._to_mem(self._cast(value, arr.dt))
        counter = self.alloca_builder.alloca(_I64)
        b.store(ir.Constant(_I64, 0), counter)
        head = self.func.append_basic_block("fill.head")
        body = self.func.append_basic_block("fill.body")
        done = self.func.append_basic_block("fill.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.load(counter)
        b.cbranch(b.icmp_signed("<", i, ir.Constant(_I64, arr.size)), body, done)
        b.position_at_end(body)
        b.store(v, b.gep(arr.ptr, [i], inbounds=True))
        b.store(b.add(i, ir.Constant(_I64, 1)), counter)
        b.branch(head)
        b.position_at_end(done)

    def _np_call(self, name, e):
        args = e.args
        kw = {k.arg: k.value for k in e.keywords}
        if name in ("empty", "zeros") and len(args) in (1, 2) and set(kw) <= {"dtype"}:
            dt_node = args[1] if len(args) == 2 else kw.get("dtype")
            dt = self._dtype_arg(dt_node) if dt_node is not None else _F64D
            return self._allocate(dt, self._shape(args[0]),
                                  0 if name == "zeros" else None)
        if name == "full" and len(args) in (2, 3) and set(kw) <= {"dtype"}:
            dt_node = args[2] if len(args) == 3 else kw.get("dtype")
            if dt_node is None:
                raise Unsupported("np.full without a dtype")
            dt = self._dtype_arg(dt_node)
            shape = self._shape(args[0])
            fill = self._expr(args[1])
            if not isinstance(fill, _Scalar):
                raise Unsupported("np.full of an array")
            if fill.const is not None:
                return self._allocate(dt, shape, fill.const)
            arr = self._allocate(dt, shape)
            self._fill_loop(arr, fill)
            return arr
        if kw:
            raise Unsupported(f"np.{name} with keywords")
        if name == "copy" and len(args) == 1:
            src = self._expr(args[0])
            if not isinstance(src, _Array):
                raise Unsupported("np.copy of a scalar")
            out = self._allocate(src.dt, src.shape)
            nbytes = src.size * src.dt.itemsize
            memcpy = self.b.module.declare_intrinsic(
                "llvm.memcpy", [_BYTE_PTR, _BYTE_PTR, _I64])
            self.b.call(memcpy, [self.b.bitcast(out.ptr, _BYTE_PTR),
                                 self.b.bitcast(src.ptr, _BYTE_PTR),
                                 ir.Constant(_I64, nbytes), ir.Constant(_I1, 0)])
            return out
        if name == "ascontiguousarray" and len(args) == 1:
            src = self._expr(args[0])
            if isinstance(src, _Array):
                return src
            raise Unsupported("np.ascontiguousarray of a scalar")
        if name in _DTYPE_NAMES and len(args) == 1:
            return self._cast(self._expr(args[0]), _DTYPE_NAMES[name])
        if len(args) == 1:
            return self._math(name, self._expr(args[0]), numpy=True)
        if len(args) == 2:
            return self._math2(name, self._expr(args[0]), self._expr(args[1]))
        raise Unsupported(f"np.{name}")

    def _math_call(self, name, e):
        if e.keywords or len(e.args) != 1:
            raise Unsupported(f"math.{name}")
        return self._math(name, self._expr(e.args[0]), numpy=False)

    def _abs(self, x):
        if not isinstance(x, _Scalar):
            raise Unsupported("abs of an array")
        if x.dt.kind == "f":
            fn = self.b.module.declare_intrinsic("llvm.fabs", [_reg_type(x.dt)])
            return _Scalar(self.b.call(fn, [x.v]), x.dt)
        if x.dt.kind == "b":
            raise Unsupported("abs of a bool")
        if x.dt.kind == "u":
            return x
        neg = self.b.icmp_signed("<", x.v, ir.Constant(x.v.type, 0))
        return _Scalar(self.b.select(neg, self.b.neg(x.v), x.v), x.dt)

    def _math(self, name, x, numpy):
        if not isinstance(x, _Scalar):
            raise Unsupported(f"{name} of an array")
        b = self.b
        if name in ("isfinite", "isnan", "isinf"):
            if x.dt.kind != "f":
                return _const(_B, name == "isfinite")
            if name == "isnan":
                return _Scalar(b.fcmp_unordered("uno", x.v, x.v), _B)
            fabs = b.module.declare_intrinsic("llvm.fabs", [_reg_type(x.dt)])
            ax = b.call(fabs, [x.v])
            inf = ir.Constant(x.v.type, math.inf)
            if name == "isinf":
                return _Scalar(b.fcmp_ordered("==", ax, inf), _B)
            return _Scalar(b.fcmp_ordered("<", ax, inf), _B)
        if name in ("abs", "absolute", "fabs") and (numpy or name == "fabs"):
            return self._abs(x if name != "fabs" else self._cast(x, _F64D))
        if x.dt.kind != "f":
            raise Unsupported(f"{name} of {x.dt} (Numba converts integers its own way)")
        t = x.dt
        if not numpy and t != _F64D:
            raise Unsupported(f"math.{name} of {t}")
        intrinsic = {"sqrt": "llvm.sqrt", "exp": "llvm.exp", "log": "llvm.log",
                     "sin": "llvm.sin", "cos": "llvm.cos", "floor": "llvm.floor",
                     "ceil": "llvm.ceil", "trunc": "llvm.trunc", "rint": "llvm.rint",
                     "log2": "llvm.log2", "log10": "llvm.log10", "exp2": "llvm.exp2"}
        if name in intrinsic:
            fn = b.module.declare_intrinsic(intrinsic[name], [_reg_type(t)])
            return _Scalar(b.call(fn, [x.v]), t)
        libm = {"tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
                "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
                "arccosh": "acosh", "arctanh": "atanh", "expm1": "expm1",
                "log1p": "log1p", "cbrt": "cbrt", "asin": "asin", "acos": "acos",
                "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
                "erf": "erf", "erfc": "erfc", "lgamma": "lgamma", "gamma": "tgamma"}
        if name in libm and (numpy or name not in ("arcsin", "arccos", "arctan")):
            if name in ("erf", "erfc", "lgamma", "gamma") and numpy:
                raise Unsupported(f"np.{name}")
            symbol = libm[name] + ("f" if t == _F32D else "")
            return _Scalar(self._libm(symbol, t, [x.v]), t)
        raise Unsupported(f"{'np' if numpy else 'math'}.{name}")

    def _libm(self, symbol, t, args):
        import llvmlite.binding as ll
        if not ll.address_of_symbol(symbol):
            raise Unsupported(f"no {symbol} in this process")
        ty = _reg_type(t)
        try:
            fn = self.module.get_global(symbol)
        except KeyError:
            fn = ir.Function(self.module, ir.FunctionType(ty, [ty] * len(args)), symbol)
        return self.b.call(fn, args)

    def _math2(self, name, x, y):
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported(f"np.{name} of arrays")
        if name in ("arctan2", "hypot", "power", "copysign"):
            t = _arith_type(x.dt, y.dt)
            if t.kind != "f" or x.dt != y.dt:
                raise Unsupported(f"np.{name} of {x.dt}, {y.dt}")
            if name == "power":
                fn = self.b.module.declare_intrinsic("llvm.pow", [_reg_type(t)])
                return _Scalar(self.b.call(fn, [x.v, y.v]), t)
            if name == "copysign":
                fn = self.b.module.declare_intrinsic("llvm.copysign", [_reg_type(t)])
                return _Scalar(self.b.call(fn, [x.v, y.v]), t)
            symbol = {"arctan2": "atan2", "hypot": "hypot"}[name] + \
                ("f" if t == _F32D else "")
            return _Scalar(self._libm(symbol, t, [x.v, y.v]), t)
        raise Unsupported(f"np.{name}")


# ----------------------------------------------------------------- compiling

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
        module = ir.Module(name=symbol)
        module.triple = ll.get_process_triple()
        k = _Kernel(fn_ast, helpers, specs, module, symbol, guard.layout()).build()
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
        for dt, shape in self.specs:    # what the machine code compares (see _export)
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


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


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
            if self.on_compiled is not None:
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


def _pairwise_function(module, dt):
    """``T pairwise(T *p, i64 n)``: NumPy's pairwise summation of ``p[0:n]``, as
    ``lower_reduce._pairwise_sum_py`` computes it (blocks of at most 128 summed with 8
    accumulators, longer runs split in halves rounded down to a multiple of 8, left plus
    right), so that sums round as NumPy's; n >= 1."""
    name = f"zerax.pairwise.{dt.name}"
    try:
        return module.get_global(name)
    except KeyError:
        pass
    ty = _reg_type(dt)
    fnty = ir.FunctionType(ty, [ty.as_pointer(), _I64])
    block = ir.Function(module, fnty, f"zerax.pairwise_block.{dt.name}")
    block.linkage = "internal"
    _emit_pairwise_block(block, ty)
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    p, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    leaf, split = fn.append_basic_block("leaf"), fn.append_basic_block("split")
    b.cbranch(b.icmp_signed("<=", n, ir.Constant(_I64, 128)), leaf, split)
    b.position_at_end(leaf)
    b.ret(b.call(block, [p, n]))
    b.position_at_end(split)
    half = b.sdiv(n, ir.Constant(_I64, 2))
    half = b.sub(half, b.srem(half, ir.Constant(_I64, 8)))
    left = b.call(fn, [p, half])
    right = b.call(fn, [b.gep(p, [half]), b.sub(n, half)])
    b.ret(b.fadd(left, right))
    return fn


def _emit_pairwise_block(fn, ty):
    p, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one, eight = (ir.Constant(_I64, v) for v in (0, 1, 8))

    def load(i):
        return b.load(b.gep(p, [i], inbounds=True))

    def sequential(res, start):
        """res + p[start] + ... + p[n-1], in order (a loop)."""
        pre = b.block
        head = fn.append_basic_block("seq.head")
        body = fn.append_basic_block("seq.body")
        done = fn.append_basic_block("seq.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64)
        acc = b.phi(ty)
        i.add_incoming(start, pre)
        acc.add_incoming(res, pre)
        b.cbranch(b.icmp_signed("<", i, n), body, done)
        b.position_at_end(body)
        acc.add_incoming(b.fadd(acc, load(i)), body)
        i.add_incoming(b.add(i, one), body)
        b.branch(head)
        b.position_at_end(done)
        return acc

    short, long_ = fn.append_basic_block("short"), fn.append_basic_block("long")
    b.cbranch(b.icmp_signed("<", n, eight), short, long_)
    b.position_at_end(short)
    b.ret(sequential(load(zero), one))
    b.position_at_end(long_)
    first = [load(ir.Constant(_I64, k)) for k in range(8)]
    stop = b.sub(n, b.srem(n, eight))
    pre = b.block
    head = fn.append_basic_block("acc.head")
    body = fn.append_basic_block("acc.body")
    done = fn.append_basic_block("acc.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64)
    i.add_incoming(eight, pre)
    accs = []
    for r in first:
        phi = b.phi(ty)
        phi.add_incoming(r, pre)
        accs.append(phi)
    b.cbranch(b.icmp_signed("<", i, stop), body, done)
    b.position_at_end(body)
    for k, phi in enumerate(accs):
        phi.add_incoming(b.fadd(phi, load(b.add(i, ir.Constant(_I64, k)))), body)
    i.add_incoming(b.add(i, eight), body)
    b.branch(head)
    b.position_at_end(done)
    r = accs
    res = b.fadd(b.fadd(b.fadd(r[0], r[1]), b.fadd(r[2], r[3])),
                 b.fadd(b.fadd(r[4], r[5]), b.fadd(r[6], r[7])))
    b.ret(sequential(res, stop))


THREAD_POOL_SYMBOLS = frozenset({"numba_parallel_for", "get_num_threads"})


def start_threading_layer():
    """Start Numba's thread pool, which defines the `THREAD_POOL_SYMBOLS` that parallel
    kernels call."""
    from numba.np.ufunc.parallel import _launch_threads
    try:
        _launch_threads()
    except Exception as e:  # noqa: BLE001 - no threading layer: Numba's kernel
        raise Unsupported(f"no threading layer ({e})") from None


def _bound_names(stmts) -> set:
    """The names that statements ``stmts`` bind (assignments and loop variables)."""
    out: set = set()
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def _assignment_counts(fn: ast.FunctionDef) -> dict:
    """How many statements bind each name of ``fn`` (parameters count once)."""
    counts: dict = {a.arg: 1 for a in fn.args.args}

    def targets(t):
        if isinstance(t, ast.Name):
            counts[t.id] = counts.get(t.id, 0) + 1
        elif isinstance(t, ast.Tuple):
            for x in t.elts:
                targets(x)

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                targets(t)
        elif isinstance(node, (ast.AugAssign, ast.For)):
            targets(node.target)
    return _Counts(counts)


class _Counts(dict):
    def __missing__(self, key):
        return 0
