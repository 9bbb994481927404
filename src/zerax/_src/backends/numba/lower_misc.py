"""The Numba rules of ``stop_gradient`` (ops/misc.py) and ``fft`` (ops/fft.py).

``stop_gradient`` is a copy.  ``fft`` runs on the host (``host_rules``) at the top
level: a call of the primitive's NumPy implementation (pocketfft) from the Python glue
between compiled kernels, as the LAPACK-backed decompositions are.  Inside compiled
loop and branch bodies (scan, fori_loop, while_loop, cond, switch) the FFT is the
native Numba transform of fft_kernels.py, called from the generated code (no call back
into Python per iteration, and the kernel stays in the native disk cache).
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import fft as ft
from ...ops import misc
from . import fft_kernels
from .fusion import dtype_name
from .lower_shape import reshape_is_view
from .lower_util import array_of
from .rules import host_rules, lowering_rules


def _always(eqn) -> bool:
    return True


# --------------------------------------------------------------------------- stop_gradient

def _stop_gradient_lower(ctx, eqn):
    """The identity: the operand itself where nothing can write either buffer later
    (as a reshape is a view there: `lower_shape.reshape_is_view`), else a copy."""
    (x,), (ov,) = eqn.invars, eqn.outvars
    ctx.emit("# stop_gradient")
    if reshape_is_view(ctx, x, ov):
        ctx.bind_name(ov, ctx.name(x))
        return
    xn = array_of(ctx, x)
    out = ctx.out(ov)
    ctx.emit(f"{out} = np.copy({xn})")


lowering_rules[misc.stop_gradient_p] = _stop_gradient_lower


# --------------------------------------------------------------------------- fft

host_rules[ft.fft_p] = _always   # pocketfft through NumPy, between the compiled kernels


def _plan(ctx, n: int, inverse: bool) -> str:
    """The name of the plan of a length-``n`` transform: a constant array of the kernel
    (fft_kernels.plan), named by its content like the program's other constants."""
    return ctx.const_ref(fft_kernels.plan(n, inverse))[1]


def _lines(ctx, w, shape, axis, inverse):
    """Transform the C array ``w`` of ``shape`` along ``axis``, in place."""
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    fn = ctx.helper("_zx_fft_lines", fft_kernels.kernels()["lines"])
    p = _plan(ctx, shape[axis], inverse)
    ctx.emit(f"{fn}({w}.reshape(({outer}, {shape[axis]}, {inner})), {p}, "
             f"np.int64({int(inverse)}))")


def _fft_lower(ctx, eqn):
    """Inside a compiled loop or branch body: the native FFT of fft_kernels.py on a
    complex128 copy of the operand, axis by axis, in NumPy's order (RFFT: the last axis
    first, then its non-negative half is kept; IRFFT: the last axis last)."""
    (x,), (ov,) = eqn.invars, eqn.outvars
    kind, lengths = eqn.params["fft_type"], eqn.params["fft_lengths"]
    shape, out_shape = tuple(x.aval.shape), tuple(ov.aval.shape)
    out_dt = dtype_name(ov.aval.dtype)
    ctx.emit(f"# fft {kind} {x.aval.str_short()} -> {ov.aval.str_short()} (native, in a loop)")
    if math.prod(shape) == 0 or math.prod(out_shape) == 0:
        ctx.emit(f"{ctx.out(ov)} = np.zeros({out_shape!r}, {out_dt})")
        return
    axes = list(range(len(shape) - len(lengths), len(shape)))
    w = ctx.fresh("fw")
    ctx.emit(f"{w} = {array_of(ctx, x)}.astype(np.complex128)")   # a fresh C array
    if kind in ("FFT", "IFFT"):
        for a in axes:
            _lines(ctx, w, shape, a, kind == "IFFT")
        result = w
    elif kind == "RFFT":
        n, half = shape[-1], shape[-1] // 2 + 1
        _lines(ctx, w, shape, len(shape) - 1, False)
        rows = math.prod(shape[:-1])
        ctx.emit(f"{w} = np.ascontiguousarray({w}.reshape(({rows}, {n}))[:, :{half}])"
                 f".reshape({out_shape!r})")
        for a in axes[:-1]:
            _lines(ctx, w, out_shape, a, False)
        result = w
    else:   # IRFFT
        for a in axes[:-1]:
            _lines(ctx, w, shape, a, True)
        n, rows = lengths[-1], math.prod(shape[:-1])
        k = fft_kernels.kernels()
        full = ctx.fresh("fh")
        ctx.emit(f"{full} = {ctx.helper('_zx_fft_hermitian', k['hermitian'])}("
                 f"{w}.reshape(({rows}, {shape[-1]})), {n})")
        ctx.emit(f"{ctx.helper('_zx_fft_lines', k['lines'])}({full}, {_plan(ctx, n, True)}, "
                 "np.int64(1))")
        result = ctx.fresh("fr")
        ctx.emit(f"{result} = {ctx.helper('_zx_fft_real', k['real_part'])}({full})"
                 f".reshape({out_shape!r})")
    out = ctx.out(ov)
    if np.dtype(ov.aval.dtype) in (np.complex128, np.float64):
        ctx.emit(f"{out} = {result}")
    else:   # computed in double precision, rounded once
        ctx.emit(f"{out} = {result}.astype({out_dt})")


lowering_rules[ft.fft_p] = _fft_lower
