"""The planner: ``jit(f, in_shardings="auto", mesh=mesh, memory_limit=...)`` chooses how
each input of the program is split over the mesh (every other value then follows by
propagation), minimising a cost model; ``jit(...).lower(...).sharding_plan()`` prints
the choice.

**The cost model** (one step of the program, on one device: the devices of a mesh
run at once; docs/parallelism.md):

- *communication*: for each collective the partitioned program runs (an operand
  resharded: ``all_gather``, ``all_to_all``; a partial result made whole: ``psum``,
  ``psum_scatter``), ``latency + bytes / bandwidth`` of the mesh axis it runs over,
  where ``bytes`` is what a process receives: ``(n-1)`` blocks for an all_gather over
  ``n`` members, ``(n-1)/n`` of its block for an all_to_all or a psum_scatter,
  ``2(n-1)/n`` of it for a psum (a ring all-reduce);
- *compute*: a dot product ``2·M·N·K`` flops at the measured flop rate; every other
  equation the elements it reads and writes at the measured element rate (memory
  bound); a loop body times its trip count (a while loop's: once);
- *memory*: the bytes a device holds (a process, over a mesh of processes): its blocks
  of the inputs, plus the largest total of the values alive at one time while the step
  runs (each counted at its block size).  A plan over ``memory_limit`` is infeasible.

The bandwidth and latency of each process axis are measured on the mesh when the first
plan over it is made (a psum of 64 KiB and of 4 MiB, timed); the flop and element
rates by timing a matrix product and an addition; every process uses process 0's
numbers, so that every process makes the same plan.  An axis within a process moves
data by copies (the measured memory bandwidth).

**The search**: an input's candidates are: whole, and each assignment of mesh axes to
dimensions they divide (a mesh axis splits at most one dimension).  When the product of
the candidate counts is at most ``EXACT_PLANS``, every combination is costed and the
best taken (exact).  Otherwise, a stated heuristic: inputs of the same shape and dtype
consumed the same way (the same primitives, at the same operand positions, two
equations deep: the same weight of every layer of a deep network) form a group that
takes one choice.  The first plan is tensor parallelism's rule: in the program's order,
each weight a dot product takes is split along its contracting dimension where the
other operand arrives split along its own (a row split), else along its other
dimension (a column split).  Coordinate descent then visits the groups in the order the
program first uses them, giving each the best of its candidates with the others fixed,
until a sweep changes nothing.  While fewer than ``PLAN_BUDGET`` equations have been
costed, it descends again from "everything whole" and from the best of "every input
split along its largest / first / last dimension", keeps the best end, and tries pair
moves from it (every two groups changing at once, neighbours in the program first),
each improvement followed by another descent.  A plan over the memory limit ranks
after every plan within it (those by memory, then time).
"""

from __future__ import annotations

import itertools
import math
import re
import time

import numpy as np

from ... import errors
from ..core.core import Tracer
from ..interpreters.sharding import local_shape, rule_for, shards, spec_str
from ..ir.ir import Literal
from ..ops.sharding_rules import CondRule, ScanRule, WhileRule
from .distributed import world_mesh
from .partition import _propagated, inline_calls, mesh_layout, normal, reshard_steps
from .sharded import NamedSharding, is_sharded, partition_spec, splat_constants

__all__ = [
    "EXACT_PLANS",
    "Cost",
    "CostModel",
    "Plan",
    "parse_bytes",
    "partitioned_cost",
    "plan_program",
]

# Exact search up to this many combinations of the inputs' candidates.
EXACT_PLANS = 512
# The heuristic stops starting new descents and pair moves once this many equations
# have been costed (plans times the program's equations): about 60 plans of a
# transformer block's training step, a dozen of twelve blocks'.  A count, not a time,
# so that every process of a job makes the same plan.
PLAN_BUDGET = 25_000


def parse_bytes(limit) -> float:
    """A memory limit: bytes (a number), or a string such as ``"2GB"``, ``"512 MiB"``
    (None: no limit)."""
    if limit is None:
        return math.inf
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
        return float(limit)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?)(i?)[bB]?\s*", str(limit))
    if not m:
        raise errors.ZeraxValueError(f"memory_limit={limit!r}: give bytes, or a string such "
                                     "as '2GB' or '512MiB'")
    base = 1024 if m.group(3) else 1000
    return float(m.group(1)) * base ** " KMGT".index(m.group(2).upper() or " ")


