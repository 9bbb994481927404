"""BLAS for compiled kernels: the library NumPy loaded, found by threadpoolctl, its
``cblas_?gemm`` called from machine code, and its threads around each program call.

`gemm(dtype)` gives the symbol a kernel calls (``zerax_cblas_dgemm``/``sgemm``) and
makes it known to LLVM's linker (``llvmlite.binding.add_symbol``: the address of
the library's own ``cblas_dgemm``, under whichever name the build exports it: NumPy's
wheels ship OpenBLAS as ``scipy_cblas_dgemm64_``, with 64-bit integers).  A process
whose NumPy uses a BLAS threadpoolctl cannot see has none: programs with large
products then compile another way.

Threads: a product inside a compiled program runs on one BLAS thread, except those
large enough that threading pays (`threads_for`), so BLAS's pool never competes with
the parallel loops' or another process's work (the policy of issue 19).  The count is
set through the library's own ``openblas_set_num_threads`` (threadpoolctl's
controller) around each call of such a program, and restored after it.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np

# Multiply-adds in one product from which BLAS gets the threads other processes leave
# idle (measured on 2 cores, quiet: sgemm/dgemm of 32x512x512 ran in 0.55 of their
# one-thread time on two, down to 2^19 multiply-adds; but a digits MLP whose products are
# 2^19-2^20 lost 15% per epoch on two, the threads' wake-ups outweighing the work, and
# the VAE, stax, CNN and MLP steps with products from 2^21 gained 20-35%).
# Never more, however large the product: beside one busy process on 2 cores, two BLAS
# threads ran 128x784x512 in 50-80 ms against 7 ms on one, and an exported MLP's
# 360x1024x1024 products made its step 2.6x slower than on one thread.
SHARED_BLAS_MIN_WORK = 2 ** 21

_CBLAS_NAMES = ("cblas_{}", "scipy_cblas_{}64_", "cblas_{}64_", "scipy_cblas_{}")
_lock = threading.Lock()
_state: dict = {}


def _controller():
    """threadpoolctl's controller of the BLAS NumPy loaded (None: none it knows)."""
    if "controller" not in _state:
        ctl = None
        try:
            import threadpoolctl
            for lc in threadpoolctl.ThreadpoolController().lib_controllers:
                if lc.user_api == "blas" and lc.internal_api in ("openblas", "mkl",
                                                                   "blis", "flexiblas"):
                    ctl = lc
                    break
        except Exception:  # noqa: BLE001 - no threadpoolctl view: no BLAS for kernels
            ctl = None
        _state["controller"] = ctl
    return _state["controller"]


def gemm(dtype) -> tuple[str, bool] | None:
    """(symbol, 64-bit integers) of ``cblas_?gemm`` for ``dtype`` (float32/64), made
    known to LLVM; None when no BLAS was found."""
    d = np.dtype(dtype)
    if d not in (np.dtype(np.float32), np.dtype(np.float64)):
        return None
    letter = "d" if d == np.float64 else "s"
    key = f"gemm_{letter}"
    with _lock:
        if key not in _state:
            _state[key] = _find(letter)
        return _state[key]


def _find(letter):
    ctl = _controller()
    if ctl is None:
        return None
    lib = getattr(ctl, "dynlib", None) or ctypes.CDLL(ctl.filepath)
    for pattern in _CBLAS_NAMES:
        name = pattern.format(f"{letter}gemm")
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        import llvmlite.binding as ll
        symbol = f"zerax_cblas_{letter}gemm"
        ll.add_symbol(symbol, ctypes.cast(fn, ctypes.c_void_p).value)
        ilp64 = name.endswith("64_") or "64" in os.path.basename(ctl.filepath)
        return symbol, ilp64
    return None


def available() -> bool:
    return gemm(np.float64) is not None


# --------------------------------------------------------------------------- threads

_idle = [0.0, 1, None]   # [when last read, idle threads then, smoothed busy count]


def _busy_elsewhere() -> float:
    """Threads of other processes running or runnable now: Linux's instantaneous count
    (/proc/loadavg's fourth field) less this process's own running threads (this one,
    and the parallel loops' workers still yielding after a loop: counted, they made a
    step that had just run a parallel loop take its products on one BLAS thread on a
    quiet machine); else the 1-minute load average less one."""
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        return max(0.0, running - _running_here())
    except (OSError, ValueError, IndexError):
        try:
            return max(0.0, os.getloadavg()[0] - 1.0)
        except OSError:
            return 0.0


def _running_here() -> int:
    """This process's threads in the running state (at least this one)."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/stat", "rb") as f:
                # the state follows the parenthesised name, which may hold spaces
                if f.read().rpartition(b")")[2][:3] == b" R ":
                    count += 1
        except OSError:
            continue        # (a thread that ended meanwhile)
    return max(count, 1)


def idle_threads(num_threads: int) -> int:
    """The threads of the setting that other work leaves idle: the setting less the
    threads running beside this one, at least 1; sampled at most every 20 ms (about
    40 us a sample) and smoothed over the last few samples, so a neighbour's threads
    that spin for a moment after their work (NumPy's OpenBLAS) cost a step only that
    moment: sampled every 0.25 s, they held an MLP step on one thread for the whole
    quarter second (5.3 against 4.7 ms beside a NumPy loop).  (It was the 1-minute
    load average, which
    lags by a minute: near a load of 1.5 on two cores its rounding flipped from one
    process to the next, so the same MLP step ran its products on one BLAS thread in
    some processes and on two in others, 7.3 against 5.3 ms; issue 28.)"""
    now = time.monotonic()
    if now - _idle[0] > 0.02:
        busy = _busy_elsewhere()
        smooth = busy if _idle[2] is None else 0.5 * _idle[2] + 0.5 * busy
        _idle[0], _idle[2] = now, smooth
        _idle[1] = max(1, min(num_threads, num_threads - round(smooth)))
    return _idle[1]


def threads_for(work: int, num_threads: int) -> int:
    """BLAS threads inside a program whose largest product does ``work`` multiply-adds."""
    if work >= SHARED_BLAS_MIN_WORK:
        return idle_threads(num_threads)
    return 1


def limited(call, work: int, num_threads):
    """``call`` with BLAS on `threads_for` threads, restored after each call."""
    ctl = _controller()
    if ctl is None:
        return call

    def run(*args):
        want = threads_for(work, num_threads())
        had = ctl.get_num_threads()
        if had == want:
            return call(*args)
        ctl.set_num_threads(want)
        try:
            return call(*args)
        finally:
            ctl.set_num_threads(had)
    run.__wrapped__, run.zerax_threaded = call, True
    return run
