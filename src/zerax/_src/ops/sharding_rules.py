"""The sharding rules of the primitives (the table ``interpreters.sharding.sharding_rules``):
how each is computed on blocks of its operands split over a mesh (see that module for
what a rule is, and ``api/partition.py`` for the pass that uses them).

Most are DimMaps: elementwise primitives map every dimension to itself; a dot
product maps its batch and free dimensions to the result's and sums its contracting
dimensions (split ones leave a partial sum: one all-reduce, or a reduce-scatter, makes
it whole); reductions likewise; a broadcast makes its new dimensions (a device makes
its own block of them); transposes, squeezes, reshapes (through the groups of
dimensions whose products match), slices, pads, concatenations and dynamic slices keep
every dimension they do not cut, and need whole the ones they cut, sort or scan along.
Beyond those:

- ``iota`` split along its dimension counts from the block's first index;
- ``gather`` with an index array into a split dimension (a vocabulary-parallel
  embedding): each device looks up the indices in its rows, zeros elsewhere, and the
  partial sum over the devices is the lookup; the scatters into such a dimension update
  only the device's own rows (the embedding's gradient stays split): those two rules
  are in ``ops/sharding_indexing.py``;
- ``cond``, ``scan`` and ``while`` partition their bodies with the carries keeping their
  specs from one iteration to the next (a scanned dimension is whole);
- the call primitives (``jit``, ``checkpoint``, ``custom_jvp_call``, ``custom_vjp_call``)
  are inlined before propagation: their bodies are partitioned with the program;
- decompositions, FFTs and the like split their batch dimensions only;
- the primitives internal to differentiation (``custom_lin``, ``checkpoint_jvp``,
  ``while_lin``, ``while_transpose``), ``debug_callback`` and ``function_call`` run on
  whole operands on every device (correct; nothing is split);
- collectives over named axes are not partitioned: a program written with them
  (``shard_map``, ``spmd``) already says what each device does.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.core import all_primitives
from ..interpreters.sharding import (
    DimMap,
    DimMapRule,
    Plan,
    Propagation,
    propagate,
    replicated,
    sharding_rules,
)
from . import custom_calls, fft, linalg, reduce, shape, windows
from . import gather as gth
from . import index_update as iu
from .call import jit_p
from .cond import cond_from_fns, cond_p
from .elementwise import (
    add,
    convert_element_type,
    mul,
)
from .scan import scan_from_fn, scan_p
from .sharding import constraint_spec, sharding_constraint_p
from .sharding_indexing import GatherRule, ScatterRule
from .while_loop import while_from_fns, while_p

P = all_primitives()


def _rank(a):
    return len(a.aval.shape)


# --------------------------------------------------------------------------- elementwise

def _elementwise_map(eqn):
    """Each operand dimension to the same result dimension (0-d operands broadcast; a
    bitcast to another width changes the last dimension, which stays whole)."""
    out = eqn.outvars[0].aval.shape
    ops = []
    for a in eqn.invars:
        s = a.aval.shape
        if not s:
            ops.append(())
            continue
        ops.append(tuple(i if i < len(out) and s[i] == out[i] and len(s) == len(out)
                         else None for i in range(len(s))))
    return DimMap(ops, len(out))


ELEMENTWISE = DimMapRule(_elementwise_map, name="elementwise")


# --------------------------------------------------------------------------- shapes

def _bid_map(eqn):
    x = eqn.invars[0].aval.shape
    out = eqn.params["shape"]
    bd = eqn.params["broadcast_dimensions"]
    m = tuple(d if x[i] == out[d] else None for i, d in enumerate(bd))
    free = [j for j in range(len(out)) if j not in bd or x[bd.index(j)] != out[j]]
    return DimMap([m], len(out), free)


def _bid_local(ctx, eqn, blocks, result_shapes):
    return ctx.bind(eqn.primitive, blocks, dict(eqn.params, shape=result_shapes[0]))


def _transpose_map(eqn):
    perm = eqn.params["permutation"]
    inv = [0] * len(perm)
    for j, p in enumerate(perm):
        inv[p] = j
    return DimMap([tuple(inv)], len(perm))


def _squeeze_map(eqn):
    dims = set(eqn.params["dimensions"])
    m, j = [], 0
    for i in range(_rank(eqn.invars[0])):
        if i in dims:
            m.append(None)
        else:
            m.append(j)
            j += 1
    return DimMap([tuple(m)], j)


def _keep_map(cut):
    """Dimensions ``cut(eqn)`` must be whole; the others map to themselves (every
    operand of the result's rank; 0-d operands are scalars)."""
    def dimmap(eqn):
        bad = set(cut(eqn))
        nd = _rank(eqn.outvars[0])
        ops = [() if _rank(a) == 0 else tuple(None if i in bad else i for i in range(nd))
               for a in eqn.invars]
        return DimMap(ops, nd)
    return dimmap


def _full(n, start, limit, stride):
    return start == 0 and limit == n and (stride or 1) == 1


def _slice_cut(eqn):
    x = eqn.invars[0].aval.shape
    p = eqn.params
    st = p["strides"] or (1,) * len(x)
    return [d for d in range(len(x))
            if not _full(x[d], p["start_indices"][d], p["limit_indices"][d], st[d])]


def _slice_local(ctx, eqn, blocks, result_shapes):
    p = eqn.params
    limits = tuple(lim if n == full else n for lim, n, full in
                   zip(p["limit_indices"], blocks[0].shape, eqn.invars[0].aval.shape))
    return ctx.bind(eqn.primitive, blocks, dict(p, limit_indices=limits))


def _pad_cut(eqn):
    return [d for d, c in enumerate(eqn.params["padding_config"]) if tuple(c) != (0, 0, 0)]


def _ds_cut(eqn):
    x = eqn.invars[0].aval.shape
    return [d for d, k in enumerate(eqn.params["slice_sizes"]) if k != x[d]]


def _ds_map(eqn):
    bad = set(_ds_cut(eqn))
    nd = _rank(eqn.outvars[0])
    return DimMap([tuple(None if i in bad else i for i in range(nd))] +
                  [()] * (len(eqn.invars) - 1), nd)


def _ds_local(ctx, eqn, blocks, result_shapes):
    return ctx.bind(eqn.primitive, blocks, dict(eqn.params, slice_sizes=result_shapes[0]))


def _dus_map(eqn):
    x, u = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    m = tuple(i if u[i] == x[i] else None for i in range(len(x)))
    return DimMap([m, m] + [()] * (len(eqn.invars) - 2), len(x))


def _iota_map(eqn):
    return DimMap([], len(eqn.params["shape"]), free=range(len(eqn.params["shape"])))


def _iota_local(ctx, eqn, blocks, result_shapes):
    p = eqn.params
    shp = tuple(result_shapes[0])
    d = p["dimension"]
    (out,) = ctx.bind(eqn.primitive, (), dict(p, shape=shp))
    axes = ctx.result_specs[0][d]
    if not axes:
        return [out]
    # a block of the counting dimension counts from its first index
    start = mul(convert_element_type(ctx.block_index(axes), np.dtype(p["dtype"])),
                np.asarray(shp[d], p["dtype"]))
    return [add(out, start)]


def _reshape_groups(a, b):
    """The groups of dimensions of shapes ``a`` and ``b`` whose products match (size-1
    dimensions left out): a list of (dims of a, dims of b)."""
    ia = [i for i, n in enumerate(a) if n != 1]
    ib = [j for j, n in enumerate(b) if n != 1]
    groups, i, j = [], 0, 0
    while i < len(ia) and j < len(ib):
        ga, gb = [ia[i]], [ib[j]]
        pa, pb = a[ia[i]], b[ib[j]]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                pa *= a[ia[i]]
                ga.append(ia[i])
                i += 1
            else:
                pb *= b[ib[j]]
                gb.append(ib[j])
                j += 1
        groups.append((ga, gb))
    return groups


class ReshapeRule:
    """A split of the major dimension of a group of dimensions carries over to the
    major dimension of the matching group, when it splits it evenly (merging (B, S) to
    B*S keeps a split of B; splitting E into (H, Dh) puts a split of E on H); every
    other dimension of a group must be whole."""

    def _pairs(self, eqn):
        a, b = eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape
        return a, b, _reshape_groups(a, b)

    def forward(self, eqn, ins):
        _, b, groups = self._pairs(eqn)
        s = ins[0]
        out = [() for _ in b]
        for ga, gb in groups:
            out[gb[0]] = s[ga[0]]   # (None: unknown yet; propagation checks it divides)
        return [out]

    def backward(self, eqn, outs):
        a, _, groups = self._pairs(eqn)
        o = outs[0]
        p = [() for _ in a]
        for ga, gb in groups:
            p[ga[0]] = o[gb[0]]
        return [p]

    def partition(self, eqn, ins, outs, sizes):
        a, b, groups = self._pairs(eqn)
        o = outs[0]
        operand, result = [() for _ in a], [() for _ in b]
        for ga, gb in groups:
            axes = o[gb[0]]
            n = 1
            for x in axes:
                n *= sizes[x]
            if axes and a[ga[0]] % n == 0 and b[gb[0]] % n == 0:
                operand[ga[0]] = result[gb[0]] = axes
        return Plan([tuple(operand)], [tuple(result)], _reshape_local(eqn))


def _reshape_local(eqn):
    def local(ctx, x, result_shapes):
        return ctx.bind(eqn.primitive, (x,), dict(eqn.params, new_sizes=tuple(result_shapes[0])))
    return local


# --------------------------------------------------------------------------- reductions

def _reduce_map(op):
    def dimmap(eqn):
        axes = set(eqn.params["axes"])
        m, j = [], 0
        for i in range(_rank(eqn.invars[0])):
            if i in axes:
                m.append(None if op is None else (op, i))
            else:
                m.append(j)
                j += 1
        return DimMap([tuple(m)], j)
    return dimmap


def _arg_map(eqn):
    ax = eqn.params["axis"]
    m, j = [], 0
    for i in range(_rank(eqn.invars[0])):
        if i == ax:
            m.append(None)
        else:
            m.append(j)
            j += 1
    return DimMap([tuple(m)], j)


def _dot_map(eqn):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    nl, nr = _rank(eqn.invars[0]), _rank(eqn.invars[1])
    lf = [i for i in range(nl) if i not in lc and i not in lb]
    rf = [i for i in range(nr) if i not in rc and i not in rb]
    lm, rm = [None] * nl, [None] * nr
    for k, (i, j) in enumerate(zip(lb, rb)):
        lm[i], rm[j] = k, k
    for k, (i, j) in enumerate(zip(lc, rc)):
        lm[i] = rm[j] = ("sum", k)
    for k, i in enumerate(lf):
        lm[i] = len(lb) + k
    for k, i in enumerate(rf):
        rm[i] = len(lb) + len(lf) + k
    return DimMap([tuple(lm), tuple(rm)], len(lb) + len(lf) + len(rf))


# --------------------------------------------------------------------------- windows

def _patches_map(eqn):
    # (N, C, *spatial) -> (N, C, window, *out spatial): N and C carry over
    nd = _rank(eqn.invars[0])
    return DimMap([(0, 1) + (None,) * (nd - 2)], _rank(eqn.outvars[0]))


def _patches_add_map(eqn):
    nd = _rank(eqn.invars[0])
    return DimMap([(0, 1) + (None,) * (nd - 2)], _rank(eqn.outvars[0]))


# --------------------------------------------------------------------------- leading dims

class LeadingDimsRule:
    """Only the first ``n(eqn)`` dimensions (batch dimensions every operand and result
    shares) may be split: a decomposition or FFT of each matrix or signal is one
    device's work."""

    def __init__(self, n):
        self.n = n

    def forward(self, eqn, ins):
        k = self.n(eqn)
        lead = next((s[:k] for s in ins if s is not None), [None] * k)
        return [list(lead) + [()] * (_rank(v) - k) for v in eqn.outvars]

    def backward(self, eqn, outs):
        k = self.n(eqn)
        lead = next((s[:k] for s in outs if s is not None), [None] * k)
        return [list(lead) + [()] * (_rank(a) - k) for a in eqn.invars]

    def partition(self, eqn, ins, outs, sizes):
        k = self.n(eqn)
        lead = tuple(outs[0][:k])
        return Plan([lead + ((),) * (_rank(a) - k) for a in eqn.invars],
                    [lead + ((),) * (_rank(v) - k) for v in eqn.outvars],
                    lambda ctx, *blocks, result_shapes: ctx.bind(eqn.primitive, blocks,
                                                                  eqn.params))


def _matrix_batch(eqn):
    return max(0, _rank(eqn.invars[0]) - 2)


def _fft_batch(eqn):
    return _rank(eqn.invars[0]) - len(eqn.params["fft_lengths"])


# --------------------------------------------------------------------------- whole

class WholeRule:
    """Every operand and result whole on every device: the primitive runs as it is, on
    each (``why`` says why nothing better is known)."""

    def __init__(self, why):
        self.why = why

    def forward(self, eqn, ins):
        return [replicated(_rank(v)) for v in eqn.outvars]

    def backward(self, eqn, outs):
        return [replicated(_rank(a)) for a in eqn.invars]

    def partition(self, eqn, ins, outs, sizes):
        return Plan([replicated(_rank(a)) for a in eqn.invars],
                    [replicated(_rank(v)) for v in eqn.outvars],
                    lambda ctx, *blocks, result_shapes: ctx.bind(eqn.primitive, blocks,
                                                                  eqn.params))


class Inlined:
    """A call primitive: the partitioning pass inlines its program (the parameter
    ``param``) before propagation, so its body is partitioned with the program."""

    def __init__(self, param):
        self.param = param

    def _never(self, *args):
        raise errors.ZeraxInternalError("a call primitive reached propagation un-inlined")

    forward = backward = partition = _never


class ConstraintRule:
    """``sharding_constraint``: its result has the spec it names (the pass fixes it),
    and its operand is asked for that spec."""

    def forward(self, eqn, ins):
        return [list(constraint_spec(eqn.params["sharding"], _rank(eqn.outvars[0])))]

    def backward(self, eqn, outs):
        return [list(constraint_spec(eqn.params["sharding"], _rank(eqn.invars[0])))]

    def partition(self, eqn, ins, outs, sizes):
        return Plan([outs[0]], [outs[0]], lambda ctx, x, result_shapes: [x])


# --------------------------------------------------------------------------- control flow

class _SubPrograms:
    """Shared by the control-flow rules: the specs a body gives its results for given
    operand specs (a propagation of the body alone, memoised)."""

    wants_prop = True

    def _body_out(self, jaxpr, in_specs, prop):
        key = (id(jaxpr), tuple(None if s is None else tuple(s) for s in in_specs))
        memo = getattr(self, "_memo", None)
        if memo is None:
            memo = self._memo = {}
        hit = memo.get(key)
        if hit is not None and hit[0] is jaxpr:
            return hit[1]
        sub = Propagation(prop.sizes)
        for v, s in zip(jaxpr.invars, in_specs):
            if s is not None:   # (an operand not known yet stays unknown in the body)
                sub.offer(v, s)
        propagate(jaxpr, sub)
        outs = [sub.spec_of(v) for v in jaxpr.outvars]
        memo[key] = (jaxpr, outs)
        return outs


class CondRule(_SubPrograms):
    """Branches run on the operands as they are split; each branch's results are
    resharded to the specs of the first branch's."""

    def forward(self, eqn, ins, prop):
        ops = ins[1:]
        return self._body_out(eqn.params["branches"][0], ops, prop)

    def backward(self, eqn, outs, prop):
        return [None] * len(eqn.invars)

    def partition(self, eqn, ins, outs, sizes):
        ops = list(ins[1:])

        def local(ctx, index, *blocks, result_shapes):
            fns = [ctx.sub_fn(b, ops, outs) for b in eqn.params["branches"]]
            return cond_from_fns(index, fns, list(blocks), "cond")
        return Plan([()] + ops, list(outs), local)


class ScanRule(_SubPrograms):
    """Consts and carries keep their specs (a carry's spec is the one its initial value
    has); the scanned dimension of the inputs and outputs is whole."""

    def _split(self, eqn):
        p = eqn.params
        return p["num_consts"], p["num_carry"]

    def _body_ins(self, eqn, ins):
        nc, nk = self._split(eqn)
        xs = [None if s is None else list(s[1:]) for s in ins[nc + nk:]]
        return list(ins[:nc + nk]) + xs

    def forward(self, eqn, ins, prop):
        nc, nk = self._split(eqn)
        body = self._body_out(eqn.params["jaxpr"], self._body_ins(eqn, ins), prop)
        carry = [ins[nc + k] for k in range(nk)]
        ys = [None if s is None else [()] + list(s) for s in body[nk:]]
        return carry + ys

    def backward(self, eqn, outs, prop):
        nc, nk = self._split(eqn)
        xs = [None] * (len(eqn.invars) - nc - nk)
        return [None] * nc + list(outs[:nk]) + xs

    def partition(self, eqn, ins, outs, sizes):
        nc, nk = self._split(eqn)
        consts = list(ins[:nc])
        carry = list(outs[:nk])
        xs = [((),) + tuple(s[1:]) for s in ins[nc + nk:]]
        ys = [((),) + tuple(s[1:]) for s in outs[nk:]]
        body_in = consts + carry + [s[1:] for s in xs]
        body_out = carry + [s[1:] for s in ys]
        p = eqn.params

        def local(ctx, *blocks, result_shapes):
            fn = ctx.sub_fn(p["jaxpr"], body_in, body_out)
            c, k = list(blocks[:nc]), list(blocks[nc:nc + nk])
            x = list(blocks[nc + nk:])

            def body(cs, carry_, xs_):
                o = fn(*cs, *carry_, *xs_)
                return o[:nk], o[nk:]
            new_c, new_y = scan_from_fn(body, c, k, x, p["length"], p["reverse"],
                                        "scan", p.get("unroll", 1))
            return list(new_c) + list(new_y)
        return Plan(consts + carry + xs, carry + ys, local)


class WhileRule(_SubPrograms):
    """The carries keep the specs of their initial values; the condition's operands
    are split as given, its result whole."""

    def _split(self, eqn):
        p = eqn.params
        return p["cond_nconsts"], p["body_nconsts"]

    def forward(self, eqn, ins, prop):
        cn, bn = self._split(eqn)
        return list(ins[cn + bn:])

    def backward(self, eqn, outs, prop):
        cn, bn = self._split(eqn)
        return [None] * (cn + bn) + list(outs)

    def partition(self, eqn, ins, outs, sizes):
        cn, bn = self._split(eqn)
        cc, bc = list(ins[:cn]), list(ins[cn:cn + bn])
        carry = list(outs)
        p = eqn.params

        def local(ctx, *blocks, result_shapes):
            cfn = ctx.sub_fn(p["cond_jaxpr"], cc + carry, [()])
            bfn = ctx.sub_fn(p["body_jaxpr"], bc + carry, carry)
            c_b, b_b = list(blocks[:cn]), list(blocks[cn:cn + bn])
            return while_from_fns(lambda c: cfn(*c_b, *c)[0], lambda c: bfn(*b_b, *c),
                                  list(blocks[cn + bn:]), "while_loop",
                                  p["checkpoint_every"])
        return Plan(cc + bc + carry, carry, local)


# --------------------------------------------------------------------------- the table

for _prim in all_primitives().values():
    if _prim.elementwise:
        sharding_rules[_prim] = ELEMENTWISE
sharding_rules[P["stop_gradient"]] = ELEMENTWISE
sharding_rules[shape.broadcast_in_dim_p] = DimMapRule(_bid_map, _bid_local)
sharding_rules[shape.transpose_p] = DimMapRule(_transpose_map)
sharding_rules[shape.squeeze_p] = DimMapRule(_squeeze_map)
sharding_rules[shape.reshape_p] = ReshapeRule()
sharding_rules[shape.iota_p] = DimMapRule(_iota_map, _iota_local)
sharding_rules[P["rev"]] = DimMapRule(_keep_map(lambda e: e.params["dimensions"]))
sharding_rules[P["concatenate"]] = DimMapRule(_keep_map(lambda e: [e.params["dimension"]]))
sharding_rules[P["pad"]] = DimMapRule(_keep_map(_pad_cut))
sharding_rules[P["slice"]] = DimMapRule(_keep_map(_slice_cut), _slice_local)
sharding_rules[P["dynamic_slice"]] = DimMapRule(_ds_map, _ds_local)
sharding_rules[P["dynamic_update_slice"]] = DimMapRule(_dus_map)
sharding_rules[reduce.reduce_sum_p] = DimMapRule(_reduce_map("sum"))
sharding_rules[reduce.reduce_max_p] = DimMapRule(_reduce_map("max"))
sharding_rules[reduce.reduce_min_p] = DimMapRule(_reduce_map("min"))
# (a product over devices has no collective here: the dimension is gathered)
sharding_rules[reduce.reduce_prod_p] = DimMapRule(_reduce_map(None))
for _name in ("argmax", "argmin"):
    sharding_rules[P[_name]] = DimMapRule(_arg_map)
for _name in ("cumsum", "cumprod", "cummax", "cummin"):
    sharding_rules[P[_name]] = DimMapRule(_keep_map(lambda e: [e.params["axis"]]))
for _name in ("sort", "argsort"):
    sharding_rules[P[_name]] = DimMapRule(_keep_map(lambda e: [e.params["dimension"]]))
sharding_rules[linalg.dot_general_p] = DimMapRule(_dot_map)
sharding_rules[windows.window_patches_p] = DimMapRule(_patches_map)
sharding_rules[windows.window_patches_add_p] = DimMapRule(_patches_add_map)
sharding_rules[gth.gather_p] = GatherRule()
for _prim in iu.SCATTERS.values():
    sharding_rules[_prim] = ScatterRule()
for _name in ("cholesky", "lu", "qr", "svd", "eig", "eigh", "triangular_solve"):
    sharding_rules[P[_name]] = LeadingDimsRule(_matrix_batch)
sharding_rules[fft.fft_p] = LeadingDimsRule(_fft_batch)
sharding_rules[cond_p] = CondRule()
sharding_rules[scan_p] = ScanRule()
sharding_rules[while_p] = WhileRule()
sharding_rules[jit_p] = Inlined("jaxpr")
sharding_rules[custom_calls.remat_p] = Inlined("jaxpr")
sharding_rules[custom_calls.custom_jvp_call_p] = Inlined("call_jaxpr")
sharding_rules[custom_calls.custom_vjp_call_p] = Inlined("call_jaxpr")
sharding_rules[sharding_constraint_p] = ConstraintRule()
for _name in ("custom_lin", "checkpoint_jvp", "while_lin", "while_transpose"):
    sharding_rules[P[_name]] = WholeRule("internal to differentiation: runs as it is")
sharding_rules[P["debug_callback"]] = WholeRule("a host callback sees whole values")
sharding_rules[P["function_call"]] = WholeRule("a zerax.Function's forward is NumPy code")
for _name in ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
              "ppermute", "axis_index"):
    P[_name].unsupported["sharding"] = (
        "a collective over named axes says what each device does (shard_map, "
        "distributed.spmd), which automatic partitioning does not combine with: write the "
        "step with shardings only, or call the shard_map outside the partitioned jit")

__all__ = ["ELEMENTWISE", "GatherRule", "ReshapeRule", "ScatterRule"]
