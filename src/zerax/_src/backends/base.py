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
    """What ``jit``, ``device_put`` and the eager path ask of a backend.

    Its arrays' buffers are NumPy's (the host's, as the CPU backend's) or of its own
    ``buffer_types`` (a GPU's): the registry routes those to it, so an `Array` holding
    one reports its device, and an eager primitive on one runs by ``apply`` (NumPy
    buffers run their NumPy implementation directly, as the CPU backend's ``apply``
    would)."""

    name: str                     # "numba" (the CPU's), "cupy"
    platform: str                 # JAX's platform name: "cpu", "gpu"
    buffer_types: tuple           # buffer classes of its own (empty: NumPy's)

    def devices(self) -> Sequence[Device]: ...

    def device_of(self, buffer) -> Device:
        """The device holding ``buffer`` (one of ``buffer_types``)."""

    def put(self, value, device: Device):
        """``value`` (a NumPy array) copied to ``device``: a buffer of this backend."""

    def to_host(self, buffer):
        """``buffer`` copied to the host, as a NumPy array."""

    def compile(self, jaxpr, name: str, *, fast_math: bool = False) -> Executable:
        """Compile ``jaxpr`` (constants as leading inputs); ``name`` is for errors.
        ``fast_math``: float arithmetic may be contracted and reassociated (a backend
        without such freedom ignores it)."""

    def source(self, jaxpr, dialect=None, name: str = "this program") -> str:
        """The program's readable compiled form, for ``jit(f).lower(...).as_text()``
        (``dialect``: a target's lower-level text, e.g. "llvm"; ``name`` is for
        errors)."""

    def apply(self, prim, buffers, params):
        """Run ``prim`` eagerly on this backend's buffers (host NumPy values may be
        among them: constants, Python scalars, which it moves to its device); returns
        its buffer (a list of them for a primitive with several results)."""
