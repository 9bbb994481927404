"""PRNG keys: typed key arrays, raw uint32[2] keys, and the functions on them.

Owns `PRNGKeyArray` (JAX's typed keys: an array whose elements are keys, dtype
``key<fry>``; a pytree node with one leaf, its uint32[..., 2] data, so jit, vmap, grad,
scan and fori_loop carry it like any array), the key constructors (`key`, `PRNGKey`),
`key_data`, `wrap_key_data`, `key_impl`, `split`, `fold_in`, `clone` and `bits`, and
`check_key`, which every sampler calls to accept either kind of key.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .... import errors
from ...base import dtypes
from ...core.api_util import as_input
from ...core.array import Array
from ...core.core import Tracer
from ...core.tree import register_pytree_node
from ... import numpy as jnp
from . import eager
from . import threefry as tf

IMPL_NAME = "threefry2x32"


class KeyDtype:
    """The dtype of typed keys: ``key<fry>`` (threefry2x32), as JAX prints it."""

    name = "key<fry>"
    impl = IMPL_NAME

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDtype) or other == self.name

    def __hash__(self):
        return hash(self.name)


KEY_DTYPE = KeyDtype()


def _no_arithmetic(op):
    def method(self, *args, **kwargs):
        raise errors.KeyTypeError(
            f"operator {op} is not defined on typed PRNG keys (dtype key<fry>): keys are "
            "not numbers. Derive new keys with zerax.random.split or fold_in, or take "
            "their uint32 data with zerax.random.key_data(key).")
    return method


class PRNGKeyArray:
    """An array of threefry2x32 keys (JAX's typed key array, dtype ``key<fry>``).

    Its shape is its data's without the trailing 2; it indexes, reshapes and transposes
    like an array, and it passes through every transform as a pytree with one leaf.

    >>> import zerax.random as zr
    >>> keys = zr.split(zr.key(0), 4)
    >>> keys.shape, keys.dtype, keys[1:3].shape
    ((4,), key<fry>, (2,))
    """

    __slots__ = ("_base",)
    __array_priority__ = 1000   # NumPy defers to our (refusing) operators

    def __init__(self, base):
        self._base = base   # uint32[*shape, 2]: an Array, a tracer (or a pytree stand-in)

    # -- array-like face
    @property
    def dtype(self):
        return KEY_DTYPE

    @property
    def shape(self):
        return tuple(self._base.shape[:-1])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __len__(self):
        if not self.shape:
            raise errors.ZeraxTypeError("len() of an unsized key array (shape ()).")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise errors.ZeraxTypeError("iteration over a 0-d key array.")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        if isinstance(idx, PRNGKeyArray):
            raise errors.KeyTypeError("a key array cannot index another array.")
        if not isinstance(idx, tuple):
            idx = (idx,)
        if not self.shape and any(i is not None and i is not Ellipsis for i in idx):
            raise errors.ZeraxIndexError("a 0-d key array cannot be indexed.")
        return PRNGKeyArray(self._base[idx + (slice(None),)])

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(operator.index(d) for d in shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        return PRNGKeyArray(self._base.reshape(shape + (2,), order=order))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        n = self.ndim
        axes = tuple(range(n))[::-1] if not axes else tuple(a % n if n else a for a in axes)
        return PRNGKeyArray(self._base.transpose(axes + (n,)))

    @property
    def T(self):
        return self.transpose()

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        return PRNGKeyArray(self._base.squeeze(axis))

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(jnp.equal(self._base, other._base), axis=-1)

    def __ne__(self, other):
        eq = self.__eq__(other)
        if eq is NotImplemented:
            return eq
        return jnp.logical_not(eq)

    __hash__ = None

    def __repr__(self):
        if isinstance(self._base, (Array, np.ndarray)):
            data = np.asarray(self._base)
            return (f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{data}")
        return f"PRNGKeyArray(shape={self.shape}, dtype={KEY_DTYPE}, data={self._base!r})"

    def __array__(self, dtype=None, copy=None):
        raise errors.KeyTypeError(
            "a typed PRNG key array cannot become a NumPy array; take its data with "
            "zerax.random.key_data(key).")

    for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv",
                "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul",
                "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rshift", "lt", "le",
                "gt", "ge", "neg", "pos", "abs", "invert"):
        locals()[f"__{_op}__"] = _no_arithmetic(f"__{_op}__")
    del _op

    def __float__(self):
        raise errors.KeyTypeError("a PRNG key is not a number.")

    __int__ = __index__ = __bool__ = __float__


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None),
                     lambda aux, children: PRNGKeyArray(children[0]))


# --------------------------------------------------------------------------- checking keys

def _raw_key_data(key, name):
    """Validate raw key data (uint32[..., 2]) and return it as a zerax value."""
    if isinstance(key, (Array, Tracer, np.ndarray)):
        data = key if not isinstance(key, np.ndarray) else as_input(key, name)
    elif isinstance(key, (list, tuple)):
        data = as_input(key, name)
    else:
        raise errors.KeyTypeError(
            f"{name}: expected a PRNG key (zerax.random.key(seed) or "
            f"zerax.random.PRNGKey(seed)), got {type(key).__name__} ({key!r:.60}).")
    shape, dt = tuple(data.shape), np.dtype(data.dtype)
    if not shape or shape[-1] != 2 or dt != np.uint32:
        raise errors.KeyTypeError(
            f"{name}: a raw PRNG key must be a uint32 array of shape (2,) (or (..., 2) for "
            f"several keys); got {dt.name}{list(shape)}. Make keys with "
            "zerax.random.key(seed) or zerax.random.PRNGKey(seed).")
    return data


def check_key(name, key, allow_batched=False):
    """``(uint32[..., 2] data, was_typed)`` of a typed or raw key; a single key unless
    ``allow_batched``."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base, True
    else:
        data, typed = _raw_key_data(key, f"{name}: key"), False
    if not allow_batched and len(data.shape) != 1:
        raise errors.KeyTypeError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{tuple(data.shape[:-1])} != (). Use zerax.vmap for batching.")
    return data, typed


def _return_keys(data, typed):
    return PRNGKeyArray(data) if typed else data


def _check_impl(impl, name):
    if impl is None:
        return
    spec = impl.impl if isinstance(impl, KeyDtype) else impl
    if spec not in (IMPL_NAME, "fry", "key<fry>"):
        raise errors.ZeraxValueError(
            f"{name}: unrecognized PRNG implementation {impl!r}; zerax implements "
            f'"{IMPL_NAME}" (JAX\'s default).')


# --------------------------------------------------------------------------- constructors

def _seed_value(seed, name):
    if isinstance(seed, PRNGKeyArray):
        raise errors.KeyTypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, int):
        if not -2 ** 63 <= seed < 2 ** 64:
            raise errors.SeedOverflowError(
                f"{name}: seed {seed} does not fit in 64 bits; use a seed in "
                "[-2**63, 2**64 - 1] (for example seed % 2**64).")
        if not dtypes.x64_enabled():   # JAX's 32-bit mode: the seed's low 32 bits
            return as_input(np.uint32(seed % 2 ** 32), name)
        return as_input(np.int64(seed) if seed < 2 ** 63 else np.uint64(seed), name)
    if isinstance(seed, float) or not hasattr(seed, "dtype") and not isinstance(
            seed, (np.generic, np.ndarray, Array, Tracer)):
        raise errors.ZeraxTypeError(
            f"{name}: the seed must be an integer, got {type(seed).__name__} "
            f"({seed!r:.40}). Pass an int (e.g. int(seed)).")
    value = seed if isinstance(seed, (Array, Tracer)) else as_input(seed, f"{name} seed")
    if value.shape:
        raise errors.ZeraxTypeError(
            f"{name} accepts a scalar seed, but was given an array of shape "
            f"{tuple(value.shape)} != (). Use zerax.vmap for batching.")
    if np.dtype(value.dtype).kind not in "iu":
        raise errors.ZeraxTypeError(
            f"{name}: the seed must be an integer, got dtype {np.dtype(value.dtype).name}. "
            "Convert it first (e.g. seed.astype(int)).")
    return value


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed PRNG key (dtype ``key<fry>``, shape ()) from an integer seed, as JAX's
    ``jax.random.key``.

    >>> import zerax.random as zr
    >>> zr.key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
    """
    if impl is not None and dtype is not None:
        raise errors.ZeraxValueError("key: specify at most one of impl and dtype.")
    _check_impl(impl if impl is not None else dtype, "key")
    return PRNGKeyArray(tf.threefry_seed(_seed_value(seed, "key")))


def PRNGKey(seed, *, impl=None):  # noqa: N802 (JAX's name)
    """A raw PRNG key: the uint32[2] array ``[seed >> 32, seed & 0xFFFFFFFF]``, as JAX's
    ``jax.random.PRNGKey``.

    >>> import zerax.random as zr
    >>> zr.PRNGKey(-1)
    Array([4294967295, 4294967295], dtype=uint32)
    """
    _check_impl(impl, "PRNGKey")
    return tf.threefry_seed(_seed_value(seed, "PRNGKey"))


def key_data(keys):
    """The uint32[..., 2] data of typed keys (raw keys are returned as they are).

    >>> import zerax.random as zr
    >>> zr.key_data(zr.key(7))
    Array([0, 7], dtype=uint32)
    """
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys from uint32[..., 2] data (the inverse of `key_data`).

    >>> import numpy as np, zerax.random as zr
    >>> zr.wrap_key_data(np.zeros((3, 2), np.uint32)).shape
    (3,)
    """
    if impl is not None and dtype is not None:
        raise errors.ZeraxValueError("wrap_key_data: specify at most one of impl and dtype.")
    _check_impl(impl if impl is not None else dtype, "wrap_key_data")
    if isinstance(key_bits_array, PRNGKeyArray):
        raise errors.KeyTypeError("wrap_key_data takes uint32 data, got typed keys.")
    return PRNGKeyArray(_raw_key_data(key_bits_array, "wrap_key_data"))


