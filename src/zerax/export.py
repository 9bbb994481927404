"""`zerax.export`: save a jitted function as a portable program, load it elsewhere.

JAX's ``jax.export`` API: ``export(jit(f))(*specs)`` gives an `Exported`;
``exp.serialize(vjp_order=k)`` its bytes (no pickle, no Python code: the format is in
``docs/export-format.md``); `deserialize` reads them back, in any process that imports
zerax, checking every byte.  `symbolic_shape` makes a dimension symbolic, to export once
for every batch size.  `to_onnx` writes the program as an ONNX model.

>>> import zerax as zx, zerax.numpy as znp
>>> from zerax import export
>>> b, = export.symbolic_shape("b")
>>> exp = export.export(zx.jit(lambda x: znp.tanh(x).sum(axis=1)))(
...     zx.ShapeDtypeStruct((b, 4), "float32"))
>>> loaded = export.deserialize(exp.serialize())
>>> loaded.call(znp.zeros((3, 4), "float32"))
Array([0., 0., 0.], dtype=float32)
"""

from ._src.api.export.exported import (
    Exported, default_export_platform, deserialize, export,
)
from ._src.api.export.onnx_export import to_onnx
from ._src.api.export.trees import (
    register_namedtuple_serialization, register_pytree_node_serialization,
)
from ._src.core.shape_poly import DimExpr, SymbolicScope, is_symbolic_dim, symbolic_shape

__all__ = ["Exported", "export", "deserialize", "symbolic_shape", "SymbolicScope",
           "is_symbolic_dim", "DimExpr", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "default_export_platform", "to_onnx"]
