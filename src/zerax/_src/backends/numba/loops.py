"""Lowering helpers shared by the control-flow primitives: loop-carried variables.

A carry is held in a variable that is reassigned at the end of every iteration (a
scalar for 0-d carries, so scalar loops allocate nothing); new values are computed
into temporaries first, so a body that permutes its carries stays correct.

Updates in place (`inplace_plan`): an update (``x.at[i].set(v)``, ``.add``, ...,
``dynamic_update_slice``) whose operand's buffer belongs to the program and has no
later use writes into that buffer instead of copying it, as XLA's buffer reuse does.
A loop carry updated only that way each step is copied once, when the loop starts,
and then updated in place, so a step costs the size of its update, not of the carry.

Parallel elementwise loops (`parallel_blocks`) run in blocks of rows that the threads
claim as they go (threads.claim_block).
"""

from __future__ import annotations

import contextlib
import math
import re

from ...ir.ir import Jaxpr, Var
from ...ops.gather import gather_p
from ...ops.index_update import (scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p,
                                 scatter_p)
from ...ops.linalg import dot_general_p
from ...ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p, reduce_sum_p
from ...ops.shape import (broadcast_in_dim_p, concatenate_p, reshape_p, rev_p, squeeze_p,
                          transpose_p)
from ...ops.slicing import dynamic_slice_p, dynamic_update_slice_p, slice_p
from ..lowering.inplace import schedule, use_positions
from ..fusion import independent_parts  # noqa: F401  (codegen's parallel blocks)
from .fusion import dtype_name, plan_groups
from .memory import hugepages, wants_hugepages
from .rules import scalar_rule_of
from .threads import claim_block, task_count

# Elements in one block of a parallel elementwise loop: enough that claiming a block
# (one atomic add) costs nothing beside it and its inner loops vectorise, few enough
# that a loop of 10^5 elements has ~25 blocks, so the threads end together within a
# block's time (a few microseconds) even when one of them was held up.
PARALLEL_BLOCK = 4096

# Primitives that return their first operand with some elements replaced; their Numba
# lowerings start with ``out = np.copy(x)`` (the copy `drop_copy` removes).
UPDATE_PRIMITIVES = frozenset({scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p,
                               scatter_max_p, dynamic_update_slice_p})
# Primitives whose lowerings read their operands into new arrays or scalars (never a
# view of an operand), so an earlier read of an updated buffer is complete.
_READERS = frozenset({dynamic_slice_p, slice_p, gather_p, reduce_sum_p, reduce_max_p,
                      reduce_min_p, reduce_prod_p, dot_general_p})


# Primitives whose lowerings copy their operands' elements into arrays of their own
# (lower_shape.py, lower_indexing.py): an operand read only by these, by fused
# elementwise code and by the readers above is never kept past its last read.
_COPIERS = _READERS | frozenset({concatenate_p, reshape_p, squeeze_p, transpose_p, rev_p,
                                 broadcast_in_dim_p})


# Rules that accept a one-element operand held as a scalar (`one_element_values`).
_SCALAR_READERS = frozenset({reshape_p, squeeze_p, concatenate_p, broadcast_in_dim_p})


def _reads_only(eqn) -> bool:
    return eqn.primitive in _READERS or \
        scalar_rule_of(eqn.primitive) is not None


def schedule_reads(eqns) -> list:
    """``eqns`` with every read of an update's operand that comes after the update but
    needs only values defined before it moved to just before the update (a transposed
    ``x.at[i].set(v)`` zeroes ``ct[i]`` and then reads it: read first, then update in
    place: `lowering.inplace.schedule`).  The same list object when nothing moves."""
    if not any(e.primitive in UPDATE_PRIMITIVES for e in eqns):
        return eqns
    return schedule(eqns, lambda e: e.invars[:1] if e.primitive in UPDATE_PRIMITIVES else (),
                    _reads_only)


