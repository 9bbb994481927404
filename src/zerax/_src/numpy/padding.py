"""NumPy's ``pad`` on zerax values: every mode but a callable one.

Composed from the linear shape primitives (pad, slice, concatenate, rev, reshape,
broadcast_in_dim) and reductions for the statistic modes, so ``pad`` is traceable and
differentiable.  Pad widths and ``stat_length`` are static Python values (a
ConcretizationError if traced); ``constant_values`` and ``end_values`` may be traced.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import Array
from ..core.core import Tracer
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.reduce import reduce_max, reduce_min, reduce_sum
from ._util import as_dtype, check_arg, ensure_array, normalize_axis
from .shape_ops import (_bcast_axis, _concrete, _gather_runs, _int_tuple, _slice_axis, broadcast_to)
from .creation import linspace
from ..base.dtypes import kind as dtype_kind

__all__ = ["pad"]

# --------------------------------------------------------------------------- helpers


def _pairs(x, nd, fname, what, integral=False):
    """NumPy's ``_as_pairs(x, ndim, as_index=True)`` for a static pad width."""
    x = np.array(_concrete(x, fname, what))
    if x.dtype.kind not in ("i" if integral else "biuf"):
        raise errors.ZeraxTypeError(f"zerax.numpy.{fname}: {what} must be of integral type")
    x = np.round(x).astype(np.int64)
    if x.size and x.min() < 0:
        raise errors.ShapeError(f"zerax.numpy.{fname}: {what} can't contain negative values")
    if x.ndim < 3:
        if x.size == 1:
            return [(int(x.ravel()[0]),) * 2] * nd
        if x.size == 2 and x.shape != (2, 1):
            return [tuple(int(v) for v in x.ravel())] * nd
    try:
        return [tuple(int(v) for v in row) for row in np.broadcast_to(x, (nd, 2))]
    except ValueError:
        raise errors.ShapeError(
            f"zerax.numpy.{fname}: {what} of shape {x.shape} cannot be broadcast to ({nd}, 2)"
        ) from None


def _value_pairs(v, nd, dtype, fname, what):
    """Per-axis (before, after) scalars for values such as ``constant_values``; they may
    be traced."""
    v = check_arg(v, fname)
    if not isinstance(v, (Array, Tracer)):
        v = np.asarray(v)
    if isinstance(v, (np.ndarray, Array)):
        vv = np.asarray(v)
        if vv.ndim < 3 and (vv.size == 1 or (vv.size == 2 and vv.shape != (2, 1))):
            flat = vv.ravel()
            pair = (flat[0], flat[-1])
        else:
            try:
                grid = np.broadcast_to(vv, (nd, 2))
            except ValueError:
                raise errors.ShapeError(
                    f"zerax.numpy.{fname}: {what} of shape {vv.shape} cannot be broadcast to "
                    f"({nd}, 2)") from None
            return [tuple(np.asarray(grid[i, k]).astype(dtype) for k in range(2))
                    for i in range(nd)]
        return [tuple(np.asarray(p).astype(dtype) for p in pair)] * nd
    # A traced value: pick its scalars with slices.
    v = as_dtype(v, dtype)
    if v.ndim < 3 and (v.size == 1 or (v.size == 2 and tuple(v.shape) != (2, 1))):
        flat = sh.reshape(v, (v.size,))
        pair = tuple(sh.reshape(_slice_axis(flat, 0, k, k + 1), ()) for k in (0, v.size - 1))
        return [pair] * nd
    grid = broadcast_to(v, (nd, 2))
    return [tuple(sh.reshape(sh.slice_p_bind(grid, (i, k), (i + 1, k + 1)), ())
                  for k in range(2)) for i in range(nd)]


_PAD_KWARGS = {
    "constant": {"constant_values"}, "empty": set(), "edge": set(), "wrap": set(),
    "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
    "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"},
    "linear_ramp": {"end_values"},
}


def _stat_pad(x, axis, before, after, mode, stat_length):
    n = x.shape[axis]
    sl_b, sl_a = stat_length
    if sl_b == 0 and before or sl_a == 0 and after:
        raise errors.ShapeError("zerax.numpy.pad: stat_length of 0 yields no value for padding")
    reducer = {"maximum": reduce_max, "minimum": reduce_min}.get(mode)

    def stat(lo, hi, width):
        part = _slice_axis(x, axis, lo, hi)
        if reducer is not None:
            v = reducer(part, (axis,))
        else:
            dt = x.dtype if dtype_kind(np.dtype(x.dtype)) in "fc" else dtypes.default_float()
            s = reduce_sum(as_dtype(part, dt), (axis,))
            v = ew.div(s, np.asarray(hi - lo, dt))
            if dtype_kind(np.dtype(x.dtype)) not in "fc":
                v = as_dtype(ew.round(v), x.dtype)
        return _bcast_axis(sh.reshape(v, _with_axis(x.shape, axis, 1)), axis, width)

    pieces = []
    if before:
        pieces.append(stat(0, min(sl_b, n), before))
    pieces.append(x)
    if after:
        pieces.append(stat(n - min(sl_a, n), n, after))
    return sh.concatenate(pieces, axis)


