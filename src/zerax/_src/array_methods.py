"""Operators and methods shared by the concrete `Array` and every `Tracer`.

Each one delegates to `zerax.numpy`, so arrays and traced values behave the same and
the NumPy-2 dtype rules live in one place.
"""

from __future__ import annotations

import numpy as np

_jnp = None  # zerax._src.lax_numpy, bound on first use (it imports this module)


def _ns():
    global _jnp
    if _jnp is None:
        from . import lax_numpy
        _jnp = lax_numpy
    return _jnp


def _binary(name, reflected=False):
    if reflected:
        def method(self, other):
            return getattr(_jnp or _ns(), name)(other, self)
    else:
        def method(self, other):
            return getattr(_jnp or _ns(), name)(self, other)
    method.__name__ = name
    return method


def _forward(name):
    def method(self, *args, **kwargs):
        return getattr(_jnp or _ns(), name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``zerax.numpy.{name}(self, ...)``."
    return method


class ArrayMethods:
    """Mixin: NumPy's operator protocol for zerax values."""

    __slots__ = ()
    _weak_type = None        # (set on the tracers of a jit trace only; see Tracer)

    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", True)
    __truediv__ = _binary("true_divide")
    __rtruediv__ = _binary("true_divide", True)
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _binary("floor_divide", True)
    __mod__ = _binary("remainder")
    __rmod__ = _binary("remainder", True)
    __pow__ = _binary("power")
    __rpow__ = _binary("power", True)
    __matmul__ = _binary("matmul")
    __rmatmul__ = _binary("matmul", True)
    __and__ = _binary("bitwise_and")
    __rand__ = _binary("bitwise_and", True)
    __or__ = _binary("bitwise_or")
    __ror__ = _binary("bitwise_or", True)
    __xor__ = _binary("bitwise_xor")
    __rxor__ = _binary("bitwise_xor", True)
    __lshift__ = _binary("left_shift")
    __rlshift__ = _binary("left_shift", True)
    __rshift__ = _binary("right_shift")
    __rrshift__ = _binary("right_shift", True)
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    __eq__ = _binary("equal")
    __ne__ = _binary("not_equal")

    def __divmod__(self, other):
        return (_jnp or _ns()).divmod(self, other)

    def __rdivmod__(self, other):
        return (_jnp or _ns()).divmod(other, self)

    def __neg__(self):
        return (_jnp or _ns()).negative(self)

    def __pos__(self):
        return (_jnp or _ns()).positive(self)

    def __abs__(self):
        return (_jnp or _ns()).abs(self)

    def __invert__(self):
        return (_jnp or _ns()).invert(self)

    def __getitem__(self, idx):
        from .ops.indexing import getitem
        return getitem(self, idx)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    @property
    def at(self):
        """Functional updates: ``x.at[idx].set(v)`` returns a new array."""
        from .ops.indexing import IndexUpdateHelper
        return IndexUpdateHelper(self)

    @property
    def T(self):
        return (_jnp or _ns()).transpose(self)

    @property
    def mT(self):
        return (_jnp or _ns()).swapaxes(self, -1, -2)

    @property
    def real(self):
        return (_jnp or _ns()).real(self)

    @property
    def imag(self):
        return (_jnp or _ns()).imag(self)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return (_jnp or _ns()).reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = axes[0]
        return (_jnp or _ns()).transpose(self, axes or None)

    def astype(self, dtype, copy=True):
        return (_jnp or _ns()).astype(self, dtype)

    def __bool__(self):
        from .core import concrete_value
        return bool(concrete_value(self, "bool()"))

    def __int__(self):
        from .core import concrete_value
        return int(concrete_value(self, "int()"))

    def __float__(self):
        from .core import concrete_value
        return float(concrete_value(self, "float()"))

    def __complex__(self):
        from .core import concrete_value
        return complex(concrete_value(self, "complex()"))

    def __index__(self):
        from .core import concrete_value
        return int(concrete_value(self, "__index__()").__index__())

    def item(self, *args):
        from .core import concrete_value
        return concrete_value(self, ".item()").item(*args)

    def tolist(self):
        from .core import concrete_value
        return concrete_value(self, ".tolist()").tolist()

    sum = _forward("sum")
    prod = _forward("prod")
    mean = _forward("mean")
    var = _forward("var")
    std = _forward("std")
    max = _forward("max")
    min = _forward("min")
    argmax = _forward("argmax")
    argmin = _forward("argmin")
    cumsum = _forward("cumsum")
    cumprod = _forward("cumprod")
    any = _forward("any")
    all = _forward("all")
    ravel = _forward("ravel")
    squeeze = _forward("squeeze")
    swapaxes = _forward("swapaxes")
    clip = _forward("clip")
    round = _forward("round")
    conj = _forward("conj")
    conjugate = _forward("conjugate")
    dot = _forward("dot")
    take = _forward("take")
    repeat = _forward("repeat")
    nonzero = _forward("nonzero")
    trace = _forward("trace")
    diagonal = _forward("diagonal")
    sort = _forward("sort")
    argsort = _forward("argsort")
    ptp = _forward("ptp")
    searchsorted = _forward("searchsorted")
    partition = _forward("partition")
    argpartition = _forward("argpartition")
    choose = _forward("choose")

    def compress(self, condition, axis=None):
        """Same as ``zerax.numpy.compress(condition, self, axis)``."""
        return (_jnp or _ns()).compress(condition, self, axis=axis)

    def flatten(self, order="C"):
        return (_jnp or _ns()).ravel(self, order=order)

    def copy(self):
        return self
