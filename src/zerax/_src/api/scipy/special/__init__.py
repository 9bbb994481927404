"""SciPy's special functions on zerax values (``zerax.scipy.special``, JAX's names and
signatures), one module per family: the error functions and the normal distribution's
(``error_functions``), the gamma family (``gamma_functions``), Bessel functions
(``bessel``), spherical harmonics, zeta and the exponential integrals (``zeta_expint``),
entropies, and the logistic and log-domain functions (``log_domain``).

They are compositions of primitives (erf, lgamma, digamma, polygamma and the iterative
kernels of ``ops/special_ops.py``); float32 stays float32, integers compute in float64.
This package is the namespace the ``zerax.scipy`` implementations (stats, ...) use.
"""

from .bessel import (bessel_jn, i0, i0e, i1, i1e, iv, ive, j0, j1, jn, jv, y0, y1,  # noqa: F401
                     yn)
from .entropy import entr, kl_div, rel_entr  # noqa: F401
from .error_functions import (erf, erfc, erfcinv, erfinv, log_ndtr, ndtr, ndtri,  # noqa: F401
                              wofz)
from .gamma_functions import (beta, betainc, betaln, comb, digamma, factorial, gamma,  # noqa: F401
                              gammainc, gammaincc, gammaln, gammasgn, loggamma, multigammaln,
                              poch, polygamma, psi, rgamma)
from .log_domain import (boxcox, boxcox1p, expit, log_expit, log_softmax, logit,  # noqa: F401
                         logsumexp, softmax, xlog1py, xlogy)
from .spherical_harmonics import sph_harm, sph_harm_y  # noqa: F401
from .zeta_expint import exp1, expi, expn, zeta  # noqa: F401
