"""User-defined derivatives and rematerialisation: `custom_jvp`, `custom_vjp`,
`checkpoint`, and the seed's `Function` (forward on NumPy, backward with zerax ops).

Each is a call primitive holding a traced sub-program; the JVP trace handles it with
the user's rule, every other trace inlines or records it.  A custom VJP becomes, in
the tangent program, one linear equation (`custom_lin`) whose transpose calls the
user's ``bwd``.
"""

from __future__ import annotations

import copy
import functools
import inspect

import numpy as np

from ... import errors
from ..core import tree
from ..interpreters.ad import Zero, instantiate, jvp as ad_jvp, vjp as ad_vjp
from ..core.api_util import as_input
from ..core.core import Primitive, ShapedArray, bind, find_top_trace, get_aval
from ..ir.ir import convert_constvars, eval_jaxpr
from ..ir.tracing import fun_name, trace_to_jaxpr
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..ir.tracing import record_rules


def _eval_call_impl(*args, call_jaxpr, **params):
    outs = eval_jaxpr(call_jaxpr, [], *args)
    return [np.asarray(o) for o in outs]


def _call_abstract(*avals, call_jaxpr, **params):
    return list(call_jaxpr.out_avals)


def _resolve_kwargs(fun, args, kwargs):
    if not kwargs:
        return args
    ba = inspect.signature(fun).bind(*args, **kwargs)
    ba.apply_defaults()
    return ba.args


def _record(prim, trace, fun, rules, args, name):
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args], name)
    return bind(prim, *closed.consts, *args, call_jaxpr=convert_constvars(closed.jaxpr),
                num_consts=len(closed.consts), **rules)


