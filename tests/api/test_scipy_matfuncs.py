"""Tests of `zerax.scipy.linalg`'s matrix functions and structured solvers
(``src/zerax/_src/api/scipy/matfuncs.py``: expm, expm_frechet, sqrtm, logm, solve_sylvester,
solve_banded).

References: values recorded from SciPy 1.17.1 (``scipy.linalg``, by a scratch script
run with /tmp/anchors/bin/python; scipy is not imported here), NumPy identities
(``expm`` of a diagonalisable matrix is ``V diag(exp(w)) V^-1``, of a nilpotent one a
finite series; ``X @ X == A`` with the eigenvalues of ``X`` in the right half-plane;
``A X + X B == C`` as a NumPy Kronecker system; the dense banded matrix solved by
``numpy.linalg.solve``), and finite differences (``check_grads``).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.scipy.linalg as zsl
from zerax import errors
from zerax.test_util import check_grads

# ----------------------------------------------------------------- recorded anchors

A3 = np.array([[0.3, -1.2, 0.5], [0.8, 0.1, -0.7], [-0.4, 0.9, 0.6]])          # general
B3 = np.array([[4.0, 1.0, -0.5], [0.3, 3.0, 0.8], [-1.1, 0.4, 5.0]])           # right half-plane
C3 = np.array([[0.5 + 1.0j, -0.3 + 0.2j, 1.1 - 0.4j], [0.2 - 0.7j, 1.5 + 0.3j, -0.6 + 0.9j],
               [-0.8 + 0.1j, 0.4 - 0.5j, 2.0 - 1.2j]])                          # complex
S3 = np.array([[2.0, -1.0, 0.5], [-1.0, 3.0, 0.25], [0.5, 0.25, 1.5]])         # SPD
BIG = np.array([[1.5, -6.2, 3.3], [4.4, 0.7, -2.9], [-3.8, 5.1, 2.6]])         # squarings
NEG = np.array([[-4.0, 1.0, 0.5], [0.0, 9.0, -2.0], [0.0, 0.0, 2.0]])         # eigenvalue -4
E3 = np.arange(9.0).reshape(3, 3) / 10                                          # a direction
B2 = np.array([[2.0, -1.0], [0.5, 1.5]])
C32 = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]])
AB21 = np.array([[0.0, 2.0, -1.0, 0.5, 3.0], [0.1, 0.2, 4.0, -0.3, 1.0],
                 [3.0, -2.0, 1.0, 2.5, 0.0], [1.0, 0.5, -1.5, 0.0, 0.0]])       # l=2, u=1
RHS5 = np.array([1.0, -2.0, 0.5, 3.0, 1.5])
AB11 = np.array([[0.0, 1.0, 2.0, 3.0], [0.01, -1.0, 0.5, 2.0], [4.0, 1.0, -3.0, 0.0]])
RHS42 = np.array([[1.0, 0.0], [2.0, 1.0], [-1.0, 0.5], [0.0, 2.0]])
AB03 = np.array([[0, 0, 0, 1.0], [0, 0, 2.0, 1.0], [0, 1.0, -1.0, 0.5], [2.0, 3.0, 4.0, 5.0]])

# scipy.linalg.expm / sqrtm / logm of the matrices above; expm_frechet(A3, E3) and
# expm_frechet(C3, E3 + 1j); solve_sylvester(A3, B2, C32) and (C3, B2 + 0j, C32 + 0j)
# (SciPy 1.17.1 returns a wrong X, residual 0.78, for complex A with real B, so B is
# passed as complex there); solve_banded((2, 1), AB21, RHS5), ((1, 1), AB11, RHS42),
# ((0, 3), AB03, RHS42[:, 0]).
EXPM_A3 = np.array([[ 0.7053458130993626 , -0.7799709971945614 ,  1.0982600389073842 ],
 [ 0.8710552883404816 ,  0.26967360398686513, -0.498867409639841  ],
 [-0.03602893462004964,  1.2432431670411226 ,  1.2589794493805608 ]])

EXPM_B3 = np.array([[  75.0615485821387  ,   36.08461686920674 ,  -27.72022445250722 ],
 [ -15.627585388175287,   25.105252087269708,   54.99806674370582 ],
 [-113.89043469339052 ,   -5.567179689318737,  182.76274398383393 ]])

EXPM_C3 = np.array([[-0.5498165031189017+1.8850466677196756j, -0.5469316374395955-1.4808254994054386j,
   2.9317981999139326-2.185106012851821j ],
 [ 2.59340057892565  -2.1795102225688927j,  4.607988225994012 +3.197890654971414j ,
  -1.4111193550274126+3.5270699768229052j],
 [-2.6321305144719878-0.088576101586467j ,  1.4361114935383366-3.182889100479221j ,
   3.0145586496223062-4.083374521363887j ]])

EXPM_S3 = np.array([[ 13.794043525668975 , -14.664848223175369 ,   2.5286835415339572],
 [-14.66484822317538  ,  28.13864237750745  ,   0.62384302809315  ],
 [  2.528683541533957 ,   0.6238430280931518,   5.180621928733633 ]])

EXPM_BIG = np.array([[ 3.3474585068402605 , -1.1305806797630384 ,  3.618871450840143  ],
 [ 2.8887347221817077 ,  2.7998505938701936 , -0.21465149816373877],
 [-0.24730643231009533,  4.838042388691133  ,  5.144004954907468  ]])

EXPM_NEG = np.array([[ 1.8315638888734179e-02,  6.2331273937973049e+02, -1.7712413809586994e+02],
 [ 0.0000000000000000e+00,  8.1030839275753842e+03, -2.3130556775647010e+03],
 [ 0.0000000000000000e+00,  0.0000000000000000e+00,  7.3890560989306504e+00]])

SQRTM_A3 = np.array([[ 0.808458382003766  , -0.7817448098433261 ,  0.09038919426520006],
 [ 0.41431707763463455,  0.7711973995156759 , -0.4426620396259922 ],
 [-0.32874206483836016,  0.38597211564327566,  0.8947457372411609 ]])

SQRTM_B3 = np.array([[ 1.9846341531921727 ,  0.27441761241957796, -0.132293954082413  ],
 [ 0.09575921287403485,  1.7172611621551654 ,  0.20626398919174682],
 [-0.2641788406849866 ,  0.11992440603107464,  2.222681859869166  ]])

SQRTM_C3 = np.array([[ 0.910869288400606  +0.4914358135140473j , -0.12164206233029619+0.16771998714388325j,
   0.4599731694189723 -0.1383999451217202j ],
 [-0.00490418105761703-0.27180245313149964j,  1.20449074486283   +0.07448258845638739j,
  -0.25168349732205886+0.34103678179052244j],
 [-0.3113317546888025 +0.06392555681437334j,  0.15568370343200308-0.140012644927296j  ,
   1.5247689789148167 -0.4462397579229206j ]])

SQRTM_S3 = np.array([[ 1.357824794964904  , -0.3350844655577647 ,  0.20983380833502463],
 [-0.3350844655577646 ,  1.695728698893079  ,  0.11055578090833142],
 [ 0.20983380833502455,  0.11055578090833144,  1.201560315667661  ]])

SQRTM_NEG = np.array([[ 0.                 +2.j                 ,  0.23076923076923078-0.15384615384615385j,
   0.11926056723383938-0.21794871794871795j],
 [ 0.                 +0.j                 ,  3.                 +0.j                 ,
  -0.4530818393219729 +0.j                 ],
 [ 0.                 +0.j                 ,  0.                 +0.j                 ,
   1.4142135623730951 +0.j                 ]])

LOGM_A3 = np.array([[-0.08935787611948581 , -1.6917633438095083  , -0.2128142268074812  ],
 [ 0.7111885621725731  , -0.008542395745118544, -0.9347802421763256  ],
 [-0.8297174194350554  ,  0.4875968821688187  , -0.09205031209384353 ]])

LOGM_B3 = np.array([[ 1.3536650130132077 ,  0.30364430965974615, -0.14169726265691335],
 [ 0.1187679981706807 ,  1.0645330488013693 ,  0.2155782388608054 ],
 [-0.25638456729969644,  0.1423825010213484 ,  1.5823851205930508 ]])

LOGM_C3 = np.array([[ 0.08936811178637968+0.913545393891095j  , -0.16924962066517568+0.3991422198432229j ,
   0.7343142847633292 -0.19602381385998724j],
 [-0.14888577931493813-0.3893292056505707j ,  0.33557727225439227+0.06701351380785436j,
  -0.39543290756348354+0.5021412937173279j ],
 [-0.45688095738526074+0.1443451538293662j ,  0.23643983025601928-0.12415925239361908j,
   1.0108399254307683 -0.6346540994618575j ]])

LOGM_S3 = np.array([[ 0.5258731665335404 , -0.46589217587452936,  0.3584015984570678 ],
 [-0.4658921758745292 ,  1.0001290431093908 ,  0.19592820063117428],
 [ 0.3584015984570677 ,  0.19592820063117433,  0.32638188140155727]])

LOGM_NEG = np.array([[ 1.3862943611198928  +3.1415926535897922j ,  0.062379247401256145-0.24166097335306094j,
  -0.1085919157593992  -0.34235304558350316j],
 [ 0.                  +0.j                 ,  2.197224577336222   +0.j                 ,
  -0.42973639907893557 +0.j                 ],
 [ 0.                  +0.j                 ,  0.                  +0.j                 ,
   0.6931471805599437  +0.j                 ]])

FRECHET_A3 = np.array([[0.1683841395405914 , 0.2959411034430679 , 0.33109690895100896],
 [0.11392423608230204, 0.2114880113331909 , 0.2934041168877258 ],
 [1.1721763694976743 , 1.0844717187575672 , 1.5124597130941857 ]])

FRECHET_C3 = np.array([[ 0.5527129080235478 +0.39351013473418694j,  2.1157056722632124 +2.7785117315061334j ,
   2.986672980051612  +2.5999781073258594j ],
 [-1.2399007044993444 +2.326856990214946j  ,  0.23358022862118832+6.847258333312625j  ,
   1.4873685386933138 +7.441896513701626j  ],
 [ 2.7167530924933803 +0.20916649625935424j,  8.014091968678658  +0.7009375332970817j ,
   9.117008814157078  -0.8979257517834958j ]])

SYLV = np.array([[ 0.32353392263284503,  0.8177576326621845 ],
 [ 0.4906665122728112 , -0.35823329400429027],
 [ 0.8715859526814776 ,  0.8433804620715297 ]])

SYLV_C = np.array([[-0.00761024153981027+0.011708573674570137j,  0.6308339887671804 -0.27159946913826055j ],
 [ 0.30919391468511576-0.15387134744908562j , -0.10586625519458147+0.034326054106404394j],
 [ 0.6223181423076924 +0.23187782879440266j ,  0.3616296164041035 +0.09108767001489942j ]])

BAND21 = np.array([-0.5493377423281672,  0.5274668871164082,  0.4574801504387797,  0.5487018296117299,
  0.8144656516288451])

BAND11 = np.array([[ 0.9466865969108121   ,  0.4982561036372696   ],
 [ 0.9905331340308919   , -0.0049825610363726965],
 [-0.39810662680617837  , -0.49900348779272546  ],
 [-0.5971599402092675   ,  0.2514947683109118   ]])

BAND03 = np.array([ 0.4583333333333333,  0.5833333333333334, -0.25              ,  0.                ])

ANCHORS = {
    "expm": {"A3": EXPM_A3, "B3": EXPM_B3, "C3": EXPM_C3, "S3": EXPM_S3, "BIG": EXPM_BIG,
             "NEG": EXPM_NEG},
    "sqrtm": {"A3": SQRTM_A3, "B3": SQRTM_B3, "C3": SQRTM_C3, "S3": SQRTM_S3,
              "NEG": SQRTM_NEG},
    "logm": {"A3": LOGM_A3, "B3": LOGM_B3, "C3": LOGM_C3, "S3": LOGM_S3, "NEG": LOGM_NEG},
}
INPUTS = {"A3": A3, "B3": B3, "C3": C3, "S3": S3, "BIG": BIG, "NEG": NEG}


def close(got, want, rtol=1e-12):
    """Entrywise agreement relative to the largest entry of ``want``."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def eig_expm(a):
    w, v = np.linalg.eig(a)
    out = (v * np.exp(w)) @ np.linalg.inv(v)
    return out if np.iscomplexobj(a) else out.real


