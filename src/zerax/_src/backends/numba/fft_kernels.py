"""Native FFTs for the bodies of compiled loops and branches (``fft`` in lower_misc.py).

At the top level of a jitted program an FFT is a call of NumPy's pocketfft between the
compiled kernels; a loop body runs inside one kernel, so there the transform is these
Numba functions, called from the generated code (no call back into Python per step):

- `plan` (NumPy, when the kernel is generated; a constant array of the kernel): the
  twiddle factors ``exp(-2 pi i k / N)``, ``k < N``, of the size ``N`` the transform
  runs at: ``n`` itself when its prime factors are all at most `MAX_RADIX`, else
  (Bluestein) the least power of two ``N >= 2n - 1``, then the ``n`` chirp values
  ``exp(-+ pi i j^2 / n)`` (``j^2`` reduced mod ``2n`` in integers, so the angle is
  exact before its rounding) and the spectrum of the conjugate chirp, zero-padded and
  wrapped around to ``N`` values, divided by ``N``;
- `stockham`: the forward DFT of one line, a self-sorting mixed-radix (Stockham)
  FFT: one pass per factor of ``N``, butterflies of radix 4, 2, 3 and 5, a direct
  DFT of the other small prime factors (7, 11, ... `MAX_RADIX`), ping-ponging between
  two buffers (no bit reversal);
- `lines`: the transform of every line of a (outer, n, inner) array along its middle
  axis, in place: `stockham` of the line, or Bluestein's algorithm (a circular
  convolution of size ``N`` by two `stockham` transforms); the inverse is the
  conjugate of the forward transform of the conjugate, times ``1/n``;
- `hermitian` and `real_part`: the inverse real FFT of the last axis is the
  Hermitian spectrum completed, transformed by `lines`, its real part kept.

Everything is computed in complex128 (float32 transforms are rounded once at the end,
closer to the exact result than pocketfft's single-precision arithmetic), so each
function has one signature: compiled once per process, on a kernel's first compile
(never when a process loads its kernels from the native cache: a kernel's object code
holds the helpers it calls).  A plan is frozen into the kernel's code as constant
data; one over 1 MB (from about 62,500 points, 16,000 through Bluestein) Numba refers
to by address instead, and such a kernel is compiled in each process (`native.harvest`
declines it).
Errors are those of an FFT, a small multiple of ``eps log2 N`` of the largest value.

Multi-axis transforms are NumPy's compositions (`lower_misc.py`): RFFT transforms the
last axis first and keeps its ``n // 2 + 1`` non-negative frequencies, then the other
axes; IRFFT the other axes first, then the last one.
"""

from __future__ import annotations

import threading

import numpy as np

# Prime factors up to this are direct DFTs of a Stockham pass (O(n p) work); a length
# with a larger prime factor goes through Bluestein's algorithm, which costs about as
# much as six power-of-two FFTs of twice its length.
MAX_RADIX = 31
# the radix-3 and radix-5 butterflies' constants: sin(2 pi / 3), cos and sin of 2 pi / 5
# and 4 pi / 5
_S3 = float(np.sin(2 * np.pi / 3))
_C51, _C52 = float(np.cos(2 * np.pi / 5)), float(np.cos(4 * np.pi / 5))
_S51, _S52 = float(np.sin(2 * np.pi / 5)), float(np.sin(4 * np.pi / 5))


def size(n):
    """The length of the Stockham FFTs of a length-``n`` transform: ``n`` when its prime
    factors are at most MAX_RADIX, else (Bluestein) the least power of two >= 2n - 1."""
    rest = n
    p = 2
    while p <= MAX_RADIX and rest > 1:
        while rest % p == 0:
            rest //= p
        p += 1
    if rest == 1:
        return n
    m = 1
    while m < 2 * n - 1:
        m *= 2
    return m


