"""Calls to zerax's Numba-compiled scalar helpers: a ``numba.njit`` dispatcher whose
Python function is plain scalar code the translator understands (the complex functions
of ``lower_elementwise``, the special functions of ``base/special*.py``, threefry's
random bits) is translated from its source into an internal function of the kernel's
module, once per module and argument types, and called; any other is refused.

The helper's body is translated as Numba compiles it for a kernel: with the kernel's
flags (a callee inherits the caller's ``fastmath`` and ``error_model`` where its own
options do not set them, so helpers contract FMAs and divide by zero as IEEE does, as
the kernels), its module's globals (other helpers, which are translated in
turn; bool, int and float constants), ``and``/``or``/``if``-expressions evaluated
lazily, and every ``return`` unified into one type (equal types, or complex ones
promoted).  The function is ``void f(i8 *ret, args...)``: it stores its result (a scalar,
or a struct for a tuple) through ``ret``; LLVM inlines it or not."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap

import numpy as np
from llvmlite import ir

from .. import lower_elementwise
from . import numba_cmath
from .values import (
    _BYTE_PTR,
    Unsupported,
    _literal,
    _reg_type,
    _Scalar,
    _Tuple,
)


class _HelperCalls:
    """The translator's methods for helper calls (a mixin of ``translate._Kernel``, whose
    ``_block``/``_cast``/``_prepare`` they use; a helper is translated by a new
    ``_Kernel`` of the same module)."""

    def _helper_call(self, disp, args):
        py = _plain_function(disp)
        if not all(isinstance(a, _Scalar) for a in args):
            raise Unsupported(f"a call of {py.__name__} with arrays or tuples")
        dts = tuple(a.dt for a in args)
        key = (py, dts)
        memo = self.helper_memo
        if key in memo:
            entry = memo[key]
            if entry is None:
                raise Unsupported(f"the recursive helper {py.__name__}")
        else:
            memo[key] = None
            sub = type(self)(_source_tree(py), _Globals(py), (), self.module,
                             f"zerax.helper{len(memo)}.{py.__name__}", self.layout)
            sub.helper_memo, sub.fast, sub.forced, sub.owner = memo, self.fast, self.forced, py
            entry = memo[key] = sub._build_helper(dts)
        fn, kind = entry
        ty = _kind_type(kind)
        slot = self.alloca_builder.alloca(ty)
        self.b.call(fn, [self.b.bitcast(slot, _BYTE_PTR)] + [a.v for a in args])
        value = self.b.load(slot)
        if isinstance(kind, tuple):
            return _Tuple(_Scalar(self.b.extract_value(value, k), dt)
                          for k, dt in enumerate(kind))
        return _Scalar(value, kind)

    def _build_helper(self, dts):
        """This translator's function (a helper's) for arguments of dtypes ``dts``:
        (the LLVM function, the kind of its result: a dtype or a tuple of dtypes)."""
        args = self.fn.args
        params = [a.arg for a in args.args]
        if len(params) != len(dts) or args.vararg or args.kwarg or args.kwonlyargs or \
                args.posonlyargs or args.defaults:
            raise Unsupported("a helper's parameters")
        self.lazy_logic = True
        fnty = ir.FunctionType(ir.VoidType(), [_BYTE_PTR] + [_reg_type(dt) for dt in dts])
        self.impl = self.func = ir.Function(self.module, fnty, self.name)
        self.impl.linkage = "internal"
        self.alloca_builder = ir.IRBuilder(self.func.append_basic_block("entry"))
        body = self.func.append_basic_block("body")
        self.helper_exit = self.func.append_basic_block("exit")
        self.helper_returns = []
        self.b = ir.IRBuilder(body)
        self.n_alloc = 0
        self.params = ()
        self._prepare()
        for p, dt, v in zip(params, dts, self.func.args[1:]):
            self._bind(p, _Scalar(v, dt))
        self._block(self.fn.body)
        if not self.b.block.is_terminated:
            raise Unsupported("a helper that may end without a return")
        self.alloca_builder.branch(body)
        kind = _unify([_kind_of(v) for _, v in self.helper_returns])
        ty = _kind_type(kind)
        for block, value in self.helper_returns:
            self.b.position_before(block.terminator)
            out = self.b.bitcast(self.func.args[0], ty.as_pointer())
            if isinstance(kind, tuple):
                agg = ir.Constant(ty, ir.Undefined)
                for k, (item, dt) in enumerate(zip(value.items, kind)):
                    agg = self.b.insert_value(agg, self._cast(item, dt).v, k)
                self.b.store(agg, out)
            else:
                self.b.store(self._cast(value, kind).v, out)
        self.b.position_at_end(self.helper_exit)
        self.b.ret_void()
        return self.func, kind

    def _helper_return(self, s):
        if s.value is None:
            raise Unsupported("a helper returning None")
        value = self._expr(s.value)
        _kind_of(value)
        self.helper_returns.append((self.b.block, value))
        self.b.branch(self.helper_exit)

    def _global(self, name):
        """A helper's global ``name``: a bool, int or float constant (Numba freezes
        them), as a literal."""
        value = self.helpers.get(name, _Globals.MISSING)
        if type(value) in (bool, int, float):
            return _literal(value)
        raise Unsupported(f"name {name!r}")

    def _constant_for(self, s):
        """``for c in T`` over a global tuple ``T`` of numbers of one type (a helper's
        coefficients), unrolled: the body once per item, in order."""
        items = self.helpers.get(s.iter.id)
        if s.orelse or not isinstance(s.target, ast.Name) or not isinstance(items, tuple) \
                or not items or len({type(v) for v in items}) != 1 or \
                type(items[0]) not in (bool, int, float) or len(items) > 64:
            raise Unsupported("a for loop over this global")
        name = s.target.id
        self.induction = self.induction - {name}
        done = self.func.append_basic_block("for.done")
        for value in items:
            nxt = self.func.append_basic_block("for.next")
            self._bind(name, _literal(value))
            self.loop_depth += 1
            self.loops.append((nxt, done))
            self._block(s.body)
            self.loops.pop()
            self.loop_depth -= 1
            if not self.b.block.is_terminated:
                self.b.branch(nxt)
            self.b.position_at_end(nxt)
        self.b.branch(done)
        self.b.position_at_end(done)

    def _lazy_boolop(self, e):
        """``a and b``/``a or b`` evaluating ``b`` only when needed, as Python (a
        conversion in ``b`` that is undefined where ``a`` decides is never used)."""
        out = self._truth(self._expr(e.values[0]))
        for node in e.values[1:]:
            rest = ast.Call(ast.Name("bool", ast.Load()), [node], [])
            const = _literal(isinstance(e.op, ast.Or))
            if isinstance(e.op, ast.And):
                out = self._lazy_ifexp(out, rest, const).v
            else:
                out = self._lazy_ifexp(out, const, rest).v
        return _Scalar(out, np.dtype(np.bool_))


class _Globals(dict):
    """A helper's names: its module's globals (``math`` and ``np`` checked to be those
    modules where the source uses them)."""

    MISSING = object()

    def __init__(self, py):
        super().__init__(py.__globals__)
        for name, module in (("math", math), ("np", np)):
            if name in py.__code__.co_names and self.get(name) is not module:
                raise Unsupported(f"a helper whose {name!r} is not the module")


def _plain_function(disp):
    """The Python function of njit dispatcher ``disp`` when it is one the translator may
    compile as Numba does: options that the kernel's flags decide, no closure, no
    defaults."""
    if disp in numba_cmath.TRANSLATABLE:
        return disp
    py = getattr(disp, "py_func", None)
    if py is None or not type(disp).__module__.startswith("numba.") or \
            not isinstance(getattr(disp, "targetoptions", None), dict):
        raise Unsupported(f"a call of {getattr(disp, '__name__', disp)!r}")
    options = disp.targetoptions
    if any(k in options for k in ("fastmath", "error_model", "parallel")) or \
            options.get("boundscheck"):
        raise Unsupported(f"the helper {py.__name__}'s options")
    if py.__code__.co_freevars or py.__defaults__ or py.__kwdefaults__:
        raise Unsupported(f"the helper {py.__name__} has a closure or defaults")
    return py


def _source_tree(py) -> ast.FunctionDef:
    """The FunctionDef of ``py`` (threefry's, made by ``exec``, from the text it was
    made from)."""
    if py.__code__.co_filename == "<threefry2x32>":
        text = lower_elementwise._threefry_scalar_source()
    else:
        try:
            text = textwrap.dedent(inspect.getsource(py))
        except (OSError, TypeError):
            raise Unsupported(f"no source of {py.__name__}") from None
    tree = ast.parse(text)
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or fn.name != py.__name__ or \
            fn.decorator_list or len(tree.body) != 1:
        raise Unsupported(f"the source of {py.__name__}")
    return fn


def _kind_of(value):
    if isinstance(value, _Scalar):
        return value.dt
    if isinstance(value, _Tuple) and all(isinstance(v, _Scalar) for v in value.items):
        return tuple(v.dt for v in value.items)
    raise Unsupported("a helper returning arrays")


def _unify(kinds):
    """Numba's one return type of a helper's returns (the subset: all equal, or complex
    numbers of two precisions)."""
    first = kinds[0]
    if all(k == first for k in kinds):
        return first
    if all(not isinstance(k, tuple) and k.kind == "c" for k in kinds):
        out = first
        for k in kinds[1:]:
            out = np.promote_types(out, k)
        return out
    raise Unsupported("a helper returning values of several types")


def _kind_type(kind):
    if isinstance(kind, tuple):
        return ir.LiteralStructType([_reg_type(dt) for dt in kind])
    return _reg_type(kind)
