"""Generated kernels compiled straight to machine code with llvmlite, without Numba.

Numba spends most of a cold compile on work zerax does not need: per kernel, half a
second of context set-up in a fresh process, then bytecode analysis, type inference,
its Python-side lowering and the LLVM of its runtime and CPython wrapper (issue 20:
a three-kernel MLP step took 3.9 s, of which LLVM proper was a third).  The generated
kernels are a small, regular subset of Python whose types zerax already knows, so
this module translates a serial kernel's source (its AST) directly to LLVM IR and
lets LLVM optimise and emit it: tens of milliseconds a kernel.

What the translator accepts is the subset the code generator writes: static shapes,
C-contiguous arrays, ``for ... in range``/``while``/``if`` statements, scalar arithmetic
with Numba's typing rules, element loads and stores, whole-array allocations
(``np.empty``/``np.full``/``np.zeros``/``np.copy``), reshapes and leading-axis views,
casts (``np.float32(x)``), the float math of ``np``/``math``/``vecmath``, complex64 and
complex128 scalars with Numba's arithmetic and complex functions, and calls to zerax's
Numba-compiled scalar helpers (translated from their Python source).  Anything
else raises `Unsupported`, and that kernel is compiled by Numba as before, so the
subset can grow one construct at a time without changing any result.  Where Numba's
semantics are subtle (mixed-sign integer promotion, float32 with int64, float ``//``)
the translator refuses rather than guesses.

Calling convention: the machine code is ``void kernel(PyObject *x0, ...)`` taking the
argument arrays, then one new array per allocation of the kernel, made by a small
Python wrapper with NumPy before the call (``ctypes``, which releases the GIL).  Each
array's data pointer is read from its ``PyArrayObject`` at the offset `guard.layout`
measured.  The wrapper checks that the arguments are the C-contiguous arrays of the
dtypes and shapes the code was made for (others: a copy, or a new specialisation).
Returned arrays are the wrapper's own buffers or the arguments, viewed with the
returned shape; a kernel whose result may be one of several buffers at run time has
the machine code report which (its data pointer).

The package, each module importing only those listed before it:

- ``values.py``: `Unsupported`, the LLVM types of dtypes, the values the translator
  computes with (``_Scalar``, ``_Array``, ...) and Numba's scalar typing rules;
- ``pairwise.py``: the LLVM function of NumPy's pairwise summation;
- ``parallel.py``: ``prange`` loops outlined into a body for ``numba_parallel_for``;
- ``numba_cmath.py``: Numba's complex ``log``/``sqrt``/``arcsinh``/... as plain Python,
  for ``helpers.py`` to translate;
- ``helpers.py``: calls to njit scalar helpers, translated from their source into
  internal functions of the module;
- ``calls.py``: the translation of calls (allocations, ``np``/``math`` functions,
  zerax's helpers);
- ``complex.py``: complex scalars (casts, arithmetic, comparisons, parts, tests);
- ``translate.py``: the translator, ``_Kernel`` (statements, expressions, indexing,
  scalar arithmetic, the exported CPython entry point);
- ``runtime.py``: the engine, `compile_kernel`, `DirectKernel`, `Dispatcher`, the
  buffers, the counters and the start of Numba's threading layer.

This module re-exports the names the rest of the backend uses.
"""

from .runtime import (
    THREAD_POOL_SYMBOLS,
    DirectKernel,
    Dispatcher,
    compile_kernel,
    content_key,
    enabled,
    engine,
    refusals,
    start_threading_layer,
    stats,
)
from .values import Unsupported

__all__ = ["THREAD_POOL_SYMBOLS", "DirectKernel", "Dispatcher", "Unsupported",
           "compile_kernel", "content_key", "enabled", "engine", "refusals",
           "start_threading_layer", "stats"]
