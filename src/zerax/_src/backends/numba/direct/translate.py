"""The translator: one generated kernel's AST to an LLVM module (``_Kernel``): its
statements, expressions, indexing and scalar arithmetic with Numba's semantics, and
the exported entry point that CPython calls.  Calls and ``prange`` loops are
translated by the mixins of ``calls.py`` and ``parallel.py``."""

from __future__ import annotations

import ast
import math

import numpy as np
from llvmlite import ir

from .. import memory, microkernel
from .calls import _Calls
from .complex import _ComplexScalars
from .helpers import _HelperCalls
from .parallel import _ParallelLoops
from .values import (
    _B,
    _BYTE_PTR,
    _DTYPE_NAMES,
    _F64D,
    _FAST,
    _I1,
    _I8,
    _I64,
    _I64D,
    _INT_KINDS,
    Unsupported,
    _arith_type,
    _Array,
    _const,
    _DType,
    _literal,
    _mem_type,
    _reg_type,
    _Scalar,
    _truediv_type,
    _Tuple,
    _TypeChange,
    _unify,
)

_ALLOCATIONS = ("empty", "zeros", "full", "copy")


class _Kernel(_Calls, _ComplexScalars, _HelperCalls, _ParallelLoops):
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
        self.fast = _FAST                  # the flags of float arithmetic
        self.nonzero_names: list = []      # complex divisors (ast.dump) known not 0 here
        self.helper_memo: dict = {}        # (py_func, arg dtypes) -> (function, result kind)
        self.helper_returns = None         # a helper's [(block, value)] (helpers.py)
        self.lazy_logic = False            # and/or/if-else evaluated lazily (helpers)
        self.owner = None                  # the helper's Python function (helpers.py)
        self.forced: dict = {}             # (owner, name) -> unified dtype (_TypeChange)

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
        self._prepare()
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

    def _prepare(self):
        """What the statements' translation knows of the whole function's names."""
        self.assigned = _assignment_counts(self.fn)
        self.induction = frozenset(
            n.target.id for n in ast.walk(self.fn) if isinstance(n, ast.For)
            and isinstance(n.target, ast.Name) and self.assigned[n.target.id] == 1)
        self._reusable = None       # computed at the first allocation inside a loop
        self.tile_loops = _loops_over_tiles(self.fn, self.helpers) if any(
            getattr(h, "tile_params", None) is not None for h in self.helpers.values()) \
            else frozenset()
        self.allocating = None      # the name the allocation being translated binds

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
                if isinstance(old, np.dtype) and isinstance(kind, np.dtype):
                    raise _TypeChange(self.owner, name, old, kind)
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
            forced = self.forced.get((self.owner, name))
            if forced is not None:       # bound to several types: their unification
                if _unify(forced, val.dt) != forced:
                    raise _TypeChange(self.owner, name, forced, val.dt)
                val = self._cast(val, forced)
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
        if self.helper_returns is not None:
            return self._global(name)
        raise Unsupported(f"name {name!r}")

    @property
    def reusable(self) -> frozenset:
        """Names whose arrays, made inside a loop, can be one buffer (an AST walk, done
        only for kernels that allocate in loops)."""
        if self._reusable is None:
            self._reusable = _reusable_allocations(self.fn, self.assigned)
        return self._reusable

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
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name):
                helper = self.helpers.get(s.value.func.id)
                if helper is memory.hugepages:
                    return self._hugepages(s.value)
                if getattr(helper, "tile_params", None) is not None:
                    return self._product_tile(helper.tile_params, s.value)
            raise Unsupported("an expression statement")
        if isinstance(s, ast.Pass):
            return
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise Unsupported("chained assignment")
            target = s.targets[0]
            self.allocating = target.id if isinstance(target, ast.Name) else None
            try:
                val = self._expr(s.value)
            finally:
                self.allocating = None
            return self._assign(target, val)
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
        if self.helper_returns is not None and isinstance(it, ast.Name) and \
                it.id not in self.slots:
            return self._constant_for(s)
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
        latch = self.b.branch(head)
        if id(s) in self.tile_loops:
            microkernel.keep_rolled(latch)    # a loop over product tiles
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
        if self.helper_returns is not None:
            return self._helper_return(s)
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

    def _extern(self, symbol, ret, params):
        try:
            return self.module.get_global(symbol)
        except KeyError:
            return ir.Function(self.module, ir.FunctionType(ret, params), symbol)

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
            nonzero = bool(self.nonzero_names) and ast.dump(e.right) in self.nonzero_names
            return self._binop(e.op, self._expr(e.left), self._expr(e.right), nonzero)
        if isinstance(e, ast.UnaryOp):
            return self._unary(e.op, self._expr(e.operand))
        if isinstance(e, ast.Compare):
            return self._compare(e)
        if isinstance(e, ast.BoolOp) and self.lazy_logic:
            return self._lazy_boolop(e)
        if isinstance(e, ast.BoolOp):
            vals = [self._truth(self._expr(x)) for x in e.values]
            out = vals[0]
            for v in vals[1:]:
                out = self.b.and_(out, v) if isinstance(e.op, ast.And) else self.b.or_(out, v)
            return _Scalar(out, _B)
        if isinstance(e, ast.IfExp):
            if self.lazy_logic:
                return self._lazy_ifexp(self._truth(self._expr(e.test)), e.body, e.orelse)
            lazy = self._lazy_guarded(e)
            if lazy is not None:
                return lazy
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
        if isinstance(e.value, ast.Name) and e.value.id == "math" and \
                e.attr in ("pi", "e", "inf", "nan"):
            return _const(_F64D, getattr(math, e.attr))
        if e.attr in ("real", "imag") and not (isinstance(e.value, ast.Name) and
                                               e.value.id in ("np", "math")):
            x = self._expr(e.value)
            if isinstance(x, _Scalar):
                return self._part(e.attr, x)
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
        if dt.kind == "c" or src.kind == "c":
            return self._complex_cast(s, dt)
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

    def _binop(self, op, x, y, nonzero=False):
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported("arithmetic on arrays")
        b = self.b
        if x.dt.kind == "c" or y.dt.kind == "c":
            return self._complex_binop(op, x, y, nonzero)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and x.dt.kind == "b" \
                and y.dt.kind == "b":
            fn = {ast.BitAnd: b.and_, ast.BitOr: b.or_, ast.BitXor: b.xor}[type(op)]
            return _Scalar(fn(x.v, y.v), _B)
        if isinstance(op, ast.Div):
            t = _truediv_type(x.dt, y.dt)
            return _Scalar(b.fdiv(self._cast(x, t).v, self._cast(y, t).v, flags=self.fast), t)
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
            if isinstance(op, ast.Mod):
                return _Scalar(self._float_mod(xv, yv), t)
            if type(op) not in fns:
                raise Unsupported(f"float {type(op).__name__}")
            return _Scalar(fns[type(op)](xv, yv, flags=self.fast), t)
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

    def _float_mod(self, x, y):
        """Python's float ``x % y`` as Numba computes it (``real_divmod``: C's fmod,
        moved to the divisor's sign; a zero remainder signed as the divisor; fmod's nan
        for a zero divisor, Numba's 'numpy' error model)."""
        b = self.b
        zero = ir.Constant(x.type, 0.0)
        mod = b.frem(x, y, flags=self.fast)
        y_neg = b.fcmp_ordered("<", y, zero)
        moved = b.select(b.icmp_unsigned("!=", y_neg, b.fcmp_ordered("<", mod, zero)),
                         b.fadd(mod, y, flags=self.fast), mod)
        signed_zero = b.select(y_neg, ir.Constant(x.type, -0.0), zero)
        out = b.select(b.fcmp_unordered("!=", mod, zero), moved, signed_zero)
        return b.select(b.fcmp_ordered("==", y, zero), mod, out)

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
            if x.dt.kind == "c":
                return self._complex_neg(x)
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
        if x.dt.kind == "c" or y.dt.kind == "c":
            return self._complex_compare(op, x, y)
        x, y = _exact_constant(x, y), _exact_constant(y, x)
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


