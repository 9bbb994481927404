"""Code generation: one Python function of loops per program, for ``numba.njit``.

Elementwise equations whose outputs share one shape are *fused*: they become a single
loop nest computing scalars, and only the values used outside the group are stored.
Every other equation is lowered by its primitive's ``lower_numba(ctx, eqn)`` rule,
which emits lines that define the output variables.  Shapes are static, so loops are
written with literal bounds.

0-d values computed by fused elementwise code, loop carries and kernel inputs are held
as plain scalars (no allocation: a scalar loop compiles to a tight native loop); rules
see them through ``ctx.scalar(atom)`` (scalar text) or ``ctx.name(atom)`` (an array).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...ir import ir
from ...ir.ir import Literal, Var, convert_constvars
from ...ops.elementwise import add_p
from ...ops.linalg import dot_general_p
from ...ops.shape import concatenate_p
from .fusion import (  # noqa: F401  (dtype_name, literal_text, LoweringError: for the rules)
    _REDUCTIONS, LoweringError, _fusible, _group_shape, _is_broadcast, _operand_fits, dtype_name,
    IndexReads, concat_sources, index_reads, literal_text, plan_groups)
from .loops import (block_nest, drop_copy, independent_parts, inplace_plan, output_buffer,
                    owned_invars, parallel_blocks, scheduled)
from .rules import host_call_of, host_rule_of, lowering_of, scalar_rule_of
from . import vecmath
from .scalar_types import ExactTypes, cast_free

PARALLEL_THRESHOLD = 100_000  # elements: loops this large run with prange


class Lowering:
    """The context a lowering rule writes into."""

    def __init__(self, helpers):
        self.lines: list[str] = []
        self.level = 1
        self._names: dict = {}
        self._counter = 0
        self.helpers = helpers  # name -> object made available to the generated module
        self.uses_prange = False
        self.reserved: set[str] = set()  # the kernel's argument names: fresh() avoids them
        self.prelude: list[str] = []     # lines hoisted to the kernel's start (loops.py)
        self.hoisted: dict = {}          # what the prelude computes: key -> name
        self.body = None                 # the program lower_jaxpr_body is lowering
        # var -> array text its producer writes into instead of a new array (a loop's
        # carry buffer or a stacked output's row; see loops.output_buffer)
        self.dest: dict = {}
        self.dest_used: set = set()      # the vars whose producer took their dest
        self.accumulate = None           # (c, v): the product being lowered may compute
        self.accumulated = False         # v = c + product instead (see _accumulations)
        # key -> (checkpoint buffers, step count) of a while loop whose forward pass
        # recorded the carries for a reverse pass later in the program (while_loop.py)
        self.recorded: dict = {}
        # True while 0-d elementwise code is lowered (plain scalar statements, as in a
        # loop body with scalar carries); False in loops over array elements
        self.scalar_code = False
        self.inplace_updates = 0         # updates that write into their operand (loops.py)
        # [argument texts] while a block loop may use vecmath's branch-free sin/cos
        # (exact below vecmath.SIN_COS_RANGE; see lower_fused), else None
        self.throughput_trig = None
        self.exact = ExactTypes()        # scalar names of a known Numba type (scalar_types.py)
        self.index_reads = IndexReads()  # the body's concatenations read in place (fusion.py)
        self.update_roots: dict = {}     # the body's values held in updatable buffers

    # -- names
    def fresh(self, prefix="t") -> str:
        self._counter += 1
        while f"{prefix}{self._counter}" in self.reserved:   # never shadow an input
            self._counter += 1
        return f"{prefix}{self._counter}"

    def bind_name(self, var, name):
        """Bind ``var`` to an array name, or to a reference from `ref` (either kind)."""
        self._names[var] = name if isinstance(name, tuple) else ("array", name)

    def bind_scalar(self, var, name):
        self._names[var] = ("scalar", name)

    def ref(self, atom):
        """How ``atom`` is held: ("array", name), ("scalar", name) or ("literal", text)."""
        if type(atom) is Literal:
            return ("literal", literal_text(atom.val))
        return self._names[atom]

    def name(self, atom) -> str:
        """Source text of ``atom`` as an array (0-d scalars are wrapped)."""
        kind, text = self.ref(atom)
        if kind == "array":
            return text
        return f"np.full((), {text}, {dtype_name(atom.aval.dtype)})"

    def scalar(self, atom) -> str:
        """Source text of a 0-d operand's value."""
        kind, text = self.ref(atom)
        return text if kind != "array" else f"{text}[()]"

    def is_scalar(self, atom) -> bool:
        return self.ref(atom)[0] != "array"

    def out(self, var, prefix="v") -> str:
        """Name an output variable (the rule must assign it an array)."""
        name = self.fresh(prefix)
        self._names[var] = ("array", name)
        return name

    # -- emission
    def emit(self, line: str):
        self.lines.append("    " * self.level + line)

    def loop(self, index: str, n) -> "_Indent":
        """``for index in range(n):`` (prange for large outer loops) and indent."""
        rng = "range"
        if isinstance(n, int) and n >= PARALLEL_THRESHOLD and self.level == 1:
            rng = "prange"
            self.uses_prange = True
        self.emit(f"for {index} in {rng}({n}):")
        return _Indent(self)

    def nest(self, shape, prefix=None, parallel=True):
        return _Nest(self, tuple(shape), prefix or self.fresh("i") + "_", parallel)

    def helper(self, name: str, obj) -> str:
        self.helpers[name] = obj
        return name

    def const_ref(self, value):
        """A reference to a concrete constant (an array global of the module)."""
        v = np.ascontiguousarray(np.asarray(value))
        if v.ndim == 0:
            return ("literal", literal_text(v))
        # Named by content: kernels are cached by their source text, so two programs
        # that differ only in a constant's values must differ in the text.
        digest = hashlib.sha1(v.tobytes() + str((v.shape, v.dtype.str)).encode()).hexdigest()
        return ("array", self.helper(f"K_{digest[:16]}", v))

    def text(self, ref, scalar: bool) -> str:
        """Source text of a reference, as a scalar (0-d) or as an array."""
        kind, text = ref
        if scalar:
            return text if kind != "array" else f"{text}[()]"
        return text

    def serial_loop(self, index: str, n: str) -> "_Indent":
        """A sequential ``for`` loop (loop-carried dependences: never prange)."""
        self.emit(f"for {index} in range({n}):")
        return _Indent(self)

    def block(self) -> "_Indent":
        return _Indent(self)


