"""Matrix functions and structured solvers of `zerax.scipy.linalg` (its face re-exports
them): ``expm``, ``expm_frechet``, ``sqrtm``, ``logm``, ``solve_sylvester`` and
``solve_banded`` (JAX's signatures, SciPy's values; docs/scipy_linalg_matfuncs.md).

Written with zerax operations only (``zerax._src.numpy``, the control flow of
``zerax._src.lax``, the decomposition primitives), so every function works under ``jit``
and ``vmap`` and is differentiable (``sqrtm`` and ``logm`` through their iterations).
zerax has no Schur or nonsymmetric eigendecomposition, so the algorithms need neither:
Padé scaling and squaring (``expm``, Higham 2005 as JAX); the scaled Denman-Beavers
product iteration (``sqrtm``) and inverse scaling and squaring with a Gauss-Legendre
[8/8] Padé approximant (``logm``), or ``eigh`` for symmetric matrices; the Kronecker-sum
system (``solve_sylvester``); dense or banded LU with partial pivoting
(``solve_banded``).  Complex inputs run through the same real algorithms on the real
embedding ``[[B, -C], [C, B]]`` of ``A = B + iC`` (an algebra homomorphism: ``f`` of
the embedding is the embedding of ``f(A)`` for exp, sqrt and log).
"""

from __future__ import annotations

import operator

import numpy as np

from .... import errors
from ...interpreters.ad import jvp as _jvp
from ...interpreters.batching import vmap as _vmap
from ...lax.control_flow import cond as _cond, scan as _scan, while_loop as _while_loop
from ...ops.decompositions import lu as _lu, triangular_solve as _triangular_solve
from ...ops.elementwise import complex_ as _complex, imag as _imag, real as _real
from ...ops.misc import stop_gradient as _stop_gradient
from ... import numpy as znp
from ...numpy import linalg as _zla
from .linalg import solve_triangular

__all__ = ["expm", "expm_frechet", "logm", "solve_banded", "solve_sylvester", "sqrtm"]

# --------------------------------------------------------------------------- helpers


def _inexact(x, fname, what):
    """``x`` as a zerax array of a float or complex dtype (integers and booleans become
    float64, float16 becomes float32)."""
    try:
        x = znp.asarray(x)
    except errors.ZeraxError:
        raise
    except Exception as e:  # noqa: BLE001  (strings, arbitrary objects)
        raise errors.ZeraxTypeError(
            f"zerax.scipy.linalg.{fname}: {what} must be an array of numbers, got "
            f"{type(x).__name__}") from e
    kind = np.dtype(x.dtype).kind
    if kind in "biu":
        return znp.asarray(x, dtype=float)
    if kind not in "fc":
        raise errors.ZeraxTypeError(
            f"zerax.scipy.linalg.{fname}: {what} must hold numbers, got dtype "
            f"{np.dtype(x.dtype)}")
    if np.dtype(x.dtype).itemsize < 4:
        return znp.asarray(x, dtype=np.float32)
    return x


def _square(x, fname, what="A"):
    x = _inexact(x, fname, what)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.{fname}: {what} must be a square matrix or a stack of "
            f"them (shape (..., n, n)), got shape {tuple(x.shape)}")
    return x


def _is_complex(dtype):
    return np.dtype(dtype).kind == "c"


def _real_dtype(dtype):
    return np.finfo(np.dtype(dtype)).dtype


def _common(*xs):
    dt = np.result_type(*(np.dtype(x.dtype) for x in xs))
    return tuple(znp.asarray(x, dtype=dt) for x in xs)


def _concrete(x):
    """``x`` as a NumPy array, or None while it is traced."""
    try:
        return np.asarray(x)
    except (errors.ConcretizationError, errors.UnexpectedTracerError):
        return None


def _embed(a):
    """The real ``2n x 2n`` embedding ``[[re, -im], [im, re]]`` of complex ``a``."""
    re, im = _real(a), _imag(a)
    return znp.concatenate([znp.concatenate([re, -im], axis=-1),
                            znp.concatenate([im, re], axis=-1)], axis=-2)


def _unembed(r, n):
    return _complex(r[..., :n, :n], r[..., n:, :n])


def _onenorm(a):
    """The matrix 1-norm (largest column sum of magnitudes) of real ``a``."""
    return znp.max(znp.sum(znp.abs(a), axis=-2), axis=-1)


def _mT(a):
    return znp.swapaxes(a, -1, -2)


def _over_matrices(f, a):
    """``f`` (n x n -> n x n) applied to each matrix of the stack ``a``."""
    if a.ndim == 2:
        return f(a)
    batch = tuple(a.shape[:-2])
    if int(np.prod(batch)) == 0:
        return znp.zeros(a.shape, a.dtype)
    out = _vmap(f)(znp.reshape(a, (-1,) + tuple(a.shape[-2:])))
    return znp.reshape(out, batch + tuple(out.shape[-2:]))


