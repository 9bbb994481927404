"""The ``threefry2x32`` primitive: the Random123 hash behind ``zerax.random``'s bits.

Declared here with its semantics: the NumPy reference (wrapping uint32 arithmetic), the
shape/dtype rule (the `elementwise` factory: operands of one shape, 0-d ones broadcast),
no derivative (random bits have none) and a batching rule that puts the batch axis last.
The key algorithms built on it (seeding, splitting, folding in, drawing bits) are in
``api/random/threefry.py``; its compiled form (20 rounds of uint32 adds, rotations and xors
on one element, so the hash fuses with the code around it) is in each backend's
``lower_elementwise.py``.

The ``out`` parameter says which combination of the two output words a caller needs, so
one hash per element serves every use: ``"xor"`` (uint32: ``y0 ^ y1``, 32-bit bits) or
``"pair"`` (uint64: ``y0 << 32 | y1``, 64-bit bits and new keys).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.core import bind
from ._factory import elementwise, not_differentiable
from . import shape as sh
from ..interpreters.batching import batch_rules

__all__ = ["threefry2x32", "threefry2x32_p", "ROTATIONS", "PARITY", "U32", "U64"]

# The rotation constants of the two alternating groups of four rounds, and the key
# schedule's parity word (Random123's threefry2x32 with 20 rounds).
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)


def _threefry_numpy(k0, k1, x0, x1):
    """The reference: threefry2x32 on NumPy uint32 arrays (wrapping arithmetic)."""
    k0, k1, x0, x1 = np.broadcast_arrays(*(np.asarray(a, U32) for a in (k0, k1, x0, x1)))
    shape = x0.shape
    # 1-d arrays: uint32 arithmetic on NumPy scalars would warn on (intended) overflow
    k0, k1, x0, x1 = (np.array(a, U32).reshape(-1) for a in (k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    tmp = np.empty_like(x1)
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            x0 += x1
            np.left_shift(x1, np.uint32(r), out=tmp)
            x1 >>= np.uint32(32 - r)
            x1 |= tmp
            x1 ^= x0
        x0 += ks[(block + 1) % 3]
        x1 += ks[(block + 2) % 3]
        x1 += np.uint32(block + 1)
    return x0.reshape(shape), x1.reshape(shape)


def _threefry_impl(k0, k1, x0, x1, *, out):
    y0, y1 = _threefry_numpy(k0, k1, x0, x1)
    if out == "xor":
        return y0 ^ y1
    return (y0.astype(U64) << np.uint64(32)) | y1.astype(U64)


def _threefry_dtype(*avals, out):
    for a in avals:
        if np.dtype(a.dtype) != U32:
            raise errors.ZeraxTypeError(
                f"threefry2x32 takes uint32 operands, got {np.dtype(a.dtype).name}.")
    if out not in ("xor", "pair"):
        raise errors.ZeraxValueError(f"threefry2x32: out must be 'xor' or 'pair', got {out!r}")
    return U32 if out == "xor" else U64


threefry2x32_p = not_differentiable(
    elementwise("threefry2x32", _threefry_impl, 4, dtype_rule=_threefry_dtype),
    "random bits have no derivative")


def threefry2x32(k0, k1, x0, x1, out="pair"):
    """Hash counters ``(x0, x1)`` with key ``(k0, k1)`` (uint32; 0-d operands broadcast).

    ``out="pair"``: uint64 ``y0 << 32 | y1``; ``out="xor"``: uint32 ``y0 ^ y1``.
    """
    return bind(threefry2x32_p, k0, k1, x0, x1, out=out)


def _threefry_batch(args, dims, *, out):
    """vmap: the batch axis goes last.  A sampler's own shape is often small (a few
    numbers per key) and the batch large; with the batch axis innermost, the compiled
    loop nest over the hash and the float arithmetic after it runs along the long axis,
    where it vectorises (vmap moves the axis to the front of the final result)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    rest = ()
    for a, d in zip(args, dims):
        s = tuple(a.shape)
        if d is not None:
            s = s[:d] + s[d + 1:]
        if s:
            rest = s
    full = rest + (size,)
    last = len(rest)
    moved = []
    for a, d in zip(args, dims):
        if d is None:
            if a.shape:
                a = sh.broadcast_in_dim(a, full, tuple(range(last)))
            moved.append(a)          # a 0-d operand broadcasts inside the hash
            continue
        if d != len(a.shape) - 1:
            perm = tuple(i for i in range(len(a.shape)) if i != d) + (d,)
            a = sh.transpose(a, perm)
        if tuple(a.shape) != full:   # a batched 0-d operand (a key word)
            a = sh.broadcast_in_dim(a, full, (last,))
        moved.append(a)
    return threefry2x32(*moved, out=out), last


batch_rules[threefry2x32_p] = _threefry_batch
