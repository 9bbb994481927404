"""Compiled eager paths for the most frequent calls on concrete keys: `split`, `fold_in`,
and `uniform`/`normal` with scalar bounds.

Eagerly, a sampler is some sixty primitives, each a few microseconds of Python and NumPy
on a handful of numbers; JAX dispatches one compiled program instead.  When the key and
the parameters are concrete (no transform is tracing them), the sampler's own traced
program is compiled once per shape and dtype (``jit``'s executable, kept here) and
called directly on the key's words: the same program ``jit`` of the sampler runs, so
eager results equal jitted ones bit for bit.
"""

from __future__ import annotations

import functools

import numpy as np

from ...base.dtypes import x64_enabled
from ...core.array import Array
from ...core.core import Tracer
from ..jit import executable_for, jit

# ((kind, static parameters), x64) -> the compiled call, its constants bound
_PROGRAMS: dict = {}


def concrete_key(data):
    """The key's data as a uint32[2] NumPy array, or None when it is being traced."""
    if isinstance(data, Tracer):
        return None
    v = data._value if type(data) is Array else np.asarray(data)
    return v if v.flags.c_contiguous else np.array(v, order="C")


def concrete_scalar(x, dtype):
    """A concrete 0-d parameter as a NumPy scalar of ``dtype``, or None."""
    if isinstance(x, Tracer):
        return None
    v = x._value if type(x) is Array else np.asarray(x)
    if v.ndim:
        return None
    return dtype.type(v)


def run(key, fn, args):
    """``fn(*args)`` by its compiled program, kept under ``key`` (the static parameters
    ``fn`` closes over); ``args`` are C-contiguous NumPy arrays (a key's data, 0-d
    bounds).  Returns the first result as an Array."""
    key = (key, x64_enabled())      # the program traced in each mode is its own
    call = _PROGRAMS.get(key)
    if call is None:
        arrays = [_c_array(a) for a in args]
        low = jit(fn).lower(*arrays)
        exe = executable_for(low.jaxpr, low.name)
        consts = tuple(_c_array(c) for c in low.consts)
        exe.run(*consts, *arrays)                   # compiles: exe.kernel is the call
        call = _PROGRAMS[key] = functools.partial(exe.kernel, *consts)
    return Array._wrap(call(*args)[0])


def _c_array(a):
    """``a`` as a C-contiguous NumPy array (constants may be broadcast views)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C")
