"""Dtypes: NumPy 2 promotion with weak Python scalars, dtype predicates, and JAX's two
modes (``jax_enable_x64`` on: NumPy's 64-bit defaults; off: JAX's default 32-bit mode).

zerax follows NumPy 2 for result dtypes: `np.result_type` already treats Python
scalars as weak, so promotion is delegated to it with the Python scalar *values*
kept in the argument list.

The mode decides what a value *becomes* when it enters zerax and which dtype a
default is, never how zerax computes: with x64 off (JAX's default), NumPy arrays,
Python numbers and requested dtypes are *canonicalised* as JAX's
``canonicalize_dtype`` does (float64 -> float32, int64 -> int32, uint64 -> uint32,
complex128 -> complex64), defaults are float32/int32, and result dtypes are NumPy 2's
promotion, canonicalised.  Primitives never canonicalise: the library's own 64-bit
values (the random hash's counters) stay 64-bit in both modes.  zerax Arrays keep
their dtype whatever the mode (as JAX's: an array made with x64 on stays 64-bit).

The mode is process-wide (``zerax.config.update("jax_enable_x64", False)``, or
``JAX_ENABLE_X64`` / ``ZERAX_ENABLE_X64`` read at import), and `enable_x64` switches it
for one block of one thread, as JAX's ``jax.enable_x64`` context manager does.

bfloat16 comes from the ``ml_dtypes`` package, as JAX's does (an optional dependency:
``pip install zerax[bfloat16]``), imported only when a program first asks for it (its
import costs about as much as zerax's own).  NumPy sees it as a dtype of kind ``"V"``
that no ``np.issubdtype`` calls floating, so zerax asks `kind` and the predicates here,
which know it as a float; its promotions are JAX's lattice (`result_type`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings

import numpy as np

from ... import errors

float0 = np.dtype([("float0", np.void, 0)])  # the tangent dtype of integer values (as in JAX)

_PY_SCALARS = (bool, int, float, complex)

# --------------------------------------------------------------------------- bfloat16

_BF16_INSTALL = ("bfloat16 needs the ml_dtypes package (JAX's own bfloat16 comes from "
                 "it), which is not installed: pip install zerax[bfloat16]")
_bf16: list = []     # [np.dtype('bfloat16')] once ml_dtypes is imported


def bfloat16_dtype() -> np.dtype:
    """The bfloat16 dtype (``ml_dtypes.bfloat16``), importing ml_dtypes on first use; a
    `~zerax.errors.MissingDependencyError` naming the extra when it is not installed."""
    if not _bf16:
        try:
            import ml_dtypes
        except ImportError as e:
            raise errors.MissingDependencyError(_BF16_INSTALL) from e
        _bf16.append(np.dtype(ml_dtypes.bfloat16))
    return _bf16[0]


def is_bfloat16(dtype) -> bool:
    """Whether ``dtype`` is bfloat16 (without importing ml_dtypes: a program that has no
    bfloat16 value never pays for it)."""
    try:
        d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    except TypeError:
        return isinstance(dtype, str) and dtype == "bfloat16"
    return d.kind == "V" and d.name == "bfloat16"


def as_dtype(dtype) -> np.dtype:
    """``np.dtype(dtype)``, also for the name ``"bfloat16"`` before ml_dtypes is imported."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return bfloat16_dtype()
    return np.dtype(dtype)


def kind(dtype) -> str:
    """NumPy's kind letter of ``dtype``, with bfloat16 a float (``"f"``; NumPy says
    ``"V"``)."""
    d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    k = d.kind
    return "f" if k == "V" and d.name == "bfloat16" else k


def __getattr__(name):
    # zerax.dtypes.bfloat16: ml_dtypes' scalar type, as jax.dtypes.bfloat16 (imported
    # on first use; see the module's docstring)
    if name == "bfloat16":
        return bfloat16_dtype().type
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# --------------------------------------------------------------------------- the mode

_x64_global = [True]   # config.update("jax_enable_x64", ...): the process's mode


class _ThreadMode(threading.local):
    x64 = None          # set inside `enable_x64` blocks: this thread's mode


