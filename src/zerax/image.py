"""`zerax.image`: JAX's ``jax.image`` (re-exports): `resize`, `scale_and_translate` and
`ResizeMethod`."""

from ._src.api.image import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
