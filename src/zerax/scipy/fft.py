"""`zerax.scipy.fft`: JAX's ``jax.scipy.fft`` (re-exports): the type-2 discrete cosine
transforms `dct`, `idct`, `dctn`, `idctn`."""

from .._src.api.scipy.fft import dct, dctn, idct, idctn

__all__ = ["dct", "dctn", "idct", "idctn"]