def plan(n: int, inverse: bool) -> np.ndarray:
    """The plan of a length-``n`` transform (``inverse``: the inverse DFT's), computed
    with NumPy when the kernel is generated: one complex128 array, the ``N`` twiddles
    ``exp(-2 pi i k / N)``; then, for Bluestein, the ``n`` chirp values and the ``N``
    values of the spectrum of the conjugate chirp, over ``N``."""
    m = _size(n)      # (the Python function: generating a kernel compiles nothing)
    tw = np.exp(-2j * np.pi * np.arange(m) / m)
    if m == n:
        return tw
    j = np.arange(n, dtype=np.int64)
    angle = (1.0 if inverse else -1.0) * np.pi * ((j * j) % (2 * n)) / n  # exact mod
    chirp = np.exp(1j * angle)
    b = np.zeros(m, np.complex128)
    b[:n] = chirp.conj()
    b[m - n + 1:] = chirp[1:][::-1].conj()
    return np.concatenate([tw, chirp, np.fft.fft(b) / m])


def stockham(x, y, tw):
    """The forward DFT of ``x`` (length N, its prime factors at most MAX_RADIX; ``tw``
    the N twiddles): returns ``x`` or ``y``, whichever holds it; both are overwritten.

    Pass for a radix p, after radices of product ``ls``: the values are (r*p, ls)
    sub-transforms ``x[j * r * p + k]`` (r = N / (ls p)), combined into (r, ls p) ones:
    ``y[(j + q ls) r + k] = sum_s exp(-2 pi i q s / p) w^(j s) x[j r p + k + s r]``
    with ``w = exp(-2 pi i / (ls p))``, i.e. ``tw[j s r]``."""
    n = x.size
    rest, ls = n, 1
    while rest > 1:
        p = 4 if rest % 4 == 0 else 2 if rest % 2 == 0 else 3
        while rest % p:
            p += 2
        rest //= p
        r = n // (ls * p)
        rp = r * p
        if p == 4:
            for j in range(ls):
                w1, w2, w3 = tw[j * r], tw[2 * j * r], tw[3 * j * r]
                src, dst = j * rp, j * r
                for k in range(r):
                    a0 = x[src + k]
                    a1 = x[src + k + r] * w1
                    a2 = x[src + k + 2 * r] * w2
                    a3 = x[src + k + 3 * r] * w3
                    t0, t1 = a0 + a2, a0 - a2
                    t2, d = a1 + a3, a1 - a3
                    t3 = complex(d.imag, -d.real)          # -i (a1 - a3)
                    y[dst + k] = t0 + t2
                    y[dst + ls * r + k] = t1 + t3
                    y[dst + 2 * ls * r + k] = t0 - t2
                    y[dst + 3 * ls * r + k] = t1 - t3
        elif p == 2:
            for j in range(ls):
                w1 = tw[j * r]
                src, dst = j * rp, j * r
                for k in range(r):
                    a0 = x[src + k]
                    a1 = x[src + k + r] * w1
                    y[dst + k] = a0 + a1
                    y[dst + ls * r + k] = a0 - a1
        elif p == 3:
            for j in range(ls):
                w1, w2 = tw[j * r], tw[2 * j * r]
                src, dst = j * rp, j * r
                for k in range(r):
                    a0 = x[src + k]
                    a1 = x[src + k + r] * w1
                    a2 = x[src + k + 2 * r] * w2
                    t1 = a1 + a2
                    t2 = a0 - 0.5 * t1
                    d = _S3 * (a1 - a2)
                    t3 = complex(d.imag, -d.real)          # -i sin(2 pi / 3) (a1 - a2)
                    y[dst + k] = a0 + t1
                    y[dst + ls * r + k] = t2 + t3
                    y[dst + 2 * ls * r + k] = t2 - t3
        elif p == 5:
            for j in range(ls):
                w1, w2, w3, w4 = tw[j * r], tw[2 * j * r], tw[3 * j * r], tw[4 * j * r]
                src, dst = j * rp, j * r
                for k in range(r):
                    a0 = x[src + k]
                    a1 = x[src + k + r] * w1
                    a2 = x[src + k + 2 * r] * w2
                    a3 = x[src + k + 3 * r] * w3
                    a4 = x[src + k + 4 * r] * w4
                    b1, b2, d1, d2 = a1 + a4, a2 + a3, a1 - a4, a2 - a3
                    e1 = a0 + _C51 * b1 + _C52 * b2
                    e2 = a0 + _C52 * b1 + _C51 * b2
                    f1 = _S51 * d1 + _S52 * d2
                    f2 = _S52 * d1 - _S51 * d2
                    g1 = complex(f1.imag, -f1.real)        # -i f1
                    g2 = complex(f2.imag, -f2.real)
                    y[dst + k] = a0 + b1 + b2
                    y[dst + ls * r + k] = e1 + g1
                    y[dst + 2 * ls * r + k] = e2 + g2
                    y[dst + 3 * ls * r + k] = e2 - g2
                    y[dst + 4 * ls * r + k] = e1 - g1
        else:
            step = n // p           # exp(-2 pi i q s / p) = tw[(q s mod p) n / p]
            t = np.empty(p, np.complex128)
            roots = np.empty(p, np.complex128)
            for e in range(p):
                roots[e] = tw[e * step]
            for j in range(ls):
                src, dst = j * rp, j * r
                for k in range(r):
                    for s in range(p):
                        t[s] = x[src + k + s * r] * tw[j * s * r]
                    for q in range(p):
                        acc = t[0]
                        e = 0
                        for s in range(1, p):
                            e += q
                            if e >= p:
                                e -= p
                            acc += t[s] * roots[e]
                        y[dst + q * ls * r + k] = acc
        x, y = y, x
        ls *= p
    return x