def _loops_over_tiles(fn: ast.FunctionDef, helpers) -> set:
    """The ids of the for loops of ``fn`` whose bodies call a product tile."""
    loops: set = set()

    def visit(node) -> bool:
        found = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            getattr(helpers.get(node.func.id), "tile_params", None) is not None
        for child in ast.iter_child_nodes(node):
            found = visit(child) or found
        if found and isinstance(node, ast.For):
            loops.add(id(node))
        return found
    visit(fn)
    return loops


def _exact_constant(c, other):
    """Integer constant ``c`` as a constant of float ``other``'s type when it is
    exactly that float: a comparison with it (``x.real == 0`` of a float32) has the same
    result in either type (Numba compares in float64)."""
    if c.const is None or c.dt.kind not in _INT_KINDS or other.dt.kind != "f":
        return c
    if float(other.dt.type(c.const)) != c.const:
        return c
    return _const(other.dt, c.const)


def _reusable_allocations(fn: ast.FunctionDef, assigned) -> frozenset:
    """Names bound once, to a new array (``np.empty``/``zeros``/``full``), and otherwise
    only indexed, directly or through reshaped views bound right after it (never
    passed, returned or rebound): inside a loop, each iteration's array can be the same
    buffer, as no reference to an earlier iteration's array outlives its rebinding."""
    def made(s):
        return isinstance(s, ast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Call) and \
            isinstance(s.value.func, ast.Attribute) and \
            isinstance(s.value.func.value, ast.Name) and s.value.func.value.id == "np" \
            and s.value.func.attr in ("empty", "zeros", "full")

    def view_of(s):
        """The name ``s`` binds a reshaped view of (``y = x.reshape(...)``), or None."""
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Call) and
                isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "reshape"):
            return None
        src = s.value.func.value
        if isinstance(src, ast.Call) and isinstance(src.func, ast.Attribute) and \
                src.func.attr == "ascontiguousarray" and len(src.args) == 1:
            src = src.args[0]
        return src if isinstance(src, ast.Name) else None

    groups, receivers = [], set()     # groups: (allocated name, its views' names)
    indexed, loads = set(), []
    for node in ast.walk(fn):     # one walk: this runs for every kernel
        if isinstance(node, ast.Subscript):
            indexed.add(id(node.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.append(node)
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if not made(stmt):
                continue
            names = [stmt.targets[0].id]
            for nxt in body[i + 1:]:
                src = view_of(nxt)
                if src is None or src.id not in names:
                    break
                receivers.add(id(src))
                names.append(nxt.targets[0].id)
            groups.append(names)
    escaping = {n.id for n in loads if id(n) not in indexed and id(n) not in receivers}
    return frozenset(names[0] for names in groups
                     if all(assigned[n] == 1 and n not in escaping for n in names))


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
