"""Sharding propagation (GSPMD's idea): from the shardings of a program's inputs and of
its constraints, a sharding for every value of the program.

A *spec* says, per dimension of an array, which mesh axes split it: a tuple of axis
names per dimension (the first name varies slowest; ``()``: not split), the
normalised form of a ``PartitionSpec``.  While propagation runs a dimension may be
*unknown* (``None``); at the end an unknown dimension is not split.

Each primitive has a rule in ``sharding_rules`` (filled in by ``ops/sharding_rules.py``,
beside the primitives' other semantics), an object with three methods:

- ``forward(eqn, in_specs) -> out proposals`` and ``backward(eqn, out_specs) -> in
  proposals``: what the operands' shardings say about the results' and back (specs
  whose dimensions may be unknown; None for no opinion);
- ``partition(eqn, in_specs, out_specs, sizes) -> Plan``: given the specs every value
  ended with, the specs the operands must have for each device to compute its block
  with the primitive (the partitioning pass reshards them), the specs of the blocks it
  computes, the mesh axes over which they are partial results (a sum split by a
  contracted dimension: ``psum`` or a reduce-scatter makes them whole), and the
  function that computes a device's blocks.

Most rules are a `DimMap`: which operand dimension becomes which result dimension,
which are reduced (by a sum, max or min: a split one leaves a partial result) and which
must be whole; `DimMapRule` turns one into the three methods.  `propagate` runs the
rules to a fixed point over a program: a forward pass then a backward pass, repeated;
a dimension is set by the first proposal that reaches it (so the inputs' shardings flow
downstream first, and values no input decides, such as constants, take their
consumers' shardings).  The planner (``api/planner.py``) chooses among the inputs' specs by costing what
propagation makes of each choice.

The pass that writes each process's program from the rules, inserting collectives, is
``api/partition.py``.
"""

from __future__ import annotations

import math

from ... import errors
from ..core.core import rule_table
from ..ir.ir import Literal

# prim -> an object with forward/backward/partition (see the module docstring)
sharding_rules = rule_table("sharding", "automatic partitioning (jit with shardings)")


# --------------------------------------------------------------------------- specs

def replicated(ndim: int) -> tuple:
    """The spec of an array of rank ``ndim`` that no axis splits."""
    return ((),) * ndim


def unknown(ndim: int) -> list:
    return [None] * ndim


def spec_axes(spec) -> set:
    """Every mesh axis a spec names."""
    return {a for d in spec if d for a in d}


def shards(axes, sizes) -> int:
    """How many blocks ``axes`` split a dimension into."""
    return math.prod(sizes[a] for a in axes) if axes else 1


