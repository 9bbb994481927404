"""`zerax.scipy.ndimage`: JAX's ``jax.scipy.ndimage`` (re-exports): `map_coordinates`."""

from .._src.api.scipy.ndimage import map_coordinates

__all__ = ["map_coordinates"]
