"""What the translator computes with: `Unsupported` (a construct it refuses), the LLVM
types of dtypes, the values an expression evaluates to (``_Scalar``, ``_Array``,
``_DType``, ``_Tuple``), literals, and Numba's result types of scalar arithmetic."""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir


class Unsupported(Exception):
    """A construct this translator does not compile: Numba compiles the kernel."""


class _TypeChange(Unsupported):
    """A variable bound to scalars of two types (``owner``: the helper's Python function,
    None for the kernel): Numba types it as their unification everywhere, so the
    translation is done again with that type (`runtime.compile_kernel`)."""

    def __init__(self, owner, name, old, new):
        super().__init__(f"{name!r} changes type ({old} -> {new})")
        self.owner, self.name, self.old, self.new = owner, name, old, new


_I1, _I8, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_C64, _C128 = ir.LiteralStructType([_F32, _F32]), ir.LiteralStructType([_F64, _F64])
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
    if dt == np.complex128:        # {real, imag}: NumPy's layout, in memory as in registers
        return _C128
    if dt == np.complex64:
        return _C64
    raise Unsupported(f"dtype {dt}")


def _mem_type(dt: np.dtype):
    """The LLVM type of an element of a ``dt`` array (bool: one byte)."""
    return _I8 if dt.kind == "b" else _reg_type(dt)


_B = np.dtype(np.bool_)
_I64D = np.dtype(np.int64)
_I32D = np.dtype(np.int32)
_U64D = np.dtype(np.uint64)
_F64D = np.dtype(np.float64)
_F32D = np.dtype(np.float32)
_C64D = np.dtype(np.complex64)
_C128D = np.dtype(np.complex128)
_DTYPE_NAMES = {"bool_": _B, "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
                "int32": np.dtype(np.int32), "int64": _I64D, "uint8": np.dtype(np.uint8),
                "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32),
                "uint64": _U64D, "float32": _F32D, "float64": _F64D, "intp": _I64D,
                "complex64": _C64D, "complex128": _C128D}


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
    if dt.kind == "c":
        part = _reg_type(_part_type(dt))
        value = complex(value)
        return _Scalar(ir.Constant(_reg_type(dt), [ir.Constant(part, value.real),
                                                   ir.Constant(part, value.imag)]),
                       dt, value)
    return _Scalar(ir.Constant(_reg_type(dt), float(value)), dt, float(value))


def _part_type(dt: np.dtype) -> np.dtype:
    """The dtype of a complex ``dt``'s real and imaginary parts."""
    return _F32D if dt == _C64D else _F64D


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
    if isinstance(value, complex):
        return _const(_C128D, value)
    raise Unsupported(f"literal {value!r}")


# ------------------------------------------------------------------- type rules

def _arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """Numba's result type of ``+ - * // % & | ^`` on scalars of ``a`` and ``b``
    (refusing the mixes whose rules are subtle)."""
    if a.kind == "c" or b.kind == "c":
        return _complex_arith_type(a, b)
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


def _complex_arith_type(a, b):
    """Numba's result type of arithmetic on a complex scalar and another: NumPy's
    promotion (complex64 with float32: complex64; with float64 or int64: complex128),
    refusing bools and the small integers."""
    for x in (a, b):
        if x.kind == "b" or x.kind in _INT_KINDS and x.itemsize != 8:
            raise Unsupported(f"{a} with {b}")
    return np.promote_types(a, b)


def _truediv_type(a, b):
    t = _arith_type(a, b)
    return t if t.kind in "fc" else _F64D


def _c_strides(shape, itemsize):
    """Byte strides of a C-contiguous array of ``shape``."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _unify(a: np.dtype, b: np.dtype) -> np.dtype:
    """Numba's one type of a variable bound to scalars of ``a`` and ``b`` (the subset:
    integers of one signedness, the wider; an integer or float with a float64, float64;
    complex numbers with numbers, NumPy's promotion); `Unsupported` for the others."""
    if a == b:
        return a
    kinds = {a.kind, b.kind}
    if "b" in kinds:
        raise Unsupported(f"a variable of {a} and {b}")
    if kinds <= set(_INT_KINDS) and len(kinds) == 1:
        return a if a.itemsize >= b.itemsize else b
    if "c" in kinds:
        return np.promote_types(a, b)
    if "f" in kinds and _F64D in (a, b):
        return _F64D
    raise Unsupported(f"a variable of {a} and {b}")
