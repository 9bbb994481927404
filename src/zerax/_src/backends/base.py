"""The Backend protocol: what a compiler of IR programs offers the layers above.

A backend owns devices, runs primitives eagerly on its buffers, and compiles a
program (a ``Jaxpr`` with its constants as leading inputs) into an executable.  Its
lowering tables are keyed by the primitive object and live in its own folder
(``backends/<name>/``); it imports the layers below the transforms only (core, ir,
ops), never a transform, lax, numpy or the api.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from ..core.array import CPU, Device  # noqa: F401  (a backend's devices)


class Executable(Protocol):
    """A compiled program: ``run(*buffers) -> list of buffers`` (constants first)."""

    source: str

    def run(self, *buffers) -> list: ...


class Backend(Protocol):
    """What ``jit`` and the eager path ask of a backend."""

    name: str                     # "numba", "cupy"
    platform: str                 # JAX's platform name: "cpu", "gpu"

    def devices(self) -> Sequence[Device]: ...

    def compile(self, jaxpr, name: str) -> Executable:
        """Compile ``jaxpr`` (constants as leading inputs); ``name`` is for errors."""

    def source(self, jaxpr) -> str:
        """The generated program text, for ``jit(f).lower(...).as_text()``."""

    def apply(self, prim, buffers, params):
        """Run ``prim`` eagerly on this backend's buffers."""
