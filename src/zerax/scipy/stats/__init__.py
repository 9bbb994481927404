"""`zerax.scipy.stats`: JAX's ``jax.scipy.stats`` on zerax values.

Each distribution is a module of functions (``norm.logpdf(x, loc, scale)``, ...) with
JAX's names and signatures, composed from ``zerax.numpy`` and ``zerax.scipy.special``,
so every function differentiates, vectorises and compiles; beside them ``gaussian_kde``,
``mode``, ``rankdata`` and ``sem``.  Arguments are promoted to
one floating dtype (float64 for integers) and broadcast.
"""

from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ._core import ModeResult, mode, rankdata, sem  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
           "truncnorm", "uniform", "vonmises", "wrapcauchy", "gaussian_kde", "mode", "rankdata",
           "sem", "ModeResult"]