class _Indent:
    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        self.ctx.level += 1
        return self

    def __exit__(self, *exc):
        self.ctx.level -= 1


class _Nest:
    """A loop nest over a static shape; yields the index tuple as source text.  An axis
    of size 1 gets no loop (its index is ``0``): less for Numba and LLVM to compile (a
    vmapped convolution's arrays have several such axes).  Only the outermost axis may
    become ``prange``, so one of size 1 leaves the nest serial, as its loop would."""

    def __init__(self, ctx, shape, prefix, parallel=True):
        self.ctx, self.shape, self.prefix = ctx, shape, prefix
        self.parallel = parallel
        self.opened = 0

    def __enter__(self):
        ctx = self.ctx
        names = [f"{self.prefix}{k}" if n != 1 else "0" for k, n in enumerate(self.shape)]
        total = int(np.prod(self.shape, dtype=np.int64))
        for k, (nm, n) in enumerate(zip(names, self.shape)):
            if n == 1:
                continue
            rng = "range"
            if k == 0 and self.parallel and total >= PARALLEL_THRESHOLD and ctx.level == 1:
                rng, ctx.uses_prange = "prange", True
            ctx.emit(f"for {nm} in {rng}({n}):")
            ctx.level += 1
            self.opened += 1
        return names

    def __exit__(self, *exc):
        self.ctx.level -= self.opened


def inline_closed(ctx, closed, in_refs):
    """Inline a closed program (its constants become module globals)."""
    consts = [ctx.const_ref(c) for c in closed.consts]
    jaxpr = closed.jaxpr
    return lower_jaxpr_body(ctx, convert_constvars(jaxpr), consts + list(in_refs))