def scheduled(jaxpr):
    """``jaxpr`` in the order of `schedule_reads` (the same object when unchanged)."""
    eqns = schedule_reads(jaxpr.eqns)
    if eqns is jaxpr.eqns:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


def inplace_plan(jaxpr, owned=frozenset()):
    """Which updates of ``jaxpr`` may write into their operand's buffer.

    ``owned``: invars whose buffers this program may overwrite (loop carries copied at
    the loop's start).  The output of any update is owned too (a fresh copy, or the
    owned buffer updated).  An update writes in place when its operand is owned, is not
    one of the program's outputs, is not another operand of the update, and every other
    use of it comes earlier and only reads it (`_READERS`, elementwise code).  Returns
    ({id(eqn): root}, {var: root}): the root is the owned variable whose buffer holds
    the value.  Give it the program in `scheduled` order."""
    outs = {v for v in jaxpr.outvars if type(v) is Var}
    uses = use_positions(jaxpr.eqns)
    roots = {v: v for v in owned}
    plan = {}
    for k, e in enumerate(jaxpr.eqns):
        if e.primitive not in UPDATE_PRIMITIVES:
            continue
        x, new = e.invars[0], e.outvars[0]
        if type(x) is Var and x in roots and x not in outs and x not in e.invars[1:] and \
                all(j < k and _reads_only(jaxpr.eqns[j]) for j in uses[x] if j != k):
            plan[id(e)] = roots[new] = roots[x]
        else:
            roots[new] = new
    return plan, roots


def owned_invars(ctx, jaxpr, in_refs) -> frozenset:
    """The invars of ``jaxpr`` bound to carries that `BufferedCarries` made ownable for
    this loop body (their names, so only this loop's lowering of the body sees them)."""
    reg = ctx.hoisted.get(("inplace", id(jaxpr)))
    if reg is None or reg[0] is not jaxpr:
        return frozenset()
    return frozenset(v for v, r in zip(jaxpr.invars, in_refs)
                     if isinstance(r, tuple) and r[0] == "array" and
                     reg[1].get(v) == r[1])


def drop_copy(ctx, eqn, lines, start) -> bool:
    """After an update's lowering emitted ``out = np.copy(x)`` into ``lines`` (from
    ``start``), make it ``out = x``: the update then writes into x's buffer."""
    out = ctx.ref(eqn.outvars[0])[1]
    pat = re.compile(rf"^(\s*){re.escape(out)} = np\.copy\((\w+)\)$")
    for k in range(start, len(lines)):
        m = pat.match(lines[k])
        if m:
            lines[k] = f"{m.group(1)}{out} = {m.group(2)}  # in place"
            ctx.inplace_updates += 1
            return True
    return False


def takes_buffer(ctx, var, text) -> bool:
    """Whether ``var`` (an array named ``text``) is an array of the program being
    lowered that nothing else holds, so a loop may take it as a carry buffer and
    update it in place without copying it first: ``text`` was assigned a new array
    (``np.empty``/``np.copy``, in this block: not a buffer reused by loop steps) and
    ``var`` has no other use, in the program or as its output.  (Only values the
    program computes: its inputs are the caller's, or an enclosing loop's.)"""
    body = ctx.body
    if body is None or type(var) is not Var or \
            not any(var in e.outvars for e in body.eqns):
        return False
    uses = sum(a is var for e in body.eqns for a in e.invars)
    if uses != 1 or any(a is var for a in body.outvars):
        return False
    fresh = re.compile(rf"^\s*{re.escape(text)} = np\.(empty|copy)\(.*\)$")
    return any(fresh.match(line) for line in ctx.lines)


