"""`zerax.scipy.optimize`: ``minimize`` (BFGS, L-BFGS, Newton-CG, trust-ncg) with JAX's
``OptimizeResults``, ``least_squares`` (Levenberg-Marquardt), and SciPy's
``root_scalar`` (Newton and Halley, derivatives from Taylor mode).

The implementation is ``zerax._src.api.scipy.optimize`` (and ``.roots``); this face
re-exports it."""

from .._src.api.scipy.optimize import (  # noqa: F401
    OptimizeResults, minimize, line_search, LeastSquaresResults, least_squares)
from .._src.api.scipy.roots import RootResults, root_scalar  # noqa: F401

__all__ = ['OptimizeResults', 'minimize', 'line_search', 'LeastSquaresResults', 'least_squares',
           'RootResults', 'root_scalar']
