"""JAX's collectives over named axes (``jax.lax.psum`` & co.), on the primitives of
``ops/collectives.py`` and ``ops/exchange.py``.

A named axis is bound by ``vmap(f, axis_name=...)`` (members: the batch) or by
`zerax.distributed.spmd` / ``shard_map`` (members: processes, over MPI).  Operands are
pytrees, combined leaf by leaf.  ``axis_name`` may be a tuple of names: the collective
runs over the product of those axes, whose members are numbered row-major (the first
name varies slowest), as JAX's ``pmap``/``shard_map`` number them.  JAX's ``tiled``
forms and tuples are written here with reshapes around primitives that each name one
axis, so each primitive keeps a small set of rules.

Where JAX's ``vmap`` and JAX's documented meaning differ, zerax follows the documented
meaning, which is also what these collectives do across processes: a ``ppermute``
whose permutation misses some members gives them zeros (JAX's vmap accepts only
complete permutations), ``all_gather``/``psum_scatter``/``ppermute`` take tuples of
axes (JAX's vmap rejects them), and ``all_to_all`` of a value that does not vary over
the axis gives each member its own rows (JAX's vmap returns mis-shaped values).
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..core import tree
from ..ops.collectives import (axis_index_p, axis_names, axis_params, bind_collective,
                               pmax_p, pmin_p, psum_p)  # noqa: F401
from ..ops.elementwise import add, convert_element_type, lt, mul, select_n
from ..ops.exchange import all_gather_p, all_to_all_p, ppermute_p, psum_scatter_p
from ..ops.shape import reshape
from ..ops.slicing import dynamic_slice
from ..interpreters.batching import moveaxis
from ..base.dtypes import kind as dtype_kind

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
           "ppermute", "pshuffle", "axis_index", "axis_size"]


def _check_array(what, x):
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype == object:
            raise errors.ZeraxTypeError(f"{what}: operand is not an array: {x!r:.80}")
    return x


def _no_groups(name, groups):
    if groups is not None:
        raise errors.NotSupportedError(
            f"{name}(axis_index_groups=...) is not supported (at {errors.user_frame()}); "
            "JAX supports it only under pmap.")


def _sizes(names) -> tuple:
    return axis_params(names)["axis_size"]


def _dim(what, param, d, nd, rank):
    """Dimension ``d`` of ``nd`` possible ones (negative counts from the end)."""
    if type(d) is not int and not isinstance(d, np.integer):
        raise errors.ZeraxTypeError(f"{what}: {param} must be an int, got {d!r}")
    if not -nd <= d < nd:
        raise errors.ZeraxValueError(
            f"{what}: {param}={d} is out of range for an operand of rank {rank} "
            f"(at {errors.user_frame()})")
    return int(d) % nd


def _reduction(name, prim, x, axis_name, groups):
    """One variadic equation for every leaf of ``x`` (over processes: one MPI call per
    dtype for a whole network's gradients)."""
    _no_groups(name, groups)
    names = axis_names(axis_name)
    leaves, treedef = tree.tree_flatten(x)
    leaves = [_check_array(name, leaf) for leaf in leaves]
    if not names or not leaves:
        return tree.tree_unflatten(treedef, leaves)
    if prim is psum_p:   # JAX counts booleans in int32
        leaves = [convert_element_type(v, np.int32) if np.dtype(v.dtype) == np.bool_ else v
                  for v in leaves]
    return tree.tree_unflatten(treedef, bind_collective(prim, *leaves, names=names))


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum ``x`` over the members of the named axis (or axes); a pytree of arrays is
    summed leaf by leaf, booleans are counted in int32, as JAX's ``lax.psum``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([0.25, 0.75], dtype=float64)
    """
    return _reduction("psum", psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the members of the named axis.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([3., 3.], dtype=float64)
    """
    return _reduction("pmax", pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the members of the named axis.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([1., 1.], dtype=float64)
    """
    return _reduction("pmin", pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the members of the named axis: ``psum(x) / size`` (an
    integer operand gives a float64 mean, NumPy's dtype for a mean of integers).

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([-1.,  1.], dtype=float64)
    """
    n = axis_size(axis_name)
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    return tree.tree_map(lambda s: s / np.asarray(n, s.dtype) if dtype_kind(s.dtype) in "fc"
                         else s / n, total)


def axis_size(axis_name) -> int:
    """The number of members of the named axis (the product, for a tuple), a Python
    int, as JAX's ``lax.axis_size``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(znp.ones(4))
    Array([4., 4., 4., 4.], dtype=float64)
    """
    return int(math.prod(_sizes(axis_names(axis_name))))


def axis_index(axis_name):
    """This member's position (int32) along the named axis; for a tuple of axes, its
    row-major position in their product.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(znp.array([5., 5., 5.]))
    Array([ 0.,  5., 10.], dtype=float64)
    """
    names = axis_names(axis_name)
    sizes = _sizes(names)
    out = np.zeros((), np.int32)
    for name, size in zip(names, sizes):
        out = add(mul(out, np.int32(size)), bind_collective(axis_index_p, names=(name,)))
    return out


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member's ``x`` stacked along a new axis ``axis`` (concatenated along
    ``axis`` when ``tiled``), as JAX's ``lax.all_gather``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([[1., 3.],
           [1., 3.]], dtype=float64)
    """
    _no_groups("all_gather", axis_index_groups)
    names = axis_names(axis_name)
    sizes = _sizes(names)

    def one(leaf):
        leaf = _check_array("all_gather", leaf)
        nd = len(leaf.shape)
        ax = _dim("all_gather", "axis", axis, nd if tiled else nd + 1, nd)
        y = leaf
        for name in reversed(names):   # the first name's members outermost
            y = bind_collective(all_gather_p, y, names=(name,), axis=ax)
        shape = list(leaf.shape)
        m = math.prod(sizes)
        if tiled:
            shape[ax] *= m
        else:
            shape.insert(ax, m)
        return reshape(y, shape)
    return tree.tree_map(one, x)


def _members_dimension(what, which, leaf, d, names, sizes, tiled):
    """``leaf`` with dimension ``d`` opened into one dimension per axis of ``names``
    (their members, row-major) and, when ``tiled``, one more for the block of rows each
    member holds; untiled, dimension ``d`` must have one entry per member."""
    m, n = math.prod(sizes), leaf.shape[d]
    if (n % m if tiled else n != m):
        raise errors.ShapeError(
            f"{what} over {names} ({m} members) needs {which} of the operand (shape "
            f"{tuple(leaf.shape)}) to {'be a multiple of' if tiled else 'equal'} {m} "
            f"(at {errors.user_frame()})")
    shape = list(leaf.shape)
    shape[d:d + 1] = list(sizes) + ([n // m] if tiled else [])
    return reshape(leaf, shape)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum of ``x`` over the members, split along ``scatter_dimension``: member
    ``k`` gets block ``k`` (that dimension, of one entry per member, removed; with
    ``tiled``, blocks of ``shape[d] / members`` rows, kept), as JAX's
    ``lax.psum_scatter``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(znp.eye(2))
    Array([1., 1.], dtype=float64)
    """
    _no_groups("psum_scatter", axis_index_groups)
    names = axis_names(axis_name)
    sizes = _sizes(names)

    def one(leaf):
        leaf = _check_array("psum_scatter", leaf)
        nd = len(leaf.shape)
        d = _dim("psum_scatter", "scatter_dimension", scatter_dimension, nd, nd)
        y = _members_dimension("psum_scatter", f"dimension {d}", leaf, d, names, sizes, tiled)
        for name in names:   # each takes its member's block of the next dimension
            y = bind_collective(psum_scatter_p, y, names=(name,), scatter_dimension=d)
        return y
    return tree.tree_map(one, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Member ``n`` gets block ``n`` (along ``split_axis``) of every member's ``x``, in
    member order along ``concat_axis``, as JAX's ``lax.all_to_all``: without ``tiled``,
    ``x.shape[split_axis]`` is the number of members, that dimension is removed and the
    members' blocks are stacked along a new ``concat_axis``; with ``tiled`` the blocks
    are concatenated.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(
    ...     znp.array([[1., 2.], [3., 4.]]))
    Array([[1., 3.],
           [2., 4.]], dtype=float64)
    """
    _no_groups("all_to_all", axis_index_groups)
    names = axis_names(axis_name)
    sizes = _sizes(names)
    m, k = math.prod(sizes), len(names)

    def one(leaf):
        leaf = _check_array("all_to_all", leaf)
        nd = len(leaf.shape)
        s = _dim("all_to_all", "split_axis", split_axis, nd, nd)
        c = _dim("all_to_all", "concat_axis", concat_axis, nd, nd)
        y = _members_dimension("all_to_all", f"split_axis={s}", leaf, s, names, sizes, tiled)
        for j in range(k):   # each exchanges its own index: destination for source
            y = bind_collective(all_to_all_p, y, names=(names[j],), split_axis=s + j,
                                concat_axis=s + j)
        shape = list(y.shape)
        shape[s:s + k] = [m]
        y = moveaxis(reshape(y, shape), s, c)    # the sources, at concat_axis
        if not tiled:
            return y
        shape = list(y.shape)
        shape[c:c + 2] = [shape[c] * shape[c + 1]]
        return reshape(y, shape)
    return tree.tree_map(one, x)


def _check_perm(perm, m, names):
    try:
        pairs = tuple((int(s), int(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            f"ppermute: perm must be a sequence of (source, destination) pairs of ints, "
            f"got {perm!r:.80}") from None
    srcs, dsts = [s for s, _ in pairs], [t for _, t in pairs]
    if any(not 0 <= i < m for i in srcs + dsts):
        raise errors.ZeraxValueError(
            f"ppermute: perm {pairs} names a member outside the {m} members of {names} "
            f"(at {errors.user_frame()})")
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise errors.ZeraxValueError(
            f"ppermute: perm {pairs} sends from or to one member twice; a member sends "
            f"and receives at most once (at {errors.user_frame()})")
    return pairs


def ppermute(x, axis_name, perm):
    """Member ``dst`` gets the ``x`` of member ``src`` for each pair ``(src, dst)`` in
    ``perm``; members no pair sends to get zeros (JAX's ``lax.ppermute``).

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
    ...         axis_name="i")(znp.array([1., 2., 3.]))
    Array([3., 1., 2.], dtype=float64)
    """
    names = axis_names(axis_name)
    sizes = _sizes(names)
    m = math.prod(sizes)
    pairs = _check_perm(perm, m, names)

    def one(leaf):
        leaf = _check_array("ppermute", leaf)
        if len(names) == 1:
            return bind_collective(ppermute_p, leaf, names=names, perm=pairs)
        # several axes: every member's value, then each picks its source's
        everyone = all_gather(leaf, names)
        sources = np.full(m, m, np.int32)
        for s, t in pairs:
            sources[t] = s
        mine = reshape(dynamic_slice(sources, [axis_index(names)], [1]), ())
        clamped = select_n(lt(mine, np.int32(m)), np.int32(0), mine)
        row = dynamic_slice(everyone, [clamped] + [np.int32(0)] * len(leaf.shape),
                            [1] + list(leaf.shape))
        return select_n(lt(mine, np.int32(m)), np.zeros(leaf.shape, leaf.dtype),
                        reshape(row, leaf.shape))
    return tree.tree_map(one, x)


def pshuffle(x, axis_name, perm):
    """Member ``i`` gets the ``x`` of member ``perm[i]`` (JAX's ``lax.pshuffle``).

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(
    ...     znp.array([1., 2., 3.]))
    Array([3., 1., 2.], dtype=float64)
    """
    perm = list(perm)
    if sorted(perm) != list(range(len(perm))):
        raise errors.ZeraxValueError(f"pshuffle: perm must be a permutation, got {perm}")
    return ppermute(x, axis_name, [(s, t) for t, s in enumerate(perm)])