def _primary(a, real_fn):
    """A primary matrix function on real or complex ``a`` (any stack) from its real
    2-D version: complex matrices go through the real embedding."""
    if not _is_complex(a.dtype):
        return _over_matrices(real_fn, a)
    n = a.shape[-1]
    return _unembed(_over_matrices(real_fn, _embed(a)), n)


def _solve(a, b):
    """``a^-1 b`` for real or complex (stacks of) matrices ``a`` and ``b`` (M, K)."""
    if not _is_complex(a.dtype):
        return _zla.solve(a, b)
    m = a.shape[-1]
    rhs = znp.concatenate([_real(b), _imag(b)], axis=-2)
    x = _zla.solve(_embed(a), rhs)
    return _complex(x[..., :m, :], x[..., m:, :])


# ------------------------------------------------------------------------------ expm

# Padé coefficients b_k of the [m/m] approximant of exp (Higham 2005, as in JAX)
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
         1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
         33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# (theta_m for m = 3, 5, 7, 9; theta_13): Higham 2005, Table 2.3, as JAX
_THETA64 = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
            2.097847961257068e+000)
_MAXNORM64 = 5.371920351148152
_THETA32 = (4.258730016922831e-001, 1.880152677804762e+000)
_MAXNORM32 = 3.925724783138660


def _pade13(a, b=_PADE[13]):
    """``(U, V)``: the odd and even parts of the degree-13 Padé numerator at ``a``.
    With the coefficients ``b`` of a lower degree zero-padded to 14, the same
    evaluation gives that degree's parts (exact zeros are added; degree 9's ``b_8 A^8``
    is formed as ``A^6 (b_8 A^2)``, a rounding away from JAX's ``b_8 (A^6 A^2)``): one
    program for every degree when the degree is traced."""
    eye = znp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    return u, v


def _pade_low(a, degrees, which):
    """``(U, V)`` of the Padé numerator of degree ``degrees[which]`` (3 to 9): one
    polynomial in ``a^2`` whose coefficient row is picked by ``which`` (lower degrees
    have zero leading coefficients, so the values are those of the separate formulas,
    and one compiled body serves every degree)."""
    top = max(degrees)
    table = np.zeros((len(degrees), top + 1))
    for row, m in enumerate(degrees):
        table[row, :m + 1] = _PADE[m]
    eye = znp.eye(a.shape[-1], dtype=a.dtype)
    concrete = _concrete(which)
    if concrete is not None:          # one degree: only the powers it needs
        top = degrees[int(concrete)]
        b = [znp.asarray(c, dtype=a.dtype) for c in table[int(concrete)]]
    else:
        row = znp.take(znp.asarray(table, dtype=_real_dtype(a.dtype)), which, axis=0)
        b = [znp.asarray(row[k], dtype=a.dtype) for k in range(top + 1)]
    a2 = a @ a
    powers = [eye, a2]
    while len(powers) <= top // 2:
        powers.append(powers[-1] @ a2)
    odd = even = None
    for k in range(top // 2, -1, -1):     # highest power first, as JAX sums them
        o, e = b[2 * k + 1] * powers[k], b[2 * k] * powers[k]
        odd = o if odd is None else odd + o
        even = e if even is None else even + e
    return a @ odd, even


def _expm_2d(a, upper_triangular, max_squarings):
    """``exp(a)`` of one real square matrix (JAX's algorithm).  The degree and the
    number of squarings are Python choices where ``a`` is concrete; traced, one Padé
    evaluation takes the coefficient row of the chosen degree (a ``switch`` of five Padé
    branches took ~20 s to compile) and the squarings are a ``scan`` of
    ``cond``."""
    single = np.dtype(a.dtype) == np.float32
    maxnorm, thetas, degrees = ((_MAXNORM32, _THETA32, (3, 5, 7)) if single else
                                (_MAXNORM64, _THETA64, (3, 5, 7, 9, 13)))
    norm = _stop_gradient(_onenorm(a))
    # Higham's s = ceil(log2(||A||_1 / theta_m)); JAX takes the floor, which leaves
    # norms up to 2 theta_13 unscaled (expm([[-4, 1], [0, 9]]) off by 1e-9 there)
    tiny = np.finfo(np.dtype(norm.dtype)).tiny     # log2(0) would warn
    squarings = znp.maximum(0.0, znp.ceil(znp.log2(znp.maximum(norm, tiny) / maxnorm)))
    scaled = a / znp.asarray(2.0 ** squarings, dtype=a.dtype)
    which = znp.digitize(norm, znp.asarray(thetas, dtype=norm.dtype))
    low = degrees[:4]
    known = _concrete(which)
    if known is not None and degrees[int(known)] == 13:
        u, v = _pade13(scaled)
    elif known is not None or 13 not in degrees:
        u, v = _pade_low(scaled, low, which)
    else:                                 # traced: one evaluation, coefficients picked
        table = np.zeros((len(degrees), 14))
        for row, m in enumerate(degrees):
            table[row, :m + 1] = _PADE[m]
        picked = znp.take(znp.asarray(table, dtype=norm.dtype), which, axis=0)
        u, v = _pade13(scaled, [znp.asarray(picked[k], dtype=a.dtype) for k in range(14)])
    p, q = u + v, v - u
    if upper_triangular:
        r = solve_triangular(q, p)
    else:
        r = _zla.solve(q, p)
    count = _concrete(squarings)
    if count is not None:
        if count > max_squarings:
            return znp.full(a.shape, np.nan, dtype=a.dtype)
        for _ in range(int(count)):
            r = r @ r
        return r

    def square(c, i):
        return _cond(i < squarings, lambda x: x @ x, lambda x: x, c), None

    if max_squarings > 0:
        r, _ = _scan(square, r, znp.arange(max_squarings, dtype=squarings.dtype))
    return znp.where(squarings > max_squarings, znp.asarray(np.nan, dtype=a.dtype), r)


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential of ``A`` (``(..., n, n)``, real or complex), by Padé
    scaling and squaring (Higham 2005, as JAX).  With ``upper_triangular`` the Padé
    quotient is a triangular solve (``A`` must then be upper triangular).  Matrices that
    would need more than ``max_squarings`` squarings give NaN (as in JAX).
    Differentiable to any order; ``vmap`` and ``jit`` work.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.expm([[0.0, 1.0], [0.0, 0.0]])
    Array([[1., 1.],
           [0., 1.]], dtype=float64)
    """
    a = _square(A, "expm")
    max_squarings = operator.index(max_squarings)
    if a.shape[-1] == 0:
        return a
    return _primary(a, lambda x: _expm_2d(x, bool(upper_triangular) and not
                                          _is_complex(a.dtype), max_squarings))


def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E``: ``(expm(A),
    L(A, E))``, or ``L(A, E)`` alone without ``compute_expm`` (a forward-mode derivative
    of `expm`, as JAX; ``method`` is accepted for SciPy's signature and ignored).

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.expm_frechet([[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]],
    ...                  compute_expm=False)
    Array([[1., 2.],
           [3., 4.]], dtype=float64)
    """
    a = _square(A, "expm_frechet")
    e = _square(E, "expm_frechet", "E")
    if tuple(a.shape) != tuple(e.shape):
        raise errors.ShapeError(
            f"zerax.scipy.linalg.expm_frechet: A and E must have the same shape, got "
            f"{tuple(a.shape)} and {tuple(e.shape)}")
    if method not in (None, "SPS", "blockEnlarge"):
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.expm_frechet: method must be None, 'SPS' or "
            f"'blockEnlarge', got {method!r}")
    a, e = _common(a, e)
    value, derivative = _jvp(expm, (a,), (e,))
    return (value, derivative) if compute_expm else derivative