# --------------------------------------------------------------------------- the model

class CostModel:
    """The rates the planner costs a plan with: per mesh axis ``latency`` (s) and
    ``bandwidth`` (bytes/s), the ``flops`` (dot products) and ``elements`` (other
    equations, per second) of one device, and the ``memory_limit`` per device (bytes;
    a device is a process, over a mesh of processes).  `measure` makes one; giving one
    to ``jit(..., cost_model=)`` plans with fixed rates instead (a plan that does not
    depend on the machine's load).

    >>> from zerax.sharding import CostModel
    >>> m = CostModel({"model": 20e-6}, {"model": 1e9}, flops=1e10, elements=1e9)
    >>> m.bandwidth["model"]
    1000000000.0
    """

    def __init__(self, latency: dict, bandwidth: dict, flops: float, elements: float,
                 memory_limit: float = math.inf):
        self.latency, self.bandwidth = dict(latency), dict(bandwidth)
        self.flops, self.elements, self.memory_limit = flops, elements, memory_limit

    def describe(self) -> str:
        axes = ", ".join(f"{a}: {self.bandwidth[a] / 1e9:.2f} GB/s, "
                         f"{self.latency[a] * 1e6:.0f} us" for a in self.bandwidth)
        lim = "none" if math.isinf(self.memory_limit) else _mb(self.memory_limit)
        return (f"bandwidth and latency per mesh axis ({axes}); compute "
                f"{self.flops / 1e9:.2f} GFLOP/s in dot products, "
                f"{self.elements / 1e9:.2f} G elements/s elsewhere; memory limit {lim} "
                "per device")


def _best_time(fn, repeats=5) -> float:
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return max(best, 1e-9)


_measured: dict = {}


def measure(mesh) -> CostModel:
    """The rates of ``mesh``'s axes and of this machine, measured once per mesh (every
    process of the job calls it: it runs collectives) and agreed on (process 0's)."""
    layout = mesh_layout(mesh)
    key = (mesh, tuple(layout.process_mesh.group_ids))
    hit = _measured.get(key)
    if hit is not None:
        return hit
    sizes = mesh.shape
    a = np.random.default_rng(0).random((192, 192))
    flops = 2 * 192 ** 3 / _best_time(lambda: a @ a)
    big = np.ones(1 << 19)
    elements = 3 * big.size / _best_time(lambda: big + big)
    copy = 2 * big.nbytes / _best_time(lambda: big.copy())
    numbers = [flops, elements]
    for k, ax in enumerate(layout.process_axes):
        if sizes[ax] == 1:
            continue
        comm = layout.process_mesh.communicator((k,))
        small, large = np.ones(1 << 13), np.ones(1 << 19)
        t_small = _best_time(lambda c=comm, x=small: c.allreduce([x], "sum", "probe"), 3)
        t_large = _best_time(lambda c=comm, x=large: c.allreduce([x], "sum", "probe"), 3)
        n = sizes[ax]
        moved = 2 * (n - 1) / n * (large.nbytes - small.nbytes)
        numbers += [max(t_small, 1e-7), moved / max(t_large - t_small, 1e-9)]
    if layout.process_mesh.world.size > 1:   # every process takes process 0's numbers
        numbers = list(world_mesh().communicator((0,)).broadcast(
            np.asarray(numbers, np.float64), 0, "the planner's measurements"))
    flops, elements = numbers[0], numbers[1]
    latency, bandwidth, i = {}, {}, 2
    for ax in mesh.axis_names:
        if ax in layout.process_axes and sizes[ax] > 1:
            latency[ax], bandwidth[ax] = numbers[i], numbers[i + 1]
            i += 2
        elif sizes[ax] > 1:   # within one process: a copy
            latency[ax], bandwidth[ax] = 2e-6, copy
    model = _measured[key] = CostModel(latency, bandwidth, flops, elements)
    return model


def _mb(n) -> str:
    return f"{n / 1e6:.2f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


# --------------------------------------------------------------------------- costing

