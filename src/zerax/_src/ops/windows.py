"""The window primitives behind convolutions and ``reduce_window``: ``window_patches``
(im2col: every window of the trailing axes, stacked along one new axis) and its
transpose ``window_patches_add`` (col2im: each window's values added back where they
were read from).  Both are linear; each is the other's transpose, so a convolution's
gradient of any order is made of these two and ``dot_general``.

Before these were primitives, the windows were one strided ``slice`` per window offset,
stacked with ``concatenate``: correct under every transform, but a 3x3 convolution's
gradient became nine pads and adds per layer, and a small CNN's compiled step hundreds
of parallel loops (minutes of compile time, issue 20).  Now each is one loop nest.

Layout: ``x`` is ``(*lead, *spatial)`` with ``len(window)`` trailing spatial axes; the
patches are ``(*lead, P, *out_spatial)``, ``P = prod(window)`` in C order of the window
offsets, and hold, at output position ``o`` and offset ``k``, ``x[o * stride + k *
dilation]``.  Leading axes are independent, which is also the batching rule.
The lowerings are in ``backends/lowering/shape.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..core.core import Primitive, ShapedArray, bind
from ..interpreters.batching import batch_rules, moveaxis
from ._factory import deflinear


def window_out_shape(spatial, window, strides, dilation) -> tuple:
    """How many windows fit along each spatial axis (0 where none does)."""
    out = []
    for n, k, s, d in zip(spatial, window, strides, dilation):
        ek = (k - 1) * d + 1
        out.append((n - ek) // s + 1 if n >= ek else 0)
    return tuple(out)


def _params(window, strides, dilation):
    return {"window": tuple(int(k) for k in window),
            "strides": tuple(int(s) for s in strides),
            "dilation": tuple(int(d) for d in dilation)}


def _check(name, ndim, window, strides, dilation):
    nsp = len(window)
    if not (len(strides) == len(dilation) == nsp) or nsp > ndim:
        raise errors.ShapeError(
            f"{name}: window {window}, strides {strides} and dilation {dilation} need one "
            f"entry per trailing spatial axis (at most {ndim}).")
    if min(window + strides + dilation, default=1) < 1:
        raise errors.ZeraxValueError(
            f"{name}: window sizes, strides and dilations must be positive, got window "
            f"{window}, strides {strides}, dilation {dilation}.")


# --------------------------------------------------------------------------- patches

window_patches_p = Primitive("window_patches")


def window_patches(x, window, strides, dilation):
    """The windows of ``x``'s trailing ``len(window)`` axes, stacked along a new axis
    placed before them: ``(*lead, *spatial) -> (*lead, prod(window), *out_spatial)``."""
    return bind(window_patches_p, x, **_params(window, strides, dilation))


def _strided_windows(x, window, strides, dilation):
    """A read-only view ``(*lead, *out_spatial, *window)`` of ``x``'s windows."""
    nsp = len(window)
    axes = tuple(range(x.ndim - nsp, x.ndim))
    eff = tuple((k - 1) * d + 1 for k, d in zip(window, dilation))
    view = np.lib.stride_tricks.sliding_window_view(x, eff, axis=axes)
    return view[(Ellipsis,) + tuple(slice(None, None, s) for s in strides)
                + tuple(slice(None, None, d) for d in dilation)]


def _patches_impl(x, *, window, strides, dilation):
    nsp, lead = len(window), x.ndim - len(window)
    out_sp = window_out_shape(x.shape[lead:], window, strides, dilation)
    if 0 in out_sp:
        return np.empty(x.shape[:lead] + (math.prod(window),) + out_sp, x.dtype)
    view = _strided_windows(x, window, strides, dilation)   # lead, out..., window...
    order = tuple(range(lead)) + tuple(range(lead + nsp, lead + 2 * nsp)) + \
        tuple(range(lead, lead + nsp))
    view = view.transpose(order)                                # lead, window..., out...
    return np.ascontiguousarray(view).reshape(x.shape[:lead] + (-1,) + out_sp)


def _patches_abstract(x, *, window, strides, dilation):
    _check("window_patches", len(x.shape), window, strides, dilation)
    lead = len(x.shape) - len(window)
    out_sp = window_out_shape(x.shape[lead:], window, strides, dilation)
    return ShapedArray(tuple(x.shape[:lead]) + (math.prod(window),) + out_sp, x.dtype)


def _patches_transpose(ct, x, *, window, strides, dilation):
    spatial = tuple(x.aval.shape[len(x.aval.shape) - len(window):])
    return [window_patches_add(ct, spatial, window, strides, dilation)]


window_patches_p.impl = _patches_impl
window_patches_p.abstract_eval = _patches_abstract
deflinear(window_patches_p, _patches_transpose)


# --------------------------------------------------------------------------- patches_add

window_patches_add_p = Primitive("window_patches_add")


def window_patches_add(p, spatial, window, strides, dilation):
    """The transpose of `window_patches`: ``(*lead, P, *out_spatial) -> (*lead,
    *spatial)``, every patch element added to the input position it was read from."""
    return bind(window_patches_add_p, p, spatial=tuple(int(n) for n in spatial),
                **_params(window, strides, dilation))


def _patches_add_impl(p, *, spatial, window, strides, dilation):
    nsp = len(window)
    lead = p.ndim - nsp - 1
    out = np.zeros(p.shape[:lead] + tuple(spatial), p.dtype)
    out_sp = p.shape[lead + 1:]
    if 0 in out_sp:
        return out
    # One strided add per window offset: the writes of one offset never overlap.
    for k, offs in enumerate(np.ndindex(*window)):
        dst = tuple(slice(o * d, o * d + (m - 1) * s + 1, s)
                    for o, d, s, m in zip(offs, dilation, strides, out_sp))
        out[(Ellipsis,) + dst] += p[(Ellipsis, k) + (slice(None),) * nsp]
    return out


def _patches_add_abstract(p, *, spatial, window, strides, dilation):
    nsp = len(window)
    _check("window_patches_add", len(p.shape) - 1, window, strides, dilation)
    lead = len(p.shape) - nsp - 1
    want = (math.prod(window),) + window_out_shape(spatial, window, strides, dilation)
    if lead < 0 or tuple(p.shape[lead:]) != want:
        raise errors.ShapeError(
            f"window_patches_add: patches of shape {tuple(p.shape)} do not end in "
            f"{want} (window count, then the windows along each of {tuple(spatial)}).")
    return ShapedArray(tuple(p.shape[:lead]) + tuple(spatial), p.dtype)


def _patches_add_transpose(ct, p, *, spatial, window, strides, dilation):
    return [window_patches(ct, window, strides, dilation)]


window_patches_add_p.impl = _patches_add_impl
window_patches_add_p.abstract_eval = _patches_add_abstract
deflinear(window_patches_add_p, _patches_add_transpose)


# --------------------------------------------------------------------------- batching
# Leading axes are independent: a batch axis among them stays where it is, one among the
# window axes moves to the front.

def _batch(prim, trailing):
    def rule(args, dims, **params):
        (x,), (d,) = args, dims
        if d >= len(x.shape) - trailing(params):
            x, d = moveaxis(x, d, 0), 0
        return bind(prim, x, **params), d
    return rule


batch_rules[window_patches_p] = _batch(window_patches_p, lambda p: len(p["window"]))
batch_rules[window_patches_add_p] = _batch(window_patches_add_p,
                                           lambda p: len(p["window"]) + 1)
