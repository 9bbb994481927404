"""`zerax.optim.projections`: optax's ``optax.projections``, Euclidean projections of a
pytree onto convex sets (for projected gradient descent: take a step, then project).
Each maps a tree to a tree of the same structure and differentiates, jits and vmaps.
Where optax takes "a scalar or a tree" bound, a scalar applies to every leaf.

>>> import zerax.numpy as znp
>>> from zerax.optim import projections
>>> projections.projection_simplex(znp.asarray([0.5, 2.0, -1.0])).tolist()
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import zerax
import zerax.numpy as znp
from .. import lax, tree_util
from ..flatten_util import ravel_pytree

from . import tree_utils as otu

__all__ = ["projection_box", "projection_halfspace", "projection_hypercube",
           "projection_hyperplane", "projection_l1_ball", "projection_l1_sphere",
           "projection_l2_ball", "projection_l2_sphere", "projection_linf_ball",
           "projection_non_negative", "projection_simplex", "projection_vector"]


def _bound_tree(bound: Any, tree: Any) -> Any:
    """A bound given as one scalar, spread over the leaves of ``tree``."""
    if tree_util.tree_structure(bound) == tree_util.tree_structure(tree):
        return bound
    return tree_util.tree_map(lambda _: bound, tree)


def projection_non_negative(tree: Any) -> Any:
    """The closest tree with every entry ``>= 0`` (``max(x, 0)``).

    >>> projection_non_negative({"a": znp.asarray([-1.0, 2.0])})["a"].tolist()
    [0.0, 2.0]
    """
    return tree_util.tree_map(lambda x: znp.maximum(x, 0), tree)


def projection_box(tree: Any, lower: Any, upper: Any) -> Any:
    """The closest tree with ``lower <= p <= upper`` entrywise (scalar or tree bounds).

    >>> projection_box({"a": znp.asarray([-1.0, 0.5, 3.0])}, 0.0, 1.0)["a"].tolist()
    [0.0, 0.5, 1.0]
    """
    return tree_util.tree_map(znp.clip, tree, _bound_tree(lower, tree),
                              _bound_tree(upper, tree))


def projection_hypercube(tree: Any, scale: Any = 1) -> Any:
    """`projection_box` onto ``[0, scale]``.

    >>> projection_hypercube(znp.asarray([-1.0, 0.5, 3.0]), 2.0).tolist()
    [0.0, 0.5, 2.0]
    """
    return projection_box(tree, lower=0, upper=scale)


@zerax.custom_jvp
def _projection_unit_simplex(values):
    # Sort-based (Held, Wolfe and Crowder 1974; Condat 2016), as optax's.
    n = values.shape[0]
    u = znp.sort(values)[::-1]
    cumsum_u = znp.cumsum(u)
    ind = znp.arange(n) + 1
    cond = 1 / ind + (u - cumsum_u / ind) > 0
    idx = znp.count_nonzero(cond)
    return znp.maximum(1 / idx + (values - cumsum_u[idx - 1] / idx), 0)


@_projection_unit_simplex.defjvp
def _projection_unit_simplex_jvp(primals, tangents):
    (values,), (values_dot,) = primals, tangents
    out = _projection_unit_simplex(values)
    supp = (out > 0).astype(values.dtype)
    card = znp.count_nonzero(supp)
    return out, supp * values_dot - (znp.dot(supp, values_dot) / card) * supp


def projection_simplex(tree: Any, scale: Any = 1) -> Any:
    """The closest tree with entries ``>= 0`` summing to ``scale`` (over all leaves).

    >>> projection_simplex({"a": znp.asarray([1.0, 1.0]), "b": znp.asarray(3.0)}, 2.0)["b"]
    Array(2., dtype=float64)
    """
    values, unravel = ravel_pytree(tree)
    return unravel(scale * _projection_unit_simplex(values / scale))


def projection_l1_sphere(tree: Any, scale: Any = 1) -> Any:
    """The closest tree whose L1 norm (over all leaves) is ``scale``.

    >>> projection_l1_sphere(znp.asarray([2.0, -2.0])).tolist()
    [0.5, -0.5]
    """
    proj = projection_simplex(tree_util.tree_map(znp.abs, tree), scale)
    return otu.tree_mul(tree_util.tree_map(znp.sign, tree), proj)


def projection_l1_ball(tree: Any, scale: Any = 1) -> Any:
    """The closest tree whose L1 norm is at most ``scale``.

    >>> projection_l1_ball(znp.asarray([0.25, -0.25])).tolist()
    [0.25, -0.25]
    """
    return lax.cond(otu.tree_norm(tree, ord=1) <= scale, lambda t: t,
                    lambda t: projection_l1_sphere(t, scale), tree)


def projection_l2_sphere(tree: Any, scale: Any = 1) -> Any:
    """``tree`` rescaled to L2 norm ``scale``.

    >>> projection_l2_sphere(znp.asarray([3.0, 4.0])).round(12).tolist()
    [0.6, 0.8]
    """
    return otu.tree_scale(scale / otu.tree_norm(tree), tree)


def projection_l2_ball(tree: Any, scale: Any = 1) -> Any:
    """The closest tree whose L2 norm is at most ``scale``.

    >>> projection_l2_ball(znp.asarray([3.0, 4.0]), 10.0).tolist()
    [3.0, 4.0]
    """
    squared = otu.tree_norm(tree, squared=True)
    return otu.tree_scale(scale / znp.sqrt(znp.maximum(squared, scale ** 2)), tree)


def projection_linf_ball(tree: Any, scale: Any = 1) -> Any:
    """The closest tree with every entry in ``[-scale, scale]``.

    >>> projection_linf_ball(znp.asarray([3.0, -0.5])).tolist()
    [1.0, -0.5]
    """
    return projection_box(tree, lower=otu.tree_full_like(tree, -scale),
                          upper=otu.tree_full_like(tree, scale))


def projection_vector(x: Any, a: Any) -> Any:
    """The projection of ``x`` onto the line spanned by ``a``: ``<x,a>/<a,a> a``.

    >>> projection_vector(znp.asarray([1.0, 2.0]), znp.asarray([1.0, 0.0])).tolist()
    [1.0, 0.0]
    """
    return otu.tree_scale(otu.tree_vdot(x, a) / otu.tree_vdot(a, a), a)


def projection_hyperplane(x: Any, a: Any, b: Any) -> Any:
    """The closest point to ``x`` with ``<a, p> = b``.

    >>> projection_hyperplane(znp.asarray([1.0, 2.0]), znp.asarray([1.0, 1.0]), 1.0).tolist()
    [0.0, 1.0]
    """
    scalar = (b - otu.tree_vdot(x, a)) / otu.tree_vdot(a, a)
    return otu.tree_add_scale(x, scalar, a)


def projection_halfspace(x: Any, a: Any, b: Any) -> Any:
    """The closest point to ``x`` with ``<a, p> <= b``.

    >>> projection_halfspace(znp.asarray([1.0, 2.0]), znp.asarray([1.0, 1.0]), 5.0).tolist()
    [1.0, 2.0]
    """
    scalar = znp.minimum((b - otu.tree_vdot(x, a)) / otu.tree_vdot(a, a), 0)
    return otu.tree_add_scale(x, scalar, a)
