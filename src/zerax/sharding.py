"""`zerax.sharding`: JAX's ``jax.sharding`` names (re-exports), and the planner's cost
model.

`Mesh` names the axes of an array of devices (the CPU devices of the processes of a
`zerax.distributed` job: `zerax.devices`); `PartitionSpec` says which mesh axes split
each dimension of an array; `NamedSharding` pairs them.  ``device_put(x,
NamedSharding(...))`` splits an array over the mesh (each process keeps its part),
``jit(f, in_shardings=..., out_shardings=...)`` partitions a program over it, and
``in_shardings="auto"`` lets the planner choose, costing plans with a `CostModel`
(docs/parallelism.md); `zerax.shard_map` runs a function of blocks over a mesh.  An
array that is not split lies whole in its process: its ``.sharding`` is a
`SingleDeviceSharding`, which `zerax.device_put` accepts in place of a device.
"""

from ._src.core.array import Shard, SingleDeviceSharding
from ._src.api.sharding import Mesh, NamedSharding, PartitionSpec, current_mesh, make_mesh
from ._src.api.planner import CostModel

__all__ = ["SingleDeviceSharding", "Mesh", "NamedSharding", "PartitionSpec", "current_mesh",
           "make_mesh", "Shard", "CostModel"]
