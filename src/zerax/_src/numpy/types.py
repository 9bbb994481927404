"""`zerax.numpy.ndarray`, the type that every zerax array value belongs to, and the
scalar types (``float32``, ``int64``, ...) as JAX's callable casts.

As JAX's ``jnp.ndarray`` (``jax.Array``), it is an abstract type whose instance check
accepts concrete `Array` values and the tracers that stand for them under every
transform (``jit``, ``grad``, ``vmap``, ...), so ``isinstance(x, znp.ndarray)`` is the
test ported programs use to tell a zerax value from a NumPy array or a Python number.

The scalar types are JAX's ``_ScalarMeta`` objects: ``znp.float32(x)`` is
``znp.asarray(x, dtype=float32)``, a zerax array (a cast under every transform), while
``np.dtype(znp.float32)``, ``znp.float32 == np.float32``, ``isinstance(np.float32(1),
znp.float32)`` and ``np.issubdtype(znp.float32, np.floating)`` behave as with NumPy's type.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from .creation import asarray

__all__ = [
    "bool_",
    "complex64",
    "complex128",
    "dtype",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "ndarray",
    "promote_types",
    "result_type",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

_ARRAY_TYPES = (Array, Tracer)


def result_type(*args) -> np.dtype:
    """NumPy 2's result dtype of ``args`` (arrays, dtypes, Python numbers, which are
    weak), in the mode's dtypes (with x64 off, 64-bit results canonicalised as JAX's).

    >>> import numpy as np, zerax as zx, zerax.numpy as znp
    >>> znp.result_type(np.int32, 1.0)
    dtype('float64')
    >>> with zx.enable_x64(False):
    ...     znp.result_type(np.int32, 1.0)
    dtype('float32')
    """
    return dtypes.result_type(*args)


def promote_types(type1, type2) -> np.dtype:
    """NumPy's ``promote_types``, in the mode's dtypes (see `result_type`); bfloat16
    promotes on JAX's lattice.

    >>> import zerax.numpy as znp
    >>> znp.promote_types(znp.bfloat16, znp.float16), znp.promote_types(znp.bfloat16, 'int32')
    (dtype('float32'), dtype(bfloat16))
    """
    if dtypes.is_bfloat16(type1) or dtypes.is_bfloat16(type2):
        return dtypes.result_type(dtypes.as_dtype(type1), dtypes.as_dtype(type2))
    return dtypes.canonicalize(np.promote_types(type1, type2))


class _DtypeMeta(type):
    def __call__(cls, obj, *args, **kwargs):
        if isinstance(obj, str) and obj == "bfloat16":
            return dtypes.bfloat16_dtype()
        return np.dtype(obj, *args, **kwargs)

    def __instancecheck__(cls, instance):
        return isinstance(instance, np.dtype)

    def __subclasscheck__(cls, subclass):
        return isinstance(subclass, type) and issubclass(subclass, np.dtype)


class dtype(metaclass=_DtypeMeta):
    """NumPy's ``np.dtype``, which also knows the name ``"bfloat16"`` before ml_dtypes is
    imported (zerax imports it on first use: JAX, which always imports it, has
    ``jnp.dtype("bfloat16")``); its values are ``np.dtype`` objects.

    >>> import zerax.numpy as znp
    >>> znp.dtype("bfloat16"), isinstance(znp.dtype("f4"), znp.dtype)
    (dtype(bfloat16), True)
    """



class _ArrayMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, _ARRAY_TYPES)

    def __subclasscheck__(cls, subclass):
        return isinstance(subclass, type) and (
            subclass is cls or issubclass(subclass, _ARRAY_TYPES))


class ndarray(metaclass=_ArrayMeta):
    """The type of zerax arrays, concrete or traced (JAX's ``jnp.ndarray``).

    ``isinstance(x, ndarray)`` is True for a zerax `Array` and for a tracer under any
    transform; False for NumPy arrays, NumPy scalars and Python numbers.  Use it in
    instance checks and annotations; create arrays with ``zerax.numpy.array``.

    >>> import numpy as np, zerax as zx, zerax.numpy as znp
    >>> isinstance(znp.ones(3), znp.ndarray), isinstance(np.ones(3), znp.ndarray)
    (True, False)
    >>> bool(zx.jit(lambda x: isinstance(x, znp.ndarray))(1.0))
    True
    """

    def __new__(cls, *args, **kwargs):
        raise errors.ZeraxTypeError(
            "zerax.numpy.ndarray cannot be instantiated; create arrays with "
            "zerax.numpy.array / zerax.numpy.asarray (as with JAX's jnp.ndarray).")


# --------------------------------------------------------------------------- scalar types


class _ScalarMeta(type):
    """A NumPy scalar type that casts when called (JAX's ``jnp.float32`` and friends)."""

    dtype: np.dtype

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'zerax.numpy.{cls.__name__}'>"


def _make_scalar_type(np_type) -> _ScalarMeta:
    name = np.dtype(np_type).name if np_type is not np.bool_ else "bool_"
    doc = (f"The {np.dtype(np_type).name} scalar type; calling it casts, as JAX's "
           f"``jnp.{name}(x)``: ``zerax.numpy.asarray(x, dtype={np.dtype(np_type).name})``, "
           "on concrete and traced values alike.")
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type), "__doc__": doc,
                                         "__module__": __name__})


bool_ = _make_scalar_type(np.bool_)
int8, int16, int32, int64 = (_make_scalar_type(t) for t in (np.int8, np.int16, np.int32,
                                                            np.int64))
uint8, uint16, uint32, uint64 = (_make_scalar_type(t) for t in (np.uint8, np.uint16,
                                                                np.uint32, np.uint64))
float16, float32, float64 = (_make_scalar_type(t) for t in (np.float16, np.float32,
                                                            np.float64))
complex64, complex128 = (_make_scalar_type(t) for t in (np.complex64, np.complex128))
_bfloat16: list = []


def bfloat16_type() -> _ScalarMeta:
    """``zerax.numpy.bfloat16`` (made on first use: ml_dtypes is imported then)."""
    if not _bfloat16:
        t = _make_scalar_type(dtypes.bfloat16_dtype().type)
        t.__doc__ += """

    >>> import zerax.numpy as znp
    >>> znp.asarray([1.0, 1.3], znp.bfloat16) + 1
    Array([2, 2.29688], dtype=bfloat16)
    """
        _bfloat16.append(t)
    return _bfloat16[0]
float32.__doc__ += """

    >>> import zerax as zx, zerax.numpy as znp
    >>> znp.float32(2)
    Array(2., dtype=float32)
    >>> zx.jit(lambda x: znp.int64(x))(2.7)
    Array(2, dtype=int64)
    """
