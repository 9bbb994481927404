"""Updates in place: which operands the lowering of a program may overwrite.

An update (``x.at[i].set(v)``: a scatter, or ``dynamic_update_slice``) returns its
operand with some elements replaced; a loop takes its initial carries as the buffers it
updates.
Either may write into its operand's buffer instead of copying it first, as XLA's
buffer reuse does, when nothing needs the operand's old value: the buffer belongs to
the program (a value it computed, or a loop carry, given as ``owned``), and every other
reader of the buffer (the operand, and the views of it: reshapes share their operand's
elements) comes earlier in the program and is not one of its outputs.  A loop whose
carry is updated this way at every step then costs the size of its updates, not of
its carry.

`plan` answers for one program (in the order of `scheduled`, which moves reads of an
operand ahead of its update); the rules ask `Ctx.take_buffer(operand, output)`.  A rule
that binds its output to its operand's buffer (a view) must be in `VIEWS`; every other
rule's outputs are buffers of their own.
"""

from __future__ import annotations

from ...ir.ir import Jaxpr, Var
from ...ops.gather import gather_p
from ...ops.index_update import SCATTERS
from ...ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p
from ...ops.shape import reshape_p, squeeze_p
from ...ops.slicing import dynamic_slice_p, dynamic_update_slice_p, slice_p
from .elementwise import scalar_rules

# Primitives whose lowering binds the output to the operand's elements (no copy).
VIEWS = frozenset({reshape_p, squeeze_p})

# primitive -> fn(eqn) -> [(position of an operand its lowering can overwrite, position
# of the output then held in that buffer)]: an update's operand; the initial carries a
# loop takes as its carries' buffers (filled in by control_flow.py).
OVERWRITERS: dict = {p: lambda eqn: ((0, 0),)
                     for p in (dynamic_update_slice_p, *SCATTERS.values())}


# Primitives that read their operands into values of their own and may move ahead of
# an update of one of them (`scheduled`): slices, gathers, reductions, elementwise.
_READERS = frozenset({dynamic_slice_p, slice_p, gather_p, reduce_sum_p, reduce_max_p,
                      reduce_min_p, reduce_prod_p})


def _reads_only(eqn) -> bool:
    return eqn.primitive in _READERS or eqn.primitive in scalar_rules


def _overwritten_operands(eqn):
    find = OVERWRITERS.get(eqn.primitive)
    return [eqn.invars[p] for p, _ in find(eqn)] if find is not None else ()


def schedule(eqns, operands, reads_only) -> list:
    """``eqns`` with every read of an operand that an equation may overwrite
    (``operands(eqn)``) that comes after it but needs only values defined before it
    moved to just before it (a transposed ``x.at[i].set(v)`` zeroes ``ct[i]`` and then
    reads it: read first, and the update may then write in place).  Only readers
    (``reads_only(eqn)``) move, and only past equations they do not depend on, so the
    order stays a valid one.  The same list object when nothing moves."""
    out, k = list(eqns), 0
    while k < len(out):
        e = out[k]
        xs = [x for x in operands(e) if type(x) is Var]
        if xs:
            later = set(e.outvars)      # values defined from the update on
            moved = []
            for j in range(k + 1, len(out)):
                f = out[j]
                if any(x in f.invars for x in xs) and reads_only(f) and \
                        not any(type(a) is Var and a in later for a in f.invars):
                    moved.append(j)
                else:
                    later.update(f.outvars)
            if moved:
                keep = set(moved)
                out = out[:k] + [out[j] for j in moved] + [e] + \
                    [out[j] for j in range(k + 1, len(out)) if j not in keep]
                k += len(moved)
        k += 1
    return eqns if out == list(eqns) else out


def scheduled(jaxpr):
    """``jaxpr`` in the order its lowering takes (`schedule`: reads of an operand an
    update or a loop overwrites first); the same object when nothing moves."""
    eqns = schedule(jaxpr.eqns, _overwritten_operands, _reads_only)
    if eqns is jaxpr.eqns:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


def use_positions(eqns) -> dict:
    """var -> the positions of the equations that read it, in order."""
    uses: dict = {}
    for k, e in enumerate(eqns):
        for a in e.invars:
            if type(a) is Var:
                uses.setdefault(a, []).append(k)
    return uses


class Plan:
    """``takes``: {output var: the operand var whose buffer it is computed into} (the
    updates in place, and the initial carries loops take; `Ctx.take_buffer`);
    ``overwritten``: the vars whose buffer some update overwrites (a deferred read of
    one would see the new values); ``storage``: var -> the var whose buffer holds it,
    for the vars of buffers the program owns."""

    def __init__(self):
        self.takes: dict = {}
        self.overwritten: set = set()
        self.storage: dict = {}


def plan(jaxpr, owned=frozenset()) -> Plan:
    """The updates in place of ``jaxpr``, its equations in the order they are lowered
    (`scheduled`; fusion keeps it, and moves ahead only 0-d equations of 0-d values,
    which read no buffer).  ``owned``: invars whose buffers the program may overwrite
    (loop carries)."""
    jaxpr = scheduled(jaxpr)
    out = Plan()
    outs = {v for v in jaxpr.outvars if type(v) is Var}
    uses = use_positions(jaxpr.eqns)
    storage = out.storage
    sharing: dict = {}          # storage var -> the vars held in it so far
    for v in owned:
        if v.aval.shape != ():
            storage[v] = v
            sharing[v] = [v]
    for k, e in enumerate(jaxpr.eqns):
        taken = {}                          # output position -> the buffer it is in
        find = OVERWRITERS.get(e.primitive)
        for p, o in (find(e) if find is not None else ()):
            x = e.invars[p]
            if type(x) is not Var or x not in storage:
                continue
            group = sharing[storage[x]]
            at_k = sum(a is g for a in e.invars for g in group)
            if at_k == 1 and not any(g in outs for g in group) and \
                    all(j < k for g in group for j in uses.get(g, ()) if j != k):
                out.takes[e.outvars[o]] = x
                out.overwritten.update(group)
                taken[o] = storage[x]
        if e.primitive in VIEWS:
            (x,), (o,) = e.invars, e.outvars
            if type(x) is Var and x in storage and o.aval.shape != ():
                taken[0] = storage[x]
        for j, o in enumerate(e.outvars):
            if o.aval.shape == ():
                continue
            if j in taken:
                storage[o] = taken[j]
                sharing[taken[j]].append(o)
            elif e.primitive not in VIEWS:  # a buffer of its own
                storage[o] = o
                sharing[o] = [o]
    return out


def forward_homes(ctx, jaxpr, takes) -> list:
    """Before ``jaxpr`` is lowered: an operand that an update or a loop will overwrite
    (in ``takes``, `Plan`) is computed straight into the buffer the result goes to,
    when that has one (``ctx.out_slots``: a program output, a loop's next carry, a row
    of a stacked output), so the result is already there: one buffer from the first
    value to the last, no copy at the end.  (Backwards: a chain of updates passes its
    result's buffer up to its first operand.)  Returns the vars given a buffer, for the
    caller to drop from ``ctx.out_slots`` afterwards."""
    produced = {v for e in jaxpr.eqns for v in e.outvars}
    added = []
    for e in reversed(jaxpr.eqns):
        find = OVERWRITERS.get(e.primitive)
        for p, o in (find(e) if find is not None else ()):
            x, out = e.invars[p], e.outvars[o]
            if takes.get(out) is x and x in produced and x not in ctx.out_slots and \
                    out in ctx.out_slots:
                ctx.out_slots[x] = ctx.out_slots[out]
                added.append(x)
    return added
