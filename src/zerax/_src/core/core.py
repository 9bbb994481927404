"""The heart of zerax: primitives, `bind`, traces and tracers, abstract values.

A *primitive* is an operation zerax knows the rules of.  `bind(prim, *args, **params)`
applies it: with only concrete arguments it runs the primitive's NumPy implementation
at once (the eager path); otherwise the innermost live *trace* among the arguments'
tracers handles it (a JVP trace computes tangents, a recording trace writes an IR
equation, ...).  Traces are numbered by *level*: a trace started inside another has a
higher level, and `bind` always dispatches to the highest level present, lifting the
other arguments.  That ordering is what keeps nested transforms from confusing their
perturbations.
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from ... import errors
from ..base.dtypes import is_bfloat16
from .array import Array, ArrayMethods, device_buffers
from .avals import ShapedArray, short_dtype

def get_aval(x) -> ShapedArray:
    """The abstract value of a concrete value or a tracer."""
    if isinstance(x, Tracer):
        return x.aval
    v = getattr(x, "_value", None)
    if v is None:
        if isinstance(x, np.ndarray):
            return ShapedArray(x.shape, x.dtype)
        if isinstance(x, (bool, int, float, complex, np.generic)):
            return ShapedArray((), np.asarray(x).dtype)
        raise errors.ZeraxTypeError(
            f"{type(x).__name__!r} object is not a valid zerax array value: {x!r:.80}")
    return ShapedArray(v.shape, v.dtype)


# --------------------------------------------------------------------------- primitives

_registry: dict[str, "Primitive"] = {}


class Primitive:
    """One operation: its name, its NumPy implementation and its shape/dtype rule.

    Its other rules live in one table per transform or backend, keyed by the primitive
    object, each in the module that owns that transform (the primitive's module in
    ``ops/`` fills them in beside its semantics):

      interpreters/ad.py        jvp_rules, transpose_rules (for linear primitives)
      interpreters/batching.py  batch_rules
      interpreters/tape.py      vjp_rules (the eager tape's reverse rules)
      ir/tracing.py             simplify_rules (folding while recording)
      backends/<name>/          the backend's lowering tables

    ``rule_tables`` lists them by kind: a new transform or backend adds its own table
    with `rule_table` and edits nothing here.  A rule that is deliberately absent is
    listed in ``unsupported`` with a reason; using the primitive under that transform
    raises NotSupportedError with it.

      impl(*ndarrays, **params) -> ndarray       the reference semantics (NumPy)
      abstract_eval(*avals, **params) -> aval    the shape/dtype rule
    """

    __slots__ = ("name", "multiple_results", "impl", "abstract_eval", "elementwise",
                 "commutative", "named_axes", "unsupported")

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable | None = None
        self.abstract_eval: Callable | None = None
        self.elementwise = False  # set by ops._factory.elementwise
        self.commutative = False  # operands may be swapped (used by CSE)
        # a collective over named vmap axes (ops/collectives.py): the vmap naming its
        # ``axis_name`` takes part in choosing the trace, and its batching rule is told
        # that axis (``batch(vals, dims, frame=(name, size), **params)``)
        self.named_axes = False
        self.unsupported: dict[str, str] = {}
        _registry[name] = self

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def rule_missing(self, kind: str, rule: str) -> errors.NotSupportedError:
        """The error for using this primitive under ``kind`` (words for the user)
        without its ``rule`` (the attribute name, the key of ``unsupported``)."""
        reason = self.unsupported.get(rule, f"no {kind} rule is defined")
        return errors.NotSupportedError(
            f"primitive '{self.name}' cannot be used under {kind}: {reason} "
            f"(at {errors.user_frame()})")


def all_primitives() -> dict[str, Primitive]:
    return dict(_registry)


# kind -> (what the user was doing, [tables {primitive: rule}]); see Primitive.  A kind
# may have several tables (a backend's statement and elementwise lowerings): an entry
# in any of them is the primitive's rule of that kind.
rule_tables: dict[str, tuple[str, list[dict]]] = {}


def rule_table(kind: str, used_by: str) -> dict:
    """A new, registered table of rules of ``kind`` (the key of ``unsupported``), for
    the transform or backend ``used_by`` names (words for the user)."""
    table: dict = {}
    rule_tables.setdefault(kind, (used_by, []))[1].append(table)
    return table


# --------------------------------------------------------------------------- traces

class Trace:
    """A transform in progress.  Subclasses implement ``process_primitive``.
    ``records_program``: the trace writes a program (jit, a loop body, a branch), so an
    effect bound while it is the innermost such trace belongs to it (see `bind`)."""

    __slots__ = ("level", "alive", "name")
    records_program = False

    def __init__(self, level: int, name: str = ""):
        self.level = level
        self.alive = True
        self.name = name

    def process_primitive(self, prim, args, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def process_custom_jvp(self, prim, fun, jvp_rule, args, params):
        """A custom_jvp function: traces that do not differentiate just call it."""
        return fun(*args)

    def process_custom_vjp(self, prim, fun, fwd, bwd, args, params):
        return fun(*args)


_trace_stack: list[Trace] = []

# Primitives with an effect besides their outputs (a host callback): their modules add
# them here.  `bind` sends them to the innermost program being traced, and the IR keeps
# their equations (ir.py's DCE and ``has_effects``).
effectful_primitives: set = set()


class new_trace:
    """``with new_trace(Cls, ...) as trace``: start a trace one level above every live
    trace; end it on exit (a class, not a generator: it is on every transform's path)."""

    __slots__ = ("trace",)

    def __init__(self, cls, *args, **kw):
        self.trace = cls(len(_trace_stack), *args, **kw)

    def __enter__(self):
        _trace_stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc):
        _trace_stack.pop()
        self.trace.alive = False
        return False


def current_level() -> int:
    return len(_trace_stack)




class Tracer(ArrayMethods):
    """A value flowing through a transform: stands in for an array.

    ``_weak_type`` (class default None, from ArrayMethods), when set, is the Python
    scalar type (int, float, complex) the value promotes as, JAX's weak type: only the
    tracers of a jit trace carry one (a Python number passed to the jitted function,
    and operators applied to such values only; see lax_numpy/_util.weak_type_of)."""

    __slots__ = ("_trace",)
    # No __array_ufunc__, as JAX's arrays: NumPy's ufuncs convert a zerax value with
    # __array__ (np.sin(x) is a NumPy array), while the priority makes ndarray operators
    # defer to zerax's (ndarray + x is a zerax Array).
    __array_priority__ = 100

    @property
    def aval(self) -> ShapedArray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return shape[0]

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(
            f"a traced value {self.aval.str_short()} was converted to a NumPy array "
            f"at {errors.user_frame()}: NumPy functions cannot see inside a transform. "
            "Use zerax.numpy instead of numpy on traced values.")

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>({type(self._trace).__name__} level {self._trace.level})"

    __hash__ = None

    def to_concrete(self, what: str):
        """The concrete value behind this tracer, or a ConcretizationError."""
        raise concretization_error(self, what)


def concretization_error(tracer, what: str) -> errors.ConcretizationError:
    trace = tracer._trace
    fun = f" while tracing {trace.name!r}" if getattr(trace, "name", "") else ""
    return errors.ConcretizationError(
        f"{what} was called on a traced value {tracer.aval.str_short()}{fun}, at "
        f"{errors.user_frame()}. Its value is not known until the program runs. "
        "Use zerax.lax.cond / zerax.lax.while_loop or zerax.numpy.where instead of Python "
        "control flow on traced values, or mark the argument static "
        "(static_argnums / static_argnames).")


def _dead_tracer(tracer) -> errors.UnexpectedTracerError:
    return errors.UnexpectedTracerError(
        f"a tracer {tracer.aval.str_short()} from a transform that has already ended "
        f"({type(tracer._trace).__name__}) was used at {errors.user_frame()}. This happens "
        "when a traced value is stored outside the function being transformed (a global, "
        "a list, an attribute). Return values from the function instead.")


# --------------------------------------------------------------------------- bind

def bind(prim: Primitive, *args, **params):
    """Apply ``prim`` to ``args``: eagerly, or by the innermost trace among them."""
    top, level = None, -1
    for a in args:  # find_top_trace, inlined: bind is on every path
        if isinstance(a, Tracer):
            t = a._trace
            if not t.alive:
                raise _dead_tracer(a)
            if t.level > level:
                top, level = t, t.level
    if prim.named_axes:
        # the vmaps among the named axes take part (an axis recorded as a process axis,
        # ``groups`` entry >= 0, is no trace's: a program traced inside spmd runs anywhere)
        names = [n for n, g in zip(params["axis_name"], params["groups"]) if g < 0]
        for t in named_axis_frames(names):
            if t.level > level:   # (a ProcessAxis has level -1: never handles it)
                top, level = t, t.level
    if prim in effectful_primitives:
        # An effect belongs to the innermost program being traced when that program
        # is above its operands' traces (JAX binds every primitive at the innermost
        # trace): then it runs when and as often as that program runs, not now (a
        # callback on constants in a branch not taken, or under grad in a loop body) and
        # not in an outer program (a callback on a value a branch closes over).
        for t in reversed(_trace_stack):
            if t.records_program:
                if t.level > level:
                    top, level = t, t.level
                break
    if top is None:
        return eval_primitive(prim, args, params)
    return top.process_primitive(prim, args, params)


def named_axis_env() -> tuple:
    """The (name, size) of every live named vmap axis, outermost first."""
    return tuple((t.axis_name, t.axis_size) for t in _trace_stack
                 if getattr(t, "axis_name", None) is not None)


# --------------------------------------------------------------------------- process axes

class ProcessAxis:
    """A named axis whose members are processes (bound by `zerax.distributed.spmd` and
    `shard_map`): a collective over it is a call of its process group's transport.

    ``group`` is the id of that group in `process_groups` (one per axis of a process
    mesh); ``index`` is this process's position along the axis.  ``depth`` is the number
    of traces live when the axis was bound: a vmap started later is inside it, so a vmap
    naming the same axis shadows it.  ``level`` is -1: `bind` never hands a primitive to
    a process axis; a collective that reaches no trace runs its implementation, which
    asks the group."""

    __slots__ = ("axis_name", "axis_size", "index", "group", "depth")
    level = -1

    def __init__(self, axis_name, axis_size: int, index: int, group: int):
        self.axis_name, self.axis_size, self.index, self.group = (
            axis_name, int(axis_size), int(index), int(group))
        self.depth = 0

    def __repr__(self):
        return f"ProcessAxis({self.axis_name!r}, size={self.axis_size}, index={self.index})"


_process_axes: list[ProcessAxis] = []

# group id -> the process group of one axis of a process mesh: an object with ``size``,
# ``index`` (this process's position) and ``communicator(group_ids)`` (the transport
# over those axes together, in their order).  The MPI backend fills it
# (backends/mpi/); a group of size 1 needs no transport.
process_groups: dict[int, object] = {}


class bind_process_axes:
    """``with bind_process_axes([ProcessAxis(...), ...]):`` collectives inside name
    these axes (a class, as `new_trace`)."""

    __slots__ = ("frames",)

    def __init__(self, frames):
        self.frames = list(frames)

    def __enter__(self):
        for f in self.frames:
            f.depth = len(_trace_stack)
            _process_axes.append(f)
        return self.frames

    def __exit__(self, *exc):
        del _process_axes[len(_process_axes) - len(self.frames):]
        return False


def process_axis_env() -> tuple:
    """The (name, size, group) of every bound process axis, outermost first: what a
    program traced inside them depends on (jit's cache key)."""
    if not _process_axes:   # (every jitted call asks: the usual answer, without a generator)
        return ()
    return tuple((p.axis_name, p.axis_size, p.group) for p in _process_axes)


def named_axis_frames(names) -> list:
    """The innermost binding of each axis in ``names``: the live vmap trace naming it,
    or a `ProcessAxis`; an axis nothing binds is the user's error."""
    found = []
    for name in names:
        best = None
        for t in reversed(_trace_stack):
            if getattr(t, "axis_name", None) == name:
                best = t
                break
        for p in reversed(_process_axes):
            if p.axis_name == name:
                if best is None or p.depth > best.level:
                    best = p
                break
        if best is None:
            raise errors.UnboundAxisError(
                f"unbound axis name: {name!r} (at {errors.user_frame()}). A collective "
                "(psum, pmean, all_gather, axis_index, ...) names the axis of an enclosing "
                f"vmap, zerax.distributed.spmd or shard_map: call it inside "
                f"vmap(..., axis_name={name!r}) or one of those.")
        found.append(best)
    return found


def eval_primitive(prim: Primitive, args, params):
    """The eager path: the primitive applied to concrete values, wrapped as Arrays.

    NumPy buffers (the host's) run the NumPy implementation here, which is what the CPU
    backend's ``apply`` does; buffers of another backend's device run on that backend
    (`apply_on_device`)."""
    if device_buffers:   # some loaded backend holds buffers of its own
        return apply_on_device(prim, args, params)
    vals = [a._value if type(a) is Array else a if type(a) is np.ndarray else np.asarray(a)
            for a in args]
    out = run_impl(prim, vals, params)
    if prim.multiple_results:
        return [Array._wrap(o) for o in out]
    return Array._wrap(out)


def apply_on_device(prim: Primitive, args, params):
    """The eager path when device buffers may be present: the backend owning the
    operands' device buffers applies the primitive (``Backend.apply``), given every
    operand (host values among them, which it moves to its device); with none, the
    NumPy implementation runs.  Operands on two backends' devices are an error."""
    vals, backend = [], None
    for a in args:
        v = a._value if isinstance(a, Array) else a
        owner = device_buffers.get(type(v))
        if owner is None:
            v = v if type(v) is np.ndarray else np.asarray(v)
        elif backend is None:
            backend = owner
        elif owner is not backend:
            raise errors.ZeraxValueError(
                f"{prim.name} at {errors.user_frame()}: its operands live on devices of "
                f"different backends ({backend.name} and {owner.name}); move them to one "
                "device first (zerax.device_put).")
        vals.append(v)
    out = run_impl(prim, vals, params) if backend is None else backend.apply(prim, vals, params)
    if prim.multiple_results:
        return [Array._wrap(o) for o in out]
    return Array._wrap(out)


def run_impl(prim: Primitive, vals, params):
    """``prim.impl(*vals, **params)`` on NumPy values; NumPy's errors become zerax's."""
    try:
        return prim.impl(*vals, **params)
    except (ValueError, TypeError, IndexError) as e:
        if any(is_bfloat16(getattr(v, "dtype", None)) for v in vals) and \
                not isinstance(e, errors.ZeraxError):
            out = _bfloat16_in_float32(prim, vals, params)
            if out is not None:
                return out
        # Eager calls skip the shape rule for speed; on failure, run it so that bad
        # input is reported by zerax (naming shapes), not by NumPy.
        if prim.abstract_eval is not None:
            prim.abstract_eval(*[ShapedArray(np.shape(v), np.result_type(v)) for v in vals],
                               **params)
        if isinstance(e, errors.ZeraxError):
            raise
        cls = (errors.ZeraxIndexError if isinstance(e, IndexError) else
               errors.ZeraxTypeError if isinstance(e, TypeError) else errors.ZeraxValueError)
        raise cls(
            f"{prim.name} failed on operands {', '.join(str(np.shape(v)) for v in vals)} "
            f"at {errors.user_frame()}: {e}") from e


def _bfloat16_in_float32(prim, vals, params):
    """``prim`` on bfloat16 operands that its NumPy implementation refuses (ml_dtypes
    has no loop for it: ``ldexp``, SciPy's special functions, ``einsum``): computed in
    float32 and each result rounded to the dtype the shape rule gives it, as JAX's CPU
    backend computes bfloat16.  None when that fails too (the caller reports it)."""
    if prim.abstract_eval is None:
        return None
    try:
        avals = prim.abstract_eval(*[ShapedArray(np.shape(v), np.result_type(v))
                                     for v in vals], **params)
        out = prim.impl(*[v.astype(np.float32) if is_bfloat16(v.dtype) else v
                          for v in vals], **params)
    except (ValueError, TypeError, IndexError):
        return None
    if prim.multiple_results:
        return [np.asarray(o).astype(a.dtype, copy=False) for o, a in zip(out, avals)]
    return np.asarray(out).astype(avals.dtype, copy=False)


def full_lower(x):
    """Strip trace wrappers that carry no information (used for outputs)."""
    return x


def find_top_trace(args):
    """The live trace of highest level among ``args``' tracers (None: all concrete);
    a tracer whose transform has ended is an error."""
    top, level = None, -1
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if not t.alive:
                raise _dead_tracer(a)
            if t.level > level:
                top, level = t, t.level
    return top


def is_concrete(x) -> bool:
    return not isinstance(x, Tracer)


def concrete_value(x, what: str = "converting to a Python value"):
    """The ndarray behind ``x``; tracers are asked for a concrete value (JVP tracers
    have one, recording tracers raise a ConcretizationError)."""
    while isinstance(x, Tracer):
        x = x.to_concrete(what)
    if type(x) is Array:
        return x._value
    return np.asarray(x)


_counter = itertools.count()


def fresh_id() -> int:
    return next(_counter)