# ----------------------------------------------------------------------------- sqrtm

_MAXIT = 64          # Denman-Beavers iterations at most (scaled: ~6-12 suffice)
_ROTATE = 0.01       # half the rotation angle of the complex route, at most (_rotated)


def _is_symmetric(a):
    """Whether real ``a`` is symmetric to rounding (traced boolean)."""
    eps = np.finfo(np.dtype(a.dtype)).eps
    gap = _stop_gradient(_onenorm(a - _mT(a)))
    return gap <= 16 * eps * _stop_gradient(_onenorm(a))


def _db_sqrt(a):
    """``(X, ok)``: the principal square root of one real nonsingular matrix by the
    scaled Denman-Beavers product iteration, and whether it converged."""
    n = a.shape[-1]
    dt = a.dtype
    eps = np.finfo(np.dtype(dt)).eps
    eye = znp.eye(n, dtype=dt)
    tol = n * eps
    stall = np.sqrt(eps)   # below this, an iteration that does not halve the error stops

    def cond(state):
        k, _, _, err, prev = state
        # stop on convergence, on NaN (err > tol is False), or when rounding stalls it
        return (k < _MAXIT) & (err > tol) & ((err < 0.5 * prev) | (err > stall))

    def body(state):
        k, m, y, err, _ = state
        # one LU gives M^-1 and the scaling |det M|^(-1/(2n)) (the scaling changes the
        # speed of convergence, not the limit: no derivative through it)
        lu, _, perm = _lu(m)
        y0 = _triangular_solve(lu, znp.take(eye, perm, axis=0), left_side=True,
                                         lower=True, unit_diagonal=True)
        minv = _triangular_solve(lu, y0, left_side=True, lower=False)
        logdet = znp.sum(znp.log(znp.abs(znp.diagonal(_stop_gradient(lu)))))
        mu = znp.exp(-logdet / (2 * n))
        mu2 = mu * mu
        y = 0.5 * mu * (y + (y @ minv) / mu2)
        m = 0.5 * eye + 0.25 * (mu2 * m + minv / mu2)
        return k + 1, m, y, _onenorm(m - eye), err

    inf = znp.asarray(np.inf, dtype=dt)
    start = (znp.asarray(0, dtype=np.int32), a, a, _onenorm(a - eye), inf)
    _, _, y, _, _ = _while_loop(cond, body, start)
    residual = _onenorm(y @ y - a)
    scale = znp.maximum(_onenorm(a), _onenorm(y) ** 2)
    ok = residual <= np.sqrt(eps) * scale
    return y, ok


