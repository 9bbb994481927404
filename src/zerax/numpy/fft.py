"""`zerax.numpy.fft`: NumPy's discrete Fourier transforms on zerax values (JAX's signatures).

Every transform is differentiable (its derivative is an FFT again), batches under ``vmap``
and runs under ``jit``.

>>> import zerax.numpy as znp
>>> znp.fft.irfft(znp.fft.rfft(znp.array([1.0, 2.0, 3.0, 4.0])))
Array([1., 2., 3., 4.], dtype=float64)
"""

from .._src.numpy.fft import (__all__, fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2, ifftn, ifftshift, ihfft, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)
