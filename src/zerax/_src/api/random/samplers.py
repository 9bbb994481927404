"""The basic samplers: uniform and the distributions that are a transform of uniform
bits, JAX 0.10's algorithms step for step (so integer results are identical to JAX's,
and floats too where the arithmetic is exact; erf_inv/log/tan agree to a few ulps).

uniform, normal, truncated_normal, bernoulli, rademacher, randint, permutation, choice,
categorical, gumbel, exponential, laplace, logistic, cauchy.  Everything is written with
zerax operations on a key's data, so it runs eagerly and under jit, vmap and grad.
"""

from __future__ import annotations

import math

import numpy as np

from .... import errors
from ...lax import lax
from ... import numpy as jnp
from ...base import dtypes
from ...base.erf_inv_xla import _W5, _W5G, _W16, _W16G, _W625
from ...core.core import Tracer
from ...ops import elementwise as ew
from ...ops.bitcast import bitcast_convert_type
from ...ops.misc import stop_gradient
from . import eager
from . import keys as K
from ._util import (bshape, cast, check_shape, const, float_dtype, inexact_param, int_dtype,
                    param)
from ...base.dtypes import kind as dtype_kind

_FAST = (np.dtype(np.float32), np.dtype(np.float64))   # dtypes of the compiled eager paths
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


def _split2(data):
    keys = K.tf.threefry_split(data, (2,))
    return keys[0], keys[1]


# --------------------------------------------------------------------------- uniform