# --------------------------------------------------------------------------- custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.impl = _eval_call_impl
custom_jvp_call_p.abstract_eval = _call_abstract
custom_jvp_call_p.unsupported["transpose"] = "it is never linear; its JVP rule is used instead"
record_rules[custom_jvp_call_p] = lambda trace, fun, jvp, args, params: _record(
    custom_jvp_call_p, trace, fun, {"jvp": jvp}, args, "custom_jvp")


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts):
    outs, t_outs = jvp(list(primals[num_consts:]),
                       [instantiate(t) for t in tangents[num_consts:]])
    return outs, t_outs


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


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
        out_tree = []

        def rebuild(diff_vals):
            it = iter(diff_vals)
            return [args[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*xs):
            out = self.fun(*rebuild(tree.tree_unflatten(in_tree, xs)))
            out_leaves, t = tree.tree_flatten(out)
            out_tree.append(t)
            return out_leaves

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
            out_tree.append(ot)
            return out_leaves, [_checked_tangent(self.fun, i, o, t)
                                for i, (o, t) in enumerate(zip(out_leaves, t_leaves))]

        outs = top.process_custom_jvp(custom_jvp_call_p, flat_fun, flat_jvp, leaves, {})
        return tree.tree_unflatten(out_tree[-1], outs)


def _checked_tangent(fun, i, primal, tangent):
    """A custom JVP rule's tangent output ``i``: its shape and (for float and complex
    outputs) dtype must be the primal output's, as JAX requires; a Python scalar takes
    the primal's dtype."""
    p = get_aval(as_input(primal, "custom JVP primal output"))
    if type(tangent) in (int, float, complex) and p.dtype.kind in "fc":
        tangent = np.asarray(tangent, p.dtype)
    t = get_aval(as_input(tangent, "custom JVP tangent"))
    if tuple(t.shape) != tuple(p.shape) or (p.dtype.kind in "fc" and t.dtype != p.dtype):
        raise errors.ZeraxTypeError(
            f"the custom JVP rule of {fun_name(fun)} returned, for output {i}, a primal "
            f"of shape {tuple(p.shape)} and dtype {p.dtype.name} but a tangent of shape "
            f"{tuple(t.shape)} and dtype {t.dtype.name}; a tangent must have its "
            "primal's shape and dtype.")
    return as_input(tangent, "custom JVP tangent")


# --------------------------------------------------------------------------- custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.impl = _eval_call_impl
custom_vjp_call_p.abstract_eval = _call_abstract
custom_vjp_call_p.unsupported["transpose"] = "it is never linear; custom_lin is transposed instead"
record_rules[custom_vjp_call_p] = lambda trace, fun, fwd, bwd, args, params: _record(
    custom_vjp_call_p, trace, fun, {"fwd": fwd, "bwd": bwd}, args, "custom_vjp")

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_impl(*args, num_res, bwd, out_avals):
    if all(not np.any(np.asarray(t)) for t in args[num_res:]):
        # linear in its tangents: at zero tangents it is zero.  (Transposing a linear
        # program by a vjp evaluates it there: cond/scan/while/jit transposes do.)
        return [np.zeros(a.shape, a.dtype) for a in out_avals]
    raise errors.NotSupportedError(
        "forward-mode differentiation (jvp, jacfwd, hessian's outer jacfwd) of a custom_vjp "
        f"function is not supported (at {errors.user_frame()}): its derivative is only known "
        "through its bwd rule. Use reverse mode (grad, vjp, jacrev), or define a custom_jvp.")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    cts = [instantiate(c) if type(c) is Zero else c for c in cts]
    in_cts = bwd(list(res), cts)
    n_in = len(args) - num_res
    if len(in_cts) != n_in:
        raise errors.ZeraxTypeError(
            f"a custom_vjp bwd rule returned {len(in_cts)} cotangents for {n_in} inputs")
    return [None] * num_res + list(in_cts)


custom_lin_p.impl = _custom_lin_impl
custom_lin_p.abstract_eval = lambda *avals, num_res, bwd, out_avals: list(out_avals)
transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_lin_jvp(primals, tangents, *, num_res, bwd, out_avals):
    """custom_lin is linear in its tangent operands, so its JVP along them is itself.
    (Needed where a linear program is transposed by a vjp.)  Along the residuals it
    would be a second derivative through ``bwd``, which is not known."""
    params = dict(num_res=num_res, bwd=bwd, out_avals=out_avals)
    if any(type(t) is not Zero for t in tangents[:num_res]):
        raise errors.NotSupportedError(
            "forward-mode differentiation of a custom_vjp function's derivative with "
            f"respect to its residuals is not supported (at {errors.user_frame()}): it "
            "would need the derivative of its bwd rule. Use reverse mode only, or define "
            "a custom_jvp.")
    outs = bind(custom_lin_p, *primals, **params)
    ts = [instantiate(t) for t in tangents[num_res:]]
    t_outs = bind(custom_lin_p, *primals[:num_res], *ts, **params)
    return outs, t_outs


jvp_rules[custom_lin_p] = _custom_lin_jvp


def custom_vjp_jvp(fwd, bwd, primals, tangents):
    """The JVP trace's handling of a custom_vjp call: run ``fwd`` now, and emit one
    linear equation whose transpose is ``bwd`` applied to the residuals."""
    outs, res = fwd(*primals)
    out_avals = tuple(get_aval(o) for o in outs)
    if all(type(t) is Zero for t in tangents):
        return outs, [Zero(a) for a in out_avals]
    ts = [instantiate(t) for t in tangents]
    t_outs = bind(custom_lin_p, *res, *ts, num_res=len(res), bwd=bwd, out_avals=out_avals)
    t_outs = [Zero(a) if a.dtype.kind not in "fc" else t for a, t in zip(out_avals, t_outs)]
    return outs, t_outs


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts):
    return custom_vjp_jvp(fwd, bwd, list(primals[num_consts:]), list(tangents[num_consts:]))


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


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
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        """Set the rules: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff_args, residuals, ct) -> tuple of cotangents`` (one per
        differentiable argument, None for a zero).  ``optimize_remat`` is accepted (a
        scheduling hint); ``symbolic_zeros=True`` is not supported."""
        del optimize_remat
        _no_symbolic_zeros(symbolic_zeros, "custom_vjp.defvjp")
        self.fwd, self.bwd = fwd, bwd

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

        outs = top.process_custom_vjp(custom_vjp_call_p, flat_fun, flat_fwd, flat_bwd, leaves, {})
        return tree.tree_unflatten(trees["out"], outs)


# --------------------------------------------------------------------------- checkpoint

remat_p = Primitive("checkpoint", multiple_results=True)
remat_p.impl = _eval_call_impl
remat_p.abstract_eval = lambda *avals, jaxpr: list(jaxpr.out_avals)
remat_p.impl = lambda *args, jaxpr: _eval_call_impl(*args, call_jaxpr=jaxpr)
remat_p.unsupported["transpose"] = "it is never linear; checkpoint_jvp is transposed instead"
remat_jvp_p = Primitive("checkpoint_jvp", multiple_results=True)


