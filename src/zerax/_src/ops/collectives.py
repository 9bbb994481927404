"""Collectives over named `vmap` axes: `psum`, `pmax`, `pmin`, `all_gather`, `axis_index`.

As in JAX, ``vmap(f, axis_name="i")`` names its batch axis, and inside ``f`` a collective
combines the values of all members of that batch: ``psum(x, "i")`` is, for every
member, the sum of ``x`` over the members. (zerax runs on one device, so a named axis is
always a `vmap` axis; `pmap`/`shard_map` axes over MPI processes will use the same
primitives with a transport backend.)

Binding: a collective's operand need not vary over the named axis (``psum(1.0, "i")``
is the axis size), so the vmap that names the axis takes part in choosing the trace
that processes it, beside the operand's own traces (``core.bind`` asks
`named_axis_traces`).  That trace's batching rule (``batch(vals, dims, frame=...)``, told
its axis name and size) reduces over its batch dimension; traces of other axes apply
the collective member by member.  A collective recorded by `jit` whose operand turns out
not to vary over the axis gets that unmapped meaning in compiled code: ``psum``
multiplies by ``axis_size`` (a static parameter recorded at bind time), ``pmax``/``pmin``
keep the operand, ``all_gather`` runs its impl on the host (each backend's ``lower_*.py``).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core import tree
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind, named_axis_traces
from .reduce import reduce_max, reduce_min, reduce_sum
from .shape import broadcast_in_dim, iota, reshape
from .slicing import dynamic_slice
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, moveaxis
from ..interpreters.tape import vjp_rules


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _collective(name: str) -> Primitive:
    prim = Primitive(name)
    prim.named_axes = True
    return prim


def _bind(prim, x, names, **params):
    sizes = tuple(t.axis_size for t in named_axis_traces(names))
    return bind(prim, x, axis_name=names, axis_size=sizes, **params)


def _size_in(x_dtype, n):
    return np.asarray(n, dtype=x_dtype)


# --------------------------------------------------------------------------- psum, pmax, pmin

psum_p = _collective("psum")
pmax_p = _collective("pmax")
pmin_p = _collective("pmin")

_REDUCERS = {psum_p: reduce_sum, pmax_p: reduce_max, pmin_p: reduce_min}


def _same_aval(x, **params):
    return ShapedArray(x.shape, x.dtype)


def _reduce_impl(prim):
    def impl(x, *, axis_name, axis_size):
        if prim is psum_p:  # every member holds x: the sum is x times the members
            return (x * _size_in(x.dtype, int(np.prod(axis_size)))).astype(x.dtype)
        return x
    return impl


def _reduce_batch(prim):
    def rule(vals, dims, *, frame, axis_name, axis_size):
        (x,), (d,) = vals, dims
        name, size = frame
        if name not in axis_name:  # another vmap's axis: member by member
            return bind(prim, x, axis_name=axis_name, axis_size=axis_size), d
        if d is None:
            out = x * _size_in(x.dtype, size) if prim is psum_p else x
        else:
            out = _REDUCERS[prim](x, (d,))
        rest = tuple(n for n in axis_name if n != name)
        if rest:
            out = _bind(prim, out, rest)
        return out, None
    return rule


for _p in (psum_p, pmax_p, pmin_p):
    _p.impl = _reduce_impl(_p)
    _p.abstract_eval = _same_aval
    batch_rules[_p] = _reduce_batch(_p)
    vjp_rules.pop(_p, None)


def _psum_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = bind(psum_p, x, **params)
    return out, t if type(t) is Zero else bind(psum_p, t, **params)


def _psum_transpose(ct, x, **params):
    # psum's Jacobian is the all-ones matrix over the members: symmetric
    return [ct if type(ct) is Zero else bind(psum_p, ct, **params)]


jvp_rules[psum_p] = _psum_jvp
transpose_rules[psum_p] = _psum_transpose
for _p in (pmax_p, pmin_p):
    _p.unsupported["jvp"] = (f"{_p.name} is not differentiable in zerax (nor in JAX); "
                             "use psum of a smooth function instead")
    _p.unsupported["transpose"] = f"{_p.name} is not linear"


# --------------------------------------------------------------------------- all_gather

all_gather_p = _collective("all_gather")


def _gathered_shape(shape, size, axis, tiled):
    shape = list(shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return tuple(shape)


def _all_gather_aval(x, *, axis_name, axis_size, axis, tiled):
    return ShapedArray(_gathered_shape(x.shape, axis_size[0], axis, tiled), x.dtype)


def _all_gather_impl(x, *, axis_name, axis_size, axis, tiled):
    stacked = np.stack([x] * axis_size[0], axis=axis)
    return stacked.reshape(_gathered_shape(x.shape, axis_size[0], axis, tiled))


def _all_gather_batch(vals, dims, *, frame, axis_name, axis_size, axis, tiled):
    (x,), (d,) = vals, dims
    name, size = frame
    if name not in axis_name:  # another vmap's axis: member by member, batch axis first
        return bind(all_gather_p, moveaxis(x, d, 0), axis_name=axis_name,
                    axis_size=axis_size, axis=axis + 1, tiled=tiled), 0
    if d is None:
        nd = len(x.shape)
        out = broadcast_in_dim(x, _gathered_shape(x.shape, size, axis, False),
                               tuple(k if k < axis else k + 1 for k in range(nd)))
    else:
        out = moveaxis(x, d, axis)
    if tiled:
        out = reshape(out, _gathered_shape(tuple(np.delete(out.shape, axis)), size, axis,
                                           True))
    return out, None


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = bind(all_gather_p, x, **params)
    if type(t) is Zero:
        return out, Zero(ShapedArray(out.shape, out.dtype))
    return out, bind(all_gather_p, t, **params)


def _all_gather_transpose(ct, x, *, axis_name, axis_size, axis, tiled):
    """The adjoint of gathering: each member's cotangent is its own slice of the sum of
    every member's gathered cotangent (JAX's psum_scatter)."""
    aval = x.aval
    if type(ct) is Zero:
        return [Zero(aval)]
    total = bind(psum_p, ct, axis_name=axis_name, axis_size=axis_size)
    idx = axis_index(axis_name[0])
    n = len(total.shape)
    chunk = aval.shape[axis] if tiled else 1
    starts = [np.zeros((), np.int32)] * n
    starts[axis] = idx * np.int32(chunk)
    sizes = list(total.shape)
    sizes[axis] = chunk
    piece = dynamic_slice(total, starts, sizes)
    return [piece if tiled else reshape(piece, aval.shape)]


all_gather_p.impl = _all_gather_impl
all_gather_p.abstract_eval = _all_gather_aval
batch_rules[all_gather_p] = _all_gather_batch
jvp_rules[all_gather_p] = _all_gather_jvp
transpose_rules[all_gather_p] = _all_gather_transpose


# --------------------------------------------------------------------------- axis_index

axis_index_p = Primitive("axis_index")
axis_index_p.named_axes = True


def _axis_index_impl(*, axis_name, axis_size):
    raise errors.UnboundAxisError(
        f"axis_index({axis_name[0]!r}) ran outside the vmap that names that axis "
        f"(at {errors.user_frame()}); call it inside vmap(..., axis_name={axis_name[0]!r}).")


def _axis_index_batch(vals, dims, *, frame, axis_name, axis_size):
    return iota(np.dtype(np.int32), (frame[1],)), 0


def _axis_index_jvp(primals, tangents, **params):
    out = bind(axis_index_p, **params)
    return out, Zero(ShapedArray((), np.dtype(np.int32)))


axis_index_p.impl = _axis_index_impl
axis_index_p.abstract_eval = lambda **params: ShapedArray((), np.dtype(np.int32))
batch_rules[axis_index_p] = _axis_index_batch
jvp_rules[axis_index_p] = _axis_index_jvp
vjp_rules[axis_index_p] = ()
axis_index_p.unsupported["transpose"] = "axis_index has no operands"


# --------------------------------------------------------------------------- the functions

def _check_array(what, x):
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype == object:
            raise errors.ZeraxTypeError(f"{what}: operand is not an array: {x!r:.80}")
    return x


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum ``x`` over the members of the named vmap axis (or axes); a pytree of arrays is
    summed leaf by leaf, as JAX's ``lax.psum``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([0.25, 0.75], dtype=float64)
    """
    return _tree_collective("psum", psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the members of the named vmap axis.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([3., 3.], dtype=float64)
    """
    return _tree_collective("pmax", pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the members of the named vmap axis.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([1., 1.], dtype=float64)
    """
    return _tree_collective("pmin", pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the members of the named vmap axis: ``psum(x) / size``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([-1.,  1.], dtype=float64)
    """
    names = _names(axis_name)
    n = int(np.prod([t.axis_size for t in named_axis_traces(names)]))
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    return tree.tree_map(lambda s: s / _size_in(s.dtype, n) if s.dtype.kind in "fc"
                         else s / n, total)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member's ``x`` stacked along a new axis ``axis`` (concatenated along ``axis``
    when ``tiled``), as JAX's ``lax.all_gather``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(znp.array([1., 3.]))
    Array([[1., 3.],
           [1., 3.]], dtype=float64)
    """
    _no_groups("all_gather", axis_index_groups)
    names = _names(axis_name)
    if len(names) != 1:
        raise errors.NotSupportedError(
            f"all_gather over several axes {names} (at {errors.user_frame()}): gather over "
            "one named axis at a time.")

    def one(leaf):
        leaf = _check_array("all_gather", leaf)
        nd = len(leaf.shape)
        ax = axis + (nd + (0 if tiled else 1) if axis < 0 else 0)
        if not 0 <= ax <= nd - (1 if tiled else 0):
            raise errors.ZeraxValueError(
                f"all_gather: axis={axis} is out of range for an operand of rank {nd}")
        return _bind(all_gather_p, leaf, names, axis=ax, tiled=bool(tiled))
    return tree.tree_map(one, x)


def axis_index(axis_name):
    """This member's position (int32) along the named vmap axis.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(znp.array([5., 5., 5.]))
    Array([ 0.,  5., 10.], dtype=float64)
    """
    names = _names(axis_name)
    if len(names) != 1:
        raise errors.NotSupportedError(
            f"axis_index of several axes {names}: ask for one axis at a time.")
    trace, = named_axis_traces(names)
    return bind(axis_index_p, axis_name=names, axis_size=(trace.axis_size,))


def axis_size(axis_name):
    """The number of members of the named vmap axis (a Python int), as JAX's
    ``lax.axis_size``.

    >>> import zerax as zx, zerax.lax as lax, zerax.numpy as znp
    >>> zx.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(znp.ones(4))
    Array([4., 4., 4., 4.], dtype=float64)
    """
    return int(np.prod([t.axis_size for t in named_axis_traces(_names(axis_name))]))


def _no_groups(name, groups):
    if groups is not None:
        raise errors.NotSupportedError(
            f"{name}(axis_index_groups=...) is not supported (at {errors.user_frame()}); "
            "JAX supports it only under pmap.")


def _tree_collective(name, prim, x, axis_name, groups):
    _no_groups(name, groups)
    names = _names(axis_name)
    return tree.tree_map(lambda leaf: _bind(prim, _check_array(name, leaf), names), x)


__all__ = ["psum", "pmax", "pmin", "pmean", "all_gather", "axis_index", "axis_size",
           "psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p"]