def _uniform(data, shape, dtype, minval, maxval):
    """JAX's ``_uniform``: mantissa bits under the exponent of 1.0 give [1, 2); minus 1,
    scaled to [minval, maxval), and never below minval."""
    finfo = np.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    minval = cast(minval, dtype)
    maxval = cast(maxval, dtype)
    check_shape("uniform", shape, minval=minval, maxval=maxval)
    bits = K.random_bits(data, rng_bits, shape)
    uint_dtype = _UINT[nbits]
    if rng_bits != nbits:
        bits = cast(bits, uint_dtype)
    float_bits = ew.bitwise_or(
        ew.shift_right(bits, np.array(rng_bits - nmant, uint_dtype)),
        np.array(1.0, dtype).view(uint_dtype))
    floats = ew.sub(bitcast_convert_type(float_bits, dtype), np.array(1.0, dtype))
    # XLA fuses this multiply and add for JAX: one rounding (ops' fma_p)
    out = ew.fma(*jnp.broadcast_arrays(floats, jnp.subtract(maxval, minval), minval))
    return jnp.maximum(minval, bshape(out, shape))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval), as JAX's ``jax.random.uniform``.

    >>> import zerax.random as zr
    >>> zr.uniform(zr.PRNGKey(0), (3,))
    Array([0.41845711, 0.21629545, 0.96532146], dtype=float64)
    """
    data, _ = K.check_key("uniform", key)
    dtype = float_dtype(dtype, "uniform")
    shape = K.canonical_shape(shape, "uniform")
    minval = param(minval, "uniform", "minval")
    maxval = param(maxval, "uniform", "maxval")
    if dtype in _FAST:
        words = eager.concrete_key(data)
        lo, hi = eager.concrete_scalar(minval, dtype), eager.concrete_scalar(maxval, dtype)
        if words is not None and lo is not None and hi is not None \
                and np.isfinite(lo) and np.isfinite(hi):
            return eager.run(("uniform", shape, dtype),
                             lambda d, a, b: _uniform(d, shape, dtype, a, b),
                             (words, np.asarray(lo), np.asarray(hi)))
    return _uniform(data, shape, dtype, minval, maxval)


# --------------------------------------------------------------------------- normal
# erf_inv as XLA computes it for JAX (Giles' polynomials, "Approximating the erfinv
# function", GPU Computing Gems, 2011; coefficients as in XLA's ErfInv32/ErfInv64): the
# same algorithm as JAX's, and plain elementwise arithmetic that fuses and vectorises
# under jit (zerax's general erf_inv evaluates a float64 special function per element).

def _erf_inv(x):
    """erf_inv for float32/float64 ``x`` in [-1, 1] (other dtypes: lax.erf_inv)."""
    dt = np.dtype(x.dtype)
    if dt not in (np.float32, np.float64):
        return lax.erf_inv(x)
    c = lambda v: np.array(v, dt)   # noqa: E731
    w = ew.neg(lax.log1p(ew.neg(ew.mul(x, x))))
    if dt == np.float32:
        lt = ew.lt(w, c(5.0))
        w = ew.select_n(lt, ew.sub(ew.sqrt(w), c(3.0)), ew.sub(w, c(2.5)))
        p = ew.select_n(lt, c(_W5G[0]), c(_W5[0]))
        for lo, hi in zip(_W5[1:], _W5G[1:]):
            p = ew.fma(p, w, ew.select_n(lt, c(hi), c(lo)))   # fused, as XLA does
    else:
        lt_6 = ew.lt(w, c(6.25))
        lt_16 = ew.lt(w, c(16.0))

        def coef(i):
            v = c(_W625[i])
            if i < 19:
                v = ew.select_n(lt_6, c(_W16[i]), v)
            if i < 17:
                v = ew.select_n(lt_16, c(_W16G[i]), v)
            return v

        w = ew.select_n(lt_6, ew.sub(ew.sqrt(w), ew.select_n(lt_16, c(5.0), c(3.25))),
                        ew.sub(w, c(3.125)))
        p = coef(0)
        for i in range(1, 17):       # multiply-adds fused, as XLA does
            p = ew.fma(p, w, coef(i))
        for i in range(17, 19):
            p = ew.select_n(lt_16, p, ew.fma(p, w, coef(i)))
        for i in range(19, 23):
            p = ew.select_n(lt_6, p, ew.fma(p, w, coef(i)))
    result = ew.mul(p, x)
    return ew.select_n(ew.eq(lax.abs(x), c(1.0)), result, ew.mul(x, c(np.finfo(dt).max)))


def _normal_real(data, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform(data, shape, dtype, lo, np.array(1.0, dtype))
    return ew.mul(np.array(np.sqrt(2), dtype), _erf_inv(u))


def _normal(data, shape, dtype):
    if dtype.kind == "c":
        k_re, k_im = _split2(data)
        real = np.dtype(np.array(0, dtype).real.dtype)
        re = cast(_normal_real(k_re, shape, real), dtype)
        im = cast(_normal_real(k_im, shape, real), dtype)
        return jnp.true_divide(jnp.add(re, jnp.multiply(np.array(1j, dtype), im)),
                               np.array(np.sqrt(2), dtype))
    return _normal_real(data, shape, dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal samples (real or complex dtype), as JAX's ``jax.random.normal``.

    >>> import zerax.random as zr
    >>> zr.normal(zr.PRNGKey(0), (2,))
    Array([-0.20584214, -0.78476578], dtype=float64)
    """
    data, _ = K.check_key("normal", key)
    dtype = float_dtype(dtype, "normal", allow_complex=True)
    shape = K.canonical_shape(shape, "normal")
    if dtype in _FAST:
        words = eager.concrete_key(data)
        if words is not None:
            return eager.run(("normal", shape, dtype),
                             lambda d: _normal(d, shape, dtype), (words,))
    return _normal(data, shape, dtype)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples truncated to (lower, upper), as JAX's.

    >>> import zerax.random as zr
    >>> bool((abs(zr.truncated_normal(zr.PRNGKey(0), -1.0, 1.0, (100,))) < 1).all())
    True
    """
    data, _ = K.check_key("truncated_normal", key)
    dtype = float_dtype(dtype, "truncated_normal")
    lower = param(lower, "truncated_normal", "lower")
    upper = param(upper, "truncated_normal", "upper")
    if shape is None:
        shape = jnp.broadcast_shapes(tuple(lower.shape), tuple(upper.shape))
    else:
        shape = K.canonical_shape(shape, "truncated_normal")
        check_shape("truncated_normal", shape, lower=lower, upper=upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = cast(lower, dtype)
    upper = cast(upper, dtype)
    a = lax.erf(jnp.true_divide(lower, sqrt2))
    b = lax.erf(jnp.true_divide(upper, sqrt2))
    u = _uniform(data, shape, dtype, a, b)
    out = jnp.multiply(sqrt2, _erf_inv(u))
    return jnp.clip(out,
                    jnp.nextafter(stop_gradient(lower), np.array(np.inf, dtype)),
                    jnp.nextafter(stop_gradient(upper), np.array(-np.inf, dtype)))


# --------------------------------------------------------------------------- discrete

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p``, as JAX's ``jax.random.bernoulli``.

    >>> import zerax.random as zr
    >>> zr.bernoulli(zr.PRNGKey(0), 0.5, (4,))
    Array([ True,  True, False, False], dtype=bool)
    """
    if mode not in ("high", "low"):
        raise errors.ZeraxValueError(f"bernoulli: got mode={mode!r}, expected 'high' or 'low'.")
    data, _ = K.check_key("bernoulli", key)
    p = param(p, "bernoulli", "p")
    dtype = np.dtype(p.dtype)
    if dtype_kind(dtype) != "f":
        raise errors.ZeraxTypeError(
            f"bernoulli probability `p` must have a floating dtype, got {dtype.name}.")
    if shape is None:
        shape = tuple(p.shape)
    else:
        shape = K.canonical_shape(shape, "bernoulli")
        check_shape("bernoulli", shape, p=p)
    if mode == "high":
        u = _uniform(data, (2, *shape), dtype, np.array(0.0, dtype), np.array(1.0, dtype))
        u1, u2 = u[0], u[1]
        u2 = jnp.multiply(u2, np.array(2.0 ** -np.finfo(dtype).nmant, dtype))
        return jnp.less(u2, jnp.subtract(p, u1))
    u = _uniform(data, shape, dtype, np.array(0.0, dtype), np.array(1.0, dtype))
    return jnp.less(u, p)


