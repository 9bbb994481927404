"""`zerax.random`: JAX's splittable counter-based PRNG (threefry2x32), bit for bit.

Keys are pure values: split them, never reuse them.  Every sampler is a pure function
of its key, so it runs eagerly and under ``jit``, ``vmap`` and ``grad``.  Results equal
JAX 0.10's (default ``jax_threefry_partitionable=True``, under ``jax_enable_x64``).

>>> import zerax.random as zr
>>> k1, k2 = zr.split(zr.key(0))
>>> zr.normal(k1, (3,)).shape
(3,)
"""

from ._src.api.random.keys import (KeyDtype, PRNGKey, PRNGKeyArray, bits, clone, fold_in, key, key_data, key_impl, split, wrap_key_data)
from ._src.api.random.samplers import (bernoulli, categorical, cauchy, choice, exponential, gumbel, laplace, logistic, normal, permutation, rademacher, randint, truncated_normal, uniform)
from ._src.api.random.gamma import (ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t)
from ._src.api.random.discrete import binomial, geometric, multinomial, poisson
from ._src.api.random.multivariate import multivariate_normal, orthogonal
from ._src.api.random.transformed import (double_sided_maxwell, lognormal, maxwell, pareto, rayleigh,
                                          triangular, wald, weibull_min)

__all__ = [
    "KeyDtype", "PRNGKey", "PRNGKeyArray", "ball", "bernoulli", "beta", "binomial", "bits",
    "categorical", "cauchy", "chisquare", "choice", "clone", "dirichlet",
    "double_sided_maxwell", "exponential", "f", "fold_in", "gamma", "generalized_normal",
    "geometric", "gumbel", "key", "key_data", "key_impl", "laplace", "loggamma", "logistic",
    "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal",
    "pareto", "permutation", "poisson", "rademacher", "randint", "rayleigh", "split", "t",
    "triangular", "truncated_normal", "uniform", "wald", "weibull_min", "wrap_key_data",
]