@pytest.fixture(scope="module")
def expm_jit():
    """One compiled expm for every jit check (Numba compiles take seconds)."""
    return zx.jit(zsl.expm)


@pytest.mark.parametrize("fname,name", [(f, n) for f in ANCHORS for n in ANCHORS[f]])
def test_matches_scipy(fname, name):
    got = getattr(zsl, fname)(INPUTS[name])
    want = ANCHORS[fname][name]
    assert np.dtype(got.dtype) == want.dtype      # SciPy's dtype rule (NEG: complex)
    close(got, want, rtol=1e-12 if name != "NEG" else 1e-11)


# ------------------------------------------------------------------------------ expm

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 5),
       scale=st.sampled_from([1e-3, 0.05, 0.3, 1.0, 2.0, 5.0, 12.0, 40.0]))
def test_expm_diagonalizable(seed, n, scale):
    """Every Padé degree and squaring count against V diag(exp(w)) V^-1."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    a *= scale / np.abs(a).sum(axis=0).max()          # 1-norm = scale
    w, v = np.linalg.eig(a)
    cond = np.linalg.cond(v)
    if cond > 1e4:
        return
    close(zsl.expm(a), eig_expm(a), rtol=1e-13 * cond * max(1.0, scale))


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.0, 3.0, 30.0])
def test_expm_float32_and_complex(scale):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    a *= scale / np.abs(a).sum(axis=0).max()
    got = zsl.expm(a.astype(np.float32))
    assert got.dtype == np.float32
    close(got, eig_expm(a), rtol=2e-5 * max(1.0, scale))
    c = a + 1j * rng.standard_normal((4, 4)) * scale / 4
    got = zsl.expm(c)
    assert got.dtype == np.complex128
    close(got, eig_expm(c), rtol=1e-12 * max(1.0, scale))
    assert zsl.expm(c.astype(np.complex64)).dtype == np.complex64


def test_expm_nilpotent_and_identities():
    n = np.triu(np.arange(1.0, 17.0).reshape(4, 4), 1) / 7    # strictly upper: N^4 = 0
    series = np.eye(4) + n + n @ n / 2 + n @ n @ n / 6
    close(zsl.expm(n), series, rtol=1e-14)
    close(zsl.expm(n, upper_triangular=True), series, rtol=1e-14)
    np.testing.assert_array_equal(zsl.expm(np.zeros((3, 3))), np.eye(3))
    close(zsl.expm(np.diag([1.0, -2.0, 0.5])), np.diag(np.exp([1.0, -2.0, 0.5])))
    close(np.asarray(zsl.expm(BIG)) @ np.asarray(zsl.expm(-BIG)), np.eye(3), rtol=1e-12)
    assert zsl.expm([[2]]).dtype == np.float64                # integers become float64
    close(zsl.expm([[2]]), [[np.exp(2.0)]])


def test_expm_batches_empty_and_max_squarings():
    stack = np.stack([A3, B3, BIG, 0.01 * A3]).reshape(2, 2, 3, 3)
    got = np.asarray(zsl.expm(stack))
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(got[i, j], np.asarray(zsl.expm(stack[i, j])))
    assert zsl.expm(np.zeros((0, 0))).shape == (0, 0)
    assert zsl.expm(np.zeros((0, 3, 3))).shape == (0, 3, 3)
    # 1-norm 1e3 needs 8 squarings: more than max_squarings gives NaN, as in JAX
    assert np.isnan(np.asarray(zsl.expm(1e3 * np.eye(2) / 2, max_squarings=2))).all()
    assert np.isfinite(np.asarray(zsl.expm(-1e3 * np.eye(2) / 2))).all()


def test_expm_errors():
    with pytest.raises(errors.ShapeError, match="square"):
        zsl.expm(np.ones((2, 3)))
    with pytest.raises(errors.ShapeError, match="square"):
        zsl.expm(np.ones(3))
    with pytest.raises(errors.ZeraxTypeError):
        zsl.expm("abc")


def test_expm_grads():
    check_grads(zsl.expm, (0.2 * A3,), order=2, modes=("fwd", "rev"))     # low degree
    check_grads(zsl.expm, (0.6 * B3,), order=2, modes=("fwd", "rev"))     # degree 13
    check_grads(zsl.expm, (BIG,), order=1, modes=("fwd", "rev"))          # squarings
    # d tr(exp(X)) / dX = exp(X)^T
    g = zx.grad(lambda x: zx.numpy.trace(zsl.expm(x)))(BIG)
    close(g, np.asarray(zsl.expm(BIG)).T, rtol=1e-12)


def test_expm_frechet():
    close(zsl.expm_frechet(A3, E3, compute_expm=False), FRECHET_A3)
    close(zsl.expm_frechet(C3, E3 + 1j, compute_expm=False), FRECHET_C3)
    value, deriv = zsl.expm_frechet(BIG, E3, method="SPS")
    close(value, EXPM_BIG)
    h = 1e-6                      # central difference of expm along E3
    fd = (np.asarray(zsl.expm(BIG + h * E3)) - np.asarray(zsl.expm(BIG - h * E3))) / (2 * h)
    close(deriv, fd, rtol=1e-7)
    with pytest.raises(errors.ShapeError, match="same shape"):
        zsl.expm_frechet(A3, np.eye(2))
    with pytest.raises(errors.ZeraxValueError, match="method"):
        zsl.expm_frechet(A3, E3, method="taylor")


def test_expm_jit(expm_jit):
    """The traced algorithm (Padé parts under where, squarings in a scan of cond)
    equals the eager one at every degree and squaring count."""
    for a in (1e-3 * A3, 0.1 * A3, 0.5 * A3, A3, B3, BIG, NEG):
        close(expm_jit(a), zsl.expm(a), rtol=1e-14)


def test_vmap():
    stack = np.stack([1e-3 * A3, A3, B3, BIG])
    got = np.asarray(zx.vmap(zsl.expm)(stack))
    for k in range(4):
        close(got[k], zsl.expm(stack[k]), rtol=1e-14)
    got = np.asarray(zx.vmap(lambda a: zsl.expm(a, max_squarings=2))(np.stack([A3, 100 * A3])))
    assert np.isfinite(got[0]).all() and np.isnan(got[1]).all()
    # traced sqrtm / logm keep the input dtype; outside their domain they give NaN
    psd = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 4.0]])   # singular
    stack = np.stack([B3, A3, S3, psd, NEG])
    roots = np.asarray(zx.vmap(zsl.sqrtm)(stack))
    assert roots.dtype == np.float64
    for k in range(4):
        close(roots[k] @ roots[k], stack[k], rtol=1e-13)
    close(roots[0], SQRTM_B3)
    assert np.isnan(roots[4]).all()
    logs = np.asarray(zx.vmap(zsl.logm)(stack))
    close(logs[0], LOGM_B3)
    close(logs[1], LOGM_A3)
    assert np.isnan(logs[3]).all() and np.isnan(logs[4]).all()


# ----------------------------------------------------------------------------- sqrtm

def is_principal_root(x, a, rtol=1e-11):
    x = np.asarray(x)
    close(x @ x, a, rtol=rtol)
    w = np.linalg.eigvals(x)
    assert (w.real > -1e-10 * np.abs(w).max()).all()   # roots of -r: real part 0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 5), radius=st.floats(0.01, 3.0))
def test_sqrtm_logm_of_exponentials(seed, n, radius):
    """A = exp(X) with the spectral radius of X below pi: the principal logarithm of
    A is X and its principal square root exp(X / 2) (NumPy references)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    x *= radius / np.abs(np.linalg.eigvals(x)).max()
    cond = np.linalg.cond(np.linalg.eig(x)[1])
    if cond > 1e3:
        return
    a = eig_expm(x)
    root = zsl.sqrtm(a)
    assert root.dtype == np.float64
    close(root, eig_expm(x / 2), rtol=1e-12 * cond)
    close(zsl.logm(a), x, rtol=1e-11 * cond)


