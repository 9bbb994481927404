"""Equinox's filtered custom derivatives and closure conversion for `zerax.nn`:
`filter_custom_jvp`, `filter_custom_vjp`, `filter_make_jaxpr`, `filter_closure_convert`.

Arguments are arbitrary pytrees: arrays go through `zerax.custom_jvp`/`zerax.custom_vjp`
(or the traced program), everything else is held static, so the rules see the same
Python objects the function did. zerax has no symbolic zeros: a floating-point input that
is not differentiated gets a zero tangent (Equinox passes ``None``), and every
floating-point array of ``vjp_arg`` counts as perturbed.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

import zerax as zx
import zerax.numpy as znp
from .. import errors
from .. import tree_util as jtu

from ._filters import combine, is_array, is_inexact_array, partition
from ._module import Module, field, module_update_wrapper

__all__ = ["filter_custom_jvp", "filter_custom_vjp", "filter_make_jaxpr",
           "filter_closure_convert"]


class _Static(Module):
    """A non-array pytree carried through a transform as structure (no leaves)."""

    value: Any = field(static=True)


def _is_none(x) -> bool:
    return x is None


def _zeros_for_none(t, x):
    """A zero tangent/cotangent where a rule returned ``None``."""
    if t is None and x is not None:
        return znp.zeros_like(x)
    return t


def _nondifferentiable(x, msg: str):
    """The identity on the arrays of ``x``; differentiating through it is an error."""
    dynamic, static = partition(x, is_array)
    leaves, treedef = jtu.tree_flatten(dynamic)
    if not leaves:
        return x

    @zx.custom_jvp
    def ident(*xs):
        return xs

    @ident.defjvp
    def _ident_jvp(primals, tangents):
        raise errors.NonDifferentiableError(msg)
    return combine(jtu.tree_unflatten(treedef, list(ident(*leaves))), static)


class filter_custom_jvp:
    """`zerax.custom_jvp` on pytree arguments (Equinox's ``filter_custom_jvp``): no
    ``nondiff_argnums``; arrays are the primals, everything else is static. The rule,
    set with ``def_jvp``, is called ``jvp(primals, tangents, **kwargs)`` with
    ``tangents`` ``None`` for every leaf that is not a floating-point array; keyword
    arguments are never differentiated (doing so is an error). A ``None`` output tangent
    is a zero.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp
    >>> @nn.filter_custom_jvp
    ... def call(x, y, *, fn):
    ...     return fn(x, y)
    >>> @call.def_jvp
    ... def call_jvp(primals, tangents, *, fn):
    ...     (x, y), (tx, ty) = primals, tangents
    ...     return call(x, y, fn=fn), 2 * tx
    >>> float(nn.filter_grad(call)(znp.array(2.0), znp.array(5.0), fn=lambda a, b: a + b))
    2.0
    """

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.fn = fn

        def fn_wrapper(static, dynamic):
            args, kwargs = combine(dynamic, static)
            return fn(*args, **kwargs)
        self._custom = zx.custom_jvp(fn_wrapper, nondiff_argnums=(0,))
        self._has_rule = False

    def def_jvp(self, fn_jvp: Callable) -> Callable:
        """Set the rule ``fn_jvp(primals, tangents, **kwargs) -> (out, tangent_out)``."""
        def jvp_wrapper(static, primals, tangents):
            (dynamic,), (t_dynamic,) = primals, tangents
            t_args, _ = jtu.tree_map(
                lambda t, x: t if is_inexact_array(x) else None, t_dynamic, dynamic)
            args, kwargs = combine(dynamic, static)
            out, t_out = fn_jvp(args, t_args, **kwargs)
            return out, jtu.tree_map(_zeros_for_none, t_out, out, is_leaf=_is_none)
        self._custom.defjvp(jvp_wrapper)
        self._has_rule = True
        return fn_jvp

    def defjvp(self, fn_jvp: Callable) -> Callable:
        """Equinox's older name of `def_jvp` (zero tangents are arrays either way)."""
        return self.def_jvp(fn_jvp)

    def __call__(self, *args, **kwargs):
        if not self._has_rule:
            raise errors.ZeraxTypeError(
                f"filter_custom_jvp function {self.fn.__name__} has no rule: call .def_jvp")
        kwargs = _nondifferentiable(
            kwargs, "the keyword arguments of a filter_custom_jvp function are not "
            "differentiated; pass the arrays to differentiate positionally")
        dynamic, static = partition((args, kwargs), is_array)
        return self._custom(static, dynamic)


class filter_custom_vjp:
    """`zerax.custom_vjp` on pytree arguments (Equinox's ``filter_custom_vjp``): only
    the first argument ``vjp_arg`` is differentiated (pack several into a tuple); the
    others and the keyword arguments are passed along and must not be differentiated.

    - ``def_fwd(fn_fwd)``: ``fn_fwd(perturbed, vjp_arg, *args, **kwargs) -> (out,
      residuals)``; ``perturbed`` is ``vjp_arg``'s structure with True on its
      floating-point arrays.
    - ``def_bwd(fn_bwd)``: ``fn_bwd(residuals, grad_out, perturbed, vjp_arg, *args,
      **kwargs)`` returns the cotangent of ``vjp_arg`` (``None`` for zero leaves).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp
    >>> @nn.filter_custom_vjp
    ... def scale(p, k):
    ...     return p["w"] * k
    >>> @scale.def_fwd
    ... def scale_fwd(perturbed, p, k):
    ...     return scale(p, k), None
    >>> @scale.def_bwd
    ... def scale_bwd(res, g, perturbed, p, k):
    ...     return {"w": 10 * g, "name": None}
    >>> float(zx.grad(lambda w: scale({"w": w, "name": "w"}, 3))(1.0))
    10.0
    """

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fn_fwd: Callable | None = None
        self.fn_bwd: Callable | None = None
        self._custom = None

    def def_fwd(self, fn_fwd: Callable) -> Callable:
        self.fn_fwd = fn_fwd
        if self.fn_bwd is not None:
            self._define()
        return fn_fwd

    def def_bwd(self, fn_bwd: Callable) -> Callable:
        self.fn_bwd = fn_bwd
        if self.fn_fwd is not None:
            self._define()
        return fn_bwd

    def defvjp(self, fn_fwd: Callable, fn_bwd: Callable) -> None:
        """Equinox's older interface: ``fn_fwd(vjp_arg, *args, **kwargs)`` and
        ``fn_bwd(residuals, grad_out, vjp_arg, *args, **kwargs)``."""
        self.def_fwd(lambda perturbed, *a, **k: fn_fwd(*a, **k))
        self.def_bwd(lambda res, g, perturbed, *a, **k: fn_bwd(res, g, *a, **k))

    def _define(self):
        fn, outer = self.fn, self

        def split_out(out):
            array_out, nonarray_out = partition(out, is_array)
            diff_out, nondiff_out = partition(array_out, is_inexact_array)
            return diff_out, nondiff_out, _Static(nonarray_out)

        def fn_wrapped(nonarray_vjp, nonarray_rest, diff_vjp, nondiff_vjp, array_rest):
            vjp_arg = combine(nonarray_vjp, diff_vjp, nondiff_vjp)
            args, kwargs = combine(nonarray_rest, array_rest)
            return split_out(fn(vjp_arg, *args, **kwargs))

        def perturbed_of(nonarray_vjp, diff_vjp, nondiff_vjp):
            return combine(jtu.tree_map(lambda _: False, nonarray_vjp),
                           jtu.tree_map(lambda _: True, diff_vjp),
                           jtu.tree_map(lambda _: False, nondiff_vjp))

        def fn_fwd(nonarray_vjp, nonarray_rest, diff_vjp, nondiff_vjp, array_rest):
            perturbed = perturbed_of(nonarray_vjp, diff_vjp, nondiff_vjp)
            vjp_arg = combine(nonarray_vjp, diff_vjp, nondiff_vjp)
            args, kwargs = combine(nonarray_rest, array_rest)
            out, residuals = outer.fn_fwd(perturbed, vjp_arg, *args, **kwargs)
            array_res, nonarray_res = partition(residuals, is_array)
            return split_out(out), (array_res, _Static(nonarray_res), diff_vjp, nondiff_vjp,
                                    array_rest)

        def fn_bwd(nonarray_vjp, nonarray_rest, residuals, grad_out):
            array_res, nonarray_res, diff_vjp, nondiff_vjp, array_rest = residuals
            perturbed = perturbed_of(nonarray_vjp, diff_vjp, nondiff_vjp)
            vjp_arg = combine(nonarray_vjp, diff_vjp, nondiff_vjp)
            args, kwargs = combine(nonarray_rest, array_rest)
            res = combine(array_res, nonarray_res.value)
            grad = outer.fn_bwd(res, grad_out[0], perturbed, vjp_arg, *args, **kwargs)
            grad_diff, _ = partition(grad, is_inexact_array, is_leaf=_is_none)
            if jtu.tree_structure(grad_diff, is_leaf=_is_none) != \
                    jtu.tree_structure(diff_vjp, is_leaf=_is_none):
                raise errors.ZeraxTypeError(
                    f"the bwd rule of {fn.__name__} must return a cotangent structured as "
                    "its first argument (vjp_arg), with None for leaves that are not "
                    "floating-point arrays")
            grad_diff = jtu.tree_map(_zeros_for_none, grad_diff, diff_vjp, is_leaf=_is_none)
            return grad_diff, None, None

        custom = zx.custom_vjp(fn_wrapped, nondiff_argnums=(0, 1))
        custom.defvjp(fn_fwd, fn_bwd)
        self._custom = custom

    def __call__(self, vjp_arg, /, *args, **kwargs):
        if self._custom is None:
            raise errors.ZeraxTypeError(
                f"filter_custom_vjp function {self.fn.__name__} needs both rules: call "
                ".def_fwd and .def_bwd")
        array_vjp, nonarray_vjp = partition(vjp_arg, is_array)
        diff_vjp, nondiff_vjp = partition(array_vjp, is_inexact_array)
        array_rest, nonarray_rest = partition((args, kwargs), is_array)
        array_rest = _nondifferentiable(
            array_rest, "only the first argument of a filter_custom_vjp function is "
            "differentiated: pack what you differentiate into it")
        diff_out, nondiff_out, static_out = self._custom(
            nonarray_vjp, nonarray_rest, diff_vjp, nondiff_vjp, array_rest)
        return combine(diff_out, nondiff_out, static_out.value)


# ------------------------------------------------------------------ jaxprs, closures
def _is_struct(x) -> bool:
    return is_array(x) or isinstance(x, zx.ShapeDtypeStruct)


def _struct(x):
    return zx.ShapeDtypeStruct(tuple(x.shape), np.dtype(x.dtype))


class _MakeJaxpr(Module):
    fn: Callable

    @property
    def __wrapped__(self):
        return self.fn

    def __call__(self, *args, **kwargs):
        dynamic, static = partition((args, kwargs), _is_struct)
        leaves, treedef = jtu.tree_flatten(dynamic)
        box: list = []

        def flat(*xs):
            a, k = combine(jtu.tree_unflatten(treedef, list(xs)), static)
            out_dyn, out_static = partition(self.fn(*a, **k), is_array)
            o_leaves, o_def = jtu.tree_flatten(out_dyn)
            box[:] = [o_def, out_static]
            return o_leaves

        closed = zx.make_jaxpr(flat)(*[_struct(x) for x in leaves])
        o_def, out_static = box
        out_struct = jtu.tree_unflatten(o_def, [_struct(v.aval) for v in
                                                closed.jaxpr.outvars])
        return closed, out_struct, out_static


def filter_make_jaxpr(fun: Callable) -> Callable:
    """`zerax.make_jaxpr` on pytrees (Equinox's ``filter_make_jaxpr``): the wrapped
    function, called on example arguments, returns ``(closed_jaxpr, out_struct,
    out_static)``. Arrays and ``ShapeDtypeStruct``s are traced, everything else is static.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> jaxpr, out, static = nn.filter_make_jaxpr(lambda x, s: (x * 2, s))(znp.ones(2), "s")
    >>> out, static
    ((ShapeDtypeStruct(shape=(2,), dtype=float64), None), (None, 's'))
    """
    return module_update_wrapper(_MakeJaxpr(fun))


def _check_input(cc, args, kwargs):
    dynamic, static = partition((args, kwargs), _is_struct)
    leaves, treedef = jtu.tree_flatten(dynamic)
    structs = [_struct(x) for x in leaves]
    if (treedef, structs) != cc.in_dynamic_struct or \
            jtu.tree_flatten(static) != cc.in_static:
        raise errors.ZeraxValueError(
            "a closure-converted function must be called with arguments like the example "
            "ones it was traced with (the same structure, shapes, dtypes and static values)")
    return leaves


class _ClosureConvert(Module):
    jaxpr: Any                     # a leaf (not static): the program
    consts: Any                    # the closed-over values, tracers included
    in_dynamic_struct: Any = field(static=True)
    out_dynamic_struct: Any = field(static=True)
    in_static: Any = field(static=True)
    out_static: Any = field(static=True)

    def __call__(self, *args, **kwargs):
        leaves = _check_input(self, args, kwargs)
        outs = zx.eval_jaxpr(self.jaxpr, self.consts, *leaves)
        o_def = self.out_dynamic_struct
        return combine(jtu.tree_unflatten(o_def, list(outs)), self.out_static)


class _TrivialClosureConvert(Module):
    fn: Callable
    in_dynamic_struct: Any = field(static=True)
    in_static: Any = field(static=True)

    def __call__(self, *args, **kwargs):
        _check_input(self, args, kwargs)
        return self.fn(*args, **kwargs)


def filter_closure_convert(fn: Callable, *args: Any, **kwargs: Any) -> Callable:
    """``fn`` as a pytree whose leaves include every value it closes over, tracers of an
    enclosing transform included (Equinox's ``filter_closure_convert``, after JAX's
    ``closure_convert``): traced once at the example arguments, callable with arguments
    of the same structure, shapes and dtypes. Use it to pass a closure across
    `filter_custom_vjp` or another transform boundary.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp
    >>> def f(x):
    ...     g = nn.filter_closure_convert(lambda a: znp.sin(x) * a, znp.asarray(1.0))
    ...     assert len(g.consts) == 1          # x, a tracer of grad
    ...     return g(znp.asarray(2.0))
    >>> round(float(zx.grad(f)(0.5)), 6)       # 2 cos(0.5)
    1.755165
    """
    dynamic, static = partition((args, kwargs), _is_struct)
    leaves, treedef = jtu.tree_flatten(dynamic)
    in_struct = (treedef, [_struct(x) for x in leaves])
    in_static = jtu.tree_flatten(static)
    if isinstance(fn, types.FunctionType) and fn.__closure__ is None:
        # a function without a closure cannot hold tracers: nothing to trace
        return _TrivialClosureConvert(fn, in_struct, in_static)
    closed, out_struct, out_static = _MakeJaxpr(fn)(*args, **kwargs)
    return _ClosureConvert(closed.jaxpr, list(closed.consts), in_struct,
                           jtu.tree_structure(out_struct), in_static, out_static)
