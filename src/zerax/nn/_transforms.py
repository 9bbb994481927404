"""Equinox's filtered transforms for `zerax.nn`: `filter_jit`, `filter_grad`,
`filter_value_and_grad`, `filter_vmap`, `filter_pmap`, `filter_checkpoint` (and
`if_array`).

They take arbitrary pytrees (models holding functions, flags, sizes): arrays are traced,
everything else is static. Each returns a `Module` wrapping the function, so a wrapped
model is itself a pytree (its arrays are visible to other transforms) and two wrappers of
equal functions are equal. `filter_jit` keeps one cache for the whole process, keyed by
the static part of (function, arguments) compared with ``==`` and by the arrays' shapes
and dtypes: a new but equal wrapper, model or function does not trace again.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import numpy as np

import zerax as zx
import zerax.numpy as znp
from .. import errors
from .. import tree_util as jtu

from ._filters import combine, is_array, is_inexact_array, partition
from ._module import Module, Partial, field, module_update_wrapper

__all__ = ["filter_jit", "filter_grad", "filter_value_and_grad", "filter_vmap", "if_array",
           "filter_checkpoint", "filter_pmap", "clear_caches"]


class _Unhashable:
    """Wraps a static leaf that cannot be hashed: compared by identity."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Unhashable) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def _static_key(leaves):
    out = []
    for x in leaves:
        try:
            hash(x)
            out.append(x)
        except TypeError:
            out.append(_Unhashable(x))
    return tuple(out)


class _Method(Module):
    """``__get__`` of the wrapper modules: a wrapped function defined in a class body
    becomes a method (Equinox's ``Partial(wrapper, instance)``)."""

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return Partial(self, instance)


class _FunWrapper(_Method):
    """A wrapper module around the function ``_fun`` (its ``__wrapped__``)."""

    _fun: Callable

    @property
    def __wrapped__(self):
        return self._fun


# ------------------------------------------------------------------ filter_jit
# (name, treedef, mask, static leaves, array signature) -> (jitted flat function, out box)
_JIT_CACHE: dict = {}
_JIT_LOCK = threading.Lock()


def clear_caches() -> None:
    """Forget every program `filter_jit` traced and every program `zerax.jit` compiled
    (Equinox's ``clear_caches``).

    >>> import zerax.nn as nn
    >>> nn.clear_caches()
    """
    with _JIT_LOCK:
        _JIT_CACHE.clear()
    zx.clear_caches()


def _jit_entry(name, treedef, mask, static, sig):
    key = (name, treedef, mask, _static_key(static), sig)
    hit = _JIT_CACHE.get(key)
    if hit is not None:
        return hit
    out_box: list = []

    def flat(*dyn):
        it_d, it_s = iter(dyn), iter(static)
        leaves = [next(it_d) if m else next(it_s) for m in mask]
        fun, args, kwargs = jtu.tree_unflatten(treedef, leaves)
        out = fun(*args, **kwargs)
        o_leaves, o_def = jtu.tree_flatten(out)
        o_mask = tuple(is_array(x) for x in o_leaves)
        out_box[:] = [o_def, o_mask, [x for x, m in zip(o_leaves, o_mask) if not m]]
        return tuple(x for x, m in zip(o_leaves, o_mask) if m)

    flat.__name__ = flat.__qualname__ = name
    hit = (zx.jit(flat), out_box)
    with _JIT_LOCK:
        _JIT_CACHE[key] = hit
    return hit


def _jit_split(fun, args, kwargs, name):
    leaves, treedef = jtu.tree_flatten((fun, args, kwargs))
    mask = tuple(is_array(x) for x in leaves)
    dyn = [x for x, m in zip(leaves, mask) if m]
    static = [x for x, m in zip(leaves, mask) if not m]
    sig = tuple((tuple(x.shape), np.dtype(x.dtype)) for x in dyn)
    return dyn, _jit_entry(name, treedef, mask, static, sig)


def _jit_outputs(box, arrays):
    o_def, o_mask, o_static = box
    it_a, it_s = iter(arrays), iter(o_static)
    return jtu.tree_unflatten(o_def, [next(it_a) if m else next(it_s) for m in o_mask])


