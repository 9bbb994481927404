"""The kernel IR: the small typed loop language every target's emitter compiles.

A backend lowers a program (a ``Jaxpr``) in two steps: fusion groups its equations,
and each primitive's lowering rule (``backends/lowering/``, written once for every
target) turns its equations into kernel-IR statements.  An emitter per target
(``backends/cpu/emit.py``: LLVM IR through llvmlite) turns a `Kernel` into machine
code.  Nothing here is text: the printer (`Kernel.__str__`) only shows the data.

The language, whole:

- **Values** are scalars, each with a NumPy dtype (the avals' dtypes; there is no type
  inference and no implicit promotion: an operation's operands have the dtypes its
  opcode says).  Index arithmetic is ``int64``.
- **Expressions** (`Expr`): `Const`, `Var` (a scalar defined by `Let`, a mutable
  `Declare`, or a loop index), `Load` (an element of a buffer at an index tuple), `Op`
  (one operation of the opcode table `OPS`: arithmetic, comparisons, logic, casts,
  selects and the math table's functions).
- **Statements** (`Stmt`): `Let` (define once), `Declare`/`Assign` (a mutable scalar:
  accumulators and loop carries), `Store`, `For` (serial, or ``parallel``: iterations
  write disjoint elements and may run on several threads), `If`, `While`, `Reduce`
  (a loop whose body's value is combined into an accumulator; ``"add"`` of floats
  sums pairwise, as NumPy does, so compiled sums stay within pairwise summation's
  error bound whatever the loop order), and `Call` (a routine of the target's call
  table, on buffers: BLAS's ``gemm``, later MPI and cuBLAS), and `HostCall` (a call
  back into Python that runs one equation by its primitive's NumPy implementation).
- **Buffers** (`Buffer`): C-contiguous arrays of a static shape and dtype: the
  kernel's ``inputs`` and ``outputs`` (made by the caller) and its ``temps``
  (scratch the emitter allocates), and views of them: another shape of the same
  elements, or a part starting at an element offset computed at run time (a row of a
  stacked array, the buffer a loop carry is in this iteration).

"""

from __future__ import annotations

import hashlib
import math

import numpy as np

I64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

# --------------------------------------------------------------------------- opcodes

# opcode -> (arity, kind).  Kinds: "same" (operands and result share one dtype),
# "cmp" (operands share a dtype, the result is bool), "cast" (the result's dtype is
# the op's own), "select" (a bool and two values of the result's dtype), "math" (a
# function of the math table: float or complex operands, result of their dtype),
# "real" (a complex operand, a real result: abs/real/imag).
OPS: dict[str, tuple[int, str]] = {
    # arithmetic (ints wrap; integer division and remainder follow NumPy: floor,
    # 0 for a zero divisor)
    "add": (2, "same"), "sub": (2, "same"), "mul": (2, "same"), "div": (2, "same"),
    "floordiv": (2, "same"), "rem": (2, "same"), "fmod": (2, "same"), "neg": (1, "same"),
    "max": (2, "same"), "min": (2, "same"),   # NaN-propagating (np.maximum)
    "fma": (3, "same"),                       # a * b + c, rounded once
    "abs": (1, "same"), "sign": (1, "same"),
    # comparisons (IEEE: false with a NaN, except ne)
    "eq": (2, "cmp"), "ne": (2, "cmp"), "lt": (2, "cmp"), "le": (2, "cmp"),
    "gt": (2, "cmp"), "ge": (2, "cmp"),
    "isnan": (1, "cmp"), "isfinite": (1, "cmp"),
    # logic and bits (bool or integers)
    "and": (2, "same"), "or": (2, "same"), "xor": (2, "same"), "not": (1, "same"),
    "shl": (2, "same"), "shr": (2, "same"),   # NumPy's: counts past the width give 0/-1
    # conversions
    "cast": (1, "cast"), "bitcast": (1, "cast"),
    "select": (3, "select"),                  # select(c, if_true, if_false)
    # the math table (float; the emitter picks the implementation for each target)
    "floor": (1, "same"), "ceil": (1, "same"), "rint": (1, "same"), "trunc": (1, "same"),
    "sqrt": (1, "math"), "cbrt": (1, "math"),
    "exp": (1, "math"), "exp2": (1, "math"), "expm1": (1, "math"),
    "log": (1, "math"), "log1p": (1, "math"),
    "sin": (1, "math"), "cos": (1, "math"), "tan": (1, "math"),
    "asin": (1, "math"), "acos": (1, "math"), "atan": (1, "math"),
    "sinh": (1, "math"), "cosh": (1, "math"), "tanh": (1, "math"),
    "asinh": (1, "math"), "acosh": (1, "math"), "atanh": (1, "math"),
    "atan2": (2, "math"), "pow": (2, "math"),
    "erf": (1, "math"), "erfc": (1, "math"), "lgamma": (1, "math"),
    # complex numbers
    "real": (1, "real"), "imag": (1, "real"), "cabs": (1, "real"),
    "complex": (2, "cast"), "conj": (1, "same"),
}


