"""NumPy's products on zerax values: dot, matmul, vdot, inner, outer, tensordot, einsum,
kron, cross, matvec, vecmat, vecdot.

Every product lowers to the ``dot_general`` primitive (plus shape primitives and
``reduce_sum``), so each one is differentiable to any order and traceable.  Python
scalars are converted to arrays of NumPy's default dtypes first, as NumPy's own
``dot``/``einsum``/... do (they are not weak here), and the result dtype is NumPy's
``result_type`` of the operands.  Complex operands of the conjugating products
(``vdot``, ``vecdot``, ``vecmat``) are not supported yet.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..ops import elementwise as ew
from ..ops.linalg import dot_general
from ..ops.reduce import reduce_sum
from ..ops.shape import concatenate, reshape, slice_p_bind, transpose
from ._util import _PY_SCALARS, as_dtype, broadcast_shapes, broadcast_to_shape, check_arg
from ._util import numpy_result_dtype
from ..base.dtypes import kind as dtype_kind

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "cross",
           "matvec", "vecmat", "vecdot"]


# --------------------------------------------------------------------------- helpers


def _arr(x, fname, pos=0):
    """A zerax value; Python scalars become arrays of NumPy's default dtypes (NumPy's
    products convert them with ``asarray``, so they do not promote weakly)."""
    x = check_arg(x, fname, pos)
    if type(x) in _PY_SCALARS:
        return Array._wrap(np.asarray(x))
    return x


def _promote(fname, *xs, dtype=None):
    """Every operand converted to ``dtype`` (default: NumPy's result_type of them)."""
    if dtype is None:
        dtype = dtypes.result_type(*[np.dtype(x.dtype) for x in xs])
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) not in "biufc":
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: unsupported dtype {dtype}")
    return [as_dtype(x, dtype) for x in xs]


def _conj(x):
    """The complex conjugate of the first operand of vecdot, vecmat and vdot (NumPy's
    and the array API's rule); real values as they are."""
    return ew.conj(x) if np.dtype(x.dtype).kind == "c" else x


def _no_out(fname, out):
    if out is not None:
        raise errors.NotSupportedError(
            f"zerax.numpy.{fname}: out= is not supported; zerax arrays are immutable, use the "
            "returned value instead.")


def _move_to_end(x, axis):
    nd = x.ndim
    if axis == nd - 1:
        return x
    return transpose(x, [d for d in range(nd) if d != axis] + [axis])


