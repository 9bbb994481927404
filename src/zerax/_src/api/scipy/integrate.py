"""`zerax.scipy.integrate`: SciPy's (and JAX's) ``trapezoid`` on zerax values.

>>> from zerax.scipy import integrate
>>> float(integrate.trapezoid([1.0, 2.0, 3.0], dx=2.0))
8.0
"""

from __future__ import annotations

from ... import numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule, at sample
    points ``x`` (or spacing ``dx``); differentiable in ``y`` and ``x``.

    >>> from zerax.scipy import integrate
    >>> float(integrate.trapezoid([0.0, 1.0, 4.0], x=[0.0, 1.0, 2.0]))
    3.0
    """
    return jnp.trapezoid(y, x=x, dx=dx, axis=axis)
