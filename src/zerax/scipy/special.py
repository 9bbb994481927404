"""`zerax.scipy.special`: SciPy's special functions (thin re-exports)."""

from .._src.scipy_special import (  # noqa: F401
    digamma, erf, erfc, erfinv, expit, gammaln, log_softmax, logit, logsumexp, ndtr,
    polygamma, softmax, xlog1py, xlogy,
)