def _norm_axis(axis, ndim, fname, what="axis"):
    if not isinstance(axis, (int, np.integer)):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise errors.AxisError(
            f"zerax.numpy.{fname}: {what} {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % ndim


def _batched_dot(fname, a, b, ca, cb):
    """The gufunc-style product of ``a`` (core rank ``ca``) and ``b`` (core rank ``cb``).

    ``a``'s last axis is contracted with ``b``'s first core axis; the leading (batch)
    axes broadcast as in NumPy.  The result is ``batch + a's other core axis (if ca == 2)
    + b's other core axis (if cb == 2)``."""
    a_shape, b_shape, dn, perm = _batched_plan(fname, tuple(a.shape), tuple(b.shape), ca, cb)
    if a_shape is not None:
        a = reshape(a, a_shape)
    if b_shape is not None:
        b = reshape(b, b_shape)
    return transpose(dot_general(a, b, dn), perm)


@functools.lru_cache(maxsize=1024)
def _batched_plan(fname, ashape, bshape, ca, cb):
    """How `_batched_dot` lowers: batch axes present in both operands with equal sizes
    become dot_general batch axes; an axis of size 1 facing a larger one is squeezed out
    (a reshape) so that the other operand's axis is a free axis: nothing is
    materialised by broadcasting.  Returns (a's new shape or None, b's new shape or
    None, dimension numbers, the permutation of dot_general's result)."""
    an, bn = len(ashape), len(bshape)
    ka, kb = an - 1, bn - cb
    if ashape[ka] != bshape[kb]:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: the contracted axis of the first operand (shape "
            f"{ashape}, size {ashape[ka]}) does not match that of the second "
            f"(shape {bshape}, size {bshape[kb]}).")
    la, lb = an - ca, bn - cb
    nbatch = max(la, lb)
    oa, ob = nbatch - la, nbatch - lb
    a_sq, b_sq = [], []
    batch = []                # (a axis, b axis, out position)
    a_free, b_free = [], []   # (axis, out position)
    for i in range(nbatch):
        ia = i - oa if i >= oa else None
        ib = i - ob if i >= ob else None
        if ia is not None and ib is not None:
            sa, sb = ashape[ia], bshape[ib]
            if sa == sb:
                batch.append((ia, ib, i))
            elif sa == 1:
                a_sq.append(ia)
                b_free.append((ib, i))
            elif sb == 1:
                b_sq.append(ib)
                a_free.append((ia, i))
            else:
                raise errors.ShapeError(
                    f"zerax.numpy.{fname}: the batch axes of shapes {ashape} and {bshape} do "
                    "not broadcast together.")
        elif ia is not None:
            a_free.append((ia, i))
        else:
            b_free.append((ib, i))

    def new(d, sq):
        return d - sum(1 for s in sq if s < d)

    a_new = tuple(n for d, n in enumerate(ashape) if d not in a_sq) if a_sq else None
    b_new = tuple(n for d, n in enumerate(bshape) if d not in b_sq) if b_sq else None
    dn = (((new(ka, a_sq),), (new(kb, b_sq),)),
          (tuple(new(ia, a_sq) for ia, _, _ in batch), tuple(new(ib, b_sq) for _, ib, _ in batch)))
    positions = [i for _, _, i in batch] + [i for _, i in a_free]
    if ca == 2:
        positions.append(nbatch)
    positions += [i for _, i in b_free]
    if cb == 2:
        positions.append(nbatch + (ca == 2))
    perm = tuple(sorted(range(len(positions)), key=positions.__getitem__))
    return a_new, b_new, dn, perm


# --------------------------------------------------------------------------- dot family


def dot(a, b, out=None, *, precision=None, preferred_element_type=None):
    """``numpy.dot``: the sum product over the last axis of ``a`` and the second-to-last
    of ``b`` (the last, for a 1-D ``b``); a 0-d operand multiplies.  ``precision`` (JAX)
    is accepted and ignored; ``preferred_element_type`` computes in that dtype.

    >>> import zerax.numpy as znp
    >>> znp.dot(znp.array([[1, 2], [3, 4]]), znp.array([1, 1]))
    Array([3, 7], dtype=int64)
    """
    _no_out("dot", out)
    a, b = _arr(a, "dot", 0), _arr(b, "dot", 1)
    a, b = _promote("dot", a, b, dtype=preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return ew.mul(*_bcast_pair(a, b))
    kb = max(b.ndim - 2, 0)
    if a.shape[-1] != b.shape[kb]:
        raise errors.ShapeError(
            f"zerax.numpy.dot: shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
            f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[kb]} (dim {kb}).")
    return dot_general(a, b, (((a.ndim - 1,), (kb,)), ((), ())))


def _bcast_pair(a, b):
    shape = broadcast_shapes("multiply", tuple(a.shape), tuple(b.shape))
    return broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)


def matmul(x1, x2, /, out=None, *, dtype=None, precision=None, preferred_element_type=None):
    """``numpy.matmul`` (the ``@`` operator): matrix products broadcast over leading
    axes; a 1-D first (second) operand is a row (column) whose axis is dropped.

    ``precision`` is accepted for JAX compatibility and ignored;
    ``preferred_element_type`` (JAX) or ``dtype`` (NumPy) computes in that dtype.

    >>> import zerax.numpy as znp
    >>> (znp.ones((5, 2, 3)) @ znp.ones((3, 4))).shape
    (5, 2, 4)
    """
    _no_out("matmul", out)
    a, b = _arr(x1, "matmul", 0), _arr(x2, "matmul", 1)
    if a.ndim == 0 or b.ndim == 0:
        raise errors.ShapeError(
            "zerax.numpy.matmul: operands must have at least one axis, got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)} (use multiply for scalars).")
    a, b = _promote("matmul", a, b, dtype=dtype if dtype is not None else preferred_element_type)
    if a.ndim <= 2 and b.ndim <= 2:     # no batch axes: one dot_general, no bookkeeping
        ka, kb = a.ndim - 1, 0
        if a.shape[ka] != b.shape[kb]:
            raise errors.ShapeError(
                f"zerax.numpy.matmul: the contracted axis of the first operand (shape "
                f"{tuple(a.shape)}, size {a.shape[ka]}) does not match that of the second "
                f"(shape {tuple(b.shape)}, size {b.shape[kb]}).")
        return dot_general(a, b, (((ka,), (kb,)), ((), ())))
    return _batched_dot("matmul", a, b, 1 if a.ndim == 1 else 2, 1 if b.ndim == 1 else 2)


def matvec(x1, x2, /, out=None, *, dtype=None):
    """``numpy.matvec``: matrix (..., m, n) times vector (..., n), broadcast over batches."""
    _no_out("matvec", out)
    a, b = _arr(x1, "matvec", 0), _arr(x2, "matvec", 1)
    if a.ndim < 2 or b.ndim < 1:
        raise errors.ShapeError(
            f"zerax.numpy.matvec: needs a matrix and a vector, got shapes {tuple(a.shape)} "
            f"and {tuple(b.shape)}")
    a, b = _promote("matvec", a, b, dtype=dtype)
    return _batched_dot("matvec", a, b, 2, 1)


def vecmat(x1, x2, /, out=None, *, dtype=None):
    """``numpy.vecmat``: vector (..., n) times matrix (..., n, m), broadcast over batches."""
    _no_out("vecmat", out)
    a, b = _arr(x1, "vecmat", 0), _arr(x2, "vecmat", 1)
    if a.ndim < 1 or b.ndim < 2:
        raise errors.ShapeError(
            f"zerax.numpy.vecmat: needs a vector and a matrix, got shapes {tuple(a.shape)} "
            f"and {tuple(b.shape)}")
    a, b = _promote("vecmat", a, b, dtype=dtype)
    return _batched_dot("vecmat", _conj(a), b, 1, 2)


def vecdot(x1, x2, /, out=None, *, axis=-1, dtype=None):
    """``numpy.vecdot``: the dot product of vectors along ``axis``, broadcast over the
    other axes, conjugating the first (complex) operand.

    >>> import zerax.numpy as znp
    >>> znp.vecdot(znp.ones((2, 3)), znp.array([1.0, 2.0, 3.0]))
    Array([6., 6.], dtype=float64)
    """
    _no_out("vecdot", out)
    a, b = _arr(x1, "vecdot", 0), _arr(x2, "vecdot", 1)
    if a.ndim == 0 or b.ndim == 0:
        raise errors.ShapeError(
            f"zerax.numpy.vecdot: operands must have at least one axis, got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}")
    a = _move_to_end(a, _norm_axis(axis, a.ndim, "vecdot"))
    b = _move_to_end(b, _norm_axis(axis, b.ndim, "vecdot"))
    a, b = _promote("vecdot", a, b, dtype=dtype)
    return _batched_dot("vecdot", _conj(a), b, 1, 1)


def vdot(a, b, /, *, precision=None, preferred_element_type=None):
    """``numpy.vdot``: the dot product of the flattened operands (``precision``,
    ``preferred_element_type``: as `dot`).

    >>> import zerax.numpy as znp
    >>> znp.vdot(znp.array([[1.0, 2.0], [3.0, 4.0]]), znp.ones((2, 2)))
    Array(10., dtype=float64)
    """
    a, b = _arr(a, "vdot", 0), _arr(b, "vdot", 1)
    if a.size != b.size:
        raise errors.ShapeError(
            f"zerax.numpy.vdot: the operands have {a.size} and {b.size} elements "
            f"(shapes {tuple(a.shape)} and {tuple(b.shape)}); they must have the same size.")
    a, b = _promote("vdot", a, b, dtype=preferred_element_type)
    a, b = reshape(_conj(a), (a.size,)), reshape(b, (b.size,))
    return dot_general(a, b, (((0,), (0,)), ((), ())))


def inner(a, b, /, *, precision=None, preferred_element_type=None):
    """``numpy.inner``: the sum product over the last axes of ``a`` and ``b``
    (``precision``, ``preferred_element_type``: as `dot`)."""
    a, b = _arr(a, "inner", 0), _arr(b, "inner", 1)
    a, b = _promote("inner", a, b, dtype=preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return ew.mul(*_bcast_pair(a, b))
    if a.shape[-1] != b.shape[-1]:
        raise errors.ShapeError(
            f"zerax.numpy.inner: the last axes of shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)} differ.")
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b, out=None):
    """``numpy.outer``: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``.

    >>> import zerax.numpy as znp
    >>> znp.outer(znp.array([1, 2]), znp.array([1, 10, 100]))
    Array([[  1,  10, 100],
           [  2,  20, 200]], dtype=int64)
    """
    _no_out("outer", out)
    a, b = _arr(a, "outer", 0), _arr(b, "outer", 1)
    a, b = _promote("outer", a, b)
    shape = (a.size, b.size)
    a = broadcast_to_shape(reshape(a, (a.size, 1)), shape)
    b = broadcast_to_shape(reshape(b, (1, b.size)), shape)
    return ew.mul(a, b)     # (elementwise: -0.0 * 1.0 stays -0.0, where a dot adds +0.0)


def _axes_list(ax, ndim, fname):
    if isinstance(ax, (int, np.integer)):
        ax = (ax,)
    try:
        ax = [int(d) for d in ax]
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: axes must be integers or sequences of integers, got "
            f"{ax!r}") from None
    return [_norm_axis(d, ndim, fname, "axes entry") for d in ax]


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """``numpy.tensordot``: sum products over ``axes`` (an int N: the last N axes of
    ``a`` with the first N of ``b``; or a pair of axis sequences).  ``precision``,
    ``preferred_element_type``: as `dot`.

    >>> import zerax.numpy as znp
    >>> znp.tensordot(znp.ones((3, 4, 5)), znp.ones((4, 5, 2)), axes=2).shape
    (3, 2)
    """
    a, b = _arr(a, "tensordot", 0), _arr(b, "tensordot", 1)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise errors.ShapeError(
                f"zerax.numpy.tensordot: axes={n} needs operands of rank at least {n}, got "
                f"shapes {tuple(a.shape)} and {tuple(b.shape)}")
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise errors.ZeraxTypeError(
                "zerax.numpy.tensordot: axes must be an int or a pair of axis sequences, got "
                f"{axes!r}") from None
        axes_a = _axes_list(ax_a, a.ndim, "tensordot")
        axes_b = _axes_list(ax_b, b.ndim, "tensordot")
        if len(axes_a) != len(axes_b):
            raise errors.ShapeError(
                f"zerax.numpy.tensordot: {len(axes_a)} axes of the first operand but "
                f"{len(axes_b)} of the second")
    for da, db in zip(axes_a, axes_b):
        if a.shape[da] != b.shape[db]:
            raise errors.ShapeError(
                f"zerax.numpy.tensordot: shape-mismatch for sum: axis {da} of shape "
                f"{tuple(a.shape)} (size {a.shape[da]}) against axis {db} of shape "
                f"{tuple(b.shape)} (size {b.shape[db]})")
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise errors.ShapeError("zerax.numpy.tensordot: repeated axis in axes")
    a, b = _promote("tensordot", a, b, dtype=preferred_element_type)
    return dot_general(a, b, ((tuple(axes_a), tuple(axes_b)), ((), ())))


