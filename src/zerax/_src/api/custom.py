"""User-defined derivatives and rematerialisation: `custom_jvp`, `custom_vjp`,
`checkpoint`, and the seed's `Function` (forward on NumPy, backward with zerax ops).

Each binds a call primitive holding a traced sub-program (declared with its rules in
``ops/custom_calls.py``); the JVP trace handles it with the user's rule, every other
trace inlines or records it.  A custom VJP becomes, in the tangent program, one linear
equation (``custom_lin``, in ``interpreters/ad.py``) whose transpose calls the user's
``bwd``.
"""

from __future__ import annotations

import copy
import functools
import inspect

import numpy as np

from ... import errors
from ..base.dtypes import kind as dtype_kind
from ..core import tree
from ..core.api_util import OutTree, as_input, flatten_fun
from ..core.core import bind, find_top_trace, get_aval
from ..ir.tracing import fun_name, trace_closed
from ..ops.custom_calls import custom_jvp_call_p, custom_vjp_call_p, function_call_p, remat_p


def _resolve_kwargs(fun, args, kwargs):
    if not kwargs:
        return args
    ba = inspect.signature(fun).bind(*args, **kwargs)
    ba.apply_defaults()
    return ba.args


# --------------------------------------------------------------------------- custom_jvp

def _no_symbolic_zeros(symbolic_zeros, where):
    if symbolic_zeros:
        raise errors.NotSupportedError(
            f"{where}(..., symbolic_zeros=True) is not supported: zerax passes zero "
            "tangents and cotangents to custom rules as concrete zeros; leave "
            "symbolic_zeros=False.")


class custom_jvp:
    """A function with a user-supplied JVP rule (JAX's API).

    >>> import zerax as zx, zerax.numpy as znp
    >>> @zx.custom_jvp
    ... def f(x):
    ...     return znp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t
    >>> float(zx.grad(f)(0.5))
    2.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """Set the JVP rule ``jvp(primals, tangents) -> (out, tangent_out)``.  Zero
        tangents are passed as concrete zeros (``symbolic_zeros=True`` is not supported)."""
        _no_symbolic_zeros(symbolic_zeros, "custom_jvp.defjvp")
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument: ``tangent_fn(t, ans, *primals)``."""
        def jvp(primals, tangents):
            ans = self(*primals)
            out = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                c = fn(t, ans, *primals)
                out = c if out is None else out + c
            return ans, out
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self.jvp is None:
            raise errors.ZeraxTypeError(
                f"custom_jvp function {fun_name(self.fun)} has no JVP rule: call .defjvp.")
        nondiff = self.nondiff_argnums
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree.tree_flatten(diff_args)
        leaves = [as_input(x, f"argument of {fun_name(self.fun)}") for x in leaves]
        top = find_top_trace(leaves)
        if top is None:
            return self.fun(*args)
        out_tree = OutTree()

        def rebuild(diff_vals):
            it = iter(diff_vals)
            return [args[i] if i in nondiff else next(it) for i in range(len(args))]

        flat_fun = flatten_fun(self.fun, in_tree, out_tree,
                               apply=lambda fun, diff: fun(*rebuild(diff)))

        def flat_jvp(primals, tangents):
            p = tree.tree_unflatten(in_tree, primals)
            t = tree.tree_unflatten(in_tree, tangents)
            out, t_out = self.jvp(*[args[i] for i in nondiff], tuple(p), tuple(t))
            out_leaves, ot = tree.tree_flatten(out)
            t_leaves, tt = tree.tree_flatten(t_out)
            if ot != tt:
                raise errors.ZeraxTypeError(
                    f"the custom JVP rule of {fun_name(self.fun)} returned a primal output "
                    f"structured {ot} but a tangent output structured {tt}; they must match.")
            out_tree.tree = ot
            return out_leaves, [_checked_tangent(self.fun, i, o, t)
                                for i, (o, t) in enumerate(zip(out_leaves, t_leaves))]

        outs = top.process_custom_jvp(custom_jvp_call_p, flat_fun, flat_jvp, leaves, {})
        return tree.tree_unflatten(out_tree.tree, outs)