def index_text(names) -> str:
    return ", ".join(names) if names else "()"


def _uses(jaxpr):
    """var -> number of equations (and outputs) that read it."""
    count: dict = {}
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                count[a] = count.get(a, 0) + 1
    for a in jaxpr.outvars:
        if type(a) is Var:
            count[a] = count.get(a, 0) + 1
    return count


def lower_fused(ctx: Lowering, eqns, total_uses):
    """One loop nest computing a group (see `plan_groups`)."""
    shape = _group_shape(eqns[0])
    reduction = eqns[-1] if eqns[-1].primitive in _REDUCTIONS else None
    body = eqns[:-1] if reduction is not None else eqns
    produced = {v for e in body for v in e.outvars}
    inner_uses: dict = {}
    for e in eqns:
        for a in e.invars:
            if type(a) is Var and a in produced:
                inner_uses[a] = inner_uses.get(a, 0) + 1
    stored = [v for e in body for v in e.outvars if total_uses.get(v, 0) > inner_uses.get(v, 0)]
    prims = ", ".join(dict.fromkeys(e.primitive.name for e in eqns))
    ctx.emit(f"# fused: {prims}")
    if shape == ():
        _lower_scalar_group(ctx, eqns)
        return
    for v in stored:   # (inside loop bodies: buffers reused from one iteration to the next)
        ctx.bind_name(v, output_buffer(ctx, v, "v"))
    # 0-d operands from outside are read once, before the loop.
    pre: dict = {}
    for e in body:
        for a in e.invars:
            if type(a) is Var and a not in produced and a.aval.shape == () and a not in pre:
                if ctx.is_scalar(a):
                    pre[a] = ctx.scalar(a)
                else:
                    pre[a] = ctx.fresh("s")
                    ctx.emit(f"{pre[a]} = {ctx.scalar(a)}")
                    ctx.exact.add(pre[a], a.aval.dtype)
    if reduction is None and ctx.level == 1 and \
            int(np.prod(shape, dtype=np.int64)) >= PARALLEL_THRESHOLD:
        # parallel: blocks claimed by the threads as they go, one loop per independent
        # part of the group in each block (loops.parallel_blocks)
        def reads(e):
            return concat_sources(e, ctx.index_reads) if e.primitive is concatenate_p \
                else e.invars
        with parallel_blocks(ctx, shape) as (lo, hi):
            for part in independent_parts(body, reads):
                outs = {v for e in part for v in e.outvars}
                _block_part(ctx, shape, lo, hi, part, pre, [v for v in stored if v in outs])
        return
    acc = _start_reduction(ctx, reduction, shape) if reduction is not None else None
    with ctx.nest(shape, parallel=_parallel_ok(reduction)) as idx:
        local = _fused_elements(ctx, body, idx, pre, stored)
        if reduction is not None:
            _accumulate(ctx, reduction, acc, idx, local)
    if reduction is not None:
        _finish_reduction(ctx, reduction, acc)


def _block_part(ctx, shape, lo, hi, part, pre, stored):
    """One part of a fused group over the rows lo:hi of a parallel block.  sin and cos
    use vecmath's branch-free code, which vectorises (the quadrant branches of the exact
    code are mispredicted on random arguments: 2x10^6 random cos took 34 ms, sorted
    13 ms); a block holding an argument beyond its range (|x| >= 7, inf, nan) is then
    computed again with the exact code."""
    start = len(ctx.lines)
    ctx.throughput_trig = []
    try:
        with block_nest(ctx, shape, lo, hi) as idx:
            _fused_elements(ctx, part, idx, pre, stored)
            args = ctx.throughput_trig
            if args:
                ok = ctx.fresh("ok")
                ctx.emit(f"{ok} = {ok} & " + " & ".join(
                    f"(abs({a}) < {vecmath.SIN_COS_RANGE!r})" for a in args))
    finally:
        ctx.throughput_trig = None
    if not args:
        return
    ctx.lines.insert(start, "    " * ctx.level + f"{ok} = True")
    ctx.emit(f"if not {ok}:")
    with ctx.block(), block_nest(ctx, shape, lo, hi) as idx:
        _fused_elements(ctx, part, idx, pre, stored)


