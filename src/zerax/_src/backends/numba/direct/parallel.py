"""``prange`` loops: the body of ``for w in prange(n)`` outlined into a function that
Numba's threading layer (``numba_parallel_for``) runs on its thread pool."""

from __future__ import annotations

import ast

from llvmlite import ir

from .values import _BYTE_PTR, _I64, _I64D, Unsupported, _Array


class _ParallelLoops:
    """The translator's methods for ``prange`` loops (a mixin of ``translate._Kernel``,
    whose state and ``_block``/``_load_name``/``_slot``/``_extern`` they use)."""

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


def _bound_names(stmts) -> set:
    """The names that statements ``stmts`` bind (assignments and loop variables)."""
    out: set = set()
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out
