"""The Numba backend: IR -> fused loops -> Python source -> ``numba.njit``.

``backend`` is the `base.Backend` of this folder; importing the package fills the
lowering tables (``rules.py``) from the ``lower_*`` modules, one per primitive group.
"""

from .compile import compile_jaxpr, generate_source  # noqa: F401
from . import lower_control_flow, lower_decompositions, lower_linalg  # noqa: F401  (rule tables)
from . import lower_calls, lower_debug  # noqa: F401  (rule tables)
from .executable import backend  # noqa: F401
from . import lower_collectives, lower_elementwise, lower_misc  # noqa: F401  (rule tables)
from . import host_loops  # noqa: F401  (host rules of loops whose bodies call MPI)
from . import lower_shape, lower_reduce, lower_indexing  # noqa: F401  (fill the rule tables)