def kron(a, b):
    """``numpy.kron``: the Kronecker product (block array ``a[i] * b``).

    >>> import zerax.numpy as znp
    >>> znp.kron(znp.array([1, 10]), znp.array([1, 2, 3]))
    Array([ 1,  2,  3, 10, 20, 30], dtype=int64)
    """
    a, b = _arr(a, "kron", 0), _arr(b, "kron", 1)
    a, b = _promote("kron", a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    out = dot_general(reshape(a, sa), reshape(b, sb), (((), ()), ((), ())))
    out = transpose(out, [d for i in range(nd) for d in (i, nd + i)])
    return reshape(out, [x * y for x, y in zip(sa, sb)])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``numpy.cross`` of (arrays of) 3-vectors, broadcast over the other axes.

    >>> import zerax.numpy as znp
    >>> znp.cross(znp.array([1, 0, 0]), znp.array([0, 1, 0]))
    Array([0, 0, 1], dtype=int64)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _arr(a, "cross", 0), _arr(b, "cross", 1)
    if a.ndim == 0 or b.ndim == 0:
        raise errors.ShapeError("zerax.numpy.cross: operands must be (arrays of) vectors")
    a = _move_to_end(a, _norm_axis(axisa, a.ndim, "cross", "axisa"))
    b = _move_to_end(b, _norm_axis(axisb, b.ndim, "cross", "axisb"))
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise errors.NotSupportedError(
            f"zerax.numpy.cross: only 3-dimensional vectors are supported, got vectors of "
            f"length {a.shape[-1]} and {b.shape[-1]} (2-vectors are deprecated in NumPy 2; "
            "pad them with a zero third component).")
    a, b = _promote("cross", a, b)
    if a.dtype == np.bool_:
        raise errors.ZeraxTypeError(
            "zerax.numpy.cross: boolean inputs are not supported (NumPy refuses boolean "
            "subtraction); convert them to integers first.")
    shape = broadcast_shapes("cross", tuple(a.shape), tuple(b.shape))
    a, b = broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)

    def comp(x, i):
        starts = [0] * x.ndim
        limits = list(x.shape)
        starts[-1], limits[-1] = i, i + 1
        return slice_p_bind(x, starts, limits)

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    c = concatenate([ew.sub(ew.mul(a1, b2), ew.mul(a2, b1)),
                     ew.sub(ew.mul(a2, b0), ew.mul(a0, b2)),
                     ew.sub(ew.mul(a0, b1), ew.mul(a1, b0))], len(shape) - 1)
    axc = _norm_axis(axisc, c.ndim, "cross", "axisc")
    if axc != c.ndim - 1:
        perm = list(range(c.ndim - 1))
        perm.insert(axc, c.ndim - 1)
        c = transpose(c, perm)
    return c


