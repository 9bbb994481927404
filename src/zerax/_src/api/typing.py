"""The type annotations of `zerax.typing` (JAX's ``jax.typing``): `ArrayLike`, what a
zerax function accepts as an array, and `DTypeLike`, what it accepts as a dtype.

>>> import zerax.numpy as znp
>>> from zerax.typing import ArrayLike
>>> def double(x: ArrayLike) -> znp.ndarray:
...     return znp.asarray(x) * 2
>>> double([1.0, 2.0])
Array([2., 4.], dtype=float64)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.array import Array

__all__ = ["ArrayLike", "DTypeLike"]

# As JAX's: arrays (zerax's, NumPy's), NumPy scalars and Python scalars.
ArrayLike = Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex

# As JAX's: a dtype name, a scalar type, a NumPy dtype, or anything with a ``.dtype``.
DTypeLike = str | type[Any] | np.dtype | Any
