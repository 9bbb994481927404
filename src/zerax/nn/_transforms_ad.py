"""Equinox's filtered derivatives beyond `filter_grad`: ``filter_jvp``, ``filter_vjp``,
``filter_jacfwd``, ``filter_jacrev``, ``filter_hessian``, and ``Partial``.

As in Equinox, the floating-point arrays of the differentiated arguments are
differentiated and every other leaf (integers, functions, flags) is held fixed; the
results have ``None`` in place of the non-differentiated leaves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import zerax as zx
import zerax.numpy as znp

from .. import errors
from .. import tree_util as jtu
from ._filters import combine, is_inexact_array, partition

__all__ = ["filter_hessian", "filter_jacfwd", "filter_jacrev", "filter_jvp",
           "filter_vjp"]



def filter_jvp(fn: Callable, primals: Any, tangents: Any, **kwargs) -> tuple[Any, Any]:
    """The forward-mode derivative of ``fn`` at ``primals`` (a sequence of arguments) in
    the direction ``tangents`` (the same structure, ``None`` for leaves that are not
    floating-point arrays): ``(fn(*primals), tangent_out)``, ``tangent_out`` with ``None``
    for outputs that are not floating-point arrays (Equinox's ``filter_jvp``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> out, t = nn.filter_jvp(lambda x, n: x ** n, (znp.array(3.0), 2), (znp.array(1.0), None))
    >>> float(out), float(t)
    (9.0, 6.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise errors.ZeraxTypeError("filter_jvp: primals and tangents must be tuples or lists")
    primals, tangents = tuple(primals), tuple(tangents)
    diff, nondiff = partition(primals, is_inexact_array)
    t_leaves = jtu.tree_leaves(tangents)
    d_leaves, d_def = jtu.tree_flatten(diff)
    if len(t_leaves) != len(d_leaves):
        raise errors.ZeraxValueError(
            "filter_jvp: tangents must have a leaf (an array) for each floating-point array "
            "of primals, and None elsewhere")
    t_leaves = [znp.asarray(t).astype(d.dtype) for t, d in zip(t_leaves, d_leaves)]
    box: list = []

    def inner(*d):
        out = fn(*combine(jtu.tree_unflatten(d_def, list(d)), nondiff), **kwargs)
        o_diff, o_static = partition(out, is_inexact_array)
        box[:] = [o_static]
        return o_diff

    out_diff, t_out = zx.jvp(inner, tuple(d_leaves), tuple(t_leaves))
    return combine(out_diff, box[0]), t_out


def filter_vjp(fun: Callable, *primals, has_aux: bool = False):
    """``(fun(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(ct)`` takes
    a cotangent for the floating-point array outputs (``None`` elsewhere) and returns the
    cotangents of ``primals`` as a tuple, ``None`` for leaves that are not
    floating-point arrays (Equinox's ``filter_vjp``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> out, vjp_fn = nn.filter_vjp(lambda x, f: f(x) * 2.0, znp.array([0.0, 1.0]), znp.exp)
    >>> vjp_fn(znp.ones(2))
    (Array([2.        , 5.43656366], dtype=float64), None)
    """
    diff, nondiff = partition(primals, is_inexact_array)
    box: list = []

    def inner(d):
        res = fun(*combine(d, nondiff))
        out, aux = res if has_aux else (res, None)
        o_diff, o_static = partition(out, is_inexact_array)
        box[:] = [o_static]
        return (o_diff, aux) if has_aux else o_diff

    if has_aux:
        out_diff, vjp_d, aux = zx.vjp(inner, diff, has_aux=True)
    else:
        out_diff, vjp_d = zx.vjp(inner, diff)

    def vjp_fn(ct):
        ct_diff, _ = partition(ct, is_inexact_array)
        (g,) = vjp_d(ct_diff)
        return tuple(g)

    out = combine(out_diff, box[0])
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _filter_jac(fun, has_aux, jac):
    @functools.wraps(fun)
    def wrapped(x, /, *args, **kwargs):
        diff, nondiff = partition(x, is_inexact_array)

        def inner(d):
            return fun(combine(d, nondiff), *args, **kwargs)
        return jac(inner, has_aux=has_aux)(diff)
    return wrapped


def filter_jacfwd(fun: Callable, has_aux: bool = False) -> Callable:
    """The Jacobian (forward mode) of ``fun`` with respect to the floating-point arrays
    of its first argument; ``None`` for its other leaves (Equinox's ``filter_jacfwd``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.filter_jacfwd(lambda p: p[0] * p[1])([znp.array([1.0, 2.0]), 3])
    [Array([[3., 0.],
           [0., 3.]], dtype=float64), None]
    """
    return _filter_jac(fun, has_aux, zx.jacfwd)


def filter_jacrev(fun: Callable, has_aux: bool = False) -> Callable:
    """The Jacobian (reverse mode) of ``fun`` with respect to the floating-point arrays
    of its first argument; ``None`` for its other leaves (Equinox's ``filter_jacrev``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.filter_jacrev(lambda p: znp.sin(p["x"]) * p["n"])({"x": znp.zeros(2), "n": 2})
    {'n': None, 'x': Array([[2., 0.],
           [0., 2.]], dtype=float64)}
    """
    return _filter_jac(fun, has_aux, zx.jacrev)


def filter_hessian(fun: Callable, has_aux: bool = False) -> Callable:
    """The Hessian of a scalar ``fun`` with respect to the floating-point arrays of its
    first argument (Equinox's ``filter_hessian``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> nn.filter_hessian(lambda p: znp.sum(p[0] ** 3))([znp.array([1.0, 2.0]), "tag"])[0]
    [Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float64), None]
    """
    return _filter_jac(fun, has_aux, zx.hessian)