# --------------------------------------------------------------------------- expressions


class Expr:
    """A scalar expression; ``dtype`` is its NumPy dtype."""

    __slots__ = ("dtype",)

    # Operators build `Op` nodes for the lowering rules' convenience (same dtypes).
    def __add__(self, o): return op("add", self, as_expr(o, self.dtype))
    def __sub__(self, o): return op("sub", self, as_expr(o, self.dtype))
    def __mul__(self, o): return op("mul", self, as_expr(o, self.dtype))
    def __radd__(self, o): return op("add", as_expr(o, self.dtype), self)
    def __rmul__(self, o): return op("mul", as_expr(o, self.dtype), self)


class Const(Expr):
    """A constant scalar (a Python bool, int, float or complex, held as its dtype)."""

    __slots__ = ("value",)

    def __init__(self, value, dtype):
        self.dtype = np.dtype(dtype)
        self.value = np.asarray(value, self.dtype).item()

    def __repr__(self):
        v = self.value
        if isinstance(v, float) and not math.isfinite(v):
            return f"{v}:{_short(self.dtype)}"
        return f"{v!r}:{_short(self.dtype)}"

    def key(self):
        """A hashable identity that tells 0.0 from -0.0 and NaNs apart from numbers."""
        return ("const", self.dtype.str, np.asarray(self.value, self.dtype).tobytes())


class Var(Expr):
    """A named scalar: a `Let`'s value, a `Declare`d mutable, a loop index or a
    kernel's scalar parameter.  Names are unique in a kernel (`Namer`)."""

    __slots__ = ("name",)

    def __init__(self, name: str, dtype):
        self.name, self.dtype = name, np.dtype(dtype)

    def __repr__(self):
        return self.name


class Load(Expr):
    """``buf[index]``: one element (``index`` has one int64 expression per axis)."""

    __slots__ = ("buf", "index")

    def __init__(self, buf: "Buffer", index):
        index = tuple(index)
        if len(index) != len(buf.shape):
            raise ValueError(f"load of {buf.name}{buf.shape} with {len(index)} indices")
        self.buf, self.index, self.dtype = buf, index, buf.dtype

    def __repr__(self):
        return f"{self.buf.name}[{', '.join(map(repr, self.index))}]"


class Op(Expr):
    """One operation of `OPS` applied to ``args``, with the result's dtype."""

    __slots__ = ("op", "args")

    def __init__(self, opname: str, args, dtype):
        self.op, self.args, self.dtype = opname, tuple(args), np.dtype(dtype)

    def __repr__(self):
        if self.op in ("cast", "bitcast"):
            return f"{self.op}<{_short(self.dtype)}>({self.args[0]!r})"
        return f"{self.op}({', '.join(map(repr, self.args))})"


def _short(dtype) -> str:
    d = np.dtype(dtype)
    if d.kind == "V" and d.name == "bfloat16":
        return "bf16"
    return {"b": "bool"}.get(d.kind) or f"{d.kind if d.kind != 'c' else 'c'}{d.itemsize * 8}"


