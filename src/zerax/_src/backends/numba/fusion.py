"""The Numba backend's spellings of dtypes and constants in generated source, and its
fusion plan (``backends/fusion.py``, with this backend's scalar rules as what fuses)."""

from __future__ import annotations

import numpy as np

from ..fusion import (  # noqa: F401  (re-exported for the lowering modules)
    _REDUCTIONS, IndexReads, _group_shape, _is_broadcast, _operand_fits, concat_sources,
    index_reads)
from ..fusion import plan_groups as _plan_groups
from .rules import scalar_rule_of


def dtype_name(dtype) -> str:
    """``np.float64``-style spelling of a dtype, valid inside njit code."""
    d = np.dtype(dtype)
    return "np.bool_" if d == np.bool_ else f"np.{d.name}"


def literal_text(value, dtype=None) -> str:
    """A scalar constant as source text with the right dtype."""
    v = np.asarray(value)
    dtype = np.dtype(dtype or v.dtype)
    item = v.item()
    if dtype == np.bool_:
        return "True" if item else "False"
    if dtype.kind == "f":
        if np.isnan(item):
            return f"{dtype_name(dtype)}(np.nan)"
        if np.isinf(item):
            return f"{dtype_name(dtype)}({'-' if item < 0 else ''}np.inf)"
        return f"{dtype_name(dtype)}({float(item)!r})"
    if dtype.kind == "c":
        parts = [literal_text(part, np.float64) for part in (item.real, item.imag)]
        return f"{dtype_name(dtype)}(complex({parts[0]}, {parts[1]}))"
    return f"{dtype_name(dtype)}({int(item)})"


class LoweringError(Exception):
    """A primitive without a Numba lowering (turned into a zerax error by the caller)."""

    def __init__(self, prim, message, source=None):
        super().__init__(message)
        self.prim = prim
        self.source = source  # the user's line that created the equation, when known


def _fusible(eqn) -> bool:
    return scalar_rule_of(eqn.primitive) is not None


def plan_groups(jaxpr, reads: IndexReads | None = None):
    """`backends.fusion.plan_groups` with this backend's scalar rules."""
    return _plan_groups(jaxpr, _fusible, reads)