def _fused_elements(ctx, body, idx, pre, stored):
    """One element of a fused group's equations ``body`` at index ``idx``, storing the
    values ``stored``; returns the scalar names of the values computed."""
    ix = index_text(idx)
    local: dict = {}
    for e in body:
        if _is_broadcast(e):
            local[e.outvars[0]] = _broadcast_read(ctx, e, idx, pre, local)
            continue
        if e.primitive is concatenate_p:
            local[e.outvars[0]] = _concat_read(ctx, e, idx)
            continue
        args = []
        for a in e.invars:
            if type(a) is Literal:
                args.append(literal_text(a.val))
            elif a in local:
                args.append(local[a])
            elif a in pre:
                args.append(pre[a])
            else:
                nm = ctx.fresh("x")
                ctx.emit(f"{nm} = {ctx.name(a)}[{ix}]")
                ctx.exact.add(nm, a.aval.dtype)
                local[a] = nm
                args.append(nm)
        local[e.outvars[0]] = _emit_scalar(ctx, e, args)
    for v in stored:
        ctx.emit(f"{ctx.name(v)}[{ix}] = {local[v]}")
    return local


def _emit_scalar(ctx, eqn, args) -> str:
    """``y = <one element of eqn>`` from its operands' texts; the name of ``y``.  Casts
    Numba does not need are left out (they cost type-inference time, scalar_types.py)."""
    out = eqn.outvars[0]
    expr = scalar_rule_of(eqn.primitive)(args, [a.aval.dtype for a in eqn.invars],
                                         out.aval.dtype, ctx, **eqn.params)
    expr, exact = cast_free(expr, out.aval.dtype, ctx.exact)
    nm = ctx.fresh("y")
    ctx.emit(f"{nm} = {expr}")
    if exact:
        ctx.exact.add(nm, out.aval.dtype)
    return nm


def _affine_text(index: str, base: int, step: int) -> str:
    term = index if step == 1 else f"{index} * {step}"
    return term if base == 0 else f"{term} + {base}" if base > 0 else f"{term} - {-base}"


def _concat_read(ctx, eqn, idx):
    """Read a concatenation in place: the element of the piece the index falls in (a
    deferred slice read at its shifted index in its operand); see fusion.index_reads."""
    axis = eqn.params["dimension"]
    nm = ctx.fresh("x")
    pieces, offset = [], 0
    for a, src in zip(eqn.invars, concat_sources(eqn, ctx.index_reads)):
        n = a.aval.shape[axis]
        if n:
            sl = ctx.index_reads.slices.get(a)
            starts = sl.params["start_indices"] if sl is not None else (0,) * len(idx)
            strides = (sl.params["strides"] if sl is not None else None) or (1,) * len(idx)
            at = [_affine_text(f"({i} - {offset})" if d == axis and offset else i, s0, st)
                  for d, (i, s0, st) in enumerate(zip(idx, starts, strides))]
            # a one-element value may be held as a plain scalar (loops.one_element_values)
            pieces.append((offset + n, ctx.scalar(src) if ctx.is_scalar(src)
                           else f"{ctx.name(src)}[{', '.join(at)}]"))
        offset += n
    for k, (end, read) in enumerate(pieces):
        if len(pieces) == 1:
            ctx.emit(f"{nm} = {read}")
            break
        ctx.emit("else:" if k == len(pieces) - 1 else
                 f"{'if' if k == 0 else 'elif'} {idx[axis]} < {end}:")
        with ctx.block():
            ctx.emit(f"{nm} = {read}")
    ctx.exact.add(nm, eqn.outvars[0].aval.dtype)
    return nm


