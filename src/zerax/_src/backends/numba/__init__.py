"""The Numba backend: IR -> fused loops -> Python source -> ``numba.njit``."""

from .compile import compile_jaxpr, generate_source  # noqa: F401
