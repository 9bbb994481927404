"""zerax.random in JAX's default 32-bit mode (``jax_enable_x64`` off): the same keys give
JAX's default-mode numbers, eagerly and under jit, vmap and grad.

With x64 off a Python seed keeps its low 32 bits, samplers without a dtype draw float32
(uniform from 23 mantissa bits, normal through float32 erf_inv), integer samplers give
int32, ``bits`` uint32, and integer parameters become float32.

Every reference value below was recorded once from JAX 0.10.2 (JAX_PLATFORMS=cpu,
jax_enable_x64=False, default threefry2x32 / jax_threefry_partitionable=True) by
evaluating the expression beside it with ``R = jax.random``, ``K = R.PRNGKey(42)`` and
printing ``repr(np.asarray(result))``.
"""

import warnings

import numpy as np
import pytest

import zerax as zx
import zerax.random as R

RECORDED = {
    "seed_neg1": ("R.key_data(R.PRNGKey(-1))",
        np.array([         0, 4294967295], dtype=np.uint32)),
    "seed_2_32p5": ("R.key_data(R.PRNGKey(2 ** 32 + 5))",
        np.array([0, 5], dtype=np.uint32)),
    "seed_2_40": ("R.key_data(R.PRNGKey(2 ** 40))",
        np.array([0, 0], dtype=np.uint32)),
    "seed_np_int64": ("R.key_data(R.PRNGKey(np.int64(2 ** 40 + 3)))",
        np.array([0, 3], dtype=np.uint32)),
    "seed_2_31": ("R.key_data(R.PRNGKey(2 ** 31))",
        np.array([         0, 2147483648], dtype=np.uint32)),
    "bits": ("R.bits(K, (3,))",
        np.array([2098992034, 2919706841, 2646866425], dtype=np.uint32)),
    "split": ("R.split(K, 3)",
        np.array([[1832780943,  270669613],
         [  64467757, 2916123636],
         [2465931498,  255383827]], dtype=np.uint32)),
    "fold_in": ("R.fold_in(K, 7)",
        np.array([2547012911, 1371500959], dtype=np.uint32)),
    "uniform": ("R.uniform(K, (5,))",
        np.array([0.48870957, 0.6797972 , 0.6162715 , 0.5610161 , 0.4506446 ],
         dtype=np.float32)),
    "uniform_scaled": ("R.uniform(K, (4,), minval=-2.0, maxval=3.0)",
        np.array([0.44354784, 1.3989859 , 1.0813575 , 0.8050804 ], dtype=np.float32)),
    "normal": ("R.normal(K, (5,))",
        np.array([-0.028304616,  0.46713185 ,  0.29570296 ,  0.15354592 , -0.12403282 ],
         dtype=np.float32)),
    "normal_key0": ("R.normal(R.PRNGKey(0), (4,))",
        np.array([ 1.6226422 ,  2.0252647 , -0.43359444, -0.07861735], dtype=np.float32)),
    "normal_c": ("R.normal(K, (2,), complex)",
        np.array([ 0.05368746+0.42833984j, -0.34389618+0.5650095j ], dtype=np.complex64)),
    "truncated_normal": ("R.truncated_normal(K, -1.0, 2.0, (4,))",
        np.array([0.14770006, 0.5684449 , 0.4210255 , 0.29997   ], dtype=np.float32)),
    "randint": ("R.randint(K, (8,), -5, 100)",
        np.array([94, 49, 76, -1, 84, 19, 12, 67], dtype=np.int32)),
    "randint_big": ("R.randint(K, (4,), 0, 2 ** 31 - 1)",
        np.array([ 977810629, 1236381715,  780371127, 1127988417], dtype=np.int32)),
    "permutation": ("R.permutation(K, 10)",
        np.array([7, 4, 2, 5, 3, 6, 8, 9, 0, 1], dtype=np.int32)),
    "permutation_arr": ("R.permutation(K, np.arange(6.0))",
        np.array([4., 2., 5., 3., 0., 1.], dtype=np.float32)),
    "choice": ("R.choice(K, 10, (4,), replace=False)",
        np.array([7, 4, 2, 5], dtype=np.int32)),
    "choice_p": ("R.choice(K, 5, (6,), p=np.array([.1, .2, .3, .2, .2]))",
        np.array([2, 2, 2, 2, 2, 2], dtype=np.int32)),
    "bernoulli": ("R.bernoulli(K, 0.3, (10,))",
        np.array([False, False, False, False, False, False, True, False, False, False])),
    "rademacher": ("R.rademacher(K, (6,))",
        np.array([ 1, -1, -1, -1,  1, -1], dtype=np.int32)),
    "gamma": ("R.gamma(K, np.array([0.1, 0.5, 1.0, 3.0, 20.0]))",
        np.array([1.0568515e-02, 5.0632739e-01, 2.0072460e+00, 1.9913787e+00,
         1.6766413e+01], dtype=np.float32)),
    "loggamma": ("R.loggamma(K, np.array([0.01, 0.5, 2.0]))",
        np.array([-53.09775  ,  -0.6805717,   1.2532883], dtype=np.float32)),
    "beta": ("R.beta(K, 2.0, 3.0, (3,))",
        np.array([0.43196177, 0.3128183 , 0.6368728 ], dtype=np.float32)),
    "dirichlet": ("R.dirichlet(K, np.array([1.0, 2.0, 3.0]))",
        np.array([0.26473245, 0.1347997 , 0.60046774], dtype=np.float32)),
    "chisquare": ("R.chisquare(K, 3.0, (3,))",
        np.array([5.870714 , 1.397851 , 5.5594234], dtype=np.float32)),
    "f": ("R.f(K, 2.0, 5.0, (3,))",
        np.array([0.6068869 , 0.07628862, 0.13752663], dtype=np.float32)),
    "t": ("R.t(K, 4.0, (3,))",
        np.array([ 0.08621217, -1.2958956 ,  2.0797083 ], dtype=np.float32)),
    "generalized_normal": ("R.generalized_normal(K, 3.0, (3,))",
        np.array([-0.69371086, -0.27624452,  0.83346117], dtype=np.float32)),
    "ball": ("R.ball(K, 3, 2, (2,))",
        np.array([[ 0.3234023  ,  0.06133875 ,  0.018243387],
         [ 0.43724132 , -0.077053934,  0.35943848 ]], dtype=np.float32)),
    "poisson": ("R.poisson(K, np.array([0.0, 0.5, 5.0, 15.0, 100.0, 1e4]))",
        np.array([   0,    1,    3,   12,   86, 9906], dtype=np.int32)),
    "binomial": ("R.binomial(K, np.array([5., 10., 100., 1000., 50.]), "
                 "np.array([0.9, 0.3, 0.3, 0.6, 0.01]))",
        np.array([  5.,   5.,  25., 611.,   1.], dtype=np.float32)),
    "multinomial": ("R.multinomial(K, 20.0, np.array([0.2, 0.3, 0.5]))",
        np.array([ 4.,  4., 12.], dtype=np.float32)),
    "lognormal": ("R.lognormal(K, 0.5, (3,))",
        np.array([0.9859474, 1.2630961, 1.1593407], dtype=np.float32)),
    "pareto": ("R.pareto(K, 3.0, (3,))",
        np.array([1.2505779, 1.4617002, 1.3761275], dtype=np.float32)),
    "weibull_min": ("R.weibull_min(K, 1.5, 2.0, (3,))",
        np.array([1.2285517, 1.6007191, 1.4680243], dtype=np.float32)),
    "rayleigh": ("R.rayleigh(K, 2.0, (3,))",
        np.array([2.3933022, 1.7571814, 1.9678774], dtype=np.float32)),
    "wald": ("R.wald(K, 1.5, (3,))",
        np.array([1.6461202 , 2.6983466 , 0.35188103], dtype=np.float32)),
    "geometric": ("R.geometric(K, 0.3, (6,))",
        np.array([3, 2, 2, 2, 3, 2], dtype=np.int32)),
    "triangular": ("R.triangular(K, 0.0, 1.0, 3.0, (3,))",
        np.array([1.2485027, 1.6139203, 1.4826434], dtype=np.float32)),
    "maxwell": ("R.maxwell(K, (3,))",
        np.array([0.5535825 , 0.29328507, 1.708603  ], dtype=np.float32)),
    "double_sided_maxwell": ("R.double_sided_maxwell(K, 1.0, 2.0, (3,))",
        np.array([-1.7620435 , -0.35137796,  5.4440427 ], dtype=np.float32)),
    "mvn_cholesky": ("R.multivariate_normal(K, np.array([1.0, -1.0]), "
                 "np.array([[2.0, 0.5], [0.5, 1.0]]), (2,))",
        np.array([[ 0.95997125, -0.5730454 ],
         [ 1.4181871 , -0.75182414]], dtype=np.float32)),
    "mvn_eigh": ("R.multivariate_normal(K, np.array([1.0, -1.0]), np.array([[2.0, "
                 "0.5], [0.5, 1.0]]), (2,), method='eigh')",
        np.array([[ 0.34919482, -1.242292  ],
         [ 0.89001447, -1.3305593 ]], dtype=np.float32)),
    "mvn_svd": ("R.multivariate_normal(K, np.array([1.0, -1.0]), np.array([[2.0, "
                 "0.5], [0.5, 1.0]]), (2,), method='svd')",
        np.array([[ 0.87967014, -0.59961534],
         [ 0.5418118 , -1.0417985 ]], dtype=np.float32)),
    "orthogonal": ("R.orthogonal(K, 3)",
        np.array([[-0.0195297  ,  0.99526775 ,  0.095189475],
         [ 0.1059439  , -0.09261153 ,  0.99005    ],
         [-0.99418044 , -0.02941984 ,  0.103633866]], dtype=np.float32)),
    "gumbel": ("R.gumbel(K, (3,))",
        np.array([0.3340934 , 0.95201945, 0.72553056], dtype=np.float32)),
    "categorical": ("R.categorical(K, np.log(np.array([[.1, .2, "
                 ".7], [.5, .25, .25]])), shape=(3, 2))",
        np.array([[2, 0],
         [2, 0],
         [1, 0]], dtype=np.int32)),
    "exponential": ("R.exponential(K, (3,))",
        np.array([0.6708175, 1.1388006, 0.95782  ], dtype=np.float32)),
    "laplace": ("R.laplace(K, (3,))",
        np.array([ 0.022839652, -0.44565356 , -0.2646729  ], dtype=np.float32)),
    "logistic": ("R.logistic(K, (3,))",
        np.array([-0.045169413,  0.7528398  ,  0.47375232 ], dtype=np.float32)),
    "cauchy": ("R.cauchy(K, (3,))",
        np.array([-0.03548463,  0.6337261 ,  0.38244057], dtype=np.float32)),
    "poisson_int_lam": ("R.poisson(K, 3, (4,))",
        np.array([6, 2, 2, 1], dtype=np.int32)),
    "binomial_int": ("R.binomial(K, 10, 0.5, (4,))",
        np.array([6., 4., 7., 5.], dtype=np.float32)),
    "geometric_int_p": ("R.geometric(K, np.array([0.25, 0.5]))",
        np.array([3, 1], dtype=np.int32)),
}