def test_sqrtm_symmetric_and_singular():
    # singular positive semidefinite: eigh (the iteration needs A nonsingular)
    psd = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 4.0]])
    got = zsl.sqrtm(psd)
    assert got.dtype == np.float64
    r = 0.5 ** 0.5                      # sqrt([[1, 1], [1, 1]]) = [[1, 1], [1, 1]] / sqrt(2)
    close(got, np.array([[r, r, 0.0], [r, r, 0.0], [0.0, 0.0, 2.0]]), rtol=1e-14)
    # a zero eigenvalue computed as -1.7e-16 is on the negative axis: complex, with
    # imaginary parts of order sqrt(eps), as SciPy's (which has 8.0e-9 there)
    v = np.linalg.qr(np.arange(1.0, 17.0).reshape(4, 4) + np.eye(4))[0]
    a = (v * np.array([0.0, 1.0, 4.0, 9.0])) @ v.T
    got = zsl.sqrtm(a)
    assert got.dtype == np.complex128
    close(got, (v * np.array([0.0, 1.0, 2.0, 3.0])) @ v.T, rtol=1e-7)
    # symmetric indefinite: complex, V sqrt(w + 0j) V^T, as SciPy
    b = (v * np.array([-4.0, 1.0, 4.0, 9.0])) @ v.T
    got = zsl.sqrtm(b)
    assert got.dtype == np.complex128
    close(got, (v * np.sqrt(np.array([-4.0, 1.0, 4.0, 9.0]) + 0j)) @ v.T, rtol=1e-13)
    close(zsl.sqrtm(-np.eye(2)), 1j * np.eye(2))
    # Hermitian complex and float32
    h = C3 @ C3.conj().T
    is_principal_root(zsl.sqrtm(h), h)
    x32 = zsl.sqrtm(B3.astype(np.float32))
    assert x32.dtype == np.float32
    close(x32, SQRTM_B3, rtol=1e-5)