def rademacher(key, shape=(), dtype=None):
    """Random signs -1 or +1 with equal probability, as JAX's ``jax.random.rademacher``.

    >>> import zerax.random as zr
    >>> zr.rademacher(zr.PRNGKey(0), (4,))
    Array([ 1,  1, -1, -1], dtype=int64)
    """
    data, _ = K.check_key("rademacher", key)
    dtype = dtypes.default_int() if dtype is None else dtypes.requested(dtype, "rademacher")
    shape = K.canonical_shape(shape, "rademacher")
    b = cast(bernoulli(data, 0.5, shape), dtype)
    return cast(jnp.subtract(jnp.multiply(2, b), 1), dtype)


def _convert_and_clip_integer(val, dtype):
    info_to, info_from = np.iinfo(dtype), np.iinfo(val.dtype)
    lo = const(val, max(info_to.min, info_from.min))
    hi = const(val, min(info_to.max, info_from.max))
    return cast(jnp.clip(val, lo, hi), dtype)


def _as_int(x):
    return x if np.dtype(x.dtype).kind in "iu" else cast(x, np.int64)


def _randint(data, shape, minval, maxval, dtype):
    check_shape("randint", shape, minval=minval, maxval=maxval)
    minval, maxval = _as_int(minval), _as_int(maxval)
    top = np.array(np.iinfo(dtype).max, dtype)
    maxval_out_of_range = jnp.greater(
        maxval, _convert_and_clip_integer(K.tf.sh.reshape(jnp.asarray(top), ()), maxval.dtype))
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    nbits = np.iinfo(dtype).bits
    k1, k2 = _split2(data)
    work = shape or (1,)   # 0-d uint arithmetic on NumPy scalars warns on wrap-around
    higher, lower = K.random_bits(k1, nbits, work), K.random_bits(k2, nbits, work)
    udt = _UINT[nbits]
    minval_b, maxval_b = bshape(minval, work), bshape(maxval, work)
    span = cast(jnp.subtract(maxval_b, minval_b), udt)
    one = np.ones(work, udt)
    span = jnp.where(jnp.less_equal(maxval_b, minval_b), one, span)
    span = jnp.where(jnp.logical_and(bshape(maxval_out_of_range, work),
                                     jnp.greater(maxval_b, minval_b)),
                     ew.add(span, one), span)
    multiplier = ew.rem(np.full(work, 2 ** (nbits // 2), udt), span)
    multiplier = ew.rem(ew.mul(multiplier, multiplier), span)
    offset = ew.add(ew.mul(ew.rem(higher, span), multiplier), ew.rem(lower, span))
    offset = ew.rem(offset, span)
    out = jnp.add(minval_b, cast(offset, dtype))
    return jnp.reshape(out, shape) if not shape else out


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval), as JAX's ``jax.random.randint``.

    >>> import zerax.random as zr
    >>> zr.randint(zr.PRNGKey(0), (5,), 0, 10)
    Array([5, 1, 5, 7, 3], dtype=int64)
    """
    data, _ = K.check_key("randint", key)
    dtype = int_dtype(dtype, "randint")
    shape = K.canonical_shape(shape, "randint")
    minval = param(minval, "randint", "minval")
    maxval = param(maxval, "randint", "maxval")
    info = np.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:
        sampling = np.dtype(np.int32)
        minval = jnp.clip(cast(_as_int(minval), np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(cast(_as_int(maxval), np.int32), int(info.min), int(info.max) + 1)
    return cast(_randint(data, shape, minval, maxval, sampling), dtype)


def _shuffle(data, x, axis):
    exponent = 3   # JAX's choice (enough rounds that 32-bit sort keys rarely tie)
    size = math.prod(x.shape)
    num_rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(num_rounds):
        data, sub = _split2(data)
        sort_keys = K.random_bits(sub, 32, tuple(x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _concrete_int(x, name):
    if isinstance(x, Tracer):
        raise errors.ConcretizationError(
            f"{name}: an integer argument must be concrete (a Python int), not a traced "
            "value; pass it as a static argument.")
    return int(np.asarray(x))


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (an int) or of ``x`` along ``axis``, as JAX's
    ``jax.random.permutation``.

    >>> import zerax.random as zr
    >>> zr.permutation(zr.PRNGKey(0), 5)
    Array([0, 1, 4, 3, 2], dtype=int64)
    """
    data, _ = K.check_key("permutation", key)
    if not isinstance(x, Tracer) and np.ndim(x) == 0:
        xv = param(x, "permutation", "x")
        if np.dtype(xv.dtype).kind not in "iu":
            raise errors.ZeraxTypeError("permutation: x must be an integer or at least "
                                        "1-dimensional.")
        r = _concrete_int(x, "permutation")
        return _shuffle(data, jnp.arange(r), 0)
    x = param(x, "permutation", "x")
    if not x.shape:
        raise errors.ZeraxTypeError("permutation: x must be an integer or at least "
                                    "1-dimensional (a traced 0-d x cannot be a length).")
    axis = _axis(axis, len(x.shape), "permutation")
    if independent or len(x.shape) == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis)


def _axis(axis, ndim, name):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise errors.ZeraxValueError(f"{name}: axis {axis} is out of bounds for {ndim} dims.")
    return axis % ndim


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random draws from ``a`` (an int n means ``arange(n)``), with or without
    replacement and with probabilities ``p``, as JAX's ``jax.random.choice``.

    >>> import zerax.random as zr
    >>> zr.choice(zr.PRNGKey(0), 5, (3,), replace=False)
    Array([0, 1, 4], dtype=int64)
    """
    data, _ = K.check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise errors.ZeraxTypeError(
            f"shape argument of zerax.random.choice must be a sequence, got {shape!r:.40}.")
    shape = K.canonical_shape(shape, "choice")
    arr = param(a, "choice", "a")
    if not arr.shape:
        n_inputs = _concrete_int(a, "choice")
    else:
        axis = _axis(axis, len(arr.shape), "choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise errors.ZeraxValueError("choice: a must be greater than 0 unless no samples "
                                     "are taken.")
    if not replace and n_draws > n_inputs:
        raise errors.ZeraxValueError(
            f"choice: cannot take a larger sample (size {n_draws}) than population (size "
            f"{n_inputs}) when replace=False; pass replace=True or draw fewer.")
    if p is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
            result = ind if not arr.shape else jnp.take(arr, ind, axis)
        else:
            perm = permutation(data, n_inputs if not arr.shape else arr, axis)
            slices = (slice(None),) * (axis if arr.shape else 0) + (slice(n_draws),)
            result = perm[slices]
    else:
        p_arr = param(p, "choice", "p")
        p_arr = inexact_param(p_arr)
        if tuple(p_arr.shape) != (n_inputs,):
            raise errors.ShapeError(
                "choice: p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = jnp.multiply(p_cuml[-1],
                             jnp.subtract(1, uniform(data, shape, dtype=p_cuml.dtype)))
            ind = jnp.searchsorted(p_cuml, r).astype(dtypes.default_int())
        else:
            g = jnp.add(gumbel(data, (n_inputs,), dtype=p_arr.dtype, mode=mode),
                        jnp.log(p_arr))
            ind = lax.top_k(g, n_draws)[1].astype(dtypes.default_int())
        result = ind if not arr.shape else jnp.take(arr, ind, axis)
    out_shape = shape if not arr.shape else \
        tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    return jnp.reshape(result, out_shape)


# --------------------------------------------------------------------------- simple transforms

def _unit(name, key, shape, dtype):
    data, _ = K.check_key(name, key)
    return data, K.canonical_shape(shape, name), float_dtype(dtype, name)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples, as JAX's ``jax.random.gumbel`` (``mode`` "low" by
    default; "high" and "highest" for a higher dynamic range in the tails).

    >>> import zerax.random as zr
    >>> zr.gumbel(zr.PRNGKey(0), (2,)).shape
    (2,)
    """
    data, shape, dtype = _unit("gumbel", key, shape, dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise errors.ZeraxValueError(
            f"gumbel: mode must be 'low', 'high' or 'highest', got {mode!r}.")
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest32(data, shape)
    info = np.finfo(dtype)
    if mode in ("high", "highest"):
        u = _uniform(data, (2,) + shape, dtype, np.array(0.0, dtype), np.array(1.0, dtype))
        high, low = u[0], u[1]
        x = jnp.where(jnp.greater_equal(high, np.array(0.5, dtype)), high,
                      jnp.add(jnp.add(high, jnp.multiply(np.array(2.0 ** -info.nmant, dtype),
                                                         low)), np.array(info.tiny, dtype)))
        return jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x)))))
    u = _uniform(data, shape, dtype, np.array(info.tiny, dtype), np.array(1.0, dtype))
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


