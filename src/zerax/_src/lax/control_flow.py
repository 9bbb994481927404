"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`.

With no transform active the Python functions simply run (a Python ``if`` or loop).
Under a transform, bodies are traced once into sub-programs of the IR (closed-over
arrays become explicit operands) and bound as the primitives of `ops.cond`,
`ops.scan` and `ops.while_loop`, whose rules give derivatives (reverse mode through
``while_loop`` included), vmap and jit.
"""

from __future__ import annotations

import operator
import warnings
import weakref

import numpy as np

from ... import errors
from ..base import dtypes
from ..core import tree
from ..core.api_util import OutTree, as_input, flatten_fun
from ..core.array import Array
from ..core.core import ShapedArray, Tracer, current_level, get_aval
from ..interpreters.batching import vmap
from ..ir.tracing import trace_closed
from ..ops import shape as sh
from ..ops.elementwise import add, convert_element_type, ne
from ..ops.cond import cond_from_programs
from ..ops.scan import scan_from_fn
from ..ops.while_loop import while_from_fns
from ..ir.tracing import fun_name
from .abstract_eval import ShapeDtypeStruct, eval_shape, make_jaxpr
from ..base.dtypes import kind as dtype_kind


def _eager() -> bool:
    return current_level() == 0


def _types(leaves):
    return [get_aval(x).str_short() for x in leaves]


def _flatten_values(value, what):
    leaves, treedef = tree.tree_flatten(value)
    return [as_input(x, f"{what}") for x in leaves], treedef


def _check_same(what, tree_a, avals_a, name_a, tree_b, avals_b, name_b):
    if tree_a != tree_b or [(a.shape, a.dtype) for a in avals_a] != \
            [(b.shape, b.dtype) for b in avals_b]:
        show = lambda t, av: f"{t} with types ({', '.join(a.str_short() for a in av)})"  # noqa: E731
        raise errors.ZeraxTypeError(
            f"{what}: {name_a} gives {show(tree_a, avals_a)} but {name_b} gives "
            f"{show(tree_b, avals_b)}; they must have the same structure, shapes and dtypes "
            "(convert with .astype or initialise with the right dtype, e.g. 0.0 not 0).")


def _as_values(tree_value, what):
    """Convert every leaf to a zerax value (so eager results are Arrays, as in JAX)."""
    return tree.tree_map(lambda x: as_input(x, what), tree_value)


def _signature(value):
    leaves, treedef = tree.tree_flatten(value)
    return treedef, [get_aval(as_input(x, "value")) for x in leaves]


def _keyed(value, what):
    """``value`` with every leaf a zerax value, its leaves, and a cheap key of its type
    (tree structure, shapes, dtypes): what the eager loops compare at every step."""
    leaves, treedef = tree.tree_flatten(value)
    leaves = [as_input(x, what) for x in leaves]
    key = (treedef, [(tuple(x.shape), x.dtype) for x in leaves])
    return tree.tree_unflatten(treedef, leaves), leaves, key


class _SameCarry:
    """The eager loops' check that every new carry has the first one's type."""

    def __init__(self, loop, init, what_init, what_new, name_first, name_new):
        self.loop, self.what_new = loop, what_new
        self.names = name_first, name_new
        self.value, self.leaves, self.key = _keyed(init, what_init)

    def __call__(self, value):
        value, leaves, key = _keyed(value, self.what_new)
        if key != self.key:
            _check_same(self.loop, self.key[0], [get_aval(x) for x in self.leaves],
                        self.names[0], key[0], [get_aval(x) for x in leaves], self.names[1])
        return value


# Python scalars are weakly typed: ``0.0`` takes the dtype of the arrays it meets.  A
# loop carry initialised with one takes the dtype the body gives it, as in JAX (which
# promotes weakly typed initial carries to the body's output type): ``scan(lambda c, x:
# (c + x, None), 0.0, xs_f32)`` carries float32.  To find that dtype without weak types
# in the IR, the body is traced once with the weak carries at the narrowest dtype of
# their kind, which every other dtype of that kind overrides.
# (int16 rather than int8, so that constants up to 32767 in the body still fit.)
_WEAK_PROBE = {float: np.dtype(np.float16), int: np.dtype(np.int16)}


# body function -> {(carry and operand types): the body's carry dtypes, or None}; weak,
# as `_branch_types` below.
_weak_carry_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _promote_weak_init(init, fn, carry_out, *other):
    """``init`` with each Python float/int leaf made an array of the dtype the loop body
    ``fn`` gives that carry; ``carry_out(init, *other)`` calls ``fn`` and returns the
    new carry (traced on shapes only, once per body and type: ``other`` may hold
    `ShapeDtypeStruct` leaves)."""
    leaves, treedef = tree.tree_flatten(init)
    weak = [k for k, x in enumerate(leaves) if type(x) in _WEAK_PROBE]
    if not weak:
        return init
    probe = [ShapeDtypeStruct((), _WEAK_PROBE[type(x)]) if k in weak else x
             for k, x in enumerate(leaves)]
    other_leaves, other_tree = tree.tree_flatten(other)
    key = (dtypes.x64_enabled(), treedef, other_tree,   # (the body's dtypes follow the mode)
           tuple((tuple(np.shape(x)), np.dtype(getattr(x, "dtype", type(x))))
                 for x in probe + other_leaves))
    try:
        known = _weak_carry_types.setdefault(fn, {})
    except TypeError:   # not weak-referenceable: traced every time
        known = {}
    if key not in known:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # e.g. a large constant cast to float16
                out = eval_shape(carry_out, tree.tree_unflatten(treedef, probe), *other)
            known[key] = [np.dtype(o.dtype) for o in tree.tree_leaves(out)]
        except Exception:  # noqa: BLE001 - only a probe: the real trace or run reports errors
            known[key] = None
    out = known[key]
    if out is None or len(out) != len(leaves):
        return init
    for k in weak:
        if out[k] != _WEAK_PROBE[type(leaves[k])]:      # another dtype took over
            leaves[k] = np.asarray(leaves[k], np.result_type(leaves[k], out[k]))
    return tree.tree_unflatten(treedef, leaves)


def _check_bool_scalar(out, who):
    out = as_input(out, f"{who} output")
    if tuple(out.shape) != () or np.dtype(out.dtype) != np.bool_:
        raise errors.ZeraxTypeError(
            f"{who} must return a scalar bool, got {get_aval(out).str_short()}")
    return out


def _scalar_index(x, what):
    x = as_input(x, what)
    if tuple(x.shape) != ():
        raise errors.ShapeError(f"{what} must be a scalar, got shape {tuple(x.shape)}")
    return x


# --------------------------------------------------------------------------- cond / switch


def switch(index, branches, *operands):
    """Apply ``branches[index](*operands)``; ``index`` is clamped into range.

    >>> import zerax as zx
    >>> float(zx.lax.switch(1, [lambda x: x + 1.0, lambda x: x * 10.0], 2.0))
    20.0
    """
    branches = list(branches)
    if not branches:
        raise errors.ZeraxValueError("switch needs at least one branch")
    index = _scalar_index(index, "switch index")
    if np.dtype(index.dtype).kind not in "biu":
        raise errors.ZeraxTypeError(f"switch index must be an integer, got {index.dtype}")
    if not isinstance(index, Tracer) and _eager():
        i = int(min(max(int(index), 0), len(branches) - 1))
        return _eager_branch(branches, i, operands, "switch")
    return _traced_cond(index, branches, operands, "switch")


# branch function -> {(operand tree, operand types): (output tree, output avals)}; weak, so
# a branch that is a fresh lambda each call is forgotten with it.
_branch_types: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _branch_type(branch, operands, op_key):
    """The output tree and avals of ``branch`` on operands of type ``op_key``, found by
    tracing it abstractly (nothing is computed), once per branch and operand type."""
    try:
        known = _branch_types.setdefault(branch, {})
    except TypeError:   # not weak-referenceable (a builtin): traced every time
        known = {}
    op_key = (dtypes.x64_enabled(), op_key)   # (the branch's dtypes follow the mode)
    found = known.get(op_key)
    if found is None:
        _, shape = make_jaxpr(lambda *ops: branch(*ops), return_shape=True)(*operands)
        found = known[op_key] = (tree.tree_structure(shape),
                                 [ShapedArray(tuple(a.shape), np.dtype(a.dtype))
                                  for a in tree.tree_leaves(shape)])
    return found


def _eager_branch(branches, i, operands, what):
    """Run the chosen branch; like JAX, every branch must return the same types, which
    is checked by tracing the others abstractly (once per branch and operand type)."""
    operands, op_leaves, op_key = _keyed(tuple(operands), f"{what} operand")
    out = _as_values(branches[i](*operands), "branch output")
    if len(branches) > 1:
        t0, a0 = _signature(out)
        op_key = (op_key[0], tuple(op_key[1]))
        for k, b in enumerate(branches):
            if k == i:
                continue
            tk, ak = _branch_type(b, operands, op_key)
            _check_same(what, t0, a0, f"branch {fun_name(branches[i])}", tk, ak,
                        f"branch {fun_name(b)}")
    return out


_NO_OPERAND = object()       # cond's operand= not given (None is a valid operand)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    Under a transform both branches are traced (and must return the same types).
    JAX's older forms work too: the keyword ``cond(pred, true_fun, false_fun,
    operand=x)`` is ``cond(pred, true_fun, false_fun, x)``, and the five-argument
    ``cond(pred, true_operand, true_fun, false_operand, false_fun)`` gives each branch
    its own operand.

    >>> import zerax as zx
    >>> float(zx.lax.cond(True, lambda x: x * 2.0, lambda x: -x, 3.0))
    6.0
    >>> float(zx.lax.cond(False, 3.0, lambda x: x * 2.0, 5.0, lambda x: -x))
    -5.0
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]) \
                and operand is _NO_OPERAND:
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise errors.ZeraxTypeError(
            "lax.cond: true_fun and false_fun must be callable (or use the five-argument "
            "form cond(pred, true_operand, true_fun, false_operand, false_fun))")
    if operand is not _NO_OPERAND:
        if operands:
            raise errors.ZeraxTypeError(
                "cond: pass the operands either positionally or as operand=, not both")
        operands = (operand,)
    pred = _scalar_index(pred, "cond predicate")
    if dtype_kind(np.dtype(pred.dtype)) not in "biuf":
        raise errors.ZeraxTypeError(f"cond predicate must be a scalar bool, got {pred.dtype}")
    if not isinstance(pred, Tracer) and _eager():
        return _eager_branch([false_fun, true_fun], int(bool(pred)), operands, "cond")
    index = convert_element_type(ne(pred, np.zeros((), pred.dtype)), np.int32)
    return _traced_cond(index, [false_fun, true_fun], operands, "cond")


def _traced_cond(index, branches, operands, what):
    leaves, in_tree = _flatten_values(tuple(operands), f"{what} operand")
    avals = [get_aval(x) for x in leaves]
    index = convert_element_type(index, np.int32)
    names = [fun_name(b) for b in branches]
    # Each branch traced once; their types are checked before binding (errors name
    # both sides).
    stores = [OutTree() for _ in branches]
    programs = [trace_closed(flatten_fun(b, in_tree, o, out_what=f"output of {n}"), avals, what)
                for b, o, n in zip(branches, stores, names)]
    for k in range(1, len(branches)):
        _check_same(what, stores[0].tree, programs[0][0].out_avals, f"branch {names[0]}",
                    stores[k].tree, programs[k][0].out_avals, f"branch {names[k]}")
    outs = cond_from_programs(index, programs, leaves, what)
    return tree.tree_unflatten(stores[0].tree, outs)


# --------------------------------------------------------------------------- while_loop


def while_loop(cond_fun, body_fun, init_val, *, checkpoint_every: int = 1):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``.

    Unlike JAX, reverse-mode differentiation works: the backward pass reruns the loop,
    recording the carries (every ``checkpoint_every``-th one; the rest are recomputed),
    then runs the transposed body backwards.

    >>> import zerax as zx
    >>> float(zx.grad(lambda x: zx.lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x))(3.0))
    4.0
    """
    init_val = _promote_weak_init(init_val, body_fun, body_fun)
    if _eager():
        same = _SameCarry("while_loop", init_val, "while_loop init_val", "body_fun output",
                          "init_val", f"body_fun {fun_name(body_fun)}")
        val = same.value
        while bool(_check_bool_scalar(cond_fun(val), f"while_loop cond_fun {fun_name(cond_fun)}")):
            val = same(body_fun(val))
        return val
    leaves, in_tree = _flatten_values(init_val, "while_loop init_val")
    in_avals = [get_aval(x) for x in leaves]

    def c(carry):
        return _check_bool_scalar(cond_fun(tree.tree_unflatten(in_tree, carry)),
                                  f"while_loop cond_fun {fun_name(cond_fun)}")

    out_tree = OutTree()
    flat_body = flatten_fun(body_fun, in_tree, out_tree, apply=_apply1,
                            out_what="body_fun output")

    def b(carry):
        o_leaves = flat_body(*carry)
        _check_same("while_loop", in_tree, in_avals, "init_val", out_tree.tree,
                    [get_aval(o) for o in o_leaves], f"body_fun {fun_name(body_fun)}")
        return o_leaves

    outs = while_from_fns(c, b, leaves, "while_loop", checkpoint_every)
    return tree.tree_unflatten(in_tree, outs)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With concrete bounds it is a `scan` (reverse mode stores the carries); otherwise a
    `while_loop`.

    >>> import zerax as zx
    >>> float(zx.lax.fori_loop(0, 5, lambda i, v: v + i, 0.0))
    10.0
    """
    name = fun_name(body_fun)
    for bound, what in ((lower, "lower"), (upper, "upper")):
        dtype = np.result_type(bound) if isinstance(bound, (int, float, np.generic)) \
            else np.dtype(getattr(bound, "dtype", np.float64))
        if dtype.kind not in "iub":
            raise errors.ZeraxTypeError(
                f"fori_loop: the {what} bound must be an integer, got {bound!r} of dtype "
                f"{dtype}; pass int bounds (e.g. int(n)).")
    # the index's dtype: the bounds' promotion (Python ints weak: the mode's default int)
    idx_dt = dtypes.result_type(*(b if type(b) in (int, bool) or isinstance(b, np.generic)
                                  else np.dtype(b.dtype) for b in (lower, upper)))
    init_val = _promote_weak_init(init_val, body_fun,
                                  lambda v: body_fun(np.zeros((), idx_dt), v))
    same = _SameCarry("fori_loop", init_val, "fori_loop init_val",
                      "fori_loop body_fun output", "init_val", f"body_fun {name}")
    init_val = same.value

    def checked(i, val):
        return same(body_fun(i, val))

    if _eager() and not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        val = init_val
        for i in range(int(lower), int(upper)):
            val = checked(Array._wrap(np.array(i, idx_dt)), val)
        return val
    concrete = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    if concrete:
        lo, hi = int(lower), int(upper)

        def step(carry, _):
            i, val = carry
            return (add(i, np.ones((), idx_dt)), checked(i, val)), None

        (_, val), _ = scan(step, (Array._wrap(np.asarray(lo, idx_dt)), init_val), None,
                           length=max(hi - lo, 0), unroll=1 if unroll is None else unroll)
        return val
    lo, hi = as_input(lower, "fori_loop lower"), as_input(upper, "fori_loop upper")
    dtype = np.result_type(np.dtype(lo.dtype), np.dtype(hi.dtype))

    def c(carry):
        return carry[0] < carry[1]

    def b(carry):
        i, h, val = carry
        return (i + np.ones((), dtype), h, checked(i, val))

    return while_loop(c, b, (lo.astype(dtype), hi.astype(dtype), init_val))[2]


# --------------------------------------------------------------------------- scan


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the stacked ``y``s (JAX's semantics).  The compiled loop is a real loop;
    ``unroll=k`` puts k copies of the body in each iteration (``True``: all of them).

    >>> import zerax as zx, zerax.numpy as znp
    >>> carry, ys = zx.lax.scan(lambda c, x: (c + x, c * x), 0.0, znp.arange(4.0))
    >>> float(carry), ys
    (6.0, Array([0., 0., 2., 9.], dtype=float64))
    """
    x_leaves, x_tree = tree.tree_flatten(xs)
    x_leaves = [as_input(x, "scan xs") for x in x_leaves]
    lengths = {int(x.shape[0]) for x in x_leaves if len(x.shape)}
    if any(len(x.shape) == 0 for x in x_leaves):
        raise errors.ShapeError("scan xs leaves must have a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise errors.ShapeError(
            f"scan needs one length: got leading axis sizes {sorted(lengths)} from xs and "
            f"length={length}" if lengths else "scan needs xs or length")
    n = lengths.pop()
    x_slice = tree.tree_unflatten(x_tree, [ShapeDtypeStruct(tuple(x.shape[1:]), x.dtype)
                                           for x in x_leaves])
    init = _promote_weak_init(init, f, lambda c, x: _carry_and_y(f(c, x), f)[0], x_slice)
    if _eager():
        return _eager_scan(f, init, x_leaves, x_tree, n, reverse)
    c_leaves, c_tree = _flatten_values(init, "scan init")
    c_avals = [get_aval(c) for c in c_leaves]
    # f on (carry, x) leaves; its output (new carry, y) flattened: carry leaves first
    out_tree = OutTree()
    flat_f = flatten_fun(lambda c, x: _carry_and_y(f(c, x), f), tree.tree_structure(
        (tree.tree_unflatten(c_tree, c_leaves), x_slice)), out_tree)

    def body(consts, carry, x):
        out_leaves = flat_f(*carry, *x)
        nc_tree = out_tree.tree.children()[0]
        nk = nc_tree.num_leaves
        nc_leaves = [as_input(o, "scan carry") for o in out_leaves[:nk]]
        _check_same("scan", c_tree, c_avals, "init", nc_tree, [get_aval(c) for c in nc_leaves],
                    f"the carry returned by {fun_name(f)}")
        return nc_leaves, [as_input(o, "scan output") for o in out_leaves[nk:]]

    final, ys = scan_from_fn(body, [], c_leaves, x_leaves, n, reverse, fun_name(f),
                             unroll=1 if unroll in (None, False) else
                             (n if unroll is True else int(unroll)))
    return (tree.tree_unflatten(c_tree, final),
            tree.tree_unflatten(out_tree.tree.children()[1], ys))


