"""The one threading model of compiled programs: who runs in parallel, and how many.

A compiled program may use two thread pools: Numba's (its ``prange`` loops) and the
BLAS library's (matrix products that call NumPy's BLAS from Python, or Numba's
``np.dot`` calling SciPy's).  Both pools busy-wait for a while after their work, so
two of them alternating inside one program fight for the same cores (an MLP step was
14x slower than with one BLAS thread, 29x with one other busy process beside it).
The model, fixed here:

* **One setting**, ``num_threads`` (``zerax.config.update("num_threads", n)`` or the
  environment variable ``ZERAX_NUM_THREADS``; default: the cores this process may run
  on, at most the size of Numba's pool).  Numba's parallel loops use that many threads.
* **BLAS runs on one thread inside compiled programs**, whatever NumPy uses outside
  them, except for products large enough that threading pays on any machine
  (``cpu.blas.PARALLEL_BLAS_MIN_WORK`` multiply-adds or more in one product), which get
  ``num_threads``, and medium products (``cpu.blas.SHARED_BLAS_MIN_WORK`` or more), which get
  the threads of the setting that other work leaves idle (``idle_threads``: the
  setting less the threads running beside this one now, `cpu.blas.idle_threads`), so a
  quiet machine multiplies on every core and a busy one on one.  The BLAS thread count is set through the libraries' own calls
  (``openblas_set_num_threads`` found in the loaded library) around each program call
  and restored after it, so NumPy code outside zerax keeps its own setting.

So at any moment one pool does the parallel work, and on a machine shared with other
processes the number of busy threads is bounded by the setting.

**Parallel elementwise loops hand out their work dynamically** (`claim_block`, used by
``loops.parallel_blocks``): the loop runs one task per thread, and each task takes the
next block of elements from a shared counter until none is left.  Numba's own
``prange`` splits the iterations into one equal share per thread up front (its OpenMP
layer has no other schedule), so when another process takes turns with one of the
threads on its core, the loop waits for that thread's half while the other thread sits
idle; with blocks claimed as they go, the thread with a core to itself does more of them.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import warnings

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .... import errors
from ..cpu import blas as cpu_blas
from ..cpu import threads as cpu_threads

# The OpenBLAS builds NumPy and SciPy ship name their symbols differently.
_OPENBLAS_NAMES = (
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)


def _pool_size() -> int:
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _check(n, where: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) and not (
            isinstance(n, str) and n.strip().isdigit()):
        raise errors.ZeraxValueError(
            f"{where} must be a positive whole number of threads, got {n!r}.")
    n = int(n)
    if n < 1:
        raise errors.ZeraxValueError(
            f"{where} must be at least 1 (one thread: no parallel loops), got {n}.")
    pool = _pool_size()
    if n > pool:
        warnings.warn(f"zerax: {where}={n} is more than the {pool} threads Numba started "
                      f"with (NUMBA_NUM_THREADS); using {pool}.", RuntimeWarning,
                      stacklevel=4)
        n = pool
    return n


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.n: int | None = None      # the setting, once resolved
        self.generation = 0            # bumped by every change: threads re-apply it
        self.local = threading.local()
        self.blas: list = []           # [(set, get)] of every BLAS library found
        self.blas_seen: set = set()    # paths of the libraries looked at
        self.scipy_done = False         # SciPy's BLAS (Numba's np.dot) looked at


_state = _State()


def num_threads() -> int:
    """The number of threads compiled programs use (the ``num_threads`` setting)."""
    n = _state.n
    if n is None:
        env = os.environ.get("ZERAX_NUM_THREADS")
        n = _check(env, "ZERAX_NUM_THREADS") if env not in (None, "") else \
            min(_available_cores(), _pool_size())
        _state.n = n
    return n


def set_num_threads(n) -> int:
    """Change the setting (``zerax.config.update("num_threads", n)`` calls this)."""
    n = _check(n, "num_threads")
    with _state.lock:
        _state.n = n
        _state.generation += 1
    cpu_threads.set_threads(n)     # the kernel-IR path's pool
    return n


def _apply_numba():
    """Numba's thread count is per calling thread: set it in this one when the setting
    changed since it was last set here (an attribute read otherwise)."""
    local = _state.local
    if getattr(local, "generation", -1) != _state.generation:
        import numba
        numba.set_num_threads(num_threads())
        local.generation = _state.generation


def _find_blas() -> list:
    """(set, get) ctypes functions of every OpenBLAS loaded in this process: NumPy's,
    and SciPy's once Numba's ``np.dot`` has imported it (looked for again until then)."""
    st = _state
    if st.blas_seen and (st.scipy_done or "scipy.linalg.cython_blas" not in sys.modules):
        return st.blas
    import numpy as np
    candidates = [np._core._multiarray_umath.__file__]
    mod = sys.modules.get("scipy.linalg.cython_blas")
    if mod is not None:
        candidates.append(mod.__file__)
    with st.lock:
        for path in candidates:
            if path in st.blas_seen:
                continue
            st.blas_seen.add(path)
            try:
                lib = ctypes.CDLL(path)    # its symbols and those of the libraries it loads
            except OSError:
                continue
            for set_name, get_name in _OPENBLAS_NAMES:
                if hasattr(lib, set_name) and hasattr(lib, get_name):
                    set_fn, get_fn = getattr(lib, set_name), getattr(lib, get_name)
                    set_fn.argtypes, set_fn.restype = [ctypes.c_int], None
                    get_fn.argtypes, get_fn.restype = [], ctypes.c_int
                    st.blas.append((set_fn, get_fn))
                    break
        st.scipy_done = mod is not None
    return st.blas


def blas_libraries() -> int:
    """How many BLAS libraries zerax controls the threads of (0: none found, e.g. a
    BLAS other than OpenBLAS; its threads are then left as they are)."""
    return len(_find_blas())


def idle_threads() -> int:
    """The threads of the setting that other processes leave idle (`cpu.blas`)."""
    return cpu_blas.idle_threads(num_threads())


def blas_threads_for(work: int) -> int:
    """BLAS's threads inside a program whose largest product does ``work`` multiply-adds
    (the policy of `cpu.blas.threads_for`)."""
    return cpu_blas.threads_for(work, num_threads())


def wrap_program(kernel, *, parallel: bool, blas: bool, blas_work: int = 0):
    """``kernel`` called under the threading model: Numba's count applied when the
    program has parallel loops, BLAS limited (``blas_threads_for(blas_work)``, the
    largest product's multiply-adds) when it calls BLAS.  Programs doing neither are
    returned as they are (the dispatch of small programs pays nothing)."""
    if not parallel and not blas:
        return kernel
    if not blas:
        def run_parallel(*args):
            _apply_numba()
            return kernel(*args)
        run_parallel.__wrapped__, run_parallel.zerax_threaded = kernel, True
        return run_parallel

    def run(*args):
        if parallel:
            _apply_numba()
        want = blas_threads_for(blas_work)
        libs = _find_blas()
        saved = []
        for set_fn, get_fn in libs:
            had = get_fn()
            if had != want:
                set_fn(want)
                saved.append((set_fn, had))
        try:
            return kernel(*args)
        finally:
            for set_fn, had in saved:
                set_fn(had)
    run.__wrapped__, run.zerax_threaded = kernel, True
    return run


@intrinsic
def claim_block(typingctx, counter):
    """``counter[0] += 1`` as one atomic instruction, returning the old value: the next
    block of a parallel loop for the thread that calls it (``loops.parallel_blocks``).
    ``counter`` is a C-contiguous int64 array that only such calls change."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        # "monotonic": the blocks need only be handed out once each; the loop's end
        # (the threads' join) orders the writes they make
        return builder.atomic_rmw("add", ary.data, ir.Constant(ir.IntType(64), 1),
                                  "monotonic")
    return types.int64(counter), codegen


@intrinsic
def task_count(typingctx):
    """The number of threads the calling parallel region may use (Numba's
    ``get_num_threads``), for ``prange(task_count())``: called through the threading
    layer's own symbol, as Numba's parallel loops call it, so a kernel using it keeps no
    address of this process and can be loaded from the native cache (native.py)."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, []),
                                            "get_num_threads")
        return builder.call(fn, [])
    return types.int64(), codegen
