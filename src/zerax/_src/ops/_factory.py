"""Small factories that remove boilerplate when declaring primitives.

`elementwise(...)` gives an n-ary elementwise primitive its shape/dtype rule;
`defjvp` builds a JVP rule from one derivative function per argument, skipping
symbolic-zero tangents; `deflinear` and `unbroadcast` serve linear primitives.

They also give the eager tape (``tape.py``) its reverse rules (``prim.vjp``) for free
where that is exact: an elementwise primitive's Jacobian is diagonal, hence its own
transpose, so each per-argument JVP rule applied to the cotangent is that argument's
VJP; a linear primitive's VJP for one operand is its transpose rule with only that
operand undefined (`vjp_from_transpose`); a piecewise-constant one has none.  A direct
NumPy rule set after these replaces them where speed matters.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core.ad_util import UndefinedPrimal, Zero, add_any, is_undefined
from ..core.core import Primitive, ShapedArray, bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import broadcast_batcher
from ..interpreters.tape import vjp_rules


def elementwise_shape(name, avals):
    """Elementwise operands share one shape; a 0-d operand broadcasts (like a literal)."""
    shape = ()
    for a in avals:
        if a.shape:
            if shape and a.shape != shape:
                raise errors.ShapeError(
                    f"{name}: operand shapes {' and '.join(str(b.shape) for b in avals)} do "
                    "not match (elementwise primitives need equal shapes; zerax.numpy "
                    "functions broadcast first).")
            shape = a.shape
    return shape


def same_dtype(name, avals):
    dts = {a.dtype for a in avals}
    if len(dts) > 1:
        raise errors.ZeraxTypeError(
            f"{name}: operands must have one dtype, got {', '.join(sorted(d.name for d in dts))} "
            "(zerax.numpy functions promote first).")
    return avals[0].dtype


def elementwise(name, impl, nargs=1, *, dtype_rule=None, kinds=None):
    """Declare an elementwise primitive with its NumPy ``impl`` and shape rule.

    ``nargs`` is the number of operands (a tuple ``(min, None)``: at least ``min``);
    ``kinds`` restricts operand dtype kinds (e.g. "fc" for float math); ``dtype_rule``
    maps input avals to the output dtype (default: the common input dtype)."""
    prim = Primitive(name)
    prim.impl = impl

    def abstract_eval(*avals, **params):
        # (checked: a program read from a file may say anything)
        if len(avals) != nargs if type(nargs) is int else len(avals) < nargs[0]:
            want = nargs if type(nargs) is int else f"at least {nargs[0]}"
            raise errors.ZeraxTypeError(f"{name} takes {want} operand(s), got {len(avals)}")
        shape = elementwise_shape(name, avals)
        if dtype_rule is None:
            dtype = same_dtype(name, avals)
        else:
            dtype = dtype_rule(*avals, **params)
        if kinds is not None:
            for a in avals:
                if dtype_kind(a.dtype) not in kinds:
                    raise errors.ZeraxTypeError(
                        f"{name} does not accept dtype {a.dtype.name}")
        return ShapedArray(shape, dtype)

    prim.abstract_eval = abstract_eval
    prim.elementwise = True
    broadcast_batcher(prim)
    return prim


# ``broadcast_in_dim`` and ``reduce_sum`` are declared in shape.py and reduce.py, which
# build on this module: they install themselves here when imported (ops/__init__.py
# imports every ops module), for the helpers below.
_shape_ops: dict = {}


def install(**fns) -> None:
    """Called by shape.py (``broadcast_in_dim``) and reduce.py (``reduce_sum``)."""
    _shape_ops.update(fns)


def broadcast_to_shape(x, shape):
    """Broadcast ``x`` (same rank or 0-d) to ``shape`` with the broadcast primitive."""
    broadcast_in_dim = _shape_ops["broadcast_in_dim"]
    xs = tuple(x.shape)
    if xs == tuple(shape):
        return x
    if not xs:
        return broadcast_in_dim(x, tuple(shape), ())
    raise errors.ShapeError(f"cannot broadcast {xs} to {tuple(shape)}")


def unbroadcast(ct, aval):
    """A cotangent for an operand of type ``aval`` from one of the output's shape."""
    if type(ct) is Zero:
        return ct
    if tuple(ct.shape) == aval.shape:
        return ct
    return _shape_ops["reduce_sum"](ct, axes=tuple(range(len(ct.shape))))


