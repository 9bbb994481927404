"""`zerax.numpy`: NumPy's API on immutable zerax arrays, usable under every transform."""

from .._src.numpy import *  # noqa: F401,F403
from .._src.numpy import __all__ as _all
from .._src.numpy.types import ndarray  # noqa: F401
from . import linalg  # noqa: F401
from . import fft  # noqa: F401
from .._src.numpy.npyio import load, save, savez  # noqa: F401
from .._src.numpy.polyfit import array_repr, array_str, polyfit, roots, sort_complex  # noqa: F401
# NumPy's stateful generator (autograd's ``autograd.numpy.random``): data and initial
# values for autograd-style programs (``np.random.randn``, ``npr.RandomState(0)``); it
# gives NumPy arrays, is not traced, and is not zerax.random's keyed, splittable PRNG
from numpy import random  # noqa: F401
import sys as _sys

_sys.modules[__name__ + ".random"] = random     # (so `import zerax.numpy.random` works)
# NumPy's print options, which the repr of zerax arrays follows
from numpy import get_printoptions, printoptions, set_printoptions  # noqa: F401

# the scalar types, callable as casts (JAX's); dtypes and constants, NumPy's own objects
from .._src.numpy.types import (  # noqa: F401
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
    float64, complex64, complex128, promote_types, result_type,
)
from .._src.base.dtypes import finfo, issubdtype, isdtype  # noqa: F401  (bfloat16-aware)
from .._src.numpy.types import dtype  # noqa: F401
from .._src.numpy.types import bfloat16_type as _bfloat16_type
from numpy import (  # noqa: F401
    iinfo, can_cast, pi, e, inf, nan, newaxis, euler_gamma, integer, floating,
    inexact, number, signedinteger, unsignedinteger, complexfloating, generic,
    iterable,
)

bool = bool_  # noqa: A001 - NumPy 2 exposes np.bool
float_ = float64

# NumPy's aliases of the default dtypes
single, double = float32, float64
csingle, cdouble = complex64, complex128
int_, uint = int64, uint64



def __getattr__(name):
    # bfloat16 is made on first use: it imports ml_dtypes (an optional dependency, slow
    # to import), and raises zerax.errors.MissingDependencyError when that is missing
    if name == "bfloat16":
        return _bfloat16_type()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# x.__array_namespace__() is this module (the Python array API standard's namespace)
from .._src.numpy.array_api import set_namespace as _set_namespace

_set_namespace(_sys.modules[__name__])

__all__ = list(_all) + ["ndarray", "linalg", "fft", "single", "double", "csingle", "cdouble",
                        "int_", "uint", "isdtype", "iterable", "array_repr", "array_str", "polyfit",
                        "roots", "sort_complex", "get_printoptions", "printoptions",
                        "set_printoptions", "load", "save", "savez", "random"]
