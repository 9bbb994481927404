"""The primitives' own functions as `zerax.lax` offers them to users.

JAX's lax takes NumPy arrays and canonicalises them on entry, and canonicalises the dtypes
it is asked for, in either mode.  The functions of ``ops`` are zerax's internals too, which
pass 64-bit NumPy constants on purpose (the random hash's uint64 counters), so they stay
dtype-exact; `zerax.lax` exports them through `user_facing`, which, with x64 off, makes
NumPy array arguments zerax values of the mode's dtypes first (with x64 on NumPy's dtypes
are the mode's, and nothing is done).  The functions with a dtype argument
(``convert_element_type``, ``iota``, ``argmax``, ...) canonicalise it.

>>> import numpy as np, zerax as zx
>>> with zx.enable_x64(False):
...     zx.lax.complex(np.ones(2), np.zeros(2)).dtype
dtype('complex64')
"""

from __future__ import annotations

import functools

import numpy as np

from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core.api_util import as_input
from ..ops import bitcast as _bitcast
from ..ops import decompositions as _dec
from ..ops import eig as _eig
from ..ops import elementwise as ew
from ..ops import fft as _fft
from ..ops import linalg as _linalg
from ..ops import misc as _misc
from ..ops import reduce as red
from ..ops import shape as sh
from ..ops import special_ops as _special
from .lax import _coerce


def _enter(x):
    """A user's argument: NumPy arrays (also in a list or tuple) and NumPy float or
    complex scalars become zerax values of the mode's dtypes; anything else (static
    integers, shapes, tracers, Arrays) is left as it is."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic) and dtype_kind(x.dtype) in "fc":
        return as_input(x, "zerax.lax operand")
    if type(x) in (list, tuple) and any(isinstance(y, np.ndarray) for y in x):
        return type(x)(as_input(y, "zerax.lax operand") if isinstance(y, np.ndarray) else y
                       for y in x)
    return x


def _operand(x):
    """A Python number (or a list of them) given as an operand: a zerax value, typed
    as the mode says (as JAX's lax takes ``broadcast_in_dim(2.0, (3,), ())``)."""
    if type(x) in (bool, int, float, complex):
        return as_input(x, "zerax.lax operand")
    if type(x) in (list, tuple) and any(type(y) in (bool, int, float, complex) for y in x):
        return type(x)(_operand(y) for y in x)
    return x


def user_facing(fn, operands=0):
    """``fn`` (an ``ops`` function) with NumPy arguments canonicalised when x64 is off,
    and its first ``operands`` positional arguments taken as values when they are
    Python numbers (the others, shapes and axes, stay as they are)."""
    @functools.wraps(fn)
    def f(*args, **kwargs):
        if operands:
            args = tuple(_operand(a) if k < operands else a for k, a in enumerate(args))
        if not dtypes.x64_enabled():
            args = tuple(_enter(a) for a in args)
        return fn(*args, **kwargs)
    return f


conj, imag, integer_pow, real, select_n, polygamma, complex = (  # noqa: A001
    user_facing(f) for f in (ew.conj, ew.imag, ew.integer_pow, ew.real, ew.select_n,
                             ew.polygamma, ew.complex_))
(broadcast_in_dim, concatenate, dynamic_slice, dynamic_update_slice, expand_dims, pad,
 reshape, rev, squeeze, transpose, slice) = (  # noqa: A001
    user_facing(f, operands=1) for f in (
        sh.broadcast_in_dim, sh.concatenate, sh.dynamic_slice, sh.dynamic_update_slice,
        sh.expand_dims, sh.pad, sh.reshape, sh.rev, sh.squeeze, sh.transpose,
        sh.slice_p_bind))
reduce_max, reduce_min, reduce_prod, reduce_sum = (
    user_facing(f, operands=1) for f in (red.reduce_max, red.reduce_min, red.reduce_prod,
                                         red.reduce_sum))
stop_gradient = user_facing(_misc.stop_gradient)
dot, dot_general = user_facing(_linalg.dot), user_facing(_linalg.dot_general)
cholesky, eigh, lu, qr, svd, triangular_solve = (
    user_facing(f) for f in (_dec.cholesky, _dec.eigh, _dec.lu, _dec.qr, _dec.svd,
                             _dec.triangular_solve))
eig = user_facing(_eig.eig)
fft = user_facing(_fft.fft)
bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a, igammac, random_gamma_grad, zeta = (
    user_facing(f) for f in (_special.bessel_i0e, _special.bessel_i1e, _special.betainc,
                             _special.igamma, _special.igamma_grad_a, _special.igammac,
                             _special.random_gamma_grad, _special.zeta))


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (canonicalised for the mode);
    see ``ops/bitcast.py``.

    >>> import numpy as np, zerax.lax as lax
    >>> lax.bitcast_convert_type(np.float32(1.0), np.uint32)
    Array(1065353216, dtype=uint32)
    """
    return _bitcast.bitcast_convert_type(
        _enter(operand) if not dtypes.x64_enabled() else operand,
        dtypes.requested(new_dtype, "lax.bitcast_convert_type"))


def convert_element_type(operand, new_dtype):
    """``operand`` converted to ``new_dtype`` (canonicalised for the mode, as JAX's: with
    x64 off a requested float64 is float32, with JAX's warning)."""
    (operand,) = _coerce(operand)
    return ew.convert_element_type(operand, dtypes.requested(new_dtype,
                                                             "lax.convert_element_type"))


def iota(dtype, size, dimension=0):
    """``0, 1, ..., size - 1`` of ``dtype`` (JAX's ``lax.iota(dtype, size)``); a shape
    for ``size`` gives that array, counting along ``dimension``."""
    shape = (int(size),) if np.ndim(size) == 0 else tuple(int(d) for d in size)
    return sh.iota(dtypes.requested(dtype, "lax.iota"), shape, dimension)


def argmax(operand, axis, index_dtype=int):
    """The index of the largest element along ``axis`` (ties: the first)."""
    (operand,) = _coerce(operand)
    return red.argmax(operand, axis, dtypes.requested(index_dtype, "lax.argmax"))


def argmin(operand, axis, index_dtype=int):
    """The index of the smallest element along ``axis`` (ties: the first)."""
    (operand,) = _coerce(operand)
    return red.argmin(operand, axis, dtypes.requested(index_dtype, "lax.argmin"))