class _FilterCompiled:
    """``filter_jit(f).lower(*args).compile()``: call it with arguments like those it
    was lowered for (the same static values, array shapes and dtypes)."""

    def __init__(self, wrapper, lowered_args, compiled):
        self._wrapper, self._compiled = wrapper, compiled
        self._expected = lowered_args

    def as_text(self) -> str:
        return self._compiled.as_text()

    def __call__(self, *args, **kwargs):
        w = self._wrapper
        dyn, (jitted, box) = _jit_split(w._fun, args, kwargs, w.fn)
        if jitted is not self._expected[0]:
            raise errors.ZeraxTypeError(
                f"the compiled {w.fn} was lowered for other arguments (different static "
                "values, shapes or dtypes); call the filter_jit function itself to compile "
                "for new ones")
        return _jit_outputs(box, self._compiled(*dyn))


class _FilterLowered:
    """``filter_jit(f).lower(*args)``: the traced program (``as_text()``) and
    ``compile()``."""

    def __init__(self, wrapper, entry, lowered):
        self._wrapper, self._entry, self.lowered = wrapper, entry, lowered

    def as_text(self) -> str:
        return self.lowered.as_text()

    def compile(self) -> _FilterCompiled:
        return _FilterCompiled(self._wrapper, self._entry, self.lowered.compile())


class _JitWrapper(_Method):
    fn: str = field(static=True)       # the function's name, for the repr and the kernels
    _fun: Any = field(repr=False)      # a pytree: the arrays of a module are traced
    donate: str = field(static=True, repr=False)

    @property
    def __wrapped__(self):
        return self._fun

    def __call__(self, *args, **kwargs):
        dyn, (jitted, box) = _jit_split(self._fun, args, kwargs, self.fn)
        return _jit_outputs(box, jitted(*dyn))

    def lower(self, *args, **kwargs) -> _FilterLowered:
        """Trace for these arguments without running: ``.as_text()`` is the program,
        ``.compile()`` the native code (JAX's AOT interface, as Equinox's)."""
        dyn, entry = _jit_split(self._fun, args, kwargs, self.fn)
        return _FilterLowered(self, entry, entry[0].lower(*dyn))


def _fun_name(fun) -> str:
    name = getattr(fun, "__name__", None)
    return name if isinstance(name, str) else type(fun).__name__


def filter_jit(fun: Callable | None = None, *, donate: str = "none") -> Callable:
    """Compile ``fun`` with `zerax.jit`, tracing every array in its arguments (and in
    ``fun`` itself, when it is a module) and treating all other leaves as static, as
    Equinox's ``filter_jit``. Non-array outputs are returned as they were produced. A
    function, model or wrapper equal to one seen before reuses its compiled program;
    ``.lower(*args)`` traces without running. ``donate`` is accepted (zerax's CPU
    buffers are not donated).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> @nn.filter_jit
    ... def f(x, act, n):
    ...     return act(x) * n, "done"
    >>> f(znp.array([-1.0, 2.0]), zx.nn.relu, 3)
    (Array([0., 6.], dtype=float64), 'done')
    """
    if fun is None:
        return functools.partial(filter_jit, donate=donate)
    if donate not in ("all", "all-except-first", "warn", "warn-except-first", "none"):
        raise errors.ZeraxValueError(
            f"filter_jit: donate must be 'all', 'all-except-first', 'warn', "
            f"'warn-except-first' or 'none', got {donate!r}")
    return module_update_wrapper(_JitWrapper(_fun_name(fun), fun, donate))


# ------------------------------------------------------------------ gradients
class _ValueAndGradWrapper(_FunWrapper):
    _has_aux: bool = field(static=True)

    def __call__(self, x, /, *args, **kwargs):
        diff, nondiff = partition(x, is_inexact_array)

        def inner(d):
            return self._fun(combine(d, nondiff), *args, **kwargs)
        return zx.value_and_grad(inner, has_aux=self._has_aux)(diff)


class _GradWrapper(_Method):
    _fun_value_and_grad: _ValueAndGradWrapper
    _has_aux: bool = field(static=True)

    @property
    def __wrapped__(self):
        return self._fun_value_and_grad.__wrapped__

    def __call__(self, x, /, *args, **kwargs):
        value, grads = self._fun_value_and_grad(x, *args, **kwargs)
        return (grads, value[1]) if self._has_aux else grads


def filter_value_and_grad(fun: Callable | None = None, *, has_aux: bool = False) -> Callable:
    """Like `filter_grad`, returning ``(value, grads)`` (or ``((value, aux), grads)``).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> v, g = nn.filter_value_and_grad(lambda p: p[0] ** 2 * p[1])([znp.array(3.0), 2])
    >>> float(v), float(g[0]), g[1]
    (18.0, 12.0, None)
    """
    if fun is None:
        return functools.partial(filter_value_and_grad, has_aux=has_aux)
    return module_update_wrapper(_ValueAndGradWrapper(fun, has_aux))


