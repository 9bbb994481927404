"""Compiled eager paths for the most frequent calls on concrete keys: `split`, `fold_in`,
and `uniform`/`normal` with scalar bounds.

Eagerly, a sampler is some sixty primitives, each a few microseconds of Python and NumPy
on a handful of numbers; JAX dispatches one compiled program instead.  When the key and
the parameters are concrete (no transform is tracing them), these Numba kernels compute
the whole result in one call, with the arithmetic of the compiled (jit) program: the same
threefry2x32 hash, the same float construction and the same erf_inv (XLA's polynomials,
log1p from the backend's vecmath), so results equal ``jit`` of the sampler.  Kernels are
compiled on first use and cached on disk by Numba.
"""

from __future__ import annotations

import math

import numpy as np

from ...backends import get_backend
from ...core.array import Array
from ...core.core import Tracer

_KERNELS: dict = {}


def _kernels():
    """The Numba backend's kernels (``backends/numba/random_kernels.py``, loaded with
    the backend, so compiled or loaded from Numba's disk cache, on first use)."""
    if not _KERNELS:
        _KERNELS.update(get_backend("numba").random_kernels())
    return _KERNELS


# --------------------------------------------------------------------------- entry points

def concrete_words(data):
    """The key's two words as NumPy uint32 scalars, or None when it is being traced."""
    if isinstance(data, Tracer):
        return None
    v = data._value if type(data) is Array else np.asarray(data)
    return v[0], v[1]   # NumPy uint32 scalars (the key was checked to be uint32[2])


def concrete_scalar(x, dtype):
    """A concrete 0-d parameter as a NumPy scalar of ``dtype``, or None."""
    if isinstance(x, Tracer):
        return None
    v = x._value if type(x) is Array else np.asarray(x)
    if v.ndim:
        return None
    return dtype.type(v)


_LO = {np.dtype(np.float32): np.nextafter(np.float32(-1.0), np.float32(0.0)),
       np.dtype(np.float64): np.nextafter(-1.0, 0.0)}   # normal's lower bound, as JAX's


def _out(x, shape):
    return Array._wrap(x if len(shape) == 1 else x.reshape(shape))


def split(words, shape):
    n = math.prod(shape)
    out = _kernels()["pairs"](words[0], words[1], n)
    return Array._wrap(out.reshape(tuple(shape) + (2,)))


def fold_in(words, data):
    y0, y1 = _kernels()["hash2"](words[0], words[1], np.uint32(0), np.uint32(data))
    return Array._wrap(np.array([y0, y1], np.uint32))


def uniform(words, shape, dtype, lo, hi):
    k = _kernels()["uniform64" if dtype == np.float64 else "uniform32"]
    return _out(k(words[0], words[1], math.prod(shape), lo, hi), shape)


def normal(words, shape, dtype):
    k = _kernels()["normal64" if dtype == np.float64 else "normal32"]
    return _out(k(words[0], words[1], math.prod(shape), _LO[dtype]), shape)