def test_complex_route_is_principal():
    """Real matrices with a negative eigenvalue, one with a conjugate pair just off the
    negative axis (-2 +- 0.001i, whose roots have opposite imaginary signs)."""
    q = np.linalg.qr(np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.5, 0.0, 1.0]]))[0]
    near = q @ np.array([[-1.0, 0.0, 0.0], [0.0, -2.0, 1e-3], [0.0, -1e-3, -2.0]]) @ q.T
    general = np.random.default_rng(0).standard_normal((5, 5)) - np.eye(5)   # -3.5, pairs
    for a in (near, general):
        w = np.linalg.eigvals(a)
        assert ((w.imag == 0) & (w.real < 0)).any()
        x = zsl.sqrtm(a)
        assert x.dtype == np.complex128
        is_principal_root(x, a)
        log = np.asarray(zsl.logm(a))
        assert log.dtype == np.complex128
        close(zsl.expm(log), a, rtol=1e-11)
        assert (np.abs(np.linalg.eigvals(log).imag) <= np.pi + 1e-12).all()


def test_sqrtm_stacks_and_errors():
    # an eager stack is complex when one matrix needs it; the others keep their values
    got = np.asarray(zsl.sqrtm(np.stack([B3, NEG])))
    assert got.dtype == np.complex128
    close(got[0], SQRTM_B3)
    close(got[1], SQRTM_NEG, rtol=1e-11)
    assert zsl.sqrtm(np.zeros((0, 0))).shape == (0, 0)
    with pytest.raises(errors.ZeraxValueError, match="no principal square root"):
        zsl.sqrtm(np.array([[0.0, 1.0], [0.0, 0.0]]))           # nilpotent: none exists
    with pytest.raises(errors.ZeraxValueError, match="blocksize"):
        zsl.sqrtm(B3, blocksize=0)
    with pytest.raises(errors.ShapeError):
        zsl.sqrtm(np.ones((2, 3)))


