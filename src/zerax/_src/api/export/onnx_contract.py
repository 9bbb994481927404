"""ONNX rules of contractions and windows: ``dot_general`` as ``MatMul`` (operands
transposed to batch, free, contracted axes and flattened to 3-d), a convolution (a
``dot_general`` contracting channels and window offsets of ``window_patches``, the form
``lax.conv_general_dilated`` takes) as one ``Conv``, and ``window_patches`` /
``window_patches_add`` met alone (pooling, gradients) as a ``Conv`` / ``ConvTranspose``
with a one-hot kernel, which moves values exactly (zeros added to finite values).
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import linalg, windows
from .onnx_rules import onnx_rules


def _transpose(ctx, x, perm):
    return x if list(perm) == list(range(len(perm))) else ctx.node("Transpose", [x],
                                                                    perm=list(perm))


def _dot_general(ctx, eqn, ins):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    pet = eqn.params["preferred_element_type"]
    lhs, rhs = ins
    la, ra = eqn.invars[0].aval, eqn.invars[1].aval
    if pet is not None and np.dtype(pet) != la.dtype:
        lhs = ctx.node("Cast", [lhs], to=ctx.onnx_type(pet))
    if pet is not None and np.dtype(pet) != ra.dtype:
        rhs = ctx.node("Cast", [rhs], to=ctx.onnx_type(pet))
    conv = _as_convolution(ctx, eqn, ins, lhs, rhs)
    if conv is not None:
        return conv
    lf = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    sizes = lambda shape, dims: [shape[d] for d in dims]   # noqa: E731
    b = math.prod(sizes(la.shape, lb))
    m, k = math.prod(sizes(la.shape, lf)), math.prod(sizes(la.shape, lc))
    n = math.prod(sizes(ra.shape, rf))
    lhs = _transpose(ctx, lhs, list(lb) + lf + list(lc))
    rhs = _transpose(ctx, rhs, list(rb) + list(rc) + rf)
    lead = [b] if lb else []
    lhs = ctx.node("Reshape", [lhs, ctx.ints(lead + [m, k])])
    rhs = ctx.node("Reshape", [rhs, ctx.ints(lead + [k, n])])
    out = ctx.node("MatMul", [lhs, rhs])
    return ctx.node("Reshape", [out, ctx.ints(eqn.outvars[0].aval.shape)])


def _as_convolution(ctx, eqn, ins, lhs, rhs):
    """One Conv for ``dot_general(window_patches(x), kernel)`` contracting the channels
    and the window offsets of an ``(N, C, *spatial)`` input (None: not that form)."""
    made = ctx.producer.get(ins[0])
    if made is None or made[0].primitive is not windows.window_patches_p:
        return None
    wp, (x,) = made
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    p = wp.params
    nsp = len(p["window"])
    xa = wp.invars[0].aval
    ra = eqn.invars[1].aval
    if xa.ndim != nsp + 2 or lb or rb or sorted(lc) != [1, 2] or ra.ndim != 3:
        return None
    c_axis, p_axis = rc[list(lc).index(1)], rc[list(lc).index(2)]
    (o_axis,) = [d for d in range(3) if d not in rc]
    kernel = _transpose(ctx, rhs, [o_axis, c_axis, p_axis])
    kernel = ctx.node("Reshape", [kernel, ctx.ints([ra.shape[o_axis], xa.shape[1]]
                                                   + list(p["window"]))])
    out = ctx.node("Conv", [x, kernel], strides=list(p["strides"]),
                   dilations=list(p["dilation"]), pads=[0] * (2 * nsp))
    return _transpose(ctx, out, [0] + list(range(2, 2 + nsp)) + [1])   # (N, *out, O)


def _one_hot_kernel(window, dtype):
    """``(P, 1, *window)``: kernel k reads window offset k (C order)."""
    size = math.prod(window)
    w = np.zeros((size, 1) + tuple(window), dtype)
    for k, offs in enumerate(np.ndindex(*window)):
        w[(k, 0) + offs] = 1
    return w


def _window_patches(ctx, eqn, ins):
    p = eqn.params
    xa, oa = eqn.invars[0].aval, eqn.outvars[0].aval
    nsp = len(p["window"])
    lead = xa.shape[:xa.ndim - nsp]
    if 0 in oa.shape:
        return ctx.node("Identity", [ctx.const(np.zeros(oa.shape, oa.dtype))])
    x = ctx.node("Reshape", [ins[0], ctx.ints([math.prod(lead), 1] + list(xa.shape[len(lead):]))])
    out = ctx.node("Conv", [x, ctx.const(_one_hot_kernel(p["window"], xa.dtype))],
                   strides=list(p["strides"]), dilations=list(p["dilation"]),
                   pads=[0] * (2 * nsp))
    return ctx.node("Reshape", [out, ctx.ints(oa.shape)])


def _window_patches_add(ctx, eqn, ins):
    p = eqn.params
    pa, oa = eqn.invars[0].aval, eqn.outvars[0].aval
    nsp = len(p["window"])
    lead = pa.shape[:pa.ndim - nsp - 1]
    out_sp = pa.shape[pa.ndim - nsp:]
    if 0 in pa.shape or 0 in oa.shape:
        return ctx.node("Identity", [ctx.const(np.zeros(oa.shape, oa.dtype))])
    x = ctx.node("Reshape", [ins[0], ctx.ints([math.prod(lead)] + list(pa.shape[len(lead):]))])
    out = ctx.node("ConvTranspose", [x, ctx.const(_one_hot_kernel(p["window"], pa.dtype))],
                   strides=list(p["strides"]), dilations=list(p["dilation"]),
                   pads=[0] * (2 * nsp))
    natural = [(o - 1) * s + (k - 1) * d + 1
               for o, s, k, d in zip(out_sp, p["strides"], p["window"], p["dilation"])]
    tail = [n - m for n, m in zip(p["spatial"], natural)]
    if any(tail):   # positions no window reads: zeros
        out = ctx.node("Pad", [out, ctx.ints([0] * (nsp + 2) + [0, 0] + tail)], mode="constant")
    return ctx.node("Reshape", [out, ctx.ints(oa.shape)])


onnx_rules[linalg.dot_general_p] = _dot_general
onnx_rules[windows.window_patches_p] = _window_patches
onnx_rules[windows.window_patches_add_p] = _window_patches_add