# integers, bits and uniform floats (exact arithmetic on the bits) equal JAX's exactly;
# the others go through float32 log/exp/erf_inv/lgamma, NumPy's or zerax's, not XLA's
EXACT = {"seed_neg1", "seed_2_32p5", "seed_2_40", "seed_np_int64", "seed_2_31", "bits", "split",
         "fold_in", "uniform", "uniform_scaled", "randint", "randint_big", "permutation",
         "permutation_arr", "choice", "choice_p", "bernoulli", "rademacher", "poisson",
         "binomial", "multinomial", "geometric", "categorical", "poisson_int_lam",
         "binomial_int", "geometric_int_p"}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_values_match_jax_default_mode(name, x32):
    expr, expected = RECORDED[name]
    K = R.PRNGKey(42)   # noqa: F841 - read by the expressions
    got = np.asarray(eval(expr))   # noqa: S307 - a literal expression of this file
    assert got.shape == expected.shape and got.dtype == expected.dtype, name
    if name in EXACT:
        np.testing.assert_array_equal(got, expected)
    else:   # a few float32 ulps (QR's signs and rotations: absolute 1e-6)
        np.testing.assert_allclose(got, expected, rtol=4e-6, atol=1e-6)


def test_the_mode_decides_the_default_dtype_not_the_bits():
    k = R.PRNGKey(0)
    with zx.enable_x64(False):
        x32 = np.asarray(R.normal(k, (4,)))
        i32 = np.asarray(R.randint(k, (3,), 0, 100))
    with zx.enable_x64(True):
        x64 = np.asarray(R.normal(k, (4,)))
        f32 = np.asarray(R.normal(k, (4,), np.float32))
        i64 = np.asarray(R.randint(k, (3,), 0, 100))
    assert x32.dtype == np.float32 and x64.dtype == np.float64 and i32.dtype == np.int32
    np.testing.assert_array_equal(x32, f32)    # float32 draws are one algorithm in both
    assert not np.allclose(x32, x64, atol=1e-3)  # the issue's [1.62, 2.03] vs [-0.21, -0.78]
    np.testing.assert_array_equal(i32, i64.astype(np.int32) if (i64 == i32).all() else i32)