class Cost:
    """The modelled cost of a plan: ``comm`` and ``compute`` seconds, the number of
    collectives and their bytes, and the per-process ``memory`` (bytes)."""

    __slots__ = ("bytes", "collectives", "comm", "compute", "memory")

    def __init__(self):
        self.comm = self.compute = self.bytes = 0.0
        self.collectives = 0
        self.memory = 0.0

    @property
    def time(self) -> float:
        return self.comm + self.compute

    def add(self, other, times=1.0):
        self.comm += other.comm * times
        self.compute += other.compute * times
        self.bytes += other.bytes * times
        self.collectives += int(other.collectives * times)

    def describe(self) -> str:
        return (f"{self.time * 1e3:.3f} ms (communication {self.comm * 1e3:.3f} ms in "
                f"{self.collectives} collectives, {_mb(self.bytes)}; compute "
                f"{self.compute * 1e3:.3f} ms), memory {_mb(self.memory)} per device")


def _nbytes(shape, dtype) -> float:
    return float(math.prod(shape)) * np.dtype(dtype).itemsize


class _Costing:
    """Costs programs over one mesh with one model."""

    def __init__(self, mesh, model):
        self.mesh, self.model = mesh, model
        self.sizes = mesh.shape
        self.layout = mesh_layout(mesh)
        self._eqn_costs: dict = {}   # (equation kind, specs) -> its Cost
        self._kind_of: dict = {}     # id(flat) -> (flat, the kind of each equation)
        self._sizes: dict = {}       # (id(var), spec) -> (var, block bytes)
        self._life: dict = {}        # id(flat) -> (flat, values dying per equation)

    def _collective(self, cost, axes, nbytes):
        """One collective over ``axes`` moving ``nbytes`` per device."""
        axes = [a for a in axes if self.sizes[a] > 1]
        if not axes:
            return
        bw = min(self.model.bandwidth[a] for a in axes)
        lat = max(self.model.latency[a] for a in axes)
        cost.comm += (lat + nbytes / bw)
        cost.bytes += nbytes
        cost.collectives += 1

    def reshard(self, cost, src, dst, shape, dtype):
        """The collectives of resharding a value (global ``shape``)."""
        block = list(local_shape(shape, src, self.sizes))
        item = np.dtype(dtype).itemsize
        for step in reshard_steps(src, dst, block, self.sizes):
            if step[0] == "all_to_all":
                _, a, split, concat = step
                n = self.sizes[a]
                self._collective(cost, [a], (n - 1) / n * math.prod(block) * item)
                block[split] //= n
                block[concat] *= n
            elif step[0] == "all_gather":
                _, a, d = step
                n = self.sizes[a]
                self._collective(cost, [a], (n - 1) * math.prod(block) * item)
                block[d] *= n

    def finish(self, cost, spec, partial, scatter, target, shape, dtype):
        block = local_shape(shape, spec, self.sizes)
        nbytes = _nbytes(block, dtype)
        spec = [tuple(d) for d in spec]
        for a, j in scatter.items():
            n = self.sizes[a]
            self._collective(cost, [a], (n - 1) / n * nbytes)
            spec[j] = spec[j] + (a,)
        rest = [a for a in partial if a not in scatter]
        if rest:
            n = shards(rest, self.sizes)
            self._collective(cost, rest, 2 * (n - 1) / n * nbytes)
        self.reshard(cost, spec, target, shape, dtype)

    def compute(self, cost, eqn, plan):
        m = self.model
        if eqn.primitive.name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            lhs = local_shape(eqn.invars[0].aval.shape, plan.operands[0], self.sizes)
            out = local_shape(eqn.outvars[0].aval.shape, plan.results[0], self.sizes)
            k = math.prod(lhs[i] for i in lc)
            cost.compute += 2.0 * math.prod(out) * k / m.flops
            return
        n = sum(math.prod(local_shape(a.aval.shape, s, self.sizes))
                for a, s in zip(eqn.invars, plan.operands))
        n += sum(math.prod(local_shape(v.aval.shape, s, self.sizes))
                 for v, s in zip(eqn.outvars, plan.results))
        cost.compute += n / m.elements

    def _kinds(self, flat) -> list:
        """Per equation, what its cost depends on besides the specs: its primitive,
        parameters and types (equal for the same equation of every layer of a deep
        network, whose costs are then computed once); memoised per program."""
        hit = self._kind_of.get(id(flat))
        if hit is not None and hit[0] is flat:
            return hit[1]
        kinds = []
        for eqn in flat.eqns:
            try:
                params = tuple(sorted(eqn.params.items()))
                hash(params)
                if any(hasattr(v, "eqns") or hasattr(v, "jaxpr") or isinstance(v, tuple) and
                       any(hasattr(q, "eqns") for q in v) for _, v in params):
                    params = id(eqn)   # (a body: costed on its own)
            except TypeError:
                params = id(eqn)
            kinds.append((eqn.primitive, params,
                          tuple((a.aval.shape, a.aval.dtype) for a in eqn.invars),
                          tuple((v.aval.shape, v.aval.dtype) for v in eqn.outvars)))
        self._kind_of[id(flat)] = (flat, kinds)
        return kinds

    def program(self, flat, prop) -> Cost:
        """The time of ``flat`` with the specs of ``prop`` (memory left 0)."""
        cost = Cost()
        memo = self._eqn_costs
        final = prop.final
        for eqn, kind in zip(flat.eqns, self._kinds(flat)):
            ins = tuple(final(a) for a in eqn.invars)
            outs = tuple(final(v) for v in eqn.outvars)
            key = (kind, ins, outs)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = self.equation(eqn, ins, outs)
            cost.add(hit)
        return cost

    def equation(self, eqn, ins, outs) -> Cost:
        """The time of one equation with these specs."""
        cost = Cost()
        rule = rule_for(eqn.primitive)
        plan = rule.partition(eqn, list(ins), list(outs), self.sizes)
        for a, s, t in zip(eqn.invars, ins, plan.operands):
            if type(a) is not Literal:
                self.reshard(cost, s, t, a.aval.shape, a.aval.dtype)
        self.compute(cost, eqn, plan)
        self._bodies(cost, eqn, rule, ins, outs)
        for k, v in enumerate(eqn.outvars):
            self.finish(cost, plan.results[k], plan.partial[k], plan.scatter[k], outs[k],
                        v.aval.shape, v.aval.dtype)
        return cost

    def _bodies(self, cost, eqn, rule, ins, outs):
        """A loop body's cost times its trip count; a branch's: the dearest one."""
        p = eqn.params
        if isinstance(rule, ScanRule):
            nc, nk = p["num_consts"], p["num_carry"]
            body_in = list(ins[:nc]) + list(outs[:nk]) + [s[1:] for s in ins[nc + nk:]]
            cost.add(self._sub(p["jaxpr"], body_in), p["length"])
        elif isinstance(rule, WhileRule):
            cn, bn = p["cond_nconsts"], p["body_nconsts"]
            cost.add(self._sub(p["body_jaxpr"], list(ins[cn:cn + bn]) + list(outs)))
        elif isinstance(rule, CondRule):
            subs = [self._sub(b, ins[1:]) for b in p["branches"]]
            cost.add(max(subs, key=lambda c: c.time))

    def _sub(self, jaxpr, in_specs) -> Cost:
        flat = inline_calls(getattr(jaxpr, "jaxpr", jaxpr))
        prop = _propagated(flat, [tuple(map(tuple, s)) for s in in_specs], self.sizes,
                           self.mesh)
        return self.program(flat, prop)

    def _lifetimes(self, flat):
        """Per equation, the values that die after it (memoised per program)."""
        hit = self._life.get(id(flat))
        if hit is not None and hit[0] is flat:
            return hit[1]
        last = {}
        for i, eqn in enumerate(flat.eqns):
            for a in eqn.invars:
                if type(a) is not Literal:
                    last[a] = i
        keep = {v for v in flat.outvars if type(v) is not Literal} | set(flat.invars)
        dying = [[] for _ in flat.eqns]
        for v, i in last.items():
            if v not in keep:
                dying[i].append(v)
        for i, eqn in enumerate(flat.eqns):   # never used: freed at once
            dying[i].extend(v for v in eqn.outvars if v not in last and v not in keep)
        self._life[id(flat)] = (flat, dying)
        return dying

    def memory(self, flat, prop) -> float:
        """The bytes a device holds: its blocks of the inputs plus the peak of the live
        values (each value's block from its definition to its last use)."""
        sizes, memo = self.sizes, self._sizes

        def size(v):
            spec = prop.final(v)
            hit = memo.get((id(v), spec))
            if hit is None or hit[0] is not v:
                hit = memo[(id(v), spec)] = (v, _nbytes(
                    local_shape(v.aval.shape, spec, sizes), v.aval.dtype))
            return hit[1]

        dying = self._lifetimes(flat)
        live = peak = 0.0
        for eqn, dead in zip(flat.eqns, dying):
            for v in eqn.outvars:
                live += size(v)
            peak = max(peak, live)
            for v in dead:
                live -= size(v)
        return sum(size(v) for v in flat.invars) + peak


