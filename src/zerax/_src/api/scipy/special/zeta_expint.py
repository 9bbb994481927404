"""The Hurwitz zeta function and the exponential integrals: ``zeta``, ``expn``, ``exp1``,
``expi`` (the iterative primitives of ``ops/special_ops.py``).
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ....ops import special_ops as so
from ._util import _const, _floats


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_k (k + q)**-x`` (Riemann's when ``q`` is None).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.zeta(2.0)), 12)
    1.644934066848
    """
    if q is None:
        q = 1.0
    x, q = _floats("zeta", x, q)
    return so.zeta(x, q)


def expn(n, x):
    """The generalized exponential integral ``E_n(x) = int_1^inf e^(-xt) / t^n dt`` for
    integer ``n >= 0`` (nan for other ``n``); differentiable in ``x``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.expn(2, 1.0)), 12)
    0.148495506776
    """
    n, x = _floats("expn", n, x)
    # (the kernel reads n == -1 as Ei: negative orders are nan here)
    return so.expn(jnp.where(n < 0, _const(n, np.nan), n), x)


def exp1(x):
    """The exponential integral ``E_1(x)``.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.exp1(1.0)), 12)
    0.219383934396
    """
    (x,) = _floats("exp1", x)
    return so.expn(jnp.ones_like(x), x)


def expi(x):
    """The exponential integral ``Ei(x)`` (principal value; ``-E_1(-x)`` for x < 0).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.expi(1.0)), 12)
    1.895117816356
    """
    (x,) = _floats("expi", x)
    return so.expi(x)
