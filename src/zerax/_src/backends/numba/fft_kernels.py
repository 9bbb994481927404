"""Native FFTs for the bodies of compiled loops and branches (``fft`` in lower_misc.py).

At the top level of a jitted program an FFT is a call of NumPy's pocketfft between the
compiled kernels; a loop body runs inside one kernel, so there the transform is these
Numba functions, called from the generated code:

- `plan` (NumPy, when the kernel is generated; a constant array of the kernel): the
  twiddle factors ``exp(-2 pi i k / m)`` of a power-of-two size ``m``; for a length
  ``n`` that is not a power of two, also Bluestein's chirp ``exp(-+ pi i j^2 / n)``
  (``j^2`` reduced mod ``2n`` in integers, so the angle is exact before its rounding)
  and the spectrum of its conjugate, zero-padded to ``m >= 2n - 1``, divided by ``m``;
- `lines`: the transform of every line of a (outer, n, inner) array along its middle
  axis, in place: an iterative radix-2 FFT when ``n`` is a power of two, else
  Bluestein's algorithm (a circular convolution of size ``m`` by two radix-2 FFTs);
  the inverse is the conjugate of the forward transform of the conjugate, times ``1/n``;
- `irfft_last`: the inverse real FFT of the last axis (the Hermitian spectrum
  completed, transformed, its real part kept: as pocketfft, the imaginary parts of the
  zero and Nyquist frequencies do not contribute).

Everything is computed in complex128 (float32 transforms are rounded once at the end,
closer to the exact result than pocketfft's single-precision arithmetic), so each
function has one signature: compiled once per process, on a kernel's first compile
(never when a process loads its kernels from the native cache: a kernel's object code
holds the helpers it calls).  A plan is frozen into the kernel's code as constant
data; one over 1 MB (a transform of more than 2^16 points) Numba refers to by address
instead, and such a kernel is compiled in each process (`native.harvest` declines it).  Errors are those of the FFT, about ``eps log2 m`` of the
largest value, against pocketfft's few ulps.

Multi-axis transforms are NumPy's compositions (`lower_misc.py`): RFFT transforms the
last axis first and keeps its ``n // 2 + 1`` non-negative frequencies, then the other
axes; IRFFT the other axes first, then `irfft_last`.
"""

from __future__ import annotations

import threading

import numpy as np


def size(n):
    """The power-of-two size of the radix-2 FFTs of a length-``n`` transform: ``n``
    itself, or (Bluestein) the least power of two ``>= 2n - 1``."""
    if n & (n - 1) == 0:
        return n
    m = 1
    while m < 2 * n - 1:
        m *= 2
    return m


def plan(n: int, inverse: bool) -> np.ndarray:
    """The plan of a length-``n`` transform (``inverse``: the inverse DFT's), computed
    with NumPy when the kernel is generated: one complex128 array, the ``m / 2``
    twiddles ``exp(-2 pi i k / m)``; then, for Bluestein, the ``n`` chirp values
    ``exp(-+ pi i j^2 / n)`` and the ``m`` values of the spectrum of the conjugate
    chirp (zero-padded, wrapped around), divided by ``m``."""
    m = _size(n)      # (the Python function: generating a kernel compiles nothing)
    tw = np.exp(-2j * np.pi * np.arange(m // 2) / m)
    if m == n:
        return tw
    j = np.arange(n, dtype=np.int64)
    angle = (1.0 if inverse else -1.0) * np.pi * ((j * j) % (2 * n)) / n  # exact mod
    chirp = np.exp(1j * angle)
    b = np.zeros(m, np.complex128)
    b[:n] = chirp.conj()
    b[m - n + 1:] = chirp[1:][::-1].conj()
    return np.concatenate([tw, chirp, np.fft.fft(b) / m])


def radix2(buf, tw):
    """The forward DFT of ``buf`` (a power-of-two length m) in place; ``tw`` holds
    ``exp(-2 pi i k / m)`` for ``k < m / 2``."""
    m = buf.size
    j = 0
    for i in range(1, m):          # the bit-reversal permutation
        bit = m >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            buf[i], buf[j] = buf[j], buf[i]
    width = 2
    while width <= m:
        half = width >> 1
        step = m // width
        for start in range(0, m, width):
            k = 0
            for j in range(start, start + half):
                t = buf[j + half] * tw[k]
                u = buf[j]
                buf[j] = u + t
                buf[j + half] = u - t
                k += step
        width <<= 1


def lines(w, p, inverse):
    """The DFT (``inverse``: the inverse DFT, ``1/n`` included) of each line
    ``w[a, :, c]`` of a complex128 array of shape (outer, n, inner), in place, with the
    plan ``p`` of its length and direction."""
    outer, n, inner = w.shape
    m = size(n)
    half = m // 2
    tw = p[:half]
    buf = np.empty(m, np.complex128)
    scale = 1.0 / n if inverse else 1.0
    for a in range(outer):
        for c in range(inner):
            if m == n:
                if inverse:          # ifft(x) = conj(fft(conj(x))) / n
                    for j in range(n):
                        buf[j] = w[a, j, c].conjugate()
                    radix2(buf, tw)
                    for j in range(n):
                        w[a, j, c] = buf[j].conjugate() * scale
                else:
                    for j in range(n):
                        buf[j] = w[a, j, c]
                    radix2(buf, tw)
                    for j in range(n):
                        w[a, j, c] = buf[j]
            else:
                # Bluestein: X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]), a circular
                # convolution of size m, computed as ifft(fft(a) * fft(b)), the inverse
                # again as a conjugated forward transform.
                for j in range(n):
                    buf[j] = w[a, j, c] * p[half + j]
                for j in range(n, m):
                    buf[j] = 0.0
                radix2(buf, tw)
                for k in range(m):
                    buf[k] = (buf[k] * p[half + n + k]).conjugate()
                radix2(buf, tw)
                for k in range(n):
                    w[a, k, c] = buf[k].conjugate() * p[half + k] * scale


def irfft_last(w, n, p):
    """The inverse real DFT of each row of ``w`` (rows, n // 2 + 1), as float64 (rows, n);
    ``p`` is the inverse plan of length ``n``."""
    rows, half = w.shape
    full = np.empty((rows, n, 1), np.complex128)
    for r in range(rows):
        for k in range(half):
            full[r, k, 0] = w[r, k]
        for k in range(half, n):
            full[r, k, 0] = w[r, n - k].conjugate()
    lines(full, p, np.int64(1))
    out = np.empty((rows, n), np.float64)
    for r in range(rows):
        for k in range(n):
            out[r, k] = full[r, k, 0].real
    return out


_size = size

# name -> compiled function, callees first: a function compiled later finds its
# compiled callees among this module's globals (``size`` and ``radix2`` are called
# from the others only, and compiled with them).
_ORDER = ("size", "radix2", "lines", "irfft_last")
_compiled: dict = {}
_lock = threading.Lock()


def kernels() -> dict:
    """The njit functions by name, made on the first call (each compiles on its first
    use, for its one signature; loading the backend must not start Numba's compiler)."""
    if not _compiled:
        with _lock:
            if not _compiled:
                import numba
                g = globals()
                for name in _ORDER:
                    g[name] = numba.njit(g[name], cache=False, error_model="numpy")
                _compiled.update({name: g[name] for name in _ORDER})
    return _compiled