# --------------------------------------------------------------------------- diagonal


def _diagonal(x, offset=0, axis1=0, axis2=1, fname="diagonal"):
    """``numpy.diagonal``: the diagonal of the (axis1, axis2) planes as the last axis.

    Written as transpose + reshape + a strided slice, all linear primitives, so it
    costs O(size) and transposes without any mask multiplication."""
    nd = x.ndim
    if nd < 2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: needs an array of rank >= 2, got {nd}")
    a1 = _norm_axis(axis1, nd, fname, "axis1")
    a2 = _norm_axis(axis2, nd, fname, "axis2")
    if a1 == a2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: axis1 and axis2 cannot be the same")
    offset = int(offset)
    rest = [d for d in range(nd) if d not in (a1, a2)]
    x = transpose(x, rest + [a1, a2])
    n, m = x.shape[-2], x.shape[-1]
    lead = list(x.shape[:-2])
    if offset >= 0:
        d = max(0, min(n, m - offset))
        start = offset
    else:
        d = max(0, min(n + offset, m))
        start = -offset * m
    if d == 0:
        return reshape(slice_p_bind(reshape(x, lead + [n * m]), [0] * (len(lead) + 1),
                                    lead + [0]), lead + [0])
    flat = reshape(x, lead + [n * m])
    stride = m + 1
    limit = start + (d - 1) * stride + 1
    return slice_p_bind(flat, [0] * len(lead) + [start], lead + [limit],
                        [1] * len(lead) + [stride])


