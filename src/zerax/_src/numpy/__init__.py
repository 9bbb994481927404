"""The NumPy API composed from zerax primitives (no rules of its own).

Submodules by concept: ufuncs (elementwise), creation, shape_ops, joining, padding,
reductions, statistics, nanstatistics, indexing_ops, index_tricks, setops, linalg_ops,
extras (tests, windows, vectorize, ...), polynomial, bits, histograms, array_api (the
Python array API standard's own parts).  Each defines
``__all__``; this package re-exports them.
"""

import sys

from .ufuncs import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .shape_ops import *  # noqa: F401,F403
from .joining import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .indexing_ops import *  # noqa: F401,F403
from .index_tricks import *  # noqa: F401,F403
from .setops import *  # noqa: F401,F403
from .linalg_ops import *  # noqa: F401,F403
from .extras import *  # noqa: F401,F403
from .polynomial import *  # noqa: F401,F403
from .nanstatistics import *  # noqa: F401,F403
from .bits import *  # noqa: F401,F403
from .histograms import *  # noqa: F401,F403
from .array_api import *  # noqa: F401,F403
from . import (array_api, ufuncs, creation, shape_ops, joining, padding, reductions, statistics, indexing_ops, index_tricks, setops, linalg_ops, extras, polynomial, nanstatistics, bits, histograms)
from ._util import keep_weak
from .array_methods import install_array_methods
from ..ir.tracing import RecordingTracer

__all__ = sorted(set(ufuncs.__all__ + creation.__all__ + shape_ops.__all__ + joining.__all__
                     + padding.__all__ + reductions.__all__ + statistics.__all__
                     + indexing_ops.__all__ + index_tricks.__all__ + setops.__all__
                     + linalg_ops.__all__ + extras.__all__ + polynomial.__all__
                     + nanstatistics.__all__ + bits.__all__
                     + histograms.__all__ + array_api.__all__))


def _install_array_operators():
    """Install NumPy's operators and methods on Array and Tracer (see array_methods)."""
    install_array_methods(sys.modules[__name__])
    array_api.install_array_api_methods()
    pairs = {"add": add, "sub": subtract, "mul": multiply, "truediv": true_divide,  # noqa: F405
             "floordiv": floor_divide, "mod": remainder, "pow": power,  # noqa: F405
             "and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor}  # noqa: F405
    # The tracers of a jit trace may be weak (a jitted function's Python-number
    # arguments, see Tracer): an operator on weak values only is weak again, as Python
    # arithmetic on the numbers themselves would be.  Functions such as exp give
    # strong results, as NumPy's do.
    for name, fn in pairs.items():
        setattr(RecordingTracer, f"__{name}__", _weak_aware(fn))
        setattr(RecordingTracer, f"__r{name}__",
                _weak_aware(lambda self, other, _f=fn: _f(other, self)))
    RecordingTracer.__neg__ = _weak_aware(negative)  # noqa: F405
    RecordingTracer.__pos__ = _weak_aware(positive)  # noqa: F405
    RecordingTracer.__abs__ = _weak_aware(absolute)  # noqa: F405


def _weak_aware(op):

    def method(self, *other):
        out = op(self, *other)
        return out if self._weak_type is None else keep_weak(out, self, *other)
    method.__name__ = op.__name__
    return method


_install_array_operators()
