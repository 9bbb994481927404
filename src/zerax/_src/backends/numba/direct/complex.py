"""Complex scalars (complex64, complex128) as Numba computes them: a ``{real, imag}``
struct of floats in registers and in memory (NumPy's layout), casts, ``+ - * /``,
negation, ``==``/``!=``, ``abs`` (libm's ``hypot``), ``.real``/``.imag``, conjugates,
``complex(re, im)`` and the ``isnan``/``isinf``/``isfinite`` tests.

The operations are Numba's (``numba/cpython/numbers.py``): the product is the textbook
``(ac - bd) + (ad + bc)i``; the quotient is CPython's (Smith's algorithm, dividing by
the larger part of the divisor), which raises ``ZeroDivisionError`` for a zero divisor
in Numba, so a complex ``/`` is translated only where the generated code has guarded
its divisor against zero (``n / d`` in the else-arm of ``... if (d.real == 0 and
d.imag == 0) else n / d``, evaluated lazily as Numba does) or the divisor is a nonzero
constant; others are refused."""

from __future__ import annotations

import ast
import math

import numpy as np
from llvmlite import ir

from .values import (
    _B,
    _C64D,
    _C128D,
    _F32D,
    _INT_KINDS,
    Unsupported,
    _arith_type,
    _const,
    _part_type,
    _reg_type,
    _Scalar,
)