_thread_mode = _ThreadMode()


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are the defaults (JAX's ``config.jax_enable_x64``)."""
    v = _thread_mode.x64
    return _x64_global[0] if v is None else v


def set_x64(flag: bool) -> None:
    """Set the process-wide mode (``config.update("jax_enable_x64", flag)``)."""
    _x64_global[0] = bool(flag)


@contextlib.contextmanager
def enable_x64(new_val: bool = True):
    """Run a block in one mode, in this thread only (JAX's ``jax.enable_x64``): the
    mode before it is restored on leaving, however the block ends.

    >>> import zerax as zx, zerax.numpy as znp
    >>> with zx.enable_x64(False):
    ...     znp.ones(2).dtype, znp.arange(3).dtype
    (dtype('float32'), dtype('int32'))
    >>> znp.ones(2).dtype
    dtype('float64')
    """
    old = _thread_mode.x64
    _thread_mode.x64 = bool(new_val)
    try:
        yield
    finally:
        _thread_mode.x64 = old


_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


def parse_bool_env(name: str, value: str) -> bool:
    """JAX's reading of a boolean environment variable (``JAX_ENABLE_X64=0``), also of a
    string given to ``config.update("jax_enable_x64", ...)``."""
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise errors.ZeraxValueError(
        f"{name}={value!r} is not a truth value; use one of {', '.join(_TRUE)} or "
        f"{', '.join(_FALSE)} (JAX's reading of JAX_ENABLE_X64).")


# --------------------------------------------------------------------------- canonical dtypes

_TO_32 = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
          np.dtype(np.float64): np.dtype(np.float32),
          np.dtype(np.complex128): np.dtype(np.complex64)}
_F64, _I64, _C128 = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.complex128)
_U64 = np.dtype(np.uint64)


def canonicalize(dtype) -> np.dtype:
    """``dtype`` as the current mode has it (JAX's ``canonicalize_dtype``): with x64 off
    the 64-bit dtypes become their 32-bit counterparts.

    >>> import numpy as np, zerax as zx
    >>> with zx.enable_x64(False):
    ...     zx.dtypes.canonicalize_dtype(np.float64), zx.dtypes.canonicalize_dtype('int8')
    (dtype('float32'), dtype('int8'))
    """
    dt = np.dtype(dtype)
    if x64_enabled():
        return dt
    return _TO_32.get(dt, dt)


canonicalize_dtype = canonicalize   # JAX's name (jax.dtypes.canonicalize_dtype)


def not_canonical(dtype) -> bool:
    """Whether ``dtype`` is a 64-bit dtype that the current mode does not give (a
    NumPy result to redo in the mode's dtypes)."""
    return dtype in _TO_32 and not x64_enabled()


def default_float() -> np.dtype:
    """float64, or float32 with x64 off (the dtype of a Python float)."""
    return _F64 if x64_enabled() else _TO_32[_F64]


def default_int() -> np.dtype:
    """int64, or int32 with x64 off (the dtype of a Python int)."""
    return _I64 if x64_enabled() else _TO_32[_I64]


def default_uint() -> np.dtype:
    return _U64 if x64_enabled() else _TO_32[_U64]


def default_complex() -> np.dtype:
    return _C128 if x64_enabled() else _TO_32[_C128]


_PY_TYPE_DEFAULT = {bool: lambda: np.dtype(np.bool_), int: default_int, float: default_float,
                    complex: default_complex}


def requested(dtype, where: str = "") -> np.dtype:
    """A dtype the user asked for, canonicalised (JAX's ``check_and_canonicalize_user_
    dtype``): the Python types ``float``/``int``/``complex`` name the mode's defaults;
    an explicit 64-bit dtype with x64 off is truncated to 32 bits with JAX's warning."""
    if isinstance(dtype, type) and dtype in _PY_TYPE_DEFAULT:
        return _PY_TYPE_DEFAULT[dtype]()
    dt = as_dtype(dtype)
    if x64_enabled():
        return dt
    out = _TO_32.get(dt)
    if out is None:
        return dt
    in_ = f" requested in {where}" if where else ""
    warnings.warn(
        f"Explicitly requested dtype {dt.name}{in_} is not available, and will be "
        f"truncated to dtype {out.name}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option (zerax.config.update('jax_enable_x64', True)) or the "
        "JAX_ENABLE_X64 / ZERAX_ENABLE_X64 environment variable.", UserWarning,
        stacklevel=_user_stacklevel())
    return out


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside zerax (a warning names the user's
    line, however deep in zerax it was raised)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def python_scalar_dtype(x) -> np.dtype:
    """The dtype a Python number takes as an array: the mode's default of its kind."""
    return _PY_TYPE_DEFAULT[type(x)]()


def canonical_ndarray(v: np.ndarray) -> np.ndarray:
    """A NumPy array entering zerax, in the mode's dtype (64-bit values are rounded or
    wrapped to 32 bits with x64 off, as JAX's ``device_put`` does)."""
    if x64_enabled():
        return v
    out = _TO_32.get(v.dtype)
    return v if out is None else v.astype(out)


def scalar_array(x) -> np.ndarray:
    """A Python number as a 0-d NumPy array of the mode's default dtype; an int that
    does not fit int32 with x64 off is an OverflowError, as in JAX."""
    if x64_enabled() or type(x) is bool:
        return np.asarray(x)
    dt = _PY_TYPE_DEFAULT[type(x)]()
    if type(x) is int and not -2 ** 31 <= x < 2 ** 31:
        raise OverflowError(f"Python int {x} too large to convert to {dt.name} (x64 is "
                            "off: zerax.config.update('jax_enable_x64', True) for int64)")
    return np.asarray(x, dt)