def _sqrtm_general(a):
    y, ok = _db_sqrt(a)
    return znp.where(ok, y, znp.asarray(np.nan, dtype=a.dtype))


def _sqrtm_symmetric(a):
    w, v = _zla.eigh(0.5 * (a + _mT(a)))
    eps = np.finfo(np.dtype(a.dtype)).eps
    ok = znp.min(w) >= -a.shape[-1] * eps * znp.max(znp.abs(w))
    x = (v * znp.sqrt(znp.maximum(w, 0.0))) @ _mT(v)
    return znp.where(ok, x, znp.asarray(np.nan, dtype=a.dtype))


def _by_symmetry(a, symmetric_fn, general_fn):
    """``symmetric_fn(a)`` if ``a`` is symmetric, else ``general_fn(a)``: a Python
    choice where ``a`` is concrete; traced, both and a ``where`` (``eigh`` cannot run
    inside a compiled ``cond`` branch)."""
    sym = _is_symmetric(a)
    known = _concrete(sym)
    if known is not None:
        return symmetric_fn(a) if bool(known) else general_fn(a)
    return znp.where(sym, symmetric_fn(a), general_fn(a))


def _sqrtm_real(a):
    return _by_symmetry(a, _sqrtm_symmetric, _sqrtm_general)


def _rotated(a, real_fn, undo):
    """``f(a)`` for a principal function ``f`` by way of ``f(c a)``, ``c = exp(-2i d)``:
    exact for every eigenvalue with argument in (-pi + 2d, pi], which takes the
    negative real axis off the branch cut."""
    dt = np.result_type(np.dtype(a.dtype), np.complex64)
    w = np.linalg.eigvals(np.asarray(a))
    # eigenvalues just below the cut would cross it: keep 2 d under their angle to it
    below = w[(w.imag < 0) & (w.real < 0)]
    gap = float(np.min(np.pi + np.angle(below))) if below.size else np.inf
    d = max(min(_ROTATE, gap / 4), 1e-8)
    c = np.exp(-2j * d).astype(dt)
    return undo(_primary(znp.asarray(a, dtype=dt) * c, real_fn), dt, d)


def _symmetric_complex(a, parts):
    """``f(a)`` of a real symmetric matrix with eigenvalues on the branch cut:
    ``V diag(f(w)) V^T`` with ``parts(w) = (re f(w), im f(w))``."""
    w, v = _zla.eigh(0.5 * (a + _mT(a)))
    re, im = parts(w)
    return _complex((v * re) @ _mT(v), (v * im) @ _mT(v))


def _on_cut(m):
    """Whether the concrete real matrix ``m`` has an eigenvalue on the negative real
    axis: a real negative eigenvalue of its real Schur form, SciPy's test for a
    complex ``sqrtm`` / ``logm`` (NumPy's ``eigvals`` runs the same LAPACK QR)."""
    w = np.linalg.eigvals(m)
    return bool(((w.imag == 0) & (w.real < 0)).any())


def _undefined_where_nan(x, a):
    """``x`` (a stack of matrices computed from ``a``) with NaN tangents, and NaN
    cotangents for ``a``, in the matrices that hold a NaN: there ``a`` is outside the
    function's domain and the derivative is undefined, where the NaN constant that
    stands for the value would give a zero tangent (a silent wrong answer).  Elsewhere
    values and derivatives are unchanged (the NaN only multiplies where it is meant)."""
    bad = znp.any(znp.isnan(x), axis=(-2, -1), keepdims=True)
    mult = znp.where(bad, znp.asarray(np.nan, dtype=x.dtype), znp.zeros((), x.dtype))
    delta = znp.sum(a - _stop_gradient(a), axis=(-2, -1), keepdims=True).astype(x.dtype)
    return znp.where(bad, x + mult * delta, x)


