"""`zerax.scipy.signal`: SciPy's (and JAX's) convolutions and ``detrend`` on zerax values.

The implementation is ``zerax._src.api.scipy.signal``; this face re-exports it."""

from .._src.api.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, detrend, fftconvolve)

__all__ = ['convolve', 'convolve2d', 'correlate', 'correlate2d', 'detrend', 'fftconvolve']