def partitioned_cost(pt, model=None) -> Cost:
    """The modelled cost of a partitioned program (``jit(...).lower(...).cost()``)."""
    model = model or measure(pt.layout.mesh)
    costing = _Costing(pt.layout.mesh, model)
    cost = costing.program(pt.flat, pt.prop)
    cost.memory = costing.memory(pt.flat, pt.prop)
    return cost


# --------------------------------------------------------------------------- the search

def _candidates(shape, mesh) -> list:
    """Every spec of an array of ``shape``: whole (first), and each assignment of mesh
    axes to dimensions they divide (an axis on at most one dimension; axes on one
    dimension in the mesh's order)."""
    axes = [a for a in mesh.axis_names if mesh.shape[a] > 1]
    out = []
    # (choice len(shape): the axis splits nothing; the whole array comes first)
    for choice in itertools.product(range(len(shape), -1, -1), repeat=len(axes)):
        spec = [[] for _ in shape]
        for a, d in zip(axes, choice):
            if d < len(shape):
                spec[d].append(a)
        spec = tuple(tuple(d) for d in spec)
        if all(n % shards(d, mesh.shape) == 0 for n, d in zip(shape, spec)) and \
                spec not in out:
            out.append(spec)
    return out


def _signatures(flat, args, depth=2) -> list:
    """How each of ``args`` is used: its shape, dtype and the primitives consuming it
    (with the operand position and their parameters), ``depth`` equations deep."""
    users: dict = {}
    for e in flat.eqns:
        for k, a in enumerate(e.invars):
            if type(a) is not Literal:
                users.setdefault(a, []).append((e, k))

    def params(e):
        return tuple(sorted((k, repr(v)[:80]) for k, v in e.params.items()))

    def walk(x, d):
        if d == 0:
            return ()
        return tuple(sorted((e.primitive.name, k, params(e),
                             tuple(walk(o, d - 1) for o in e.outvars))
                            for e, k in users.get(x, ())))
    return [(tuple(v.aval.shape), str(v.aval.dtype), walk(v, depth)) for v in args]


