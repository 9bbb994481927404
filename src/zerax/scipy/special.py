"""`zerax.scipy.special`: SciPy's special functions (thin re-exports)."""

from .._src.api.scipy.special import (bessel_jn, beta, betainc, betaln, boxcox, boxcox1p, comb,
                                      digamma, entr, erf, erfc, erfcinv, erfinv, exp1, expi,
                                      expit, expn, factorial, gamma, gammainc, gammaincc,
                                      gammaln, gammasgn, i0, i0e, i1, i1e, iv, ive, j0, j1, jn, jv,
                                      kl_div, log_expit, log_ndtr, log_softmax, loggamma, logit,
                                      logsumexp, multigammaln, ndtr, ndtri, poch, polygamma, psi,
                                      rel_entr, rgamma, softmax, sph_harm, sph_harm_y, xlog1py,
                                      wofz, xlogy, y0, y1, yn, zeta)