def start_carries(ctx, avals, init_refs, prefix="c", init_vars=None):
    """Declare carry variables initialised from ``init_refs`` (the values of
    ``init_vars`` where given); returns their refs."""
    refs = []
    starts = []
    init_vars = [None] * len(avals) if init_vars is None else list(init_vars)
    for aval, ref, var in zip(avals, init_refs, init_vars):
        name = ctx.fresh(prefix)
        if aval.shape == ():
            ctx.emit(f"{name} = {dtype_name(aval.dtype)}({ctx.text(ref, True)})")
            refs.append(("scalar", name))
            starts.append(None)
        else:
            ctx.emit(f"{name} = {ctx.text(ref, False)}")
            refs.append(("array", name))
            # where the carry starts (`BufferedCarries` may make it a copy)
            text = ctx.text(ref, False)
            starts.append((ctx.lines, len(ctx.lines) - 1, name, text,
                           ref[0] == "array" and takes_buffer(ctx, var, text)))
    ctx.hoisted["carry_starts"] = starts
    return refs


def _temporary(ctx, aval, new) -> str:
    """A fresh name holding ``new`` (a carry's next value, before any carry changes)."""
    t = ctx.fresh("n")
    if aval.shape == ():
        ctx.emit(f"{t} = {dtype_name(aval.dtype)}({ctx.text(new, True)})")
    else:
        ctx.emit(f"{t} = {ctx.text(new, False)}")
    return t


def update_carries(ctx, avals, carry_refs, new_refs):
    """``carry = new`` for every carry, through temporaries."""
    temps = [_temporary(ctx, aval, new) for aval, new in zip(avals, new_refs)]
    for (_, name), t in zip(carry_refs, temps):
        ctx.emit(f"{name} = {t}")


def carry_buffers(ctx, avals, which):
    """Two arrays for each carry flagged in ``which`` (None for the others), allocated
    here, two lines each.  A step writes the carry's new value into the first (the one
    the old value is not in) and `update_buffered_carries` swaps them, so a loop whose
    body computes its carries allocates nothing per step."""
    bufs = []
    for aval, w in zip(avals, which):
        if not w:
            bufs.append(None)
            continue
        pair = (ctx.fresh("cb"), ctx.fresh("cb"))
        for nm in pair:
            ctx.emit(f"{nm} = np.empty({tuple(aval.shape)!r}, {dtype_name(aval.dtype)})")
        bufs.append(pair)
    return bufs


def update_buffered_carries(ctx, avals, carry_refs, new_refs, bufs, buffered, taken):
    """``carry = new`` where the carries flagged in ``buffered`` take their first buffer:
    the body already wrote the new value there where ``taken``, else it is copied in
    (before any carry changes).  Then each pair swaps.  No carry array ever aliases
    another's buffer, and the buffer written next holds a value two steps old."""
    temps = []
    for k, (aval, new) in enumerate(zip(avals, new_refs)):
        if buffered[k]:
            if not taken[k]:
                src, dst = ctx.text(new, False), bufs[k][0]
                with ctx.nest(aval.shape, parallel=False) as idx:
                    ix = ", ".join(idx)
                    ctx.emit(f"{dst}[{ix}] = {src}[{ix}]")
            temps.append(bufs[k][0])
            continue
        temps.append(_temporary(ctx, aval, new))
    for (_, name), t in zip(carry_refs, temps):
        ctx.emit(f"{name} = {t}")
    for pair in bufs:
        if pair is not None:
            ctx.emit(f"{pair[0]}, {pair[1]} = {pair[1]}, {pair[0]}")


def slice_ref(ctx, array_text, index, aval):
    """The ``index``-th slice of a stacked array, as a reference."""
    if len(aval.shape) == 1:
        return ("scalar", f"{array_text}[{index}]")
    return ("array", f"{array_text}[{index}]")


def store_row(ctx, array_text, index, ref, aval):
    """``array[index] = value`` for a value of type ``aval``, as explicit element loops
    (Numba compiles a row or slice assignment far more slowly than a loop)."""
    if aval.shape == ():
        ctx.emit(f"{array_text}[{index}] = {ctx.text(ref, True)}")
        return
    src = ctx.text(ref, False)
    with ctx.nest(aval.shape, parallel=False) as idx:
        ix = ", ".join(idx)
        ctx.emit(f"{array_text}[{index}, {ix}] = {src}[{ix}]")