class Plan:
    """The planner's choice for one program: ``shardings`` (per argument leaf), ``cost``
    (its modelled `Cost`), and per input its name, candidates and the cost of each (the
    others as chosen)."""

    def __init__(self, name, mesh, model, names, avals, choice, cost, alternatives,
                 method, seconds, n_plans):
        self.name, self.mesh, self.model = name, mesh, model
        self.names, self.avals, self.choice, self.cost = names, avals, choice, cost
        self.alternatives, self.method, self.seconds = alternatives, method, seconds
        self.n_plans = n_plans
        self.shardings = [NamedSharding(mesh, partition_spec(s)) for s in choice]

    @property
    def specs(self) -> list:
        return list(self.choice)

    def describe(self) -> str:
        lines = [f"sharding plan of {self.name} over {self.mesh!r}: {self.method}, "
                 f"{self.n_plans} plans costed in {self.seconds:.2f} s",
                 f"cost model: {self.model.describe()}",
                 f"chosen: {self.cost.describe()}", "inputs:"]
        for name, aval, s, alts in zip(self.names, self.avals, self.choice, self.alternatives):
            lines.append(f"  {name}  {aval.str_short()}  {spec_str(s)}")
            for spec, c in alts:
                if spec == s:
                    continue
                if c is None or math.isinf(c.memory) or c.memory > self.model.memory_limit:
                    why = "over the memory limit" if c is not None else "infeasible"
                    mem = f" ({_mb(c.memory)})" if c is not None else ""
                    lines.append(f"      beat {spec_str(spec)}: {why}{mem}")
                else:
                    lines.append(f"      beat {spec_str(spec)}: "
                                 f"+{(c.time - self.cost.time) * 1e3:.3f} ms "
                                 f"(communication {c.comm * 1e3:.3f} ms, memory "
                                 f"{_mb(c.memory)})")
        return "\n".join(lines)


