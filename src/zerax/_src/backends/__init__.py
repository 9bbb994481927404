"""Backends that compile IR programs: `numba` (CPU) now, `cupy` (GPU) next.

``get_backend(name)`` returns the backend object of ``backends/<name>/`` (see
``base.Backend``).  A backend is loaded on first use, by name, from this registry: its
compiler (Numba, CuPy) is an import of a second or more that a program which never
compiles should not pay, and an optional backend may be missing entirely.
"""

from __future__ import annotations

import importlib

from ... import errors
from ..base.config import config
from ..core.array import CPU, Device
from .base import Backend

# name -> the module defining ``backend`` (a `base.Backend`), and JAX's platform name
_MODULES = {"numba": "zerax._src.backends.numba"}
_PLATFORMS = {"numba": "cpu"}
_loaded: dict[str, Backend] = {}



def get_backend(name: str | None = None) -> Backend:
    """The backend ``name`` (default: ``zerax.config.backend``), loaded on first use."""
    name = name or config.backend
    b = _loaded.get(name)
    if b is None:
        if name not in _MODULES:
            raise errors.NotSupportedError(
                f"backend {name!r} is not available (have: {', '.join(_MODULES)})")
        b = _loaded[name] = importlib.import_module(_MODULES[name]).backend
    return b


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


config.available_backends = tuple(_MODULES)
# The threads compiled programs use is the CPU backend's setting (numba/threads.py).
config.register_option("num_threads", lambda n: get_backend("numba").set_num_threads(n),
                       lambda: get_backend("numba").num_threads())