def test_sqrtm_logm_grads():
    """Derivatives through the iterations (eager): not part of JAX's sqrtm, checked
    here against finite differences."""
    check_grads(zsl.sqrtm, (B3,), order=1, modes=("fwd", "rev"))
    check_grads(zsl.logm, (B3,), order=1, modes=("fwd", "rev"))


# ------------------------------------------------------------------------------ logm

def test_logm_values():
    x = 0.4 * A3                                    # eigenvalues well inside |Im| < pi
    close(zsl.logm(zsl.expm(x)), x, rtol=1e-12)
    close(zsl.logm(np.diag([-1.0, 2.0])), np.diag([np.pi * 1j, np.log(2.0)]), rtol=1e-14)
    log, err = zsl.logm(B3, disp=False)
    close(log, LOGM_B3)
    assert float(err) < 1e-13
    close(zsl.logm(C3.astype(np.complex64)), LOGM_C3, rtol=1e-4)
    with pytest.raises(errors.ZeraxValueError, match="singular"):
        zsl.logm(np.array([[1.0, 1.0], [1.0, 1.0]]))


# ------------------------------------------------------------------ solve_sylvester

def kron_solution(a, b, c):
    m, n = c.shape
    k = np.kron(a, np.eye(n)) + np.kron(np.eye(m), b.T)
    return np.linalg.solve(k, c.reshape(-1)).reshape(m, n)


