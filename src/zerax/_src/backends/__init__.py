"""Backends that compile IR programs: the CPU's (named ``"numba"``, in ``cpu/``) now,
`cupy` (GPU) next.

``get_backend(name)`` returns the backend object of the module `_MODULES` names (see
``base.Backend``).  A backend is loaded on first use, by name, from this registry: its
compiler (LLVM, CuPy) is an import that a program which never compiles should not
pay, and an optional backend may be missing entirely.
"""

from __future__ import annotations

import importlib

from ... import errors
from ..base.config import config
from ..core.array import (
    CPU,
    Device,
    device_buffers,
    host_value,
    register_buffer_type,
    unregister_buffer_type,
)
from . import vectorize as _vectorize  # noqa: F401  (installs the special functions' compiler)
from .base import Backend

# name -> the module defining ``backend`` (a `base.Backend`), and JAX's platform name.
# The CPU backend keeps the name "numba" (config.backend, Device("numba", "cpu")) from
# the compiler it once used: saved settings and device names stay valid.
_MODULES = {"numba": "zerax._src.backends.cpu.backend"}
_PLATFORMS = {"numba": "cpu"}
_loaded: dict[str, Backend] = {}



def get_backend(name: str | None = None) -> Backend:
    """The backend ``name`` (default: ``zerax.config.backend``), loaded on first use."""
    name = name or config.backend
    b = _loaded.get(name)
    if b is None:
        if name not in _MODULES:
            raise errors.NotSupportedError(
                f"backend {name!r} is not available (have: {', '.join(_names())})")
        b = _install(importlib.import_module(_MODULES[name]).backend)
    return b


def _names() -> tuple:
    return tuple(dict.fromkeys((*_MODULES, *_loaded)))


def _install(backend: Backend) -> Backend:
    """Make a loaded backend known: by name, and to the layers below for its buffers
    (core's table of device buffer types: an Array holding one asks this backend for
    its device, and an eager primitive on one runs by its ``apply``)."""
    _loaded[backend.name] = backend
    _PLATFORMS.setdefault(backend.name, backend.platform)
    for cls in backend.buffer_types:
        register_buffer_type(cls, backend)
    config.available_backends = _names()
    return backend


def register_backend(backend: Backend) -> Backend:
    """Add a backend object (a `base.Backend`) under its ``name``, loaded: for a
    backend defined outside zerax's tree, or a test's stand-in.  Undo with
    `unregister_backend`.  (``tests/test_backends.py`` registers a stand-in that
    records the primitives the eager path asks it to apply.)"""
    if backend.name in _loaded and _loaded[backend.name] is not backend:
        raise errors.ZeraxValueError(f"a backend named {backend.name!r} is already loaded")
    return _install(backend)


def unregister_backend(name: str) -> None:
    """Remove the backend ``name`` added by `register_backend` (its buffer types are no
    longer routed to it)."""
    b = _loaded.pop(name, None)
    if b is None:
        return
    for cls in b.buffer_types:
        unregister_buffer_type(cls)
    if name not in _MODULES:
        _PLATFORMS.pop(name, None)
    if config.backend == name:
        config.backend = "numba"
    config.available_backends = _names()


def device_put(value, device: Device):
    """Buffer ``value`` (NumPy's or a backend's) on ``device``: copied to the host for
    the CPU, to the device's backend otherwise (an unchanged buffer if already there)."""
    owner = device_buffers.get(type(value))
    if owner is not None and owner.device_of(value) == device:
        return value
    host = host_value(value)
    if device is CPU or device.backend == CPU.backend:
        return host
    return get_backend(device.backend).put(host, device)


def backend_for(values) -> Backend:
    """The backend that computes on ``values``' devices (what ``jit`` compiles for):
    the configured backend for host (NumPy) buffers, else the backend of their device."""
    names = set()
    for v in values:
        d = getattr(v, "device", None)   # (NumPy 2 arrays have a device too: "cpu")
        if isinstance(d, Device) and d is not CPU:
            names.add(d.backend)
    if not names:
        return get_backend()
    if len(names) > 1:
        raise errors.ZeraxValueError(
            f"arguments live on devices of different backends ({', '.join(sorted(names))});"
            " move them to one device first (zerax.device_put).")
    return get_backend(names.pop())


def platform_of(name: str) -> str:
    """JAX's platform name ("cpu", "gpu") of backend ``name``, without loading it."""
    return _PLATFORMS[name]


def devices(name: str | None = None) -> list[Device]:
    """The devices of backend ``name`` (JAX's platform names "cpu"/"gpu" accepted)."""
    if name in (None, "cpu"):
        return [CPU]
    return list(get_backend(name).devices())


config.available_backends = _names()
# The threads compiled programs use is the CPU backend's setting (cpu/threads.py).
config.register_option("num_threads", lambda n: get_backend("numba").set_num_threads(n),
                       lambda: get_backend("numba").num_threads())
