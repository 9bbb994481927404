"""Numba intrinsics of the CPU math library (``backends/cpu/mathlib.py``): inline
float64 exp, expm1, log, log1p, tanh, arctan, sin and cos for the generated loops
that Numba compiles.

Numba lowers ``np.tanh``/``np.log1p``/... to one scalar libm call per element, and a
loop that calls a function cannot be vectorised; these functions emit mathlib's
inline arithmetic at each call instead.  Such functions cost almost nothing to
compile, unlike ``njit(inline="always")`` functions, which Numba re-types at every use.
"""

from __future__ import annotations

from numba import types
from numba.core.imputils import lower_builtin
from numba.extending import type_callable

from ..cpu.mathlib import (  # noqa: F401  (SIN_COS_RANGE, _F: for codegen and tests)
    _CELL_COUNT, _F, _F64, SIN_COS_RANGE, _arctan, _cell_table, _emit_sin_cos, _exp, _expm1, _log, _log1p, _tanh,
    module_function, sin_cos_selects)


def _float64_intrinsic(emit, name, doc):
    """A function ``name(float64) -> float64`` for njit code whose code is
    ``emit(builder, x)``, emitted inline at each call.

    Declared with Numba's low-level extension API (a typing template and a lowering
    registered for float64), not ``@intrinsic``: Numba refreshes its target context every
    time it types a call of an ``@intrinsic`` (about a millisecond each), which made
    these calls a large part of the compile of a long chain of sin and cos."""
    def fn(x):
        raise TypeError(f"vecmath.{name} is callable only inside Numba-compiled code")
    fn.__name__ = fn.__qualname__ = f"vecmath_{name}"
    fn.__doc__ = f"{name}(x) of a float64 inside njit code, {doc}."
    fn.emit = emit   # for kernels compiled without Numba (direct/)

    @type_callable(fn)
    def _typer(context):
        def typer(x):
            return types.float64 if x == types.float64 else None
        return typer

    @lower_builtin(fn, types.float64)
    def _lower(context, builder, sig, args):
        return emit(builder, args[0])
    return fn


def _branch_free(algorithm, name):
    return _float64_intrinsic(lambda b, x: algorithm(_F(b, x)).v, name,
                              "emitted inline, vectorisable")


exp = _branch_free(_exp, "exp")
expm1 = _branch_free(_expm1, "expm1")
log = _branch_free(_log, "log")
log1p = _branch_free(_log1p, "log1p")
tanh = _branch_free(_tanh, "tanh")
arctan = _branch_free(_arctan, "arctan")


def _low_latency(emit, name):
    """Calls of one module-level function per kernel module (see mathlib's `module_function`)."""
    return _float64_intrinsic(
        lambda b, x: b.call(module_function(b.module, f"zerax.{name}", emit), [x]),
        name, "low latency")


# In loops over array elements: the quadrant code.  Its switch has few targets, so it
# is mispredicted less often on unsorted data (10^6 random cos: 19 ms, against 25 ms
# with the cells).
sin = _low_latency(lambda b, x: _emit_sin_cos(b, x, True, cells=False), "sin")
cos = _low_latency(lambda b, x: _emit_sin_cos(b, x, False, cells=False), "cos")

# In parallel loops over array elements (codegen.py): the select code above, with a
# second pass by `sin`/`cos` over a block that holds an argument beyond its range.
throughput_sin = _branch_free(lambda x: sin_cos_selects(x, True), "throughput_sin")
throughput_cos = _branch_free(lambda x: sin_cos_selects(x, False), "throughput_cos")
# In 0-d code, where a loop usually carries the argument from one call to the next:
# the cells (a 10^6-step ``x + 1e-6 cos(x)`` loop: 9.6 ms, against 11.6 ms), for
# about 0.1 s more compile time per kernel that uses them.  (Not inlining them saves
# half of that but costs 1 ms of the 9.6.)
scalar_sin = _low_latency(lambda b, x: _emit_sin_cos(b, x, True, cells=True), "scalar_sin")
scalar_cos = _low_latency(lambda b, x: _emit_sin_cos(b, x, False, cells=True), "scalar_cos")
