"""Statistics functions of ``zerax.scipy.stats`` beside the distributions (JAX's
``mode``, ``rankdata`` and ``sem``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ....interpreters.batching import vmap
from .... import numpy as jnp
from ..... import errors

from ._util import promote_args_inexact
from ....base.dtypes import kind as dtype_kind

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_METHODS = ("average", "min", "max", "dense", "ordinal")


def _check_nan_policy(fname, nan_policy, allowed):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise errors.ZeraxValueError(f"zerax.scipy.stats.{fname}: illegal nan_policy "
                                     f"{nan_policy!r}; expected 'propagate', 'omit' or 'raise'")
    if nan_policy not in allowed:
        raise errors.NotSupportedError(
            f"zerax.scipy.stats.{fname}: nan_policy={nan_policy!r} is not supported (as in "
            "JAX: whether x holds nans is not known under jit); check for nans outside")


def _rank_1d(a, method):
    n = a.shape[0]
    sorter = jnp.argsort(a, stable=True)
    inv = jnp.argsort(sorter, stable=True)          # the inverse permutation
    if method == "ordinal":
        ranks = (inv + 1).astype(float)
    else:
        arr = a[sorter]
        new = jnp.concatenate([jnp.ones(1, bool), arr[1:] != arr[:-1]])
        group = jnp.cumsum(new)                      # 1-based group of each sorted value
        dense = group[inv]
        if method == "dense":
            ranks = dense.astype(float)
        else:
            first = jnp.searchsorted(group, dense, side="left")       # 0-based
            last = jnp.searchsorted(group, dense, side="right")       # one past
            lo, hi = (first + 1).astype(float), last.astype(float)
            ranks = {"min": lo, "max": hi}.get(method, 0.5 * (lo + hi)) if n else lo
    nan_in = jnp.any(jnp.isnan(a)) if dtype_kind(a.dtype) in "fc" else False
    return jnp.where(nan_in, np.nan, ranks)


def rankdata(a, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate"):
    """Ranks of the data, 1 for the smallest, ties by ``method`` (``average``, ``min``,
    ``max``, ``dense``, ``ordinal``); float64 as JAX; all nan for a slice holding a nan.

    >>> from zerax.scipy.stats import rankdata
    >>> rankdata([3.0, 1.0, 3.0, 2.0])
    Array([3.5, 1. , 3.5, 2. ], dtype=float64)
    """
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    if method not in _METHODS:
        raise errors.ZeraxValueError(f"zerax.scipy.stats.rankdata: unknown method {method!r}; "
                                     f"use one of {_METHODS}")
    a = jnp.asarray(a)
    if axis is None:
        return _rank_1d(jnp.ravel(a), method)
    moved = jnp.moveaxis(a, axis, -1)
    flat = jnp.reshape(moved, (-1, moved.shape[-1]))
    ranks = vmap(lambda row: _rank_1d(row, method))(flat)
    return jnp.moveaxis(jnp.reshape(ranks, moved.shape), -1, axis)


def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False):
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)`` along ``axis``
    (``nan_policy="omit"`` leaves nans out).

    >>> from zerax.scipy.stats import sem
    >>> round(float(sem([1.0, 2.0, 3.0, 4.0])), 12)
    0.645497224368
    """
    _check_nan_policy("sem", nan_policy, ("propagate", "omit"))
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return jnp.std(b, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(size)
    count = jnp.sum(~jnp.isnan(b), axis=axis, keepdims=keepdims)
    return jnp.nanstd(b, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count)


class ModeResult(NamedTuple):
    """The most frequent value and how often it occurs (``scipy.stats.mode``'s result)."""

    mode: object
    count: object


def _mode_1d(x):
    v = jnp.sort(x)
    new = jnp.concatenate([jnp.ones(1, bool), v[1:] != v[:-1]])
    group = jnp.cumsum(new)
    counts = (jnp.searchsorted(group, group, side="right")
              - jnp.searchsorted(group, group, side="left"))
    best = jnp.argmax(counts)               # the first maximum: the smallest such value
    return v[best], counts[best]


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False):
    """The most common value along ``axis`` (the smallest of equally common ones) and its
    count, as a ``ModeResult``.

    >>> from zerax.scipy.stats import mode
    >>> mode([1, 3, 3, 2, 2, 3]).mode
    Array(3, dtype=int64)
    """
    _check_nan_policy("mode", nan_policy, ("propagate",))
    x = jnp.atleast_1d(jnp.asarray(a))
    if axis is None:
        x = jnp.ravel(x)
        ax = 0
    else:
        ax = int(axis) % x.ndim
    shape = list(x.shape)
    out_shape = ([1] * x.ndim if axis is None else shape[:ax] + [1] + shape[ax + 1:]) \
        if keepdims else ([] if axis is None else shape[:ax] + shape[ax + 1:])
    if x.shape[ax] == 0:
        nan = jnp.full(out_shape, np.nan)
        return ModeResult(nan, jnp.zeros(out_shape, float))
    moved = jnp.moveaxis(x, ax, -1)
    flat = jnp.reshape(moved, (-1, moved.shape[-1]))
    vals, counts = vmap(_mode_1d)(flat)
    return ModeResult(jnp.reshape(vals, out_shape), jnp.reshape(counts, out_shape))