def _add_tangents(a, b):
    if a is None:
        return b
    return add_any(a, b)


def defjvp(prim, *rules, vjp=None):
    """JVP from per-argument rules ``rule(g, ans, *primals, **params)``; a rule of None
    means the output does not depend differentiably on that argument.  ``vjp``: direct
    NumPy rules ``rule(ct, ans, *values, **params)`` for the eager tape (tape.py), one per
    argument, each the transpose of the JVP rule beside it computed without binding
    primitives; an elementwise primitive without them uses its JVP rules (a diagonal
    Jacobian is self-adjoint)."""

    def jvp(primals, tangents, **params):
        ans = bind(prim, *primals, **params)
        if dtype_kind(ans.dtype) not in "fc":
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        out = None
        for rule, t in zip(rules, tangents):
            if rule is None or type(t) is Zero:
                continue
            contribution = rule(t, ans, *primals, **params)
            if tuple(contribution.shape) != tuple(ans.shape):
                contribution = broadcast_to_shape(contribution, ans.shape)
            out = _add_tangents(out, contribution)
        if out is None:
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        return ans, out

    jvp_rules[prim] = jvp
    if transpose_rules.get(prim) is None:
        prim.unsupported.setdefault("transpose", f"{prim.name} is not linear")
    if vjp is not None:
        vjp_rules[prim] = tuple(vjp)
    elif prim.elementwise and vjp_rules.get(prim) is None:
        vjp_rules[prim] = tuple(rules)  # a diagonal Jacobian is self-adjoint
    return jvp


def vjp_from_transpose(prim):
    """Tape VJP rules for a primitive linear in each operand on its own (every linear
    primitive, and bilinear ones such as dot_general): operand i's cotangent is the
    transpose rule's, with operand i undefined and the others at their values."""
    cache = {}

    def rule_for(i):
        rule = cache.get(i)
        if rule is None:
            def rule(ct, ans, *vals, **params):
                args = list(vals)
                v = vals[i]
                args[i] = UndefinedPrimal(ShapedArray(np.shape(v), v.dtype))
                return transpose_rules.get(prim)(ct, *args, **params)[i]
            cache[i] = rule
        return rule

    return rule_for


def deflinear(prim, transpose_rule):
    """A primitive linear in all of its array arguments: its JVP applies itself to the
    tangents; ``transpose_rule(ct, *args, **params)`` returns input cotangents."""

    def jvp(primals, tangents, **params):
        ans = bind(prim, *primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero(ShapedArray(ans.shape, ans.dtype))
        ts = [np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t for t in tangents]
        return ans, bind(prim, *ts, **params)

    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose_rule
    if vjp_rules.get(prim) is None:
        vjp_rules[prim] = vjp_from_transpose(prim)
    return prim


def not_differentiable(prim, reason="its output is piecewise constant"):
    """Integer/boolean-valued primitives: zero tangents, nothing to transpose."""

    def jvp(primals, tangents, **params):
        ans = bind(prim, *primals, **params)
        if prim.multiple_results:
            return ans, [Zero(ShapedArray(a.shape, a.dtype)) for a in ans]
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))

    jvp_rules[prim] = jvp
    vjp_rules[prim] = ()  # no operand has a cotangent: the tape records nothing
    prim.unsupported["transpose"] = f"{prim.name} is not linear ({reason})"
    return prim


__all__ = ["elementwise", "defjvp", "deflinear", "not_differentiable", "unbroadcast",
           "broadcast_to_shape", "is_undefined", "elementwise_shape", "same_dtype",
           "vjp_from_transpose"]