def _principal(a, real_fn, undo, parts, fname, why):
    """A principal matrix function (square root, logarithm) with SciPy's dtype rule
    where values are concrete: a real matrix with an eigenvalue on the negative real
    axis (or one where the real algorithm fails) is done in complex arithmetic (the
    whole stack is then complex); a matrix no route handles raises.  Traced: the
    real algorithm on ``a``'s dtype, NaN outside its domain."""
    a_np = _concrete(a)
    if a_np is None:
        return _undefined_where_nan(_primary(a, real_fn), a)
    shape = tuple(a.shape)
    flat = a_np.reshape((-1,) + shape[-2:])
    out = []
    for k in range(flat.shape[0]):
        m = flat[k]
        finite = np.isfinite(m).all()
        x = None
        if not finite or _is_complex(m.dtype) or not _on_cut(m):
            x = np.asarray(_primary(znp.asarray(m), real_fn))
        if x is None or (finite and not np.isfinite(x).all()):
            one = znp.asarray(m)
            if not _is_complex(one.dtype) and bool(_is_symmetric(one)):
                x = np.asarray(_symmetric_complex(one, parts))
            else:
                x = np.asarray(_rotated(one, real_fn, undo))
            if not np.isfinite(x).all():
                where = (f" (matrix {list(np.unravel_index(k, shape[:-2]))} of the "
                         "stack)" if len(shape) > 2 else "")
                raise errors.ZeraxValueError(f"zerax.scipy.linalg.{fname}: {why}{where}.")
        out.append(x)
    dt = np.result_type(*(x.dtype for x in out))
    return znp.asarray(np.stack(out).astype(dt).reshape(shape))


def sqrtm(A, blocksize: int = 1):
    """The principal square root ``X`` of ``A`` (``X @ X == A``, the eigenvalues of
    ``X`` in the right half-plane).

    Symmetric (Hermitian) matrices use ``eigh`` (positive semidefinite ones may be
    singular); others the scaled Denman-Beavers iteration, which needs ``A``
    nonsingular.  The domain is matrices with no eigenvalue on the closed negative real
    axis, plus singular symmetric positive semidefinite ones.  Outside it: on concrete
    values the result is complex where SciPy's is (a real ``A`` with a negative
    eigenvalue) and a singular nonsymmetric ``A`` raises ZeraxValueError; under ``jit``,
    ``vmap``, ``jvp`` or ``grad`` the result keeps ``A``'s dtype and is NaN, and so are
    its derivatives (JAX's sqrtm has no derivative at all).  ``blocksize`` is accepted
    and ignored (its values do not depend on it).

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.sqrtm([[4.0, 0.0], [0.0, 9.0]])
    Array([[2., 0.],
           [0., 3.]], dtype=float64)
    """
    a = _square(A, "sqrtm")
    if not isinstance(blocksize, (int, np.integer)) or blocksize < 1:
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.sqrtm: blocksize must be an integer >= 1, got "
            f"{blocksize!r}")
    if a.shape[-1] == 0:
        return a
    with np.errstate(all="ignore"):   # eager NaN paths (singular M) stay quiet
        return _principal(
            a, _sqrtm_real, lambda r, dt, d: r * np.exp(1j * d).astype(dt),
            lambda w: (znp.sqrt(znp.maximum(w, 0.0)), znp.sqrt(znp.maximum(-w, 0.0))),
            "sqrtm", "A has no principal square root this method can compute (it is "
            "singular and not symmetric positive semidefinite)")


# ------------------------------------------------------------------------------ logm

_LOG_THETA = 0.3                                  # ||X - I||_1 bound for the [8/8] Padé
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_GL_NODES, _GL_WEIGHTS = (_GL_NODES + 1) / 2, _GL_WEIGHTS / 2   # on [0, 1]


def _logm_general(a):
    """Inverse scaling and squaring: ``2^s log(a^(1/2^s))``, the log of a matrix near
    the identity by the Gauss-Legendre form of its [8/8] Padé approximant
    ``log(I + y) = sum_j w_j y (I + t_j y)^-1``."""
    dt = a.dtype
    eye = znp.eye(a.shape[-1], dtype=dt)

    def cond(state):
        s, _, err = state
        return (s < _MAXIT) & (err > _LOG_THETA)

    def body(state):
        s, x, _ = state
        x = _sqrtm_general(x)
        return s + 1, x, _onenorm(x - eye)

    s, x, _ = _while_loop(cond, body, (znp.asarray(0, dtype=np.int32), a,
                                          _onenorm(a - eye)))
    y = x - eye
    log = sum(float(w) * _zla.solve(eye + float(t) * y, y)
              for t, w in zip(_GL_NODES, _GL_WEIGHTS))
    return log * znp.asarray(2.0, dtype=dt) ** znp.asarray(s, dtype=dt)


def _logm_symmetric(a):
    w, v = _zla.eigh(0.5 * (a + _mT(a)))
    ok = znp.min(w) > 0
    x = (v * znp.log(znp.where(ok, w, 1.0))) @ _mT(v)
    return znp.where(ok, x, znp.asarray(np.nan, dtype=a.dtype))


def _logm_real(a):
    return _by_symmetry(a, _logm_symmetric, _logm_general)


