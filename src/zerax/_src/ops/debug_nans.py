"""JAX's ``jax_debug_nans`` and ``jax_debug_infs``: stop at the first operation that
produces a nan (or an infinity), naming it.

``zerax.config.update("jax_debug_nans", True)`` (or ``"debug_nans"``; ``"jax_debug_infs"``
and ``"debug_infs"`` for infinities) turns the checks on:

- eagerly, each primitive's floating-point results are checked as it runs, and the
  first with a nan raises ``FloatingPointError("invalid value (nan) encountered in
  log")``; this covers ``grad``, ``vmap`` and the other transforms run eagerly;
- a jitted function's results are checked after each call (``api/jit.py`` calls
  `check_jit_outputs`); when one holds a nan, the function is run again without
  ``jit``, op by op, and the error names the primitive that made it, as JAX's
  de-optimized re-run does.  If that run produces none (a compiled program may round
  differently), the error says so and names the jitted function.

While the checks are off nothing is changed: they work by wrapping each primitive's
NumPy implementation when they are turned on (and unwrapping it when they are turned
off), so the eager path pays nothing for them otherwise.  Under ``jit`` only the
outputs are checked, so a nan that a later operation removes (``where``) goes
unnoticed there, as in JAX.
"""

from __future__ import annotations

import numpy as np

from ..base.config import config
from ..base.dtypes import kind as dtype_kind
from ..core.core import all_primitives

__all__ = ["check_jit_outputs", "check_values", "nan_checks"]

_state = {"nan": False, "inf": False}
# True while any check is on: read by jit's dispatch on every call (one list lookup)
nan_checks = [False]
_originals: dict = {}   # primitive -> its unwrapped NumPy implementation


def _invalid(outs):
    """``"nan"`` or ``"inf"`` when a checked kind of invalid value is in ``outs``."""
    for o in outs:
        a = o if isinstance(o, np.ndarray) else np.asarray(o)
        if dtype_kind(a.dtype) not in "fc" or not a.size:
            continue
        if _state["nan"] and np.isnan(a).any():
            return "nan"
        if _state["inf"] and np.isinf(a).any():
            return "inf"
    return None


def check_values(what: str, outs) -> None:
    """Raise FloatingPointError when ``outs`` (NumPy values) hold a checked invalid
    value, naming ``what`` produced them."""
    bad = _invalid(outs)
    if bad is not None:
        raise FloatingPointError(f"invalid value ({bad}) encountered in {what}")


def _checked(prim, impl):
    def checked_impl(*vals, **params):
        out = impl(*vals, **params)
        if nan_checks[0]:   # a host call compiled while the checks were on outlives them
            name = params.get("name")
            what = f"{prim.name}({name})" if isinstance(name, str) else prim.name
            check_values(what, out if prim.multiple_results else (out,))
        return out
    checked_impl.__wrapped__ = impl
    return checked_impl


def _update(kind, value):
    _state[kind] = bool(value)
    on = any(_state.values())
    nan_checks[0] = on
    if on and not _originals:
        for prim in all_primitives().values():
            if prim.impl is not None:
                _originals[prim] = prim.impl
                prim.impl = _checked(prim, prim.impl)
    elif not on and _originals:
        for prim, impl in _originals.items():
            prim.impl = impl
        _originals.clear()


def check_jit_outputs(name: str, outs, deoptimized) -> None:
    """After a call of the jitted function ``name``: when ``outs`` hold a checked invalid
    value, run ``deoptimized()`` (the function without jit) so that the primitive that
    makes it raises; if none does, raise naming the jitted function."""
    bad = _invalid(outs)
    if bad is None:
        return
    deoptimized()   # raises FloatingPointError at the primitive, when it reproduces
    raise FloatingPointError(
        f"invalid value ({bad}) encountered in jit({name}). Because debug_{bad}s is set, "
        "the function was run again without jit, op by op, to find the operation that "
        f"made it, but that run produced no {bad}: the compiled program computed a "
        "different value (a different rounding or order of operations). Call the "
        "function inside zerax.disable_jit() to debug it op by op.")


for _kind in ("nan", "inf"):
    for _name in (f"debug_{_kind}s", f"jax_debug_{_kind}s"):
        config.register_option(_name, lambda v, _k=_kind: _update(_k, v),
                               lambda _k=_kind: _state[_k])
