"""Abstract values: what tracing knows of an array (its shape and dtype)."""

from __future__ import annotations

import numpy as np


class ShapedArray:
    """The abstract value of an array: its shape and dtype (what tracing knows)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def str_short(self) -> str:
        return f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"

    __repr__ = str_short


_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64",
          "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16",
          "uint32": "u32", "uint64": "u64", "bool": "bool", "complex128": "c128",
          "complex64": "c64", "bfloat16": "bf16"}


def short_dtype(dtype) -> str:
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)
