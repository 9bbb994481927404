"""The vocabulary that differentiation shares with the primitives' rules.

``Zero`` (a tangent or cotangent known to be zero, never materialised),
``UndefinedPrimal`` (a linear input of an equation being transposed) and ``add_any``
(adding two cotangents).  It sits in the core layer so that the rules in ``ops/`` and
the transforms in ``interpreters/`` both import it from below (JAX's ``ad_util``).
"""

from __future__ import annotations

import numpy as np

from ..base.dtypes import float0
from ..base.dtypes import kind as dtype_kind
from .avals import ShapedArray


class Zero:
    """A tangent or cotangent known to be zero; it is never materialised."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"


def zeros_for(aval: ShapedArray):
    """A concrete zero tangent for a value of type ``aval`` (float0 for integers)."""
    if dtype_kind(aval.dtype) in "fc":
        return np.zeros(aval.shape, aval.dtype)
    return np.zeros(aval.shape, float0)


def instantiate(t):
    """``t``, with a symbolic ``Zero`` made a concrete array of zeros."""
    return zeros_for(t.aval) if type(t) is Zero else t


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


_add = None  # the elementwise ``add`` of ops/elementwise.py, installed when it is imported


def install_add(add) -> None:
    """Called by ``ops/elementwise.py``: the operation ``add_any`` applies."""
    global _add
    _add = add


def add_any(a, b):
    """The sum of two cotangents (or tangents) of the same type."""
    return _add(a, b)
