"""`zerax.core`: the public names of JAX's ``jax.core`` that programs import (re-exports):
``Tracer`` (``isinstance(x, zerax.core.Tracer)``: is ``x`` traced?), ``ShapedArray``,
``Jaxpr``, ``ClosedJaxpr``, ``eval_jaxpr``, ``get_aval``.

>>> import zerax as zx
>>> zx.grad(lambda x: float(isinstance(x, zx.core.Tracer)) + x)(1.0)
Array(1., dtype=float64)
"""

from ._src.core.avals import ShapedArray
from ._src.core.core import Tracer, get_aval
from ._src.ir.ir import ClosedJaxpr, Jaxpr, eval_jaxpr

__all__ = ["ClosedJaxpr", "Jaxpr", "ShapedArray", "Tracer", "eval_jaxpr", "get_aval"]