def logm(A, disp: bool = True):
    """The principal logarithm ``L`` of ``A`` (``expm(L) == A``, eigenvalues of ``L``
    with imaginary parts in (-pi, pi)); ``(L, errest)`` with ``disp=False``, ``errest``
    being SciPy's ``||expm(L) - A||_1 / ||A||_1``.

    Symmetric positive-definite matrices use ``eigh``; others inverse scaling and
    squaring with Denman-Beavers square roots.  The domain is nonsingular matrices with
    no eigenvalue on the negative real axis.  Outside it: on concrete values a real
    ``A`` with a negative eigenvalue gives a complex result (as SciPy) and a singular
    ``A`` raises ZeraxValueError; under ``jit`` or ``vmap`` the result keeps ``A``'s
    dtype and is NaN.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.logm([[1.0, 1.0], [0.0, 1.0]])
    Array([[0., 1.],
           [0., 0.]], dtype=float64)
    """
    a = _square(A, "logm")
    if a.shape[-1] == 0:
        return a if disp else (a, znp.asarray(0.0, dtype=_real_dtype(a.dtype)))

    def undo(r, dt, d):
        return r + znp.asarray(2j * d, dtype=dt) * znp.eye(a.shape[-1], dtype=dt)

    with np.errstate(all="ignore"):   # eager NaN paths (singular M) stay quiet
        x = _principal(a, _logm_real, undo,
                       lambda w: (znp.log(znp.abs(w)), znp.where(w < 0, np.pi, 0.0)),
                       "logm", "A is singular, so it has no logarithm")
    if disp:
        return x
    err = expm(x) - a
    if _is_complex(err.dtype):
        mag = znp.sqrt(_real(err) ** 2 + _imag(err) ** 2)
        amag = (znp.sqrt(_real(a) ** 2 + _imag(a) ** 2) if _is_complex(a.dtype)
                else znp.abs(a))
    else:
        mag, amag = znp.abs(err), znp.abs(a)
    return x, (znp.max(znp.sum(mag, axis=-2), axis=-1)
               / znp.max(znp.sum(amag, axis=-2), axis=-1))


# ------------------------------------------------------------------ solve_sylvester

_KRON_LIMIT = 4096   # unknowns m * n of the Kronecker system (a 4096 x 4096 LU solve)


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """The solution ``X`` (``(..., m, n)``) of the Sylvester equation
    ``A @ X + X @ B == C`` (``A`` m x m, ``B`` n x n; batch dimensions broadcast).

    zerax has no Schur decomposition, so the default (``method="schur"``, also spelled
    ``"kron"``) solves the equivalent ``mn x mn`` linear system
    ``(A (x) I_n + I_m (x) B^T) vec(X) = vec(C)`` (row-major ``vec``) by LU with partial
    pivoting: exact to rounding for every uniquely solvable equation, limited to
    ``m * n <= 4096`` unknowns (larger ones raise NotSupportedError).
    ``method="eigen"`` diagonalises symmetric ``A`` and ``B`` with ``eigh`` (real
    inputs; only their lower triangles are read; concrete nonsymmetric inputs raise)
    and, as in JAX, returns NaN when some ``|a_i + b_j| < tol``.  The Kronecker method
    does not use ``tol``: a singular equation gives inf or NaN.

    >>> import zerax.scipy.linalg as zsl
    >>> zsl.solve_sylvester([[1.0, 0.0], [0.0, 2.0]], [[3.0]], [[4.0], [10.0]])
    Array([[1.],
           [2.]], dtype=float64)
    """
    a = _square(A, "solve_sylvester", "A")
    b = _square(B, "solve_sylvester", "B")
    c = _inexact(C, "solve_sylvester", "C")
    if c.ndim < 2:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_sylvester: C must be a matrix (shape (..., m, n)), "
            f"got shape {tuple(c.shape)}")
    m, n = c.shape[-2:]
    if a.shape[-1] != m or b.shape[-1] != n:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_sylvester: incompatible shapes: A {tuple(a.shape)} "
            f"must be (..., {m}, {m}) and B {tuple(b.shape)} (..., {n}, {n}) for C of "
            f"shape {tuple(c.shape)}")
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2], c.shape[:-2]))
    except ValueError:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_sylvester: the batch dimensions of A "
            f"{tuple(a.shape)}, B {tuple(b.shape)} and C {tuple(c.shape)} do not "
            "broadcast") from None
    a, b, c = _common(a, b, c)
    a = znp.broadcast_to(a, batch + (m, m))
    b = znp.broadcast_to(b, batch + (n, n))
    c = znp.broadcast_to(c, batch + (m, n))
    if method in ("schur", "kron"):
        if m * n > _KRON_LIMIT:
            raise errors.NotSupportedError(
                f"zerax.scipy.linalg.solve_sylvester: the Kronecker method solves an "
                f"(m n) x (m n) system, and m n = {m * n} exceeds its limit of "
                f"{_KRON_LIMIT} (zerax has no Schur decomposition); for symmetric A and "
                "B pass method='eigen'")
        eye_m, eye_n = znp.eye(m, dtype=a.dtype), znp.eye(n, dtype=a.dtype)
        # K[(i, j), (k, l)] = A[i, k] d(j, l) + d(i, k) B[l, j]
        k = (a[..., :, None, :, None] * eye_n[:, None, :]
             + eye_m[:, None, :, None] * _mT(b)[..., None, :, None, :])
        k = znp.reshape(k, batch + (m * n, m * n))
        x = _solve(k, znp.reshape(c, batch + (m * n, 1)))
        return znp.reshape(x, batch + (m, n))
    if method != "eigen":
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.solve_sylvester: method must be 'schur' (or 'kron') or "
            f"'eigen', got {method!r}")
    if _is_complex(a.dtype):
        raise errors.NotSupportedError(
            "zerax.scipy.linalg.solve_sylvester: method='eigen' takes real symmetric A "
            "and B; use method='schur' for complex ones")
    for name, x in (("A", a), ("B", b)):
        xs = _concrete(x)
        if xs is not None and not np.allclose(xs, np.swapaxes(xs, -1, -2), rtol=1e-12,
                                              atol=0.0):
            raise errors.ZeraxValueError(
                f"zerax.scipy.linalg.solve_sylvester: method='eigen' needs symmetric A "
                f"and B (zerax has only a symmetric eigendecomposition), but {name} is "
                "not symmetric; use method='schur'")
    wa, ua = _zla.eigh(a)
    wb, ub = _zla.eigh(b)
    denom = wa[..., :, None] + wb[..., None, :]
    with np.errstate(all="ignore"):          # a zero denominator ends as NaN below
        y = (_mT(ua) @ c @ ub) / denom
        x = ua @ y @ _mT(ub)
    small = znp.any(znp.abs(denom) < tol, axis=(-2, -1))[..., None, None]
    return znp.where(small, znp.asarray(np.nan, dtype=x.dtype), x)


