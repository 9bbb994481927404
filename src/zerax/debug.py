"""`zerax.debug`: JAX's ``jax.debug`` (re-exports): `print` and `callback`, which show
the values a program has when it runs, under ``jit``, ``vmap``, ``grad`` and in loops."""

from ._src.ops.debug import debug_callback as callback
from ._src.ops.debug import debug_print as print

__all__ = ["callback", "print"]
