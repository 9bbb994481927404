"""The state of one program's lowering to kernel IR: where each value of the program
lives (a buffer, or a 0-d scalar expression), the statements written so far, and the
buffers the kernel takes and makes."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from .. import kernel_ir as K
from ..fusion import IndexReads
from ...ir.ir import Literal

# Elements from which an elementwise loop nest at the top level runs in parallel.
PARALLEL_THRESHOLD = 100_000
# Elements of one block of a parallel loop over blocks (fused.py's independent parts).
PARALLEL_BLOCK_ELEMENTS = 4096


# The dtypes the targets have scalars of.
KERNEL_DTYPES = frozenset(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128))


def kernel_dtype(dtype) -> bool:
    """Whether the targets have scalars of ``dtype`` (bfloat16 too: ml_dtypes' dtype,
    which exists only once a program has made one, so it is not in the set)."""
    return dtype in KERNEL_DTYPES or (dtype.kind == "V" and dtype.name == "bfloat16")


class Unlowerable(Exception):
    """A program this lowering does not carry (a primitive without a kernel-IR rule, or
    a dtype the targets have no scalars of); the caller compiles it another way."""


class Ctx:
    """What a lowering rule writes into.  Rules read operands with `scalar` (0-d
    values) and `buffer` (arrays), bind results with `bind_scalar`/`bind_buffer`, make
    result buffers with `new_buffer`, and append statements with `emit` (inside
    `loop`/`nest` blocks when those are open)."""

    def __init__(self, name: str):
        self.name = name
        self.names = K.Namer()
        self.inputs: list = []
        self.outputs: list = []
        self.temps: list = []
        self.values: dict = {}            # IR var -> Buffer or scalar Expr
        self.block: list = []             # the statements being written
        self.depth = 0                    # open loops (parallel loops only at depth 0)
        self.out_slots: dict = {}         # IR var -> output Buffer it is computed into
        # {output var: the operand var whose buffer it may be computed into} for the
        # program being lowered (`inplace.plan`: updates in place, carries a loop takes)
        self.takes: dict = {}
        # the equation loop, lower_eqns(ctx, jaxpr, owned) (lowering/__init__.py): rules
        # of primitives with sub-programs lower them through it (control_flow.py)
        self.lower_eqns = None
        self.program = None               # the (sub-)program whose equations are lowered
        self.index_reads = IndexReads()   # its concatenations read in place (fusion.py)
        self.recorded: dict = {}          # while loops recorded for their reverse pass
        self.host_calls: list = []        # the kernel's HostCalls, by index (host.py)
        # the psums summed in shared memory (process_sums.py), and the hosted buffers
        # their operands are computed into
        self.process_sums = None
        self.hosted_for: dict = {}

    # -- values

    def scalar(self, atom) -> K.Expr:
        """A 0-d operand's value as an expression."""
        if type(atom) is Literal:
            return K.Const(np.asarray(atom.val).item(), atom.aval.dtype)
        v = self.values[atom]
        if isinstance(v, K.Buffer):
            return K.Load(v, (K.Const(0, K.I64),) * len(v.shape)) if v.size == 1 else \
                _not_scalar(atom)
        return v

    def is_scalar(self, atom) -> bool:
        return type(atom) is Literal or not isinstance(self.values[atom], K.Buffer)

    def buffer(self, atom) -> K.Buffer:
        """An operand as a buffer (a 0-d value held as a scalar is stored once into a
        temporary)."""
        if type(atom) is not Literal:
            v = self.values[atom]
            if isinstance(v, K.Buffer):
                return v
        value = self.scalar(atom)
        buf = self.temp((), atom.aval.dtype)
        self.emit(K.Store(buf, (), value))
        if type(atom) is not Literal:
            self.values[atom] = buf
        return buf

    def bind_scalar(self, var, expr: K.Expr) -> None:
        """Bind the 0-d ``var`` to ``expr``, through a `Let` unless it is a name or a
        constant already (and into its output buffer when it is an output)."""
        if type(expr) not in (K.Var, K.Const):
            v = self.names.var("s", expr.dtype)
            self.emit(K.Let(v, expr))
            expr = v
        out = self.out_slots.get(var)
        if out is not None:
            self.emit(K.Store(out, (K.Const(0, K.I64),) * len(out.shape), expr))
        self.values[var] = expr

    def bind_buffer(self, var, buf: K.Buffer) -> None:
        self.values[var] = buf

    def new_buffer(self, var) -> K.Buffer:
        """The buffer ``var``'s value is computed into: its output buffer if it is one
        of the program's outputs, else a new temporary."""
        out = self.out_slots.get(var)
        if out is None:       # a psum's operand: this process's slot (process_sums.py)
            out = self.hosted_for.get(var)
        if out is not None:
            self.values[var] = out
            return out
        buf = self.temp(var.aval.shape, var.aval.dtype)
        self.values[var] = buf
        return buf

    def take_buffer(self, x, out) -> K.Buffer | None:
        """``x``'s buffer, for ``out`` to be computed into in place (an update that
        need not copy its operand, a loop carry that starts in its initial value's
        buffer), when nothing reads it after this equation (`inplace.plan`: the buffer
        belongs to this program, and no value held in it, ``x`` or a view of it, is read
        later or is an output); ``out`` is then bound to it.  None otherwise."""
        if type(x) is Literal or self.takes.get(out) is not x:
            return None
        held = self.values.get(x)
        if not isinstance(held, K.Buffer) or held.size != math.prod(out.aval.shape) or \
                held.dtype != out.aval.dtype or held.root.kind in ("hosted", "sum"):
            return None     # (other processes read a hosted buffer: never overwritten)
        held = held.reshaped(out.aval.shape)
        self.values[out] = held
        return held

    def temp(self, shape, dtype, fill=None) -> K.Buffer:
        buf = K.Buffer(self.names("t"), shape, dtype, "temp", fill=fill)
        self.temps.append(buf)
        return buf

    @staticmethod
    def large(elements) -> bool:
        """Whether a loop nest of ``elements`` iterations pays for running in parallel."""
        return elements >= PARALLEL_THRESHOLD

    # -- statements

    def emit(self, stmt) -> None:
        if stmt is not None:
            self.block.append(stmt)

    @contextlib.contextmanager
    def loop(self, n, *, parallel=False, prefix="i", start=0, elements=False):
        """``for i in range(start, n)``: yields the index; statements emitted inside go
        to its body (``elements``: a loop over array elements, `K.For`)."""
        i = self.names.var(prefix, K.I64)
        outer, self.block = self.block, []
        self.depth += 1
        try:
            yield i
        finally:
            self.depth -= 1
            body, self.block = self.block, outer
        self.emit(K.For(i, start, n, body, parallel=parallel and self.depth == 0,
                        elements=elements))

    @contextlib.contextmanager
    def nest(self, shape, *, parallel=None):
        """Loops over ``shape`` (an axis of size 1 gets no loop: its index is 0); yields
        the index tuple.  The outermost loop is parallel when the nest is at the top
        level and large (``parallel=None``), or as ``parallel`` says."""
        shape = tuple(shape)
        total = math.prod(shape)
        if parallel is None:
            parallel = self.large(total)
        with contextlib.ExitStack() as stack:
            idx = []
            first = True
            for n in shape:
                if n == 1:
                    idx.append(K.Const(0, K.I64))
                    continue
                idx.append(stack.enter_context(self.loop(n, parallel=parallel and first,
                                                         elements=True)))
                first = False
            yield tuple(idx)

    @contextlib.contextmanager
    def capture(self):
        """Collect the statements emitted inside into a list (yielded)."""
        outer, self.block = self.block, []
        body = []
        try:
            yield body
        finally:
            body.extend(self.block)
            self.block = outer


def _not_scalar(atom):
    raise Unlowerable(f"{atom} is not a scalar")