def _shl(x, n):
    """x << n with XLA's semantics: 0 for shifts of the bit width or more."""
    u = np.dtype(x.dtype)
    big = ew.ge(n, np.array(32, u))
    return ew.select_n(big, ew.shift_left(x, ew.select_n(big, n, np.zeros((), u))),
                       jnp.zeros_like(x))


def _safe_int_to_float(hi, lo):
    """JAX's ``_safe_int_to_float``: a 64-bit fixed-point fraction (hi, lo words) to the
    nearest-below float32, keeping the precision of its leading bits."""
    u32 = np.dtype(np.uint32)
    finfo = np.finfo(np.float32)
    c = lambda v: np.array(v, u32)   # noqa: E731
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    hi_is_zero = ew.eq(hiclz, c(32))
    mantissa = ew.bitwise_or(
        _shl(hi, hiclz),
        ew.select_n(hi_is_zero, lax.shift_right_logical(lo, ew.sub(c(finfo.bits), hiclz)),
                    _shl(lo, loclz)))
    mantissa = lax.shift_right_logical(mantissa, c(finfo.bits - finfo.nmant - 1))
    mantissa = ew.bitwise_and(mantissa, c((1 << finfo.nmant) - 1))
    lead = ew.select_n(hi_is_zero, hiclz, ew.add(c(32), loclz))
    exp = _shl(ew.sub(c(-finfo.minexp), lead), c(finfo.nmant))
    exp = ew.bitwise_and(exp, c((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1))))
    return bitcast_convert_type(ew.bitwise_or(exp, mantissa), np.float32)


