"""Taylor mode, the public side: `jet` (``jax.experimental.jet.jet``'s signature and
conventions) and `derivatives` (the first n derivatives of a function in one pass).

The series machinery is ``interpreters/jet.py`` (the trace) and ``ops/taylor.py``
(the rules); this module converts between the user's conventions and the
interpreter's normalized coefficients, and checks the user's input.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core import tree
from ..core.api_util import as_input, as_output, normalize_argnums
from ..core.core import Tracer, concrete_value, get_aval
from ..interpreters.jet import jet_flat
from ..ir.tracing import fun_name
from ..ops import elementwise as ew


def _scaled(x, c):
    """``x * c`` for a Python number ``c``, in x's dtype."""
    return x if c == 1 else ew.mul(x, np.array(c, dtype=get_aval(x).dtype))


def _term(t, p, where):
    """A series coefficient for primal leaf ``p``: a zerax value of p's shape and dtype."""
    t = as_input(t, where)
    pa, ta = get_aval(p), get_aval(t)
    if tuple(ta.shape) != tuple(pa.shape):
        raise errors.ShapeError(
            f"jet: {where} has shape {tuple(ta.shape)} but its primal has shape "
            f"{tuple(pa.shape)}; each term of a series has its primal's shape.")
    if ta.dtype != pa.dtype:
        if dtype_kind(ta.dtype) not in "biufc" or dtype_kind(pa.dtype) not in "fc":
            raise errors.ZeraxTypeError(
                f"jet: {where} has dtype {ta.dtype.name} for a primal of dtype "
                f"{pa.dtype.name}")
        t = ew.convert_element_type(t, pa.dtype)
    return t


def _known_zero(t) -> bool:
    return not isinstance(t, Tracer) and not np.any(concrete_value(t))


def _integer_series(p, terms, where):
    """Integer and boolean primals have no series: theirs must be zero."""
    for t in terms:
        if isinstance(t, Tracer) or np.any(concrete_value(as_input(t, where))):
            raise errors.ZeraxTypeError(
                f"jet: {where} is a non-zero series for a primal of dtype "
                f"{get_aval(p).dtype.name}; integer and boolean inputs cannot move (pass "
                "zeros, or make the input a float).")


def jet(fun, primals, series, factorial_scaled: bool = True, **_):
    """Taylor-mode higher-order differentiation: push a truncated Taylor series
    through ``fun`` in one pass (``jax.experimental.jet.jet``).

    ``primals`` are the arguments (a tuple or list); ``series[i]`` the terms of the
    i-th argument's path, all of one length ``K``, each term shaped like its primal
    (pytrees of arrays are accepted).  With ``factorial_scaled`` (the default) the
    terms are derivatives: the input path is ``x(t) = x0 + sum_k x_k t^k / k!`` and the
    output terms are ``d^k/dt^k fun(x(t))`` at ``t = 0``; with
    ``factorial_scaled=False`` they are plain Taylor coefficients (JAX's ``jet2``).
    Returns ``(fun(*primals), series_out)``, ``series_out`` structured like the output
    with a list of K terms in place of each array.

    Every primitive has a rule, including linear algebra and control flow (``cond``,
    ``scan``, ``while_loop``: the series of a loop carry advances with the loop),
    ``custom_jvp`` functions (through their JVP rule, so jet agrees with nested
    ``jvp``) and ``custom_vjp`` ones (through their primal function).

    >>> import zerax as zx, zerax.numpy as znp
    >>> y, (d1, d2, d3) = zx.jet(znp.exp, (0.0,), ((1.0, 0.0, 0.0),))
    >>> float(y), float(d1), float(d2), float(d3)
    (1.0, 1.0, 1.0, 1.0)
    >>> y, (d1, d2) = zx.jet(znp.sin, (0.5,), ((2.0, 0.0),))      # along x(t) = 0.5 + 2t
    >>> round(float(d1), 6), round(float(d2), 6)
    (1.755165, -1.917702)
    """
    out_tree, outs, out_terms = _jet_leaves(fun, primals, series, factorial_scaled)
    return (tree.tree_unflatten(out_tree, [as_output(o) for o in outs]),
            tree.tree_unflatten(out_tree, out_terms))