def _with_axis(shape, axis, n):
    s = list(shape)
    s[axis] = n
    return s


def _ramp_pad(x, axis, before, after, ends):
    """NumPy's linear_ramp: from the end value towards the edge (edge excluded)."""
    n = x.shape[axis]
    squeezed = [d for i, d in enumerate(x.shape) if i != axis]
    pieces = [None, x, None]
    for k, (width, edge_at) in enumerate(((before, 0), (after, n - 1))):
        if not width:
            continue
        edge = sh.reshape(_slice_axis(x, axis, edge_at, edge_at + 1), squeezed)
        ramp = linspace(ends[k], edge, width, endpoint=False, dtype=x.dtype, axis=axis)
        pieces[2 * k] = ramp if k == 0 else sh.rev(ramp, (axis,))
    return sh.concatenate([p for p in pieces if p is not None], axis)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array. Modes: 'constant' (``constant_values``), 'edge', 'reflect',
    'symmetric', 'wrap', 'empty', 'maximum'/'minimum'/'mean' (``stat_length``) and
    'linear_ramp' (``end_values``).

    >>> import zerax.numpy as znp
    >>> znp.pad(znp.array([1, 2, 3]), (2, 1), mode="reflect")
    Array([3, 2, 1, 2, 3, 2], dtype=int64)
    """
    x = ensure_array(array, "pad")
    nd = x.ndim
    if callable(mode):
        raise errors.NotSupportedError("zerax.numpy.pad: a callable mode is not supported")
    if mode not in _PAD_KWARGS:
        raise errors.NotSupportedError(
            f"zerax.numpy.pad: mode {mode!r} is not supported; use one of "
            f"{', '.join(sorted(_PAD_KWARGS))}")
    bad = set(kwargs) - _PAD_KWARGS[mode]
    if bad:
        raise errors.ZeraxTypeError(
            f"zerax.numpy.pad: unsupported keyword arguments for mode {mode!r}: {sorted(bad)}")
    if isinstance(pad_width, dict):  # NumPy 2.3: {axis: width or (before, after)}
        seq = [(0, 0)] * nd
        for ax, w in pad_width.items():
            w = _int_tuple(w, "pad", "pad_width")
            seq[normalize_axis(ax, nd, "pad")] = w * 2 if len(w) == 1 else w
        pad_width = seq
    widths = _pairs(pad_width, nd, "pad", "pad_width", integral=True)
    if nd == 0:
        return x
    dt = np.dtype(x.dtype)
    if mode in ("constant", "empty"):
        values = _value_pairs(kwargs.get("constant_values", 0), nd, dt, "pad",
                              "constant_values")
        scalar = values[0][0]
        uniform = all(p is scalar or (not isinstance(p, Tracer) and not isinstance(scalar, Tracer)
                                      and p.tobytes() == scalar.tobytes())
                      for pair in values for p in pair)
        if uniform:
            return sh.pad(x, scalar, [(b, a, 0) for b, a in widths])
        for ax, ((b, a), (vb, va)) in enumerate(zip(widths, values)):
            cfg = [(0, 0, 0)] * nd
            cfg[ax] = (b, 0, 0)
            x = sh.pad(x, vb, cfg)
            cfg[ax] = (0, a, 0)
            x = sh.pad(x, va, cfg)
        return x
    if mode in ("reflect", "symmetric") and kwargs.get("reflect_type", "even") != "even":
        raise errors.NotSupportedError("zerax.numpy.pad: only reflect_type='even' is supported")
    if mode in ("maximum", "minimum", "mean"):
        stat = kwargs.get("stat_length")
        stats = [(None, None)] * nd if stat is None else _pairs(stat, nd, "pad", "stat_length")
    if mode == "linear_ramp":
        ends = _value_pairs(kwargs.get("end_values", 0), nd,
                            dtypes.result_type(dt, np.float64), "pad", "end_values")
    for ax, (b, a) in enumerate(widths):
        if not (b or a):
            continue
        n = x.shape[ax]
        if n == 0:
            raise errors.ShapeError(
                f"zerax.numpy.pad: can't extend empty axis {ax} using modes other than "
                "'constant' or 'empty'")
        if mode in ("maximum", "minimum", "mean"):
            sl = tuple(n if s is None else s for s in stats[ax])
            x = _stat_pad(x, ax, b, a, mode, sl)
        elif mode == "linear_ramp":
            x = _ramp_pad(x, ax, b, a, ends[ax])
        else:
            idx = np.pad(np.arange(n), (b, a), mode=mode)
            x = _gather_runs(x, ax, idx)
    return x
