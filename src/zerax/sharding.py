"""`zerax.sharding`: JAX's ``jax.sharding`` names that single-device programs use
(re-exports).  Every zerax array lies whole on one device: its ``.sharding`` is a
`SingleDeviceSharding`, which `zerax.device_put` accepts in place of a device."""

from ._src.core.array import SingleDeviceSharding

__all__ = ["SingleDeviceSharding"]
