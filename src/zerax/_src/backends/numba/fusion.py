"""Fusion planning for generated code: which equations of a program become one loop
nest, and the spellings of dtypes and constants in the generated source.

Elementwise equations (those with a scalar rule) whose outputs share one shape fuse,
with broadcasts read in place and an optional final reduction accumulated inside the
same loops.
"""

from __future__ import annotations

import numpy as np

from ...ir import ir
from ...ir.ir import Var
from ...ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p
from ...ops.shape import broadcast_in_dim_p
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


# --------------------------------------------------------------------------- fusion


def _fusible(eqn) -> bool:
    return scalar_rule_of(eqn.primitive) is not None


def _is_broadcast(eqn) -> bool:
    return eqn.primitive is broadcast_in_dim_p


_REDUCTIONS = {reduce_sum_p: "sum", reduce_max_p: "max", reduce_min_p: "min",
               reduce_prod_p: "prod"}


def _group_shape(eqn):
    return eqn.outvars[0].aval.shape


def _operand_fits(atom, shape) -> bool:
    return atom.aval.shape == shape or atom.aval.shape == ()


def _joins(eqn, shape, members) -> str | None:
    """How ``eqn`` joins a group of loop shape ``shape`` (None: it does not)."""
    if _fusible(eqn) and _group_shape(eqn) == shape and \
            all(_operand_fits(a, shape) for a in eqn.invars):
        return "elementwise"
    if _is_broadcast(eqn) and _group_shape(eqn) == shape and shape != ():
        return "broadcast"
    if eqn.primitive in _REDUCTIONS and members and shape != () and \
            eqn.invars[0].aval.shape == shape and \
            any(eqn.invars[0] in m.outvars for m in members):
        return "reduce"
    return None


def _scalars_first(jaxpr):
    """The equations with the 0-d ones that read only 0-d values moved to the front (in
    their order): such scalar arithmetic (an optimiser's bias correction, a learning-rate
    schedule) would otherwise split the loops around it, each array then making one more
    round trip through memory."""
    scalar_vars = {v for v in jaxpr.invars if v.aval.shape == ()}
    first, rest = [], []
    for eqn in jaxpr.eqns:
        if all(o.aval.shape == () for o in eqn.outvars) and \
                all(type(a) is not Var or a in scalar_vars for a in eqn.invars) and \
                not any(isinstance(p, (ir.Jaxpr, ir.ClosedJaxpr)) for p in eqn.params.values()):
            first.append(eqn)
            scalar_vars.update(eqn.outvars)
        else:
            rest.append(eqn)
    return first + rest if first and rest else jaxpr.eqns


def plan_groups(jaxpr):
    """Split the equations into runs: fused loop nests and single equations.

    A fused group is elementwise equations (and broadcasts, read in place) sharing one
    loop shape, optionally ended by a reduction over one of their values, which then
    accumulates inside the same loop nest."""
    groups, current, shape = [], [], None
    for eqn in _scalars_first(jaxpr):
        if current:
            how = _joins(eqn, shape, current)
            if how is not None:
                current.append(eqn)
                if how == "reduce":  # a reduction ends its group
                    groups.append(("fused", current))
                    current = []
                continue
            groups.append(("fused", current))
            current = []
        if (_fusible(eqn) and all(_operand_fits(a, _group_shape(eqn)) for a in eqn.invars)) \
                or (_is_broadcast(eqn) and _group_shape(eqn) != ()):
            current, shape = [eqn], _group_shape(eqn)
        else:
            groups.append(("single", [eqn]))
    if current:
        groups.append(("fused", current))
    # A group of only broadcasts is cheaper as a plain broadcast.
    return [("single", g) if k == "fused" and all(_is_broadcast(e) for e in g) and len(g) == 1
            else (k, g) for k, g in groups]
