"""Fusion planning, shared by the backends: which equations of a program become one
loop nest.

Elementwise equations (those with a scalar rule) whose outputs share one shape fuse,
with broadcasts read in place and an optional final reduction accumulated inside the
same loops.  A concatenation of slices (``jnp.roll``, a periodic stencil's shifted
copies) is read in place too: each element comes from the piece its index falls in,
and the slices are never materialised (`index_reads`).
"""

from __future__ import annotations

import numpy as np

from ..ir import ir
from ..ir.ir import Var
from ..ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p
from ..ops.shape import broadcast_in_dim_p, concatenate_p
from ..ops.slicing import slice_p


# --------------------------------------------------------------------------- fusion


def _is_broadcast(eqn) -> bool:
    return eqn.primitive is broadcast_in_dim_p


_REDUCTIONS = {reduce_sum_p: "sum", reduce_max_p: "max", reduce_min_p: "min",
               reduce_prod_p: "prod"}


def _group_shape(eqn):
    return eqn.outvars[0].aval.shape


def _operand_fits(atom, shape) -> bool:
    return atom.aval.shape == shape or atom.aval.shape == ()


def _joins(eqn, shape, members, fusible) -> str | None:
    """How ``eqn`` joins a group of loop shape ``shape`` (None: it does not)."""
    if fusible(eqn) and _group_shape(eqn) == shape and \
            all(_operand_fits(a, shape) for a in eqn.invars):
        return "elementwise"
    if _is_broadcast(eqn) and _group_shape(eqn) == shape and shape != ():
        return "broadcast"
    if eqn.primitive in _REDUCTIONS and members and shape != () and \
            eqn.invars[0].aval.shape == shape and \
            any(eqn.invars[0] in m.outvars for m in members):
        return "reduce"
    return None


class IndexReads:
    """The concatenations read in place by the fused code that uses them, and the
    slices that only feed them (never materialised: the concatenation reads their
    operand at the shifted index)."""

    def __init__(self, concats=frozenset(), slices=None):
        self.concats = concats        # ids of the concatenate equations read in place
        self.slices = slices or {}    # slice output var -> its slice equation


def index_reads(jaxpr, stable=lambda var: True) -> IndexReads:
    """Which concatenations of ``jaxpr`` to read in place: those with at least one
    operand that is a slice used only by concatenations.  ``stable(var)``: whether
    ``var``'s buffer keeps its value until the end of the program (False for a buffer an
    update writes in place: a deferred read would see the new values)."""
    uses: dict = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if type(a) is Var:
                uses.setdefault(a, []).append(e)
    outs = {v for v in jaxpr.outvars if type(v) is Var}
    slices = {}
    for e in jaxpr.eqns:
        (out,) = e.outvars if e.primitive is slice_p else (None,)
        if out is None or out in outs or type(e.invars[0]) is not Var or \
                not stable(e.invars[0]) or 0 in out.aval.shape:
            continue
        if all(u.primitive is concatenate_p for u in uses.get(out, ())) and out in uses:
            slices[out] = e
    concats = frozenset(
        id(e) for e in jaxpr.eqns if e.primitive is concatenate_p and
        all(type(a) is Var for a in e.invars) and any(a in slices for a in e.invars) and
        all(type(a) is Var and (a in slices or stable(a)) for a in e.invars))
    # a slice is deferred only when every concatenation reading it is read in place
    slices = {v: e for v, e in slices.items()
              if all(id(u) in concats for u in uses[v])}
    concats = frozenset(id(e) for e in jaxpr.eqns if id(e) in concats and
                        all(a in slices or stable(a) for a in e.invars))
    return IndexReads(concats, slices)


def concat_sources(eqn, reads: IndexReads):
    """The vars a concatenation read in place reads (a deferred slice's operand)."""
    return [reads.slices[a].invars[0] if a in reads.slices else a for a in eqn.invars]


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


