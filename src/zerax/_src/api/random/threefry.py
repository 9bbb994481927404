"""JAX's key operations on the threefry2x32 hash (Random123).

The JAX 0.10 algorithms for seeding, splitting, folding in and drawing bits with
``jax_threefry_partitionable=True`` (JAX's default): each output element ``i`` (in
row-major order) hashes the 64-bit counter ``i`` split into (high, low) 32-bit words
with the key's two words, so the result does not depend on how an array is laid out or
partitioned.

The hash itself is the elementwise primitive ``threefry2x32_p`` of
``ops/random_bits.py`` (re-exported here): under ``jit`` its 20 rounds fuse with the
code around them into one loop, and ``vmap`` over keys is its batching rule.  Its
``out`` parameter picks ``"xor"`` (uint32 ``y0 ^ y1``: 32-bit bits) or ``"pair"``
(uint64 ``y0 << 32 | y1``: 64-bit bits and new keys).
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from ...ops import elementwise as ew
from ...ops import shape as sh
from ...ops import slicing
from ...ops.random_bits import U32, U64, threefry2x32, threefry2x32_p  # noqa: F401

# --------------------------------------------------------------------------- counters


def _u32(v):
    return np.array(v, U32)


def hi_lo(pair):
    """Split uint64 values into their (high, low) uint32 words."""
    hi = ew.convert_element_type(ew.shift_right(pair, np.array(32, U64)), U32)
    lo = ew.convert_element_type(pair, U32)
    return hi, lo


def iota_2x32_shape(shape):
    """The row-major index of each element of ``shape`` as a 64-bit counter, in two
    uint32 words (high, low), as JAX's ``iota_2x32_shape``.  The high word of arrays
    under 2**32 elements is a 0-d zero (it broadcasts inside the hash)."""
    shape = tuple(int(d) for d in shape)
    size = math.prod(shape)
    if size <= 2 ** 32:
        lo = sh.reshape(sh.iota(U32, (size,)), shape) if shape else _u32(0)
        return _u32(0), lo
    if size > 2 ** 64:
        raise errors.ZeraxValueError(
            f"random bits: an array of {size} elements exceeds 2**64 counters.")
    return hi_lo(sh.reshape(sh.iota(U64, (size,)), shape))


# --------------------------------------------------------------------------- key operations

def _words(key):
    """A raw key's two uint32 words (0-d each)."""
    w0 = sh.reshape(slicing.slice_p_bind(key, (0,), (1,)), ())
    w1 = sh.reshape(slicing.slice_p_bind(key, (1,), (2,)), ())
    return w0, w1


def _stack_words(hi, lo):
    shape = tuple(hi.shape)
    return sh.concatenate([sh.reshape(hi, shape + (1,)), sh.reshape(lo, shape + (1,))],
                          len(shape))


def threefry_seed(seed):
    """A raw key ``[seed >> 32, seed & 0xFFFFFFFF]`` from an integer scalar (its 64 bits,
    two's complement for negative seeds), as JAX's ``threefry_seed``."""
    dt = np.dtype(seed.dtype)
    if dt.itemsize * 8 > 32:
        u = seed if dt.kind == "u" else ew.convert_element_type(seed, np.dtype(f"u{dt.itemsize}"))
        hi = ew.convert_element_type(ew.shift_right(u, np.array(32, u.dtype)), U32)
        lo = ew.convert_element_type(u, U32)
    else:
        # a seed of 32 bits or fewer: JAX's logical shift by 32 in the seed's own dtype
        # gives 0, and the low word is the seed's bits (two's complement)
        hi = _u32(0)
        lo = ew.convert_element_type(seed, U32)
    return sh.concatenate([sh.reshape(hi, (1,)), sh.reshape(lo, (1,))], 0)


def threefry_split(key, shape):
    """``split`` of one raw key into keys of ``shape`` (uint32[*shape, 2])."""
    k0, k1 = _words(key)
    c_hi, c_lo = iota_2x32_shape(shape)
    pair = threefry2x32(k0, k1, c_hi, c_lo, "pair")
    if not tuple(shape):
        pair = sh.reshape(pair, ()) if pair.shape else pair
    if tuple(pair.shape) != tuple(shape):
        pair = sh.broadcast_in_dim(pair, tuple(shape), ())
    return _stack_words(*hi_lo(pair))


def threefry_fold_in(key, data):
    """``fold_in``: hash the counter pair (0, data) with the key (JAX's
    ``threefry_2x32(key, threefry_seed(data))`` on the two-element count)."""
    k0, k1 = _words(key)
    pair = threefry2x32(k0, k1, _u32(0), data, "pair")
    hi, lo = hi_lo(pair)
    return sh.concatenate([sh.reshape(hi, (1,)), sh.reshape(lo, (1,))], 0)


def threefry_random_bits(key, bit_width, shape):
    """Random bits of ``bit_width`` (8, 16, 32, 64) and ``shape`` from one raw key."""
    shape = tuple(int(d) for d in shape)
    k0, k1 = _words(key)
    c_hi, c_lo = iota_2x32_shape(shape)
    out = threefry2x32(k0, k1, c_hi, c_lo, "pair" if bit_width == 64 else "xor")
    if tuple(out.shape) != shape:   # shape () (a 0-d counter)
        out = sh.reshape(out, shape)
    if bit_width in (8, 16):
        out = ew.convert_element_type(out, np.dtype(f"u{bit_width // 8}"))
    return out