def test_solve_sylvester():
    close(zsl.solve_sylvester(A3, B2, C32), SYLV)
    close(zsl.solve_sylvester(C3, B2, C32), SYLV_C)
    rng = np.random.default_rng(5)
    a, b, c = rng.standard_normal((4, 4)), rng.standard_normal((3, 3)), rng.standard_normal((4, 3))
    x = np.asarray(zsl.solve_sylvester(a, b, c, method="kron"))
    close(a @ x + x @ b, c, rtol=1e-13)
    close(x, kron_solution(a, b, c))
    # batch dimensions broadcast
    aa = np.stack([a, a + np.eye(4)])
    got = np.asarray(zsl.solve_sylvester(aa, b, c))
    assert got.shape == (2, 4, 3)
    close(got[1], kron_solution(a + np.eye(4), b, c))
    # eigen: symmetric A and B through eigh
    sa, sb = a + a.T + 6 * np.eye(4), b + b.T + 6 * np.eye(3)
    close(zsl.solve_sylvester(sa, sb, c, method="eigen"), kron_solution(sa, sb, c), 1e-12)
    got = zsl.solve_sylvester(np.diag([1.0, 2.0]), np.diag([-1.0, 5.0]), np.ones((2, 2)),
                              method="eigen")              # 1 + (-1) = 0 < tol
    assert np.isnan(np.asarray(got)).all()
    check_grads(lambda a_, c_: zsl.solve_sylvester(a_, B2, c_), (A3, C32), order=1,
                modes=("fwd", "rev"))