# --------------------------------------------------------------------------- promotion


def is_python_scalar(x) -> bool:
    return type(x) in _PY_SCALARS


def dtype_of(x) -> np.dtype:
    """The dtype a value has (or will have once converted to an array)."""
    d = getattr(x, "dtype", None)
    if d is not None:
        return np.dtype(d)
    if type(x) in _PY_SCALARS:
        return python_scalar_dtype(x)
    return canonicalize(np.asarray(x).dtype)


def result_type(*args) -> np.dtype:
    """NumPy 2's result dtype, canonicalised; Python scalars among ``args`` are weak.
    With a bfloat16 among them, JAX's lattice (see `_bfloat16_result`).

    >>> import numpy as np, zerax as zx
    >>> zx.dtypes.result_type(np.float32, 2.0), zx.dtypes.result_type(1, 2.0)
    (dtype('float32'), dtype('float64'))
    """
    args = [a if type(a) in _PY_SCALARS else _as_dtype_arg(a) for a in args]
    if any(isinstance(a, np.dtype) and a.kind == "V"
           and is_bfloat16(a) for a in args):
        return _bfloat16_result(args)
    return canonicalize(np.result_type(*args))


def _bfloat16_result(args) -> np.dtype:
    """JAX's promotion lattice where a bfloat16 meets other dtypes: integers, bools and
    weak Python ints/floats take the bfloat16; float16 (the other half precision) and
    bfloat16 meet at float32; wider floats and complex dtypes win, and a Python complex
    gives complex64.  (ml_dtypes registers NumPy promotions of its own, int32 with
    bfloat16 -> float64: JAX's are the ones ported programs expect.)"""
    bf16 = bfloat16_dtype()
    strong = [a for a in args if isinstance(a, np.dtype) and not is_bfloat16(a)]
    weak = [a for a in args if type(a) in _PY_SCALARS]
    other = canonicalize(np.result_type(*strong)) if strong else None
    if other is None or other.kind in "biu":
        out = bf16
    elif other == np.float16:
        out = np.dtype(np.float32)
    else:
        out = other          # float32, float64, complex
    if out == bf16:
        return np.dtype(np.complex64) if any(type(a) is complex for a in weak) else bf16
    return canonicalize(np.result_type(out, *weak))


def _as_dtype_arg(a):
    if isinstance(a, (np.dtype, type, str)):
        return as_dtype(a)
    return dtype_of(a)


def is_inexact(dtype) -> bool:
    return np.issubdtype(dtype, np.inexact) or is_bfloat16(dtype)


def is_float(dtype) -> bool:
    return np.issubdtype(dtype, np.floating) or is_bfloat16(dtype)


def is_complex(dtype) -> bool:
    return np.issubdtype(dtype, np.complexfloating)


def is_integer(dtype) -> bool:
    return np.issubdtype(dtype, np.integer)


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def to_inexact(dtype) -> np.dtype:
    """The float dtype NumPy 2 uses for e.g. ``np.sin`` of ``dtype`` (canonicalised)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    return canonicalize(np.result_type(dtype, np.float16) if dtype.itemsize < 4 and not
                        is_bool(dtype) else (np.dtype(np.float16) if is_bool(dtype) else
                                             np.result_type(dtype, 1.0)))


# --------------------------------------------------------------------------- NumPy's dtype
# functions, knowing bfloat16 (NumPy's own reject it or call it no float)


def finfo(dtype):
    """``np.finfo``, also of bfloat16 (``ml_dtypes.finfo``, as JAX's ``jnp.finfo``).

    >>> import zerax.numpy as znp
    >>> float(znp.finfo(znp.float32).eps)
    1.1920928955078125e-07
    """
    if is_bfloat16(dtype):
        import ml_dtypes
        return ml_dtypes.finfo(bfloat16_dtype())
    d = getattr(dtype, "dtype", None)      # an array (np.finfo takes those too)
    return np.finfo(d if isinstance(d, np.dtype) else dtype)


def issubdtype(arg1, arg2) -> bool:
    """``np.issubdtype``, with bfloat16 under ``floating``/``inexact``/``number`` (JAX's
    ``jnp.issubdtype``).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.issubdtype(np.float32, np.floating), znp.issubdtype(np.int8, np.inexact)
    (True, False)
    """
    if is_bfloat16(arg1):
        if is_bfloat16(arg2):
            return True
        return any(arg2 is t for t in (np.floating, np.inexact, np.number, np.generic))
    if is_bfloat16(arg2):
        return False
    return np.issubdtype(arg1, arg2)


def isdtype(dtype, kind) -> bool:
    """``np.isdtype`` (the array API standard's), with bfloat16 a real floating dtype."""
    if is_bfloat16(dtype):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        return any(k in ("real floating", "numeric") or
                   (not isinstance(k, str) and is_bfloat16(k)) for k in kinds)
    return np.isdtype(np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype, kind)
