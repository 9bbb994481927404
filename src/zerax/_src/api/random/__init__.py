"""The implementation of `zerax.random` (JAX's threefry2x32 PRNG, bit for bit).

threefry: the hash primitive and the key algorithms; keys: typed and raw keys, split,
fold_in, bits; samplers: the distributions built on uniform bits.
"""
