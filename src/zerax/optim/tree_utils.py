"""`zerax.optim.tree_utils`: optax's tree arithmetic (``optax.tree_utils``) on zerax arrays.

Sums, scalings, inner products, norms, moment updates and bias corrections of whole
parameter pytrees, plus ``tree_get``/``tree_set`` to read and replace fields of an
optimiser state by name.  Each function is a composition of `zerax.numpy` calls, so it
jits, vmaps and differentiates.

>>> import zerax.numpy as znp
>>> from zerax.optim import tree_utils as otu
>>> float(otu.tree_norm({"a": znp.asarray([3.0]), "b": znp.asarray(4.0)}))
5.0
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Optional

import zerax.numpy as znp
from .. import errors, tree_util

from ._base import abs_sq, check_same_tree

__all__ = [
    "tree_add", "tree_sub", "tree_mul", "tree_div", "tree_scale", "tree_add_scale",
    "tree_vdot", "tree_sum", "tree_max", "tree_min", "tree_size", "tree_conj", "tree_real",
    "tree_norm", "tree_l2_norm", "tree_zeros_like", "tree_ones_like", "tree_full_like",
    "tree_clip", "tree_update_moment", "tree_update_infinity_moment",
    "tree_update_moment_per_elem_norm", "tree_bias_correction", "tree_where", "tree_cast",
    "tree_cast_like", "tree_dtype", "tree_get", "tree_set", "tree_allclose",
    "tree_batch_shape",
]


def _none_leaf(x):
    return x is None


def tree_add(tree_x: Any, tree_y: Any, *other_trees: Any) -> Any:
    """Leafwise sum of two or more trees.

    >>> tree_add([1.0], [2.0], [3.0])
    [6.0]
    """
    trees = [tree_x, tree_y, *other_trees]
    return tree_util.tree_map(lambda *leaves: sum(leaves[1:], leaves[0]), *trees)


def tree_sub(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise ``x - y``.

    >>> tree_sub([3.0], [1.0])
    [2.0]
    """
    return tree_util.tree_map(operator.sub, tree_x, tree_y)


