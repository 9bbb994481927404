"""Generated kernels compiled straight to machine code with llvmlite, without Numba
(the translator and its runtime, in ``translate.py`` for now)."""

from .translate import (
    THREAD_POOL_SYMBOLS,
    DirectKernel,
    Dispatcher,
    Unsupported,
    compile_kernel,
    content_key,
    enabled,
    engine,
    refusals,
    start_threading_layer,
    stats,
)

__all__ = ["THREAD_POOL_SYMBOLS", "DirectKernel", "Dispatcher", "Unsupported",
           "compile_kernel", "content_key", "enabled", "engine", "refusals",
           "start_threading_layer", "stats"]
