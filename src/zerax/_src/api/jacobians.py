"""The Jacobian family: `jacfwd` (vmap of jvp), `jacrev` (vmap of vjp), `hessian`.

Pytrees of inputs and outputs give pytrees of Jacobian blocks, as in JAX: the outer
structure is the output's, the inner one the input's; each block has shape
``out_leaf.shape + in_leaf.shape``.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ..core import tree
from ..interpreters.ad import jvp, split_aux, vjp_with
from ..core.api_util import OutTree, as_input, flatten_fun, normalize_argnums
from ..core.array import Array
from ..interpreters.batching import vmap
from ..ir.tracing import fun_name
from ..numpy import reshape
from ..base.dtypes import kind as dtype_kind


def _dyn_args(fun, args, kwargs, argnums, name, what, holomorphic=False, allow_int=False):
    """The differentiated leaves, checked as JAX checks them: real floats (complex too
    for jacrev), complex ones only with ``holomorphic``, integers only with jacrev's
    ``allow_int`` (their blocks are float0 zeros)."""
    single, nums = normalize_argnums(argnums, len(args), name)
    dyn = tuple(args[i] for i in nums)
    leaves, in_tree = tree.tree_flatten(dyn)
    leaves = [as_input(x, f"argument of {name}") for x in leaves]
    for x in leaves:
        kind = np.dtype(x.dtype).kind
        if holomorphic and kind != "c":
            raise errors.ZeraxTypeError(
                f"{what} of {name} with holomorphic=True requires complex inputs, but got "
                f"{np.dtype(x.dtype).name}. Pass complex values or drop holomorphic=True.")
        if kind in "biu" and allow_int:
            continue
        if kind not in "fc":
            raise errors.IntegerInputError(
                f"{what} of {name}: the differentiated arguments must be floats, got "
                f"{np.dtype(x.dtype).name}. Pass floats (e.g. 1.0 instead of 1).")
        if kind == "c" and what == "jacfwd" and not holomorphic:
            raise errors.ZeraxTypeError(
                f"jacfwd of {name} requires real-valued inputs, but got "
                f"{np.dtype(x.dtype).name}. For holomorphic differentiation pass "
                "holomorphic=True; for non-holomorphic functions of complex inputs use "
                "zx.vjp directly.")

    def partial_fun(*dyn_vals):
        full = list(args)
        for i, v in zip(nums, dyn_vals):
            full[i] = v
        return fun(*full, **kwargs)

    return single, nums, leaves, in_tree, partial_fun


def _check_outputs(y_leaves, name, what, holomorphic):
    """JAX's checks of the outputs: complex under ``holomorphic``; real floats for
    jacrev otherwise."""
    for y in y_leaves:
        kind = np.dtype(y.dtype).kind
        if holomorphic and kind != "c":
            raise errors.ZeraxTypeError(
                f"{what} of {name} with holomorphic=True requires complex outputs, but got "
                f"{np.dtype(y.dtype).name}.")
        if what == "jacrev" and not holomorphic and kind != "f":
            raise errors.ZeraxTypeError(
                f"jacrev of {name} requires real-valued (float) outputs, but got "
                f"{np.dtype(y.dtype).name}. For holomorphic differentiation pass "
                "holomorphic=True; for integer or other complex outputs use zx.vjp "
                "directly.")


def _std_basis(leaves):
    """Rows of the identity for the flattened leaves: one (n,)+leaf.shape array each."""
    sizes = [int(np.prod(np.shape(x), dtype=np.int64)) for x in leaves]
    n = sum(sizes)
    dtype = np.result_type(*[np.dtype(x.dtype) for x in leaves])
    eye = np.eye(n, dtype=dtype)
    out, start = [], 0
    for x, s in zip(leaves, sizes):
        out.append(eye[:, start:start + s].reshape((n,) + tuple(x.shape)).astype(x.dtype))
        start += s
    return out


def _split_last(mat, example_leaves, lead_shape):
    """Split the last axis of ``mat`` (size = total input size) into input-shaped blocks."""
    blocks, start = [], 0
    for x in example_leaves:
        s = int(np.prod(np.shape(x), dtype=np.int64))
        blk = mat[..., start:start + s]
        blocks.append(reshape(blk, tuple(lead_shape) + tuple(x.shape)))
        start += s
    return blocks


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of ``fun`` by forward mode (one jvp per input element, vmapped).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.jacfwd(lambda x: x ** 2)(znp.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]], dtype=float64)
    """
    name = fun_name(fun)

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        single, nums, leaves, in_tree, partial_fun = _dyn_args(fun, args, kwargs, argnums,
                                                               name, "jacfwd", holomorphic)

        out_store = OutTree()
        flat_fun = flatten_fun(lambda *a: split_aux(partial_fun(*a), has_aux, name), in_tree,
                               out_store, has_aux=True)

        def pushfwd(*tangents):
            return jvp(flat_fun, tuple(leaves), tuple(tangents), has_aux=True)

        y_leaves, jac_leaves, aux = vmap(pushfwd, out_axes=(None, -1, None))(
            *_std_basis(leaves))
        out_tree = out_store.tree
        _check_outputs(y_leaves, name, "jacfwd", holomorphic)
        blocks = []
        for yl, jl in zip(y_leaves, jac_leaves):
            if dtype_kind(np.dtype(yl.dtype)) not in "fc":  # an integer output: zero derivative
                per_input = [Array(np.zeros(tuple(yl.shape) + tuple(x.shape), yl.dtype))
                             for x in leaves]
                inner = tree.tree_unflatten(in_tree, per_input)
                blocks.append(inner[0] if single else inner)
                continue
            per_input = _split_last(jl, leaves, tuple(yl.shape))
            inner = tree.tree_unflatten(in_tree, per_input)
            blocks.append(inner[0] if single else inner)
        result = tree.tree_unflatten(out_tree, blocks)
        return (result, aux) if has_aux else result

    return jacfun


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """The Jacobian of ``fun`` by reverse mode (one vjp per output element, vmapped).

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.jacrev(lambda x: znp.sin(x))(znp.array([0.0, 0.0]))
    Array([[1., 0.],
           [0., 1.]], dtype=float64)
    """
    name = fun_name(fun)

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        single, nums, leaves, in_tree, partial_fun = _dyn_args(
            fun, args, kwargs, argnums, name, "jacrev", holomorphic, allow_int)
        res = vjp_with(partial_fun, tuple(tree.tree_unflatten(in_tree, leaves)), has_aux,
                       eager_tape=False)
        y, pullback = res[0], res[1]
        y_leaves, out_tree = tree.tree_flatten(y)
        y_leaves = [as_input(v, f"output of {name}") for v in y_leaves]
        _check_outputs(y_leaves, name, "jacrev", holomorphic)
        is_int = [np.dtype(x.dtype).kind in "biu" for x in leaves]

        def pull(*cts):
            cts_in = tree.tree_leaves(pullback(tree.tree_unflatten(out_tree, list(cts))))
            return [c for c, i in zip(cts_in, is_int) if not i]

        # per float input leaf: (M,) + in_leaf.shape
        rows = iter(vmap(pull)(*_std_basis(y_leaves)) if not all(is_int) else [])
        rows = [None if i else next(rows) for i in is_int]
        blocks, start = [], 0
        for yl in y_leaves:
            m = int(np.prod(np.shape(yl), dtype=np.int64))
            # an integer input's block: zeros of the input's dtype (JAX casts it so)
            per_input = [Array(np.zeros(tuple(yl.shape) + tuple(x.shape), x.dtype)) if r is None
                         else reshape(r[start:start + m], tuple(yl.shape) + tuple(x.shape))
                         for r, x in zip(rows, leaves)]
            inner = tree.tree_unflatten(in_tree, per_input)
            blocks.append(inner[0] if single else inner)
            start += m
        result = tree.tree_unflatten(out_tree, blocks)
        return (result, res[2]) if has_aux else result

    return jacfun


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """``jacfwd(jacrev(fun))``: the matrix of second derivatives.

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.hessian(lambda x: znp.sum(x ** 3))(znp.array([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float64)
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def elementwise_grad(fun, argnum=0):
    """autograd's ``elementwise_grad``: the vector-Jacobian product of ``fun`` with ones,
    i.e. the gradient of ``sum(fun(x))`` with respect to argument ``argnum``.  For a
    function acting elementwise that is the derivative of each output with respect to
    its own input, in one reverse pass, and it nests (``elementwise_grad`` of
    ``elementwise_grad`` is the second derivative of an elementwise function).

    >>> import zerax as zx, zerax.numpy as znp
    >>> d2 = zx.elementwise_grad(zx.elementwise_grad(znp.tanh))
    >>> d2(znp.array([0.5, 1.0])).round(4)
    Array([-0.7269, -0.6397], dtype=float64)
    """
    if not callable(fun):
        raise errors.ZeraxTypeError(
            f"elementwise_grad takes a function, got {type(fun).__name__}.")
    if not isinstance(argnum, int):
        raise errors.ZeraxTypeError(
            f"elementwise_grad: argnum must be an int (one argument), got {argnum!r}.")

    @functools.wraps(fun)
    def egrad(*args, **kwargs):
        if not -len(args) <= argnum < len(args):
            raise errors.ZeraxValueError(
                f"elementwise_grad of {fun_name(fun)}: argnum={argnum} but only "
                f"{len(args)} positional argument(s) were given.")
        i = argnum % len(args)

        def one(x):
            return fun(*args[:i], x, *args[i + 1:], **kwargs)
        out, back = vjp_with(one, (args[i],), False, True)
        ones = tree.tree_map(lambda y: np.ones(tuple(y.shape), y.dtype), out)
        return back(ones)[0]
    return egrad