def filter_grad(fun: Callable | None = None, *, has_aux: bool = False) -> Callable:
    """The gradient of ``fun`` with respect to the floating-point arrays of its first
    argument (a model, any pytree); other leaves get ``None`` (Equinox's ``filter_grad``).
    Freeze part of a model by passing it in a later argument.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> lin = nn.Linear(2, 1, key=zx.random.key(0))
    >>> g = nn.filter_grad(lambda m, x: m(x).sum())(lin, znp.ones(2, np.float32))
    >>> g.weight.shape, g.in_features
    ((1, 2), 2)
    """
    if fun is None:
        return functools.partial(filter_grad, has_aux=has_aux)
    vg = _ValueAndGradWrapper(fun, has_aux)
    return module_update_wrapper(_GradWrapper(vg, has_aux), fun)


# ------------------------------------------------------------------ vmap, pmap
class if_array(Module):
    """An axis spec for `filter_vmap`: ``axis`` for array leaves, ``None`` for others.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> nn.if_array(0)(znp.ones(2)), nn.if_array(0)("relu")
    (0, None)
    """

    axis: int = field(static=True)

    def __call__(self, x: Any) -> int | None:
        return self.axis if is_array(x) else None


def _resolve_axes(spec, tree, what):
    """Per-leaf axes of ``tree`` (one per leaf of ``jtu.tree_leaves(tree)``, in order)
    from a prefix tree of ints / None / callables.  (``None`` nodes of ``tree``, such as
    a Linear's absent bias, have no leaves and so get no axis.)"""
    axes: list = []

    def one(s, sub):
        leaves = jtu.tree_leaves(sub)
        if s is None or isinstance(s, int):
            axes.extend([s] * len(leaves))
        elif callable(s):
            axes.extend(s(x) for x in leaves)
        else:
            raise errors.ZeraxValueError(
                f"filter_vmap: {what} leaves must be ints, None or callables, got {s!r}")
    # (a callable spec, such as an if_array module, is one leaf of the prefix tree)
    jtu.tree_map(one, spec, tree, is_leaf=lambda x: x is None or callable(x))
    return axes


class _VmapWrapper(_FunWrapper):
    _in_axes: Any = field(static=True)
    _out_axes: Any = field(static=True)
    _axis_name: Any = field(static=True)
    _axis_size: Any = field(static=True)

    def __call__(self, *args, **kwargs):
        fun, in_axes, out_axes = self._fun, self._in_axes, self._out_axes
        # in_axes is a prefix of the positional arguments; keyword arguments are mapped
        # by the default rule (arrays on axis 0).
        spec = in_axes if isinstance(in_axes, tuple) else tuple(in_axes for _ in args)
        if len(spec) != len(args):
            raise errors.ZeraxValueError(
                f"filter_vmap: in_axes has {len(spec)} entries for {len(args)} arguments")
        axes = _resolve_axes(spec, tuple(args), "in_axes")
        kw_axes = [0 if is_array(x) else None for x in jtu.tree_leaves(kwargs)]
        leaves, treedef = jtu.tree_flatten((args, kwargs))
        axes = list(axes) + kw_axes
        if len(axes) != len(leaves):
            raise errors.ZeraxValueError(
                "filter_vmap: in_axes does not match the structure of the arguments")
        for x, a in zip(leaves, axes):
            if a is not None and not is_array(x):
                raise errors.ZeraxValueError(
                    f"filter_vmap: a non-array argument leaf ({x!r}) cannot be mapped over "
                    f"axis {a}; give it axis None")
        mapped = [i for i, a in enumerate(axes) if a is not None]
        if not mapped and self._axis_size is None:
            raise errors.ZeraxValueError(
                "filter_vmap: no argument is mapped; give axis_size= to set the batch size")
        box: list = []

        def inner(*dyn):
            vals = list(leaves)
            for i, d in zip(mapped, dyn):
                vals[i] = d
            a, k = jtu.tree_unflatten(treedef, vals)
            out = fun(*a, **k)
            o_leaves, o_def = jtu.tree_flatten(out)
            o_axes = _resolve_axes(out_axes, out, "out_axes")
            o_mask = [is_array(x) for x in o_leaves]
            box[:] = [o_def, o_mask, o_axes,
                      [x for x, m in zip(o_leaves, o_mask) if not m]]
            return tuple(x for x, m in zip(o_leaves, o_mask) if m)

        dyn_args = [leaves[i] for i in mapped]
        dyn_axes = tuple(axes[i] for i in mapped)
        vm = zx.vmap(inner, in_axes=dyn_axes, axis_name=self._axis_name,
                     axis_size=self._axis_size)
        outs = vm(*dyn_args)
        o_def, o_mask, o_axes, o_static = box
        it_o, it_s = iter(outs), iter(o_static)
        res = []
        for m, ax in zip(o_mask, o_axes):
            if m:
                y = next(it_o)
                # axis None: an output that must not depend on the batch; keep one copy
                res.append(y[0] if ax is None else y if ax == 0 else znp.moveaxis(y, 0, ax))
            else:
                res.append(next(it_s))
        return jtu.tree_unflatten(o_def, res)