def plan_groups(jaxpr, fusible, reads: IndexReads | None = None):
    """Split the equations into runs: fused loop nests and single equations.

    A fused group is elementwise equations (and broadcasts, read in place) sharing one
    loop shape, optionally ended by a reduction over one of their values, which then
    accumulates inside the same loop nest.  With ``reads`` (`index_reads`), its
    concatenations join (or start) groups too, and its deferred slices are in no group.
    ``fusible(eqn)``: whether the backend computes ``eqn`` one element at a time (it has
    a scalar rule for the primitive).

    An elementwise equation joins the group just before it, or an earlier open group of
    its shape that computes one of its operands, after everything else it reads and
    after the last equation that is not fused: a ``tree_map`` over
    parameters of several shapes (an optimiser's update, ``pmean`` of gradients then a
    step) interleaves the shapes, and each array's chain would otherwise be cut into one
    loop per map, each a round trip through memory.  Moving a pure equation earlier,
    after its operands, keeps the order a valid one; it only reads values sooner (so an
    update in place that `inplace.plan` allowed stays allowed)."""
    reads = reads or IndexReads()
    slots = []          # [kind, eqns, shape, open]: in the order they are lowered
    made_in: dict = {}  # var -> the slot that computes it
    open_slots: dict = {}  # loop shape -> indices of its open fused slots, in order
    last_single = -1

    def after_operands(eqn) -> int:
        return max((made_in.get(a, -1) for a in eqn.invars if type(a) is Var),
                   default=-1)

    def add(kind, eqn, shape=None):
        slots.append([kind, [eqn], shape, kind == "fused"])
        if kind == "fused":
            open_slots.setdefault(shape, []).append(len(slots) - 1)
        return len(slots) - 1

    def join(k, eqn):
        slots[k][1].append(eqn)
        return k

    def close(k):
        slots[k][3] = False
        open_slots[slots[k][2]].remove(k)

    for eqn in _scalars_first(jaxpr):
        if eqn.primitive is slice_p and eqn.outvars[0] in reads.slices:
            continue   # read in place by its concatenation
        shape = _group_shape(eqn) if eqn.outvars else None
        if id(eqn) in reads.concats:
            # joins only the group just before it, when that group does not make what
            # it reads in place
            last = slots[-1] if slots else None
            made = {v for m in last[1] for v in m.outvars} if last else set()
            if last is not None and last[3] and last[2] == shape and \
                    not any(a in made for a in concat_sources(eqn, reads)):
                k = join(len(slots) - 1, eqn)
            else:
                k = add("fused", eqn, shape)
        else:
            k = None
            # not past an equation that is not fused (a product, a host call): a value
            # used late stays computed where it is used, fused with its consumers there
            floor = max(after_operands(eqn), last_single)
            # (a reduction joins the group of its operand's loop shape)
            loops = eqn.invars[0].aval.shape if eqn.primitive in _REDUCTIONS else shape
            last = len(slots) - 1
            for j in reversed(open_slots.get(loops, ())):
                if j < floor:
                    break
                if j != last and j != after_operands(eqn):
                    # an earlier group only for the equation that continues it: one
                    # that makes none of its operands there would be cut off from a
                    # consumer that must wait for a later value (a norm, a reduction)
                    continue
                how = _joins(eqn, loops, slots[j][1], fusible)
                if how is not None:
                    k = join(j, eqn)
                    if how == "reduce":    # a reduction ends its group
                        close(j)
                    break
            if k is None:
                if (fusible(eqn) and all(_operand_fits(a, shape) for a in eqn.invars)) \
                        or (_is_broadcast(eqn) and shape != ()):
                    k = add("fused", eqn, shape)
                else:
                    k = last_single = add("single", eqn)
        for v in eqn.outvars:
            made_in[v] = k
    # A group of only broadcasts is cheaper as a plain broadcast.
    return [("single", g) if k == "fused" and len(g) == 1 and _is_broadcast(g[0])
            else (k, g) for k, g, _, _ in slots]


def independent_parts(eqns, reads=lambda eqn: eqn.invars) -> list:
    """``eqns`` (a fused group's elementwise equations, in order) split into the parts
    that share no array: an equation joins the part of every equation whose array value
    it reads, and of every other reader of the same array (which is read once, by one
    loop).  0-d operands are computed before the loops and shared.  ``reads(eqn)``: the
    values an equation reads (a concatenation read in place reads its slices' operands).
    An Adam update of 10 arrays is 10 parts of three inputs and three outputs each."""
    parent = list(range(len(eqns)))

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    owner: dict = {}   # array var -> the first equation that touched it
    for k, e in enumerate(eqns):
        for a in list(reads(e)) + list(e.outvars):
            if type(a) is not Var or a.aval.shape == ():
                continue
            j = owner.setdefault(a, k)
            parent[find(k)] = find(j)
    parts: dict = {}
    for k, e in enumerate(eqns):
        parts.setdefault(find(k), []).append(e)
    return list(parts.values())
