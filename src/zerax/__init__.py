"""zerax: a pure-functional array-transform library.

Immutable arrays are traced through pure Python functions into a small typed IR;
composable transforms (grad of any order, jvp/vjp, vmap, jit) rewrite it.

>>> import zerax as zx, zerax.numpy as znp
>>> float(zx.grad(lambda x: znp.sum(znp.tanh(x) ** 2))(0.5))
0.7268619813835873
"""

from . import errors
from ._src import ops as _ops  # noqa: F401  (registers every primitive)
from ._src.interpreters.ad import grad, jvp, linearize, value_and_grad, vjp
from ._src.core.array import Array
from ._src.interpreters.batching import vmap
from ._src.api.jacobians import elementwise_grad, hessian, jacfwd, jacrev
from ._src.api.jit import disable_jit, jit
from ._src.base.config import __version__, config
from ._src.api.custom import (Function, checkpoint, checkpoint_policies, custom_gradient, custom_jvp, custom_vjp, remat)
from ._src.ops.misc import stop_gradient
from ._src.ir.ir import ClosedJaxpr, Jaxpr, eval_jaxpr
from ._src.api.extras import (
    ShapeDtypeStruct, block_until_ready, default_backend, device_count, device_put, devices,
    eval_shape, linear_transpose, local_device_count, make_jaxpr, device_get, local_devices,
    process_index, process_count, default_device, named_scope, named_call,
    ensure_compile_time_eval, numpy_dtype_promotion,
)
from ._src.api.jit import clear_caches
from ._src.api.pmap import pmap
from ._src.base import dtypes  # noqa: E402  (dtypes.float0: the tangent dtype of integers)
from ._src.base.dtypes import enable_x64  # noqa: E402  (JAX's jax.enable_x64 context manager)
from . import numpy, lax, tree, tree_util, test_util, nn, scipy, random  # noqa: E402
from . import debug, image, ops, sharding, typing
from . import core  # noqa: E402  (jax.core's public names)
from . import export  # noqa: E402  (zerax.export: program format, ONNX)
from . import distributed  # noqa: E402
from ._src.api.shard_map import shard_map  # noqa: E402
from ._src.api.sharding import make_mesh  # noqa: E402

jacobian = jacrev   # JAX's name for it


__all__ = [
    "Array", "ClosedJaxpr", "Function", "Jaxpr", "checkpoint", "custom_jvp", "custom_vjp",
    "errors", "eval_jaxpr", "grad", "jvp", "lax", "linearize", "make_jaxpr", "numpy", "remat",
    "stop_gradient", "test_util", "tree", "tree_util", "value_and_grad", "vjp", "vmap",
    "jacfwd", "jacobian",
    "jacrev", "hessian", "nn", "scipy", "jit", "disable_jit", "config", "ShapeDtypeStruct",
    "block_until_ready", "default_backend", "device_put", "devices", "eval_shape",
    "linear_transpose", "dtypes", "checkpoint_policies", "device_count", "local_device_count",
    "debug", "sharding", "typing", "device_get", "local_devices", "process_index",
    "process_count", "default_device", "named_scope", "named_call",
    "ensure_compile_time_eval", "clear_caches", "elementwise_grad", "custom_gradient",
    "pmap", "ops", "image", "core", "numpy_dtype_promotion", "export", "distributed",
    "shard_map", "make_mesh", "enable_x64",
]

# Taylor mode (issue 32)
from . import taylor  # noqa: E402
from .taylor import jet  # noqa: E402

__all__ += ["jet", "taylor"]