def _apply1(fun, value):
    """How `flatten_fun` calls a loop body: on the one rebuilt carry."""
    return fun(value)


def _carry_and_y(out, f):
    """``f``'s result split into (new carry, y): scan bodies return a pair, as in JAX."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        if isinstance(out, (tuple, list)):
            got = f"a {type(out).__name__} of length {len(out)}"
        elif hasattr(out, "shape") and hasattr(out, "dtype"):
            got = f"one array of shape {tuple(out.shape)}"
        else:
            got = type(out).__name__
        raise errors.ZeraxTypeError(
            f"scan: the body {fun_name(f)} must return a pair (new_carry, y), got {got}. "
            "Return (carry, None) when there is nothing to stack.")
    return out


def _eager_scan(f, init, x_leaves, x_tree, n, reverse):
    same = _SameCarry("scan", init, "scan init", "scan carry", "init",
                      f"the carry returned by {fun_name(f)}")
    carry, ys = same.value, []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:
        x = tree.tree_unflatten(x_tree, [v[i] for v in x_leaves])
        carry, y = _carry_and_y(f(carry, x), f)
        carry = same(carry)
        ys.append(y)
    if reverse:
        ys.reverse()
    if n == 0:
        return carry, _empty_ys(f, init, x_leaves, x_tree)
    y_leaves = [tree.tree_leaves(y) for y in ys]
    y_tree = tree.tree_structure(ys[0])
    stacked = [_stack([as_input(yl[k], "scan output") for yl in y_leaves])
               for k in range(len(y_leaves[0]))]
    return carry, tree.tree_unflatten(y_tree, stacked)


def _empty_ys(f, init, x_leaves, x_tree):
    """Zero-length scan: the ys have the body's output types with a leading 0."""
    x0 = tree.tree_unflatten(x_tree, [np.zeros(tuple(x.shape[1:]), x.dtype) for x in x_leaves])
    _, shapes = make_jaxpr(lambda c, x: f(c, x), return_shape=True)(init, x0)
    return tree.tree_map(lambda s: Array(np.zeros((0,) + tuple(s.shape), s.dtype)), shapes[1])