def _remat_jvp_fn(jaxpr, args):
    n = len(jaxpr.invars)
    primals, tangents = args[:n], args[n:]
    _, t_out = ad_jvp(lambda *p: eval_jaxpr(jaxpr, [], *p), tuple(primals), tuple(tangents))
    return [t if a.dtype.kind in "fc" else np.zeros(a.shape, a.dtype)
            for t, a in zip(t_out, jaxpr.out_avals)]


def _remat_jvp(primals, tangents, *, jaxpr):
    outs = bind(remat_p, *primals, jaxpr=jaxpr)
    avals = jaxpr.out_avals
    if all(type(t) is Zero for t in tangents):
        return outs, [Zero(a) for a in avals]
    t_outs = bind(remat_jvp_p, *primals, *[instantiate(t) for t in tangents], jaxpr=jaxpr)
    return outs, [t if a.dtype.kind in "fc" else Zero(a) for t, a in zip(t_outs, avals)]


def _remat_jvp_transpose(cts, *args, jaxpr):
    # The rematerialisation: the forward pass runs again here, at transpose time.
    n = len(jaxpr.invars)
    primals = args[:n]
    _, f_vjp = ad_vjp(lambda *p: eval_jaxpr(jaxpr, [], *p), *primals)
    cts = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c for c in cts]
    in_cts = f_vjp(list(cts))
    return [None] * n + [c if a.dtype.kind in "fc" else None
                         for c, a in zip(in_cts, jaxpr.in_avals)]


def _remat_jvp_jvp(primals, tangents, *, jaxpr):
    outs = bind(remat_jvp_p, *primals, jaxpr=jaxpr)
    _, t_outs = ad_jvp(lambda *a: _remat_jvp_fn(jaxpr, a), tuple(primals),
                       tuple(instantiate(t) for t in tangents))
    return outs, list(t_outs)


jvp_rules[remat_p] = _remat_jvp
remat_jvp_p.impl = lambda *args, jaxpr: [np.asarray(t) for t in _remat_jvp_fn(jaxpr, args)]
remat_jvp_p.abstract_eval = lambda *avals, jaxpr: list(jaxpr.out_avals)
jvp_rules[remat_jvp_p] = _remat_jvp_jvp
transpose_rules[remat_jvp_p] = _remat_jvp_transpose


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
        out_tree = []

        def flat(*xs):
            full = list(args)
            dyn, kw = tree.tree_unflatten(in_tree, xs)
            for i, v in zip(dyn_idx, dyn):
                full[i] = v
            out_leaves, t = tree.tree_flatten(fun(*full, **kw))
            out_tree.append(t)
            return out_leaves

        closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves], fun_name(fun))
        outs = bind(remat_p, *closed.consts, *leaves, jaxpr=convert_constvars(closed.jaxpr))
        return tree.tree_unflatten(out_tree[0], outs)

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

function_call_p = Primitive("function_call", multiple_results=True)
function_call_p.unsupported["jvp"] = "a zerax.Function is differentiated through its backward"
function_call_p.unsupported["transpose"] = "a zerax.Function is differentiated through its backward"


def _function_impl(*xs, fn):
    out = fn.forward(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o) for o in outs]


@functools.lru_cache(maxsize=256)
def _function_out_avals(fn, in_avals):
    dummies = [np.zeros(a.shape, a.dtype) for a in in_avals]
    return tuple(ShapedArray(o.shape, o.dtype) for o in _function_impl(*dummies, fn=fn))


function_call_p.impl = _function_impl
function_call_p.abstract_eval = lambda *avals, fn: list(_function_out_avals(fn, tuple(avals)))


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


# --------------------------------------------------------------------------- batching
# Custom rules see whole batches: every operand's batch dimension moves to the front
# (unmapped operands are broadcast), and the function and its rules are vmapped.