def _trace(x, offset=0, axis1=0, axis2=1, dtype=None, fname="trace"):
    """``numpy.trace``: sums of the diagonals (NumPy's ``sum`` dtype rules)."""
    d = _diagonal(x, offset, axis1, axis2, fname)
    if dtype is None:
        dtype = numpy_result_dtype(np.sum, d)
    d = as_dtype(d, dtype)
    return reduce_sum(d, (d.ndim - 1,))


# --------------------------------------------------------------------------- einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_term(term, where):
    """'ab...c' -> (['a', 'b', '...', 'c'])."""
    out, i = [], 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != "...":
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.einsum: {where} {term!r} has a '.' that is not part of an "
                    "ellipsis '...'")
            if "..." in out:
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.einsum: {where} {term!r} has more than one ellipsis")
            out.append("...")
            i += 3
            continue
        if ch not in _LETTERS:
            raise errors.ZeraxTypeError(
                f"zerax.numpy.einsum: invalid subscript {ch!r} in {where} {term!r}; use the "
                "letters a-z and A-Z")
        out.append(ch)
        i += 1
    return out


def _sublist_to_term(sub):
    parts = []
    for s in sub:
        if s is Ellipsis:
            parts.append("...")
        elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
            parts.append(_LETTERS[int(s)])
        else:
            raise errors.ZeraxTypeError(
                f"zerax.numpy.einsum: subscripts in a sublist must be integers in [0, 52) or "
                f"Ellipsis, got {s!r}")
    return "".join(parts)


