"""The CPU backend (`base.Backend`): programs compiled through the kernel IR by the
LLVM emitter of this folder; eager primitives run on NumPy.

Its public name is ``"numba"`` (``zerax.config.backend``, ``Device("numba", "cpu")``),
kept from the compiler it once used so that saved configurations and device names stay
valid.  Loading it tunes the process's allocator (`memory.tune_malloc`).
"""

from __future__ import annotations

import sys

from .... import errors
from ...core.core import run_impl
from ...ir.ir import ClosedJaxpr, Jaxpr
from ..base import CPU
from ..lowering import Unlowerable
from . import memory, threads
from .executable import CpuExecutable, llvm_text

memory.tune_malloc()


def _refused(jaxpr, what: str, why: str) -> errors.NotSupportedError:
    """The error for a program the kernel-IR lowering does not carry: the primitive's
    own reason where it states one (``unsupported["lower"]``), with the user's line."""
    for eqn in _all_eqns(jaxpr):
        reason = eqn.primitive.unsupported.get("lower")
        if reason is not None:
            where = f" (at {eqn.source})" if eqn.source else ""
            return errors.NotSupportedError(
                f"{what}: primitive '{eqn.primitive.name}' cannot be compiled: "
                f"{reason}{where}.")
    return errors.NotSupportedError(
        f"{what}: the CPU compiler does not carry this program yet ({why}). Call the "
        "function without jit (or inside zerax.disable_jit()).")


def _all_eqns(jaxpr):
    """The equations of ``jaxpr`` and of every sub-program, depth first."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.eqns:
            yield eqn
            for p in eqn.params.values():
                for sub in (p if isinstance(p, (list, tuple)) else [p]):
                    if isinstance(sub, ClosedJaxpr):
                        sub = sub.jaxpr
                    if isinstance(sub, Jaxpr):
                        stack.append(sub)


def _unlinkable(name):
    """What `CpuExecutable` calls when machine code compiled in this process calls a
    function the process lacks (the disk cache's copy was tried, then a fresh compile:
    `compile.load_kernel`); it runs in the handler of `engine.MissingSymbols`."""
    def fail():
        detail = sys.exc_info()[1]
        raise errors.NotSupportedError(
            f"jit of {name}: this process cannot run the machine code LLVM made for the "
            f"program ({detail}). Call the function without jit (or inside "
            "zerax.disable_jit()).") from None
    return fail


class CpuBackend:
    """The CPU backend: programs compiled through the kernel IR; eager primitives on
    NumPy."""

    name = "numba"
    platform = "cpu"

    buffer_types = ()    # its buffers are NumPy's, the host's

    def devices(self):
        return [CPU]

    def device_of(self, buffer):
        return CPU

    def put(self, value, device):
        return value

    def to_host(self, buffer):
        return buffer

    def compile(self, jaxpr, name: str, *, fast_math: bool = False):
        try:      # (float0 outputs are made by the executable, not lowered)
            return CpuExecutable(jaxpr, name, fast_math=fast_math,
                                 fallback=_unlinkable(name))
        except Unlowerable as e:
            raise _refused(jaxpr, f"jit of {name}", str(e)) from None

    def source(self, jaxpr, dialect=None, name: str = "this program") -> str:
        try:      # lowered as `compile` lowers it; LLVM compiles only at a first call
            exe = CpuExecutable(jaxpr, name)
        except Unlowerable as e:
            raise _refused(jaxpr, f"as_text of {name}", str(e)) from None
        return llvm_text(exe.steps) if dialect == "llvm" else exe.source

    def apply(self, prim, buffers, params):
        # What the eager path (core.eval_primitive) does itself for NumPy buffers,
        # without asking: this backend's buffers are NumPy's.
        return run_impl(prim, buffers, params)

    def num_threads(self) -> int:
        return threads.setting()

    def set_num_threads(self, n) -> int:
        return threads.set_threads(n)


backend = CpuBackend()