def copy_rows(ctx, dst_text, src_text, count, row_shape):
    """``dst[:count] = src[:count]`` as explicit loops."""
    q = ctx.fresh("q")
    ctx.emit(f"for {q} in range({count}):")
    with ctx.block():
        if not row_shape:
            ctx.emit(f"{dst_text}[{q}] = {src_text}[{q}]")
            return
        with ctx.nest(row_shape, parallel=False) as idx:
            ix = ", ".join(idx)
            ctx.emit(f"{dst_text}[{q}, {ix}] = {src_text}[{q}, {ix}]")


@contextlib.contextmanager
def prelude(ctx):
    """Emit into the kernel's prelude: lines run once, before the kernel's first line,
    for values that loop bodies use but that do not change from one iteration to the
    next (computed there once per call instead of once per iteration)."""
    lines, level = ctx.lines, ctx.level
    ctx.lines, ctx.level = ctx.prelude, 1
    try:
        yield
    finally:
        ctx.lines, ctx.level = lines, level


def is_invariant(ctx, text) -> bool:
    """Whether ``text`` names an array that nothing in the kernel reassigns or writes
    (a kernel argument or a constant), so a value computed from it can be hoisted into
    the prelude."""
    return text in ctx.reserved or text.startswith("K_")


def private_values(ctx) -> set:
    """Values of the program being lowered (``ctx.body``) whose arrays nothing keeps
    past the program's end: not its outputs, and read only by fused elementwise loops,
    by products and by the copying rules (`_COPIERS`; the updates and values of a
    scatter), which read their operands and write new arrays.  Inside a loop body such
    a value can live in one buffer reused by every iteration.  Any other use (a call,
    a loop's initial carry, a cond's operand, an update's operand, which may be updated
    in place) may keep the array, so the value is not private."""
    return _body_facts(ctx)[0]


def one_element_values(ctx) -> set:
    """Values of ``ctx.body`` with exactly one element (of any shape) that are not its
    outputs and that only reshapes, squeezes, concatenations and broadcasts (lowered
    one by one, not fused) read: their producers may hold them as plain scalars, which
    those rules accept (``jnp.array([a, b, c])`` of scalars, ``y[1]`` of a small vector:
    no array at all)."""
    return _body_facts(ctx)[1]


def _body_facts(ctx):
    body = ctx.body
    if body is None:
        return set(), set()
    key = ("private", id(body))
    held = ctx.hoisted.get(key)
    if held is None or held[0] is not body:   # (the program is kept: ids are reused)
        shared = {v for v in body.outvars if type(v) is Var}
        other = set(shared)   # values read by anything but the scalar readers
        for kind, eqns in plan_groups(body):
            for e in eqns:
                ins = [a for a in e.invars if type(a) is Var]
                if kind == "fused" or e.primitive not in _SCALAR_READERS:
                    other.update(ins)
                if kind == "fused" or e.primitive in _COPIERS:
                    continue
                shared.update(e.invars[:1] if e.primitive in UPDATE_PRIMITIVES else ins)
        produced = {v for e in body.eqns for v in e.outvars}
        single = {v for v in produced - other if math.prod(v.aval.shape) == 1}
        held = ctx.hoisted[key] = (body, (produced - shared, single))
    return held[1]


