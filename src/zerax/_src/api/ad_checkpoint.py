"""`checkpoint_name`: JAX's way to name a value for the name-based rematerialisation
policies (``checkpoint_policies.save_only_these_names`` and friends); `saved_residuals`
and `print_saved_residuals`: what reverse mode keeps from the forward pass.

zerax's `checkpoint` recomputes every intermediate in the backward pass whatever the
policy, so a policy changes only how much memory is kept, never a value or a derivative;
a name is therefore an identity on the value (JAX binds a ``name`` primitive that is an
identity too).
"""

from __future__ import annotations

import inspect

from ... import errors
from ..core import tree
from ..core.api_util import as_input
from ..core.core import get_aval
from ..interpreters.ad import vjp
from ..ir.ir import Literal
from ..ir.tracing import fun_name, trace_to_jaxpr

__all__ = ["checkpoint_name", "print_saved_residuals", "saved_residuals"]


def checkpoint_name(x, name):
    """Name the value(s) ``x`` (any pytree of arrays) for `checkpoint` policies; returns
    ``x`` (Python numbers and NumPy arrays converted to zerax arrays), as JAX's
    ``jax.ad_checkpoint.checkpoint_name``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> from zerax.ad_checkpoint import checkpoint_name, checkpoint_policies
    >>> policy = checkpoint_policies.save_only_these_names("h")
    >>> f = zx.checkpoint(lambda x: znp.sin(checkpoint_name(znp.sin(x), "h")), policy=policy)
    >>> round(float(zx.grad(f)(1.0)), 5)
    0.36004
    """
    if not isinstance(name, str):
        raise errors.ZeraxTypeError(
            f"checkpoint_name: name must be a string, got {name!r} at {errors.user_frame()}.")
    return tree.tree_map(lambda leaf: as_input(leaf, "checkpoint_name"), x)


def _argument_names(f, args, kwargs, n_leaves):
    """A name per flat argument leaf, as JAX prints them: the parameter's name and the
    leaf's path in it (``x``, ``d['b']``); ``args[i]`` past the signature."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        pairs = list(bound.arguments.items())
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):
        pairs, params = [(f"args[{i}]", a) for i, a in enumerate(args)] + \
            list(kwargs.items()), {}
    names = []
    for name, value in pairs:
        kind = getattr(params.get(name), "kind", None)
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value, name = tuple(value), name            # *args: name[i]...
        elif kind is inspect.Parameter.VAR_KEYWORD:
            value = dict(value)
        for path, _ in tree.tree_flatten_with_path(value)[0]:
            names.append(name + tree.keystr(path))
    return names if len(names) == n_leaves else [f"at flattened index {i}"
                                                 for i in range(n_leaves)]


def saved_residuals(f, *args, **kwargs):
    """The residuals reverse mode keeps from ``f(*args, **kwargs)``'s forward pass (the
    leaves of the function `vjp` returns), as ``(ShapedArray, where it comes from)``
    pairs: an argument, a constant, or the output of a primitive at a line of the user's
    code (JAX's ``jax.ad_checkpoint.saved_residuals``).

    >>> import zerax.numpy as znp
    >>> [(a.str_short(), w) for a, w in saved_residuals(lambda x: znp.sin(x) * x, 1.0)][0]
    ('f64[]', 'from the argument x')
    """
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    leaves = [as_input(x, f"argument of {fun_name(f)}") for x in leaves]
    names = _argument_names(f, args, kwargs, len(leaves))

    def flat(*xs):
        a, kw = tree.tree_unflatten(in_tree, list(xs))
        _, f_vjp = vjp(lambda *p: f(*tree.tree_unflatten(in_tree, list(p))[0],
                                    **tree.tree_unflatten(in_tree, list(p))[1]), *xs)
        return tree.tree_leaves(f_vjp)

    closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves], fun_name(f),
                            track_source=True)
    jaxpr = closed.jaxpr
    # JAX's order: literals, constants, arguments, then outputs in program order
    res_vars = {v for v in jaxpr.outvars if type(v) is not Literal}
    out = [(get_aval(v.val), "from a literal") for v in jaxpr.outvars if type(v) is Literal]
    out += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    out += [(v.aval, f"from the argument {names[i]}") for i, v in enumerate(jaxpr.invars)
            if v in res_vars]
    for e in jaxpr.eqns:
        where = f" from {e.source}" if e.source else ""
        for v in e.outvars:
            if v not in res_vars:
                continue
            if e.primitive.name == "jit":
                out.append((v.aval, f"output of jitted function "
                                    f"'{e.params.get('name', '?')}'{where}"))
            else:
                out.append((v.aval, f"output of {e.primitive.name}{where}"))
    return out


def print_saved_residuals(f, *args, **kwargs):
    """Print `saved_residuals`, one line per residual: its type and where it comes from
    (JAX's ``jax.ad_checkpoint.print_saved_residuals``).

    >>> import zerax.numpy as znp
    >>> print_saved_residuals(lambda x, y: znp.sum(x * y), znp.ones(3), 2.0)
    f64[3] from the argument x
    f64[] from the argument y
    """
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {where}")
