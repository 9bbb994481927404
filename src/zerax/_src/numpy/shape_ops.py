"""NumPy's shape manipulation on zerax values: reshape, transpose, tiling and repeating,
flips and rolls, broadcasting, diagonals (joining and splitting are in ``joining.py``,
``pad`` in ``padding.py``; both build on the static helpers here).

Everything here is composed from the linear shape primitives (reshape, transpose,
broadcast_in_dim, concatenate, pad, slice, rev, dynamic_slice), so every function is
traceable and differentiable.  Shapes, axes, split points and repeat counts are static
Python values; passing a traced value where one is needed raises a ConcretizationError.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ... import errors
from ..base import dtypes
from ..base.dtypes import kind as dtype_kind
from ..core.array import Array
from ..core.core import Tracer, concrete_value
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.reduce import reduce_sum
from ._util import as_dtype, ensure_array, normalize_axes, normalize_axis
from .indexing_ops import searchsorted, take
from .reductions import cumsum

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "broadcast_shapes",
    "broadcast_to", "diagonal", "expand_dims", "flip", "fliplr", "flipud", "matrix_transpose",
    "moveaxis", "ndim", "permute_dims", "ravel", "repeat", "reshape", "resize", "roll", "rot90",
    "shape", "size", "squeeze", "swapaxes", "tile", "trace", "transpose",
]

# --------------------------------------------------------------------------- static helpers


def _concrete(x, fname, what):
    """A concrete NumPy value for a static argument (a ConcretizationError if traced)."""
    if isinstance(x, (Tracer, Array)):
        return concrete_value(x, f"zerax.numpy.{fname}'s {what} argument")
    return x


def _concrete_int(x, fname, what):
    x = _concrete(x, fname, what)
    try:
        return operator.index(x)
    except errors.ConcretizationError:
        raise
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be an integer, got {x!r:.60}") from None


def _int_tuple(x, fname, what):
    """An int or a sequence of ints as a tuple of Python ints."""
    x = _concrete(x, fname, what)
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    if isinstance(x, (int, np.integer)):
        return (operator.index(x),)
    try:
        return tuple(_concrete_int(d, fname, what) for d in x)
    except errors.ConcretizationError:
        raise
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {what} must be an integer or a sequence of integers, "
            f"got {x!r:.60}") from None


def _canon_shape(shape, fname):
    """A shape argument (int or sequence) as a tuple of non-negative ints."""
    shape = _int_tuple(shape, fname, "shape")
    if any(d < 0 for d in shape):
        raise errors.ShapeError(f"zerax.numpy.{fname}: negative dimensions are not allowed, "
                                f"got shape {shape}")
    return shape


def _check_dtype(dtype, fname):
    """``np.dtype(dtype)`` for a dtype zerax supports (None stays None), canonicalised
    for the mode (``float`` is the default float; an explicit float64 with x64 off
    becomes float32 with JAX's warning)."""
    if dtype is None:
        return None
    try:
        dt = dtypes.requested(dtype, f"zerax.numpy.{fname}")
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: {dtype!r:.60} is not a valid dtype") from None
    if dtype_kind(dt) not in "biufc":
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: dtype {dt} is not supported (only bool, integer, float and "
            "complex dtypes)")
    return dt


def _no_out(out, fname):
    if out is not None:
        raise errors.NotSupportedError(
            f"zerax.numpy.{fname}: the out= argument is not supported because zerax arrays are "
            "immutable; use the returned array instead.")


def _axis_tuple(axis, ndim, fname, allow_repeats=False):
    """Normalised axes in the order given (not sorted)."""
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(normalize_axis(a, ndim, fname) for a in axis)
    if not allow_repeats and len(set(axes)) != len(axes):
        raise errors.ShapeError(f"zerax.numpy.{fname}: repeated axis in {tuple(axis)}")
    return axes


def _slice_axis(x, axis, start, stop, stride=1):
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    strides = None
    if stride != 1:
        strides = [1] * x.ndim
        strides[axis] = stride
    return sh.slice_p_bind(x, starts, limits, strides)


def _bcast_axis(x, axis, n):
    """Broadcast a size-1 ``axis`` of ``x`` to size ``n``."""
    shape = list(x.shape)
    shape[axis] = n
    return sh.broadcast_in_dim(x, shape, tuple(range(x.ndim)))


def _gather_runs(x, axis, idx):
    """``x`` indexed along ``axis`` by the static integer sequence ``idx``, built from
    slices (runs of consecutive, reversed or repeated indices) and one concatenate."""
    idx = [int(i) for i in idx]
    if not idx:
        return _slice_axis(x, axis, 0, 0)
    pieces, i, n = [], 0, len(idx)
    while i < n:
        step = idx[i + 1] - idx[i] if i + 1 < n else None
        j = i + 1
        if step in (-1, 0, 1):
            while j < n and idx[j] - idx[j - 1] == step:
                j += 1
        length, s = j - i, idx[i]
        if length == 1 or step == 1:
            pieces.append(_slice_axis(x, axis, s, s + length))
        elif step == -1:
            pieces.append(sh.rev(_slice_axis(x, axis, s - length + 1, s + 1), (axis,)))
        else:
            pieces.append(_bcast_axis(_slice_axis(x, axis, s, s + 1), axis, length))
        i = j
    return sh.concatenate(pieces, axis)

# --------------------------------------------------------------------------- queries


def shape(a):
    """The shape of ``a`` as a tuple.

    >>> import zerax.numpy as znp
    >>> znp.shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
    """
    return tuple(ensure_array(a, "shape").shape)


def ndim(a):
    """The number of dimensions of ``a``."""
    return len(shape(a))


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis`` if given)."""
    s = shape(a)
    if axis is None:
        return int(np.prod(s, dtype=np.int64))
    axes = _axis_tuple(axis, len(s), "size")
    return int(np.prod([s[i] for i in axes], dtype=np.int64))

# --------------------------------------------------------------------------- reshape


def _resolve_shape(new, total, old, fname):
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise errors.ShapeError(f"zerax.numpy.{fname}: can only specify one unknown (-1) "
                                f"dimension, got {new}")
    if any(d < -1 for d in new):
        raise errors.ShapeError(f"zerax.numpy.{fname}: negative dimension in {new}")
    known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or total % known:
            raise errors.ShapeError(
                f"zerax.numpy.{fname}: cannot reshape an array of shape {old} (size {total}) "
                f"into shape {new}")
        new = tuple(total // known if d == -1 else d for d in new)
    elif known != total:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: cannot reshape an array of shape {old} (size {total}) into "
            f"shape {new}")
    return tuple(new)


def _check_order(order, fname):
    if order not in ("C", "F", "A", "K", None):
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname}: order must be 'C' or 'F', got {order!r}")


def _reverse_axes(a):
    return sh.transpose(a, tuple(range(a.ndim))[::-1]) if a.ndim > 1 else a


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """``a`` with a new shape (one dimension may be -1), reading and writing the
    elements in row-major (``order='C'``) or column-major (``order='F'``) order.

    >>> import zerax.numpy as znp
    >>> znp.reshape(znp.arange(6), (2, -1))
    Array([[0, 1, 2],
           [3, 4, 5]], dtype=int64)
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise errors.ZeraxTypeError("zerax.numpy.reshape: the shape argument is required")
    _check_order(order, "reshape")
    a = ensure_array(a, "reshape")
    new = _resolve_shape(_int_tuple(shape, "reshape", "shape"), a.size, tuple(a.shape),
                         "reshape")
    if order == "F":
        return _reverse_axes(sh.reshape(_reverse_axes(a), new[::-1]))
    return sh.reshape(a, new)


