"""`zerax.ops`: JAX's ``jax.ops`` (re-exports): the segment reductions `segment_sum`,
`segment_prod`, `segment_max` and `segment_min`."""

from ._src.api.segment import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