def batched_custom_call(prim, fun, rules, vals, dims, size):
    """Apply a custom_jvp / custom_vjp call to batched operands; outputs are batched
    along axis 0.  The call continues to the next trace down with vmapped rules."""
    from ..interpreters.batching import bdim_at_front, vmap
    from ..core.core import find_top_trace
    args0 = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]

    def bfun(*xs):
        return list(vmap(lambda *a: list(fun(*a)))(*xs))

    if prim is custom_jvp_call_p or prim.name == "custom_jvp_call":
        (jvp_rule,) = rules

        def bjvp(primals, tangents):
            outs, t_outs = vmap(lambda p, t: tuple(map(list, jvp_rule(list(p), list(t)))))(
                tuple(primals), tuple(tangents))
            return list(outs), list(t_outs)

        top = find_top_trace(args0)
        if top is None:
            return bfun(*args0)
        return top.process_custom_jvp(custom_jvp_call_p, bfun, bjvp, args0, {})
    fwd, bwd = rules

    def bfwd(*xs):
        outs, res = vmap(lambda *a: tuple(map(list, fwd(*a))))(*xs)
        return list(outs), list(res)

    def bbwd(res, cts):
        return list(vmap(lambda r, c: list(bwd(list(r), list(c))))(tuple(res), tuple(cts)))

    top = find_top_trace(args0)
    if top is None:
        return bfun(*args0)
    return top.process_custom_vjp(custom_vjp_call_p, bfun, bfwd, bbwd, args0, {})


def _custom_jvp_call_batch(args, dims, *, call_jaxpr, jvp, num_consts):
    from ..interpreters.batching import batch_size_of

    def fun(*a):
        return eval_jaxpr(call_jaxpr, [], *a)

    def jvp_all(primals, tangents):
        return jvp(list(primals[num_consts:]), list(tangents[num_consts:]))

    outs = batched_custom_call(custom_jvp_call_p, fun, (jvp_all,), args, dims,
                               batch_size_of(args, dims))
    return outs, [0] * len(outs)


def _custom_vjp_call_batch(args, dims, *, call_jaxpr, fwd, bwd, num_consts):
    from ..interpreters.batching import batch_size_of

    def fun(*a):
        return eval_jaxpr(call_jaxpr, [], *a)

    def fwd_all(*a):
        return fwd(*a[num_consts:])

    def bwd_all(res, cts):
        return [np.zeros(a.shape, a.dtype) for a in call_jaxpr.in_avals[:num_consts]] + \
            list(bwd(res, cts))

    outs = batched_custom_call(custom_vjp_call_p, fun, (fwd_all, bwd_all), args, dims,
                               batch_size_of(args, dims))
    return outs, [0] * len(outs)


def _batched_jaxpr(jaxpr, batched_avals):
    from ..interpreters.batching import vmap
    closed = trace_to_jaxpr(lambda *a: list(vmap(lambda *b: eval_jaxpr(jaxpr, [], *b))(*a)),
                            batched_avals, "vmap")
    return convert_constvars(closed.jaxpr), closed.consts


def _front_all(args, dims):
    from ..interpreters.batching import batch_size_of, bdim_at_front
    size = batch_size_of(args, dims)
    return [bdim_at_front(a, d, size) for a, d in zip(args, dims)], size


def _remat_batch(prim):
    def rule(args, dims, *, jaxpr):
        args0, _ = _front_all(args, dims)
        n = len(jaxpr.invars)
        bj, consts = _batched_jaxpr(jaxpr, [get_aval(a) for a in args0[:n]])
        if prim is remat_jvp_p:
            # checkpoint_jvp's operands are (primals, tangents) of the same program.
            outs = bind(prim, *args0, jaxpr=_with_consts_as_inputs(bj, consts))
        else:
            outs = bind(prim, *consts, *args0, jaxpr=bj)
        return outs, [0] * len(outs)
    return rule


def _with_consts_as_inputs(jaxpr, consts):
    if consts:
        raise errors.NotSupportedError(
            "vmap of the forward-mode derivative of a checkpointed function that closes "
            "over batched values is not supported")
    return jaxpr


def _custom_lin_batch(args, dims, *, num_res, bwd, out_avals):
    from ..interpreters.batching import vmap
    args0, size = _front_all(args, dims)

    def bbwd(res, cts):
        return list(vmap(lambda r, c: list(bwd(list(r), list(c))))(tuple(res), tuple(cts)))

    b_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype) for a in out_avals)
    outs = bind(custom_lin_p, *args0, num_res=num_res, bwd=bbwd, out_avals=b_avals)
    return outs, [0] * len(outs)


