"""`zerax.lax`: the primitives as functions (JAX's lax namespace, thin re-exports)."""

from .._src.ops.elementwise import (  # noqa: F401
    add, clamp, convert_element_type, cos, cosh, div, exp, integer_pow, log, mul,
    neg, pow, rem, rsqrt, select_n, sign, sin, sinh, sqrt, sub, tanh, eq, ne, lt, le, gt, ge,
    floor, digamma, polygamma, maximum, minimum,
)
from .._src.ops.elementwise import maximum as max, minimum as min  # noqa: F401,A004
from .._src.ops.shape import (  # noqa: F401
    broadcast_in_dim, concatenate, dynamic_slice, dynamic_update_slice, expand_dims, iota,
    pad, reshape, rev, squeeze, transpose,
)
from .._src.ops.shape import slice_p_bind as slice  # noqa: F401
from .._src.ops.reduce import (  # noqa: F401
    argmax, argmin, cummax, cummin, cumprod, cumsum, reduce_max, reduce_min, reduce_prod,
    reduce_sum,
)
from .._src.ops.misc import stop_gradient  # noqa: F401


def select(pred, on_true, on_false):
    """``where(pred, on_true, on_false)`` on equal shapes (JAX's lax.select)."""
    return select_n(pred, on_false, on_true)
from .._src.ops.linalg import dot, dot_general  # noqa: F401,E402
from .._src.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401,E402,A004
