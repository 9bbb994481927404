"""Host callbacks for debugging: the ``debug_callback`` primitive, `debug_callback` and
`debug_print` (JAX's ``jax.debug.callback`` and ``jax.debug.print``).

``debug_callback_p`` has the values to show as operands, the user's function as a
parameter, and no outputs.  It is *effectful*: dead-code elimination keeps it
(``ir.effectful_primitives``) though nothing uses its (absent) results, and a call,
loop or branch whose program holds one is kept too.  Its rules are JAX's:

- eagerly, the function is called at once with the values as zerax Arrays;
- under ``jit`` it is recorded and called each time the compiled program runs (the
  lowering runs it as a host step between the kernels: ``backends/lowering/``);
- the JVP calls it with the primal values and adds no tangent, so ``grad`` shows the
  values of the forward pass, once; the linear program never holds it, nor do the
  tangent and transposed programs derived from a call (``ir.effects_suppressed``):
  the call itself made the effect;
- under ``vmap`` the batch axis is unrolled: the function is called once per batch
  element, in order, with that element's values (unbatched operands as they are);
- the eager tape calls the implementation directly.

As an effectful primitive, ``bind`` records it in the innermost program being traced
(a jit, a loop body, a branch) when that program is above every operand's trace, as
JAX binds every primitive at the innermost trace (core.py): ``debug.print("step")``
inside ``jit``, a callback on constants under ``grad`` inside a ``cond`` branch, or on a
value a branch closes over, runs when and as often as that program runs, never at
trace time.
"""

from __future__ import annotations

import string
import sys

import numpy as np

from ... import errors
from ..core import tree
from ..core.array import Array
from ..core.core import Primitive, Tracer, bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules
from ..ir.ir import effectful_primitives, effects_suppressed
from .shape import squeeze
from .slicing import slice_p_bind

__all__ = ["debug_callback", "debug_callback_p", "debug_print"]

debug_callback_p = Primitive("debug_callback", multiple_results=True)
effectful_primitives.add(debug_callback_p)


def _debug_callback_impl(*vals, callback, ordered):
    """Call ``callback`` with the operands as zerax Arrays (copies: the caller may reuse
    its buffers after the call); no outputs."""
    del ordered  # zerax runs a program's equations in order on one host thread
    if not effects_suppressed.active():  # (constants folded while deriving a program)
        callback(*[Array._wrap(np.array(v, copy=True)) for v in vals])
    return []


debug_callback_p.impl = _debug_callback_impl
debug_callback_p.abstract_eval = lambda *avals, callback, ordered: []


def _debug_callback_jvp(primals, tangents, **params):
    if effects_suppressed.active():  # a tangent program re-deriving primals: no call
        return [], []
    return bind(debug_callback_p, *primals, **params), []


jvp_rules[debug_callback_p] = _debug_callback_jvp
# With no outputs it receives no cotangent: its operands get none from it.
transpose_rules[debug_callback_p] = lambda ct, *args, **params: [None] * len(args)
vjp_rules[debug_callback_p] = ()  # the tape runs the implementation; nothing to reverse


def _index_in_dim(x, i, dim):
    start = [0] * len(x.shape)
    limit = list(x.shape)
    start[dim], limit[dim] = i, i + 1
    return squeeze(slice_p_bind(x, tuple(start), tuple(limit)), (dim,))


def _debug_callback_batch(args, dims, **params):
    """JAX's rule: unroll the batch axis, one call per element, in order."""
    size = next((a.shape[d] for a, d in zip(args, dims) if d is not None), None)
    if size is None:  # nothing varies along the axis: one call
        bind(debug_callback_p, *args, **params)
        return [], []
    for i in range(size):
        bind(debug_callback_p, *[a if d is None else _index_in_dim(a, i, d)
                                 for a, d in zip(args, dims)], **params)
    return [], []


batch_rules[debug_callback_p] = _debug_callback_batch


# --------------------------------------------------------------------------- user API

def _is_dynamic(leaf) -> bool:
    """Whether a leaf is passed as an array operand (else it is given to the callback
    as it is): arrays, tracers and numbers, as JAX's ``_split_callback_args``."""
    return isinstance(leaf, (Tracer, Array, np.ndarray, np.generic, bool, int, float,
                             complex))


class _FlatCallback:
    """The user's ``fn`` on the flat operands: puts the static leaves back and rebuilds
    ``(args, kwargs)``.  Named after ``fn`` in printed programs."""

    __slots__ = ("__name__", "fn", "static", "treedef")

    def __init__(self, fn, treedef, static, name):
        self.fn, self.treedef, self.static, self.__name__ = fn, treedef, static, name

    def __call__(self, *dyn):
        it = iter(dyn)
        leaves = [next(it) if s is _DYNAMIC else s for s in self.static]
        args, kwargs = tree.tree_unflatten(self.treedef, leaves)
        self.fn(*args, **kwargs)


_DYNAMIC = object()  # the place of an operand among a callback's leaves