# --------------------------------------------------------------------- solve_banded


_DENSE_LIMIT = 2048   # larger banded systems: the O(M (l + u)^2) banded LU below


def _magnitude(x):
    """LAPACK's pivot size: ``|x|``, ``|re| + |im|`` for complex ``x``."""
    if _is_complex(x.dtype):
        return znp.abs(_real(x)) + znp.abs(_imag(x))
    return znp.abs(x)


def _banded_lu_solve(ab, b, lo, up):
    """``A^-1 b`` for one banded ``A`` (SciPy's storage ``ab``, ``(l + u + 1, M)``) and
    ``b`` (M, K): Gaussian elimination with partial pivoting as LAPACK's ``gbtf2``, in a
    ``lax.scan`` over the columns that carries the ``(l + 1) x (l + u + 1)`` window of
    candidate pivot rows (fill-in widens U to ``l + u`` superdiagonals), then a reverse
    ``scan`` of back substitution.  O(M (l + u)^2) work and O(M (l + u)) memory."""
    m = ab.shape[-1]
    w = lo + up + 1
    dt = ab.dtype
    zero = znp.zeros((), dtype=dt)
    # rows[i, t] = A[i, i - l + t]: each row's band, zero rows padded up to M + l + 1
    i = np.arange(m + lo + 1)[:, None]
    t = np.arange(w)[None, :]
    j = i - lo + t
    ok = (j >= 0) & (j < m) & (i < m)
    rows = znp.where(ok, ab[np.broadcast_to(lo + up - t, ok.shape), np.clip(j, 0, m - 1)],
                     zero)
    bp = znp.concatenate([b, znp.zeros((lo + 1, b.shape[1]), dtype=dt)], axis=0)
    # the first window: rows 0..l, columns 0..l+u; window[i, c] = A[i, c] = rows[i, c+l-i]
    ii = np.arange(lo + 1)[:, None]
    tt = np.arange(w)[None, :] + lo - ii
    okw = (tt >= 0) & (tt < w)
    window = znp.where(okw, rows[np.broadcast_to(ii, okw.shape), np.clip(tt, 0, w - 1)],
                       zero)
    index = np.arange(lo + 1)

    def eliminate(carry, incoming):
        win, bwin = carry
        row_in, b_in = incoming
        p = znp.argmax(_magnitude(win[:, 0]))           # the first largest, as LAPACK
        order = znp.where(index == 0, p, znp.where(index == p, 0, index))
        win, bwin = znp.take(win, order, axis=0), znp.take(bwin, order, axis=0)
        mult = win[1:, :1] / win[0, 0]
        rest = win[1:] - mult * win[0]
        brest = bwin[1:] - mult * bwin[0]
        shifted = znp.concatenate([rest[:, 1:], znp.zeros((lo, 1), dtype=dt)], axis=1)
        carry = (znp.concatenate([shifted, row_in[None]], axis=0),
                 znp.concatenate([brest, b_in[None]], axis=0))
        return carry, (win[0], bwin[0])

    _, (urows, y) = _scan(eliminate, (window, bp[:lo + 1]), (rows[lo + 1:], bp[lo + 1:]))
    if w == 1:
        return y / urows[:, :1]

    def substitute(later, inputs):       # later: x[k + 1], ..., x[k + l + u]
        u, yk = inputs
        xk = (yk - u[1:] @ later) / u[0]
        return znp.concatenate([xk[None], later[:-1]], axis=0), xk

    _, x = _scan(substitute, znp.zeros((w - 1, b.shape[1]), dtype=dt), (urows, y),
                    reverse=True)
    return x