def _gumbel_highest32(data, shape):
    """JAX's float32 ``mode="highest"`` Gumbel: 64 random bits per sample."""
    u32 = np.dtype(np.uint32)
    bits = K.random_bits(data, 32, (2,) + shape)
    b0, b1 = bits[0], bits[1]
    neg = ew.bitwise_not(bits)
    n0, n1 = neg[0], neg[1]
    carry = cast(ew.eq(n1, np.array(0xFFFFFFFF, u32)), u32)
    n0 = ew.add(n0, carry)
    n1 = ew.add(n1, np.array(1, u32))
    flip = ew.lt(b0, np.array(1 << 31, u32))
    x = _safe_int_to_float(ew.select_n(flip, n0, b0), ew.select_n(flip, n1, b1))
    return jnp.where(flip, jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x))))),
                     jnp.negative(jnp.log(jnp.negative(jnp.log(x)))))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Samples of category indices from unnormalised log-probabilities ``logits`` along
    ``axis``, as JAX's ``jax.random.categorical`` (the Gumbel-max trick).

    >>> import numpy as np, zerax.random as zr
    >>> zr.categorical(zr.PRNGKey(0), np.log(np.array([0.1, 0.2, 0.7])), shape=(4,)).shape
    (4,)
    """
    data, _ = K.check_key("categorical", key)
    logits = param(logits, "categorical", "logits")
    ndim = len(logits.shape)
    axis = _axis(axis, ndim, "categorical") if ndim else 0
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = K.canonical_shape(shape, "categorical")
        if shape[len(shape) - len(batch_shape):] != batch_shape:
            raise errors.ShapeError(
                f"categorical: shape {shape} must end with the logits' batch shape "
                f"{batch_shape} (logits.shape without axis {axis}).")
    prefix = shape[:len(shape) - len(batch_shape)]
    dtype = np.dtype(logits.dtype)
    if dtype_kind(dtype) != "f":
        logits = inexact_param(logits)
        dtype = np.dtype(logits.dtype)
    if replace:
        neg_axis = axis - ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(neg_axis % ndim, logits.shape[neg_axis])
        g = gumbel(data, (*prefix, *logits_shape), dtype, mode=mode)
        expanded = jnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape))
        return jnp.argmax(jnp.add(g, expanded), axis=neg_axis)
    logits = jnp.add(logits, gumbel(data, tuple(logits.shape), dtype, mode=mode))
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise errors.ZeraxValueError(
            f"categorical: number of samples without replacement ({k}) cannot exceed the "
            f"number of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    nd = len(indices.shape)
    indices = jnp.transpose(indices, (nd - 1, *range(nd - 1)))
    return jnp.reshape(indices, shape)   # int32, as top_k gives (and JAX returns)


def exponential(key, shape=(), dtype=None):
    """Standard exponential samples, as JAX's ``jax.random.exponential``.

    >>> import zerax.random as zr
    >>> bool((zr.exponential(zr.PRNGKey(0), (10,)) > 0).all())
    True
    """
    data, shape, dtype = _unit("exponential", key, shape, dtype)
    u = _uniform(data, shape, dtype, np.array(0.0, dtype), np.array(1.0, dtype))
    return jnp.negative(jnp.log1p(jnp.negative(u)))


def laplace(key, shape=(), dtype=None):
    """Standard Laplace samples, as JAX's ``jax.random.laplace``.

    >>> import zerax.random as zr
    >>> zr.laplace(zr.PRNGKey(0), (3,)).shape
    (3,)
    """
    data, shape, dtype = _unit("laplace", key, shape, dtype)
    lo = np.array(-1.0 + np.finfo(dtype).epsneg, dtype)
    u = _uniform(data, shape, dtype, lo, np.array(1.0, dtype))
    return jnp.multiply(jnp.sign(u), jnp.log1p(jnp.negative(jnp.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples, as JAX's ``jax.random.logistic``.

    >>> import zerax.random as zr
    >>> zr.logistic(zr.PRNGKey(0), (3,)).shape
    (3,)
    """
    data, shape, dtype = _unit("logistic", key, shape, dtype)
    x = _uniform(data, shape, dtype, np.array(np.finfo(dtype).tiny, dtype),
                 np.array(1.0, dtype))
    return jnp.subtract(jnp.log(x), jnp.log1p(jnp.negative(x)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples, as JAX's ``jax.random.cauchy``.

    >>> import zerax.random as zr
    >>> zr.cauchy(zr.PRNGKey(0), (3,)).shape
    (3,)
    """
    data, shape, dtype = _unit("cauchy", key, shape, dtype)
    u = _uniform(data, shape, dtype, np.array(np.finfo(dtype).eps, dtype), np.array(1.0, dtype))
    return jnp.tan(jnp.multiply(np.array(np.pi, dtype), jnp.subtract(u, np.array(0.5, dtype))))
