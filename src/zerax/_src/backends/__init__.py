"""Backends that compile IR programs: `numba` (CPU) now, `cupy` (GPU) later."""