def _broadcast_read(ctx, eqn, idx, pre, local):
    """Read a broadcast operand in place: the loop index mapped to the operand's."""
    (x,) = eqn.invars
    if type(x) is Literal:
        return literal_text(x.val)
    if x.aval.shape == ():
        if x not in pre:
            pre[x] = ctx.scalar(x) if ctx.is_scalar(x) else f"{ctx.name(x)}[()]"
        return pre[x]
    out_shape = eqn.params["shape"]
    dims = eqn.params["broadcast_dimensions"]
    src = [("0" if x.aval.shape[j] == 1 and out_shape[d] != 1 else idx[d])
           for j, d in enumerate(dims)]
    nm = ctx.fresh("x")
    ctx.emit(f"{nm} = {ctx.name(x)}[{', '.join(src)}]")
    ctx.exact.add(nm, x.aval.dtype)
    return nm


_INIT = {"sum": "0", "prod": "1", "max": "-np.inf", "min": "np.inf"}


def _scalar_accumulator(eqn) -> bool:
    """A full sum or product accumulates into a scalar (a prange reduction)."""
    return eqn.outvars[0].aval.shape == () and _REDUCTIONS[eqn.primitive] in ("sum", "prod")


def _parallel_ok(reduction) -> bool:
    """prange is safe when no two outer iterations write the same accumulator slot."""
    if reduction is None or _scalar_accumulator(reduction):
        return True
    axes = reduction.params["axes"]
    return 0 not in axes


def _start_reduction(ctx, eqn, shape):
    kind = _REDUCTIONS[eqn.primitive]
    out = eqn.outvars[0]
    dt = dtype_name(out.aval.dtype)
    init = _INIT[kind]
    if kind in ("max", "min") and np.dtype(out.aval.dtype).kind in "iu":
        info = np.iinfo(out.aval.dtype)
        init = str(info.min if kind == "max" else info.max)
    elif kind in ("max", "min") and np.dtype(out.aval.dtype) == np.bool_:
        init = "False" if kind == "max" else "True"
    name = ctx.fresh("acc")
    if _scalar_accumulator(eqn):
        ctx.emit(f"{name} = {dt}({init})")
    else:
        ctx.emit(f"{name} = np.full({tuple(out.aval.shape)!r}, {init}, {dt})")
    return name


def _accumulate(ctx, eqn, acc, idx, local):
    kind = _REDUCTIONS[eqn.primitive]
    axes = eqn.params["axes"]
    keep = [i for k, i in enumerate(idx) if k not in axes]
    slot = acc if _scalar_accumulator(eqn) else f"{acc}[{index_text(keep)}]"
    v = local[eqn.invars[0]]
    if kind == "sum":
        ctx.emit(f"{slot} += {v}")
    elif kind == "prod":
        ctx.emit(f"{slot} *= {v}")
    elif kind == "max":  # NaN propagates, as in np.max
        ctx.emit(f"if {v} > {slot} or {v} != {v}:")
        with ctx.block():
            ctx.emit(f"{slot} = {v}")
    else:
        ctx.emit(f"if {v} < {slot} or {v} != {v}:")
        with ctx.block():
            ctx.emit(f"{slot} = {v}")


def _finish_reduction(ctx, eqn, acc):
    out = eqn.outvars[0]
    if _scalar_accumulator(eqn):
        ctx.bind_scalar(out, acc)
    elif out.aval.shape == ():
        ctx.bind_scalar(out, f"{acc}[()]")
    else:
        ctx.bind_name(out, acc)


def _lower_scalar_group(ctx, eqns):
    """0-d elementwise code: plain scalar statements, no arrays at all."""
    ctx.scalar_code = True
    try:
        for e in eqns:
            ctx.bind_scalar(e.outvars[0], _emit_scalar(ctx, e, [ctx.scalar(a) for a in e.invars]))
    finally:
        ctx.scalar_code = False


