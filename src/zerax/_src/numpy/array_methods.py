"""NumPy's operators and methods on `Array` and every `Tracer`, installed from here.

`ArrayMethods` (the common base, in ``core/array.py``) knows only the conversions that
need a concrete value; this module, in the NumPy layer, gives it the rest when
``zerax._src.numpy`` is imported: each operator or method delegates to the
``zerax.numpy`` function of the same meaning, so arrays and traced values behave the
same and the NumPy-2 dtype rules live in one place.  (JAX installs its array methods
from above the same way.)
"""

from __future__ import annotations

import numpy as np

from ..core.array import ArrayMethods
from ..ops.indexing import IndexUpdateHelper, getitem

_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
           "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
           "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift"}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
            "eq": "equal", "ne": "not_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}
_FORWARD = ("sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin",
            "cumsum", "cumprod", "any", "all", "ravel", "squeeze", "swapaxes", "clip",
            "round", "conj", "conjugate", "dot", "take", "repeat", "nonzero", "trace",
            "diagonal", "sort", "argsort", "ptp", "searchsorted", "partition",
            "argpartition", "choose")


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


def _forward(name, fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``zerax.numpy.{name}(self, ...)``."
    return method


def install_array_methods(jnp) -> None:
    """Give `ArrayMethods` NumPy's operators and methods, from the namespace ``jnp``
    (``zerax._src.numpy``, fully imported)."""
    cls = ArrayMethods
    for dunder, name in _BINARY.items():
        fn = getattr(jnp, name)
        setattr(cls, f"__{dunder}__", fn)
        setattr(cls, f"__r{dunder}__", _reflected(fn))
    for dunder, name in {**_COMPARE, **_UNARY}.items():
        setattr(cls, f"__{dunder}__", getattr(jnp, name))
    cls.__hash__ = None  # defining __eq__ above does not reset it on an existing class
    cls.__divmod__ = lambda self, other: jnp.divmod(self, other)
    cls.__rdivmod__ = lambda self, other: jnp.divmod(other, self)
    cls.__getitem__ = getitem
    cls.at = property(IndexUpdateHelper,
                      doc="Functional updates: ``x.at[idx].set(v)`` returns a new array.")
    cls.T = property(jnp.transpose)
    cls.mT = property(lambda self: jnp.swapaxes(self, -1, -2))
    cls.real = property(jnp.real)
    cls.imag = property(jnp.imag)
    for name in _FORWARD:
        setattr(cls, name, _forward(name, getattr(jnp, name)))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return jnp.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = axes[0]
        return jnp.transpose(self, axes or None)

    def astype(self, dtype, copy=True):
        return jnp.astype(self, dtype)

    def compress(self, condition, axis=None):
        """Same as ``zerax.numpy.compress(condition, self, axis)``."""
        return jnp.compress(condition, self, axis=axis)

    def flatten(self, order="C"):
        return jnp.ravel(self, order=order)

    def copy(self):
        return self

    for fn in (reshape, transpose, astype, compress, flatten, copy):
        setattr(cls, fn.__name__, fn)