def _interleaved(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) -> (subscripts, operands)."""
    args = list(args)
    out_sub = args.pop() if len(args) % 2 == 1 else None
    ops = args[0::2]
    terms = [_sublist_to_term(s) for s in args[1::2]]
    subscripts = ",".join(terms)
    if out_sub is not None:
        subscripts += "->" + _sublist_to_term(out_sub)
    return subscripts, ops


class _Plan:
    """An einsum lowering computed on shapes only, cached, then replayed on values.

    Registers hold the operands and intermediates; each step rewrites one register
    (transpose, reshape, strided slice, sum) or appends a new one (dot_general)."""

    def __init__(self, shapes):
        self.shapes = [tuple(s) for s in shapes]
        self.steps = []
        self.result = None

    def transpose(self, r, perm):
        perm = tuple(perm)
        if perm != tuple(range(len(perm))):
            self.shapes[r] = tuple(self.shapes[r][p] for p in perm)
            self.steps.append(("transpose", r, perm))

    def reshape(self, r, shape):
        shape = tuple(shape)
        if shape != self.shapes[r]:
            self.shapes[r] = shape
            self.steps.append(("reshape", r, shape))

    def slice(self, r, starts, limits, strides):
        self.shapes[r] = tuple(max(0, -(-(b - a) // st))
                               for a, b, st in zip(starts, limits, strides))
        self.steps.append(("slice", r, (tuple(starts), tuple(limits), tuple(strides))))

    def sum(self, r, axes):
        if axes:
            self.shapes[r] = tuple(n for i, n in enumerate(self.shapes[r]) if i not in axes)
            self.steps.append(("sum", r, tuple(axes)))

    def dot(self, ra, rb, dn):
        (ca, cb), (ba, bb) = dn
        sa, sb = self.shapes[ra], self.shapes[rb]
        shape = ([sa[d] for d in ba] + [n for d, n in enumerate(sa) if d not in ca + ba]
                 + [n for d, n in enumerate(sb) if d not in cb + bb])
        self.shapes.append(tuple(shape))
        self.steps.append(("dot", (ra, rb), dn))
        return len(self.shapes) - 1

    def run(self, values):
        env = list(values)
        for op, r, arg in self.steps:
            if op == "dot":
                env.append(dot_general(env[r[0]], env[r[1]], arg))
            elif op == "transpose":
                env[r] = transpose(env[r], arg)
            elif op == "reshape":
                env[r] = reshape(env[r], arg)
            elif op == "slice":
                env[r] = slice_p_bind(env[r], *arg)
            else:
                env[r] = reduce_sum(env[r], arg)
        return env[self.result]


def _take_diagonals(plan, r, labels):
    """Collapse labels repeated within one operand to their diagonal: a transpose, a
    reshape and a strided slice (linear primitives; O(size), no mask)."""
    while len(set(labels)) != len(labels):
        shape = plan.shapes[r]
        lab = next(lb for lb in labels if labels.count(lb) > 1)
        pos = [i for i, lb in enumerate(labels) if lb == lab]
        sizes = [shape[p] for p in pos]
        if len(set(sizes)) != 1:
            raise errors.ShapeError(
                f"zerax.numpy.einsum: subscript {lab!r} is repeated in one operand for axes of "
                f"different sizes {sizes}")
        n, k = sizes[0], len(pos)
        rest = [i for i in range(len(labels)) if i not in pos]
        lead = [shape[i] for i in rest]
        plan.transpose(r, rest + pos)
        if n <= 1:
            plan.reshape(r, lead + [n])
        else:
            stride = (n ** k - 1) // (n - 1)      # 1 + n + ... + n^(k-1)
            plan.reshape(r, lead + [n ** k])
            plan.slice(r, [0] * (len(lead) + 1), lead + [(n - 1) * stride + 1],
                       [1] * len(lead) + [stride])
        labels = [labels[i] for i in rest] + [lab]
    return labels


def _sum_unneeded(plan, r, labels, needed):
    axes = tuple(i for i, lb in enumerate(labels) if lb not in needed)
    plan.sum(r, axes)
    return [lb for lb in labels if lb in needed]


def _size(labels, sizes):
    return math.prod(sizes[lb] for lb in labels)


@functools.lru_cache(maxsize=512)
def _einsum_plan(subscripts, shapes):
    """Parse ``subscripts`` for operands of ``shapes`` and lower the sum to a _Plan."""
    if subscripts.count("->") > 1:
        raise errors.ZeraxTypeError("zerax.numpy.einsum: subscripts contain more than one '->'")
    explicit = "->" in subscripts
    lhs, out_term = subscripts.split("->") if explicit else (subscripts, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.einsum: the subscripts {subscripts!r} name {len(terms)} operands but "
            f"{len(shapes)} were given")
    parsed = [_parse_term(t, "operand subscripts") for t in terms]

    # Expand '...' into per-position labels, right-aligned across operands.
    ell_dims = []
    for p, shape in zip(parsed, shapes):
        nlet = len(p) - ("..." in p)
        if ("..." in p and len(shape) < nlet) or ("..." not in p and len(shape) != nlet):
            raise errors.ShapeError(
                f"zerax.numpy.einsum: an operand of shape {shape} has {len(shape)} axes but "
                f"its subscripts {''.join(p)!r} name {nlet}")
        ell_dims.append(len(shape) - nlet)
    n_ell = max(ell_dims)
    ell_labels = [("...", j) for j in range(n_ell)]
    labels_in = []
    for p, e in zip(parsed, ell_dims):
        labs = []
        for sub in p:
            labs.extend(ell_labels[n_ell - e:] if sub == "..." else [sub])
        labels_in.append(labs)

    if explicit:
        po = _parse_term(out_term, "output subscripts")
        letters = [sub for sub in po if sub != "..."]
        if len(set(letters)) != len(letters):
            raise errors.ZeraxTypeError(
                f"zerax.numpy.einsum: output subscripts {out_term!r} repeat a subscript")
        seen = {sub for p in parsed for sub in p}
        for sub in letters:
            if sub not in seen:
                raise errors.ZeraxTypeError(
                    f"zerax.numpy.einsum: output subscript {sub!r} does not appear in the "
                    "operands' subscripts")
        if n_ell and "..." not in po:
            raise errors.ShapeError(
                "zerax.numpy.einsum: the operands have axes matched by '...' but the output "
                f"subscripts {out_term!r} have no '...' to place them")
        out_labels = []
        for sub in po:
            out_labels.extend(ell_labels if sub == "..." else [sub])
    else:
        counts: dict = {}
        for p in parsed:
            for sub in p:
                if sub != "...":
                    counts[sub] = counts.get(sub, 0) + 1
        out_labels = ell_labels + sorted(sub for sub, c in counts.items() if c == 1)

    plan = _Plan(shapes)
    labels = [_take_diagonals(plan, r, labs) for r, labs in enumerate(labels_in)]

    # Sizes; axes of size 1 facing a larger size broadcast (they are squeezed out).
    sizes: dict = {}
    for r, labs in enumerate(labels):
        for n, lab in zip(plan.shapes[r], labs):
            old = sizes.get(lab)
            if old is None or old == 1:
                sizes[lab] = n
            elif n != 1 and n != old:
                name = "'...'" if isinstance(lab, tuple) else repr(lab)
                raise errors.ShapeError(
                    f"zerax.numpy.einsum: subscript {name} has sizes {old} and {n} in "
                    f"different operands (shapes {', '.join(str(s) for s in shapes)})")
    for r, labs in enumerate(labels):
        shape = plan.shapes[r]
        keep = [i for i, lab in enumerate(labs) if not (shape[i] == 1 and sizes[lab] != 1)]
        if len(keep) != len(labs):
            plan.reshape(r, [shape[i] for i in keep])
            labels[r] = [labs[i] for i in keep]

    out_set = set(out_labels)
    live = dict(enumerate(labels))          # register -> labels, operands still to combine

    def needed_except(*skip):
        need = set(out_set)
        for k, labs in live.items():
            if k not in skip:
                need.update(labs)
        return need

    for r in list(live):
        live[r] = _sum_unneeded(plan, r, live[r], needed_except(r))

    while len(live) > 1:
        best = None
        regs = list(live)
        for x, i in enumerate(regs):
            for j in regs[x + 1:]:
                li, lj = live[i], live[j]
                need = needed_except(i, j)
                res = [lab for lab in dict.fromkeys(li + lj)
                       if lab in need or (lab in li) != (lab in lj)]
                cost = _size(res, sizes) - _size(li, sizes) - _size(lj, sizes)
                if best is None or cost < best[0]:
                    best = (cost, i, j)
        _, i, j = best
        need = needed_except(i, j)
        la, lb = live.pop(i), live.pop(j)
        batch = [lab for lab in la if lab in lb and lab in need]
        contract = [lab for lab in la if lab in lb and lab not in need]
        dn = ((tuple(la.index(lab) for lab in contract), tuple(lb.index(lab) for lab in contract)),
              (tuple(la.index(lab) for lab in batch), tuple(lb.index(lab) for lab in batch)))
        r = plan.dot(i, j, dn)
        lr = batch + [lab for lab in la if lab not in lb] + [lab for lab in lb if lab not in la]
        live[r] = _sum_unneeded(plan, r, lr, need)

    (r, labs), = live.items()
    labs = _sum_unneeded(plan, r, labs, out_set)
    plan.transpose(r, [labs.index(lab) for lab in out_labels])
    plan.result = r
    return plan


def einsum(subscripts, *operands, out=None, optimize=False, dtype=None, casting="safe",
           precision=None, preferred_element_type=None):
    """``numpy.einsum``: Einstein summation, with ``...`` broadcasting, implicit output,
    repeated subscripts (diagonals/traces) and the interleaved sublist form.

    Lowered to pairwise ``dot_general`` contractions (the pair giving the smallest
    intermediate first), ``reduce_sum``, transposes, and strided slices for diagonals;
    the lowering is cached per (subscripts, shapes).  ``optimize`` and ``precision``
    are accepted and ignored; ``dtype``/``preferred_element_type`` compute in that
    dtype.

    >>> import zerax.numpy as znp
    >>> a = znp.ones((2, 3)); b = znp.ones((3, 4))
    >>> znp.einsum("ij,jk->ik", a, b).shape
    (2, 4)
    >>> znp.einsum("ii", znp.array([[1, 2], [3, 4]]))
    Array(5, dtype=int64)
    """
    del optimize, precision, casting
    _no_out("einsum", out)
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    ops = [_arr(x, "einsum", i) for i, x in enumerate(operands)]
    if not ops:
        raise errors.ZeraxTypeError("zerax.numpy.einsum: at least one operand is required")
    plan = _einsum_plan(subscripts.replace(" ", ""), tuple(tuple(x.shape) for x in ops))
    ops = _promote("einsum", *ops,
                   dtype=preferred_element_type if preferred_element_type is not None else dtype)
    return plan.run(ops)