def _checked_tangent(fun, i, primal, tangent):
    """A custom JVP rule's tangent output ``i``: its shape and (for float and complex
    outputs) dtype must be the primal output's, as JAX requires; a Python scalar takes
    the primal's dtype."""
    p = get_aval(as_input(primal, "custom JVP primal output"))
    if type(tangent) in (int, float, complex) and dtype_kind(p.dtype) in "fc":
        tangent = np.asarray(tangent, p.dtype)
    t = get_aval(as_input(tangent, "custom JVP tangent"))
    if tuple(t.shape) != tuple(p.shape) or (dtype_kind(p.dtype) in "fc" and t.dtype != p.dtype):
        raise errors.ZeraxTypeError(
            f"the custom JVP rule of {fun_name(fun)} returned, for output {i}, a primal "
            f"of shape {tuple(p.shape)} and dtype {p.dtype.name} but a tangent of shape "
            f"{tuple(t.shape)} and dtype {t.dtype.name}; a tangent must have its "
            "primal's shape and dtype.")
    return as_input(tangent, "custom JVP tangent")


# --------------------------------------------------------------------------- custom_vjp

class custom_vjp:
    """A function with user-supplied forward and backward passes (JAX's API).

    >>> import zerax as zx, zerax.numpy as znp
    >>> @zx.custom_vjp
    ... def f(x):
    ...     return znp.sin(x)
    >>> def f_fwd(x):
    ...     return f(x), znp.cos(x)
    >>> def f_bwd(cos_x, g):
    ...     return (cos_x * g,)
    >>> f.defvjp(f_fwd, f_bwd)
    >>> float(zx.grad(f)(0.0))
    1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = self.jvp_forward = None

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        """Set the rules: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff_args, residuals, ct) -> tuple of cotangents`` (one per
        differentiable argument, None for a zero).  ``optimize_remat`` is accepted (a
        scheduling hint); ``symbolic_zeros=True`` is not supported."""
        del optimize_remat
        _no_symbolic_zeros(symbolic_zeros, "custom_vjp.defvjp")
        self.fwd, self.bwd = fwd, bwd

    def defjvp_forward(self, jvp):
        """A zerax extension: the rule of forward mode (``jvp``, ``jacfwd``), which a
        custom_vjp function otherwise refuses (as JAX's):
        ``jvp(*nondiff_args, primals, tangents) -> tangents of the outputs`` (``primals``
        and ``tangents`` the tuples of the differentiable arguments).  Reverse mode still
        uses ``bwd``.  ``experimental.ode.odeint`` solves the forward sensitivity
        equations this way.

        >>> import zerax as zx, zerax.numpy as znp
        >>> @zx.custom_vjp
        ... def f(x):
        ...     return znp.sin(x)
        >>> f.defvjp(lambda x: (f(x), znp.cos(x)), lambda c, g: (c * g,))
        >>> f.defjvp_forward(lambda primals, tangents: znp.cos(primals[0]) * tangents[0])
        >>> float(zx.jvp(f, (0.0,), (2.0,))[1]), float(zx.grad(f)(0.0))
        (2.0, 1.0)
        """
        self.jvp_forward = jvp

    def __call__(self, *args, **kwargs):
        args = _resolve_kwargs(self.fun, args, kwargs)
        name = fun_name(self.fun)
        if self.fwd is None:
            raise errors.ZeraxTypeError(f"custom_vjp function {name} has no rules: call .defvjp.")
        nondiff = self.nondiff_argnums
        nd_vals = [args[i] for i in nondiff]
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree.tree_flatten(diff_args)
        leaves = [as_input(x, f"argument of {name}") for x in leaves]
        top = find_top_trace(leaves)
        if top is None:
            return self.fun(*args)
        trees = {}

        def rebuild(diff_vals):
            it = iter(diff_vals)
            return [args[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*xs):
            out = self.fun(*rebuild(tree.tree_unflatten(in_tree, xs)))
            out_leaves, trees["out"] = tree.tree_flatten(out)
            return out_leaves

        def flat_fwd(*xs):
            res = self.fwd(*rebuild(tree.tree_unflatten(in_tree, xs)))
            if not (isinstance(res, tuple) and len(res) == 2):
                raise errors.ZeraxTypeError(
                    f"the fwd rule of custom_vjp function {name} must return a pair "
                    "(output, residuals).")
            out, residuals = res
            out_leaves, trees["out"] = tree.tree_flatten(out)
            res_leaves, trees["res"] = tree.tree_flatten(residuals)
            return out_leaves, res_leaves

        def flat_bwd(res_leaves, ct_leaves):
            residuals = tree.tree_unflatten(trees["res"], res_leaves)
            ct = tree.tree_unflatten(trees["out"], ct_leaves)
            in_cts = self.bwd(*nd_vals, residuals, ct)
            if isinstance(in_cts, list):   # JAX accepts a list too
                in_cts = tuple(in_cts)
            if not isinstance(in_cts, tuple) or len(in_cts) != len(diff_args):
                raise errors.ZeraxTypeError(
                    f"the bwd rule of custom_vjp function {name} must return a tuple with one "
                    f"cotangent per differentiable argument ({len(diff_args)}), got {in_cts!r:.80}")
            flat = []
            for j, (arg, c) in enumerate(zip(diff_args, in_cts)):
                arg_leaves, arg_tree = tree.tree_flatten(arg)
                if c is None:
                    flat.extend(np.zeros(np.shape(a), np.result_type(a)) for a in arg_leaves)
                    continue
                c_leaves, c_tree = tree.tree_flatten(c)
                if c_tree != arg_tree:
                    raise errors.ZeraxTypeError(
                        f"the bwd rule of {name} returned a cotangent structured {c_tree} for "
                        f"an argument structured {arg_tree}")
                for k, (a, cl) in enumerate(zip(arg_leaves, c_leaves)):
                    if cl is not None and tuple(np.shape(cl)) != tuple(np.shape(a)):
                        raise errors.ShapeError(
                            f"the bwd rule of custom_vjp function {name} returned a "
                            f"cotangent of shape {tuple(np.shape(cl))} for leaf {k} of "
                            f"differentiable argument {j} with shape {tuple(np.shape(a))}; they must match (as in JAX).")
                flat.extend(c_leaves)
            return flat

        params = {}
        if self.jvp_forward is not None:
            def flat_jvp(p_leaves, t_leaves):
                primals = tuple(tree.tree_unflatten(in_tree, p_leaves))
                tangents = tuple(tree.tree_unflatten(in_tree, t_leaves))
                t_out = self.jvp_forward(*nd_vals, primals, tangents)
                t_leaves_out, t_tree = tree.tree_flatten(t_out)
                if "out" in trees and t_tree != trees["out"]:
                    raise errors.ZeraxTypeError(
                        f"the forward rule of custom_vjp function {name} returned tangents "
                        f"structured {t_tree}, but the function's output is {trees['out']}")
                return t_leaves_out
            params["fwd_jvp"] = flat_jvp
        outs = top.process_custom_vjp(custom_vjp_call_p, flat_fun, flat_fwd, flat_bwd, leaves,
                                      params)
        return tree.tree_unflatten(trees["out"], outs)


# --------------------------------------------------------------------------- checkpoint

def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """Differentiate ``fun`` without storing its intermediates: reverse mode recomputes
    them from ``fun``'s inputs during the backward pass (memory for time).

    >>> import zerax as zx, zerax.numpy as znp
    >>> f = zx.checkpoint(lambda x: znp.sin(znp.sin(x)))
    >>> round(float(zx.grad(f)(1.0)), 5)
    0.36004
    """
    del prevent_cse, policy  # every intermediate is recomputed; no policy is needed
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        nargs = len(args)
        static = {i % nargs for i in static_argnums if -nargs <= i < nargs}
        dyn_idx = [i for i in range(nargs) if i not in static]
        leaves, in_tree = tree.tree_flatten(([args[i] for i in dyn_idx], kwargs))
        leaves = [as_input(x, f"argument of {fun_name(fun)}") for x in leaves]
        if find_top_trace(leaves) is None:
            return fun(*args, **kwargs)
        def call(fun, dyn_and_kw):
            dyn, kw = dyn_and_kw
            full = list(args)
            for i, v in zip(dyn_idx, dyn):
                full[i] = v
            return fun(*full, **kw)

        out_tree = OutTree()
        flat = flatten_fun(fun, in_tree, out_tree, apply=call)
        jaxpr, consts = trace_closed(flat, [get_aval(x) for x in leaves], fun_name(fun))
        outs = bind(remat_p, *consts, *leaves, jaxpr=jaxpr)
        return tree.tree_unflatten(out_tree.tree, outs)

    return checkpointed


remat = checkpoint


class checkpoint_policies:
    """JAX's named rematerialisation policies, for code that passes one to `checkpoint`.
    zerax recomputes every intermediate whatever the policy (only memory use differs),
    so these are accepted and have no effect."""

    @staticmethod
    def everything_saveable(*_, **__):
        return True

    @staticmethod
    def nothing_saveable(*_, **__):
        return False

    dots_saveable = checkpoint_dots = everything_saveable
    dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = everything_saveable

    @staticmethod
    def save_only_these_names(*names):
        return checkpoint_policies.nothing_saveable

    @staticmethod
    def save_any_names_but_these(*names):
        return checkpoint_policies.nothing_saveable

    save_anything_except_these_names = save_any_names_but_these

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        return lambda *a, **k: policy_1(*a, **k) or policy_2(*a, **k)

# --------------------------------------------------------------------------- Function

class Function:
    """The seed's style: ``forward`` on NumPy arrays, ``backward`` with zerax operations.

    ``backward(*gys)`` reads the call's inputs from ``self.inputs`` (and outputs from
    ``self.outputs``) and returns one cotangent per input.  Calls work eagerly and under
    every transform; a derivative of any order flows through ``backward``.  Under
    tracing, output shapes are found by running ``forward`` once on zeros.

    >>> import zerax as zx
    >>> class Square(zx.Function):
    ...     def forward(self, x):
    ...         return x ** 2
    ...     def backward(self, gy):
    ...         x, = self.inputs
    ...         return 2 * x * gy
    >>> square = Square()
    >>> square(3.0)
    Array(9., dtype=float64)
    >>> zx.grad(square)(3.0)
    Array(6., dtype=float64)
    >>> zx.grad(zx.grad(square))(3.0)
    Array(2., dtype=float64)
    """

    inputs: tuple = ()
    outputs: tuple = ()

    def forward(self, *xs):
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, *xs)")

    def backward(self, *gys):
        raise NotImplementedError(f"{type(self).__name__} must define backward(self, *gys)")

    def __call__(self, *inputs):
        name = type(self).__name__
        xs = [as_input(x, f"input {i} of {name}") for i, x in enumerate(inputs)]
        fn = self
        single = []

        def run_forward(*vals):
            outs = bind(function_call_p, *vals, fn=fn)
            return tuple(outs)

        call = custom_vjp(run_forward)

        def fwd(*vals):
            outs = call(*vals)
            return outs, (tuple(vals), outs)

        def bwd(res, gys):
            ins, outs = res
            instance = copy.copy(fn)
            instance.inputs, instance.outputs = ins, outs
            gxs = instance.backward(*gys)
            gxs = gxs if isinstance(gxs, tuple) else (gxs,)
            if len(gxs) != len(ins):
                raise errors.ZeraxTypeError(
                    f"{name}.backward returned {len(gxs)} cotangents for {len(ins)} inputs")
            return tuple(as_input(g, f"{name}.backward result") for g in gxs)

        call.defvjp(fwd, bwd)
        outs = call(*xs)
        single.append(len(outs) == 1)
        return outs[0] if single[0] else outs


# --------------------------------------------------------------------------- custom_gradient

def custom_gradient(fun):
    """A function that returns its value and its own backward rule (JAX's
    ``jax.custom_gradient``, TensorFlow's style): ``fun(*args)`` returns ``(value,
    vjp)``, where ``vjp(ct)`` gives the cotangent of each argument (a tuple, or the one
    cotangent of a single argument).  Called, it gives ``value``; differentiated, its
    ``vjp``.  It is a `custom_vjp` whose backward pass calls ``fun`` again on the saved
    arguments to get the rule (the residuals are the arguments).

    >>> import zerax as zx, zerax.numpy as znp
    >>> @zx.custom_gradient
    ... def f(x):
    ...     return znp.sin(x), lambda g: g * 10.0
    >>> float(f(0.0)), float(zx.grad(f)(0.0))
    (0.0, 10.0)
    """
    if not callable(fun):
        raise errors.ZeraxTypeError(
            f"custom_gradient takes a function, got {type(fun).__name__}.")
    name = fun_name(fun)

    def _split(res):
        if not (isinstance(res, tuple) and len(res) == 2 and callable(res[1])):
            raise errors.ZeraxTypeError(
                f"the function {name} given to custom_gradient must return a pair "
                "(value, vjp function).")
        return res

    def primal(*args):
        return _split(fun(*args))[0]
    functools.update_wrapper(primal, fun)
    wrapped = custom_vjp(primal)

    def fwd(*args):
        return _split(fun(*args))[0], args

    def bwd(args, ct):
        cts = _split(fun(*args))[1](ct)
        if len(args) == 1 and not (isinstance(cts, (tuple, list)) and len(cts) == 1):
            cts = (cts,)
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        if kwargs:
            args = _resolve_kwargs(fun, args, kwargs)
        return wrapped(*args)
    return call
