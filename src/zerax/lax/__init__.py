"""`zerax.lax`: the primitives as functions, and JAX's lax conveniences (thin re-exports).

As in JAX, lax functions do not promote or broadcast; Python scalars are weak.
"""

from .._src.lax.ops_api import (conj, imag, integer_pow, real, select_n, polygamma)
from .._src.lax.ops_api import complex  # noqa: F401,A004
from .._src.lax.ops_api import (broadcast_in_dim, concatenate, dynamic_slice, dynamic_update_slice, expand_dims, pad, reshape, rev, squeeze, transpose)
from .._src.lax.ops_api import slice  # noqa: F401,A004
from .._src.lax.ops_api import reduce_max, reduce_min, reduce_prod, reduce_sum
from .._src.lax.ops_api import stop_gradient  # noqa: F401
from .._src.lax.parallel import (all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin, ppermute, pshuffle, psum, psum_scatter)
from .._src.lax.ops_api import bitcast_convert_type  # noqa: F401
from .._src.lax.ops_api import dot, dot_general  # noqa: F401
from .._src.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop
from .._src.lax.lax import Precision  # noqa: F401
from .._src.lax.lax import (abs, acos, acosh, asin, asinh, associative_scan, atan, atan2, atanh, batch_matmul, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, broadcast, broadcast_to_rank, broadcasted_iota, cbrt, ceil, collapse, cumlogsumexp, dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_index_in_dim, dynamic_update_slice_in_dim, erf, erf_inv, erfc, exp2, expm1, full, full_like, index_in_dim, is_finite, lgamma, log1p, logistic, reciprocal, reduce_and, reduce_or, round, shift_left, shift_right_arithmetic, slice_in_dim, sort, sort_key_val, square, tan, top_k, cumsum, cumprod, cummax, cummin, reduce, add, clamp, cos, cosh, digamma, div, eq, exp, floor, ge, gt, le, log, lt, max, min, mul, ne, neg, pow, rem, rsqrt, sign, sin, sinh, sqrt, sub, tanh, split, tile, empty, stack, unstack, shift_right_logical, population_count, clz, reduce_xor, nextafter)
from .._src.lax.windowed import (ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_general_dilated_patches, conv_general_permutations, conv_transpose, conv_with_general_padding, padtype_to_pads, reduce_window, conv_general_shape_tuple, conv_transpose_shape_tuple, reduce_window_shape_tuple)
maximum, minimum = max, min
from .._src.numpy.shape_ops import broadcast_shapes  # noqa: E402,F401
from .._src.lax.lax import select  # noqa: E402,F401
from .._src.lax.ops_api import argmax, argmin, convert_element_type, iota  # noqa: E402,F401
from .._src.lax.lax import optimization_barrier, with_sharding_constraint  # noqa: E402,F401
from . import linalg  # noqa: E402,F401  (zerax.lax.linalg: the decompositions)
from .._src.ops.fft import FftType  # noqa: E402,F401
from .._src.lax.ops_api import fft  # noqa: E402,F401
from .._src.lax.ops_api import (bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a, igammac, random_gamma_grad, zeta)