def _bind_callback(fn, args, kwargs, ordered, name):
    leaves, treedef = tree.tree_flatten((args, kwargs))
    dyn, static = [], []
    for leaf in leaves:
        if _is_dynamic(leaf):
            if isinstance(leaf, (Tracer, Array)):
                dyn.append(leaf)
            else:
                arr = np.asarray(leaf)
                dyn.append(Array._wrap(arr if arr.dtype.isnative
                                       else arr.astype(arr.dtype.newbyteorder("="))))
            static.append(_DYNAMIC)
        else:
            static.append(leaf)
    params = {"callback": _FlatCallback(fn, treedef, static, name), "ordered": bool(ordered)}
    bind(debug_callback_p, *dyn, **params)


def debug_callback(callback=None, *args, ordered: bool = False, partitioned: bool = False,
                   **kwargs):
    """Call ``callback(*args, **kwargs)`` with the values ``args`` have when the program
    runs, under every transform (JAX's ``jax.debug.callback``).

    Array and number leaves of ``args``/``kwargs`` reach ``callback`` as zerax Arrays,
    other leaves as they are.  Under ``jit`` it is called each time the compiled
    program runs; under ``vmap`` once per batch element, in order; under ``grad`` with
    the values of the forward pass.  ``callback`` returns None: its result is not used.
    ``ordered`` and ``partitioned`` are accepted for JAX's code: zerax runs callbacks in
    program order on one host thread, on whole values.  ``debug_callback(ordered=...)``
    with no callback returns the function of JAX's two-call form.

    >>> import zerax as zx, zerax.numpy as znp
    >>> seen = []
    >>> @zx.jit
    ... def f(x):
    ...     zx.debug.callback(lambda v: seen.append(float(v)), x * 2)
    ...     return x + 1
    >>> float(f(1.5)), seen
    (2.5, [3.0])
    """
    del partitioned  # one process, whole values: there are no shards to choose

    def call(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise errors.ZeraxTypeError(
                "the first argument of zerax.debug.callback must be callable, got an "
                f"object of type {type(callback).__name__} (at {errors.user_frame()})")
        _bind_callback(callback, c_args, c_kwargs, ordered,
                       getattr(callback, "__name__", type(callback).__name__))

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise errors.ZeraxTypeError(
            "zerax.debug.callback(ordered=...) takes no other arguments in the two-call "
            f"form; pass them to the function it returns: got {args=} {kwargs=}")
    return call


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting any value."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise errors.ZeraxValueError(
                f"unused positional arguments to zerax.debug.print: {unused} (at "
                f"{errors.user_frame()}); add a '{{}}' field for each")
        if unused_kw:
            raise errors.ZeraxValueError(
                f"unused keyword arguments to zerax.debug.print: {unused_kw} (at "
                f"{errors.user_frame()}). An f-string (f\"{{x}}\") is formatted before "
                "zerax sees it: pass a plain string and the values as arguments")


_checker = _FormatChecker()


class _PrintCallback:
    """Formats with ``str.format`` under the NumPy print options of the call site and
    writes one line to ``sys.stdout`` (looked up at each call: it may be redirected)."""

    __slots__ = ("fmt", "printoptions")

    def __init__(self, fmt, printoptions):
        self.fmt, self.printoptions = fmt, printoptions

    def __call__(self, *args, **kwargs):
        with np.printoptions(**self.printoptions):
            msg = self.fmt.format(*args, **kwargs)
        sys.stdout.write(msg + "\n")


def debug_print(fmt: str | None = None, *args, ordered: bool = False,
                partitioned: bool = False, **kwargs):
    """Print ``fmt.format(*args, **kwargs)`` with the values the arguments have when the
    program runs (JAX's ``jax.debug.print``): under ``jit`` at each call, under
    ``vmap`` once per batch element, under ``grad`` the forward pass's values.

    ``fmt`` is a plain format string, not an f-string: ``"x={x}"`` with ``x=x``.  Its
    fields are checked against the arguments where it is called (a missing one is a
    KeyError or IndexError, an unused one a ZeraxValueError).  Values are zerax Arrays,
    so ``"{:.3f}"`` works on 0-d values and arrays print as NumPy prints them, under the
    NumPy print options in force at the call.  ``ordered``/``partitioned`` are accepted
    as by `debug_callback`; ``debug_print(ordered=...)`` returns the two-call form.

    >>> import zerax as zx, zerax.numpy as znp
    >>> @zx.jit
    ... def f(x):
    ...     zx.debug.print("x={x}, doubled {}", x * 2, x=x)
    ...     return x + 1
    >>> y = f(znp.arange(3.0))
    x=[0. 1. 2.], doubled [0. 2. 4.]
    >>> _ = zx.vmap(lambda v: zx.debug.print("{:.1f}", v))(znp.arange(2.0))
    0.0
    1.0
    """
    def call(fmt, *p_args, **p_kwargs):
        if not isinstance(fmt, str):
            raise errors.ZeraxTypeError(
                "zerax.debug.print takes a format string first, got an object of type "
                f"{type(fmt).__name__} (at {errors.user_frame()})")
        _checker.format(fmt, *p_args, **p_kwargs)  # the user's mistakes, here and now
        _bind_callback(_PrintCallback(fmt, np.get_printoptions()), p_args, p_kwargs,
                       ordered, "print")

    if fmt is not None:
        call(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise errors.ZeraxTypeError(
            "zerax.debug.print(ordered=...) takes no other arguments in the two-call "
            f"form; pass them to the function it returns: got {args=} {kwargs=}")
    return call
