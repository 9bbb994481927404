"""`zerax.ad_checkpoint`: JAX's ``jax.ad_checkpoint`` (re-exports): `checkpoint`
(``remat``), `checkpoint_name` and the `checkpoint_policies`."""

from ._src.api.ad_checkpoint import checkpoint_name
from ._src.api.custom import checkpoint, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
