"""`zerax.numpy` set functions: ``unique`` (and the array-API ``unique_values``,
``unique_counts``, ``unique_inverse``, ``unique_all``), ``isin``, ``intersect1d``,
``union1d``, ``setdiff1d``, ``setxor1d``.

Their output shapes depend on the values, so (except ``isin``, a sort and a binary search
that works under tracing) they need concrete inputs and raise `ConcretizationError`
under tracing, like JAX without ``size=``.  The ``unique_*`` functions take JAX's
``size=`` (and ``fill_value=``): then the output has a static length and they work
under tracing (a stable sort, a cumulative sum and scatters).  Values are gathers of
the inputs, so derivatives flow through them.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from ..ops import indexing as _ix
from ..ops import sort as _sort
from ... import errors
from ..base import dtypes
from ..ops.elementwise import add, clamp, convert_element_type, eq, lt
from ..ops.shape import concatenate
from ._util import as_dtype, ensure_array, normalize_axis
from .indexing_ops import _idt, _as_zx, _axis_entries, _concrete, _ravel, _wrap, searchsorted
from ..ops.elementwise import bitwise_and, bitwise_not, isnan, ne, select_n, sub
from ..ops.shape import broadcast_in_dim, iota, reshape
from .indexing_ops import argsort, nonzero
from .reductions import sum as _sum
from ..ops.index_update import scatter
from ..ops.reduce import cumsum
from .ufuncs import logical_not
from ..base.dtypes import kind as dtype_kind

__all__ = ["unique", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d",
           "unique_all", "unique_counts", "unique_inverse", "unique_values"]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True, size=None, fill_value=None):
    """The sorted unique elements, with NumPy's optional extras. Without ``size`` the
    input must be concrete; with ``size`` (JAX's keyword, flattened input only) the
    result has ``size`` entries, padded with ``fill_value`` (default: the smallest
    value), and it works under every transform.

    >>> import zerax.numpy as znp
    >>> znp.unique([3, 1, 3, 2])
    Array([1, 2, 3], dtype=int64)
    >>> znp.unique([3, 1, 3, 2], size=4, fill_value=0)
    Array([1, 2, 3, 0], dtype=int64)
    """
    ar = ensure_array(ar, "unique")
    if size is not None:
        if axis is not None:
            raise errors.NotSupportedError(
                "zerax.numpy.unique: size= works on the flattened input only (axis=None).")
        values, first, inverse, counts = _unique_sized(ar, _ravel(ar), int(size),
                                                       fill_value, "unique", equal_nan)
        extras = [e for e, wanted in ((first, return_index), (inverse, return_inverse),
                                      (counts, return_counts)) if wanted]
        return (values, *extras) if extras else values
    v = np.asarray(_concrete(ar, "unique"))
    if axis is not None:
        axis = normalize_axis(axis, ar.ndim, "unique")
    res = np.unique(v, return_index=True, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    first = res[1].astype(_idt())
    if axis is None:
        values = _ix.gather(_ravel(ar), [first], [("a", 0)])
    else:
        values = _ix.gather(ar, [first], _axis_entries(ar.ndim, axis, ar.shape))
    out = [values]
    if return_index:
        out.append(_wrap(first))
    if return_inverse:
        out.append(_wrap(res[2].astype(_idt())))
    if return_counts:
        out.append(_wrap(res[-1].astype(_idt())))
    return out[0] if len(out) == 1 else tuple(out)


def _common(ar1, ar2, fname):
    a1, a2 = ensure_array(ar1, fname), ensure_array(ar2, fname)
    dtype = dtypes.result_type(np.dtype(a1.dtype), np.dtype(a2.dtype))
    return as_dtype(a1, dtype), as_dtype(a2, dtype)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element is in ``test_elements`` (works under tracing: a sort and a
    binary search).

    >>> import zerax.numpy as znp
    >>> znp.isin([1, 2, 3], [3, 1])
    Array([ True, False,  True], dtype=bool)
    """
    e, t = _common(element, test_elements, "isin")
    t = _sort.sort(_ravel(t), 0)
    n = t.shape[0]
    if n == 0:
        found = _wrap(np.zeros(e.shape, bool))
    else:
        pos = clamp(np.zeros((), _idt()), searchsorted(t, e, "left"), np.array(n - 1, _idt()))
        found = eq(_ix.gather(t, [pos], [("a", 0)]), e)
    if invert:
        return logical_not(found)
    return found


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values in both arrays (concrete inputs)."""
    a1, a2 = ensure_array(ar1, "intersect1d"), ensure_array(ar2, "intersect1d")
    v1 = np.asarray(_concrete(a1, "intersect1d"))
    v2 = np.asarray(_concrete(a2, "intersect1d"))
    vals, i1, i2 = np.intersect1d(v1, v2, assume_unique=assume_unique, return_indices=True)
    out = convert_element_type(_ix.gather(_ravel(a1), [i1.astype(_idt())], [("a", 0)]),
                               vals.dtype)
    if return_indices:
        return out, _wrap(i1.astype(_idt())), _wrap(i2.astype(_idt()))
    return out


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted values in either array (concrete inputs; with JAX's static ``size``,
    any inputs: ``size`` entries padded with ``fill_value``, as `unique`)."""
    if size is not None:
        a1, a2 = ensure_array(ar1, "union1d"), ensure_array(ar2, "union1d")
        dt = dtypes.result_type(np.dtype(a1.dtype), np.dtype(a2.dtype))
        both = concatenate([_ravel(as_dtype(a1, dt)), _ravel(as_dtype(a2, dt))], 0)
        return unique(both, size=_size(size, "union1d"), fill_value=fill_value)
    a1, a2 = _common(ar1, ar2, "union1d")
    return unique(concatenate([_ravel(_as_zx(a1)), _ravel(_as_zx(a2))], 0))


def _size(size, fname):
    size = operator.index(_concrete(size, fname))
    if size < 0:
        raise errors.ShapeError(f"zerax.numpy.{fname}: size must be non-negative, got {size}")
    return size


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The values of ``ar1`` not in ``ar2`` (sorted unique unless ``assume_unique``).
    With JAX's static ``size`` the inputs may be traced: the result has ``size``
    entries, padded with ``fill_value`` (default 0, as JAX)."""
    a1 = ensure_array(ar1, "setdiff1d")
    if size is not None:
        return _setdiff1d_sized(a1, ensure_array(ar2, "setdiff1d"), assume_unique,
                                _size(size, "setdiff1d"), fill_value)
    a1 = _ravel(a1) if assume_unique else unique(a1)
    v2 = np.asarray(_concrete(ensure_array(ar2, "setdiff1d"), "setdiff1d"))
    keep = ~np.isin(np.asarray(_concrete(a1, "setdiff1d")), v2)
    return _ix.getitem(a1, keep)


def _setdiff1d_sized(a1, a2, assume_unique, size, fill_value):
    """JAX's sized setdiff1d: unique padded to len(a1), the mask of values not in a2
    (padding excluded), compacted into ``size`` slots by ``nonzero(size=)``."""
    dt = np.dtype(a1.dtype)
    fill = as_dtype(ensure_array(0 if fill_value is None else fill_value, "setdiff1d"), dt)
    if fill.ndim:
        raise errors.ShapeError("zerax.numpy.setdiff1d: fill_value must be a scalar")
    a1 = _ravel(a1)
    n = a1.shape[0]
    if n == 0:
        return broadcast_in_dim(fill, (size,), ())
    if not assume_unique:
        a1 = unique(a1, size=n)
    mask = isin(a1, _ravel(a2), invert=True)
    if not assume_unique:
        # the padding of unique() repeats its first value: keep only the real entries
        n_unique = add(np.array(n + 1, _idt()),
                       -_sum(convert_element_type(eq(a1, _ix.getitem(a1, 0)), _idt())))
        mask = bitwise_and(mask, lt(iota(_idt(), (n,), 0), n_unique))
    idx = nonzero(mask, size=size, fill_value=0)[0]
    taken = _ix.gather(a1, [convert_element_type(idx, _idt())], [("a", 0)])
    count = _sum(convert_element_type(mask, _idt()))
    return select_n(lt(iota(_idt(), (size,), 0), count), broadcast_in_dim(fill, (size,), ()),
                    taken)


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of the arrays (concrete inputs)."""
    a1, a2 = _common(ar1, ar2, "setxor1d")
    a1, a2 = _as_zx(a1), _as_zx(a2)
    if not assume_unique:
        a1, a2 = unique(a1), unique(a2)
    aux = concatenate([_ravel(a1), _ravel(a2)], 0)
    if aux.shape[0] == 0:
        return aux
    aux = _sort.sort(aux, 0)
    v = np.asarray(_concrete(aux, "setxor1d"))
    flag = np.concatenate(([True], v[1:] != v[:-1], [True]))
    return _ix.getitem(aux, flag[1:] & flag[:-1])


# --------------------------------------------------------------------------- array API


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _unique_parts(x, fname, size, fill_value):
    """(values, first indices, inverse indices shaped like x, counts); NaNs are
    distinct (``equal_nan=False``, as NumPy's and JAX's array-API functions)."""
    x = ensure_array(x, fname)
    flat = _ravel(x)
    if size is None:
        v = np.asarray(_concrete(x, fname)).ravel()
        _, first, inv, counts = np.unique(v, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False)
        first = first.astype(_idt())
        values = _ix.gather(flat, [first], [("a", 0)])
        inverse = _wrap(inv.astype(_idt()).reshape(tuple(x.shape)))
        return values, _wrap(first), inverse, _wrap(counts.astype(_idt()))
    return _unique_sized(x, flat, int(size), fill_value, fname)


def _unique_sized(x, flat, size, fill_value, fname, equal_nan=False):
    """The traced path: a stable sort, run starts, their ranks by a cumulative sum, and
    scatters into ``size`` slots (extra unique values are dropped)."""
    n = flat.shape[0]
    if size < 0:
        raise errors.ShapeError(f"zerax.numpy.{fname}: size must be non-negative, got {size}")
    dt = np.dtype(flat.dtype)
    if n == 0:
        fill = _wrap(np.zeros((), dt)) if fill_value is None else \
            as_dtype(ensure_array(fill_value, fname), dt)
        return (_bcast(fill, size), _wrap(np.zeros(size, _idt())),
                _wrap(np.zeros(tuple(x.shape), _idt())), _wrap(np.zeros(size, _idt())))
    perm = convert_element_type(argsort(flat, stable=True), _idt())
    s = _ix.gather(flat, [perm], [("a", 0)])
    later, earlier = _ix.getitem(s, slice(1, None)), _ix.getitem(s, slice(None, -1))
    differs = ne(later, earlier)
    if equal_nan and dtype_kind(dt) in "fc":   # sorted NaNs are adjacent: one run
        differs = bitwise_and(differs, bitwise_not(bitwise_and(isnan(later), isnan(earlier))))
    new = concatenate([_wrap(np.ones(1, bool)), differs], 0)
    rank = sub(cumsum(convert_element_type(new, _idt()), 0), np.ones((), _idt()))
    out_of_range = np.array(size, _idt())
    slot = select_n(new, out_of_range, rank)              # run starts only
    first = scatter(_bcast(_ix.getitem(perm, 0), size), perm, [slot], [("a", 0)], "set",
                    "drop")
    counts = scatter(_wrap(np.zeros(size, _idt())), _wrap(np.ones(n, _idt())), [rank],
                     [("a", 0)], "add", "drop")
    inverse = reshape(scatter(_wrap(np.zeros(n, _idt())), rank, [perm], [("a", 0)], "set",
                              "drop"), tuple(x.shape))
    n_unique = add(_ix.getitem(rank, -1), np.ones((), _idt()))
    valid = lt(iota(_idt(), (size,), 0), n_unique)
    fill = _ix.getitem(s, 0) if fill_value is None else as_dtype(ensure_array(fill_value,
                                                                              fname), dt)
    values = select_n(valid, _bcast(fill, size), _ix.gather(flat, [first], [("a", 0)]))
    return values, first, inverse, counts


def _bcast(v, size):
    return broadcast_in_dim(v, (size,), ())


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of ``x`` (flattened; NaNs are distinct).  With ``size``
    the output has ``size`` entries (padded with ``fill_value``, by default the smallest
    value) and works under tracing.

    >>> import zerax.numpy as znp
    >>> znp.unique_values([3, 1, 3, 2])
    Array([1, 2, 3], dtype=int64)
    >>> znp.unique_values([3, 1, 3], size=4, fill_value=0)
    Array([1, 3, 0, 0], dtype=int64)
    """
    return _unique_parts(x, "unique_values", size, fill_value)[0]


def unique_counts(x, /, *, size=None, fill_value=None):
    """``(values, counts)`` of the unique values of ``x`` (padded counts are 0).

    >>> import zerax.numpy as znp
    >>> znp.unique_counts([3, 1, 3])
    UniqueCountsResult(values=Array([1, 3], dtype=int64), counts=Array([1, 2], dtype=int64))
    """
    values, _, _, counts = _unique_parts(x, "unique_counts", size, fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """``(values, inverse_indices)``: ``values[inverse_indices]`` rebuilds ``x`` (the
    inverse has ``x``'s shape).

    >>> import zerax.numpy as znp
    >>> znp.unique_inverse([3, 1, 3])
    UniqueInverseResult(values=Array([1, 3], dtype=int64), inverse_indices=Array([1, 0, 1], dtype=int64))
    """
    values, _, inverse, _ = _unique_parts(x, "unique_inverse", size, fill_value)
    return UniqueInverseResult(values, inverse)


def unique_all(x, /, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)``: the unique values, the flat
    index of each one's first occurrence, the inverse (shaped like ``x``) and counts.

    >>> import zerax.numpy as znp
    >>> r = znp.unique_all([3, 4, 1, 3, 1])
    >>> r.values, r.indices, r.counts
    (Array([1, 3, 4], dtype=int64), Array([2, 0, 1], dtype=int64), Array([2, 2, 1], dtype=int64))
    """
    return UniqueAllResult(*_unique_parts(x, "unique_all", size, fill_value))