def as_expr(x, dtype) -> Expr:
    """``x`` if it is an expression, else a `Const` of ``dtype``."""
    return x if isinstance(x, Expr) else Const(x, dtype)


def op(opname: str, *args) -> Expr:
    """``opname`` applied to ``args``, its result's dtype from its kind (see `OPS`)."""
    arity, kind = OPS[opname]
    if len(args) != arity:
        raise ValueError(f"{opname} takes {arity} operands, got {len(args)}")
    if kind == "cmp":
        return Op(opname, args, BOOL)
    if kind == "select":
        return Op(opname, args, args[1].dtype)
    if kind == "real":
        return Op(opname, args, np.dtype(args[0].dtype.char.lower()) if
                  args[0].dtype.kind == "c" else args[0].dtype)
    if kind == "cast":
        raise ValueError(f"{opname} needs its result dtype: use cast()/bitcast()/make_complex()")
    return Op(opname, args, args[0].dtype)


def cast(x: Expr, dtype) -> Expr:
    """``x`` converted to ``dtype`` (NumPy's ``astype``; float to int truncates)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    if isinstance(x, Const):
        return Const(np.asarray(x.value, x.dtype).astype(dtype).item()
                     if x.dtype.kind != "c" or dtype.kind == "c"
                     else np.real(np.asarray(x.value, x.dtype)).astype(dtype).item(), dtype)
    return Op("cast", (x,), dtype)


def bitcast(x: Expr, dtype) -> Expr:
    """``x``'s bits read as ``dtype`` (same width)."""
    return Op("bitcast", (x,), dtype)


def make_complex(re: Expr, im: Expr, dtype) -> Expr:
    return Op("complex", (re, im), dtype)


def select(c: Expr, a: Expr, b: Expr) -> Expr:
    """``a if c else b`` (both evaluated)."""
    return Op("select", (c, a, b), a.dtype)


def index(value) -> Expr:
    """An int64 index expression from an int or an expression."""
    return value if isinstance(value, Expr) else Const(int(value), I64)


def affine(terms, const: int = 0) -> Expr:
    """``sum(coefficient * var) + const`` over ``terms`` [(expr, coefficient)], folded."""
    out = None
    for e, k in terms:
        if k == 0:
            continue
        t = e if k == 1 else Op("mul", (e, Const(k, I64)), I64)
        out = t if out is None else Op("add", (out, t), I64)
    if out is None:
        return Const(const, I64)
    return out if const == 0 else Op("add", (out, Const(const, I64)), I64)


# --------------------------------------------------------------------------- buffers