def ravel(a, order="C"):
    """The elements of ``a`` as a 1-D array in row-major order, or column-major with
    ``order='F'`` ('A' and 'K' mean 'C': zerax arrays have no memory layout)."""
    _check_order(order, "ravel")
    a = ensure_array(a, "ravel")
    if order == "F":
        a = _reverse_axes(a)
    return sh.reshape(a, (a.size,))


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed by default).

    >>> import zerax.numpy as znp
    >>> znp.transpose(znp.ones((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    a = ensure_array(a, "transpose")
    if axes is None:
        return sh.transpose(a, tuple(range(a.ndim))[::-1])
    axes = _int_tuple(axes, "transpose", "axes")
    if len(axes) != a.ndim:
        raise errors.ShapeError(
            f"zerax.numpy.transpose: axes {axes} don't match an array of rank {a.ndim}")
    return sh.transpose(a, _axis_tuple(axes, a.ndim, "transpose"))


permute_dims = transpose


def matrix_transpose(x, /):
    """Swap the last two axes of a stack of matrices."""
    x = ensure_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise errors.ShapeError(
            f"zerax.numpy.matrix_transpose: input must be at least 2-d, got rank {x.ndim}")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged."""
    a = ensure_array(a, "swapaxes")
    i = normalize_axis(axis1, a.ndim, "swapaxes")
    j = normalize_axis(axis2, a.ndim, "swapaxes")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return sh.transpose(a, perm)


def moveaxis(a, source, destination):
    """Move axes of ``a`` from ``source`` to ``destination`` positions."""
    a = ensure_array(a, "moveaxis")
    src = _axis_tuple(_int_tuple(source, "moveaxis", "source"), a.ndim, "moveaxis")
    dst = _axis_tuple(_int_tuple(destination, "moveaxis", "destination"), a.ndim, "moveaxis")
    if len(src) != len(dst):
        raise errors.ShapeError("zerax.numpy.moveaxis: source and destination must have the "
                                "same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(a, order)


def squeeze(a, axis=None):
    """``a`` without its length-1 axes (only those in ``axis`` if given)."""
    a = ensure_array(a, "squeeze")
    if axis is None:
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
    else:
        axes = _axis_tuple(_int_tuple(axis, "squeeze", "axis"), a.ndim, "squeeze")
        for i in axes:
            if a.shape[i] != 1:
                raise errors.ShapeError(
                    f"zerax.numpy.squeeze: cannot select axis {i} of shape {tuple(a.shape)} to "
                    "squeeze out: its size is not one")
    if not axes:
        return a
    return sh.reshape(a, [n for i, n in enumerate(a.shape) if i not in axes])


def expand_dims(a, axis):
    """``a`` with new length-1 axes at positions ``axis`` of the result."""
    a = ensure_array(a, "expand_dims")
    axis = _int_tuple(axis, "expand_dims", "axis")
    out_ndim = a.ndim + len(axis)
    axes = set(_axis_tuple(axis, out_ndim, "expand_dims"))
    it = iter(a.shape)
    return sh.reshape(a, [1 if i in axes else next(it) for i in range(out_ndim)])

# --------------------------------------------------------------------------- tile, repeat


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis.

    >>> import zerax.numpy as znp
    >>> znp.tile(znp.array([1, 2]), 2)
    Array([1, 2, 1, 2], dtype=int64)
    """
    c = ensure_array(A, "tile")
    tup = _int_tuple(reps, "tile", "reps")
    if any(r < 0 for r in tup):
        raise errors.ShapeError(f"zerax.numpy.tile: negative repetitions in {tup}")
    d = len(tup)
    if c.ndim < d:
        c = sh.reshape(c, (1,) * (d - c.ndim) + tuple(c.shape))
    tup = (1,) * (c.ndim - d) + tup
    if all(r == 1 for r in tup):
        return c
    big, dims = [], []
    for i, (r, s) in enumerate(zip(tup, c.shape)):
        big += [r, s]
        dims.append(2 * i + 1)
    b = sh.broadcast_in_dim(c, big, dims)
    return sh.reshape(b, [r * s for r, s in zip(tup, c.shape)])


def _repeat_uniform(x, r, axis):
    shp = list(x.shape)
    big = shp[:axis + 1] + [r] + shp[axis + 1:]
    dims = tuple(i if i <= axis else i + 1 for i in range(x.ndim))
    b = sh.broadcast_in_dim(x, big, dims)
    shp[axis] *= r
    return sh.reshape(b, shp)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element of ``a`` (``repeats``: an int or a static array per element).
    With a static ``total_repeat_length``, as in JAX, ``repeats`` may be traced: the
    result has that length, cut short or padded with the last element.

    >>> import zerax.numpy as znp
    >>> znp.repeat(znp.array([1, 2]), [1, 3])
    Array([1, 2, 2, 2], dtype=int64)
    """
    a = ensure_array(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    else:
        axis = normalize_axis(axis, a.ndim, "repeat")
    if total_repeat_length is not None:
        return _repeat_total(a, repeats, axis, total_repeat_length)
    r = np.asarray(_concrete(repeats, "repeat", "repeats"))
    if r.size == 0:
        r = r.astype(np.int64)
    if r.dtype.kind not in "biu":
        raise errors.ZeraxTypeError(f"zerax.numpy.repeat: repeats must be integers, got "
                                    f"dtype {r.dtype}")
    if np.any(r < 0):
        raise errors.ShapeError("zerax.numpy.repeat: repeats may not contain negative values")
    n = a.shape[axis]
    if r.ndim == 0 or r.size == 1:
        return _repeat_uniform(a, int(r.reshape(-1)[0]), axis)
    if r.ndim != 1 or r.size != n:
        raise errors.ShapeError(
            f"zerax.numpy.repeat: repeats of shape {r.shape} do not fit axis {axis} of size {n}")
    pieces, i = [], 0
    while i < n:
        j = i + 1
        while j < n and r[j] == r[i]:
            j += 1
        if r[i]:
            pieces.append(_repeat_uniform(_slice_axis(a, axis, i, j), int(r[i]), axis))
        i = j
    if not pieces:
        return _slice_axis(a, axis, 0, 0)
    return sh.concatenate(pieces, axis)


def _repeat_total(a, repeats, axis, total):
    """JAX's ``repeat(..., total_repeat_length=total)``: output position ``i`` takes the
    element whose cumulative repeat count first exceeds ``i`` (the last one past the end)."""
    total = _concrete_int(total, "repeat", "total_repeat_length")
    if total < 0:
        raise errors.ShapeError("zerax.numpy.repeat: total_repeat_length must be "
                                f"non-negative, got {total}")
    n = a.shape[axis]
    r = ensure_array(repeats, "repeat")
    if np.dtype(r.dtype).kind not in "biu":
        raise errors.ZeraxTypeError(f"zerax.numpy.repeat: repeats must be integers, got "
                                    f"dtype {r.dtype}")
    if r.ndim > 1 or (r.ndim == 1 and r.shape[0] not in (1, n)):
        raise errors.ShapeError(
            f"zerax.numpy.repeat: repeats of shape {tuple(r.shape)} do not fit axis {axis} "
            f"of size {n}")
    if not isinstance(r, Tracer) and np.any(np.asarray(r) < 0):
        raise errors.ShapeError("zerax.numpy.repeat: repeats may not contain negative values")
    if total == 0:
        return _slice_axis(a, axis, 0, 0)
    if n == 0:
        raise errors.ShapeError("zerax.numpy.repeat: cannot repeat an empty axis to "
                                f"total_repeat_length={total}")
    r = sh.broadcast_in_dim(as_dtype(sh.reshape(r, (r.size,)) if r.ndim else r, np.int64),
                            (n,), (0,) if r.ndim else ())
    ends = cumsum(r)
    idx = searchsorted(ends, np.arange(total, dtype=np.int64), side="right")
    idx = ew.minimum(idx, np.asarray(n - 1, np.int64))
    return take(a, idx, axis=axis)


def resize(a, new_shape):
    """``a`` resized to ``new_shape``, repeating its elements cyclically."""
    a = ensure_array(a, "resize")
    new_shape = _canon_shape(new_shape, "resize")
    total = int(np.prod(new_shape, dtype=np.int64))
    if a.size == 0 or total == 0:
        return Array._wrap(np.zeros(new_shape, a.dtype))
    flat = ravel(a)
    reps = -(-total // a.size)
    flat = _slice_axis(tile(flat, reps), 0, 0, total)
    return sh.reshape(flat, new_shape)

# --------------------------------------------------------------------------- flips, rolls


def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    m = ensure_array(m, "flip")
    axes = normalize_axes(axis, m.ndim, "flip")
    return sh.rev(m, axes)


def fliplr(m):
    """Reverse the order of columns (axis 1)."""
    m = ensure_array(m, "fliplr")
    if m.ndim < 2:
        raise errors.ShapeError("zerax.numpy.fliplr: input must be >= 2-d")
    return sh.rev(m, (1,))


def flipud(m):
    """Reverse the order of rows (axis 0)."""
    m = ensure_array(m, "flipud")
    if m.ndim < 1:
        raise errors.ShapeError("zerax.numpy.flipud: input must be >= 1-d")
    return sh.rev(m, (0,))


def _roll_axis(x, s, axis):
    n = x.shape[axis]
    if n == 0:
        return x
    if not isinstance(s, Tracer):
        s = int(s) % n
        if s == 0:
            return x
        return sh.concatenate([_slice_axis(x, axis, n - s, n), _slice_axis(x, axis, 0, n - s)],
                              axis)
    # A traced shift: slice a window out of two copies.
    s = ew.convert_element_type(s, np.int64)
    start = ew.rem(ew.neg(s), np.asarray(n, np.int64))
    doubled = sh.concatenate([x, x], axis)
    starts = [np.zeros((), np.int64)] * x.ndim
    starts[axis] = start
    return sh.dynamic_slice(doubled, starts, x.shape)


def roll(a, shift, axis=None):
    """Shift elements along ``axis`` cyclically (the flattened array if ``axis`` is None).

    >>> import zerax.numpy as znp
    >>> znp.roll(znp.arange(5), 2)
    Array([3, 4, 0, 1, 2], dtype=int64)
    """
    a = ensure_array(a, "roll")
    if axis is None:
        return sh.reshape(roll(ravel(a), shift, 0), a.shape)
    axes = _int_tuple(axis, "roll", "axis")
    if isinstance(shift, (list, tuple)):
        shifts = list(shift)
    elif isinstance(shift, Tracer):
        shifts = [shift] if shift.ndim == 0 else [
            sh.reshape(_slice_axis(shift, 0, i, i + 1), tuple(shift.shape[1:]))
            for i in range(shift.shape[0])]
    else:
        shifts = list(np.atleast_1d(np.asarray(_concrete(shift, "roll", "shift"))).ravel())
    for i, s in enumerate(shifts):
        if isinstance(s, Tracer):
            if np.dtype(s.dtype).kind not in "biu" or s.ndim != 0:
                raise errors.ZeraxTypeError("zerax.numpy.roll: shift must be integers")
        else:
            shifts[i] = _concrete_int(s, "roll", "shift")
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise errors.ShapeError("zerax.numpy.roll: shift and axis must have the same length")
    k = max(len(shifts), len(axes))
    shifts = shifts * k if len(shifts) == 1 else shifts
    axes = axes * k if len(axes) == 1 else axes
    per_axis = {}
    for s, ax in zip(shifts, axes):
        per_axis.setdefault(normalize_axis(ax, a.ndim, "roll"), []).append(s)
    for ax, ss in per_axis.items():
        if any(isinstance(s, Tracer) for s in ss):
            total = None
            for s in ss:
                s = (ew.convert_element_type(s, np.int64) if isinstance(s, Tracer)
                     else np.asarray(s, np.int64))
                total = s if total is None else ew.add(total, s)
        else:
            total = sum(ss)
        a = _roll_axis(a, total, ax)
    return a


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    m = ensure_array(m, "rot90")
    axes = _int_tuple(axes, "rot90", "axes")
    if len(axes) != 2:
        raise errors.ShapeError("zerax.numpy.rot90: len(axes) must be 2")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise errors.ShapeError("zerax.numpy.rot90: axes must be different")
    a0 = normalize_axis(axes[0], m.ndim, "rot90")
    a1 = normalize_axis(axes[1], m.ndim, "rot90")
    k = _concrete_int(k, "rot90", "k") % 4
    if k == 0:
        return m
    if k == 2:
        return sh.rev(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return sh.transpose(sh.rev(m, (a1,)), perm)
    return sh.rev(sh.transpose(m, perm), (a1,))

# --------------------------------------------------------------------------- broadcasting


def broadcast_shapes(*args):
    """The shape that arrays of shapes ``args`` broadcast to."""
    shapes = [_int_tuple(s, "broadcast_shapes", "shape") for s in args]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise errors.ShapeError(
            "zerax.numpy.broadcast_shapes: shape mismatch: objects cannot be broadcast to a "
            f"single shape; got {', '.join(str(s) for s in shapes)}") from None


def broadcast_to(array, shape, subok=False):
    """``array`` broadcast to ``shape`` (NumPy's rules).

    >>> import zerax.numpy as znp
    >>> znp.broadcast_to(znp.arange(3), (2, 3))
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int64)
    """
    x = ensure_array(array, "broadcast_to")
    shape = _canon_shape(shape, "broadcast_to")
    nlead = len(shape) - x.ndim
    if nlead < 0 or any(n not in (1, shape[nlead + i]) for i, n in enumerate(x.shape)):
        raise errors.ShapeError(
            f"zerax.numpy.broadcast_to: cannot broadcast an array of shape {tuple(x.shape)} to "
            f"shape {shape}")
    return sh.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast against each other (a tuple)."""
    xs = [ensure_array(a, "broadcast_arrays") for a in args]
    target = broadcast_shapes(*[x.shape for x in xs])
    return tuple(broadcast_to(x, target) for x in xs)


def _atleast(x, n, fname):
    x = ensure_array(x, fname)
    if x.ndim >= n:
        return x
    s = tuple(x.shape)
    if n == 1:
        return sh.reshape(x, (1,))
    if n == 2:
        return sh.reshape(x, (1,) * (2 - len(s)) + s)
    return sh.reshape(x, {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)])


def _atleast_n(arys, n, fname):
    res = [_atleast(a, n, fname) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    """Inputs viewed as arrays with at least one dimension."""
    return _atleast_n(arys, 1, "atleast_1d")


def atleast_2d(*arys):
    """Inputs viewed as arrays with at least two dimensions."""
    return _atleast_n(arys, 2, "atleast_2d")


def atleast_3d(*arys):
    """Inputs viewed as arrays with at least three dimensions ((n,) becomes (1, n, 1))."""
    return _atleast_n(arys, 3, "atleast_3d")

# --------------------------------------------------------------------------- diagonals


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of ``a`` in the plane (axis1, axis2), as the last axis of the result.

    >>> import zerax.numpy as znp
    >>> znp.diagonal(znp.arange(9).reshape(3, 3), 1)
    Array([1, 5], dtype=int64)
    """
    a = ensure_array(a, "diagonal")
    if a.ndim < 2:
        raise errors.ShapeError("zerax.numpy.diagonal: input must be at least 2-d")
    i = normalize_axis(axis1, a.ndim, "diagonal")
    j = normalize_axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise errors.ShapeError("zerax.numpy.diagonal: axis1 and axis2 cannot be the same")
    offset = _concrete_int(offset, "diagonal", "offset")
    x = sh.transpose(a, [d for d in range(a.ndim) if d not in (i, j)] + [i, j])
    n, m = x.shape[-2], x.shape[-1]
    length = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    r0, c0 = max(-offset, 0), max(offset, 0)
    lead = tuple(x.shape[:-2])
    starts = [0] * x.ndim
    limits = list(lead) + [r0 + length, c0 + length]
    starts[-2], starts[-1] = (r0, c0) if length else (0, 0)
    if not length:
        limits[-2] = limits[-1] = 0
    sq = sh.slice_p_bind(x, starts, limits)
    flat = sh.reshape(sq, lead + (length * length,))
    if length <= 1:
        return sh.reshape(flat, lead + (length,))
    return _slice_axis(flat, len(lead), 0, length * length, length + 1)


@functools.lru_cache(maxsize=256)
def _trace_dtype(in_dtype, dtype):
    return np.trace(np.ones((1, 1), in_dtype), dtype=dtype).dtype


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along a diagonal of ``a`` (NumPy's accumulation dtype: ints widen).

    >>> import zerax.numpy as znp
    >>> znp.trace(znp.eye(3))
    Array(3., dtype=float64)
    """
    _no_out(out, "trace")
    a = ensure_array(a, "trace")
    d = diagonal(a, offset, axis1, axis2)
    dt = dtypes.canonicalize(_trace_dtype(np.dtype(a.dtype), _check_dtype(dtype, "trace")))
    return reduce_sum(as_dtype(d, dt), (d.ndim - 1,))