def _function_call_batch(args, dims, *, fn):
    from ..interpreters.batching import batch_by_loop
    # A Function's forward is NumPy code for one example: run it example by example.
    return batch_by_loop(function_call_p, args, dims, {"fn": fn})


batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batch_rules[remat_p] = _remat_batch(remat_p)
batch_rules[remat_jvp_p] = _remat_batch(remat_jvp_p)
batch_rules[custom_lin_p] = _custom_lin_batch
batch_rules[function_call_p] = _function_call_batch


# --------------------------------------------------------------------------- Numba lowering
# The call primitives are inlined: their sub-programs are lowered into the enclosing
# program with the operands' names bound to the sub-program's inputs.


def _nb_const(ctx, value) -> str:
    """A local holding a constant array of a program traced at lowering time."""
    import hashlib

    from ..backends.numba.codegen import dtype_name, literal_text
    v = np.ascontiguousarray(np.asarray(getattr(value, "_value", value)))
    dt = dtype_name(v.dtype)
    name = ctx.fresh("k")
    shape = repr(tuple(int(d) for d in v.shape))
    if v.size == 0:
        ctx.emit(f"{name} = np.empty({shape}, {dt})")
    elif np.all(v == v.flat[0]) or (v.dtype.kind == "f" and np.all(np.isnan(v))):
        ctx.emit(f"{name} = np.full({shape}, {literal_text(v.flat[0], v.dtype)}, {dt})")
    else:
        # A module-level array (frozen into the machine code): named by its contents,
        # so that the on-disk cache can never confuse two programs' constants.
        digest = hashlib.sha256(v.dtype.str.encode() + shape.encode() + v.tobytes()).hexdigest()
        glob = ctx.helper(f"_zx_const_{digest[:24]}", v)
        ctx.emit(f"{name} = {glob}.copy()")
    return name


def _nb_inline(ctx, eqn, sub_jaxpr, in_refs):
    """Lower ``sub_jaxpr`` in place with its inputs bound to ``in_refs`` (references as
    `ctx.ref` gives them) and bind ``eqn``'s outputs to the sub-program's outputs."""
    from ..backends.numba.codegen import lower_jaxpr_body
    in_arrays = {text for kind, text in in_refs if kind == "array"}
    outs = lower_jaxpr_body(ctx, sub_jaxpr, list(in_refs))
    for v, (kind, text) in zip(eqn.outvars, outs):
        if kind == "array" and text in in_arrays:
            # The sub-program returns one of its inputs: outputs must be fresh arrays.
            fresh = ctx.fresh("v")
            ctx.emit(f"{fresh} = np.copy({text})")
            text = fresh
        ctx.bind_name(v, (kind, text))


def _call_lower(param):
    def rule(ctx, eqn):
        ctx.emit(f"# {eqn.primitive.name} (inlined)")
        _nb_inline(ctx, eqn, eqn.params[param], [ctx.ref(a) for a in eqn.invars])
        ctx.emit(f"# end {eqn.primitive.name}")
    return rule


def _remat_jvp_lower(ctx, eqn):
    """The JVP of a checkpointed program, traced now and inlined."""
    jaxpr = eqn.params["jaxpr"]
    closed = trace_to_jaxpr(lambda *a: _remat_jvp_fn(jaxpr, a), [a.aval for a in eqn.invars],
                            "checkpoint_jvp")
    ctx.emit("# checkpoint_jvp (inlined JVP program)")
    consts = [("array", _nb_const(ctx, c)) for c in closed.consts]
    _nb_inline(ctx, eqn, convert_constvars(closed.jaxpr),
               consts + [ctx.ref(a) for a in eqn.invars])
    ctx.emit("# end checkpoint_jvp")


custom_jvp_call_p.lower_numba = _call_lower("call_jaxpr")
custom_vjp_call_p.lower_numba = _call_lower("call_jaxpr")
remat_p.lower_numba = _call_lower("jaxpr")
remat_jvp_p.lower_numba = _remat_jvp_lower
custom_lin_p.unsupported["lower_numba"] = (
    "it is the forward-mode derivative of a custom_vjp function, which is only known "
    "through its bwd rule (use reverse mode, or a custom_jvp)")
function_call_p.unsupported["lower_numba"] = (
    "a zerax.Function's forward is arbitrary NumPy code, which cannot be compiled; call it "
    "without jit")
