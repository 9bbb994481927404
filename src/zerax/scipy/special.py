"""`zerax.scipy.special`: SciPy's special functions (thin re-exports)."""

from .._src.api.scipy_special import (digamma, erf, erfc, erfinv, expit, gammaln, logit, ndtr, polygamma, xlog1py, xlogy)
from .._src.api.scipy_special_more import (bessel_jn, beta, betainc, betaln, boxcox, boxcox1p, comb, entr, erfcinv, exp1, expi, expn, factorial, gamma, gammainc, gammaincc, gammasgn, i0, i0e, i1, i1e, iv, j0, j1, jv, kl_div, log_expit, log_ndtr, log_softmax, loggamma, logsumexp, multigammaln, ndtri, poch, rel_entr, softmax, sph_harm, sph_harm_y, y0, y1, zeta)