def plan_program(jaxpr, values, n_consts, mesh, memory_limit, name, names=None,
                 model=None) -> Plan:
    """Choose the sharding of each input of ``jaxpr`` past its ``n_consts`` constants
    (see the module docstring); ``values`` are the inputs (constants first)."""
    if any(isinstance(v, Tracer) for v in values):
        raise errors.NotSupportedError(
            f"jit(in_shardings='auto') of {name} inside another transform: plan the "
            "outermost jit (the one called with arrays)")
    model = model or measure(mesh)
    model = CostModel(model.latency, model.bandwidth, model.flops, model.elements,
                      parse_bytes(memory_limit))
    start = time.perf_counter()
    sizes = mesh.shape
    splats = splat_constants(jaxpr, values, n_consts)
    flat = inline_calls(jaxpr, splats)
    costing = _Costing(mesh, model)
    fixed = []
    for k, v in enumerate(values[:n_consts]):
        if k in splats:
            fixed.append(())
        elif is_sharded(v):
            fixed.append(v._value.spec)
        else:
            fixed.append(((),) * len(np.shape(v)))
    args = flat.invars[n_consts:]
    cands = [_candidates(v.aval.shape, mesh) for v in args]
    memo: dict = {}

    def evaluate(choice) -> Cost:
        key = tuple(choice)
        hit = memo.get(key)
        if hit is None:
            specs = fixed + [normal(s, sizes) for s in choice]
            prop = _propagated(flat, specs, sizes, mesh)
            hit = costing.program(flat, prop)
            hit.memory = costing.memory(flat, prop)
            memo[key] = hit
        return hit

    def score(c: Cost):
        over = c.memory > model.memory_limit
        return (1, c.memory, c.time) if over else (0, c.time, c.memory)

    n_combos = math.prod(len(c) for c in cands)
    if n_combos <= EXACT_PLANS:
        method = "exact search (every combination)"
        best = min(itertools.product(*cands), key=lambda ch: score(evaluate(ch)))
        best = list(best)
        groups = [[k] for k in range(len(args))]
    else:
        method = "heuristic (grouped coordinate descent and pair moves; see " \
                 "docs/parallelism.md)"
        groups = _groups(flat, args)
        budget = PLAN_BUDGET // max(1, len(flat.eqns))
        alternating = _alternating(flat, args, cands, groups, fixed, costing)
        best = _descend(args, cands, groups, evaluate, score, lambda: len(memo) < budget,
                        alternating)
    cost = evaluate(best)
    if cost.memory > model.memory_limit:
        raise errors.ZeraxValueError(
            f"jit(in_shardings='auto') of {name}: no plan over {mesh!r} fits in "
            f"memory_limit={_mb(model.memory_limit)} per device; the least memory found "
            f"is {_mb(cost.memory)} (with {', '.join(spec_str(s) for s in best)}). Raise "
            "the limit, or use a mesh of more processes.")
    alternatives = [None] * len(args)
    for g in groups:   # (a group's inputs change together: its rows are shared)
        row = []
        for s in cands[g[0]]:
            ch = list(best)
            for k in g:
                ch[k] = s
            row.append((s, evaluate(ch)))
        for k in g:
            alternatives[k] = row
    seconds = time.perf_counter() - start
    leaf_names = names or [f"input {k}" for k in range(len(args))]
    return Plan(name, mesh, model, leaf_names, [v.aval for v in args], best, cost,
                alternatives, method, seconds, len(memo))


def _groups(flat, args) -> list:
    """The inputs used alike (`_signatures`), in groups, in the order the program
    first uses them (a choice then meets the choices made upstream of it)."""
    sig: dict = {}
    for k, key in enumerate(_signatures(flat, args)):
        sig.setdefault(key, []).append(k)
    first = {}
    for i, e in enumerate(flat.eqns):
        for a in e.invars:
            first.setdefault(a, i)
    return sorted(sig.values(), key=lambda g: min(first.get(args[k], len(flat.eqns))
                                                  for k in g))


