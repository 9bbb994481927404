"""`zerax.sharding`: JAX's ``jax.sharding`` names (re-exports).

`Mesh` names the axes of an array of devices (the CPU devices of the processes of a
`zerax.distributed` job: `zerax.devices`); `PartitionSpec` says which mesh axes split
each dimension of an array; `NamedSharding` pairs them; `zerax.shard_map` runs a
function over a mesh.  Every zerax array lies whole in its process: its ``.sharding``
is a `SingleDeviceSharding`, which `zerax.device_put` accepts in place of a device.
"""

from ._src.core.array import SingleDeviceSharding
from ._src.api.sharding import Mesh, NamedSharding, PartitionSpec, current_mesh, make_mesh

__all__ = ["SingleDeviceSharding", "Mesh", "NamedSharding", "PartitionSpec", "current_mesh",
           "make_mesh"]
