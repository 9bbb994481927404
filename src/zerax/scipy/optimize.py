"""`zerax.scipy.optimize`: ``minimize`` (BFGS, L-BFGS, Newton-CG, trust-ncg) with JAX's
``OptimizeResults``, and ``least_squares`` (Levenberg-Marquardt).

The implementation is ``zerax._src.api.scipy.optimize``; this face re-exports it."""

from .._src.api.scipy.optimize import (  # noqa: F401
    OptimizeResults, minimize, line_search, LeastSquaresResults, least_squares)

__all__ = ['OptimizeResults', 'minimize', 'line_search', 'LeastSquaresResults', 'least_squares']
