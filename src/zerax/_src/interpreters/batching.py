"""Vectorisation: `vmap`, the batch trace, and helpers for batching rules.

A `BatchTracer` carries a value with one extra *batch dimension* at position ``bdim``.
Values that do not vary over the batch are never wrapped (like symbolic zeros in AD),
so an operand that is not mapped stays unmapped: ``vmap(lambda x: x @ W)(xs)`` is one
matrix product with ``W`` untouched.  Batch dimensions move lazily: a rule returns its
result with the batch dimension wherever it is cheapest, and `vmap` moves it to
``out_axes`` only at the end.

A primitive's batching rule is ``batch(args, dims, **params) -> (out, out_dim)``, where
``dims[i]`` is the batch dimension of ``args[i]`` or None when it is not mapped.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..core import tree
from ..core.api_util import as_input, as_output
from ..core.core import (ShapedArray, Trace, Tracer, concretization_error, find_top_trace,
                         get_aval, new_trace, rule_table)
from ..ir.ir import eval_jaxpr
from ..ir.tracing import fun_name, trace_closed, trace_to_jaxpr
from .ad import custom_lin_p, derived_program

not_mapped = None

# The axis name of the named vmap whose batching rule is running (None: none is); a vmap
# started by that rule (batching a sub-program along the same axis) takes the name.
_rule_axis_name: list = [None]


# prim -> batch(args, dims, **params) -> (out, out_dim): the vmap rule
batch_rules = rule_table("batch", "vmap")

# The shape primitives the helpers below bind (transpose, broadcast_in_dim, ...) are
# declared in ops/, a layer above: ops/__init__.py installs their module here.
_shape = None


def install_shape_ops(shape_module) -> None:
    global _shape
    _shape = shape_module


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = get_aval(self.val)
        shape = list(a.shape)
        del shape[self.bdim]
        return ShapedArray(shape, a.dtype)

    @property
    def shape(self):
        s = list(self.val.shape)
        del s[self.bdim]
        return tuple(s)

    @property
    def dtype(self):
        return self.val.dtype

    def to_concrete(self, what):
        raise concretization_error(self, what + " (on a value that varies over a vmap batch)")


class BatchTrace(Trace):
    __slots__ = ("axis_size", "axis_name")

    def __init__(self, level, axis_size, axis_name=None):
        super().__init__(level, "vmap")
        self.axis_size = axis_size
        self.axis_name = axis_name

    def _split(self, args):
        vals, dims, any_mapped = [], [], False
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                vals.append(a.val)
                dims.append(a.bdim)
                any_mapped = True
            else:
                vals.append(a)
                dims.append(None)
        return vals, dims, any_mapped

    def _wrap(self, val, dim):
        return val if dim is None else BatchTracer(self, val, dim)

    def process_primitive(self, prim, args, params):
        vals, dims, _ = self._split(args)
        rule = batch_rules.get(prim)
        if rule is None:
            raise prim.rule_missing("vmap", "batch")
        if prim.named_axes:
            out, out_dim = rule(vals, dims, frame=(self.axis_name, self.axis_size), **params)
        elif self.axis_name is None:
            out, out_dim = rule(vals, dims, **params)
        else:
            # sub-programs (jit, scan, cond, ...) are batched by vmaps inside the rule:
            # they batch this same axis, so they carry its name for the collectives
            outer = _rule_axis_name[0]
            _rule_axis_name[0] = self.axis_name
            try:
                out, out_dim = rule(vals, dims, **params)
            finally:
                _rule_axis_name[0] = outer
        if prim.multiple_results:
            return [self._wrap(o, d) for o, d in zip(out, out_dim)]
        return self._wrap(out, out_dim)

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        vals, dims, _ = self._split(args)
        return self._call_batched_custom(prim, fun, (jvp_rule,), vals, dims)

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        vals, dims, _ = self._split(args)
        return self._call_batched_custom(prim, fun, (fwd, bwd, params.get("fwd_jvp")), vals,
                                         dims)

    def _call_batched_custom(self, prim, fun, rules, vals, dims):
        outs = batched_custom_call(prim, fun, rules, vals, dims, self.axis_size)
        return [self._wrap(o, 0) for o in outs]


# --------------------------------------------------------------------------- helpers

def moveaxis(x, src: int, dst: int):
    """Move axis ``src`` of ``x`` to position ``dst`` (with the transpose primitive)."""
    nd = len(x.shape)
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return _shape.transpose(x, perm)


def bdim_at_front(x, dim, size):
    """``x`` with its batch dimension at 0; an unmapped ``x`` is broadcast to ``size``."""
    if dim is None:
        shape = tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)
        return _shape.broadcast_in_dim(x, (size,) + shape, tuple(range(1, len(shape) + 1)))
    return moveaxis(x, dim, 0)


def batch_size_of(vals, dims):
    for v, d in zip(vals, dims):
        if d is not None:
            return v.shape[d]
    raise AssertionError("no mapped operand")


def vectorized_batcher(prim):
    """Rule for a primitive that acts per element (one operand): dims pass through."""
    def rule(args, dims, **params):
        return prim.bind(*args, **params), dims[0]
    batch_rules[prim] = rule
    return rule


def broadcast_batcher(prim):
    """Rule for n-ary elementwise primitives (equal shapes, 0-d operands broadcast)."""

    def rule(args, dims, **params):
        mapped = [(a, d) for a, d in zip(args, dims) if d is not None]
        first_val, first_dim = mapped[0]
        ndim = len(first_val.shape)
        # Fast case: every operand mapped at the same place with the same shape, or
        # unmapped 0-d (which broadcasts anyway).
        if all(d is None and len(np.shape(a)) == 0 or
               d == first_dim and tuple(a.shape) == tuple(first_val.shape)
               for a, d in zip(args, dims)):
            return prim.bind(*args, **params), first_dim
        size = first_val.shape[first_dim]
        example_ndim = max(len(np.shape(a)) - (d is not None) for a, d in zip(args, dims))
        example_shape = None
        for a, d in zip(args, dims):
            s = list(np.shape(a))
            if d is not None:
                del s[d]
            if len(s) == example_ndim and example_ndim:
                example_shape = tuple(s)
                break
        example_shape = example_shape or ()
        del ndim
        new_args = []
        for a, d in zip(args, dims):
            if d is None:
                new_args.append(a if len(np.shape(a)) == 0 else
                                _shape.broadcast_in_dim(a, (size,) + example_shape,
                                                 tuple(range(1, example_ndim + 1))))
            else:
                a = moveaxis(a, d, 0)
                if tuple(a.shape[1:]) != example_shape:  # a batched 0-d operand
                    a = _shape.broadcast_in_dim(a, (size,) + example_shape, (0,))
                new_args.append(a)
        return prim.bind(*new_args, **params), 0

    batch_rules[prim] = rule
    return rule


# --------------------------------------------------------------------------- vmap

def _flatten_axes(what, treedef, axes, shown=None):
    """Broadcast a prefix tree of axes to one axis per leaf of ``treedef`` (``shown``: the
    user's spelling of ``axes`` for the error message)."""
    axes_def = tree.tree_structure(axes, is_leaf=lambda x: x is None)
    try:
        subtrees = axes_def.flatten_up_to(tree.tree_unflatten(treedef, [0] * treedef.num_leaves))
    except ValueError:
        raise errors.ZeraxValueError(
            f"vmap {what} specification {axes if shown is None else shown!r} must be a "
            "tree prefix of the "
            f"corresponding value structure {treedef}") from None
    leaves_axes = tree.tree_leaves(axes, is_leaf=lambda x: x is None)
    out = []
    for ax, sub in zip(leaves_axes, subtrees):
        if ax is not None and (not isinstance(ax, (int, np.integer)) or isinstance(ax, bool)):
            raise errors.ZeraxTypeError(
                f"vmap {what} must be integers or None, got {ax!r}")
        out.extend([ax] * len(tree.tree_leaves(sub)))
    return out


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorise ``fun`` over a leading (or chosen) axis of its arguments.

    ``in_axes`` applies to the positional arguments; every array leaf of the arguments
    passed by keyword is mapped over its leading axis, as in JAX (bind an unmapped value
    with ``functools.partial`` or give it positionally with axis ``None``).
    ``spmd_axis_name`` (a sharding hint) is accepted and ignored: there is one device.

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.vmap(lambda x, y: x * y, in_axes=(0, None))(znp.arange(3.0), 2.0)
    Array([0., 2., 4.], dtype=float64)
    """
    del spmd_axis_name
    name = fun_name(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        # Keyword arguments ride along as the second half of the flattened inputs, each
        # leaf on axis 0 (JAX's rule: in_axes cannot name them).
        leaves, args_tree = tree.tree_flatten((args, kwargs))
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise errors.ZeraxValueError(
                f"vmap in_axes has {len(in_axes)} entries but {name} was called with "
                f"{len(args)} positional arguments")
        axes = _flatten_axes("in_axes", args_tree, (in_axes, 0), shown=in_axes)
        n_pos = len(tree.tree_leaves(args))

        def where(i):
            return (f"argument leaf {i}" if i < n_pos else
                    f"keyword-argument leaf {i - n_pos} (keyword arguments map over axis 0)")
        leaves = [as_input(x, f"{where(i)} of {name}") if ax is not None else x
                  for i, (x, ax) in enumerate(zip(leaves, axes))]
        sizes = {}
        norm_axes = []
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                norm_axes.append(None)
                continue
            nd = len(x.shape)
            if not -nd <= ax < nd:
                raise errors.ZeraxValueError(
                    f"vmap in_axes={ax} is out of range for {where(i)} of {name}, "
                    f"which has rank {nd} (shape {tuple(x.shape)})")
            ax = ax % nd
            norm_axes.append(ax)
            sizes.setdefault(x.shape[ax], []).append(i)
        if axis_size is not None:
            sizes.setdefault(axis_size, [])
        if len(sizes) > 1:
            detail = "; ".join(f"size {s} for argument leaves {idx}" for s, idx in sizes.items())
            raise errors.ZeraxValueError(
                f"vmap got inconsistent sizes for the mapped axes of {name}: {detail}. All "
                "mapped axes must have the same size.")
        if not sizes:
            raise errors.ZeraxValueError(
                f"vmap of {name} needs at least one mapped argument (in_axes not None) "
                "or axis_size")
        size = next(iter(sizes))
        name_of_axis, outer = axis_name, _rule_axis_name[0]
        if name_of_axis is None:
            name_of_axis = outer
        _rule_axis_name[0] = None  # the user's code inside does not inherit it
        try:
            return _run_batched(fun, args_tree, leaves, norm_axes, size, name_of_axis,
                                out_axes, name)
        finally:
            _rule_axis_name[0] = outer

    return vmapped


def _run_batched(fun, args_tree, leaves, norm_axes, size, axis_name, out_axes, name):
    """``fun`` under a new batch trace of ``size`` members; outputs moved to ``out_axes``."""
    with new_trace(BatchTrace, size, axis_name) as trace:
        ins = [x if ax is None else BatchTracer(trace, x, ax)
               for x, ax in zip(leaves, norm_axes)]
        args, kwargs = tree.tree_unflatten(args_tree, ins)
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree.tree_flatten(out)
        o_axes = _flatten_axes("out_axes", out_tree, out_axes)
        results = [_finish_output(trace, o, ax, size, name, i)
                   for i, (o, ax) in enumerate(zip(out_leaves, o_axes))]
    return tree.tree_unflatten(out_tree, [as_output(r) for r in results])


def _finish_output(trace, o, ax, size, name, i):
    if type(o) is BatchTracer and o._trace is trace:
        if ax is None:
            raise errors.ZeraxValueError(
                f"vmap out_axes=None for output leaf {i} of {name}, but that output varies "
                "over the batch; use an integer out_axes for it.")
        nd = len(o.val.shape)
        if not -nd <= ax < nd:
            raise errors.ZeraxValueError(
                f"vmap out_axes={ax} is out of range for output leaf {i} of rank {nd - 1}")
        return moveaxis(o.val, o.bdim, ax % nd)
    if ax is None:   # an unbatched output with out_axes=None is returned as it is (JAX)
        as_input(o, f"output leaf {i} of {name}")
        return o
    o = as_input(o, f"output leaf {i} of {name}")
    shape = list(o.shape)
    nd = len(shape) + 1
    if not -nd <= ax < nd:
        raise errors.ZeraxValueError(
            f"vmap out_axes={ax} is out of range for output leaf {i} of rank {nd - 1}")
    ax = ax % nd
    shape.insert(ax, size)
    return _shape.broadcast_in_dim(o, tuple(shape), tuple(d for d in range(nd) if d != ax))


def batch_by_loop(prim, args, dims, params):
    """The fallback for a rare batched case: apply ``prim`` example by example and stack
    the results along a new leading axis (correct, but one call per batch member)."""
    size = batch_size_of(args, dims)
    outs = []
    for i in range(size):
        ex_args = []
        for a, d in zip(args, dims):
            if d is None:
                ex_args.append(a)
                continue
            starts = [0] * len(a.shape)
            limits = list(a.shape)
            starts[d], limits[d] = i, i + 1
            ex_args.append(_shape.squeeze(_shape.slice_p_bind(a, starts, limits), (d,)))
        out = prim.bind(*ex_args, **params)
        outs.append(out if prim.multiple_results else [out])
    stacked = []
    for k in range(len(outs[0])):
        parts = [_shape.reshape(o[k], (1,) + tuple(o[k].shape)) for o in outs]
        stacked.append(_shape.concatenate(parts, 0))
    if prim.multiple_results:
        return stacked, [0] * len(stacked)
    return stacked[0], 0


def example_aval(x, dim):
    """The abstract value of one batch member of ``x`` (batch dimension ``dim``)."""
    a = get_aval(x)
    if dim is None:
        return a
    shape = list(a.shape)
    del shape[dim]
    return ShapedArray(shape, a.dtype)


def batched_outputs(fn_jaxpr, example_avals, batched, size):
    """Which outputs of ``fn_jaxpr`` vary over the batch when the inputs flagged in
    ``batched`` do (traced abstractly: nothing is computed)."""
    flags = []

    def probe(*a):
        outs = eval_jaxpr(fn_jaxpr, [], *a)
        flags.extend(isinstance(o, BatchTracer) for o in outs)
        return 0.0

    avals = [ShapedArray(((size,) if b else ()) + tuple(a.shape), a.dtype)
             for a, b in zip(example_avals, batched)]
    axes = tuple(0 if b else None for b in batched)
    trace_to_jaxpr(lambda *x: [vmap(probe, in_axes=axes, axis_size=size)(*x)], avals, "probe")
    return flags


def batched_carries(jaxpr, example_avals, batched, carry_at, num_carry, size):
    """The fixpoint of a loop body under vmap: which carries vary over the batch.

    ``jaxpr`` is a loop body whose inputs ``carry_at:carry_at + num_carry`` are the carry
    and whose first ``num_carry`` outputs are the new carry; ``batched`` flags its
    batched inputs (``example_avals``: one batch member's).  A carry becomes batched when
    the body makes it depend on batched values, which can make others batched in turn.
    Returns the carries' flags and the body's output flags for them."""
    batched = list(batched)
    while True:
        outs = batched_outputs(jaxpr, example_avals, batched, size)
        carry = batched[carry_at:carry_at + num_carry]
        new = [a or b for a, b in zip(carry, outs[:num_carry])]
        if new == carry:
            return carry, outs
        batched[carry_at:carry_at + num_carry] = new


def batch_jaxpr(jaxpr, dims, size, out_axes=None):
    """The program of ``jaxpr`` vmapped over ``size`` members, its inputs' batch
    dimensions ``dims`` (None: unmapped), its outputs batched along ``out_axes`` (one
    axis or None per output, as vmap's; default: every output along axis 0):
    ``(jaxpr, consts)``, traced once per program, dims, size and out_axes."""
    out_axes = None if out_axes is None else tuple(out_axes)
    # a batched program resolves the collectives of the named axis being batched
    key = ("vmap", tuple(dims), size, out_axes, _rule_axis_name[0])

    def make():
        avals = []
        for a, d in zip(jaxpr.in_avals, dims):
            shape = list(a.shape)
            if d is not None:
                shape.insert(d, size)
            avals.append(ShapedArray(shape, a.dtype))
        f = vmap(lambda *a: tuple(eval_jaxpr(jaxpr, [], *a)), in_axes=tuple(dims),
                 out_axes=0 if out_axes is None else out_axes, axis_size=size)
        return trace_closed(lambda *a: list(f(*a)), avals, "vmap")
    return derived_program(jaxpr, key, make)


# --------------------------------------------------------------------------- custom rules
# Custom rules see whole batches: every operand's batch dimension moves to the front
# (unmapped operands are broadcast), and the function and its rules are vmapped.


def batched_custom_call(prim, fun, rules, vals, dims, size):
    """Apply a custom_jvp call (``rules == (jvp,)``) or custom_vjp call (``rules ==
    (fwd, bwd, fwd_jvp)``, the forward rule or None) of primitive ``prim`` to batched
    operands; outputs are batched along axis 0.  The call continues to the next trace
    down with vmapped rules."""
    args0 = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]

    def bfun(*xs):
        return list(vmap(lambda *a: list(fun(*a)))(*xs))

    top = find_top_trace(args0)
    if len(rules) == 1:
        (jvp_rule,) = rules

        def bjvp(primals, tangents):
            outs, t_outs = vmap(lambda p, t: tuple(map(list, jvp_rule(list(p), list(t)))))(
                tuple(primals), tuple(tangents))
            return list(outs), list(t_outs)

        if top is None:
            return bfun(*args0)
        return top.process_custom_jvp(prim, bfun, bjvp, args0, {})
    fwd, bwd, fwd_jvp = rules

    def bfwd(*xs):
        outs, res = vmap(lambda *a: tuple(map(list, fwd(*a))))(*xs)
        return list(outs), list(res)

    def bbwd(res, cts):
        return list(vmap(lambda r, c: list(bwd(list(r), list(c))))(tuple(res), tuple(cts)))

    if top is None:
        return bfun(*args0)
    params = {} if fwd_jvp is None else {"fwd_jvp": _batched_fwd_jvp(fwd_jvp)}
    return top.process_custom_vjp(prim, bfun, bfwd, bbwd, args0, params)


def _batched_fwd_jvp(fwd_jvp):
    def bjvp(primals, tangents):
        return list(vmap(lambda p, t: list(fwd_jvp(list(p), list(t))))(tuple(primals),
                                                                        tuple(tangents)))
    return bjvp


def _custom_lin_batch(args, dims, *, num_res, bwd, out_avals, num_primals=0, fwd_jvp=None):
    size = batch_size_of(args, dims)
    args0 = [bdim_at_front(a, d, size) for a, d in zip(args, dims)]

    def bbwd(res, cts):
        return list(vmap(lambda r, c: list(bwd(list(r), list(c))))(tuple(res), tuple(cts)))

    b_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype) for a in out_avals)
    extra = {} if fwd_jvp is None else {"num_primals": num_primals,
                                        "fwd_jvp": _batched_fwd_jvp(fwd_jvp)}
    outs = custom_lin_p.bind(*args0, num_res=num_res, bwd=bbwd, out_avals=b_avals, **extra)
    return outs, [0] * len(outs)


batch_rules[custom_lin_p] = _custom_lin_batch