def _accumulations(jaxpr, groups, total_uses):
    """Products whose only use is ``v = c + product`` in a later fused group, with ``c``
    an array of the same shape and dtype defined before the product: id(dot eqn) ->
    (c, add eqn).  Their lowering may compute ``v`` directly, starting each sum from
    ``c`` (``ctx.accumulate``; it sets ``ctx.accumulated`` when it does), so a gradient
    accumulated over a loop (``dW = dW + h.T @ dz``) is one pass, not a product and an
    addition.  (The sum is then c + t1 + t2 + ... in that order, not c + (t1 + ...).)"""
    folds: dict = {}
    defined = {v for v in jaxpr.invars}
    defined.update(getattr(jaxpr, "constvars", ()))
    pending: dict = {}   # product out var -> (dot eqn, vars defined before it)
    for kind, eqns in groups:
        if kind == "fused" and pending:
            red = eqns[-1].invars[0] if eqns[-1].primitive in _REDUCTIONS else None
            for e in eqns:
                if e.primitive is not add_p or e.outvars[0] is red:
                    continue
                for p, c in ((e.invars[1], e.invars[0]), (e.invars[0], e.invars[1])):
                    if type(p) is not Var or p not in pending or type(c) is not Var:
                        continue
                    dot, before = pending.pop(p)
                    out = e.outvars[0]
                    if c in before and c.aval.shape == p.aval.shape == out.aval.shape \
                            and c.aval.dtype == p.aval.dtype == out.aval.dtype:
                        folds[id(dot)] = (c, e)
                    break
        if kind == "single" and eqns[0].primitive is dot_general_p:
            p = eqns[0].outvars[0]
            if p.aval.shape != () and total_uses.get(p, 0) == 1:
                pending[p] = (eqns[0], frozenset(defined))
        for e in eqns:
            defined.update(e.outvars)
    return folds


def lower_jaxpr_body(ctx: Lowering, jaxpr, in_names):
    """Lower ``jaxpr``'s equations with its inputs bound to ``in_names``; returns the
    source names of its outputs (used for the top level and for inlined sub-programs)."""
    for v, nm in zip(jaxpr.invars, in_names):
        ctx.bind_name(v, nm)  # an array name, or a reference tuple
    owned = owned_invars(ctx, jaxpr, in_names)
    jaxpr = scheduled(jaxpr)   # reads of an updated buffer first (loops.schedule_reads)
    outer, ctx.body = ctx.body, jaxpr
    inplace, roots = inplace_plan(jaxpr, owned)
    outer_roots, ctx.update_roots = ctx.update_roots, roots
    written = set(inplace.values())   # buffers an update overwrites in this body
    outer_reads = ctx.index_reads
    ctx.index_reads = index_reads(jaxpr, lambda v: roots.get(v, v) not in written)
    total_uses = _uses(jaxpr)
    groups = plan_groups(jaxpr, ctx.index_reads)
    folds = _accumulations(jaxpr, groups, total_uses)
    dropped = set()   # ids of the additions their product computed
    for kind, eqns in groups:
        if kind == "fused":
            eqns = [e for e in eqns if id(e) not in dropped]
            if eqns:
                lower_fused(ctx, eqns, total_uses)
            continue
        (eqn,) = eqns
        fold = folds.get(id(eqn))
        if fold is not None:
            c, add = fold
            ctx.accumulate, ctx.accumulated = (c, add.outvars[0]), False
            try:
                lowering_of(eqn.primitive)(ctx, eqn)
            finally:
                ctx.accumulate = None
            if ctx.accumulated:
                dropped.add(id(add))
            continue
        rule = lowering_of(eqn.primitive)
        if rule is None:
            if _fusible(eqn):
                lower_fused(ctx, [eqn], total_uses)
                continue
            raise LoweringError(eqn.primitive,
                                f"primitive '{eqn.primitive.name}' cannot be compiled: " +
                                eqn.primitive.unsupported.get(
                                    "lower_numba", "it has no Numba lowering"),
                                eqn.source)
        lines, start = ctx.lines, len(ctx.lines)
        rule(ctx, eqn)
        if id(eqn) in inplace:   # the operand's buffer is free: no copy of it
            drop_copy(ctx, eqn, lines, start)
    ctx.body = outer
    ctx.index_reads = outer_reads
    ctx.update_roots = outer_roots
    return [ctx.ref(a) for a in jaxpr.outvars]


def _out_text(ref, var):
    kind, text = ref
    if kind == "array":
        return text
    return f"np.full((), {text}, {dtype_name(var.aval.dtype)})"