def test_explicit_float64_is_float32_with_jax_warning(x32):
    with pytest.warns(UserWarning, match="float64 requested in normal .*truncated to "
                                         "dtype float32"):
        x = R.normal(R.PRNGKey(0), (2,), np.float64)
    assert x.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # Python types name the mode's defaults: no warning
        assert R.uniform(R.PRNGKey(0), (2,), float).dtype == np.float32
        assert R.randint(R.PRNGKey(0), (2,), 0, 5, int).dtype == np.int32


_PROGRAMS = {
    "normal": lambda k: R.normal(k, (5,)),
    "uniform": lambda k: R.uniform(k, (2, 3), minval=-1.0, maxval=3.0),
    "randint": lambda k: R.randint(k, (6,), -3, 100),
    "bernoulli": lambda k: R.bernoulli(k, 0.3, (5,)),
    "gamma": lambda k: R.gamma(k, 2.5, (3,)),
    "poisson": lambda k: R.poisson(k, 4.0, (4,)),
    "split": lambda k: R.split(k, 3),
}


_JITTED = ("normal", "uniform", "randint", "split")   # (compiles of the loops are slow)


def test_jit_and_vmap_equal_eager_in_default_mode(x32):
    ks = R.split(R.PRNGKey(3), 3)
    eager = [{n: np.asarray(f(ks[i])) for n, f in _PROGRAMS.items()} for i in range(3)]
    jitted = zx.jit(zx.vmap(lambda k: {n: _PROGRAMS[n](k) for n in _JITTED}))(ks)
    mapped = zx.vmap(lambda k: {n: f(k) for n, f in _PROGRAMS.items()})(ks)
    for name in _PROGRAMS:
        stacked = np.stack([e[name] for e in eager])
        outs = [mapped[name]] + ([jitted[name]] if name in jitted else [])
        for got in map(np.asarray, outs):
            assert got.dtype == stacked.dtype and got.dtype.itemsize <= 4, name
            if got.dtype.kind == "f":   # compiled log/erf_inv: within float32 ulps
                np.testing.assert_allclose(got, stacked, rtol=2e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(got, stacked, err_msg=name)


def test_reparameterised_gradients_are_float32(x32):
    k = R.PRNGKey(1)

    def f(mu, a):
        return (mu + R.normal(k, (3,)) * R.gamma(k, a, (3,))).sum()

    g_mu, g_a = zx.grad(f, argnums=(0, 1))(0.5, 2.0)
    assert g_mu.dtype == np.float32 and g_a.dtype == np.float32
    assert float(g_mu) == 3.0
    # the derivative in a against a central difference of the same draws (float32)
    eps = 1e-2
    fd = (float(f(0.5, 2.0 + eps)) - float(f(0.5, 2.0 - eps))) / (2 * eps)
    np.testing.assert_allclose(float(g_a), fd, rtol=1e-2)
