"""The Numba rules of ``stop_gradient`` (ops/misc.py), ``fft`` (ops/fft.py) and the
collectives that are not elementwise (ops/collectives.py).

``stop_gradient`` is a copy.  ``fft`` and ``all_gather`` run on the host (``host_rules``):
a top-level equation is a call of the primitive's NumPy implementation (pocketfft for
the FFT) from the Python glue between compiled kernels, as the LAPACK-backed
decompositions are; inside compiled loop and branch bodies they are not available, and
``unsupported`` says so to the user.  ``axis_index`` never reaches compilation.
"""

from __future__ import annotations

from ...ops import collectives as co
from ...ops import fft as ft
from ...ops import misc
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
ft.fft_p.unsupported["lower_numba"] = (
    "fft is not available inside a compiled loop or branch body (scan, fori_loop, "
    "while_loop, cond, switch, map); at the top level of a jitted function it runs on the "
    "host. Move the FFT out of the loop body, or compute the loop without jit")


# --------------------------------------------------------------------------- collectives

host_rules[co.all_gather_p] = _always  # compiled only with an unmapped operand: rare
co.all_gather_p.unsupported["lower_numba"] = (
    "all_gather of a value that does not vary over its axis runs on the host between "
    "compiled kernels, not inside compiled loop or branch bodies")
co.axis_index_p.unsupported["lower_numba"] = (
    "axis_index is always resolved by its vmap before compilation")
