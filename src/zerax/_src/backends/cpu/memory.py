"""The process's allocator settings that compiled programs' arrays need.

**Freed arrays are reused, not unmapped** (`tune_malloc`, applied when the CPU backend is
loaded).  A program's outputs are new arrays (NumPy's, i.e. ``malloc``), and
a training step returns many of them: an Adam update of 10^6 float32 parameters in 10
arrays returns 30 arrays of 400 KB, 12 MB a call.  glibc's defaults serve arrays above
its mmap threshold with ``mmap`` and hand memory freed at the top of the heap back to
the kernel beyond twice that threshold, so each call wrote into fresh pages: one page
fault per 4 KiB (about 2,800 faults, a third to two thirds of that step's time).  With
``mallopt`` zerax raises the mmap threshold to glibc's maximum (32 MiB) and keeps up to
`TRIM_THRESHOLD` bytes of freed memory for reuse: the next call's arrays take the pages
the last call's arrays gave back, already mapped.  What is kept is bounded (glibc keeps
at most the trim threshold free at the heap's top; arrays of 32 MiB and more are still
mapped and unmapped, and NumPy asks for huge pages for them), and this is the
allocator NumPy uses too, so eager code gains alike.

It is process-wide, so it is skipped when the user tuned glibc's allocator already
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``, a
``glibc.malloc`` tunable in ``GLIBC_TUNABLES``), and ``ZERAX_MALLOC_TUNING=0`` turns it
off.  Other C libraries (macOS, musl) are left alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20            # glibc's largest allowed value (64-bit)
TRIM_THRESHOLD = 256 << 20           # at most this much freed memory is kept
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_MMAP_MAX_")

MALLOC_TUNED = False   # whether `tune_malloc` changed the allocator's settings


def _trim_threshold() -> int:
    """`TRIM_THRESHOLD`, or 1/16 of physical memory on a small machine (at least 32 MiB)."""
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return TRIM_THRESHOLD
    return max(32 << 20, min(TRIM_THRESHOLD, ram // 16))


def tune_malloc() -> bool:
    """Keep freed arrays' memory mapped for reuse (see the module's docstring); returns
    whether glibc's settings were changed.  Runs once per process.

    >>> tune_malloc() in (True, False)
    True
    """
    global MALLOC_TUNED
    if MALLOC_TUNED:
        return True
    off = os.environ.get("ZERAX_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "off")
    if off or not sys.platform.startswith("linux"):
        return False
    if any(k in os.environ for k in _USER_SETTINGS) or \
            "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    # glibc only: other C libraries' mallopt take other parameters, or none
    if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # Setting either turns off glibc's own adjustment of both, so both are set.
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, _trim_threshold()) == 1 and ok
    MALLOC_TUNED = ok
    return ok