def filter_vmap(fun: Callable | None = None, *, in_axes: Any = if_array(0),
                out_axes: Any = if_array(0), axis_name: Any = None,
                axis_size: int | None = None) -> Callable:
    """Vectorise ``fun`` over arrays of its arguments; non-array leaves (and arrays given
    axis ``None``) are shared by every call, as Equinox's ``filter_vmap``. ``in_axes`` is a
    prefix tree of the positional arguments (ints, ``None``, or callables such as `if_array`);
    array outputs are stacked on ``out_axes`` (default 0), other outputs returned as they are.

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp, numpy as np
    >>> f = nn.filter_vmap(lambda x, act: act(x).sum())
    >>> f(znp.array([[-1.0, 2.0], [3.0, -4.0]]), zx.nn.relu)
    Array([2., 3.], dtype=float64)
    """
    if fun is None:
        return functools.partial(filter_vmap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name, axis_size=axis_size)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    return module_update_wrapper(_VmapWrapper(fun, in_axes, out_axes, axis_name, axis_size))


class _PmapWrapper(_VmapWrapper):
    _donate: str = field(static=True)

    def __call__(self, *args, **kwargs):
        vmapped = _VmapWrapper(self._fun, self._in_axes, self._out_axes, self._axis_name,
                               self._axis_size)
        return _JitWrapper(_fun_name(self._fun), vmapped, self._donate)(*args, **kwargs)


def filter_pmap(fun: Callable | None = None, *, in_axes: Any = if_array(0),
                out_axes: Any = if_array(0), axis_name: Any = None,
                axis_size: int | None = None, donate: str = "none") -> Callable:
    """Equinox's ``filter_pmap`` on zerax's one CPU device: `filter_vmap` over the
    mapped axis (collectives over ``axis_name`` see the whole axis, as across devices),
    compiled with `filter_jit` (as `zerax.pmap` is `vmap` under `jit`).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp
    >>> f = nn.filter_pmap(lambda x, n: x / zx.lax.psum(x, "i") * n, axis_name="i")
    >>> f(znp.arange(1.0, 4.0), 6)
    Array([1., 2., 3.], dtype=float64)
    """
    if fun is None:
        return functools.partial(filter_pmap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name, axis_size=axis_size, donate=donate)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    return module_update_wrapper(
        _PmapWrapper(fun, in_axes, out_axes, axis_name, axis_size, donate))


# ------------------------------------------------------------------ checkpoint
class _CheckpointWrapper(_FunWrapper):
    _prevent_cse: bool = field(static=True)
    _policy: Any = field(static=True)

    def __call__(self, *args, **kwargs):
        dyn, static = partition((args, kwargs), is_array)
        box: list = []
        fun = self._fun

        def inner(d):
            a, k = combine(d, static)
            out_dyn, out_static = partition(fun(*a, **k), is_array)
            box[:] = [out_static]
            return out_dyn
        out_dyn = zx.checkpoint(inner, prevent_cse=self._prevent_cse,
                                policy=self._policy)(dyn)
        return combine(out_dyn, box[0])


def filter_checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True,
                      policy: Callable | None = None) -> Callable:
    """`zerax.checkpoint` (rematerialisation) of ``fun`` over the arrays of its arguments;
    other leaves pass through unchanged (Equinox's ``filter_checkpoint``).

    >>> import zerax as zx, zerax.nn as nn, zerax.numpy as znp
    >>> block = nn.filter_checkpoint(lambda x, act: act(x) * 2)
    >>> float(zx.grad(lambda x: block(x, znp.sin))(0.0))
    2.0
    """
    if fun is None:
        return functools.partial(filter_checkpoint, prevent_cse=prevent_cse, policy=policy)
    return module_update_wrapper(_CheckpointWrapper(fun, prevent_cse, policy))