class _ComplexScalars:
    """The translator's methods for complex scalars (a mixin of ``translate._Kernel``,
    whose ``b``, ``fast``, ``_cast``, ``_libm`` they use)."""

    # -- parts

    def _parts(self, s):
        """(real, imag) LLVM values of complex scalar ``s``."""
        if s.const is not None:
            part = _reg_type(_part_type(s.dt))
            return ir.Constant(part, s.const.real), ir.Constant(part, s.const.imag)
        return self.b.extract_value(s.v, 0), self.b.extract_value(s.v, 1)

    def _make_complex(self, re, im, dt):
        v = ir.Constant(_reg_type(dt), ir.Undefined)
        v = self.b.insert_value(v, re, 0)
        return _Scalar(self.b.insert_value(v, im, 1), dt)

    def _negate_real(self, v):
        """Numba's ``negate_real``: -0.0 - v (signed zeros kept)."""
        return self.b.fsub(ir.Constant(v.type, -0.0), v, flags=self.fast)

    # -- casts

    def _complex_cast(self, s, dt):
        """Numba's casts to and from complex: a number becomes ``(x, 0)`` in ``dt``'s
        part type; complex to complex part by part; complex to bool is ``re != 0 or
        im != 0``; complex to a real type does not compile in Numba (refused)."""
        if s.const is not None:
            if dt.kind == "c":
                if s.dt.kind == "b":
                    raise Unsupported(f"a cast of {s.dt} to {dt}")
                return _const(dt, complex(s.const))
            if dt.kind == "b":
                return _const(_B, bool(s.const))
            raise Unsupported(f"a cast of {s.dt} to {dt}")
        b = self.b
        if dt.kind == "b":
            re, im = self._parts(s)
            zero = ir.Constant(re.type, 0.0)
            return _Scalar(b.or_(b.fcmp_unordered("!=", re, zero),
                                 b.fcmp_unordered("!=", im, zero)), _B)
        if dt.kind != "c":
            raise Unsupported(f"a cast of {s.dt} to {dt}")
        part = _part_type(dt)
        if s.dt.kind == "c":
            re, im = self._parts(s)
            src = _Scalar(re, _part_type(s.dt)), _Scalar(im, _part_type(s.dt))
            return self._make_complex(self._cast(src[0], part).v,
                                      self._cast(src[1], part).v, dt)
        if s.dt.kind == "b" or s.dt.kind not in "f" + _INT_KINDS:
            raise Unsupported(f"a cast of {s.dt} to {dt}")
        return self._make_complex(self._cast(s, part).v,
                                  ir.Constant(_reg_type(part), 0.0), dt)

    # -- arithmetic

    def _complex_binop(self, op, x, y, nonzero=False):
        """``x op y`` with a complex operand (``nonzero``: the divisor is known not to
        be 0, see the module's docstring)."""
        t = _arith_type(x.dt, y.dt)
        x, y = self._cast(x, t), self._cast(y, t)
        (a, bi), (c, d) = self._parts(x), self._parts(y)
        b, fast = self.b, self.fast
        if isinstance(op, ast.Add):
            return self._make_complex(b.fadd(a, c, flags=fast), b.fadd(bi, d, flags=fast), t)
        if isinstance(op, ast.Sub):
            return self._make_complex(b.fsub(a, c, flags=fast), b.fsub(bi, d, flags=fast), t)
        if isinstance(op, ast.Mult):
            ac, bd = b.fmul(a, c, flags=fast), b.fmul(bi, d, flags=fast)
            ad, bc = b.fmul(a, d, flags=fast), b.fmul(bi, c, flags=fast)
            return self._make_complex(b.fsub(ac, bd, flags=fast), b.fadd(ad, bc, flags=fast),
                                      t)
        if isinstance(op, ast.Div):
            if not nonzero and (y.const is None or y.const == 0):
                raise Unsupported("a complex division whose divisor may be 0 "
                                  "(ZeroDivisionError in Numba)")
            return self._complex_div(a, bi, c, d, t)
        raise Unsupported(f"complex {type(op).__name__}")

    def _complex_div(self, areal, aimag, breal, bimag, t):
        """CPython's quotient (``_Py_c_quot``), as Numba's ``complex_div``: branches on
        which part of the divisor is larger; nan + nan i when a part is nan."""
        b, fast = self.b, self.fast
        fabs = b.module.declare_intrinsic("llvm.fabs", [breal.type])
        abs_r, abs_i = b.call(fabs, [breal]), b.call(fabs, [bimag])
        func = b.function
        by_real = func.append_basic_block("cdiv.real")
        not_real = func.append_basic_block("cdiv.notreal")
        by_imag = func.append_basic_block("cdiv.imag")
        nan = func.append_basic_block("cdiv.nan")
        done = func.append_basic_block("cdiv.done")
        b.cbranch(b.fcmp_ordered(">=", abs_r, abs_i), by_real, not_real)
        b.position_at_end(not_real)
        b.cbranch(b.fcmp_ordered(">=", abs_i, abs_r), by_imag, nan)
        b.position_at_end(by_real)
        ratio = b.fdiv(bimag, breal, flags=fast)
        denom = b.fadd(breal, b.fmul(bimag, ratio, flags=fast), flags=fast)
        re1 = b.fdiv(b.fadd(areal, b.fmul(aimag, ratio, flags=fast), flags=fast), denom,
                     flags=fast)
        im1 = b.fdiv(b.fsub(aimag, b.fmul(areal, ratio, flags=fast), flags=fast), denom,
                     flags=fast)
        b.branch(done)
        b.position_at_end(by_imag)
        ratio = b.fdiv(breal, bimag, flags=fast)
        denom = b.fadd(b.fmul(breal, ratio, flags=fast), bimag, flags=fast)
        re2 = b.fdiv(b.fadd(b.fmul(areal, ratio, flags=fast), aimag, flags=fast), denom,
                     flags=fast)
        im2 = b.fdiv(b.fsub(b.fmul(aimag, ratio, flags=fast), areal, flags=fast), denom,
                     flags=fast)
        b.branch(done)
        b.position_at_end(nan)
        b.branch(done)
        b.position_at_end(done)
        nan_v = ir.Constant(breal.type, math.nan)
        re, im = b.phi(breal.type), b.phi(breal.type)
        for r, i, blk in ((re1, im1, by_real), (re2, im2, by_imag), (nan_v, nan_v, nan)):
            re.add_incoming(r, blk)
            im.add_incoming(i, blk)
        return self._make_complex(re, im, t)

    def _complex_neg(self, x):
        re, im = self._parts(x)
        return self._make_complex(self._negate_real(re), self._negate_real(im), x.dt)

    def _conjugate(self, x):
        """``np.conj(x)``/``x.conjugate()``: the imaginary part negated (a real number
        is its own conjugate)."""
        if x.dt.kind != "c":
            if x.dt.kind == "b":
                raise Unsupported("the conjugate of a bool")
            return x
        re, im = self._parts(x)
        return self._make_complex(re, self._negate_real(im), x.dt)

    def _complex_compare(self, op, x, y):
        if op not in ("==", "!="):
            raise Unsupported("an ordering of complex numbers")
        t = _arith_type(x.dt, y.dt)
        (a, bi), (c, d) = self._parts(self._cast(x, t)), self._parts(self._cast(y, t))
        b = self.b
        if op == "==":
            return _Scalar(b.and_(b.fcmp_ordered("==", a, c), b.fcmp_ordered("==", bi, d)),
                           _B)
        return _Scalar(b.or_(b.fcmp_unordered("!=", a, c), b.fcmp_unordered("!=", bi, d)),
                       _B)

    def _complex_abs(self, x):
        """``abs(z)``: libm's ``hypot`` of the parts (Numba's ``complex_abs``)."""
        part = _part_type(x.dt)
        re, im = self._parts(x)
        return _Scalar(self._libm("hypotf" if part == _F32D else "hypot", part, [re, im]),
                       part)

    def _complex_test(self, name, x):
        """``np.isnan``/``isinf``/``isfinite`` of a complex: of either part (both, for
        ``isfinite``), as Numba's ``cmathimpl``."""
        re, im = self._parts(x)
        tests = [self._math(name, _Scalar(v, _part_type(x.dt)), numpy=True).v
                 for v in (re, im)]
        join = self.b.and_ if name == "isfinite" else self.b.or_
        return _Scalar(join(*tests), _B)

    def _part(self, name, x):
        """``x.real`` / ``x.imag`` of a scalar (of a real number: itself, and 0 of its
        type)."""
        if x.dt.kind == "c":
            if x.const is not None:
                return _const(_part_type(x.dt), getattr(x.const, name))
            return _Scalar(self.b.extract_value(x.v, 0 if name == "real" else 1),
                           _part_type(x.dt))
        if x.dt.kind == "b" or x.dt.kind not in "f" + _INT_KINDS:
            raise Unsupported(f".{name} of {x.dt}")
        return x if name == "real" else _const(x.dt, 0)

    def _complex_builtin(self, args):
        """``complex(re[, im])`` of real numbers: complex64 when both are float32,
        else complex128 (Numba's typing)."""
        if not 1 <= len(args) <= 2 or not all(
                isinstance(a, _Scalar) and a.dt.kind in "f" + _INT_KINDS for a in args):
            if len(args) == 1 and isinstance(args[0], _Scalar) and args[0].dt.kind == "c":
                return self._cast(args[0], _C128D)
            raise Unsupported("complex() of these arguments")
        t = _C64D if all(a.dt == _F32D for a in args) else _C128D
        part = _part_type(t)
        re = self._cast(args[0], part)
        im = self._cast(args[1], part) if len(args) == 2 else _const(part, 0.0)
        if re.const is not None and im.const is not None:
            return _const(t, complex(re.const, im.const))
        return self._make_complex(re.v, im.v, t)

    # -- lazy conditional expressions

    def _lazy_guarded(self, e):
        """``p if (d.real == 0 and d.imag == 0) else q`` as Numba evaluates it (only the
        arm taken), ``q`` knowing ``d`` is not 0; None for another expression."""
        guard = _zero_guard(e.test)
        if guard is None:
            return None
        return self._lazy_ifexp(self._truth(self._expr(e.test)), e.body, e.orelse, guard)

    def _lazy_ifexp(self, cond, body, orelse, nonzero=None):
        """``body if cond else orelse`` evaluating only the arm taken (branches and a
        phi, which LLVM turns into a select where that is cheap and safe); ``nonzero``:
        a divisor known not to be 0 in ``orelse``."""
        b = self.b
        then = self.func.append_basic_block("ifexp.then")
        other = self.func.append_basic_block("ifexp.else")
        done = self.func.append_basic_block("ifexp.done")
        b.cbranch(cond, then, other)
        b.position_at_end(then)
        x = self._expr(body) if isinstance(body, ast.AST) else body
        then_end = self.b.block
        self.b.position_at_end(other)
        if nonzero is not None:
            self.nonzero_names.append(nonzero)
        try:
            y = self._expr(orelse) if isinstance(orelse, ast.AST) else orelse
        finally:
            if nonzero is not None:
                self.nonzero_names.pop()
        other_end = self.b.block
        if not (isinstance(x, _Scalar) and isinstance(y, _Scalar)):
            raise Unsupported("a conditional expression of arrays")
        if x.dt == y.dt:
            t = x.dt
        elif x.dt.kind == "c" and y.dt.kind == "c":
            t = np.promote_types(x.dt, y.dt)
        else:
            raise Unsupported("a conditional expression of two types")
        self.b.position_at_end(then_end)
        xv = self._cast(x, t).v
        then_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(other_end)
        yv = self._cast(y, t).v
        other_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        phi = self.b.phi(_reg_type(t))
        phi.add_incoming(xv, then_end)
        phi.add_incoming(yv, other_end)
        return _Scalar(phi, t)


def _zero_guard(test):
    """``ast.dump(d)`` when ``test`` is ``d.real == 0 and d.imag == 0``, else None (the
    expressions of the generated code have no side effects: ``d`` evaluated again is the
    same number)."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and
            len(test.values) == 2):
        return None
    names = []
    for part, attr in zip(test.values, ("real", "imag")):
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and
                isinstance(part.ops[0], ast.Eq) and isinstance(part.left, ast.Attribute) and
                part.left.attr == attr and isinstance(part.comparators[0], ast.Constant) and
                part.comparators[0].value == 0):
            return None
        names.append(ast.dump(part.left.value))
    return names[0] if names[0] == names[1] else None