def _band_count(v, what):
    try:
        v = operator.index(v)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"zerax.scipy.linalg.solve_banded: the number of {what} diagonals must be an "
            f"integer, got {v!r}") from None
    if v < 0:
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.solve_banded: the number of {what} diagonals must be "
            f">= 0, got {v}")
    return v


def solve_banded(l_and_u, ab, b, overwrite_ab: bool = False, overwrite_b: bool = False,
                 check_finite: bool = True):
    """The solution of ``a @ x == b`` for the banded matrix ``a`` stored in SciPy's
    diagonal-ordered form ``ab[u + i - j, j] == a[i, j]`` (``ab`` of shape
    ``(l + u + 1, M)``, ``l`` and ``u`` the numbers of nonzero lower and upper
    diagonals).  ``b`` is ``(M,)`` or ``(M, K)``; a stack of ``ab`` (``(..., l + u + 1,
    M)``) takes ``b`` of shape ``(..., M)`` or ``(..., M, K)``.  Up to M = 2048 the band
    is expanded to the dense matrix and solved by LU with partial pivoting (fast
    eagerly); larger systems run a banded LU with partial pivoting in ``lax.scan``
    (O(M (l + u)^2): milliseconds per row eagerly, fast under ``jit``).  SciPy's
    ``gbsv`` pivots the same way, so the values agree to rounding.  A singular matrix
    gives inf or NaN instead of SciPy's LinAlgError.  ``overwrite_*`` and
    ``check_finite`` are accepted and ignored.

    >>> import zerax.scipy.linalg as zsl
    >>> ab = [[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]]   # tridiagonal
    >>> zsl.solve_banded((1, 1), ab, [3.0, 4.0, 3.0])
    Array([1., 1., 1.], dtype=float64)
    """
    if not isinstance(l_and_u, (tuple, list)) or len(l_and_u) != 2:
        raise errors.ZeraxTypeError(
            f"zerax.scipy.linalg.solve_banded: l_and_u must be the pair (l, u) of the "
            f"numbers of lower and upper diagonals, got {l_and_u!r}")
    lo, up = _band_count(l_and_u[0], "lower"), _band_count(l_and_u[1], "upper")
    ab = _inexact(ab, "solve_banded", "ab")
    b = _inexact(b, "solve_banded", "b")
    if ab.ndim < 2:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_banded: ab must have shape (l + u + 1, M), got "
            f"{tuple(ab.shape)}")
    if lo + up + 1 != ab.shape[-2]:
        raise errors.ZeraxValueError(
            f"zerax.scipy.linalg.solve_banded: invalid values for the number of lower and "
            f"upper diagonals: l+u+1 ({lo + up + 1}) does not equal ab.shape[-2] "
            f"({ab.shape[-2]})")
    size = ab.shape[-1]
    batch = tuple(ab.shape[:-2])
    if b.ndim == len(batch) + 1:
        vector = True
    elif b.ndim == len(batch) + 2:
        vector = False
    else:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_banded: b must have shape {batch + (size,)} or "
            f"{batch + (size, 'K')} for ab of shape {tuple(ab.shape)}, got "
            f"{tuple(b.shape)}")
    rows = b.shape[-1] if vector else b.shape[-2]
    if rows != size or tuple(b.shape[:len(batch)]) != batch:
        raise errors.ShapeError(
            f"zerax.scipy.linalg.solve_banded: shapes of ab {tuple(ab.shape)} and b "
            f"{tuple(b.shape)} are not compatible (b needs {size} rows)")
    ab, b = _common(ab, b)
    if b.size == 0:
        return b
    rhs = b[..., None] if vector else b
    if size > _DENSE_LIMIT:
        if not batch:
            x = _banded_lu_solve(ab, rhs, lo, up)
        else:
            flat_ab = znp.reshape(ab, (-1,) + tuple(ab.shape[-2:]))
            flat_b = znp.reshape(rhs, (-1,) + tuple(rhs.shape[-2:]))
            x = _vmap(lambda a_, b_: _banded_lu_solve(a_, b_, lo, up))(flat_ab, flat_b)
            x = znp.reshape(x, batch + tuple(rhs.shape[-2:]))
        return x[..., 0] if vector else x
    i = np.arange(size)[:, None]
    j = np.arange(size)[None, :]
    r = up + i - j
    inside = (r >= 0) & (r <= lo + up)
    dense = ab[..., np.clip(r, 0, lo + up), np.broadcast_to(j, r.shape)]
    dense = znp.where(inside, dense, znp.zeros((), dtype=ab.dtype))
    x = _solve(dense, rhs)
    return x[..., 0] if vector else x
