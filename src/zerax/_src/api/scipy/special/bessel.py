"""Bessel functions: ``j0``, ``j1``, ``y0``, ``y1``, ``jv``/``jn``, ``yn``, the modified
``i0``, ``i0e``, ``i1``, ``i1e``, ``iv``, ``ive``, and JAX's ``bessel_jn``.

The kernels are the primitives of ``ops/special_ops.py`` (scalar code in
``base/special_kernels.py`` and ``base/special_bessel_order.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ..... import errors
from .... import numpy as jnp
from ....base.dtypes import kind as dtype_kind
from ....lax import control_flow as lax
from ....ops import special_ops as so
from ._util import _const, _floats


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i0e(1.0)), 12)
    0.465759607594
    """
    (x,) = _floats("i0e", x)
    return so.bessel_i0e(x)


def i0(x):
    """The modified Bessel function of order 0.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i0(1.0)), 12)
    1.266065877752
    """
    (x,) = _floats("i0", x)
    return jnp.exp(jnp.abs(x)) * so.bessel_i0e(x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i1e(1.0)), 12)
    0.20791041535
    """
    (x,) = _floats("i1e", x)
    return so.bessel_i1e(x)


def i1(x):
    """The modified Bessel function of order 1.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.i1(1.0)), 12)
    0.565159103992
    """
    (x,) = _floats("i1", x)
    return jnp.exp(jnp.abs(x)) * so.bessel_i1e(x)


def j0(x):
    """The Bessel function of the first kind of order 0.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.j0(1.0)), 12)
    0.765197686558
    """
    (x,) = _floats("j0", x)
    return so.bessel_j0(x)


def j1(x):
    """The Bessel function of the first kind of order 1.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.j1(1.0)), 12)
    0.440050585745
    """
    (x,) = _floats("j1", x)
    return so.bessel_j1(x)


def y0(x):
    """The Bessel function of the second kind of order 0 (nan for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.y0(1.0)), 12)
    0.088256964216
    """
    (x,) = _floats("y0", x)
    return so.bessel_y0(x)


def y1(x):
    """The Bessel function of the second kind of order 1 (nan for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.y1(1.0)), 12)
    -0.7812128213
    """
    (x,) = _floats("y1", x)
    return so.bessel_y1(x)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """``J_0(z), ..., J_v(z)`` stacked on a new first axis, by Miller's backward recurrence
    from order ``n_iter + 1`` normalised with ``J_0 + 2 sum_k J_2k = 1`` (JAX's algorithm:
    accurate while ``|z|`` is well below ``n_iter``; below 1e-3 the leading terms of the
    power series, which the recurrence would overflow on; ``J_k(0)`` exactly).

    >>> import zerax.scipy.special as zsp
    >>> [round(float(j), 12) for j in zsp.bessel_jn(1.0, v=2)]
    [0.765197686558, 0.440050585745, 0.114903484932]
    """
    v, n_iter = int(v), int(n_iter)
    if v < 0 or n_iter < v:
        raise errors.ZeraxValueError(f"zerax.scipy.special.bessel_jn: need 0 <= v <= n_iter, "
                                     f"got v={v}, n_iter={n_iter}")
    (z,) = _floats("bessel_jn", z)
    tiny = jnp.abs(z) < 1e-3
    zs = jnp.where(tiny, _const(z, 1.0), z)
    f0, f1 = jnp.zeros_like(zs), jnp.full_like(zs, 1e-16)
    bs = jnp.zeros_like(zs)
    vals = [None] * (v + 1)
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1) * f1 / zs - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        if k <= v:
            vals[k] = f
        f0, f1 = f1, f
    norm = bs - f1                     # f1 is F_0 after the loop
    half = 0.5 * z
    out = []
    for k in range(v + 1):
        series = half ** k / math.factorial(k) * (1.0 - half * half / (k + 1))
        out.append(jnp.where(tiny, series, vals[k] / norm))
    return jnp.stack(out)


def _bessel_args(fname, v, z):
    v, z = _floats(fname, v, z)
    if v.dtype.itemsize < 4:            # SciPy's loops are float32 and float64
        v, z = v.astype(np.float32), z.astype(np.float32)
    return v, z


def jv(v, z):
    """The Bessel function of the first kind ``J_v(z)`` of real order ``v`` and real ``z``
    (SciPy's ``jv``; complex ``z`` is not supported).

    SciPy's values: ``(-1)^n J_n(-z)`` for integer orders at negative ``z`` and nan for
    other orders there; ``J_v(0)`` is 1, 0 or +-inf (negative non-integer ``v``, the sign
    of ``1/Gamma(v+1)``); nan at ``z = +-inf`` (SciPy's choice); where a negative order
    overflows, the infinity has the sign of the value (SciPy's is always +inf); Debye's
    expansion for orders past 1e7 well below ``z``.
    Differentiable in ``z`` (``J_v' = (J_v-1 - J_v+1) / 2``), not in ``v``
    (NotSupportedError, as in JAX and autograd).  The dtype is SciPy's: float32 inputs
    stay float32, integers give float64.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.jv(2.5, 3.0)), 12)
    0.41271003221
    >>> round(float(zsp.jv(-0.5, 1.0)), 12)
    0.431098868018
    """
    return so.bessel_jv(*_bessel_args("jv", v, z))


def iv(v, z):
    """The modified Bessel function of the first kind ``I_v(z)`` of real order ``v`` and
    real ``z`` (SciPy's ``iv``; complex ``z`` is not supported).

    SciPy's values: ``(-1)^n I_n(-z)`` for integer orders at negative ``z`` and nan for
    other orders there; ``I_v(0)`` is 1, 0 or inf (negative non-integer ``v``); inf where
    it overflows; nan at ``z = +-inf`` (SciPy's choice); Debye's expansion for orders past
    1e7.  Differentiable in ``z`` (``I_v' = (I_v-1 + I_v+1) / 2``),
    not in ``v`` (NotSupportedError).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.iv(2.5, 3.0)), 12)
    1.515339446682
    """
    return so.bessel_iv(*_bessel_args("iv", v, z))


def ive(v, z):
    """The exponentially scaled modified Bessel function ``I_v(z) exp(-|z|)`` of real
    order ``v`` and real ``z`` (SciPy's ``ive``; complex ``z`` is not supported): finite
    where ``iv`` overflows, so ``ive(v, 1000.0)`` is not ``inf * 0``.

    SciPy's values as for `iv` (nan for non-integer orders at negative ``z`` and at
    ``z = +-inf``), with nan at ``z = 0`` for negative non-integer ``v``.  Differentiable
    in ``z`` (``(ive_v-1 + ive_v+1) / 2 - sign(z) ive_v``), not in ``v``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.ive(0.5, 1000.0)), 10)
    0.0126156626
    """
    return so.bessel_ive(*_bessel_args("ive", v, z))


def jn(n, x):
    """The Bessel function of the first kind of integer order: SciPy's ``jn``, which is
    `jv` (a non-integer ``n`` is used as it is, as in SciPy).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.jn(2, 3.0)), 10)
    0.4860912606
    """
    return jv(n, x)


def yn(n, x):
    """The Bessel function of the second kind ``Y_n(x)`` of integer order ``n`` (SciPy's
    ``yn``; a float ``n`` is truncated to an integer, as SciPy does).

    By the forward recurrence ``Y_k+1 = (2k / x) Y_k - Y_k-1`` from `y0` and `y1` (stable
    for Y), ``Y_-n = (-1)^n Y_n``; SciPy's values: -inf at ``x = 0`` and where the value
    overflows, nan for ``x < 0`` and at ``x = inf``.  ``n`` may be traced (the recurrence
    then runs to the largest ``|n|``); differentiable in ``x``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.yn(3, 2.0)), 10)
    -1.1277837768
    """
    n = jnp.asarray(n)
    if dtype_kind(np.dtype(n.dtype)) not in "biuf":
        raise errors.ZeraxTypeError("zerax.scipy.special.yn: the order n must be a real "
                                    f"number, got dtype {n.dtype}")
    nan_n = jnp.isnan(n) if dtype_kind(np.dtype(n.dtype)) == "f" else None
    n_int = jnp.trunc(jnp.where(nan_n, 0, n) if nan_n is not None else n).astype(int)
    (x,) = _floats("yn", x)
    with np.errstate(all="ignore"):     # eagerly: -inf and nan are values here (SciPy's)
        return _yn(n_int, x, nan_n)


def _yn(n_int, x, nan_n):
    n_int, x = jnp.broadcast_arrays(n_int, x)
    m = jnp.abs(n_int)
    y_prev, y_cur = so.bessel_y0(x), so.bessel_y1(x)

    def body(k, carry):
        y_prev, y_cur, out = carry
        # Y_k+1 from Y_k and Y_k-1; once -inf (overflow, x = 0) it stays -inf
        nxt = ((2 * k).astype(x.dtype) / x) * y_cur - y_prev
        nxt = jnp.where(jnp.isneginf(y_cur), y_cur, nxt)
        out = jnp.where(m == k + 1, nxt, out)
        return y_cur, nxt, out

    out = jnp.where(m == 0, y_prev, y_cur)
    top = jnp.max(m) if m.size else 0
    _, _, out = lax.fori_loop(1, jnp.maximum(top, 1), body, (y_prev, y_cur, out))
    odd = (m % 2) == 1
    out = jnp.where((n_int < 0) & odd, -out, out)
    out = jnp.where(x == np.inf, _const(x, np.nan), out)
    return out if nan_n is None else jnp.where(nan_n, _const(x, np.nan), out)