def _kernel_source(jaxpr, fn_name):
    """One njit-able function for a program whose equations are all lowered here."""
    helpers: dict = {}
    ctx = Lowering(helpers)
    args = [f"a{k}" for k in range(len(jaxpr.invars))]
    ctx.reserved.update(args)
    refs = []
    for v, a in zip(jaxpr.invars, args):
        if v.aval.shape == ():
            ctx.emit(f"{a} = {a}[()]")  # 0-d inputs are held as scalars
            refs.append(("scalar", a))
        else:
            refs.append(("array", a))
    outs = lower_jaxpr_body(ctx, jaxpr, refs)
    texts = [_out_text(r, v) for r, v in zip(outs, jaxpr.outvars)]
    body = ctx.prelude + ctx.lines or ["    pass"]
    header = f"def {fn_name}({', '.join(args)}):"
    ret = f"    return ({', '.join(texts)}{',' if len(texts) == 1 else ''})"
    return "\n".join([header, *body, ret]) + "\n", helpers, ctx.uses_prange


def _runs_in_python(eqn) -> bool:
    """Whether a top-level equation is a call from Python between the kernels: its
    primitive's ``on_host(eqn)`` says so (a large product calls BLAS, a decomposition
    LAPACK through its NumPy implementation).  Others are compiled into the kernels."""
    rule = host_rule_of(eqn.primitive)
    return rule is not None and rule(eqn)


def _param_text(value) -> str:
    """A static parameter as source text that evaluates back to it."""
    if isinstance(value, np.dtype):
        return f"np.dtype({value.name!r})"
    if isinstance(value, tuple):
        return f"({''.join(_param_text(v) + ', ' for v in value)})"
    text = repr(value)
    if type(value) not in (bool, int, float, str, type(None)):
        raise LoweringError(None, f"parameter {text} cannot be written into a host call")
    return text


def _host_impl(prim, keys):
    """``prim.impl`` on the host: its operands (as NumPy arrays), then the values of its
    parameters ``keys``, all positional."""
    impl, nparams = prim.impl, len(keys)

    def call(*args):
        n = len(args) - nparams
        return impl(*[np.asarray(a) for a in args[:n]], **dict(zip(keys, args[n:])))
    return call


class Program:
    """Generated source: njit kernels, and (when a program is split around host calls)
    a plain Python function ``program`` that calls them in order."""

    def __init__(self, source, helpers, kernels, entry):
        self.source = source        # the whole module body
        self.helpers = helpers      # objects the module refers to by name
        self.kernels = kernels      # [(name, parallel)] functions to njit
        self.entry = entry          # the function to call


def _param_key(value):
    """A static parameter as a hashable value that tells apart what lowers differently
    (floats by their bits: 0.0 and -0.0); None for anything else (a sub-program)."""
    if type(value) in (bool, int, str, type(None)):
        return value
    if type(value) is float:
        return ("f", np.float64(value).tobytes())
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if type(value) is tuple:
        items = tuple(_param_key(v) for v in value)
        return None if any(i is None and v is not None for i, v in zip(items, value)) \
            else items
    return None


def _structure_key(sub: ir.Jaxpr):
    """What the code of a segment depends on: its equations' primitives, parameters,
    types and wiring, with variables numbered in order; None when a parameter has no
    simple key (a sub-program), and the segment is then lowered on its own."""
    number = {v: k for k, v in enumerate(sub.invars)}
    parts = [tuple(v.aval for v in sub.invars)]
    for e in sub.eqns:
        ins = []
        for a in e.invars:
            if type(a) is Literal:
                ins.append(a.key())
            else:
                ins.append(number[a])
        params = []
        for k in sorted(e.params):
            pk = _param_key(e.params[k])
            if pk is None and e.params[k] is not None:
                return None
            params.append((k, pk))
        for v in e.outvars:
            number[v] = len(number)
        parts.append((e.primitive, tuple(ins), tuple(v.aval for v in e.outvars),
                      tuple(params)))
    parts.append(tuple(number[v] if type(v) is Var else v.key() for v in sub.outvars))
    return tuple(parts)


