"""`zerax.numpy` set functions: ``unique``, ``isin``, ``intersect1d``, ``union1d``,
``setdiff1d``, ``setxor1d``.

Their output shapes depend on the values, so (except ``isin``, a sort and a binary search
that works under tracing) they need concrete inputs and raise `ConcretizationError`
under tracing, like JAX without ``size=``.  Their values are still gathers of the inputs,
so derivatives flow through them.
"""

from __future__ import annotations

import numpy as np

from ..ops import indexing as _ix
from ..ops import sort as _sort
from ..ops.elementwise import clamp, convert_element_type, eq
from ..ops.shape import concatenate
from ._util import as_dtype, ensure_array, normalize_axis
from .indexing_ops import _I64, _as_zx, _axis_entries, _concrete, _ravel, _wrap, searchsorted

__all__ = ["unique", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d"]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """The sorted unique elements (concrete input), with NumPy's optional extras.

    >>> import zerax.numpy as znp
    >>> znp.unique([3, 1, 3, 2])
    Array([1, 2, 3], dtype=int64)
    """
    ar = ensure_array(ar, "unique")
    v = np.asarray(_concrete(ar, "unique"))
    if axis is not None:
        axis = normalize_axis(axis, ar.ndim, "unique")
    res = np.unique(v, return_index=True, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    first = res[1].astype(_I64)
    if axis is None:
        values = _ix.gather(_ravel(ar), [first], [("a", 0)])
    else:
        values = _ix.gather(ar, [first], _axis_entries(ar.ndim, axis, ar.shape))
    out = [values]
    if return_index:
        out.append(_wrap(first))
    if return_inverse:
        out.append(_wrap(res[2].astype(_I64)))
    if return_counts:
        out.append(_wrap(res[-1].astype(_I64)))
    return out[0] if len(out) == 1 else tuple(out)


def _common(ar1, ar2, fname):
    a1, a2 = ensure_array(ar1, fname), ensure_array(ar2, fname)
    dtype = np.result_type(np.dtype(a1.dtype), np.dtype(a2.dtype))
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
        pos = clamp(np.zeros((), _I64), searchsorted(t, e, "left"), np.array(n - 1, _I64))
        found = eq(_ix.gather(t, [pos], [("a", 0)]), e)
    if invert:
        from .ufuncs import logical_not
        return logical_not(found)
    return found


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values in both arrays (concrete inputs)."""
    a1, a2 = ensure_array(ar1, "intersect1d"), ensure_array(ar2, "intersect1d")
    v1 = np.asarray(_concrete(a1, "intersect1d"))
    v2 = np.asarray(_concrete(a2, "intersect1d"))
    vals, i1, i2 = np.intersect1d(v1, v2, assume_unique=assume_unique, return_indices=True)
    out = convert_element_type(_ix.gather(_ravel(a1), [i1.astype(_I64)], [("a", 0)]),
                               vals.dtype)
    if return_indices:
        return out, _wrap(i1.astype(_I64)), _wrap(i2.astype(_I64))
    return out


def union1d(ar1, ar2):
    """The sorted values in either array (concrete inputs)."""
    a1, a2 = _common(ar1, ar2, "union1d")
    return unique(concatenate([_ravel(_as_zx(a1)), _ravel(_as_zx(a2))], 0))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The values of ``ar1`` not in ``ar2`` (sorted unique unless ``assume_unique``)."""
    a1 = ensure_array(ar1, "setdiff1d")
    a1 = _ravel(a1) if assume_unique else unique(a1)
    v2 = np.asarray(_concrete(ensure_array(ar2, "setdiff1d"), "setdiff1d"))
    keep = ~np.isin(np.asarray(_concrete(a1, "setdiff1d")), v2)
    return _ix.getitem(a1, keep)


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