class Buffer:
    """A C-contiguous array of static ``shape`` and ``dtype``.  ``kind``: "in" (an
    input), "out" (an output made by the caller), "temp" (the kernel's scratch, filled
    with ``fill`` when that is not None: one value, or a NumPy array of the buffer's
    shape and dtype, a constant of the program), "grow" (scratch whose leading extent grows
    at run time: ``shape[0]`` rows at first, more after a ``reserve`` `Call`), "hosted"
    (memory the host gives the kernel when it starts: a `HostCall` of role "bind",
    the kernel's first statement, says where), "sum" (read only, no memory of its own:
    an element is the sum, in order, of that element of each of ``parts``, hosted
    buffers of its shape), "view" (``base``'s elements with another shape, from element
    ``offset`` on: see `reshaped` and `at`)."""

    __slots__ = ("name", "shape", "dtype", "kind", "fill", "base", "offset", "parts")

    def __init__(self, name, shape, dtype, kind, fill=None, base=None, offset=None,
                 parts=()):
        self.name, self.shape, self.dtype = name, tuple(int(n) for n in shape), np.dtype(dtype)
        self.kind, self.fill, self.base = kind, fill, base
        self.offset = offset      # a view's first element in its root (int64 Expr), or None
        self.parts = tuple(parts)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def root(self) -> "Buffer":
        """The buffer that owns the memory (itself unless a view)."""
        b = self
        while b.base is not None:
            b = b.base
        return b

    def reshaped(self, shape) -> "Buffer":
        """The same elements in C order with ``shape`` (a view: no copy)."""
        shape = tuple(int(n) for n in shape)
        if shape == self.shape:
            return self
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot view {self.name}{self.shape} as {shape}")
        return _view(self.root, self.offset, shape)

    def at(self, offset, shape) -> "Buffer":
        """The ``shape``'s worth of elements from element ``offset`` (an int64 expression
        or int) of this buffer on, in C order: a view (a row of a stacked array, one of
        a loop's carry buffers chosen at run time)."""
        offset = index(offset)
        if self.offset is not None:
            if type(offset) is Const and type(self.offset) is Const:
                offset = Const(offset.value + self.offset.value, I64)
            elif not _is_zero(self.offset):
                offset = self.offset if _is_zero(offset) else \
                    Op("add", (self.offset, offset), I64)
        shape = tuple(int(n) for n in shape)
        if _is_zero(offset) and math.prod(shape) == self.root.size:
            return self.root.reshaped(shape)
        return _view(self.root, None if _is_zero(offset) else offset, shape)

    def rebased(self, root) -> "Buffer":
        """This view (or buffer) of its root, taken of ``root`` instead (a buffer of the
        same shape and dtype as this one's root)."""
        if self.base is None:
            return root
        return _view(root, self.offset, self.shape)

    def __repr__(self):
        dims = ",".join(map(str, self.shape))
        return f"{self.name}:{_short(self.dtype)}[{dims}]"


def _is_zero(e) -> bool:
    return type(e) is Const and e.value == 0


def _view(root, offset, shape):
    # The name shows the view's shape and offset: the printed kernel is its identity
    # (the cache key), and a load's address depends on both.
    at = "" if offset is None else f"@{offset!r}"
    return Buffer(f"{root.name}{at}<{','.join(map(str, shape))}>", shape, root.dtype, "view",
                  base=root, offset=offset)


# --------------------------------------------------------------------------- statements


class Stmt:
    __slots__ = ()


class Let(Stmt):
    """``var = expr``, once."""
    __slots__ = ("var", "expr")

    def __init__(self, var: Var, expr: Expr):
        self.var, self.expr = var, expr


class Declare(Stmt):
    """A mutable scalar ``var``, starting at ``init``."""
    __slots__ = ("var", "init")

    def __init__(self, var: Var, init: Expr):
        self.var, self.init = var, init


class Assign(Stmt):
    """``var = expr`` for a `Declare`d ``var``."""
    __slots__ = ("var", "expr")

    def __init__(self, var: Var, expr: Expr):
        self.var, self.expr = var, expr


class Store(Stmt):
    """``buf[index] = value``."""
    __slots__ = ("buf", "index", "value")

    def __init__(self, buf: Buffer, index, value: Expr):
        index = tuple(index)
        if len(index) != len(buf.shape):
            raise ValueError(f"store to {buf.name}{buf.shape} with {len(index)} indices")
        self.buf, self.index, self.value = buf, index, value


class For(Stmt):
    """``for var in range(start, stop)``: ``body`` (a list of statements).  A
    ``parallel`` loop's iterations write disjoint elements and define nothing used
    after the loop, so they may run in any order, on several threads.  An
    ``elements`` loop runs over the elements of arrays (a fused group's): its code is
    for throughput; code outside such loops (a scalar loop carry) is for latency, and
    a target may pick other code for it (the CPU's sin/cos)."""
    __slots__ = ("var", "start", "stop", "body", "parallel", "elements")

    def __init__(self, var: Var, start, stop, body, parallel=False, elements=False):
        self.var, self.start, self.stop = var, index(start), index(stop)
        self.body, self.parallel = list(body), bool(parallel)
        self.elements = bool(elements)


class If(Stmt):
    __slots__ = ("cond", "then", "orelse")

    def __init__(self, cond: Expr, then, orelse=()):
        self.cond, self.then, self.orelse = cond, list(then), list(orelse)