def output_buffer(ctx, var, prefix="p") -> str:
    """A new array for ``var``'s value, which the caller overwrites entirely.  Inside a
    loop body, a private value's array is allocated once, in the kernel's prelude; a
    value with a destination in ``ctx.dest`` (a loop's carry buffer, a row of a stacked
    output) is written there instead."""
    name = ctx.fresh(prefix)
    dest = ctx.dest.pop(var, None)
    if dest is not None:   # the caller named where the value goes (written once)
        ctx.emit(f"{name} = {dest}")
        ctx.dest_used.add(var)
        return name
    lines = [f"{name} = np.empty({tuple(var.aval.shape)!r}, {dtype_name(var.aval.dtype)})"]
    if wants_hugepages(var.aval.shape, var.aval.dtype):   # before its first write
        lines.append(f"{ctx.helper('_hugepages', hugepages)}({name})")
    with prelude(ctx) if ctx.level > 1 and var in private_values(ctx) \
            else contextlib.nullcontext():
        for line in lines:
            ctx.emit(line)
    return name


class BufferedCarries:
    """The array carries of a loop that its body computes, kept in two buffers each
    (`carry_buffers`), so that steps allocate nothing: give `dests()` to ``ctx.dest``
    while lowering a step, then `update` the carries with the step's outputs.  Whether
    the buffers are used is decided by the first step lowered (`used`); `finish` drops
    their allocation when no step wrote into them.

    ``carry_outvars``/``carry_invars``: the body's variables for the new and the old
    carries (a carry passed through unchanged is not buffered)."""

    def __init__(self, ctx, body, carry_outvars, carry_invars, avals):
        self.produced = {v for e in body.eqns for v in e.outvars}
        self.avals, self.outvars = list(avals), list(carry_outvars)
        # A carry that is another carry's old value is buffered too (copied in), so that
        # no carry ever aliases another's buffer.
        self.buffered = [a.shape != () and type(o) is Var and o is not i
                         for a, o, i in zip(avals, carry_outvars, carry_invars)]
        self.body = body
        inplace = self._inplace_carries(ctx, body, carry_outvars, carry_invars, avals)
        for k in inplace:
            self.buffered[k] = False
        self.alloc_at = len(ctx.lines)
        self.bufs = carry_buffers(ctx, self.avals, self.buffered)
        self.mode: list = []   # [whether the carries use their buffers], fixed by step 1

    def _inplace_carries(self, ctx, body, outvars, invars, avals):
        """The carries each step updates only in place (``c = c.at[i].set(v)``, chains
        of such): they start as a copy of their initial value and are then written into
        directly (registered for `owned_invars`).  Returns their positions."""
        starts = ctx.hoisted.pop("carry_starts", None)
        if starts is None or len(starts) != len(avals):
            return []
        cand = {k for k, (a, i) in enumerate(zip(avals, invars))
                if a.shape != () and type(i) is Var and starts[k] is not None}
        while True:   # a carry whose new value is not its own update is not owned
            _, roots = inplace_plan(scheduled(body), frozenset(invars[k] for k in cand))
            keep = {k for k in cand if type(outvars[k]) is Var and outvars[k] is not
                    invars[k] and roots.get(outvars[k]) is invars[k] and
                    sum(o is outvars[k] for o in outvars) == 1}
            if keep == cand:
                break
            cand = keep
        if not cand:
            return []
        for k in sorted(cand):   # the carry's own buffer: a copy of its initial value, once
            lines, at, name, init, take = starts[k]
            if at >= len(lines) or lines[at].strip() != f"{name} = {init}":
                cand.discard(k)   # (never expected) not the line it was: no in-place
                continue
            if take:   # a new array nothing else holds: the carry takes it, no copy
                lines[at] += "  # taken"
                continue
            lines[at] = lines[at].replace(f"{name} = {init}", f"{name} = np.copy({init})", 1)
        if not cand:
            return []
        ctx.hoisted[("inplace", id(body))] = (body, {invars[k]: starts[k][2] for k in cand})
        return sorted(cand)

    def dests(self) -> dict:
        """var -> the buffer its producer writes into, for the next step."""
        dest = {}
        if not self.mode or self.mode[0]:
            for k, o in enumerate(self.outvars):
                if self.buffered[k] and o in self.produced and o not in dest:
                    dest[o] = self.bufs[k][0]
        return dest

    def update(self, ctx, carries, outs, used):
        """``carries = outs`` after a step whose producers took the dests in ``used``."""
        carry_vars = {o for k, o in enumerate(self.outvars)
                      if self.buffered[k] and o in self.produced}
        if not self.mode:
            self.mode.append(bool(used & carry_vars))
        if not self.mode[0]:
            update_carries(ctx, self.avals, carries, outs)
            return
        taken = [self.buffered[k] and o in used and
                 next(j for j, c in enumerate(self.outvars) if c is o) == k
                 for k, o in enumerate(self.outvars)]
        update_buffered_carries(ctx, self.avals, carries, outs, self.bufs, self.buffered,
                                taken)

    def finish(self, ctx):
        ctx.hoisted.pop(("inplace", id(self.body)), None)
        if not self.mode or not self.mode[0]:   # no buffers after all: drop them
            n = sum(2 for b in self.bufs if b is not None)
            del ctx.lines[self.alloc_at:self.alloc_at + n]


