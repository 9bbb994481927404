"""Elementwise entropies: ``entr``, ``rel_entr``, ``kl_div``.
"""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ._util import _floats


def entr(x):
    """``-x log x`` for x > 0, 0 at 0, -inf below (SciPy's elementwise entropy).

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.entr(0.5)), 12)
    0.34657359028
    """
    (x,) = _floats("entr", x)
    pos = x > 0
    safe = jnp.where(pos, x, jnp.ones_like(x))
    val = -(safe * jnp.log(safe))
    return jnp.where(pos, val, jnp.where(x == 0, jnp.zeros_like(x),
                                         jnp.where(jnp.isnan(x), x, jnp.full_like(x, -np.inf))))


def rel_entr(p, q):
    """``p log(p / q)`` for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.rel_entr(0.5, 0.25)), 12)
    0.34657359028
    """
    p, q = _floats("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    sp = jnp.where(both, p, jnp.ones_like(p))
    sq = jnp.where(both, q, jnp.ones_like(q))
    val = sp * jnp.log(sp / sq)
    other = jnp.where((p == 0) & (q >= 0), jnp.zeros_like(p), jnp.full_like(p, np.inf))
    other = jnp.where(jnp.isnan(p) | jnp.isnan(q), p + q, other)
    return jnp.where(both, val, other)


def kl_div(p, q):
    """``p log(p / q) - p + q`` for p, q > 0; q where p == 0 and q >= 0; inf elsewhere.

    >>> import zerax.scipy.special as zsp
    >>> round(float(zsp.kl_div(0.5, 0.25)), 12)
    0.09657359028
    """
    p, q = _floats("kl_div", p, q)
    both = (p > 0) & (q > 0)
    sp = jnp.where(both, p, jnp.ones_like(p))
    sq = jnp.where(both, q, jnp.ones_like(q))
    val = sp * jnp.log(sp / sq) - sp + sq
    other = jnp.where((p == 0) & (q >= 0), q, jnp.full_like(p, np.inf))
    other = jnp.where(jnp.isnan(p) | jnp.isnan(q), p + q, other)
    return jnp.where(both, val, other)