def _jet_leaves(fun, primals, series, factorial_scaled):
    """`jet` on flat outputs: ``(output tree, output leaves, K terms per leaf)``."""
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise errors.ZeraxTypeError(
            "jet expects primals and series as tuples or lists, e.g. "
            "zx.jet(f, (x,), ((1.0, 0.0),)); got "
            f"{type(primals).__name__} and {type(series).__name__}")
    if len(primals) != len(series):
        raise errors.ZeraxValueError(
            f"jet: {len(primals)} primals but {len(series)} series; give one series (a "
            "tuple of terms) per primal.")
    for i, s in enumerate(series):
        if not isinstance(s, (tuple, list)):
            raise errors.ZeraxTypeError(
                f"jet: series {i} must be a tuple or list of terms, got {type(s).__name__}")
    orders = {len(s) for s in series}
    if len(orders) > 1:
        raise errors.ZeraxValueError(
            "jet terms have inconsistent lengths for different arguments: "
            f"{[len(s) for s in series]}; every series needs the same number of terms.")
    K = orders.pop() if orders else 0
    name = fun_name(fun)

    leaves, in_tree, leaf_series = [], [], []
    for i, (p, s) in enumerate(zip(primals, series)):
        p_leaves, p_tree = tree.tree_flatten(p)
        p_leaves = [as_input(x, f"primal {i} of jet") for x in p_leaves]
        columns = []
        for k, term in enumerate(s):
            t_leaves, t_tree = tree.tree_flatten(term)
            if t_tree != p_tree:
                raise errors.TreeMismatchError(
                    f"jet: term {k} of series {i} is structured {t_tree} but primal {i} is "
                    f"structured {p_tree}; each term must match its primal.")
            columns.append(t_leaves)
        for j, p_leaf in enumerate(p_leaves):
            terms = [col[j] for col in columns]
            where = f"series {i}"
            if dtype_kind(get_aval(p_leaf).dtype) not in "fc":
                _integer_series(p_leaf, terms, where)
                leaf_series.append(None)
            else:
                ts = [_term(t, p_leaf, f"term {k} of {where}") for k, t in enumerate(terms)]
                if factorial_scaled:
                    ts = [_scaled(t, 1.0 / math.factorial(k + 1)) for k, t in enumerate(ts)]
                # a term known to be zero is None for the rules (no work, no equations:
                # the common direction (1, 0, .., 0) moves only the first coefficient)
                leaf_series.append([None if _known_zero(t) else t for t in ts])
        leaves.extend(p_leaves)
        in_tree.append((p_tree, len(p_leaves)))

    out_store = {}

    def flat_fun(*xs):
        args, pos = [], 0
        for p_tree, n in in_tree:
            args.append(tree.tree_unflatten(p_tree, list(xs[pos:pos + n])))
            pos += n
        out_leaves, out_store["tree"] = tree.tree_flatten(fun(*args))
        return [as_input(o, f"output {i} of {name}") for i, o in enumerate(out_leaves)]

    outs, out_series = jet_flat(flat_fun, leaves, leaf_series, K)
    out_tree = out_store["tree"]
    return out_tree, outs, _user_terms(outs, out_series, K, factorial_scaled)


def _user_terms(outs, out_series, K, factorial_scaled):
    """The output coefficients as the user sees them: K zerax arrays per output leaf."""
    out_terms = []
    for o, s in zip(outs, out_series):
        a = get_aval(o)
        ts = [np.zeros(a.shape, a.dtype) if s is None or t is None else t
              for t in (s if s is not None else [None] * K)]
        if factorial_scaled:
            ts = [t if isinstance(t, np.ndarray) else _scaled(t, float(math.factorial(k + 1)))
                  for k, t in enumerate(ts)]
        out_terms.append([as_output(t) for t in ts])
    return out_terms


def derivatives(fun, order: int, argnums: int = 0, direction=None):
    """``fun``'s value and its first ``order`` derivatives with respect to argument
    ``argnums``, in one Taylor-mode pass: ``derivatives(f, n)(*args)`` returns the list
    ``[f, f', f'', .., f^(n)]`` at ``args`` (each structured like ``f``'s output).

    For a scalar argument these are the ordinary derivatives; for an array argument,
    the directional derivatives ``D^k f(x)[v, .., v]`` along ``direction`` (required
    then).  The result is differentiable, jittable and vmappable like any zerax value.

    >>> import zerax as zx, zerax.numpy as znp
    >>> [round(float(d), 6) for d in zx.taylor.derivatives(znp.exp, 3)(0.0)]
    [1.0, 1.0, 1.0, 1.0]
    >>> float(zx.grad(lambda x: zx.taylor.derivatives(znp.sin, 2)(x)[2])(0.0))
    -1.0
    """
    if not isinstance(order, (int, np.integer)) or isinstance(order, bool) or order < 0:
        raise errors.ZeraxValueError(
            f"derivatives: order must be a non-negative integer, got {order!r}")
    if not isinstance(argnums, (int, np.integer)) or isinstance(argnums, bool):
        raise errors.ZeraxTypeError(
            f"derivatives: argnums must be one int (the argument to differentiate), got "
            f"{argnums!r}")
    name = fun_name(fun)

    @functools.wraps(fun)
    def derivatives_fun(*args, **kwargs):
        (i,) = normalize_argnums(argnums, len(args), name)[1]
        x = args[i]
        x_leaves, x_tree = tree.tree_flatten(x)
        x_leaves = [as_input(v, f"argument {i} of {name}") for v in x_leaves]
        if direction is None:
            if any(tuple(get_aval(v).shape) != () for v in x_leaves):
                raise errors.ZeraxValueError(
                    f"derivatives of {name}: argument {i} is not a scalar, so the "
                    "derivatives are directional: pass direction= (an array, or a pytree "
                    "like the argument).")
            v_leaves = [np.ones((), get_aval(v).dtype) for v in x_leaves]
        else:
            v_leaves, v_tree = tree.tree_flatten(direction)
            if v_tree != x_tree:
                raise errors.TreeMismatchError(
                    f"derivatives: direction is structured {v_tree} but argument {i} of "
                    f"{name} is structured {x_tree}.")
        v = tree.tree_unflatten(x_tree, v_leaves)
        zero = tree.tree_unflatten(x_tree, [np.zeros(np.shape(t), get_aval(as_input(
            t, "direction")).dtype) for t in v_leaves])
        if order == 0:
            return [fun(*args, **kwargs)]

        def f(xi):
            full = list(args)
            full[i] = xi
            return fun(*full, **kwargs)

        y_tree, ys, terms = _jet_leaves(f, (x,), ((v,) + (zero,) * (order - 1),), True)
        return [tree.tree_unflatten(y_tree, [as_output(y) for y in ys])] + [
            tree.tree_unflatten(y_tree, [ts[k] for ts in terms]) for k in range(order)]

    return derivatives_fun