def test_solve_sylvester_errors():
    with pytest.raises(errors.ShapeError, match="incompatible"):
        zsl.solve_sylvester(A3, B2, np.ones((2, 2)))
    with pytest.raises(errors.ZeraxValueError, match="method"):
        zsl.solve_sylvester(A3, B2, C32, method="bartels")
    with pytest.raises(errors.ZeraxValueError, match="not symmetric"):
        zsl.solve_sylvester(A3, B2 @ B2.T, C32, method="eigen")
    with pytest.raises(errors.NotSupportedError, match="complex"):
        zsl.solve_sylvester(C3, B2, C32, method="eigen")
    with pytest.raises(errors.NotSupportedError, match="4096"):
        zsl.solve_sylvester(np.eye(65), np.eye(65), np.ones((65, 65)))


# --------------------------------------------------------------------- solve_banded

def dense_from_band(lo, up, ab):
    m = ab.shape[1]
    a = np.zeros((m, m), dtype=ab.dtype)
    for i in range(m):
        for j in range(max(0, i - lo), min(m, i + up + 1)):
            a[i, j] = ab[up + i - j, j]
    return a


def test_solve_banded():
    close(zsl.solve_banded((2, 1), AB21, RHS5), BAND21)
    close(zsl.solve_banded((1, 1), AB11, RHS42), BAND11)
    close(zsl.solve_banded((0, 3), AB03, RHS42[:, 0]), BAND03)
    close(zsl.solve_banded((0, 0), [[4.0]], [2.0]), [0.5])
    rng = np.random.default_rng(11)
    ab = rng.standard_normal((2, 3, 6))                   # a stack, l = 1, u = 1
    b = rng.standard_normal((2, 6))
    got = np.asarray(zsl.solve_banded((1, 1), ab, b))
    for k in range(2):
        close(got[k], np.linalg.solve(dense_from_band(1, 1, ab[k]), b[k]), rtol=1e-12)
    abc = AB21 + 1j * np.roll(AB21, 1, axis=1)
    close(zsl.solve_banded((2, 1), abc, RHS5),
          np.linalg.solve(dense_from_band(2, 1, abc), RHS5), rtol=1e-12)
    check_grads(lambda ab_, b_: zsl.solve_banded((2, 1), ab_, b_), (AB21, RHS5), order=1,
                modes=("fwd", "rev"))


