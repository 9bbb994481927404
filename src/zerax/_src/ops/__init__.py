"""The primitives, grouped by kind; each module declares its primitives with all rules.

Importing this package registers every primitive, and installs into the batching
interpreter and the recording trace (layers below) the shape primitives they bind.
"""

from ..interpreters import batching as _batching
from ..ir import tracing as _tracing
from . import elementwise, shape, slicing, reduce, indexing, linalg, sort, misc  # noqa: F401
from . import cond, scan, while_loop, decompositions  # noqa: F401
from . import fft  # noqa: F401
from . import special_ops  # noqa: F401
from . import bitcast  # noqa: F401
from . import collectives, exchange  # noqa: F401
from . import call, custom_calls, random_bits  # noqa: F401
from . import debug, debug_nans, eig  # noqa: F401
from . import windows  # noqa: F401
from . import sharding  # noqa: F401
from . import taylor  # noqa: F401  (the Taylor-mode rules of all of the above)

from . import sharding_rules  # noqa: F401  (the sharding rules of all of the above)

_batching.install_shape_ops(shape)
_tracing.install_broadcast(shape.broadcast_in_dim_p)
