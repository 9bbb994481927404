"""The translation of calls: reshapes, allocations (``np.empty``/``zeros``/``full``/
``copy``), casts, the float math of ``np``/``math`` (LLVM intrinsics or libm), the
builtins ``min``/``max``/``abs``/``int``/``float``/``bool``/``complex``, and zerax's
helpers (`threads`' task count and block claims, the pairwise sum, ``vecmath``'s
emitters, `memory.hugepages`; njit scalar helpers and Numba's complex functions go to
helpers.py)."""

from __future__ import annotations

import ast
import math

import numpy as np
from llvmlite import ir

from .. import lower_elementwise, lower_reduce, microkernel, threads
from . import numba_cmath
from .pairwise import _pairwise_function
from .values import (
    _B,
    _BYTE_PTR,
    _C128D,
    _DTYPE_NAMES,
    _F32D,
    _F64,
    _F64D,
    _I1,
    _I32D,
    _I64,
    _I64D,
    Unsupported,
    _arith_type,
    _Array,
    _c_strides,
    _const,
    _DType,
    _mem_type,
    _reg_type,
    _Scalar,
    _Tuple,
)


class _Calls:
    """The translator's methods for calls (a mixin of ``translate._Kernel``, whose
    state and ``_expr``/``_cast``/``_extern``/... they use)."""

    def _call(self, e):
        f = e.func
        if isinstance(f, ast.Attribute) and f.attr == "reshape" and not e.keywords:
            arr = self._expr(f.value)
            if isinstance(arr, _Array):
                shape = self._shape(e.args[0] if len(e.args) == 1 else ast.Tuple(e.args))
                if math.prod(shape) != arr.size:
                    raise Unsupported("a reshape that changes the size")
                return _Array(arr.ptr, arr.dt, shape, arr.origin)
        if isinstance(f, ast.Attribute) and f.attr == "conjugate" and not e.args and \
                not e.keywords:
            x = self._expr(f.value)
            if isinstance(x, _Scalar):
                return self._conjugate(x)
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
                        x.dt.kind == "c" or y.dt.kind == "c":
                    raise Unsupported("min/max of complex numbers")
                # Numba's do_minmax: select(y > x, y, x) (ordered: a nan y loses)
                t = _arith_type(x.dt, y.dt)
                xv, yv = self._cast(x, t).v, self._cast(y, t).v
                cmp = self.b.icmp_signed if t.kind == "i" else self.b.icmp_unsigned
                if t.kind == "f":
                    cmp = self.b.fcmp_ordered
                pick_y = cmp("<" if f.id == "min" else ">", yv, xv)
                nonneg = x.nonneg and y.nonneg if f.id == "min" else x.nonneg or y.nonneg
                return _Scalar(self.b.select(pick_y, yv, xv), t, nonneg=nonneg)
            if f.id == "abs" and len(e.args) == 1:
                return self._abs(self._expr(e.args[0]))
            if f.id == "complex":
                return self._complex_builtin([self._expr(a) for a in e.args])
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
            bitcast = _bitcast_types(helper) if len(e.args) == 1 else None
            if bitcast is not None:
                x = self._expr(e.args[0])
                if not isinstance(x, _Scalar) or x.dt != bitcast[0]:
                    raise Unsupported(f"{f.id} of {getattr(x, 'dt', x)}")
                return _Scalar(self.b.bitcast(x.v, _reg_type(bitcast[1])), bitcast[1])
            if helper is not None and (hasattr(helper, "py_func") or
                                       helper in numba_cmath.TRANSLATABLE):
                return self._helper_call(helper, [self._expr(a) for a in e.args])
            raise Unsupported(f"call {f.id}")
        raise Unsupported(f"call {ast.unparse(f)}")

    def _product_tile(self, params, call):
        """A register tile of a float64 product (microkernel.py), emitted as its Numba
        intrinsic emits it: ``tile(out, out_index, s, s_index, t, t_index, k_count[,
        init, init_index])``."""
        if call.keywords or len(call.args) != (9 if params[2] else 7):
            raise Unsupported("a product tile's arguments")
        vals = [self._expr(a) for a in call.args]
        arrays = []
        for arr, index in zip(vals[0:6:2] + vals[7:8], vals[1:7:2] + vals[8:9]):
            if not isinstance(arr, _Array) or arr.dt != _F64D or \
                    not isinstance(index, _Tuple) or len(index.items) != len(arr.shape) or \
                    not all(isinstance(i, _Scalar) and i.dt.kind in "iu" for i in index.items):
                raise Unsupported("a product tile of these operands")
            strides = [ir.Constant(_I64, st) for st in _c_strides(arr.shape, 8)]
            origin = microkernel.offset_pointer(
                self.b, arr.ptr, [self._cast(i, _I64D).v for i in index.items], strides)
            arrays.append(microkernel.Strided(self.b, origin, strides, True))
        k_count = vals[6]
        if not isinstance(k_count, _Scalar) or k_count.dt.kind not in "iu":
            raise Unsupported("a product tile's contraction length")
        self._note_write(vals[0])
        microkernel.emit_tile(self.b, params, *arrays[:3], self._cast(k_count, _I64D).v,
                              *arrays[3:])

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
        in_loop = bool(self.loop_depth)
        if in_loop and (self.in_parallel or self.allocating not in self.reusable):
            raise Unsupported("an allocation inside a loop")
        if dt.kind not in "biufc" or dt == np.float16:
            raise Unsupported(f"an array of {dt}")
        k = len(self.buffers)
        if k >= self.n_alloc:
            raise Unsupported("more allocations than the source writes")
        # An array made in a loop body whose name is only ever indexed is one buffer for
        # every iteration (no reference to an earlier iteration's array survives the
        # rebinding), filled afresh where the source makes it.
        self.buffers.append((dt, shape, None if in_loop else fill))
        ptr = self.b.bitcast(self.impl.args[len(self.specs) + k], _mem_type(dt).as_pointer())
        arr = _Array(ptr, dt, shape, (("buf", k), 0))
        if in_loop and fill is not None:
            self._fill_loop(arr, _const(dt, fill))
        return arr

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
            if fill.const is not None and dt.kind != "c":
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
        if not e.keywords and len(e.args) == 2 and \
                name in ("copysign", "atan2", "hypot", "pow"):
            x, y = (self._expr(a) for a in e.args)
            if not all(isinstance(v, _Scalar) and v.dt == _F64D for v in (x, y)):
                raise Unsupported(f"math.{name} of these arguments")
            # (math.pow of floats is Numba's float ** float: llvm.pow)
            return self._math2({"atan2": "arctan2", "pow": "power"}.get(name, name), x, y)
        if not e.keywords and name in ("frexp", "ldexp"):
            return self._frexp_ldexp(name, [self._expr(a) for a in e.args])
        if e.keywords or len(e.args) != 1:
            raise Unsupported(f"math.{name}")
        return self._math(name, self._expr(e.args[0]), numpy=False)

    def _frexp_ldexp(self, name, args):
        """Numba's ``math.frexp(x) -> (float64, intc)`` and ``math.ldexp(x, intc)`` of
        a float64: its helperlib's ``numba_frexp``/``numba_ldexp``."""
        i32 = ir.IntType(32)
        if name == "frexp" and len(args) == 1 and isinstance(args[0], _Scalar) and \
                args[0].dt == _F64D:
            fn = self._numba_helper("numba_frexp", _F64, [_F64, i32.as_pointer()])
            slot = self.alloca_builder.alloca(i32)
            mant = self.b.call(fn, [args[0].v, slot])
            return _Tuple([_Scalar(mant, _F64D), _Scalar(self.b.load(slot), _I32D)])
        if name == "ldexp" and len(args) == 2 and all(isinstance(a, _Scalar) for a in args) \
                and args[0].dt == _F64D and args[1].dt.kind in "iu":
            fn = self._numba_helper("numba_ldexp", _F64, [_F64, i32])
            fn.args[1].add_attribute("signext")
            return _Scalar(self.b.call(fn, [args[0].v, self._cast(args[1], _I32D).v]), _F64D)
        raise Unsupported(f"math.{name} of these arguments")

    def _numba_helper(self, symbol, ret, params):
        """The declaration of Numba's C helper ``symbol`` (``numba_<name>``), its address
        made known to LLVM."""
        import llvmlite.binding as ll
        if not ll.address_of_symbol(symbol):
            from numba import _helperlib  # Numba's C helpers (numba_gamma, ...)
            address = _helperlib.c_helpers.get(symbol[len("numba_"):])
            if not address:
                raise Unsupported(f"no {symbol} in this process")
            ll.add_symbol(symbol, address)
        return self._extern(symbol, ret, params)

    def _abs(self, x):
        if not isinstance(x, _Scalar):
            raise Unsupported("abs of an array")
        if x.dt.kind == "c":
            return self._complex_abs(x)
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
        if x.dt.kind == "c" and not numpy:
            raise Unsupported(f"math.{name} of a complex number")
        if x.dt == _C128D and name in numba_cmath.NP_FUNCTIONS:
            return self._helper_call(numba_cmath.NP_FUNCTIONS[name], [x])
        if name in ("isfinite", "isnan", "isinf"):
            if x.dt.kind == "c" and numpy:
                return self._complex_test(name, x)
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
        if name in ("conj", "conjugate") and numpy:
            return self._conjugate(x)
        if name in ("real", "imag") and numpy:
            return self._part(name, x)
        if name in ("abs", "absolute", "fabs") and (numpy or name == "fabs"):
            return self._abs(x if name != "fabs" else self._cast(x, _F64D))
        if x.dt.kind != "f":
            raise Unsupported(f"{name} of {x.dt} (Numba converts integers its own way)")
        t = x.dt
        if name == "sign" and numpy:      # Numba's real_sign: +-1, or x itself (0, nan)
            zero = ir.Constant(x.v.type, 0.0)
            neg = b.select(b.fcmp_ordered("<", x.v, zero), ir.Constant(x.v.type, -1.0), x.v)
            return _Scalar(b.select(b.fcmp_ordered(">", x.v, zero),
                                    ir.Constant(x.v.type, 1.0), neg), t)
        if not numpy and t != _F64D:
            raise Unsupported(f"math.{name} of {t}")
        intrinsic = {"sqrt": "llvm.sqrt", "exp": "llvm.exp", "log": "llvm.log",
                     "sin": "llvm.sin", "cos": "llvm.cos", "floor": "llvm.floor",
                     "ceil": "llvm.ceil", "trunc": "llvm.trunc", "rint": "llvm.rint",
                     "log2": "llvm.log2", "log10": "llvm.log10", "exp2": "llvm.exp2"}
        if name in intrinsic:
            fn = b.module.declare_intrinsic(intrinsic[name], [_reg_type(t)])
            out = _Scalar(b.call(fn, [x.v]), t)
            if not numpy and name in ("floor", "ceil", "trunc"):
                return self._cast(out, _I64D)      # Python's (and Numba's) int result
            return out
        libm = {"tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
                "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
                "arccosh": "acosh", "arctanh": "atanh", "expm1": "expm1",
                "log1p": "log1p", "cbrt": "cbrt", "asin": "asin", "acos": "acos",
                "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
                "erf": "erf", "erfc": "erfc", "lgamma": "lgamma",
                "gamma": "numba_gamma"}      # Numba's math.gamma: its helperlib's
        if name in libm and (numpy or name not in ("arcsin", "arccos", "arctan")):
            if name in ("erf", "erfc", "lgamma", "gamma") and numpy:
                raise Unsupported(f"np.{name}")
            symbol = libm[name] + ("f" if t == _F32D else "")
            return _Scalar(self._libm(symbol, t, [x.v]), t)
        raise Unsupported(f"{'np' if numpy else 'math'}.{name}")

    def _libm(self, symbol, t, args):
        import llvmlite.binding as ll
        if symbol.startswith("numba_"):
            ty = _reg_type(t)
            return self.b.call(self._numba_helper(symbol, ty, [ty] * len(args)), args)
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
        if name in ("remainder", "fmod") and x.dt == y.dt and x.dt.kind == "f":
            # Numba's np_real_mod_impl / np_real_fmod_impl
            b, zero = self.b, ir.Constant(x.v.type, 0.0)
            res = b.frem(x.v, y.v, flags=self.fast)
            if name == "fmod":
                return _Scalar(res, x.dt)
            fix = b.and_(b.fcmp_ordered("!=", res, zero),
                         b.xor(b.fcmp_ordered("<", y.v, zero), b.fcmp_ordered("<", res, zero)))
            return _Scalar(b.fadd(res, b.select(fix, y.v, zero), flags=self.fast), x.dt)
        if name in ("arctan2", "hypot", "power", "copysign"):
            t = _arith_type(x.dt, y.dt)
            if t.kind != "f" or x.dt != y.dt:
                raise Unsupported(f"np.{name} of {x.dt}, {y.dt}")
            if name == "power":
                fn = self.b.module.declare_intrinsic("llvm.pow", [_reg_type(t)])
                return _Scalar(self.b.call(fn, [x.v, y.v]), t)
            if name == "copysign":
                ty = _reg_type(t)
                fn = self._extern(f"llvm.copysign.f{8 * t.itemsize}", ty, [ty, ty])
                return _Scalar(self.b.call(fn, [x.v, y.v]), t)
            symbol = {"arctan2": "atan2", "hypot": "hypot"}[name] + \
                ("f" if t == _F32D else "")
            return _Scalar(self._libm(symbol, t, [x.v, y.v]), t)
        raise Unsupported(f"np.{name}")

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


def _bitcast_types(helper):
    """(source, destination) dtypes of ``lower_elementwise``'s bitcast intrinsic
    ``helper`` (one LLVM ``bitcast``), or None for another helper."""
    if helper is None or type(helper).__module__.split(".")[0] != "numba":
        return None
    for (src, dst), fn in list(lower_elementwise._INTRINSICS.items()):
        if fn is helper:
            if src.kind not in "iuf" or dst.kind not in "iuf" or \
                    src.itemsize != dst.itemsize or np.float16 in (src, dst):
                return None
            return src, dst
    return None
