"""Small source-writing helpers shared by the loop-nest lowerings (``lower_shape``,
``lower_reduce``, ``lower_indexing``, ...).

Each lowering writes explicit loops over static shapes into a fresh C-contiguous array
(see codegen.py's ``Lowering``).  Loop nests opened with ``ctx.nest`` may become
``prange`` loops: their bodies only write distinct output elements.  Loops that carry a
dependence are opened with `Serial` and are never parallel.
"""

from __future__ import annotations

import numba
import numpy as np

from . import runtime
from .codegen import dtype_name


def array_of(ctx, atom) -> str:
    """Source name of an operand as an array; a literal or a 0-d value held as a scalar
    is wrapped once (never inside loops)."""
    if ctx.is_scalar(atom):
        name = ctx.fresh("c")
        ctx.emit(f"{name} = {ctx.name(atom)}")
        return name
    return ctx.name(atom)


def scalar_of(ctx, atom) -> str:
    """Source text of a 0-d operand's value, read once before any loop."""
    if ctx.is_scalar(atom):
        return ctx.scalar(atom)
    name = ctx.fresh("s")
    ctx.emit(f"{name} = {ctx.scalar(atom)}")
    return name


class Serial:
    """``for index in range(start, stop):`` that is never turned into ``prange``."""

    def __init__(self, ctx, index, stop, start=0):
        self.ctx, self.index, self.stop, self.start = ctx, index, stop, start

    def __enter__(self):
        rng = f"{self.start}, {self.stop}" if self.start else f"{self.stop}"
        self.ctx.emit(f"for {self.index} in range({rng}):")
        self.ctx.level += 1
        return self.index

    def __exit__(self, *exc):
        self.ctx.level -= 1


def shape_text(shape) -> str:
    return repr(tuple(int(d) for d in shape))


def index_text(items) -> str:
    items = list(items)
    return ", ".join(items) if items else "()"


def affine(index: str, base: int, step: int = 1) -> str:
    """Source text of ``base + index * step`` with trivial terms left out."""
    term = index if step == 1 else f"{index} * {step}"
    if base == 0:
        return term
    return f"{term} + {base}" if base > 0 else f"{term} - {-base}"


def empty_out(ctx, var, shape=None) -> str:
    """Name ``var``'s output and allocate it uninitialised (of ``shape``, default its own)."""
    name = ctx.out(var)
    shape = var.aval.shape if shape is None else shape
    ctx.emit(f"{name} = np.empty({shape_text(shape)}, {dtype_name(var.aval.dtype)})")
    return name


def copy_loop(ctx, out, out_ix_fn, src, src_ix_fn, shape):
    """``out[out_ix(i)] = src[src_ix(i)]`` for every index ``i`` of ``shape``."""
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    with ctx.nest(shape) as idx:
        ctx.emit(f"{out}[{index_text(out_ix_fn(idx))}] = {src}[{index_text(src_ix_fn(idx))}]")


PYTHON_CALL_PREFIX = "_zx_py_"   # the trampolines below (native.harvest declines them)


def _trampoline(name: str, n_args: int):
    """An njit function of ``n_args`` arguments whose one statement is an object-mode
    block calling helper ``name`` of ``runtime.HELPERS``."""
    args = ", ".join(f"a{i}" for i in range(n_args))
    text = (f"def {PYTHON_CALL_PREFIX}{name}({args}):\n"
            "    with numba.objmode():\n"
            f"        __import__({runtime.__name__!r}, fromlist=['HELPERS'])"
            f".HELPERS[{name!r}]({args})\n")
    space = {"numba": numba}
    exec(compile(text, f"<zerax python call {name}>", "exec"), space)  # noqa: S102
    return numba.njit(space[f"{PYTHON_CALL_PREFIX}{name}"], cache=False)


def emit_python_call(ctx, name: str, fn, args) -> None:
    """Emit a call from the kernel to the Python function ``fn`` (registered as helper
    ``name``) with the operand texts ``args`` (arrays or scalars).

    The object-mode block sits in an njit function of its own that the kernel calls, not
    in the kernel: Numba's with-lifting miscompiles a kernel in which both branches of
    one ``if`` hold an object-mode block ("Instruction does not dominate all uses", a
    ``cond`` with a callback or a host decomposition in each branch).  Object mode does
    not see the generated module's globals (Numba looks them up by module name, and the
    module is not imported), so the block reaches ``fn`` through ``runtime.HELPERS``,
    where every compiled program's helpers are registered (compile.py)."""
    ctx.helper(name, fn)
    call = ctx.helper(PYTHON_CALL_PREFIX + name, _trampoline(name, len(args)))
    ctx.emit(f"{call}({', '.join(args)})")
