"""Statistics functions of ``zerax.scipy.stats`` beside the distributions (JAX's
``mode``, ``rankdata`` and ``sem``).

The implementation is ``zerax._src.api.scipy.stats._core``; this face re-exports it."""

from ..._src.api.scipy.stats._core import (  # noqa: F401
    ModeResult, mode, rankdata, sem)

__all__ = ['ModeResult', 'mode', 'rankdata', 'sem']