class While(Stmt):
    """``while True: before; if not cond: break; body``."""
    __slots__ = ("before", "cond", "body")

    def __init__(self, before, cond: Expr, body):
        self.before, self.cond, self.body = list(before), cond, list(body)


# The combiners of `Reduce` and their identities (for a dtype: see `identity`).
COMBINERS = ("add", "mul", "max", "min", "or", "and")


def identity(combiner: str, dtype):
    """The identity element of ``combiner`` for ``dtype``."""
    dtype = np.dtype(dtype)
    if combiner == "add" or combiner == "or":
        return False if dtype == BOOL else 0
    if combiner == "mul" or combiner == "and":
        return True if dtype == BOOL else 1
    if dtype == BOOL:
        return combiner == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if combiner == "max" else info.max
    return -math.inf if combiner == "max" else math.inf


class Reduce(Stmt):
    """``acc = combine(acc, value)`` for ``var`` in ``range(n)``, ``body`` computing
    ``value`` at each step; ``acc`` is a `Declare`d var.  A float ``"add"`` sums
    pairwise (NumPy's blocks of 128 with 8 accumulators, halves above that); the
    other combiners and integer sums take the values in order.  ``max``/``min``
    propagate NaN as ``np.maximum``."""
    __slots__ = ("acc", "combiner", "var", "n", "body", "value")

    def __init__(self, acc: Var, combiner: str, var: Var, n, body, value: Expr):
        if combiner not in COMBINERS:
            raise ValueError(f"unknown combiner {combiner!r}")
        self.acc, self.combiner, self.var, self.n = acc, combiner, var, index(n)
        self.body, self.value = list(body), value


class Call(Stmt):
    """A routine of the target's call table (``name``) on buffers and scalars, with
    static parameters ``params`` (a dict of hashable values).  Every target has
    ``reserve(buf, rows)``: a "grow" buffer then holds at least ``rows`` rows (an int64
    expression), its first rows kept."""
    __slots__ = ("name", "args", "params")

    def __init__(self, name: str, args, params=None):
        self.name, self.args, self.params = name, tuple(args), dict(params or {})


class HostCall(Stmt):
    """Run equation ``eqn`` by its primitive's NumPy implementation, in Python, on
    buffers ``ins`` (read) and ``outs`` (written: the implementation's results): the
    kernel's ``index``-th host call (`Kernel.host_calls`).  Only at statement level,
    never in a parallel loop (the call holds the GIL).  The equation (its parameters:
    a user's callback) is not part of the kernel's identity: the machine code is the
    same for every equation of the same buffers, and the kernel's caller gives it the
    equations' functions (``backends/cpu/executable.py``).

    ``role`` "bind" and "exchange" are the two halves of sums over processes in
    shared memory (``lowering/process_sums.py``): "bind" is the kernel's first
    statement and writes the addresses of its ``outs`` (hosted buffers) into the
    table it is given instead of reading it; "exchange" takes no buffers.  Their
    ``layout`` is the sums' run-time half (``backends/mpi/transport.ProgramSums``),
    whose method named by the role is the call."""
    __slots__ = ("index", "eqn", "ins", "outs", "role", "layout")

    def __init__(self, index: int, eqn, ins, outs, role: str = "eqn", layout=None):
        self.index, self.eqn, self.ins, self.outs = int(index), eqn, tuple(ins), tuple(outs)
        self.role, self.layout = role, layout


# --------------------------------------------------------------------------- kernels


class Kernel:
    """One kernel: its ``inputs`` and ``outputs`` (buffers the caller passes), its
    ``temps`` (buffers it allocates), its body, and its `HostCall`s by index."""

    def __init__(self, name, inputs, outputs, body, temps=(), host_calls=()):
        self.name = name
        self.inputs, self.outputs = list(inputs), list(outputs)
        self.body, self.temps = list(body), list(temps)
        self.host_calls = list(host_calls)

    def __str__(self):
        return format_kernel(self)


