"""The NumPy API composed from zerax primitives (no rules of its own).

Submodules by concept: ufuncs (elementwise), creation, shape_ops, reductions,
indexing_ops, linalg_ops.  Each defines ``__all__``; this package re-exports them.
"""

from .ufuncs import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .shape_ops import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .indexing_ops import *  # noqa: F401,F403
from .linalg_ops import *  # noqa: F401,F403
from . import ufuncs, creation, shape_ops, reductions, indexing_ops, linalg_ops

__all__ = sorted(set(ufuncs.__all__ + creation.__all__ + shape_ops.__all__ + reductions.__all__
                     + indexing_ops.__all__ + linalg_ops.__all__))