def generate(jaxpr: ir.Jaxpr) -> Program:
    """The source of the program computing ``jaxpr``."""
    if not any(_runs_in_python(e) for e in jaxpr.eqns):
        src, helpers, par = _kernel_source(jaxpr, "kernel")
        return Program(src, helpers, [("kernel", par)], "kernel")
    # Split into segments: runs of equations compiled by Numba, and host calls.
    segments, current = [], []
    for e in jaxpr.eqns:
        if _runs_in_python(e):
            if current:
                segments.append(("numba", current))
                current = []
            segments.append(("host", [e]))
        else:
            current.append(e)
    if current:
        segments.append(("numba", current))
    later_uses = []  # for each segment: vars used by later segments or as outputs
    used_after = {v for v in jaxpr.outvars if type(v) is Var}
    for kind, eqns in reversed(segments):
        later_uses.append(set(used_after))
        for e in eqns:
            used_after.update(a for a in e.invars if type(a) is Var)
    later_uses.reverse()
    names: dict = {v: f"a{k}" for k, v in enumerate(jaxpr.invars)}
    counter = [0]

    def pyname(v):
        if type(v) is Literal:
            return f"np.asarray({literal_text(v.val)})"
        if v not in names:
            counter[0] += 1
            names[v] = f"v{counter[0]}"
        return names[v]

    helpers, kernels, sources = {}, [], []
    lowered: dict = {}   # segment structure -> the name of its kernel
    lines = [f"def program({', '.join(names[v] for v in jaxpr.invars)}):"]
    for k, (kind, eqns) in enumerate(segments):
        if kind == "host":
            (e,) = eqns
            prim = e.primitive
            maker = host_call_of(prim)
            if maker is not None:   # its own function (a loop around a compiled body)
                fn, helpers_fn = maker(e)
                helpers[fn] = helpers_fn
                ins = ", ".join(pyname(a) for a in e.invars)
            else:
                keys = tuple(sorted(e.params))
                fn = f"_{prim.name}"
                helpers[fn] = _host_impl(prim, keys)
                ins = ", ".join([pyname(a) for a in e.invars] +
                                [_param_text(e.params[k]) for k in keys])
            outs = ", ".join(pyname(v) for v in e.outvars)
            lines.append(f"    # {prim.name} " +
                         " x ".join(a.aval.str_short() for a in e.invars) + " (host)")
            lines.append(f"    {outs}{',' if prim.multiple_results else ''} = "
                         f"{fn}({ins})")
            continue
        defined = {v for e in eqns for v in e.outvars}
        live_in = []
        for e in eqns:
            for a in e.invars:
                if type(a) is Var and a not in defined and a not in live_in:
                    live_in.append(a)
        live_out = [v for e in eqns for v in e.outvars if v in later_uses[k]]
        sub = ir.Jaxpr([], live_in, live_out, eqns)
        # A segment with the structure of an earlier one (the next layer of a network)
        # has its code: it is not lowered again.
        skey = _structure_key(sub)
        known = lowered.get(skey) if skey is not None else None
        if known is None:
            src, h, par = _kernel_source(sub, "kernel")
            # Named by content: segments that generate the same code (the layers of a
            # network, a layer's forward and backward) share one kernel, compiled once.
            name = f"kernel_{hashlib.sha1(src.encode()).hexdigest()[:12]}"
            if (name, par) not in kernels:
                helpers.update(h)
                kernels.append((name, par))
                sources.append(src.replace("def kernel(", f"def {name}(", 1))
            if skey is not None:
                lowered[skey] = name
        else:
            name = known
        outs = ", ".join(pyname(v) for v in live_out)
        call = f"{name}({', '.join(pyname(v) for v in live_in)})"
        lines.append(f"    {outs}{',' if len(live_out) == 1 else ''} = {call}" if live_out
                     else f"    {call}")
    rets = [pyname(v) for v in jaxpr.outvars]
    lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    source = "\n".join(sources) + "\n" + "\n".join(lines) + "\n"
    return Program(source, helpers, kernels, "program")
