"""zerax.random's distribution samplers: JAX's values (recorded), gradients through
implicit reparameterisation, vmap over keys and over parameters, distribution moments,
and argument errors.

Every reference value below was recorded once from JAX 0.10.2 (JAX_PLATFORMS=cpu,
jax_enable_x64=True, default threefry2x32 / jax_threefry_partitionable=True) by
evaluating the expression beside it with ``R = jax.random``, ``K = R.PRNGKey(42)`` and
printing ``repr(np.asarray(result))``.
"""

import numpy as np
import pytest

import zerax as zx
import zerax.random as R
from zerax import errors
from zerax._src.api.random.gamma import random_gamma_grad

K = R.PRNGKey(42)

RECORDED = {
    "gamma": ("R.gamma(K, np.array([0.1, 0.5, 1.0, 3.0, 20.0]))",
        np.array([2.6047012428169615e-05, 1.4509096904634517e-02, 4.2402125068450430e-01,
       3.3241561468611640e+00, 1.4126565810609454e+01])),
    "gamma32": ("R.gamma(K, np.float32(0.7), (3,), dtype=np.float32)",
        np.array([1.4985034, 0.6783818, 2.116648 ], dtype=np.float32)),
    "loggamma": ("R.loggamma(K, np.array([0.01, 0.5, 2.0]))",
        np.array([-107.42344335838611  ,   -4.232979453538195 ,    1.6027602295240286])),
    "beta": ("R.beta(K, 2.0, 3.0, (3,))",
        np.array([0.35249271773961444 , 0.4080000479067667  , 0.041704708867309884])),
    "dirichlet": ("R.dirichlet(K, np.array([1.0, 2.0, 3.0]))",
        np.array([0.12087604773245773, 0.15736891871086628, 0.721755033556676  ])),
    "chisquare": ("R.chisquare(K, 3.0, (3,))",
        np.array([3.4123750492211147, 1.9269875304255157, 8.271386696089039 ])),
    "f": ("R.f(K, 2.0, 5.0, (3,))",
        np.array([1.0962924941937155 , 0.20156918799090162, 5.355021153241557  ])),
    "t": ("R.t(K, 4.0, (3,))",
        np.array([-0.6868952295334372 , -0.49185716623639475,  2.0658955546227156 ])),
    "generalized_normal": ("R.generalized_normal(K, 3.0, (3,))",
        np.array([-0.3238928432167583 , -0.10285721735653405,  0.24807793419151472])),
    "ball": ("R.ball(K, 3, 2, (2,))",
        np.array([[-0.04422263011031423, -0.26116012882271694, -0.49768540810316086],
       [ 0.4324718391701501 , -0.33135913797182875, -0.18032268701433754]])),
    "poisson": ("R.poisson(K, np.array([0.0, 0.5, 5.0, 15.0, 100.0, 1e4]))",
        np.array([   0,    1,    3,   12,   86, 9906])),
    "binomial": ("R.binomial(K, np.array([5., 10., 100., 1000., "
                 "50.]), np.array([0.9, 0.3, 0.3, 0.6, 0.01]))",
        np.array([  5.,   1.,  21., 583.,   2.])),
    "multinomial": ("R.multinomial(K, 20.0, np.array([0.2, 0.3, 0.5]))",
        np.array([ 5.,  4., 11.])),
    "lognormal": ("R.lognormal(K, 0.5, (3,))",
        np.array([0.9117806140267735 , 0.33793142787224595, 1.0979752215045038 ])),
    "pareto": ("R.pareto(K, 3.0, (3,))",
        np.array([1.203777755582976 , 1.0050540155743009, 1.3291659848108275])),
    "weibull_min": ("R.weibull_min(K, 1.5, 2.0, (3,))",
        np.array([1.1188775647351148 , 0.18446866026808187, 1.3859017817010688 ])),
    "rayleigh": ("R.rayleigh(K, 2.0, (3,))",
        np.array([2.6101486342144358, 5.795884058247333 , 2.1068921475580344])),
    "wald": ("R.wald(K, 1.5, (3,))",
        np.array([3.529976562489182  , 1.0915612562479036 , 0.24683423568313878])),
    "geometric": ("R.geometric(K, 0.3, (6,))",
        np.array([ 3, 12,  2,  1,  2,  2])),
    "triangular": ("R.triangular(K, 0.0, 1.0, 3.0, (3,))",
        np.array([1.1453748087280424 , 0.21220322463606378, 1.4015215069939824 ])),
    "maxwell": ("R.maxwell(K, (3,))",
        np.array([2.1856811186160847, 0.866467331447922 , 0.8407561365101462])),
    "double_sided_maxwell": ("R.double_sided_maxwell(K, 1.0, 2.0, (3,))",
        np.array([-2.6956351413757687, -3.6877952518604795,  4.7138077011187836])),
    "mvn_cholesky": ("R.multivariate_normal(K, np.array([1.0, -1.0]), "
                     "np.array([[2.0, 0.5], [0.5, 1.0]]), (2,))",
        np.array([[ 0.738778144692716  , -3.094990487430765  ],
       [ 1.2643667926365265 , -0.36118650287186393]])),
    "mvn_eigh": ("R.multivariate_normal(K, np.array([1.0, -1.0]), "
                 "np.array([[2.0, 0.5], [0.5, 1.0]]), (2,), method='eigh')",
        np.array([[ 3.9152426326030754 ,  0.38556030013201914],
       [ 0.22333734473946698, -1.5018747991033103 ]])),
    "mvn_svd": ("R.multivariate_normal(K, np.array([1.0, -1.0]), "
                "np.array([[2.0, 0.5], [0.5, 1.0]]), (2,), method='svd')",
        np.array([[ 1.9929121293217675, -2.6800237219898024],
       [ 0.5347875153627165, -0.6025890615567054]])),
    "orthogonal": ("R.orthogonal(K, 3)",
        np.array([[-0.24985348168396393 , -0.9679399318215844  ,  0.025797792068838043],
       [ 0.8281911415011259  , -0.19982480469811714 ,  0.5236119560957534  ],
       [ 0.5016698823224919  , -0.15219177314357468 , -0.851566200220483   ]])),
    "gumbel": ("R.gumbel(K, (3,))",
        np.array([ 0.16062720630382138, -1.4348544993307841 ,  0.5890136500161952 ])),
    "categorical": ("R.categorical(K, np.log(np.array([[.1, .2, "
                    ".7], [.5, .25, .25]])), shape=(3, 2))",
        np.array([[2, 0],
       [2, 0],
       [2, 2]])),
    "exponential": ("R.exponential(K, (3,))",
        np.array([0.5563942243855916  , 0.015123860720489336, 0.8536549993431988  ])),
    "laplace": ("R.laplace(K, (3,))",
        np.array([ 0.15846230602649014,  3.5058868215207473 , -0.16050781878325354])),
    "logistic": ("R.logistic(K, (3,))",
        np.array([-0.29521526220084393, -4.183910141360207  ,  0.29878068416298553])),
    "cauchy": ("R.cauchy(K, (3,))",
        np.array([ -0.23434604341667786, -21.19070234669309   ,   0.23723777098183235])),
}

