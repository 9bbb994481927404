"""The threefry2x32 hash (Random123) and JAX's key operations built on it.

Owns the ``threefry2x32`` primitive and the JAX 0.10 algorithms for seeding, splitting,
folding in and drawing bits with ``jax_threefry_partitionable=True`` (JAX's default):
each output element ``i`` (in row-major order) hashes the 64-bit counter ``i`` split
into (high, low) 32-bit words with the key's two words, so the result does not depend
on how an array is laid out or partitioned.

The primitive is elementwise (operands of one shape, 0-d ones broadcast), so under
``jit`` the 20 rounds of uint32 adds, rotations and xors fuse with the code around them
into one loop, and ``vmap`` over keys is the elementwise batching rule.  Its ``out``
parameter says which combination of the two output words a caller needs, so one hash
per element serves every use: ``"xor"`` (uint32: ``y0 ^ y1``, 32-bit bits) or
``"pair"`` (uint64: ``y0 << 32 | y1``, 64-bit bits and new keys).
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from ...core.core import bind
from ...ops import elementwise as ew
from ...ops import shape as sh
from ...ops._factory import elementwise, not_differentiable
from ...interpreters.batching import batch_rules

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)


# --------------------------------------------------------------------------- the hash

def _threefry_numpy(k0, k1, x0, x1):
    """The reference: threefry2x32 on NumPy uint32 arrays (wrapping arithmetic)."""
    k0, k1, x0, x1 = np.broadcast_arrays(*(np.asarray(a, U32) for a in (k0, k1, x0, x1)))
    shape = x0.shape
    # 1-d arrays: uint32 arithmetic on NumPy scalars would warn on (intended) overflow
    k0, k1, x0, x1 = (np.array(a, U32).reshape(-1) for a in (k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    tmp = np.empty_like(x1)
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
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


def _threefry_scalar_source():
    """Source of an njit function: threefry2x32 on one element, each sum truncated to
    32 bits (Numba widens uint32 arithmetic to 64 bits)."""
    lines = ["def _threefry_scalar(k0, k1, x0, x1, pair):",
             f"    k2 = np.uint32(k0 ^ k1 ^ np.uint32({_PARITY}))",
             "    x0 = np.uint32(x0 + k0)", "    x1 = np.uint32(x1 + k1)"]
    ks = ("k0", "k1", "k2")
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            lines += ["    x0 = np.uint32(x0 + x1)",
                      f"    x1 = np.uint32((x1 << np.uint32({r})) | (x1 >> np.uint32({32 - r})))",
                      "    x1 = np.uint32(x0 ^ x1)"]
        lines += [f"    x0 = np.uint32(x0 + {ks[(block + 1) % 3]})",
                  f"    x1 = np.uint32(x1 + {ks[(block + 2) % 3]} + np.uint32({block + 1}))"]
    lines += ["    if pair:",
              "        return (np.uint64(x0) << np.uint64(32)) | np.uint64(x1)",
              "    return np.uint64(x0 ^ x1)"]
    return "\n".join(lines)


_SCALAR_FN = []


def _scalar_fn():
    if not _SCALAR_FN:
        import numba
        namespace = {"np": np}
        exec(compile(_threefry_scalar_source(), "<threefry2x32>", "exec"), namespace)  # noqa: S102
        _SCALAR_FN.append(numba.njit(namespace["_threefry_scalar"], cache=False))
    return _SCALAR_FN[0]


def _threefry_lower_scalar(args, in_dtypes, out_dtype, ctx, *, out):
    fn = ctx.helper("_threefry2x32", _scalar_fn())
    a = ", ".join(f"np.uint32({x})" for x in args)
    if out == "xor":
        return f"np.uint32({fn}({a}, False))"
    return f"np.uint64({fn}({a}, True))"


threefry2x32_p.numba_scalar = _threefry_lower_scalar


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
    from ...ops import slicing
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
