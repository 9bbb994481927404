"""The logistic function and computations in the log domain: ``expit``, ``logit``,
``log_expit``, ``xlogy``, ``xlog1py``, ``logsumexp``, ``softmax``, ``log_softmax``
(SciPy's, over every element by default; ``zerax.nn``'s call them with ``axis=-1``), and
the Box-Cox transforms.
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ....base.dtypes import kind as dtype_kind
from ....core.core import bind
from ....numpy._util import as_dtype, check_arg, numpy_result_dtype
from ....ops import elementwise as ew
from ....ops.misc import stop_gradient
from ...custom import custom_jvp
from ._util import _float, _floats


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return bind(ew.logistic_p, _float(x, "expit"))


def logit(x):
    """``log(x / (1 - x))``."""
    x = _float(x, "logit")
    return jnp.log(jnp.true_divide(x, jnp.subtract(1, x)))


def log_expit(x):
    """``log(expit(x))`` without overflow or cancellation.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.log_expit(-800.0)), 6)
    -800.0
    """
    (x,) = _floats("log_expit", x)
    return -jnp.logaddexp(jnp.zeros_like(x), -x)


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


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably; ``where`` leaves elements
    out (JAX's signature).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.logsumexp([1.0, 2.0, 3.0])), 6)
    3.407606
    >>> round(float(zsp.logsumexp([1.0, 2.0, 3.0], where=[True, True, False])), 6)
    2.313262
    """
    a = jnp.asarray(a)
    if dtype_kind(a.dtype) not in "fc":
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


def softmax(x, axis=None, where=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (default: every element, as SciPy), computed
    stably; with ``where`` (a mask broadcastable to ``x``) only those elements count and
    the others are 0 (``zerax.nn.softmax`` is this with ``axis=-1``, JAX's).

    >>> import zerax.scipy.special as zsp
    >>> zsp.softmax([[0.0, 0.0], [0.0, 0.0]])
    Array([[0.25, 0.25],
           [0.25, 0.25]], dtype=float64)
    """
    x = jnp.asarray(x)
    if dtype_kind(x.dtype) not in "fc":
        x = x.astype(float)
    shift = _masked_max(x, axis, where)
    if where is None:
        e = jnp.exp(x - shift)
        return e / jnp.sum(e, axis=axis, keepdims=True)
    mask = jnp.asarray(where)
    e = jnp.where(mask, jnp.exp(jnp.where(mask, x - shift, 0)), 0)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=None, where=None):
    """``x - logsumexp(x)`` over ``axis`` (default: every element, as SciPy); with
    ``where`` only those elements count and the others are -inf (``zerax.nn.log_softmax``
    is this with ``axis=-1``, JAX's).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.log_softmax([1.0, 1.0])[0]), 12)
    -0.69314718056
    """
    x = jnp.asarray(x)
    if dtype_kind(x.dtype) not in "fc":
        x = x.astype(float)
    shift = _masked_max(x, axis, where)
    shifted = x - shift
    if where is None:
        return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))
    mask = jnp.asarray(where)
    shifted = jnp.where(mask, shifted, 0)
    total = jnp.sum(jnp.where(mask, jnp.exp(shifted), 0), axis=axis, keepdims=True)
    return jnp.where(mask, shifted - jnp.log(total), -np.inf)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at lmbda == 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.boxcox(2.0, 0.5)), 12)
    0.828427124746
    """
    x, lmbda = _floats("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small ``x``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.boxcox1p(1.0, 0.5)), 12)
    0.828427124746
    """
    x, lmbda = _floats("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def _boxcox_of_log(logx, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, logx, jnp.expm1(safe * logx) / safe)
