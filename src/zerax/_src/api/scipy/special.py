"""The ``scipy.special`` namespace that the ``zerax.scipy`` implementations use (the
functions live in ``api/scipy_special.py`` and ``api/scipy_special_more.py``)."""

from ..scipy_special import (digamma, erf, erfc, erfinv, expit, gammaln, logit, ndtr, polygamma, xlog1py, xlogy)  # noqa: F401
from ..scipy_special_more import (bessel_jn, beta, betainc, betaln, boxcox, boxcox1p, comb, entr, erfcinv, exp1, expi, expn, factorial, gamma, gammainc, gammaincc, gammasgn, i0, i0e, i1, i1e, j0, j1, kl_div, log_expit, log_ndtr, log_softmax, loggamma, logsumexp, multigammaln, ndtri, poch, rel_entr, softmax, y0, y1, zeta)  # noqa: F401
