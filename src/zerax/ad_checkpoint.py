"""`zerax.ad_checkpoint`: JAX's ``jax.ad_checkpoint`` (re-exports): `checkpoint`
(``remat``), `checkpoint_name`, the `checkpoint_policies`, and `print_saved_residuals` /
`saved_residuals`."""

from ._src.api.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals
from ._src.api.custom import checkpoint, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "remat", "saved_residuals"]