@contextlib.contextmanager
def step_dests(ctx, dest):
    """Lower one loop step with ``ctx.dest = dest``; yields the set of vars whose
    producers wrote into their dest."""
    saved = ctx.dest, ctx.dest_used
    ctx.dest, ctx.dest_used = dict(dest), set()
    used = ctx.dest_used
    try:
        yield used
    finally:
        ctx.dest, ctx.dest_used = saved


@contextlib.contextmanager
def parallel_blocks(ctx, shape):
    """A parallel loop over ``shape`` (at least 1-d) in blocks of rows of its first axis,
    claimed dynamically: one task per thread, each taking the next block from a shared
    counter until none is left (a thread held up by another process does fewer blocks,
    instead of the others waiting for its fixed share).  Yields the texts (lo, hi) of a
    block's rows; the caller writes the loops over them (`block_nest`), several if it
    likes (one per independent part of a fused group: each loop then reads and writes
    only its own arrays, a few streams of memory instead of all of them at once)."""
    n0 = shape[0]
    row = math.prod(shape[1:])
    rows = max(1, PARALLEL_BLOCK // max(row, 1))
    blocks = -(-n0 // rows)
    claim = ctx.helper("_claim_block", claim_block)
    tasks = ctx.helper("_task_count", task_count)
    counter, task, block = ctx.fresh("ctr"), ctx.fresh("w"), ctx.fresh("blk")
    lo, hi = ctx.fresh("lo"), ctx.fresh("hi")
    ctx.emit(f"{counter} = np.zeros(1, np.int64)")
    ctx.emit(f"for {task} in prange({tasks}()):")
    ctx.uses_prange = True
    with ctx.block():
        ctx.emit("while True:")
        with ctx.block():
            ctx.emit(f"{block} = {claim}({counter})")
            ctx.emit(f"if {block} >= {blocks}:")
            with ctx.block():
                ctx.emit("break")
            ctx.emit(f"{lo} = {block} * {rows}")
            ctx.emit(f"{hi} = min({lo} + {rows}, {n0})")
            yield lo, hi


@contextlib.contextmanager
def block_nest(ctx, shape, lo, hi):
    """Loops over the rows ``lo:hi`` of ``shape`` and all of its other axes (inside
    `parallel_blocks`); yields the index names, as ``ctx.nest`` does."""
    prefix = ctx.fresh("i") + "_"
    names = [f"{prefix}{k}" for k in range(len(shape))]
    ctx.emit(f"for {names[0]} in range({lo}, {hi}):")
    ctx.level += 1
    for nm, n in zip(names[1:], shape[1:]):
        ctx.emit(f"for {nm} in range({n}):")
        ctx.level += 1
    try:
        yield names
    finally:
        ctx.level -= len(shape)


