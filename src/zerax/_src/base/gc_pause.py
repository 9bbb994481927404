"""Python's cyclic garbage collector paused while a program compiles.

Tracing, code generation and the translation of kernels to LLVM IR create many short-lived
objects (equations, source lines, AST nodes, IR values) that reference counting frees on
its own. Each time enough of them have been allocated, the collector runs, and its
oldest generation walks every live object: over a large program the compile spent a
growing share of its time there (a 5,000-equation program, 12%), so compile time grew
faster than the program. `gc_paused` turns the collector off for the duration of a
compile and back on after it (re-entrant, thread-safe; a collector the user turned off
stays off); cycles made meanwhile are collected at its next run.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0            # compiles running now, in any thread
_resume = False       # whether the collector was on when the first of them started


@contextmanager
def gc_paused():
    """Keep the cyclic collector off inside the block (see the module docstring)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