def local_shape(shape, spec, sizes) -> tuple:
    """The shape of one device's block of an array of ``shape`` split by ``spec``."""
    return tuple(n // shards(d, sizes) for n, d in zip(shape, spec))


def spec_str(spec) -> str:
    """``P('model', None)`` for a spec (as a PartitionSpec prints, shorter)."""
    def one(d):
        if d is None:
            return "?"
        if not d:
            return "None"
        return repr(d[0]) if len(d) == 1 else "(" + ", ".join(map(repr, d)) + ")"
    return "P(" + ", ".join(one(d) for d in spec) + ")"


def complete(spec) -> tuple:
    """A spec with its unknown dimensions not split."""
    return tuple(() if d is None else tuple(d) for d in spec)


def fits(axes, n, sizes) -> bool:
    """Whether ``axes`` can split a dimension of ``n`` entries into equal blocks."""
    return n % shards(axes, sizes) == 0


class Plan:
    """How one equation is computed on each device (see the module docstring):
    ``operands`` (the specs its operands must have), ``results`` (the specs of the
    blocks ``local(ctx, *blocks)`` returns, a list), ``partial`` (per result, a dict
    mesh axis -> "sum"/"max"/"min": the blocks are partial results over those axes) and
    ``scatter`` (per result, a dict axis -> dimension: a partial sum over that axis is
    to be made whole by a reduce-scatter along that dimension, which then splits it
    over the axis, as the last of its axes)."""

    __slots__ = ("local", "operands", "partial", "results", "scatter")

    def __init__(self, operands, results, local, partial=None, scatter=None):
        self.operands, self.results, self.local = list(operands), list(results), local
        n = len(self.results)
        self.partial = partial if partial is not None else [{} for _ in range(n)]
        self.scatter = scatter if scatter is not None else [{} for _ in range(n)]


def operand_shape(a):
    return a.aval.shape


# --------------------------------------------------------------------------- DimMap

_compiled: dict = {}   # id(eqn) -> (eqn, what DimMapRule reads of its DimMap)

class DimMap:
    """A primitive's dimensions, for one equation: ``operands[k][i]`` is what dimension
    ``i`` of operand ``k`` becomes: an int (that result dimension, of the same size),
    ``(op, group)`` (reduced by ``op``, "sum", "max" or "min"; the dimensions of one
    group are reduced together, as a dot product's contracting dimensions) or None (it
    must be whole on every device).  ``free`` lists the result dimensions the
    primitive makes itself (a broadcast's new dimensions), which a device can make
    split; a result dimension neither mapped nor free must be whole.  Every result
    has the same ``out_rank`` dimensions."""

    __slots__ = ("free", "operands", "out_rank")

    def __init__(self, operands, out_rank, free=()):
        self.operands, self.out_rank, self.free = operands, out_rank, frozenset(free)


def _first_known(specs):
    for s in specs:
        if s is not None:
            return s
    return None


class DimMapRule:
    """The rule of a primitive described by a `DimMap` (``dimmap(eqn) -> DimMap``);
    ``local(eqn, blocks, result_shapes) -> outputs`` computes a device's blocks (by
    default the primitive with its own parameters; primitives whose parameters hold
    shapes rewrite them for the blocks)."""

    def __init__(self, dimmap, local=None, name=""):
        self.dimmap, self.local_fn, self.name = dimmap, local, name

    def _compiled(self, eqn):
        """The equation's DimMap, with what propagation reads of it: (operand, dim,
        result dim) triples of the same size, the result dimensions that must be
        whole, and per operand dimension what a result spec proposes for it ("o", j),
        whole ("w") or nothing (None); memoised per equation."""
        hit = _compiled.get(id(eqn))
        if hit is not None and hit[0] is eqn:
            return hit[1]
        dm = self.dimmap(eqn)
        out_shape = eqn.outvars[0].aval.shape
        fwd, back = [], []
        for k, m in enumerate(dm.operands):
            shape = operand_shape(eqn.invars[k])
            row = []
            for i, e in enumerate(m):
                if type(e) is int:
                    if shape[i] == out_shape[e]:
                        fwd.append((k, i, e))
                        row.append(("o", e))
                    else:
                        row.append(("w",))
                elif e is None:
                    row.append(("w",))
                else:
                    row.append(None)
            back.append(row)
        mapped = {e for m in dm.operands for e in m if type(e) is int}
        whole = [j for j in range(dm.out_rank) if j not in mapped and j not in dm.free]
        c = (dm, fwd, whole, back)
        if len(_compiled) > 200_000:
            _compiled.clear()
        _compiled[id(eqn)] = (eqn, c)
        return c

    # -- propagation
    def forward(self, eqn, ins):
        dm, fwd, whole, _ = self._compiled(eqn)
        out = [None] * dm.out_rank
        for j in whole:
            out[j] = ()
        used: set = set()
        # a split operand dimension wins over a whole one (the whole operand is cut to
        # it for free; the other way round would gather)
        for k, i, j in fwd:
            s = ins[k]
            d = None if s is None else s[i]
            if not d or out[j] is not None or not used.isdisjoint(d):
                continue
            out[j] = d
            used.update(d)
        for k, i, j in fwd:
            s = ins[k]
            if s is not None and s[i] == () and out[j] is None:
                out[j] = ()
        return [out] * len(eqn.outvars)

    def backward(self, eqn, outs):
        _, _, _, back = self._compiled(eqn)
        o = _first_known(outs)
        props = []
        for row in back:
            p = []
            for e in row:
                if e is None:
                    p.append(None)
                elif e[0] == "w":
                    p.append(())
                else:
                    p.append(None if o is None else o[e[1]])
            props.append(p)
        return props

    # -- partitioning
    def partition(self, eqn, ins, outs, sizes):
        dm = self._compiled(eqn)[0]
        out = outs[0]
        out_shape = eqn.outvars[0].aval.shape
        where = {a: j for j, d in enumerate(out) for a in d}
        groups: dict = {}
        for k, m in enumerate(dm.operands):
            for i, e in enumerate(m):
                if type(e) is tuple:
                    groups.setdefault(e[1], (e[0], []))[1].append((k, i))
        kept, scatter, taken = {}, {}, set()
        for gid, (op, members) in groups.items():
            k0, i0 = members[0]
            keep = []
            for a in ins[k0][i0]:
                if a in taken:
                    break
                if a in where:   # the result is split over it too: only by a reduce-scatter
                    j = where[a]
                    if op != "sum" or out[j][-1] != a or a in scatter:
                        break
                    scatter[a] = j
                keep.append(a)
                taken.add(a)
            kept[gid] = tuple(keep)
        result = [tuple(a for a in d if a not in scatter) for d in out]
        mapped = {e for m in dm.operands for e in m if type(e) is int}
        for j in range(dm.out_rank):
            if j not in mapped and j not in dm.free:
                result[j] = ()
        operands = []
        for k, m in enumerate(dm.operands):
            shape = operand_shape(eqn.invars[k])
            spec = []
            for i, e in enumerate(m):
                if type(e) is int:
                    spec.append(result[e] if shape[i] == out_shape[e] else ())
                elif e is None:
                    spec.append(())
                else:
                    spec.append(kept[e[1]])
            operands.append(tuple(spec))
        partial = {a: op for gid, (op, _) in groups.items() for a in kept[gid]}
        n = len(eqn.outvars)
        result = tuple(result)
        return Plan(operands, [result] * n, self._local(eqn),
                    [dict(partial) for _ in range(n)],
                    [dict(scatter) for _ in range(n)])

    def _local(self, eqn):
        fn = self.local_fn

        def local(ctx, *blocks, result_shapes):
            if fn is None:
                return ctx.bind(eqn.primitive, blocks, eqn.params)
            return fn(ctx, eqn, blocks, result_shapes)
        return local


# --------------------------------------------------------------------------- propagation

class Propagation:
    """The specs of a program's values (``specs``: Var -> list of per-dimension
    entries; ``fixed``: those no proposal changes)."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.specs: dict = {}
        self.fixed: set = set()
        self._final: dict = {}

    def spec_of(self, atom):
        if type(atom) is Literal:
            return replicated(len(atom.aval.shape))
        return self.specs.get(atom)

    def fix(self, var, spec) -> None:
        """Give ``var`` the complete ``spec``, which no proposal changes."""
        self.specs[var] = [tuple(d) for d in spec]
        self.fixed.add(var)
        self._final.pop(var, None)

    def offer(self, var, proposal) -> bool:
        """Merge a proposal into ``var``'s spec: unknown dimensions take the proposal's
        axes when they split the dimension evenly and are not already used; returns
        whether anything changed."""
        if proposal is None or type(var) is Literal:
            return False
        cur = self.specs.get(var)
        if cur is None:
            shape = var.aval.shape
            if len(proposal) != len(shape):
                raise errors.ZeraxInternalError(
                    f"a sharding rule proposed a spec of rank {len(proposal)} for a value "
                    f"of shape {shape}")
            cur = self.specs[var] = unknown(len(shape))
        elif None not in cur:   # complete: nothing to learn
            return False
        changed = False
        for d, p in enumerate(proposal):
            if p is None or cur[d] is not None:
                continue
            p = tuple(p)
            if p and (not fits(p, var.aval.shape[d], self.sizes) or any(
                    e and not set(e).isdisjoint(p) for e in cur)):
                continue
            cur[d] = p
            changed = True
        if changed:
            self._final.pop(var, None)
        return changed

    def final(self, atom) -> tuple:
        """The complete spec of ``atom`` (unknown dimensions not split)."""
        hit = self._final.get(atom)
        if hit is None:
            if type(atom) is Literal:
                return replicated(len(atom.aval.shape))
            s = self.specs.get(atom)
            hit = self._final[atom] = (replicated(len(atom.aval.shape)) if s is None
                                       else complete(s))
        return hit


def rule_for(prim):
    rule = sharding_rules.get(prim)
    if rule is None:
        raise prim.rule_missing("automatic partitioning (jit with shardings)", "sharding")
    return rule


_uses: dict = {}   # id(jaxpr) -> (jaxpr, consumers of each var, producer of each var)


def _graph(jaxpr):
    hit = _uses.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1], hit[2]
    consumers: dict = {}
    producer: dict = {}
    for k, e in enumerate(jaxpr.eqns):
        for a in e.invars:
            if type(a) is not Literal:
                consumers.setdefault(a, []).append(k)
        for v in e.outvars:
            producer[v] = k
    if len(_uses) > 1024:
        _uses.clear()
    _uses[id(jaxpr)] = (jaxpr, consumers, producer)
    return consumers, producer


def propagate(jaxpr, prop: Propagation, max_rounds: int = 8,
              backward: bool = True) -> Propagation:
    """Run the rules over ``jaxpr`` until no spec changes (``prop`` holds the fixed
    specs of its inputs and constraints); returns ``prop``.  An equation is asked
    again only when a spec it reads has changed since it was last asked.  Without
    ``backward``, one forward pass (what the inputs alone say)."""
    eqns = jaxpr.eqns
    rules = [rule_for(e.primitive) for e in eqns]
    wants = [getattr(r, "wants_prop", False) for r in rules]
    n = len(eqns)
    consumers, producer = _graph(jaxpr)
    dirty_f, dirty_b = bytearray(b"\1" * n), bytearray(b"\1" * n)
    spec_of, offer, specs = prop.spec_of, prop.offer, prop.specs

    def changed_var(v):
        for c in consumers.get(v, ()):
            dirty_f[c] = 1
        k = producer.get(v)
        if k is not None:
            dirty_b[k] = 1

    for _ in range(max_rounds):
        changed = False
        for k in range(n):
            if not dirty_f[k]:
                continue
            dirty_f[k] = 0
            eqn = eqns[k]
            ins = [spec_of(a) for a in eqn.invars]
            if eqn.invars and all(s is None for s in ins):
                continue
            rule = rules[k]
            props = rule.forward(eqn, ins, prop) if wants[k] else rule.forward(eqn, ins)
            for v, p in zip(eqn.outvars, props):
                cur = specs.get(v)
                if (cur is None or None in cur) and offer(v, p):
                    changed = True
                    changed_var(v)
        if not backward:
            break
        for k in range(n - 1, -1, -1):
            if not dirty_b[k]:
                continue
            dirty_b[k] = 0
            eqn = eqns[k]
            outs = [spec_of(v) for v in eqn.outvars]
            if all(s is None for s in outs):
                continue
            rule = rules[k]
            props = rule.backward(eqn, outs, prop) if wants[k] else rule.backward(eqn, outs)
            for a, p in zip(eqn.invars, props):
                cur = specs.get(a)
                if (cur is None or None in cur) and offer(a, p):
                    changed = True
                    changed_var(a)
        if not changed:
            break
    return prop


__all__ = [
    "DimMap",
    "DimMapRule",
    "Plan",
    "Propagation",
    "complete",
    "fits",
    "local_shape",
    "propagate",
    "replicated",
    "rule_for",
    "sharding_rules",
    "shards",
    "spec_axes",
    "spec_str",
    "unknown",
]