def lines(w, p, inverse):
    """The DFT (``inverse``: the inverse DFT, ``1/n`` included) of each line
    ``w[a, :, c]`` of a complex128 array of shape (outer, n, inner), in place, with the
    plan ``p`` of its length and direction.  (One call of `stockham` in the code, so
    LLVM inlines one copy of it.)"""
    outer, n, inner = w.shape
    m = size(n)
    blue = m != n
    tw = p[:m]
    x = np.empty(m, np.complex128)
    y = np.empty(m, np.complex128)
    scale = 1.0 / n if inverse else 1.0
    for a in range(outer):
        for c in range(inner):
            # Bluestein: X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]), a circular
            # convolution of size m computed as ifft(fft(a) * fft(b)), the inverse
            # transform as a conjugated forward one; else ifft(x) = conj(fft(conj(x))) / n
            for j in range(n):
                v = w[a, j, c]
                if blue:
                    v = v * p[m + j]
                elif inverse:
                    v = v.conjugate()
                x[j] = v
            for j in range(n, m):
                x[j] = 0.0
            src, dst = x, y
            for rep in range(2 if blue else 1):
                z = stockham(src, dst, tw)
                if rep == 0 and blue:
                    for k in range(m):
                        z[k] = (z[k] * p[m + n + k]).conjugate()
                    src, dst = z, (x if z is y else y)
            for k in range(n):
                v = z[k]
                if blue:
                    v = v.conjugate() * p[m + k] * scale
                elif inverse:
                    v = v.conjugate() * scale
                w[a, k, c] = v


def hermitian(w, n):
    """The full spectra (rows, n, 1) of the rows of ``w`` (rows, n // 2 + 1), the
    non-negative frequencies of real signals of length ``n``: the others conjugated."""
    rows, half = w.shape
    full = np.empty((rows, n, 1), np.complex128)
    for r in range(rows):
        for k in range(half):
            full[r, k, 0] = w[r, k]
        for k in range(half, n):
            full[r, k, 0] = w[r, n - k].conjugate()
    return full


def real_part(full):
    """The real parts of a (rows, n, 1) complex array, as float64 (rows, n): as
    pocketfft's inverse real FFT, the imaginary parts of the zero and Nyquist
    frequencies do not contribute."""
    rows, n, _ = full.shape
    out = np.empty((rows, n), np.float64)
    for r in range(rows):
        for k in range(n):
            out[r, k] = full[r, k, 0].real
    return out


_size = size

# name -> compiled function, callees first: a function compiled later finds its
# compiled callees among this module's globals (``size`` and ``stockham`` are called
# from the others only, and compiled with them).
_ORDER = ("size", "stockham", "lines", "hermitian", "real_part")
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
