"""`zerax.numpy` multi-dimensional histograms: ``histogram_bin_edges``, ``histogramdd``
and ``histogram2d`` (``histogram`` itself is in `indexing_ops`).

Bin indices come from ``searchsorted`` and the counts from one scatter-add, so the
functions work under tracing when the bins are given as counts or edges (the edges of
equal bins depend on the data's range, which is fine: only their number is static);
derivatives flow to ``weights``.  Counts are float64, as NumPy's ``histogramdd`` gives
(float32 with x64 off).
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.core import concrete_value, is_concrete
from ..ops import index_update as _upd
from ..ops import indexing as _ix
from ..ops.elementwise import (add, bitwise_and, convert_element_type, eq, ge, le, mul, select_n, sub)
from ..ops.reduce import reduce_max, reduce_min, reduce_sum
from ..ops.shape import reshape
from ._util import as_dtype, ensure_array
from .indexing_ops import _idt, _linspace_edges, _wrap, histogram, searchsorted
from .joining import stack
from .ufuncs import true_divide
from ..base.dtypes import kind as dtype_kind

__all__ = ["histogram2d", "histogram_bin_edges", "histogramdd"]



def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """The bin edges ``histogram`` would use (``numpy.histogram_bin_edges``).

    >>> import zerax.numpy as znp
    >>> znp.histogram_bin_edges([0.0, 1.0, 4.0], bins=4)
    Array([0., 1., 2., 3., 4.], dtype=float64)
    """
    return histogram(a, bins=bins, range=range, weights=weights)[1]


def _equal_edges(col, nbins, rng, fname):
    """NumPy's ``histogramdd`` edges for ``nbins`` equal bins of one sample column."""
    adt = np.dtype(col.dtype)
    if rng is not None:
        lo, hi = rng
        if lo > hi:
            raise errors.ShapeError(f"zerax.numpy.{fname}: max must be larger than min in "
                                    "range parameter.")
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise errors.ShapeError(f"zerax.numpy.{fname}: supplied range of [{lo}, {hi}] is "
                                    "not finite")
        dt = dtypes.result_type(lo, hi, 1.0)
    elif col.shape[0] == 0:
        lo, hi, dt = 0, 1, dtypes.default_float()
    else:
        lo, hi = reduce_min(col, (0,)), reduce_max(col, (0,))
        if is_concrete(lo) and not np.isfinite(np.asarray(concrete_value(lo))
                                               + np.asarray(concrete_value(hi))):
            raise errors.ShapeError(f"zerax.numpy.{fname}: the autodetected range of the data "
                                    "is not finite; pass range=")
        dt = dtypes.result_type(adt, 1.0)
    if dtype_kind(dt) not in "f":
        dt = dtypes.default_float()
    lo, hi = as_dtype(lo, dt), as_dtype(hi, dt)
    same = eq(lo, hi)
    half = np.array(0.5, dt)
    lo = select_n(same, lo, sub(lo, half))
    hi = select_n(same, hi, add(hi, half))
    return _linspace_edges(lo, hi, nbins + 1, dt)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of the ``(N, D)`` points of ``sample`` in a D-dimensional grid of bins,
    and the D arrays of edges (``numpy.histogramdd``; ``weights`` comes before
    ``density``, as in JAX).  ``bins`` is a count, or one
    count or array of edges per dimension; the last bin of each dimension includes its
    right edge.

    >>> import zerax.numpy as znp
    >>> h, edges = znp.histogramdd([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]], bins=2)
    >>> h
    Array([[1., 0.],
           [1., 1.]], dtype=float64)
    """
    fname = "histogramdd"
    s = ensure_array(sample, fname)
    if s.ndim < 2:
        s = reshape(s, (-1, 1) if s.ndim else (1, 1))
    if s.ndim != 2:
        raise errors.ShapeError(f"zerax.numpy.{fname}: sample must be (N, D) (or 1-d), got "
                                f"shape {tuple(s.shape)}")
    if np.dtype(s.dtype).kind == "c":
        raise errors.NotSupportedError(f"zerax.numpy.{fname}: complex samples are not "
                                       "supported")
    n, d = s.shape
    if isinstance(bins, (int, np.integer)):
        bins = [operator.index(bins)] * d
    else:
        bins = list(bins)
        if len(bins) != d:
            raise errors.ShapeError(f"zerax.numpy.{fname}: the dimension of bins must be "
                                    "equal to the dimension of the sample x.")
    rng = [None] * d if range is None else list(range)
    if len(rng) != d:
        raise errors.ShapeError(f"zerax.numpy.{fname}: range needs one (min, max) pair or "
                                "None per dimension")
    edges, nb, flat, inside = [], [], None, None
    for i in builtins.range(d):
        col = _ix.getitem(s, (slice(None), i))
        b = bins[i]
        if isinstance(b, (int, np.integer)):
            b = operator.index(b)
            if b < 1:
                raise errors.ShapeError(f"zerax.numpy.{fname}: `bins[{i}]` must be positive, "
                                        "when an integer")
            e = _equal_edges(col, b, rng[i], fname)
        else:
            e = ensure_array(b, fname)
            if e.ndim != 1:
                raise errors.ShapeError(f"zerax.numpy.{fname}: `bins[{i}]` must be a scalar "
                                        "or 1d array")
            if is_concrete(e) and np.any(np.diff(np.asarray(concrete_value(e))) < 0):
                raise errors.ShapeError(f"zerax.numpy.{fname}: `bins[{i}]` must be "
                                        "monotonically increasing, when an array")
        k = e.shape[0] - 1
        ct = dtypes.result_type(np.dtype(e.dtype), np.dtype(col.dtype))
        ac, ec = as_dtype(col, ct), as_dtype(e, ct)
        last = _ix.getitem(ec, -1)
        idx = sub(searchsorted(ec, ac, "right"), np.ones((), _idt()))
        idx = select_n(eq(ac, last), idx, np.array(k - 1, _idt()))
        ok = bitwise_and(ge(ac, _ix.getitem(ec, 0)), le(ac, last))
        flat = idx if flat is None else add(mul(flat, np.array(k, _idt())), idx)
        inside = ok if inside is None else bitwise_and(inside, ok)
        edges.append(e)
        nb.append(k)
    total = int(np.prod(nb, dtype=np.int64))
    flat = select_n(inside, np.array(total, _idt()), flat)       # outside: dropped
    if weights is None:
        w = _wrap(np.ones((n,), dtypes.default_float()))
    else:
        w = ensure_array(weights, fname)
        if tuple(w.shape) != (n,):
            raise errors.ShapeError(f"zerax.numpy.{fname}: weights must have shape ({n},), "
                                    f"got {tuple(w.shape)}")
        w = as_dtype(w, dtypes.default_float())
    hist = _upd.scatter(np.zeros((total,), dtypes.default_float()), w, [flat], [("a", 0)],
                        "add", "drop")
    hist = reshape(hist, tuple(nb))
    if density:
        total_count = reduce_sum(hist, tuple(builtins.range(d)))
        for i, e in enumerate(edges):
            de = sub(_ix.getitem(e, slice(1, None)), _ix.getitem(e, slice(None, -1)))
            shape = [1] * d
            shape[i] = nb[i]
            hist = true_divide(hist, reshape(convert_element_type(de, dtypes.result_type(
                np.dtype(de.dtype), dtypes.default_float())), tuple(shape)))
        hist = true_divide(hist, total_count)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The 2-d histogram of the points ``(x[i], y[i])`` and the x and y edges
    (``numpy.histogram2d``; ``weights`` comes before ``density``, as in JAX).

    >>> import zerax.numpy as znp
    >>> h, xe, ye = znp.histogram2d([0.0, 1.0, 1.0], [0.0, 1.0, 0.0], bins=2)
    >>> h
    Array([[1., 0.],
           [1., 1.]], dtype=float64)
    """
    try:
        nbins = len(bins)
    except TypeError:
        nbins = 1
    if nbins not in (1, 2):
        bins = [bins, bins]
    pts = stack([ensure_array(x, "histogram2d"), ensure_array(y, "histogram2d")], axis=1)
    hist, edges = histogramdd(pts, bins, range, weights, density)
    return hist, edges[0], edges[1]
