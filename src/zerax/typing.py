"""`zerax.typing`: JAX's ``jax.typing`` (re-exports): `ArrayLike` and `DTypeLike`, for
annotating functions that take arrays and dtypes."""

from ._src.api.typing import ArrayLike, DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
