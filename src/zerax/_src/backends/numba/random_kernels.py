"""Numba kernels of the random samplers' eager paths (``api/random/eager.py``), reached
through the backend object (``backend.random_kernels()``).  They are plain functions
here, compiled (or loaded from Numba's disk cache) on first use: loading the backend
must not start Numba's compiler, which a process whose programs all come from the native
cache never needs.  Each follows the
traced sampler operation for operation; tests compare them with ``jit``."""

import threading

import numba as nb
import numpy as np

from ...base.erf_inv_xla import _W5, _W5G, _W16, _W16G, _W625
from .compile import KERNEL_FASTMATH
from .vecmath import log1p

# the jit kernels' flags: LLVM contracts u * (maxval - minval) + minval into an FMA, as
# XLA does for JAX, so uniform equals JAX's and jit's, and normal equals jit's
_FLAGS = set(KERNEL_FASTMATH)
_PARITY = np.uint32(0x1BD11BDA)
_ROT = np.array([13, 15, 26, 6, 17, 29, 16, 24], np.uint32)
_F32MAX = np.float32(np.finfo(np.float32).max)
_F64MAX = np.finfo(np.float64).max


def hash2(k0, k1, x0, x1):
    """threefry2x32 of one counter pair (uint32 arithmetic truncated after each sum)."""
    k2 = np.uint32(k0 ^ k1 ^ _PARITY)
    ks = (k0, k1, k2)
    x0 = np.uint32(x0 + k0)
    x1 = np.uint32(x1 + k1)
    for block in range(5):
        base = (block % 2) * 4
        for j in range(4):
            r = _ROT[base + j]
            x0 = np.uint32(x0 + x1)
            x1 = np.uint32((x1 << r) | (x1 >> (np.uint32(32) - r)))
            x1 = np.uint32(x0 ^ x1)
        x0 = np.uint32(x0 + ks[(block + 1) % 3])
        x1 = np.uint32(x1 + ks[(block + 2) % 3] + np.uint32(block + 1))
    return x0, x1


def pairs(k0, k1, n):
    """split: the hash of counters 0..n-1 (high word, low word)."""
    out = np.empty((n, 2), np.uint32)
    for i in range(n):
        y0, y1 = hash2(k0, k1, np.uint32(i >> 32), np.uint32(i & 0xFFFFFFFF))
        out[i, 0] = y0
        out[i, 1] = y1
    return out


def uniform64(k0, k1, n, lo, hi):
    out = np.empty(n, np.float64)
    scale = hi - lo
    for i in range(n):
        y0, y1 = hash2(k0, k1, np.uint32(i >> 32), np.uint32(i & 0xFFFFFFFF))
        bits = (np.uint64(y0) << np.uint64(32)) | np.uint64(y1)
        # (bits >> 12 | the exponent of 1.0) as a float, minus 1, is exactly m * 2**-52
        f = np.float64(bits >> np.uint64(12)) * 2.0 ** -52
        v = f * scale + lo
        out[i] = v if v > lo else lo
    return out


def uniform32(k0, k1, n, lo, hi):
    out = np.empty(n, np.float32)
    scale = np.float32(hi - lo)
    for i in range(n):
        y0, y1 = hash2(k0, k1, np.uint32(i >> 32), np.uint32(i & 0xFFFFFFFF))
        bits = np.uint32(y0 ^ y1)
        f = np.float32(np.float32(bits >> np.uint32(9)) * np.float32(2.0 ** -23))
        v = np.float32(np.float32(f * scale) + lo)
        out[i] = v if v > lo else lo
    return out


def erf_inv32(x):
    # log1p in float64, rounded: as the jit lowering of log1p on float32
    w = np.float32(-np.float32(log1p(np.float64(-np.float32(x * x)))))
    if w < np.float32(5.0):
        w = np.float32(w - np.float32(2.5))
        p = np.float32(_W5[0])
        for i in range(1, 9):
            p = np.float32(np.float32(_W5[i]) + np.float32(p * w))
    else:
        w = np.float32(np.sqrt(w) - np.float32(3.0))
        p = np.float32(_W5G[0])
        for i in range(1, 9):
            p = np.float32(np.float32(_W5G[i]) + np.float32(p * w))
    if abs(x) == np.float32(1.0):
        return np.float32(x * _F32MAX)
    return np.float32(p * x)


def erf_inv64(x):
    w = -log1p(-(x * x))
    lt6 = w < 6.25
    lt16 = w < 16.0
    if lt6:
        w = w - 3.125
    else:
        w = np.sqrt(w) - (3.25 if lt16 else 5.0)
    p = _W625[0] if lt6 else (_W16[0] if lt16 else _W16G[0])
    for i in range(1, 17):
        c = _W625[i] if lt6 else (_W16[i] if lt16 else _W16G[i])
        p = c + p * w
    for i in range(17, 19):
        if lt16:
            c = _W625[i] if lt6 else _W16[i]
            p = c + p * w
    for i in range(19, 23):
        if lt6:
            p = _W625[i] + p * w
    if abs(x) == 1.0:
        return x * _F64MAX
    return p * x


def normal64(k0, k1, n, lo):
    u = uniform64(k0, k1, n, lo, 1.0)
    s = np.sqrt(2.0)
    for i in range(n):
        u[i] = s * erf_inv64(u[i])
    return u


def normal32(k0, k1, n, lo):
    u = uniform32(k0, k1, n, lo, np.float32(1.0))
    s = np.float32(np.sqrt(2.0))
    for i in range(n):
        u[i] = np.float32(s * erf_inv32(u[i]))
    return u


# name -> njit options, callees first: a kernel compiled later finds the compiled
# callees among this module's globals
_KERNELS = (
    ('hash2', dict(error_model="numpy")),
    ('pairs', dict(error_model="numpy")),
    ('uniform64', dict(fastmath=_FLAGS, error_model="numpy")),
    ('uniform32', dict(fastmath=_FLAGS, error_model="numpy")),
    ('erf_inv32', dict(fastmath=_FLAGS, error_model="numpy")),
    ('erf_inv64', dict(fastmath=_FLAGS, error_model="numpy")),
    ('normal64', dict(fastmath=_FLAGS, error_model="numpy")),
    ('normal32', dict(fastmath=_FLAGS, error_model="numpy")),
)
_compiled: dict = {}
_lock = threading.Lock()


def kernels() -> dict:
    """The compiled kernels by name (compiled on the first call, in this module)."""
    if not _compiled:
        with _lock:
            if not _compiled:
                g = globals()
                for name, options in _KERNELS:
                    g[name] = nb.njit(g[name], cache=True, **options)
                _compiled.update({name: g[name] for name, _ in _KERNELS})
    return _compiled
