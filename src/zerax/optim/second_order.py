"""`zerax.optim.second_order`: optax's ``optax.second_order`` (deprecated in optax 0.2.7):
Hessian-vector products and the diagonals of the Hessian and of the observed Fisher
information of a loss ``loss(params, inputs, targets)``, on the raveled parameters.
(zerax's second-order *optimisers*, `newton_cg` and the others, are in `zerax.optim`.)

>>> import zerax.numpy as znp
>>> from zerax.optim import second_order
>>> loss = lambda p, x, y: znp.sum((p["w"] * x - y) ** 2)
>>> second_order.hessian_diag(loss, {"w": znp.asarray([1.0, 2.0])}, znp.asarray([1.0, 3.0]),
...                           znp.zeros(2)).tolist()
[2.0, 18.0]
"""

from __future__ import annotations

from typing import Any, Callable

import zerax
import zerax.numpy as znp
from ..flatten_util import ravel_pytree

__all__ = ["fisher_diag", "hessian_diag", "hvp"]


def _ravel(p: Any):
    return ravel_pytree(p)[0]


def hvp(loss: Callable, v: Any, params: Any, inputs: Any, targets: Any) -> Any:
    """The Hessian of ``loss(params, inputs, targets)`` (in ``params``) times the vector
    ``v`` of ``ravel(params)``'s size, as a tree like ``params`` (forward-over-reverse).

    >>> import zerax.numpy as znp
    >>> loss = lambda p, x, y: znp.sum(p ** 3)
    >>> hvp(loss, znp.asarray([1.0, 0.0]), znp.asarray([1.0, 2.0]), None, None).tolist()
    [6.0, 0.0]
    """
    _, unravel = ravel_pytree(params)
    return zerax.jvp(zerax.grad(lambda p: loss(p, inputs, targets)), (params,),
                     (unravel(znp.asarray(v)),))[1]


def hessian_diag(loss: Callable, params: Any, inputs: Any, targets: Any) -> Any:
    """The diagonal of the Hessian of ``loss`` at ``params``, as one vector over
    ``ravel(params)`` (one Hessian-vector product per coordinate, vmapped)."""
    n = _ravel(params).size
    return zerax.vmap(lambda v: znp.vdot(v, _ravel(hvp(loss, v, params, inputs, targets))))(
        znp.eye(n, dtype=_ravel(params).dtype))


def fisher_diag(negative_log_likelihood: Callable, params: Any, inputs: Any,
                targets: Any) -> Any:
    """The diagonal of the observed Fisher information: the squared gradient of
    ``negative_log_likelihood(params, inputs, targets)``, raveled.

    >>> import zerax.numpy as znp
    >>> nll = lambda p, x, y: 0.5 * znp.sum((p * x - y) ** 2)
    >>> fisher_diag(nll, znp.asarray([1.0, 1.0]), znp.asarray([1.0, 2.0]), znp.zeros(2)).tolist()
    [1.0, 16.0]
    """
    return znp.square(_ravel(zerax.grad(negative_log_likelihood)(params, inputs, targets)))