# integers and samplers that are exact float arithmetic on the bits equal JAX's exactly;
# the others go through log/exp/sqrt/erf_inv/lgamma (NumPy's or zerax's, not XLA's)
EXACT = {"poisson", "binomial", "multinomial", "geometric", "categorical", "pareto",
         "weibull_min", "rayleigh", "triangular", "exponential", "laplace", "logistic",
         "cauchy", "gumbel"}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_values_match_jax(name):
    expr, expected = RECORDED[name]
    got = np.asarray(eval(expr))   # noqa: S307 - a literal expression of this file
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if name in EXACT:
        np.testing.assert_array_equal(got, expected)
    else:
        rtol = 4e-6 if expected.dtype == np.float32 else 2e-13
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-300)


def test_gumbel_highest_float32_matches_jax():
    # recorded from jax.random.gumbel(K, (4,), jnp.float32, mode="highest"): 64 random
    # bits per sample through JAX's clz-based float construction, then float32 logs
    got = np.asarray(R.gumbel(K, (4,), np.float32, mode="highest"))
    expected = np.array([0.3992578089237213, -0.129975825548172, 0.04309510067105293,
                         0.19444338977336884], np.float32)
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-7)
    # float64 "highest" is "high", as in JAX
    np.testing.assert_array_equal(np.asarray(R.gumbel(K, (3,), mode="highest")),
                                  np.asarray(R.gumbel(K, (3,), mode="high")))