def tree_mul(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise ``x * y``.

    >>> tree_mul([3.0], [2.0])
    [6.0]
    """
    return tree_util.tree_map(operator.mul, tree_x, tree_y)


def tree_div(tree_x: Any, tree_y: Any) -> Any:
    """Leafwise ``x / y``.

    >>> tree_div([3.0], [2.0])
    [1.5]
    """
    return tree_util.tree_map(operator.truediv, tree_x, tree_y)


def tree_scale(scalar: Any, tree: Any) -> Any:
    """``scalar * x`` for every leaf.

    >>> tree_scale(2.0, [1.5])
    [3.0]
    """
    return tree_util.tree_map(lambda x: scalar * x, tree)


def tree_add_scale(tree_x: Any, scalar: Any, tree_y: Any) -> Any:
    """``x + scalar * y`` leafwise (``None`` leaves of ``x`` stay ``None``).

    >>> float(tree_add_scale([1.0], 2.0, [3.0])[0])
    7.0
    """
    scalar = znp.asarray(scalar)
    return tree_util.tree_map(lambda x, y: None if x is None else x + scalar * y,
                              tree_x, tree_y, is_leaf=_none_leaf)


def _vdot(a, b):
    a = znp.asarray(a)
    b = znp.asarray(b)
    if znp.iscomplexobj(a):
        a = znp.conj(a)
    return znp.sum(a * b)


def tree_vdot(tree_x: Any, tree_y: Any) -> Any:
    """The inner product of two trees (``sum`` of leafwise ``vdot``).

    >>> float(tree_vdot({"a": znp.asarray([1.0, 2.0])}, {"a": znp.asarray([3.0, 4.0])}))
    11.0
    """
    vdots = tree_util.tree_leaves(tree_util.tree_map(_vdot, tree_x, tree_y))
    return functools.reduce(operator.add, vdots, 0)


def tree_sum(tree: Any) -> Any:
    """The sum of all elements of all leaves.

    >>> float(tree_sum([znp.ones(3), 2.0]))
    5.0
    """
    sums = tree_util.tree_leaves(tree_util.tree_map(znp.sum, tree))
    return functools.reduce(operator.add, sums, 0)


def tree_max(tree: Any) -> Any:
    """The largest element of all leaves (``-inf`` for an empty tree).

    >>> float(tree_max([znp.asarray([1.0, 5.0]), -2.0]))
    5.0
    """
    maxes = [znp.max(x) for x in tree_util.tree_leaves(tree) if znp.size(x) > 0]
    return functools.reduce(znp.maximum, maxes, -float("inf"))


def tree_min(tree: Any) -> Any:
    """The smallest element of all leaves (``inf`` for an empty tree).

    >>> float(tree_min([znp.asarray([1.0, 5.0]), -2.0]))
    -2.0
    """
    mins = [znp.min(x) for x in tree_util.tree_leaves(tree) if znp.size(x) > 0]
    return functools.reduce(znp.minimum, mins, float("inf"))


def tree_size(tree: Any) -> int:
    """The total number of elements of the leaves.

    >>> tree_size({"a": znp.ones((2, 3)), "b": 1.0})
    7
    """
    return sum(int(znp.size(x)) for x in tree_util.tree_leaves(tree))


def tree_conj(tree: Any) -> Any:
    """Leafwise complex conjugate.

    >>> tree_conj([znp.asarray(1.0)])[0].item()
    1.0
    """
    return tree_util.tree_map(znp.conj, tree)


def tree_real(tree: Any) -> Any:
    """Leafwise real part.

    >>> tree_real([znp.asarray(1.0)])[0].item()
    1.0
    """
    return tree_util.tree_map(znp.real, tree)


def _square(x):
    x = znp.asarray(x)
    if znp.iscomplexobj(x):
        return znp.square(znp.real(x)) + znp.square(znp.imag(x))
    return znp.square(x)


def tree_norm(tree: Any, ord: Any = None, squared: bool = False) -> Any:
    """The norm of a tree seen as one flat vector (``ord`` None/2, 1 or inf).

    >>> float(tree_norm([znp.asarray([3.0]), 4.0], squared=True))
    25.0
    """
    if ord is None or ord == 2:
        sqnorm = tree_sum(tree_util.tree_map(_square, tree))
        return znp.asarray(sqnorm if squared else znp.sqrt(sqnorm))
    if ord == 1:
        ret = tree_sum(tree_util.tree_map(znp.abs, tree))
    elif ord == float("inf") or ord in ("inf", "infinity"):
        ret = tree_max(tree_util.tree_map(znp.abs, tree))
    else:
        raise errors.ZeraxValueError(f"Unsupported ord: {ord!r}; use None, 2, 1 or inf.")
    return znp.asarray(ret if not squared else _square(ret))


def tree_l2_norm(tree: Any, squared: bool = False) -> Any:
    """The L2 norm of a tree (optax's older name of ``tree_norm``).

    >>> float(tree_l2_norm([3.0, 4.0]))
    5.0
    """
    return tree_norm(tree, squared=squared)


def tree_batch_shape(tree: Any, shape: tuple = ()) -> Any:
    """Broadcast every leaf to ``shape + leaf.shape``.

    >>> tree_batch_shape([znp.ones(2)], (3,))[0].shape
    (3, 2)
    """
    return tree_util.tree_map(
        lambda x: znp.broadcast_to(x, (*shape, *znp.shape(x))), tree)


def tree_zeros_like(tree: Any, dtype: Any = None) -> Any:
    """Zeros shaped as every leaf (in ``dtype`` when given).

    >>> tree_zeros_like({"a": znp.ones(2)})["a"].tolist()
    [0.0, 0.0]
    """
    return tree_util.tree_map(lambda x: znp.zeros_like(x, dtype=dtype), tree)


def tree_ones_like(tree: Any, dtype: Any = None) -> Any:
    """Ones shaped as every leaf.

    >>> tree_ones_like([znp.zeros(2)])[0].tolist()
    [1.0, 1.0]
    """
    return tree_util.tree_map(lambda x: znp.ones_like(x, dtype=dtype), tree)


def tree_full_like(tree: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``fill_value`` shaped as every leaf.

    >>> tree_full_like([znp.zeros(2)], 3.0)[0].tolist()
    [3.0, 3.0]
    """
    return tree_util.tree_map(lambda x: znp.full_like(x, fill_value, dtype=dtype), tree)


def tree_clip(tree: Any, min_value: Any = None, max_value: Any = None) -> Any:
    """Clip every leaf to ``[min_value, max_value]``.

    >>> tree_clip([znp.asarray([-2.0, 2.0])], -1.0, 1.0)[0].tolist()
    [-1.0, 1.0]
    """
    return tree_util.tree_map(lambda g: znp.clip(g, min_value, max_value), tree)


def tree_update_moment(updates: Any, moments: Any, decay: Any, order: int) -> Any:
    """``(1 - decay) * g**order + decay * m`` leafwise (an exponential moving moment).

    >>> float(tree_update_moment([2.0], [1.0], 0.5, 2)[0])
    2.5
    """
    return tree_util.tree_map(
        lambda g, t: None if g is None else (1 - decay) * (g ** order) + decay * t,
        updates, moments, is_leaf=_none_leaf)


def tree_update_infinity_moment(updates: Any, moments: Any, decay: Any, eps: Any) -> Any:
    """``max(|g| + eps, decay * m)`` leafwise (Adamax's moment).

    >>> float(tree_update_infinity_moment([znp.asarray(-2.0)], [znp.asarray(4.0)], 0.9, 0.0)[0])
    3.6
    """
    return tree_util.tree_map(
        lambda g, t: None if g is None else znp.maximum(znp.abs(g) + eps, decay * t),
        updates, moments, is_leaf=_none_leaf)


def tree_update_moment_per_elem_norm(updates: Any, moments: Any, decay: Any,
                                     order: int) -> Any:
    """`tree_update_moment` of ``|g|**order`` (complex-safe).

    >>> float(tree_update_moment_per_elem_norm([znp.asarray(2.0)], [0.0], 0.5, 2)[0])
    2.0
    """
    def orderth_norm(g):
        g = znp.asarray(g)
        if not znp.iscomplexobj(g):
            return g ** order
        half = order / 2
        if float(half).is_integer():
            half = int(half)
        return abs_sq(g) ** half
    return tree_util.tree_map(
        lambda g, t: None if g is None else (1 - decay) * orderth_norm(g) + decay * t,
        updates, moments, is_leaf=_none_leaf)


def tree_bias_correction(moment: Any, decay: Any, count: Any) -> Any:
    """``m / (1 - decay**count)`` leafwise, in each leaf's dtype (Adam's debiasing).

    >>> float(tree_bias_correction([znp.asarray(0.1)], 0.9, znp.asarray(1))[0])
    1.0000000000000002
    """
    correction = 1 - decay ** znp.asarray(count)
    return tree_util.tree_map(lambda t: t / correction.astype(znp.asarray(t).dtype), moment)


def tree_where(condition: Any, tree_x: Any, tree_y: Any) -> Any:
    """``where(condition, x, y)`` leafwise.

    >>> tree_where(True, [1.0], [2.0])[0].item()
    1.0
    """
    return tree_util.tree_map(lambda x, y: znp.where(condition, x, y), tree_x, tree_y)


def tree_cast(tree: Any, dtype: Any) -> Any:
    """Cast every leaf to ``dtype`` (no-op when ``dtype`` is None).

    >>> tree_cast([znp.ones(1)], znp.float32)[0].dtype
    dtype('float32')
    """
    if dtype is None:
        return tree
    return tree_util.tree_map(lambda t: znp.asarray(t).astype(dtype), tree)


def tree_cast_like(tree: Any, other_tree: Any) -> Any:
    """Cast every leaf to the dtype of the matching leaf of ``other_tree``.

    >>> tree_cast_like([znp.ones(1)], [znp.zeros(1, znp.float32)])[0].dtype
    dtype('float32')
    """
    return tree_util.tree_map(
        lambda t, o: znp.asarray(t).astype(o.dtype) if hasattr(o, "dtype") else t,
        tree, other_tree)


def tree_dtype(tree: Any, mixed_dtype_handler: Optional[str] = None) -> Any:
    """The dtype of a tree's leaves (``'promote'``, ``'highest'``, ``'lowest'`` for mixed).

    >>> tree_dtype([znp.ones(1, znp.float32), znp.ones(1)], "highest")
    dtype('float64')
    """
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        return znp.asarray(leaves).dtype
    dtypes = [znp.asarray(x).dtype for x in leaves]
    if mixed_dtype_handler is None:
        for (path, x) in tree_util.tree_leaves_with_path(tree):
            if znp.asarray(x).dtype != dtypes[0]:
                raise errors.ZeraxValueError(
                    f"Expected dtype={dtypes[0]} for {tree_util.keystr(path)} but got "
                    f"{znp.asarray(x).dtype}; pass mixed_dtype_handler='promote'/'highest'/"
                    f"'lowest' for trees of mixed dtypes.")
        return dtypes[0]
    if mixed_dtype_handler == "promote":
        return functools.reduce(znp.promote_types, dtypes)

    def lower(d1, d2):
        p = znp.promote_types(d1, d2)
        if p == d1:
            return d2
        if p == d2:
            return d1
        raise errors.ZeraxValueError(
            f"Cannot compare dtype {d1} and {d2}: neither promotes to the other.")
    if mixed_dtype_handler == "highest":
        return functools.reduce(lambda a, b: b if lower(a, b) == a else a, dtypes)
    if mixed_dtype_handler == "lowest":
        return functools.reduce(lower, dtypes)
    raise errors.ZeraxValueError(
        f"Invalid value for mixed_dtype_handler={mixed_dtype_handler!r}, possible values are: "
        f"None, 'promote', 'highest', 'lowest'.")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _find(tree, key, out):
    if _is_namedtuple(tree):
        for name, child in zip(tree._fields, tree):
            if name == key:
                out.append(child)
            else:
                _find(child, key, out)
    elif isinstance(tree, (list, tuple)):
        for child in tree:
            _find(child, key, out)
    elif isinstance(tree, dict):
        for k, child in tree.items():
            if k == key:
                out.append(child)
            else:
                _find(child, key, out)


def tree_get(tree: Any, key: Any, default: Any = None) -> Any:
    """The unique field or dict entry named ``key`` anywhere in ``tree`` (optax's, for
    optimiser states: ``tree_get(state, "count")``); ``default`` when there is none.

    >>> import zerax.optim as optim
    >>> int(tree_get(optim.adam(1e-3).init({"w": znp.ones(2)}), "count"))
    0
    """
    found: list = []
    _find(tree, key, found)
    if not found:
        return default
    if len(found) > 1:
        raise errors.ZeraxValueError(
            f"tree_get: the key {key!r} occurs {len(found)} times in the tree; pick the "
            f"sub-state first (e.g. state[0]).")
    return found[0]


def _set(tree, values):
    if _is_namedtuple(tree):
        kw = {}
        for name, child in zip(tree._fields, tree):
            if name in values:
                v = values[name]
                kw[name] = v(child) if callable(v) else v
            else:
                kw[name] = _set(child, values)
        return type(tree)(**kw)
    if isinstance(tree, dict):
        out = type(tree)()
        for k, child in tree.items():
            if k in values:
                v = values[k]
                out[k] = v(child) if callable(v) else v
            else:
                out[k] = _set(child, values)
        return out
    if isinstance(tree, (list, tuple)):
        return type(tree)(_set(c, values) for c in tree)
    return tree


def tree_set(tree: Any, **kwargs: Any) -> Any:
    """A copy of ``tree`` whose fields/dict entries named as the keywords are replaced
    (a callable value is applied to the old value).

    >>> import zerax.optim as optim
    >>> s = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1).init({"w": znp.ones(1)})
    >>> float(tree_get(tree_set(s, count=znp.asarray(3)), "count"))
    3.0
    """
    for key in kwargs:
        found: list = []
        _find(tree, key, found)
        if not found:
            raise errors.ZeraxValueError(
                f"tree_set: no field or key {key!r} in the tree; look at the state's "
                f"fields (print it) for the right name.")
    return _set(tree, kwargs)


def tree_allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
                  equal_nan: bool = False) -> bool:
    """Whether all leaves of ``a`` and ``b`` are close.

    >>> bool(tree_allclose([1.0], [1.0 + 1e-9]))
    True
    """
    check_same_tree("tree_allclose", a, "a", b, "b")
    leaves = tree_util.tree_leaves(tree_util.tree_map(
        lambda x, y: znp.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), a, b))
    return functools.reduce(operator.and_, leaves, True)