def map(f, xs, *, batch_size=None):  # noqa: A001 - JAX's name
    """``stack([f(x) for x in xs])`` as a scan over the leading axis of ``xs`` (a pytree).

    With ``batch_size=b``, ``f`` is vmapped over chunks of ``b`` rows and the scan runs
    over the chunks (the rows that do not fill a chunk get one vmapped call of their own):
    the same results, fewer and larger steps.

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.lax.map(lambda x: x * 2.0, znp.arange(3.0))
    Array([0., 2., 4.], dtype=float64)
    >>> zx.lax.map(lambda x: x.sum(), znp.ones((5, 2)), batch_size=2)
    Array([2., 2., 2., 2., 2.], dtype=float64)
    """
    if batch_size is None:
        _, ys = scan(lambda c, x: (c, f(x)), (), xs)
        return ys
    try:
        batch_size = operator.index(batch_size)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"lax.map: batch_size must be an integer, got {batch_size!r}.") from None
    if batch_size < 1:
        raise errors.ZeraxValueError(f"lax.map: batch_size must be >= 1, got {batch_size}.")
    leaves, treedef = tree.tree_flatten(xs)
    leaves = [as_input(x, "xs of lax.map") for x in leaves]
    lengths = {x.shape[0] if x.shape else None for x in leaves}
    if len(lengths) > 1 or None in lengths:
        raise errors.ShapeError(
            "lax.map: every leaf of xs needs the same leading axis length, got shapes "
            f"{[tuple(x.shape) for x in leaves]}.")
    n = leaves[0].shape[0] if leaves else 0
    if n == 0:
        return map(f, xs)
    chunks, rest = divmod(n, batch_size)
    batched_f = vmap(f)
    pieces = []
    if chunks:
        head = tree.tree_unflatten(treedef, [
            x[:chunks * batch_size].reshape((chunks, batch_size) + tuple(x.shape[1:]))
            for x in leaves])
        _, ys = scan(lambda c, x: (c, batched_f(x)), (), head)
        pieces.append(tree.tree_map(
            lambda y: y.reshape((chunks * batch_size,) + tuple(y.shape[2:])), ys))
    if rest:
        pieces.append(batched_f(tree.tree_unflatten(treedef, [x[chunks * batch_size:]
                                                               for x in leaves])))
    if len(pieces) == 1:
        return pieces[0]
    return tree.tree_map(lambda a, b: _join([a, b], 0), *pieces)


def _join(xs, axis):
    """``xs`` concatenated along ``axis`` in their common dtype (NumPy's promotion)."""
    dt = np.result_type(*[np.dtype(x.dtype) for x in xs])
    return sh.concatenate([x if np.dtype(x.dtype) == dt else convert_element_type(x, dt)
                           for x in xs], axis)


def _stack(xs):
    """``xs`` (equally shaped values) stacked along a new leading axis."""
    if any(tuple(x.shape) != tuple(xs[0].shape) for x in xs):
        raise errors.ShapeError(
            "zerax.numpy.stack: all input arrays must have the same shape, got "
            f"{', '.join(str(tuple(x.shape)) for x in xs)}")
    return _join([sh.expand_dims(x, (0,)) for x in xs], 0)