def test_gamma_gradients_match_jax():
    # recorded from jax.grad of the same functions
    g = zx.grad(lambda a: R.gamma(K, a, (4,)).sum())(2.5)
    np.testing.assert_allclose(float(g), 4.76833925, rtol=1e-8)
    g = zx.grad(lambda a: R.gamma(K, a).sum())(np.array([0.3, 1.0, 4.0, 30.0]))
    np.testing.assert_allclose(np.asarray(g), [0.42744183, 0.82177986, 1.44336146, 1.03430863],
                               rtol=1e-7)
    g = zx.grad(lambda a: R.loggamma(K, a).sum())(np.array([0.05, 1.0, 4.0]))
    np.testing.assert_allclose(np.asarray(g), [4.17256310e+02, 1.59201740e+00, 1.80836474e-01],
                               rtol=1e-7)
    ga, gb = zx.grad(lambda a, b: R.beta(K, a, b, (3,)).sum(), argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(ga), float(gb)], [0.39655554, -0.22371693], rtol=1e-7)
    g = zx.grad(lambda al: R.dirichlet(K, al)[0])(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.11939708, -0.01218247, -0.02033078],
                               rtol=1e-6)
    g = zx.grad(lambda d: R.t(K, d, (3,)).sum())(4.0)
    np.testing.assert_allclose(float(g), -0.02476513, rtol=1e-6)


def test_random_gamma_grad_is_the_implicit_derivative():
    # d sample / d a = -(dF/da)(a, x) / f(a, x) for the Gamma CDF F and density f;
    # dF/da by a central difference of the regularised incomplete gamma (a series)
    from math import exp, lgamma, log

    def cdf(a, x, terms=400):
        s, term = 0.0, 1.0 / a
        for n in range(terms):
            s += term
            term *= x / (a + n + 1)
        return s * exp(a * log(x) - x - lgamma(a))

    for a, x in [(0.5, 0.3), (2.0, 1.5), (3.0, 7.0), (10.0, 12.0)]:
        h = 1e-6
        dfda = (cdf(a + h, x) - cdf(a - h, x)) / (2 * h)
        pdf = exp((a - 1) * log(x) - x - lgamma(a))
        got = float(random_gamma_grad(np.float64(a), np.float64(x)))
        np.testing.assert_allclose(got, -dfda / pdf, rtol=1e-6)


def test_vmap_over_keys_and_parameters():
    keys = R.split(K, 3)
    alphas = np.array([0.5, 2.0, 7.0])
    out = zx.vmap(lambda k, a: R.gamma(k, a))(keys, alphas)
    # recorded from jax.vmap of the same function
    np.testing.assert_allclose(np.asarray(out), [0.12584848, 2.19926064, 5.81978763], rtol=1e-7)
    stacked = [float(R.gamma(keys[i], alphas[i])) for i in range(3)]
    np.testing.assert_array_equal(np.asarray(out), stacked)
    lam = np.array([1.0, 4.0, 30.0])
    out = zx.vmap(lambda k, lm: R.poisson(k, lm, (2,)))(keys, lam)
    stacked = np.stack([np.asarray(R.poisson(keys[i], lam[i], (2,))) for i in range(3)])
    np.testing.assert_array_equal(np.asarray(out), stacked)


def test_moments():
    k1, k2, k3, k4 = R.split(R.PRNGKey(7), 4)
    n = 20000
    x = np.asarray(R.gamma(k1, 3.0, (n,)))
    assert abs(x.mean() - 3.0) < 0.1 and abs(x.var() - 3.0) < 0.3
    x = np.asarray(R.poisson(k2, 7.5, (n,)))
    assert abs(x.mean() - 7.5) < 0.1 and abs(x.var() - 7.5) < 0.4
    x = np.asarray(R.binomial(k3, 40.0, 0.3, (n,)))
    assert abs(x.mean() - 12.0) < 0.15 and abs(x.var() - 8.4) < 0.5
    x = np.asarray(R.beta(k4, 2.0, 5.0, (n,)))
    assert abs(x.mean() - 2 / 7) < 0.01


def test_multivariate_normal_and_orthogonal_structure():
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    x = np.asarray(R.multivariate_normal(R.PRNGKey(3), np.zeros(2), cov, (20000,)))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    q = np.asarray(R.orthogonal(K, 4, (2,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (2, 4, 4)),
                               atol=1e-12)
    assert R.orthogonal(K, 2, m=5).shape == (2, 5)


def test_errors():
    with pytest.raises(errors.ShapeError, match="parameter a of shape"):
        R.gamma(K, np.ones(3), (4,))
    with pytest.raises(errors.ShapeError, match="ndim"):
        R.dirichlet(K, 1.0)
    with pytest.raises(errors.ShapeError, match="cov"):
        R.multivariate_normal(K, np.zeros(2), np.eye(3))
    with pytest.raises(errors.ZeraxValueError, match="method"):
        R.multivariate_normal(K, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(errors.KeyTypeError):
        R.poisson(np.zeros(4, np.uint32), 3.0)
    with pytest.raises(errors.ShapeError, match="lam"):
        R.poisson(K, np.ones(2), (3,))
