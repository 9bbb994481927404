"""``zerax.config``: the process-wide settings, and zerax's version.

Options that belong to a backend (``num_threads``) are registered by the layer that
owns them (``register_option``), so this module, at the bottom of the layer map, knows
none of them.
"""

from __future__ import annotations

import os
from typing import Callable

from ... import errors
from . import dtypes

__version__ = "0.1.0"


class Config:
    """``zerax.config``: the backend (``"numba"``, the CPU's; ``"cupy"`` once it exists), whether
    compiled programs are cached on disk (directory ``ZERAX_CACHE_DIR``), and
    ``num_threads``, the threads compiled programs use (default ``ZERAX_NUM_THREADS``,
    else the cores this process may use; see ``backends/cpu/threads.py``).

    JAX's own option names are understood too, so ported code runs unchanged:
    ``jax_enable_x64`` (zerax's default is True, NumPy's 64-bit defaults; False is JAX's
    default 32-bit mode, see ``base/dtypes.py``; the environment variables
    ``ZERAX_ENABLE_X64``, else ``JAX_ENABLE_X64``, set it at import; read it as
    ``config.jax_enable_x64`` or ``config.x64_enabled``), ``jax_disable_jit``,
    ``jax_log_compiles``, ``jax_platforms``/``jax_platform_name`` ("cpu"), and
    ``jax_num_cpu_devices`` (``num_cpu_devices``: CPU devices per process, default 1, for
    meshes whose axes are vmapped within a process; see `zerax.shard_map`).

    ``log_compiles`` logs every compile and its time on the ``"zerax"`` logger;
    ``compile_notice_s`` (default 2.0, None for never) is how long a compile runs before
    a line on stderr says what is being compiled (``base/compile_log.py``).

    >>> import zerax as zx
    >>> zx.config.update("jax_enable_x64", True)
    >>> zx.config.update("disk_cache", True)
    >>> zx.config.update("num_threads", zx.config.num_threads)
    >>> zx.config.update("compile_notice_s", 2.0)
    """

    def __init__(self):
        self.backend = "numba"
        self.disk_cache = True
        self.jit_disabled = False
        # compiles: logged on the "zerax" logger (JAX's jax_log_compiles), and a line on
        # stderr for one that runs longer than this many seconds (None: never)
        self.log_compiles = False
        self.compile_notice_s = 2.0
        # name -> (set(value), get()), registered by the layers that own the option
        self._registered: dict[str, tuple[Callable, Callable]] = {}
        self.available_backends: tuple[str, ...] = ("numba",)
        for var in ("ZERAX_ENABLE_X64", "JAX_ENABLE_X64"):
            if os.environ.get(var, "").strip():
                dtypes.set_x64(dtypes.parse_bool_env(var, os.environ[var]))
                break
        # CPU devices per process (JAX's jax_num_cpu_devices): a mesh axis over them is
        # a vmapped axis (zerax.sharding.Mesh, shard_map); every array stays in host memory
        self.num_cpu_devices = 1

    def register_option(self, name: str, setter: Callable, getter: Callable) -> None:
        """Let ``update(name, v)`` call ``setter(v)`` and ``config.<name>`` ``getter()``."""
        self._registered[name] = (setter, getter)

    @property
    def jax_enable_x64(self) -> bool:
        return dtypes.x64_enabled()

    x64_enabled = jax_enable_x64

    def __getattr__(self, name):
        registered = self.__dict__.get("_registered", {})
        if name in registered:
            return registered[name][1]()
        raise AttributeError(name)

    def update(self, name, value):
        if name == "jax_enable_x64":   # (a string is read as the environment variable is)
            dtypes.set_x64(dtypes.parse_bool_env(name, value) if isinstance(value, str)
                           else bool(value))
            return
        if name in self._registered:
            self._registered[name][0](value)
            return
        if name == "jax_disable_jit":
            name, value = "jit_disabled", bool(value)
        if name == "jax_log_compiles":
            name, value = "log_compiles", bool(value)
        if name in ("jax_num_cpu_devices", "num_cpu_devices"):
            if type(value) is not int or value < 1:
                raise errors.ZeraxValueError(
                    f"{name} must be a positive int, got {value!r}")
            name = "num_cpu_devices"
        if name in ("jax_platforms", "jax_platform_name"):
            if str(value).split(",")[0].strip().lower() not in ("cpu", ""):
                raise errors.NotSupportedError(
                    f"{name}={value!r}: zerax runs on the CPU (backend 'numba') here.")
            return
        if name.startswith("_") or name not in self.__dict__:
            raise errors.ZeraxValueError(f"unknown zerax config option {name!r}")
        if name == "backend" and value not in self.available_backends:
            raise errors.NotSupportedError(
                f"backend {value!r} is not available (have: "
                f"{', '.join(self.available_backends)})")
        setattr(self, name, value)

    def config_with_absl(self):
        """JAX registers its options as absl command-line flags here; zerax reads no
        flags, so this is a no-op (``jax.config.config_with_absl()`` ports as it is).

        >>> import zerax as zx
        >>> zx.config.config_with_absl()
        """

    def parse_flags_with_absl(self):
        """A no-op, as `config_with_absl` (JAX parses the absl flags it registered)."""


config = Config()