def key_impl(keys) -> str:
    """The name of the keys' PRNG implementation: ``"threefry2x32"``.

    >>> import zerax.random as zr
    >>> zr.key_impl(zr.key(0))
    'threefry2x32'
    """
    check_key("key_impl", keys, allow_batched=True)
    return IMPL_NAME


# --------------------------------------------------------------------------- derivation

def split(key, num=2):
    """Split a key into ``num`` new keys (``num`` an int or a shape), as JAX's
    ``jax.random.split``: typed keys give typed keys, raw keys raw keys.

    >>> import zerax.random as zr
    >>> zr.split(zr.PRNGKey(0), 2)
    Array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    data, typed = check_key("split", key)
    if isinstance(num, Sequence):
        shape = tuple(num)
    else:
        shape = (num,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"split: num must be an int or a tuple of ints, got {num!r:.40}.") from None
    if any(d < 0 for d in shape):
        raise errors.ZeraxValueError(f"split: num must be non-negative, got {num!r}.")
    words = eager.concrete_key(data)
    if words is not None:   # a concrete key: one compiled call (see eager.py)
        return _return_keys(eager.run(("split", shape), lambda d: tf.threefry_split(d, shape),
                                      (words,)), typed)
    return _return_keys(tf.threefry_split(data, shape), typed)


def fold_in(key, data):
    """A new key from ``key`` and an integer scalar ``data`` (its low 32 bits), as JAX's
    ``jax.random.fold_in``.

    >>> import zerax.random as zr
    >>> zr.fold_in(zr.PRNGKey(0), 1)
    Array([ 928981903, 3453687069], dtype=uint32)
    """
    kdata, typed = check_key("fold_in", key)
    if isinstance(data, PRNGKeyArray):
        raise errors.KeyTypeError("fold_in: data must be an integer, got a PRNG key.")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2 ** 32:   # JAX converts a Python int with uint32 bounds
            raise errors.SeedOverflowError(
                f"fold_in: data {data} is out of bounds for uint32; pass an int in "
                "[0, 2**32 - 1] (or a NumPy integer, whose low 32 bits are used).")
        d = as_input(np.uint32(data), "fold_in data")
    else:
        d = as_input(data, "fold_in data")
        if d.shape:
            raise errors.ZeraxTypeError(
                "fold_in accepts a scalar, but was given an array of shape "
                f"{tuple(d.shape)} != (). Use zerax.vmap for batching.")
        if np.dtype(d.dtype).kind not in "biu":
            raise errors.ZeraxTypeError(
                f"fold_in: data must be an integer, got dtype {np.dtype(d.dtype).name}.")
        d = tf.ew.convert_element_type(d, tf.U32)
    words = eager.concrete_key(kdata)
    if words is not None and not isinstance(d, Tracer):
        return _return_keys(eager.run(("fold_in",), tf.threefry_fold_in,
                                      (words, np.asarray(d, np.uint32))), typed)
    return _return_keys(tf.threefry_fold_in(kdata, d), typed)


def clone(key):
    """The same key (JAX's ``clone``: a no-op without stateful key implementations).

    >>> import zerax.random as zr
    >>> zr.clone(zr.PRNGKey(3))
    Array([0, 3], dtype=uint32)
    """
    if isinstance(key, PRNGKeyArray):
        return PRNGKeyArray(key._base)
    return _raw_key_data(key, "clone: key")


def canonical_shape(shape, name):
    if type(shape) is tuple:   # the common case, quickly (a loop: no generator per call)
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    if isinstance(shape, Sequence):
        dims = tuple(shape)
    else:
        dims = (shape,)
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"{name}: shape must be a tuple of ints, got {shape!r:.60}.") from None
    if any(d < 0 for d in dims):
        raise errors.ZeraxValueError(f"{name}: shape {dims} has a negative dimension.")
    return dims


def random_bits(data, bit_width, shape):
    return tf.threefry_random_bits(data, bit_width, shape)


def bits(key, shape=(), dtype=None):
    """Uniform random bits of an unsigned ``dtype``, as JAX's ``jax.random.bits``; the
    default is the mode's default unsigned dtype, uint64 (uint32 with x64 off).

    >>> import numpy as np, zerax.random as zr
    >>> zr.bits(zr.PRNGKey(0), (3,), np.uint32)
    Array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    data, _ = check_key("bits", key)
    dt = dtypes.default_uint() if dtype is None else dtypes.requested(dtype, "bits")
    if dt.kind != "u":
        raise errors.ZeraxValueError(
            f"dtype argument to `bits` must be an unsigned int dtype, got {dt.name}.")
    shape = canonical_shape(shape, "bits")
    return random_bits(data, dt.itemsize * 8, shape)
