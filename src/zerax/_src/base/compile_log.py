"""What users see of a compile: a notice when one runs long, and ``log_compiles``.

A cold compile can take seconds (LLVM's optimiser on a large kernel); without
a word the program looks hung.  `compiling` wraps one compile (a backend's, including
the lazy one inside a first call): past ``config.compile_notice_s`` seconds (2 by
default; None turns it off) it writes one line to stderr saying what is being compiled,
and when the compile ends it says how long it took.  With
``zerax.config.update("log_compiles", True)`` (JAX's ``jax_log_compiles``) every
compile is logged on the ``"zerax"`` logger at WARNING level, start and finish, with
its time, as JAX logs them.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from contextlib import contextmanager

from .config import config
from .gc_pause import gc_paused

logger = logging.getLogger("zerax")


@contextmanager
def compiling(what: str, detail: str = "", elapsed: float = 0.0):
    """Time the compile of ``what`` (e.g. ``"jit(loss)"``), with its notice and log;
    ``elapsed`` seconds of it were spent before the block.

    >>> import zerax as zx
    >>> with compiling("jit(f)", "1 equation"):
    ...     pass
    """
    log = bool(config.log_compiles)
    if log:
        logger.warning("Compiling %s%s", what, f" ({detail})" if detail else "")
    start = time.perf_counter() - elapsed      # work already done for this compile
    after = config.compile_notice_s
    notice = _Notice(what, detail, None if after is None else max(after - elapsed, 0.001))
    try:
        with gc_paused():
            yield
    finally:
        notice.cancel()
        seconds = time.perf_counter() - start
        notice.finish(seconds)
        if log:
            logger.warning("Finished compiling %s in %.3f s", what, seconds)


class _Notice:
    """The line on stderr for a compile that runs past ``after`` seconds."""

    def __init__(self, what, detail, after):
        self.shown = False
        self._lock = threading.Lock()
        self._done = False
        self.text = f"zerax: compiling {what}{f' ({detail})' if detail else ''}..."
        self._timer = None
        if after is not None and after > 0:
            self._timer = threading.Timer(float(after), self._show)
            self._timer.daemon = True
            self._timer.start()

    def _show(self):
        with self._lock:
            if self._done:
                return
            self.shown = True
            _write(self.text + (" " if _tty() else "\n"))

    def cancel(self):
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()

    def finish(self, seconds):
        if self.shown:
            _write(f"done in {seconds:.1f} s\n" if _tty()
                   else f"{self.text[:-3]}: done in {seconds:.1f} s\n")


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _write(text):
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (AttributeError, ValueError, OSError):   # no usable stderr (closed, None)
        pass
