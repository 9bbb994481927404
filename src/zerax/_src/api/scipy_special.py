"""SciPy's special functions on zerax values (the `zerax.scipy.special` namespace).

Compositions of primitives (erf, lgamma, digamma and polygamma are primitives).
"""

from __future__ import annotations

import math

import numpy as np

from .. import numpy as jnp
from ..core.core import bind
from .custom import custom_jvp
from ..numpy._util import as_dtype, check_arg, numpy_result_dtype
from ..ops import elementwise as ew
from ..ops.misc import stop_gradient

__all__ = ["erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma", "expit", "logit",
           "xlogy", "xlog1py", "logsumexp", "ndtr", "softmax", "log_softmax"]


def _float(x, fname):
    x = check_arg(x, fname)
    dtype = numpy_result_dtype(np.sin, x)
    return as_dtype(x, dtype)


def erf(x):
    """The error function.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.erf(0.5)), 6)
    0.5205
    """
    return bind(ew.erf_p, _float(x, "erf"))


def erfc(x):
    """The complementary error function, ``1 - erf(x)`` without cancellation."""
    return bind(ew.erfc_p, _float(x, "erfc"))


def erfinv(x):
    """The inverse of ``erf`` on (-1, 1)."""
    return bind(ew.erf_inv_p, _float(x, "erfinv"))


def gammaln(x):
    """``log|Gamma(x)|``."""
    return bind(ew.lgamma_p, _float(x, "gammaln"))


def digamma(x):
    """The logarithmic derivative of Gamma."""
    return bind(ew.digamma_p, _float(x, "digamma"))


def polygamma(n, x):
    """The n-th derivative of digamma (``n`` a non-negative Python int)."""
    return ew.polygamma(int(n), _float(x, "polygamma"))


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return bind(ew.logistic_p, _float(x, "expit"))


def logit(x):
    """``log(x / (1 - x))``."""
    x = _float(x, "logit")
    return jnp.log(jnp.true_divide(x, jnp.subtract(1, x)))


def _inexact_pair(x, y, fname):
    x, y = check_arg(x, fname), check_arg(y, fname, 1)
    dtype = numpy_result_dtype(np.true_divide, x, y)     # the inexact common type
    return as_dtype(x, dtype), as_dtype(y, dtype)


# Custom JVPs, as in JAX: d/dx is log(y) (or log1p(y)) also where x == 0, which the
# where(x == 0, 0, ...) of the value would otherwise zero.
@custom_jvp
def _xlogy(x, y):
    safe_y = jnp.where(x == 0, 1, y)
    return jnp.where(x == 0, 0, x * jnp.log(safe_y)).astype(x.dtype)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlogy(x, y)
    return out, (x_dot * jnp.log(y) + y_dot * x / y).astype(out.dtype)


@custom_jvp
def _xlog1py(x, y):
    safe_y = jnp.where(x == 0, 0, y)
    return jnp.where(x == 0, 0, x * jnp.log1p(safe_y)).astype(x.dtype)


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlog1py(x, y)
    return out, (x_dot * jnp.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


def xlogy(x, y):
    """``x * log(y)``, 0 where x == 0 (its x-derivative is still ``log(y)``).

    >>> import zerax, zerax.scipy.special as zsp
    >>> float(zsp.xlogy(0.0, 0.0)), round(float(zerax.grad(zsp.xlogy)(0.0, 2.0)), 6)
    (0.0, 0.693147)
    """
    return _xlogy(*_inexact_pair(x, y, "xlogy"))


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where x == 0 (its x-derivative is still ``log1p(y)``)."""
    return _xlog1py(*_inexact_pair(x, y, "xlog1py"))


def ndtr(x):
    """The standard normal cumulative distribution function."""
    x = _float(x, "ndtr")
    return 0.5 * erfc(-x * (1.0 / math.sqrt(2.0)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably; ``where`` leaves elements
    out (JAX's signature).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.logsumexp([1.0, 2.0, 3.0])), 6)
    3.407606
    """
    a = jnp.asarray(a)
    if a.dtype.kind not in "fc":
        a = a.astype(float)
    if where is not None:
        mask = jnp.asarray(where)
        a = jnp.where(mask, a, jnp.asarray(-np.inf, dtype=a.dtype))
        if b is not None:
            b = jnp.where(mask, jnp.asarray(b), 0)
    amax = jnp.max(a, axis=axis, keepdims=True)
    # A shift that is finite even when a whole slice is -inf; it carries no gradient.
    shift = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    e = jnp.exp(a - shift)
    if b is not None:
        e = e * jnp.asarray(b)
    s = jnp.sum(e, axis=axis, keepdims=True)
    sign = jnp.sign(s)
    out = jnp.log(jnp.abs(s)) + shift
    if not keepdims:
        out = jnp.squeeze(out, axis=axis)
        sign = jnp.squeeze(sign, axis=axis)
    if return_sign:
        return out, sign
    return out


def _masked_max(x, axis, where):
    """The max over ``axis`` (kept), of the ``where`` elements only when given; a slice
    with none of them gets -inf; no gradient flows through it."""
    if where is None:
        return stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return stop_gradient(jnp.max(x, axis=axis, keepdims=True, where=where,
                                 initial=-np.inf))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably; with ``where`` (a mask
    broadcastable to ``x``) only those elements count and the others are 0 (JAX's
    ``jax.nn.softmax``).

    >>> import zerax.nn as nn
    >>> nn.softmax([1.0, 2.0, 3.0], where=[True, False, True]).round(4)
    Array([0.1192, 0.    , 0.8808], dtype=float64)
    """
    x = jnp.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    shift = _masked_max(x, axis, where)
    if where is None:
        e = jnp.exp(x - shift)
        return e / jnp.sum(e, axis=axis, keepdims=True)
    mask = jnp.asarray(where)
    e = jnp.where(mask, jnp.exp(jnp.where(mask, x - shift, 0)), 0)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``; with ``where`` only those elements count and
    the others are -inf (JAX's ``jax.nn.log_softmax``).

    >>> import zerax.nn as nn
    >>> nn.log_softmax([0.0, 5.0, 0.0], where=[True, False, True]).round(4)
    Array([-0.6931,    -inf, -0.6931], dtype=float64)
    """
    x = jnp.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    shift = _masked_max(x, axis, where)
    shifted = x - shift
    if where is None:
        return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))
    mask = jnp.asarray(where)
    shifted = jnp.where(mask, shifted, 0)
    total = jnp.sum(jnp.where(mask, jnp.exp(shifted), 0), axis=axis, keepdims=True)
    return jnp.where(mask, shifted - jnp.log(total), -np.inf)
