"""The primitives, grouped by kind; each module declares its primitives with all rules.

Importing this package registers every primitive."""

from . import elementwise, shape, slicing, reduce, indexing, linalg, sort, misc  # noqa: F401
from . import cond, scan, while_loop, decompositions  # noqa: F401
from . import fft  # noqa: F401
from . import special_ops  # noqa: F401
from . import bitcast  # noqa: F401
from . import collectives  # noqa: F401