def test_solve_banded_scan_path(monkeypatch):
    """The banded LU in lax.scan (used above M = 2048) on the same systems."""
    from zerax._src.api.scipy import matfuncs as _matfuncs
    monkeypatch.setattr(_matfuncs, "_DENSE_LIMIT", 0)
    close(zsl.solve_banded((2, 1), AB21, RHS5), BAND21)
    close(zsl.solve_banded((1, 1), AB11, RHS42), BAND11)
    close(zsl.solve_banded((0, 3), AB03, RHS42[:, 0]), BAND03)
    close(zsl.solve_banded((0, 0), [[4.0]], [2.0]), [0.5])
    rng = np.random.default_rng(12)
    for lo, up, m in [(3, 0, 6), (4, 4, 3), (1, 2, 7)]:
        ab = rng.standard_normal((lo + up + 1, m))
        b = rng.standard_normal((m, 2))
        close(zsl.solve_banded((lo, up), ab, b), np.linalg.solve(dense_from_band(lo, up, ab), b),
              rtol=1e-12)
    abc = AB21 + 1j * np.roll(AB21, 1, axis=1)
    close(zsl.solve_banded((2, 1), abc, RHS5),
          np.linalg.solve(dense_from_band(2, 1, abc), RHS5), rtol=1e-12)
    ab = rng.standard_normal((2, 3, 6))
    b = rng.standard_normal((2, 6))
    got = np.asarray(zsl.solve_banded((1, 1), ab, b))
    for k in range(2):
        close(got[k], np.linalg.solve(dense_from_band(1, 1, ab[k]), b[k]), rtol=1e-12)
    check_grads(lambda ab_, b_: zsl.solve_banded((2, 1), ab_, b_), (AB21, RHS5), order=1,
                modes=("fwd", "rev"))


def test_solve_banded_errors():
    with pytest.raises(errors.ZeraxValueError, match="l\\+u\\+1"):
        zsl.solve_banded((1, 1), AB21, RHS5)
    with pytest.raises(errors.ShapeError, match="not compatible"):
        zsl.solve_banded((2, 1), AB21, np.ones(4))
    with pytest.raises(errors.ZeraxValueError, match=">= 0"):
        zsl.solve_banded((-1, 4), AB21, RHS5)
    with pytest.raises(errors.ZeraxTypeError, match="pair"):
        zsl.solve_banded(3, AB21, RHS5)


def test_sqrtm_logm_derivatives_outside_the_domain_are_nan():
    # A real matrix with a negative eigenvalue has no real principal square root or
    # logarithm: traced (jvp, grad, jit) the value is NaN, and so must the derivative be
    # (it was a zero tangent beside the NaN value, a silent wrong answer).
    a = np.array([[-1.0, 0.2], [0.1, 2.0]])
    good = np.array([[2.0, 1.0], [-1.5, 0.5]])
    for fn in (zsl.sqrtm, zsl.logm):
        y, t = zx.jvp(fn, (a,), (np.eye(2),))
        assert np.isnan(np.asarray(y)).all() and np.isnan(np.asarray(t)).all()
        assert np.isnan(np.asarray(zx.grad(lambda m: fn(m).sum())(a))).all()
        # a stack: only the matrix outside the domain is NaN, value and derivative
        y, t = zx.jvp(fn, (np.stack([a, good]),), (np.ones((2, 2, 2)),))
        assert np.isnan(np.asarray(t[0])).all() and np.isfinite(np.asarray(t[1])).all()
        h = 1e-6
        fd = (np.asarray(fn(good + h)) - np.asarray(fn(good - h))) / (2 * h)
        np.testing.assert_allclose(t[1], fd, rtol=1e-6, atol=1e-8)
    g = zx.jit(zx.grad(lambda m: zsl.sqrtm(m).sum()))(good)
    assert np.isfinite(np.asarray(g)).all()      # the NaN stays where it is meant