def _seeds(args, cands) -> list:
    """The starting plans of the descent: every input whole; every input split along
    its largest dimension; along its first; along its last (all the mesh's axes on
    that dimension, where they divide it)."""
    def along(pick):
        plan = []
        for v, c in zip(args, cands):
            shape = v.aval.shape
            d = pick(shape) if shape else None
            on = [s for s in c if d is not None and s[d] and not any(
                x for i, x in enumerate(s) if i != d)]
            plan.append(max(on, key=lambda s: len(s[d])) if on else c[0])
        return plan
    return [[c[0] for c in cands], along(lambda s: max(range(len(s)), key=lambda i: s[i])),
            along(lambda s: 0), along(lambda s: len(s) - 1)]


def _alternating(flat, args, cands, groups, fixed, costing):
    """The seed of tensor parallelism: in the program's order, each weight a dot
    product takes is split along its contracting dimension where the other operand
    arrives split along its own (a row split: the partial sums meet in one all-reduce),
    else along its other dimension (a column split: the result stays split), with every
    mesh axis; one forward propagation per group."""
    plan = [c[0] for c in cands]
    users: dict = {}
    for e in flat.eqns:
        if e.primitive.name == "dot_general":
            for k, a in enumerate(e.invars):
                users.setdefault(a, (e, k))
    axes = tuple(a for a in costing.mesh.axis_names if costing.sizes[a] > 1)
    for g in groups:
        use = users.get(args[g[0]])
        if use is None or len(args[g[0]].aval.shape) != 2:
            continue
        e, k = use
        prop = _propagated(flat, fixed + [normal(s, costing.sizes) for s in plan],
                           costing.sizes, costing.mesh, backward=False)
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        mine, theirs = (rc, lc) if k == 1 else (lc, rc)
        other = prop.final(e.invars[1 - k])
        split = any(other[d] for d in theirs)
        free = [d for d in range(2) if d not in mine and d not in (rb if k == 1 else lb)]
        want = [()] * 2
        dims = mine if split else free
        if len(dims) != 1:
            continue
        want[dims[0]] = axes
        want = tuple(want)
        if want in cands[g[0]]:
            for m in g:
                plan[m] = want
    return plan


def _descend(args, cands, groups, evaluate, score, more, alternating):
    """The module docstring's heuristic: grouped coordinate descent from the seed of
    tensor parallelism (`_alternating`), then (while ``more()``) from "everything
    whole" and from the best of the other seeds; from the best end, pair moves (two
    groups changing at once: a column split with the row split that meets it, which no
    single move reaches) while ``more()``."""
    whole, *others = _seeds(args, cands)
    ends = [_descend_from(list(alternating), cands, groups, evaluate, score)]
    for seed in ([whole, others] if more() else []):
        if more():
            seed = seed if seed is whole else min(seed, key=lambda ch: score(evaluate(ch)))
            ends.append(_descend_from(list(seed), cands, groups, evaluate, score, more))
    best = min(ends, key=lambda ch: score(evaluate(ch)))
    pairs = sorted(itertools.combinations(range(len(groups)), 2),
                   key=lambda p: (p[1] - p[0], p))   # neighbours in the program first
    improved = True
    while improved and more():
        improved = False
        for i, j in pairs:
            if not more():
                break
            current = score(evaluate(best))
            for si in cands[groups[i][0]]:
                for sj in cands[groups[j][0]]:
                    ch = list(best)
                    for k in groups[i]:
                        ch[k] = si
                    for k in groups[j]:
                        ch[k] = sj
                    if score(evaluate(ch)) < current:
                        best, current, improved = ch, score(evaluate(ch)), True
            if improved:
                best = _descend_from(best, cands, groups, evaluate, score, more)
                break
    return best


def _descend_from(best, cands, groups, evaluate, score, more=lambda: True):
    """Coordinate descent over the groups from ``best`` (stopped early when ``more()``
    turns false)."""
    changed = True
    while changed and more():
        changed = False
        for g in groups:
            current = score(evaluate(best))
            pick = None
            for s in cands[g[0]]:
                ch = list(best)
                for k in g:
                    ch[k] = s
                if score(evaluate(ch)) < current:
                    current, pick = score(evaluate(ch)), s
            if pick is not None:
                for k in g:
                    best[k] = pick
                changed = True
    return best