class Namer:
    """Fresh names for a kernel's scalars and buffers."""

    def __init__(self):
        self.counts: dict = {}

    def __call__(self, prefix: str) -> str:
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}{n}"

    def var(self, prefix: str, dtype) -> Var:
        return Var(self(prefix), dtype)


# --------------------------------------------------------------------------- printing


def format_kernel(k: Kernel) -> str:
    """The readable form of ``k`` (what ``jit(f).lower(x).as_text()`` shows)."""
    lines = [f"kernel {k.name}({', '.join(map(repr, k.inputs))}) "
             f"-> ({', '.join(map(repr, k.outputs))})"]
    for t in k.temps:
        lines.append(f"  temp {t!r}" + (f" = {_format_fill(t.fill)}" if t.fill is not None
                                        else "") +
                     (" (grows)" if t.kind == "grow" else "") +
                     (" (hosted)" if t.kind == "hosted" else "") +
                     (f" = sum({', '.join(p.name for p in t.parts)})" if t.kind == "sum"
                      else ""))
    _format_block(k.body, 1, lines)
    return "\n".join(lines)


def _format_fill(fill) -> str:
    """A temp's fill as printed: its value, or an array's digest (the printed kernel is
    its cache key: the digest names the values exactly, NaN payloads and zeros' signs
    included)."""
    if not isinstance(fill, np.ndarray):
        return repr(fill)
    data = np.ascontiguousarray(fill)
    digest = hashlib.sha256(data.dtype.str.encode() + repr(data.shape).encode() +
                            data.tobytes()).hexdigest()[:32]
    return f"const {digest}"


def _format_block(stmts, level, lines):
    pad = "  " * level
    for s in stmts:
        t = type(s)
        if t is Let:
            lines.append(f"{pad}{s.var.name}:{_short(s.var.dtype)} = {s.expr!r}")
        elif t is Declare:
            lines.append(f"{pad}var {s.var.name}:{_short(s.var.dtype)} = {s.init!r}")
        elif t is Assign:
            lines.append(f"{pad}{s.var.name} <- {s.expr!r}")
        elif t is Store:
            lines.append(f"{pad}{s.buf.name}[{', '.join(map(repr, s.index))}] = {s.value!r}")
        elif t is For:
            kind = ("parallel for" if s.parallel else "for") + \
                (" each" if s.elements else "")
            lines.append(f"{pad}{kind} {s.var.name} in {s.start!r}..{s.stop!r}:")
            _format_block(s.body, level + 1, lines)
        elif t is If:
            lines.append(f"{pad}if {s.cond!r}:")
            _format_block(s.then, level + 1, lines)
            if s.orelse:
                lines.append(f"{pad}else:")
                _format_block(s.orelse, level + 1, lines)
        elif t is While:
            lines.append(f"{pad}loop:")
            _format_block(s.before, level + 1, lines)
            lines.append(f"{pad}  break unless {s.cond!r}")
            _format_block(s.body, level + 1, lines)
        elif t is Reduce:
            lines.append(f"{pad}{s.acc.name} <- {s.combiner} over {s.var.name} in 0..{s.n!r}:")
            _format_block(s.body, level + 1, lines)
            lines.append(f"{pad}  yield {s.value!r}")
        elif t is Call:
            ps = "".join(f", {k}={v!r}" for k, v in sorted(s.params.items()))
            lines.append(f"{pad}call {s.name}({', '.join(map(repr, s.args))}{ps})")
        elif t is HostCall:
            # (the primitive's name only: its parameters may print addresses, and the
            # printed kernel is its cache key)
            role = "" if s.role == "eqn" else f"{s.role} "
            lines.append(f"{pad}host#{s.index} {role}{s.eqn.primitive.name}("
                         f"{', '.join(map(repr, s.ins))}) -> ({', '.join(map(repr, s.outs))})")
        else:  # pragma: no cover - every statement type is above
            raise TypeError(f"not a kernel-IR statement: {s!r}")
